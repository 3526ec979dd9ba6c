// SPDX-License-Identifier: Apache-2.0
// unary_ops.glsl — the element function of the unary kernels: unary_apply(op, x) for
// op a kn_vk_unop, in the element type T the includer defines (with KN_F32 or KN_F64
// for the floating ones). unary.comp applies it once per element; fused.comp applies it
// as one step of a chain, so a fused chain computes each step with the same code.
T unary_apply(uint op, T x) {
  switch (op) {
  case 0u: return -x;
#ifdef KN_F32
  case 1u: return exp(x);
  case 2u: return log(x);
  case 3u: {
    // |x| < 1/4: the odd series to x^13 (the next term is below 1e-11 of the value);
    // 1 - e^{-2|x|} cancelled there, losing ~20 ulps near 0.03, which an iterated tanh
    // accumulated (vkdiff seed 11079). Above: exp of a negative argument (no overflow),
    // a cancellation factor of at most 2.5.
    float ax = abs(x);
    if (ax < 0.25) {
      float x2 = x * x;
      float p = 21844.0 / 6081075.0;
      p = p * x2 - 1382.0 / 155925.0;
      p = p * x2 + 62.0 / 2835.0;
      p = p * x2 - 17.0 / 315.0;
      p = p * x2 + 2.0 / 15.0;
      p = p * x2 - 1.0 / 3.0;
      return x + x * x2 * p;
    }
    float e = exp(-2.0 * ax);
    return sign(x) * (1.0 - e) / (1.0 + e);
  }
  case 7u: return 1.0 / (1.0 + exp(-x));
  case 10u: return sin(x);
  case 11u: return cos(x);
#elif defined(KN_F64)
  case 1u: return f64_exp(x);
  case 2u: return f64_log(x);
  case 3u: return f64_tanh(x);
  case 7u: return f64_sigmoid(x);
  case 10u: return f64_sin(x);
  case 11u: return f64_cos(x);
#endif
#if defined(KN_F32) || defined(KN_F64)
  case 5u: return sqrt(x);
#endif
  case 4u: return x >= T(0) || x != x ? x : T(0);  // np.maximum(x, 0): NaN and -0 kept
  case 6u: return abs(x);
  case 8u: return x * x;
  default: return T(1) / x;
  }
}
