/* 07_validator.c -- a buggy program under birenSetDeviceValidator(1) (seed, section 4.1.2 tip).
 *
 * Build alone (from the repository root, after `make`; -rdynamic lets the leak report name
 * the functions that created what leaked):
 *   cc -std=c99 -rdynamic -Iinclude examples-c/07_validator.c -Ltarget/release -Wl,-rpath,$PWD/target/release -lbiren_runtime -o validator
 *
 * The validator costs time, so it is for debugging. On, it checks every call's parameters and
 * explains each problem in one line naming the call, the argument, the value and why; it poisons
 * new device memory, guards every allocation, reports what is still alive at birenDeviceReset
 * and at exit, and gives advice drawn from the seed's lessons. Its lines go to stderr, or to a
 * callback: here birenSetValidatorCallback prints them on stdout, marked with "|".
 *
 * The bugs: an out-of-bounds copy, a read of memory never written, a double free, a kernel
 * launched without registering it, an event and an allocation never released, and a kernel
 * writing one element past the end of its allocation (an off-by-one `i <= n`).
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1000 };

static void print_finding(const char *message, void *user) {
  (void)user;
  printf("      | %s\n", message);
  fflush(stdout);
}

static void show(const char *what, birenError_t e) {
  printf("    %-52s -> %s\n", what, birenGetErrorName(e));
  fflush(stdout);
}

/* args: (float *data, int n, float factor). data[i] *= factor for i < n. */
static void scale(void **args) {
  float *data = *(float **)args[0];
  int n = *(int *)args[1];
  float factor = *(float *)args[2];
  int i = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  if (i < n) data[i] *= factor;
}

/* args: (float *data, int n). The bug: `<=` writes data[n], one element past the end. */
static void fill_off_by_one(void **args) {
  float *data = *(float **)args[0];
  int n = *(int *)args[1];
  int i = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  if (i <= n) data[i] = 1.0f;
}

int main(void) {
  BIREN_CHECK(birenInit());
  BIREN_CHECK(birenSetValidatorCallback(print_finding, NULL));
  BIREN_CHECK(birenSetDeviceValidator(1)); /* or run with BIREN_VALIDATOR=1 */
  printf("07_validator: a buggy program with the validator on (its lines are marked |)\n\n");

  float h[N + 24];
  for (int i = 0; i < N + 24; i++) h[i] = (float)i;
  int n = N;
  float *d_data;
  BIREN_CHECK(birenMalloc((void **)&d_data, N * sizeof(float)));

  /* Bug 1: the host array is larger than the device buffer. */
  printf("1. An out-of-bounds copy\n");
  show("birenMemcpy(d_data, h, sizeof h, HostToDevice)", birenMemcpy(d_data, h, sizeof h, birenMemcpyHostToDevice));

  /* Bug 2: reading device memory nobody wrote. New memory is poisoned with 0xCD bytes. */
  printf("\n2. Reading memory that was never written\n");
  float back[4];
  BIREN_CHECK(birenMemcpy(back, d_data, sizeof back, birenMemcpyDeviceToHost));
  unsigned int bits;
  memcpy(&bits, &back[0], sizeof bits);
  printf("    d_data[0] before any write reads as %g (bits 0x%08X): poison, hard to mistake for data\n", (double)back[0], bits);
  BIREN_CHECK(birenMemcpy(d_data, h, N * sizeof(float), birenMemcpyHostToDevice));

  /* Bug 3: freeing twice. */
  printf("\n3. A double free\n");
  void *tmp;
  BIREN_CHECK(birenMalloc(&tmp, 4096));
  show("birenFree(tmp)", birenFree(tmp));
  show("birenFree(tmp)  (again)", birenFree(tmp));

  /* Bug 4 (a risk rather than a bug): an unregistered kernel's arguments are read by reference
   * when it runs, so `args` must outlive the kernel. */
  printf("\n4. A kernel launched without registration\n");
  float factor = 2.0f;
  void *args[] = {&d_data, &n, &factor};
  show("birenLaunchKernel(scale, ..., args, 0, NULL)",
       birenLaunchKernel(scale, birenDim3((N + 255) / 256, 1, 1), birenDim3(256, 1, 1), args, 0, NULL));
  BIREN_CHECK(birenDeviceSynchronize());
  printf("    the fix: BIREN_LAUNCH(scale, grid, block, 0, NULL, d_data, n, factor), or register it once:\n");
  const size_t sizes[] = {sizeof(float *), sizeof(int), sizeof(float)};
  show("birenKernelRegister(scale, \"scale\", 3, sizes)", birenKernelRegister(scale, "scale", 3, sizes));

  /* Bug 5: things created and never released. */
  printf("\n5. An event and an allocation that are never released\n");
  birenEvent_t forgotten_event;
  void *forgotten_buffer;
  BIREN_CHECK(birenEventCreate(&forgotten_event));
  BIREN_CHECK(birenMalloc(&forgotten_buffer, 1 << 20));
  printf("    (reported at birenDeviceReset below)\n");
  BIREN_CHECK(birenFree(d_data)); /* this one is released properly */

  /* Bug 6: a kernel writes one element past the end of its allocation. */
  printf("\n6. A kernel writes one element past the end of its allocation\n");
  float *d_small;
  const size_t fill_sizes[] = {sizeof(float *), sizeof(int)};
  BIREN_CHECK(birenKernelRegister(fill_off_by_one, "fill_off_by_one", 2, fill_sizes)); /* named in reports */
  BIREN_CHECK(birenMalloc((void **)&d_small, N * sizeof(float)));
  show("BIREN_LAUNCH(fill_off_by_one, ..., d_small, n)",
       BIREN_LAUNCH(fill_off_by_one, birenDim3((N + 255) / 256, 1, 1), birenDim3(256, 1, 1), 0, NULL, d_small, n));
  birenError_t e = birenDeviceSynchronize();
  show("birenDeviceSynchronize()", e);
  if (e == BIREN_ERROR_ILLEGAL_ADDRESS) {
    printf("    detected after the kernel: the launch failed, and the error is sticky --\n");
    show("birenMalloc(&p, 16)  (any later call on the device)", birenMalloc(&tmp, 16));
    printf("    -- until birenDeviceReset.\n");
  } else {
    printf("    not detected when the kernel ended (this build of the library does not check the\n"
           "    guard zones after each kernel); the damaged guard is reported when the memory is freed:\n");
    show("birenFree(d_small)", birenFree(d_small));
  }

  /* The leak report, and a clean device again. */
  printf("\n7. birenDeviceReset: what was still alive\n");
  show("birenDeviceReset()", birenDeviceReset());
  show("birenMalloc(&p, 16) after the reset", birenMalloc(&tmp, 16));
  BIREN_CHECK(birenFree(tmp));

  BIREN_CHECK(birenSetDeviceValidator(0));
  BIREN_CHECK(birenSetValidatorCallback(NULL, NULL));
  printf("\nRun your program with BIREN_VALIDATOR=1 while debugging; turn it off to measure.\n");
  return 0;
}
