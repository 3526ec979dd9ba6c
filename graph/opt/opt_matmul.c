// SPDX-License-Identifier: Apache-2.0
/*
 * opt_matmul.c — folds transposes of matmul operands into the matmul rows that read an
 * operand transposed (ir/ops.c: matmul_tn, matmul_nt, matmul_tt; the code's bits are
 * KN_MATMUL_TRANS_A / _B), so no transposed copy is made. A "swap" below is a
 * `transpose` that exchanges the last two axes and nothing else: (transpose x) of a 2-d
 * x, or (transpose x PERM) with PERM the literal (0 .. n-3 n-1 n-2) for x of rank n
 * (known from inference). The rewrites:
 *   (matmul_C (swap x) y)  → (matmul_C' x y)  C' = C ^ TRANS_A (and likewise for y, B)
 *   (matmul_grad G (swap x) B 1 [T]) → (matmul_grad G x B 1 T ^ TRANS_A)
 *       (dB does not depend on how A is stored; likewise B for K 0)
 *   (swap (matmul_grad G A (swap y) 1 [T])) → (matmul_grad G A y 1 T ^ TRANS_B)
 *       (the adjoint of y itself: what AD's transpose rule makes of x @ y.T's dB;
 *       likewise A for K 0; only where that transpose is matmul_grad's one use)
 * A swap whose result is used elsewhere too is still folded into each matmul: that use
 * keeps the copy alive (made once, as before), and the matmul reading the original
 * instead never costs a copy. Off when STAGD_MATMUL_TRANSPOSE_FOLD=0 (the benchmark's
 * baseline; gr_matmul_fold_enabled, ir/ops.c).
 */
#include <stdlib.h>
#include <string.h>

#include "opt_util.h"

/* The rank of x's value (inference), else `hint`; -1 when neither knows. */
static int rank_of(const gr_node *x, int hint) {
  if (x->aval && x->aval->kind == GA_TENSOR && x->aval->ndim >= 0) return x->aval->ndim;
  return hint;
}

/* The literal permutation p (a constant tuple or a tuple of int constants); -1 if not. */
static int literal_perm(const gr_node *p, int64_t *perm) {
  if (p->kind == GR_CONST && p->value.tag == GV_TUPLE) {
    gr_obj *o = p->value.u.o;
    if (o->n > KN_MAX_DIMS) return -1;
    for (int i = 0; i < o->n; i++) {
      if (o->items[i].tag != GV_INT) return -1;
      perm[i] = o->items[i].u.i;
    }
    return o->n;
  }
  const gr_op *op = gr_node_prim(p);
  if (!op || strcmp(op->name, "tuple") || p->ninputs - 1 > KN_MAX_DIMS) return -1;
  for (int i = 1; i < p->ninputs; i++) {
    if (p->inputs[i]->kind != GR_CONST || p->inputs[i]->value.tag != GV_INT) return -1;
    perm[i - 1] = p->inputs[i]->value.u.i;
  }
  return p->ninputs - 1;
}

/* n's input when n swaps the last two axes of it and nothing else (rank from inference,
 * else `hint`); NULL otherwise. */
static gr_node *swapped(const gr_node *n, int hint) {
  const gr_op *op = gr_node_prim(n);
  if (!op || strcmp(op->name, "transpose")) return NULL;
  gr_node *x = n->inputs[1];
  int nd = rank_of(x, hint);
  if (n->ninputs == 2) return nd == 2 ? x : NULL; /* reverses the axes */
  int64_t perm[KN_MAX_DIMS];
  int np = literal_perm(n->inputs[2], perm);
  if (np < 2 || np != nd) return NULL;
  for (int i = 0; i < np; i++) {
    int64_t want = i < np - 2 ? i : i == np - 2 ? np - 1 : np - 2;
    if (perm[i] != want && perm[i] != want - np) return NULL;
  }
  return x;
}

static bool is_matmul_grad(const gr_node *n, int64_t *k, int *trans) {
  const gr_op *op = gr_node_prim(n);
  if (!op || strcmp(op->name, "matmul_grad")) return false;
  const gr_node *kn = n->inputs[4], *tn = n->ninputs > 5 ? n->inputs[5] : NULL;
  if (kn->kind != GR_CONST || kn->value.tag != GV_INT || (kn->value.u.i != 0 && kn->value.u.i != 1))
    return false;
  if (tn && (tn->kind != GR_CONST || tn->value.tag != GV_INT || tn->value.u.i < 0 || tn->value.u.i > 3))
    return false;
  *k = kn->value.u.i;
  *trans = tn ? (int)tn->value.u.i : 0;
  return true;
}

/* A node like `like` (same graph, location and inferred value): (op args...). */
static gr_node *apply_like(gr_module *m, const gr_node *like, const gr_op *op, gr_node **args, int n) {
  gr_node *in[6];
  gr_val pv = {.tag = GV_PRIM, .u.op = op};
  in[0] = gr_const_new(m, pv);
  memcpy(in + 1, args, sizeof(gr_node *) * (size_t)n);
  gr_node *r = gr_apply_new(m, like->graph, in, n + 1);
  r->line = like->line;
  r->col = like->col;
  r->aval = like->aval;
  return r;
}

/* (matmul_grad G A B K T) like n */
static gr_node *matmul_grad_like(gr_module *m, const gr_node *n, gr_node *g, gr_node *a, gr_node *b,
                                 int64_t k, int trans) {
  gr_node *args[5] = {g, a, b, gr_const_new(m, gv_int(k)), trans ? gr_const_new(m, gv_int(trans)) : NULL};
  return apply_like(m, n, gr_op_lookup("matmul_grad"), args, trans ? 5 : 4);
}

static gr_node *fold(gr_module *m, gr_node *n) {
  const gr_op *op = gr_node_prim(n);
  if (!op) return NULL;
  if (op->family == GR_FAM_MATMUL && n->ninputs == 3) {
    gr_node *a = swapped(n->inputs[1], -1), *b = swapped(n->inputs[2], -1);
    if (!a && !b) return NULL;
    int trans = op->code ^ (a ? KN_MATMUL_TRANS_A : 0) ^ (b ? KN_MATMUL_TRANS_B : 0);
    gr_node *args[2] = {a ? a : n->inputs[1], b ? b : n->inputs[2]};
    return apply_like(m, n, gr_op_matmul(trans), args, 2);
  }
  int64_t k;
  int trans;
  if (is_matmul_grad(n, &k, &trans)) { /* the operand not differentiated, read in place */
    gr_node *other = swapped(n->inputs[k == 0 ? 3 : 2], -1);
    if (!other) return NULL;
    int bit = k == 0 ? KN_MATMUL_TRANS_B : KN_MATMUL_TRANS_A;
    return matmul_grad_like(m, n, n->inputs[1], k == 0 ? n->inputs[2] : other,
                            k == 0 ? other : n->inputs[3], k, trans ^ bit);
  }
  if (!strcmp(op->name, "transpose") && n->inputs[1]->kind == GR_APPLY &&
      is_matmul_grad(n->inputs[1], &k, &trans)) { /* the adjoint of the swapped operand's input */
    gr_node *d = n->inputs[1], *inner = d->inputs[k == 0 ? 2 : 3];
    gr_node *x = swapped(inner, -1);
    if (!x || swapped(n, rank_of(x, -1)) != d || gr_live_uses(d) != 1) return NULL;
    int bit = k == 0 ? KN_MATMUL_TRANS_A : KN_MATMUL_TRANS_B;
    return matmul_grad_like(m, n, d->inputs[1], k == 0 ? x : d->inputs[2], k == 0 ? d->inputs[3] : x,
                            k, trans ^ bit);
  }
  return NULL;
}

bool gr_opt_matmul(gr_module *m, gr_graph *entry, gr_pass_stats *st) {
  if (!gr_matmul_fold_enabled()) return false;
  (void)entry;
  return gr_rewrite_nodes(m, fold, &st->simplified);
}
