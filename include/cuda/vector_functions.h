/*
 * vector_functions.h -- CUDA's make_<type>N constructors: in BIREN they come with the types.
 * Part of the BIREN Runtime's CUDA headers (include/cuda).
 */
#ifndef BIREN_CUDA_VECTOR_FUNCTIONS_H
#define BIREN_CUDA_VECTOR_FUNCTIONS_H
#include "vector_types.h"
#endif /* BIREN_CUDA_VECTOR_FUNCTIONS_H */
