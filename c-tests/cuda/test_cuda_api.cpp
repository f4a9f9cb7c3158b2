/* CUDA's runtime API under CUDA's names (include/cuda): every wrapper family with good and bad
 * input giving CUDA's codes, the C++ overloads of cuda_runtime.h (typed allocations, symbols,
 * kernels by pointer), the automatic start of the runtime, and NVIDIA's helper_cuda.h /
 * helper_functions.h used unchanged. A host program: the kernels are plain BIREN kernels. */
#include "cuda_host.h"

#include <helper_cuda.h>
#include <helper_functions.h>

#include <sys/wait.h>
#include <unistd.h>
#include <string>

#include "../harness.h"

/* EXPECT_CODE with CUDA's names in the message. */
#define CU_EXPECT(call, code)                                                                 \
  do {                                                                                        \
    cudaError_t cu_e_ = (call);                                                               \
    if (cu_e_ != (code)) {                                                                    \
      fprintf(stderr, "    %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call,  \
              cudaGetErrorName(cu_e_), cudaGetErrorName(code));                               \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)
#define CU_OK(call) CU_EXPECT(call, cudaSuccess)

BIREN_DEVICE_SYMBOL(int, dev_counter);
BIREN_DEVICE_ARRAY(float, dev_table, 8);
static double not_a_symbol[2];

/* out[i] = i * factor, over the whole grid. */
static void scale_kernel(void **args) {
  float *out = *(float **)args[0];
  float factor = *(float *)args[1];
  unsigned i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  out[i] = (float)i * factor;
}

static void empty_kernel(void **args) { (void)args; }

/* Must run first: no birenInit anywhere, the first CUDA call starts the runtime. */
static int the_first_call_starts_the_runtime(void) {
  int n = 0;
  CU_OK(cudaGetDeviceCount(&n));
  EXPECT(n >= 1);
  void *p = NULL;
  CU_OK(cudaMalloc(&p, 64));
  CU_OK(cudaFree(p));
  return 0;
}

static int error_names_are_cudas(void) {
  EXPECT(strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess") == 0);
  EXPECT(strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue") == 0);
  EXPECT(strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
  EXPECT(strcmp(cudaGetErrorName(cudaErrorInitializationError), "cudaErrorInitializationError") == 0);
  EXPECT(strcmp(cudaGetErrorName(cudaErrorInvalidResourceHandle), "cudaErrorInvalidResourceHandle") == 0);
  EXPECT(strcmp(cudaGetErrorName(cudaErrorInvalidDevice), "cudaErrorInvalidDevice") == 0);
  EXPECT(strcmp(cudaGetErrorName(cudaErrorNotReady), "cudaErrorNotReady") == 0);
  EXPECT(strcmp(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress") == 0);
  EXPECT(strcmp(cudaGetErrorName(cudaErrorStreamCaptureInvalidated), "cudaErrorStreamCaptureInvalidated") == 0);
  EXPECT(strcmp(cudaGetErrorName(cudaErrorUnknown), "cudaErrorUnknown") == 0);
  /* CUDA's codes BIREN never returns: named, and distinct from every BIREN code. */
  EXPECT(strcmp(cudaGetErrorName(cudaErrorNoDevice), "cudaErrorNoDevice") == 0);
  EXPECT(strcmp(cudaGetErrorName(cudaErrorCudartUnloading), "cudaErrorCudartUnloading") == 0);
  EXPECT(strcmp(birenGetErrorName(cudaErrorNoDevice), "BIREN_ERROR_UNRECOGNIZED") == 0);
  EXPECT(strcmp(birenGetErrorName(cudaErrorCudartUnloading), "BIREN_ERROR_UNRECOGNIZED") == 0);
  EXPECT(strcmp(birenGetErrorName(cudaErrorPeerAccessUnsupported), "BIREN_ERROR_UNRECOGNIZED") == 0);
  EXPECT(strcmp(cudaGetErrorName((cudaError_t)12345), "unrecognized error code") == 0);
  EXPECT(strstr(cudaGetErrorString(cudaErrorNoDevice), "never returns") != NULL);
  EXPECT(strcmp(cudaGetErrorString(cudaErrorInvalidValue), birenGetErrorString(BIREN_ERROR_INVALID_VALUE)) == 0);
  /* The codes BIREN has are BIREN's values under CUDA's names. */
  EXPECT(cudaErrorInvalidValue == BIREN_ERROR_INVALID_VALUE);
  EXPECT(cudaErrorMemoryAllocation == BIREN_ERROR_OUT_OF_MEMORY);
  cudaError legacy = cudaErrorInvalidValue; /* CUDA's enum cudaError */
  EXPECT(legacy == cudaErrorInvalidValue);
  return 0;
}

static int versions_are_cuda_12(void) {
  EXPECT(CUDART_VERSION >= 12000 && CUDART_VERSION < 13000);
  EXPECT(CUDA_VERSION == CUDART_VERSION && __CUDART_API_VERSION == CUDART_VERSION);
  int v = 0;
  CU_OK(cudaRuntimeGetVersion(&v));
  EXPECT(v == CUDART_VERSION);
  v = 0;
  CU_OK(cudaDriverGetVersion(&v));
  EXPECT(v == CUDART_VERSION);
  CU_EXPECT(cudaRuntimeGetVersion(NULL), cudaErrorInvalidValue);
  CU_EXPECT(cudaDriverGetVersion(NULL), cudaErrorInvalidValue);
  return 0;
}

static int device_calls(void) {
  int dev = -1;
  CU_OK(cudaSetDevice(0));
  CU_OK(cudaGetDevice(&dev));
  EXPECT(dev == 0);
  CU_EXPECT(cudaSetDevice(99), cudaErrorInvalidDevice);
  int v = 0;
  CU_OK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0));
  EXPECT(v == 6);
  CU_OK(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0));
  EXPECT(v == 32);
  CU_OK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeMode, 0));
  EXPECT(v == cudaComputeModeDefault);
  CU_EXPECT(cudaDeviceGetAttribute(NULL, cudaDevAttrWarpSize, 0), cudaErrorInvalidValue);
  CU_EXPECT(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 99), cudaErrorInvalidDevice);
  size_t lim = 0;
  CU_OK(cudaDeviceGetLimit(&lim, cudaLimitStackSize));
  EXPECT(lim > 0);
  CU_EXPECT(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1024), cudaErrorUnsupportedLimit);
  int least = 1, greatest = 1;
  CU_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT(least == 0 && greatest < 0);
  size_t freeb = 0, total = 0;
  CU_OK(cudaMemGetInfo(&freeb, &total));
  EXPECT(total > 0 && freeb <= total);
  CU_OK(cudaDeviceSynchronize());
  return 0;
}

static int device_properties_have_cudas_fields(void) {
  cudaDeviceProp p;
  memset(&p, 0xff, sizeof p);
  CU_OK(cudaGetDeviceProperties(&p, 0));
  EXPECT(p.name[0] != '\0' && memchr(p.name, 0, sizeof p.name) != NULL);
  EXPECT(p.major == 6 && p.minor == 0);
  EXPECT(p.warpSize == 32);
  EXPECT(p.multiProcessorCount >= 1);
  EXPECT(p.maxThreadsPerBlock == 1024 && p.maxThreadsDim[0] == 1024);
  EXPECT(p.totalGlobalMem > 0 && p.sharedMemPerBlock > 0);
  EXPECT(p.clockRate > 0 && p.memoryClockRate > 0 && p.memoryBusWidth > 0);
  EXPECT(p.maxTexture1D == 131072 && p.maxTexture2D[0] == 131072 && p.maxTexture2D[1] == 65536);
  EXPECT(p.maxTexture3D[0] == 16384 && p.maxTexture2DLayered[2] == 2048);
  EXPECT(p.textureAlignment == 512 && p.surfaceAlignment == 512);
  EXPECT(p.tccDriver == 0 && p.ipcEventSupported == 0 && p.clusterLaunch == 0);
  EXPECT(p.canMapHostMemory == 1 && p.managedMemory == 1 && p.unifiedAddressing == 1);
  int coop = -1;
  CU_OK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
  EXPECT(p.cooperativeLaunch == coop);
  struct cudaDeviceProp q; /* CUDA's `struct cudaDeviceProp` spelling */
  CU_OK(cudaGetDeviceProperties_v2(&q, 0));
  EXPECT(q.major == 6 && q.warpSize == 32);
  cudaDeviceProp before = p;
  CU_EXPECT(cudaGetDeviceProperties(&q, 99), cudaErrorInvalidDevice);
  CU_EXPECT(cudaGetDeviceProperties(NULL, 0), cudaErrorInvalidValue);
  EXPECT(memcmp(&before, &p, sizeof p) == 0);
  return 0;
}

static int memory_calls_give_cudas_codes(void) {
  void *p = (void *)0x1;
  CU_EXPECT(cudaMalloc(&p, (size_t)1 << 60), cudaErrorMemoryAllocation);
  EXPECT(p == (void *)0x1); /* nothing written */
  CU_EXPECT(cudaMalloc((void **)NULL, 16), cudaErrorInvalidValue);
  float *d = NULL; /* the typed overload: no cast */
  CU_OK(cudaMalloc(&d, 256 * sizeof(float)));
  float h[256], back[256];
  for (int i = 0; i < 256; i++) h[i] = (float)i;
  CU_OK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  CU_OK(cudaMemset(d + 128, 0, 128 * sizeof(float)));
  CU_OK(cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost));
  EXPECT(back[5] == 5.0f && back[200] == 0.0f);
  CU_EXPECT(cudaMemcpy(back, d, sizeof back, (cudaMemcpyKind)77), cudaErrorInvalidMemcpyDirection);
  CU_EXPECT(cudaMemcpy(back, d, 2 * sizeof back, cudaMemcpyDeviceToHost), cudaErrorOutOfBounds);
  CU_EXPECT(cudaMemcpy(back, h, sizeof back, cudaMemcpyDeviceToHost), cudaErrorInvalidDevicePointer);
  CU_OK(cudaMemcpyAsync(back, d, sizeof back, cudaMemcpyDefault)); /* default stream argument */
  CU_OK(cudaMemsetAsync(d, 0, sizeof h));
  CU_OK(cudaDeviceSynchronize());
  cudaPointerAttributes a;
  CU_OK(cudaPointerGetAttributes(&a, d + 3));
  EXPECT(a.type == cudaMemoryTypeDevice && a.device == 0);
  CU_OK(cudaFree(d));
  CU_EXPECT(cudaFree(d), cudaErrorInvalidDevicePointer);
  /* 2-D and 3-D */
  int *pitched = NULL;
  size_t pitch = 0;
  CU_OK(cudaMallocPitch(&pitched, &pitch, 100 * sizeof(int), 8));
  EXPECT(pitch >= 100 * sizeof(int));
  CU_OK(cudaMemset2D(pitched, pitch, 1, 100 * sizeof(int), 8));
  CU_EXPECT(cudaMemset2D(pitched, pitch, 1, pitch + 1, 8), cudaErrorInvalidValue);
  CU_OK(cudaFree(pitched));
  cudaPitchedPtr pp;
  cudaExtent ext = make_cudaExtent(64, 4, 2);
  CU_OK(cudaMalloc3D(&pp, ext));
  CU_OK(cudaMemset3D(pp, 0, ext));
  cudaMemcpy3DParms parms;
  memset(&parms, 0, sizeof parms);
  static unsigned char host3d[64 * 4 * 2];
  parms.srcPtr = make_cudaPitchedPtr(host3d, 64, 64, 4);
  parms.dstPtr = pp;
  parms.srcPos = make_cudaPos(0, 0, 0);
  parms.extent = ext;
  parms.kind = cudaMemcpyHostToDevice;
  CU_OK(cudaMemcpy3D(&parms));
  CU_OK(cudaFree(pp.ptr));
  return 0;
}

static int host_and_managed_memory(void) {
  double *h = NULL;
  CU_OK(cudaMallocHost(&h, 32 * sizeof(double)));
  h[31] = 1.0;
  CU_OK(cudaFreeHost(h));
  int *mapped = NULL, *dev = NULL;
  CU_OK(cudaHostAlloc(&mapped, 64 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  CU_OK(cudaHostGetDevicePointer(&dev, mapped, 0));
  EXPECT(dev != NULL);
  unsigned flags = 0;
  CU_OK(cudaHostGetFlags(&flags, mapped));
  EXPECT(flags & cudaHostAllocMapped);
  CU_OK(cudaFreeHost(mapped));
  CU_EXPECT(cudaHostAlloc(&mapped, 64, 0x80), cudaErrorInvalidValue);
  CU_OK(cudaMallocHost(&h, 64, cudaHostAllocMapped)); /* cuda_runtime.h's flags overload */
  CU_OK(cudaFreeHost(h));
  static char reg[8192];
  CU_OK(cudaHostRegister(reg, sizeof reg, cudaHostRegisterDefault));
  CU_EXPECT(cudaHostRegister(reg, sizeof reg, cudaHostRegisterDefault), cudaErrorHostMemoryAlreadyRegistered);
  CU_OK(cudaHostUnregister(reg));
  CU_EXPECT(cudaHostUnregister(reg), cudaErrorHostMemoryNotRegistered);
  float *m = NULL;
  CU_OK(cudaMallocManaged(&m, 100 * sizeof(float))); /* default cudaMemAttachGlobal */
  m[99] = 2.0f;
  cudaStream_t s;
  CU_OK(cudaStreamCreate(&s));
  CU_OK(cudaStreamAttachMemAsync(s, m)); /* defaults: whole allocation, cudaMemAttachSingle */
  CU_OK(cudaMemPrefetchAsync(m, 100 * sizeof(float), 0));
  CU_OK(cudaMemAdvise(m, 100 * sizeof(float), cudaMemAdviseSetReadMostly, 0));
  CU_OK(cudaStreamSynchronize(s));
  CU_OK(cudaStreamDestroy(s));
  EXPECT(m[99] == 2.0f);
  CU_OK(cudaFree(m));
  CU_EXPECT(cudaMallocManaged(&m, 16, 0x40), cudaErrorInvalidValue);
  return 0;
}

static int stream_ordered_allocation(void) {
  cudaStream_t s;
  CU_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned flags = 7;
  CU_OK(cudaStreamGetFlags(s, &flags));
  EXPECT(flags == cudaStreamNonBlocking);
  int *a = NULL, *b = NULL, *c = NULL;
  CU_OK(cudaMallocAsync(&a, 1024, s));
  cudaMemPool_t pool;
  CU_OK(cudaDeviceGetDefaultMemPool(&pool, 0));
  CU_OK(cudaMallocAsync(&b, 1024, pool, s));
  CU_OK(cudaMallocFromPoolAsync(&c, 1024, pool, s));
  CU_OK(cudaMemsetAsync(a, 0, 1024, s));
  CU_OK(cudaFreeAsync(a, s));
  CU_OK(cudaFreeAsync(b, s));
  CU_OK(cudaFreeAsync(c, s));
  uint64_t threshold = UINT64_MAX;
  CU_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  cudaMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t own;
  CU_OK(cudaMemPoolCreate(&own, &props));
  cudaMemAccessDesc desc;
  desc.location = props.location;
  desc.flags = cudaMemAccessFlagsProtReadWrite;
  CU_OK(cudaMemPoolSetAccess(own, &desc, 1));
  CU_OK(cudaMemPoolDestroy(own));
  props.handleTypes = (cudaMemAllocationHandleType)cudaMemHandleTypePosixFileDescriptor;
  CU_EXPECT(cudaMemPoolCreate(&own, &props), cudaErrorNotSupported);
  CU_EXPECT(cudaMallocAsync(&a, 16, (cudaStream_t)0x1234), cudaErrorInvalidResourceHandle);
  CU_OK(cudaStreamSynchronize(s));
  CU_OK(cudaStreamDestroy(s));
  return 0;
}

static void CUDART_CB on_stream(cudaStream_t, cudaError_t status, void *data) {
  *(int *)data = status == cudaSuccess ? 1 : 2;
}
static void CUDART_CB on_host(void *data) { *(int *)data = 3; }

static int streams_and_events(void) {
  cudaStream_t s;
  cudaEvent_t start, stop, untimed;
  CU_OK(cudaStreamCreateWithPriority(&s, cudaStreamDefault, -1));
  int prio = 0;
  CU_OK(cudaStreamGetPriority(s, &prio));
  EXPECT(prio == -1);
  CU_OK(cudaEventCreate(&start));
  CU_OK(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));
  CU_OK(cudaEventCreate(&untimed, cudaEventDisableTiming)); /* cuda_runtime.h's overload */
  CU_OK(cudaEventRecord(start)); /* default stream argument */
  CU_OK(cudaStreamWaitEvent(s, start)); /* CUDA's flags default to 0 */
  CU_EXPECT(cudaStreamWaitEvent(s, start, 8), cudaErrorInvalidValue);
  int cb = 0, hf = 0;
  CU_OK(cudaStreamAddCallback(s, on_stream, &cb, 0));
  CU_OK(cudaLaunchHostFunc(s, on_host, &hf));
  CU_OK(cudaEventRecord(stop, s));
  CU_OK(cudaEventRecord(untimed, s));
  CU_OK(cudaEventSynchronize(stop));
  CU_OK(cudaStreamSynchronize(s));
  EXPECT(cb == 1 && hf == 3);
  CU_OK(cudaEventQuery(stop));
  CU_OK(cudaStreamQuery(s));
  float ms = -1.0f;
  CU_OK(cudaEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0.0f);
  CU_EXPECT(cudaEventElapsedTime(&ms, start, untimed), cudaErrorInvalidResourceHandle);
  CU_EXPECT(cudaEventCreateWithFlags(&untimed, 0x100), cudaErrorInvalidValue);
  CU_OK(cudaEventDestroy(start));
  CU_OK(cudaEventDestroy(stop));
  CU_OK(cudaEventDestroy(untimed));
  CU_EXPECT(cudaEventDestroy(start), cudaErrorInvalidResourceHandle);
  CU_OK(cudaStreamDestroy(s));
  CU_EXPECT(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);
  return 0;
}

static int kernels_by_pointer(void) {
  float *out = NULL;
  CU_OK(cudaMalloc(&out, 256 * sizeof(float)));
  float factor = 2.0f;
  void *args[] = {&out, &factor};
  /* cuda_runtime.h's template (kernel of any type, shared memory and stream default to 0) */
  CU_OK(cudaLaunchKernel(scale_kernel, dim3{4, 1, 1}, dim3{64, 1, 1}, args));
  /* the C form, kernel as const void * */
  CU_OK(cudaLaunchKernel((const void *)scale_kernel, dim3{4, 1, 1}, dim3{64, 1, 1}, args, 0, 0));
  float h[256];
  CU_OK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT(h[255] == 510.0f);
  CU_EXPECT(cudaLaunchKernel(scale_kernel, dim3{1, 1, 1}, dim3{2048, 1, 1}, args), cudaErrorInvalidConfiguration);
  CU_EXPECT(cudaGetLastError(), cudaErrorInvalidConfiguration);
  CU_OK(cudaGetLastError());
  CU_OK(cudaLaunchCooperativeKernel(empty_kernel, dim3{2, 1, 1}, dim3{32, 1, 1}, NULL));
  CU_OK(cudaDeviceSynchronize());

  cudaFuncAttributes fa;
  CU_OK(cudaFuncGetAttributes(&fa, scale_kernel));
  EXPECT(fa.maxThreadsPerBlock == 1024);
  struct cudaFuncAttributes fa2; /* CUDA's `struct cudaFuncAttributes` spelling */
  CU_EXPECT(cudaFuncGetAttributes(&fa2, (const void *)NULL), cudaErrorInvalidDeviceFunction);
  CU_EXPECT(cudaFuncGetAttributes(NULL, scale_kernel), cudaErrorInvalidValue);
  CU_OK(cudaFuncSetCacheConfig(scale_kernel, cudaFuncCachePreferL1));
  CU_OK(cudaFuncSetAttribute(scale_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024));
  CU_EXPECT(cudaFuncSetAttribute(scale_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 30), cudaErrorInvalidValue);

  int blocks = 0;
  CU_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale_kernel, 128, 0));
  EXPECT(blocks >= 1);
  CU_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, scale_kernel, 128, 0, cudaOccupancyDefault));
  CU_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale_kernel, 4096, 0)); /* too big: none */
  EXPECT(blocks == 0);
  CU_EXPECT(cudaOccupancyMaxActiveBlocksPerMultiprocessor(NULL, scale_kernel, 128, 0), cudaErrorInvalidValue);
  int minGrid = 0, block = 0;
  CU_OK(cudaOccupancyMaxPotentialBlockSize(&minGrid, &block, scale_kernel)); /* defaults 0, 0 */
  EXPECT(block >= 32 && block <= 1024 && minGrid >= 1);
  int calls = 0;
  auto smem = [&calls](int b) -> size_t { calls++; return (size_t)b * 4; }; /* any callable */
  CU_OK(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&minGrid, &block, scale_kernel, smem));
  EXPECT(calls > 0 && block >= 32);
  CU_OK(cudaFree(out));
  return 0;
}

static int symbols_by_themselves(void) {
  int v = 41;
  CU_OK(cudaMemcpyToSymbol(dev_counter, &v, sizeof v)); /* offset 0, host to device */
  EXPECT(dev_counter == 41);
  int back = 0;
  CU_OK(cudaMemcpyFromSymbol(&back, dev_counter, sizeof back));
  EXPECT(back == 41);
  float t[2] = {1.5f, 2.5f};
  CU_OK(cudaMemcpyToSymbolAsync(dev_table, t, sizeof t, 4 * sizeof(float)));
  float tb[2] = {0, 0};
  CU_OK(cudaMemcpyFromSymbolAsync(tb, dev_table, sizeof tb, 4 * sizeof(float)));
  CU_OK(cudaDeviceSynchronize());
  EXPECT(tb[0] == 1.5f && tb[1] == 2.5f);
  void *addr = NULL;
  CU_OK(cudaGetSymbolAddress(&addr, dev_table));
  EXPECT(addr == (void *)dev_table);
  size_t size = 0;
  CU_OK(cudaGetSymbolSize(&size, dev_table));
  EXPECT(size == 8 * sizeof(float));
  CU_OK(cudaMemcpyToSymbol((const void *)&dev_counter, &v, sizeof v, 0, cudaMemcpyHostToDevice)); /* C form */
  CU_EXPECT(cudaMemcpyToSymbol(not_a_symbol, t, sizeof t), cudaErrorInvalidSymbol);
  CU_EXPECT(cudaMemcpyToSymbol(dev_table, t, sizeof t, 7 * sizeof(float)), cudaErrorInvalidValue);
  CU_EXPECT(cudaGetSymbolSize(&size, not_a_symbol), cudaErrorInvalidSymbol);
  return 0;
}

static int arrays_and_textures(void) {
  cudaChannelFormatDesc d = cudaCreateChannelDesc<float>();
  EXPECT(d.x == 32 && d.y == 0 && d.f == cudaChannelFormatKindFloat);
  cudaChannelFormatDesc d4 = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
  EXPECT(d4.w == 8);
  cudaArray *arr = NULL; /* CUDA's `cudaArray *` spelling of cudaArray_t */
  CU_OK(cudaMallocArray(&arr, &d, 16, 4)); /* flags default */
  float texels[64];
  for (int i = 0; i < 64; i++) texels[i] = (float)i;
  CU_OK(cudaMemcpy2DToArray(arr, 0, 0, texels, 16 * sizeof(float), 16 * sizeof(float), 4, cudaMemcpyHostToDevice));
  cudaResourceDesc res;
  memset(&res, 0, sizeof res);
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaTextureDesc td;
  memset(&td, 0, sizeof td);
  td.addressMode[0] = cudaAddressModeClamp;
  td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t tex = 0;
  CU_OK(cudaCreateTextureObject(&tex, &res, &td, NULL));
  struct cudaResourceDesc got;
  CU_OK(cudaGetTextureObjectResourceDesc(&got, tex));
  EXPECT(got.res.array.array == arr);
  CU_OK(cudaDestroyTextureObject(tex));
  CU_EXPECT(cudaDestroyTextureObject(tex), cudaErrorInvalidResourceHandle);
  float back[16];
  CU_OK(cudaMemcpy2DFromArray(back, 16 * sizeof(float), arr, 0, 3, 16 * sizeof(float), 1, cudaMemcpyDeviceToHost));
  EXPECT(back[15] == 63.0f);
  CU_OK(cudaFreeArray(arr));
  cudaChannelFormatDesc bad = cudaCreateChannelDesc(7, 0, 0, 0, cudaChannelFormatKindFloat);
  CU_EXPECT(cudaMallocArray(&arr, &bad, 16), cudaErrorInvalidChannelDescriptor);
  cudaArray_t a3 = NULL;
  CU_OK(cudaMalloc3DArray(&a3, &d, make_cudaExtent(8, 8, 8)));
  CU_OK(cudaFreeArray(a3));
  return 0;
}

static int graphs_and_capture(void) {
  cudaStream_t s;
  CU_OK(cudaStreamCreate(&s));
  int *d = NULL;
  CU_OK(cudaMalloc(&d, 64 * sizeof(int)));
  cudaGraph_t g;
  CU_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  CU_OK(cudaStreamIsCapturing(s, &st));
  EXPECT(st == cudaStreamCaptureStatusActive);
  st = cudaStreamCaptureStatusNone;
  CU_OK(cudaStreamGetCaptureInfo(s, &st)); /* CUDA 12's optional outputs default to NULL */
  EXPECT(st == cudaStreamCaptureStatusActive);
  unsigned long long id = 0;
  CU_OK(cudaStreamGetCaptureInfo_v2(s, &st, &id));
  EXPECT(id != 0);
  CU_OK(cudaMemsetAsync(d, 1, 64 * sizeof(int), s));
  CU_OK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t exec;
  CU_OK(cudaGraphInstantiate(&exec, g)); /* flags default to 0 */
  CU_OK(cudaGraphLaunch(exec, s));
  CU_OK(cudaStreamSynchronize(s));
  /* A kernel node, the kernel as CUDA's void * */
  cudaGraph_t g2;
  CU_OK(cudaGraphCreate(&g2, 0));
  float *out = NULL;
  CU_OK(cudaMalloc(&out, 64 * sizeof(float)));
  float factor = 3.0f;
  void *args[] = {&out, &factor};
  cudaKernelNodeParams kp = {}; /* dim3's constructors make it non-trivial, as in CUDA */
  kp.func = (void *)scale_kernel;
  kp.gridDim = dim3{1, 1, 1};
  kp.blockDim = dim3{64, 1, 1};
  kp.kernelParams = args;
  cudaGraphNode_t node;
  CU_OK(cudaGraphAddKernelNode(&node, g2, NULL, 0, &kp));
  cudaGraphNodeType type;
  CU_OK(cudaGraphNodeGetType(node, &type));
  EXPECT(type == cudaGraphNodeTypeKernel);
  CU_EXPECT(cudaGraphAddKernelNode(&node, g2, NULL, 0, NULL), cudaErrorInvalidValue);
  cudaGraphExec_t exec2;
  CU_OK(cudaGraphInstantiateWithFlags(&exec2, g2));
  CU_OK(cudaGraphLaunch(exec2, s));
  CU_OK(cudaStreamSynchronize(s));
  float h[64];
  CU_OK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT(h[63] == 189.0f);
  factor = 0.5f;
  kp.kernelParams = args;
  CU_OK(cudaGraphExecKernelNodeSetParams(exec2, node, &kp));
  CU_OK(cudaGraphLaunch(exec2, s));
  CU_OK(cudaStreamSynchronize(s));
  CU_OK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT(h[63] == 31.5f);
  CU_OK(cudaGraphExecDestroy(exec2));
  CU_OK(cudaGraphExecDestroy(exec));
  CU_OK(cudaGraphDestroy(g2));
  CU_OK(cudaGraphDestroy(g));
  CU_EXPECT(cudaGraphDestroy(g), cudaErrorInvalidResourceHandle);
  CU_OK(cudaFree(out));
  CU_OK(cudaFree(d));
  CU_OK(cudaStreamDestroy(s));
  return 0;
}

static int peers_and_ipc(void) {
  int can = -1;
  CU_OK(cudaDeviceCanAccessPeer(&can, 0, 0));
  EXPECT(can == 0);
  CU_EXPECT(cudaDeviceCanAccessPeer(&can, 0, 99), cudaErrorInvalidDevice);
  int *d = NULL;
  CU_OK(cudaMalloc(&d, 4096));
  cudaIpcMemHandle_t h;
  CU_OK(cudaIpcGetMemHandle(&h, d));
  CU_EXPECT(cudaIpcGetMemHandle(&h, (void *)&can), cudaErrorInvalidDevicePointer);
  CU_OK(cudaFree(d));
  CU_OK(cudaProfilerStart());
  CU_OK(cudaProfilerStop());
  return 0;
}

/* helper_cuda.h as the samples use it. */
static int helper_cuda_works(void) {
  char prog[] = "test_cuda_api";
  char *argv[] = {prog, NULL};
  int dev = findCudaDevice(1, (const char **)argv);
  EXPECT(dev == 0);
  EXPECT(gpuGetMaxGflopsDeviceId() == 0);
  EXPECT(_ConvertSMVer2Cores(6, 0) == 64);
  EXPECT(strcmp(_ConvertSMVer2ArchName(6, 0), "Pascal") == 0);
  (void)cudaGetLastError(); /* the earlier tests' failures */
  float *d = NULL;
  checkCudaErrors(cudaMalloc(&d, 64));
  checkCudaErrors(cudaFree(d));
  getLastCudaError("no error pending");
  printLastCudaError("no error pending");
  EXPECT(strcmp(_cudaGetErrorEnum(cudaErrorInvalidValue), "cudaErrorInvalidValue") == 0);
  return 0;
}

/* Runs `fn` in a child with its stderr in a pipe; returns its exit status, stderr in *err. */
static int run_child(void (*fn)(void), std::string *err) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    fn();
    _exit(0);
  }
  close(fds[1]);
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) err->append(buf, (size_t)n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
static void failing_check(void) { checkCudaErrors(cudaRuntimeGetVersion(NULL)); }
static void failing_launch_check(void) {
  /* A forked child cannot use the runtime (as with CUDA): its calls say so. */
  void *p = NULL;
  checkCudaErrors(cudaMalloc(&p, 16));
}

static int helper_cuda_reports_failures(void) {
  std::string err;
  EXPECT(run_child(failing_check, &err) == EXIT_FAILURE);
  EXPECT(err.find("CUDA error at") != std::string::npos);
  EXPECT(err.find("cudaErrorInvalidValue") != std::string::npos);
  EXPECT(err.find("cudaRuntimeGetVersion(NULL)") != std::string::npos);
  err.clear();
  EXPECT(run_child(failing_launch_check, &err) == EXIT_FAILURE);
  EXPECT(err.find("cudaErrorInitializationError") != std::string::npos);
  return 0;
}

/* helper_functions.h: timers and the command-line helpers. */
static int helper_functions_work(void) {
  StopWatchInterface *timer = NULL;
  sdkCreateTimer(&timer);
  sdkStartTimer(&timer);
  spin_ms(2.0);
  sdkStopTimer(&timer);
  EXPECT(sdkGetTimerValue(&timer) > 0.0f);
  sdkDeleteTimer(&timer);
  char prog[] = "prog", flag[] = "--device=0";
  const char *argv[] = {prog, flag};
  EXPECT(checkCmdLineFlag(2, argv, "device"));
  EXPECT(getCmdLineArgumentInt(2, argv, "device") == 0);
  return 0;
}

static const test_case tests[] = {
    TEST(the_first_call_starts_the_runtime),
    TEST(error_names_are_cudas),
    TEST(versions_are_cuda_12),
    TEST(device_calls),
    TEST(device_properties_have_cudas_fields),
    TEST(memory_calls_give_cudas_codes),
    TEST(host_and_managed_memory),
    TEST(stream_ordered_allocation),
    TEST(streams_and_events),
    TEST(kernels_by_pointer),
    TEST(symbols_by_themselves),
    TEST(arrays_and_textures),
    TEST(graphs_and_capture),
    TEST(peers_and_ipc),
    TEST(helper_cuda_works),
    TEST(helper_cuda_reports_failures),
    TEST(helper_functions_work),
};

int main(void) { return RUN_TESTS("cuda runtime api", tests, NULL, 60); }
