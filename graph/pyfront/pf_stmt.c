// SPDX-License-Identifier: Apache-2.0
/*
 * pf_stmt.c — statements and blocks (pf_int.h explains cursors, frames and the two
 * forms of `if`). One function per statement kind; the statement nesting is bounded by
 * the tokenizer's indentation limit, expressions by PF_MAX_DEPTH.
 */
#include <stdio.h>
#include <string.h>

#include "pf_int.h"

typedef struct pf_loc {
  py_kind kind;
  int lineno, col_offset;
} pf_loc;

/* ------------------------------------------------------------------ cursors */

void pf_cur_init(pf_cur *c, pf_fn *F, gr_graph *g, gr_node **env, int nenv, pf_frame *frame) {
  memset(c, 0, sizeof *c);
  c->F = F;
  c->g = g;
  c->env = env;
  c->nenv = nenv;
  c->cap = nenv;
  c->frame = frame;
  c->wrap = -1;
}

void pf_cur_free(pf_cur *c) { sg_vec_free(&c->effects); }

gr_node **pf_env_copy(pf_cur *c) {
  int n = c->nenv > c->F->nslots ? c->nenv : c->F->nslots;
  gr_node **e = sg_arena_calloc(&c->F->M->tmp, (size_t)n + 1, sizeof(gr_node *));
  if (c->nenv) memcpy(e, c->env, sizeof(gr_node *) * (size_t)c->nenv);
  return e;
}

void pf_env_sync(pf_cur *c) {
  int want = c->F->nslots;
  if (c->nenv >= want) return;
  if (c->cap < want) {
    int cap = want + want / 2 + 8;
    gr_node **e = sg_arena_calloc(&c->F->M->tmp, (size_t)cap, sizeof(gr_node *));
    if (c->nenv) memcpy(e, c->env, sizeof(gr_node *) * (size_t)c->nenv);
    c->env = e;
    c->cap = cap;
  }
  c->nenv = want;
}

/* A cursor over a new graph h with the same function, frame and bindings (a copy). */
static void sub_cursor(pf_cur *sub, pf_cur *c, gr_graph *h, bool copy_env) {
  pf_cur_init(sub, c->F, h, copy_env ? pf_env_copy(c) : c->env, c->nenv, c->frame);
  if (copy_env) sub->cap = c->nenv > c->F->nslots ? c->nenv : c->F->nslots;
  sub->stmt = c->stmt;
  sub->blk = c->blk;
  sub->blk_i = c->blk_i;
  sub->module_scope = c->module_scope;
  sub->wrap = c->wrap;
  sub->wrap_vars = c->wrap_vars;
}

/* ------------------------------------------------------------------- nodes */

gr_node *pf_located(gr_node *n, const void *at) {
  const pf_loc *l = at;
  if (n && at && !n->line) {
    n->line = l->lineno;
    n->col = l->col_offset + 1;
  }
  return n;
}

gr_node *pf_const(pf_cur *c, gr_val v, const void *at) {
  return pf_located(gr_const_new(c->F->M->m, v), at);
}

gr_node *pf_none(pf_cur *c, const void *at) { return pf_const(c, gv_none(), at); }

gr_node *pf_graph_const(pf_cur *c, gr_graph *g, const void *at) {
  return pf_const(c, (gr_val){.tag = GV_GRAPH, .u.g = g}, at);
}

gr_node *pf_prim(pf_cur *c, const char *op, const void *at) {
  const gr_op *o = gr_op_lookup(op);
  return pf_const(c, (gr_val){.tag = GV_PRIM, .u.op = o}, at);
}

static bool may_have_effects(const gr_node *head) {
  return !(head->kind == GR_CONST && head->value.tag == GV_PRIM && (head->value.u.op->flags & GR_OP_PURE));
}

gr_node *pf_apply(pf_cur *c, gr_node **in, int n, const void *at) {
  pf_module *M = c->F->M;
  if (pf_failed(M)) return NULL;
  for (int i = 0; i < n; i++)
    if (!in[i]) return NULL;
  if ((int)M->m->all_nodes.len >= M->m->max_nodes) {
    const pf_loc *l = at;
    pf_error(M, false, SG_RESOURCE_EXHAUSTED, l ? l->lineno : 1, l ? l->col_offset : 0,
             "graph node limit (%d nodes) exceeded", M->m->max_nodes);
    return NULL;
  }
  gr_node *r = pf_located(gr_apply_new(M->m, c->g, in, n), at);
  if (may_have_effects(in[0])) sg_vec_push(&c->effects, r);
  return r;
}

gr_node *pf_call_prim(pf_cur *c, const char *op, gr_node **args, int n, const void *at) {
  gr_node *in[8];
  if (n > 7) return NULL;
  in[0] = pf_prim(c, op, at);
  for (int i = 0; i < n; i++) in[i + 1] = args[i];
  return pf_apply(c, in, n + 1, at);
}

/* Does out depend on e (through nodes of out's graph)? */
static bool depends_on(gr_node *out, gr_node *e) {
  SG_VEC(gr_node *) stack = {0};
  sg_map seen = SG_MAP_INIT;
  bool found = false;
  sg_vec_push(&stack, out);
  while (stack.len && !found) {
    gr_node *n = sg_vec_pop(&stack);
    if (n == e) found = true;
    if (n->kind != GR_APPLY || n->graph != e->graph || sg_map_get(&seen, (uintptr_t)n, NULL)) continue;
    sg_map_put(&seen, (uintptr_t)n, NULL);
    for (int i = 0; i < n->ninputs; i++) sg_vec_push(&stack, n->inputs[i]);
  }
  sg_vec_free(&stack);
  sg_map_free(&seen);
  return found;
}

void pf_set_output(pf_cur *c, gr_node *out, const void *at) {
  if (!out) return;
  size_t k = 0;
  for (size_t i = 0; i < c->effects.len; i++)
    if (c->effects.data[i] != out) c->effects.data[k++] = c->effects.data[i];
  /* one effect that the output uses anyway runs in its place: no seq needed (with more,
   * the seq keeps their program order, which the output's inputs need not follow) */
  if (k == 1 && depends_on(out, c->effects.data[0])) k = 0;
  gr_node *o = out;
  if (k) {
    gr_node **in = sg_xmalloc(sizeof(gr_node *) * (k + 2));
    in[0] = pf_prim(c, "seq", at);
    memcpy(in + 1, c->effects.data, sizeof(gr_node *) * k);
    in[k + 1] = out;
    o = pf_located(gr_apply_new(c->F->M->m, c->g, in, (int)k + 2), at);
    free(in);
  }
  c->effects.len = 0;
  gr_set_output(c->g, o);
  c->done = true;
}

gr_graph *pf_branch_graph(pf_cur *c, const char *what, const void *at) {
  char name[64];
  snprintf(name, sizeof name, "%s_L%d", what, at ? ((const pf_loc *)at)->lineno : 0);
  gr_graph *h = gr_graph_new(c->F->M->m, pf_intern(c->F->M, name), c->g);
  h->is_branch = true;
  if (at) {
    h->line = ((const pf_loc *)at)->lineno;
    h->col = ((const pf_loc *)at)->col_offset + 1;
  }
  return h;
}

gr_node *pf_if_value(pf_cur *c, gr_node *cond, pf_branch_fn then_fn, void *then_arg, pf_branch_fn else_fn,
                     void *else_arg, const void *at) {
  if (!cond) return NULL;
  gr_node *in[4] = {pf_prim(c, "if", at), cond, NULL, NULL};
  for (int k = 0; k < 2; k++) {
    gr_graph *h = pf_branch_graph(c, k ? "else" : "then", at);
    pf_cur sub;
    sub_cursor(&sub, c, h, false); /* expressions bind nothing: the bindings are shared */
    gr_node *o = k ? else_fn(&sub, else_arg) : then_fn(&sub, then_arg);
    pf_set_output(&sub, o, at);
    pf_cur_free(&sub);
    if (!o) return NULL;
    in[2 + k] = pf_graph_const(c, h, at);
  }
  return pf_apply(c, in, 4, at);
}

/* ------------------------------------------------------------------ jumps */

bool pf_block_jumps(const py_seq *stmts, bool loop_jumps) {
  for (int i = 0; i < PY_SEQ_LEN(stmts); i++) {
    const py_stmt *s = stmts->a[i];
    switch (s->kind) {
    case PY_K_Return:
    case PY_K_Raise: return true;
    case PY_K_Break:
    case PY_K_Continue:
      if (loop_jumps) return true;
      break;
    case PY_K_If:
      if (pf_block_jumps(s->v.If.body, loop_jumps) || pf_block_jumps(s->v.If.orelse, loop_jumps)) return true;
      break;
    case PY_K_While:
      if (pf_block_jumps(s->v.While.body, false) || pf_block_jumps(s->v.While.orelse, loop_jumps)) return true;
      break;
    case PY_K_For:
      if (pf_block_jumps(s->v.For.body, false) || pf_block_jumps(s->v.For.orelse, loop_jumps)) return true;
      break;
    default: break;
    }
  }
  return false;
}

/* Does the block hold a statement of kind k (break: not inside nested loops' bodies)? */
static bool block_has(const py_seq *stmts, py_kind k) {
  for (int i = 0; i < PY_SEQ_LEN(stmts); i++) {
    const py_stmt *s = stmts->a[i];
    if (s->kind == k) return true;
    switch (s->kind) {
    case PY_K_If:
      if (block_has(s->v.If.body, k) || block_has(s->v.If.orelse, k)) return true;
      break;
    case PY_K_While:
      if ((k == PY_K_Return && block_has(s->v.While.body, k)) || block_has(s->v.While.orelse, k)) return true;
      break;
    case PY_K_For:
      if ((k == PY_K_Return && block_has(s->v.For.body, k)) || block_has(s->v.For.orelse, k)) return true;
      break;
    default: break;
    }
  }
  return false;
}

bool pf_has_return(const py_seq *stmts) { return block_has(stmts, PY_K_Return); }
bool pf_has_break(const py_seq *stmts) { return block_has(stmts, PY_K_Break); }

void pf_finish(pf_cur *c, pf_jump j, gr_node *value, const void *at) {
  pf_frame *fr = c->frame;
  pf_module *M = c->F->M;
  if (pf_failed(M)) return;
  gr_node *out;
  if (!fr->loop) {
    if (j == PF_BREAK || j == PF_CONTINUE) {
      PF_INVALID(M, (const pf_loc *)at, "'%s' outside loop", j == PF_BREAK ? "break" : "continue");
      return;
    }
    out = j == PF_RETURN ? value : pf_none(c, at);
  } else {
    pf_env_sync(c);
    if (j == PF_BREAK) c->env[fr->brk] = pf_const(c, gv_bool(true), at);
    if (j == PF_RETURN) {
      c->env[fr->ret] = pf_const(c, gv_bool(true), at);
      c->env[fr->retval] = value;
    }
    gr_node **in = sg_xcalloc((size_t)fr->nstate + 1, sizeof(gr_node *));
    in[0] = pf_prim(c, "tuple", at);
    for (int i = 0; i < fr->nstate; i++) {
      gr_node *v = c->env[fr->state[i]];
      in[i + 1] = !v ? pf_none(c, at) : v->kind == GR_CONST ? pf_const(c, gv_retain(v->value), at) : v;
    }
    out = pf_apply(c, in, fr->nstate + 1, at);
    free(in);
  }
  pf_end_frame(c, out, at);
}

/* ------------------------------------------------------------------- if */

int pf_state_slots(pf_cur *c, py_symset set, int **out) {
  pf_module *M = c->F->M;
  int *v = sg_arena_alloc(&M->tmp, sizeof(int) * (size_t)(set.n + 1));
  int n = 0;
  for (int i = 0; i < set.n; i++) {
    const py_sym_info *si = py_an_sym_info(M->an, set.a[i]);
    if (si->kind != PY_QN_NAME || !py_symset_has(c->F->scope->locals, set.a[i])) continue;
    v[n++] = pf_slot(c->F, si->name);
  }
  pf_env_sync(c);
  *out = v;
  return n;
}

static gr_node *env_value(pf_cur *c, int slot, const void *at) {
  gr_node *v = slot < c->nenv ? c->env[slot] : NULL;
  if (!v) return pf_none(c, at); /* unbound here: never read (definite assignment) */
  return v->kind == GR_CONST ? pf_const(c, gv_retain(v->value), at) : v;
}

/* Does the block always end in a jump (the rest of it, and what follows, is dead)? */
static bool always_jumps(const py_seq *stmts) {
  for (int i = 0; i < PY_SEQ_LEN(stmts); i++) {
    const py_stmt *s = stmts->a[i];
    switch (s->kind) {
    case PY_K_Return:
    case PY_K_Raise:
    case PY_K_Break:
    case PY_K_Continue: return true;
    case PY_K_If:
      if (always_jumps(s->v.If.body) && always_jumps(s->v.If.orelse)) return true;
      break;
    default: break;
    }
  }
  return false;
}

/* (tuple E...) in the cursor's graph; a constant element gets its own node */
static gr_node *tuple_of(pf_cur *c, gr_node **items, int n, const void *at) {
  gr_node **in = sg_xcalloc((size_t)n + 1, sizeof(gr_node *));
  in[0] = pf_prim(c, "tuple", at);
  for (int i = 0; i < n; i++)
    in[i + 1] = items[i]->kind == GR_CONST ? pf_const(c, gv_retain(items[i]->value), at) : items[i];
  gr_node *r = pf_apply(c, in, n + 1, at);
  free(in);
  return r;
}

/* (tuple LEAD... V1 ...): nlead leading items, then the cursor's bindings of vars */
static gr_node *vars_tuple(pf_cur *c, gr_node **lead, int nlead, const int *vars, int nv, const void *at) {
  gr_node **items = sg_xcalloc((size_t)(nlead + nv) + 1, sizeof(gr_node *));
  for (int i = 0; i < nlead; i++) items[i] = lead[i];
  for (int i = 0; i < nv; i++) items[nlead + i] = env_value(c, vars[i], at);
  gr_node *r = tuple_of(c, items, nlead + nv, at);
  free(items);
  return r;
}

void pf_end_frame(pf_cur *c, gr_node *value, const void *at) {
  if (c->wrap < 0) {
    pf_set_output(c, value, at);
    return;
  }
  /* a branch of a flag-form if (below): (tuple true VALUE state...) */
  gr_node *lead[2] = {pf_const(c, gv_bool(true), at), value};
  pf_set_output(c, vars_tuple(c, lead, 2, c->wrap_vars, c->wrap, at), at);
}

/* Moves the cursor into the (empty) branch graph h: what follows continues there. */
static void continue_in(pf_cur *c, gr_graph *h) {
  c->g = h;
  c->effects.len = 0;
  c->done = false;
}

sg_code pf_lower_if_parts(pf_cur *c, gr_node *cond, const py_seq *then_b, const py_seq *else_b, py_symset state,
                          const void *at) {
  pf_module *M = c->F->M;
  if (!cond) return M->err->code;
  const py_seq *blk[2] = {then_b, else_b};
  bool cps = pf_block_jumps(then_b, true) || pf_block_jumps(else_b, true);
  bool dead[2] = {always_jumps(then_b), always_jumps(else_b)};
  int *vars;
  int nv = pf_state_slots(c, state, &vars);
  gr_node *in[4] = {pf_prim(c, "if", at), cond, NULL, NULL};
  gr_graph *h[2];
  /* one branch always jumps: the other goes on with what follows the if, in its graph */
  if (cps && dead[0] != dead[1]) {
    int j = dead[0] ? 0 : 1;
    for (int b = 0; b < 2; b++) {
      h[b] = pf_branch_graph(c, b ? "else" : "then", at);
      in[2 + b] = pf_graph_const(c, h[b], at);
    }
    pf_cur sub;
    sub_cursor(&sub, c, h[j], true);
    pf_lower_stmts(&sub, blk[j]);
    bool jumped = sub.done;
    pf_cur_free(&sub);
    if (pf_failed(M)) return M->err->code;
    if (!jumped) return PF_INVALID(M, (const pf_loc *)at, "internal: a branch that always jumps fell through");
    pf_set_output(c, pf_apply(c, in, 4, at), at);
    continue_in(c, h[1 - j]);
    return pf_lower_stmts(c, blk[1 - j]);
  }
  /* a branch that may fall through returns the state; a structured if binds it. In the
   * flag form (jumps, and either branch may fall through) it returns (tuple JUMPED
   * FRAME-VALUE state...) and what follows runs unless JUMPED. */
  bool flags = cps && !(dead[0] && dead[1]);
  for (int b = 0; b < 2; b++) {
    h[b] = pf_branch_graph(c, b ? "else" : "then", at);
    pf_cur sub;
    sub_cursor(&sub, c, h[b], true);
    if (flags) {
      sub.wrap = nv;
      sub.wrap_vars = vars;
    }
    pf_lower_stmts(&sub, blk[b]);
    if (!pf_failed(M) && !sub.done) {
      gr_node *lead[2] = {pf_const(&sub, gv_bool(false), at), pf_none(&sub, at)};
      gr_node *out = flags ? vars_tuple(&sub, lead, 2, vars, nv, at)
                     : nv  ? vars_tuple(&sub, NULL, 0, vars, nv, at)
                           : pf_none(&sub, at);
      pf_set_output(&sub, out, at);
    }
    pf_cur_free(&sub);
    if (pf_failed(M)) return M->err->code;
    in[2 + b] = pf_graph_const(c, h[b], at);
  }
  gr_node *r = pf_apply(c, in, 4, at);
  if (!r) return M->err->code;
  if (cps && !flags) { /* both branches jump */
    pf_set_output(c, r, at);
    return SG_OK;
  }
  int off = flags ? 2 : 0;
  for (int i = 0; i < nv; i++) {
    gr_node *gi[3] = {pf_prim(c, "getitem", at), r, pf_const(c, gv_int(i + off), at)};
    pf_bind(c, vars[i], pf_apply(c, gi, 3, at));
  }
  if (!flags) return pf_failed(M) ? M->err->code : SG_OK;
  gr_node *g0[3] = {pf_prim(c, "getitem", at), r, pf_const(c, gv_int(0), at)};
  gr_node *g1[3] = {pf_prim(c, "getitem", at), r, pf_const(c, gv_int(1), at)};
  gr_node *jumped = pf_apply(c, g0, 3, at), *value = pf_apply(c, g1, 3, at);
  gr_graph *ht = pf_branch_graph(c, "then", at), *he = pf_branch_graph(c, "else", at);
  pf_cur sub;
  sub_cursor(&sub, c, ht, false);
  pf_end_frame(&sub, value, at);
  pf_cur_free(&sub);
  gr_node *in2[4] = {pf_prim(c, "if", at), jumped, pf_graph_const(c, ht, at), pf_graph_const(c, he, at)};
  pf_set_output(c, pf_apply(c, in2, 4, at), at);
  continue_in(c, he);
  return pf_failed(M) ? M->err->code : SG_OK;
}

/* ----------------------------------------------------------- assignment */

sg_code pf_assign(pf_cur *c, const py_expr *t, gr_node *value) {
  pf_module *M = c->F->M;
  if (!value) return M->err->code;
  switch (t->kind) {
  case PY_K_Name: pf_bind(c, pf_slot(c->F, t->v.Name.id), value); return SG_OK;
  case PY_K_Tuple:
  case PY_K_List: {
    const py_seq *elts = t->kind == PY_K_Tuple ? t->v.Tuple.elts : t->v.List.elts;
    int n = PY_SEQ_LEN(elts);
    for (int i = 0; i < n; i++)
      if (((const py_expr *)elts->a[i])->kind == PY_K_Starred)
        return PF_UNSUPPORTED(M, (const py_expr *)elts->a[i], "starred assignment target (*x) is outside the subset");
    const gr_op *op = gr_node_prim(value);
    bool literal = op && !strcmp(op->name, "tuple") && value->ninputs == n + 1;
    if (!literal) { /* Python checks the count: ValueError when it differs */
      gr_node *len = pf_call_prim(c, "len", &value, 1, t);
      gr_node *eq[2] = {len, pf_const(c, gv_int(n), t)};
      char msg[96];
      snprintf(msg, sizeof msg, "ValueError: cannot unpack: expected %d value%s", n, n == 1 ? "" : "s");
      gr_node *a[2] = {pf_call_prim(c, "==", eq, 2, t),
                       pf_const(c, (gr_val){.tag = GV_STR, .u.s = pf_intern(M, msg)}, t)};
      pf_call_prim(c, "assert", a, 2, t);
    }
    gr_node **items = sg_xcalloc((size_t)n + 1, sizeof(gr_node *));
    for (int i = 0; i < n; i++) {
      if (literal) {
        items[i] = value->inputs[i + 1];
        if (items[i]->kind == GR_CONST) items[i] = pf_const(c, gv_retain(items[i]->value), t);
      } else {
        gr_node *gi[3] = {pf_prim(c, "getitem", t), value, pf_const(c, gv_int(i), t)};
        items[i] = pf_apply(c, gi, 3, t);
      }
    }
    sg_code rc = SG_OK;
    for (int i = 0; i < n && !rc; i++) rc = pf_assign(c, elts->a[i], items[i]);
    free(items);
    return pf_failed(M) ? M->err->code : rc;
  }
  case PY_K_Attribute:
    return PF_UNSUPPORTED(M, t, "assignment to an attribute (%s = ...) mutates an object: outside the subset",
                          t->v.Attribute.attr);
  case PY_K_Subscript:
    return PF_UNSUPPORTED(M, t,
                          "assignment to an item or slice (x[i] = ...) mutates a value: outside the subset (build a "
                          "new value, e.g. with stagd.slice_update)");
  default: return PF_UNSUPPORTED(M, t, "this assignment target is outside the subset");
  }
}

/* --------------------------------------------------------------- statements */

static sg_code lower_def(pf_cur *c, const py_stmt *s) {
  pf_module *M = c->F->M;
  pf_fn *G = pf_nested_fn(M, c->F, s);
  G->graph->parent = c->g;
  G->parent_env = pf_env_copy(c);
  G->parent_nenv = c->nenv;
  G->parent_stmt = s;
  G->parent_block = c->blk;
  G->parent_index = c->blk_i;
  pf_bind(c, pf_slot(c->F, s->v.FunctionDef.name), pf_graph_const(c, G->graph, s));
  return pf_lower_function(G);
}

static sg_code lower_augassign(pf_cur *c, const py_stmt *s) {
  pf_module *M = c->F->M;
  const py_expr *t = s->v.AugAssign.target;
  if (t->kind != PY_K_Name)
    return pf_assign(c, t, pf_none(c, s)); /* the same diagnostics as x.a = / x[i] = */
  pf_ref r;
  if (!pf_resolve(c, t, t->v.Name.id, &r)) return M->err->code;
  if (r.kind != PF_REF_NODE) return PF_INVALID(M, t, "local variable '%s' referenced before assignment", t->v.Name.id);
  gr_node *v = pf_expr(c, s->v.AugAssign.value);
  if (!v) return M->err->code;
  gr_node *nv = pf_binop(c, s->v.AugAssign.op, r.node, v, s);
  if (!nv) return M->err->code;
  pf_bind(c, pf_slot(c->F, t->v.Name.id), nv);
  return SG_OK;
}

static gr_node *str_const(pf_cur *c, const char *s, const void *at) {
  return pf_const(c, (gr_val){.tag = GV_STR, .u.s = pf_intern(c->F->M, s)}, at);
}

static sg_code lower_assert(pf_cur *c, const py_stmt *s) {
  pf_module *M = c->F->M;
  gr_node *a[2] = {pf_expr(c, s->v.Assert.test), NULL};
  if (!a[0]) return M->err->code;
  const py_expr *msg = s->v.Assert.msg;
  if (msg) {
    if (msg->kind != PY_K_Constant || msg->v.Constant.value.kind != PY_CONST_STR)
      return PF_UNSUPPORTED(M, msg, "an assert message that is not a string constant is outside the subset");
    a[1] = str_const(c, msg->v.Constant.value.s, msg);
  }
  return pf_call_prim(c, "assert", a, msg ? 2 : 1, s) ? SG_OK : M->err->code;
}

/* raise E / raise E("message"): the program stops with that message, located here. */
static sg_code lower_raise(pf_cur *c, const py_stmt *s) {
  pf_module *M = c->F->M;
  const py_expr *e = s->v.Raise.exc;
  if (!e) return PF_UNSUPPORTED(M, s, "a bare 'raise' (re-raise) is outside the subset");
  if (s->v.Raise.cause) return PF_UNSUPPORTED(M, s->v.Raise.cause, "'raise ... from ...' is outside the subset");
  const py_expr *cls = e->kind == PY_K_Call ? e->v.Call.func : e;
  const py_seq *args = e->kind == PY_K_Call ? e->v.Call.args : NULL;
  pf_ref r;
  if (cls->kind != PY_K_Name || PY_SEQ_LEN(args) > 1 || (e->kind == PY_K_Call && PY_SEQ_LEN(e->v.Call.keywords)))
    return PF_UNSUPPORTED(M, e, "raise is in the subset only as 'raise E' or 'raise E(\"message\")'");
  if (!pf_resolve(c, cls, cls->v.Name.id, &r)) return M->err->code;
  if (r.kind != PF_REF_BUILTIN)
    return PF_UNSUPPORTED(M, cls, "raise of '%s', which is not a builtin exception, is outside the subset",
                          cls->v.Name.id);
  sg_buf m = SG_BUF_INIT;
  sg_buf_puts(&m, cls->v.Name.id);
  if (PY_SEQ_LEN(args)) {
    const py_expr *a = args->a[0];
    if (a->kind != PY_K_Constant || a->v.Constant.value.kind != PY_CONST_STR) {
      sg_buf_free(&m);
      return PF_UNSUPPORTED(M, a, "an exception message that is not a string constant is outside the subset");
    }
    sg_buf_printf(&m, ": %s", a->v.Constant.value.s);
  }
  gr_node *in[2] = {pf_const(c, gv_bool(false), s), str_const(c, m.data, s)};
  sg_buf_free(&m);
  if (!pf_call_prim(c, "assert", in, 2, s)) return M->err->code;
  pf_finish(c, PF_FALL, NULL, s);
  return pf_failed(M) ? M->err->code : SG_OK;
}

static const char *unsupported_stmt(py_kind k) {
  switch (k) {
  case PY_K_AsyncFunctionDef: return "'async def'";
  case PY_K_ClassDef: return "a class definition";
  case PY_K_Delete: return "'del'";
  case PY_K_TypeAlias: return "a 'type' alias";
  case PY_K_AsyncFor: return "'async for'";
  case PY_K_With: return "'with'";
  case PY_K_AsyncWith: return "'async with'";
  case PY_K_Match: return "'match'";
  case PY_K_Try:
  case PY_K_TryStar: return "'try'";
  case PY_K_Import:
  case PY_K_ImportFrom: return "an import inside a function (import at module level)";
  case PY_K_Global: return "'global' (module variables are constants in the subset)";
  case PY_K_Nonlocal: return "'nonlocal' (closures cannot assign variables of enclosing functions)";
  default: return "this statement";
  }
}

static sg_code lower_stmt(pf_cur *c, const py_stmt *s) {
  pf_module *M = c->F->M;
  switch (s->kind) {
  case PY_K_FunctionDef: return lower_def(c, s);
  case PY_K_Return: {
    gr_node *v = s->v.Return.value ? pf_expr(c, s->v.Return.value) : pf_none(c, s);
    if (!v) return M->err->code;
    pf_finish(c, PF_RETURN, v, s);
    return pf_failed(M) ? M->err->code : SG_OK;
  }
  case PY_K_Assign: {
    gr_node *v = pf_expr(c, s->v.Assign.value);
    for (int i = 0; v && i < PY_SEQ_LEN(s->v.Assign.targets); i++)
      if (pf_assign(c, s->v.Assign.targets->a[i], v)) break;
    return pf_failed(M) ? M->err->code : SG_OK;
  }
  case PY_K_AugAssign: return lower_augassign(c, s);
  case PY_K_AnnAssign:
    if (!s->v.AnnAssign.value) return SG_OK;
    return pf_assign(c, s->v.AnnAssign.target, pf_expr(c, s->v.AnnAssign.value));
  case PY_K_Expr:
    if (s->v.Expr.value->kind == PY_K_Constant) return SG_OK; /* a docstring */
    return pf_expr(c, s->v.Expr.value) ? SG_OK : M->err->code;
  case PY_K_If:
    return pf_lower_if_parts(c, pf_expr(c, s->v.If.test), s->v.If.body, s->v.If.orelse,
                             py_an_cf_state(M->an, s).state, s);
  case PY_K_While: return pf_lower_while(c, s);
  case PY_K_For: return pf_lower_for(c, s);
  case PY_K_Break:
  case PY_K_Continue:
    pf_finish(c, s->kind == PY_K_Break ? PF_BREAK : PF_CONTINUE, NULL, s);
    return pf_failed(M) ? M->err->code : SG_OK;
  case PY_K_Pass: return SG_OK;
  case PY_K_Assert: return lower_assert(c, s);
  case PY_K_Raise: return lower_raise(c, s);
  default: return PF_UNSUPPORTED(M, s, "%s is outside the subset", unsupported_stmt(s->kind));
  }
}

sg_code pf_lower_stmts(pf_cur *c, const py_seq *stmts) {
  pf_module *M = c->F->M;
  for (int i = 0; i < PY_SEQ_LEN(stmts) && !c->done; i++) {
    c->stmt = stmts->a[i];
    c->blk = stmts;
    c->blk_i = i;
    if (lower_stmt(c, stmts->a[i])) return M->err->code;
  }
  return SG_OK;
}

/* ------------------------------------------------------------- functions */

static bool constant_default(const py_expr *e) {
  if (e->kind == PY_K_Constant) return e->v.Constant.value.kind != PY_CONST_COMPLEX &&
                                        e->v.Constant.value.kind != PY_CONST_BYTES &&
                                        e->v.Constant.value.kind != PY_CONST_ELLIPSIS;
  if (e->kind == PY_K_UnaryOp && (e->v.UnaryOp.op == PY_USub || e->v.UnaryOp.op == PY_UAdd))
    return e->v.UnaryOp.operand->kind == PY_K_Constant;
  if (e->kind == PY_K_Tuple) {
    for (int i = 0; i < PY_SEQ_LEN(e->v.Tuple.elts); i++)
      if (!constant_default(e->v.Tuple.elts->a[i])) return false;
    return true;
  }
  return false;
}

static sg_code check_signature(pf_fn *F) {
  pf_module *M = F->M;
  const pf_loc *l = F->node;
  const char *what = l->kind == PY_K_Lambda ? "lambda" : "def";
  if (l->kind == PY_K_AsyncFunctionDef) return PF_UNSUPPORTED(M, l, "'async def' is outside the subset");
  if (l->kind == PY_K_FunctionDef) {
    const py_stmt *d = F->node;
    if (PY_SEQ_LEN(d->v.FunctionDef.decorator_list))
      return PF_UNSUPPORTED(M, (const py_expr *)d->v.FunctionDef.decorator_list->a[0],
                            "decorators are outside the subset (the daemon stages the function as written)");
    if (PY_SEQ_LEN(d->v.FunctionDef.type_params))
      return PF_UNSUPPORTED(M, d, "type parameters (def f[T]) are outside the subset");
  }
  const py_arguments *a = F->args;
  if (a->vararg) return PF_UNSUPPORTED(M, a->vararg, "*%s parameters are outside the subset", a->vararg->arg);
  if (a->kwarg) return PF_UNSUPPORTED(M, a->kwarg, "**%s parameters are outside the subset", a->kwarg->arg);
  if (PY_SEQ_LEN(a->kwonlyargs))
    return PF_UNSUPPORTED(M, (const py_arg *)a->kwonlyargs->a[0], "keyword-only parameters are outside the subset");
  for (int i = 0; i < PY_SEQ_LEN(a->defaults); i++)
    if (!constant_default(a->defaults->a[i]))
      return PF_UNSUPPORTED(M, (const py_expr *)a->defaults->a[i],
                            "a %s default value that is not a constant (a number, bool, None, string or tuple of "
                            "those) is outside the subset",
                            what);
  return SG_OK;
}

sg_code pf_lower_function(pf_fn *F) {
  pf_module *M = F->M;
  if (F->lowered) return SG_OK;
  F->lowered = true;
  const pf_loc *l = F->node;
  if (++M->depth > PF_MAX_DEPTH) {
    M->depth--;
    return PF_INVALID(M, l, "functions nested deeper than %d levels", PF_MAX_DEPTH);
  }
  sg_code rc = check_signature(F);
  pf_frame fr = {0};
  pf_cur c;
  pf_cur_init(&c, F, F->graph, NULL, 0, &fr);
  const py_arguments *a = F->args;
  for (int part = 0; part < 2 && !rc; part++) {
    const py_seq *ps = part ? a->args : a->posonlyargs;
    for (int i = 0; i < PY_SEQ_LEN(ps); i++) {
      const py_arg *p = ps->a[i];
      gr_node *pn = pf_located(gr_param_new(M->m, F->graph, pf_intern(M, p->arg)), p);
      pf_bind(&c, pf_slot(F, p->arg), pn);
    }
  }
  if (!rc && l->kind == PY_K_Lambda) {
    gr_node *out = pf_expr(&c, ((const py_expr *)F->node)->v.Lambda.body);
    if (out) pf_set_output(&c, out, l);
  } else if (!rc) {
    const py_stmt *d = F->node;
    pf_lower_stmts(&c, d->v.FunctionDef.body);
    if (!c.done && !pf_failed(M)) pf_finish(&c, PF_FALL, NULL, d->v.FunctionDef.body->a[d->v.FunctionDef.body->n - 1]);
  }
  pf_cur_free(&c);
  M->depth--;
  return pf_failed(M) ? M->err->code : SG_OK;
}
