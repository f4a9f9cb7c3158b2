# BIREN Runtime — build, test, demo, bench, install.
#   make            build the library (release) and check the header is fresh
#   make demo       build everything and run the examples (the seed's scenarios)
#   make test       cargo tests + C tests + examples + language bindings
#   make bench      benchmarks (see BENCHMARKS.md)

CARGO    ?= cargo
CC       ?= cc
CXX      ?= c++
PREFIX   ?= /usr/local
DESTDIR  ?=
LIBDIR   := target/release
BUILD    := build
CFLAGS_STRICT := -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -g -Iinclude -pthread
CXXFLAGS_STRICT := -std=c++11 -Wall -Wextra -Wpedantic -Werror -O2 -g -Iinclude -pthread
LDLIBS   := -L$(LIBDIR) -Wl,-rpath,$(CURDIR)/$(LIBDIR) -lbiren_runtime -lm -pthread

C_TESTS  := $(patsubst c-tests/%.c,$(BUILD)/c-tests/%,$(wildcard c-tests/*.c))
EXAMPLES := $(patsubst examples-c/%.c,$(BUILD)/examples/%,$(sort $(wildcard examples-c/*.c)))

.PHONY: all lib header check-header test test-rust test-c test-examples demo bench stress valgrind install uninstall clean

all: lib

lib:
	$(CARGO) build --release

header:
	BIREN_UPDATE_HEADER=1 $(CARGO) build --release

# build.rs renders the header and fails when include/biren_runtime.h differs from it.
check-header:
	$(CARGO) build --release

$(BUILD)/c-tests/%: c-tests/%.c c-tests/harness.h include/biren_runtime.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_STRICT) -o $@ $< $(LDLIBS)

$(BUILD)/examples/%: examples-c/%.c include/biren_runtime.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_STRICT) -o $@ $< $(LDLIBS)

test: test-rust test-c test-examples test-python test-install

test-rust:
	$(CARGO) test --release

test-c: lib $(C_TESTS)
	@set -e; for t in $(C_TESTS); do echo "== $$t"; timeout 300 $$t; done
	@set -e; for s in $(wildcard c-tests/*.sh); do echo "== $$s"; timeout 300 bash $$s; done

# Python binding tests (python/tests), run against the freshly built library.
test-python: lib
	@if [ -d python/tests ]; then BIREN_LIBRARY=$(CURDIR)/$(LIBDIR)/libbiren_runtime.so python3 -m pytest -q python/tests; fi

# Installs into a temporary prefix and builds C programs against the installed copy.
test-install: lib
	@if [ -f tests/install_test.sh ]; then bash tests/install_test.sh; fi

test-examples: lib $(EXAMPLES)
	@set -e; for e in $(EXAMPLES); do echo "== $$e"; BIREN_DEMO_QUIET=1 timeout 120 $$e > /dev/null; done; echo "examples: all exited 0"

demo: lib $(EXAMPLES)
	@set -e; for e in $(EXAMPLES); do echo; echo "================ $$e"; timeout 120 $$e; done

BENCH := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))
$(BUILD)/bench/%: bench/%.c include/biren_runtime.h lib
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O3 -march=native -g -Iinclude -pthread -o $@ $< $(LDLIBS)

bench: lib $(BENCH)
	@set -e; for b in $(BENCH); do $$b; done

clean:
	$(CARGO) clean
	rm -rf $(BUILD)
