// SPDX-License-Identifier: Apache-2.0
/*
 * opt_inline.c — inlining of calls to non-recursive graphs.
 *
 * A call (apply whose head is a graph constant H) in graph G is replaced by a copy of
 * H's body when: H does not reach itself (not recursive), H has at most 256 apply
 * nodes, H's free variables are visible from G (owned by G or an enclosing graph),
 * and no graph nested in H captures H's own nodes (those would need cloning too).
 * Parameters map to the call's arguments, free variables to themselves.
 */
#include "opt_util.h"

static bool visible_from(const gr_node *fv, const gr_graph *g) {
  for (const gr_graph *p = g; p; p = p->parent)
    if (fv->graph == p) return true;
  return false;
}

static bool recursive(gr_module *m, gr_graph *h) {
  gr_graph_vec r = {0};
  bool rec = false;
  for (size_t k = 0; k < h->nodes.len && !rec; k++) {
    gr_node *n = h->nodes.data[k];
    if (n->dead) continue;
    for (int j = 0; j < n->ninputs && !rec; j++) {
      gr_node *in = n->inputs[j];
      if (!gr_is_const_graph(in)) continue;
      if (in->value.u.g == h) rec = true;
      else {
        gr_reachable_graphs(m, in->value.u.g, &r);
        for (size_t q = 0; q < r.len; q++)
          if (r.data[q] == h) rec = true;
      }
    }
  }
  sg_vec_free(&r);
  return rec;
}

static bool inlinable(gr_module *m, gr_graph *g, gr_graph *h, gr_node_vec *sched) {
  if (h == g || sched->len > 256) return false;
  for (size_t k = 0; k < h->fvs.len; k++)
    if (!visible_from(h->fvs.data[k], g)) return false;
  for (size_t k = 0; k <= sched->len; k++) {
    gr_node *n = k < sched->len ? sched->data[k] : NULL;
    int cnt = n ? n->ninputs : 1;
    for (int j = 0; j < cnt; j++) {
      gr_node *in = n ? n->inputs[j] : h->output;
      if (!gr_is_const_graph(in)) continue;
      gr_graph *c = in->value.u.g;
      for (size_t q = 0; q < c->fvs.len; q++)
        if (c->fvs.data[q]->graph == h) return false;
    }
  }
  return !recursive(m, h);
}

static gr_node *mapped(gr_module *m, sg_map *map, gr_node *n) {
  void *v;
  if (sg_map_get(map, (uintptr_t)n, &v)) return v;
  if (n->kind == GR_CONST) {
    gr_node *c = gr_const_new(m, gv_retain(n->value));
    c->line = n->line;
    c->col = n->col;
    return c;
  }
  return n; /* a free variable: itself */
}

bool gr_opt_inline(gr_module *m, gr_graph *entry, gr_pass_stats *st) {
  bool changed = false;
  gr_compute_fvs(m);
  gr_graph_vec live = {0};
  gr_live_graphs(m, &live);
  gr_node_vec sched = {0}, hs = {0};
  for (size_t i = 0; i < live.len; i++) {
    gr_graph *g = live.data[i];
    gr_schedule(g, &sched);
    for (size_t k = 0; k < sched.len; k++) {
      gr_node *n = sched.data[k];
      if (n->kind != GR_APPLY || !gr_is_const_graph(n->inputs[0])) continue;
      gr_graph *h = n->inputs[0]->value.u.g;
      if (h->nparams != n->ninputs - 1) continue;
      gr_schedule(h, &hs);
      if (!inlinable(m, g, h, &hs)) continue;
      sg_map map = SG_MAP_INIT;
      for (int p = 0; p < h->nparams; p++) sg_map_put(&map, (uintptr_t)h->params[p], n->inputs[p + 1]);
      gr_node *buf[16];
      for (size_t q = 0; q < hs.len; q++) {
        gr_node *src = hs.data[q];
        gr_node **in = src->ninputs <= 16 ? buf : sg_xmalloc(sizeof(gr_node *) * (size_t)src->ninputs);
        for (int j = 0; j < src->ninputs; j++) in[j] = mapped(m, &map, src->inputs[j]);
        gr_node *c = gr_apply_new(m, g, in, src->ninputs);
        c->line = src->line;
        c->col = src->col;
        c->name = src->name;
        c->aval = src->aval;
        if (in != buf) free(in);
        sg_map_put(&map, (uintptr_t)src, c);
      }
      gr_node *out = mapped(m, &map, h->output);
      sg_map_free(&map);
      gr_replace(m, n, out);
      st->inlined++;
      changed = true;
    }
  }
  sg_vec_free(&hs);
  sg_vec_free(&sched);
  sg_vec_free(&live);
  (void)entry;
  return changed;
}
