/* Memory (SPEC §3): birenMalloc/Free, birenMallocHost/FreeHost, birenMemcpy (every kind),
 * birenMemset, birenMemGetInfo, birenPointerGetAttributes, and the checks made on every copy and
 * fill. Runs with BIREN_DEVICE_MEMORY=1M (set below, before birenInit) so that running out of
 * memory is cheap. The first test runs before birenInit. Every failing call is checked to return
 * its code, set the last error, and write nothing: destinations hold a sentinel that must survive
 * (device memory is read back with a valid birenMemcpy), out-parameters keep their old value. */
#include "harness.h"
#include <limits.h>
#include <pthread.h>
#include <stdint.h>

/* The seed's macro, verbatim. */
#define CHECK_BIREN(call) \
do { \
birenError_t err = call; \
if (err != BIREN_SUCCESS) { \
fprintf(stderr, "BIREN error %d at %s:%d\n", err, __FILE__, __LINE__); \
exit(EXIT_FAILURE); \
} \
} while(0)

/* `call` returns `code` and leaves it as the calling thread's last error: Peek returns it (and
 * keeps it), Get returns it and clears it. */
#define EXPECT_FAIL(call, code)                                                              \
  do {                                                                                       \
    (void)birenGetLastError();                                                               \
    EXPECT_CODE(call, code);                                                                 \
    EXPECT_CODE(birenPeekAtLastError(), code);                                               \
    EXPECT_CODE(birenGetLastError(), code);                                                  \
    EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);                                      \
  } while (0)

#define NOT_INIT BIREN_ERROR_NOT_INITIALIZED
#define IDP BIREN_ERROR_INVALID_DEVICE_POINTER
#define OOB BIREN_ERROR_OUT_OF_BOUNDS
#define DEVICE_MEMORY ((size_t)1 << 20)

enum { N = 1000 }; /* allocation size used by most tests: not a multiple of the 256 alignment */
static const unsigned char SENTINEL = 0xA5;

/* 1 if all `n` bytes at `p` are `v`. */
static int all_bytes(const void *p, unsigned char v, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++)
    if (b[i] != v) return 0;
  return 1;
}

/* Fills host memory with a pattern depending on `seed`. */
static void pattern(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 7u + seed * 13u + 1u);
}

/* A device buffer of `n` bytes set to `v`. */
static int device_filled(void **d, size_t n, unsigned char v) {
  OK(birenMalloc(d, n));
  OK(birenMemset(*d, v, n));
  return 0;
}

/* 1 if the `n` device bytes at `d` are all `v` (read back with a valid copy). */
static int device_is(const void *d, unsigned char v, size_t n) {
  unsigned char *h = (unsigned char *)malloc(n);
  if (h == NULL) return 0;
  memset(h, (unsigned char)~v, n);
  int ok = birenMemcpy(h, d, n, birenMemcpyDeviceToHost) == BIREN_SUCCESS && all_bytes(h, v, n);
  free(h);
  return ok;
}

static size_t free_now(void) {
  size_t f = 0, t = 0;
  if (birenMemGetInfo(&f, &t) != BIREN_SUCCESS) return (size_t)-1;
  return f;
}

/* ---- before birenInit ------------------------------------------------------------------- */

static int memory_calls_before_init_fail_and_write_nothing(void) {
  unsigned char a[64], b[64];
  void *p = (void *)a;
  size_t f = 77, t = 77;
  birenPointerAttributes attr, sentinel;
  memset(a, SENTINEL, sizeof a);
  memset(b, 1, sizeof b);
  memset(&attr, 0x5A, sizeof attr);
  memset(&sentinel, 0x5A, sizeof sentinel);

  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  EXPECT_FAIL(birenMalloc(&p, 64), NOT_INIT);
  EXPECT(p == (void *)a);
  EXPECT_FAIL(birenMalloc(&p, 0), NOT_INIT);
  EXPECT(p == (void *)a);
  EXPECT_FAIL(birenMalloc(NULL, 64), NOT_INIT);
  EXPECT_FAIL(birenFree(NULL), NOT_INIT);
  EXPECT_FAIL(birenFree(a), NOT_INIT);
  EXPECT_FAIL(birenMallocHost(&p, 64), NOT_INIT);
  EXPECT(p == (void *)a);
  EXPECT_FAIL(birenFreeHost(NULL), NOT_INIT);
  EXPECT_FAIL(birenMemcpy(a, b, sizeof a, birenMemcpyHostToHost), NOT_INIT);
  EXPECT_FAIL(birenMemcpy(a, b, sizeof a, birenMemcpyDefault), NOT_INIT);
  EXPECT_FAIL(birenMemcpy(a, b, 0, birenMemcpyHostToHost), NOT_INIT);
  EXPECT_FAIL(birenMemcpyAsync(a, b, sizeof a, birenMemcpyHostToHost, NULL), NOT_INIT);
  EXPECT(all_bytes(a, SENTINEL, sizeof a));
  EXPECT_FAIL(birenMemset(a, 0, sizeof a), NOT_INIT);
  EXPECT_FAIL(birenMemsetAsync(a, 0, sizeof a, NULL), NOT_INIT);
  EXPECT(all_bytes(a, SENTINEL, sizeof a));
  EXPECT_FAIL(birenMemGetInfo(&f, &t), NOT_INIT);
  EXPECT(f == 77 && t == 77);
  EXPECT_FAIL(birenPointerGetAttributes(&attr, a), NOT_INIT);
  EXPECT(memcmp(&attr, &sentinel, sizeof attr) == 0);
  return 0;
}

/* ---- the seed's example ------------------------------------------------------------------- */

static int seed_snippet_runs_as_written(void) {
  void *d_ptr;
  float h_ptr[256];
  size_t size = sizeof h_ptr;
  for (int i = 0; i < 256; i++) h_ptr[i] = (float)i * 0.5f;
  CHECK_BIREN(birenMalloc(&d_ptr, size));
  CHECK_BIREN(birenMemcpy(d_ptr, h_ptr, size, birenMemcpyHostToDevice));
  float back[256];
  memset(back, 0, sizeof back);
  CHECK_BIREN(birenMemcpy(back, d_ptr, size, birenMemcpyDeviceToHost));
  EXPECT(memcmp(back, h_ptr, size) == 0);
  /* The seed's lesson: a copy past the end fails, and nothing is written. */
  EXPECT_FAIL(birenMemcpy(d_ptr, h_ptr, size + 1, birenMemcpyHostToDevice), OOB);
  CHECK_BIREN(birenFree(d_ptr));
  return 0;
}

/* ---- birenMalloc / birenFree ---------------------------------------------------------------- */

static int malloc_is_aligned_and_disjoint(void) {
  static const size_t sizes[] = {1, 255, 256, 257, N, 4096, 65536};
  enum { K = sizeof sizes / sizeof sizes[0] };
  void *p[K];
  for (size_t i = 0; i < K; i++) {
    p[i] = NULL;
    OK(birenMalloc(&p[i], sizes[i]));
    EXPECT(p[i] != NULL);
    EXPECT((uintptr_t)p[i] % 256 == 0);
    OK(birenMemset(p[i], (int)i + 1, sizes[i]));
  }
  for (size_t i = 0; i < K; i++)
    for (size_t j = 0; j < K; j++)
      if (i != j) EXPECT((uintptr_t)p[i] + sizes[i] <= (uintptr_t)p[j] || (uintptr_t)p[j] + sizes[j] <= (uintptr_t)p[i]);
  /* Each allocation kept its own bytes. */
  for (size_t i = 0; i < K; i++) EXPECT(device_is(p[i], (unsigned char)(i + 1), sizes[i]));
  for (size_t i = 0; i < K; i++) OK(birenFree(p[i]));
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  return 0;
}

static int malloc_size_zero_and_null_out_param(void) {
  int x;
  void *p = &x;
  OK(birenMalloc(&p, 0));
  EXPECT(p == NULL);
  EXPECT_FAIL(birenMalloc(NULL, 64), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMalloc(NULL, 0), BIREN_ERROR_INVALID_VALUE);
  OK(birenFree(NULL));
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  return 0;
}

static int malloc_out_of_memory_writes_nothing(void) {
  size_t f = 0, t = 0;
  OK(birenMemGetInfo(&f, &t));
  EXPECT(t == DEVICE_MEMORY); /* BIREN_DEVICE_MEMORY=1M */
  EXPECT(f == t);             /* every earlier test freed what it allocated */

  int x;
  void *p = &x;
  const size_t too_big[] = {DEVICE_MEMORY + 1, 2 * DEVICE_MEMORY, SIZE_MAX, SIZE_MAX - 100, SIZE_MAX / 2 + 1};
  for (size_t i = 0; i < sizeof too_big / sizeof too_big[0]; i++) {
    EXPECT_FAIL(birenMalloc(&p, too_big[i]), BIREN_ERROR_OUT_OF_MEMORY);
    EXPECT(p == &x);
  }
  EXPECT(free_now() == DEVICE_MEMORY); /* failed allocations reserved nothing */

  /* The whole capacity can be taken, then nothing more. */
  void *all = NULL;
  OK(birenMalloc(&all, DEVICE_MEMORY));
  EXPECT(free_now() == 0);
  EXPECT_FAIL(birenMalloc(&p, 1), BIREN_ERROR_OUT_OF_MEMORY);
  EXPECT(p == &x);
  OK(birenFree(all));
  EXPECT(free_now() == DEVICE_MEMORY);

  /* Two halves fit, a third allocation does not; freeing one makes room again. */
  void *h1 = NULL, *h2 = NULL, *h3 = NULL;
  OK(birenMalloc(&h1, DEVICE_MEMORY / 2));
  OK(birenMalloc(&h2, DEVICE_MEMORY / 2));
  EXPECT_FAIL(birenMalloc(&p, 256), BIREN_ERROR_OUT_OF_MEMORY);
  EXPECT(p == &x);
  OK(birenFree(h1));
  OK(birenMalloc(&h3, 256));
  OK(birenFree(h2));
  OK(birenFree(h3));
  EXPECT(free_now() == DEVICE_MEMORY);
  return 0;
}

static int mem_get_info_tracks_allocations(void) {
  size_t f0 = 0, t0 = 0, f = 0, t = 0;
  OK(birenMemGetInfo(&f0, &t0));
  EXPECT(f0 <= t0);
  void *d = NULL;
  OK(birenMalloc(&d, N));
  OK(birenMemGetInfo(&f, &t));
  EXPECT(t == t0);
  EXPECT(f + N <= f0);         /* at least the bytes asked for are in use */
  EXPECT(f + N + 4096 >= f0);  /* and not much more */
  OK(birenFree(d));
  OK(birenMemGetInfo(&f, &t));
  EXPECT(f == f0 && t == t0);

  /* NULL for either: INVALID_VALUE, and the other is not written. */
  f = t = 77;
  EXPECT_FAIL(birenMemGetInfo(NULL, &t), BIREN_ERROR_INVALID_VALUE);
  EXPECT(t == 77);
  EXPECT_FAIL(birenMemGetInfo(&f, NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT(f == 77);
  EXPECT_FAIL(birenMemGetInfo(NULL, NULL), BIREN_ERROR_INVALID_VALUE);
  return 0;
}

static int free_refuses_what_is_not_a_live_allocation(void) {
  int local = 0;
  void *heap = malloc(64);
  void *d = NULL, *h = NULL, *gone = NULL;
  EXPECT(heap != NULL);
  OK(birenMalloc(&gone, N));
  OK(birenFree(gone));
  EXPECT_FAIL(birenFree(gone), IDP); /* double free */

  OK(device_filled(&d, N, 0x11));
  OK(birenMallocHost(&h, 256));
  EXPECT_FAIL(birenFree(&local), IDP);               /* host stack pointer */
  EXPECT_FAIL(birenFree(heap), IDP);                 /* host heap pointer */
  EXPECT_FAIL(birenFree(h), IDP);                    /* page-locked host pointer */
  EXPECT_FAIL(birenFree((char *)d + 1), IDP);        /* inside an allocation */
  EXPECT_FAIL(birenFree((char *)d + N - 1), IDP);    /* its last byte */
  EXPECT_FAIL(birenFree((void *)(uintptr_t)0x10), IDP);
  /* None of the refused frees released anything. */
  birenPointerAttributes a;
  OK(birenPointerGetAttributes(&a, d));
  EXPECT(a.type == birenMemoryTypeDevice && a.basePointer == d);
  EXPECT(device_is(d, 0x11, N));
  OK(birenPointerGetAttributes(&a, h));
  EXPECT(a.type == birenMemoryTypeHost);
  OK(birenFree(d));
  OK(birenFreeHost(h));
  free(heap);
  return 0;
}

typedef struct {
  int rounds, failures;
} alloc_job;

static void *alloc_thread(void *arg) {
  alloc_job *j = (alloc_job *)arg;
  for (int i = 0; i < j->rounds; i++) {
    void *p = NULL;
    size_t n = 256 + (size_t)(i % 7) * 100;
    if (birenMalloc(&p, n) != BIREN_SUCCESS || p == NULL) {
      j->failures++;
      continue;
    }
    if (birenMemset(p, i & 0xFF, n) != BIREN_SUCCESS) j->failures++;
    if (birenFree(p) != BIREN_SUCCESS) j->failures++;
  }
  return NULL;
}

static int malloc_and_free_from_many_threads(void) {
  enum { T = 4 };
  pthread_t t[T];
  alloc_job j[T];
  for (int i = 0; i < T; i++) {
    j[i].rounds = 300;
    j[i].failures = 0;
    EXPECT(pthread_create(&t[i], NULL, alloc_thread, &j[i]) == 0);
  }
  for (int i = 0; i < T; i++) EXPECT(pthread_join(t[i], NULL) == 0);
  for (int i = 0; i < T; i++) EXPECT(j[i].failures == 0);
  EXPECT(free_now() == DEVICE_MEMORY);
  return 0;
}

/* ---- birenMallocHost / birenFreeHost ------------------------------------------------------- */

static int malloc_host_and_free_host(void) {
  int x;
  void *p = &x, *h = NULL;
  size_t f0 = free_now();
  OK(birenMallocHost(&h, 8192));
  EXPECT(h != NULL);
  memset(h, 0x3C, 8192); /* ordinary, writable host memory */
  EXPECT(all_bytes(h, 0x3C, 8192));
  EXPECT(free_now() == f0); /* not counted against device memory */

  OK(birenMallocHost(&p, 0));
  EXPECT(p == NULL);
  p = &x;
  EXPECT_FAIL(birenMallocHost(NULL, 64), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocHost(&p, SIZE_MAX), BIREN_ERROR_OUT_OF_MEMORY);
  EXPECT(p == &x);

  int local = 0;
  void *d = NULL;
  OK(birenMalloc(&d, 256));
  OK(birenFreeHost(NULL));
  EXPECT_FAIL(birenFreeHost((char *)h + 16), BIREN_ERROR_INVALID_VALUE); /* inside */
  EXPECT_FAIL(birenFreeHost(d), BIREN_ERROR_INVALID_VALUE);              /* device memory */
  EXPECT_FAIL(birenFreeHost(&local), BIREN_ERROR_INVALID_VALUE);         /* unknown */
  EXPECT(all_bytes(h, 0x3C, 8192));
  OK(birenFreeHost(h));
  EXPECT_FAIL(birenFreeHost(h), BIREN_ERROR_INVALID_VALUE); /* double free */
  birenPointerAttributes a;
  OK(birenPointerGetAttributes(&a, d));
  EXPECT(a.type == birenMemoryTypeDevice); /* the refused FreeHost left it alone */
  OK(birenFree(d));
  return 0;
}

/* ---- birenMemcpy: data ------------------------------------------------------------------ */

static int memcpy_every_kind_moves_the_bytes(void) {
  unsigned char src[N], out[N], mid[N];
  void *d1 = NULL, *d2 = NULL, *pin = NULL;
  OK(birenMalloc(&d1, N));
  OK(birenMalloc(&d2, N));
  OK(birenMallocHost(&pin, N));

  pattern(src, N, 1);
  memset(out, 0, N);
  OK(birenMemcpy(d1, src, N, birenMemcpyHostToDevice));
  OK(birenMemcpy(d2, d1, N, birenMemcpyDeviceToDevice));
  OK(birenMemcpy(out, d2, N, birenMemcpyDeviceToHost));
  EXPECT(memcmp(out, src, N) == 0);
  memset(mid, 0, N);
  OK(birenMemcpy(mid, src, N, birenMemcpyHostToHost));
  EXPECT(memcmp(mid, src, N) == 0);

  /* Default infers each side's kind from the pointer. */
  pattern(src, N, 2);
  memset(out, 0, N);
  OK(birenMemcpy(d1, src, N, birenMemcpyDefault));  /* host -> device */
  OK(birenMemcpy(d2, d1, N, birenMemcpyDefault));   /* device -> device */
  OK(birenMemcpy(pin, d2, N, birenMemcpyDefault));  /* device -> page-locked host */
  OK(birenMemcpy(mid, pin, N, birenMemcpyDefault)); /* page-locked host -> host */
  OK(birenMemcpy(out, mid, N, birenMemcpyDefault)); /* host -> host */
  EXPECT(memcmp(out, src, N) == 0);
  OK(birenMemset(d1, 0, N));
  OK(birenMemcpy(d1, pin, N, birenMemcpyDefault)); /* page-locked host -> device */
  memset(out, 0, N);
  OK(birenMemcpy(out, d1, N, birenMemcpyDefault)); /* device -> host */
  EXPECT(memcmp(out, src, N) == 0);

  /* Pointers inside allocations, with Default too. */
  pattern(src, N, 3);
  OK(birenMemset(d2, 0, N));
  OK(birenMemcpy((char *)d2 + 100, src, 300, birenMemcpyHostToDevice));
  OK(birenMemcpy((char *)d1 + 500, (char *)d2 + 100, 300, birenMemcpyDefault));
  memset(out, 0, N);
  OK(birenMemcpy(out + 7, (char *)d1 + 500, 300, birenMemcpyDefault));
  EXPECT(memcmp(out + 7, src, 300) == 0);
  EXPECT(all_bytes(out, 0, 7) && all_bytes(out + 307, 0, N - 307));
  memset(out, 0xEE, N);
  OK(birenMemcpy(out, d2, N, birenMemcpyDeviceToHost));
  EXPECT(all_bytes(out, 0, 100) && memcmp(out + 100, src, 300) == 0 && all_bytes(out + 400, 0, N - 400));

  /* Exactly up to the end of an allocation is fine. */
  OK(birenMemcpy((char *)d1 + N - 10, src, 10, birenMemcpyHostToDevice));
  OK(birenMemcpy(out, (char *)d1 + N - 10, 10, birenMemcpyDeviceToHost));
  EXPECT(memcmp(out, src, 10) == 0);

  OK(birenFree(d1));
  OK(birenFree(d2));
  OK(birenFreeHost(pin));
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  return 0;
}

static int memcpy_overlapping_ranges_as_memmove(void) {
  unsigned char src[N], out[N], want[N];
  void *d = NULL;
  OK(birenMalloc(&d, N));
  pattern(src, N, 4);
  /* Device to device, forward and backward overlap. */
  OK(birenMemcpy(d, src, N, birenMemcpyHostToDevice));
  OK(birenMemcpy((char *)d + 10, d, 500, birenMemcpyDeviceToDevice));
  memcpy(want, src, N);
  memmove(want + 10, want, 500);
  OK(birenMemcpy(out, d, N, birenMemcpyDeviceToHost));
  EXPECT(memcmp(out, want, N) == 0);
  OK(birenMemcpy(d, (char *)d + 10, 500, birenMemcpyDefault));
  memmove(want, want + 10, 500);
  OK(birenMemcpy(out, d, N, birenMemcpyDeviceToHost));
  EXPECT(memcmp(out, want, N) == 0);
  /* Host to host. */
  memcpy(out, src, N);
  memcpy(want, src, N);
  OK(birenMemcpy(out + 3, out, 600, birenMemcpyHostToHost));
  memmove(want + 3, want, 600);
  EXPECT(memcmp(out, want, N) == 0);
  OK(birenFree(d));
  return 0;
}

static int memcpy_count_zero_succeeds_and_writes_nothing(void) {
  int local = 0;
  unsigned char h[16];
  memset(h, SENTINEL, sizeof h);
  for (int k = 0; k <= 4; k++) {
    (void)birenGetLastError();
    OK(birenMemcpy(NULL, NULL, 0, (birenMemcpyKind)k));
    OK(birenMemcpy(h, &local, 0, (birenMemcpyKind)k));
    EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  }
  EXPECT(all_bytes(h, SENTINEL, sizeof h));
  return 0;
}

/* ---- birenMemcpy: errors --------------------------------------------------------------- */

static int memcpy_null_pointers(void) {
  unsigned char h[N];
  void *d = NULL;
  OK(device_filled(&d, N, SENTINEL));
  memset(h, SENTINEL, N);
  for (int k = 0; k <= 4; k++) {
    birenMemcpyKind kind = (birenMemcpyKind)k;
    void *dst = (k == 1 || k == 3) ? d : (void *)h;
    const void *src = (k == 2 || k == 3) ? d : (const void *)h;
    EXPECT_FAIL(birenMemcpy(NULL, src, N, kind), BIREN_ERROR_INVALID_VALUE);
    EXPECT_FAIL(birenMemcpy(dst, NULL, N, kind), BIREN_ERROR_INVALID_VALUE);
    EXPECT_FAIL(birenMemcpy(dst, NULL, 1, kind), BIREN_ERROR_INVALID_VALUE);
    EXPECT_FAIL(birenMemcpy(NULL, NULL, 1, kind), BIREN_ERROR_INVALID_VALUE);
  }
  EXPECT(all_bytes(h, SENTINEL, N));
  EXPECT(device_is(d, SENTINEL, N));
  OK(birenFree(d));
  return 0;
}

static int memcpy_unknown_kind(void) {
  unsigned char h[N], src[N];
  void *d = NULL;
  OK(device_filled(&d, N, SENTINEL));
  memset(h, SENTINEL, N);
  pattern(src, N, 5);
  const int kinds[] = {5, 6, -1, 100, INT_MAX, INT_MIN};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    birenMemcpyKind kind = (birenMemcpyKind)kinds[i];
    EXPECT_FAIL(birenMemcpy(d, src, N, kind), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
    EXPECT_FAIL(birenMemcpy(h, src, N, kind), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
    EXPECT_FAIL(birenMemcpy(h, d, N, kind), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  }
  EXPECT(all_bytes(h, SENTINEL, N));
  EXPECT(device_is(d, SENTINEL, N));
  OK(birenFree(d));
  return 0;
}

static int memcpy_host_pointer_as_device_pointer(void) {
  unsigned char h[N], src[N];
  void *d = NULL, *pin = NULL, *gone = NULL;
  OK(device_filled(&d, N, SENTINEL));
  OK(birenMallocHost(&pin, N));
  OK(birenMalloc(&gone, N));
  OK(birenFree(gone));
  memset(h, SENTINEL, N);
  memset(pin, SENTINEL, N);
  pattern(src, N, 6);

  /* The side `kind` calls device memory is ordinary host memory. */
  EXPECT_FAIL(birenMemcpy(h, src, N, birenMemcpyHostToDevice), IDP);
  EXPECT_FAIL(birenMemcpy(pin, src, N, birenMemcpyHostToDevice), IDP);
  EXPECT_FAIL(birenMemcpy(h, src, N, birenMemcpyDeviceToHost), IDP);
  EXPECT_FAIL(birenMemcpy(h, pin, N, birenMemcpyDeviceToHost), IDP);
  EXPECT_FAIL(birenMemcpy(d, src, N, birenMemcpyDeviceToDevice), IDP);
  EXPECT_FAIL(birenMemcpy(h, d, N, birenMemcpyDeviceToDevice), IDP);
  EXPECT_FAIL(birenMemcpy(pin, d, N, birenMemcpyDeviceToDevice), IDP);
  /* A freed allocation (use after free). */
  EXPECT_FAIL(birenMemcpy(gone, src, N, birenMemcpyHostToDevice), IDP);
  EXPECT_FAIL(birenMemcpy(h, gone, N, birenMemcpyDeviceToHost), IDP);
  EXPECT_FAIL(birenMemcpy(d, gone, N, birenMemcpyDeviceToDevice), IDP);
  EXPECT_FAIL(birenMemcpy(gone, d, N, birenMemcpyDeviceToDevice), IDP);

  EXPECT(all_bytes(h, SENTINEL, N));
  EXPECT(all_bytes(pin, SENTINEL, N));
  EXPECT(device_is(d, SENTINEL, N));
  OK(birenFree(d));
  OK(birenFreeHost(pin));
  return 0;
}

static int memcpy_past_the_end_writes_nothing(void) {
  unsigned char h[2 * N], src[2 * N];
  void *d = NULL, *d2 = NULL;
  OK(device_filled(&d, N, SENTINEL));
  OK(device_filled(&d2, N, SENTINEL));
  memset(h, SENTINEL, sizeof h);
  pattern(src, sizeof src, 7);

  /* One byte more than the allocation (whose size, 1000, is not a multiple of 256). */
  EXPECT_FAIL(birenMemcpy(d, src, N + 1, birenMemcpyHostToDevice), OOB);
  EXPECT_FAIL(birenMemcpy(h, d, N + 1, birenMemcpyDeviceToHost), OOB);
  EXPECT_FAIL(birenMemcpy(d2, d, N + 1, birenMemcpyDeviceToDevice), OOB);
  EXPECT_FAIL(birenMemcpy(d, src, N + 1, birenMemcpyDefault), OOB);
  EXPECT_FAIL(birenMemcpy(h, d, N + 1, birenMemcpyDefault), OOB);
  /* Starting inside, running past the end. */
  EXPECT_FAIL(birenMemcpy((char *)d + 900, src, 101, birenMemcpyHostToDevice), OOB);
  EXPECT_FAIL(birenMemcpy((char *)d + N - 1, src, 2, birenMemcpyHostToDevice), OOB);
  EXPECT_FAIL(birenMemcpy(h, (char *)d + 500, 600, birenMemcpyDeviceToHost), OOB);
  EXPECT_FAIL(birenMemcpy((char *)d2 + 1, d, N, birenMemcpyDeviceToDevice), OOB); /* dst side */
  EXPECT_FAIL(birenMemcpy(d2, (char *)d + 1, N, birenMemcpyDeviceToDevice), OOB); /* src side */
  EXPECT_FAIL(birenMemcpy((char *)d2 + 10, (char *)d + 10, N, birenMemcpyDefault), OOB);
  EXPECT_FAIL(birenMemcpy(d, src, 2 * N, birenMemcpyHostToDevice), OOB);
  /* Just past the end (in the alignment padding): inside no allocation. */
  EXPECT_FAIL(birenMemcpy((char *)d + N, src, 1, birenMemcpyHostToDevice), IDP);
  EXPECT_FAIL(birenMemcpy(h, (char *)d + N, 1, birenMemcpyDeviceToHost), IDP);
  EXPECT_FAIL(birenMemset((char *)d + N, 0, 1), IDP);

  EXPECT(all_bytes(h, SENTINEL, sizeof h));
  EXPECT(device_is(d, SENTINEL, N));
  EXPECT(device_is(d2, SENTINEL, N));
  OK(birenFree(d));
  OK(birenFree(d2));
  return 0;
}

/* A range that covers two allocations, even back to back ones, runs past the end of the first. */
static int memcpy_across_two_allocations_is_out_of_bounds(void) {
  enum { K = 8 };
  void *d[K];
  unsigned char src[512], h[512];
  pattern(src, sizeof src, 10);
  memset(h, SENTINEL, sizeof h);
  for (int i = 0; i < K; i++) OK(device_filled(&d[i], 256, SENTINEL));
  for (int i = 0; i < K; i++) {
    EXPECT_FAIL(birenMemcpy(d[i], src, 512, birenMemcpyHostToDevice), OOB);
    EXPECT_FAIL(birenMemcpy(h, d[i], 512, birenMemcpyDeviceToHost), OOB);
    EXPECT_FAIL(birenMemset(d[i], 0, 512), OOB);
  }
  EXPECT(all_bytes(h, SENTINEL, sizeof h));
  for (int i = 0; i < K; i++) EXPECT(device_is(d[i], SENTINEL, 256));
  for (int i = 0; i < K; i++) OK(birenFree(d[i]));
  return 0;
}

static int memcpy_size_overflow_writes_nothing(void) {
  unsigned char h[N], src[N];
  void *d = NULL, *d2 = NULL;
  OK(device_filled(&d, N, SENTINEL));
  OK(device_filled(&d2, N, SENTINEL));
  memset(h, SENTINEL, N);
  pattern(src, N, 8);
  /* count so large that pointer + count wraps around the address space. */
  size_t wrap = (size_t)0 - (size_t)(uintptr_t)d + 16;
  const size_t counts[] = {SIZE_MAX, SIZE_MAX / 2 + 1, wrap};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    size_t c = counts[i];
    EXPECT_FAIL(birenMemcpy(d, src, c, birenMemcpyHostToDevice), OOB);
    EXPECT_FAIL(birenMemcpy(d2, d, c, birenMemcpyDeviceToDevice), OOB);
    EXPECT_FAIL(birenMemcpy(d, d2, c, birenMemcpyDeviceToDevice), OOB);
    EXPECT_FAIL(birenMemcpy(d, src, c, birenMemcpyDefault), OOB);
  }
  /* Device to host: the device range runs past the end while the host range does not wrap
   * (user-space addresses are below 2^63). */
  EXPECT_FAIL(birenMemcpy(h, d, SIZE_MAX / 2 + 1, birenMemcpyDeviceToHost), OOB);
  EXPECT_FAIL(birenMemcpy(h, d, (size_t)1 << 40, birenMemcpyDeviceToHost), OOB);
  /* When the host range wraps too, the call fails (which of the two codes is not documented). */
  (void)birenGetLastError();
  birenError_t both = birenMemcpy(h, d, SIZE_MAX, birenMemcpyDeviceToHost);
  EXPECT(both == OOB || both == BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGetLastError(), both);
  /* Host to host: no device side to be out of bounds, but a range that wraps around the address
   * space must fail all the same (the code is not documented; it must set the last error). */
  const size_t host_counts[] = {SIZE_MAX, (size_t)0 - (size_t)(uintptr_t)h + 16};
  for (size_t i = 0; i < sizeof host_counts / sizeof host_counts[0]; i++) {
    (void)birenGetLastError();
    birenError_t e = birenMemcpy(h, src, host_counts[i], birenMemcpyHostToHost);
    EXPECT(e != BIREN_SUCCESS);
    EXPECT_CODE(birenGetLastError(), e);
  }
  EXPECT(all_bytes(h, SENTINEL, N));
  EXPECT(device_is(d, SENTINEL, N));
  EXPECT(device_is(d2, SENTINEL, N));
  OK(birenFree(d));
  OK(birenFree(d2));
  return 0;
}

/* ---- birenMemset ------------------------------------------------------------------------ */

static int memset_fills_bytes(void) {
  unsigned char out[N];
  void *d = NULL;
  OK(birenMalloc(&d, N));
  OK(birenMemset(d, 0x42, N));
  EXPECT(device_is(d, 0x42, N));
  /* Only the low 8 bits of value are used. */
  OK(birenMemset(d, 0x1AB, N));
  EXPECT(device_is(d, 0xAB, N));
  OK(birenMemset(d, -1, N));
  EXPECT(device_is(d, 0xFF, N));
  /* A range inside the allocation, up to its very end; neighbours untouched. */
  OK(birenMemset(d, 0, N));
  OK(birenMemset((char *)d + 100, 7, 200));
  OK(birenMemset((char *)d + N - 1, 9, 1));
  OK(birenMemcpy(out, d, N, birenMemcpyDeviceToHost));
  EXPECT(all_bytes(out, 0, 100) && all_bytes(out + 100, 7, 200) && all_bytes(out + 300, 0, N - 301) && out[N - 1] == 9);
  /* Count 0 succeeds, whatever the pointer. */
  int local = 0;
  OK(birenMemset(NULL, 1, 0));
  OK(birenMemset(&local, 1, 0));
  EXPECT(local == 0);
  OK(birenMemset(d, 1, 0));
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  OK(birenFree(d));
  return 0;
}

static int memset_errors_write_nothing(void) {
  unsigned char h[N];
  void *d = NULL, *pin = NULL, *gone = NULL;
  OK(device_filled(&d, N, SENTINEL));
  OK(birenMallocHost(&pin, N));
  OK(birenMalloc(&gone, N));
  OK(birenFree(gone));
  memset(h, SENTINEL, N);
  memset(pin, SENTINEL, N);

  EXPECT_FAIL(birenMemset(NULL, 0, N), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemset(h, 0, N), IDP);
  EXPECT_FAIL(birenMemset(pin, 0, N), IDP);
  EXPECT_FAIL(birenMemset(gone, 0, N), IDP);
  EXPECT_FAIL(birenMemset(d, 0, N + 1), OOB);
  EXPECT_FAIL(birenMemset((char *)d + 999, 0, 2), OOB);
  EXPECT_FAIL(birenMemset((char *)d + 500, 0, 501), OOB);
  EXPECT_FAIL(birenMemset(d, 0, SIZE_MAX), OOB);
  EXPECT_FAIL(birenMemset(d, 0, (size_t)0 - (size_t)(uintptr_t)d + 16), OOB); /* wraps */

  EXPECT(all_bytes(h, SENTINEL, N));
  EXPECT(all_bytes(pin, SENTINEL, N));
  EXPECT(device_is(d, SENTINEL, N));
  OK(birenFree(d));
  OK(birenFreeHost(pin));
  return 0;
}

/* ---- async variants: checked at enqueue like the synchronous ones --------------------------- */

static int async_copy_and_fill_checked_at_enqueue(void) {
  unsigned char src[N], out[N];
  void *d = NULL;
  OK(device_filled(&d, N, SENTINEL));
  pattern(src, N, 9);
  EXPECT_FAIL(birenMemcpyAsync(d, src, N + 1, birenMemcpyHostToDevice, NULL), OOB);
  EXPECT_FAIL(birenMemcpyAsync(d, src, N, (birenMemcpyKind)5, NULL), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_FAIL(birenMemcpyAsync(src, out, N, birenMemcpyHostToDevice, NULL), IDP);
  EXPECT_FAIL(birenMemsetAsync(d, 0, N + 1, NULL), OOB);
  EXPECT_FAIL(birenMemsetAsync(NULL, 0, N, NULL), BIREN_ERROR_INVALID_VALUE);
  OK(birenDeviceSynchronize());
  EXPECT(device_is(d, SENTINEL, N));

  OK(birenMemsetAsync(d, 0, N, NULL));
  OK(birenMemcpyAsync(d, src, N, birenMemcpyHostToDevice, NULL));
  OK(birenMemcpyAsync(out, d, N, birenMemcpyDeviceToHost, NULL));
  OK(birenDeviceSynchronize());
  EXPECT(memcmp(out, src, N) == 0);
  OK(birenFree(d));
  return 0;
}

/* ---- birenPointerGetAttributes ------------------------------------------------------------- */

static int pointer_attributes(void) {
  birenPointerAttributes a;
  void *d = NULL, *pin = NULL, *gone = NULL;
  int local = 0;
  OK(birenMalloc(&d, N));
  OK(birenMallocHost(&pin, 3000));
  OK(birenMalloc(&gone, 512));
  OK(birenFree(gone));

  const size_t offsets[] = {0, 1, 511, N - 1};
  for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
    char *p = (char *)d + offsets[i];
    memset(&a, 0x5A, sizeof a);
    OK(birenPointerGetAttributes(&a, p));
    EXPECT(a.type == birenMemoryTypeDevice);
    EXPECT(a.device == 0);
    EXPECT(a.devicePointer == (void *)p);
    EXPECT(a.hostPointer == NULL);
    EXPECT(a.basePointer == d);
    EXPECT(a.size == N);
  }
  const size_t host_offsets[] = {0, 17, 2999};
  for (size_t i = 0; i < sizeof host_offsets / sizeof host_offsets[0]; i++) {
    char *p = (char *)pin + host_offsets[i];
    memset(&a, 0x5A, sizeof a);
    OK(birenPointerGetAttributes(&a, p));
    EXPECT(a.type == birenMemoryTypeHost);
    EXPECT(a.device == -1);
    EXPECT(a.devicePointer == NULL);
    EXPECT(a.hostPointer == (void *)p);
    EXPECT(a.basePointer == pin);
    EXPECT(a.size == 3000);
  }
  /* One past the end (alignment padding) is not part of the allocation. */
  OK(birenPointerGetAttributes(&a, (char *)d + N));
  EXPECT(!(a.type == birenMemoryTypeDevice && a.basePointer == d));
  OK(birenPointerGetAttributes(&a, (char *)pin + 3000));
  EXPECT(!(a.type == birenMemoryTypeHost && a.basePointer == pin));
  /* Unknown pointers, NULL and freed memory are unregistered, not an error. */
  const void *unknown[] = {&local, NULL, gone, (void *)(uintptr_t)0x10};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    memset(&a, 0x5A, sizeof a);
    OK(birenPointerGetAttributes(&a, unknown[i]));
    EXPECT(a.type == birenMemoryTypeUnregistered);
    EXPECT(a.device == -1);
    EXPECT(a.devicePointer == NULL && a.hostPointer == NULL && a.basePointer == NULL);
    EXPECT(a.size == 0);
  }
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  EXPECT_FAIL(birenPointerGetAttributes(NULL, d), BIREN_ERROR_INVALID_VALUE);
  OK(birenFreeHost(pin));
  OK(birenPointerGetAttributes(&a, pin));
  EXPECT(a.type == birenMemoryTypeUnregistered);
  OK(birenFree(d));
  return 0;
}

/* ---- driver ------------------------------------------------------------------------------- */

static const test_case tests[] = {
    TEST(memory_calls_before_init_fail_and_write_nothing), /* must stay first */
    TEST(seed_snippet_runs_as_written),
    TEST(malloc_is_aligned_and_disjoint),
    TEST(malloc_size_zero_and_null_out_param),
    TEST(malloc_out_of_memory_writes_nothing),
    TEST(mem_get_info_tracks_allocations),
    TEST(free_refuses_what_is_not_a_live_allocation),
    TEST(malloc_and_free_from_many_threads),
    TEST(malloc_host_and_free_host),
    TEST(memcpy_every_kind_moves_the_bytes),
    TEST(memcpy_overlapping_ranges_as_memmove),
    TEST(memcpy_count_zero_succeeds_and_writes_nothing),
    TEST(memcpy_null_pointers),
    TEST(memcpy_unknown_kind),
    TEST(memcpy_host_pointer_as_device_pointer),
    TEST(memcpy_past_the_end_writes_nothing),
    TEST(memcpy_across_two_allocations_is_out_of_bounds),
    TEST(memcpy_size_overflow_writes_nothing),
    TEST(memset_fills_bytes),
    TEST(memset_errors_write_nothing),
    TEST(async_copy_and_fill_checked_at_enqueue),
    TEST(pointer_attributes),
};

/* The first test runs before birenInit; later ones start from an initialized runtime. */
static void before_each(void) {
  static int n;
  if (n++ == 0) return;
  if (birenInit() != BIREN_SUCCESS) {
    fprintf(stderr, "    birenInit failed\n");
    exit(2);
  }
  (void)birenGetLastError();
}

int main(void) {
  /* Configuration is read at birenInit: one device of 1 MiB, validator off. */
  setenv("BIREN_DEVICE_MEMORY", "1M", 1);
  setenv("BIREN_DEVICE_COUNT", "1", 1);
  unsetenv("BIREN_VALIDATOR");
  return RUN_TESTS("memory", tests, before_each, 20);
}
