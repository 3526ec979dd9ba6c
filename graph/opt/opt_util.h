// SPDX-License-Identifier: Apache-2.0
/*
 * opt_util.h — private to graph/opt: the passes' entry points (opt.c runs them) and
 * small helpers they share.
 */
#ifndef STAGD_GRAPH_OPT_UTIL_H
#define STAGD_GRAPH_OPT_UTIL_H

#include "gr_opt.h"

bool gr_opt_inline(gr_module *m, gr_graph *entry, gr_pass_stats *st);
bool gr_opt_cse(gr_module *m, gr_graph *entry, gr_pass_stats *st);
bool gr_opt_constfold(gr_module *m, gr_graph *entry, gr_fold_fn fold, gr_pass_stats *st);
bool gr_opt_dce(gr_module *m, gr_graph *entry, gr_pass_stats *st);
bool gr_opt_algebra(gr_module *m, gr_graph *entry, gr_pass_stats *st);
bool gr_opt_matmul(gr_module *m, gr_graph *entry, gr_pass_stats *st);

/* Live graphs: every top-level def of the source and what it reaches (AD's generated
 * graphs only when reached), each once, in one walk over the module. */
static inline void gr_live_graphs(gr_module *m, gr_graph_vec *out) {
  out->len = 0;
  sg_map seen = SG_MAP_INIT;
  for (size_t i = 0; i < m->graphs.len; i++) {
    gr_graph *r = m->graphs.data[i];
    if (!r->parent && !r->dead && !r->generated) gr_reach_more(r, &seen, out);
  }
  sg_map_free(&seen);
}

/* Runs rewrite on every live node of every live graph in schedule order; a node it
 * returns (other than the node itself) replaces it. Returns whether anything changed,
 * counting each replacement in *simplified. */
static inline bool gr_rewrite_nodes(gr_module *m, gr_node *(*rewrite)(gr_module *, gr_node *),
                                    int *simplified) {
  bool changed = false;
  gr_graph_vec live = {0};
  gr_live_graphs(m, &live);
  gr_node_vec sched = {0};
  for (size_t i = 0; i < live.len && !sg_watch_stopped(); i++) { /* a request that gave up */
    gr_schedule(live.data[i], &sched);
    for (size_t k = 0; k < sched.len; k++) {
      gr_node *n = sched.data[k];
      if (n->dead) continue;
      gr_node *r = rewrite(m, n);
      if (r && r != n) {
        gr_replace(m, n, r);
        (*simplified)++;
        changed = true;
      }
    }
  }
  sg_vec_free(&sched);
  sg_vec_free(&live);
  return changed;
}

static inline bool gr_is_pure_apply(const gr_node *n) {
  const gr_op *op = gr_node_prim(n);
  return op && (op->flags & GR_OP_PURE);
}

static inline bool gr_const_is_int(const gr_node *n, int64_t v) {
  return n->kind == GR_CONST && ((n->value.tag == GV_INT && n->value.u.i == v) ||
                                 (n->value.tag == GV_FLOAT && n->value.u.f == (double)v));
}

#endif
