"""What the probes share: the CF.* command names, CF.INFO's labels, and readers for CF.INFO,
CF.SCANDUMP, the dump header and DUMP payloads."""
import struct

from .resp import val

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
