"""The probe's RESP client. It keeps each reply's RESP type, because the contract is about
reply shapes under RESP2 and RESP3 as much as about values, and a client library would hide
exactly that."""
import socket


class Conn:
    """A minimal RESP client that keeps the reply types: it renders every reply as a short
    string whose first character is the RESP type byte, so RESP2/RESP3 shapes are visible."""

    def __init__(self, port, proto=2):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.file = self.sock.makefile("rb")
        if proto == 3:
            self.call("HELLO", "3")

    def send(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, int):
                a = str(a)
            if isinstance(a, str):
                a = a.encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def read(self):
        line = self.file.readline()
        if not line:
            raise ConnectionError("server closed the connection")
        kind, body = line[:1], line[1:-2]
        if kind in (b"+", b"-", b":", b",", b"#", b"_", b"("):
            return (kind.decode(), body.decode())
        if kind in (b"$", b"=", b"!"):
            n = int(body)
            if n < 0:
                return ("$", None)
            return (kind.decode(), self.file.read(n + 2)[:-2])
        if kind in (b"*", b"~", b">"):
            n = int(body)
            if n < 0:
                return ("*", None)
            return (kind.decode(), [self.read() for _ in range(n)])
        if kind == b"%":
            return ("%", [(self.read(), self.read()) for _ in range(int(body))])
        raise ValueError("unexpected reply line %r" % line)

    def call(self, *args):
        self.send(*args)
        return self.read()


def show(reply):
    """Renders a typed reply compactly: `:1`, `#t`, `+OK`, `-Filter is full`, `$'text'`,
    `$nil`, `_`, `*[...]`, `%{k: v}`."""
    kind, value = reply
    if kind in (":", "+", "-", "#", ","):
        return kind + value
    if kind == "_":
        return "_"
    if kind == "$":
        return "$nil" if value is None else "$" + repr(value)[1:]
    if kind == "*":
        return "*nil" if value is None else "*[" + ", ".join(show(v) for v in value) + "]"
    if kind == "%":
        return "%{" + ", ".join(show(k) + ": " + show(v) for k, v in value) + "}"
    return kind + repr(value)


def val(reply):
    """The plain value of a reply (ints as int, strings as bytes/str, arrays as lists)."""
    kind, value = reply
    if kind == ":":
        return int(value)
    if kind == "*":
        return None if value is None else [val(v) for v in value]
    if kind == "%":
        return {val(k): val(v) for k, v in value}
    return value
