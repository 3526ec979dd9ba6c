// SPDX-License-Identifier: Apache-2.0
// argmax.comp — index of the largest element along one axis of a [outer, len, inner]
// view, NumPy's rules: the first maximum wins, and a NaN counts as the maximum (the
// first NaN wins). One workgroup per output; a shared-memory tree of (value, index)
// pairs. Element types: float32 (default), -DKN_F64, -DKN_I32, -DKN_I64, -DKN_F16 (halves
// in words compared as their exact float32 values: half_io.glsl). The int64 result is
// written as two 32-bit words (indices are < 2^32).
#version 450
#if defined(KN_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define T int64_t
#elif defined(KN_I32)
#define T int
#elif defined(KN_F64)
#define T double
#else
#define T float
#endif
#ifdef KN_F16
#extension GL_GOOGLE_include_directive : require
#include "half_io.glsl"
#endif
layout(local_size_x_id = 0) in;
#ifdef KN_F16
layout(std430, binding = 0) readonly buffer A { HALF_WORD a[]; };
#define LOAD(i) HALF_LOAD(a, i)
#else
layout(std430, binding = 0) readonly buffer A { T a[]; };
#define LOAD(i) a[i]
#endif
layout(std430, binding = 1) writeonly buffer C { uvec2 c[]; };
layout(push_constant) uniform P { uint outer, len, inner; } pc;

shared T pv[gl_WorkGroupSize.x];
shared uint pi[gl_WorkGroupSize.x];

// whether (y, iy) beats (x, ix); ix == 0xffffffff means "nothing yet"
bool better(T x, uint ix, T y, uint iy) {
  if (iy == 0xffffffffu) return false;
  if (ix == 0xffffffffu) return true;
  bool xn = x != x, yn = y != y;
  if (xn || yn) return yn && (!xn || iy < ix);
  return y > x || (y == x && iy < ix);
}

void main() {
  uint nout = pc.outer * pc.inner;
  uint tid = gl_LocalInvocationID.x;
  for (uint o = gl_WorkGroupID.x; o < nout; o += gl_NumWorkGroups.x) {
    uint base = (o / pc.inner) * pc.len * pc.inner + (o % pc.inner);
    T bv = T(0);
    uint bi = 0xffffffffu;
    for (uint k = tid; k < pc.len; k += gl_WorkGroupSize.x) {
      T v = LOAD(base + k * pc.inner);
      if (better(bv, bi, v, k)) { bv = v; bi = k; }
    }
    pv[tid] = bv;
    pi[tid] = bi;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
      if (tid < s && better(pv[tid], pi[tid], pv[tid + s], pi[tid + s])) {
        pv[tid] = pv[tid + s];
        pi[tid] = pi[tid + s];
      }
      barrier();
    }
    if (tid == 0u) c[o] = uvec2(pi[0], 0u);
    barrier();
  }
}
