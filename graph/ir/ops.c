// SPDX-License-Identifier: Apache-2.0
/*
 * ops.c — THE op table (STYLE.md, ggml): one row per primitive with its name and
 * alias, arity, effect flags, family and kernel code. The family says which shape rule
 * (infer/), CPU kernel (exec/), Vulkan recorder (vulkan/) and gradient rule (ad/) the
 * row uses: each subsystem keeps one column indexed by family, next to its kernels, so
 * the IR needs to know none of them. Adding a primitive of an existing family means
 * adding one row here; a new family adds its entry to each column with its kernels.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gr_ir.h"

#define P GR_OP_PURE
#define E GR_OP_EFFECT
#define C GR_OP_CALLS
#define NG (GR_OP_PURE | GR_OP_NOGRAD)
#define ROW(name, alias, lo, hi, flags, family, code) \
  {name, alias, lo, hi, flags, GR_FAM_##family, code}

static const gr_op ops[] = {
    /* arithmetic (NumPy broadcasting, Python scalars) */
    ROW("+", "add", 2, 2, P, BINARY, KN_ADD),
    ROW("-", "sub", 1, 2, P, BINARY, KN_SUB),
    ROW("*", "mul", 2, 2, P, BINARY, KN_MUL),
    ROW("/", "div", 2, 2, P, BINARY, KN_DIV),
    ROW("//", "floordiv", 2, 2, P, BINARY, KN_FLOORDIV),
    ROW("%", "mod", 2, 2, P, BINARY, KN_MOD),
    ROW("**", "pow", 2, 2, P, BINARY, KN_POW),
    ROW("maximum", NULL, 2, 2, P, BINARY, KN_MAXIMUM),
    ROW("minimum", NULL, 2, 2, P, BINARY, KN_MINIMUM),
    ROW("==", "eq", 2, 2, P, BINARY, KN_EQ),
    ROW("!=", "ne", 2, 2, P, BINARY, KN_NE),
    ROW("<", "lt", 2, 2, P, BINARY, KN_LT),
    ROW("<=", "le", 2, 2, P, BINARY, KN_LE),
    ROW(">", "gt", 2, 2, P, BINARY, KN_GT),
    ROW(">=", "ge", 2, 2, P, BINARY, KN_GE),
    ROW("and", NULL, 2, 2, P, BINARY, KN_AND),
    ROW("or", NULL, 2, 2, P, BINARY, KN_OR),
    /* unary */
    ROW("neg", NULL, 1, 1, P, UNARY, KN_NEG),
    ROW("abs", NULL, 1, 1, P, UNARY, KN_ABS),
    ROW("exp", NULL, 1, 1, P, UNARY, KN_EXP),
    ROW("log", NULL, 1, 1, P, UNARY, KN_LOG),
    ROW("sqrt", NULL, 1, 1, P, UNARY, KN_SQRT),
    ROW("tanh", NULL, 1, 1, P, UNARY, KN_TANH),
    ROW("sigmoid", NULL, 1, 1, P, UNARY, KN_SIGMOID),
    ROW("relu", NULL, 1, 1, P, UNARY, KN_RELU),
    ROW("sin", NULL, 1, 1, P, UNARY, KN_SIN),
    ROW("cos", NULL, 1, 1, P, UNARY, KN_COS),
    ROW("not", NULL, 1, 1, P, UNARY, KN_NOT),
    ROW("where", NULL, 3, 3, P, WHERE, 0),
    ROW("cast", NULL, 2, 2, P, CAST, 0),
    /* linear algebra and layout */
    /* matmul with operands read transposed (last two axes swapped, no copy): the code
     * is KN_MATMUL_TRANS_A | KN_MATMUL_TRANS_B; the optimizer folds transposes into
     * them (opt_matmul.c), matmul_grad uses them (gr_op_matmul finds them) */
    ROW("matmul", NULL, 2, 2, P, MATMUL, 0),
    ROW("matmul_tn", NULL, 2, 2, P, MATMUL, KN_MATMUL_TRANS_A),
    ROW("matmul_nt", NULL, 2, 2, P, MATMUL, KN_MATMUL_TRANS_B),
    ROW("matmul_tt", NULL, 2, 2, P, MATMUL, KN_MATMUL_TRANS_A | KN_MATMUL_TRANS_B),
    ROW("transpose", NULL, 1, 2, P, TRANSPOSE, 0),
    ROW("reshape", NULL, 2, 2, P, RESHAPE, 0),
    /* reductions: optional axis last */
    ROW("sum", NULL, 1, 2, P, REDUCE, KN_SUM),
    ROW("mean", NULL, 1, 2, P, REDUCE, KN_MEAN),
    ROW("max", NULL, 1, 2, P, REDUCE, KN_MAX),
    ROW("min", NULL, 1, 2, P, REDUCE, KN_MIN),
    ROW("argmax", NULL, 1, 2, P, REDUCE, KN_ARGMAX),
    ROW("softmax", NULL, 1, 2, P, SOFTMAX, 0),
    ROW("log_softmax", NULL, 1, 2, P, SOFTMAX, 1),
    /* joining, slicing, indexing */
    ROW("concat", NULL, 1, -1, P, JOIN, 0),
    ROW("stack", NULL, 1, -1, P, JOIN, 1),
    ROW("slice", NULL, 3, 5, P, SLICE, 0),
    ROW("slice_update", NULL, 4, 6, P, SLICE, 1),
    ROW("gather", NULL, 2, 3, P, GATHER, 0),
    ROW("one_hot", NULL, 2, 2, P, ONE_HOT, 0),
    /* constructors */
    ROW("zeros", NULL, 1, 2, P, FILL, 0),
    ROW("ones", NULL, 1, 2, P, FILL, 1),
    ROW("fill", NULL, 2, 3, P, FILL, 2),
    ROW("arange", NULL, 1, 3, P, ARANGE, 0),
    ROW("random_normal", NULL, 2, 3, P, RANDOM, 1),
    ROW("random_uniform", NULL, 2, 3, P, RANDOM, 0),
    /* shapes */
    ROW("shape", NULL, 1, 1, P, SHAPE, 0),
    ROW("len", NULL, 1, 1, P, SHAPE, 1),
    ROW("size", NULL, 1, 1, P, SHAPE, 2),
    /* structures */
    ROW("tuple", NULL, 0, -1, P, TUPLE, 0),
    ROW("getitem", NULL, 2, 2, P, GETITEM, 0),
    ROW("record", NULL, 0, -1, P, RECORD, 0),
    ROW("getattr", NULL, 2, 2, P, GETATTR, 0),
    /* what reverse-mode AD emits (exec/ops_adjoint.c, docs/ad.md) */
    ROW("pyindex", NULL, 1, 1, P, PYCONV, GR_PY_INDEX),
    ROW("pyint", NULL, 1, 1, P, PYCONV, GR_PY_INT),
    ROW("pyfloat", NULL, 1, 1, P, PYCONV, GR_PY_FLOAT),
    ROW("pybool", NULL, 1, 1, P, PYCONV, GR_PY_BOOL),
    ROW("zeros_like", NULL, 1, 1, P, ADJOINT, GR_ADJ_ZEROS_LIKE),
    ROW("add_grad", NULL, 2, 2, P, ADJOINT, GR_ADJ_ADD),
    ROW("sum_like", NULL, 2, 2, P, ADJOINT, GR_ADJ_SUM_LIKE),
    ROW("expand_like", NULL, 2, 3, P, ADJOINT, GR_ADJ_EXPAND_LIKE),
    ROW("item_grad", NULL, 3, 3, P, ADJOINT, GR_ADJ_ITEM),
    ROW("slice_grad", NULL, 4, 6, P, ADJOINT, GR_ADJ_SLICE),
    ROW("gather_grad", NULL, 4, 4, P, ADJOINT, GR_ADJ_GATHER),
    ROW("sens_item", NULL, 2, 2, P, ADJOINT, GR_ADJ_SENS_ITEM),
    ROW("or_zeros", NULL, 2, 2, P, ADJOINT, GR_ADJ_OR_ZEROS),
    ROW("matmul_grad", NULL, 4, 5, P, ADJOINT, GR_ADJ_MATMUL),
    ROW("join_grad", NULL, 4, 4, P, ADJOINT, GR_ADJ_JOIN),
    ROW("captured", NULL, 1, 1, P, ADJOINT, GR_ADJ_CAPTURED),
    /* optimizer steps (exec/ops_optim.c): no gradient flows through an update */
    ROW("sgd_momentum", NULL, 5, 5, NG, OPTIM, 0),
    ROW("adam", NULL, 6, 9, NG, OPTIM, 1),
    /* effects, in program order */
    ROW("print", NULL, 0, -1, E, PRINT, 0),
    ROW("assert", NULL, 1, 2, E, ASSERT, 0),
    ROW("grad_scalar", NULL, 1, 1, E, ASSERT, 1),
    ROW("assume", NULL, 1, 2, E, ASSERT, 2), /* a speculative graph's assumption */
    ROW("variable", NULL, 1, 1, E, VARIABLE, 0),
    ROW("read", NULL, 1, 1, E, VARIABLE, 1),
    ROW("assign", NULL, 2, 2, E, VARIABLE, 2),
    ROW("assign_add", NULL, 2, 2, E, VARIABLE, 3),
    ROW("assign_sub", NULL, 2, 2, E, VARIABLE, 4),
    /* control (internal forms the lowering produces) */
    ROW("seq", NULL, 1, -1, P, SEQ, 0),
    ROW("if", NULL, 3, 3, C, IF, 0),
    ROW("while", NULL, 3, 3, C, WHILE, 0),
    ROW("grad", NULL, 1, -1, C, GRAD, 0),
};

#define NOPS ((int)(sizeof ops / sizeof ops[0]))

const gr_op *gr_op_table(int *n) {
  *n = NOPS;
  return ops;
}

/* Names and aliases → rows, an open-addressed hash built once: gr_op_lookup is called
 * while executing and differentiating (AD helpers, optimizer steps, eager ops), where a
 * strcmp loop over the table cost up to ~100 comparisons per call. */
enum { INDEX_SIZE = 512 };
static const gr_op *name_index[INDEX_SIZE];
static const char *name_keys[INDEX_SIZE];
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static unsigned name_hash(const char *s) {
  unsigned h = 2166136261u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static void index_put(const char *key, const gr_op *op) {
  unsigned i = name_hash(key) & (INDEX_SIZE - 1);
  while (name_keys[i]) i = (i + 1) & (INDEX_SIZE - 1);
  name_keys[i] = key;
  name_index[i] = op;
}

static void build_index(void) {
  _Static_assert(2 * NOPS < INDEX_SIZE, "the name index must stay sparse");
  for (int i = 0; i < NOPS; i++) { /* probes meet earlier rows first, as the table reads */
    index_put(ops[i].name, &ops[i]);
    if (ops[i].alias) index_put(ops[i].alias, &ops[i]);
  }
}

const gr_op *gr_op_lookup(const char *name) {
  pthread_once(&index_once, build_index);
  for (unsigned i = name_hash(name) & (INDEX_SIZE - 1); name_keys[i]; i = (i + 1) & (INDEX_SIZE - 1))
    if (name_keys[i][0] == name[0] && strcmp(name_keys[i], name) == 0) return name_index[i];
  return NULL;
}

const gr_op *gr_op_matmul(int trans) {
  for (int i = 0; i < NOPS; i++)
    if (ops[i].family == GR_FAM_MATMUL && ops[i].code == trans) return &ops[i];
  return NULL;
}

bool gr_matmul_fold_enabled(void) {
  const char *v = getenv("STAGD_MATMUL_TRANSPOSE_FOLD");
  return !(v && !strcmp(v, "0"));
}

const gr_op *const gr_op_if = &ops[NOPS - 3], *const gr_op_seq = &ops[NOPS - 4],
            *const gr_op_while = &ops[NOPS - 2], *const gr_op_add = &ops[0],
            *const gr_op_sub = &ops[1], *const gr_op_mul = &ops[2], *const gr_op_div = &ops[3];
