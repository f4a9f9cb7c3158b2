/* 04_sync_granularity.c -- synchronize "few and precise" (seed, sections 4.3 and 4.3.1).
 *
 * Build alone (from the repository root, after `make`):
 *   cc -std=c99 -Iinclude examples-c/04_sync_granularity.c -Ltarget/release -Wl,-rpath,$PWD/target/release -lbiren_runtime -o sync_granularity
 *
 * The seed's image pipeline: each frame goes through four small stages -- upload, blur, edge
 * detection, download -- and is then consumed on the host. Three ways to synchronize it:
 *   1. birenDeviceSynchronize after every stage: 4 per frame (the seed's "before");
 *   2. the four stages in one stream, one birenDeviceSynchronize per frame (the seed's "after");
 *   3. events between the stages in two streams (compute: upload, blur, edges; copy: download),
 *      two frames in flight, one host sync per frame (birenEventSynchronize on the frame before).
 * Each variant prints its measured frames per second and a checksum (all three must agree).
 * Numbers vary with the machine and its load; they are printed, not asserted.
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { W = 128, H = 128, TILE = 16, INPUTS = 4, FRAMES = 100, ROUNDS = 5 };
#define FRAME_BYTES ((size_t)W * H * sizeof(float))

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Stage 2. args: (const float *in, float *out). 3x3 box blur, clamped at the borders. */
static void blur(void **args) {
  const float *in = *(const float **)args[0];
  float *out = *(float **)args[1];
  int x = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  int y = (int)(birenBlockIdx().y * birenBlockDim().y + birenThreadIdx().y);
  float s = 0.0f;
  for (int dy = -1; dy <= 1; dy++) {
    int yy = y + dy < 0 ? 0 : (y + dy >= H ? H - 1 : y + dy);
    for (int dx = -1; dx <= 1; dx++) {
      int xx = x + dx < 0 ? 0 : (x + dx >= W ? W - 1 : x + dx);
      s += in[yy * W + xx];
    }
  }
  out[y * W + x] = s / 9.0f;
}

/* Stage 3. args: (const float *in, float *out, float threshold). Edge map: 1 where the
 * gradient magnitude (squared) exceeds the threshold. */
static void edges(void **args) {
  const float *in = *(const float **)args[0];
  float *out = *(float **)args[1];
  float threshold = *(float *)args[2];
  int x = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  int y = (int)(birenBlockIdx().y * birenBlockDim().y + birenThreadIdx().y);
  int xl = x > 0 ? x - 1 : x, xr = x < W - 1 ? x + 1 : x;
  int yu = y > 0 ? y - 1 : y, yd = y < H - 1 ? y + 1 : y;
  float gx = in[y * W + xr] - in[y * W + xl];
  float gy = in[yd * W + x] - in[yu * W + x];
  out[y * W + x] = gx * gx + gy * gy > threshold ? 1.0f : 0.0f;
}

typedef struct pipeline {
  float *h_in[INPUTS]; /* page-locked input frames */
  float *h_out[2];     /* page-locked results, one per frame in flight */
  float *d_in[2], *d_tmp[2], *d_out[2];
  birenStream_t compute, copy;
  birenEvent_t computed[2], downloaded[2];
} pipeline;

/* The host's use of a finished frame: count its edge pixels. */
static long consume(const float *frame) {
  long n = 0;
  for (int i = 0; i < W * H; i++) n += frame[i] > 0.5f;
  return n;
}

static void upload(pipeline *p, int f, int slot, birenStream_t s) {
  BIREN_CHECK(birenMemcpyAsync(p->d_in[slot], p->h_in[f % INPUTS], FRAME_BYTES, birenMemcpyHostToDevice, s));
}
static void run_blur(pipeline *p, int slot, birenStream_t s) {
  BIREN_CHECK(BIREN_LAUNCH(blur, birenDim3(W / TILE, H / TILE, 1), birenDim3(TILE, TILE, 1), 0, s, p->d_in[slot], p->d_tmp[slot]));
}
static void run_edges(pipeline *p, int slot, birenStream_t s) {
  float threshold = 0.02f;
  BIREN_CHECK(BIREN_LAUNCH(edges, birenDim3(W / TILE, H / TILE, 1), birenDim3(TILE, TILE, 1), 0, s, p->d_tmp[slot], p->d_out[slot], threshold));
}
static void download(pipeline *p, int slot, birenStream_t s) {
  BIREN_CHECK(birenMemcpyAsync(p->h_out[slot], p->d_out[slot], FRAME_BYTES, birenMemcpyDeviceToHost, s));
}

/* 1. Four device-wide synchronizations per frame. */
static long sync_every_stage(pipeline *p, int frames) {
  long check = 0;
  for (int f = 0; f < frames; f++) {
    upload(p, f, 0, p->compute);
    BIREN_CHECK(birenDeviceSynchronize());
    run_blur(p, 0, p->compute);
    BIREN_CHECK(birenDeviceSynchronize());
    run_edges(p, 0, p->compute);
    BIREN_CHECK(birenDeviceSynchronize());
    download(p, 0, p->compute);
    BIREN_CHECK(birenDeviceSynchronize());
    check += consume(p->h_out[0]);
  }
  return check;
}

/* 2. The stages in stream order, one synchronization at the end of the frame. */
static long sync_every_frame(pipeline *p, int frames) {
  long check = 0;
  for (int f = 0; f < frames; f++) {
    upload(p, f, 0, p->compute);
    run_blur(p, 0, p->compute);
    run_edges(p, 0, p->compute);
    download(p, 0, p->compute);
    BIREN_CHECK(birenDeviceSynchronize());
    check += consume(p->h_out[0]);
  }
  return check;
}

/* 3. Events between the stages in two streams; while the host waits for frame f-1 and consumes
 * it, frame f is already being uploaded and computed. */
static long events_two_streams(pipeline *p, int frames) {
  long check = 0;
  for (int f = 0; f <= frames; f++) {
    if (f < frames) {
      int slot = f % 2; /* its buffers were last used by frame f-2, consumed at step f-1 */
      upload(p, f, slot, p->compute);
      run_blur(p, slot, p->compute);
      run_edges(p, slot, p->compute);
      BIREN_CHECK(birenEventRecord(p->computed[slot], p->compute));
      BIREN_CHECK(birenStreamWaitEvent(p->copy, p->computed[slot]));
      download(p, slot, p->copy);
      BIREN_CHECK(birenEventRecord(p->downloaded[slot], p->copy));
    }
    if (f > 0) {
      int prev = (f - 1) % 2;
      BIREN_CHECK(birenEventSynchronize(p->downloaded[prev])); /* the frame's one host sync */
      check += consume(p->h_out[prev]);
    }
  }
  return check;
}

int main(void) {
  BIREN_CHECK(birenInit());
  pipeline p;
  for (int i = 0; i < INPUTS; i++) {
    BIREN_CHECK(birenMallocHost((void **)&p.h_in[i], FRAME_BYTES));
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) /* moving diagonal stripes */
        p.h_in[i][y * W + x] = (float)(((x + y + 8 * i) / 8) % 2);
  }
  for (int s = 0; s < 2; s++) {
    BIREN_CHECK(birenMallocHost((void **)&p.h_out[s], FRAME_BYTES));
    BIREN_CHECK(birenMalloc((void **)&p.d_in[s], FRAME_BYTES));
    BIREN_CHECK(birenMalloc((void **)&p.d_tmp[s], FRAME_BYTES));
    BIREN_CHECK(birenMalloc((void **)&p.d_out[s], FRAME_BYTES));
    BIREN_CHECK(birenEventCreateWithFlags(&p.computed[s], birenEventDisableTiming));
    BIREN_CHECK(birenEventCreateWithFlags(&p.downloaded[s], birenEventDisableTiming));
  }
  BIREN_CHECK(birenStreamCreate(&p.compute));
  BIREN_CHECK(birenStreamCreate(&p.copy));

  printf("04_sync_granularity: frames of %dx%d pixels; stages: upload, blur, edges, download\n", W, H);
  printf("(best of %d rounds of %d frames each)\n\n", ROUNDS, FRAMES);
  struct {
    const char *name;
    long (*run)(pipeline *, int);
  } variants[] = {
      {"4 x birenDeviceSynchronize per frame", sync_every_stage},
      {"1 x birenDeviceSynchronize per frame", sync_every_frame},
      {"events, 2 streams, 1 host sync per frame", events_two_streams},
  };
  /* Rounds of FRAMES frames, the variants taking turns; each keeps its best round, which is the
   * least disturbed by whatever else the machine is doing. */
  double best[3] = {1e30, 1e30, 1e30};
  long check[3] = {0, 0, 0};
  for (int v = 0; v < 3; v++) variants[v].run(&p, 10); /* warm up */
  for (int r = 0; r < ROUNDS; r++) {
    for (int v = 0; v < 3; v++) {
      double t0 = now_s();
      check[v] = variants[v].run(&p, FRAMES);
      double t = (now_s() - t0) / FRAMES;
      if (t < best[v]) best[v] = t;
    }
  }
  double fps[3];
  for (int v = 0; v < 3; v++) {
    fps[v] = 1.0 / best[v];
    printf("  %-42s %7.0f frames/s  (%6.1f us/frame, checksum %ld)\n", variants[v].name, fps[v], best[v] * 1e6, check[v]);
  }
  printf("\n  one sync per frame instead of four: %+.0f%% frames/s (each extra sync cost ~%.0f us)\n",
         (fps[1] / fps[0] - 1.0) * 100.0, (best[0] - best[1]) / 3.0 * 1e6);
  printf("  events and two streams instead of four syncs: %+.0f%% frames/s\n", (fps[2] / fps[0] - 1.0) * 100.0);
  printf("\nEach host synchronization is a round trip of microseconds; sync few and precise.\n");

  for (int i = 0; i < INPUTS; i++) BIREN_CHECK(birenFreeHost(p.h_in[i]));
  for (int s = 0; s < 2; s++) {
    BIREN_CHECK(birenFreeHost(p.h_out[s]));
    BIREN_CHECK(birenFree(p.d_in[s]));
    BIREN_CHECK(birenFree(p.d_tmp[s]));
    BIREN_CHECK(birenFree(p.d_out[s]));
    BIREN_CHECK(birenEventDestroy(p.computed[s]));
    BIREN_CHECK(birenEventDestroy(p.downloaded[s]));
  }
  BIREN_CHECK(birenStreamDestroy(p.compute));
  BIREN_CHECK(birenStreamDestroy(p.copy));
  return 0;
}
