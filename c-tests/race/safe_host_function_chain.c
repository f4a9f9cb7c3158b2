/* safe_host_function_chain.c -- a host function in stream 1, after the writer, enqueues the
 * download in stream 2: it runs after the writer, so the download is ordered after it.
 * verdict: race-free
 */
#include "race.h"

#include <stdatomic.h>
static int *g_d, *g_h;
static birenStream_t g_s2;
static atomic_int g_enqueued;
static void download(void *unused) {
  (void)unused;
  if (birenMemcpyAsync(g_h, g_d, N * sizeof(int), birenMemcpyDeviceToHost, g_s2) != BIREN_SUCCESS) exit(2);
  atomic_store(&g_enqueued, 1);
}
int main(void) {
  setup();
  g_d = dev_ints();
  CHECK(birenMallocHost((void **)&g_h, N * sizeof(int)));
  birenStream_t s1 = stream(1);
  g_s2 = stream(1);
  launch_fill(g_d, 3, s1);
  CHECK(birenLaunchHostFunc(s1, download, NULL));
  while (!atomic_load(&g_enqueued)) {
  }
  CHECK(birenStreamSynchronize(g_s2));
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= g_h[i] == 3;
  CHECK(birenDeviceSynchronize());
  return verdict(ok, "the download read stale data");
}
