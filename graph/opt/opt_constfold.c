// SPDX-License-Identifier: Apache-2.0
/*
 * opt_constfold.c — constant folding and propagation:
 *   - a pure primitive applied to constants is evaluated now, by the fold function the
 *     caller hands in (the executor's CPU kernels; results up to 4096 elements; an
 *     error is left for run time, where it is reported with its location);
 *   - a node whose inferred value is a known scalar constant becomes that constant;
 *   - `if` on a constant condition becomes a call of the taken branch (which the
 *     inliner then splices in).
 */
#include "opt_util.h"

static gr_node *const_like(gr_module *m, gr_node *at, gr_val v) {
  gr_node *c = gr_const_new(m, v);
  c->line = at->line;
  c->col = at->col;
  return c;
}

bool gr_opt_constfold(gr_module *m, gr_graph *entry, gr_fold_fn fold, gr_pass_stats *st) {
  bool changed = false;
  gr_graph_vec live = {0};
  gr_live_graphs(m, &live);
  gr_node_vec sched = {0};
  for (size_t i = 0; i < live.len && !sg_watch_stopped(); i++) {
    gr_graph *g = live.data[i];
    gr_schedule(g, &sched);
    for (size_t k = 0; k < sched.len; k++) {
      gr_node *n = sched.data[k];
      const gr_op *op = gr_node_prim(n);
      if (!op) continue;
      if (op == gr_op_if && n->inputs[1]->kind == GR_CONST) {
        bool t;
        if (!gv_truthy(&n->inputs[1]->value, &t)) continue;
        gr_node *br = n->inputs[t ? 2 : 3];
        gr_node *call = gr_apply_new(m, g, &br, 1);
        call->line = n->line;
        call->col = n->col;
        gr_replace(m, n, call);
        st->folded++;
        changed = true;
        continue;
      }
      if (!(op->flags & GR_OP_PURE) || op == gr_op_seq) continue;
      if (n->aval && n->aval->kind == GA_SCALAR && n->aval->has_const) {
        gr_replace(m, n, const_like(m, n, n->aval->cval));
        st->folded++;
        changed = true;
        continue;
      }
      bool all_const = true;
      for (int j = 1; j < n->ninputs && all_const; j++)
        all_const = n->inputs[j]->kind == GR_CONST && n->inputs[j]->value.tag != GV_GRAPH;
      if (!all_const || !fold) continue;
      int na = n->ninputs - 1;
      gr_val *args = sg_xcalloc((size_t)na + 1, sizeof(gr_val));
      for (int j = 0; j < na; j++) args[j] = n->inputs[j + 1]->value;
      gr_val r;
      sg_error e = SG_ERROR_INIT;
      sg_code rc = fold(op, args, na, &r, &e);
      free(args);
      sg_error_clear(&e);
      if (rc) continue;
      if (r.tag == GV_TENSOR && r.u.t->size > 4096) {
        gv_release(r);
        continue;
      }
      gr_replace(m, n, const_like(m, n, r));
      st->folded++;
      changed = true;
    }
  }
  sg_vec_free(&sched);
  sg_vec_free(&live);
  (void)entry;
  return changed;
}
