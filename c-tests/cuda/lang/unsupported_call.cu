// A CUDA call BIREN does not have: a compile error that names it.
#include <cuda_runtime.h>
int main() {
  cudaStream_t s = 0;
  cudaStreamAttrValue v;
  return (int)cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v);
}
