// SPDX-License-Identifier: Apache-2.0
// arange.comp — out[i] = start + i * step, the CPU's formula: int64 (default) or
// float64 (-DKN_F64), the two dtypes `arange` produces. start and step arrive as the
// bits of their 64-bit values.
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#ifdef KN_F64
#define T double
#else
#define T int64_t
#endif
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) writeonly buffer C { T c[]; };
layout(push_constant) uniform P { uint n, pad; uvec2 start, step; } pc;

void main() {
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#ifdef KN_F64
  T s = packDouble2x32(pc.start), d = packDouble2x32(pc.step);
#else
  T s = T(pack64(pc.start)), d = T(pack64(pc.step));
#endif
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += step) c[i] = s + T(i) * d;
}
