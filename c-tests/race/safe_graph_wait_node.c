/* safe_graph_wait_node.c -- stream 2 fills a buffer and records an event; a graph launched in
 * stream 1 waits for the event in an event wait node before its add node reads the buffer.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints(), *acc = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(0), s2 = stream(0);
  birenEvent_t ev = event();
  launch_fill(acc, 0, s1);
  launch_fill(d, 1, s2);
  CHECK(birenEventRecord(ev, s2));
  birenGraph_t g;
  CHECK(birenGraphCreate(&g, 0));
  birenGraphNode_t w;
  CHECK(birenGraphAddEventWaitNode(&w, g, NULL, 0, ev));
  node_add(g, &w, 1, acc, d);
  birenGraphExec_t x = instantiate(g);
  CHECK(birenGraphLaunch(x, s1));
  launch_sum(acc, out, s1);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "the add node ran before stream 2's fill");
}
