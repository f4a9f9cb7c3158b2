/* A BIREN kernel for python/examples/vector_add.py: c[i] = a[i] + b[i].
 * Built as a shared object: cc -shared -fPIC -O2 $(pkg-config --cflags biren_runtime) ... */
#include <biren_runtime.h>

void vector_add(void **args) {
  const float *a = *(const float **)args[0];
  const float *b = *(const float **)args[1];
  float *c = *(float **)args[2];
  int n = *(int *)args[3];
  int i = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  if (i < n) c[i] = a[i] + b[i];
}
