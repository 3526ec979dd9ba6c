// SPDX-License-Identifier: Apache-2.0
// one_hot.comp — np.eye(depth, dtype=float32)[idx]: out[j * depth + d] = idx[j] == d.
// The indices arrive checked and made non-negative (uint32).
#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer I { uint idx[]; };
layout(std430, binding = 1) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint n, depth; } pc;

void main() {
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += step)
    c[i] = idx[i / pc.depth] == i % pc.depth ? 1.0 : 0.0;
}
