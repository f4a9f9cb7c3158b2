/* The kernel form (BIREN_KERNEL), barriers in it, warp operations, atomics, cooperative launch
 * and grid sync, and the failure of each misuse. Built by `make test-c` as C99 with the strict
 * flags; test_kernel_form.sh also builds it as C11 (generic names), as C++11, and with
 * BIREN_NO_INLINE_BUILTINS (the exported atomics), and runs each. */
#include "harness.h"

#include <math.h>
#include <stdint.h>

#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L)
#define HAVE_GENERIC 1
#else
#define HAVE_GENERIC 0
#endif

static void reset_device(void) {
  birenError_t e = birenDeviceReset();
  if (e != BIREN_SUCCESS) fprintf(stderr, "    before_each: birenDeviceReset returned %s\n", birenGetErrorName(e));
}

static int device_works(void);

/* ---- the form ------------------------------------------------------------------------------ */

BIREN_KERNEL(vadd, (const float *) a, (const float *) b, (float *) c, (int) n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

static int vector_add_in_the_kernel_form(void) {
  enum { N = 100000 };
  float *a = (float *)malloc(N * sizeof(float)), *b = (float *)malloc(N * sizeof(float)),
        *c = (float *)malloc(N * sizeof(float));
  float *da, *db, *dc;
  int n = N, i;
  for (i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i;
  }
  OK(birenMalloc((void **)&da, N * sizeof(float)));
  OK(birenMalloc((void **)&db, N * sizeof(float)));
  OK(birenMalloc((void **)&dc, N * sizeof(float)));
  OK(birenMemcpy(da, a, N * sizeof(float), birenMemcpyHostToDevice));
  OK(birenMemcpy(db, b, N * sizeof(float), birenMemcpyHostToDevice));
  OK(BIREN_LAUNCH(vadd, birenDim3((N + 255) / 256, 1, 1), birenDim3(256, 1, 1), 0, NULL, da, db, dc, n));
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(c, dc, N * sizeof(float), birenMemcpyDeviceToHost));
  for (i = 0; i < N; i++) EXPECT(c[i] == 3.0f * (float)i);
  OK(birenFree(da));
  OK(birenFree(db));
  OK(birenFree(dc));
  free(a);
  free(b);
  free(c);
  return 0;
}

/* Its arguments are copied at launch, whichever call launches it. */
BIREN_KERNEL(store_value, (int *) out, (int) v) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = v;
}

static void sleep_50ms(void *unused) {
  struct timespec ts;
  (void)unused;
  ts.tv_sec = 0;
  ts.tv_nsec = 50 * 1000 * 1000;
  nanosleep(&ts, NULL);
}

static int arguments_are_copied_at_launch(void) {
  int out1 = 0, out2 = 0, *p1 = &out1, *p2 = &out2, v = 7;
  void *args[2];
  birenStream_t s;
  OK(birenStreamCreate(&s));
  /* Hold the stream so that the kernels run after the values changed. */
  OK(birenLaunchHostFunc(s, sleep_50ms, NULL));
  OK(BIREN_LAUNCH(store_value, birenDim3(1, 1, 1), birenDim3(32, 1, 1), 0, s, p1, v));
  args[0] = &p2;
  args[1] = &v;
  OK(birenLaunchKernel(store_value, birenDim3(1, 1, 1), birenDim3(32, 1, 1), args, 0, s));
  v = 99;
  p2 = &out1; /* the launch copied the old pointer */
  OK(birenStreamSynchronize(s));
  EXPECT(out1 == 7 && out2 == 7);
  OK(birenStreamDestroy(s));
  return 0;
}

/* Every thread of a 3-D block runs once, with CUDA's names and the built-ins agreeing. */
BIREN_KERNEL(index_check, (int *) hits, (int *) bad) {
  dim3 t = birenThreadIdx(), b = birenBlockIdx(), bd = birenBlockDim(), g = birenGridDim();
  unsigned lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (t.x != threadIdx.x || t.y != threadIdx.y || t.z != threadIdx.z || b.x != blockIdx.x || b.y != blockIdx.y ||
      b.z != blockIdx.z || bd.x != blockDim.x || bd.z != blockDim.z || g.x != gridDim.x || g.y != gridDim.y ||
      birenLaneId() != lin % 32)
    __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&hits[blk * (blockDim.x * blockDim.y * blockDim.z) + lin], 1, __ATOMIC_RELAXED);
}

static int every_thread_of_3d_blocks_runs_once(void) {
  enum { BX = 7, BY = 5, BZ = 3, GX = 3, GY = 2, GZ = 2, T = BX * BY * BZ * GX * GY * GZ };
  static int hits[T];
  int bad = 0, *h = hits, *pb = &bad, i;
  memset(hits, 0, sizeof hits);
  OK(BIREN_LAUNCH(index_check, birenDim3(GX, GY, GZ), birenDim3(BX, BY, BZ), 0, NULL, h, pb));
  OK(birenDeviceSynchronize());
  EXPECT(bad == 0);
  for (i = 0; i < T; i++) EXPECT(hits[i] == 1);
  return 0;
}

/* Once a block has run through without waiting, later blocks run a range (the blocks a compute
 * unit took together) per call of the range entry, which moves blockIdx on itself: every thread
 * of every block runs once with the right indices, across rows and slices of the grid, with
 * 2-D/3-D blocks and 1-D ones, and with a kernel registered by the older call (one block per
 * call of the block entry). */
static int ranges_of_whole_blocks_see_every_block_index(void) {
  static const unsigned dims[][6] = {{9, 5, 3, 8, 4, 2}, {1000, 1, 1, 32, 1, 1}, {3, 70, 2, 5, 3, 1}};
  static const size_t sizes[] = {sizeof(int *), sizeof(int *)};
  int bad = 0, *pb = &bad, round, c;
  for (round = 0; round < 2; round++) {
    if (round == 1) /* the block entry alone, as a header before ranges registered it */
      OK(birenKernelRegisterBlock(index_check, "index_check", 2, sizes, index_check_biren_block_));
    for (c = 0; c < 3; c++) {
      const unsigned *d = dims[c];
      unsigned t = d[0] * d[1] * d[2] * d[3] * d[4] * d[5], i;
      int *hits = (int *)calloc(t, sizeof(int));
      bad = 0;
      OK(BIREN_LAUNCH(index_check, birenDim3(d[0], d[1], d[2]), birenDim3(d[3], d[4], d[5]), 0, NULL, hits, pb));
      OK(birenDeviceSynchronize());
      EXPECT(bad == 0);
      for (i = 0; i < t; i++)
        if (hits[i] != 1) {
          fprintf(stderr, "    registration %d, case %d: thread %u ran %d times\n", round, c, i, hits[i]);
          EXPECT(hits[i] == 1);
        }
      free(hits);
    }
  }
  OK(birenKernelRegisterBlocks(index_check, "index_check", 2, sizes, index_check_biren_block_,
                               index_check_biren_blocks_));
  return 0;
}

/* A registration's entries must all be given. */
static int register_blocks_refuses_missing_entries(void) {
  static const size_t sizes[] = {sizeof(int *), sizeof(int *)};
  EXPECT_CODE(birenKernelRegisterBlocks(index_check, "x", 2, sizes, index_check_biren_block_, NULL),
              BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenKernelRegisterBlocks(index_check, "x", 2, sizes, NULL, index_check_biren_blocks_),
              BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenKernelRegisterBlocks(NULL, "x", 2, sizes, index_check_biren_block_, index_check_biren_blocks_),
              BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenKernelRegisterBlocks(index_check, "x", 2, NULL, index_check_biren_block_, index_check_biren_blocks_),
              BIREN_ERROR_INVALID_VALUE);
  /* nothing was replaced: the kernel still runs with its own name and sizes */
  return every_thread_of_3d_blocks_runs_once();
}

/* A fault, or a trap, in a block in the middle of a range fails the launch naming that block;
 * the range's earlier blocks completed. */
BIREN_KERNEL(fail_in_block, (int *) done, (unsigned) bx, (unsigned) by, (int) trap, (volatile int *) wild) {
  if (blockIdx.x == bx && blockIdx.y == by && threadIdx.x == 3) {
    if (trap) birenTrap();
    *wild = 1;
  }
  if (threadIdx.x == 0) __atomic_fetch_add(&done[blockIdx.x + gridDim.x * blockIdx.y], 1, __ATOMIC_RELAXED);
}

static char fail_text[4096];
static void capture_fail(const char *msg, void *user) {
  size_t n = strlen(fail_text);
  (void)user;
  snprintf(fail_text + n, sizeof fail_text - n, "%s\n", msg);
}

static int a_failure_in_a_range_names_its_block(void) {
  enum { GX = 40, GY = 6 };
  static int done[GX * GY];
  int *pd = done, trap, i;
  volatile int *wild = (volatile int *)(uintptr_t)64;
  int first = 0;
  if (under_valgrind()) {
    /* the fault half's write to address 0x40 is the illegal access it tests: memcheck reports
     * it as an invalid write (an error) before the runtime's SIGSEGV handler sees it */
    printf("    skipped under valgrind: the fault half (a kernel writes to address 0x40: memcheck "
           "counts that deliberate invalid write as an error); the trap half runs\n");
    first = 1;
  }
  for (trap = first; trap < 2; trap++) {
    char want[64];
    memset(done, 0, sizeof done);
    fail_text[0] = 0;
    OK(birenSetValidatorCallback(capture_fail, NULL));
    OK(BIREN_LAUNCH(fail_in_block, birenDim3(GX, GY, 1), birenDim3(64, 1, 1), 0, NULL, pd, 29u, 4u, trap, wild));
    EXPECT_CODE(birenDeviceSynchronize(), trap ? BIREN_ERROR_LAUNCH_FAILURE : BIREN_ERROR_ILLEGAL_ADDRESS);
    OK(birenSetValidatorCallback(NULL, NULL));
    if (!trap) {
      snprintf(want, sizeof want, "of block (29,4,0)");
      if (strstr(fail_text, want) == NULL) fprintf(stderr, "    no \"%s\" in: %s\n", want, fail_text);
      EXPECT(strstr(fail_text, want) != NULL);
    }
    /* the failing block's thread 0 ran before thread 3 failed; blocks after it may not run */
    EXPECT(done[29 + GX * 4] == 1);
    for (i = 0; i < GX * GY; i++) EXPECT(done[i] <= 1);
    OK(birenDeviceReset());
  }
  return 0;
}

/* The most parameters the macro takes (16), of mixed types. */
BIREN_KERNEL(sixteen, (long long *) out, (int) a, (unsigned) b, (short) c, (char) d, (long) e, (float) f,
             (double) g, (int) h, (int) i, (int) j, (int) k, (int) l, (unsigned long long) m, (signed char) n,
             (int) o) {
  if (threadIdx.x == 0)
    *out = a + (long long)b + c + d + e + (long long)f + (long long)g + h + i + j + k + l + (long long)m + n + o;
}

static int sixteen_parameters_of_mixed_types(void) {
  long long out = 0, *po = &out;
  int a = 1, h = 8, i = 9, j = 10, k = 11, l = 12, o = 15;
  unsigned b = 2;
  short c = 3;
  char d = 4;
  long e = 5;
  float f = 6.0f;
  double g = 7.0;
  unsigned long long m = 13;
  signed char n = 14;
  OK(BIREN_LAUNCH(sixteen, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, po, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o));
  OK(birenDeviceSynchronize());
  EXPECT(out == 120);
  return 0;
}

/* `return` ends one thread, not the block. */
BIREN_KERNEL(early_return, (int *) count) {
  if (threadIdx.x % 2) return;
  __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
}

static int return_ends_only_the_thread(void) {
  int count = 0, *c = &count;
  OK(BIREN_LAUNCH(early_return, birenDim3(3, 1, 1), birenDim3(100, 1, 1), 0, NULL, c));
  OK(birenDeviceSynchronize());
  EXPECT(count == 150);
  return 0;
}

/* ---- barriers in the form -------------------------------------------------------------------- */

BIREN_KERNEL(tree_sum, (const int *) in, (int *) out) {
  int *sh = (int *)birenSharedMemory();
  unsigned t = threadIdx.x + blockDim.x * threadIdx.y, n = blockDim.x * blockDim.y, s;
  sh[t] = in[blockIdx.x * n + t];
  birenSyncThreads();
  for (s = n / 2; s > 0; s /= 2) {
    if (t < s) sh[t] += sh[t + s];
    birenSyncThreads();
  }
  if (t == 0) out[blockIdx.x] = sh[0];
}

static int check_tree_sum(dim3 block) {
  enum { BLOCKS = 40 };
  unsigned n = block.x * block.y, i;
  int *in = (int *)malloc(BLOCKS * n * sizeof(int)), out[BLOCKS], *din, *dout;
  for (i = 0; i < BLOCKS * n; i++) in[i] = (int)(i % 97);
  OK(birenMalloc((void **)&din, BLOCKS * n * sizeof(int)));
  OK(birenMalloc((void **)&dout, sizeof out));
  OK(birenMemcpy(din, in, BLOCKS * n * sizeof(int), birenMemcpyHostToDevice));
  OK(BIREN_LAUNCH(tree_sum, birenDim3(BLOCKS, 1, 1), block, n * sizeof(int), NULL, din, dout));
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(out, dout, sizeof out, birenMemcpyDeviceToHost));
  for (i = 0; i < BLOCKS; i++) {
    int want = 0;
    unsigned j;
    for (j = 0; j < n; j++) want += in[i * n + j];
    EXPECT(out[i] == want);
  }
  OK(birenFree(din));
  OK(birenFree(dout));
  free(in);
  return 0;
}

static int barrier_reduction_in_the_kernel_form(void) {
  EXPECT(check_tree_sum(birenDim3(256, 1, 1)) == 0);
  EXPECT(check_tree_sum(birenDim3(1024, 1, 1)) == 0);
  EXPECT(check_tree_sum(birenDim3(16, 16, 1)) == 0); /* barriers mid-row of a 2-D block */
  EXPECT(check_tree_sum(birenDim3(2, 1, 1)) == 0);
  return 0;
}

/* Blocks with blockIdx.x % 3 == which reverse their slice through shared memory (a barrier in
 * every thread); the others copy it (no barrier). Once a block's thread 0 has run through, the
 * runtime starts later blocks as one loop: a thread 0 that waits there must still work. */
BIREN_KERNEL(reverse_some, (const int *) in, (int *) out, (unsigned) which) {
  int *sh = (int *)birenSharedMemory();
  unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
  if (blockIdx.x % 3 != which) {
    out[base + t] = in[base + t];
    return;
  }
  sh[t] = in[base + t];
  birenSyncThreads();
  out[base + t] = sh[blockDim.x - 1 - t];
}

static int barriers_in_some_blocks_only(void) {
  enum { BLOCKS = 300, N = 256 };
  int *in = (int *)malloc(BLOCKS * N * sizeof(int)), *out = (int *)malloc(BLOCKS * N * sizeof(int)), *din, *dout;
  unsigned i, which;
  for (i = 0; i < BLOCKS * N; i++) in[i] = (int)(i * 7 + 1);
  OK(birenMalloc((void **)&din, BLOCKS * N * sizeof(int)));
  OK(birenMalloc((void **)&dout, BLOCKS * N * sizeof(int)));
  OK(birenMemcpy(din, in, BLOCKS * N * sizeof(int), birenMemcpyHostToDevice));
  for (which = 0; which < 3; which++) {
    OK(birenMemset(dout, 0, BLOCKS * N * sizeof(int)));
    OK(BIREN_LAUNCH(reverse_some, birenDim3(BLOCKS, 1, 1), birenDim3(N, 1, 1), N * sizeof(int), NULL, din, dout, which));
    OK(birenDeviceSynchronize());
    OK(birenMemcpy(out, dout, BLOCKS * N * sizeof(int), birenMemcpyDeviceToHost));
    for (i = 0; i < BLOCKS * N; i++) {
      unsigned b = i / N, t = i % N;
      EXPECT(out[i] == in[b % 3 == which ? b * N + (N - 1 - t) : i]);
    }
  }
  OK(birenFree(din));
  OK(birenFree(dout));
  free(in), free(out);
  return 0;
}

BIREN_KERNEL(divergent_sync) {
  if (threadIdx.x >= 3) birenSyncThreads();
}

BIREN_KERNEL(trap_at, (unsigned) which, (int *) after) {
  if (threadIdx.x == which) birenTrap();
  __atomic_fetch_add(after, 1, __ATOMIC_RELAXED);
}

static int misuse_of_barriers_and_trap_in_the_form_fails(void) {
  int after = 0, *pa = &after;
  unsigned which = 40;
  OK(birenLaunchKernel(divergent_sync, birenDim3(2, 1, 1), birenDim3(64, 1, 1), NULL, 0, NULL));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  OK(birenDeviceReset());
  OK(BIREN_LAUNCH(trap_at, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, NULL, which, pa));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT(after == 40);
  OK(birenDeviceReset());
  EXPECT(device_works() == 0);
  return 0;
}

/* After `rounds` barrier rounds (the runtime's ring mode), thread `leaves` returns while the others
 * wait at one more barrier, or thread `traps` traps; with neither, every thread adds its
 * neighbours' values and the sums are checked. Both forms. */
#define ROUNDS_BODY(t_, n_, blk)                                                                 \
  do {                                                                                           \
    unsigned *sh = (unsigned *)birenSharedMemory(), t = (t_), n = (n_), acc = 0;                 \
    int r;                                                                                       \
    for (r = 0; r < rounds; r++) {                                                               \
      sh[t] = t + (unsigned)r;                                                                   \
      birenSyncThreads();                                                                        \
      acc += sh[(t + 1) % n];                                                                    \
      birenSyncThreads();                                                                        \
    }                                                                                            \
    if (t + 1 == leaves) return;                                                                 \
    if (t + 1 == traps) birenTrap();                                                             \
    birenSyncThreads();                                                                          \
    out[(blk) * n + t] = acc;                                                                    \
  } while (0)

BIREN_KERNEL(rounds_then_misuse, (int) rounds, (unsigned) leaves, (unsigned) traps, (unsigned *) out) {
  ROUNDS_BODY(threadIdx.x, blockDim.x, blockIdx.x);
}

static void rounds_then_misuse_plain(void **args) {
  int rounds = *(int *)args[0];
  unsigned leaves = *(unsigned *)args[1], traps = *(unsigned *)args[2], *out = *(unsigned **)args[3];
  ROUNDS_BODY(birenThreadIdx().x, birenBlockDim().x, birenBlockIdx().x);
}

static int barriers_after_many_rounds_still_catch_misuse(void) {
  enum { BLOCKS = 64, THREADS = 128, ROUNDS = 5 };
  unsigned *out;
  int form, rounds = ROUNDS;
  OK(birenMallocManaged((void **)&out, BLOCKS * THREADS * sizeof *out, birenMemAttachGlobal));
  for (form = 0; form < 2; form++) {
    birenKernel_t k = form ? rounds_then_misuse : rounds_then_misuse_plain;
    unsigned none = 0, leaves = 77, traps = 5, i, t;
    void *ok_args[] = {&rounds, &none, &none, &out};
    void *leave_args[] = {&rounds, &leaves, &none, &out};
    void *trap_args[] = {&rounds, &none, &traps, &out};
    memset(out, 0, BLOCKS * THREADS * sizeof *out);
    OK(birenLaunchKernel(k, birenDim3(BLOCKS, 1, 1), birenDim3(THREADS, 1, 1), ok_args, THREADS * sizeof(unsigned), NULL));
    OK(birenDeviceSynchronize());
    for (i = 0; i < BLOCKS; i++)
      for (t = 0; t < THREADS; t++) {
        unsigned nb = (t + 1) % THREADS, want = ROUNDS * nb + ROUNDS * (ROUNDS - 1) / 2;
        EXPECT(out[i * THREADS + t] == want);
      }
    OK(birenLaunchKernel(k, birenDim3(BLOCKS, 1, 1), birenDim3(THREADS, 1, 1), leave_args, THREADS * sizeof(unsigned), NULL));
    EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
    OK(birenDeviceReset());
    OK(birenMallocManaged((void **)&out, BLOCKS * THREADS * sizeof *out, birenMemAttachGlobal));
    trap_args[3] = &out;
    ok_args[3] = &out;
    OK(birenLaunchKernel(k, birenDim3(BLOCKS, 1, 1), birenDim3(THREADS, 1, 1), trap_args, THREADS * sizeof(unsigned), NULL));
    EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
    OK(birenDeviceReset());
    OK(birenMallocManaged((void **)&out, BLOCKS * THREADS * sizeof *out, birenMemAttachGlobal));
  }
  OK(birenFree(out));
  EXPECT(device_works() == 0);
  return 0;
}

/* Five barrier sites, a warp shuffle between two of them in even rounds, three more barriers in odd
 * rounds: in ring mode a thread arriving at one site resumes a thread waiting at another (the
 * runtime's resume then jumps instead of returning), and fibers parked by a warp operation resume
 * through a barrier and the other way round. Every value is checked against a lockstep model. */
#define SITES_BODY(t, n, rounds, out, blk)                                                       \
  do {                                                                                           \
    unsigned *sh = (unsigned *)birenSharedMemory(), acc = 0, v;                                  \
    int r;                                                                                       \
    for (r = 0; r < (rounds); r++) {                                                             \
      sh[t] = (t) * (unsigned)r + 1u;                                                            \
      birenSyncThreads();                                                                        \
      v = sh[((t) + 1u) % (n)];                                                                  \
      if (r & 1) {                                                                               \
        birenSyncThreads();                                                                      \
        sh[t] = v * 2u;                                                                          \
        birenSyncThreads();                                                                      \
      } else {                                                                                   \
        v += (unsigned)birenShflDownSyncInt(0xffffffffu, (int)v, 1);                             \
      }                                                                                          \
      birenSyncThreads();                                                                        \
      acc += v + sh[((t) + 3u) % (n)];                                                           \
      birenSyncThreads();                                                                        \
    }                                                                                            \
    (out)[(blk) * (n) + (t)] = acc;                                                              \
  } while (0)

BIREN_KERNEL(five_sites, (int) rounds, (unsigned *) out) {
  SITES_BODY(threadIdx.x, blockDim.x, rounds, out, blockIdx.x);
}

static void five_sites_plain(void **args) {
  int rounds = *(int *)args[0];
  unsigned *out = *(unsigned **)args[1];
  SITES_BODY(birenThreadIdx().x, birenBlockDim().x, rounds, out, birenBlockIdx().x);
}

static unsigned five_sites_model(unsigned t, unsigned n, int rounds) {
  unsigned acc = 0, sh_, v, w;
  int r;
  for (r = 0; r < rounds; r++) {
    unsigned ru = (unsigned)r, nb = (t + 1u) % n, far = (t + 3u) % n;
    v = nb * ru + 1u;
    if (r & 1) {
      sh_ = (((far + 1u) % n) * ru + 1u) * 2u; /* sh[far] = 2 * (far's v) */
    } else {
      w = (t % 32u) < 31u ? ((nb + 1u) % n) * ru + 1u : v; /* lane + 1's v, or its own at lane 31 */
      v += w;
      sh_ = far * ru + 1u;
    }
    acc += v + sh_;
  }
  return acc;
}

static int barriers_at_five_sites_with_a_warp_operation_between(void) {
  enum { BLOCKS = 48, THREADS = 256, ROUNDS = 7 };
  unsigned *out, i, t;
  int form, rounds = ROUNDS;
  OK(birenMallocManaged((void **)&out, BLOCKS * THREADS * sizeof *out, birenMemAttachGlobal));
  for (form = 0; form < 2; form++) {
    birenKernel_t k = form ? five_sites : five_sites_plain;
    void *args[] = {&rounds, &out};
    memset(out, 0, BLOCKS * THREADS * sizeof *out);
    OK(birenLaunchKernel(k, birenDim3(BLOCKS, 1, 1), birenDim3(THREADS, 1, 1), args, THREADS * sizeof(unsigned), NULL));
    OK(birenDeviceSynchronize());
    for (i = 0; i < BLOCKS; i++)
      for (t = 0; t < THREADS; t++) EXPECT(out[i * THREADS + t] == five_sites_model(t, THREADS, ROUNDS));
  }
  OK(birenFree(out));
  return 0;
}

/* ---- warp operations ------------------------------------------------------------------------- */

/* Checks every shuffle of every type for lane `lane` in a group of lanes `mask` (full warp, or the
 * half warps with their own masks): the result against what CUDA defines. Runs in both forms. */
#define WIDTH 8
static int shfl_ok(unsigned lane, unsigned mask, int si, unsigned su, long long sl, unsigned long long sul, float sf,
                   double sd, int ui, int di, int xi) {
  unsigned seg = lane & ~(unsigned)(WIDTH - 1);
  unsigned src = seg + 5u % WIDTH;                       /* birenShflSync(.., 5, WIDTH) */
  unsigned up = (lane - seg >= 3) ? lane - 3 : lane;     /* birenShflUpSync(.., 3, WIDTH) */
  unsigned down = (lane - seg + 2 < WIDTH) ? lane + 2 : lane; /* birenShflDownSync(.., 2, WIDTH) */
  unsigned x = lane ^ 9u;                                /* birenShflXorSync(.., 9) full width */
  (void)mask;
  if (si != (int)src * 10 || su != src * 10u + 1u || sl != (long long)src * 10000000000LL ||
      sul != (unsigned long long)src << 40 || sf != (float)src + 0.5f || sd != (double)src + 0.25)
    return 0;
  if (ui != (int)up * 10 || di != (int)down * 10 || xi != (int)x * 10) return 0;
  return 1;
}

static void warp_body(unsigned lane, unsigned mask, int *bad) {
  int vi = (int)lane * 10;
  unsigned vu = lane * 10u + 1u;
  long long vl = (long long)lane * 10000000000LL;
  unsigned long long vul = (unsigned long long)lane << 40;
  float vf = (float)lane + 0.5f;
  double vd = (double)lane + 0.25;
  int si = birenShflSyncInt(mask, vi, 5, WIDTH);
  unsigned su = birenShflSyncUint(mask, vu, 5, WIDTH);
  long long sl = birenShflSyncLl(mask, vl, 5, WIDTH);
  unsigned long long sul = birenShflSyncUll(mask, vul, 5, WIDTH);
  float sf = birenShflSyncFloat(mask, vf, 5, WIDTH);
  double sd = birenShflSyncDouble(mask, vd, 5, WIDTH);
  int ui = birenShflUpSyncInt(mask, vi, 3, WIDTH);
  int di = birenShflDownSyncInt(mask, vi, 2, WIDTH);
  int xi = birenShflXorSyncInt(mask, vi, 9);
  if (!shfl_ok(lane, mask, si, su, sl, sul, sf, sd, ui, di, xi)) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
  /* the other types of up/down/xor move the same lanes */
  if (birenShflUpSyncDouble(mask, vd, 3, WIDTH) != (double)(ui / 10) + 0.25 ||
      birenShflDownSyncUll(mask, vul, 2, WIDTH) != (unsigned long long)(di / 10) << 40 ||
      birenShflXorSyncFloat(mask, vf, 9) != (float)(xi / 10) + 0.5f ||
      birenShflUpSyncUint(mask, vu, 3, WIDTH) != (unsigned)ui + 1u ||
      birenShflDownSyncLl(mask, vl, 2, WIDTH) != (long long)(di / 10) * 10000000000LL)
    __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
#if HAVE_GENERIC
  if (birenShflSync(mask, vd, 5, WIDTH) != sd || birenShflDownSync(mask, vi, 2, WIDTH) != di ||
      birenShflXorSync(mask, vf, 9) != (float)(xi / 10) + 0.5f || birenShflUpSync(mask, vu, 3, WIDTH) != (unsigned)ui + 1u)
    __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
#endif
  {
    /* votes: even lanes vote yes */
    unsigned evens = 0x55555555u & mask;
    if (birenBallotSync(mask, lane % 2 == 0) != evens) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
    if (!birenAnySync(mask, lane % 2 == 0) || birenAllSync(mask, lane % 2 == 0) || !birenAllSync(mask, 1) ||
        birenAnySync(mask, 0))
      __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
    birenSyncWarp(mask);
  }
}

/* The whole warp, or each half warp with its own mask. */
static unsigned group_mask(unsigned lane, int halves) {
  if (!halves) return 0xffffffffu;
  return lane < 16 ? 0x0000ffffu : 0xffff0000u;
}

BIREN_KERNEL(warp_form, (int) halves, (int *) bad) {
  unsigned lin = threadIdx.x + blockDim.x * threadIdx.y;
  unsigned lane = birenLaneId();
  if (lane != lin % 32 || birenActiveMask() != 0xffffffffu) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
  warp_body(lane, group_mask(lane, halves), bad);
}

static void warp_plain(void **args) {
  int halves = *(int *)args[0];
  int *bad = *(int **)args[1];
  unsigned lane = birenLaneId();
  if (lane != birenThreadIdx().x % 32) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
  warp_body(lane, group_mask(lane, halves), bad);
}

/* Long runs of full-mask warp operations (the runtime's warp ring): every warp does a different
 * number of them (warp-uniform), more than the ring's turn of 64, with the operation and its
 * argument changing from one to the next (one of width 16, which the runtime's assembly leaves
 * to its Rust path); then a barrier; then a run all warps do; in both forms.
 * Checked against the same steps computed on the host. */
#define RING_STEP(r, v, lane)                                                                     \
  switch ((r) % 7) {                                                                              \
  case 0: v += birenShflXorSyncUll(0xffffffffu, v, (int)((r) % 31 + 1)); break;                   \
  case 1: v = v * 3u + birenShflDownSyncUll(0xffffffffu, v, (unsigned)((r) % 33)); break;         \
  case 2: v ^= birenShflUpSyncUll(0xffffffffu, v, (unsigned)((r) % 9)) << 1; break;               \
  case 3: v += birenShflSyncUll(0xffffffffu, v, (int)(((r) * 7) % 32)); break;                    \
  case 4: v += birenBallotSync(0xffffffffu, (int)(v & 1u)); break;                                \
  case 5: v += birenShflDownSyncUll(0xffffffffu, v, 3, 16); break;                                \
  default: birenSyncWarp(0xffffffffu); v += lane; break;                                          \
  }
#define RING_BODY(t, blk, in, out, rounds)                                                        \
  unsigned lane = (t) % 32, warp = (t) / 32;                                                      \
  unsigned long long v = (in)[(blk) * 256 + (t)];                                                 \
  int r;                                                                                          \
  for (r = 0; r < (rounds) + (int)warp * 23; r++) { RING_STEP(r, v, lane) }                       \
  birenSyncThreads();                                                                             \
  for (r = 0; r < 70; r++) { RING_STEP(r + 5, v, lane) }                                          \
  (out)[(blk) * 256 + (t)] = v;

BIREN_KERNEL(warp_ring_form, (const unsigned long long *) in, (unsigned long long *) out, (int) rounds) {
  RING_BODY(threadIdx.x, blockIdx.x, in, out, rounds)
}

static void warp_ring_plain(void **args) {
  const unsigned long long *in = *(const unsigned long long **)args[0];
  unsigned long long *out = *(unsigned long long **)args[1];
  int rounds = *(int *)args[2];
  RING_BODY(birenThreadIdx().x, birenBlockIdx().x, in, out, rounds)
}

/* The host's lockstep: one step of the 32 lanes of a warp. */
static void ring_step_host(int r, unsigned long long *v) {
  unsigned long long o[32];
  unsigned l, ballot = 0;
  for (l = 0; l < 32; l++) {
    unsigned d;
    switch (r % 7) {
    case 0: o[l] = v[l] + v[l ^ (unsigned)(r % 31 + 1)]; break;
    case 1: d = (unsigned)(r % 33); o[l] = v[l] * 3u + (l + d < 32 ? v[l + d] : v[l]); break;
    case 2: d = (unsigned)(r % 9); o[l] = v[l] ^ ((d <= l ? v[l - d] : v[l]) << 1); break;
    case 3: o[l] = v[l] + v[(r * 7) % 32]; break;
    case 4: ballot |= (unsigned)(v[l] & 1u) << l; o[l] = v[l]; break;
    case 5: o[l] = v[l] + (l % 16 + 3 < 16 ? v[l + 3] : v[l]); break;
    default: o[l] = v[l] + l; break;
    }
  }
  for (l = 0; l < 32; l++) v[l] = r % 7 == 4 ? o[l] + ballot : o[l];
}

static int warp_ring_runs_with_changing_operations(void) {
  enum { BLOCKS = 6, N = 256 };
  unsigned long long *in = (unsigned long long *)malloc(BLOCKS * N * sizeof *in), *out = (unsigned long long *)malloc(BLOCKS * N * sizeof *out), *want = (unsigned long long *)malloc(BLOCKS * N * sizeof *want), *din, *dout;
  int rounds, form, i, r;
  for (i = 0; i < BLOCKS * N; i++) in[i] = (unsigned long long)i * 2654435761u + 17u;
  OK(birenMalloc((void **)&din, BLOCKS * N * sizeof *in));
  OK(birenMalloc((void **)&dout, BLOCKS * N * sizeof *out));
  OK(birenMemcpy(din, in, BLOCKS * N * sizeof *in, birenMemcpyHostToDevice));
  for (rounds = 1; rounds <= 130; rounds += 43) {
    for (i = 0; i < BLOCKS * N; i += 32) {
      unsigned w = (unsigned)(i % N) / 32;
      memcpy(want + i, in + i, 32 * sizeof *want);
      for (r = 0; r < rounds + (int)w * 23; r++) ring_step_host(r, want + i);
      for (r = 0; r < 70; r++) ring_step_host(r + 5, want + i);
    }
    for (form = 0; form < 2; form++) {
      OK(birenMemset(dout, 0, BLOCKS * N * sizeof *out));
      if (form) OK(BIREN_LAUNCH(warp_ring_form, birenDim3(BLOCKS, 1, 1), birenDim3(N, 1, 1), 0, NULL, din, dout, rounds));
      else OK(BIREN_LAUNCH(warp_ring_plain, birenDim3(BLOCKS, 1, 1), birenDim3(N, 1, 1), 0, NULL, din, dout, rounds));
      OK(birenDeviceSynchronize());
      OK(birenMemcpy(out, dout, BLOCKS * N * sizeof *out, birenMemcpyDeviceToHost));
      EXPECT(memcmp(out, want, BLOCKS * N * sizeof *out) == 0);
    }
  }
  OK(birenFree(din));
  OK(birenFree(dout));
  free(in), free(out), free(want);
  return 0;
}

/* Warp 0 waits, rendezvous after rendezvous, for a flag that thread 32 (warp 1) sets: a warp
 * going round its own rendezvous (the runtime's warp ring) still lets the block's other warps
 * run. The wait gives up after SPIN_CAP rendezvous, so that a runtime that never let warp 1 run
 * fails the test instead of hanging it. */
#define SPIN_CAP 200000
#define FLAG_BODY(t, blk, flags, ok)                                                              \
  if ((t) < 32) {                                                                                 \
    int spins = 0;                                                                                \
    while (!birenAllSync(0xffffffffu, __atomic_load_n(&(flags)[blk], __ATOMIC_ACQUIRE)) &&        \
           ++spins < SPIN_CAP) {                                                                  \
    }                                                                                             \
    if ((t) == 0) (ok)[blk] = spins < SPIN_CAP;                                                   \
  } else if ((t) == 32) {                                                                         \
    __atomic_store_n(&(flags)[blk], 1, __ATOMIC_RELEASE);                                         \
  }

BIREN_KERNEL(wait_for_other_warp_form, (int *) flags, (int *) ok) {
  FLAG_BODY(threadIdx.x, blockIdx.x, flags, ok)
}

static void wait_for_other_warp_plain(void **args) {
  int *flags = *(int **)args[0];
  int *ok = *(int **)args[1];
  FLAG_BODY(birenThreadIdx().x, birenBlockIdx().x, flags, ok)
}

static int a_warp_waiting_in_its_ring_lets_other_warps_run(void) {
  enum { BLOCKS = 4 };
  int flags[BLOCKS], ok[BLOCKS], *pf = flags, *po = ok, form, b;
  for (form = 0; form < 2; form++) {
    memset(flags, 0, sizeof flags);
    memset(ok, 0, sizeof ok);
    if (form) OK(BIREN_LAUNCH(wait_for_other_warp_form, birenDim3(BLOCKS, 1, 1), birenDim3(64, 1, 1), 0, NULL, pf, po));
    else OK(BIREN_LAUNCH(wait_for_other_warp_plain, birenDim3(BLOCKS, 1, 1), birenDim3(64, 1, 1), 0, NULL, pf, po));
    OK(birenDeviceSynchronize());
    for (b = 0; b < BLOCKS; b++) EXPECT(ok[b] == 1);
  }
  return 0;
}

static int every_warp_operation_with_full_and_partial_masks(void) {
  int halves, bad = 0, *pb = &bad;
  for (halves = 0; halves < 2; halves++) {
    OK(BIREN_LAUNCH(warp_form, birenDim3(3, 1, 1), birenDim3(128, 1, 1), 0, NULL, halves, pb));
    OK(BIREN_LAUNCH(warp_form, birenDim3(2, 1, 1), birenDim3(32, 4, 1), 0, NULL, halves, pb));
    OK(BIREN_LAUNCH(warp_plain, birenDim3(3, 1, 1), birenDim3(96, 1, 1), 0, NULL, halves, pb));
    OK(birenDeviceSynchronize());
    EXPECT(bad == 0);
  }
  return 0;
}

/* A warp reduction by shuffle after a block barrier (a common pattern), with a partial last
 * warp of 16 lanes: birenActiveMask names them, and its shuffles use width 16. */
BIREN_KERNEL(block_sum_warps, (const int *) in, (int *) out) {
  int *sh = (int *)birenSharedMemory();
  unsigned mask = birenActiveMask();
  int width = mask == 0xffffffffu ? 32 : 16;
  int v, d;
  sh[threadIdx.x] = in[threadIdx.x];
  birenSyncThreads();
  v = sh[threadIdx.x];
  for (d = width / 2; d > 0; d /= 2) v += birenShflDownSyncInt(mask, v, d, width);
  if (birenLaneId() == 0) __atomic_fetch_add(out, v, __ATOMIC_RELAXED);
}

static int shuffle_reduction_in_a_partial_warp(void) {
  int in[48], out = 0, *pin = in, *po = &out, i, want = 0;
  for (i = 0; i < 48; i++) want += (in[i] = i * 3 + 1);
  OK(BIREN_LAUNCH(block_sum_warps, birenDim3(1, 1, 1), birenDim3(48, 1, 1), 48 * sizeof(int), NULL, pin, po));
  OK(birenDeviceSynchronize());
  EXPECT(out == want);
  return 0;
}

BIREN_KERNEL(mask_without_caller) {
  if (birenLaneId() == 3) birenSyncWarp(0x1u);
}
/* Lanes 16-31 exist, are named and never arrive: they wait at a barrier instead. */
BIREN_KERNEL(mask_with_lane_waiting_elsewhere) {
  if (birenLaneId() < 16) birenSyncWarp(0xffffffffu);
  else birenSyncThreads();
}
/* Lanes that returned, or do not exist (a partial last warp), are not waited for (CUDA's). */
BIREN_KERNEL(mask_with_returned_lane) {
  if (birenLaneId() < 16) birenSyncWarp(0xffffffffu);
}
BIREN_KERNEL(full_mask_in_partial_warp) { birenSyncWarp(0xffffffffu); }
BIREN_KERNEL(bad_width) { (void)birenShflSyncInt(0xffffffffu, 1, 0, 3); }
/* The same misuses once the warp goes round its rendezvous (the runtime's warp ring, whose
 * usual case is assembly): an operation no warp has (birenWarpExchange's op from C, as another
 * language would pass it), a negative one, a width of 0. */
#define AFTER_RING_ROUNDS(misuse)                                                                 \
  int r;                                                                                          \
  for (r = 0; r < 8; r++) birenSyncWarp(0xffffffffu);                                             \
  (void)(misuse);
BIREN_KERNEL(unknown_op_in_ring) { AFTER_RING_ROUNDS(birenWarpExchange(biren_loop_, 0xffffffffu, 99, 1, 0, 32)) }
BIREN_KERNEL(negative_op_in_ring) { AFTER_RING_ROUNDS(birenWarpExchange(biren_loop_, 0xffffffffu, -1, 1, 0, 32)) }
BIREN_KERNEL(zero_width_in_ring) { AFTER_RING_ROUNDS(birenShflSyncInt(0xffffffffu, 1, 0, 0)) }

/* Warp operations in helper functions: with the loop passed (a parameter named biren_loop_), they
 * work even where thread 0 never waits; without it, there the launch fails. */
static int warp_sum_helper(birenKernelLoop *biren_loop_, int v) {
  int d;
  for (d = 16; d > 0; d /= 2) v += birenShflXorSyncInt(0xffffffffu, v, d);
  return v;
}
static int warp_sum_helper_without_loop(int v) { return birenShflXorSyncInt(0xffffffffu, v, 1); }

BIREN_KERNEL(second_warp_sums, (int *) out) {
  if (threadIdx.x >= 32) {
    int s = warp_sum_helper(biren_loop_, (int)threadIdx.x);
    if (threadIdx.x == 32) *out = s;
  }
}
BIREN_KERNEL(second_warp_helper_without_loop, (int *) out) {
  if (threadIdx.x >= 32) *out = warp_sum_helper_without_loop(1);
}

static int warp_operations_in_helper_functions(void) {
  int out = 0, *po = &out, want = 0, i;
  for (i = 32; i < 64; i++) want += i;
  OK(BIREN_LAUNCH(second_warp_sums, birenDim3(2, 1, 1), birenDim3(64, 1, 1), 0, NULL, po));
  OK(birenDeviceSynchronize());
  EXPECT(out == want);
  OK(BIREN_LAUNCH(second_warp_helper_without_loop, birenDim3(2, 1, 1), birenDim3(64, 1, 1), 0, NULL, po));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  OK(birenDeviceReset());
  return 0;
}

static int warp_misuse_fails_the_launch(void) {
  birenKernel_t bad[7];
  dim3 blocks[7];
  int i;
  bad[0] = mask_without_caller;
  bad[1] = mask_with_lane_waiting_elsewhere;
  bad[2] = mask_with_lane_waiting_elsewhere;
  bad[3] = bad_width;
  bad[4] = unknown_op_in_ring;
  bad[5] = negative_op_in_ring;
  bad[6] = zero_width_in_ring;
  blocks[0] = birenDim3(32, 1, 1);
  blocks[1] = birenDim3(64, 1, 1);
  blocks[2] = birenDim3(40, 1, 1);
  for (i = 3; i < 7; i++) blocks[i] = birenDim3(64, 1, 1);
  for (i = 0; i < 7; i++) {
    OK(birenLaunchKernel(bad[i], birenDim3(2, 1, 1), blocks[i], NULL, 0, NULL));
    EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
    OK(birenDeviceReset());
  }
  /* the same rendezvous with a correct mask works, and so do lanes that returned or do not
   * exist (a partial last warp of 8 lanes) */
  OK(birenLaunchKernel(full_mask_in_partial_warp, birenDim3(2, 1, 1), birenDim3(64, 1, 1), NULL, 0, NULL));
  OK(birenLaunchKernel(full_mask_in_partial_warp, birenDim3(2, 1, 1), birenDim3(40, 1, 1), NULL, 0, NULL));
  OK(birenLaunchKernel(mask_with_returned_lane, birenDim3(2, 1, 1), birenDim3(64, 1, 1), NULL, 0, NULL));
  OK(birenDeviceSynchronize());
  return 0;
}

/* ---- atomics ----------------------------------------------------------------------------------- */

typedef struct counters {
  int add_i, sub_i, min_i, max_i, and_i, or_i, xor_i, cas_i, exch_i, inc_i, dec_i;
  unsigned add_u, sub_u, min_u, max_u, and_u, or_u, xor_u, cas_u, exch_u, inc_u, dec_u;
  unsigned long long add_ull, sub_ull, min_ull, max_ull, and_ull, or_ull, xor_ull, cas_ull, exch_ull, inc_ull, dec_ull;
  float add_f, exch_f;
  double add_d, exch_d;
} counters;

enum { ABLOCKS = 64, ATHREADS = 128, AT = ABLOCKS * ATHREADS };

BIREN_KERNEL(hammer, (counters *) c) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  int old;
  birenAtomicAddInt(&c->add_i, 2);
  birenAtomicSubInt(&c->sub_i, 3);
  birenAtomicMinInt(&c->min_i, (int)g - 5000);
  birenAtomicMaxInt(&c->max_i, (int)g - 5000);
  birenAtomicAndInt(&c->and_i, ~(1 << (g % 31)));
  birenAtomicOrInt(&c->or_i, 1 << (g % 31));
  birenAtomicXorInt(&c->xor_i, 1 << (g % 8));
  do {
    old = c->cas_i;
  } while (birenAtomicCASInt(&c->cas_i, old, old + 1) != old);
  birenAtomicExchInt(&c->exch_i, (int)g);
  birenAtomicIncInt(&c->inc_i, 99);
  birenAtomicDecInt(&c->dec_i, 99);

  birenAtomicAddUint(&c->add_u, 2u);
  birenAtomicSubUint(&c->sub_u, 3u);
  birenAtomicMinUint(&c->min_u, g + 7u);
  birenAtomicMaxUint(&c->max_u, g + 7u);
  birenAtomicAndUint(&c->and_u, ~(1u << (g % 32)));
  birenAtomicOrUint(&c->or_u, 1u << (g % 32));
  birenAtomicXorUint(&c->xor_u, 1u << (g % 8));
  {
    unsigned o;
    do {
      o = c->cas_u;
    } while (birenAtomicCASUint(&c->cas_u, o, o + 1u) != o);
  }
  birenAtomicExchUint(&c->exch_u, g);
  birenAtomicIncUint(&c->inc_u, 99u);
  birenAtomicDecUint(&c->dec_u, 99u);

  birenAtomicAddUll(&c->add_ull, 1ull << 33);
  birenAtomicSubUll(&c->sub_ull, 1ull);
  birenAtomicMinUll(&c->min_ull, (unsigned long long)g << 32);
  birenAtomicMaxUll(&c->max_ull, (unsigned long long)g << 32);
  birenAtomicAndUll(&c->and_ull, ~(1ull << (g % 64)));
  birenAtomicOrUll(&c->or_ull, 1ull << (g % 64));
  birenAtomicXorUll(&c->xor_ull, 1ull << (g % 8));
  {
    unsigned long long o;
    do {
      o = c->cas_ull;
    } while (birenAtomicCASUll(&c->cas_ull, o, o + 3ull) != o);
  }
  birenAtomicExchUll(&c->exch_ull, (unsigned long long)g);
  birenAtomicIncUll(&c->inc_ull, 99ull);
  birenAtomicDecUll(&c->dec_ull, 99ull);

  birenAtomicAddFloat(&c->add_f, 0.5f);
  birenAtomicExchFloat(&c->exch_f, (float)g);
  birenAtomicAddDouble(&c->add_d, 0.25);
  birenAtomicExchDouble(&c->exch_d, (double)g);
#if HAVE_GENERIC
  birenAtomicAdd(&c->add_i, 1);
  birenAtomicAdd(&c->add_d, 0.25);
  birenAtomicMax(&c->max_u, 0u);
  (void)birenAtomicCAS(&c->cas_ull, 0ull, 0ull);
#endif
  birenThreadFence();
  birenThreadFenceBlock();
}

static int every_atomic_under_contention_from_many_blocks(void) {
  counters h, *d;
  int r;
  memset(&h, 0, sizeof h);
  h.min_i = 1 << 30;
  h.max_i = -(1 << 30);
  h.and_i = -1;
  h.min_u = 0xffffffffu;
  h.and_u = 0xffffffffu;
  h.min_ull = ~0ull;
  h.and_ull = ~0ull;
  h.dec_i = 50;
  h.dec_u = 50;
  h.dec_ull = 50;
  h.exch_i = -1;
  h.exch_u = 0xffffffffu;
  h.exch_ull = ~0ull;
  h.exch_f = -1.0f;
  h.exch_d = -1.0;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMemcpy(d, &h, sizeof h, birenMemcpyHostToDevice));
  for (r = 0; r < 2; r++) OK(BIREN_LAUNCH(hammer, birenDim3(ABLOCKS, 1, 1), birenDim3(ATHREADS, 1, 1), 0, NULL, d));
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h.add_i == 2 * AT * (2 + HAVE_GENERIC));
  EXPECT(h.sub_i == -3 * 2 * AT);
  EXPECT(h.min_i == -5000 && h.max_i == AT - 1 - 5000);
  EXPECT(h.and_i == (int)0x80000000u && h.or_i == 0x7fffffff && h.xor_i == 0);
  EXPECT(h.cas_i == 2 * AT);
  EXPECT(h.exch_i >= 0 && h.exch_i < AT);
  EXPECT(h.inc_i == (2 * AT) % 100);              /* wraps to 0 after 99 */
  EXPECT(h.dec_i == (int)((50 + 100 * 200 - 2 * AT) % 100)); /* 0 -> 99 */
  EXPECT(h.add_u == 4u * AT && h.sub_u == 0u - 6u * AT);
  EXPECT(h.min_u == 7u && h.max_u == AT - 1u + 7u);
  EXPECT(h.and_u == 0u && h.or_u == 0xffffffffu && h.xor_u == 0u);
  EXPECT(h.cas_u == 2u * AT);
  EXPECT(h.exch_u < (unsigned)AT);
  EXPECT(h.inc_u == (2u * AT) % 100u && h.dec_u == (unsigned)h.dec_i);
  EXPECT(h.add_ull == (unsigned long long)2 * AT << 33 && h.sub_ull == 0ull - 2ull * AT);
  EXPECT(h.min_ull == 0ull && h.max_ull == (unsigned long long)(AT - 1) << 32);
  EXPECT(h.and_ull == 0ull && h.or_ull == ~0ull && h.xor_ull == 0ull);
  EXPECT(h.cas_ull == 6ull * AT);
  EXPECT(h.exch_ull < (unsigned long long)AT);
  EXPECT(h.inc_ull == (unsigned long long)h.inc_u && h.dec_ull == (unsigned long long)h.dec_u);
  EXPECT(h.add_f == 0.5f * 2 * AT); /* exact: small multiples of 0.5 */
  EXPECT(h.add_d == 0.25 * 2 * AT * (1 + HAVE_GENERIC));
  EXPECT(h.exch_f >= 0.0f && h.exch_f < (float)AT && h.exch_d >= 0.0 && h.exch_d < (double)AT);
  OK(birenFree(d));
  return 0;
}

#if defined(BIREN_NO_INLINE_BUILTINS)
/* The exported forms refuse NULL and misaligned addresses without writing. */
static int exported_atomics_refuse_bad_addresses(void) {
  unsigned long long words[2] = {5, 5};
  char *bytes = (char *)words;
  EXPECT(birenAtomicAddInt(NULL, 1) == 0);
  EXPECT(birenAtomicAddDouble(NULL, 1.0) == 0.0);
  EXPECT(birenAtomicAddUll((unsigned long long *)(void *)(bytes + 1), 1) == 0);
  EXPECT(words[0] == 5 && words[1] == 5);
  EXPECT(birenAtomicAddUll(&words[1], 1) == 5 && words[1] == 6);
  return 0;
}
#endif

/* ---- cooperative launch and grid sync ------------------------------------------------------------ */

/* Two phases over the whole grid: every thread writes its slot, waits for the grid, then reads its
 * neighbour's slot (in another block), several times. */
BIREN_KERNEL(grid_phases, (int *) slots, (int *) bad, (int) rounds) {
  unsigned n = gridDim.x * blockDim.x, g = blockIdx.x * blockDim.x + threadIdx.x;
  int r;
  for (r = 0; r < rounds; r++) {
    slots[g] = r * 1000 + (int)g;
    birenGridSync();
    if (slots[(g + blockDim.x) % n] != r * 1000 + (int)((g + blockDim.x) % n)) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
    birenGridSync();
  }
}

static void grid_plain(void **args) {
  int *count = *(int **)args[0];
  int *bad = *(int **)args[1];
  dim3 g = birenGridDim(), b = birenBlockDim();
  __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
  birenGridSync();
  if (__atomic_load_n(count, __ATOMIC_RELAXED) != (int)(g.x * b.x)) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
}

static int cooperative_launch_and_grid_sync(void) {
  birenDeviceProp prop;
  int units, *slots, bad = 0, *pb = &bad, rounds = 3, count = 0, *pc = &count;
  void *args[2];
  OK(birenGetDeviceProperties(&prop, 0));
  units = prop.multiProcessorCount;
  OK(birenMalloc((void **)&slots, 4 * units * 128 * sizeof(int)));
  {
    void *a[3];
    a[0] = &slots;
    a[1] = &pb;
    a[2] = &rounds;
    OK(birenLaunchCooperativeKernel(grid_phases, birenDim3(4 * units, 1, 1), birenDim3(128, 1, 1), a, 0, NULL));
  }
  args[0] = &pc;
  args[1] = &pb;
  OK(birenLaunchCooperativeKernel(grid_plain, birenDim3(8, 1, 1), birenDim3(64, 1, 1), args, 0, NULL));
  OK(birenDeviceSynchronize());
  EXPECT(bad == 0);
  EXPECT(count == 8 * 64);
  OK(birenFree(slots));
  return 0;
}

BIREN_KERNEL(grid_sync_by_some, (int) which) {
  if ((int)blockIdx.x != which) birenGridSync();
}

static int cooperative_misuse_fails(void) {
  birenDeviceProp prop;
  int units, which = 1, *pn = NULL, *pb = NULL, rounds = 1;
  void *a[3];
  OK(birenGetDeviceProperties(&prop, 0));
  units = prop.multiProcessorCount;
  a[0] = &pn;
  a[1] = &pb;
  a[2] = &rounds;
  /* too many blocks, too many threads: refused, nothing enqueued */
  EXPECT_CODE(birenLaunchCooperativeKernel(grid_phases, birenDim3(32 * units + 1, 1, 1), birenDim3(1, 1, 1), a, 0, NULL),
              BIREN_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  EXPECT_CODE(birenLaunchCooperativeKernel(grid_phases, birenDim3(2 * units + 1, 1, 1), birenDim3(1024, 1, 1), a, 0, NULL),
              BIREN_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  EXPECT_CODE(birenLaunchCooperativeKernel(NULL, birenDim3(1, 1, 1), birenDim3(1, 1, 1), a, 0, NULL),
              BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenLaunchCooperativeKernel(grid_phases, birenDim3(1, 1, 1), birenDim3(2048, 1, 1), a, 0, NULL),
              BIREN_ERROR_INVALID_CONFIGURATION);
  OK(birenDeviceSynchronize());
  EXPECT(strcmp(birenGetErrorName(BIREN_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE), "BIREN_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE") == 0);
  /* grid sync outside a cooperative launch */
  OK(BIREN_LAUNCH(grid_sync_by_some, birenDim3(2, 1, 1), birenDim3(32, 1, 1), 0, NULL, which));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  OK(birenDeviceReset());
  /* a grid sync one block never reaches */
  {
    void *b[1];
    b[0] = &which;
    OK(birenLaunchCooperativeKernel(grid_sync_by_some, birenDim3(3, 1, 1), birenDim3(32, 1, 1), b, 0, NULL));
    EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
    OK(birenDeviceReset());
  }
  EXPECT(device_works() == 0);
  return 0;
}
/* Shared memory is per block in every launch kind: each thread writes its slot of a static
 * (BIREN_SHARED) and of the dynamic (birenSharedMemory) array, waits at a barrier, and reads its
 * neighbour's; in a cooperative launch again after a grid sync, when every block of the grid has
 * written its own values. */
#define SHARED_SLOTS 32
static void check_shared(const int *tile, const int *dyn, unsigned b, unsigned t, unsigned n, int round, int *bad) {
  unsigned u = (t + 1) % n;
  if (tile[u] != round * 100000 + (int)(b * 1000 + u)) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
  if (dyn[u] != round * 100000 + (int)(b * 1000 + u) + 7) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
}

BIREN_KERNEL(shared_per_block, (int *) bad, (int) coop) {
  BIREN_SHARED int tile[SHARED_SLOTS];
  int *dyn = (int *)birenSharedMemory();
  unsigned b = blockIdx.x, t = threadIdx.x, n = blockDim.x;
  int r;
  for (r = 0; r < 3; r++) {
    tile[t] = r * 100000 + (int)(b * 1000 + t);
    dyn[t] = r * 100000 + (int)(b * 1000 + t) + 7;
    birenSyncThreads();
    check_shared(tile, dyn, b, t, n, r, bad);
    if (coop) {
      birenGridSync();
      check_shared(tile, dyn, b, t, n, r, bad);
      birenGridSync();
    }
    birenSyncThreads();
  }
}

/* The same in a plain (per-thread) kernel. */
static void shared_per_block_plain(void **args) {
  BIREN_SHARED int tile[SHARED_SLOTS];
  int *bad = *(int **)args[0], coop = *(int *)args[1];
  int *dyn = (int *)birenSharedMemory();
  unsigned b = birenBlockIdx().x, t = birenThreadIdx().x, n = birenBlockDim().x;
  tile[t] = b * 1000 + t;
  dyn[t] = b * 1000 + t + 7;
  birenSyncThreads();
  check_shared(tile, dyn, b, t, n, 0, bad);
  if (coop) {
    birenGridSync();
    check_shared(tile, dyn, b, t, n, 0, bad);
  }
}

static int shared_memory_is_per_block_in_every_launch_kind(void) {
  int coop, bad = 0, *pb = &bad;
  void *args[2];
  args[0] = &pb;
  args[1] = &coop;
  for (coop = 0; coop < 2; coop++) {
    dim3 g = birenDim3(8, 1, 1), b = birenDim3(SHARED_SLOTS, 1, 1);
    size_t dyn = SHARED_SLOTS * sizeof(int);
    if (coop) {
      OK(birenLaunchCooperativeKernel(shared_per_block, g, b, args, dyn, NULL));
      OK(birenLaunchCooperativeKernel(shared_per_block_plain, g, b, args, dyn, NULL));
    } else {
      OK(birenLaunchKernel(shared_per_block, g, b, args, dyn, NULL));
      OK(birenLaunchKernel(shared_per_block_plain, g, b, args, dyn, NULL));
    }
    OK(birenDeviceSynchronize());
    if (bad != 0) fprintf(stderr, "    %s launch: %d reads of another block's value\n", coop ? "cooperative" : "ordinary", bad);
    EXPECT(bad == 0);
  }
  return 0;
}


/* ---- helpers ------------------------------------------------------------------------------------- */

BIREN_KERNEL(fill, (int *) p, (int) v) { p[threadIdx.x] = v; }

static int device_works(void) {
  int h[64], *d, v = 3, i;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(BIREN_LAUNCH(fill, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, NULL, d, v));
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  for (i = 0; i < 64; i++) EXPECT(h[i] == 3);
  OK(birenFree(d));
  return 0;
}

static const test_case tests[] = {
    TEST(vector_add_in_the_kernel_form),
    TEST(arguments_are_copied_at_launch),
    TEST(every_thread_of_3d_blocks_runs_once),
    TEST(return_ends_only_the_thread),
    TEST(sixteen_parameters_of_mixed_types),
    TEST(barrier_reduction_in_the_kernel_form),
    TEST(ranges_of_whole_blocks_see_every_block_index),
    TEST(register_blocks_refuses_missing_entries),
    TEST(a_failure_in_a_range_names_its_block),
    TEST(barriers_in_some_blocks_only),
    TEST(misuse_of_barriers_and_trap_in_the_form_fails),
    TEST(barriers_after_many_rounds_still_catch_misuse),
    TEST(barriers_at_five_sites_with_a_warp_operation_between),
    TEST(every_warp_operation_with_full_and_partial_masks),
    TEST(shuffle_reduction_in_a_partial_warp),
    TEST(warp_ring_runs_with_changing_operations),
    TEST(a_warp_waiting_in_its_ring_lets_other_warps_run),
    TEST(warp_misuse_fails_the_launch),
    TEST(warp_operations_in_helper_functions),
    TEST(every_atomic_under_contention_from_many_blocks),
#if defined(BIREN_NO_INLINE_BUILTINS)
    TEST(exported_atomics_refuse_bad_addresses),
#endif
    TEST(cooperative_launch_and_grid_sync),
    TEST(cooperative_misuse_fails),
    TEST(shared_memory_is_per_block_in_every_launch_kind),
};

int main(void) {
  if (getenv("BIREN_COMPUTE_UNITS") == NULL) setenv("BIREN_COMPUTE_UNITS", "2", 1);
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("kernel form", tests, reset_device, 60);
}
