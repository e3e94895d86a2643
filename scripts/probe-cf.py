#!/usr/bin/env python3
"""Re-checks the CF.* contract (docs/cf-commands.md) against a server with a cuckoo-filter module.

It starts its own redis-server on a free loopback port in a temporary folder, loads the module,
talks raw RESP2/RESP3 over a socket, prints each observation as `ok`/`DIFF` against what
RedisBloom 2.8.2 answers, stops the server and exits 1 if anything differed. Python 3 standard
library only. It avoids the inputs known to crash RedisBloom 2.8.2 (see the contract's
"Hazards" section), so it is safe to run against the reference binary.

usage: scripts/probe-cf.py [--module PATH] [--server PATH] [--redbloom] [--verbose]
  --module   the module to load (default: target/peers/redisbloom-2.8.2.so next to this script)
  --server   the redis-server binary (default: redis-server on PATH)
  --redbloom expect redbloom's deliberate differences (docs/cf-commands.md, "Where redbloom
             differs"): real arities, key specs and COMMAND DOCS, CF.COMPACT flagged write,
             COPY and DEBUG DIGEST-VALUE supported, LOADCHUNK headers RedisBloom could not
             have written (a non-power-of-two expansion) refused
  --verbose  also print the observations that matched
"""
import argparse
import glob
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------------------- RESP client


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


# ---------------------------------------------------------------------------- checks

FAILS = []
VERBOSE = False
REDBLOOM = False


def check(label, got, expected):
    if got == expected:
        if VERBOSE:
            print("  ok    %s: %s" % (label, got))
    else:
        FAILS.append(label)
        print("  DIFF  %s:\n          got      %s\n          expected %s" % (label, got, expected))


def section(title):
    print("\n== " + title)


def note(text):
    print("  note  " + text)


# ---------------------------------------------------------------------------- the filter model
# RedisBloom's cuckoo filter as observed (hash, fingerprint, buckets, eviction with rollback,
# deletes with auto-compaction, CF.COMPACT). The probe replays random operations on the server
# and on this model and compares every reply and the SCANDUMP bytes.

MASK = (1 << 64) - 1
M64 = 0xC6A4A7935BD1E995


def murmur64a(key, seed=0):
    h = (seed ^ (len(key) * M64)) & MASK
    n8 = len(key) // 8
    for i in range(n8):
        k = int.from_bytes(key[8 * i:8 * i + 8], "little")
        k = (k * M64) & MASK
        k ^= k >> 47
        k = (k * M64) & MASK
        h ^= k
        h = (h * M64) & MASK
    tail = key[8 * n8:]
    if tail:
        for i, b in enumerate(tail):
            h ^= b << (8 * i)
        h = (h * M64) & MASK
    h ^= h >> 47
    h = (h * M64) & MASK
    return h ^ (h >> 47)


def next_pow2(n):
    n = (n - 1) & MASK
    for s in (1, 2, 4, 8, 16, 32):
        n |= n >> s
    return (n + 1) & MASK


def alt_index(fp, index):
    return (index ^ (fp * 0x5BD1E995)) & MASK


def lookup(item):
    h = murmur64a(item)
    fp = h % 255 + 1
    return h, alt_index(fp, h), fp


class Model:
    def __init__(self, capacity, bucket=2, iterations=20, expansion=1):
        self.bs, self.mi, self.ex = bucket, iterations, next_pow2(expansion)
        self.nb = max(1, next_pow2(capacity // bucket))
        self.items = self.deletes = 0
        self.filters = []  # [(numBuckets, bytearray)]
        self.grow()

    def grow(self):
        nb = self.nb * self.ex ** len(self.filters)
        self.filters.append((nb, bytearray(nb * self.bs)))

    def slots(self, nb, h):
        start = (h % nb) * self.bs
        return range(start, start + self.bs)

    def free_slot(self, f, h1, h2):
        nb, data = f
        for h in (h1, h2):
            for p in self.slots(nb, h):
                if data[p] == 0:
                    return p
        return None

    def kick(self, f, h1, fp):
        nb, data = f
        bs, victim, ii = self.bs, 0, h1 % nb
        for _ in range(self.mi):
            p = ii * bs + victim
            data[p], fp = fp, data[p]
            ii = alt_index(fp, ii) % nb
            for p in range(ii * bs, ii * bs + bs):
                if data[p] == 0:
                    data[p] = fp
                    return True
            victim = (victim + 1) % bs
        for _ in range(self.mi):  # roll the evictions back
            victim = (victim + bs - 1) % bs
            ii = alt_index(fp, ii) % nb
            p = ii * bs + victim
            data[p], fp = fp, data[p]
        return False

    def insert(self, h1, h2, fp):
        for f in reversed(self.filters):
            p = self.free_slot(f, h1, h2)
            if p is not None:
                f[1][p] = fp
                self.items += 1
                return 1
        if self.kick(self.filters[-1], h1, fp):
            self.items += 1
            return 1
        if self.ex == 0:
            return -1
        self.grow()
        return self.insert(h1, h2, fp)

    def check(self, item):
        h1, h2, fp = lookup(item)
        return int(any(fp in data[(h % nb) * self.bs:(h % nb) * self.bs + self.bs]
                       for nb, data in self.filters for h in (h1, h2)))

    def count(self, item):
        h1, h2, fp = lookup(item)
        return sum(data[(h % nb) * self.bs:(h % nb) * self.bs + self.bs].count(fp)
                   for nb, data in self.filters for h in (h1, h2))

    def add(self, item):
        return self.insert(*lookup(item))

    def addnx(self, item):
        return 0 if self.check(item) else self.add(item)

    def delete(self, item):
        h1, h2, fp = lookup(item)
        for nb, data in reversed(self.filters):
            for h in (h1, h2):
                for p in self.slots(nb, h):
                    if data[p] == fp:
                        data[p] = 0
                        self.items -= 1
                        self.deletes += 1
                        if len(self.filters) > 1 and self.deletes > self.items * 0.10:
                            self.compact(False)
                        return 1
        return 0

    def compact_one(self, fi):
        nb, data = self.filters[fi]
        ok = True
        for bi in range(nb):
            for p in range(bi * self.bs, bi * self.bs + self.bs):
                fp = data[p]
                if not fp:
                    continue
                for f in self.filters[:fi]:
                    q = self.free_slot(f, bi, alt_index(fp, bi))
                    if q is not None:
                        f[1][q] = fp
                        data[p] = 0
                        break
                else:
                    ok = False
        if ok and fi == len(self.filters) - 1:
            self.filters.pop()
        return ok

    def compact(self, keep_going=True):
        for fi in range(len(self.filters) - 1, 0, -1):
            if not self.compact_one(fi) and not keep_going:
                break
        self.deletes = 0

    def data(self):
        return b"".join(bytes(d) for _, d in self.filters)

    def size(self):
        return 40 + 16 * len(self.filters) + sum(len(d) for _, d in self.filters)


# ---------------------------------------------------------------------------- helpers

INFO_LABELS = ["Size", "Number of buckets", "Number of filters", "Number of items inserted",
               "Number of items deleted", "Bucket size", "Expansion rate", "Max iterations"]
CMDS = ["cf.reserve", "cf.add", "cf.addnx", "cf.insert", "cf.insertnx", "cf.exists",
        "cf.mexists", "cf.del", "cf.count", "cf.info", "cf.scandump", "cf.loadchunk",
        "cf.debug", "cf.compact"]
WRONGTYPE = "-WRONGTYPE Operation against a key holding the wrong kind of value"


def info(c, key):
    v = val(c.call("CF.INFO", key))
    return dict(zip(v[0::2], v[1::2]))


def scandump(c, key):
    """All (iterator, data) pairs SCANDUMP hands out, header first."""
    out, it = [], 0
    while True:
        reply = val(c.call("CF.SCANDUMP", key, it))
        if reply[0] == 0:
            return out
        out.append((reply[0], reply[1]))
        it = reply[0]


HEADER = struct.Struct("<QQQQHHH")  # numItems numBuckets numDeletes numFilters bucket iter exp


def module_id(payload):
    """(type name, encoding version) from a DUMP payload of a module value."""
    assert payload[0] == 7 and payload[1] == 0x81
    mid = int.from_bytes(payload[2:10], "big")
    chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    name = "".join(chars[(mid >> (10 + 6 * (8 - i))) & 63] for i in range(9))
    return name, mid & 1023


# ---------------------------------------------------------------------------- probes


def probe_identity(c):
    section("identity, COMMAND INFO / DOCS")
    mods = val(c.call("MODULE", "LIST"))
    names = [dict(zip(m[0::2], m[1::2])) for m in mods]
    bf = [m for m in names if m[b"name"] == b"bf"]
    check("MODULE LIST has name bf", bool(bf), True)
    if bf:
        note("module version %s" % bf[0][b"ver"])
    c.call("CF.ADD", "id", "x")
    check("TYPE", show(c.call("TYPE", "id")), "+MBbloomCF")
    check("DUMP module type and encoding version",
          module_id(val(c.call("DUMP", "id"))), ("MBbloomCF", 4))
    flags = {"cf.reserve": "write denyoom module", "cf.add": "write denyoom module",
             "cf.addnx": "write denyoom module", "cf.insert": "write denyoom module",
             "cf.insertnx": "write denyoom module", "cf.exists": "readonly module fast",
             "cf.mexists": "readonly module fast", "cf.del": "write module fast",
             "cf.count": "readonly module fast", "cf.info": "readonly module fast",
             "cf.scandump": "readonly module fast", "cf.loadchunk": "write denyoom module",
             "cf.debug": "readonly module fast", "cf.compact": "readonly module fast"}
    if REDBLOOM:
        # A compaction or a 16 MiB chunk is not fast.
        flags["cf.compact"] = "write module"
        flags["cf.scandump"] = "readonly module"
    arities = {"cf.reserve": -3, "cf.add": 3, "cf.addnx": 3, "cf.insert": -4, "cf.insertnx": -4,
               "cf.exists": 3, "cf.mexists": -3, "cf.del": 3, "cf.count": 3, "cf.info": 2,
               "cf.scandump": 3, "cf.loadchunk": 4, "cf.debug": 2, "cf.compact": 2}
    for name in CMDS:
        ci = val(c.call("COMMAND", "INFO", name))[0]
        got = (ci[1], " ".join(x for x in ci[2]), ci[3], ci[4], ci[5])
        check("COMMAND INFO %s (arity, flags, first, last, step)" % name, got,
              (arities[name] if REDBLOOM else -1, flags[name], 1, 1, 1))
        if REDBLOOM:
            # Real arities, key specs and argument docs; ACL categories where the server has
            # module categories: tests/safety.rs checks those on every server.
            docs = dict(zip(*[iter(val(c.call("COMMAND", "DOCS", name))[1])] * 2))
            check("COMMAND DOCS %s has a summary and the key" % name,
                  (bool(docs.get(b"summary")), docs.get(b"arguments", [[None, None]])[0][:2]),
                  (True, [b"name", b"key"]))
            continue
        check("COMMAND INFO %s has no ACL categories" % name, ci[6], [])
        spec = ci[8][0]
        check("key spec %s" % name, (spec[1], spec[3][3], spec[5][3]),
              (["RW", "access", "update"], [b"index", 1],
               [b"lastkey", 0, b"keystep", 1, b"limit", 0]))
        docs = val(c.call("COMMAND", "DOCS", name))
        check("COMMAND DOCS %s" % name, docs[1], [b"group", b"module", b"module", b"bf"])
    c.call("DEL", "id")


def probe_reserve(c):
    section("CF.RESERVE: arguments, defaults, errors")
    cases = [
        (["CF.RESERVE"], "-ERR wrong number of arguments for 'cf.reserve' command"),
        (["CF.RESERVE", "r"], "-ERR wrong number of arguments for 'cf.reserve' command"),
        (["CF.RESERVE", "r", "10", "x"], "-ERR wrong number of arguments for 'cf.reserve' command"),
        (["CF.RESERVE", "r", "abc"], "-Bad capacity"),
        (["CF.RESERVE", "r", "1.5"], "-Bad capacity"),
        (["CF.RESERVE", "r", "99999999999999999999"], "-Bad capacity"),
        (["CF.RESERVE", "r", "0"], "-Capacity must be at least (BucketSize * 2)"),
        (["CF.RESERVE", "r", "-1"], "-Capacity must be at least (BucketSize * 2)"),
        (["CF.RESERVE", "r", "3"], "-Capacity must be at least (BucketSize * 2)"),
        (["CF.RESERVE", "r", "9", "BUCKETSIZE", "5"], "-Capacity must be at least (BucketSize * 2)"),
        (["CF.RESERVE", "r", "10", "BUCKETSIZE", "abc"], "-Couldn't parse BUCKETSIZE"),
        (["CF.RESERVE", "r", "10", "BUCKETSIZE", "0"],
         "-BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
        (["CF.RESERVE", "r", "10", "BUCKETSIZE", "256"],
         "-BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
        (["CF.RESERVE", "r", "10", "MAXITERATIONS", "x"], "-Couldn't parse MAXITERATIONS"),
        (["CF.RESERVE", "r", "10", "MAXITERATIONS", "0"],
         "-MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."),
        (["CF.RESERVE", "r", "10", "MAXITERATIONS", "65536"],
         "-MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."),
        (["CF.RESERVE", "r", "10", "EXPANSION", "x"], "-Couldn't parse EXPANSION"),
        (["CF.RESERVE", "r", "10", "EXPANSION", "-1"],
         "-EXPANSION: value must be an integer between 0 and 32768, inclusive."),
        (["CF.RESERVE", "r", "10", "EXPANSION", "32769"],
         "-EXPANSION: value must be an integer between 0 and 32768, inclusive."),
        # validation order: MAXITERATIONS, then BUCKETSIZE, then EXPANSION, then capacity
        (["CF.RESERVE", "r", "1", "BUCKETSIZE", "0", "MAXITERATIONS", "0", "EXPANSION", "-1"],
         "-MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."),
        (["CF.RESERVE", "r", "1", "BUCKETSIZE", "0", "EXPANSION", "-1"],
         "-BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
        (["CF.RESERVE", "r", "1", "EXPANSION", "-1"],
         "-EXPANSION: value must be an integer between 0 and 32768, inclusive."),
    ]
    for args, expected in cases:
        check(" ".join(args), show(c.call(*args)), expected)
    check("CF.RESERVE r 4", show(c.call("CF.RESERVE", "r", "4")), "+OK")
    check("CF.RESERVE on an existing filter", show(c.call("CF.RESERVE", "r", "4")), "-ERR item exists")
    c.call("SET", "str", "v")
    check("CF.RESERVE on a string key", show(c.call("CF.RESERVE", "str", "10")), WRONGTYPE)
    check("argument errors come before the key check",
          show(c.call("CF.RESERVE", "str", "1")), "-Capacity must be at least (BucketSize * 2)")
    check("unknown option pairs are ignored", show(c.call("CF.RESERVE", "r2", "10", "x", "y")), "+OK")
    c.call("CF.RESERVE", "r3", "10", "bucketsize", "3", "BUCKETSIZE", "4")
    check("options are case-insensitive, the first occurrence wins", info(c, "r3")["Bucket size"], 3)
    c.call("CF.RESERVE", "expansion", "10")
    check("option names are looked up in every argument, the key too (key 'expansion')",
          info(c, "expansion")["Expansion rate"], 16)
    check("CF.RESERVE with a huge capacity (2^63-1)",
          show(c.call("CF.RESERVE", "huge", "9223372036854775807")),
          "-ERR Insufficient memory to create filter")

    section("bucket count, expansion rounding, Size")
    for cap, bs, ex in [(4, 2, 1), (5, 2, 1), (7, 2, 1), (100, 2, 1), (1000, 2, 1), (1024, 2, 1),
                        (1025, 2, 1), (10, 3, 1), (10, 1, 3), (9, 4, 5), (510, 255, 0),
                        (8, 2, 16385), (8, 2, 32768)]:
        key = "b%d_%d_%d" % (cap, bs, ex)
        c.call("CF.RESERVE", key, cap, "BUCKETSIZE", bs, "EXPANSION", ex)
        nb = next_pow2(cap // bs)
        check("capacity %d bucket %d expansion %d -> (buckets, expansion, Size)" % (cap, bs, ex),
              [info(c, key)[k] for k in ("Number of buckets", "Expansion rate", "Size")],
              [nb, next_pow2(ex), 56 + nb * bs])
    c.call("CF.ADD", "dflt", "x")
    check("a filter created by CF.ADD (defaults)", [info(c, "dflt")[k] for k in INFO_LABELS],
          [1080, 512, 1, 1, 0, 2, 1, 20])


def probe_replies(port):
    section("replies, RESP2 and RESP3")
    c2, c3 = Conn(port, 2), Conn(port, 3)
    c2.call("CF.RESERVE", "f", 4, "BUCKETSIZE", 1, "EXPANSION", 0)  # "a": fp 196, both buckets = 1
    c2.call("CF.RESERVE", "g", 64)
    expect = [
        (["CF.ADD", "f", "a"], ":1", None),
        (["CF.ADD", "f", "a"], "-Filter is full", "-Filter is full"),
        (["CF.INSERT", "f", "ITEMS", "a", "b"], "*[:-1, :1]", "*[#f, #f]"),
        (["CF.INSERTNX", "f", "ITEMS", "a", "c"], "*[:0, :1]", "*[:0, :0]"),
        (["CF.ADDNX", "f", "a"], ":0", "#f"),
        (["CF.ADDNX", "f", "d"], "-Filter is full", "-Filter is full"),
        (["CF.INSERTNX", "f", "ITEMS", "d"], "*[:-1]", "*[:-1]"),
        (["CF.EXISTS", "f", "a"], ":1", "#t"),
        (["CF.EXISTS", "f", "zz"], ":0", "#f"),
        (["CF.MEXISTS", "f", "a", "zz"], "*[:1, :0]", "*[#t, #f]"),
        (["CF.COUNT", "f", "a"], ":2", ":2"),  # one copy, counted in both (identical) buckets
        (["CF.DEL", "f", "zz"], ":0", "#f"),
        (["CF.INFO", "f"],
         "*[+Size, :60, +Number of buckets, :4, +Number of filters, :1, +Number of items inserted, "
         ":3, +Number of items deleted, :0, +Bucket size, :1, +Expansion rate, :0, "
         "+Max iterations, :20]",
         "%{+Size: :60, +Number of buckets: :4, +Number of filters: :1, +Number of items "
         "inserted: :3, +Number of items deleted: :0, +Bucket size: :1, +Expansion rate: :0, "
         "+Max iterations: :20}"),
        (["CF.DEBUG", "f"],
         "$'bktsize:1 buckets:4 items:3 deletes:0 filters:1 max_iterations:20 expansion:0'",
         "$'bktsize:1 buckets:4 items:3 deletes:0 filters:1 max_iterations:20 expansion:0'"),
        (["CF.SCANDUMP", "f", 100], "*[:0, $nil]", "*[:0, _]"),
        (["CF.SCANDUMP", "g", 0], "*[:0, $nil]", "*[:0, _]"),  # empty filter: no header at all
        (["CF.COMPACT", "f"], "+OK", "+OK"),
        # each row below runs once per protocol: "a" is added 4 times, inserted twice, then
        # deleted twice (CF.ADD does not check presence; CF.COUNT counts the copies)
        (["CF.ADD", "g", "a"], ":1", "#t"),
        (["CF.ADD", "g", "a"], ":1", "#t"),
        (["CF.INSERT", "g", "ITEMS", "a"], "*[:1]", "*[#t]"),
        (["CF.COUNT", "g", "a"], ":6", ":6"),
        (["CF.DEL", "g", "a"], ":1", "#t"),
        (["CF.COUNT", "g", "a"], ":4", ":4"),
    ]
    for args, r2, r3 in expect:
        check("RESP2 " + " ".join(map(str, args)), show(c2.call(*args)), r2)
        if r3 is not None:
            check("RESP3 " + " ".join(map(str, args)), show(c3.call(*args)), r3)
    c2.call("CF.RESERVE", "h", 8)
    for item in ("a", "b", "a"):
        c2.call("CF.ADD", "h", item)
    c2.call("CF.DEL", "h", "a")
    check("CF.INFO counters after 3 adds and 1 delete",
          [info(c2, "h")[k] for k in ("Number of items inserted", "Number of items deleted")], [2, 1])
    c2.call("CF.COMPACT", "h")
    check("CF.COMPACT resets 'Number of items deleted'", info(c2, "h")["Number of items deleted"], 0)


def probe_arity_and_keys(c):
    section("arity (enforced by the module; COMMAND INFO says -1)")
    wrong = [["CF.ADD", "k"], ["CF.ADD", "k", "a", "b"], ["CF.ADDNX", "k", "a", "b"],
             ["CF.INSERT", "k", "ITEMS"], ["CF.INSERT", "k", "CAPACITY", "10"],
             ["CF.INSERT", "k", "CAPACITY", "10", "ITEMS"], ["CF.INSERTNX", "k", "ITEMS"],
             ["CF.EXISTS", "k", "a", "b"], ["CF.MEXISTS", "k"], ["CF.DEL", "k", "a", "b"],
             ["CF.COUNT", "k", "a", "b"], ["CF.INFO", "k", "x"], ["CF.SCANDUMP", "k"],
             ["CF.LOADCHUNK", "k", "1"], ["CF.DEBUG", "k", "x"], ["CF.COMPACT", "k", "x"]]
    for args in wrong:
        check(" ".join(args), show(c.call(*args)),
              "-ERR wrong number of arguments for '%s' command" % args[0].lower())

    section("CF.INSERT options")
    cases = [
        (["CF.INSERT", "i1", "FOO", "ITEMS", "a"], "-Unknown argument received"),
        (["CF.INSERT", "i1", "BUCKETSIZE", "4", "ITEMS", "a"], "-Unknown argument received"),
        (["CF.INSERT", "i1", "CAPACITY", "abc", "ITEMS", "a"], "-Bad capacity"),
        (["CF.INSERT", "i1", "CAPACITY", "3", "ITEMS", "a"],
         "-Capacity must be at least (BucketSize * 2)"),
        (["CF.INSERT", "i1", "NOCREATE", "ITEMS", "a"], "-ERR not found"),
        (["CF.INSERT", "i1", "CAPACITY", "10", "NOCREATE", "ITEMS", "a"], "-ERR not found"),
        (["CF.INSERTNX", "i1", "NOCREATE", "ITEMS", "a"], "-ERR not found"),
        (["CF.INSERT", "i1", "NOCREATE", "x"], "-Unknown argument received"),
        (["CF.INSERT", "i2", "COW", "16", "ITEMS", "a"], "*[:1]"),  # only the first letter counts
        (["CF.INSERT", "i3", "nope", "ITEMS", "a"], "-ERR not found"),
        (["CF.INSERT", "i4", "items", "NOCREATE", "x"], "*[:1, :1]"),
        (["CF.INSERT", "i5", "CAPACITY", "10", "CAPACITY", "20", "ITEMS", "a"], "*[:1]"),
        (["CF.INSERT", "i6", "CAPACITY", "4", "ITEMS", "a"], "*[:1]"),
        (["CF.INSERT", "i6", "CAPACITY", "1000", "ITEMS", "a"], "*[:1]"),
        (["CF.INSERT", "i6", "CAPACITY", "1", "ITEMS", "a"],
         "-Capacity must be at least (BucketSize * 2)"),
    ]
    for args, expected in cases:
        check(" ".join(args), show(c.call(*args)), expected)
    check("CAPACITY value read from any option word starting with c",
          info(c, "i2")["Number of buckets"], 8)
    check("the last CAPACITY wins", info(c, "i5")["Number of buckets"], 16)
    check("CAPACITY ignored on an existing filter", info(c, "i6")["Number of buckets"], 2)

    section("missing key, string key, BF key")
    c.call("SET", "s", "v")
    c.call("BF.ADD", "b", "x")
    table = [
        (["CF.ADD", "K", "x"], ":1", WRONGTYPE),
        (["CF.ADDNX", "K", "x"], ":1", WRONGTYPE),
        (["CF.INSERT", "K", "ITEMS", "x"], "*[:1]", WRONGTYPE),
        (["CF.INSERTNX", "K", "ITEMS", "x"], "*[:1]", WRONGTYPE),
        (["CF.INSERT", "K", "NOCREATE", "ITEMS", "x"], "-ERR not found", WRONGTYPE),
        (["CF.EXISTS", "K", "x"], ":0", ":0"),
        (["CF.MEXISTS", "K", "x", "y"], "*[:0, :0]", "*[:0, :0]"),
        (["CF.COUNT", "K", "x"], ":0", ":0"),
        (["CF.DEL", "K", "x"], "-Not found", "-Not found"),
        (["CF.INFO", "K"], "-ERR not found", WRONGTYPE),
        (["CF.SCANDUMP", "K", "0"], "-ERR not found", WRONGTYPE),
        (["CF.SCANDUMP", "K", "x"], "-Invalid position", "-Invalid position"),
        (["CF.LOADCHUNK", "K", "9", "abc"], "-ERR not found", WRONGTYPE),
        (["CF.LOADCHUNK", "K", "1", "abc"], "-Invalid header", WRONGTYPE),
        (["CF.LOADCHUNK", "K", "0", "abc"], "-Invalid position", "-Invalid position"),
        (["CF.DEBUG", "K"], "-ERR not found", WRONGTYPE),
        (["CF.COMPACT", "K"], "-Cuckoo filter was not found", "-Cuckoo filter was not found"),
    ]
    for args, missing, other in table:
        c.call("DEL", "m")
        check("missing key: " + " ".join(args), show(c.call(*[("m" if a == "K" else a) for a in args])),
              missing)
        for key in ("s", "b"):
            check(("string" if key == "s" else "BF") + " key: " + " ".join(args),
                  show(c.call(*[(key if a == "K" else a) for a in args])), other)
    c.call("DEL", "m")
    check("BF.EXISTS on a CF key", (c.call("CF.ADD", "m", "x"), show(c.call("BF.EXISTS", "m", "x")))[1],
          ":0")
    check("BF.ADD on a CF key", show(c.call("BF.ADD", "m", "x")), WRONGTYPE)


def probe_capacity(c):
    section("duplicates and a full non-scaling filter")
    for bs in (1, 2, 4):
        key = "dup%d" % bs
        c.call("CF.RESERVE", key, 64 * bs, "BUCKETSIZE", bs, "EXPANSION", 0)  # "hello": 2 buckets
        replies = [show(c.call("CF.ADD", key, "hello")) for _ in range(2 * bs + 1)]
        check("bucket size %d: 'hello' added 2*%d+1 times" % (bs, bs), replies,
              [":1"] * (2 * bs) + ["-Filter is full"])
        check("  CF.COUNT", val(c.call("CF.COUNT", key, "hello")), 2 * bs)
    for bs, mi, full_at in [(2, 20, 675), (4, 20, 937), (1, 20, 552), (2, 1, 284), (2, 500, 675)]:
        key = "fill%d_%d" % (bs, mi)
        c.call("CF.RESERVE", key, 1024, "BUCKETSIZE", bs, "MAXITERATIONS", mi, "EXPANSION", 0)
        n = 0
        while n < 2000 and val(c.call("CF.ADD", key, "item%d" % n)) == 1:
            n += 1
        check("capacity 1024 bucket %d maxiterations %d expansion 0: item0.. item%d added, "
              "then the first failure" % (bs, mi, full_at - 1), n, full_at)

    section("growth (EXPANSION), sub-filter sizes, the sub-filter limit")
    for ex in (1, 2, 4):
        key = "grow%d" % ex
        c.call("CF.RESERVE", key, 4, "EXPANSION", ex)
        seen = []
        for i in range(12):
            c.call("CF.ADD", key, "same")
            nf = info(c, key)["Number of filters"]
            if not seen or seen[-1][1] != nf:
                seen.append((i + 1, nf, info(c, key)["Size"], info(c, key)["Number of buckets"]))
        sizes = [40 + 16 * nf + sum(4 * ex ** j for j in range(nf)) for _, nf, _, _ in seen]
        check("EXPANSION %d: Size = 40 + 16*filters + sum(4*%d^i)" % (ex, ex),
              [s for _, _, s, _ in seen], sizes)
        check("EXPANSION %d: 'Number of buckets' stays the first sub-filter's" % ex,
              {b for _, _, _, b in seen}, {2})
        note("EXPANSION %d: (add#, filters) when a sub-filter appeared: %s"
             % (ex, [(a, f) for a, f, _, _ in seen]))
    key = "grow1"
    replies = [show(c.call("CF.ADD", key, "same")) for _ in range(60)]
    check("EXPANSION 1: after 32 sub-filters every insert fails",
          (info(c, key)["Number of filters"], replies[-1]), (32, "-Maximum expansions reached"))
    check("  ...even CF.INSERT (whole reply)", show(c.call("CF.INSERT", key, "ITEMS", "q", "r")),
          "-Maximum expansions reached")
    check("  ...even CF.ADDNX of a present item", show(c.call("CF.ADDNX", key, "same")),
          "-Maximum expansions reached")
    check("  ...reads still work", show(c.call("CF.EXISTS", key, "same")), ":1")

    section("deletes and automatic compaction")
    c.call("CF.RESERVE", "cmp", 4, "EXPANSION", 1)
    for i in range(40):
        c.call("CF.ADD", "cmp", "i%d" % i)
    trace = []
    for i in range(6):
        c.call("CF.DEL", "cmp", "i%d" % i)
        inf = info(c, "cmp")
        trace.append((inf["Number of filters"], inf["Number of items inserted"],
                      inf["Number of items deleted"]))
    check("40 items in 10 sub-filters, delete 6: (filters, items, deleted) after each",
          trace, [(10, 39, 1), (10, 38, 2), (10, 37, 3), (9, 36, 0), (9, 35, 1), (9, 34, 2)])


def probe_dump(c):
    section("SCANDUMP / LOADCHUNK")
    c.call("CF.RESERVE", "sd", 8, "EXPANSION", 2, "MAXITERATIONS", 7)
    for i in range(30):
        c.call("CF.ADD", "sd", "i%d" % i)
    pairs = scandump(c, "sd")
    check("iterators and chunk lengths", [(it, len(d)) for it, d in pairs],
          [(1, 38), (9, 8), (25, 16), (57, 32)])
    hdr = HEADER.unpack(pairs[0][1])
    check("header <QQQQHHH: numItems numBuckets numDeletes numFilters bucket maxiter expansion",
          hdr, (30, 4, 0, 3, 2, 7, 2))
    check("SCANDUMP from inside a small sub-filter returns the whole sub-filter again",
          [val(x) if i == 0 else len(val(x)) for i, x in
           enumerate(c.call("CF.SCANDUMP", "sd", 5)[1])], [13, 8])
    check("SCANDUMP -1", show(c.call("CF.SCANDUMP", "sd", -1)), "-Invalid position")
    for it, data in pairs:
        c.call("CF.LOADCHUNK", "sd2", it, data)
    check("LOADCHUNK of every pair rebuilds the same filter",
          (scandump(c, "sd2") == pairs, info(c, "sd2") == info(c, "sd")), (True, True))
    errors = [
        (["sd2", 1, pairs[0][1]], "-ERR item exists"),
        (["sd2", 1, pairs[0][1][:-1]], "-ERR item exists"),
        (["new", 1, pairs[0][1][:-1]], "-Invalid header"),
        (["new", 1, pairs[0][1] + b"\0"], "-Invalid header"),
        (["new", 9, pairs[1][1]], "-ERR not found"),
        (["sd2", 9, b""], "-Couldn't load chunk!"),
        (["sd2", 1000, b"abc"], "-Couldn't load chunk!"),
        (["sd2", 12, b"abcdefgh"], "-Couldn't load chunk!"),
        (["sd2", -1, b"abc"], "-Couldn't load chunk!"),
        (["sd2", 0, b"abc"], "-Invalid position"),
        (["sd2", "x", b"abc"], "-Invalid position"),
    ]
    for args, expected in errors:
        check("CF.LOADCHUNK %s %s <%d bytes>" % (args[0], args[1], len(args[2])),
              show(c.call("CF.LOADCHUNK", *args)), expected)
    bad_headers = [("numFilters 0", (0, 4, 0, 0, 2, 20, 1)), ("numBuckets 0", (0, 0, 0, 1, 2, 20, 1)),
                   ("numBuckets 3", (0, 3, 0, 1, 2, 20, 1)), ("bucket 0", (0, 4, 0, 1, 0, 20, 1)),
                   ("bucket 256", (0, 4, 0, 1, 256, 20, 1)), ("maxiter 0", (0, 4, 0, 1, 2, 0, 1)),
                   ("numBuckets 2^56", (0, 1 << 56, 0, 1, 2, 20, 1))]
    for i, (label, fields) in enumerate(bad_headers):
        check("LOADCHUNK header with " + label,
              show(c.call("CF.LOADCHUNK", "bh%d" % i, 1, HEADER.pack(*fields))),
              "-Couldn't create filter!")
    odd = show(c.call("CF.LOADCHUNK", "odd", 1, HEADER.pack(1000, 4, 0, 1, 2, 20, 3)))
    if REDBLOOM:
        check("a header with expansion 3, which RedisBloom's commands never make", odd,
              "-Couldn't create filter!")
    else:
        check("header values not checked: numItems 1000 in 8 slots, expansion 3",
              (info(c, "odd")["Number of items inserted"], info(c, "odd")["Expansion rate"]), (1000, 3))

    section("16 MiB chunks (a 32 MiB sub-filter)")
    c.call("CF.RESERVE", "big", 1 << 25)
    c.call("CF.ADD", "big", "x")
    check("iterators and chunk lengths", [(it, len(d)) for it, d in scandump(c, "big")],
          [(1, 38), (16777217, 16777216), (33554433, 16777216)])
    c.call("DEL", "big")

    section("DUMP payload of a tiny filter")
    c.call("CF.RESERVE", "tiny", 4)
    c.call("CF.ADD", "tiny", "a")
    payload = val(c.call("DUMP", "tiny"))
    print("  DUMP tiny (capacity 4, item 'a'): " + payload.hex())
    check("payload body: uints nf nb items deletes bucket maxiter exp, then per sub-filter "
          "uint nb + string data, EOF", payload[10:-10].hex(),
          "0201" "0202" "0201" "0200" "0202" "0214" "0201" "0202" "0504" "0000c400" "00")
    check("data chunk equals the SCANDUMP chunk", scandump(c, "tiny")[1][1], bytes.fromhex("0000c400"))
    check("RESTORE of the payload", show(c.call("RESTORE", "tiny2", 0, payload)), "+OK")
    if REDBLOOM:
        check("COPY", show(c.call("COPY", "tiny", "tiny3")), ":1")
        check("the copy's digest", val(c.call("DEBUG", "DIGEST-VALUE", "tiny3")),
              val(c.call("DEBUG", "DIGEST-VALUE", "tiny")))
    else:
        check("COPY", show(c.call("COPY", "tiny", "tiny3")), "-ERR not supported for this module key")


def probe_model(c):
    section("hash, buckets, eviction, deletes, compaction: replay against a model")
    for item in [b"a", b"hello", b"12345678", b"123456789abcdefgh", b"", b"x" * 33]:
        for bs, cap in [(1, 64), (2, 1024), (3, 96)]:
            key = b"h:" + item + b":%d" % bs
            c.call("CF.RESERVE", key, cap, "BUCKETSIZE", bs)
            c.call("CF.ADD", key, item)
            data = scandump(c, key)[1][1]
            h1, _, fp = lookup(item)
            check("item %r bucket %d: the one non-zero byte (offset, value)" % (item[:12], bs),
                  [(i, b) for i, b in enumerate(data) if b], [((h1 % (len(data) // bs)) * bs, fp)])
    rng = random.Random(7)
    for n, (cap, bs, mi, ex) in enumerate([(64, 2, 20, 1), (64, 1, 20, 1), (64, 4, 20, 2),
                                           (100, 3, 5, 4), (50, 2, 1, 0), (32, 2, 50, 2)]):
        key = "model%d" % n
        c.call("CF.RESERVE", key, cap, "BUCKETSIZE", bs, "MAXITERATIONS", mi, "EXPANSION", ex)
        m = Model(cap, bs, mi, ex)
        pool = [b"e%d" % i for i in range(cap * 3)]
        first_diff = None
        for step in range(cap * 4):
            op, item = rng.random(), rng.choice(pool)
            if op < 0.55:
                got, want = c.call("CF.ADD", key, item), m.add(item)
            elif op < 0.7:
                got, want = c.call("CF.ADDNX", key, item), m.addnx(item)
            elif op < 0.85:
                got, want = c.call("CF.DEL", key, item), m.delete(item)
            elif op < 0.93:
                got, want = c.call("CF.COUNT", key, item), m.count(item)
            elif op < 0.99:
                got, want = c.call("CF.EXISTS", key, item), m.check(item)
            else:
                got, want = c.call("CF.COMPACT", key), m.compact() or "OK"
            got = -1 if got == ("-", "Filter is full") else val(got)
            if got != want and first_diff is None:
                first_diff = (step, item, got, want)
        inf = info(c, key)
        check("capacity %d bucket %d maxiter %d expansion %d: %d random ops"
              % (cap, bs, mi, ex, cap * 4),
              (first_diff, b"".join(d for _, d in scandump(c, key)[1:]) == m.data(),
               [inf[k] for k in INFO_LABELS]),
              (None, True, [m.size(), m.nb, len(m.filters), m.items, m.deletes, bs, m.ex, mi]))


def probe_propagation(c, aofdir):
    section("what is written to the AOF (= replicated)")
    c.call("CF.RESERVE", "p1", 8, "EXPANSION", 0)
    for _ in range(6):
        c.call("CF.ADD", "p1", "same")  # 4 succeed, 2 'Filter is full'
    c.call("CF.ADDNX", "p1", "same")
    c.call("CF.DEL", "p1", "absent")
    c.call("CF.INSERT", "p2", "NOCREATE", "ITEMS", "a")
    pairs = scandump(c, "p1")
    for it, data in pairs:
        c.call("CF.LOADCHUNK", "p3", it, data)
    c.call("CF.COMPACT", "p1")
    time.sleep(1.2)
    files = glob.glob(os.path.join(aofdir, "appendonlydir", "*.incr.aof"))
    aof = b"".join(open(f, "rb").read() for f in files)
    count = lambda cmd, key: aof.count(b"$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(cmd), cmd, len(key), key))
    check("CF.ADD p1 written 4 times (the 2 failures are not)", count(b"CF.ADD", b"p1"), 4)
    check("CF.ADDNX of a present item is written", count(b"CF.ADDNX", b"p1"), 1)
    check("CF.DEL of an absent item is written", count(b"CF.DEL", b"p1"), 1)
    check("CF.INSERT NOCREATE on a missing key is not", count(b"CF.INSERT", b"p2"), 0)
    check("CF.COMPACT is written", count(b"CF.COMPACT", b"p1"), 1)
    if REDBLOOM:
        check("LOADCHUNK: the header and the data chunk are written", count(b"CF.LOADCHUNK", b"p3"), 2)
    else:
        check("LOADCHUNK: the header is written, the data chunk is NOT", count(b"CF.LOADCHUNK", b"p3"), 1)


# ---------------------------------------------------------------------------- main


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    global VERBOSE, REDBLOOM
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--module", default=os.path.join(ROOT, "target", "peers", "redisbloom-2.8.2.so"))
    ap.add_argument("--server", default="redis-server")
    ap.add_argument("--redbloom", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    opts = ap.parse_args()
    VERBOSE = opts.verbose
    REDBLOOM = opts.redbloom
    tmp = tempfile.mkdtemp(prefix="probe-cf-")
    port = free_port()
    log = open(os.path.join(tmp, "log"), "wb")
    server = subprocess.Popen(
        [opts.server, "--port", str(port), "--bind", "127.0.0.1", "--dir", tmp, "--save", "",
         "--appendonly", "yes", "--appendfsync", "always", "--enable-debug-command", "yes",
         "--loadmodule", os.path.abspath(opts.module)], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            try:
                c = Conn(port)
                c.call("PING")
                break
            except OSError:
                time.sleep(0.05)
        else:
            sys.exit("the server did not start; see %s/log" % tmp)
        print("server %s on port %d, module %s, folder %s" % (opts.server, port, opts.module, tmp))
        probe_identity(c)
        probe_reserve(c)
        probe_replies(port)
        probe_arity_and_keys(c)
        probe_capacity(c)
        probe_dump(c)
        probe_model(c)
        probe_propagation(c, tmp)
        c.call("FLUSHALL")
        c.send("SHUTDOWN", "NOSAVE")
    except (ConnectionError, OSError) as e:
        print("\nconnection lost (%s): did the server crash? see %s/log" % (e, tmp))
        FAILS.append("connection")
    finally:
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.terminate()
            server.wait()
        log.close()
    print("\n%d difference(s)%s" % (len(FAILS), "" if FAILS else ": matches RedisBloom 2.8.2"))
    if not FAILS:
        subprocess.run(["rm", "-rf", tmp])
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
