/* The C form of unsupported_call.cpp. */
#include <cuda_runtime_api.h>

int main(void) {
  cudaStream_t stream = 0;
  (void)stream;
#ifdef CALL_IT
  return cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, 0) == cudaSuccess ? 0 : 1;
#else
  return 0;
#endif
}
