// A launch written inside a macro's definition: biren-cc cannot rewrite it and says where.
#include <cuda_runtime.h>
__global__ void k(int *p) { p[threadIdx.x] = 1; }
#define LAUNCH(p) k<<<1, 32>>>(p)
int main() {
  int *p = 0;
  LAUNCH(p);
  return 0;
}
