// SPDX-License-Identifier: Apache-2.0
/*
 * spv_coop_khr.h — rewrites a SPV_NV_cooperative_matrix module (what the build's glslc
 * can compile) into the equivalent SPV_KHR_cooperative_matrix module (what it cannot).
 * In KHR a matrix type carries its use (A, B or accumulator), so every cooperative-matrix
 * value's use is inferred from where it flows (loads, stores, phis, element-wise ops
 * into the A/B/C operands of a MulAdd) and NV types shared by several uses are split.
 * A value whose use cannot be told, or that flows into two uses, is an error.
 */
#ifndef SPV_COOP_KHR_H
#define SPV_COOP_KHR_H

#include "spv_module.h"

/* SPIR-V registry numbers (SPIRV-Headers spirv.core.grammar.json) */
enum {
  SPV_OP_EXTENSION = 10,
  SPV_OP_CAPABILITY = 17,
  SPV_OP_CONSTANT = 43,
  SPV_OP_TYPE_COOP_NV = 5358,
  SPV_OP_COOP_LOAD_NV = 5359,
  SPV_OP_COOP_STORE_NV = 5360,
  SPV_OP_COOP_MULADD_NV = 5361,
  SPV_OP_COOP_LENGTH_NV = 5362,
  SPV_OP_TYPE_COOP_KHR = 4456,
  SPV_OP_COOP_LOAD_KHR = 4457,
  SPV_OP_COOP_STORE_KHR = 4458,
  SPV_OP_COOP_MULADD_KHR = 4459,
  SPV_OP_COOP_LENGTH_KHR = 4460,
  SPV_CAP_COOP_NV = 5357,
  SPV_CAP_COOP_KHR = 6022,
};

/* CooperativeMatrixUse operand of OpTypeCooperativeMatrixKHR */
typedef enum { SPV_USE_A = 0, SPV_USE_B = 1, SPV_USE_ACC = 2 } spv_coop_use;

#define SPV_EXT_COOP_NV "SPV_NV_cooperative_matrix"
#define SPV_EXT_COOP_KHR "SPV_KHR_cooperative_matrix"

/* Rewrites m in place; false with a message naming the offending ids in err (m is then
 * unchanged). */
bool spv_coop_nv_to_khr(spv_module *m, char *err, size_t errlen);

#endif
