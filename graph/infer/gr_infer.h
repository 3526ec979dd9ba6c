// SPDX-License-Identifier: Apache-2.0
/*
 * gr_infer.h — graph/infer: abstract interpretation of the IR. For every node a type
 * (scalar, tensor, tuple, record, function, none), dtype, shape (dims may be unknown
 * `?`) and, for scalars, the constant when it is known (node->aval, ir/gr_ir.h).
 * Graphs are inferred per input signature (Myia's per-call-site specialization), so a
 * shape mismatch inside a helper is reported at the helper's node for the call that
 * causes it. Sees the IR only.
 *   infer.c          the abstract interpreter, the signature cache, the rules column
 *   infer_ops.c      shape rules of the layout, indexing, constructor and structure ops
 *   infer_adjoint.c  shape rules of AD's helper rows and the optimizer steps
 */
#ifndef STAGD_GRAPH_INFER_GR_INFER_H
#define STAGD_GRAPH_INFER_GR_INFER_H

#include "gr_ir.h"

/* A family's shape/dtype rule: out from the arguments' abstract values. */
typedef sg_code (*gr_infer_fn)(const gr_op *op, gr_aval **args, int n, gr_aval *out,
                               sg_arena *a, sg_error *err);
/* The rule of op's family (the op table's infer column); NULL for the calling ops
 * (if, while, grad), which inference follows itself. */
gr_infer_fn gr_infer_rule(const gr_op *op);

/* Infers every graph reachable from entry (and every top-level def, for dumps). */
sg_code gr_infer(gr_module *m, gr_graph *entry, sg_error *err);
/* Re-infers g for the argument types of one call (the input signature); thread-safe
 * (reads the module only). Errors are located like stage-time ones. */
sg_code gr_infer_signature(gr_module *m, gr_graph *g, const gr_val *args, int n, sg_error *err);
/* Whether g's result for these argument types is always a tensor or a tuple of tensors:
 * g inferred with each variable typed by its value now (`read` gives that type); false
 * when that fails or an assign anywhere could change a variable's type. */
bool gr_infer_result_is_tensors(gr_module *m, gr_graph *g, const gr_val *args, int n);
uint64_t gr_signature_hash(const gr_val *args, int n);

#endif /* STAGD_GRAPH_INFER_GR_INFER_H */
