/* What a CUDA host file includes: cuda_runtime.h. Until the compiler part of BIREN's CUDA headers
 * (include/cuda/cuda_runtime.h) is there, its runtime part: cuda_runtime_api.h, the C++
 * overloads, and the macro helper_cuda.h tests for cuda_runtime.h (its device-selection helpers). */
#ifndef BIREN_TEST_CUDA_HOST_H
#define BIREN_TEST_CUDA_HOST_H
#if defined(__has_include)
#if __has_include(<cuda_runtime.h>)
#include <cuda_runtime.h>
#define BIREN_TEST_HAVE_CUDA_RUNTIME_H 1
#endif
#endif
#ifndef BIREN_TEST_HAVE_CUDA_RUNTIME_H
#include <cuda_runtime_api.h>
#include <biren_cuda_runtime_cxx.h>
#ifndef __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_H__
#endif
#endif
#endif
