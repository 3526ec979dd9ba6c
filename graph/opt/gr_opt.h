// SPDX-License-Identifier: Apache-2.0
/*
 * gr_opt.h — graph/opt: the optimizer passes, each in its own file, run to a fixpoint
 * by gr_optimize (opt.c): inline, algebra, matmul-transpose folding, constant folding,
 * CSE, dead-code elimination. A pass sees the IR and the op table (ir/gr_ir.h) and
 * nothing else: constant folding evaluates primitives through the fold function its
 * caller hands in (the executor's, exec/), so the passes never depend on an executor.
 */
#ifndef STAGD_GRAPH_OPT_GR_OPT_H
#define STAGD_GRAPH_OPT_GR_OPT_H

#include "gr_ir.h"

typedef struct gr_pass_stats {
  int inlined, cse_merged, folded, dead_removed, simplified;
} gr_pass_stats;

/* Evaluates pure primitive op on constant (host) arguments for constant folding: *out
 * owned by the caller. A non-OK result leaves the node to run time, where its error is
 * reported with its location. */
typedef sg_code (*gr_fold_fn)(const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err);

/* Runs the passes over every graph reachable from entry until nothing changes (bounded
 * rounds). fold NULL: no primitive is evaluated (constants inferred still fold). */
void gr_optimize(gr_module *m, gr_graph *entry, gr_fold_fn fold, gr_pass_stats *st);

/* Only the dead-code pass, to a fixpoint (bounded): what no graph's output reaches goes,
 * nothing is rewritten. For unoptimized programs, whose AD-made graphs can hold nodes
 * that only a stale free-variable list still names: without the sweep the dump printed
 * them, and its re-staging kept them (a `seq`) as a different program. */
void gr_sweep(gr_module *m, gr_graph *entry);

#endif /* STAGD_GRAPH_OPT_GR_OPT_H */
