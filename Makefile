# BIREN Runtime — build, test, demo, bench, install.
#   make            build the library (release) and check the header is fresh
#   make demo       build everything and run the examples (the seed's scenarios)
#   make test       cargo tests + C tests + examples + language bindings
#   make bench      benchmarks (see BENCHMARKS.md)
#   make fuzz       the random API driver, long (FUZZ_SECONDS, FUZZ_SEEDS; see below)
#   make install    PREFIX=/usr/local [DESTDIR=...]: libraries, header, pkg-config file; uninstall

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

.PHONY: all lib header check-header test test-rust test-c test-examples demo bench stress valgrind fuzz install uninstall clean

all: lib

lib:
	$(CARGO) build --release
	@ln -sf libbiren_runtime.so $(LIBDIR)/$(SONAME)

header:
	BIREN_UPDATE_HEADER=1 $(CARGO) build --release

# build.rs renders the header and fails when include/biren_runtime.h differs from it.
check-header:
	$(CARGO) build --release

$(BUILD)/c-tests/%: c-tests/%.c $(wildcard c-tests/*.h) include/biren_runtime.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_STRICT) -o $@ $< $(LDLIBS)

$(BUILD)/examples/%: examples-c/%.c include/biren_runtime.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_STRICT) -o $@ $< $(LDLIBS)

test: test-rust test-c test-examples test-python test-install

# The dlopen test loads the built .so: build it first.
test-rust: lib
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

# ---- install ---------------------------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=/staging] [libdir=...] [includedir=...]
# Installs libbiren_runtime.so.$(VERSION) with its soname link ($(SONAME)) and dev link
# (libbiren_runtime.so), libbiren_runtime.a, biren_runtime.h and biren_runtime.pc.
# Run ldconfig afterwards when installing into a system prefix.
VERSION      := $(shell sed -n 's/^version = "\([^"]*\)"/\1/p' Cargo.toml | head -n 1)
SONAME       := libbiren_runtime.so.$(firstword $(subst ., ,$(VERSION)))
libdir       ?= $(PREFIX)/lib
includedir   ?= $(PREFIX)/include
pkgconfigdir ?= $(libdir)/pkgconfig
# What the Rust staticlib needs from the system (`cargo rustc --release --lib --crate-type
# staticlib -- --print native-static-libs` prints -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc).
# -lc is implicit, and the compiler driver supplies the unwinder itself (libgcc_s as needed in a
# dynamic link, libgcc_eh with -static, where an explicit -lgcc_s would fail), so both are left out.
STATIC_LIBS  := -lutil -lrt -lpthread -lm -ldl
pc_rel        = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

# Install does not run cargo (GNU convention: `make && sudo make install`, root needs no
# toolchain and writes nothing into target/); it builds only what is missing.
$(LIBDIR)/libbiren_runtime.so $(LIBDIR)/libbiren_runtime.a:
	$(CARGO) build --release

install: $(LIBDIR)/libbiren_runtime.so $(LIBDIR)/libbiren_runtime.a
	install -d $(DESTDIR)$(libdir) $(DESTDIR)$(includedir) $(DESTDIR)$(pkgconfigdir)
	install -m 755 $(LIBDIR)/libbiren_runtime.so $(DESTDIR)$(libdir)/libbiren_runtime.so.$(VERSION)
	ln -sf libbiren_runtime.so.$(VERSION) $(DESTDIR)$(libdir)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/libbiren_runtime.so
	install -m 644 $(LIBDIR)/libbiren_runtime.a $(DESTDIR)$(libdir)/libbiren_runtime.a
	install -m 644 include/biren_runtime.h $(DESTDIR)$(includedir)/biren_runtime.h
	printf '%s\n' \
	  'prefix=$(PREFIX)' \
	  'libdir=$(call pc_rel,$(libdir))' \
	  'includedir=$(call pc_rel,$(includedir))' \
	  '' \
	  'Name: biren_runtime' \
	  'Description: BIREN accelerator runtime API on a simulated, threaded device' \
	  'Version: $(VERSION)' \
	  'Cflags: -I$${includedir}' \
	  'Libs: -L$${libdir} -lbiren_runtime' \
	  'Libs.private: $(STATIC_LIBS)' \
	  > $(DESTDIR)$(pkgconfigdir)/biren_runtime.pc
	chmod 644 $(DESTDIR)$(pkgconfigdir)/biren_runtime.pc

uninstall:
	rm -f $(DESTDIR)$(libdir)/libbiren_runtime.so.$(VERSION) $(DESTDIR)$(libdir)/$(SONAME) \
	      $(DESTDIR)$(libdir)/libbiren_runtime.so $(DESTDIR)$(libdir)/libbiren_runtime.a \
	      $(DESTDIR)$(includedir)/biren_runtime.h $(DESTDIR)$(pkgconfigdir)/biren_runtime.pc

clean:
	$(CARGO) clean
	rm -rf $(BUILD)

# ---- stress and valgrind ---------------------------------------------------------------------
# make stress [STRESS_SECONDS=60] [STRESS_RESET_SECONDS=30]: stress/stress.c with 8 host threads
# and 2 handle churners, then the variant where a thread resets the device at random moments.
# Fails on a lost update, a wrong value, an unexpected code, a crash or a hang (30 s watchdog).
# A short run is part of `make test` (c-tests/test_stress.sh). Races: bash stress/tsan.sh.
STRESS_SECONDS       ?= 60
STRESS_RESET_SECONDS ?= 30

stress: lib
	@mkdir -p $(BUILD)/stress
	$(CC) $(CFLAGS_STRICT) -o $(BUILD)/stress/stress stress/stress.c $(LDLIBS)
	@rc=0; \
	timeout $$(($(STRESS_SECONDS) + 120)) $(BUILD)/stress/stress --seconds $(STRESS_SECONDS) || rc=1; \
	timeout $$(($(STRESS_RESET_SECONDS) + 120)) $(BUILD)/stress/stress --seconds $(STRESS_RESET_SECONDS) --reset || rc=1; \
	exit $$rc

# make valgrind: every C test under memcheck, then the short stress run under memcheck (both
# variants) and under helgrind (valgrind/helgrind.supp explains why helgrind cannot judge the
# runtime's own synchronization; stress/tsan.sh is the race check that can). A memcheck error
# (including a definite leak) or a hang fails the target. So does a failed assertion, except in
# VG_TIMING: others' tests whose wall-clock assertions valgrind's one-thread-at-a-time
# scheduling breaks, a different few on each run (seen: test_scheduling
# independent_streams_run_concurrently_under_both_policies, cooperative_makes_urgent_kernel_wait;
# test_streams stream_query_not_ready_then_success, two_streams_kernels_overlap,
# non_blocking_streams_are_exempt; test_events wait_ignores_later_rerecord_to_a_later_point,
# wait_on_never_recorded_event_keeps_the_first_record; test_deadlock
# record_from_another_thread_within_the_grace_period_succeeds; test_kernels
# registered_kernel_copies_args_at_launch, free_while_copy_queued_keeps_memory,
# free_while_kernel_queued_keeps_memory). Their memory errors still count; their assertion
# failures are listed, not counted (`make test` judges those). The tests written for this
# target relax their time bounds when BIREN_UNDER_VALGRIND=1. corosensei registers its fiber
# stacks with valgrind, so no --max-stackframe is needed.
VALGRIND    ?= valgrind
VG_ENV      := BIREN_COMPUTE_UNITS=2 BIREN_UNDER_VALGRIND=1
VG_MEMCHECK := $(VALGRIND) -q --tool=memcheck --error-exitcode=99 --leak-check=full \
               --errors-for-leak-kinds=definite --show-leak-kinds=definite
VG_HELGRIND := $(VALGRIND) -q --tool=helgrind --error-exitcode=99 --suppressions=valgrind/helgrind.supp
VG_TIMING   := test_scheduling test_streams test_events test_deadlock test_kernels
VG_STRESS   := --seconds 5 --threads 4 --churners 1 --watchdog 120 --quiet

valgrind: lib $(C_TESTS)
	@mkdir -p $(BUILD)/stress
	$(CC) $(CFLAGS_STRICT) -o $(BUILD)/stress/stress stress/stress.c $(LDLIBS)
	@failed=""; timing=""; \
	judge() { \
	  case $$2 in \
	    0) ;; \
	    99) failed="$$failed $$1(valgrind-errors)" ;; \
	    124) failed="$$failed $$1(hung)" ;; \
	    *) case " $(VG_TIMING) " in \
	         *" $$1 "*) timing="$$timing $$1" ;; \
	         *) failed="$$failed $$1(exit-$$2)" ;; \
	       esac ;; \
	  esac; \
	}; \
	for t in $(C_TESTS); do \
	  echo "== memcheck $$t"; \
	  $(VG_ENV) timeout 1800 $(VG_MEMCHECK) $$t; judge $$(basename $$t) $$?; \
	done; \
	echo "== memcheck stress"; \
	$(VG_ENV) timeout 1800 $(VG_MEMCHECK) $(BUILD)/stress/stress $(VG_STRESS); judge memcheck-stress $$?; \
	echo "== memcheck stress --reset"; \
	$(VG_ENV) timeout 1800 $(VG_MEMCHECK) $(BUILD)/stress/stress $(VG_STRESS) --reset --reset-interval-ms 1000; \
	judge memcheck-stress-reset $$?; \
	echo "== helgrind stress"; \
	$(VG_ENV) timeout 1800 $(VG_HELGRIND) $(BUILD)/stress/stress $(VG_STRESS); judge helgrind-stress $$?; \
	if [ -n "$$timing" ]; then echo "valgrind: timing assertions failed under valgrind (not counted):$$timing"; fi; \
	if [ -n "$$failed" ]; then echo "valgrind: FAILED:$$failed"; exit 1; fi; \
	echo "valgrind: no memory errors, no leaks, no hangs"

# ---- fuzz ------------------------------------------------------------------------------------
# make fuzz [FUZZ_SECONDS=600] [FUZZ_SEEDS="1 2 3"] [FUZZ_THREADS=4] [FUZZ_SKIP=a,b|none]
# fuzz/fuzz.c (the random API driver, see its header comment) built plain and with
# -fsanitize=address,undefined, run for every seed with 1 and with 2 devices, plus one run per
# seed with --racy-resets (resets racing with every call, 4 threads): FUZZ_SECONDS is the
# total, shared evenly by the runs (at least 10 s each). Fails on any failed check, crash or
# hang (30 s watchdog, which prints every thread's stack). FUZZ_SKIP defaults to the checks
# fuzz/known-bugs lists (known bugs not fixed yet); FUZZ_SKIP=none runs them all. A short run
# is part of `make test` (c-tests/test_fuzz.sh).
FUZZ_SECONDS ?= 600
FUZZ_SEEDS   ?= 1 2 3
FUZZ_THREADS ?= 4
FUZZ_SKIP    ?= $(or $(shell grep -v '^\#' fuzz/known-bugs | grep -v '^$$' | paste -sd, -),none)
FUZZ_SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

$(BUILD)/fuzz/fuzz: fuzz/fuzz.c include/biren_runtime.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_STRICT) -o $@ $< $(LDLIBS)

$(BUILD)/fuzz/fuzz-asan: fuzz/fuzz.c include/biren_runtime.h lib
	@mkdir -p $(dir $@)
	$(CC) $(subst -O2,-O1,$(CFLAGS_STRICT)) $(FUZZ_SAN) -o $@ $< $(LDLIBS)

fuzz: $(BUILD)/fuzz/fuzz $(BUILD)/fuzz/fuzz-asan
	@runs=$$(( $(words $(FUZZ_SEEDS)) * 5 )); per=$$(( $(FUZZ_SECONDS) / runs )); [ $$per -ge 10 ] || per=10; \
	failed=""; \
	for seed in $(FUZZ_SEEDS); do for devs in 1 2; do for bin in fuzz fuzz-asan; do \
	  echo "== $$bin, $$devs device(s), seed $$seed, $$per s (skip: $(FUZZ_SKIP))"; \
	  BIREN_DEVICE_COUNT=$$devs timeout $$((per + 300)) $(BUILD)/fuzz/$$bin --seed $$seed --seconds $$per \
	    --threads $(FUZZ_THREADS) --skip $(FUZZ_SKIP) --quiet || failed="$$failed $$bin/$$devs-dev/seed-$$seed"; \
	done; done; \
	  echo "== fuzz --racy-resets, 1 device, seed $$seed, $$per s"; \
	  BIREN_DEVICE_COUNT=1 timeout $$((per + 300)) $(BUILD)/fuzz/fuzz --seed $$seed --seconds $$per \
	    --threads 4 --racy-resets --skip $(FUZZ_SKIP) --quiet || failed="$$failed racy/seed-$$seed"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed"; exit 1; fi; echo "fuzz: all runs passed"
