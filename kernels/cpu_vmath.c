// SPDX-License-Identifier: Apache-2.0
/*
 * cpu_vmath.c — float32 exp, sigmoid and tanh, and float32/float64 max/min over
 * arrays, written so the compiler vectorises them (no library calls in the loops), and
 * built once per instruction set (`target_clones`: AVX-512, AVX2, baseline x86-64), the
 * best one picked when the program loads.
 *
 * Accuracy: every value is computed in double with a relative error below 1e-13 and
 * rounded once to float32, so results are the correctly rounded ones except where the
 * exact value lies within 1e-13 of a rounding boundary: at most 1 ulp from the
 * correctly rounded value, equal to glibc's expf/tanhf on all but a few inputs in a
 * million (tests/kernels/test_kernels.c measures both over a sweep). This file is built
 * with -ffp-contract=off, so every clone gives the same bits: results do not depend on
 * the machine's instruction set or on how a loop is split among threads; and with
 * -fno-trapping-math, without which GCC keeps tanh's select as a branch (it may not run
 * the division in lanes that do not use it) and leaves that loop scalar.
 *
 * exp: x = n ln2 + r with n = round(x / ln2), |r| <= ln2/2; e^r by its Taylor series to
 * degree 11 (truncation error < 6e-15), scaled by 2^n built in the exponent bits.
 * Arguments are clamped to [-110, 110] first, where float32 results are already 0 or
 * infinity (and sigmoid/softmax, which only need e^x relative to 1, are unaffected).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kn_cpu.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define VM_CLONES
#endif

/* The clamp bounds, hidden from the optimiser (an empty asm "changes" them): with
 * literal bounds GCC splits the loop into branches for the clamped cases, whose results
 * it folds to constants, and then cannot vectorise it. */
typedef struct vm_limits {
  double lo, hi;
} vm_limits;

static inline vm_limits vm_limits_opaque(void) {
  vm_limits l = {-110.0, 110.0};
#if defined(__GNUC__)
  __asm__("" : "+r"(l.lo), "+r"(l.hi));
#endif
  return l;
}

static inline double vm_exp(double x, vm_limits l) {
  const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
  const double shifter = 0x1.8p52; /* adding it rounds to an integer kept in the low bits */
  x = x < l.lo ? l.lo : x > l.hi ? l.hi : x; /* NaN passes through */
  double t = x * log2e + shifter;
  double kf = t - shifter;
  double r = x - kf * ln2;
  uint64_t tb;
  memcpy(&tb, &t, sizeof tb);
  uint64_t sb = (tb - 0x4338000000000000ULL + 1023) << 52; /* 2^n, n in [-159, 159] */
  double scale;
  memcpy(&scale, &sb, sizeof scale);
  double p = 1.0 / 39916800;
  p = p * r + 1.0 / 3628800;
  p = p * r + 1.0 / 362880;
  p = p * r + 1.0 / 40320;
  p = p * r + 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  return p * scale;
}

/* tanh(x) for a float32 argument: below |x| = 1/16 its odd series to x^11 (the next
 * term is below 1e-16 of the value), above 1 - 2 / (e^{2|x|} + 1) (no cancellation there); |x| > 10 is
 * ±1 in float32. */
static inline double vm_tanh(double x, vm_limits l) {
  double a = x < 0 ? -x : x;
  double a2 = a * a;
  double s = -1382.0 / 155925;
  s = s * a2 + 62.0 / 2835;
  s = s * a2 - 17.0 / 315;
  s = s * a2 + 2.0 / 15;
  s = s * a2 - 1.0 / 3;
  s = (s * a2) * a + a;
  double big = 1.0 - 2.0 / (vm_exp(2.0 * (a > 10.0 ? 10.0 : a), l) + 1.0);
  double r = a < 0.0625 ? s : big;
  return copysign(r, x); /* -0 stays -0 */
}

VM_CLONES void kn_vm_exp_f32(const float *x, float *r, int64_t n) {
  vm_limits l = vm_limits_opaque();
  for (int64_t i = 0; i < n; i++) r[i] = (float)vm_exp((double)x[i], l);
}

VM_CLONES void kn_vm_sigmoid_f32(const float *x, float *r, int64_t n) {
  vm_limits l = vm_limits_opaque();
  for (int64_t i = 0; i < n; i++) r[i] = (float)(1.0 / (1.0 + vm_exp(-(double)x[i], l)));
}

VM_CLONES void kn_vm_tanh_f32(const float *x, float *r, int64_t n) {
  vm_limits l = vm_limits_opaque();
  for (int64_t i = 0; i < n; i++) r[i] = (float)vm_tanh((double)x[i], l);
}

VM_CLONES void kn_vm_exp_shifted(const double *x, double m, double *r, int64_t n) {
  vm_limits l = vm_limits_opaque();
  for (int64_t i = 0; i < n; i++) r[i] = vm_exp(x[i] - m, l);
}

/* max / min of x[0, n) over VM_LANES interleaved lanes (vector max/min instructions:
 * `v > m ? v : m` keeps m when v is NaN, so a NaN is noted in *nan instead), the lanes
 * combined in a fixed order. The value is the one a sequential loop gives (max and min
 * do not depend on the order, but for the sign of a zero among equal zeros): -inf/+inf
 * for n = 0 or when every value is NaN. */
enum { VM_LANES = 16 };

#define VM_EXTREMUM(NAME, T)                                                        \
  VM_CLONES double NAME(const T *x, int64_t n, bool max, bool *nan) {               \
    T m[VM_LANES], init = max ? (T)-INFINITY : (T)INFINITY;                          \
    int seen = 0;                                                                   \
    for (int k = 0; k < VM_LANES; k++) m[k] = init;                                 \
    int64_t j = 0;                                                                  \
    if (max)                                                                        \
      for (; j + VM_LANES <= n; j += VM_LANES)                                      \
        for (int k = 0; k < VM_LANES; k++) {                                        \
          T v = x[j + k];                                                           \
          seen |= v != v;                                                           \
          m[k] = v > m[k] ? v : m[k];                                               \
        }                                                                           \
    else                                                                            \
      for (; j + VM_LANES <= n; j += VM_LANES)                                      \
        for (int k = 0; k < VM_LANES; k++) {                                        \
          T v = x[j + k];                                                           \
          seen |= v != v;                                                           \
          m[k] = v < m[k] ? v : m[k];                                               \
        }                                                                           \
    T r = init;                                                                     \
    for (int k = 0; k < VM_LANES; k++) r = (max ? m[k] > r : m[k] < r) ? m[k] : r; \
    for (; j < n; j++) {                                                            \
      seen |= x[j] != x[j];                                                         \
      r = (max ? x[j] > r : x[j] < r) ? x[j] : r;                                   \
    }                                                                               \
    if (seen) *nan = true;                                                          \
    return (double)r;                                                               \
  }
VM_EXTREMUM(kn_vm_extremum_f32, float)
VM_EXTREMUM(kn_vm_extremum_f64, double)
