/*
 * device_launch_parameters.h -- in CUDA, declares threadIdx, blockIdx, blockDim, gridDim and
 * warpSize. In BIREN cuda_runtime.h (the compiler part) gives them, so this only includes the
 * vector types they are made of.
 * Part of the BIREN Runtime's CUDA headers (include/cuda).
 */
#ifndef BIREN_CUDA_DEVICE_LAUNCH_PARAMETERS_H
#define BIREN_CUDA_DEVICE_LAUNCH_PARAMETERS_H
#include "vector_types.h"
#endif /* BIREN_CUDA_DEVICE_LAUNCH_PARAMETERS_H */
