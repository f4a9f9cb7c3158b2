/* racy_graph_vs_other_stream.c -- a graph launched in stream 1 fills a buffer; a kernel in
 * stream 2 sums it, and nothing orders the launch before the kernel.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(0), s2 = stream(0);
  birenGraph_t g;
  CHECK(birenGraphCreate(&g, 0));
  node_fill(g, NULL, 0, d, 1);
  birenGraphExec_t x = instantiate(g);
  CHECK(birenGraphLaunch(x, s1));
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "the sum ran before the graph's node");
}
