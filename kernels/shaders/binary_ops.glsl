// SPDX-License-Identifier: Apache-2.0
// binary_ops.glsl — the element function of the binary kernels: binary_apply(op, x, y)
// for op a kn_vk_binop, in the element type T the includer defines (KN_F32 / KN_F64 for
// the floating ones; f64_math.glsl included first for float64). binary.comp applies it
// per output element; fused.comp as one step of a chain.
#if defined(KN_F32) || defined(KN_F64)
// x - trunc(x / y) * y with the quotient corrected so |r| < |y| and r has x's sign: fmod
T fmod_(T x, T y) {
  if (isinf(y) && !isinf(x)) return x;  // C's fmod(x, +-inf) = x (the quotient is 0)
  T q = trunc(x / y);
  T r = fma(-q, y, x);
  if (r != T(0) && (r < T(0)) != (x < T(0))) r += (r < T(0)) == (y < T(0)) ? -y : y;
  if (abs(r) >= abs(y)) r -= (r < T(0)) == (y < T(0)) ? y : -y;
  return r;
}
// +-0 with the sign of q (NumPy's copysign(0, x / y) for a zero floor quotient)
#ifdef KN_F64
T signed_zero(T q) { return packDouble2x32(uvec2(0u, unpackDouble2x32(q).y & 0x80000000u)); }
#else
T signed_zero(T q) { return uintBitsToFloat(floatBitsToUint(q) & 0x80000000u); }
#endif
T floordiv_(T x, T y) {
  if (y == T(0)) return x / y;
  T m = fmod_(x, y);
  T d = (x - m) / y;
  if (m != T(0) && (y < T(0)) != (m < T(0))) d -= T(1);
  if (d == T(0)) return signed_zero(x / y);
  T f = floor(d);
  if (d - f > T(0.5)) f += T(1);
  return f;
}
T mod_(T x, T y) {
  if (y == T(0)) return T(0) / T(0);
  T m = fmod_(x, y);
  if (m != T(0) && (y < T(0)) != (m < T(0))) m += y;
  return m == T(0) ? signed_zero(y) : m;  // a zero remainder takes the divisor's sign
}
#endif
#ifdef KN_F32
// C99 powf: GLSL's pow is exp2(y * log2(x)), undefined for x < 0 and for x = 0 with
// y <= 0 (lavapipe gave 0 ** 0 = 0), so the special cases come first and the sign of a
// negative base is taken out: pow(x, 0) = pow(1, y) = 1, a negative base needs an
// integer exponent (every float of magnitude >= 2^24, infinity included, is even),
// 0 ** negative = inf, signed zeros and infinities as in C; |y| <= 4 integral multiplies.
float pow_(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (x != x || y != y) return x + y;
  float ax = abs(x);
  bool odd = false;
  if ((floatBitsToUint(x) >> 31) != 0u) {  // negative, -0 and -inf included
    bool integral = abs(y) >= 16777216.0 || y == trunc(y);
    if (!integral && x != 0.0) return uintBitsToFloat(0x7fc00000u);  // NaN
    odd = integral && abs(y) < 16777216.0 && mod(y, 2.0) != 0.0;
  }
  float r;
  if (ax == 0.0) r = y < 0.0 ? uintBitsToFloat(0x7f800000u) : 0.0;
  else if (ax == 1.0) r = 1.0;  // (-1) ** +-inf = 1
  else if (abs(y) <= 4.0 && y == trunc(y)) {
    // small integer powers by multiplication, as f64_pow: exact where the result is,
    // like libm's powf (exp2(3 log2 3.25) missed 3.25 ** 3, a float16 rounding tie)
    float q = abs(y), sq = ax * ax;
    float p = q == 1.0 ? ax : q == 2.0 ? sq : q == 3.0 ? sq * ax : sq * sq;
    r = y < 0.0 ? 1.0 / p : p;
  } else r = pow(ax, y);
  return odd ? -r : r;
}
#endif
#if !defined(KN_F32) && !defined(KN_F64)
T floordiv_(T x, T y) {
  if (y == T(0)) return T(0);
  if (y == T(-1)) return -x;
  T q = x / y;
  if (q * y != x && ((x < T(0)) != (y < T(0)))) q -= T(1);
  return q;
}
T mod_(T x, T y) {
  if (y == T(0) || y == T(-1)) return T(0);
  T m = x - (x / y) * y;
  if (m != T(0) && ((m < T(0)) != (y < T(0)))) m += y;
  return m;
}
T ipow(T x, T y) {
  if (y < T(0)) return x == T(1) ? T(1) : x == T(-1) ? ((y & T(1)) != T(0) ? T(-1) : T(1)) : T(0);
  T r = T(1);
  while (y != T(0)) {
    if ((y & T(1)) != T(0)) r *= x;
    x *= x;
    y >>= 1;
  }
  return r;
}
#endif

T binary_apply(uint op, T x, T y) {
  switch (op) {
  case 0u: return x + y;
  case 1u: return x - y;
  case 2u: return x * y;
  case 3u: return x / y;
  case 4u: return (x != x || y != y) ? x + y : max(x, y);  // NaN propagates like NumPy
  case 5u: return (x != x || y != y) ? x + y : min(x, y);
  case 7u: return floordiv_(x, y);
  case 8u: return mod_(x, y);
#ifdef KN_F32
  default: return pow_(x, y);
#elif defined(KN_F64)
  default: return f64_pow(x, y);
#else
  default: return ipow(x, y);
#endif
  }
}
