#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora from a running server with the module loaded.

usage: python3 fuzz/make_seeds.py PORT   (from the repository's root)
"""
import os
import socket
import struct
import sys


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


if __name__ == "__main__":
    main(int(sys.argv[1]))
