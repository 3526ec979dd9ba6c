// SPDX-License-Identifier: Apache-2.0
// fill.comp — writes a repeating bit pattern of one or two 32-bit words into nwords
// words: zeros / ones / fill of any dtype (a bool pattern is 4 bytes in one word, a
// float64 or int64 value two words), so no 64-bit shader arithmetic is needed.
#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) writeonly buffer C { uint c[]; };
layout(push_constant) uniform P { uint nwords, period, w0, w1; } pc;

void main() {
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.nwords; i += step)
    c[i] = (pc.period == 2u && (i & 1u) == 1u) ? pc.w1 : pc.w0;
}
