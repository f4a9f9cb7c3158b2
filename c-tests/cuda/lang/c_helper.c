/* C, not C++ (a keyword of C++ as a name, void * converted implicitly): biren-cc compiles it as C
 * even in one command with a .cu file (mixed_main.cu), as nvcc and gcc do. */
#include <stdlib.h>

int c_helper_sum(const int *v, int n) {
  int class = 0, i;
  int *copy = malloc(n * sizeof(int));
  if (!copy) return -1;
  for (i = 0; i < n; i++) copy[i] = v[i];
  for (i = 0; i < n; i++) class += copy[i];
  free(copy);
  return class;
}
