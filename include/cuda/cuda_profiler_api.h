/*
 * cuda_profiler_api.h -- cudaProfilerStart / cudaProfilerStop: BIREN's birenProfilerStart /
 * birenProfilerStop, which resume and pause the BIREN_TRACE recording (declared in
 * cuda_runtime_api.h, which this includes).
 * Part of the BIREN Runtime's CUDA headers (include/cuda).
 */
#ifndef BIREN_CUDA_PROFILER_API_H
#define BIREN_CUDA_PROFILER_API_H
#ifndef __CUDA_PROFILER_API_H__
#define __CUDA_PROFILER_API_H__
#endif
#include "cuda_runtime_api.h"
#endif /* BIREN_CUDA_PROFILER_API_H */
