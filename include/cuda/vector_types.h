/*
 * vector_types.h -- CUDA's vector types (char1..double4, dim3) over BIREN's
 * (biren_vector_types.h, and dim3 from biren_runtime.h), with their make_<type>N constructors.
 * Part of the BIREN Runtime's CUDA headers (include/cuda).
 */
#ifndef BIREN_CUDA_VECTOR_TYPES_H
#define BIREN_CUDA_VECTOR_TYPES_H
#ifndef __VECTOR_TYPES_H__
#define __VECTOR_TYPES_H__
#endif
#ifndef BIREN_CUDA
#define BIREN_CUDA 1 /* CUDA mode of BIREN's header: dim3's constructors in C++ */
#endif
#include "biren_runtime.h"
#include "biren_vector_types.h"
#endif /* BIREN_CUDA_VECTOR_TYPES_H */
