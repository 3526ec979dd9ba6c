// SPDX-License-Identifier: Apache-2.0
// gather.comp — np.take(a, idx, axis) on an [outer, len, inner] view of a: out is
// [outer, nidx, inner], out[o, j, r] = a[o, idx[j], r]. The indices arrive checked and
// made non-negative by the launcher's caller (uint32). 4-byte elements by default,
// 8-byte ones with -DKN_8BYTE, 1- and 2-byte ones with -DKN_1BYTE / -DKN_2BYTE
// (elem.glsl), copied as bits.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
#include "elem.glsl"
layout(std430, binding = 0) readonly buffer A { E a[]; };
layout(std430, binding = 1) readonly buffer I { uint idx[]; };
layout(std430, binding = 2) WO buffer C { E c[]; };
layout(push_constant) uniform P { uint n, len, nidx, inner; } pc;

void main() {
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += step) {
    uint r = i % pc.inner, q = i / pc.inner;
    uint j = q % pc.nidx, o = q / pc.nidx;
    ESTORE(c, i, ELOAD(a, (o * pc.len + idx[j]) * pc.inner + r));
  }
}
