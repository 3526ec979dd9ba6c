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

/* Iterative post-order DFS from the output: inputs left to right, and for a graph
 * constant, the free variables of that graph owned by g. */
static void dfs_from(gr_graph *g, gr_node *root, sg_map *seen, gr_node_vec *out) {
  typedef struct {
    gr_node *n;
    int next;
    size_t fvnext;
  } frame;
  if (root->kind != GR_APPLY || root->graph != g || sg_map_get(seen, (uintptr_t)root, NULL))
    return;
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
        }
        if (!child) {
          top->next++;
          top->fvnext = 0;
        }
      } else {
        top->next++;
        if (in->kind == GR_APPLY && in->graph == g && !sg_map_get(seen, (uintptr_t)in, NULL))
          child = in;
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

/* Iterative post-order DFS from the output: inputs left to right, and for a graph
 * constant, the free variables of that graph owned by g first. */
void gr_schedule(gr_graph *g, gr_node_vec *out) {
  out->len = 0;
  sg_map seen = SG_MAP_INIT;
  if (g->output && gr_is_const_graph(g->output)) {
    gr_graph *h = g->output->value.u.g;
    for (size_t k = 0; k < h->fvs.len; k++) dfs_from(g, h->fvs.data[k], &seen, out);
  } else if (g->output) {
    dfs_from(g, g->output, &seen, out);
  }
  sg_map_free(&seen);
}

/* One breadth-first walk from every root in turn, never entering a graph twice: a
 * graph already seen has had everything it reaches added, so each root adds exactly
 * what a walk of its own would add first, in the same order — in time linear in the
 * module (a walk per root was quadratic in a chain of defs calling each other). */
void gr_reachable_from(gr_module *m, gr_graph *const *roots, size_t nroots, gr_graph_vec *out) {
  out->len = 0;
  sg_map seen = SG_MAP_INIT;
  size_t i = 0;
  for (size_t r = 0; r < nroots; r++) {
    if (sg_map_get(&seen, (uintptr_t)roots[r], NULL)) continue;
    sg_vec_push(out, roots[r]);
    sg_map_put(&seen, (uintptr_t)roots[r], NULL);
    for (; i < out->len; i++) {
      gr_graph *g = out->data[i];
      for (size_t k = 0; k <= g->nodes.len; k++) {
        gr_node *n = k < g->nodes.len ? g->nodes.data[k] : NULL;
        int cnt = n ? n->ninputs : 1;
        if (n && n->dead) continue;
        for (int j = 0; j < cnt; j++) {
          gr_node *in = n ? n->inputs[j] : g->output;
          if (in && gr_is_const_graph(in) && !sg_map_get(&seen, (uintptr_t)in->value.u.g, NULL)) {
            sg_map_put(&seen, (uintptr_t)in->value.u.g, NULL);
            sg_vec_push(out, in->value.u.g);
          }
        }
      }
    }
  }
  sg_map_free(&seen);
  (void)m;
}

void gr_reachable_graphs(gr_module *m, gr_graph *entry, gr_graph_vec *out) {
  gr_reachable_from(m, &entry, 1, out);
}

static bool owned_by(const gr_node *n, const gr_graph *g) { return n->graph == g; }

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
      for (size_t k = 0; k <= g->nodes.len; k++) {
        gr_node *n = k < g->nodes.len ? g->nodes.data[k] : NULL;
        if (n && n->dead) continue;
        int cnt = n ? n->ninputs : 1;
        for (int j = 0; j < cnt; j++) {
          gr_node *in = n ? n->inputs[j] : g->output;
          if (!in) continue;
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
  }
  for (size_t i = 0; i < m->graphs.len; i++) sg_map_free(&sets[i]);
  free(sets);
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
