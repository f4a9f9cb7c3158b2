/* safe_same_stream.c -- writer, reader and overwriter all in one stream: program order.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s = stream(1);
  launch_fill(d, 1, s);
  launch_sum(d, out, s);
  CHECK(birenMemsetAsync(d, 0, N * sizeof(int), s));
  CHECK(birenStreamSynchronize(s));
  return verdict(read_long(out) == N, "program order was broken");
}
