// SPDX-License-Identifier: Apache-2.0
// binary.comp — elementwise binary ops with NumPy broadcasting, one element type per
// build: float32 (default), or -DKN_F64 (double), -DKN_I32 (int), -DKN_I64 (int64_t),
// -DKN_F16 (halves in 32-bit words, computed in float32 and rounded back like NumPy's
// float16 ufuncs: half.glsl; each invocation writes one whole word, two elements).
// Each operand has a stride per output dimension (0 where it is broadcast). The op and
// the fast-path flags (operand contiguous with the output, or a scalar) are
// specialization constants, so each pipeline is straight-line code: CPU drivers such
// as lavapipe run every branch of a non-constant switch under a mask. pow on float64
// is f64_pow (f64_math.glsl: GLSL has no double pow). Floor division and modulo follow
// Python/NumPy: the result rounds toward -inf and the remainder takes the divisor's
// sign (zero results signed as NumPy's; x % +-inf is x, or +-inf when the signs
// differ); integer division by zero gives 0. float32/float16 pow is pow_ (C99's powf).
#version 450
#extension GL_GOOGLE_include_directive : require
#if defined(KN_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define T int64_t
#elif defined(KN_I32)
#define T int
#elif defined(KN_F64)
#define T double
#include "f64_math.glsl"
#elif defined(KN_F16)
#define T float
#define S uint
#define KN_F32
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
layout(constant_id = 2) const uint FLAGS = 0;
layout(std430, binding = 0) readonly buffer A { S a[]; };
layout(std430, binding = 1) readonly buffer B { S b[]; };
layout(std430, binding = 2) writeonly buffer C { S c[]; };
layout(push_constant) uniform P {
  uint n, ndim, pad0, pad1;
  uint shape[8];
  uint sa[8];
  uint sb[8];
} pc;

#include "binary_ops.glsl"

#ifdef KN_F16
T load_a(uint i) { return HALF_LOAD(a, i); }
T load_b(uint i) { return HALF_LOAD(b, i); }
#else
T load_a(uint i) { return a[i]; }
T load_b(uint i) { return b[i]; }
#endif

// output element i: the operands' elements at i's broadcast coordinates
T result(uint i) {
  uint ia = 0u, ib = 0u;
  if ((FLAGS & 3u) == 1u) ia = i;
  if ((FLAGS & 12u) == 4u) ib = i;
  if ((FLAGS & 3u) == 0u || (FLAGS & 12u) == 0u) {
    uint rest = i, oa = 0u, ob = 0u;
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
      uint coord = rest % pc.shape[d];
      rest /= pc.shape[d];
      oa += coord * pc.sa[d];
      ob += coord * pc.sb[d];
    }
    if ((FLAGS & 3u) == 0u) ia = oa;
    if ((FLAGS & 12u) == 0u) ib = ob;
  }
  return binary_apply(OP, load_a(ia), load_b(ib));
}

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#ifdef KN_F16
  // word w holds elements 2w and 2w+1 (the last word's high half is padding for odd n)
  for (uint w = gl_GlobalInvocationID.x; w < pc.n / 2u + (pc.n & 1u); w += stride)
    c[w] = half_pack(result(2u * w), 2u * w + 1u < pc.n ? result(2u * w + 1u) : 0.0);
#else
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
    c[i] = result(i);
#endif
}
