// softmax.comp — softmax (LOG = 0) or log_softmax (LOG = 1) along the middle axis of an
// [outer, len, inner] float32 (or, -DKN_F64, float64) view (any axis of the tensor): one
// workgroup per (outer, inner) row, grid-stride, max-subtracted for stability. The row's max and sum
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
layout(std430, binding = 0) readonly buffer A { T a[]; };
layout(std430, binding = 1) writeonly buffer C { T c[]; };
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

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint rows = pc.outer * pc.inner;
  for (uint row = gl_WorkGroupID.x; row < rows; row += gl_NumWorkGroups.x) {
    uint base = (row / pc.inner) * pc.len * pc.inner + (row % pc.inner);
    T m = NEG_INF;
    for (uint k = tid; k < pc.len; k += gl_WorkGroupSize.x) m = max(m, a[base + k * pc.inner]);
    m = workgroup_combine(true, m);
    T s = T(0);
    for (uint k = tid; k < pc.len; k += gl_WorkGroupSize.x) s += EXP(a[base + k * pc.inner] - m);
    s = workgroup_combine(false, s);
    if (LOG == 1u) {
      T ls = LOG_(s);
      for (uint k = tid; k < pc.len; k += gl_WorkGroupSize.x)
        c[base + k * pc.inner] = a[base + k * pc.inner] - m - ls;
    } else {
      T inv = T(1) / s;
      for (uint k = tid; k < pc.len; k += gl_WorkGroupSize.x)
        c[base + k * pc.inner] = EXP(a[base + k * pc.inner] - m) * inv;
    }
  }
}
