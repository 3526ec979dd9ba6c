// SPDX-License-Identifier: Apache-2.0
// where.comp — out = cond ? a : b with NumPy broadcasting of all three (up to 6 dims:
// three stride sets fill the 128-byte push constants). cond is bool (bytes read out of
// 32-bit words); a, b and out are 4-byte elements copied as bits, or 8-byte ones
// (float64, int64, as uvec2) with -DKN_8BYTE: no 64-bit arithmetic needed; 1- and
// 2-byte ones (bool, float16) with -DKN_1BYTE / -DKN_2BYTE (elem.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
#include "elem.glsl"
layout(std430, binding = 0) readonly buffer Cond { uint cnd[]; };
layout(std430, binding = 1) readonly buffer A { E a[]; };
layout(std430, binding = 2) readonly buffer B { E b[]; };
layout(std430, binding = 3) WO buffer C { E c[]; };
layout(push_constant) uniform P {
  uint n, ndim, pad0, pad1;
  uint shape[6];
  uint sc[6];
  uint sa[6];
  uint sb[6];
} pc;

void main() {
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += step) {
    uint rest = i, oc = 0u, oa = 0u, ob = 0u;
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
      uint coord = rest % pc.shape[d];
      rest /= pc.shape[d];
      oc += coord * pc.sc[d];
      oa += coord * pc.sa[d];
      ob += coord * pc.sb[d];
    }
    bool t = ((cnd[oc >> 2] >> ((oc & 3u) * 8u)) & 255u) != 0u;
    ESTORE(c, i, t ? ELOAD(a, oa) : ELOAD(b, ob));
  }
}
