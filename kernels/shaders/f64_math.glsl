// SPDX-License-Identifier: Apache-2.0
// f64_math.glsl — double-precision exp, expm1, log, sin, cos, tanh, sigmoid and pow for
// the float64 kernels (#include'd by unary.comp, binary.comp and softmax.comp built with
// -DKN_F64): GLSL's transcendental built-ins exist for float32 only. Each function
// reduces its argument exactly (Cody–Waite: ln 2 and pi/2 split so that k * HI is exact)
// and evaluates a Taylor polynomial on the reduced interval, truncated below 2^-60;
// tests/kernels/test_f64_math.py measures the error against NumPy (a few ulps).
// sin/cos reduce with a three-part pi/2, exact while |x| < 2^20 * pi/2 (about 1.6e6);
// beyond, the error grows with |x| (NumPy uses a full Payne–Hanek reduction).
// The reductions are `precise`: drivers may otherwise reassociate x - k HI - k LO into
// x - k (HI + LO) (Mesa does), which loses the exactness the split exists for.
// Special values follow C99 / NumPy: NaN propagates, exp overflows to inf and
// underflows to 0, log(0) = -inf, log(x < 0) = NaN, pow as in C's pow.

const double F64_LN2_HI = 6.93147180369123816490e-01LF;  // ln 2, top 32 bits
const double F64_LN2_LO = 1.90821492927058770002e-10LF;  // ln 2 - F64_LN2_HI
const double F64_INV_LN2 = 1.44269504088896338700e+00LF;
const double F64_PIO2_1 = 1.57079632673412561417e+00LF;  // pi/2, top 33 bits
const double F64_PIO2_2 = 6.07710050630396597660e-11LF;  // next 33 bits
const double F64_PIO2_3 = 2.02226624871116645580e-21LF;  // the rest
const double F64_TWO_OVER_PI = 6.36619772367581382433e-01LF;

double f64_inf() { return packDouble2x32(uvec2(0u, 0x7ff00000u)); }
double f64_nan() { return packDouble2x32(uvec2(0u, 0x7ff80000u)); }

// 2^k * p without overflowing an intermediate power of two (k up to 2098 in size)
double f64_scale(double p, int k) {
  int h = k / 2;
  return ldexp(ldexp(p, h), k - h);
}

// e^r - 1 for |r| <= ln2/2, without cancellation: r + r^2/2! + ... + r^15/15!
double f64_expm1_poly(double r) {
  double p = 1.0LF / 1307674368000.0LF;
  p = p * r + 1.0LF / 87178291200.0LF;
  p = p * r + 1.0LF / 6227020800.0LF;
  p = p * r + 1.0LF / 479001600.0LF;
  p = p * r + 1.0LF / 39916800.0LF;
  p = p * r + 1.0LF / 3628800.0LF;
  p = p * r + 1.0LF / 362880.0LF;
  p = p * r + 1.0LF / 40320.0LF;
  p = p * r + 1.0LF / 5040.0LF;
  p = p * r + 1.0LF / 720.0LF;
  p = p * r + 1.0LF / 120.0LF;
  p = p * r + 1.0LF / 24.0LF;
  p = p * r + 1.0LF / 6.0LF;
  p = p * r + 0.5LF;
  p = p * r + 1.0LF;
  return p * r;
}

double f64_exp(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893383973096LF) return f64_inf();
  if (x < -745.133219101941108420LF) return 0.0LF;
  double k = floor(x * F64_INV_LN2 + 0.5LF);
  precise double r = (x - k * F64_LN2_HI) - k * F64_LN2_LO;  // |r| <= ln2/2 (plus rounding)
  return f64_scale(1.0LF + f64_expm1_poly(r), int(k));
}

double f64_expm1(double x) {
  if (abs(x) <= 0.34657359027997264LF) return f64_expm1_poly(x);
  return f64_exp(x) - 1.0LF;
}

double f64_log(double x) {
  if (isnan(x) || x < 0.0LF) return f64_nan();
  if (x == 0.0LF) return -f64_inf();
  if (isinf(x)) return x;
  int e;
  int sub = 0;
  if (x < 2.2250738585072014e-308LF) {  // subnormal: scale into the normal range first
    x *= 18014398509481984.0LF;        // 2^54
    sub = 54;
  }
  double m = frexp(x, e);  // x = m 2^e, m in [0.5, 1)
  e -= sub;
  if (m < 0.70710678118654752440LF) {
    m *= 2.0LF;
    e -= 1;
  }
  double f = m - 1.0LF;  // in [sqrt(1/2) - 1, sqrt(2) - 1)
  double s = f / (2.0LF + f);  // |s| <= 0.1716: log(1+f) = 2 atanh(s)
  double z = s * s;
  // R = 2/3 z + 2/5 z^2 + ... + 2/23 z^11, so that log(1+f) = f - s (f - R)
  double R = 2.0LF / 23.0LF;
  R = R * z + 2.0LF / 21.0LF;
  R = R * z + 2.0LF / 19.0LF;
  R = R * z + 2.0LF / 17.0LF;
  R = R * z + 2.0LF / 15.0LF;
  R = R * z + 2.0LF / 13.0LF;
  R = R * z + 2.0LF / 11.0LF;
  R = R * z + 2.0LF / 9.0LF;
  R = R * z + 2.0LF / 7.0LF;
  R = R * z + 2.0LF / 5.0LF;
  R = R * z + 2.0LF / 3.0LF;
  R *= z;
  double k = double(e);
  precise double l = k * F64_LN2_HI + ((f - s * (f - R)) + k * F64_LN2_LO);
  return l;
}

// sin and cos of |r| <= pi/4 (plus rounding)
double f64_sin_poly(double r) {
  double z = r * r;
  double p = -1.0LF / 121645100408832000.0LF;       // -1/19!
  p = p * z + 1.0LF / 355687428096000.0LF;          // 1/17!
  p = p * z - 1.0LF / 1307674368000.0LF;            // -1/15!
  p = p * z + 1.0LF / 6227020800.0LF;               // 1/13!
  p = p * z - 1.0LF / 39916800.0LF;
  p = p * z + 1.0LF / 362880.0LF;
  p = p * z - 1.0LF / 5040.0LF;
  p = p * z + 1.0LF / 120.0LF;
  p = p * z - 1.0LF / 6.0LF;
  return r + r * z * p;
}

double f64_cos_poly(double r) {
  double z = r * r;
  double p = 1.0LF / 2432902008176640000.0LF;       // 1/20!
  p = p * z - 1.0LF / 6402373705728000.0LF;         // -1/18!
  p = p * z + 1.0LF / 20922789888000.0LF;           // 1/16!
  p = p * z - 1.0LF / 87178291200.0LF;              // -1/14!
  p = p * z + 1.0LF / 479001600.0LF;
  p = p * z - 1.0LF / 3628800.0LF;
  p = p * z + 1.0LF / 40320.0LF;
  p = p * z - 1.0LF / 720.0LF;
  p = p * z + 1.0LF / 24.0LF;
  double hz = 0.5LF * z;
  precise double w = 1.0LF - hz;  // cos r = w + (what rounding w lost) + z^2 p
  precise double c = w + (((1.0LF - w) - hz) + z * z * p);
  return c;
}

// x = k pi/2 + r; the quadrant k mod 4
double f64_reduce_pio2(double x, out int q) {
  double k = floor(x * F64_TWO_OVER_PI + 0.5LF);
  q = int(k - 4.0LF * floor(k * 0.25LF));
  precise double r = ((x - k * F64_PIO2_1) - k * F64_PIO2_2) - k * F64_PIO2_3;
  return r;
}

double f64_sin(double x) {
  if (isnan(x) || isinf(x)) return f64_nan();
  int q;
  double r = f64_reduce_pio2(x, q);
  double v = (q & 1) == 0 ? f64_sin_poly(r) : f64_cos_poly(r);
  return q >= 2 ? -v : v;
}

double f64_cos(double x) {
  if (isnan(x) || isinf(x)) return f64_nan();
  int q;
  double r = f64_reduce_pio2(x, q);
  double v = (q & 1) == 0 ? f64_cos_poly(r) : f64_sin_poly(r);
  return (q == 1 || q == 2) ? -v : v;
}

double f64_tanh(double x) {
  if (isnan(x)) return x;
  double ax = abs(x);
  if (ax > 22.0LF) return sign(x);  // tanh(22) rounds to 1
  double e = f64_expm1(2.0LF * ax);
  return sign(x) * (e / (e + 2.0LF));
}

double f64_sigmoid(double x) {
  if (x >= 0.0LF) return 1.0LF / (1.0LF + f64_exp(-x));
  double e = f64_exp(x);
  return e / (1.0LF + e);
}

// C99 pow: pow(x, 0) = 1 and pow(1, y) = 1 even for NaN; a negative base needs an
// integer exponent (its parity gives the sign); |y| <= 4 integers multiply (x*x is
// exact to the last place), others go through exp(y log|x|), whose relative error is
// about |y ln x| ulps (exp amplifies log's rounding).
double f64_pow(double x, double y) {
  if (y == 0.0LF || x == 1.0LF) return 1.0LF;
  if (isnan(x) || isnan(y)) return f64_nan();
  bool int_y = floor(y) == y;
  bool odd_y = int_y && abs(y) < 9007199254740992.0LF && (y - 2.0LF * floor(0.5LF * y)) != 0.0LF;
  double ax = abs(x);
  bool neg = (unpackDouble2x32(x).y >> 31) != 0u;  // -0.0 too: pow(-0, -1) = -inf
  double sgn = (neg && odd_y) ? -1.0LF : 1.0LF;
  if (isinf(ax) && !isinf(y)) return y > 0.0LF ? sgn * f64_inf() : sgn * 0.0LF;
  if (x < 0.0LF && !int_y && !isinf(y)) return f64_nan();
  if (isinf(y)) {
    if (ax == 1.0LF) return 1.0LF;
    return (ax > 1.0LF) == (y > 0.0LF) ? f64_inf() : 0.0LF;
  }
  if (ax == 0.0LF) return y > 0.0LF ? sgn * 0.0LF : sgn * f64_inf();
  if (int_y && abs(y) <= 4.0LF) {
    int n = int(abs(y));
    double b = ax, r = 1.0LF;
    while (n != 0) {
      if ((n & 1) != 0) r *= b;
      b *= b;
      n >>= 1;
    }
    return sgn * (y < 0.0LF ? 1.0LF / r : r);
  }
  return sgn * f64_exp(y * f64_log(ax));
}
