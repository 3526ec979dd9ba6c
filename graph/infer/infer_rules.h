// SPDX-License-Identifier: Apache-2.0
/*
 * infer_rules.h — private to graph/infer: the shape rules of the op families, the
 * entries of the infer column (infer.c's table).
 */
#ifndef STAGD_GRAPH_INFER_RULES_H
#define STAGD_GRAPH_INFER_RULES_H

#include "gr_infer.h"

#define GR_INFER(name) \
  sg_code name(const gr_op *op, gr_aval **args, int n, gr_aval *out, sg_arena *a, sg_error *err)
/* infer.c: whether this thread infers with variables typed by their values
 * (gr_infer_result_is_tensors), and noting an assign that could change one. */
bool gr_infer_typed_cells(void);
void gr_infer_cell_conflict(void);
/* infer.c */
GR_INFER(gr_infer_binary);
GR_INFER(gr_infer_unary);
GR_INFER(gr_infer_matmul);
GR_INFER(gr_infer_reduce);
GR_INFER(gr_infer_same);
GR_INFER(gr_infer_tuple);
GR_INFER(gr_infer_getitem);
GR_INFER(gr_infer_bool_scalar);
GR_INFER(gr_infer_none);
GR_INFER(gr_infer_assert);
GR_INFER(gr_infer_cast);
GR_INFER(gr_infer_transpose);
GR_INFER(gr_infer_reshape);
GR_INFER(gr_infer_where);
GR_INFER(gr_infer_fill);
GR_INFER(gr_infer_shape);
/* infer_ops.c */
GR_INFER(gr_infer_join);
GR_INFER(gr_infer_slice);
GR_INFER(gr_infer_gather);
GR_INFER(gr_infer_one_hot);
GR_INFER(gr_infer_arange);
GR_INFER(gr_infer_random);
GR_INFER(gr_infer_record);
GR_INFER(gr_infer_getattr);
GR_INFER(gr_infer_variable);
GR_INFER(gr_infer_seq);
GR_INFER(gr_infer_pyconv);
/* infer_adjoint.c */
GR_INFER(gr_infer_adjoint);
GR_INFER(gr_infer_optim);

#endif /* STAGD_GRAPH_INFER_RULES_H */
