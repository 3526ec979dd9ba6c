// matmul_coop.comp — C[M,N] = A[M,K] @ B[K,N] for float16 A, B, C with float32
// accumulation on cooperative-matrix units (GL_NV_cooperative_matrix, i.e.
// VK_NV_cooperative_matrix with a 16x16x16 float16 x float16 -> float32 shape; the
// build's glslc has no GL_KHR_cooperative_matrix, so matmul_coop_khr is this module's
// SPIR-V rewritten to SPV_KHR_cooperative_matrix by kernels/vulkan/spv_coop_khr.c).
// Row-major, batched over z like matmul.comp, same push constants.
// A workgroup is 4 subgroups (specialization constant 0 = 4 x the subgroup size) and
// computes a 64x64 block of C; subgroup s takes the 32x32 quarter (s / 2, s % 2) as
// 2x2 accumulator tiles (acc00..acc11). Each K step stages a 64x32 tile of A and a
// 32x64 tile of B in shared memory with bounds checks (zeros outside), so any M, N, K
// works; the results go through shared memory too, so only elements inside C are
// written.
#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 1) readonly buffer B { float16_t b[]; };
layout(std430, binding = 2) writeonly buffer C { float16_t c[]; };
layout(push_constant) uniform P { uint m, n, k, batch_a, batch_b, batch_c, batch; } pc;

#define BM 64
#define BN 64
#define BK 32
#define T16 16
#define ACC(x) fcoopmatNV<32, gl_ScopeSubgroup, T16, T16>(x)
shared float16_t As[BM * BK];  // row-major, row stride BK
shared float16_t Bs[BK * BN];  // row-major, row stride BN
shared float Cs[BM * BN];      // the block of C, row-major

void main() {
  uint tid = gl_LocalInvocationID.x, nthreads = gl_WorkGroupSize.x;
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  uint oa = gl_WorkGroupID.z * pc.batch_a, ob = gl_WorkGroupID.z * pc.batch_b;
  uint oc = gl_WorkGroupID.z * pc.batch_c;
  uint sid = gl_SubgroupID;            // subgroups past the 4th only help with loads
  uint wr = (sid / 2u) * 32u, wc = (sid % 2u) * 32u;
  // Named fragments, no arrays: glslc leaves each fragment in its own Function variable
  // (its optimizer skips cooperative-matrix modules), so the build's NV -> KHR rewrite
  // (kernels/vulkan/spv_coop_khr.c) can trace which are A, B or accumulators; an array
  // indexed in a loop would hold both A and B fragments.
  fcoopmatNV<32, gl_ScopeSubgroup, T16, T16> acc00 = ACC(0.0), acc01 = ACC(0.0),
                                             acc10 = ACC(0.0), acc11 = ACC(0.0);

  for (uint k0 = 0u; k0 < pc.k; k0 += BK) {
    for (uint e = tid; e < BM * BK; e += nthreads) {
      uint r = e / BK, kk = e % BK, gr = row0 + r, gk = k0 + kk;
      As[e] = (gr < pc.m && gk < pc.k) ? a[oa + gr * pc.k + gk] : float16_t(0.0);
    }
    for (uint e = tid; e < BK * BN; e += nthreads) {
      uint kk = e / BN, col = e % BN, gk = k0 + kk, gc = col0 + col;
      Bs[e] = (gk < pc.k && gc < pc.n) ? b[ob + gk * pc.n + gc] : float16_t(0.0);
    }
    barrier();
    if (sid < 4u) {
      for (uint kk = 0u; kk < BK; kk += T16) {
        fcoopmatNV<16, gl_ScopeSubgroup, T16, T16> ma0, ma1, mb0, mb1;
        coopMatLoadNV(ma0, As, wr * BK + kk, BK, false);
        coopMatLoadNV(ma1, As, (wr + T16) * BK + kk, BK, false);
        coopMatLoadNV(mb0, Bs, kk * BN + wc, BN, false);
        coopMatLoadNV(mb1, Bs, kk * BN + wc + T16, BN, false);
        acc00 = coopMatMulAddNV(ma0, mb0, acc00);
        acc01 = coopMatMulAddNV(ma0, mb1, acc01);
        acc10 = coopMatMulAddNV(ma1, mb0, acc10);
        acc11 = coopMatMulAddNV(ma1, mb1, acc11);
      }
    }
    barrier();
  }
  if (sid < 4u) {
    coopMatStoreNV(acc00, Cs, wr * BN + wc, BN, false);
    coopMatStoreNV(acc01, Cs, wr * BN + wc + T16, BN, false);
    coopMatStoreNV(acc10, Cs, (wr + T16) * BN + wc, BN, false);
    coopMatStoreNV(acc11, Cs, (wr + T16) * BN + wc + T16, BN, false);
  }
  barrier();
  for (uint e = tid; e < BM * BN; e += nthreads) {
    uint gr = row0 + e / BN, gc = col0 + e % BN;
    if (gr < pc.m && gc < pc.n) c[oc + gr * pc.n + gc] = float16_t(Cs[e]);
  }
}
