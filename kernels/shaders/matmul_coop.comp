// SPDX-License-Identifier: Apache-2.0
// matmul_coop.comp — C[M,N] = A[M,K] @ B[K,N] for float16 A, B, C with float32
// accumulation on cooperative-matrix units (GL_NV_cooperative_matrix, i.e.
// VK_NV_cooperative_matrix with a 16x16x16 float16 x float16 -> float32 shape; the
// build's glslc has no GL_KHR_cooperative_matrix, so matmul_coop_khr is this module's
// SPIR-V rewritten to SPV_KHR_cooperative_matrix by kernels/vulkan/spv_coop_khr.c).
// Row-major, batched over z like matmul.comp, same push constants.
//
// A workgroup is 8 subgroups (specialization constant 0 = 8 x the subgroup size) and
// computes a 128x128 block of C; subgroup s takes the 32x64 piece at rows 32 * (s / 2),
// columns 64 * (s % 2), as 2x4 accumulator tiles of 16x16 (acc00..acc13). Each K step
// of 32 stages a 128x32 tile of A and a 32x128 tile of B in shared memory, double
// buffered: the next tile travels from global memory into registers while the current
// one is multiplied, one barrier per step (matmul_blocked.comp's scheme). Rows of the
// shared tiles are padded by 8 halves so the fragment loads spread over the banks.
// Where K, N and both batch strides are multiples of 8 the launcher sets specialization
// constant 1 (ALIGNED) and global loads are 16-byte vectors of 8 halves; otherwise each
// half is loaded alone with bounds checks (zeros outside), so any M, N, K works. The
// results leave through shared memory one 16x16 tile per subgroup at a time, so only
// elements inside C are written.
#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool ALIGNED = false;
layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 1) readonly buffer B { float16_t b[]; };
layout(std430, binding = 2) writeonly buffer C { float16_t c[]; };
layout(std430, binding = 0) readonly buffer A8 { uvec4 a8[]; };  // 8 halves per vector
layout(std430, binding = 1) readonly buffer B8 { uvec4 b8[]; };
layout(push_constant) uniform P { uint m, n, k, batch_a, batch_b, batch_c, batch; } pc;

#define BM 128
#define BN 128
#define BK 32
#define T16 16
#define SA 40   // row stride of the shared A tile: BK + 8 halves
#define SB 136  // row stride of the shared B tile: BN + 8 halves
#define ACC(x) fcoopmatNV<32, gl_ScopeSubgroup, T16, T16>(x)
const uint VECS = BM * BK / 8u;  // 8-half vectors in one A tile (and in one B tile)
const uint LOADS = (VECS + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
shared float16_t As[2 * BM * SA];
shared float16_t Bs[2 * BK * SB];
shared float Cs[8 * T16 * T16];  // one 16x16 result tile per subgroup

// 8 halves from a[i..i+7] (b: gather8_b), the (8 - live) past the row's end as zeros
uvec4 gather8_a(uint i, uint live) {
  f16vec2 v[4];
  [[unroll]] for (uint q = 0u; q < 4u; q++)
    v[q] = f16vec2(2u * q < live ? a[i + 2u * q] : float16_t(0.0),
                   2u * q + 1u < live ? a[i + 2u * q + 1u] : float16_t(0.0));
  return uvec4(packFloat2x16(v[0]), packFloat2x16(v[1]), packFloat2x16(v[2]),
               packFloat2x16(v[3]));
}
uvec4 gather8_b(uint i, uint live) {
  f16vec2 v[4];
  [[unroll]] for (uint q = 0u; q < 4u; q++)
    v[q] = f16vec2(2u * q < live ? b[i + 2u * q] : float16_t(0.0),
                   2u * q + 1u < live ? b[i + 2u * q + 1u] : float16_t(0.0));
  return uvec4(packFloat2x16(v[0]), packFloat2x16(v[1]), packFloat2x16(v[2]),
               packFloat2x16(v[3]));
}

// The next tiles' share of this invocation, pa and pb (locals of main: arrays of
// registers only ever indexed by unrolled loops, so they stay in registers), read from
// global memory (LOAD_TILES) and written to shared buffer `buf` (STORE_TILES).
#define LOAD_TILES(k0)                                                                 \
  [[unroll]] for (uint s = 0u; s < LOADS; s++) {                                       \
    uint v = tid + s * gl_WorkGroupSize.x;                                             \
    if (v >= VECS) break;                                                              \
    uint gr = row0 + v / (BK / 8u), gk = (k0) + (v % (BK / 8u)) * 8u; /* A[gr][gk..] */ \
    uint kk = (k0) + v / (BN / 8u), gc = col0 + (v % (BN / 8u)) * 8u; /* B[kk][gc..] */ \
    if (ALIGNED) {                                                                     \
      pa[s] = gr < pc.m && gk < pc.k ? a8[(oa + gr * pc.k + gk) / 8u] : uvec4(0u);     \
      pb[s] = kk < pc.k && gc < pc.n ? b8[(ob + kk * pc.n + gc) / 8u] : uvec4(0u);     \
    } else {                                                                           \
      pa[s] = gr < pc.m && gk < pc.k ? gather8_a(oa + gr * pc.k + gk, pc.k - gk)       \
                                     : uvec4(0u);                                      \
      pb[s] = kk < pc.k && gc < pc.n ? gather8_b(ob + kk * pc.n + gc, pc.n - gc)       \
                                     : uvec4(0u);                                      \
    }                                                                                  \
  }
#define STORE_TILES(buf)                                                               \
  [[unroll]] for (uint s = 0u; s < LOADS; s++) {                                       \
    uint v = tid + s * gl_WorkGroupSize.x;                                             \
    if (v >= VECS) break;                                                              \
    uint ia = (buf) * BM * SA + (v / (BK / 8u)) * SA + (v % (BK / 8u)) * 8u;           \
    uint ib = (buf) * BK * SB + (v / (BN / 8u)) * SB + (v % (BN / 8u)) * 8u;           \
    [[unroll]] for (uint q = 0u; q < 4u; q++) {                                        \
      f16vec2 x = unpackFloat2x16(pa[s][q]), y = unpackFloat2x16(pb[s][q]);            \
      As[ia + 2u * q] = x.x;                                                           \
      As[ia + 2u * q + 1u] = x.y;                                                      \
      Bs[ib + 2u * q] = y.x;                                                           \
      Bs[ib + 2u * q + 1u] = y.y;                                                      \
    }                                                                                  \
  }

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  uint oa = gl_WorkGroupID.z * pc.batch_a, ob = gl_WorkGroupID.z * pc.batch_b;
  uint oc = gl_WorkGroupID.z * pc.batch_c;
  uint sid = gl_SubgroupID;  // subgroups past the 8th only help with loads
  uint wr = (sid / 2u) * 32u, wc = (sid % 2u) * 64u;
  // Named fragments, no arrays: glslc leaves each fragment in its own Function variable
  // (its optimizer skips cooperative-matrix modules), so the build's NV -> KHR rewrite
  // (kernels/vulkan/spv_coop_khr.c) can trace which are A, B or accumulators; an array
  // indexed in a loop would hold both A and B fragments.
  fcoopmatNV<32, gl_ScopeSubgroup, T16, T16> acc00 = ACC(0.0), acc01 = ACC(0.0),
                                             acc02 = ACC(0.0), acc03 = ACC(0.0),
                                             acc10 = ACC(0.0), acc11 = ACC(0.0),
                                             acc12 = ACC(0.0), acc13 = ACC(0.0);

  uvec4 pa[LOADS], pb[LOADS];
  uint steps = (pc.k + BK - 1u) / BK;
  LOAD_TILES(0u)
  STORE_TILES(0u)
  barrier();
  for (uint t = 0u; t < steps; t++) {
    uint cur = t & 1u;
    if (t + 1u < steps) {
      LOAD_TILES((t + 1u) * BK)
    }
    if (sid < 8u) {
      uint abase = cur * BM * SA + wr * SA, bbase = cur * BK * SB + wc;
      [[unroll]] for (uint kk = 0u; kk < BK; kk += T16) {
        fcoopmatNV<16, gl_ScopeSubgroup, T16, T16> ma0, ma1, mb0, mb1, mb2, mb3;
        coopMatLoadNV(ma0, As, abase + kk, SA, false);
        coopMatLoadNV(ma1, As, abase + T16 * SA + kk, SA, false);
        coopMatLoadNV(mb0, Bs, bbase + kk * SB, SB, false);
        coopMatLoadNV(mb1, Bs, bbase + kk * SB + T16, SB, false);
        coopMatLoadNV(mb2, Bs, bbase + kk * SB + 2u * T16, SB, false);
        coopMatLoadNV(mb3, Bs, bbase + kk * SB + 3u * T16, SB, false);
        acc00 = coopMatMulAddNV(ma0, mb0, acc00);
        acc01 = coopMatMulAddNV(ma0, mb1, acc01);
        acc02 = coopMatMulAddNV(ma0, mb2, acc02);
        acc03 = coopMatMulAddNV(ma0, mb3, acc03);
        acc10 = coopMatMulAddNV(ma1, mb0, acc10);
        acc11 = coopMatMulAddNV(ma1, mb1, acc11);
        acc12 = coopMatMulAddNV(ma1, mb2, acc12);
        acc13 = coopMatMulAddNV(ma1, mb3, acc13);
      }
    }
    if (t + 1u < steps) {
      STORE_TILES(cur ^ 1u)
    }
    barrier();
  }
  if (sid >= 8u) return;
  // each result tile through this subgroup's 16x16 of Cs, written where inside C
  uint cbase = sid * T16 * T16, lane = gl_SubgroupInvocationID;
#define WRITE_TILE(acc, ti, tj)                                                       \
  coopMatStoreNV(acc, Cs, cbase, T16, false);                                         \
  subgroupMemoryBarrierShared();                                                      \
  subgroupBarrier();                                                                  \
  for (uint e = lane; e < T16 * T16; e += gl_SubgroupSize) {                          \
    uint gr = row0 + wr + (ti) * T16 + e / T16, gc = col0 + wc + (tj) * T16 + e % T16; \
    if (gr < pc.m && gc < pc.n) c[oc + gr * pc.n + gc] = float16_t(Cs[cbase + e]);     \
  }                                                                                   \
  subgroupBarrier();
  WRITE_TILE(acc00, 0u, 0u)
  WRITE_TILE(acc01, 0u, 1u)
  WRITE_TILE(acc02, 0u, 2u)
  WRITE_TILE(acc03, 0u, 3u)
  WRITE_TILE(acc10, 1u, 0u)
  WRITE_TILE(acc11, 1u, 1u)
  WRITE_TILE(acc12, 1u, 2u)
  WRITE_TILE(acc13, 1u, 3u)
}
