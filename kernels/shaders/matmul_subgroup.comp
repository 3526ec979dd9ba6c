// SPDX-License-Identifier: Apache-2.0
// matmul_subgroup.comp — C[M,N] = A[M,K] @ B[K,N] (row-major, batched over z like
// matmul.comp) with one subgroup per output element: the lanes split K (lane l takes
// p = l, l + S, l + 2S, ... for subgroup size S) and subgroupAdd sums the partial dot
// products. The kernel for skinny products (matrix @ vector, n <= 4 with a long K),
// where a 64x64 tile would leave most invocations idle. Element types: float32
// (default), -DKN_F64, -DKN_I32, -DKN_I64 (needs shaderSubgroupExtendedTypes),
// -DKN_F16 (float16 storage, float32 accumulation).
// Outputs are visited grid-stride by subgroup, so any subgroup size works.
// Specialization constants TRANS_A / TRANS_B: the operand is stored transposed (A as
// K x M, B as N x K; kn_vk_matmul_trans): only the index arithmetic changes (a stored
// B^T is read along its rows, contiguous across the lanes).
// -DKN_EPILOGUE (float32): each element goes through an elementwise epilogue before it
// is stored (epilogue.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#if defined(KN_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#define T int64_t
#elif defined(KN_I32)
#define T int
#elif defined(KN_F64)
#define T double
#elif defined(KN_F16)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#define T float16_t
#define ACC float
#else
#define T float
#endif
#ifndef ACC
#define ACC T
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool TRANS_A = false;
layout(constant_id = 2) const bool TRANS_B = false;
layout(std430, binding = 0) readonly buffer A { T a[]; };
layout(std430, binding = 1) readonly buffer B { T b[]; };
layout(std430, binding = 2) writeonly buffer C { T c[]; };
#include "epilogue_push.glsl"
layout(push_constant) uniform P { uint m, n, k, batch_a, batch_b, batch_c, batch; EPILOGUE_PUSH } pc;
#include "epilogue.glsl"

void main() {
  uint mn = pc.m * pc.n, total = mn * pc.batch;
  uint step = gl_NumWorkGroups.x * gl_NumSubgroups;
  for (uint o = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID; o < total; o += step) {
    uint z = o / mn, r = o % mn, i = r / pc.n, j = r % pc.n;
    // A[i][p] at a[oa + p * sa], B[p][j] at b[ob + p * sb]
    uint oa = z * pc.batch_a + (TRANS_A ? i : i * pc.k), sa = TRANS_A ? pc.m : 1u;
    uint ob = z * pc.batch_b + (TRANS_B ? j * pc.k : j), sb = TRANS_B ? 1u : pc.n;
    ACC s = ACC(0);
    for (uint p = gl_SubgroupInvocationID; p < pc.k; p += gl_SubgroupSize)
      s += ACC(a[oa + p * sa]) * ACC(b[ob + p * sb]);
    s = subgroupAdd(s);
    if (subgroupElect()) c[o] = epilogue(T(s), o);
  }
}
