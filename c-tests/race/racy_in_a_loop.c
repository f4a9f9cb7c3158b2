/* racy_in_a_loop.c -- the missing event, in a loop of 10 iterations: reported once,
 * with a count at exit.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(0), s2 = stream(0);
  int ok = 1;
  for (int it = 1; it <= 10; it++) {
    launch_fill(d, it, s1);
    launch_sum(d, out, s2);
    CHECK(birenDeviceSynchronize());
    ok &= read_long(out) == (long)it * N;
  }
  return verdict(ok, "an iteration summed stale data");
}
