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

/* The graphs among `live` that reach themselves through graph constants: the members
 * of strongly connected components of more than one graph, and graphs that use
 * themselves. Tarjan's algorithm with an explicit stack (no recursion on input
 * depth), once per pass: inlining copies a callee's uses into its caller, which
 * already reached them, so no graph becomes recursive during the pass. */
static void recursive_graphs(gr_graph_vec *live, sg_map *rec) {
  size_t n = live->len;
  sg_map index_of = SG_MAP_INIT;
  for (size_t i = 0; i < n; i++) sg_map_put(&index_of, (uintptr_t)live->data[i], (void *)(uintptr_t)i);
  gr_graph_vec *succ = sg_xcalloc(n ? n : 1, sizeof(gr_graph_vec));
  size_t *index = sg_xcalloc(n ? n : 1, sizeof(size_t)), *low = sg_xcalloc(n ? n : 1, sizeof(size_t));
  bool *on_stack = sg_xcalloc(n ? n : 1, sizeof(bool));
  for (size_t i = 0; i < n; i++) {
    gr_graph_callees(live->data[i], &succ[i]);
    for (size_t k = 0; k < succ[i].len; k++)
      if (succ[i].data[k] == live->data[i]) sg_map_put(rec, (uintptr_t)live->data[i], NULL);
  }
  typedef struct {
    size_t v, next;
  } frame;
  SG_VEC(frame) calls = {0};
  SG_VEC(size_t) comp = {0};
  size_t counter = 0;
  for (size_t root = 0; root < n; root++) {
    if (index[root]) continue;
    frame f0 = {root, 0};
    sg_vec_push(&calls, f0);
    index[root] = low[root] = ++counter;
    sg_vec_push(&comp, root);
    on_stack[root] = true;
    while (calls.len) {
      frame *top = &calls.data[calls.len - 1];
      size_t v = top->v;
      if (top->next < succ[v].len) {
        void *wi;
        gr_graph *c = succ[v].data[top->next++];
        if (!sg_map_get(&index_of, (uintptr_t)c, &wi)) continue; /* not live: not inlined into */
        size_t w = (size_t)(uintptr_t)wi;
        if (!index[w]) {
          index[w] = low[w] = ++counter;
          sg_vec_push(&comp, w);
          on_stack[w] = true;
          frame f = {w, 0};
          sg_vec_push(&calls, f);
        } else if (on_stack[w] && index[w] < low[v]) {
          low[v] = index[w];
        }
        continue;
      }
      calls.len--;
      if (calls.len && low[v] < low[calls.data[calls.len - 1].v]) low[calls.data[calls.len - 1].v] = low[v];
      if (low[v] != index[v]) continue;
      size_t start = comp.len;
      while (comp.data[--start] != v) {
      }
      for (size_t k = start; k < comp.len; k++) {
        on_stack[comp.data[k]] = false;
        if (comp.len - start > 1) sg_map_put(rec, (uintptr_t)live->data[comp.data[k]], NULL);
      }
      comp.len = start;
    }
  }
  for (size_t i = 0; i < n; i++) sg_vec_free(&succ[i]);
  free(succ);
  free(index);
  free(low);
  free(on_stack);
  sg_vec_free(&calls);
  sg_vec_free(&comp);
  sg_map_free(&index_of);
}

static bool inlinable(const sg_map *rec, gr_graph *g, gr_graph *h, gr_node_vec *sched) {
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
  return !sg_map_get(rec, (uintptr_t)h, NULL);
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
  sg_map rec = SG_MAP_INIT;
  recursive_graphs(&live, &rec);
  gr_node_vec sched = {0}, hs = {0};
  for (size_t i = 0; i < live.len && !sg_watch_stopped(); i++) { /* a request that gave up */
    gr_graph *g = live.data[i];
    gr_schedule(g, &sched);
    for (size_t k = 0; k < sched.len; k++) {
      gr_node *n = sched.data[k];
      if (n->kind != GR_APPLY || !gr_is_const_graph(n->inputs[0])) continue;
      gr_graph *h = n->inputs[0]->value.u.g;
      if (h->nparams != n->ninputs - 1) continue;
      gr_schedule(h, &hs);
      if (!inlinable(&rec, g, h, &hs)) continue;
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
  sg_map_free(&rec);
  (void)entry;
  return changed;
}
