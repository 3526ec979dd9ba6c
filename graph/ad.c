/*
 * ad.c — reverse-mode automatic differentiation on the graph IR (issue #7, first
 * stage). `(grad f i ...)` lowers to an apply of the `grad` primitive; after lowering,
 * gr_ad_expand replaces each such node whose function is a top-level def by a constant
 * naming a new gradient graph. The gradient graph takes f's parameters, replays f's
 * primitive applies (calls to other defs are inlined, so the trace is straight-line)
 * and then accumulates adjoints in reverse with each primitive's rule from the op
 * table's grad column (ad_rules.h, ad_rules.c).
 * Because the result is an ordinary straight-line graph, grad of grad works.
 *
 * Not yet done (see docs/ad.md): Myia-style backpropagator closures, `if`/`while`,
 * recursion, closures with free variables, tuples/records, and reductions of
 * broadcast gradients back to input shapes.
 */
#include <string.h>

#include "ad_rules.h"

typedef gr_ad adc;

static gr_node *prim(adc *c, const char *name) {
  gr_val v = {.tag = GV_PRIM, .u.op = gr_op_lookup(name)};
  return gr_const_new(c->m, v);
}

static bool is_one(const gr_node *n) {
  return n && n->kind == GR_CONST && n->value.tag == GV_FLOAT && n->value.u.f == 1.0;
}

static gr_node *mk(adc *c, const char *op, gr_node *a, gr_node *b) {
  /* the seed 1.0 times an adjoint: no node (an integer-valued factor then stays
   * integer, as the gradient of an integer-valued function is) */
  if (!strcmp(op, "*") && is_one(a) && b) return b;
  if (!strcmp(op, "*") && is_one(b)) return a;
  gr_node *in[3] = {prim(c, op), a, b};
  gr_node *n = gr_apply_new(c->m, c->g, in, b ? 3 : 2);
  n->line = c->site->line;
  n->col = c->site->col;
  return n;
}

static gr_node *fconst(adc *c, double f) { return gr_const_new(c->m, gv_float(f)); }

static bool is_prim(const gr_node *n, const char *name) {
  const gr_op *op = gr_node_prim(n);
  return op && strcmp(op->name, name) == 0;
}

static sg_code expand_graph(gr_module *m, gr_graph *g, sg_error *err);

/* Copies old node `x` (of a graph whose params are mapped by `map`) into c->g. */
static gr_node *fwd(adc *c, sg_map *map, gr_node *x) {
  void *got;
  if (x->kind == GR_CONST) return x;
  if (sg_map_get(map, (uintptr_t)x, &got)) return got;
  if (x->kind == GR_PARAM) {
    gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, x,
                "grad: cannot differentiate a function with free variable '%s' yet",
                x->name ? x->name : "?");
    return NULL;
  }
  if (++c->depth > GR_MAX_NESTING) {
    gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, x,
                "grad: call or expression nesting deeper than %d (recursion is not "
                "differentiable yet)", GR_MAX_NESTING);
    return NULL;
  }
  gr_node *head = x->inputs[0], *r = NULL;
  int na = x->ninputs - 1;
  gr_node **in = sg_xcalloc((size_t)x->ninputs, sizeof(gr_node *));
  for (int i = 1; i <= na; i++)
    if (!(in[i] = fwd(c, map, x->inputs[i]))) goto out;
  const gr_op *op = gr_node_prim(x);
  if (op == gr_op_seq) {
    /* `seq` only orders its inputs (lower.c keeps a let-bound call alive with it); they
     * were replayed above, and its value, the last one, carries the adjoint */
    r = in[na];
  } else if (op) {
    if (op->flags & GR_OP_CALLS) {
      gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, x,
                  "grad: differentiating through '%s' is not implemented yet", op->name);
      goto out;
    }
    if (op->flags & GR_OP_EFFECT) {
      gr_error_at(c->err, SG_INVALID_ARGUMENT, c->m, x,
                  "grad: '%s' has side effects and is not differentiable", op->name);
      goto out;
    }
    in[0] = head;
    r = gr_apply_new(c->m, c->g, in, x->ninputs);
    r->line = x->line;
    r->col = x->col;
    r->name = x->name;
    sg_vec_push(&c->tape, r);
  } else if (gr_is_const_graph(head) && !head->value.u.g->parent &&
             head->value.u.g->nparams == na) {
    gr_graph *callee = head->value.u.g;
    if (expand_graph(c->m, callee, c->err)) goto out;
    sg_map inner = {0};
    for (int i = 0; i < na; i++) sg_map_put(&inner, (uintptr_t)callee->params[i], in[i + 1]);
    r = fwd(c, &inner, callee->output);
    sg_map_free(&inner);
  } else {
    gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, x,
                "grad: differentiating a call of a function value (closure or higher-order "
                "argument) is not implemented yet");
  }
out:
  free(in);
  c->depth--;
  if (r) sg_map_put(map, (uintptr_t)x, r);
  return r;
}

void gr_ad_accum(adc *c, gr_node *x, gr_node *d) {
  if (x->kind == GR_CONST || !d) return;
  void *old;
  if (sg_map_get(&c->adj, (uintptr_t)x, &old)) d = mk(c, "+", old, d);
  sg_map_put(&c->adj, (uintptr_t)x, d);
}

gr_node *gr_ad_mk(adc *c, const char *op, gr_node *a, gr_node *b) { return mk(c, op, a, b); }

gr_node *gr_ad_mk3(adc *c, const char *op, gr_node *a, gr_node *b, gr_node *d) {
  gr_node *in[4] = {prim(c, op), a, b, d};
  gr_node *n = gr_apply_new(c->m, c->g, in, 4);
  n->line = c->site->line;
  n->col = c->site->col;
  return n;
}

gr_node *gr_ad_float(adc *c, double f) { return fconst(c, f); }

/* The gradient rule of one primitive: its op-table row's grad column (ad_rules.c). */
static sg_code ad_rule(adc *c, gr_node *n, gr_node *g) {
  const gr_op *op = gr_node_prim(n);
  const gr_grad_rule *r = op->grad;
  if (!r)
    return gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, n,
                       "grad: no gradient rule for primitive '%s' yet", op->name);
  return r->fn(c, n, g);
}

/* Builds the gradient graph of f with respect to the parameters in idx[0..nidx). */
static gr_graph *build_grad(gr_module *m, gr_graph *f, const int *idx, int nidx,
                            const gr_node *site, sg_error *err) {
  char name[256];
  snprintf(name, sizeof name, "grad_%s", f->name ? f->name : "fn");
  adc c = {.m = m, .err = err, .site = site};
  c.g = gr_graph_new(m, sg_intern_str(&m->strings, name), NULL);
  c.g->line = f->line;
  c.g->col = f->col;
  sg_map map = {0};
  for (int i = 0; i < f->nparams; i++) {
    gr_node *p = gr_param_new(m, c.g, f->params[i]->name);
    p->aval = f->params[i]->aval;
    sg_map_put(&map, (uintptr_t)f->params[i], p);
  }
  gr_graph *res = NULL;
  gr_node *out = fwd(&c, &map, f->output);
  if (!out) goto done;
  gr_ad_accum(&c, out, fconst(&c, 1.0));
  for (size_t k = c.tape.len; k-- > 0;) {
    gr_node *n = c.tape.data[k];
    void *g;
    if (!sg_map_get(&c.adj, (uintptr_t)n, &g)) continue;
    if (ad_rule(&c, n, g)) goto done;
  }
  gr_node **outs = sg_xcalloc((size_t)nidx + 1, sizeof(gr_node *));
  outs[0] = prim(&c, "tuple");
  for (int i = 0; i < nidx; i++) {
    gr_node *p = c.g->params[idx[i]];
    void *g;
    outs[i + 1] = sg_map_get(&c.adj, (uintptr_t)p, &g) ? g : mk(&c, "*", p, fconst(&c, 0.0));
  }
  gr_set_output(c.g, nidx == 1 ? outs[1] : gr_apply_new(m, c.g, outs, nidx + 1));
  free(outs);
  res = c.g;
done:
  sg_map_free(&map);
  sg_map_free(&c.adj);
  sg_vec_free(&c.tape);
  return res;
}

static sg_code expand_node(gr_module *m, gr_node *n, sg_error *err) {
  int na = n->ninputs - 1;
  gr_node *fn = n->inputs[1];
  if (!gr_is_const_graph(fn) || fn->value.u.g->parent)
    return gr_error_at(err, SG_UNIMPLEMENTED, m, n,
                       "grad: the function must name a top-level def (grad of closures and "
                       "function values is not implemented yet)");
  gr_graph *f = fn->value.u.g;
  if (expand_graph(m, f, err)) return err->code;
  int *idx = sg_xcalloc((size_t)(na > 1 ? na : 1), sizeof(int));
  int nidx = 0;
  if (na == 1) idx[nidx++] = 0;
  for (int i = 2; i <= na; i++) {
    gr_node *x = n->inputs[i];
    if (x->kind != GR_CONST || x->value.tag != GV_INT) {
      free(idx);
      return gr_error_at(err, SG_INVALID_ARGUMENT, m, x,
                         "grad: parameter index must be an integer literal");
    }
    if (x->value.u.i < 0 || x->value.u.i >= f->nparams) {
      free(idx);
      return gr_error_at(err, SG_INVALID_ARGUMENT, m, x,
                         "grad: parameter index %lld out of range: '%s' has %d parameter(s)",
                         (long long)x->value.u.i, f->name ? f->name : "?", f->nparams);
    }
    idx[nidx++] = (int)x->value.u.i;
  }
  gr_graph *dg = build_grad(m, f, idx, nidx, n, err);
  free(idx);
  if (!dg) return err->code;
  gr_val v = {.tag = GV_GRAPH, .u.g = dg};
  gr_node *k = gr_const_new(m, v);
  k->line = n->line;
  k->col = n->col;
  gr_replace(m, n, k);
  n->dead = true;
  return SG_OK;
}

static _Thread_local int expand_depth; /* grad nested in the def it differentiates */

static sg_code expand_graph(gr_module *m, gr_graph *g, sg_error *err) {
  if (expand_depth > 64)
    return sg_error_set_at(err, SG_INVALID_ARGUMENT, m->file, g->line, g->col,
                           "grad: '%s' differentiates itself (directly or through grad)",
                           g->name ? g->name : "?");
  expand_depth++;
  sg_code rc = SG_OK;
  for (size_t i = 0; i < g->nodes.len; i++) {
    gr_node *n = g->nodes.data[i];
    if (n->dead || n->kind != GR_APPLY || !is_prim(n, "grad")) continue;
    if ((rc = expand_node(m, n, err))) break;
  }
  expand_depth--;
  return rc;
}

sg_code gr_ad_expand(gr_module *m, sg_error *err) {
  for (size_t i = 0; i < m->graphs.len; i++) {
    sg_code rc = expand_graph(m, m->graphs.data[i], err);
    if (rc) return rc;
  }
  return SG_OK;
}
