/* Device symbols: BIREN_DEVICE_SYMBOL / BIREN_DEVICE_ARRAY / BIREN_CONSTANT_ARRAY,
 * birenMemcpyToSymbol / birenMemcpyFromSymbol (+Async), birenGetSymbolAddress,
 * birenGetSymbolSize, birenRegisterSymbol; bounds-checked, ordered with kernels. */
#include "compat.h"
#include <stdint.h>

BIREN_CONSTANT_ARRAY(float, coeffs, 4) = {1.0f, 2.0f, 3.0f, 4.0f};
BIREN_DEVICE_SYMBOL(int, counter);
BIREN_DEVICE_ARRAY(int, results, 64);
static double not_a_symbol[4];

/* results[i] = coeffs[i % 4] * 10 + counter */
static void use_symbols(void **args) {
  (void)args;
  unsigned i = birenThreadIdx().x;
  results[i] = (int)(coeffs[i % 4] * 10.0f) + counter;
}

static int symbols_are_registered_with_their_size(void) {
  size_t n = 0;
  OK(birenGetSymbolSize(&n, coeffs));
  EXPECT(n == 4 * sizeof(float));
  OK(birenGetSymbolSize(&n, &counter));
  EXPECT(n == sizeof(int));
  OK(birenGetSymbolSize(&n, results));
  EXPECT(n == 64 * sizeof(int));
  void *p = NULL;
  OK(birenGetSymbolAddress(&p, results));
  EXPECT(p == (void *)results);
  EXPECT(coeffs[2] == 3.0f); /* the initializer stands */
  return 0;
}

static int copies_to_and_from_symbols_are_ordered_with_kernels(void) {
  int c = 100;
  OK(birenMemcpyToSymbol(&counter, &c, sizeof c, 0, birenMemcpyHostToDevice));
  float two[2] = {7.0f, 8.0f};
  OK(birenMemcpyToSymbol(coeffs, two, sizeof two, 2 * sizeof(float), birenMemcpyHostToDevice));
  OK(birenLaunchKernel(use_symbols, birenDim3(1, 1, 1), birenDim3(64, 1, 1), NULL, 0, NULL));
  int h[64];
  OK(birenMemcpyFromSymbol(h, results, sizeof h, 0, birenMemcpyDeviceToHost));
  const int expect4[4] = {10, 20, 70, 80};
  for (int i = 0; i < 64; i++) EXPECT(h[i] == expect4[i % 4] + 100);
  /* Async on a stream, device memory on the other side, and the symbol's address in birenMemcpy. */
  birenStream_t s;
  OK(birenStreamCreate(&s));
  int *d = NULL;
  OK(birenMalloc((void **)&d, 64 * sizeof(int)));
  c = 5;
  OK(birenMemcpyToSymbolAsync(&counter, &c, sizeof c, 0, birenMemcpyDefault, s));
  OK(birenLaunchKernel(use_symbols, birenDim3(1, 1, 1), birenDim3(64, 1, 1), NULL, 0, s));
  OK(birenMemcpyFromSymbolAsync(d, results, 64 * sizeof(int), 0, birenMemcpyDeviceToDevice, s));
  OK(birenStreamSynchronize(s));
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++) EXPECT(h[i] == expect4[i % 4] + 5);
  int *addr = NULL;
  OK(birenGetSymbolAddress((void **)&addr, results));
  int last = 0;
  OK(birenMemcpy(&last, addr + 63, sizeof last, birenMemcpyDeviceToHost));
  EXPECT(last == expect4[3] + 5);
  /* count 0 succeeds */
  OK(birenMemcpyToSymbol(&counter, NULL, 0, 0, birenMemcpyHostToDevice));
  OK(birenStreamDestroy(s));
  OK(birenFree(d));
  float reset[2] = {3.0f, 4.0f};
  OK(birenMemcpyToSymbol(coeffs, reset, sizeof reset, 2 * sizeof(float), birenMemcpyHostToDevice));
  return 0;
}

static int symbol_errors_write_nothing(void) {
  int c = 9;
  OK(birenMemcpyToSymbol(&counter, &c, sizeof c, 0, birenMemcpyHostToDevice));
  int big[65];
  memset(big, 0, sizeof big);
  EXPECT_FAIL(birenMemcpyToSymbol(results, big, sizeof big, 0, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpyToSymbol(results, big, 4, 64 * sizeof(int) - 3, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpyToSymbol(results, big, 4, (size_t)-1, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpyToSymbol(&counter, &c, sizeof c, 0, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_FAIL(birenMemcpyToSymbol(&counter, &c, sizeof c, 0, (birenMemcpyKind)7), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_FAIL(birenMemcpyFromSymbol(&c, &counter, sizeof c, 0, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_FAIL(birenMemcpyToSymbol(not_a_symbol, &c, sizeof c, 0, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_SYMBOL);
  EXPECT_FAIL(birenMemcpyToSymbol((const char *)results + 4, &c, sizeof c, 0, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_SYMBOL);
  EXPECT_FAIL(birenMemcpyToSymbol(&counter, NULL, sizeof c, 0, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpyToSymbol(&counter, &c, sizeof c, 0, birenMemcpyDeviceToDevice), BIREN_ERROR_INVALID_DEVICE_POINTER);
  EXPECT_FAIL(birenMemcpyToSymbolAsync(results, big, sizeof big, 0, birenMemcpyHostToDevice, NULL), BIREN_ERROR_INVALID_VALUE);
  /* From a symbol into a page-locked buffer too small: OUT_OF_BOUNDS. */
  int *pinned = NULL;
  OK(birenMallocHost((void **)&pinned, 8 * sizeof(int)));
  EXPECT_FAIL(birenMemcpyFromSymbol(pinned, results, 9 * sizeof(int), 0, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenFreeHost(pinned));
  /* The symbol's address is bounded by its size in ordinary copies too. */
  EXPECT_FAIL(birenMemcpy(big, results, sizeof big, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenDeviceSynchronize());
  int back = 0;
  OK(birenMemcpyFromSymbol(&back, &counter, sizeof back, 0, birenMemcpyDeviceToHost));
  EXPECT(back == 9);
  void *p = (void *)3;
  size_t n = 3;
  EXPECT_FAIL(birenGetSymbolAddress(&p, not_a_symbol), BIREN_ERROR_INVALID_SYMBOL);
  EXPECT_FAIL(birenGetSymbolSize(&n, not_a_symbol), BIREN_ERROR_INVALID_SYMBOL);
  EXPECT_FAIL(birenGetSymbolAddress(NULL, results), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenGetSymbolSize(NULL, results), BIREN_ERROR_INVALID_VALUE);
  EXPECT(p == (void *)3 && n == 3);
  return 0;
}

static int register_symbol_by_hand(void) {
  static char table[32];
  EXPECT_FAIL(birenRegisterSymbol(NULL, 4, "x"), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenRegisterSymbol(table, 0, "x"), BIREN_ERROR_INVALID_VALUE);
  OK(birenRegisterSymbol(table, sizeof table, "table"));
  EXPECT_FAIL(birenRegisterSymbol(table + 8, 4, "inner"), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenRegisterSymbol((const void *)((uintptr_t)results - 4), 8, "straddles"), BIREN_ERROR_INVALID_VALUE);
  OK(birenMemcpyToSymbol(table, "hello", 6, 1, birenMemcpyHostToDevice));
  EXPECT(strcmp(table + 1, "hello") == 0);
  return 0;
}

static int failures_are_reported_by_the_validator(void) {
  int c = 0;
  capture_start();
  EXPECT_FAIL(birenMemcpyToSymbol(not_a_symbol, &c, sizeof c, 0, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_SYMBOL);
  EXPECT_FAIL(birenMemcpyFromSymbol(&c, &counter, 8, 0, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_VALUE);
  capture_stop();
  EXPECT(captured("BIREN_DEVICE_SYMBOL"));
  EXPECT(captured("past the end of the 4-byte symbol"));
  return 0;
}

static const test_case tests[] = {
    TEST(symbols_are_registered_with_their_size),
    TEST(copies_to_and_from_symbols_are_ordered_with_kernels),
    TEST(symbol_errors_write_nothing),
    TEST(register_symbol_by_hand),
    TEST(failures_are_reported_by_the_validator),
};

int main(void) {
  unsetenv("BIREN_VALIDATOR");
  return RUN_TESTS("symbols", tests, compat_init, 30);
}
