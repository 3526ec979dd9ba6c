// SPDX-License-Identifier: Apache-2.0
/*
 * ad_build.c — the builder AD's transformation (ad.c) and the gradient rules
 * (ad_rules.c) share: primitive applies located at the grad site, constants, and the
 * accumulation of adjoints (numbers and tensors with `+`, structured sensitivities with
 * `add_grad`), so the rules depend on this file and not on the transformation.
 */
#include <string.h>

#include "ad_internal.h"

typedef gr_ad adc;

gr_node *gr_ad_prim(adc *c, const char *name) {
  gr_val v = {.tag = GV_PRIM, .u.op = gr_op_lookup(name)};
  return gr_const_new(c->m, v);
}

static bool is_one(const gr_node *n) {
  return n && n->kind == GR_CONST && n->value.tag == GV_FLOAT && n->value.u.f == 1.0;
}

gr_node *gr_ad_apply(adc *c, gr_graph *g, gr_node **in, int n) {
  gr_node *r = gr_apply_new(c->m, g, in, n);
  r->line = c->site->line;
  r->col = c->site->col;
  return r;
}

gr_node *gr_ad_mkn(adc *c, const char *op, gr_node **args, int n) {
  gr_node **in = sg_xcalloc((size_t)n + 1, sizeof(gr_node *));
  in[0] = gr_ad_prim(c, op);
  for (int i = 0; i < n; i++) in[i + 1] = args[i];
  gr_node *r = gr_ad_apply(c, c->g, in, n + 1);
  free(in);
  return r;
}

gr_node *gr_ad_mk(adc *c, const char *op, gr_node *a, gr_node *b) {
  /* the seed 1.0 times an adjoint: no node (an integer-valued factor then stays
   * integer, as the gradient of an integer-valued function is) */
  if (!strcmp(op, "*") && is_one(a) && b) return b;
  if (!strcmp(op, "*") && is_one(b)) return a;
  gr_node *in[2] = {a, b};
  return gr_ad_mkn(c, op, in, b ? 2 : 1);
}


gr_node *gr_ad_mk3(adc *c, const char *op, gr_node *a, gr_node *b, gr_node *d) {
  gr_node *in[3] = {a, b, d};
  return gr_ad_mkn(c, op, in, 3);
}

gr_node *gr_ad_float(adc *c, double f) { return gr_const_new(c->m, gv_float(f)); }
gr_node *gr_ad_int(adc *c, int64_t i) { return gr_const_new(c->m, gv_int(i)); }

bool gr_ad_is_prim(const gr_node *n, const char *name) {
  const gr_op *op = gr_node_prim(n);
  return op && strcmp(op->name, name) == 0;
}


/* closures' constants receive adjoints (their environment's sensitivities) */
bool gr_ad_receives(adc *c, const gr_node *x) {
  return x->kind != GR_CONST || sg_map_get(&c->st->jinfos, (uintptr_t)x, NULL);
}

static void accum(adc *c, gr_node *x, gr_node *d, bool structural) {
  if (!gr_ad_receives(c, x) || !d) return;
  void *old;
  if (sg_map_get(&c->adj, (uintptr_t)x, &old)) {
    structural = structural || gr_ad_in_set(&c->structural, old);
    d = structural ? gr_ad_mk(c, "add_grad", old, d) : gr_ad_mk(c, "+", old, d);
  }
  if (structural) gr_ad_set_add(&c->structural, d);
  sg_map_put(&c->adj, (uintptr_t)x, d);
}

void gr_ad_accum(adc *c, gr_node *x, gr_node *d) { accum(c, x, d, false); }
void gr_ad_accum_s(adc *c, gr_node *x, gr_node *d) { accum(c, x, d, true); }

static bool scalar_literal(const gr_node *x) {
  return x && x->kind == GR_CONST &&
         (x->value.tag == GV_FLOAT || x->value.tag == GV_INT || x->value.tag == GV_BOOL);
}

gr_node *gr_ad_unbroadcast(adc *c, gr_node *n, gr_node *x, gr_node *other, gr_node *d) {
  if (gr_ad_in_set(&c->scalar, n) || x == other || scalar_literal(other)) return d;
  return gr_ad_mk(c, "sum_like", d, x);
}

void gr_ad_mark_scalar_inputs(adc *c, gr_node *n) {
  if (!gr_ad_in_set(&c->scalar, n)) return;
  for (int i = 1; i < n->ninputs; i++)
    if (n->inputs[i]->kind == GR_APPLY) gr_ad_set_add(&c->scalar, n->inputs[i]);
}
