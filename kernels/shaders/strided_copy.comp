// SPDX-License-Identifier: Apache-2.0
// strided_copy.comp — out[ooffset + sum_d coord_d(i) * ostride_d] =
//                     in[ioffset + sum_d coord_d(i) * istride_d]
// over the n elements of a shape of up to 8 dims: transpose (a permuted input view),
// slice (an offset, steps, negative strides as two's complement: the sums wrap modulo
// 2^32 to the right index) and concat/stack (each input written into its place in the
// output). Elements are copied as bits: 4-byte elements by default, 8-byte ones
// (float64, int64, as uvec2) with -DKN_8BYTE, so no 64-bit shader arithmetic is needed;
// 1- and 2-byte ones (bool, float16) with -DKN_1BYTE / -DKN_2BYTE (elem.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
#include "elem.glsl"
layout(std430, binding = 0) readonly buffer A { E a[]; };
layout(std430, binding = 1) buffer C { E c[]; };
layout(push_constant) uniform P {
  uint n, ndim, ioffset, ooffset;
  uint shape[8];
  uint istride[8];
  uint ostride[8];
} pc;

void main() {
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += step) {
    uint rest = i, src = pc.ioffset, dst = pc.ooffset;
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
      uint coord = rest % pc.shape[d];
      rest /= pc.shape[d];
      src += coord * pc.istride[d];
      dst += coord * pc.ostride[d];
    }
    ESTORE(c, dst, ELOAD(a, src));
  }
}
