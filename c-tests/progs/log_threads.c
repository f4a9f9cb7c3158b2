/* Four threads make calls at once (one failing call each round); run with BIREN_LOG set
 * (see test_log.sh). */
#include "biren_runtime.h"
#include <pthread.h>
#include <stdio.h>

static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 200; i++) {
    int dev = -1;
    (void)birenGetDevice(&dev);
    (void)birenSetDevice(99); /* fails: BIREN_ERROR_INVALID_DEVICE */
  }
  return NULL;
}

int main(void) {
  pthread_t t[4];
  if (birenInit() != BIREN_SUCCESS) return 2;
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  return 0;
}
