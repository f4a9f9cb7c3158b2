/* Calls a CUDA runtime call BIREN does not have (when CALL_IT is defined): must not compile. */
#include <cuda_runtime_api.h>

int main() {
  cudaIpcEventHandle_t handle; /* the types exist, so only the call is the error */
  cudaEvent_t event = 0;
  (void)handle;
  (void)event;
#ifdef CALL_IT
  return cudaIpcGetEventHandle(&handle, event) == cudaSuccess ? 0 : 1;
#else
  return 0;
#endif
}
