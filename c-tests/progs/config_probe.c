/* Reports what the runtime made of its environment, one `key=value` line per fact, for
 * c-tests/test_config.sh. Usage: config_probe [action]. Actions:
 *   (none)     birenInit, then the device count and each device's properties and policy
 *   badfree    ... then birenFree of a host pointer (the validator, if on, reports it)
 *   oom        ... then birenMalloc of the whole capacity, then of one more byte
 *   retry      after a failed birenInit, unset every BIREN_* variable and call birenInit again
 *   late       set BIREN_COMPUTE_UNITS=2 in the process before birenInit (read at init, not load)
 * Error codes are printed by name; the process exits 0 unless the probe itself breaks. */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const config_vars[] = {"BIREN_DEVICE_COUNT", "BIREN_COMPUTE_UNITS", "BIREN_DEVICE_MEMORY",
                                          "BIREN_SCHEDULING", "BIREN_VALIDATOR"};

static void report_devices(void) {
  int count = -1;
  birenError_t e = birenGetDeviceCount(&count);
  printf("device_count=%d\n", e == BIREN_SUCCESS ? count : -1);
  for (int i = 0; i < count; i++) {
    birenDeviceProp p;
    size_t free_b = 0, total_b = 0;
    birenSchedulingPolicy policy = birenSchedulePreemptive;
    if (birenGetDeviceProperties(&p, i) != BIREN_SUCCESS || birenSetDevice(i) != BIREN_SUCCESS ||
        birenMemGetInfo(&free_b, &total_b) != BIREN_SUCCESS || birenDeviceGetSchedulingPolicy(&policy) != BIREN_SUCCESS) {
      printf("dev%d=unreadable\n", i);
      continue;
    }
    printf("dev%d.units=%d\n", i, p.multiProcessorCount);
    printf("dev%d.mem=%zu\n", i, p.totalGlobalMem);
    printf("dev%d.total=%zu\n", i, total_b);
    printf("dev%d.free=%zu\n", i, free_b);
    printf("dev%d.policy=%s\n", i, policy == birenScheduleCooperative ? "cooperative" : policy == birenSchedulePreemptive ? "preemptive" : "?");
  }
  printf("set_device_past_count=%s\n", birenGetErrorName(birenSetDevice(count)));
  (void)birenSetDevice(0);
}

int main(int argc, char **argv) {
  const char *action = argc > 1 ? argv[1] : "";
  if (strcmp(action, "late") == 0) setenv("BIREN_COMPUTE_UNITS", "2", 1);

  birenError_t e = birenInit();
  printf("init=%s\n", birenGetErrorName(e));
  printf("last_error=%s\n", birenGetErrorName(birenGetLastError()));
  if (e != BIREN_SUCCESS) {
    void *p = NULL;
    printf("malloc_after_failed_init=%s\n", birenGetErrorName(birenMalloc(&p, 16)));
    if (strcmp(action, "retry") == 0) {
      for (size_t i = 0; i < sizeof config_vars / sizeof config_vars[0]; i++) unsetenv(config_vars[i]);
      e = birenInit();
      printf("retry=%s\n", birenGetErrorName(e));
      if (e == BIREN_SUCCESS) report_devices();
    }
    return 0;
  }
  report_devices();

  if (strcmp(action, "badfree") == 0) {
    int local = 0;
    fflush(stdout);
    printf("badfree=%s\n", birenGetErrorName(birenFree(&local)));
  } else if (strcmp(action, "oom") == 0) {
    size_t free_b = 0, total_b = 0;
    void *all = NULL, *more = NULL;
    (void)birenMemGetInfo(&free_b, &total_b);
    printf("oom_full=%s\n", birenGetErrorName(birenMalloc(&all, total_b)));
    printf("oom_more=%s\n", birenGetErrorName(birenMalloc(&more, 1)));
    printf("oom_free_after=%s\n", birenGetErrorName(birenFree(all)));
    printf("oom_more_after_free=%s\n", birenGetErrorName(birenMalloc(&more, 1)));
    (void)birenFree(more);
    /* Each device has its own capacity. */
    int count = 0;
    if (birenGetDeviceCount(&count) == BIREN_SUCCESS && count > 1) {
      void *other = NULL;
      (void)birenMalloc(&all, total_b);
      (void)birenSetDevice(1);
      printf("oom_other_device_full=%s\n", birenGetErrorName(birenMalloc(&other, total_b)));
      (void)birenFree(other);
      (void)birenSetDevice(0);
      (void)birenFree(all);
    }
  }
  return 0;
}
