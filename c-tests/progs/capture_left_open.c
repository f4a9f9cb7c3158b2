/* Begins a capture, captures one memset and exits without ending the capture (run by
 * test_graph_trace.sh with the validator on: the exit report names the capture). */
#include "biren_runtime.h"

int main(void) {
  BIREN_CHECK(birenInit());
  birenStream_t s;
  void *d;
  BIREN_CHECK(birenMalloc(&d, 64));
  BIREN_CHECK(birenStreamCreate(&s));
  BIREN_CHECK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  BIREN_CHECK(birenMemsetAsync(d, 1, 64, s));
  return 0;
}
