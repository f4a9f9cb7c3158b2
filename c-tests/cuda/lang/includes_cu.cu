// A .cu file that includes another .cu (kernels and all), compiled with -c and linked apart.
#include <cstdio>
#include "kernels_b.cu"
int main() {
  float *a;
  if (cudaMallocManaged(&a, 64 * sizeof(float)) != cudaSuccess) return 1;
  for (int i = 0; i < 64; i++) a[i] = (float)i;
  scale_other_file<<<2, 32>>>(a, 3.0f, 64);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  for (int i = 0; i < 64; i++)
    if (a[i] != 3.0f * i) return 1;
  printf("includes_cu: passed\n");
  return 0;
}
