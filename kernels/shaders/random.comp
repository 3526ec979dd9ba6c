// SPDX-License-Identifier: Apache-2.0
// random.comp — random_uniform (NORMAL = 0) and random_normal (NORMAL = 1) with the CPU
// generator's stream (kernels/cpu_shape.c kn_random): splitmix64 from `seed`, whose k-th
// draw is the finaliser of seed + k * 0x9e3779b97f4a7c15, so element i computes its
// own draws without a sequential state — uniform: draw i+1 as (z >> 11) * 2^-53;
// normal: Box–Muller on draws 2i+1 and 2i+2, sqrt(-2 log(1 - u1)) cos(2 pi u2) in
// double (f64_math.glsl). The result is stored as float32 (default) or, -DKN_F64,
// float64, rounded from the double as the CPU's kn_set_f64 does.
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
#include "f64_math.glsl"
#ifdef KN_F64
#define T double
#else
#define T float
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint NORMAL = 0;
layout(std430, binding = 0) writeonly buffer C { T c[]; };
layout(push_constant) uniform P { uint n, pad; uvec2 seed; } pc;

double draw(uint64_t seed, uint64_t k) {
  uint64_t z = seed + k * 0x9e3779b97f4a7c15UL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
  z = z ^ (z >> 31);
  return double(z >> 11) * (1.0LF / 9007199254740992.0LF);
}

void main() {
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint64_t seed = pack64(pc.seed);
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += step) {
    double v;
    if (NORMAL == 1u) {
      double u1 = draw(seed, 2UL * uint64_t(i) + 1UL), u2 = draw(seed, 2UL * uint64_t(i) + 2UL);
      v = sqrt(-2.0LF * f64_log(1.0LF - u1)) * f64_cos(6.283185307179586232LF * u2);
    } else {
      v = draw(seed, uint64_t(i) + 1UL);
    }
    c[i] = T(v);
  }
}
