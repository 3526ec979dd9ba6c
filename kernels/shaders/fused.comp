// SPDX-License-Identifier: Apache-2.0
// fused.comp — a chain of float32 elementwise ops in one pass over memory (launcher:
// kernels_fused.c; docs/vulkan.md "Fused elementwise chains"). Each step is a
// specialization constant, so the driver compiles one straight-line pipeline per chain
// — the generated kernel of that chain, cached like every pipeline by its constants —
// from this one module: no shader compiler in the daemon. A step's code and how it
// computes: fused_step.glsl; its operands 1..7 are buffers I0..I6 at the element's
// index, 8 + k push constant s[k]. A buffer whose bit is set in BCAST holds fewer
// elements, broadcast (NumPy's rule for a shape whose dims other than 1 are one run of
// the output's axes: a bias row, a column): element i reads it at (i / div[k]) % mod[k].
// Every element gets the bits the ops give one by one.
#version 450
#extension GL_GOOGLE_include_directive : require
#define T float
#define KN_F32
#include "unary_ops.glsl"
#include "binary_ops.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint NSTEPS = 1u;
layout(constant_id = 2) const uint BCAST = 0u;
layout(constant_id = 3) const uint S0 = 0u;
layout(constant_id = 4) const uint S1 = 0u;
layout(constant_id = 5) const uint S2 = 0u;
layout(constant_id = 6) const uint S3 = 0u;
layout(constant_id = 7) const uint S4 = 0u;
layout(constant_id = 8) const uint S5 = 0u;
layout(constant_id = 9) const uint S6 = 0u;
layout(constant_id = 10) const uint S7 = 0u;
layout(constant_id = 11) const uint S8 = 0u;
layout(constant_id = 12) const uint S9 = 0u;
layout(constant_id = 13) const uint S10 = 0u;
layout(constant_id = 14) const uint S11 = 0u;
layout(constant_id = 15) const uint S12 = 0u;
layout(constant_id = 16) const uint S13 = 0u;
layout(constant_id = 17) const uint S14 = 0u;
layout(constant_id = 18) const uint S15 = 0u;
layout(constant_id = 19) const uint S16 = 0u;
layout(constant_id = 20) const uint S17 = 0u;
layout(constant_id = 21) const uint S18 = 0u;
layout(constant_id = 22) const uint S19 = 0u;
layout(constant_id = 23) const uint S20 = 0u;
layout(constant_id = 24) const uint S21 = 0u;
layout(constant_id = 25) const uint S22 = 0u;
layout(constant_id = 26) const uint S23 = 0u;
layout(constant_id = 27) const uint S24 = 0u;
layout(constant_id = 28) const uint S25 = 0u;
layout(constant_id = 29) const uint S26 = 0u;
layout(constant_id = 30) const uint S27 = 0u;
layout(constant_id = 31) const uint S28 = 0u;
layout(constant_id = 32) const uint S29 = 0u;
layout(constant_id = 33) const uint S30 = 0u;
layout(constant_id = 34) const uint S31 = 0u;
layout(std430, binding = 0) readonly buffer I0 { float i0[]; };
layout(std430, binding = 1) readonly buffer I1 { float i1[]; };
layout(std430, binding = 2) readonly buffer I2 { float i2[]; };
layout(std430, binding = 3) readonly buffer I3 { float i3[]; };
layout(std430, binding = 4) readonly buffer I4 { float i4[]; };
layout(std430, binding = 5) readonly buffer I5 { float i5[]; };
layout(std430, binding = 6) readonly buffer I6 { float i6[]; };
layout(std430, binding = 7) writeonly buffer C { float c[]; };
layout(push_constant) uniform P {
  uint n;
  uint zero_a, zero_b;  // 0: opaque()'s masks
  uint mod[7];          // a broadcast buffer's element count
  uint div[7];          // and how many output elements each of its elements serves
  float s[15];
} pc;

uint at(uint k, uint i) { return (BCAST & (1u << k)) != 0u ? (i / pc.div[k]) % pc.mod[k] : i; }

float fused_load(uint k, uint i, float prev) {
  switch (k) {
  case 0u: return prev;
  case 1u: return i0[at(0u, i)];
  case 2u: return i1[at(1u, i)];
  case 3u: return i2[at(2u, i)];
  case 4u: return i3[at(3u, i)];
  case 5u: return i4[at(4u, i)];
  case 6u: return i5[at(5u, i)];
  case 7u: return i6[at(6u, i)];
  default: return pc.s[k - 8u];
  }
}

#include "fused_step.glsl"

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
    float v = 0.0;  // steps past NSTEPS fold away in the specialised pipeline
    if (NSTEPS > 0u) v = fused_step(S0, i, v);
    if (NSTEPS > 1u) v = fused_step(S1, i, v);
    if (NSTEPS > 2u) v = fused_step(S2, i, v);
    if (NSTEPS > 3u) v = fused_step(S3, i, v);
    if (NSTEPS > 4u) v = fused_step(S4, i, v);
    if (NSTEPS > 5u) v = fused_step(S5, i, v);
    if (NSTEPS > 6u) v = fused_step(S6, i, v);
    if (NSTEPS > 7u) v = fused_step(S7, i, v);
    if (NSTEPS > 8u) v = fused_step(S8, i, v);
    if (NSTEPS > 9u) v = fused_step(S9, i, v);
    if (NSTEPS > 10u) v = fused_step(S10, i, v);
    if (NSTEPS > 11u) v = fused_step(S11, i, v);
    if (NSTEPS > 12u) v = fused_step(S12, i, v);
    if (NSTEPS > 13u) v = fused_step(S13, i, v);
    if (NSTEPS > 14u) v = fused_step(S14, i, v);
    if (NSTEPS > 15u) v = fused_step(S15, i, v);
    if (NSTEPS > 16u) v = fused_step(S16, i, v);
    if (NSTEPS > 17u) v = fused_step(S17, i, v);
    if (NSTEPS > 18u) v = fused_step(S18, i, v);
    if (NSTEPS > 19u) v = fused_step(S19, i, v);
    if (NSTEPS > 20u) v = fused_step(S20, i, v);
    if (NSTEPS > 21u) v = fused_step(S21, i, v);
    if (NSTEPS > 22u) v = fused_step(S22, i, v);
    if (NSTEPS > 23u) v = fused_step(S23, i, v);
    if (NSTEPS > 24u) v = fused_step(S24, i, v);
    if (NSTEPS > 25u) v = fused_step(S25, i, v);
    if (NSTEPS > 26u) v = fused_step(S26, i, v);
    if (NSTEPS > 27u) v = fused_step(S27, i, v);
    if (NSTEPS > 28u) v = fused_step(S28, i, v);
    if (NSTEPS > 29u) v = fused_step(S29, i, v);
    if (NSTEPS > 30u) v = fused_step(S30, i, v);
    if (NSTEPS > 31u) v = fused_step(S31, i, v);
    c[i] = v;
  }
}
