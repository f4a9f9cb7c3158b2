/* 09_graph.c -- batch your API calls: the seed's image pipeline as a captured graph.
 *
 * Build alone (from the repository root, after `make`):
 *   cc -std=c99 -Iinclude examples-c/09_graph.c -Ltarget/release -Wl,-rpath,$PWD/target/release -lbiren_runtime -o graph
 *
 * The seed's first lesson is to batch API calls instead of issuing them one by one. Each frame of
 * the image pipeline goes through four stages -- upload, blur, edge detection, download -- and
 * is then consumed on the host. Two ways to run it, one host synchronization per frame in both:
 *   1. stream: the four stages enqueued one call at a time into a stream, every frame;
 *   2. graph:  the four stages captured once per input buffer (birenStreamBeginCapture ...
 *      birenStreamEndCapture), instantiated, and launched with one birenGraphLaunch per frame.
 * Each variant prints its frames per second and a checksum (both must agree). Numbers vary with
 * the machine and its load; they are printed, not asserted.
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { W = 128, H = 128, TILE = 16, INPUTS = 4, FRAMES = 200, ROUNDS = 5 };
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

/* Stage 3. args: (const float *in, float *out, float threshold): 1 where the gradient is steep. */
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
  float *h_out;        /* page-locked result */
  float *d_in, *d_tmp, *d_out;
  birenStream_t stream;
  birenGraphExec_t frame[INPUTS]; /* the captured pipeline, one per input buffer */
} pipeline;

/* The host's use of a finished frame: count its edge pixels. */
static long consume(const float *frame) {
  long n = 0;
  for (int i = 0; i < W * H; i++) n += frame[i] > 0.5f;
  return n;
}

/* The four stages of one frame, enqueued in `s`. */
static void enqueue_frame(pipeline *p, const float *input, birenStream_t s) {
  float threshold = 0.02f;
  dim3 grid = birenDim3(W / TILE, H / TILE, 1), block = birenDim3(TILE, TILE, 1);
  BIREN_CHECK(birenMemcpyAsync(p->d_in, input, FRAME_BYTES, birenMemcpyHostToDevice, s));
  BIREN_CHECK(BIREN_LAUNCH(blur, grid, block, 0, s, p->d_in, p->d_tmp));
  BIREN_CHECK(BIREN_LAUNCH(edges, grid, block, 0, s, p->d_tmp, p->d_out, threshold));
  BIREN_CHECK(birenMemcpyAsync(p->h_out, p->d_out, FRAME_BYTES, birenMemcpyDeviceToHost, s));
}

/* 1. Four calls per frame into the stream, one stream synchronize per frame. */
static long run_stream(pipeline *p, int frames) {
  long check = 0;
  for (int f = 0; f < frames; f++) {
    enqueue_frame(p, p->h_in[f % INPUTS], p->stream);
    BIREN_CHECK(birenStreamSynchronize(p->stream));
    check += consume(p->h_out);
  }
  return check;
}

/* 2. One graph launch per frame, one stream synchronize per frame. */
static long run_graph(pipeline *p, int frames) {
  long check = 0;
  for (int f = 0; f < frames; f++) {
    BIREN_CHECK(birenGraphLaunch(p->frame[f % INPUTS], p->stream));
    BIREN_CHECK(birenStreamSynchronize(p->stream));
    check += consume(p->h_out);
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
  BIREN_CHECK(birenMallocHost((void **)&p.h_out, FRAME_BYTES));
  BIREN_CHECK(birenMalloc((void **)&p.d_in, FRAME_BYTES));
  BIREN_CHECK(birenMalloc((void **)&p.d_tmp, FRAME_BYTES));
  BIREN_CHECK(birenMalloc((void **)&p.d_out, FRAME_BYTES));
  BIREN_CHECK(birenStreamCreate(&p.stream));

  /* Capture the pipeline once per input buffer: while capturing, nothing runs. */
  for (int i = 0; i < INPUTS; i++) {
    birenGraph_t g;
    BIREN_CHECK(birenStreamBeginCapture(p.stream, birenStreamCaptureModeGlobal));
    enqueue_frame(&p, p.h_in[i], p.stream);
    BIREN_CHECK(birenStreamEndCapture(p.stream, &g));
    if (i == 0) {
      size_t nodes = 0;
      BIREN_CHECK(birenGraphGetNodes(g, NULL, &nodes));
      printf("09_graph: captured one frame as a graph of %zu nodes (upload -> blur -> edges -> download)\n", nodes);
      if (getenv("BIREN_GRAPH_DOT")) BIREN_CHECK(birenGraphDebugDotPrint(g, getenv("BIREN_GRAPH_DOT"), 0));
    }
    BIREN_CHECK(birenGraphInstantiate(&p.frame[i], g, 0));
    BIREN_CHECK(birenGraphDestroy(g)); /* the exec does not need it */
  }

  printf("frames of %dx%d pixels, best of %d rounds of %d frames each\n\n", W, H, ROUNDS, FRAMES);
  struct {
    const char *name;
    long (*run)(pipeline *, int);
  } variants[] = {
      {"stream: 4 API calls per frame", run_stream},
      {"graph: 1 birenGraphLaunch per frame", run_graph},
  };
  double best[2] = {1e30, 1e30};
  long check[2] = {0, 0};
  for (int v = 0; v < 2; v++) variants[v].run(&p, 10); /* warm up */
  for (int r = 0; r < ROUNDS; r++) {
    for (int v = 0; v < 2; v++) {
      double t0 = now_s();
      check[v] = variants[v].run(&p, FRAMES);
      double t = (now_s() - t0) / FRAMES;
      if (t < best[v]) best[v] = t;
    }
  }
  for (int v = 0; v < 2; v++)
    printf("  %-38s %7.0f frames/s  (%6.1f us/frame, checksum %ld)\n", variants[v].name, 1.0 / best[v], best[v] * 1e6,
           check[v]);
  printf("\n  graph instead of stream: %+.0f%% frames/s\n", (best[0] / best[1] - 1.0) * 100.0);
  if (check[0] != check[1]) {
    printf("checksums differ!\n");
    return 1;
  }
  printf("\nRecord a sequence of launches and copies once, launch it with one call: the graph pays the API's\n"
         "per-call cost once per frame instead of once per stage (set BIREN_GRAPH_DOT=f.dot to see it).\n");

  for (int i = 0; i < INPUTS; i++) {
    BIREN_CHECK(birenGraphExecDestroy(p.frame[i]));
    BIREN_CHECK(birenFreeHost(p.h_in[i]));
  }
  BIREN_CHECK(birenFreeHost(p.h_out));
  BIREN_CHECK(birenFree(p.d_in));
  BIREN_CHECK(birenFree(p.d_tmp));
  BIREN_CHECK(birenFree(p.d_out));
  BIREN_CHECK(birenStreamDestroy(p.stream));
  return 0;
}
