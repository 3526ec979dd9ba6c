// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_state.c — the state a functional form of an if / while / for threads
 * (AutoGraph's loop variables and branch outputs), combining activity, liveness and
 * reaching definitions as the control-flow pass needs them.
 */
#include "analysis_priv.h"

py_cf_state py_an_cf_state(py_an *an, const py_stmt *s) {
  py_cf_state r = {{0, NULL}, {0, NULL}};
  if (!s || !an_stmt_info_get(an, s)) return r;
  py_symset modified, live;
  switch (s->kind) {
  case PY_K_If:
    modified = py_symset_union(an, py_an_block_activity(an, s->v.If.body).modified,
                               py_an_block_activity(an, s->v.If.orelse).modified);
    live = py_an_live_out(an, s);
    break;
  case PY_K_While:
    modified = py_symset_union(an, py_an_expr_activity(an, s->v.While.test, s).modified,
                               py_an_block_activity(an, s->v.While.body).modified);
    live = py_symset_union(an, py_an_live_in(an, s), py_an_live_out(an, s));
    break;
  case PY_K_For:
  case PY_K_AsyncFor:
    modified = py_symset_union(an, py_an_expr_activity(an, s->v.For.target, s).modified,
                               py_an_block_activity(an, s->v.For.body).modified);
    live = py_symset_union(an, py_an_live_in(an, s), py_an_live_out(an, s));
    break;
  default:
    return r;
  }
  r.state = py_symset_inter(an, modified, live);
  const py_scope *sc = py_an_scope_of(an, s);
  py_symset defined = py_an_defined_in(an, s);
  an_col_clear(&an->scratch);
  for (int i = 0; i < r.state.n; i++) {
    py_sym x = r.state.a[i];
    py_sym root = an->syms.data[x].root;
    if (sc && py_symset_has(sc->locals, root) && !py_symset_has(defined, root == x ? x : root))
      sg_vec_push(&an->scratch.read, x);
  }
  r.undefined = an_symset_from(an, an->scratch.read.data, an->scratch.read.len);
  return r;
}
