/*
 * ad_rules.c — the gradient rules of the op table's grad column (ad_rules.h): one rule
 * per kernel family, switching on the row's kernel code. Each adds, for a forward
 * node n = op(a, b) with adjoint g, the contributions to adj(a) and adj(b).
 * Constants receive nothing. Broadcast gradients are not yet summed back to input
 * shapes (docs/ad.md).
 */
#include "ad_rules.h"

#define mk gr_ad_mk
#define accum gr_ad_accum
#define fconst gr_ad_float

static bool is_const(const gr_node *x) { return x->kind == GR_CONST; }

static sg_code binary(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  int na = n->ninputs - 1;
  gr_node *a = n->inputs[1], *b = na > 1 ? n->inputs[2] : NULL;
  switch (op->code) {
  case KN_ADD:
    accum(c, a, g);
    accum(c, b, g);
    break;
  case KN_SUB:
    if (na == 1) {
      accum(c, a, mk(c, "neg", g, NULL));
      break;
    }
    accum(c, a, g);
    if (!is_const(b)) accum(c, b, mk(c, "neg", g, NULL));
    break;
  case KN_MUL:
    if (!is_const(a)) accum(c, a, mk(c, "*", g, b));
    if (!is_const(b)) accum(c, b, mk(c, "*", g, a));
    break;
  case KN_DIV:
    if (!is_const(a)) accum(c, a, mk(c, "/", g, b));
    if (!is_const(b)) accum(c, b, mk(c, "neg", mk(c, "/", mk(c, "*", g, n), b), NULL));
    break;
  case KN_POW:
    if (!is_const(a))
      accum(c, a, mk(c, "*", mk(c, "*", g, b), mk(c, "**", a, mk(c, "-", b, fconst(c, 1.0)))));
    if (!is_const(b)) accum(c, b, mk(c, "*", mk(c, "*", g, n), mk(c, "log", a, NULL)));
    break;
  case KN_EQ: case KN_NE: case KN_LT: case KN_LE: case KN_GT: case KN_GE: case KN_AND:
  case KN_OR:
    break; /* piecewise constant: no gradient flows */
  default:
    return gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, n,
                       "grad: no gradient rule for primitive '%s' yet", op->name);
  }
  return SG_OK;
}

static sg_code unary(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  gr_node *a = n->inputs[1];
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
    gr_node *other = op->code == KN_RELU ? mk(c, "*", g, fconst(c, 0.0)) : mk(c, "neg", g, NULL);
    accum(c, a, gr_ad_mk3(c, "where", pos, g, other));
    break;
  }
  case KN_NOT: break;
  default:
    return gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, n,
                       "grad: no gradient rule for primitive '%s' yet", op->name);
  }
  return SG_OK;
}

/* 2-D: d(a @ b) = g @ b^T, a^T @ g */
static sg_code matmul(gr_ad *c, gr_node *n, gr_node *g) {
  gr_node *a = n->inputs[1], *b = n->inputs[2];
  if (!is_const(a)) accum(c, a, mk(c, "matmul", g, mk(c, "transpose", b, NULL)));
  if (!is_const(b)) accum(c, b, mk(c, "matmul", mk(c, "transpose", a, NULL), g));
  return SG_OK;
}

/* sum/mean over everything: g spread over a's shape */
static sg_code reduce(gr_ad *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  gr_node *a = n->inputs[1];
  if (n->ninputs != 2 || (op->code != KN_SUM && op->code != KN_MEAN))
    return gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, n,
                       "grad: no gradient rule for '%s'%s yet", op->name,
                       n->ninputs != 2 ? " with an axis" : "");
  gr_node *d = op->code == KN_SUM ? g : mk(c, "/", g, mk(c, "size", a, NULL));
  accum(c, a, mk(c, "+", mk(c, "*", a, fconst(c, 0.0)), d));
  return SG_OK;
}

/* (where cond a b): g routed to the branch each element came from */
static sg_code where(gr_ad *c, gr_node *n, gr_node *g) {
  gr_node *cond = n->inputs[1], *a = n->inputs[2], *b = n->inputs[3];
  gr_node *zero = mk(c, "*", g, fconst(c, 0.0));
  if (!is_const(a)) accum(c, a, gr_ad_mk3(c, "where", cond, g, zero));
  if (!is_const(b)) accum(c, b, gr_ad_mk3(c, "where", cond, zero, g));
  return SG_OK;
}

/* 2-D transpose (no axes argument): the adjoint is transposed back */
static sg_code transpose(gr_ad *c, gr_node *n, gr_node *g) {
  if (n->ninputs != 2)
    return gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, n,
                       "grad: no gradient rule for 'transpose' with axes yet");
  accum(c, n->inputs[1], mk(c, "transpose", g, NULL));
  return SG_OK;
}

/* (reshape a shape): the adjoint is reshaped back to a's shape */
static sg_code reshape(gr_ad *c, gr_node *n, gr_node *g) {
  gr_node *a = n->inputs[1];
  accum(c, a, mk(c, "reshape", g, mk(c, "shape", a, NULL)));
  return SG_OK;
}

static sg_code none(gr_ad *c, gr_node *n, gr_node *g) {
  (void)c, (void)n, (void)g; /* shape/len/size: integers, no gradient */
  return SG_OK;
}

const gr_grad_rule gr_grad_binary = {binary}, gr_grad_unary = {unary}, gr_grad_matmul = {matmul},
                   gr_grad_reduce = {reduce}, gr_grad_none = {none}, gr_grad_where = {where},
                   gr_grad_transpose = {transpose}, gr_grad_reshape = {reshape};
