/* Includes the header twice, in two translation units linked together (see test_header.sh):
 * the include guards hold and the header defines nothing that would clash at link time. Built
 * as C99 and as C++11, with and without BIREN_NO_INLINE_BUILTINS. */
#include "biren_runtime.h"
#include "biren_runtime.h"

int header_twice_other(void);

static void kernel(void **args) {
  dim3 t = birenThreadIdx(), b = birenBlockIdx(), bd = birenBlockDim(), g = birenGridDim();
  unsigned *out = *(unsigned **)args[0];
  (void)birenSharedMemory();
  out[b.x * bd.x + t.x] = g.x * 1000u + b.x * bd.x + t.x;
}

int main(void) {
  int version = 0;
  unsigned h[64];
  unsigned *d = NULL;
  BIREN_CHECK(birenRuntimeGetVersion(&version));
  BIREN_CHECK(birenInit());
  BIREN_CHECK(birenMalloc((void **)&d, sizeof h));
  BIREN_CHECK(BIREN_LAUNCH(kernel, birenDim3(2, 1, 1), birenDim3(32, 1, 1), 0, NULL, d));
  BIREN_CHECK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  BIREN_CHECK(birenFree(d));
  for (unsigned i = 0; i < 64; i++) {
    if (h[i] != 2000u + i) {
      fprintf(stderr, "kernel wrote %u at %u\n", h[i], i);
      return 1;
    }
  }
  return header_twice_other() == version ? 0 : 1;
}
