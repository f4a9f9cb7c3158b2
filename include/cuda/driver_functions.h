/*
 * driver_functions.h -- CUDA's make_cudaPitchedPtr, make_cudaPos, make_cudaExtent (declared in
 * cuda_runtime_api.h, which this includes).
 * Part of the BIREN Runtime's CUDA headers (include/cuda).
 */
#ifndef BIREN_CUDA_DRIVER_FUNCTIONS_H
#define BIREN_CUDA_DRIVER_FUNCTIONS_H
#include "cuda_runtime_api.h"
#endif /* BIREN_CUDA_DRIVER_FUNCTIONS_H */
