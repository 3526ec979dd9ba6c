// SPDX-License-Identifier: Apache-2.0
/*
 * opt_dce.c — dead code elimination: apply nodes that the output of their graph does
 * not reach (directly, or through the free variables of the graphs it uses) are
 * removed with their edges, and graphs no top-level def of the source reaches (AD's
 * generated top-level graphs included) are marked dead.
 * Effects are never dead: the lowering threads them to the output with `seq`.
 */
#include "opt_util.h"

bool gr_opt_dce(gr_module *m, gr_graph *entry, gr_pass_stats *st) {
  bool changed = false;
  gr_graph_vec live = {0};
  gr_compute_fvs(m);
  gr_live_graphs(m, &live);
  sg_map is_live = SG_MAP_INIT;
  for (size_t i = 0; i < live.len; i++) sg_map_put(&is_live, (uintptr_t)live.data[i], NULL);
  for (size_t i = 0; i < m->graphs.len; i++) {
    gr_graph *g = m->graphs.data[i];
    if (!g->dead && (g->parent || g->generated) && !sg_map_get(&is_live, (uintptr_t)g, NULL)) g->dead = true;
  }
  gr_node_vec sched = {0};
  /* a node of g may also be needed by a nested graph as a free variable */
  sg_map needed = SG_MAP_INIT;
  for (size_t i = 0; i < live.len; i++) {
    gr_graph *g = live.data[i];
    gr_schedule(g, &sched);
    for (size_t k = 0; k < sched.len; k++) sg_map_put(&needed, (uintptr_t)sched.data[k], NULL);
    for (size_t k = 0; k < g->fvs.len; k++) sg_map_put(&needed, (uintptr_t)g->fvs.data[k], NULL);
  }
  for (size_t i = 0; i < live.len; i++) {
    gr_graph *g = live.data[i];
    size_t w = 0;
    for (size_t k = 0; k < g->nodes.len; k++) {
      gr_node *n = g->nodes.data[k];
      if (n->dead) continue;
      if (sg_map_get(&needed, (uintptr_t)n, NULL)) {
        g->nodes.data[w++] = n;
        continue;
      }
      n->dead = true;
      st->dead_removed++;
      changed = true;
    }
    g->nodes.len = w;
  }
  /* drop the edges of dead nodes so use lists stay exact */
  for (size_t i = 0; i < m->all_nodes.len; i++) {
    gr_node *n = m->all_nodes.data[i];
    if (n->kind != GR_APPLY || !n->dead || n->ninputs == 0) continue;
    for (int k = 0; k < n->ninputs; k++) {
      gr_node *in = n->inputs[k];
      for (size_t u = 0; u < in->uses.len; u++)
        if (in->uses.data[u].user == n && in->uses.data[u].index == k) {
          in->uses.data[u] = in->uses.data[--in->uses.len];
          break;
        }
    }
    n->ninputs = 0;
  }
  sg_map_free(&needed);
  sg_map_free(&is_live);
  sg_vec_free(&sched);
  sg_vec_free(&live);
  (void)entry;
  return changed;
}
