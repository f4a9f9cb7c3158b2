/* The smallest end-to-end check: init, allocate, copy, launch, synchronize, copy back. */
#include "harness.h"

static void add(void **args) {
  const float *a = *(const float **)args[0];
  const float *b = *(const float **)args[1];
  float *c = *(float **)args[2];
  int n = *(int *)args[3];
  dim3 t = birenThreadIdx(), bi = birenBlockIdx(), bd = birenBlockDim();
  int i = (int)(bi.x * bd.x + t.x);
  if (i < n) c[i] = a[i] + b[i];
}

static int vector_add_end_to_end(void) {
  enum { N = 1000 };
  float h[N], out[N];
  float *da, *db, *dc;
  int n = N;
  for (int i = 0; i < N; i++) h[i] = (float)i;
  OK(birenMalloc((void **)&da, sizeof h));
  OK(birenMalloc((void **)&db, sizeof h));
  OK(birenMalloc((void **)&dc, sizeof h));
  OK(birenMemcpy(da, h, sizeof h, birenMemcpyHostToDevice));
  OK(birenMemcpy(db, h, sizeof h, birenMemcpyHostToDevice));
  OK(BIREN_LAUNCH(add, birenDim3((N + 255) / 256, 1, 1), birenDim3(256, 1, 1), 0, NULL, da, db, dc, n));
  OK(birenMemcpy(out, dc, sizeof out, birenMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(out[i] == 2.0f * (float)i);
  OK(birenFree(da));
  OK(birenFree(db));
  OK(birenFree(dc));
  return 0;
}

static const test_case tests[] = {TEST(vector_add_end_to_end)};

int main(void) {
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("smoke", tests, NULL, 60);
}
