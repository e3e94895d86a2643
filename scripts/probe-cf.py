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
import os
import sys

# The probes live in the probe_cf package beside this file; the tests run this script from the
# repository, where compiled files would show up as untracked files, so none are written.
sys.dont_write_bytecode = True

from probe_cf import commands, filters, report  # noqa: E402
from probe_cf.server import Server  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--module", default=os.path.join(ROOT, "target", "peers", "redisbloom-2.8.2.so"))
    ap.add_argument("--server", default="redis-server")
    ap.add_argument("--redbloom", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    opts = ap.parse_args()
    report.VERBOSE = opts.verbose
    report.REDBLOOM = opts.redbloom
    server = Server(opts.server, opts.module)
    try:
        c = server.connect()
        print("server %s on port %d, module %s, folder %s"
              % (opts.server, server.port, opts.module, server.dir))
        commands.probe_identity(c)
        commands.probe_reserve(c)
        commands.probe_replies(server.port)
        commands.probe_arity_and_keys(c)
        filters.probe_capacity(c)
        filters.probe_dump(c)
        filters.probe_model(c)
        filters.probe_propagation(c, server.dir)
        c.call("FLUSHALL")
        c.send("SHUTDOWN", "NOSAVE")
    except (ConnectionError, OSError) as e:
        print("\nconnection lost (%s): did the server crash? see %s/log" % (e, server.dir))
        report.FAILS.append("connection")
    finally:
        server.stop()
    fails = report.FAILS
    print("\n%d difference(s)%s" % (len(fails), "" if fails else ": matches RedisBloom 2.8.2"))
    if not fails:
        server.remove()
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
