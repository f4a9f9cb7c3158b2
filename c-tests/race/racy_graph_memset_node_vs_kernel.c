/* racy_graph_memset_node_vs_kernel.c -- a graph's memset node clears a buffer in stream 1
 * while a kernel in stream 2 fills the same buffer; nothing orders the launch and the kernel.
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
  birenGraphNode_t n;
  birenMemsetParams m;
  memset(&m, 0, sizeof m);
  m.dst = d;
  m.elementSize = sizeof(int);
  m.width = N;
  m.height = 1;
  CHECK(birenGraphAddMemsetNode(&n, g, NULL, 0, &m));
  birenGraphExec_t x = instantiate(g);
  CHECK(birenGraphLaunch(x, s1));
  launch_fill(d, 1, s2); /* meant to come after the clear */
  CHECK(birenDeviceSynchronize());
  launch_sum(d, out, s1);
  CHECK(birenStreamSynchronize(s1));
  return verdict(read_long(out) == N, "the clear came after the fill");
}
