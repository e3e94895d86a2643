"""The probes of the filter itself: duplicates, a full filter, growth and its limit, deletes
and compaction, SCANDUMP/LOADCHUNK and DUMP layouts, random operations replayed against the
model, and what reaches the AOF."""
import glob
import os
import random
import time

from . import report
from .cf import HEADER, INFO_LABELS, info, scandump
from .model import Model, lookup
from .report import check, note, section
from .resp import show, val


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
    if report.REDBLOOM:
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
    if report.REDBLOOM:
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
    if report.REDBLOOM:
        check("LOADCHUNK: the header and the data chunk are written", count(b"CF.LOADCHUNK", b"p3"), 2)
    else:
        check("LOADCHUNK: the header is written, the data chunk is NOT", count(b"CF.LOADCHUNK", b"p3"), 1)
