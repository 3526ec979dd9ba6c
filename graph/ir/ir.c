// SPDX-License-Identifier: Apache-2.0
/*
 * ir.c — the graph IR (Myia, "IR specification"): a graph has parameter nodes and
 * one output; an apply node applies inputs[0] to the rest; constants hold values
 * (graphs among them, so graphs are first-class). Free variables are direct pointers
 * to nodes owned by enclosing graphs. Every edge is also recorded in the input's use
 * list, so passes walk the graph both ways.
 *
 * Also here: schedules (the order the executor runs a graph's apply nodes in), free
 * variable sets (closure conversion) and reachability.
 */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include "gr_ir.h"

void gr_module_init(gr_module *m, const char *file) {
  memset(m, 0, sizeof *m);
  sg_arena_init(&m->arena, 0);
  sg_intern_init(&m->strings);
  m->file = sg_arena_strdup(&m->arena, file ? file : "<input>");
  m->max_nodes = 1000000;
}

void gr_module_free(gr_module *m) {
  for (size_t i = 0; i < m->all_nodes.len; i++) {
    gr_node *n = m->all_nodes.data[i];
    sg_vec_free(&n->uses);
    if (n->kind == GR_CONST) gv_release(n->value);
  }
  for (size_t i = 0; i < m->graphs.len; i++) {
    gr_graph *g = m->graphs.data[i];
    sg_vec_free(&g->nodes);
    sg_vec_free(&g->fvs);
  }
  for (size_t i = 0; i < m->held.len; i++) gv_release(m->held.data[i]);
  sg_vec_free(&m->held);
  sg_vec_free(&m->all_nodes);
  sg_vec_free(&m->graphs);
  sg_intern_free(&m->strings);
  sg_arena_free(&m->arena);
}

void gr_module_hold(gr_module *m, gr_val v) { sg_vec_push(&m->held, v); }

gr_graph *gr_graph_new(gr_module *m, const char *name, gr_graph *parent) {
  gr_graph *g = sg_arena_calloc(&m->arena, 1, sizeof *g);
  g->id = m->next_graph_id++;
  g->name = name;
  g->parent = parent;
  sg_vec_push(&m->graphs, g);
  return g;
}

static gr_node *node_new(gr_module *m, gr_node_kind k) {
  gr_node *n = sg_arena_calloc(&m->arena, 1, sizeof *n);
  n->kind = k;
  n->id = m->next_node_id++;
  n->slot = -1;
  sg_vec_push(&m->all_nodes, n);
  return n;
}

gr_node *gr_param_new(gr_module *m, gr_graph *g, const char *name) {
  gr_node *n = node_new(m, GR_PARAM);
  n->graph = g;
  n->name = name;
  gr_node **ps = sg_arena_alloc(&m->arena, sizeof(gr_node *) * (size_t)(g->nparams + 1));
  if (g->nparams) memcpy(ps, g->params, sizeof(gr_node *) * (size_t)g->nparams);
  ps[g->nparams++] = n;
  g->params = ps;
  return n;
}

gr_node *gr_const_new(gr_module *m, gr_val v) {
  gr_node *n = node_new(m, GR_CONST);
  n->value = v;
  return n;
}

static void add_use(gr_node *input, gr_node *user, int index) {
  gr_use u = {user, index};
  sg_vec_push(&input->uses, u);
}

static void remove_use(gr_node *input, gr_node *user, int index) {
  for (size_t i = 0; i < input->uses.len; i++)
    if (input->uses.data[i].user == user && input->uses.data[i].index == index) {
      input->uses.data[i] = input->uses.data[input->uses.len - 1];
      input->uses.len--;
      return;
    }
}

gr_node *gr_apply_new(gr_module *m, gr_graph *g, gr_node **inputs, int n) {
  gr_node *a = node_new(m, GR_APPLY);
  a->graph = g;
  a->ninputs = n;
  a->inputs = sg_arena_alloc(&m->arena, sizeof(gr_node *) * (size_t)n);
  for (int i = 0; i < n; i++) {
    a->inputs[i] = inputs[i];
    add_use(inputs[i], a, i);
  }
  sg_vec_push(&g->nodes, a);
  return a;
}

void gr_set_input(gr_node *user, int index, gr_node *input) {
  remove_use(user->inputs[index], user, index);
  user->inputs[index] = input;
  add_use(input, user, index);
}

/* The graph output is recorded as a use with user == NULL and index = graph id. */
void gr_set_output(gr_graph *g, gr_node *out) {
  if (g->output) remove_use(g->output, NULL, -(int)g->id - 1);
  g->output = out;
  add_use(out, NULL, -(int)g->id - 1);
}

void gr_replace(gr_module *m, gr_node *old, gr_node *new_) {
  if (old == new_) return;
  while (old->uses.len) {
    gr_use u = old->uses.data[old->uses.len - 1];
    if (u.user) {
      gr_set_input(u.user, u.index, new_);
    } else {
      uint32_t gid = (uint32_t)(-(u.index + 1));
      gr_graph *g = NULL;
      for (size_t i = 0; i < m->graphs.len; i++)
        if (m->graphs.data[i]->id == gid) g = m->graphs.data[i];
      if (!g) {
        old->uses.len--;
        continue;
      }
      gr_set_output(g, new_);
    }
  }
}

int gr_live_uses(const gr_node *n) {
  int k = 0;
  for (size_t i = 0; i < n->uses.len; i++)
    if (!n->uses.data[i].user || !n->uses.data[i].user->dead) k++;
  return k;
}

const gr_op *gr_node_prim(const gr_node *n) {
  if (n->kind != GR_APPLY || n->ninputs == 0) return NULL;
  const gr_node *h = n->inputs[0];
  return h->kind == GR_CONST && h->value.tag == GV_PRIM ? h->value.u.op : NULL;
}

/* What a walk of g reports besides its schedule: `foreign` for each node of another
 * graph it examines (an input, or a free variable of a graph constant), in order.
 * NULL: the schedule alone. */
typedef struct walk_hooks {
  void (*foreign)(void *ctx, gr_node *n);
  void *ctx;
} walk_hooks;

static void report_foreign(const walk_hooks *hk, const gr_graph *g, gr_node *n) {
  if (hk && n->kind != GR_CONST && n->graph != g) hk->foreign(hk->ctx, n);
}

/* Iterative post-order DFS from root: inputs left to right, and for a graph constant,
 * the free variables of that graph owned by g. */
static void dfs_from(gr_graph *g, gr_node *root, sg_map *seen, gr_node_vec *out, const walk_hooks *hk) {
  typedef struct {
    gr_node *n;
    int next;
    size_t fvnext;
  } frame;
  if (root->kind != GR_APPLY || root->graph != g || sg_map_get(seen, (uintptr_t)root, NULL)) {
    report_foreign(hk, g, root);
    return;
  }
  SG_VEC(frame) st = {0};
  frame f0 = {root, 0, 0};
  sg_vec_push(&st, f0);
  sg_map_put(seen, (uintptr_t)root, NULL);
  while (st.len) {
    frame *top = &st.data[st.len - 1];
    gr_node *n = top->n, *child = NULL;
    while (!child && top->next < n->ninputs) {
      gr_node *in = n->inputs[top->next];
      if (gr_is_const_graph(in)) {
        gr_graph *h = in->value.u.g;
        while (top->fvnext < h->fvs.len) {
          gr_node *fv = h->fvs.data[top->fvnext++];
          if (fv->kind == GR_APPLY && fv->graph == g && !sg_map_get(seen, (uintptr_t)fv, NULL)) {
            child = fv;
            break;
          }
          report_foreign(hk, g, fv);
        }
        if (!child) {
          top->next++;
          top->fvnext = 0;
        }
      } else {
        top->next++;
        if (in->kind == GR_APPLY && in->graph == g && !sg_map_get(seen, (uintptr_t)in, NULL))
          child = in;
        else
          report_foreign(hk, g, in);
      }
    }
    if (child) {
      sg_map_put(seen, (uintptr_t)child, NULL);
      frame f = {child, 0, 0};
      sg_vec_push(&st, f);
    } else {
      sg_vec_push(out, n);
      st.len--;
    }
  }
  sg_vec_free(&st);
}

static void walk(gr_graph *g, gr_node_vec *out, const walk_hooks *hk) {
  out->len = 0;
  sg_map seen = SG_MAP_INIT;
  if (g->output && gr_is_const_graph(g->output)) {
    gr_graph *h = g->output->value.u.g;
    for (size_t k = 0; k < h->fvs.len; k++) dfs_from(g, h->fvs.data[k], &seen, out, hk);
  } else if (g->output) {
    dfs_from(g, g->output, &seen, out, hk);
  }
  sg_map_free(&seen);
}

/* Iterative post-order DFS from the output: inputs left to right, and for a graph
 * constant, the free variables of that graph owned by g first. */
void gr_schedule(gr_graph *g, gr_node_vec *out) { walk(g, out, NULL); }

gr_node *gr_uses_next(const gr_graph *g, gr_use_iter *it) {
  while (it->k < g->nodes.len) {
    const gr_node *n = g->nodes.data[it->k];
    if (!n->dead && it->j < n->ninputs) {
      gr_node *in = n->inputs[it->j++];
      if (in) return in;
      continue;
    }
    it->k++;
    it->j = 0;
  }
  if (it->k++ == g->nodes.len) return g->output;
  return NULL;
}

void gr_graph_callees(const gr_graph *g, gr_graph_vec *out) {
  out->len = 0;
  gr_use_iter it = {0};
  for (gr_node *in; (in = gr_uses_next(g, &it));)
    if (gr_is_const_graph(in)) sg_vec_push(out, in->value.u.g);
}

void gr_reach_more(gr_graph *root, sg_map *seen, gr_graph_vec *out) {
  if (sg_map_get(seen, (uintptr_t)root, NULL)) return;
  sg_map_put(seen, (uintptr_t)root, NULL);
  gr_graph_vec uses = {0};
  size_t q = out->len;
  sg_vec_push(out, root);
  for (; q < out->len; q++) {
    gr_graph_callees(out->data[q], &uses);
    for (size_t k = 0; k < uses.len; k++)
      if (!sg_map_get(seen, (uintptr_t)uses.data[k], NULL)) {
        sg_map_put(seen, (uintptr_t)uses.data[k], NULL);
        sg_vec_push(out, uses.data[k]);
      }
  }
  sg_vec_free(&uses);
}

void gr_reachable_graphs(gr_module *m, gr_graph *entry, gr_graph_vec *out) {
  out->len = 0;
  sg_map seen = SG_MAP_INIT;
  gr_reach_more(entry, &seen, out);
  sg_map_free(&seen);
  (void)m;
}

static bool owned_by(const gr_node *n, const gr_graph *g) { return n->graph == g; }

/* Free-variable order. gr_compute_fvs finds each graph's free variables in the order of
 * its nodes' creation, and the schedule (so the dump, and the program id that hashes
 * it) follows that order: a program and the re-staging of its own dump could differ
 * (two getitems of an `if`'s tuple swapped). Each list is reordered as the graph's
 * own walk first meets its free variables (inputs left to right from the output,
 * graph constants' free variables in their order), which depends on structure only.
 * Graphs are done last-created first, so nested graphs (created after the graph that
 * holds them) come before their holders; passes repeat while a list changes, since
 * recursive graphs meet each other's lists (at most a few passes). */
typedef struct fv_order {
  sg_map fvs;      /* the graph's free variables → 1 until met */
  gr_node_vec out; /* in the order met */
} fv_order;

static void fv_met(void *ctx, gr_node *n) {
  fv_order *o = ctx;
  void *unmet;
  if (!sg_map_get(&o->fvs, (uintptr_t)n, &unmet) || !unmet) return;
  sg_map_put(&o->fvs, (uintptr_t)n, NULL);
  sg_vec_push(&o->out, n);
}

static bool reorder_fvs(gr_graph *g, gr_node_vec *sched) {
  fv_order o = {0};
  for (size_t j = 0; j < g->fvs.len; j++) sg_map_put(&o.fvs, (uintptr_t)g->fvs.data[j], (void *)1);
  walk_hooks hk = {fv_met, &o};
  walk(g, sched, &hk);
  for (size_t j = 0; j < g->fvs.len; j++) { /* those no walk meets (unused nodes) last */
    void *unmet;
    if (sg_map_get(&o.fvs, (uintptr_t)g->fvs.data[j], &unmet) && unmet) sg_vec_push(&o.out, g->fvs.data[j]);
  }
  bool changed = o.out.len != g->fvs.len || memcmp(o.out.data, g->fvs.data, o.out.len * sizeof *o.out.data);
  if (changed) memcpy(g->fvs.data, o.out.data, o.out.len * sizeof *o.out.data);
  sg_vec_free(&o.out);
  sg_map_free(&o.fvs);
  return changed;
}

static void canonical_fv_order(gr_module *m) {
  gr_node_vec sched = {0};
  for (int pass = 0; pass < 4; pass++) {
    bool changed = false;
    for (size_t i = m->graphs.len; i-- > 0;) {
      gr_graph *g = m->graphs.data[i];
      if (!g->dead && g->fvs.len > 1) changed |= reorder_fvs(g, &sched);
    }
    if (!changed) break;
  }
  sg_vec_free(&sched);
}

/* fv(G) = nodes used by G's live apply nodes (or its output) owned by another graph,
 * plus fv(H) for every graph constant H used in G, minus G's own nodes; iterated to
 * a fixpoint because of recursion. */
void gr_compute_fvs(gr_module *m) {
  for (size_t i = 0; i < m->graphs.len; i++) m->graphs.data[i]->fvs.len = 0;
  bool changed = true;
  sg_map *sets = sg_xcalloc(m->graphs.len ? m->graphs.len : 1, sizeof(sg_map));
  while (changed) {
    changed = false;
    for (size_t gi = 0; gi < m->graphs.len; gi++) {
      gr_graph *g = m->graphs.data[gi];
      if (g->dead) continue;
      gr_use_iter it = {0};
      for (gr_node *in; (in = gr_uses_next(g, &it));) {
        if (in->kind != GR_CONST) {
          if (!owned_by(in, g) && !sg_map_get(&sets[gi], (uintptr_t)in, NULL)) {
            sg_map_put(&sets[gi], (uintptr_t)in, NULL);
            sg_vec_push(&g->fvs, in);
            changed = true;
          }
        } else if (gr_is_const_graph(in)) {
          gr_graph *h = in->value.u.g;
          for (size_t q = 0; q < h->fvs.len; q++) {
            gr_node *fv = h->fvs.data[q];
            if (!owned_by(fv, g) && !sg_map_get(&sets[gi], (uintptr_t)fv, NULL)) {
              sg_map_put(&sets[gi], (uintptr_t)fv, NULL);
              sg_vec_push(&g->fvs, fv);
              changed = true;
            }
          }
        }
      }
    }
  }
  for (size_t i = 0; i < m->graphs.len; i++) sg_map_free(&sets[i]);
  free(sets);
  canonical_fv_order(m);
}

sg_code gr_error_at(sg_error *err, sg_code code, const gr_module *m, const gr_node *n,
                    const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sg_error_setv(err, code, fmt, ap);
  va_end(ap);
  if (err && n && n->line) {
    free(err->file);
    err->file = sg_xstrdup(m->file);
    err->line = n->line;
    err->col = n->col;
  }
  return code;
}
