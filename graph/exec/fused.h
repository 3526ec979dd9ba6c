// SPDX-License-Identifier: Apache-2.0
/*
 * fused.h — elementwise chains of the executor's compiled code (fused.c), private to
 * exec/: compile.c marks them, exec.c runs each marked chain in one pass.
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
/* Runs the chain that starts at pc in one pass when its operands allow (float32
 * tensors of one shape and Python scalars): *out is the last step's value and true is
 * returned. false: nothing was done, the steps run one by one. */
bool gr_fused_run(const gr_code *c, int pc, const gr_val *slots, const gr_val *env, gr_val *out);

#endif
