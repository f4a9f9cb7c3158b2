/* threads.c -- a program with three host threads whose outcome depends on how their calls
 * and the device's operations interleave; used by c-tests/test_replay.sh to check that
 * BIREN_REPLAY repeats a BIREN_RECORD run exactly.
 *
 * Two workers, each with its own non-blocking stream, launch ROUNDS kernels that fold a number
 * into one shared accumulator (acc = acc * 31 + k: the order matters) and poll their stream
 * with birenStreamQuery until it is done, counting the NOT_READY answers. A third thread takes
 * snapshots of the accumulator with synchronous copies. The last line printed, "outcome: ...",
 * holds everything the interleaving decides. Nothing orders the workers: that is the point.
 *
 * Variants (argv[1]), to replay a recording against a program that behaves differently:
 *   other   worker 1 calls birenDeviceSynchronize where it called birenStreamQuery
 *   short   worker 1 stops after its first round (the others' later turns never come) */
#include "biren_runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 6, SNAPS = 4 };

#define CHECK(call)                                                                  \
  do {                                                                               \
    birenError_t e_ = (call);                                                        \
    if (e_ != BIREN_SUCCESS) {                                                       \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,           \
              birenGetErrorName(e_));                                                \
      exit(2);                                                                       \
    }                                                                                \
  } while (0)

/* mix(unsigned long *acc, unsigned long k): *acc = *acc * 31 + k, after some busy work. */
static void mix(void **args) {
  unsigned long *acc = *(unsigned long **)args[0];
  unsigned long k = *(unsigned long *)args[1];
  volatile unsigned long spin = 0;
  for (unsigned long i = 0; i < 20000 + 5000 * (k % 7); i++) spin += i;
  *acc = *acc * 31 + k;
}

static unsigned long *acc;
static const char *variant = "";

struct worker {
  int id;
  birenStream_t s;
  int not_ready;
};

static void *work(void *p) {
  struct worker *w = p;
  for (unsigned long i = 0; i < ROUNDS; i++) {
    unsigned long k = (unsigned long)w->id * 100 + i;
    CHECK(BIREN_LAUNCH(mix, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, w->s, acc, k));
    if (w->id == 1 && strcmp(variant, "other") == 0) {
      CHECK(birenDeviceSynchronize());
      continue;
    }
    for (;;) {
      birenError_t e = birenStreamQuery(w->s);
      if (e == BIREN_SUCCESS) break;
      if (e != BIREN_ERROR_NOT_READY) CHECK(e);
      w->not_ready++;
    }
    if (w->id == 1 && strcmp(variant, "short") == 0) break;
  }
  return NULL;
}

static unsigned long snaps[SNAPS];

static void *watch(void *p) {
  (void)p;
  for (int i = 0; i < SNAPS; i++) {
    CHECK(birenMemcpy(&snaps[i], acc, sizeof *acc, birenMemcpyDeviceToHost));
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) variant = argv[1];
  CHECK(birenInit());
  size_t sizes[2] = {sizeof(void *), sizeof(unsigned long)};
  CHECK(birenKernelRegister(mix, "mix", 2, sizes));
  CHECK(birenMalloc((void **)&acc, sizeof *acc));
  CHECK(birenMemset(acc, 0, sizeof *acc));
  struct worker w[2];
  pthread_t t[3];
  for (int i = 0; i < 2; i++) {
    w[i].id = i;
    w[i].not_ready = 0;
    CHECK(birenStreamCreateWithFlags(&w[i].s, birenStreamNonBlocking));
  }
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, &w[i]);
  pthread_create(&t[2], NULL, watch, NULL);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  unsigned long final = 0;
  CHECK(birenMemcpy(&final, acc, sizeof final, birenMemcpyDeviceToHost));
  for (int i = 0; i < 2; i++) CHECK(birenStreamDestroy(w[i].s));
  CHECK(birenFree(acc));
  printf("outcome: acc=%lu not_ready=%d,%d snaps=%lu,%lu,%lu,%lu\n", final, w[0].not_ready,
         w[1].not_ready, snaps[0], snaps[1], snaps[2], snaps[3]);
  return 0;
}
