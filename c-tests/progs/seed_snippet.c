/* A user's file: the header, then the seed's CHECK_BIREN macro pasted verbatim, then the seed's
 * two lines as written. Built as C99 and as C++11 with warnings as errors (test_header.sh).
 * With an argument, a copy one byte past the end must make the macro exit with EXIT_FAILURE. */
#include "biren_runtime.h"

#define CHECK_BIREN(call) \
do { \
birenError_t err = call; \
if (err != BIREN_SUCCESS) { \
fprintf(stderr, "BIREN error %d at %s:%d\n", err, __FILE__, __LINE__); \
exit(EXIT_FAILURE); \
} \
} while(0)

int main(int argc, char **argv) {
  size_t size = 1024 * sizeof(float);
  float *h_ptr = (float *)malloc(size);
  float *back = (float *)malloc(size);
  void *d_ptr;
  if (h_ptr == NULL || back == NULL) return 2;
  for (int i = 0; i < 1024; i++) h_ptr[i] = (float)i;
  CHECK_BIREN(birenInit());

  CHECK_BIREN(birenMalloc(&d_ptr, size));
  CHECK_BIREN(birenMemcpy(d_ptr, h_ptr, size, birenMemcpyHostToDevice));

  CHECK_BIREN(birenMemcpy(back, d_ptr, size, birenMemcpyDeviceToHost));
  for (int i = 0; i < 1024; i++) {
    if (back[i] != (float)i) return 3;
  }
  if (argc > 1 && argv[1][0] == 'x') {
    CHECK_BIREN(birenMemcpy(d_ptr, h_ptr, size + 1, birenMemcpyHostToDevice));
    return 4; /* not reached: the macro exits */
  }
  CHECK_BIREN(birenFree(d_ptr));
  free(h_ptr);
  free(back);
  printf("seed snippet ok\n");
  return 0;
}
