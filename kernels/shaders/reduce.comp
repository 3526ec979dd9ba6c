// SPDX-License-Identifier: Apache-2.0
// reduce.comp — sum / max / min / mean along one axis of a tensor viewed as
// [outer, len, inner]. One workgroup per output element (grid-stride over outputs).
// Element types: float32 (default), -DKN_F64, -DKN_I32 (max/min: int32 result),
// -DKN_I32_SUM (int32 summed into int64, NumPy's sum dtype), -DKN_I64, -DKN_F16 (halves
// in words, accumulated in float32 exactly like the float32 kernel and rounded once:
// half_io.glsl). With KN_SUBGROUP (float32, float16) the workgroup combines
// per-subgroup results of subgroupAdd/Max/Min, otherwise it uses a shared-memory tree.
// Mean (OP 3, float32 and float16) is the float32 sum times pc.scale (float32(1/len)),
// the same product the separate scaling dispatch of the other types computes.
// -DKN_EPILOGUE (float32): each result goes through an elementwise epilogue before it is
// stored (epilogue.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef KN_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#if defined(KN_I64) || defined(KN_I32_SUM)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#if defined(KN_I64)
#define T int64_t
#define ACC int64_t
#elif defined(KN_I32_SUM)
#define T int
#define ACC int64_t
#elif defined(KN_I32)
#define T int
#define ACC int
#elif defined(KN_F64)
#define T double
#define ACC double
#define KN_FLOAT
#elif defined(KN_F16)
#include "half_io.glsl"
#define T HALF_WORD
#define ACC float
#define KN_FLOAT
#else
#define T float
#define ACC float
#define KN_FLOAT
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;  // 0 sum, 1 max, 2 min, 3 mean
layout(std430, binding = 0) readonly buffer A { T a[]; };
#ifdef KN_F16
layout(std430, binding = 1) buffer C { HALF_WORD c[]; };
#define LOAD(i) HALF_LOAD(a, i)
#define STORE(i, v) HALF_STORE(c, i, v)
#else
layout(std430, binding = 1) writeonly buffer C { ACC c[]; };
#define LOAD(i) ACC(a[i])
#define STORE(i, v) c[i] = (v)
#endif
#include "epilogue_push.glsl"
layout(push_constant) uniform P { uint outer, len, inner; float scale; EPILOGUE_PUSH } pc;
#include "epilogue.glsl"

shared ACC partial[gl_WorkGroupSize.x];

ACC identity(uint op) {
  if (op == 0u || op == 3u) return ACC(0);
#ifdef KN_FLOAT
  return ACC(op == 1u ? uintBitsToFloat(0xff800000u) : uintBitsToFloat(0x7f800000u));
#elif defined(KN_I64)
  return op == 1u ? int64_t(0x8000000000000000ul) : int64_t(0x7ffffffffffffffful);
#else
  return op == 1u ? ACC(-2147483647 - 1) : ACC(2147483647);
#endif
}

ACC combine(uint op, ACC x, ACC y) {
  if (op == 0u || op == 3u) return x + y;
  if (x != x || y != y) return x + y;  // NaN propagates (never true for integers)
  return op == 1u ? max(x, y) : min(x, y);
}

// the output value of a combined acc: mean scales the sum
ACC finish(ACC acc) {
#ifdef KN_FLOAT
  if (OP == 3u) return acc * ACC(pc.scale);
#endif
  return acc;
}

#ifdef KN_SUBGROUP
// subgroupMax/Min may drop NaNs (lavapipe does): a NaN in any lane, kept apart as the
// sum of the lanes' NaNs, is the result, as in combine() and NumPy
float subgroup_combine(uint op, float x) {
  if (op == 0u || op == 3u) return subgroupAdd(x);
  float nan = subgroupAdd(x != x ? x : 0.0);
  float r = op == 1u ? subgroupMax(x) : subgroupMin(x);
  return nan != nan ? nan : r;
}
#endif

void main() {
  uint nout = pc.outer * pc.inner;
  uint tid = gl_LocalInvocationID.x;
  for (uint o = gl_WorkGroupID.x; o < nout; o += gl_NumWorkGroups.x) {
    uint base = (o / pc.inner) * pc.len * pc.inner + (o % pc.inner);
    ACC acc = identity(OP);
    for (uint k = tid; k < pc.len; k += gl_WorkGroupSize.x)
      acc = combine(OP, acc, LOAD(base + k * pc.inner));
#ifdef KN_SUBGROUP
    acc = subgroup_combine(OP, acc);
    if (subgroupElect()) partial[gl_SubgroupID] = acc;
    barrier();
    if (tid == 0u) {
      float r = partial[0];
      for (uint s = 1u; s < gl_NumSubgroups; s++) r = combine(OP, r, partial[s]);
      STORE(o, epilogue(finish(r), o));
    }
#else
    partial[tid] = acc;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
      if (tid < s) partial[tid] = combine(OP, partial[tid], partial[tid + s]);
      barrier();
    }
    if (tid == 0u) STORE(o, epilogue(finish(partial[0]), o));
#endif
    barrier();  // partial[] is reused by the next output
  }
}
