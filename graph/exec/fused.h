// SPDX-License-Identifier: Apache-2.0
/*
 * fused.h — elementwise chains of the executor's compiled code (fused.c), private to
 * exec/: compile.c marks them, exec.c runs each marked chain in one pass (on the CPU
 * here, on a device through gr_backend.fused).
 */
#ifndef STAGD_GRAPH_EXEC_FUSED_H
#define STAGD_GRAPH_EXEC_FUSED_H

#include "gr_exec.h"

/* The value an operand names in a frame of c. */
static inline const gr_val *gr_operand_val(const gr_code *c, const gr_val *slots, const gr_val *env,
                                           gr_operand o) {
  switch (o.kind) {
  case GO_LOCAL: return &slots[o.idx];
  case GO_CONST: return &c->consts[o.idx];
  default: return &env[o.idx];
  }
}

/* Sets instrs[pc].fuse on the first instruction of each chain (needs c->last_use). */
void gr_fuse_mark(gr_code *c);
/* Runs the chain that starts at pc in one pass when its operands allow: on the CPU
 * (float32 tensors of one shape and Python numbers) or through the request's backend
 * (gr_backend.fused). *done: it ran, *out is the last step's value. *done false with
 * SG_OK: nothing was done, the steps run one by one; an error is the device's. */
sg_code gr_fused_run(gr_ctx *ctx, const gr_code *c, int pc, const gr_val *slots, const gr_val *env,
                     gr_val *out, bool *done, sg_error *err);

/* On a device whose backend takes epilogues: runs the matmul or reduction at pc (instrs[pc].epilogue)
 * and the chain at pc + 1 as one kernel when the chain's operands allow (*done, *out:
 * the chain's last value); *done false with SG_OK: nothing was done. */
sg_code gr_epilogue_run(gr_ctx *ctx, const gr_code *c, int pc, const gr_val *slots, const gr_val *env,
                        gr_val *out, bool *done, sg_error *err);

#endif
