/* 01_errors.c -- every call returns a birenError_t: check it (seed, section 4.1.2).
 *
 * Build alone (from the repository root, after `make`):
 *   cc -std=c99 -Iinclude examples-c/01_errors.c -Ltarget/release -Wl,-rpath,$PWD/target/release -lbiren_runtime -o errors
 *
 * Shows: the seed's CHECK_BIREN macro, unchanged, and what it prints when a call fails; a call
 * made before birenInit (BIREN_ERROR_NOT_INITIALIZED); an out-of-bounds birenMemcpy that is
 * refused with BIREN_ERROR_OUT_OF_BOUNDS and writes nothing; birenGetErrorName/String and the
 * per-thread last error.
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The seed's macro, verbatim. (The header also offers BIREN_CHECK, which prints the error's
 * name and text and the failing call as well.) */
#define CHECK_BIREN(call) \
do { \
birenError_t err = call; \
if (err != BIREN_SUCCESS) { \
fprintf(stderr, "BIREN error %d at %s:%d\n", err, __FILE__, __LINE__); \
exit(EXIT_FAILURE); \
} \
} while(0)

static void show(const char *what, birenError_t e) {
  printf("  %-44s -> %s (%d): %s\n", what, birenGetErrorName(e), (int)e, birenGetErrorString(e));
}

int main(void) {
  printf("01_errors: every BIREN call returns a birenError_t\n\n");

  /* 1. Before birenInit. The seed's story: a team called birenMalloc before birenInit. */
  printf("1. A call before birenInit()\n");
  void *early = NULL;
  show("birenMalloc(&p, 1024) before birenInit", birenMalloc(&early, 1024));
  printf("  p is untouched (out-parameters are written only on success): %s\n", early == NULL ? "NULL" : "written!");

  /* The same call wrapped in CHECK_BIREN ends the process. Run it in a child process, its
   * stderr captured through a pipe, so that this demo can show what the macro printed. */
  int fds[2];
  fflush(stdout);
  fflush(stderr);
  if (pipe(fds) == 0) {
    pid_t child = fork();
    if (child == 0) {
      dup2(fds[1], STDERR_FILENO);
      close(fds[0]);
      void *d_ptr;
      CHECK_BIREN(birenMalloc(&d_ptr, 1024)); /* fails: prints "BIREN error 3 at ..." and exits */
      _exit(0);
    }
    close(fds[1]);
    char text[1024];
    size_t len = 0;
    ssize_t n;
    while (len < sizeof text - 1 && (n = read(fds[0], text + len, sizeof text - 1 - len)) > 0) len += (size_t)n;
    text[len] = 0;
    close(fds[0]);
    int status = 0;
    if (child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status)) {
      printf("  CHECK_BIREN(birenMalloc(&d_ptr, 1024)) exited with status %d after printing on stderr:\n", WEXITSTATUS(status));
      for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) printf("    %s\n", line);
    }
  }

  /* 2. Initialize first, then work: the seed's usage example. */
  printf("\n2. birenInit() first, then the seed's calls under CHECK_BIREN\n");
  CHECK_BIREN(birenInit());
  int version = 0;
  CHECK_BIREN(birenRuntimeGetVersion(&version));
  printf("  BIREN runtime %d.%d initialized\n", version / 1000, (version % 1000) / 10);

  enum { N = 256 };
  size_t size = N * sizeof(float);
  float h_ptr[N], h_back[N];
  for (int i = 0; i < N; i++) h_ptr[i] = (float)i;
  void *d_ptr;
  CHECK_BIREN(birenMalloc(&d_ptr, size));
  CHECK_BIREN(birenMemcpy(d_ptr, h_ptr, size, birenMemcpyHostToDevice));
  printf("  birenMalloc(%zu bytes) and birenMemcpy host->device: BIREN_SUCCESS\n", size);

  /* 3. An out-of-bounds copy: the seed's "birenMemcpy failed because the address was out of
   * bounds, and you did not check". The runtime refuses it before writing a single byte. */
  printf("\n3. An out-of-bounds copy is refused, and nothing is written\n");
  float big[2 * N];
  for (int i = 0; i < 2 * N; i++) big[i] = -1.0f;
  birenError_t e = birenMemcpy(d_ptr, big, 2 * size, birenMemcpyHostToDevice);
  show("birenMemcpy(d_ptr, big, 2*size, HostToDevice)", e);
  e = birenMemcpy((char *)d_ptr + size - 16, big, 32, birenMemcpyHostToDevice);
  show("birenMemcpy(d_ptr+size-16, big, 32, ...)", e);
  CHECK_BIREN(birenMemcpy(h_back, d_ptr, size, birenMemcpyDeviceToHost));
  printf("  device buffer after the refused copies: %s (h_back[0]=%g, h_back[%d]=%g)\n",
         memcmp(h_back, h_ptr, size) == 0 ? "unchanged" : "MODIFIED", (double)h_back[0], N - 1, (double)h_back[N - 1]);

  /* 4. The last error: every failing call sets it; Get returns and clears it, Peek only returns. */
  printf("\n4. The per-thread last error\n");
  show("birenPeekAtLastError()", birenPeekAtLastError());
  show("birenGetLastError()", birenGetLastError());
  show("birenGetLastError() again (it was cleared)", birenGetLastError());

  /* 5. A few more mistakes and their codes. */
  printf("\n5. Other mistakes, other codes\n");
  int host_var = 0;
  show("birenFree(&host_var)", birenFree(&host_var));
  show("birenMemcpy(..., (birenMemcpyKind)7)", birenMemcpy(h_back, d_ptr, 4, (birenMemcpyKind)7));
  show("birenStreamSynchronize(forged handle)", birenStreamSynchronize((birenStream_t)(uintptr_t)0x1234));
  show("birenSetDevice(42)", birenSetDevice(42));
  show("birenLaunchKernel(NULL, ...)", birenLaunchKernel(NULL, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL));

  /* 6. Names and texts never return NULL, even for values that are not codes. */
  printf("\n6. birenGetErrorName / birenGetErrorString, for every code\n");
  static const birenError_t all[] = {
      BIREN_SUCCESS, BIREN_ERROR_INVALID_VALUE, BIREN_ERROR_OUT_OF_MEMORY, BIREN_ERROR_NOT_INITIALIZED,
      BIREN_ERROR_INVALID_DEVICE, BIREN_ERROR_INVALID_HANDLE, BIREN_ERROR_INVALID_DEVICE_POINTER,
      BIREN_ERROR_OUT_OF_BOUNDS, BIREN_ERROR_INVALID_MEMCPY_DIRECTION, BIREN_ERROR_INVALID_CONFIGURATION,
      BIREN_ERROR_NOT_READY, BIREN_ERROR_DEADLOCK, BIREN_ERROR_LAUNCH_FAILURE, BIREN_ERROR_ILLEGAL_ADDRESS,
      BIREN_ERROR_NOT_PERMITTED, BIREN_ERROR_NOT_SUPPORTED, BIREN_ERROR_UNKNOWN, (birenError_t)12345};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    printf("  %5d  %-36s %s\n", (int)all[i], birenGetErrorName(all[i]), birenGetErrorString(all[i]));
  }

  CHECK_BIREN(birenFree(d_ptr));
  printf("\nDone: check every call (CHECK_BIREN or BIREN_CHECK), and a failure never goes unnoticed.\n");
  return 0;
}
