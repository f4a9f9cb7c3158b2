# BIREN Runtime — build, test, demo, bench, install.
#   make            build the library (release), check the header is fresh, build biren-prof
#                   and biren-cc (the compiler driver: region-form kernels)
#   make prof       build the profiler command, target/release/biren-prof (see README)
#   make demo       build everything and run the examples (the seed's scenarios)
#   make test       cargo tests + C tests + examples + language bindings + install; sets up
#                   its Python tools in build/venv (and, as root, missing system tools) itself
#   make bench      benchmarks (see BENCHMARKS.md); bench-pocl, bench-peer: beside PoCL, HIP-CPU
#   make fuzz       the random API driver, long (FUZZ_SECONDS, FUZZ_SEEDS; see below)
#   make docs       API reference of the header (Doxygen) in build/docs/html; fails on any warning
#   make install    PREFIX=/usr/local [DESTDIR=...]: libraries, header, pkg-config file, CMake
#                   package, biren-prof; uninstall

CARGO    ?= cargo
CC       ?= cc
CXX      ?= c++
PREFIX   ?= /usr/local
DESTDIR  ?=
LIBDIR   := target/release
BUILD    := build
CFLAGS_STRICT := -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -g -Iinclude -pthread
CXXFLAGS_STRICT := -std=c++11 -Wall -Wextra -Wpedantic -Werror -O2 -g -Iinclude -pthread
# LOCK_ORDER=1 builds the library with the lock-order checker on (device/lock_order.rs; debug
# builds and cargo tests always have it): a lock taken out of order or a wait under a lock
# prints a "biren: internal:" line and panics. For `make fuzz`, `make stress`, `make test-c`.
CARGO_FEATURES := $(if $(LOCK_ORDER),--features lock-order)
LDLIBS   := -L$(LIBDIR) -Wl,-rpath,$(CURDIR)/$(LIBDIR) -lbiren_runtime -lm -pthread

C_TESTS  := $(patsubst c-tests/%.c,$(BUILD)/c-tests/%,$(wildcard c-tests/*.c))
EXAMPLES := $(patsubst examples-c/%.c,$(BUILD)/examples/%,$(sort $(wildcard examples-c/*.c)))
SAMPLES  := $(patsubst samples/%.c,$(BUILD)/samples/%,$(sort $(wildcard samples/*.c)))

.PHONY: all lib prof cc header check-header system-tools venv test test-rust test-c test-examples test-samples test-cuda test-cu-samples test-prof test-python test-wheel demo bench bench-peer bench-pocl bench-hip pocl stress valgrind fuzz install uninstall clean docs

all: lib prof cc

# What a fresh machine may lack beyond the Rust toolchain: a C compiler (cargo links with it),
# pkg-config, readelf and nm. Installed with apt-get when missing and when run as root.
system-tools:
	@CC="$(CC)" bash tools/system-tools.sh

lib: system-tools
	$(CARGO) build --release $(CARGO_FEATURES)
	@ln -sf libbiren_runtime.so $(LIBDIR)/$(SONAME)

# biren-cc (tools/biren-cc): the compiler driver, target/release/biren-cc (SPEC §12).
cc: lib
	$(CARGO) build --release -p biren-cc

# biren-prof (tools/biren-prof): runs a program with BIREN_TRACE and summarises the trace.
prof:
	$(CARGO) build --release -p biren-prof

header:
	BIREN_UPDATE_HEADER=1 $(CARGO) build --release
	python3 tools/cuda_header.py

# build.rs renders the header and fails when include/biren_runtime.h differs from it.
check-header:
	$(CARGO) build --release

$(BUILD)/c-tests/%: c-tests/%.c $(wildcard c-tests/*.h) include/biren_runtime.h include/biren_vector_types.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_STRICT) -o $@ $< $(LDLIBS)

# Ported CUDA samples (samples/README.md): each keeps its own result check and exits non-zero
# when it fails; sizes are cut for `make test` (BIREN_SAMPLES_FULL=1 restores the originals). Run
# from the repository root: a port that reads data finds it in samples/data/.
$(BUILD)/samples/%: samples/%.c samples/biren_helpers.h include/biren_runtime.h include/biren_vector_types.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_STRICT) -o $@ $< $(LDLIBS)

test-samples: lib $(SAMPLES)
	@set -e; for s in $(SAMPLES); do echo "== $$s"; \
	  if ! BIREN_DEVICE_COUNT=2 timeout 120 $$s > $$s.log 2>&1; then cat $$s.log; echo "sample $$s FAILED"; exit 1; fi; \
	  tail -n 1 $$s.log; done; echo "samples: all passed their own checks"

$(BUILD)/examples/%: examples-c/%.c include/biren_runtime.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_STRICT) -o $@ $< $(LDLIBS)

test: test-rust test-c test-cuda test-examples test-samples test-prof test-python test-wheel test-install docs

# The runtime's tests, and the Rust binding's (bindings/rust: unit tests, tests, doctests), which
# load the built .so through BIREN_LIBRARY: build it first.
test-rust: lib
	BIREN_LIBRARY=$(CURDIR)/$(LIBDIR)/libbiren_runtime.so $(CARGO) test --release --workspace --exclude biren-prof
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --release -q -p biren --no-deps

test-c: lib cc $(C_TESTS)
	@set -e; for t in $(C_TESTS); do echo "== $$t"; BIREN_ABORT_ON_INTERNAL_ERROR=1 timeout 300 $$t; done
	@set -e; for s in $(wildcard c-tests/*.sh); do echo "== $$s"; BIREN_ABORT_ON_INTERNAL_ERROR=1 timeout 300 bash $$s; done

# CUDA's runtime API over BIREN (include/cuda, SPEC §12): C++ host programs against the CUDA
# headers and NVIDIA's unchanged helper headers (third_party/cuda-samples/Common), then the
# headers' own checks (generated header fresh, C99, unsupported calls, C++17).
CUDA_INC   := -Iinclude/cuda -Iinclude -Ithird_party/cuda-samples/Common
CUDA_TESTS := $(patsubst c-tests/cuda/%.cpp,$(BUILD)/c-tests/cuda/%,$(wildcard c-tests/cuda/*.cpp))

$(BUILD)/c-tests/cuda/%: c-tests/cuda/%.cpp c-tests/cuda/cuda_host.h c-tests/harness.h $(wildcard include/cuda/*.h) include/biren_runtime.h include/biren_vector_types.h lib
	@mkdir -p $(dir $@)
	$(CXX) -std=c++11 -Wall -Wextra -Wpedantic -Werror -O2 -g $(CUDA_INC) -pthread -o $@ $< $(LDLIBS)

test-cuda: lib cc $(CUDA_TESTS)
	@set -e; for t in $(CUDA_TESTS); do echo "== $$t"; BIREN_ABORT_ON_INTERNAL_ERROR=1 timeout 300 $$t; done
	@set -e; for s in $(wildcard c-tests/cuda/*.sh); do echo "== $$s"; CC="$(CC)" CXX="$(CXX)" timeout 300 bash $$s; done

# Every vendored cuda-samples program (test-cuda builds and runs those marked quick).
test-cu-samples: lib cc
	CU_SAMPLES=all bash c-tests/cuda/test_cu_samples.sh

# ---- Python ----------------------------------------------------------------------------------
# The tests' Python tools (python/requirements-dev.txt: pytest, numpy, the wheel's build backend)
# live in a virtual environment of the project's own, build/venv, installed once and again only
# when the requirements change (the stamp's name is their checksum). PYTHON picks the interpreter.
PYTHON       ?= python3
VENV         := $(BUILD)/venv
VENV_PY      := $(VENV)/bin/python
PY_REQS      := python/requirements-dev.txt
VENV_STAMP   := $(VENV)/.requirements-$(firstword $(shell cksum < $(PY_REQS)))
WHEEL_DIR    := $(BUILD)/wheel
WHEEL_VENV   := $(BUILD)/wheel-venv
# The wheel's cargo build has its own target directory (its flags differ from `make lib`'s):
# incremental from one `make test` to the next.
WHEEL_TARGET := $(BUILD)/wheel-target

$(VENV_STAMP):
	@PYTHON="$(PYTHON)" bash tools/python-venv.sh tools $(VENV) $(PY_REQS) $@

venv: $(VENV_STAMP)

# Python binding tests (python/tests), run against the freshly built library.
test-python: lib $(VENV_STAMP)
	BIREN_LIBRARY=$(CURDIR)/$(LIBDIR)/libbiren_runtime.so $(VENV_PY) -m pytest -q python/tests

# The package as users get it: a wheel built by setuptools-rust (the library compiled into it),
# installed into a fresh venv with nothing else, then imported from a temporary directory with
# no BIREN_LIBRARY by python/tests/installed_wheel.py (copies, a C and a Python kernel).
test-wheel: system-tools $(VENV_STAMP)
	@rm -rf $(WHEEL_DIR) python/build
	CARGO_TARGET_DIR=$(CURDIR)/$(WHEEL_TARGET) $(VENV_PY) -m pip wheel --quiet --no-deps \
	  --no-build-isolation --wheel-dir $(WHEEL_DIR) ./python
	@rm -rf python/build python/biren.egg-info
	@PYTHON="$(CURDIR)/$(VENV_PY)" bash tools/python-venv.sh create $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install --quiet --no-index --no-deps $(WHEEL_DIR)/biren-*.whl
	@cd "$$(mktemp -d)" && trap 'rm -rf "$$PWD"' EXIT && \
	  env -u BIREN_LIBRARY -u PYTHONPATH CC="$(CC)" \
	  $(CURDIR)/$(WHEEL_VENV)/bin/python $(CURDIR)/python/tests/installed_wheel.py \
	  $(CURDIR)/$(WHEEL_VENV)

# Installs into a temporary prefix and builds C programs against the installed copy.
test-install: lib
	@if [ -f tests/install_test.sh ]; then bash tests/install_test.sh; fi

# biren-prof: unit tests of the summary on a hand-written trace, then runs on the examples and on
# a program whose work is known (tools/biren-prof/tests/examples.rs).
PROF_KNOWN := $(BUILD)/prof-tests/known_work
$(PROF_KNOWN): tools/biren-prof/tests/progs/known_work.c include/biren_runtime.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_STRICT) -o $@ $< $(LDLIBS)

test-prof: lib prof $(EXAMPLES) $(PROF_KNOWN)
	BIREN_PROF_EXAMPLES=$(CURDIR)/$(BUILD)/examples BIREN_PROF_KNOWN_WORK=$(CURDIR)/$(PROF_KNOWN) \
	  $(CARGO) test --release -p biren-prof

test-examples: lib $(EXAMPLES)
	@set -e; for e in $(EXAMPLES); do echo "== $$e"; BIREN_DEMO_QUIET=1 timeout 120 $$e > /dev/null; done; echo "examples: all exited 0"

# ---- API reference ---------------------------------------------------------------------------
# make docs: the header's doc comments as HTML (build/docs/html/index.html), by Doxygen with
# docs/Doxyfile: an undocumented export or a malformed doc comment is a warning and fails the
# target. Then every symbol the library exports must have its entry in the header's page.
# Installs doxygen with apt-get when it is missing and this runs as root (about 5 s).
DOXYGEN ?= doxygen
docs: lib
	@command -v $(DOXYGEN) > /dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get > /dev/null; then \
	    echo "make docs: installing doxygen (apt-get install -y doxygen)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends doxygen > /dev/null; \
	  else \
	    echo "make docs: doxygen is required (apt-get install doxygen); not root, so not installing it" >&2; exit 1; \
	  fi; }
	@rm -rf $(BUILD)/docs && mkdir -p $(BUILD)/docs
	BIREN_VERSION=$(VERSION) $(DOXYGEN) docs/Doxyfile
	@page=$(BUILD)/docs/html/biren__runtime_8h.html; missing=""; \
	for f in $$(nm -D --defined-only $(LIBDIR)/libbiren_runtime.so | awk '{print $$NF}'); do \
	  grep -q ">$$f<" $$page || missing="$$missing $$f"; \
	done; \
	if [ -n "$$missing" ]; then echo "make docs: exported but not in $$page:$$missing" >&2; exit 1; fi; \
	echo "docs: $(BUILD)/docs/html/index.html (no warnings; every export documented)"

demo: lib $(EXAMPLES)
	@set -e; for e in $(EXAMPLES); do echo; echo "================ $$e"; timeout 120 $$e; done

BENCH := $(patsubst bench/%.c,$(BUILD)/bench/%,$(filter-out bench/barriers.c,$(wildcard bench/*.c)))
$(BUILD)/bench/%: bench/%.c include/biren_runtime.h lib
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O3 -march=native -g -Iinclude -pthread -o $@ $< $(LDLIBS)

# The barrier kernels (bench/barriers.c), one source built twice with the same flags: by KCC
# against the header (the fiber form) and by BIREN_CC (the region form) when that compiler is
# there (a path or a command name). bench/barriers.sh puts the two side by side.
KCC            ?= $(CC)
BIREN_CC       ?= $(LIBDIR)/biren-cc
BIREN_CC_FLAGS ?= --kernel-report
KFLAGS         ?= -O2 -march=native
BARRIERS_DEPS  := bench/barriers.c bench/barrier_ref.h include/biren_runtime.h
$(BUILD)/bench/barriers: $(BARRIERS_DEPS) lib
	@mkdir -p $(dir $@)
	$(KCC) -std=gnu11 $(KFLAGS) -g -Iinclude -pthread -o $@ $< $(LDLIBS)
$(BUILD)/bench/barriers-region: $(BARRIERS_DEPS) lib
	@mkdir -p $(dir $@)
	$(BIREN_CC) $(BIREN_CC_FLAGS) -std=gnu11 $(KFLAGS) -g -pthread -o $@ $< -lm

# Builds the region form when BIREN_CC is there and runs bench/barriers.sh ($(1): its options).
define run_barriers
	@if command -v "$(BIREN_CC)" > /dev/null; then \
	  $(MAKE) --no-print-directory $(BUILD)/bench/barriers-region && region=$(BUILD)/bench/barriers-region; \
	else region=; fi; \
	REGION="$$region" bash bench/barriers.sh $(1)
endef

bench: lib $(BENCH) $(BUILD)/bench/barriers
	@set -e; for b in $(BENCH); do $$b; done
	$(call run_barriers,)

# The barrier kernels beside PoCL's (bench/peer/pocl_host.c, bench/peer/pocl_kernels.cl; both
# work-group methods). Installs PoCL with apt-get when missing and run as root (tools/pocl.sh).
pocl:
	@CC="$(CC)" bash tools/pocl.sh

$(BUILD)/bench/pocl_host: bench/peer/pocl_host.c bench/barrier_ref.h | pocl
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(KFLAGS) -g -DPOCL_KERNELS_CL='"$(CURDIR)/bench/peer/pocl_kernels.cl"' -pthread -o $@ $< -lOpenCL

bench-pocl: lib pocl $(BUILD)/bench/barriers $(BUILD)/bench/pocl_host
	$(call run_barriers,--pocl)

# The kernel figures beside HIP-CPU's (see BENCHMARKS.md: HIP_CPU_DIR is a checkout of
# https://github.com/ROCm/HIP-CPU; it needs TBB, e.g. apt-get install libtbb-dev).
HIP_CPU_DIR ?=
build/bench/peer_hip: bench/peer/hip_kernels.cpp
	@test -n "$(HIP_CPU_DIR)" || { echo "make bench-peer HIP_CPU_DIR=/path/to/HIP-CPU" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O3 -march=native -fopenmp-simd -I$(HIP_CPU_DIR)/include -o $@ $< -ltbb -pthread

bench-hip: lib build/bench/kernels build/bench/peer_hip
	HIP_CPU_DIR=$(HIP_CPU_DIR) bash bench/peer.sh

# Both peers: HIP-CPU when HIP_CPU_DIR is given, then PoCL.
bench-peer:
	@if [ -n "$(HIP_CPU_DIR)" ]; then $(MAKE) --no-print-directory bench-hip; \
	else echo "bench-peer: HIP-CPU skipped (make bench-peer HIP_CPU_DIR=/path/to/HIP-CPU runs it too)"; fi
	@$(MAKE) --no-print-directory bench-pocl

# ---- install ---------------------------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=/staging] [libdir=...] [includedir=...]
# Installs libbiren_runtime.so.$(VERSION) with its soname link ($(SONAME)) and dev link
# (libbiren_runtime.so), libbiren_runtime.a, biren_runtime.h, biren_runtime.pc, the CMake
# package ($(cmakedir): find_package(biren_runtime) gives biren::runtime, biren::runtime_static)
# and $(bindir)/biren-prof.
# Run ldconfig afterwards when installing into a system prefix.
VERSION      := $(shell sed -n 's/^version = "\([^"]*\)"/\1/p' Cargo.toml | head -n 1)
SONAME       := libbiren_runtime.so.$(firstword $(subst ., ,$(VERSION)))
libdir       ?= $(PREFIX)/lib
bindir       ?= $(PREFIX)/bin
includedir   ?= $(PREFIX)/include
pkgconfigdir ?= $(libdir)/pkgconfig
cmakedir     ?= $(libdir)/cmake/biren_runtime
# What the Rust staticlib needs from the system (`cargo rustc --release --lib --crate-type
# staticlib -- --print native-static-libs` prints -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc).
# -lc is implicit, and the compiler driver supplies the unwinder itself (libgcc_s as needed in a
# dynamic link, libgcc_eh with -static, where an explicit -lgcc_s would fail), so both are left out.
STATIC_LIBS  := -lutil -lrt -lpthread -lm -ldl
pc_rel        = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
# The CMake package finds the libraries and the header relative to its own directory.
cmake_rel     = $(shell realpath -m --relative-to=$(cmakedir) $(1))
CMAKE_SUBST   = -e 's|@VERSION@|$(VERSION)|g' \
                -e 's|@SOMAJOR@|$(firstword $(subst ., ,$(VERSION)))|g' \
                -e 's|@CMAKE_TO_LIBDIR@|$(call cmake_rel,$(libdir))|g' \
                -e 's|@CMAKE_TO_INCLUDEDIR@|$(call cmake_rel,$(includedir))|g' \
                -e 's|@STATIC_LINK_LIBRARIES@|$(subst $(space),;,$(patsubst -l%,%,$(STATIC_LIBS)))|g'
empty :=
space := $(empty) $(empty)

# Install does not run cargo (GNU convention: `make && sudo make install`, root needs no
# toolchain and writes nothing into target/); it builds only what is missing.
$(LIBDIR)/libbiren_runtime.so $(LIBDIR)/libbiren_runtime.a:
	$(CARGO) build --release
$(LIBDIR)/biren-prof:
	$(CARGO) build --release -p biren-prof
$(LIBDIR)/biren-cc:
	$(CARGO) build --release -p biren-cc

install: $(LIBDIR)/libbiren_runtime.so $(LIBDIR)/libbiren_runtime.a $(LIBDIR)/biren-prof $(LIBDIR)/biren-cc
	install -d $(DESTDIR)$(libdir) $(DESTDIR)$(includedir) $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(cmakedir) $(DESTDIR)$(bindir)
	install -m 755 $(LIBDIR)/biren-prof $(DESTDIR)$(bindir)/biren-prof
	install -m 755 $(LIBDIR)/biren-cc $(DESTDIR)$(bindir)/biren-cc
	install -m 755 $(LIBDIR)/libbiren_runtime.so $(DESTDIR)$(libdir)/libbiren_runtime.so.$(VERSION)
	ln -sf libbiren_runtime.so.$(VERSION) $(DESTDIR)$(libdir)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/libbiren_runtime.so
	install -m 644 $(LIBDIR)/libbiren_runtime.a $(DESTDIR)$(libdir)/libbiren_runtime.a
	install -m 644 include/biren_runtime.h $(DESTDIR)$(includedir)/biren_runtime.h
	install -m 644 include/biren_vector_types.h $(DESTDIR)$(includedir)/biren_vector_types.h
	install -d $(DESTDIR)$(includedir)/cuda/cooperative_groups
	install -m 644 include/cuda/*.h $(DESTDIR)$(includedir)/cuda/
	install -m 644 include/cuda/cooperative_groups/*.h $(DESTDIR)$(includedir)/cuda/cooperative_groups/
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
	sed $(CMAKE_SUBST) cmake/biren_runtimeConfig.cmake.in > $(DESTDIR)$(cmakedir)/biren_runtimeConfig.cmake
	sed $(CMAKE_SUBST) cmake/biren_runtimeConfigVersion.cmake.in > $(DESTDIR)$(cmakedir)/biren_runtimeConfigVersion.cmake
	chmod 644 $(DESTDIR)$(cmakedir)/biren_runtimeConfig.cmake $(DESTDIR)$(cmakedir)/biren_runtimeConfigVersion.cmake

uninstall:
	rm -f $(DESTDIR)$(libdir)/libbiren_runtime.so.$(VERSION) $(DESTDIR)$(libdir)/$(SONAME) \
	      $(DESTDIR)$(libdir)/libbiren_runtime.so $(DESTDIR)$(libdir)/libbiren_runtime.a \
	      $(DESTDIR)$(includedir)/biren_runtime.h $(DESTDIR)$(includedir)/biren_vector_types.h \
	      $(DESTDIR)$(pkgconfigdir)/biren_runtime.pc \
	      $(DESTDIR)$(cmakedir)/biren_runtimeConfig.cmake $(DESTDIR)$(cmakedir)/biren_runtimeConfigVersion.cmake \
	      $(DESTDIR)$(bindir)/biren-prof $(DESTDIR)$(bindir)/biren-cc
	rm -f $(patsubst include/%,$(DESTDIR)$(includedir)/%,$(wildcard include/cuda/*.h include/cuda/cooperative_groups/*.h))
	-rmdir $(DESTDIR)$(includedir)/cuda/cooperative_groups $(DESTDIR)$(includedir)/cuda 2>/dev/null
	-rmdir $(DESTDIR)$(cmakedir) 2>/dev/null

clean:
	$(CARGO) clean
	rm -rf $(BUILD)

# ---- stress and valgrind ---------------------------------------------------------------------
# make stress [STRESS_SECONDS=60] [STRESS_RESET_SECONDS=30]: stress/stress.c with 8 host threads
# and 2 handle churners, then the variant where a thread resets the device at random moments.
# Fails on a lost update, a wrong value, an unexpected code, a crash or a hang (30 s watchdog),
# or a "biren: internal:" line (a lost wake-up that the runtime's safety net rescued).
# A short run is part of `make test` (c-tests/test_stress.sh). Races: bash stress/tsan.sh.
STRESS_SECONDS       ?= 60
STRESS_RESET_SECONDS ?= 30

stress: lib
	@mkdir -p $(BUILD)/stress
	$(CC) $(CFLAGS_STRICT) -o $(BUILD)/stress/stress stress/stress.c $(LDLIBS)
	@rc=0; log=$(BUILD)/stress/last.log; \
	timeout $$(($(STRESS_SECONDS) + 120)) $(BUILD)/stress/stress --seconds $(STRESS_SECONDS) > $$log 2>&1 || rc=1; \
	cat $$log; ! grep -q '^biren: internal:' $$log || rc=1; \
	timeout $$(($(STRESS_RESET_SECONDS) + 120)) $(BUILD)/stress/stress --seconds $(STRESS_RESET_SECONDS) --reset > $$log 2>&1 || rc=1; \
	cat $$log; ! grep -q '^biren: internal:' $$log || rc=1; \
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
# target relax their time bounds when BIREN_UNDER_VALGRIND=1, and the cases whose point is an
# access memcheck reports as an error (a kernel writing to an illegal address, a copy reading a
# buffer the program freed, a forked child abandoning the parent's runtime) are skipped then,
# each with a "skipped under valgrind:" line (SKIP_UNDER_VALGRIND, c-tests/harness.h).
# corosensei registers its fiber stacks with valgrind, so no --max-stackframe is needed.
# BIREN_DEVICE_MEMORY=256M: each device's arena is a memfd mapping of twice its capacity plus
# 256 MB, and memcheck's leak check reads every readable mapping at exit. With the default 8 GB
# that is 16.25 GB of tmpfs pages per device faulted in at every test's exit: the kernel's OOM
# killer ended the tests with 2 or 3 devices (exit 137), and the others too whenever anything
# else needed memory; each test that survived spent over a minute in it. The tests that set
# their own BIREN_DEVICE_MEMORY keep it; the stress run (1G by default) takes this one.
# --fair-sched=yes: valgrind runs one thread at a time, and by default a thread that spins (a
# kernel busy-waiting) takes the lock straight back, so a host thread woken by that kernel's
# stream may not run again until the spin ends (test_graph_events' record-node tests failed so
# on every run, with a 400 ms or a 2 s spin). Fair scheduling hands the lock round in turn;
# with it the VG_TIMING tests passed too, but they stay listed there.
VALGRIND    ?= valgrind
VG_ENV      := BIREN_COMPUTE_UNITS=2 BIREN_UNDER_VALGRIND=1 BIREN_DEVICE_MEMORY=256M
VG_MEMCHECK := $(VALGRIND) -q --tool=memcheck --fair-sched=yes --error-exitcode=99 --leak-check=full \
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
# -fsanitize=address,undefined, run for every seed with 1 and with 2 devices, plus runs per
# seed with --racy-resets (resets racing with every call, host functions and stream callbacks
# calling the runtime among them; 4 threads; 1 and 2 devices): FUZZ_SECONDS is the
# total, shared evenly by the runs (at least 10 s each). Fails on any failed check, crash or
# hang (30 s watchdog, which prints every thread's stack), or a "biren: internal:" line (a lost
# wake-up that the runtime's safety net rescued). FUZZ_SKIP defaults to the checks
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
	@runs=$$(( $(words $(FUZZ_SEEDS)) * 6 )); per=$$(( $(FUZZ_SECONDS) / runs )); [ $$per -ge 10 ] || per=10; \
	failed=""; \
	for seed in $(FUZZ_SEEDS); do for devs in 1 2; do for bin in fuzz fuzz-asan; do \
	  echo "== $$bin, $$devs device(s), seed $$seed, $$per s (skip: $(FUZZ_SKIP))"; \
	  BIREN_DEVICE_COUNT=$$devs timeout $$((per + 300)) $(BUILD)/fuzz/$$bin --seed $$seed --seconds $$per \
	    --threads $(FUZZ_THREADS) --skip $(FUZZ_SKIP) --quiet > $(BUILD)/fuzz/last.log 2>&1; \
	  rc=$$?; cat $(BUILD)/fuzz/last.log; [ $$rc -eq 0 ] && ! grep -q '^biren: internal:' $(BUILD)/fuzz/last.log \
	    || failed="$$failed $$bin/$$devs-dev/seed-$$seed"; \
	done; done; \
	  for devs in 1 2; do \
	  echo "== fuzz --racy-resets, $$devs device(s), seed $$seed, $$per s"; \
	  BIREN_DEVICE_COUNT=$$devs timeout $$((per + 300)) $(BUILD)/fuzz/fuzz --seed $$seed --seconds $$per \
	    --threads 4 --racy-resets --skip $(FUZZ_SKIP) --quiet > $(BUILD)/fuzz/last.log 2>&1; \
	  rc=$$?; cat $(BUILD)/fuzz/last.log; [ $$rc -eq 0 ] && ! grep -q '^biren: internal:' $(BUILD)/fuzz/last.log \
	    || failed="$$failed racy/$$devs-dev/seed-$$seed"; \
	done; done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed"; exit 1; fi; echo "fuzz: all runs passed"
