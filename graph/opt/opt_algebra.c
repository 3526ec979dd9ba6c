// SPDX-License-Identifier: Apache-2.0
/*
 * opt_algebra.c — algebraic simplification, only where the result's value and dtype
 * are provably unchanged:
 *   x*1, 1*x, x-0 → x; x+0, 0+x → x for integer x (x's type known from inference,
 *   numeric, not bool: True*1 is the int 1). For a float x, x+0 is not x: -0.0+0 is
 *   +0.0 (so only x + -0.0 folds), and x-(-0.0) is x+0. An operand of unknown
 *   dtype is kept: the fold could change the dtype (bool*1, int*1.0) or the value.
 *   The identity is always a scalar constant, so the shape cannot change.
 *   neg(neg x) → x
 *   getitem(tuple(a, b, ...), i) → the i-th element; getattr(record(...), f) → field
 *   seq(a, ..., last): pure or constant a's are dropped; seq(last) → last
 *   sum_like(g, x), expand_like(g, x) → g when inference proves g already has x's
 *   shape and dtype (the AD helpers of docs/ad.md: no broadcast to undo)
 */
#include <math.h>
#include <string.h>

#include "opt_util.h"

static bool safe_identity_operand(const gr_node *x) {
  const gr_aval *a = x->kind == GR_CONST ? NULL : x->aval;
  if (x->kind == GR_CONST)
    return x->value.tag == GV_INT || x->value.tag == GV_FLOAT ||
           (x->value.tag == GV_TENSOR && x->value.u.t->dtype != KN_BOOL);
  if (!a) return false;
  if (a->kind == GA_SCALAR) return a->dtype != KN_BOOL;
  return a->kind == GA_TENSOR && a->dtype != KN_BOOL;
}

static bool float_operand(const gr_node *x) {
  if (x->kind == GR_CONST)
    return x->value.tag == GV_FLOAT || (x->value.tag == GV_TENSOR && kn_dtype_is_float(x->value.u.t->dtype));
  const gr_aval *a = x->aval;
  return a && ((a->kind == GA_SCALAR && a->dtype == KN_FLOAT64) ||
               (a->kind == GA_TENSOR && kn_dtype_is_float(a->dtype)));
}

/* x op c → x is exact: c an int identity (weak next to any non-bool x), or a float
 * identity next to a float x; for + and - the sign of zero matters with floats. */
static bool identity_ok(const gr_op *op, const gr_node *x, const gr_node *c) {
  if (!safe_identity_operand(x)) return false;
  bool fx = float_operand(x);
  if (c->value.tag != GV_INT && !fx) return false; /* int x * 1.0 is a float */
  if (!fx || op == gr_op_mul) return true;
  bool neg_zero = c->value.tag == GV_FLOAT && signbit(c->value.u.f);
  return op == gr_op_add ? neg_zero : !neg_zero; /* x + -0.0 = x; x - +0 = x */
}

/* g and x are both float64 Python scalars, or tensors of one known shape and dtype */
static bool same_type(const gr_node *g, const gr_node *x) {
  const gr_aval *a = g->aval, *b = x->aval;
  if (!a || !b || a->kind != b->kind) return false;
  if (a->kind == GA_SCALAR) return a->dtype == KN_FLOAT64 && b->dtype == KN_FLOAT64;
  if (a->kind != GA_TENSOR || a->dtype != b->dtype || a->ndim < 0 || a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] < 0 || a->shape[i] != b->shape[i]) return false;
  return true;
}

static gr_node *simplify(gr_module *m, gr_node *n) {
  const gr_op *op = gr_node_prim(n);
  if (!op) return NULL;
  if ((!strcmp(op->name, "sum_like") || (!strcmp(op->name, "expand_like") && n->ninputs == 3)) &&
      n->inputs[1]->kind == GR_APPLY && same_type(n->inputs[1], n->inputs[2]))
    return n->inputs[1];
  if ((op == gr_op_mul || op == gr_op_add || op == gr_op_sub) && n->ninputs == 3) {
    int64_t idv = op == gr_op_mul ? 1 : 0;
    gr_node *a = n->inputs[1], *b = n->inputs[2];
    if (gr_const_is_int(b, idv) && identity_ok(op, a, b)) return a;
    if (op != gr_op_sub && gr_const_is_int(a, idv) && identity_ok(op, b, a)) return b;
  }
  if (!strcmp(op->name, "neg") && n->inputs[1]->kind == GR_APPLY) {
    const gr_op *inner = gr_node_prim(n->inputs[1]);
    if (inner && !strcmp(inner->name, "neg")) return n->inputs[1]->inputs[1];
  }
  if (!strcmp(op->name, "getitem") && n->inputs[1]->kind == GR_APPLY && n->inputs[2]->kind == GR_CONST &&
      n->inputs[2]->value.tag == GV_INT) {
    gr_node *t = n->inputs[1];
    const gr_op *inner = gr_node_prim(t);
    int64_t i = n->inputs[2]->value.u.i, len = t->ninputs - 1;
    if (inner && !strcmp(inner->name, "tuple") && i >= -len && i < len) return t->inputs[1 + (i < 0 ? i + len : i)];
  }
  if (!strcmp(op->name, "getattr") && n->inputs[1]->kind == GR_APPLY && n->inputs[2]->kind == GR_CONST &&
      n->inputs[2]->value.tag == GV_STR) {
    gr_node *r = n->inputs[1];
    const gr_op *inner = gr_node_prim(r);
    if (inner && !strcmp(inner->name, "record"))
      for (int k = 1; k + 1 < r->ninputs; k += 2)
        if (r->inputs[k]->kind == GR_CONST && r->inputs[k]->value.tag == GV_STR &&
            !strcmp(r->inputs[k]->value.u.s, n->inputs[2]->value.u.s))
          return r->inputs[k + 1];
  }
  if (op == gr_op_seq) {
    /* keep effects (and calls, which may have effects); drop pure values */
    int keep = 0;
    for (int k = 1; k < n->ninputs - 1; k++) {
      gr_node *a = n->inputs[k];
      if (a->kind == GR_APPLY && (!gr_is_pure_apply(a) || gr_node_prim(a) == gr_op_seq)) keep++;
    }
    if (keep == 0) return n->inputs[n->ninputs - 1];
    if (keep < n->ninputs - 2) {
      gr_node **in = sg_xmalloc(sizeof(gr_node *) * (size_t)(keep + 2));
      int w = 0;
      in[w++] = n->inputs[0];
      for (int k = 1; k < n->ninputs - 1; k++)
        if (n->inputs[k]->kind == GR_APPLY &&
            (!gr_is_pure_apply(n->inputs[k]) || gr_node_prim(n->inputs[k]) == gr_op_seq))
          in[w++] = n->inputs[k];
      in[w++] = n->inputs[n->ninputs - 1];
      gr_node *r = gr_apply_new(m, n->graph, in, w);
      r->line = n->line;
      r->col = n->col;
      free(in);
      return r;
    }
  }
  return NULL;
}

bool gr_opt_algebra(gr_module *m, gr_graph *entry, gr_pass_stats *st) {
  (void)entry;
  return gr_rewrite_nodes(m, simplify, &st->simplified);
}
