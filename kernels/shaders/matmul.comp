// matmul.comp — C[M,N] = A[M,K] @ B[K,N], float32, row-major, batched over z.
// Tiled in shared memory (BM x BK of A, BK x BN of B per step) with register blocking:
// each invocation accumulates a TM x TN block of C, rows ty + i*WGY and columns
// tx + j*WGX so neighbouring invocations touch neighbouring addresses.
#version 450
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint m, n, k, batch_a, batch_b, batch_c; } pc;

#define TM 4
#define TN 4
#define BK 16
const uint WGX = gl_WorkGroupSize.x;
const uint WGY = gl_WorkGroupSize.y;
const uint BM = WGY * TM;
const uint BN = WGX * TN;

shared float As[BK * BM];  // As[kk * BM + row]: A tile, transposed
shared float Bs[BK * BN];  // Bs[kk * BN + col]

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * WGX + tx;
  uint nthreads = WGX * WGY;
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  uint oa = gl_WorkGroupID.z * pc.batch_a, ob = gl_WorkGroupID.z * pc.batch_b;
  uint oc = gl_WorkGroupID.z * pc.batch_c;
  float acc[TM][TN];
  for (int i = 0; i < TM; i++)
    for (int j = 0; j < TN; j++) acc[i][j] = 0.0;

  for (uint k0 = 0u; k0 < pc.k; k0 += BK) {
    for (uint e = tid; e < BM * BK; e += nthreads) {
      uint r = e / BK, kk = e % BK;  // consecutive invocations read along K
      uint gr = row0 + r, gk = k0 + kk;
      As[kk * BM + r] = (gr < pc.m && gk < pc.k) ? a[oa + gr * pc.k + gk] : 0.0;
    }
    for (uint e = tid; e < BK * BN; e += nthreads) {
      uint kk = e / BN, col = e % BN;
      uint gk = k0 + kk, gc = col0 + col;
      Bs[kk * BN + col] = (gk < pc.k && gc < pc.n) ? b[ob + gk * pc.n + gc] : 0.0;
    }
    barrier();
    for (uint kk = 0u; kk < BK; kk++) {
      float ar[TM], br[TN];
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
      if (gc < pc.n) c[oc + gr * pc.n + gc] = acc[i][j];
    }
  }
}
