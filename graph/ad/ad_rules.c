// SPDX-License-Identifier: Apache-2.0
/*
 * ad_rules.c — the gradient rules of the op table's grad column (ad_internal.h): one rule
 * per kernel family, switching on the row's kernel code. Each adds, for a forward
 * node n = op(a, b, ...) with adjoint g, the contributions to the adjoints of its
 * inputs. Constants receive nothing. Broadcasting binary ops (and where) sum their
 * contributions back to each input's shape with `sum_like` unless no broadcast can
 * have happened; reductions spread g back with `expand_like`; structures route
 * sensitivities element by element (`item_grad` builds "zeros with one slot set").
 */
#include <string.h>

#include "ad_internal.h"

#define mk gr_ad_mk
#define accum gr_ad_accum
#define accum_s gr_ad_accum_s
#define fconst gr_ad_float
#define unb gr_ad_unbroadcast

static bool is_const(const gr_node *x) { return x->kind == GR_CONST; }

static gr_node *copy_const(gr_ad *c, gr_node *k);

static gr_node *zero_like_g(gr_ad *c, gr_node *g) { return mk(c, "*", g, fconst(c, 0.0)); }

static sg_code no_rule(gr_ad *c, gr_node *n, const char *what) {
  const gr_op *op = gr_node_prim(n);
  return gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, n, "grad: no gradient rule for '%s'%s",
                     op->name, what);
}

static sg_code binary(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  int na = n->ninputs - 1;
  gr_node *a = n->inputs[1], *b = na > 1 ? n->inputs[2] : NULL;
  gr_ad_mark_scalar_inputs(c, n);
  switch (op->code) {
  case KN_ADD:
    accum(c, a, unb(c, n, a, b, g));
    accum(c, b, unb(c, n, b, a, g));
    break;
  case KN_SUB:
    if (na == 1) {
      accum(c, a, mk(c, "neg", g, NULL));
      break;
    }
    accum(c, a, unb(c, n, a, b, g));
    if (!is_const(b)) accum(c, b, unb(c, n, b, a, mk(c, "neg", g, NULL)));
    break;
  case KN_MUL:
    if (!is_const(a)) accum(c, a, unb(c, n, a, b, mk(c, "*", g, b)));
    if (!is_const(b)) accum(c, b, unb(c, n, b, a, mk(c, "*", g, a)));
    break;
  case KN_DIV:
    if (!is_const(a)) accum(c, a, unb(c, n, a, b, mk(c, "/", g, b)));
    if (!is_const(b))
      accum(c, b, unb(c, n, b, a, mk(c, "neg", mk(c, "/", mk(c, "*", g, n), b), NULL)));
    break;
  case KN_POW:
    if (!is_const(a))
      accum(c, a, unb(c, n, a, b,
                      mk(c, "*", mk(c, "*", g, b), mk(c, "**", a, mk(c, "-", b, fconst(c, 1.0))))));
    if (!is_const(b)) accum(c, b, unb(c, n, b, a, mk(c, "*", mk(c, "*", g, n), mk(c, "log", a, NULL))));
    break;
  case KN_MOD: /* a % b = a - b * floor(a / b) */
    if (!is_const(a)) accum(c, a, unb(c, n, a, b, g));
    if (!is_const(b))
      accum(c, b, unb(c, n, b, a, mk(c, "neg", mk(c, "*", g, mk(c, "//", a, b)), NULL)));
    break;
  case KN_MAXIMUM:
  case KN_MINIMUM: { /* ties go to a */
    gr_node *pick_a = mk(c, op->code == KN_MAXIMUM ? ">=" : "<=", a, b);
    gr_node *z = zero_like_g(c, g);
    if (!is_const(a)) accum(c, a, unb(c, n, a, b, gr_ad_mk3(c, "where", pick_a, g, z)));
    if (!is_const(b)) accum(c, b, unb(c, n, b, a, gr_ad_mk3(c, "where", pick_a, z, g)));
    break;
  }
  case KN_FLOORDIV: case KN_EQ: case KN_NE: case KN_LT: case KN_LE: case KN_GT: case KN_GE:
  case KN_AND: case KN_OR:
    break; /* piecewise constant: no gradient flows */
  default:
    return no_rule(c, n, "");
  }
  return SG_OK;
}

static sg_code unary(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  gr_node *a = n->inputs[1];
  gr_ad_mark_scalar_inputs(c, n);
  switch (op->code) {
  case KN_NEG: accum(c, a, mk(c, "neg", g, NULL)); break;
  case KN_EXP: accum(c, a, mk(c, "*", g, n)); break;
  case KN_LOG: accum(c, a, mk(c, "/", g, a)); break;
  case KN_SQRT: accum(c, a, mk(c, "/", mk(c, "*", g, fconst(c, 0.5)), n)); break;
  case KN_TANH: accum(c, a, mk(c, "*", g, mk(c, "-", fconst(c, 1.0), mk(c, "*", n, n)))); break;
  case KN_SIGMOID:
    accum(c, a, mk(c, "*", mk(c, "*", g, n), mk(c, "-", fconst(c, 1.0), n)));
    break;
  case KN_SIN: accum(c, a, mk(c, "*", g, mk(c, "cos", a, NULL))); break;
  case KN_COS: accum(c, a, mk(c, "neg", mk(c, "*", g, mk(c, "sin", a, NULL)), NULL)); break;
  case KN_RELU:
  case KN_ABS: {
    gr_node *pos = mk(c, ">", a, fconst(c, 0.0));
    gr_node *other = op->code == KN_RELU ? zero_like_g(c, g) : mk(c, "neg", g, NULL);
    accum(c, a, gr_ad_mk3(c, "where", pos, g, other));
    break;
  }
  case KN_NOT: break;
  default:
    return no_rule(c, n, "");
  }
  return SG_OK;
}

/* (matmul_grad G A B K [T]): the adjoint for operand K of a matmul row with code T
 * (operands read transposed; NumPy semantics, ops_adjoint.c) */
static gr_node *matmul_adj(gr_ad *c, gr_node *g, gr_node *a, gr_node *b, int k, int trans) {
  gr_node *args[5] = {g, copy_const(c, a), copy_const(c, b), gr_ad_int(c, k), trans ? gr_ad_int(c, trans) : NULL};
  return gr_ad_mkn(c, "matmul_grad", args, trans ? 5 : 4);
}

/* d(op(a) @ op(b)) = op(g @ op(b)^T), op(op(a)^T @ g), op a transpose where the row's
 * code says so, with 1-D operands and broadcast batches (matmul_grad) */
static sg_code matmul(gr_ad *c, gr_node *n, gr_node *g) {
  gr_node *a = n->inputs[1], *b = n->inputs[2];
  int trans = gr_node_prim(n)->code;
  if (!is_const(a)) accum(c, a, matmul_adj(c, g, a, b, 0, trans));
  if (!is_const(b)) accum(c, b, matmul_adj(c, g, a, b, 1, trans));
  return SG_OK;
}

static gr_node *axis_of(const gr_node *n, int k) {
  if (n->ninputs <= k) return NULL;
  gr_node *ax = n->inputs[k];
  return ax->kind == GR_CONST && ax->value.tag == GV_NONE ? NULL : ax;
}

/* g (shaped like a reduced over axis, or a scalar) broadcast back to x's shape */
static gr_node *expand(gr_ad *c, gr_node *g, gr_node *x, gr_node *axis) {
  return axis ? gr_ad_mk3(c, "expand_like", g, x, axis) : mk(c, "expand_like", g, x);
}

static gr_node *reduce_sum(gr_ad *c, gr_node *g, gr_node *axis) {
  return axis ? mk(c, "sum", g, axis) : mk(c, "sum", g, NULL);
}

/* sum/mean: g spread over a's shape; max/min: to the elements equal to the extreme,
 * shared between ties */
static sg_code reduce(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  gr_node *a = n->inputs[1], *axis = axis_of(n, 2);
  switch (op->code) {
  case KN_SUM: accum(c, a, expand(c, g, a, axis)); break;
  case KN_MEAN:
    accum(c, a, mk(c, "/", mk(c, "*", expand(c, g, a, axis), mk(c, "size", n, NULL)),
                   mk(c, "size", a, NULL)));
    break;
  case KN_MAX:
  case KN_MIN: {
    gr_node *hit = mk(c, "==", a, expand(c, n, a, axis));
    gr_node *cnt = expand(c, reduce_sum(c, hit, axis), a, axis);
    accum(c, a, mk(c, "sum_like", mk(c, "/", mk(c, "*", expand(c, g, a, axis), hit), cnt), a));
    break;
  }
  case KN_ARGMAX: break;
  default: return no_rule(c, n, "");
  }
  return SG_OK;
}

/* (where cond a b): g routed to the branch each element came from */
static sg_code where(gr_ad *c, gr_node *n, gr_node *g) {
  gr_node *cond = n->inputs[1], *a = n->inputs[2], *b = n->inputs[3];
  gr_ad_mark_scalar_inputs(c, n);
  gr_node *zero = zero_like_g(c, g);
  if (!is_const(a)) accum(c, a, unb(c, n, a, NULL, gr_ad_mk3(c, "where", cond, g, zero)));
  if (!is_const(b)) accum(c, b, unb(c, n, b, NULL, gr_ad_mk3(c, "where", cond, zero, g)));
  return SG_OK;
}

/* A permutation written as a literal: (tuple 1 0 2) or a tuple constant. */
static int literal_perm(const gr_node *p, int *perm) {
  int np = 0;
  if (p->kind == GR_CONST && p->value.tag == GV_TUPLE) {
    gr_obj *o = p->value.u.o;
    if (o->n > KN_MAX_DIMS) return -1;
    for (int i = 0; i < o->n; i++) {
      if (o->items[i].tag != GV_INT) return -1;
      perm[np++] = (int)o->items[i].u.i;
    }
    return np;
  }
  const gr_op *op = gr_node_prim(p);
  if (!op || strcmp(op->name, "tuple") || p->ninputs - 1 > KN_MAX_DIMS) return -1;
  for (int i = 1; i < p->ninputs; i++) {
    const gr_node *k = p->inputs[i];
    if (k->kind != GR_CONST || k->value.tag != GV_INT) return -1;
    perm[np++] = (int)k->value.u.i;
  }
  return np;
}

/* transpose: the adjoint goes through the inverse permutation */
static sg_code transpose(gr_ad *c, gr_node *n, gr_node *g) {
  if (n->ninputs == 2) {
    accum(c, n->inputs[1], mk(c, "transpose", g, NULL));
    return SG_OK;
  }
  int perm[KN_MAX_DIMS], np = literal_perm(n->inputs[2], perm);
  if (np < 0) return no_rule(c, n, " with a computed permutation (write it as a literal tuple)");
  gr_node *inv[KN_MAX_DIMS];
  for (int i = 0; i < np; i++) {
    int p = perm[i] < 0 ? perm[i] + np : perm[i];
    if (p < 0 || p >= np) return no_rule(c, n, " with an invalid permutation");
    inv[p] = gr_ad_int(c, i);
  }
  accum(c, n->inputs[1], mk(c, "transpose", g, gr_ad_mkn(c, "tuple", inv, np)));
  return SG_OK;
}

/* (reshape a shape): the adjoint is reshaped back to a's shape */
static sg_code reshape(gr_ad *c, gr_node *n, gr_node *g) {
  gr_node *a = n->inputs[1];
  accum(c, a, mk(c, "reshape", g, mk(c, "shape", a, NULL)));
  return SG_OK;
}

/* (cast a dtype): back to a's (float) dtype */
static sg_code cast(gr_ad *c, gr_node *n, gr_node *g) {
  gr_node *a = n->inputs[1];
  accum(c, a, mk(c, "sum_like", g, a));
  return SG_OK;
}

/* float(a) passes g back to a's shape (a number, or a one-element tensor); int(a),
 * bool(a) and operator.index(a) are integers: nothing flows */
static sg_code pyconv(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  gr_node *a = n->inputs[1];
  if (op->code == GR_PY_FLOAT) accum(c, a, mk(c, "sum_like", g, a));
  return SG_OK;
}

/* y = softmax(x): dx = y * (g - sum(g * y)); y = log_softmax(x): dx = g - exp(y) sum(g) */
static sg_code softmax(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  gr_node *a = n->inputs[1], *axis = n->ninputs > 2 ? n->inputs[2] : gr_ad_int(c, -1);
  if (op->code == 0)
    accum(c, a, mk(c, "*", n, mk(c, "-", g, expand(c, mk(c, "sum", mk(c, "*", g, n), axis), n, axis))));
  else
    accum(c, a, mk(c, "-", g, mk(c, "*", mk(c, "exp", n, NULL), expand(c, mk(c, "sum", g, axis), n, axis))));
  return SG_OK;
}

static sg_code tuple(gr_ad *c, gr_node *n, gr_node *g) {
  for (int i = 1; i < n->ninputs; i++)
    accum_s(c, n->inputs[i], mk(c, "getitem", g, gr_ad_int(c, i - 1)));
  return SG_OK;
}

static gr_node *copy_const(gr_ad *c, gr_node *k) {
  return k->kind == GR_CONST ? gr_const_new(c->m, gv_retain(k->value)) : k;
}

static sg_code getitem(gr_ad *c, gr_node *n, gr_node *g) {
  accum_s(c, n->inputs[1], gr_ad_mk3(c, "item_grad", n->inputs[1], copy_const(c, n->inputs[2]), g));
  return SG_OK;
}

static sg_code record(gr_ad *c, gr_node *n, gr_node *g) {
  for (int i = 1; i + 1 < n->ninputs; i += 2)
    accum_s(c, n->inputs[i + 1], mk(c, "getattr", g, copy_const(c, n->inputs[i])));
  return SG_OK;
}

static sg_code seq(gr_ad *c, gr_node *n, gr_node *g) {
  accum_s(c, n->inputs[n->ninputs - 1], g);
  return SG_OK;
}

/* the AD helpers themselves (grad of grad) */
static sg_code adjoint(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  gr_node *a = n->inputs[1];
  switch (op->code) {
  case GR_ADJ_ZEROS_LIKE: break;
  case GR_ADJ_SENS_ITEM: /* (sens_item S K): S gets a sensitivity with slot K set */
    accum_s(c, a, gr_ad_mk3(c, "item_grad", a, n->inputs[2], g));
    break;
  case GR_ADJ_OR_ZEROS:
  case GR_ADJ_CAPTURED: accum_s(c, a, g); break;
  case GR_ADJ_ADD:
    accum_s(c, a, g);
    accum_s(c, n->inputs[2], g);
    break;
  case GR_ADJ_SUM_LIKE: accum(c, a, mk(c, "expand_like", g, a)); break;
  case GR_ADJ_EXPAND_LIKE: {
    gr_node *axis = axis_of(n, 3);
    accum(c, a, mk(c, "sum_like", reduce_sum(c, g, axis), a));
    break;
  }
  case GR_ADJ_ITEM: {
    gr_node *k = n->inputs[2];
    bool field = k->kind == GR_CONST && k->value.tag == GV_STR;
    accum_s(c, n->inputs[3], mk(c, field ? "getattr" : "getitem", g, k));
    break;
  }
  case GR_ADJ_SLICE: { /* linear in G: G gets the same slice of g */
    gr_node *args[5] = {g, NULL, NULL, NULL, NULL};
    for (int i = 3; i < n->ninputs; i++) args[i - 2] = n->inputs[i];
    accum(c, n->inputs[2], gr_ad_mkn(c, "slice", args, n->ninputs - 2));
    break;
  }
  case GR_ADJ_MATMUL: { /* bilinear: with T the forward's code and mm its matmul row,
                          * <g, dA> = <G, mm(g, B)>, <g, dB> = <G, mm(A, g)> */
    gr_node *k = n->inputs[4], *gs = n->inputs[1], *x = n->inputs[2], *y = n->inputs[3];
    if (k->kind != GR_CONST || k->value.tag != GV_INT) return no_rule(c, n, " with a computed operand index");
    gr_node *t = n->ninputs > 5 ? n->inputs[5] : NULL;
    if (t && (t->kind != GR_CONST || t->value.tag != GV_INT || t->value.u.i < 0 || t->value.u.i > 3))
      return no_rule(c, n, " with computed transpose flags");
    int trans = t ? (int)t->value.u.i : 0;
    const char *mm = gr_op_matmul(trans)->name;
    if (k->value.u.i == 0) { /* out = op(G @ op(B)^T) (A's shape) */
      if (!is_const(gs)) accum(c, gs, mk(c, mm, g, y));
      if (!is_const(y)) accum(c, y, matmul_adj(c, gs, g, y, 1, trans));
    } else { /* out = op(op(A)^T @ G) (B's shape) */
      if (!is_const(gs)) accum(c, gs, mk(c, mm, x, g));
      if (!is_const(x)) accum(c, x, matmul_adj(c, gs, x, g, 0, trans));
    }
    break;
  }
  case GR_ADJ_JOIN: { /* G gets the items of g (none: zeros) joined again */
    gr_node *k = n->inputs[4];
    if (k->kind != GR_CONST || k->value.tag != GV_INT) return no_rule(c, n, " with a computed kind");
    gr_node *full = mk(c, "add_grad", g, mk(c, "zeros_like", n->inputs[2], NULL));
    accum(c, n->inputs[1], mk(c, k->value.u.i ? "stack" : "concat", full, n->inputs[3]));
    break;
  }
  case GR_ADJ_GATHER: /* a scatter-add: G gets g gathered at the same indices */
    accum(c, n->inputs[2], gr_ad_mk3(c, "gather", g, n->inputs[3], n->inputs[4]));
    break;
  default: return no_rule(c, n, "");
  }
  return SG_OK;
}

/* concat T... [AXIS] / stack T... [AXIS] (or one literal (tuple T ...)): each input
 * gets its slice of g; one other argument (a tuple known at run time, or one tensor)
 * gets join_grad's tuple of slices */
static sg_code join(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  int last = n->ninputs - 1;
  gr_node *axis = gr_ad_int(c, 0);
  gr_node *l = n->inputs[last];
  if (l->kind == GR_CONST && l->value.tag == GV_INT) {
    axis = copy_const(c, l);
    last--;
  }
  gr_node **ts = n->inputs + 1, *tup = NULL;
  int nt = last;
  const gr_op *inner = last == 1 ? gr_node_prim(n->inputs[1]) : NULL;
  if (inner && !strcmp(inner->name, "tuple")) { /* (concat (tuple T ...) AXIS) */
    tup = n->inputs[1];
    ts = tup->inputs + 1;
    nt = tup->ninputs - 1;
  } else if (last == 1) {
    if (!is_const(n->inputs[1])) {
      gr_node *args[4] = {g, n->inputs[1], axis, gr_ad_int(c, op->code ? 1 : 0)};
      accum_s(c, n->inputs[1], gr_ad_mkn(c, "join_grad", args, 4));
    }
    return SG_OK;
  }
  gr_node **pieces = sg_xcalloc((size_t)nt + 1, sizeof(gr_node *));
  gr_node *off = gr_ad_int(c, 0);
  for (int i = 0; i < nt; i++) {
    gr_node *t = ts[i];
    gr_node *len = op->code ? gr_ad_int(c, 1) : mk(c, "getitem", mk(c, "shape", t, NULL), axis);
    gr_node *end = mk(c, "+", off, len);
    gr_node *args[5] = {g, off, end, gr_ad_int(c, 1), axis};
    gr_node *piece = gr_ad_mkn(c, "slice", args, 5);
    if (op->code) piece = mk(c, "reshape", piece, mk(c, "shape", t, NULL));
    pieces[i] = piece;
    if (!tup && !is_const(t)) accum(c, t, piece);
    off = end;
  }
  if (tup) accum_s(c, tup, gr_ad_mkn(c, "tuple", pieces, nt));
  free(pieces);
  return SG_OK;
}

/* slice: g written into zeros shaped like x. slice_update X V BOUNDS...: x gets g with
 * the slice zeroed, v the slice of g summed back to v's shape. */
static sg_code slice(gr_ad *c, gr_node *n, gr_node *g) {
  gr_node *args[6] = {n->inputs[1], g, NULL, NULL, NULL, NULL};
  if (!gr_node_prim(n)->code) {
    for (int i = 2; i < n->ninputs; i++) args[i] = n->inputs[i];
    accum(c, n->inputs[1], gr_ad_mkn(c, "slice_grad", args, n->ninputs));
    return SG_OK;
  }
  gr_node *x = n->inputs[1], *v = n->inputs[2];
  args[0] = g, args[1] = gr_ad_float(c, 0.0);
  for (int i = 3; i < n->ninputs; i++) args[i - 1] = n->inputs[i];
  if (!is_const(x)) accum(c, x, gr_ad_mkn(c, "slice_update", args, n->ninputs - 1));
  args[1] = g;
  if (!is_const(v)) accum(c, v, mk(c, "sum_like", gr_ad_mkn(c, "slice", args + 1, n->ninputs - 2), v));
  return SG_OK;
}

/* gather: g scattered (added) into zeros shaped like x */
static sg_code gather(gr_ad *c, gr_node *n, gr_node *g) {
  gr_node *args[4] = {n->inputs[1], g, n->inputs[2], n->ninputs > 3 ? n->inputs[3] : gr_ad_int(c, 0)};
  accum(c, n->inputs[1], gr_ad_mkn(c, "gather_grad", args, 4));
  return SG_OK;
}

/* (fill SHAPE VALUE [DTYPE]): VALUE gets the sum of g; zeros/ones get nothing */
static sg_code fill(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  if (op->code == 2) accum(c, n->inputs[2], mk(c, "sum_like", g, n->inputs[2]));
  return SG_OK;
}

static sg_code none(gr_ad *c, gr_node *n, gr_node *g) {
  (void)c, (void)n, (void)g; /* integers, constructors: no gradient */
  return SG_OK;
}

const gr_grad_rule gr_grad_binary = {binary}, gr_grad_unary = {unary}, gr_grad_matmul = {matmul},
                   gr_grad_reduce = {reduce}, gr_grad_none = {none}, gr_grad_where = {where},
                   gr_grad_transpose = {transpose}, gr_grad_reshape = {reshape},
                   gr_grad_cast = {cast}, gr_grad_softmax = {softmax}, gr_grad_tuple = {tuple},
                   gr_grad_getitem = {getitem}, gr_grad_record = {record},
                   gr_grad_getattr = {getitem}, gr_grad_seq = {seq}, gr_grad_adjoint = {adjoint},
                   gr_grad_join = {join}, gr_grad_slice = {slice}, gr_grad_gather = {gather},
                   gr_grad_fill = {fill}, gr_grad_pyconv = {pyconv};

/* The gradient column of the op table, by family (ir/ops.c). */
static const gr_grad_rule *const rules[GR_FAM_COUNT] = {
    [GR_FAM_BINARY] = &gr_grad_binary,       [GR_FAM_UNARY] = &gr_grad_unary,
    [GR_FAM_WHERE] = &gr_grad_where,         [GR_FAM_CAST] = &gr_grad_cast,
    [GR_FAM_MATMUL] = &gr_grad_matmul,       [GR_FAM_TRANSPOSE] = &gr_grad_transpose,
    [GR_FAM_RESHAPE] = &gr_grad_reshape,     [GR_FAM_REDUCE] = &gr_grad_reduce,
    [GR_FAM_SOFTMAX] = &gr_grad_softmax,     [GR_FAM_JOIN] = &gr_grad_join,
    [GR_FAM_SLICE] = &gr_grad_slice,         [GR_FAM_GATHER] = &gr_grad_gather,
    [GR_FAM_ONE_HOT] = &gr_grad_none,        [GR_FAM_FILL] = &gr_grad_fill,
    [GR_FAM_ARANGE] = &gr_grad_none,         [GR_FAM_RANDOM] = &gr_grad_none,
    [GR_FAM_SHAPE] = &gr_grad_none,          [GR_FAM_TUPLE] = &gr_grad_tuple,
    [GR_FAM_GETITEM] = &gr_grad_getitem,     [GR_FAM_RECORD] = &gr_grad_record,
    [GR_FAM_GETATTR] = &gr_grad_getattr,     [GR_FAM_ADJOINT] = &gr_grad_adjoint,
    [GR_FAM_OPTIM] = NULL,                   [GR_FAM_PRINT] = NULL,
    [GR_FAM_ASSERT] = NULL,                  [GR_FAM_VARIABLE] = NULL,
    [GR_FAM_SEQ] = &gr_grad_seq,             [GR_FAM_IF] = NULL,
    [GR_FAM_WHILE] = NULL,                   [GR_FAM_GRAD] = NULL,
    [GR_FAM_PYCONV] = &gr_grad_pyconv,
};

const gr_grad_rule *gr_grad_rule_of(const gr_op *op) { return rules[op->family]; }

bool gr_ad_differentiable(const gr_op *op) { return rules[op->family] != NULL; }
