// SPDX-License-Identifier: Apache-2.0
/*
 * opt_cse.c — common subexpression elimination: within a graph, two applications of
 * the same pure primitive to the same inputs (the same node, or constants with equal
 * values) are merged; the later one's uses move to the earlier. Effects and calls of
 * function values are never merged.
 */
#include "opt_util.h"

static bool same_input(const gr_node *a, const gr_node *b) {
  if (a == b) return true;
  return a->kind == GR_CONST && b->kind == GR_CONST && gv_equal(&a->value, &b->value);
}

static uint64_t input_hash(const gr_node *n) {
  return n->kind == GR_CONST ? gv_hash(&n->value) : sg_hash_u64((uintptr_t)n);
}

bool gr_opt_cse(gr_module *m, gr_graph *entry, gr_pass_stats *st) {
  bool changed = false;
  gr_graph_vec live = {0};
  gr_live_graphs(m, &live);
  gr_node_vec sched = {0};
  for (size_t i = 0; i < live.len && !sg_watch_stopped(); i++) {
    gr_graph *g = live.data[i];
    gr_schedule(g, &sched);
    sg_map table = SG_MAP_INIT; /* hash → first node (chained by probing the hash) */
    for (size_t k = 0; k < sched.len; k++) {
      gr_node *n = sched.data[k];
      if (!gr_is_pure_apply(n)) continue;
      uint64_t h = (uint64_t)n->ninputs;
      for (int j = 0; j < n->ninputs; j++) h = sg_hash_u64(h ^ input_hash(n->inputs[j]));
      for (;; h++) {
        void *v;
        if (!sg_map_get(&table, h, &v)) {
          sg_map_put(&table, h, n);
          break;
        }
        gr_node *o = v;
        bool eq = o->ninputs == n->ninputs;
        for (int j = 0; eq && j < n->ninputs; j++) eq = same_input(o->inputs[j], n->inputs[j]);
        if (eq) {
          gr_replace(m, n, o);
          st->cse_merged++;
          changed = true;
          break;
        }
      }
    }
    sg_map_free(&table);
  }
  sg_vec_free(&sched);
  sg_vec_free(&live);
  (void)entry;
  return changed;
}
