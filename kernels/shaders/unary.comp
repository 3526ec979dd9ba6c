// SPDX-License-Identifier: Apache-2.0
// unary.comp — elementwise unary ops over n contiguous elements, one element type per
// build: float32 (default), or -DKN_F64 (double), -DKN_I32 (int), -DKN_I64 (int64_t),
// -DKN_F16 (halves in 32-bit words computed in float32, as in binary.comp).
// The op is a specialization constant (one straight-line pipeline per op). GLSL has
// exp/log/tanh/sin/cos only for float32: float64 uses f64_math.glsl; integer types lack
// them and the launcher (kn_vk_unary_typed) refuses those ops.
#version 450
#if defined(KN_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define T int64_t
#elif defined(KN_I32)
#define T int
#elif defined(KN_F64)
#define T double
#extension GL_GOOGLE_include_directive : require
#include "f64_math.glsl"
#elif defined(KN_F16)
#define T float
#define S uint
#define KN_F32
#extension GL_GOOGLE_include_directive : require
#include "half.glsl"
#else
#define T float
#define KN_F32
#endif
#ifndef S
#define S T
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(std430, binding = 0) readonly buffer A { S a[]; };
layout(std430, binding = 1) writeonly buffer C { S c[]; };
layout(push_constant) uniform P { uint n; } pc;

T apply(uint op, T x) {
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

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#ifdef KN_F16
  for (uint w = gl_GlobalInvocationID.x; w < pc.n / 2u + (pc.n & 1u); w += stride)
    c[w] = half_pack(apply(OP, HALF_LOAD(a, 2u * w)),
                     2u * w + 1u < pc.n ? apply(OP, HALF_LOAD(a, 2u * w + 1u)) : 0.0);
#else
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
    c[i] = apply(OP, a[i]);
#endif
}
