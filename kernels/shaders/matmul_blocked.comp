// SPDX-License-Identifier: Apache-2.0
// matmul_blocked.comp — C[M,N] = A[M,K] @ B[K,N] for large products, row-major, batched
// over z like matmul.comp (per-operand batch strides, 0 broadcasts). Element types:
// float32 (default), -DKN_F64, -DKN_F16 (float16 storage, float32 accumulation and
// shared tiles). Where K, N and both batch strides are multiples of 4 the launcher
// (kernels/vulkan/kernels_matmul.c) sets specialization constant ALIGNED, and every
// global load and store is one 4-element vector that lies wholly inside or wholly
// outside the matrix; otherwise each of the 4 elements is loaded and stored alone.
// Specialization constants TRANS_A / TRANS_B: the operand is stored transposed (A as
// K x M, B as N x K; kn_vk_matmul_trans): its 4 elements along K (A) or N (B) are not
// adjacent, so it is always loaded by elements (ALIGNED then covers the other operand
// and C; the launcher's rule ignores the transposed operand's row length and stride).
//
// 256 invocations compute a 128x128 block of C; each accumulates an 8x8 register block:
// rows 4*ty..4*ty+3 and 64+4*ty..64+4*ty+3, the same pattern for columns with tx, so a
// step over K reads two 4-vectors of A and two of B from shared memory for 64 products.
// The A and B tiles (128 x BK, BK x 128; BK a specialization constant, 4, 8 or 16) are
// double-buffered: the next tile is read from global memory into registers while the
// current one is multiplied, then stored to the other buffer, one barrier per step.
// Every loop over register arrays is unrolled and no vector component is indexed by a
// variable: otherwise NVIDIA's compiler keeps the accumulators in local memory, which
// made a first version 8x slower than matmul.comp on an H200 (docs/performance.md).
// K step 16 measured fastest there (39.7 TFLOPS float32 at 4096; 8: 34.0).
// -DKN_EPILOGUE (float32): each element goes through an elementwise epilogue before it
// is stored (epilogue.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if defined(KN_F64)
#define T double
#define V dvec4
#elif defined(KN_F16)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#define T float16_t
#define V f16vec4
#define ACC float
#define ACCV vec4
#else
#define T float
#define V vec4
#endif
#ifndef ACC
#define ACC T
#define ACCV V
#endif
layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const uint BK = 16;
layout(constant_id = 1) const bool ALIGNED = true;
layout(constant_id = 2) const bool TRANS_A = false;
layout(constant_id = 3) const bool TRANS_B = false;
// each operand twice: as 4-vectors (ALIGNED) and as elements
layout(std430, binding = 0) readonly buffer A { V a[]; };
layout(std430, binding = 1) readonly buffer B { V b[]; };
layout(std430, binding = 2) writeonly buffer C { V c[]; };
layout(std430, binding = 0) readonly buffer A1 { T a1[]; };
layout(std430, binding = 1) readonly buffer B1 { T b1[]; };
layout(std430, binding = 2) writeonly buffer C1 { T c1[]; };
#include "epilogue_push.glsl"
layout(push_constant) uniform P { uint m, n, k, batch_a, batch_b, batch_c, batch; EPILOGUE_PUSH } pc;
#include "epilogue.glsl"

const uint BM = 128, BN = 128;
const uint TILE = BK * 32u;         // 4-vectors in one A (or B) tile
const uint LOADS = (TILE + 255u) / 256u;  // of each tile per invocation: 1 or 2
// As: A tile transposed, As[buf * 4 * TILE + kk * 128 + r] holds A[row0 + r][k0 + kk]
// (scalars, so the transposing stores need no vector component index); Bs:
// Bs[buf * TILE + kk * 32 + c / 4] holds B[k0 + kk][col0 + c .. c + 3]
shared ACC As[2u * 4u * TILE];
shared ACCV Bs[2u * TILE];

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * 16u + tx;
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  uint oa = gl_WorkGroupID.z * pc.batch_a, ob = gl_WorkGroupID.z * pc.batch_b;
  uint oc = gl_WorkGroupID.z * pc.batch_c;
  ACCV acc[8][2];
  [[unroll]] for (int i = 0; i < 8; i++) acc[i][0] = acc[i][1] = ACCV(0);
  ACCV ra[LOADS], rb[LOADS];  // the next tile, on its way from global to shared memory

  uint steps = (pc.k + BK - 1u) / BK;
  for (uint t = 0u; t <= steps; t++) {
    // read tile t (if any) into registers, while tile t - 1 is multiplied below
    if (t < steps) {
      uint k0 = t * BK;
      [[unroll]] for (uint s = 0u; s < LOADS; s++) {
        uint e = tid + s * 256u;
        if (TILE % 256u != 0u && e >= TILE) break;  // BK 4: half the invocations load
        uint gr = row0 + e / (BK / 4u), gk = k0 + (e % (BK / 4u)) * 4u;  // A[gr][gk..+3]
        uint kk = k0 + e / 32u, gc = col0 + (e % 32u) * 4u;             // B[kk][gc..+3]
        if (ALIGNED && !TRANS_A) {
          ra[s] = (gr < pc.m && gk < pc.k) ? ACCV(a[(oa + gr * pc.k + gk) / 4u]) : ACCV(0);
        } else {
          [[unroll]] for (uint i = 0u; i < 4u; i++) {
            uint ia = TRANS_A ? (gk + i) * pc.m + gr : gr * pc.k + gk + i;
            ra[s][i] = (gr < pc.m && gk + i < pc.k) ? ACC(a1[oa + ia]) : ACC(0);
          }
        }
        if (ALIGNED && !TRANS_B) {
          rb[s] = (kk < pc.k && gc < pc.n) ? ACCV(b[(ob + kk * pc.n + gc) / 4u]) : ACCV(0);
        } else {
          [[unroll]] for (uint i = 0u; i < 4u; i++) {
            uint ib = TRANS_B ? (gc + i) * pc.k + kk : kk * pc.n + gc + i;
            rb[s][i] = (kk < pc.k && gc + i < pc.n) ? ACC(b1[ob + ib]) : ACC(0);
          }
        }
      }
    }
    if (t > 0u) {
      uint cur = (t - 1u) & 1u;
      [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
        uint abase = cur * 4u * TILE + kk * 128u, bbase = cur * TILE + kk * 32u;
        ACCV a0 = ACCV(As[abase + 4u * ty], As[abase + 4u * ty + 1u], As[abase + 4u * ty + 2u],
                       As[abase + 4u * ty + 3u]);
        ACCV a1v = ACCV(As[abase + 64u + 4u * ty], As[abase + 65u + 4u * ty],
                        As[abase + 66u + 4u * ty], As[abase + 67u + 4u * ty]);
        ACCV b0 = Bs[bbase + tx], b1v = Bs[bbase + 16u + tx];
        [[unroll]] for (int i = 0; i < 4; i++) {
          acc[i][0] += a0[i] * b0;
          acc[i][1] += a0[i] * b1v;
          acc[i + 4][0] += a1v[i] * b0;
          acc[i + 4][1] += a1v[i] * b1v;
        }
      }
    }
    if (t < steps) {
      // tile t to buffer t & 1, last read while multiplying tile t - 2 (before the
      // previous barrier)
      uint buf = t & 1u;
      [[unroll]] for (uint s = 0u; s < LOADS; s++) {
        uint e = tid + s * 256u;
        if (TILE % 256u != 0u && e >= TILE) break;
        uint r = e / (BK / 4u), kk = (e % (BK / 4u)) * 4u;
        [[unroll]] for (uint i = 0u; i < 4u; i++) As[buf * 4u * TILE + (kk + i) * 128u + r] = ra[s][i];
        Bs[buf * TILE + e] = rb[s];  // e = kk * 32 + column vector
      }
    }
    barrier();
  }
  [[unroll]] for (uint i = 0u; i < 8u; i++) {
    uint gr = row0 + (i < 4u ? 4u * ty + i : 64u + 4u * ty + i - 4u);
    [[unroll]] for (uint j = 0u; j < 2u; j++) {
      uint gc = col0 + j * 64u + 4u * tx;
      if (gr < pc.m) {
        uint e = oc + gr * pc.n + gc;
        if (ALIGNED) {
          V v = V(acc[i][j]);
#ifdef KN_EPILOGUE
          v = V(epilogue(v.x, e), epilogue(v.y, e + 1u), epilogue(v.z, e + 2u), epilogue(v.w, e + 3u));
#endif
          if (gc < pc.n) c[e / 4u] = v;
        } else {
          [[unroll]] for (uint q = 0u; q < 4u; q++)
            if (gc + q < pc.n) c1[e + q] = epilogue(T(acc[i][j][q]), e + q);
        }
      }
    }
  }
}
