/*
 * builtin_types.h -- CUDA's built-in types: the runtime's (driver_types.h) and the vector types.
 * Part of the BIREN Runtime's CUDA headers (include/cuda).
 */
#ifndef BIREN_CUDA_BUILTIN_TYPES_H
#define BIREN_CUDA_BUILTIN_TYPES_H
#include "driver_types.h"
#include "vector_types.h"
#endif /* BIREN_CUDA_BUILTIN_TYPES_H */
