// SPDX-License-Identifier: Apache-2.0
/*
 * opt.c — the optimizer driver: runs the passes (each in its own opt_*.c file) to a
 * fixpoint, bounded so a pathological graph cannot loop forever.
 */
#include "opt_util.h"

void gr_optimize(gr_module *m, gr_graph *entry, gr_fold_fn fold, gr_pass_stats *st) {
  /* a request that gives up stops the rounds; the stager then reports it */
  for (int round = 0; round < 8 && !sg_watch_stopped(); round++) {
    bool changed = false;
    changed |= gr_opt_inline(m, entry, st);
    changed |= gr_opt_algebra(m, entry, st);
    changed |= gr_opt_matmul(m, entry, st);
    changed |= gr_opt_constfold(m, entry, fold, st);
    changed |= gr_opt_cse(m, entry, st);
    changed |= gr_opt_dce(m, entry, st);
    if (!changed) break;
  }
}

void gr_sweep(gr_module *m, gr_graph *entry) {
  gr_pass_stats st = {0};
  for (int round = 0; round < 8 && gr_opt_dce(m, entry, &st); round++) {
  }
}
