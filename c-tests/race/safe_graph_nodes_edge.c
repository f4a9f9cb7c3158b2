/* safe_graph_nodes_edge.c -- the graph of racy_graph_nodes_unordered.c with the edge from the
 * first writer to the second, launched three times in one stream (successive launches of one
 * executable graph follow each other), then summed in the same stream.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s = stream(0);
  birenGraph_t g;
  CHECK(birenGraphCreate(&g, 0));
  birenGraphNode_t a = node_fill(g, NULL, 0, d, 1);
  node_fill(g, &a, 1, d, 2);
  birenGraphExec_t x = instantiate(g);
  for (int i = 0; i < 3; i++) CHECK(birenGraphLaunch(x, s));
  launch_sum(d, out, s);
  CHECK(birenStreamSynchronize(s));
  return verdict(read_long(out) == 2 * N, "the nodes ran out of order");
}
