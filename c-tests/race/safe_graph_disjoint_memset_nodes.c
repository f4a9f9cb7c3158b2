/* safe_graph_disjoint_memset_nodes.c -- two memset nodes with no edge between them fill the
 * two halves of one buffer (nodes are tracked by their exact bytes), then a kernel node after
 * both adds the buffer into another.
 * verdict: race-free
 */
#include "race.h"

static birenGraphNode_t node_memset(birenGraph_t g, int *p, size_t ints, int value) {
  birenGraphNode_t n;
  birenMemsetParams m;
  memset(&m, 0, sizeof m);
  m.dst = p;
  m.value = (unsigned)value;
  m.elementSize = sizeof(int);
  m.width = ints;
  m.height = 1;
  CHECK(birenGraphAddMemsetNode(&n, g, NULL, 0, &m));
  return n;
}

int main(void) {
  setup();
  int *a = dev_ints(), *b = dev_ints();
  long *out = dev_long();
  birenStream_t s = stream(0);
  birenGraph_t g;
  CHECK(birenGraphCreate(&g, 0));
  birenGraphNode_t halves[2] = {node_memset(g, b, N / 2, 1), node_memset(g, b + N / 2, N / 2, 2)};
  node_add(g, halves, 2, a, b);
  birenGraphExec_t x = instantiate(g);
  CHECK(birenGraphLaunch(x, s));
  launch_sum(a, out, s);
  CHECK(birenStreamSynchronize(s));
  return verdict(read_long(out) == 3 * N / 2, "the sum of the halves is wrong");
}
