/* racy_host_function_order.c -- a host function in stream 2 enqueues a download of memory
 * that a kernel in stream 1 writes: the host function is ordered after stream 2's work, not
 * after stream 1's.
 * verdict: racy
 * fuzz: yes
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
  CHECK(birenLaunchHostFunc(g_s2, download, NULL)); /* should have been in s1 */
  while (!atomic_load(&g_enqueued)) {
  }
  CHECK(birenDeviceSynchronize());
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= g_h[i] == 3;
  return verdict(ok, "the download read stale data");
}
