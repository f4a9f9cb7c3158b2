/* The second translation unit of header_twice.c. */
#include "biren_runtime.h"
#include "biren_runtime.h"

int header_twice_other(void) {
  int version = -1;
  if (birenRuntimeGetVersion(&version) != BIREN_SUCCESS) return -1;
  (void)birenDim3(1, 1, 1);
  return version;
}
