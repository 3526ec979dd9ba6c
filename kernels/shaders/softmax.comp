// SPDX-License-Identifier: Apache-2.0
// softmax.comp — softmax (LOG = 0) or log_softmax (LOG = 1) along the middle axis of an
// [outer, len, inner] float32 (or, -DKN_F64, float64) view (any axis of the tensor): one
// workgroup per (outer, inner) row, grid-stride, max-subtracted for stability. -DKN_F16:
// halves in words, computed in float32 exactly like the float32 kernel and rounded once
// (half_io.glsl). The row's max and sum
// are combined with subgroupMax/subgroupAdd and a small shared array (-DKN_SUBGROUP,
// where the device offers subgroup arithmetic) or a shared-memory tree.
#version 450
#ifdef KN_F64
#define T double
#extension GL_GOOGLE_include_directive : require
#include "f64_math.glsl"
#define EXP f64_exp
#define LOG_ f64_log
#define NEG_INF (-f64_inf())
#else
#define T float
#ifdef KN_F16
#extension GL_GOOGLE_include_directive : require
#include "half_io.glsl"
#endif
#define EXP exp
#define LOG_ log
#define NEG_INF uintBitsToFloat(0xff800000u)
#endif
#ifdef KN_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint LOG = 0;
#ifdef KN_F16
layout(std430, binding = 0) readonly buffer A { HALF_WORD a[]; };
layout(std430, binding = 1) buffer C { HALF_WORD c[]; };
#define LOAD(i) HALF_LOAD(a, i)
#define STORE(i, v) HALF_STORE(c, i, v)
#else
layout(std430, binding = 0) readonly buffer A { T a[]; };
layout(std430, binding = 1) writeonly buffer C { T c[]; };
#define LOAD(i) a[i]
#define STORE(i, v) c[i] = (v)
#endif
layout(push_constant) uniform P { uint outer, len, inner; } pc;

shared T partial[gl_WorkGroupSize.x];

T combine(bool is_max, T x, T y) { return is_max ? max(x, y) : x + y; }

T workgroup_combine(bool is_max, T v) {
  uint tid = gl_LocalInvocationID.x;
#ifdef KN_SUBGROUP
  v = is_max ? subgroupMax(v) : subgroupAdd(v);
  if (subgroupElect()) partial[gl_SubgroupID] = v;
  barrier();
  T r = partial[0];
  for (uint s = 1u; s < gl_NumSubgroups; s++) r = combine(is_max, r, partial[s]);
#else
  partial[tid] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
    if (tid < s) partial[tid] = combine(is_max, partial[tid], partial[tid + s]);
    barrier();
  }
  T r = partial[0];
#endif
  barrier();
  return r;
}

// the result at element i of a row with max m: x - m - log(s) (LOG) or exp(x - m) / s,
// where t is log(s) or 1 / s
T result(uint i, T m, T t) { return LOG == 1u ? LOAD(i) - m - t : EXP(LOAD(i) - m) * t; }

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint rows = pc.outer * pc.inner;
  for (uint row = gl_WorkGroupID.x; row < rows; row += gl_NumWorkGroups.x) {
    uint base = (row / pc.inner) * pc.len * pc.inner + (row % pc.inner);
    T m = NEG_INF;
    for (uint k = tid; k < pc.len; k += gl_WorkGroupSize.x) m = max(m, LOAD(base + k * pc.inner));
    m = workgroup_combine(true, m);
    T s = T(0);
    for (uint k = tid; k < pc.len; k += gl_WorkGroupSize.x) s += EXP(LOAD(base + k * pc.inner) - m);
    s = workgroup_combine(false, s);
    T t = LOG == 1u ? LOG_(s) : T(1) / s;
#ifdef KN_F16
    if (pc.inner == 1u) {
      // a contiguous row: its words inside [base, base + len) hold two of its own
      // elements and take a plain store; only the (at most two) words shared with the
      // neighbouring rows are written half by half, atomically
      uint end = base + pc.len;
      for (uint w = (base >> 1) + tid; w <= (end - 1u) >> 1; w += gl_WorkGroupSize.x) {
        uint e = 2u * w;
        if (e >= base && e + 1u < end) {
          c[w] = half_pack(result(e, m, t), result(e + 1u, m, t));
        } else {
          uint i = e >= base ? e : e + 1u;
          HALF_STORE(c, i, result(i, m, t));
        }
      }
      continue;
    }
#endif
    for (uint k = tid; k < pc.len; k += gl_WorkGroupSize.x)
      STORE(base + k * pc.inner, result(base + k * pc.inner, m, t));
  }
}
