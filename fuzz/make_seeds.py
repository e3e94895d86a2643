#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora from a running server with the module loaded, and
the sketches target's from RedisBloom 2.8.2, which it starts itself.

usage (from the repository's root):
  python3 fuzz/make_seeds.py PORT          every target's seeds
  python3 fuzz/make_seeds.py --sketches    only the sketches target's

RedisBloom is loaded from $REDISBLOOM_PATH (`make peers` fetches it), else
target/peers/redisbloom-2.8.2.so, into the system's redis-server.
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time


def command(sock, *args):
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    sock.sendall(b"".join(parts))
    return read_reply(sock.makefile("rb"))


def read_reply(stream):
    line = stream.readline().rstrip(b"\r\n")
    kind, rest = line[:1], line[1:]
    if kind == b"$":
        length = int(rest)
        return None if length < 0 else stream.read(length + 2)[:-2]
    if kind == b"*":
        return [read_reply(stream) for _ in range(int(rest))]
    if kind == b":":
        return int(rest)
    if kind == b"-":
        raise RuntimeError(rest.decode())
    return rest


def dump(sock, key, family="BF"):
    pieces, iterator = [], 0
    while True:
        iterator, data = command(sock, f"{family}.SCANDUMP", key, iterator)
        if iterator == 0:
            return pieces
        pieces.append((iterator, data))


def cuckoo_seeds(sock):
    """The cuckoo target's seeds: filters as SCANDUMP gives them (RedisBloom's bytes, which
    this module keeps, and wide filters' longer headers), as header-and-chunks input and as RDB
    records of versions 2 and 4 (wide: the fingerprint bits first, in version 1)."""
    unsigned = lambda value: b"\0" + struct.pack("<Q", value)
    string = lambda data: b"\2" + struct.pack("<H", len(data)) + data
    filters = {
        "cf-small": ("16",),
        "cf-grown": ("8", "EXPANSION", "2", "MAXITERATIONS", "7"),
        "cf-buckets4": ("32", "BUCKETSIZE", "4"),
        "cf-fixed": ("16", "BUCKETSIZE", "1", "EXPANSION", "0"),
        "cf-wide16": ("16", "ERROR", "0.001", "EXPANSION", "2"),
        "cf-wide32": ("32", "ERROR", "1e-6"),
    }
    for name, options in filters.items():
        command(sock, "DEL", name)
        command(sock, "CF.RESERVE", name, *options)
        for n in range(30):
            try:
                command(sock, "CF.ADD", name, f"{name}{n}")
            except RuntimeError:
                pass  # a full filter that may not grow
        command(sock, "CF.DEL", name, f"{name}0")
        pieces = dump(sock, name, "CF")
        header = pieces[0][1]
        wide = len(header) == 40
        chunks = b"".join(struct.pack("<QH", iterator, len(data)) + data for iterator, data in pieces[1:])
        write("cuckoo", name, (b"\2" if wide else b"\0") + header + chunks)
        items, buckets, deletes, count, bucket, iterations, expansion = struct.unpack_from("<QQQQHHH", header)
        fields = b"".join(unsigned(v) for v in (count, buckets, items, deletes, bucket, iterations, expansion))
        if wide:
            (bits,) = struct.unpack_from("<H", header, 38)
            record = bytes([3, 1]) + unsigned(bits) + fields
            slot_bytes = bits // 8
        else:
            record = bytes([1, 4]) + fields
            slot_bytes = 1
        record += b"".join(unsigned(len(data) // (bucket * slot_bytes)) + string(data) for _, data in pieces[1:])
        write("cuckoo", f"{name}-rdb-wide" if wide else f"{name}-rdb-v4", record)
        if bucket == 2 and count == 1 and not wide:
            write("cuckoo", f"{name}-rdb-v2", bytes([1, 2]) + unsigned(count) + unsigned(buckets) + unsigned(items) + string(pieces[1][1]))
        write("cuckoo", f"{name}-truncated", ((b"\2" if wide else b"\0") + header + chunks)[: 20 + len(chunks) // 2])


def write(target, name, data):
    directory = os.path.join("fuzz", "corpus", target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as seed:
        seed.write(data)


def redisbloom_record(header, bits, version):
    """RedisBloom's RDB record at `version` (published field order), in the tagged form the
    redisbloom_rdb target reads, from a dump header of its format and the filter's bits."""
    unsigned = lambda value: b"\0" + struct.pack("<Q", value)
    double = lambda value: b"\1" + struct.pack("<d", value)
    items, count, options, growth = struct.unpack_from("<QIII", header)
    out = bytes([version]) + unsigned(items) + unsigned(count)
    if version >= 2:
        out += unsigned(options)
    if version >= 4:
        out += unsigned(growth)
    offset = 0
    for n in range(count):
        size, nbits, link_items, error, bpe, hashes, entries, n2 = struct.unpack_from("<QQQddIQB", header, 20 + 53 * n)
        out += unsigned(entries) + double(error) + unsigned(hashes) + double(bpe)
        if version >= 1:
            out += unsigned(nbits) + unsigned(n2)
        out += b"\2" + struct.pack("<H", size) + bits[offset:offset + size] + unsigned(link_items)
        offset += size
    return out


def corrupt_headers(header):
    """Variants of a RedisBloom dump header that must be refused, and its older layout (no
    growth, 32-bit capacities), which must load."""
    count = struct.unpack_from("<I", header, 8)[0]
    old = header[:16] + b"".join(header[20 + 53 * n:20 + 53 * n + 48] + header[20 + 53 * n + 52:20 + 53 * n + 53] for n in range(count))
    flip = lambda at, value: header[:at] + value + header[at + len(value):]
    return {
        "old-layout": old,
        "unknown-options": flip(12, struct.pack("<I", 0xFFFFFFFF)),
        "no-growth": flip(16, struct.pack("<I", 0)),
        "wrong-count": flip(8, struct.pack("<I", count + 1)),
        "truncated": header[:-1],
        "bad-bits": flip(28, struct.pack("<Q", 1 << 40)),
        "bad-error": flip(44, struct.pack("<d", 1.5)),
    }


def main(port):
    sock = socket.create_connection(("127.0.0.1", port))
    filters = {
        "small": ("BF.RESERVE", "small", "0.01", "100"),
        "fixed": ("BF.RESERVE", "fixed", "0.001", "2000", "NONSCALING"),
        "strict": ("BF.RESERVE", "strict", "0.000001", "500", "NONSCALING"),
        "loose": ("BF.RESERVE", "loose", "0.25", "50", "EXPANSION", "3"),
        "grown": ("BF.RESERVE", "grown", "0.01", "4", "EXPANSION", "2"),
        # RedisBloom's format: this module writes its headers byte for byte as RedisBloom does.
        "redisbloom": ("BF.RESERVE", "redisbloom", "0.01", "100", "FORMAT", "REDISBLOOM"),
        "redisbloom-grown": ("BF.RESERVE", "redisbloom-grown", "0.01", "4", "EXPANSION", "3", "FORMAT", "REDISBLOOM"),
        "redisbloom-fixed": ("BF.RESERVE", "redisbloom-fixed", "0.001", "300", "NONSCALING", "FORMAT", "REDISBLOOM"),
    }
    for name, reserve in filters.items():
        command(sock, "DEL", name)
        command(sock, *reserve)
        command(sock, "BF.MADD", name, *[f"{name}{n}" for n in range(40)])
        pieces = dump(sock, name)
        header = pieces[0][1]
        write("header", name, header)
        records = b"".join(
            struct.pack("<IH", iterator - 1 - len(data), min(len(data), 600)) + data[:600]
            for iterator, data in pieces[1:3]
        )
        write("chunks", name, struct.pack("<H", len(header)) + header + records)
        formats = 0x80 if name.startswith("redisbloom") else 0
        operations = bytes([len(name), 2, 2 | formats, 3]) + "".join(f"{name}{n}" for n in range(40)).encode()
        write("operations", name, operations)
        if name.startswith("redisbloom"):
            bits = b"".join(data for _, data in pieces[1:])
            for version in range(5):
                write("redisbloom_rdb", f"{name}-v{version}", redisbloom_record(header, bits, version))
            record = redisbloom_record(header, bits, 4)
            write("redisbloom_rdb", f"{name}-unknown-version", bytes([5]) + record[1:])
            write("redisbloom_rdb", f"{name}-truncated", record[: len(record) // 2])
            for label, corrupt in corrupt_headers(header).items():
                write("header", f"{name}-{label}", corrupt)
    cuckoo_seeds(sock)
    for name, line in {
        "cf-reserve": "16 BUCKETSIZE 4 MAXITERATIONS 7 EXPANSION 3",
        "cf-insert": "CAPACITY 100 NOCREATE ITEMS a b",
        "cf-reserve-error": "1000 ERROR 0.001 BUCKETSIZE 2",
        "cf-insert-error": "ERROR 1e-6 CAPACITY 100 ITEMS a",
        "reserve": "0.01 100 EXPANSION 4",
        "nonscaling": "0.001 5000 NONSCALING",
        "insert": "CAPACITY 1000 ERROR 0.01 EXPANSION 2 ITEMS a b c",
        "nocreate": "NOCREATE CAPACITY 10 ITEMS a",
        "lenient": "0.01 100 4",
        "format": "0.01 100 FORMAT REDISBLOOM",
        "insert-format": "FORMAT redbloom ITEMS a",
    }.items():
        write("arguments", name, line.replace(" ", "\0").encode())


# The sketches target's input: a mode byte per type, the encoding version, then tagged values.
SKETCH_MODES = {"CMSk-TYPE": 0, "TopK-TYPE": 1, "TDIS-TYPE": 2, "rbCMSwind": 5}
SKETCH_TAGS = {"unsigned": 0, "signed": 1, "double": 2, "string": 3}
MODULE_NAME_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


class Payload:
    """A DUMP payload, read as Redis's RDB reads a module value."""

    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, n):
        if self.at + n > len(self.data):
            raise ValueError("payload cut short")
        self.at += n
        return self.data[self.at - n:self.at]

    def length(self):
        """An RDB length, or (None, encoding) for a string's special encoding."""
        first = self.take(1)[0]
        kind = first >> 6
        if kind == 0:
            return first & 0x3F
        if kind == 1:
            return ((first & 0x3F) << 8) | self.take(1)[0]
        if first == 0x80:
            return struct.unpack(">I", self.take(4))[0]
        if first == 0x81:
            return struct.unpack(">Q", self.take(8))[0]
        if kind == 3:
            return (None, first & 0x3F)
        raise ValueError(f"unknown length marker {first:#x}")

    def number(self):
        value = self.length()
        if isinstance(value, tuple):
            raise ValueError("a special encoding where a number was")
        return value

    def string(self):
        length = self.length()
        if not isinstance(length, tuple):
            return self.take(length)
        encoding = length[1]
        if encoding in (0, 1, 2):  # integers Redis saved as such: 8, 16, 32 bits
            size = 1 << encoding
            return str(int.from_bytes(self.take(size), "little", signed=True)).encode()
        if encoding == 3:
            compressed, size = self.number(), self.number()
            return lzf_decompress(self.take(compressed), size)
        raise ValueError(f"unknown string encoding {encoding}")


def lzf_decompress(data, size):
    """LZF, as Redis compresses strings longer than 20 bytes when rdbcompression is on."""
    out, at = bytearray(), 0
    while at < len(data):
        control = data[at]
        at += 1
        if control < 32:  # a literal run of control + 1 bytes
            out += data[at:at + control + 1]
            at += control + 1
            continue
        length = control >> 5
        if length == 7:
            length += data[at]
            at += 1
        start = len(out) - ((control & 0x1F) << 8) - data[at] - 1
        at += 1
        if start < 0:
            raise ValueError("LZF back reference before the start")
        for n in range(length + 2):  # may overlap what it writes
            out.append(out[start + n])
    if len(out) != size:
        raise ValueError("LZF data of another length than announced")
    return bytes(out)


# Redis saves a module's signed values as unsigned ones (opcode 2; opcode 1 is never written),
# so a record's kinds are told by its type: every integer of a t-digest's is signed.
SIGNED_TYPES = {"TDIS-TYPE"}


def module_record(payload):
    """The type name, encoding version and values of a DUMP payload of a module value."""
    reader = Payload(payload)
    if reader.take(1) != b"\7":
        raise ValueError("not a module value (RDB type 7)")
    module_id = reader.number()
    name = "".join(MODULE_NAME_CHARACTERS[(module_id >> (10 + 6 * (8 - n))) & 0x3F] for n in range(9))
    values = []
    while True:
        opcode = reader.number()
        if opcode == 0:
            break
        if opcode == 1 or (opcode == 2 and name in SIGNED_TYPES):
            values.append(("signed", struct.unpack("<q", struct.pack("<Q", reader.number()))[0]))
        elif opcode == 2:
            values.append(("unsigned", reader.number()))
        elif opcode == 4:
            values.append(("double", struct.unpack("<d", reader.take(8))[0]))
        elif opcode == 5:
            values.append(("string", reader.string()))
        else:
            raise ValueError(f"unknown module opcode {opcode}")
    if len(payload) - reader.at != 10:  # the RDB version and the CRC
        raise ValueError("bytes left after the module value")
    return name, module_id & 0x3FF, values


def sketch_input(name, version, values):
    """The sketches target's input for a record."""
    out = bytes([SKETCH_MODES[name], version])
    for kind, value in values:
        out += bytes([SKETCH_TAGS[kind]])
        if kind == "unsigned":
            out += struct.pack("<Q", value)
        elif kind == "signed":
            out += struct.pack("<q", value)
        elif kind == "double":
            out += struct.pack("<d", value)
        else:
            out += struct.pack("<H", len(value)) + value
    return out


def count_min_versions(values):
    """Version 0 records of Count-Min sketches as the later encodings would hold them: version 1
    (Redis 8.12's RedisBloom) adds the cell size after the count, its string holding counters
    of that size; version 2 (a later pull request) then the hash version and seed after the
    string. And records the loader must refuse, as 8.12's does: a cell size never allowed, an
    8-byte counter past i64::MAX, a total past i64::MAX."""
    width, depth, count, counters = values
    cells = [struct.unpack_from("<I", counters[1], 4 * n)[0] for n in range(len(counters[1]) // 4)]
    out = {}
    for size, code in ((1, "<B"), (2, "<H"), (4, "<I"), (8, "<Q")):
        if max(cells, default=0) >= 1 << (8 * size):
            continue
        stored = ("string", b"".join(struct.pack(code, cell) for cell in cells))
        out[f"v1-cell{size}"] = (1, [width, depth, count, ("unsigned", size), stored])
        out[f"v2-cell{size}"] = (2, [width, depth, count, ("unsigned", size), stored, ("unsigned", 0), ("unsigned", 0)])
    out["v1-cell3"] = (1, [width, depth, count, ("unsigned", 3), counters])
    past = [1 << 63] + cells[1:]
    out["v1-cell8-counter-past-max"] = (1, [width, depth, count, ("unsigned", 8),
                                            ("string", b"".join(struct.pack("<Q", cell) for cell in past))])
    out["v0-count-past-max"] = (0, [width, depth, ("unsigned", 1 << 63), counters])
    return out


def redisbloom_server(directory):
    """RedisBloom 2.8.2 in the system's redis-server, on a unix socket in `directory`."""
    module = os.environ.get("REDISBLOOM_PATH", os.path.join("target", "peers", "redisbloom-2.8.2.so"))
    path = os.path.join(directory, "redis.sock")
    server = subprocess.Popen(
        ["redis-server", "--port", "0", "--unixsocket", path, "--dir", directory, "--save", "",
         "--appendonly", "no", "--loadmodule", os.path.abspath(module)],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(100):
        if os.path.exists(path):
            break
        if server.poll() is not None:
            raise RuntimeError(f"redis-server with {module} exited")
        time.sleep(0.05)
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(path)
    return server, sock


def sketch_seeds():
    """The sketches target's seeds: RedisBloom 2.8.2's own records of each sketch (DUMP, read
    back into values), two Count-Min ones also in the later encodings, and cut-short ones."""
    commands = {
        "cms-small": [("CMS.INITBYDIM", "cms-small", 10, 3), ("CMS.INCRBY", "cms-small", "a", 1, "b", 7, "", 3)],
        "cms-prob": [("CMS.INITBYPROB", "cms-prob", 0.01, 0.01)]
        + [("CMS.INCRBY", "cms-prob", *[x for n in range(50) for x in (f"item{n}", n + 1)])],
        "cms-empty": [("CMS.INITBYDIM", "cms-empty", 1, 1)],
        "cms-full": [("CMS.INITBYDIM", "cms-full", 4, 2), ("CMS.INCRBY", "cms-full", "a", 4294967295),
                     ("CMS.INCRBY", "cms-full", "a", 4294967295, "b", 12)],
        "cms-merged": [("CMS.INITBYDIM", "cms-merged", 10, 3),
                       ("CMS.MERGE", "cms-merged", 2, "cms-small", "cms-small", "WEIGHTS", 2, 3)],
        "topk-default": [("TOPK.RESERVE", "topk-default", 5)]
        + [("TOPK.ADD", "topk-default", *[f"item{n % (n % 7 + 1)}" for n in range(200)])],
        "topk-shaped": [("TOPK.RESERVE", "topk-shaped", 10, 50, 4, 0.925)]
        + [("TOPK.ADD", "topk-shaped", *[f"k{n % 13}" for n in range(300)]), ("TOPK.INCRBY", "topk-shaped", "heavy", 100000)],
        "topk-one": [("TOPK.RESERVE", "topk-one", 1, 1, 1, 1), ("TOPK.ADD", "topk-one", "a", "b", "a")],
        "topk-empty-item": [("TOPK.RESERVE", "topk-empty-item", 3, 4, 2, 0.5), ("TOPK.ADD", "topk-empty-item", "", "", "x")],
        "topk-unused": [("TOPK.RESERVE", "topk-unused", 4)],
        "tdigest-empty": [("TDIGEST.CREATE", "tdigest-empty")],
        "tdigest-one": [("TDIGEST.CREATE", "tdigest-one"), ("TDIGEST.ADD", "tdigest-one", 42.5)],
        "tdigest-small": [("TDIGEST.CREATE", "tdigest-small", "COMPRESSION", 10),
                          ("TDIGEST.ADD", "tdigest-small", *[(n * 37 % 101) / 3 for n in range(300)])],
        "tdigest-default": [("TDIGEST.CREATE", "tdigest-default"),
                            ("TDIGEST.ADD", "tdigest-default", *[n * n - 1000 for n in range(100)], 1e300, -1e300)],
        "tdigest-merged": [("TDIGEST.MERGE", "tdigest-merged", 2, "tdigest-small", "tdigest-default", "COMPRESSION", 50)],
        # Merged into itself until its weight is past 2^53, where the record's double weights
        # are no longer exact; then one more value.
        "tdigest-heavy": [("TDIGEST.CREATE", "tdigest-heavy"), ("TDIGEST.ADD", "tdigest-heavy", 1, 2, 3)]
        + [("TDIGEST.MERGE", "tdigest-heavy", 1, "tdigest-heavy")] * 55 + [("TDIGEST.ADD", "tdigest-heavy", 4)],
        "tdigest-reset": [("TDIGEST.CREATE", "tdigest-reset", "COMPRESSION", 1),
                          ("TDIGEST.ADD", "tdigest-reset", 1, 2, 3), ("TDIGEST.RESET", "tdigest-reset")],
    }
    with tempfile.TemporaryDirectory() as directory:
        server, sock = redisbloom_server(directory)
        try:
            for key, steps in commands.items():
                for step in steps:
                    try:
                        command(sock, *step)
                    except RuntimeError as error:
                        if "overflow" not in str(error):  # CMS.INCRBY past a full counter
                            raise
                name, version, values = module_record(command(sock, "DUMP", key))
                data = sketch_input(name, version, values)
                write("sketches", key, data)
                write("sketches", f"{key}-truncated", data[: 2 + (len(data) - 2) // 2])
                if key in ("cms-small", "cms-full"):
                    for label, (later, record) in count_min_versions(values).items():
                        write("sketches", f"{key}-{label}", sketch_input(name, later, record))
        finally:
            sock.close()
            server.terminate()
            server.wait()


def windowed_count_min_seeds():
    """Windowed Count-Min records (this module's own, built from their layout): the running
    total as a plain version 1 record, then the window, the generations and each generation,
    closed ones with their counts. An open generation alone, closed ones under an open one, and
    a total below its generations' sum, which the loader refuses."""
    def sketch(width, depth, count, cells):
        counters = b"".join(struct.pack("<I", cell) for cell in cells)
        return [("unsigned", width), ("unsigned", depth), ("unsigned", count), ("unsigned", 4), ("string", counters)]

    def windowed(total, window, generations, current, spans):
        values = total + [("unsigned", window), ("unsigned", generations), ("unsigned", current), ("unsigned", len(spans))]
        for start, counts in spans:
            values += [("unsigned", start), ("unsigned", 0 if counts is None else 1)] + (counts or [])
        return values

    seeds = {
        "cmsw-open": windowed(sketch(3, 2, 5, [5, 0, 0, 0, 5, 0]), 1000, 4, 250_000, [(250_000, None)]),
        "cmsw-closed": windowed(sketch(3, 2, 9, [5, 4, 0, 0, 9, 0]), 1000, 4, 250_750,
                                [(250_000, sketch(3, 2, 5, [5, 0, 0, 0, 5, 0])), (250_500, sketch(3, 2, 4, [0, 4, 0, 0, 4, 0]))]),
        "cmsw-open-closed": windowed(sketch(3, 2, 9, [5, 4, 0, 0, 9, 0]), 1000, 4, 250_500,
                                     [(250_000, sketch(3, 2, 5, [5, 0, 0, 0, 5, 0])), (250_500, None)]),
        "cmsw-total-below": windowed(sketch(3, 2, 1, [1, 0, 0, 0, 1, 0]), 1000, 4, 250_500,
                                     [(250_000, sketch(3, 2, 5, [5, 0, 0, 0, 5, 0])), (250_500, None)]),
    }
    for key, values in seeds.items():
        data = sketch_input("rbCMSwind", 1, values)
        write("sketches", key, data)
        write("sketches", f"{key}-truncated", data[: 2 + (len(data) - 2) // 2])


if __name__ == "__main__":
    if sys.argv[1:] == ["--sketches"]:
        sketch_seeds()
        windowed_count_min_seeds()
    else:
        main(int(sys.argv[1]))
        sketch_seeds()
        windowed_count_min_seeds()
