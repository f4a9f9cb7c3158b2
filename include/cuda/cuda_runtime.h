/*
 * cuda_runtime.h -- CUDA's runtime header for programs built with `biren-cc app.cu` (SPEC §12):
 * the CUDA language (qualifiers, built-in variables, launches) and device library over BIREN.
 * biren-cc includes it first in every .cu source, as nvcc does; it may be included again.
 *
 * Two readers see this file: biren-cc's front end (libclang in CUDA mode, BIREN_CUDA_PARSE_:
 * the qualifiers are clang's CUDA attributes so that it can tell kernels, device functions and
 * launches apart) and the system C++ compiler, which compiles what biren-cc made of the source
 * (the qualifiers are then empty or BIREN's: a kernel has become a host stub with its
 * parameters plus BIREN_KERNEL's entries, a launch a call of the stub).
 * Part of the BIREN Runtime API (installed in include/biren/cuda or include/cuda).
 */
#ifndef BIREN_CUDA_RUNTIME_H_
#define BIREN_CUDA_RUNTIME_H_
/* What programs (helper_cuda.h) test to know cuda_runtime.h is in. */
#define __CUDA_RUNTIME_H__

#ifndef BIREN_CUDA
#define BIREN_CUDA 1
#endif
#if defined(__clang__) && defined(__CUDA__)
#define BIREN_CUDA_PARSE_ 1
#endif

/* ---- Qualifiers ---------------------------------------------------------------------------- */
#if defined(BIREN_CUDA_PARSE_)
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
/* Shared arrays are per block here, in device functions too (clang's CUDA mode refuses them in
 * the host-and-device functions the pragma below makes of every function): an annotation that
 * biren-cc reads. */
#define __shared__ __attribute__((annotate("biren_shared")))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#else
/* After biren-cc: kernels are host stubs, device functions plain functions (all code runs on
 * the host's processor), static shared arrays are per block (BIREN_SHARED: thread-local, one OS
 * thread runs a block), __constant__ and __device__ variables plain globals that biren-cc
 * registers as symbols. A plain C++ compiler reading a .cu file without biren-cc fails at its
 * first launch (<<<...>>>): build .cu files with biren-cc. */
#define __global__
#define __device__
#define __host__
#define __shared__ BIREN_SHARED
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#endif
#ifndef __forceinline__
#define __forceinline__ __inline__ __attribute__((always_inline))
#endif
#ifndef __noinline__
#define __noinline__ __attribute__((noinline))
#endif
#ifndef __align__
#define __align__(n) __attribute__((aligned(n)))
#endif
#ifndef __device_builtin__
#define __device_builtin__
#endif
#ifndef __CUDA_ARCH_LIST__
#define __CUDA_ARCH_LIST__ 600
#endif

#if defined(BIREN_CUDA_PARSE_)
#ifdef __cplusplus
/* What the compiler declares itself, host only (operator new, std::terminate): the headers that
 * declare them again come first, as they are. */
#include <new>
#include <exception>
#endif
/* Every function the unit declares without a qualifier may be called from kernels and from host
 * code (all of it runs on the host's processor): the C and C++ libraries, these headers, the
 * program's own. Not ended: it holds for the whole unit. */
#pragma clang force_cuda_host_device begin
#endif

#include "cuda_runtime_api.h"

#ifdef __cplusplus
#include "biren_cuda_runtime_cxx.h"
#include "biren_cuda_device.h"
#endif

#endif /* BIREN_CUDA_RUNTIME_H_ */
