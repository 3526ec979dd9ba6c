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

/* The strongly connected components of the live graphs' call graph (an edge g → h
 * for each graph constant h a live node or the output of g uses), found once per pass
 * by an iterative Tarjan walk: linear in the module, where a reachability walk per call
 * site was quadratic in a chain of defs. Inlining a non-recursive graph never makes or
 * breaks a cycle, so the components stay right for the whole pass. */
typedef struct sccs {
  sg_map index; /* graph → position in live + 1 */
  int *comp;
} sccs;

static int live_index(const sccs *s, const gr_graph *g) {
  void *v;
  return sg_map_get(&s->index, (uintptr_t)g, &v) ? (int)(uintptr_t)v - 1 : -1;
}

/* The graphs g's live nodes (and, with output, its output) use as constants. */
static void callees(gr_graph *g, bool output, gr_graph_vec *out) {
  out->len = 0;
  for (size_t k = 0; k <= g->nodes.len; k++) {
    gr_node *n = k < g->nodes.len ? g->nodes.data[k] : NULL;
    if (n && n->dead) continue;
    if (!n && !output) break;
    int cnt = n ? n->ninputs : 1;
    for (int j = 0; j < cnt; j++) {
      gr_node *in = n ? n->inputs[j] : g->output;
      if (in && gr_is_const_graph(in)) sg_vec_push(out, in->value.u.g);
    }
  }
}

static void sccs_build(sccs *s, const gr_graph_vec *live) {
  size_t n = live->len;
  s->index = (sg_map)SG_MAP_INIT;
  for (size_t i = 0; i < n; i++) sg_map_put(&s->index, (uintptr_t)live->data[i], (void *)(uintptr_t)(i + 1));
  /* adjacency in one array: edges of i at adj[start[i] .. start[i + 1]) */
  size_t *start = sg_xcalloc(n + 1, sizeof *start);
  SG_VEC(int) adj = {0};
  gr_graph_vec cs = {0};
  for (size_t i = 0; i < n; i++) {
    start[i] = adj.len;
    callees(live->data[i], true, &cs);
    for (size_t k = 0; k < cs.len; k++) {
      int w = live_index(s, cs.data[k]);
      if (w >= 0) sg_vec_push(&adj, w);
    }
  }
  start[n] = adj.len;
  sg_vec_free(&cs);
  s->comp = sg_xmalloc(sizeof(int) * (n ? n : 1));
  int *idx = sg_xmalloc(sizeof(int) * (n ? n : 1)), *low = sg_xmalloc(sizeof(int) * (n ? n : 1));
  bool *on = sg_xcalloc(n ? n : 1, sizeof(bool));
  size_t *pos = sg_xmalloc(sizeof(size_t) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) idx[i] = -1;
  SG_VEC(int) stack = {0};
  SG_VEC(int) frames = {0};
  int counter = 0, ncomp = 0;
  for (size_t root = 0; root < n; root++) {
    if (idx[root] >= 0) continue;
    sg_vec_push(&frames, (int)root);
    idx[root] = low[root] = counter++;
    pos[root] = start[root];
    sg_vec_push(&stack, (int)root);
    on[root] = true;
    while (frames.len) {
      int v = frames.data[frames.len - 1];
      if (pos[v] < start[v + 1]) {
        int w = adj.data[pos[v]++];
        if (idx[w] < 0) {
          idx[w] = low[w] = counter++;
          pos[w] = start[w];
          sg_vec_push(&stack, w);
          on[w] = true;
          sg_vec_push(&frames, w);
        } else if (on[w] && idx[w] < low[v]) {
          low[v] = idx[w];
        }
        continue;
      }
      frames.len--;
      if (frames.len) {
        int p = frames.data[frames.len - 1];
        if (low[v] < low[p]) low[p] = low[v];
      }
      if (low[v] == idx[v]) {
        int w;
        do {
          w = stack.data[--stack.len];
          on[w] = false;
          s->comp[w] = ncomp;
        } while (w != v);
        ncomp++;
      }
    }
  }
  sg_vec_free(&stack);
  sg_vec_free(&frames);
  sg_vec_free(&adj);
  free(start);
  free(idx);
  free(low);
  free(on);
  free(pos);
}

static void sccs_free(sccs *s) {
  sg_map_free(&s->index);
  free(s->comp);
}

/* Whether h reaches itself through a graph one of its live nodes calls or uses. */
static bool recursive(const sccs *s, gr_graph *h, gr_graph_vec *scratch) {
  int hi = live_index(s, h);
  callees(h, false, scratch);
  for (size_t k = 0; k < scratch->len; k++) {
    if (scratch->data[k] == h) return true;
    int ci = live_index(s, scratch->data[k]);
    if (hi >= 0 && ci >= 0 && s->comp[ci] == s->comp[hi]) return true;
  }
  return false;
}

static bool inlinable(const sccs *s, gr_graph *g, gr_graph *h, gr_node_vec *sched, gr_graph_vec *scratch) {
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
  return !recursive(s, h, scratch);
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
  sccs comps;
  sccs_build(&comps, &live);
  gr_graph_vec scratch = {0};
  gr_node_vec sched = {0}, hs = {0};
  for (size_t i = 0; i < live.len && !sg_watch_stopped(); i++) {
    gr_graph *g = live.data[i];
    gr_schedule(g, &sched);
    for (size_t k = 0; k < sched.len; k++) {
      gr_node *n = sched.data[k];
      if (n->kind != GR_APPLY || !gr_is_const_graph(n->inputs[0])) continue;
      gr_graph *h = n->inputs[0]->value.u.g;
      if (h->nparams != n->ninputs - 1) continue;
      gr_schedule(h, &hs);
      if (!inlinable(&comps, g, h, &hs, &scratch)) continue;
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
  sg_vec_free(&scratch);
  sccs_free(&comps);
  (void)entry;
  return changed;
}
