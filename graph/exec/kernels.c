// SPDX-License-Identifier: Apache-2.0
/*
 * kernels.c — the op table's CPU column: each op family's CPU kernel (ir/ops.c lists
 * the rows and their families; the kernels live in ops_cpu.c, ops_adjoint.c,
 * ops_optim.c and ops_pyconv.c). Every family has one: the CPU runs every primitive.
 */
#include "ops_cpu.h"

const gr_cpu_fn gr_cpu_kernels[GR_FAM_COUNT] = {
    [GR_FAM_BINARY] = gr_cpu_binary,       [GR_FAM_UNARY] = gr_cpu_unary,
    [GR_FAM_WHERE] = gr_cpu_where,         [GR_FAM_CAST] = gr_cpu_cast,
    [GR_FAM_MATMUL] = gr_cpu_matmul,       [GR_FAM_TRANSPOSE] = gr_cpu_transpose,
    [GR_FAM_RESHAPE] = gr_cpu_reshape,     [GR_FAM_REDUCE] = gr_cpu_reduce,
    [GR_FAM_SOFTMAX] = gr_cpu_softmax,     [GR_FAM_JOIN] = gr_cpu_join,
    [GR_FAM_SLICE] = gr_cpu_slice,         [GR_FAM_GATHER] = gr_cpu_gather,
    [GR_FAM_ONE_HOT] = gr_cpu_one_hot,     [GR_FAM_FILL] = gr_cpu_fill,
    [GR_FAM_ARANGE] = gr_cpu_arange,       [GR_FAM_RANDOM] = gr_cpu_random,
    [GR_FAM_SHAPE] = gr_cpu_shape,         [GR_FAM_TUPLE] = gr_cpu_tuple,
    [GR_FAM_GETITEM] = gr_cpu_getitem,     [GR_FAM_RECORD] = gr_cpu_record,
    [GR_FAM_GETATTR] = gr_cpu_getattr,     [GR_FAM_ADJOINT] = gr_cpu_adjoint,
    [GR_FAM_OPTIM] = gr_cpu_optim,         [GR_FAM_PRINT] = gr_cpu_print,
    [GR_FAM_ASSERT] = gr_cpu_assert,       [GR_FAM_VARIABLE] = gr_cpu_variable,
    [GR_FAM_SEQ] = gr_cpu_seq,             [GR_FAM_IF] = gr_cpu_if,
    [GR_FAM_WHILE] = gr_cpu_while,         [GR_FAM_GRAD] = gr_cpu_grad,
    [GR_FAM_PYCONV] = gr_cpu_pyconv,
};
