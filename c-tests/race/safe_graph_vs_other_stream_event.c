/* safe_graph_vs_other_stream_event.c -- racy_graph_vs_other_stream.c with an event recorded
 * after the graph launch in stream 1 that stream 2 waits for before the sum.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(0), s2 = stream(0);
  birenEvent_t ev = event();
  birenGraph_t g;
  CHECK(birenGraphCreate(&g, 0));
  node_fill(g, NULL, 0, d, 1);
  birenGraphExec_t x = instantiate(g);
  CHECK(birenGraphLaunch(x, s1));
  CHECK(birenEventRecord(ev, s1));
  CHECK(birenStreamWaitEvent(s2, ev));
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "the sum ran before the graph's node");
}
