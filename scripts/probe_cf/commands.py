"""The probes of the command surface: registration (COMMAND INFO and DOCS), CF.RESERVE's
arguments and sizes, reply shapes under RESP2 and RESP3, arities, CF.INSERT's options, and keys
that are missing or of another type."""
from . import report
from .cf import CMDS, INFO_LABELS, WRONGTYPE, info, module_id
from .model import next_pow2
from .report import check, note, section
from .resp import Conn, show, val


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
    if report.REDBLOOM:
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
              (arities[name] if report.REDBLOOM else -1, flags[name], 1, 1, 1))
        if report.REDBLOOM:
            # Real arities, key specs and argument docs; ACL categories where the server has
            # module categories: tests/it/safety.rs checks those on every server.
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
