/*
 * host_defines.h -- CUDA's function and variable qualifiers as host code sees them. The
 * compiler part of BIREN (biren-cc, cuda_runtime.h) gives __global__, __device__, __shared__
 * and the others their meaning in .cu files; this defines only the host-side markers that expand
 * to nothing, when nothing defined them before.
 * Part of the BIREN Runtime's CUDA headers (include/cuda).
 */
#ifndef BIREN_CUDA_HOST_DEFINES_H
#define BIREN_CUDA_HOST_DEFINES_H
#ifndef __host__
#define __host__
#endif
#ifndef __cudart_builtin__
#define __cudart_builtin__
#endif
#ifndef CUDARTAPI
#define CUDARTAPI
#endif
#endif /* BIREN_CUDA_HOST_DEFINES_H */
