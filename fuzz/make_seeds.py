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


def dump(sock, key):
    pieces, iterator = [], 0
    while True:
        iterator, data = command(sock, "BF.SCANDUMP", key, iterator)
        if iterator == 0:
            return pieces
        pieces.append((iterator, data))


def write(target, name, data):
    directory = os.path.join("fuzz", "corpus", target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as seed:
        seed.write(data)


def main(port):
    sock = socket.create_connection(("127.0.0.1", port))
    filters = {
        "small": ("BF.RESERVE", "small", "0.01", "100"),
        "fixed": ("BF.RESERVE", "fixed", "0.001", "2000", "NONSCALING"),
        "strict": ("BF.RESERVE", "strict", "0.000001", "500", "NONSCALING"),
        "loose": ("BF.RESERVE", "loose", "0.25", "50", "EXPANSION", "3"),
        "grown": ("BF.RESERVE", "grown", "0.01", "4", "EXPANSION", "2"),
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
        write("operations", name, bytes([len(name), 2, 2, 3]) + "".join(f"{name}{n}" for n in range(40)).encode())
    for name, line in {
        "reserve": "0.01 100 EXPANSION 4",
        "nonscaling": "0.001 5000 NONSCALING",
        "insert": "CAPACITY 1000 ERROR 0.01 EXPANSION 2 ITEMS a b c",
        "nocreate": "NOCREATE CAPACITY 10 ITEMS a",
        "lenient": "0.01 100 4",
    }.items():
        write("arguments", name, line.replace(" ", "\0").encode())


if __name__ == "__main__":
    main(int(sys.argv[1]))
