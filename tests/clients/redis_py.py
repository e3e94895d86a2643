"""redis-py's own Bloom filter API (`r.bf()`), unchanged, against a server with this module.

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

    # The SCANDUMP/LOADCHUNK loop, as redis-py's documentation shows it.
    chunks = []
    iterator = 0
    while True:
        iterator, data = bf.scandump("users", iterator)
        if iterator == 0:
            break
        chunks.append((iterator, data))
    for iterator, data in chunks:
        bf.loadchunk("copy", iterator, data)
    assert [bool(x) for x in bf.mexists("copy", "alice", "bob", "carol")] == [True, True, True]
    print(f"redis-py {redis.__version__}, RESP{protocol}: ok")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
