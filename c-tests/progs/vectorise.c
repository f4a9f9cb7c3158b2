/* Barrier-free BIREN_KERNEL bodies with CUDA's usual global index: c-tests/test_vectorise.sh
 * checks that GCC vectorises their block entries' thread loops (-fopt-info-vec) and runs them
 * here against plain C, with a last block that is cut short and a launch whose first block is
 * not block 0 of the data (an offset). Exits non-zero on a wrong element. */
#include "biren_runtime.h"
#include <stdio.h>
#include <stdlib.h>

/* VEC: add */
BIREN_KERNEL(vec_add, (const float *) a, (const float *) b, (float *) c, (int) n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

/* VEC: saxpy */
BIREN_KERNEL(vec_saxpy, (float) s, (const float *) x, (float *) y, (int) n) {
  int i = threadIdx.x + blockDim.x * blockIdx.x;
  if (i < n) y[i] = s * x[i] + y[i];
}

/* A body that reads threadIdx alone (not vectorised: its index is not the loop's counter). */
BIREN_KERNEL(block_local, (const float *) a, (float *) c, (int) n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if ((int)i < n) c[i] = a[i] * (float)(threadIdx.x + 1);
}

#define CHECK(call)                                                                               \
  do {                                                                                            \
    birenError_t e_ = (call);                                                                     \
    if (e_ != BIREN_SUCCESS) {                                                                     \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, birenGetErrorString(e_));                \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

int main(void) {
  const int n = 100003, block = 256, grid = (n + block - 1) / block;
  size_t bytes = (size_t)n * sizeof(float);
  float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
  float *da, *db, *dc;
  int i, bad = 0;
  CHECK(birenInit());
  for (i = 0; i < n; i++) a[i] = (float)(i % 97), b[i] = (float)(i % 13) - 6.0f;
  CHECK(birenMalloc((void **)&da, bytes));
  CHECK(birenMalloc((void **)&db, bytes));
  CHECK(birenMalloc((void **)&dc, bytes));
  CHECK(birenMemcpy(da, a, bytes, birenMemcpyHostToDevice));
  CHECK(birenMemcpy(db, b, bytes, birenMemcpyHostToDevice));

  CHECK(BIREN_LAUNCH(vec_add, birenDim3(grid, 1, 1), birenDim3(block, 1, 1), 0, 0, da, db, dc, n));
  CHECK(birenMemcpy(c, dc, bytes, birenMemcpyDeviceToHost));
  for (i = 0; i < n; i++) bad += c[i] != a[i] + b[i];

  CHECK(BIREN_LAUNCH(vec_saxpy, birenDim3(grid, 1, 1), birenDim3(block, 1, 1), 0, 0, 2.5f, da, dc, n));
  CHECK(birenMemcpy(c, dc, bytes, birenMemcpyDeviceToHost));
  for (i = 0; i < n; i++) bad += c[i] != 2.5f * a[i] + (a[i] + b[i]);

  /* From element 1000 on (the pointers offset, the block numbers not), odd block size. */
  CHECK(BIREN_LAUNCH(block_local, birenDim3((n - 1000 + block - 4) / (block - 3), 1, 1), birenDim3(block - 3, 1, 1), 0, 0, da + 1000, dc + 1000, n - 1000));
  CHECK(birenMemcpy(c, dc, bytes, birenMemcpyDeviceToHost));
  for (i = 1000; i < n; i++) bad += c[i] != a[i] * (float)((i - 1000) % (block - 3) + 1);

  CHECK(birenFree(da));
  CHECK(birenFree(db));
  CHECK(birenFree(dc));
  free(a), free(b), free(c);
  if (bad) {
    printf("FAIL  %d wrong elements\n", bad);
    return 1;
  }
  printf("ok    vectorisable kernels computed every element\n");
  return 0;
}
