// extern __shared__ at file scope: refused with its line.
#include <cuda_runtime.h>
extern __shared__ float pool[];
__global__ void k(float *out) { out[threadIdx.x] = pool[threadIdx.x]; }
int main() { return 0; }
