#!/bin/bash
# CUDA sources through biren-cc (SPEC §12): the language and device library test
# (c-tests/cuda/lang/features.cu, two files, nvcc's options), a .cu including a .cu built with
# -c then linked, NVCC=biren-cc in a Makefile, and each error the driver gives, with its place.
set -eu
cd "$(dirname "$0")/../.."
BCC=$PWD/target/release/biren-cc
L=c-tests/cuda/lang
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The one-file programs below are built first, two at a time (the machine's two cores); each
# section then runs and checks its own.
pids=()
build() { ( "$@" ) & pids+=($!); if [ ${#pids[@]} -ge 2 ]; then wait_builds; fi; }
wait_builds() { for p in "${pids[@]}"; do wait "$p" || fail "a build failed (see above)"; done; pids=(); }
build "$BCC" -O2 --kernel-report $L/cuda_arch.cu -o "$T/arch" 2> "$T/arch.report"
build "$BCC" -O2 --kernel-report $L/tid_callee.cu -o "$T/tid_callee" 2> "$T/tc.report"
build "$BCC" -O2 --kernel-report $L/template_barrier.cu -o "$T/template_barrier" 2> "$T/tb.report"
build "$BCC" -O2 --fibers $L/template_barrier.cu -o "$T/template_fibers"
build "$BCC" -O2 --fibers $L/helper_barrier.cu -o "$T/helper_fibers"
build "$BCC" -O2 --kernel-report $L/param_change.cu -o "$T/param_change" 2> "$T/pc.report"
build "$BCC" -O2 --fibers $L/param_change.cu -o "$T/param_fibers"
build "$BCC" -O2 --kernel-report $L/helper_barrier.cu -o "$T/helper_barrier" 2> "$T/hb.report"
build "$BCC" -O2 --kernel-report $L/cg_block.cu -o "$T/cg_block" 2> "$T/cg.report"
build "$BCC" -O2 $L/fp16.cu -o "$T/fp16"
wait_builds

# Two files, an extern "C" kernel declared in one and defined in the other, nvcc's options.
"$BCC" -O2 -arch=sm_60 -gencode arch=compute_60,code=sm_60 -lineinfo --use_fast_math -rdc=true \
  -Xcompiler -Wall,-Wno-unused-function --std c++17 $L/features.cu $L/kernels_b.cu -o "$T/features"
"$T/features" > "$T/features.log" 2>&1 || { cat "$T/features.log"; fail "features"; }
grep -q "features: all passed" "$T/features.log" || fail "features: no success line"
# CUDA's assert message, with the kernel's own name and the failing thread.
grep -q "features.cu:[0-9]*: void asserting(int): block: \[0,0,0\], thread: \[4,0,0\] Assertion \`threadIdx.x < (unsigned)n\` failed." \
  "$T/features.log" || { cat "$T/features.log"; fail "assert message"; }
echo "ok   features.cu (+ kernels_b.cu)"

# __CUDA_ARCH__ in device code (a program header's too), not in host code.
"$T/arch" | grep -q "cuda_arch: passed" || fail "cuda_arch"
grep -q "kernel arch_kernel: loops" "$T/arch.report" || { cat "$T/arch.report"; fail "cuda_arch: report"; }
echo "ok   __CUDA_ARCH__"

# Device functions that read threadIdx, called by a kernel with barriers: region form, correct.
"$T/tid_callee" | grep -q "tid_callee: passed" || fail "tid_callee"
grep -q "kernel reverse_in_block: loops" "$T/tc.report" || { cat "$T/tc.report"; fail "tid_callee: not in region form"; }
echo "ok   device functions reading threadIdx, in region form"

# Kernel templates with barriers in region form, one region entry per instantiation.
"$T/template_barrier" | grep -q "template_barrier: passed" || fail "template_barrier"
grep -q "kernel tiled_mul: loops" "$T/tb.report" || { cat "$T/tb.report"; fail "template_barrier: tiled_mul not in region form"; }
grep -q "kernel block_sum: loops" "$T/tb.report" || { cat "$T/tb.report"; fail "template_barrier: block_sum not in region form"; }
grep -q "kernel calls_template_helper: fibers (barrier in a function the kernel template calls" "$T/tb.report" || { cat "$T/tb.report"; fail "template_barrier: calls_template_helper"; }
[ "$(nm -C "$T/template_barrier" | grep -c ' t .*_biren_region_<')" = 5 ] || fail "template_barrier: not one region entry per instantiation"
# The same program with every kernel in fiber form (--fibers): the same results, no region entry.
"$T/template_fibers" | grep -q "template_barrier: passed" || fail "template_barrier --fibers"
[ "$(nm -C "$T/template_fibers" | grep -c ' t .*_biren_region_<')" = 0 ] || fail "--fibers: a region entry"
"$T/helper_fibers" | grep -q "helper_barrier: passed" || fail "helper_barrier --fibers"
echo "ok   kernel templates with barriers, in region form per instantiation (and --fibers)"

# A changed parameter, a local header, a division after a return: region form, CUDA's results.
"$T/param_change" | grep -q "param_change: passed" || { "$T/param_change"; fail "param_change"; }
[ "$(grep -c ': loops (' "$T/pc.report")" = 2 ] || { cat "$T/pc.report"; fail "param_change: not in region form"; }
"$T/param_fibers" | grep -q "param_change: passed" || fail "param_change --fibers"
echo "ok   changed parameters, local headers, a skipped division, in region form"

# Device functions with barriers, inlined into the kernel (region form).
"$T/helper_barrier" | grep -q "helper_barrier: passed" || { "$T/helper_barrier"; fail "helper_barrier"; }
grep -q "kernel helpers: loops" "$T/hb.report" || { cat "$T/hb.report"; fail "helper_barrier: not in region form"; }
echo "ok   device functions with barriers, inlined, in region form"

# cooperative_groups' block barrier (cta.sync(), cg::sync(cta)) in region form; a tile keeps fibers.
"$T/cg_block" | grep -q "cg_block: passed" || fail "cg_block"
grep -q "kernel block_sum: loops" "$T/cg.report" || { cat "$T/cg.report"; fail "cg_block: block_sum not in region form"; }
grep -q "kernel tile_sum: fibers" "$T/cg.report" || { cat "$T/cg.report"; fail "cg_block: tile_sum"; }
echo "ok   cooperative groups' block barrier, in region form"

# cuda_fp16.h: conversions, arithmetic and half2 in a kernel, against the compiler's _Float16.
"$T/fp16" | grep -q "fp16: all passed" || { "$T/fp16" | tail -5; fail "fp16"; }
echo "ok   cuda_fp16.h"

# A .cu and a .c in one command: the .c file is compiled as C.
"$BCC" -O2 $L/mixed_main.cu $L/c_helper.c -o "$T/mixed"
"$T/mixed" | grep -q "mixed: passed" || fail "a .cu and a .c in one command"
echo "ok   a .cu and a .c in one command"

# -c, then the link; a .cu that includes a .cu.
"$BCC" -O2 -c $L/includes_cu.cu -o "$T/inc.o"
"$BCC" "$T/inc.o" -o "$T/inc"
"$T/inc" | grep -q "includes_cu: passed" || fail "includes_cu"
echo "ok   -c then link, a .cu including a .cu"

# A Makefile written for nvcc, with NVCC=biren-cc.
cat > "$T/Makefile" <<MK
NVCC ?= nvcc
app: features.o kernels_b.o
	\$(NVCC) -o \$@ \$^
%.o: $PWD/$L/%.cu
	\$(NVCC) -arch=sm_60 -O2 -c -o \$@ \$<
MK
make -s -C "$T" NVCC="$BCC" app > /dev/null
"$T/app" 2> /dev/null | grep -q "features: all passed" || fail "Makefile with NVCC=biren-cc"
echo "ok   make NVCC=biren-cc"

# -v says what it ignores.
"$BCC" -v -arch=sm_60 -lineinfo -c $L/kernels_b.cu -o "$T/kb.o" 2>&1 | grep -q "ignored (nvcc's, about accelerator code): -arch=sm_60" \
  || fail "-v does not name the ignored option"
echo "ok   -v names ignored options"

# Errors, each naming the file and line.
expect_error() { # file, text the error must contain
  if "$BCC" -c "$L/$1" -o "$T/x.o" > "$T/err" 2>&1; then fail "$1 compiled"; fi
  grep -qF -- "$2" "$T/err" || { cat "$T/err"; fail "$1: no '$2'"; }
  echo "ok   error: $1"
}
expect_error launch_in_macro.cu "launch_in_macro.cu:7: error: a kernel launch (<<<...>>>) produced by a macro"
expect_error extern_shared_file_scope.cu "extern_shared_file_scope.cu:3: error: extern __shared__ at file scope"
expect_error unsupported_call.cu "cudaStreamSetAttribute: not supported by BIREN"
echo "CUDA language through biren-cc: all passed"
