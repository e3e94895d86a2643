"""redis-py's own Bloom and cuckoo filter APIs (`r.bf()`, `r.cf()`), unchanged, against a
server with this module.

usage: python redis_py.py PORT PROTOCOL   (PROTOCOL 2 or 3); exits non-zero on the first
answer that is not what redis-py's users get from RedisBloom.
"""
import sys

import redis
from redis.exceptions import ResponseError


def field(info, attribute, label):
    """A BF.INFO field as redis-py hands it over: an object's attribute under RESP2, a map's
    entry under RESP3."""
    if isinstance(info, dict):
        return info[label.encode()]
    return getattr(info, attribute)


def copy_by_dump(api, source, target):
    """The SCANDUMP/LOADCHUNK loop, as redis-py's documentation shows it."""
    chunks = []
    iterator = 0
    while True:
        iterator, data = api.scandump(source, iterator)
        if iterator == 0:
            break
        chunks.append((iterator, data))
    for iterator, data in chunks:
        api.loadchunk(target, iterator, data)


def main(port, protocol):
    r = redis.Redis(port=port, protocol=protocol)
    r.flushall()
    bf = r.bf()
    assert bf.create("users", 0.01, 1000) in (True, b"OK", "OK")
    assert bf.add("users", "alice") in (1, True)
    assert bf.add("users", "alice") in (0, False)
    assert [bool(x) for x in bf.madd("users", "bob", "carol", "alice")] == [True, True, False]
    assert bool(bf.exists("users", "bob")) and not bool(bf.exists("users", "mallory"))
    assert [bool(x) for x in bf.mexists("users", "alice", "mallory")] == [True, False]
    assert bf.card("users") == 3

    info = bf.info("users")
    assert field(info, "capacity", "Capacity") == 1000
    assert field(info, "insertedNum", "Number of items inserted") == 3
    assert field(info, "filterNum", "Number of filters") == 1

    assert [bool(x) for x in bf.insert("fresh", ["x", "y"], capacity=10, error=0.001, expansion=3)] == [True, True]
    assert field(bf.info("fresh"), "expansionRate", "Expansion rate") == 3
    try:
        bf.insert("missing", ["x"], noCreate=True)
        raise AssertionError("NOCREATE created a filter")
    except ResponseError as error:
        assert "not found" in str(error), error

    # A full non-scaling filter: the error is an element of the reply.
    bf.create("small", 0.01, 2, noScale=True)
    answers = bf.madd("small", "a", "b", "c", "d")
    assert len(answers) >= 3 and isinstance(answers[-1], ResponseError), answers

    copy_by_dump(bf, "users", "copy")
    assert [bool(x) for x in bf.mexists("copy", "alice", "bob", "carol")] == [True, True, True]
    cuckoo(r)
    print(f"redis-py {redis.__version__}, RESP{protocol}: ok")


def cuckoo(r):
    """redis-py's `r.cf()`: the cuckoo filter calls, including deletes and the dump loop."""
    cf = r.cf()
    assert cf.create("tokens", 1000, bucket_size=4, max_iterations=30, expansion=2) in (True, b"OK", "OK")
    assert cf.add("tokens", "t1") in (1, True)
    assert cf.addnx("tokens", "t1") in (0, False)
    assert [int(x) for x in cf.insert("tokens", ["t2", "t3"])] == [1, 1]
    assert [int(x) for x in cf.insertnx("tokens", ["t3", "t4"])] == [0, 1]
    assert bool(cf.exists("tokens", "t2")) and not bool(cf.exists("tokens", "never"))
    assert [bool(x) for x in cf.mexists("tokens", "t1", "never")] == [True, False]
    assert cf.count("tokens", "t1") == 1
    assert cf.delete("tokens", "t1") in (1, True)
    assert not bool(cf.exists("tokens", "t1"))
    assert cf.delete("tokens", "t1") in (0, False)

    info = cf.info("tokens")
    assert field(info, "bucketSize", "Bucket size") == 4
    assert field(info, "maxIteration", "Max iterations") == 30
    assert field(info, "expansionRate", "Expansion rate") == 2
    assert field(info, "insertedNum", "Number of items inserted") == 3
    assert field(info, "deletedNum", "Number of items deleted") == 1
    assert field(info, "filterNum", "Number of filters") == 1

    try:
        cf.insert("absent", ["x"], nocreate=True)
        raise AssertionError("NOCREATE created a filter")
    except ResponseError as error:
        assert "not found" in str(error), error

    copy_by_dump(cf, "tokens", "tokens-copy")
    assert [bool(x) for x in cf.mexists("tokens-copy", "t2", "t3", "t4")] == [True, True, True]


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
