/* safe_captured_fork_join.c -- a graph captured from two streams: stream 1 fills a, forks to
 * stream 2 (event) which fills b, joins back (event), then adds b into a. The captured edges
 * order every node that shares memory.
 * verdict: race-free
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
  CHECK(birenEventRecord(join, s2));
  CHECK(birenStreamWaitEvent(s1, join));
  launch_add(a, b, s1);
  CHECK(birenStreamEndCapture(s1, &g));
  birenGraphExec_t x = instantiate(g);
  CHECK(birenGraphLaunch(x, run));
  launch_sum(a, out, run);
  CHECK(birenStreamSynchronize(run));
  return verdict(read_long(out) == 3 * N, "a + b is not 3 everywhere");
}
