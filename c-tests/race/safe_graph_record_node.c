/* safe_graph_record_node.c -- a graph's fill node is followed by an event record node; stream 2
 * waits for that event and sums what the node wrote. The record node orders the sum after the
 * fill (the event is reached when the node's dependencies have completed).
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
  birenGraphNode_t f = node_fill(g, NULL, 0, d, 1), r;
  CHECK(birenGraphAddEventRecordNode(&r, g, &f, 1, ev));
  birenGraphExec_t x = instantiate(g);
  CHECK(birenGraphLaunch(x, s1));
  CHECK(birenStreamWaitEvent(s2, ev));
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "the sum ran before the graph's fill node");
}
