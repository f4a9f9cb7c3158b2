/* Race detection through its API: birenSetRaceCheck, findings to the validator callback, one
 * finding per race, the wording of the fixes. (The corpus of racy and race-free programs is
 * c-tests/race/, run by test_racecheck.sh.) */
#include "harness.h"
#include "timed_kernels.h"

enum { N = 256 };

static void writer(void **args) {
  int *p = *(int **)args[0];
  p[birenThreadIdx().x] = 1;
}
static void reader(void **args) {
  const int *p = *(const int **)args[0];
  int *out = *(int **)args[1];
  int s = 0;
  for (int i = 0; i < N; i++) s += p[i];
  *out = s;
}

static char g_lines[8][2048];
static int g_count;
static void collect(const char *line, void *user) {
  (void)user;
  if (strncmp(line, "biren racecheck:", 16) != 0) return;
  if (strstr(line, "distinct race(s) found")) return;
  if (g_count < 8) snprintf(g_lines[g_count], sizeof g_lines[0], "%s", line);
  g_count++;
}

static int *g_buf, *g_out;
static birenStream_t g_s1, g_s2;

/* Allocates with race detection off (turning it on must pick these up), then turns it on. */
static int setup(int nonblocking) {
  g_count = 0;
  OK(birenSetRaceCheck(0));
  OK(birenMalloc((void **)&g_buf, N * sizeof(int)));
  OK(birenMalloc((void **)&g_out, sizeof(int)));
  OK(birenMemset(g_buf, 0, N * sizeof(int)));
  OK(birenStreamCreateWithFlags(&g_s1, nonblocking ? birenStreamNonBlocking : 0));
  OK(birenStreamCreateWithFlags(&g_s2, nonblocking ? birenStreamNonBlocking : 0));
  OK(birenSetValidatorCallback(collect, NULL));
  OK(birenSetRaceCheck(1));
  return 0;
}

static int teardown(void) {
  OK(birenDeviceSynchronize());
  OK(birenSetRaceCheck(0));
  OK(birenSetValidatorCallback(NULL, NULL));
  return 0;
}

static int unordered(int with_event) {
  birenEvent_t ev;
  OK(birenEventCreate(&ev));
  OK(BIREN_LAUNCH(writer, birenDim3(1, 1, 1), birenDim3(N, 1, 1), 0, g_s1, g_buf));
  OK(birenEventRecord(ev, g_s1));
  if (with_event) OK(birenStreamWaitEvent(g_s2, ev));
  OK(BIREN_LAUNCH(reader, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, g_s2, g_buf, g_out));
  OK(birenDeviceSynchronize());
  OK(birenEventDestroy(ev));
  return 0;
}

static int a_race_is_reported_with_both_kernels_and_the_fix(void) {
  if (setup(0) || unordered(0) || teardown()) return 1;
  EXPECT(g_count == 1);
  const char *l = g_lines[0];
  EXPECT(strstr(l, "kernel 'writer' (stream #") != NULL);
  EXPECT(strstr(l, "kernel 'reader' (stream #") != NULL);
  EXPECT(strstr(l, "writes bytes 0..1024") != NULL);
  EXPECT(strstr(l, "reads bytes 0..1024 of the 1024-byte device allocation") != NULL);
  EXPECT(strstr(l, "Fix: record an event after the kernel 'writer'") != NULL);
  EXPECT(strstr(l, "test_racecheck_api") != NULL); /* the call site is in this program */
  return 0;
}

static int the_event_silences_it(void) {
  if (setup(0) || unordered(1) || teardown()) return 1;
  EXPECT(g_count == 0);
  return 0;
}

static int off_reports_nothing(void) {
  if (setup(0)) return 1;
  OK(birenSetRaceCheck(0));
  if (unordered(0) || teardown()) return 1;
  EXPECT(g_count == 0);
  return 0;
}

static int the_same_race_is_reported_once(void) {
  if (setup(0)) return 1;
  for (int i = 0; i < 5; i++)
    if (unordered(0)) return 1;
  if (teardown()) return 1;
  EXPECT(g_count == 1);
  return 0;
}

static int exact_byte_ranges_for_memsets(void) {
  if (setup(1)) return 1;
  char *b = (char *)g_buf;
  OK(birenMemsetAsync(b, 1, 100, g_s1));
  OK(birenMemsetAsync(b + 100, 2, 100, g_s2)); /* adjacent: no race */
  OK(birenDeviceSynchronize());
  EXPECT(g_count == 0);
  OK(birenMemsetAsync(b + 150, 3, 1, g_s1)); /* unordered with nothing: the sync ordered all */
  EXPECT(g_count == 0);
  OK(birenMemsetAsync(b + 150, 4, 10, g_s2)); /* overlaps the one above at byte 150 */
  if (teardown()) return 1;
  EXPECT(g_count == 1);
  EXPECT(strstr(g_lines[0], "overlap at bytes 150..151") != NULL);
  return 0;
}

static int a_synchronous_copy_is_told_to_synchronize(void) {
  if (setup(1)) return 1;
  int h[N];
  OK(BIREN_LAUNCH(writer, birenDim3(1, 1, 1), birenDim3(N, 1, 1), 0, g_s1, g_buf));
  OK(birenMemcpy(h, g_buf, sizeof h, birenMemcpyDeviceToHost)); /* s1 is non-blocking */
  if (teardown()) return 1;
  EXPECT(g_count == 1);
  EXPECT(strstr(g_lines[0], "before calling birenMemcpy") != NULL);
  return 0;
}

/* A captured 3-D memset writes every slice: a memset of another stream on its last slice races
 * with the graph's node. */
static int a_captured_3d_memset_races_on_its_last_slice(void) {
  if (setup(1)) return 1;
  birenPitchedPtr p;
  birenExtent e = make_birenExtent(64, 4, 4);
  birenGraph_t g;
  birenGraphExec_t x;
  OK(birenMalloc3D(&p, e));
  OK(birenStreamBeginCapture(g_s1, birenStreamCaptureModeGlobal));
  OK(birenMemset3DAsync(p, 7, e, g_s1));
  OK(birenStreamEndCapture(g_s1, &g));
  OK(birenGraphInstantiate(&x, g, 0));
  OK(birenGraphLaunch(x, g_s1));
  /* Unordered with the launch: slice 3, row 2, bytes 10..14. */
  OK(birenMemsetAsync((char *)p.ptr + p.pitch * 4 * 3 + p.pitch * 2 + 10, 1, 4, g_s2));
  if (teardown()) return 1;
  OK(birenGraphExecDestroy(x));
  OK(birenGraphDestroy(g));
  OK(birenFree(p.ptr));
  EXPECT(g_count == 1);
  EXPECT(g_count > 0 && strstr(g_lines[0], "graph") != NULL);
  return 0;
}

static int freeing_a_buffer_a_copy_still_reads(void) {
  if (setup(1)) return 1;
  int *h;
  OK(birenMallocHost((void **)&h, 1 << 20));
  memset(h, 1, 1 << 20);
  int *big;
  OK(birenMalloc((void **)&big, 1 << 20));
  OK(birenMemcpyAsync(big, h, 1 << 20, birenMemcpyHostToDevice, g_s1));
  OK(birenStreamSynchronize(g_s1));
  OK(birenFreeHost(h)); /* after a synchronize: fine */
  EXPECT(g_count == 0);
  if (under_valgrind()) {
    printf("    skipped under valgrind: the second half (birenFreeHost while a queued copy still "
           "reads the buffer: memcheck counts the copy engine's deliberate reads of the freed "
           "block as invalid reads)\n");
    return teardown();
  }
  OK(birenMallocHost((void **)&h, 1 << 20));
  OK(birenMemcpyAsync(h, big, 1 << 20, birenMemcpyDeviceToHost, g_s1));
  OK(birenStreamSynchronize(g_s1));
  OK(birenMemcpyAsync(big, h, 1 << 20, birenMemcpyHostToDevice, g_s2));
  OK(birenFreeHost(h)); /* the copy in s2 may still read it */
  if (teardown()) return 1;
  EXPECT(g_count == 1);
  EXPECT(strstr(g_lines[0], "birenFreeHost by host thread") != NULL);
  EXPECT(strstr(g_lines[0], "page-locked host buffer") != NULL);
  return 0;
}

static const test_case tests[] = {
    TEST(a_race_is_reported_with_both_kernels_and_the_fix),
    TEST(the_event_silences_it),
    TEST(off_reports_nothing),
    TEST(the_same_race_is_reported_once),
    TEST(exact_byte_ranges_for_memsets),
    TEST(a_synchronous_copy_is_told_to_synchronize),
    TEST(freeing_a_buffer_a_copy_still_reads),
    TEST(a_captured_3d_memset_races_on_its_last_slice),
};

int main(void) {
  want_two_compute_units();
  if (birenSetRaceCheck(1) != BIREN_ERROR_NOT_INITIALIZED) {
    fprintf(stderr, "birenSetRaceCheck before birenInit must return BIREN_ERROR_NOT_INITIALIZED\n");
    return 1;
  }
  if (birenInit() != BIREN_SUCCESS) return 2;
  size_t w[1] = {sizeof(int *)}, r[2] = {sizeof(int *), sizeof(int *)};
  if (birenKernelRegister(writer, "writer", 1, w) != BIREN_SUCCESS) return 2;
  if (birenKernelRegister(reader, "reader", 2, r) != BIREN_SUCCESS) return 2;
  return RUN_TESTS("racecheck api", tests, reset_device, 20);
}
