// SPDX-License-Identifier: Apache-2.0
/*
 * infer_adjoint.c — the shape rules of the rows AD emits (zeros_like, add_grad,
 * sum_like, ... : GR_FAM_ADJOINT) and of the optimizer steps (GR_FAM_OPTIM). Their
 * kernels are exec/ops_adjoint.c and exec/ops_optim.c.
 */
#include "infer_rules.h"

/* Shapes: zeros_like / item_grad keep X's type; sum_like / expand_like / slice_grad /
 * gather_grad have X's shape; add_grad is known only when both sides agree. */
GR_INFER(gr_infer_adjoint) {
  gr_aval *x = args[0];
  switch (op->code) {
  case GR_ADJ_CAPTURED: *out = *x; break;
  case GR_ADJ_OR_ZEROS:
    x = args[1];
    /* fall through */
  case GR_ADJ_ZEROS_LIKE:
    if (x->kind == GA_TENSOR && x->dtype != KN_BOOL) *out = *x;
    if (x->kind == GA_SCALAR && x->dtype != KN_BOOL) {
      out->kind = GA_SCALAR;
      out->dtype = x->dtype;
    }
    break;
  case GR_ADJ_ADD:
    if (x->kind == GA_SCALAR && args[1]->kind == GA_SCALAR && x->dtype == KN_FLOAT64 &&
        args[1]->dtype == KN_FLOAT64) {
      out->kind = GA_SCALAR;
      out->dtype = KN_FLOAT64;
    }
    break;
  case GR_ADJ_MATMUL: /* the operand's type (K known): a float tensor's */
    if (args[3]->kind == GA_SCALAR && args[3]->has_const && args[3]->cval.tag == GV_INT) {
      gr_aval *t = args[3]->cval.u.i == 0 ? args[1] : args[2];
      if (t->kind == GA_TENSOR && kn_dtype_is_float(t->dtype) && x->kind == GA_TENSOR && x->dtype == t->dtype) {
        *out = *t;
        out->has_const = false;
      }
    }
    break;
  case GR_ADJ_SUM_LIKE:
  case GR_ADJ_EXPAND_LIKE:
  case GR_ADJ_SLICE:
  case GR_ADJ_GATHER: {
    bool like = op->code == GR_ADJ_SUM_LIKE || op->code == GR_ADJ_EXPAND_LIKE;
    gr_aval *t = like ? args[1] : x, *g = like ? x : args[1];
    bool gf = (g->kind == GA_TENSOR || g->kind == GA_SCALAR) && kn_dtype_is_float(g->dtype);
    if (t->kind == GA_TENSOR && gf) {
      *out = *t;
      out->has_const = false;
      /* sum_like keeps a float X's dtype; a scalar g takes a float X's dtype */
      if (g->kind == GA_TENSOR && !(op->code == GR_ADJ_SUM_LIKE && kn_dtype_is_float(t->dtype)))
        out->dtype = g->dtype;
      else if (g->kind == GA_SCALAR && !kn_dtype_is_float(t->dtype))
        out->dtype = KN_FLOAT64;
    } else if (t->kind == GA_SCALAR && t->dtype == KN_FLOAT64 && gf && like) {
      out->kind = GA_SCALAR;
      out->dtype = KN_FLOAT64;
    }
    break;
  }
  default: break;
  }
  (void)n, (void)a, (void)err;
  return SG_OK;
}

/* (tuple W-like ...): the parameter's type for each returned state */
GR_INFER(gr_infer_optim) {
  int k = op->code == 0 ? 2 : 3;
  out->kind = GA_TUPLE;
  out->n = k;
  out->elems = sg_arena_alloc(a, sizeof(gr_aval *) * (size_t)(k + 1));
  gr_aval *w = sg_arena_alloc(a, sizeof *w);
  *w = *args[0];
  w->has_const = false; /* the updated value is not the old one */
  for (int i = 0; i < k; i++) out->elems[i] = w;
  (void)n, (void)err;
  return SG_OK;
}
