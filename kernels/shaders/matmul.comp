// SPDX-License-Identifier: Apache-2.0
// matmul.comp — C[M,N] = A[M,K] @ B[K,N], row-major, batched over z (per-operand batch
// strides; 0 broadcasts one matrix over the batch). Element types: float32 (default),
// -DKN_F64, -DKN_I32, -DKN_I64 (integer products wrap like NumPy's), -DKN_F16 (float16
// storage, float32 accumulation and shared tiles: needs storageBuffer16BitAccess and
// shaderFloat16).
// Tiled in shared memory (BM x BK of A, BK x BN of B per step) with register blocking:
// each invocation accumulates a TM x TN block of C, rows ty + i*WGY and columns
// tx + j*WGX so neighbouring invocations touch neighbouring addresses.
// Specialization constants TRANS_A / TRANS_B: the operand is stored transposed (A as
// K x M, B as N x K; kernels/vulkan/kernels_matmul.c kn_vk_matmul_trans), and its tile
// is read along the stored rows instead, so no transposed copy is needed.
// -DKN_EPILOGUE (float32): each element goes through an elementwise epilogue before it
// is stored (epilogue.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#if defined(KN_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
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
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const bool TRANS_A = false;
layout(constant_id = 3) const bool TRANS_B = false;
layout(std430, binding = 0) readonly buffer A { T a[]; };
layout(std430, binding = 1) readonly buffer B { T b[]; };
layout(std430, binding = 2) writeonly buffer C { T c[]; };
#include "epilogue_push.glsl"
layout(push_constant) uniform P { uint m, n, k, batch_a, batch_b, batch_c, batch; EPILOGUE_PUSH } pc;
#include "epilogue.glsl"

#define TM 4
#define TN 4
#define BK 16
const uint WGX = gl_WorkGroupSize.x;
const uint WGY = gl_WorkGroupSize.y;
const uint BM = WGY * TM;
const uint BN = WGX * TN;

shared ACC As[BK * BM];  // As[kk * BM + row]: A tile, transposed
shared ACC Bs[BK * BN];  // Bs[kk * BN + col]

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * WGX + tx;
  uint nthreads = WGX * WGY;
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  uint oa = gl_WorkGroupID.z * pc.batch_a, ob = gl_WorkGroupID.z * pc.batch_b;
  uint oc = gl_WorkGroupID.z * pc.batch_c;
  ACC acc[TM][TN];
  for (int i = 0; i < TM; i++)
    for (int j = 0; j < TN; j++) acc[i][j] = ACC(0);

  for (uint k0 = 0u; k0 < pc.k; k0 += BK) {
    for (uint e = tid; e < BM * BK; e += nthreads) {
      // consecutive invocations read along A's stored rows: K, or M when transposed
      uint r = TRANS_A ? e % BM : e / BK, kk = TRANS_A ? e / BM : e % BK;
      uint gr = row0 + r, gk = k0 + kk;
      uint ia = TRANS_A ? gk * pc.m + gr : gr * pc.k + gk;
      As[kk * BM + r] = (gr < pc.m && gk < pc.k) ? ACC(a[oa + ia]) : ACC(0);
    }
    for (uint e = tid; e < BK * BN; e += nthreads) {
      uint kk = TRANS_B ? e % BK : e / BN, col = TRANS_B ? e / BK : e % BN;
      uint gk = k0 + kk, gc = col0 + col;
      uint ib = TRANS_B ? gc * pc.k + gk : gk * pc.n + gc;
      Bs[kk * BN + col] = (gk < pc.k && gc < pc.n) ? ACC(b[ob + ib]) : ACC(0);
    }
    barrier();
    for (uint kk = 0u; kk < BK; kk++) {
      ACC ar[TM], br[TN];
      for (int i = 0; i < TM; i++) ar[i] = As[kk * BM + ty + uint(i) * WGY];
      for (int j = 0; j < TN; j++) br[j] = Bs[kk * BN + tx + uint(j) * WGX];
      for (int i = 0; i < TM; i++)
        for (int j = 0; j < TN; j++) acc[i][j] += ar[i] * br[j];
    }
    barrier();
  }
  for (int i = 0; i < TM; i++) {
    uint gr = row0 + ty + uint(i) * WGY;
    if (gr >= pc.m) continue;
    for (int j = 0; j < TN; j++) {
      uint gc = col0 + tx + uint(j) * WGX;
      uint e = oc + gr * pc.n + gc;
      if (gc < pc.n) c[e] = epilogue(T(acc[i][j]), e);
    }
  }
}
