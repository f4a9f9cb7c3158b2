/* Device memory between processes: birenIpcGetMemHandle, birenIpcOpenMemHandle,
 * birenIpcCloseMemHandle. The test runs itself a second time as the importing process. */
#define _GNU_SOURCE
#include "compat.h"
#include <stdint.h>
#include <sys/wait.h>

#define N 1024

static void add_one(void **args) {
  int *p = *(int **)args[0];
  p[birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x] += 1;
}

static const char *self_path;

static void to_hex(const birenIpcMemHandle_t *h, char *out) {
  const unsigned char *b = (const unsigned char *)h;
  for (size_t i = 0; i < sizeof *h; i++) sprintf(out + 2 * i, "%02x", b[i]);
}
static void from_hex(const char *in, birenIpcMemHandle_t *h) {
  unsigned char *b = (unsigned char *)h;
  for (size_t i = 0; i < sizeof *h; i++) {
    unsigned v = 0;
    sscanf(in + 2 * i, "%2x", &v);
    b[i] = (unsigned char)v;
  }
}

/* The importing process: checks the values, adds one with a kernel, checks the bounds. */
static int child(const char *hex) {
  compat_init();
  birenIpcMemHandle_t h;
  from_hex(hex, &h);
  int *d = NULL;
  EXPECT_FAIL(birenIpcOpenMemHandle((void **)&d, h, 0), BIREN_ERROR_INVALID_VALUE);
  OK(birenIpcOpenMemHandle((void **)&d, h, birenIpcMemLazyEnablePeerAccess));
  int host[N];
  OK(birenMemcpy(host, d, sizeof host, birenMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(host[i] == 3 * i);
  OK(BIREN_LAUNCH(add_one, birenDim3(N / 256, 1, 1), birenDim3(256, 1, 1), 0, NULL, d));
  OK(birenDeviceSynchronize());
  EXPECT_FAIL(birenMemcpy(host, d, sizeof host + 4, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenIpcCloseMemHandle(d));
  EXPECT_FAIL(birenIpcCloseMemHandle(d), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpy(host, d, 4, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_DEVICE_POINTER);
  return 0;
}

static int memory_is_shared_with_another_process(void) {
  int *d = NULL, host[N];
  OK(birenMalloc((void **)&d, sizeof host));
  for (int i = 0; i < N; i++) host[i] = 3 * i;
  OK(birenMemcpy(d, host, sizeof host, birenMemcpyHostToDevice));
  birenIpcMemHandle_t h;
  OK(birenIpcGetMemHandle(&h, d));
  char hex[2 * sizeof h + 1];
  to_hex(&h, hex);
  pid_t pid = fork();
  if (pid == 0) {
    execl(self_path, self_path, "--import", hex, (char *)NULL);
    _exit(99);
  }
  int status = 0;
  EXPECT(waitpid(pid, &status, 0) == pid);
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  OK(birenMemcpy(host, d, sizeof host, birenMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(host[i] == 3 * i + 1); /* the other process's kernel */
  OK(birenFree(d));
  return 0;
}

static int ipc_errors(void) {
  birenIpcMemHandle_t h;
  memset(&h, 0, sizeof h);
  int *d = NULL;
  void *p = (void *)0x9;
  OK(birenMalloc((void **)&d, 512));
  EXPECT_FAIL(birenIpcGetMemHandle(&h, d + 1), BIREN_ERROR_INVALID_DEVICE_POINTER);
  int local;
  EXPECT_FAIL(birenIpcGetMemHandle(&h, &local), BIREN_ERROR_INVALID_DEVICE_POINTER);
  EXPECT_FAIL(birenIpcGetMemHandle(NULL, d), BIREN_ERROR_INVALID_VALUE);
  /* Not a handle; a handle of this very process. */
  memset(&h, 0x42, sizeof h);
  EXPECT_FAIL(birenIpcOpenMemHandle(&p, h, birenIpcMemLazyEnablePeerAccess), BIREN_ERROR_INVALID_VALUE);
  OK(birenIpcGetMemHandle(&h, d));
  EXPECT_FAIL(birenIpcOpenMemHandle(&p, h, birenIpcMemLazyEnablePeerAccess), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenIpcOpenMemHandle(NULL, h, birenIpcMemLazyEnablePeerAccess), BIREN_ERROR_INVALID_VALUE);
  EXPECT(p == (void *)0x9);
  EXPECT_FAIL(birenIpcCloseMemHandle(d), BIREN_ERROR_INVALID_VALUE);
  capture_start();
  EXPECT_FAIL(birenIpcCloseMemHandle(NULL), BIREN_ERROR_INVALID_VALUE);
  capture_stop();
  EXPECT(captured("birenIpcCloseMemHandle"));
  OK(birenFree(d));
  return 0;
}

static const test_case tests[] = {
    TEST(memory_is_shared_with_another_process),
    TEST(ipc_errors),
};

int main(int argc, char **argv) {
  self_path = argv[0];
  unsetenv("BIREN_VALIDATOR");
  if (argc > 2 && strcmp(argv[1], "--import") == 0) return child(argv[2]);
  return RUN_TESTS("ipc", tests, compat_init, 30);
}
