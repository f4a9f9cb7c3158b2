/* safe_graph_relaunch_other_stream.c -- one executable graph (a node adding 1 to every int of a
 * buffer) launched in stream 1, then in stream 2, then in stream 1 again, with no event: every
 * launch of an executable graph is ordered after its previous launch, whatever the streams
 * (CUDA's rule), so the three read-modify-writes never overlap.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints(), *one = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1);
  launch_fill(one, 1, s1);
  CHECK(birenStreamSynchronize(s1));
  birenGraph_t g;
  CHECK(birenGraphCreate(&g, 0));
  node_add(g, NULL, 0, d, one);
  birenGraphExec_t x = instantiate(g);
  CHECK(birenGraphLaunch(x, s1));
  CHECK(birenGraphLaunch(x, s2));
  CHECK(birenGraphLaunch(x, s1));
  CHECK(birenDeviceSynchronize());
  launch_sum(d, out, s1);
  CHECK(birenStreamSynchronize(s1));
  return verdict(read_long(out) == 3 * N, "two launches overlapped");
}
