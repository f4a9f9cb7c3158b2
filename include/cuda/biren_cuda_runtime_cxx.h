/*
 * biren_cuda_runtime_cxx.h -- the C++ overloads of CUDA's cuda_runtime.h over BIREN: typed
 * allocations (cudaMalloc<T>(T **, size)), symbols passed as themselves
 * (cudaMemcpyToSymbol(sym, ...)), kernels passed as function pointers of any signature
 * (cudaFuncGetAttributes(&a, kernel), cudaLaunchKernel(kernel, ...), the occupancy calls) and
 * cudaCreateChannelDesc<T>(). Included by cuda_runtime.h; C++ only (nothing in C).
 * Part of the BIREN Runtime's CUDA headers (include/cuda).
 */
#ifndef BIREN_CUDA_RUNTIME_CXX_H
#define BIREN_CUDA_RUNTIME_CXX_H

#include "cuda_runtime_api.h"

#ifdef __cplusplus

/* Typed allocations. */
template <class T> inline cudaError_t cudaMalloc(T **devPtr, size_t size) {
  return ::cudaMalloc((void **)(void *)devPtr, size);
}
template <class T> inline cudaError_t cudaMallocHost(T **ptr, size_t size, unsigned int flags = 0) {
  return flags == 0 ? ::cudaMallocHost((void **)(void *)ptr, size) : ::cudaHostAlloc((void **)(void *)ptr, size, flags);
}
/* CUDA's untyped form with flags (cuda_runtime.h: cudaMallocHost(void **, size_t, unsigned)). */
inline cudaError_t cudaMallocHost(void **ptr, size_t size, unsigned int flags) {
  return ::cudaHostAlloc(ptr, size, flags);
}
template <class T> inline cudaError_t cudaHostAlloc(T **ptr, size_t size, unsigned int flags) {
  return ::cudaHostAlloc((void **)(void *)ptr, size, flags);
}
template <class T> inline cudaError_t cudaHostGetDevicePointer(T **pDevice, void *pHost, unsigned int flags) {
  return ::cudaHostGetDevicePointer((void **)(void *)pDevice, pHost, flags);
}
template <class T>
inline cudaError_t cudaMallocManaged(T **devPtr, size_t size, unsigned int flags = cudaMemAttachGlobal) {
  return ::cudaMallocManaged((void **)(void *)devPtr, size, flags);
}
template <class T> inline cudaError_t cudaMallocPitch(T **devPtr, size_t *pitch, size_t width, size_t height) {
  return ::cudaMallocPitch((void **)(void *)devPtr, pitch, width, height);
}
template <class T> inline cudaError_t cudaMallocAsync(T **devPtr, size_t size, cudaStream_t stream) {
  return ::cudaMallocAsync((void **)(void *)devPtr, size, stream);
}
template <class T>
inline cudaError_t cudaMallocAsync(T **devPtr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
  return ::cudaMallocFromPoolAsync((void **)(void *)devPtr, size, memPool, stream);
}
template <class T>
inline cudaError_t cudaMallocFromPoolAsync(T **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
  return ::cudaMallocFromPoolAsync((void **)(void *)ptr, size, memPool, stream);
}
template <class T>
inline cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, T *devPtr, size_t length = 0,
                                            unsigned int flags = cudaMemAttachSingle) {
  return ::cudaStreamAttachMemAsync(stream, (void *)devPtr, length, flags);
}

/* Events and streams. */
inline cudaError_t cudaEventCreate(cudaEvent_t *event, unsigned int flags) {
  return ::cudaEventCreateWithFlags(event, flags);
}

/* Symbols: the variable itself (a BIREN_DEVICE_SYMBOL or a __device__/__constant__ variable). */
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t count, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return ::cudaMemcpyToSymbol((const void *)&symbol, src, count, offset, kind);
}
template <class T>
inline cudaError_t cudaMemcpyToSymbolAsync(const T &symbol, const void *src, size_t count, size_t offset = 0,
                                           cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t stream = 0) {
  return ::cudaMemcpyToSymbolAsync((const void *)&symbol, src, count, offset, kind, stream);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t count, size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return ::cudaMemcpyFromSymbol(dst, (const void *)&symbol, count, offset, kind);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const T &symbol, size_t count, size_t offset = 0,
                                             cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t stream = 0) {
  return ::cudaMemcpyFromSymbolAsync(dst, (const void *)&symbol, count, offset, kind, stream);
}
template <class T> inline cudaError_t cudaGetSymbolAddress(void **devPtr, const T &symbol) {
  return ::cudaGetSymbolAddress(devPtr, (const void *)&symbol);
}
template <class T> inline cudaError_t cudaGetSymbolSize(size_t *size, const T &symbol) {
  return ::cudaGetSymbolSize(size, (const void *)&symbol);
}

/* Kernels: a pointer to the kernel function, any signature. */
template <class T> inline const void *birenCudaFunc_(T *entry) { return (const void *)entry; }
template <class T> inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, T *entry) {
  return ::cudaFuncGetAttributes(attr, birenCudaFunc_(entry));
}
template <class T> inline cudaError_t cudaFuncSetAttribute(T *entry, cudaFuncAttribute attr, int value) {
  return ::cudaFuncSetAttribute(birenCudaFunc_(entry), attr, value);
}
template <class T> inline cudaError_t cudaFuncSetCacheConfig(T *func, cudaFuncCache cacheConfig) {
  return ::cudaFuncSetCacheConfig(birenCudaFunc_(func), cacheConfig);
}
template <class T>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, T func, int blockSize,
                                                                 size_t dynamicSMemSize) {
  return ::cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, (const void *)func, blockSize,
                                                                  dynamicSMemSize, cudaOccupancyDefault);
}
template <class T>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, T func, int blockSize,
                                                                          size_t dynamicSMemSize, unsigned int flags) {
  return ::cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, (const void *)func, blockSize,
                                                                  dynamicSMemSize, flags);
}
template <class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, T func,
                                                      size_t dynamicSMemSize = 0, int blockSizeLimit = 0) {
  return ::cudaOccupancyMaxPotentialBlockSize(minGridSize, blockSize, (const void *)func, dynamicSMemSize,
                                              blockSizeLimit);
}
/* The shared-memory function may be any callable (CUDA's UnaryFunction): BIREN's call takes a
 * plain function, which reaches the callable through a thread-local pointer for the call. */
template <class F> struct birenCudaSMemFn_ {
  static const F *&current() {
    static thread_local const F *f = 0;
    return f;
  }
  static size_t call(int blockSize) { return (size_t)(*current())(blockSize); }
};
template <class UnaryFunction, class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int *minGridSize, int *blockSize, T func,
                                                                  UnaryFunction blockSizeToDynamicSMemSize,
                                                                  int blockSizeLimit = 0) {
  const UnaryFunction *saved = birenCudaSMemFn_<UnaryFunction>::current();
  birenCudaSMemFn_<UnaryFunction>::current() = &blockSizeToDynamicSMemSize;
  cudaError_t e = ::cudaOccupancyMaxPotentialBlockSizeVariableSMem(
      minGridSize, blockSize, (const void *)func, &birenCudaSMemFn_<UnaryFunction>::call, blockSizeLimit);
  birenCudaSMemFn_<UnaryFunction>::current() = saved;
  return e;
}
template <class UnaryFunction, class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(int *minGridSize, int *blockSize, T func,
                                                                           UnaryFunction blockSizeToDynamicSMemSize,
                                                                           int blockSizeLimit = 0,
                                                                           unsigned int flags = 0) {
  if (flags != cudaOccupancyDefault && flags != cudaOccupancyDisableCachingOverride) return cudaErrorInvalidValue;
  return cudaOccupancyMaxPotentialBlockSizeVariableSMem(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                        blockSizeLimit);
}
template <class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, T func,
                                                               size_t dynamicSMemSize = 0, int blockSizeLimit = 0,
                                                               unsigned int flags = 0) {
  if (flags != cudaOccupancyDefault && flags != cudaOccupancyDisableCachingOverride) return cudaErrorInvalidValue;
  return cudaOccupancyMaxPotentialBlockSize(minGridSize, blockSize, func, dynamicSMemSize, blockSizeLimit);
}
template <class T>
inline cudaError_t cudaLaunchKernel(const T *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem = 0,
                                    cudaStream_t stream = 0) {
  return ::cudaLaunchKernel((const void *)func, gridDim, blockDim, args, sharedMem, stream);
}
template <class T>
inline cudaError_t cudaLaunchCooperativeKernel(const T *func, dim3 gridDim, dim3 blockDim, void **args,
                                               size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::cudaLaunchCooperativeKernel((const void *)func, gridDim, blockDim, args, sharedMem, stream);
}

/* GCC does not deduce const T * from a pointer to a function: the kernel's own type, too. */
template <class... A>
inline cudaError_t cudaLaunchKernel(void (*func)(A...), dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem = 0,
                                    cudaStream_t stream = 0) {
  return ::cudaLaunchKernel((const void *)func, gridDim, blockDim, args, sharedMem, stream);
}
template <class... A>
inline cudaError_t cudaLaunchCooperativeKernel(void (*func)(A...), dim3 gridDim, dim3 blockDim, void **args,
                                               size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::cudaLaunchCooperativeKernel((const void *)func, gridDim, blockDim, args, sharedMem, stream);
}

/* Channel descriptors of a texel type (BIREN's birenCreateChannelDesc<T>, as CUDA's). */
template <class T> inline cudaChannelFormatDesc cudaCreateChannelDesc(void) { return birenCreateChannelDesc<T>(); }

#endif /* __cplusplus */
#endif /* BIREN_CUDA_RUNTIME_CXX_H */
