/*
 * ops.c — THE op table (STYLE.md, ggml): one row per primitive with its name and
 * alias, arity, effect flags, kernel code, shape/dtype rule (infer), CPU kernel, and
 * the Vulkan and gradient columns (GR_VK_SLOT / GR_AD_SLOT: the kernel family's GPU
 * kernel and gradient rule, exec_vulkan.h / ad_rules.h; NULL where none). Adding a
 * primitive means adding one row here (plus its kernel if it is a new kind of op).
 */
#include <string.h>

#include <stdio.h>
#include "ad_rules.h"
#include "exec_vulkan.h"
#include "ops_cpu.h"

#define P GR_OP_PURE
#define E GR_OP_EFFECT
#define C GR_OP_CALLS
#define NG (GR_OP_PURE | GR_OP_NOGRAD)
/* the vulkan column: the GPU kernel recorded for this row's CPU kernel (exec_vulkan.h) */
#define ROW(name, alias, lo, hi, flags, code, infer, cpu) \
  {name, alias, lo, hi, flags, code, infer, cpu, GR_VK_SLOT(cpu), GR_AD_SLOT(cpu)}

static const gr_op ops[] = {
    /* arithmetic (NumPy broadcasting, Python scalars) */
    ROW("+", "add", 2, 2, P, KN_ADD, gr_infer_binary, gr_cpu_binary),
    ROW("-", "sub", 1, 2, P, KN_SUB, gr_infer_binary, gr_cpu_binary),
    ROW("*", "mul", 2, 2, P, KN_MUL, gr_infer_binary, gr_cpu_binary),
    ROW("/", "div", 2, 2, P, KN_DIV, gr_infer_binary, gr_cpu_binary),
    ROW("//", "floordiv", 2, 2, P, KN_FLOORDIV, gr_infer_binary, gr_cpu_binary),
    ROW("%", "mod", 2, 2, P, KN_MOD, gr_infer_binary, gr_cpu_binary),
    ROW("**", "pow", 2, 2, P, KN_POW, gr_infer_binary, gr_cpu_binary),
    ROW("maximum", NULL, 2, 2, P, KN_MAXIMUM, gr_infer_binary, gr_cpu_binary),
    ROW("minimum", NULL, 2, 2, P, KN_MINIMUM, gr_infer_binary, gr_cpu_binary),
    ROW("==", "eq", 2, 2, P, KN_EQ, gr_infer_binary, gr_cpu_binary),
    ROW("!=", "ne", 2, 2, P, KN_NE, gr_infer_binary, gr_cpu_binary),
    ROW("<", "lt", 2, 2, P, KN_LT, gr_infer_binary, gr_cpu_binary),
    ROW("<=", "le", 2, 2, P, KN_LE, gr_infer_binary, gr_cpu_binary),
    ROW(">", "gt", 2, 2, P, KN_GT, gr_infer_binary, gr_cpu_binary),
    ROW(">=", "ge", 2, 2, P, KN_GE, gr_infer_binary, gr_cpu_binary),
    ROW("and", NULL, 2, 2, P, KN_AND, gr_infer_binary, gr_cpu_binary),
    ROW("or", NULL, 2, 2, P, KN_OR, gr_infer_binary, gr_cpu_binary),
    /* unary */
    ROW("neg", NULL, 1, 1, P, KN_NEG, gr_infer_unary, gr_cpu_unary),
    ROW("abs", NULL, 1, 1, P, KN_ABS, gr_infer_unary, gr_cpu_unary),
    ROW("exp", NULL, 1, 1, P, KN_EXP, gr_infer_unary, gr_cpu_unary),
    ROW("log", NULL, 1, 1, P, KN_LOG, gr_infer_unary, gr_cpu_unary),
    ROW("sqrt", NULL, 1, 1, P, KN_SQRT, gr_infer_unary, gr_cpu_unary),
    ROW("tanh", NULL, 1, 1, P, KN_TANH, gr_infer_unary, gr_cpu_unary),
    ROW("sigmoid", NULL, 1, 1, P, KN_SIGMOID, gr_infer_unary, gr_cpu_unary),
    ROW("relu", NULL, 1, 1, P, KN_RELU, gr_infer_unary, gr_cpu_unary),
    ROW("sin", NULL, 1, 1, P, KN_SIN, gr_infer_unary, gr_cpu_unary),
    ROW("cos", NULL, 1, 1, P, KN_COS, gr_infer_unary, gr_cpu_unary),
    ROW("not", NULL, 1, 1, P, KN_NOT, gr_infer_unary, gr_cpu_unary),
    ROW("where", NULL, 3, 3, P, 0, gr_infer_where, gr_cpu_where),
    ROW("cast", NULL, 2, 2, P, 0, gr_infer_cast, gr_cpu_cast),
    /* linear algebra and layout */
    /* matmul with operands read transposed (last two axes swapped, no copy): the code
     * is KN_MATMUL_TRANS_A | KN_MATMUL_TRANS_B; the optimizer folds transposes into
     * them (opt_matmul.c), matmul_grad uses them (gr_op_matmul finds them) */
    ROW("matmul", NULL, 2, 2, P, 0, gr_infer_matmul, gr_cpu_matmul),
    ROW("matmul_tn", NULL, 2, 2, P, KN_MATMUL_TRANS_A, gr_infer_matmul, gr_cpu_matmul),
    ROW("matmul_nt", NULL, 2, 2, P, KN_MATMUL_TRANS_B, gr_infer_matmul, gr_cpu_matmul),
    ROW("matmul_tt", NULL, 2, 2, P, KN_MATMUL_TRANS_A | KN_MATMUL_TRANS_B, gr_infer_matmul,
        gr_cpu_matmul),
    ROW("transpose", NULL, 1, 2, P, 0, gr_infer_transpose, gr_cpu_transpose),
    ROW("reshape", NULL, 2, 2, P, 0, gr_infer_reshape, gr_cpu_reshape),
    /* reductions: optional axis last */
    ROW("sum", NULL, 1, 2, P, KN_SUM, gr_infer_reduce, gr_cpu_reduce),
    ROW("mean", NULL, 1, 2, P, KN_MEAN, gr_infer_reduce, gr_cpu_reduce),
    ROW("max", NULL, 1, 2, P, KN_MAX, gr_infer_reduce, gr_cpu_reduce),
    ROW("min", NULL, 1, 2, P, KN_MIN, gr_infer_reduce, gr_cpu_reduce),
    ROW("argmax", NULL, 1, 2, P, KN_ARGMAX, gr_infer_reduce, gr_cpu_reduce),
    ROW("softmax", NULL, 1, 2, P, 0, gr_infer_same, gr_cpu_softmax),
    ROW("log_softmax", NULL, 1, 2, P, 1, gr_infer_same, gr_cpu_softmax),
    /* joining, slicing, indexing */
    ROW("concat", NULL, 1, -1, P, 0, gr_infer_join, gr_cpu_join),
    ROW("stack", NULL, 1, -1, P, 1, gr_infer_join, gr_cpu_join),
    ROW("slice", NULL, 3, 5, P, 0, gr_infer_slice, gr_cpu_slice),
    ROW("slice_update", NULL, 4, 6, P, 1, gr_infer_slice, gr_cpu_slice),
    ROW("gather", NULL, 2, 3, P, 0, gr_infer_gather, gr_cpu_gather),
    ROW("one_hot", NULL, 2, 2, P, 0, gr_infer_one_hot, gr_cpu_one_hot),
    /* constructors */
    ROW("zeros", NULL, 1, 2, P, 0, gr_infer_fill, gr_cpu_fill),
    ROW("ones", NULL, 1, 2, P, 1, gr_infer_fill, gr_cpu_fill),
    ROW("fill", NULL, 2, 3, P, 2, gr_infer_fill, gr_cpu_fill),
    ROW("arange", NULL, 1, 3, P, 0, gr_infer_arange, gr_cpu_arange),
    ROW("random_normal", NULL, 2, 3, P, 1, gr_infer_random, gr_cpu_random),
    ROW("random_uniform", NULL, 2, 3, P, 0, gr_infer_random, gr_cpu_random),
    /* shapes */
    ROW("shape", NULL, 1, 1, P, 0, gr_infer_shape, gr_cpu_shape),
    ROW("len", NULL, 1, 1, P, 1, gr_infer_shape, gr_cpu_shape),
    ROW("size", NULL, 1, 1, P, 2, gr_infer_shape, gr_cpu_shape),
    /* structures */
    ROW("tuple", NULL, 0, -1, P, 0, gr_infer_tuple, gr_cpu_tuple),
    ROW("getitem", NULL, 2, 2, P, 0, gr_infer_getitem, gr_cpu_getitem),
    ROW("record", NULL, 0, -1, P, 0, gr_infer_record, gr_cpu_record),
    ROW("getattr", NULL, 2, 2, P, 0, gr_infer_getattr, gr_cpu_getattr),
    /* what reverse-mode AD emits (ops_adjoint.c, docs/ad.md) */
    ROW("zeros_like", NULL, 1, 1, P, GR_ADJ_ZEROS_LIKE, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("add_grad", NULL, 2, 2, P, GR_ADJ_ADD, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("sum_like", NULL, 2, 2, P, GR_ADJ_SUM_LIKE, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("expand_like", NULL, 2, 3, P, GR_ADJ_EXPAND_LIKE, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("item_grad", NULL, 3, 3, P, GR_ADJ_ITEM, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("slice_grad", NULL, 4, 6, P, GR_ADJ_SLICE, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("gather_grad", NULL, 4, 4, P, GR_ADJ_GATHER, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("sens_item", NULL, 2, 2, P, GR_ADJ_SENS_ITEM, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("or_zeros", NULL, 2, 2, P, GR_ADJ_OR_ZEROS, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("matmul_grad", NULL, 4, 5, P, GR_ADJ_MATMUL, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("join_grad", NULL, 4, 4, P, GR_ADJ_JOIN, gr_infer_adjoint, gr_cpu_adjoint),
    ROW("captured", NULL, 1, 1, P, GR_ADJ_CAPTURED, gr_infer_adjoint, gr_cpu_adjoint),
    /* optimizer steps (ops_optim.c): no gradient flows through an update */
    ROW("sgd_momentum", NULL, 5, 5, NG, 0, gr_infer_optim, gr_cpu_optim),
    ROW("adam", NULL, 6, 9, NG, 1, gr_infer_optim, gr_cpu_optim),
    /* effects, in program order */
    ROW("print", NULL, 0, -1, E, 0, gr_infer_none, gr_cpu_print),
    ROW("assert", NULL, 1, 2, E, 0, gr_infer_none, gr_cpu_assert),
    ROW("variable", NULL, 1, 1, E, 0, gr_infer_variable, gr_cpu_variable),
    ROW("read", NULL, 1, 1, E, 1, gr_infer_variable, gr_cpu_variable),
    ROW("assign", NULL, 2, 2, E, 2, gr_infer_variable, gr_cpu_variable),
    ROW("assign_add", NULL, 2, 2, E, 3, gr_infer_variable, gr_cpu_variable),
    /* control (internal forms the lowering produces) */
    ROW("seq", NULL, 1, -1, P, 0, gr_infer_seq, gr_cpu_seq),
    ROW("if", NULL, 3, 3, C, 0, NULL, gr_cpu_if),
    ROW("while", NULL, 3, 3, C, 0, NULL, gr_cpu_while),
    ROW("grad", NULL, 1, -1, C, 0, NULL, gr_cpu_grad),
};

#define NOPS ((int)(sizeof ops / sizeof ops[0]))

const gr_op *gr_op_table(int *n) {
  *n = NOPS;
  return ops;
}

const char *gr_primitive_name(size_t i) {
  for (int k = 0; k < NOPS; k++) {
    if (i-- == 0) return ops[k].name;
    if (ops[k].alias && i-- == 0) return ops[k].alias;
  }
  return NULL;
}

const gr_op *gr_op_lookup(const char *name) {
  for (int i = 0; i < NOPS; i++)
    if (strcmp(ops[i].name, name) == 0 || (ops[i].alias && strcmp(ops[i].alias, name) == 0))
      return &ops[i];
  return NULL;
}

const gr_op *gr_op_matmul(int trans) {
  for (int i = 0; i < NOPS; i++)
    if (ops[i].cpu == gr_cpu_matmul && ops[i].code == trans) return &ops[i];
  return NULL;
}

const gr_op *const gr_op_if = &ops[NOPS - 3], *const gr_op_seq = &ops[NOPS - 4],
            *const gr_op_while = &ops[NOPS - 2], *const gr_op_add = &ops[0],
            *const gr_op_sub = &ops[1], *const gr_op_mul = &ops[2], *const gr_op_div = &ops[3];
