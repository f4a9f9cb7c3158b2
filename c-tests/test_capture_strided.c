/* Stream capture of 2D/3D copies and fills: birenMemcpy2DAsync, birenMemcpy3DAsync,
 * birenMemset2DAsync and birenMemset3DAsync in a capturing stream become memcpy and memset
 * nodes (nothing runs while capturing), and a launch of the graph leaves the same memory as the
 * same calls on a stream. Their synchronous forms are refused while the capture mode forbids
 * them. birenGraphAddMemcpyNode takes any parameters birenMemcpy3D takes. */
#include "harness.h"

enum { W = 24, H = 5, D = 3, YS = 7 }; /* box W x H x D in slices of YS rows */

typedef struct buffers {
  birenPitchedPtr a, b; /* 3D device boxes (ysize YS) */
  char *flat;           /* device, H rows of W bytes, pitch W */
  char host_in[H][32];  /* host source rows, pitch 32 */
  char host_out[D][YS][W];
} buffers;

static int alloc(buffers *x) {
  birenExtent e = {W, YS, D};
  OK(birenMalloc3D(&x->a, e));
  OK(birenMalloc3D(&x->b, e));
  OK(birenMalloc((void **)&x->flat, (size_t)W * H));
  OK(birenMemset(x->a.ptr, 0x11, x->a.pitch * YS * D));
  OK(birenMemset(x->b.ptr, 0x22, x->b.pitch * YS * D));
  OK(birenMemset(x->flat, 0x33, (size_t)W * H));
  for (int r = 0; r < H; r++)
    for (int c = 0; c < 32; c++) x->host_in[r][c] = (char)(r * 32 + c);
  memset(x->host_out, 0x7f, sizeof x->host_out);
  return 0;
}

static int release(buffers *x) {
  OK(birenFree(x->a.ptr));
  OK(birenFree(x->b.ptr));
  OK(birenFree(x->flat));
  return 0;
}

/* The sequence: host rows -> flat (2D H2D); a 2D fill inside a; flat -> slice 1 of a at (2,1)
 * (3D copy, depth 1); a 3D fill of a sub-box of b (rows short of ysize: slices not contiguous);
 * a -> b, whole box at (1,1,0) (3D D2D); b -> host (3D D2H). */
static int enqueue_sequence(buffers *x, birenStream_t s) {
  OK(birenMemcpy2DAsync(x->flat, W, x->host_in, 32, 20, H, birenMemcpyHostToDevice, s));
  OK(birenMemset2DAsync((char *)x->a.ptr + 3, x->a.pitch, 0x5a, 10, 4, s));
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_birenPitchedPtr(x->flat, W, W, H);
  p.dstPtr = x->a;
  p.dstPos = make_birenPos(2, 1, 1);
  p.extent = make_birenExtent(20, H, 1);
  p.kind = birenMemcpyDeviceToDevice;
  OK(birenMemcpy3DAsync(&p, s));
  birenExtent fill = {7, 3, D};
  OK(birenMemset3DAsync(x->b, 0x66, fill, s));
  memset(&p, 0, sizeof p);
  p.srcPtr = x->a;
  p.dstPtr = x->b;
  p.srcPos = make_birenPos(0, 0, 0);
  p.dstPos = make_birenPos(1, 1, 0);
  p.extent = make_birenExtent(W - 4, YS - 2, D);
  p.kind = birenMemcpyDeviceToDevice;
  OK(birenMemcpy3DAsync(&p, s));
  memset(&p, 0, sizeof p);
  p.srcPtr = x->b;
  p.dstPtr = make_birenPitchedPtr(x->host_out, W, W, YS);
  p.extent = make_birenExtent(W, YS, D);
  p.kind = birenMemcpyDeviceToHost;
  OK(birenMemcpy3DAsync(&p, s));
  return 0;
}

/* A captured sequence of 2D/3D copies and fills, launched twice, leaves what the same calls on
 * a stream leave; nothing runs while capturing. */
static int captured_strided_work_matches_the_stream(void) {
  buffers *ref = calloc(1, sizeof *ref), *cap = calloc(1, sizeof *cap);
  EXPECT(ref && cap);
  if (alloc(ref) || alloc(cap)) return 1;
  birenStream_t s, cs;
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&cs, birenStreamNonBlocking));
  if (enqueue_sequence(ref, s)) return 1;
  OK(birenStreamSynchronize(s));
  OK(birenStreamBeginCapture(cs, birenStreamCaptureModeGlobal));
  if (enqueue_sequence(cap, cs)) return 1;
  birenGraph_t g;
  OK(birenStreamEndCapture(cs, &g));
  /* Nothing ran: the host output is untouched, flat still holds its fill. */
  char c0 = 0;
  EXPECT((unsigned char)cap->host_out[0][0][0] == 0x7f);
  OK(birenMemcpy(&c0, cap->flat, 1, birenMemcpyDeviceToHost));
  EXPECT(c0 == 0x33);
  birenGraphNode_t nodes[6];
  size_t n = 6;
  OK(birenGraphGetNodes(g, nodes, &n));
  EXPECT(n == 6);
  const birenGraphNodeType want[6] = {birenGraphNodeTypeMemcpy, birenGraphNodeTypeMemset, birenGraphNodeTypeMemcpy,
                                      birenGraphNodeTypeMemset, birenGraphNodeTypeMemcpy, birenGraphNodeTypeMemcpy};
  for (int i = 0; i < 6; i++) {
    birenGraphNodeType t;
    OK(birenGraphNodeGetType(nodes[i], &t));
    EXPECT(t == want[i]);
  }
  birenGraphExec_t e;
  OK(birenGraphInstantiate(&e, g, 0));
  for (int round = 0; round < 2; round++) {
    OK(birenGraphLaunch(e, cs));
    OK(birenStreamSynchronize(cs));
    EXPECT(memcmp(ref->host_out, cap->host_out, sizeof ref->host_out) == 0);
  }
  /* Spot checks of the reference itself: the 3D fill reached the last slice, the copy moved
   * the host rows. */
  EXPECT(ref->host_out[D - 1][0][0] == 0x66 && ref->host_out[D - 1][4][0] == 0x22);
  EXPECT(ref->host_out[1][2][4] == ref->host_in[0][1]);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(s));
  OK(birenStreamDestroy(cs));
  if (release(ref) || release(cap)) return 1;
  free(ref);
  free(cap);
  return 0;
}

/* A captured 2D copy whose device memory is freed after the capture: the launch is refused
 * with INVALID_DEVICE_POINTER (checked again at every launch, as for explicit nodes). */
static int captured_strided_copy_checks_memory_at_launch(void) {
  char *d, h[64];
  birenStream_t cs;
  OK(birenMalloc((void **)&d, 64));
  OK(birenStreamCreateWithFlags(&cs, birenStreamNonBlocking));
  OK(birenStreamBeginCapture(cs, birenStreamCaptureModeGlobal));
  OK(birenMemcpy2DAsync(h, 16, d, 16, 8, 4, birenMemcpyDeviceToHost, cs));
  birenGraph_t g;
  OK(birenStreamEndCapture(cs, &g));
  birenGraphExec_t e;
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenFree(d));
  EXPECT_CODE(birenGraphLaunch(e, cs), BIREN_ERROR_INVALID_DEVICE_POINTER);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(cs));
  return 0;
}

/* The synchronous 2D/3D forms are potentially unsafe calls: refused with
 * STREAM_CAPTURE_UNSUPPORTED while this thread captures in global mode (the capture is
 * invalidated); the asynchronous forms' argument errors are returned as outside a capture. */
static int sync_forms_are_refused_while_capturing(void) {
  char *d, h[64];
  birenPitchedPtr p3;
  birenExtent e = {8, 2, 2};
  OK(birenMalloc((void **)&d, 64));
  OK(birenMalloc3D(&p3, e));
  birenStream_t cs;
  OK(birenStreamCreateWithFlags(&cs, birenStreamNonBlocking));
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = p3;
  p.dstPtr = make_birenPitchedPtr(h, 8, 8, 2);
  p.extent = e;
  p.kind = birenMemcpyDeviceToHost;
  for (int which = 0; which < 4; which++) {
    OK(birenStreamBeginCapture(cs, birenStreamCaptureModeGlobal));
    birenError_t r = BIREN_SUCCESS;
    switch (which) {
      case 0: r = birenMemcpy2D(h, 16, d, 16, 8, 4, birenMemcpyDeviceToHost); break;
      case 1: r = birenMemset2D(d, 16, 1, 8, 4); break;
      case 2: r = birenMemcpy3D(&p); break;
      default: r = birenMemset3D(p3, 1, e); break;
    }
    EXPECT_CODE(r, BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    /* Async argument errors inside the capture: as outside, and no node is added. */
    EXPECT_CODE(birenMemcpy2DAsync(h, 4, d, 16, 8, 4, birenMemcpyDeviceToHost, cs), BIREN_ERROR_INVALID_PITCH_VALUE);
    birenGraph_t g;
    EXPECT_CODE(birenStreamEndCapture(cs, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  }
  /* In relaxed mode the synchronous form runs (on the default stream, outside the capture). */
  birenStreamCaptureMode mode = birenStreamCaptureModeRelaxed;
  OK(birenThreadExchangeStreamCaptureMode(&mode));
  OK(birenStreamBeginCapture(cs, birenStreamCaptureModeRelaxed));
  OK(birenMemset2D(d, 16, 9, 8, 4));
  OK(birenMemset2DAsync(d, 16, 3, 8, 4, cs));
  birenGraph_t g;
  OK(birenStreamEndCapture(cs, &g));
  OK(birenThreadExchangeStreamCaptureMode(&mode));
  memset(h, 0, sizeof h);
  OK(birenMemcpy(h, d, 64, birenMemcpyDeviceToHost));
  EXPECT(h[0] == 9 && h[48 + 7] == 9); /* the captured fill (3) did not run */
  birenGraphExec_t ex;
  OK(birenGraphInstantiate(&ex, g, 0));
  OK(birenGraphLaunch(ex, cs));
  OK(birenStreamSynchronize(cs));
  OK(birenMemcpy(h, d, 64, birenMemcpyDeviceToHost));
  EXPECT(h[0] == 3 && h[16 * 3 + 7] == 3);
  OK(birenGraphExecDestroy(ex));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(cs));
  OK(birenFree(d));
  OK(birenFree(p3.ptr));
  return 0;
}

/* birenGraphAddMemcpyNode takes what birenMemcpy3D takes: a box at a position in 3D, and a
 * zero extent (a node that copies nothing); a 3D memset node from capture spans its slices. */
static int memcpy_node_takes_any_memcpy3d_parameters(void) {
  birenPitchedPtr a;
  birenExtent e = {16, 4, 3};
  OK(birenMalloc3D(&a, e));
  OK(birenMemset(a.ptr, 0, a.pitch * 4 * 3));
  static char h[3][4][16];
  for (int z = 0; z < 3; z++)
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 16; x++) h[z][y][x] = (char)(z * 64 + y * 16 + x);
  birenGraph_t g;
  birenGraphNode_t n1, n2, n3;
  OK(birenGraphCreate(&g, 0));
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_birenPitchedPtr(h, 16, 16, 4);
  p.srcPos = make_birenPos(1, 1, 1);
  p.dstPtr = a;
  p.dstPos = make_birenPos(2, 2, 1);
  p.extent = make_birenExtent(5, 2, 2);
  p.kind = birenMemcpyHostToDevice;
  OK(birenGraphAddMemcpyNode(&n1, g, NULL, 0, &p));
  birenMemcpy3DParms z = p;
  z.extent = make_birenExtent(0, 2, 2);
  OK(birenGraphAddMemcpyNode(&n2, g, &n1, 1, &z));
  z.srcPtr.ptr = NULL;
  EXPECT_CODE(birenGraphAddMemcpyNode(&n3, g, NULL, 0, &z), BIREN_ERROR_INVALID_VALUE);
  birenGraphExec_t ex;
  OK(birenGraphInstantiate(&ex, g, 0));
  OK(birenGraphLaunch(ex, NULL));
  OK(birenStreamSynchronize(NULL));
  static char back[3][4][16];
  OK(birenMemcpy3D(&(birenMemcpy3DParms){.srcPtr = a, .dstPtr = make_birenPitchedPtr(back, 16, 16, 4), .extent = e, .kind = birenMemcpyDeviceToHost}));
  for (int zz = 0; zz < 3; zz++)
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 16; x++) {
        int in = zz >= 1 && zz < 3 && y >= 2 && y < 4 && x >= 2 && x < 7;
        char want = in ? h[zz][y - 1][x - 1] : 0;
        if (back[zz][y][x] != want) {
          fprintf(stderr, "    (%d,%d,%d): %d, expected %d\n", x, y, zz, back[zz][y][x], want);
          return 1;
        }
      }
  OK(birenGraphExecDestroy(ex));
  OK(birenGraphDestroy(g));
  OK(birenFree(a.ptr));
  return 0;
}

/* birenGraphAddMemcpyNode refuses what birenMemcpy3D refuses, with the same code: a row over
 * its pitch, a pitch over memPitch (INVALID_PITCH_VALUE), rows running into the next slice
 * (INVALID_VALUE), an unknown kind (INVALID_MEMCPY_DIRECTION). */
static int memcpy_node_and_memcpy3d_refuse_alike(void) {
  birenPitchedPtr a;
  birenExtent e = {16, 4, 3};
  static char h[3][4][16];
  birenDeviceProp prop;
  OK(birenGetDeviceProperties(&prop, 0));
  OK(birenMalloc3D(&a, e));
  birenGraph_t g;
  birenGraphNode_t n;
  OK(birenGraphCreate(&g, 0));
  for (int which = 0; which < 5; which++) {
    birenMemcpy3DParms p;
    birenError_t want = BIREN_ERROR_INVALID_PITCH_VALUE;
    memset(&p, 0, sizeof p);
    p.srcPtr = make_birenPitchedPtr(h, 16, 16, 4);
    p.dstPtr = a;
    p.extent = make_birenExtent(8, 2, 2);
    p.kind = birenMemcpyHostToDevice;
    switch (which) {
      case 0: p.srcPos = make_birenPos(9, 0, 0); break;                     /* 9 + 8 > 16 */
      case 1: p.extent = make_birenExtent(8, 1, 1); p.srcPtr.pitch = 4; break; /* one row */
      case 2: p.srcPtr.pitch = prop.memPitch + 1; break;
      case 3: p.srcPos = make_birenPos(0, 3, 0); want = BIREN_ERROR_INVALID_VALUE; break;
      default: p.kind = 7; want = BIREN_ERROR_INVALID_MEMCPY_DIRECTION; break;
    }
    n = NULL;
    EXPECT_CODE(birenMemcpy3D(&p), want);
    EXPECT_CODE(birenGraphAddMemcpyNode(&n, g, NULL, 0, &p), want);
    EXPECT(n == NULL);
  }
  OK(birenGraphDestroy(g));
  OK(birenFree(a.ptr));
  return 0;
}

static void reset_device(void) { (void)birenDeviceReset(); }

static const test_case tests[] = {
    TEST(captured_strided_work_matches_the_stream),
    TEST(captured_strided_copy_checks_memory_at_launch),
    TEST(sync_forms_are_refused_while_capturing),
    TEST(memcpy_node_takes_any_memcpy3d_parameters),
    TEST(memcpy_node_and_memcpy3d_refuse_alike),
};

int main(void) {
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("capture strided", tests, reset_device, 30);
}
