/* racy_graph_nodes_unordered.c -- one graph, two kernel nodes writing the same buffer (1, then
 * 2 was meant), and no edge between them: a launch runs them in either order, or at once.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s = stream(0);
  birenGraph_t g;
  CHECK(birenGraphCreate(&g, 0));
  node_fill(g, NULL, 0, d, 1);
  node_fill(g, NULL, 0, d, 2); /* meant to come after the first: no edge says so */
  birenGraphExec_t x = instantiate(g);
  CHECK(birenGraphLaunch(x, s));
  launch_sum(d, out, s);
  CHECK(birenStreamSynchronize(s));
  return verdict(read_long(out) == 2 * N, "the first node's 1s won");
}
