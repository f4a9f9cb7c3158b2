/* Helpers for the ported samples, in the role of the CUDA samples' helper_cuda.h and
 * helper_functions.h (written for BIREN, not copied): error checks, device selection by
 * compute capability, a stopwatch, command-line flags, finding data files. */
#ifndef BIREN_SAMPLE_HELPERS_H
#define BIREN_SAMPLE_HELPERS_H
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* checkCudaErrors(call) */
#define checkBirenErrors(call)                                                                 \
  do {                                                                                         \
    birenError_t e_ = (call);                                                                  \
    if (e_ != BIREN_SUCCESS) {                                                                 \
      fprintf(stderr, "BIREN error at %s:%d code=%d(%s) \"%s\"\n", __FILE__, __LINE__, (int)e_, \
              birenGetErrorName(e_), #call);                                                   \
      exit(EXIT_FAILURE);                                                                      \
    }                                                                                          \
  } while (0)

/* getLastCudaError(msg) */
#define getLastBirenError(msg)                                                                 \
  do {                                                                                         \
    birenError_t e_ = birenGetLastError();                                                     \
    if (e_ != BIREN_SUCCESS) {                                                                 \
      fprintf(stderr, "%s(%d): %s: (%d) %s\n", __FILE__, __LINE__, msg, (int)e_,              \
              birenGetErrorString(e_));                                                        \
      exit(EXIT_FAILURE);                                                                      \
    }                                                                                          \
  } while (0)

/* Cores per multiprocessor by compute capability (helper_cuda.h's _ConvertSMVer2Cores). */
static inline int convertSMVer2Cores(int major, int minor) {
  static const struct { int sm, cores; } table[] = {{0x30, 192}, {0x50, 128}, {0x60, 64}, {0x61, 128},
                                                   {0x70, 64},  {0x75, 64},  {0x80, 64}, {0x86, 128}};
  int sm = (major << 4) + minor;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].sm == sm) return table[i].cores;
  return 64;
}

/* The value of "-name=value" on the command line, or NULL. */
static inline const char *getCmdLineArgument(int argc, char **argv, const char *name) {
  size_t n = strlen(name);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    while (*a == '-') a++;
    if (strncmp(a, name, n) == 0 && (a[n] == '=' || a[n] == 0)) return a[n] == '=' ? a + n + 1 : a + n;
  }
  return NULL;
}

/* findCudaDevice: the device named by -device=N, else device 0; prints its compute capability
 * (read with birenDeviceGetAttribute, as helper_cuda.h does). */
static inline int findBirenDevice(int argc, char **argv) {
  int count = 0, dev = 0;
  checkBirenErrors(birenGetDeviceCount(&count));
  const char *d = getCmdLineArgument(argc, argv, "device");
  if (d && *d) dev = atoi(d);
  if (dev < 0 || dev >= count) {
    fprintf(stderr, "Invalid device %d, using 0\n", dev);
    dev = 0;
  }
  checkBirenErrors(birenSetDevice(dev));
  int major = 0, minor = 0;
  checkBirenErrors(birenDeviceGetAttribute(&major, birenDevAttrComputeCapabilityMajor, dev));
  checkBirenErrors(birenDeviceGetAttribute(&minor, birenDevAttrComputeCapabilityMinor, dev));
  birenDeviceProp p;
  checkBirenErrors(birenGetDeviceProperties(&p, dev));
  printf("GPU Device %d: \"%s\" with compute capability %d.%d\n\n", dev, p.name, major, minor);
  return dev;
}

/* checkCudaCapabilities(major, minor) */
static inline int checkBirenCapabilities(int major, int minor) {
  int dev = 0, ma = 0, mi = 0;
  checkBirenErrors(birenGetDevice(&dev));
  checkBirenErrors(birenDeviceGetAttribute(&ma, birenDevAttrComputeCapabilityMajor, dev));
  checkBirenErrors(birenDeviceGetAttribute(&mi, birenDevAttrComputeCapabilityMinor, dev));
  return ma > major || (ma == major && mi >= minor);
}

/* The StopWatchInterface of helper_functions.h, reduced to what the samples use. */
static inline double sdkNowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* sdkFindFilePath(name, argv[0]), reduced to where the ports keep their data (samples/data/):
 * the first of NAME, data/NAME and samples/data/NAME from the working directory, then data/NAME
 * and ../../samples/data/NAME beside the program (build/samples/X), that opens. Writes it into
 * path[n] and returns path, or returns NULL. */
static inline const char *sdkFindFilePath(const char *name, const char *exec_path, char *path, size_t n) {
  const char *dirs[] = {"", "data/", "samples/data/", "data/", "../../samples/data/"};
  const char *slash = exec_path ? strrchr(exec_path, '/') : NULL;
  int base = slash ? (int)(slash - exec_path) + 1 : 0;
  for (int i = 0; i < 5; i++) {
    if (i >= 3 && !slash) break;
    if (snprintf(path, n, "%.*s%s%s", i >= 3 ? base : 0, exec_path ? exec_path : "", dirs[i], name) >= (int)n)
      continue;
    FILE *f = fopen(path, "rb");
    if (f) {
      fclose(f);
      return path;
    }
  }
  return NULL;
}

/* The samples' sizes are cut for `make test`; BIREN_SAMPLES_FULL=1 restores the originals. */
static inline int sampleFullSize(void) {
  const char *v = getenv("BIREN_SAMPLES_FULL");
  return v && strcmp(v, "1") == 0;
}

/* A CPU rendition of CUDA's fetch rules for a float texture with normalized coordinates, wrap
 * and linear filtering (texel centres, weights in 9-bit fixed point): what the texture
 * samples' reference images hold, made here instead of read from the originals' .pgm files. */
static inline float sampleTexel(const float *img, int w, int h, int i, int j) {
  i = ((i % w) + w) % w;
  j = ((j % h) + h) % h;
  return img[j * w + i];
}
static inline float sampleWeight9(float f) { return floorf(f * 256.0f + 0.5f) / 256.0f; }
static inline float sampleWrapLinear(const float *img, int w, int h, float x, float y) {
  x -= floorf(x);
  y -= floorf(y);
  float xb = x * w - 0.5f, yb = y * h - 0.5f;
  float fx = floorf(xb), fy = floorf(yb);
  float a = sampleWeight9(xb - fx), b = sampleWeight9(yb - fy);
  int i = (int)fx, j = (int)fy;
  return (1 - a) * (1 - b) * sampleTexel(img, w, h, i, j) + a * (1 - b) * sampleTexel(img, w, h, i + 1, j) +
         (1 - a) * b * sampleTexel(img, w, h, i, j + 1) + a * b * sampleTexel(img, w, h, i + 1, j + 1);
}

/* The texture samples' image in place of teapot512.pgm: a smooth pattern with edges. */
static inline void sampleImage(float *img, unsigned width, unsigned height) {
  for (unsigned y = 0; y < height; y++)
    for (unsigned x = 0; x < width; x++)
      img[y * width + x] = 0.5f + 0.25f * sinf(x * 0.11f) * cosf(y * 0.07f) + ((x / 16 + y / 16) % 2 ? 0.25f : 0.0f);
}

#endif
