"""The CF.* contract probe behind scripts/probe-cf.py (see its docstring for what it does and
its command line). A package of its own so that no file grows past 600 lines: the RESP client
(resp), reporting (report), the model of RedisBloom's cuckoo filter (model), readers the
probes share (cf), the probes (commands, filters) and the server they run against (server).
Python 3 standard library only."""
