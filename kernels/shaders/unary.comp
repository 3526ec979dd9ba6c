// SPDX-License-Identifier: Apache-2.0
// unary.comp — elementwise unary ops over n contiguous elements, one element type per
// build: float32 (default), or -DKN_F64 (double), -DKN_I32 (int), -DKN_I64 (int64_t),
// -DKN_F16 (halves in 32-bit words computed in float32, as in binary.comp).
// The op is a specialization constant (one straight-line pipeline per op). GLSL has
// exp/log/tanh/sin/cos only for float32: float64 uses f64_math.glsl; integer types lack
// them and the launcher (kn_vk_unary_typed) refuses those ops.
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
layout(std430, binding = 0) readonly buffer A { S a[]; };
layout(std430, binding = 1) writeonly buffer C { S c[]; };
layout(push_constant) uniform P { uint n; } pc;

#include "unary_ops.glsl"

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#ifdef KN_F16
  for (uint w = gl_GlobalInvocationID.x; w < pc.n / 2u + (pc.n & 1u); w += stride)
    c[w] = half_pack(unary_apply(OP, HALF_LOAD(a, 2u * w)),
                     2u * w + 1u < pc.n ? unary_apply(OP, HALF_LOAD(a, 2u * w + 1u)) : 0.0);
#else
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
    c[i] = unary_apply(OP, a[i]);
#endif
}
