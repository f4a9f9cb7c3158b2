// The other file of features.cu's program: an extern "C" kernel it declares and launches.
#include <cuda_runtime.h>

extern "C" __global__ void scale_other_file(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}
