/* safe_default_stream_after_blocking.c -- a kernel in a blocking stream writes; a synchronous copy on the
 * legacy default stream reads: the default stream waits for blocking streams.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  birenStream_t s = stream(0);
  int h[N];
  launch_fill(d, 1, s);
  CHECK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= h[i] == 1;
  return verdict(ok, "the copy read stale data");
}
