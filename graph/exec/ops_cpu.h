/*
 * ops_cpu.h — CPU implementations and shape rules referenced by the op table (ops.c).
 * Private to graph/.
 */
#ifndef STAGD_GRAPH_OPS_CPU_H
#define STAGD_GRAPH_OPS_CPU_H

#include "gr_internal.h"

#define GR_CPU(name) \
  sg_code name(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err)
GR_CPU(gr_cpu_binary);
GR_CPU(gr_cpu_unary);
GR_CPU(gr_cpu_where);
GR_CPU(gr_cpu_cast);
GR_CPU(gr_cpu_matmul);
GR_CPU(gr_cpu_reduce);
GR_CPU(gr_cpu_softmax);
GR_CPU(gr_cpu_transpose);
GR_CPU(gr_cpu_reshape);
GR_CPU(gr_cpu_join);
GR_CPU(gr_cpu_slice);
GR_CPU(gr_cpu_gather);
GR_CPU(gr_cpu_one_hot);
GR_CPU(gr_cpu_fill);
GR_CPU(gr_cpu_arange);
GR_CPU(gr_cpu_random);
GR_CPU(gr_cpu_shape);
GR_CPU(gr_cpu_print);
GR_CPU(gr_cpu_assert);
GR_CPU(gr_cpu_variable);
GR_CPU(gr_cpu_tuple);
GR_CPU(gr_cpu_getitem);
GR_CPU(gr_cpu_record);
GR_CPU(gr_cpu_getattr);
GR_CPU(gr_cpu_seq);
GR_CPU(gr_cpu_if);
GR_CPU(gr_cpu_while);
GR_CPU(gr_cpu_grad);
GR_CPU(gr_cpu_adjoint); /* ops_adjoint.c */
GR_CPU(gr_cpu_optim);   /* ops_optim.c */
sg_code gr_cpu_unary_code(gr_ctx *ctx, const gr_op *op, int code, gr_val *args, gr_val *out,
                          sg_error *err);
/* The dtype a Python scalar takes next to a tensor of dtype t (NumPy 1.24's weak
 * scalars), and on its own (bool, int64, float64). */
kn_dtype gr_weak_dtype(const gr_val *s, kn_dtype t);
kn_dtype gr_strong_dtype(const gr_val *s);
/* The dtype a scalar of dtype s (a 0-d tensor: float(), int(), t[i], a reduction) takes
 * next to a tensor of dtype t with at least one dimension: NumPy 1.24's value-based
 * casting without the value (a value unknown until run time): t when s's kind (bool <
 * int < float) is no higher than t's, else kn_promote(s, t) (docs/sexpr.md "Values and
 * semantics"). */
kn_dtype gr_weak_kind_dtype(kn_dtype s, kn_dtype t);
sg_code gr_int_arg(const gr_op *op, const gr_val *v, int64_t *out, sg_error *err);
sg_code gr_shape_arg(const gr_op *op, const gr_val *v, int *ndim, int64_t *shape, sg_error *err);

#define GR_INFER(name) \
  sg_code name(const gr_op *op, gr_aval **args, int n, gr_aval *out, sg_arena *a, sg_error *err)
GR_INFER(gr_infer_binary);
GR_INFER(gr_infer_unary);
GR_INFER(gr_infer_matmul);
GR_INFER(gr_infer_reduce);
GR_INFER(gr_infer_same);
GR_INFER(gr_infer_tuple);
GR_INFER(gr_infer_getitem);
GR_INFER(gr_infer_bool_scalar);
GR_INFER(gr_infer_none);
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
GR_INFER(gr_infer_adjoint); /* ops_adjoint.c */
GR_INFER(gr_infer_optim);   /* ops_optim.c */

#endif /* STAGD_GRAPH_OPS_CPU_H */
