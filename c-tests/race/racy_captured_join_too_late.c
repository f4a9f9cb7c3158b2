/* racy_captured_join_too_late.c -- the capture of safe_captured_fork_join.c with the join moved
 * after the add: stream 2's fill of b is joined back into stream 1 only at the end, so the
 * captured graph has no edge from the fill of b to the add that reads b.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *a = dev_ints(), *b = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1), run = stream(0);
  birenEvent_t fork = event(), join = event();
  birenGraph_t g;
  CHECK(birenStreamBeginCapture(s1, birenStreamCaptureModeGlobal));
  launch_fill(a, 1, s1);
  CHECK(birenEventRecord(fork, s1));
  CHECK(birenStreamWaitEvent(s2, fork));
  launch_fill(b, 2, s2);
  launch_add(a, b, s1); /* reads b: nothing orders it after the fill of b */
  CHECK(birenEventRecord(join, s2));
  CHECK(birenStreamWaitEvent(s1, join));
  CHECK(birenStreamEndCapture(s1, &g));
  birenGraphExec_t x = instantiate(g);
  CHECK(birenGraphLaunch(x, run));
  launch_sum(a, out, run);
  CHECK(birenStreamSynchronize(run));
  return verdict(read_long(out) == 3 * N, "the add read b before it was filled");
}
