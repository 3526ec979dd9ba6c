// SPDX-License-Identifier: Apache-2.0
/*
 * ops_cpu.h — private to graph/exec: the CPU kernels of the op families, the entries
 * of the op table's CPU column (kernels.c).
 */
#ifndef STAGD_GRAPH_OPS_CPU_H
#define STAGD_GRAPH_OPS_CPU_H

#include "gr_exec.h"

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
GR_CPU(gr_cpu_pyconv);  /* ops_pyconv.c */
GR_CPU(gr_cpu_optim);   /* ops_optim.c */
sg_code gr_cpu_unary_code(gr_ctx *ctx, const gr_op *op, int code, gr_val *args, gr_val *out,
                          sg_error *err);

#endif /* STAGD_GRAPH_OPS_CPU_H */
