/* Kernels on the simulated device: every thread of a grid runs once, barriers and shared memory,
 * birenTrap and divergent barriers, argument capture, launch configuration checks, and freeing
 * memory that queued work still uses. */
#include "timed_kernels.h"

/* ---- Every thread of a 3-D grid of 3-D blocks runs exactly once ----------------------------- */

/* args: (unsigned *counts, unsigned *bad, dim3 grid, dim3 block). counts[global id] += 1;
 * *bad counts threads that saw wrong dimensions or out-of-range indices. */
static void count_threads(void **args) {
  unsigned *counts = *(unsigned **)args[0];
  unsigned *bad = *(unsigned **)args[1];
  dim3 g = *(dim3 *)args[2], b = *(dim3 *)args[3];
  dim3 t = birenThreadIdx(), bi = birenBlockIdx(), bd = birenBlockDim(), gd = birenGridDim();
  if (bd.x != b.x || bd.y != b.y || bd.z != b.z || gd.x != g.x || gd.y != g.y || gd.z != g.z || t.x >= bd.x ||
      t.y >= bd.y || t.z >= bd.z || bi.x >= gd.x || bi.y >= gd.y || bi.z >= gd.z) {
    __atomic_fetch_add(bad, 1u, __ATOMIC_RELAXED);
    return;
  }
  size_t in_block = t.x + (size_t)bd.x * (t.y + (size_t)bd.y * t.z);
  size_t block = bi.x + (size_t)gd.x * (bi.y + (size_t)gd.y * bi.z);
  size_t id = block * ((size_t)bd.x * bd.y * bd.z) + in_block;
  __atomic_fetch_add(&counts[id], 1u, __ATOMIC_RELAXED);
}

static int check_every_thread_once(dim3 g, dim3 b) {
  size_t n = (size_t)g.x * g.y * g.z * b.x * b.y * b.z;
  unsigned *counts, *bad, hbad = 1;
  unsigned *h = malloc(n * sizeof *h);
  EXPECT(h != NULL);
  OK(birenMalloc((void **)&counts, n * sizeof *counts));
  OK(birenMalloc((void **)&bad, sizeof *bad));
  OK(birenMemset(counts, 0, n * sizeof *counts));
  OK(birenMemset(bad, 0, sizeof *bad));
  OK(BIREN_LAUNCH(count_threads, g, b, 0, NULL, counts, bad, g, b));
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(h, counts, n * sizeof *h, birenMemcpyDeviceToHost));
  OK(birenMemcpy(&hbad, bad, sizeof hbad, birenMemcpyDeviceToHost));
  EXPECT(hbad == 0);
  size_t wrong = 0;
  for (size_t i = 0; i < n; i++) wrong += h[i] != 1;
  free(h);
  if (wrong) fprintf(stderr, "    grid (%u,%u,%u) block (%u,%u,%u): %zu of %zu threads did not run exactly once\n", g.x,
                     g.y, g.z, b.x, b.y, b.z, wrong, n);
  EXPECT(wrong == 0);
  OK(birenFree(counts));
  OK(birenFree(bad));
  return 0;
}

static int grid3d_every_thread_runs_once(void) {
  EXPECT(check_every_thread_once(birenDim3(5, 3, 2), birenDim3(4, 4, 4)) == 0);
  EXPECT(check_every_thread_once(birenDim3(2, 3, 2), birenDim3(16, 8, 8)) == 0);  /* 1024 threads */
  EXPECT(check_every_thread_once(birenDim3(3, 1, 2), birenDim3(1, 2, 64)) == 0);  /* block z = 64 */
  EXPECT(check_every_thread_once(birenDim3(1, 700, 1), birenDim3(3, 1, 1)) == 0); /* tall grid */
  EXPECT(check_every_thread_once(birenDim3(4096, 1, 1), birenDim3(256, 1, 1)) == 0);
  return 0;
}

/* ---- Shared-memory tree reduction with barriers ----------------------------------------------- */

/* args: (const unsigned *in, unsigned long long *out). One partial sum per block. */
static void block_sum(void **args) {
  const unsigned *in = *(const unsigned **)args[0];
  unsigned long long *out = *(unsigned long long **)args[1];
  unsigned long long *sh = birenSharedMemory();
  unsigned t = birenThreadIdx().x, n = birenBlockDim().x, b = birenBlockIdx().x;
  sh[t] = in[(size_t)b * n + t];
  birenSyncThreads();
  for (unsigned s = n / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    birenSyncThreads();
  }
  if (t == 0) out[b] = sh[0];
}

/* Sums N values in blocks of `block` threads (a power of two) and checks every partial sum. */
static int check_tree_reduction(unsigned block, unsigned blocks, int reps) {
  size_t n = (size_t)block * blocks;
  unsigned *h = malloc(n * sizeof *h);
  unsigned long long *partial = malloc(blocks * sizeof *partial), *expect = calloc(blocks, sizeof *expect);
  EXPECT(h && partial && expect);
  for (unsigned i = 0; i < n; i++) {
    h[i] = (i * 2654435761u) ^ (i >> 3);
    expect[i / block] += h[i];
  }
  unsigned *din;
  unsigned long long *dout;
  OK(birenMalloc((void **)&din, n * sizeof *h));
  OK(birenMalloc((void **)&dout, blocks * sizeof *partial));
  OK(birenMemcpy(din, h, n * sizeof *h, birenMemcpyHostToDevice));
  for (int rep = 0; rep < reps; rep++) {
    OK(birenMemset(dout, 0, blocks * sizeof *partial));
    size_t shared = block * sizeof(unsigned long long);
    OK(BIREN_LAUNCH(block_sum, birenDim3(blocks, 1, 1), birenDim3(block, 1, 1), shared, NULL, din, dout));
    OK(birenMemcpy(partial, dout, blocks * sizeof *partial, birenMemcpyDeviceToHost));
    for (unsigned b = 0; b < blocks; b++) EXPECT(partial[b] == expect[b]);
  }
  OK(birenFree(din));
  OK(birenFree(dout));
  free(h);
  free(partial);
  free(expect);
  return 0;
}

static int shared_memory_tree_reduction_is_exact(void) {
  EXPECT(check_tree_reduction(256, 96, 5) == 0);
  EXPECT(check_tree_reduction(1024, 8, 2) == 0);
  EXPECT(check_tree_reduction(2, 64, 1) == 0);
  return 0;
}

/* args: (int *ok). Each block writes its block id into every slot of its shared memory, waits,
 * then checks no other block's id shows up: shared memory is per block. */
static void shared_is_per_block(void **args) {
  int *bad = *(int **)args[0];
  unsigned *sh = birenSharedMemory();
  unsigned t = birenThreadIdx().x, b = birenBlockIdx().x;
  sh[t] = b;
  birenSyncThreads();
  for (unsigned i = 0; i < birenBlockDim().x; i++)
    if (sh[i] != b) __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
}

static int shared_memory_is_private_to_a_block(void) {
  int bad = 0;
  int *p = &bad;
  OK(BIREN_LAUNCH(shared_is_per_block, birenDim3(64, 1, 1), birenDim3(128, 1, 1), 128 * sizeof(unsigned), NULL, p));
  OK(birenDeviceSynchronize());
  EXPECT(load_int(&bad) == 0);
  return 0;
}

/* ---- birenTrap ------------------------------------------------------------------------------ */

/* args: (int *completed). Block 0 traps after 5 ms; the other blocks spin 20 ms and count. */
static void trap_in_block0(void **args) {
  int *completed = *(int **)args[0];
  if (birenBlockIdx().x == 0) {
    spin_ms(5);
    birenTrap();
    __atomic_fetch_add(completed, 1000, __ATOMIC_SEQ_CST); /* never reached */
    return;
  }
  spin_ms(20);
  __atomic_fetch_add(completed, 1, __ATOMIC_SEQ_CST);
}

/* args: (int *out, int n). out[i] = i for the grid's threads. */
static void iota(void **args) {
  int *out = *(int **)args[0];
  int n = *(int *)args[1];
  int i = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  if (i < n) out[i] = i;
}

/* The device works: allocate, launch, copy back, check. */
static int device_works(void) {
  enum { N = 1000 };
  int h[N], n = N, *d;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(BIREN_LAUNCH(iota, birenDim3(4, 1, 1), birenDim3(256, 1, 1), 0, NULL, d, n));
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(h[i] == i);
  OK(birenFree(d));
  return 0;
}

static int trap_fails_launch_sticky_until_reset(void) {
  int completed = 0, *c = &completed, h = 5;
  birenStream_t s, s2 = NULL;
  void *p = NULL, *live;
  OK(birenStreamCreate(&s));
  OK(birenMalloc(&live, 256));
  OK(BIREN_LAUNCH(trap_in_block0, birenDim3(64, 1, 1), birenDim3(1, 1, 1), 0, s, c));
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  /* No further block started after the trap: far fewer than the 63 other blocks completed. */
  EXPECT(load_int(&completed) < 32);
  /* Sticky: later calls on the device report it, and do nothing. */
  EXPECT_CODE(birenMalloc(&p, 256), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT(p == NULL);
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(launch_store_int(&completed, 77, NULL), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(launch_store_int(&completed, 77, s), BIREN_ERROR_LAUNCH_FAILURE);
  sleep_ms(20);
  EXPECT(load_int(&completed) != 77);
  EXPECT_CODE(birenMemcpy(live, &h, sizeof h, birenMemcpyHostToDevice), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenMemset(live, 0, 256), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenMemcpyAsync(live, &h, sizeof h, birenMemcpyHostToDevice, s), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenStreamCreate(&s2), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT(s2 == NULL);
  EXPECT_CODE(birenStreamSynchronize(NULL), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenFree(live), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  /* Reset clears it, and the device works at once. */
  OK(birenDeviceReset());
  OK(birenDeviceSynchronize());
  EXPECT(device_works() == 0);
  return 0;
}

static int trap_reported_by_device_synchronize(void) {
  int completed = 0, *c = &completed;
  OK(BIREN_LAUNCH(trap_in_block0, birenDim3(4, 1, 1), birenDim3(1, 1, 1), 0, NULL, c));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenGetLastError(), BIREN_ERROR_LAUNCH_FAILURE);
  OK(birenDeviceReset());
  EXPECT(device_works() == 0);
  return 0;
}

/* args: (int *passed). Thread 5 traps while the others of its block wait at a barrier. */
static void trap_while_others_wait(void **args) {
  int *passed = *(int **)args[0];
  if (birenThreadIdx().x == 5) {
    spin_ms(10);
    birenTrap();
  }
  birenSyncThreads();
  __atomic_fetch_add(passed, 1, __ATOMIC_SEQ_CST);
}

static int trap_while_block_waits_at_barrier_fails_launch(void) {
  int passed = 0, *p = &passed;
  double t0 = now_s();
  OK(BIREN_LAUNCH(trap_while_others_wait, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, NULL, p));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT(now_s() - t0 < 5.0);
  EXPECT(load_int(&passed) == 0); /* nobody passed the barrier thread 5 never reached */
  OK(birenDeviceReset());
  EXPECT(device_works() == 0);
  return 0;
}

/* Outside a kernel the built-ins do nothing: the host can call them without harm. */
static int builtins_outside_a_kernel_do_nothing(void) {
  dim3 t = birenThreadIdx(), b = birenBlockIdx(), bd = birenBlockDim(), g = birenGridDim();
  EXPECT(t.x == 0 && t.y == 0 && t.z == 0 && b.x == 0 && b.y == 0 && b.z == 0);
  EXPECT(bd.x == 0 && bd.y == 0 && bd.z == 0 && g.x == 0 && g.y == 0 && g.z == 0);
  EXPECT(birenSharedMemory() == NULL);
  birenSyncThreads();
  birenTrap();
  OK(birenDeviceSynchronize());
  EXPECT(device_works() == 0);
  return 0;
}

/* args: (int *bad). Without sharedMem a kernel's birenSharedMemory() is NULL. */
static void expect_no_shared(void **args) {
  if (birenSharedMemory() != NULL) __atomic_fetch_add(*(int **)args[0], 1, __ATOMIC_SEQ_CST);
}

static int shared_memory_is_null_without_shared_mem(void) {
  int bad = 0, *p = &bad;
  OK(BIREN_LAUNCH(expect_no_shared, birenDim3(4, 1, 1), birenDim3(8, 1, 1), 0, NULL, p));
  OK(birenDeviceSynchronize());
  EXPECT(load_int(&bad) == 0);
  return 0;
}

/* ---- Divergent barriers fail, they do not hang --------------------------------------------- */

/* Only the even threads reach the barrier; the odd ones return. */
static void half_barrier(void **args) {
  (void)args;
  if (birenThreadIdx().x % 2 == 0) birenSyncThreads();
}

/* Everyone passes one barrier; thread 0 then returns while the others wait at a second one. */
static void second_barrier_missing_one(void **args) {
  (void)args;
  birenSyncThreads();
  if (birenThreadIdx().x != 0) birenSyncThreads();
}

static int divergent_barrier_fails_without_hanging(void) {
  double t0 = now_s();
  OK(birenLaunchKernel(half_barrier, birenDim3(4, 1, 1), birenDim3(64, 1, 1), NULL, 0, NULL));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  OK(birenDeviceReset());
  EXPECT(device_works() == 0);

  OK(birenLaunchKernel(second_barrier_missing_one, birenDim3(2, 1, 1), birenDim3(32, 1, 1), NULL, 0, NULL));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  OK(birenDeviceReset());
  EXPECT(device_works() == 0);
  EXPECT(now_s() - t0 < 10.0);
  return 0;
}

/* ---- Argument capture --------------------------------------------------------------------- */

typedef struct payload {
  int words[12];
} payload;

/* args: (int *out, int value, payload p). out[0] = value, out[1..12] = p.words. */
static void write_args(void **args) {
  int *out = *(int **)args[0];
  int v = *(int *)args[1];
  payload p = *(payload *)args[2];
  out[0] = v;
  for (int i = 0; i < 12; i++) out[1 + i] = p.words[i];
}

/* Same body, never registered: launched only through BIREN_LAUNCH. */
static void write_args_macro(void **args) { write_args(args); }

static int check_captured(const int out[13], int v) {
  EXPECT(out[0] == v);
  for (int i = 0; i < 12; i++) EXPECT(out[1 + i] == v + i);
  return 0;
}

static int registered_kernel_copies_args_at_launch(void) {
  const size_t sizes[3] = {sizeof(int *), sizeof(int), sizeof(payload)};
  static int out[13], other[13];
  int *o = out, v = 7;
  payload p;
  interval iv;
  birenStream_t s;
  for (int i = 0; i < 12; i++) p.words[i] = 7 + i;
  OK(birenKernelRegister(write_args, "write_args", 3, sizes));
  OK(birenStreamCreate(&s));
  OK(launch_timed_spin(&iv, 100, s)); /* the launch below runs 100 ms later */
  void *args[3] = {&o, &v, &p};
  OK(birenLaunchKernel(write_args, birenDim3(1, 1, 1), birenDim3(1, 1, 1), args, 0, s));
  /* Reuse everything at once: values, and the array itself. */
  int *o2 = other, v2 = -1;
  o = other;
  v = -1;
  for (int i = 0; i < 12; i++) p.words[i] = -1;
  args[0] = &o2;
  args[1] = &v2;
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_NOT_READY); /* the kernel had not run yet */
  OK(birenStreamSynchronize(s));
  EXPECT(check_captured(out, 7) == 0);
  for (int i = 0; i < 13; i++) EXPECT(other[i] == 0);
  return 0;
}

static int biren_launch_copies_args_at_launch(void) {
  static int out[13], other[13];
  int *o = out, v = 11;
  payload p;
  interval iv;
  birenStream_t s;
  for (int i = 0; i < 12; i++) p.words[i] = 11 + i;
  OK(birenStreamCreate(&s));
  OK(launch_timed_spin(&iv, 100, s));
  OK(BIREN_LAUNCH(write_args_macro, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, o, v, p));
  o = other;
  v = -1;
  for (int i = 0; i < 12; i++) p.words[i] = -1;
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_NOT_READY);
  OK(birenStreamSynchronize(s));
  EXPECT(check_captured(out, 11) == 0);
  for (int i = 0; i < 13; i++) EXPECT(other[i] == 0);
  return 0;
}

/* ---- Launch configuration checks ------------------------------------------------------------ */

static int launch_count;

static void count_launch(void **args) {
  (void)args;
  if (birenThreadIdx().x == 0 && birenThreadIdx().y == 0 && birenThreadIdx().z == 0 && birenBlockIdx().x == 0 &&
      birenBlockIdx().y == 0 && birenBlockIdx().z == 0)
    __atomic_fetch_add(&launch_count, 1, __ATOMIC_SEQ_CST);
}

#define BAD_CONFIG(g, b, shm) \
  EXPECT_CODE(birenLaunchKernel(count_launch, g, b, NULL, shm, NULL), BIREN_ERROR_INVALID_CONFIGURATION)
#define GOOD_CONFIG(g, b, shm)                                    \
  do {                                                            \
    OK(birenLaunchKernel(count_launch, g, b, NULL, shm, NULL));  \
    good++;                                                       \
  } while (0)

static int launch_configuration_checks(void) {
  birenDeviceProp prop;
  dim3 one = birenDim3(1, 1, 1);
  int good = 0;
  OK(birenGetDeviceProperties(&prop, 0));
  EXPECT(prop.maxThreadsPerBlock == 1024);
  EXPECT(prop.maxThreadsDim[0] == 1024 && prop.maxThreadsDim[1] == 1024 && prop.maxThreadsDim[2] == 64);
  EXPECT(prop.maxGridSize[0] == 2147483647 && prop.maxGridSize[1] == 65535 && prop.maxGridSize[2] == 65535);
  __atomic_store_n(&launch_count, 0, __ATOMIC_SEQ_CST);

  /* zero dimensions */
  BAD_CONFIG(birenDim3(0, 1, 1), one, 0);
  BAD_CONFIG(birenDim3(1, 0, 1), one, 0);
  BAD_CONFIG(birenDim3(1, 1, 0), one, 0);
  BAD_CONFIG(one, birenDim3(0, 1, 1), 0);
  BAD_CONFIG(one, birenDim3(1, 0, 1), 0);
  BAD_CONFIG(one, birenDim3(1, 1, 0), 0);
  /* threads per block */
  BAD_CONFIG(one, birenDim3(1025, 1, 1), 0);
  BAD_CONFIG(one, birenDim3(1, 1025, 1), 0);
  BAD_CONFIG(one, birenDim3(32, 32, 2), 0); /* 2048 threads, each extent within limits */
  BAD_CONFIG(one, birenDim3(64, 17, 1), 0); /* 1088 threads */
  BAD_CONFIG(one, birenDim3(1, 1, 65), 0);  /* block z > 64 */
  BAD_CONFIG(one, birenDim3(2, 2, 128), 0);
  /* grid extents */
  BAD_CONFIG(birenDim3(1, 65536, 1), one, 0);
  BAD_CONFIG(birenDim3(1, 1, 65536), one, 0);
  BAD_CONFIG(birenDim3(0x80000000u, 1, 1), one, 0);
  /* shared memory */
  BAD_CONFIG(one, one, prop.sharedMemPerBlock + 1);
  BAD_CONFIG(one, one, (size_t)-1);
  /* the failing launch sets the last error */
  EXPECT_CODE(birenGetLastError(), BIREN_ERROR_INVALID_CONFIGURATION);
  EXPECT_CODE(birenGetLastError(), BIREN_SUCCESS);
  /* the same checks through birenLaunchKernelArgs */
  {
    int x = 0;
    EXPECT_CODE(BIREN_LAUNCH(count_launch, one, birenDim3(1, 1, 65), 0, NULL, x), BIREN_ERROR_INVALID_CONFIGURATION);
    EXPECT_CODE(BIREN_LAUNCH(count_launch, birenDim3(1, 65536, 1), one, 0, NULL, x), BIREN_ERROR_INVALID_CONFIGURATION);
    EXPECT_CODE(BIREN_LAUNCH(count_launch, one, one, prop.sharedMemPerBlock + 1, NULL, x),
                BIREN_ERROR_INVALID_CONFIGURATION);
  }
  /* NULL kernel */
  EXPECT_CODE(birenLaunchKernel(NULL, one, one, NULL, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenLaunchKernelArgs(NULL, one, one, NULL, NULL, 0, 0, NULL), BIREN_ERROR_INVALID_VALUE);

  /* the limits themselves are accepted */
  GOOD_CONFIG(one, birenDim3(1024, 1, 1), 0);
  GOOD_CONFIG(one, birenDim3(1, 1024, 1), 0);
  GOOD_CONFIG(one, birenDim3(1, 1, 64), 0);
  GOOD_CONFIG(one, birenDim3(16, 1, 64), 0);
  GOOD_CONFIG(birenDim3(1, 65535, 1), one, 0);
  GOOD_CONFIG(one, one, prop.sharedMemPerBlock);
  OK(birenDeviceSynchronize());
  /* nothing was enqueued by the failing launches */
  EXPECT(load_int(&launch_count) == good);
  return 0;
}

/* ---- birenFree while queued work still uses the memory -------------------------------------- */

/* args: (int *buf, int *out, int n). buf[i] = 3i + 1, then out[i] = buf[i]. */
static void fill_then_copy(void **args) {
  int *buf = *(int **)args[0];
  int *out = *(int **)args[1];
  int n = *(int *)args[2];
  for (int i = 0; i < n; i++) buf[i] = 3 * i + 1;
  for (int i = 0; i < n; i++) out[i] = buf[i];
}

static int free_while_kernel_queued_keeps_memory(void) {
  enum { N = 4096 };
  static int h[N], fresh_h[N];
  int n = N, *buf, *out, *fresh;
  interval iv;
  birenStream_t s, ns;
  OK(birenStreamCreate(&s));
  OK(birenStreamCreateWithFlags(&ns, birenStreamNonBlocking));
  OK(birenMalloc((void **)&buf, N * sizeof(int)));
  OK(birenMalloc((void **)&out, N * sizeof(int)));
  OK(launch_timed_spin(&iv, 150, s));
  OK(BIREN_LAUNCH(fill_then_copy, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, buf, out, n));
  size_t free_before, free_after, total;
  OK(birenMemGetInfo(&free_before, &total));
  OK(birenFree(buf)); /* the kernel has not run yet */
  EXPECT_CODE(birenFree(buf), BIREN_ERROR_INVALID_DEVICE_POINTER);
  /* still counted as used while the kernel is pending */
  OK(birenMemGetInfo(&free_after, &total));
  EXPECT(free_after == free_before);
  /* New allocations while the kernel is pending must not alias the memory it will write. */
  OK(birenMalloc((void **)&fresh, N * sizeof(int)));
  OK(birenMemsetAsync(fresh, 0x5A, N * sizeof(int), ns));
  OK(birenStreamSynchronize(ns));
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_NOT_READY);
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(h, out, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(h[i] == 3 * i + 1);
  OK(birenMemcpy(fresh_h, fresh, sizeof fresh_h, birenMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(fresh_h[i] == 0x5A5A5A5A);
  OK(birenFree(out));
  OK(birenFree(fresh));
  /* once the work completed, everything is released */
  OK(birenMemGetInfo(&free_after, &total));
  EXPECT(free_after == total);
  return 0;
}

/* The same for a queued copy out of the freed memory. */
static int free_while_copy_queued_keeps_memory(void) {
  enum { N = 4096 };
  static unsigned char h[N], fresh_h[N];
  unsigned char *buf, *fresh;
  interval iv;
  birenStream_t s, ns;
  OK(birenStreamCreate(&s));
  OK(birenStreamCreateWithFlags(&ns, birenStreamNonBlocking));
  OK(birenMalloc((void **)&buf, N));
  OK(birenMemset(buf, 0x33, N));
  OK(launch_timed_spin(&iv, 150, s));
  OK(birenMemcpyAsync(h, buf, N, birenMemcpyDeviceToHost, s));
  OK(birenFree(buf));
  OK(birenMalloc((void **)&fresh, N));
  OK(birenMemsetAsync(fresh, 0x44, N, ns));
  OK(birenStreamSynchronize(ns));
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_NOT_READY);
  OK(birenStreamSynchronize(s));
  for (int i = 0; i < N; i++) EXPECT(h[i] == 0x33);
  OK(birenMemcpy(fresh_h, fresh, N, birenMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(fresh_h[i] == 0x44);
  return 0;
}

static const test_case tests[] = {
    TEST(grid3d_every_thread_runs_once),
    TEST(shared_memory_tree_reduction_is_exact),
    TEST(shared_memory_is_private_to_a_block),
    TEST(trap_fails_launch_sticky_until_reset),
    TEST(trap_reported_by_device_synchronize),
    TEST(trap_while_block_waits_at_barrier_fails_launch),
    TEST(builtins_outside_a_kernel_do_nothing),
    TEST(shared_memory_is_null_without_shared_mem),
    TEST(divergent_barrier_fails_without_hanging),
    TEST(registered_kernel_copies_args_at_launch),
    TEST(biren_launch_copies_args_at_launch),
    TEST(launch_configuration_checks),
    TEST(free_while_kernel_queued_keeps_memory),
    TEST(free_while_copy_queued_keeps_memory),
};

int main(void) {
  want_two_compute_units();
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("kernels", tests, reset_device, 20);
}
