// SPDX-License-Identifier: Apache-2.0
// epilogue.glsl — the elementwise epilogue of the float32 matmul kernels (built again
// with -DKN_EPILOGUE: matmul_epi, matmul_blocked_epi, matmul_subgroup_epi; launcher
// kn_vk_matmul_epilogue in kernels/vulkan/kernels_matmul.c; docs/vulkan.md "Matmul
// epilogues"). epilogue(v, i) takes the product's element i (its index in the whole
// result, batches included) through EPI_N steps (at most 8) of a fused chain
// (fused_step.glsl), whose previous value at step 0 is the product's element, before the
// kernel stores it: a bias and an activation cost no pass over memory of their own. The
// steps are specialization constants (one pipeline per chain); operands 1..3 are
// buffers F0..F2 (bindings 3..5; a bit of EPI_BCAST set: broadcast, read at
// (i / ediv[k]) % emod[k]), 8 + k the push constant es[k]. Included after the kernel's
// push block (which ends with EPILOGUE_PUSH, epilogue_push.glsl); without -DKN_EPILOGUE
// epilogue(v, i) is v.
#ifdef KN_EPILOGUE
#define KN_F32
#include "unary_ops.glsl"
#include "binary_ops.glsl"

layout(constant_id = 4) const uint EPI_N = 0u;
layout(constant_id = 5) const uint EPI_BCAST = 0u;
layout(constant_id = 6) const uint ES0 = 0u;
layout(constant_id = 7) const uint ES1 = 0u;
layout(constant_id = 8) const uint ES2 = 0u;
layout(constant_id = 9) const uint ES3 = 0u;
layout(constant_id = 10) const uint ES4 = 0u;
layout(constant_id = 11) const uint ES5 = 0u;
layout(constant_id = 12) const uint ES6 = 0u;
layout(constant_id = 13) const uint ES7 = 0u;
layout(std430, binding = 3) readonly buffer F0 { float f0[]; };
layout(std430, binding = 4) readonly buffer F1 { float f1[]; };
layout(std430, binding = 5) readonly buffer F2 { float f2[]; };

uint epi_at(uint k, uint i) { return (EPI_BCAST & (1u << k)) != 0u ? (i / pc.ediv[k]) % pc.emod[k] : i; }

float fused_load(uint k, uint i, float prev) {
  switch (k) {
  case 0u: return prev;
  case 1u: return f0[epi_at(0u, i)];
  case 2u: return f1[epi_at(1u, i)];
  case 3u: return f2[epi_at(2u, i)];
  default: return pc.es[k - 8u];
  }
}

#include "fused_step.glsl"

float epilogue(float v, uint i) {
  if (EPI_N > 0u) v = fused_step(ES0, i, v);
  if (EPI_N > 1u) v = fused_step(ES1, i, v);
  if (EPI_N > 2u) v = fused_step(ES2, i, v);
  if (EPI_N > 3u) v = fused_step(ES3, i, v);
  if (EPI_N > 4u) v = fused_step(ES4, i, v);
  if (EPI_N > 5u) v = fused_step(ES5, i, v);
  if (EPI_N > 6u) v = fused_step(ES6, i, v);
  if (EPI_N > 7u) v = fused_step(ES7, i, v);
  return v;
}
#else
#define epilogue(v, i) (v)
#endif
