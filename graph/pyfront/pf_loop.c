// SPDX-License-Identifier: Apache-2.0
/*
 * pf_loop.c — while and for loops as the `while` primitive: (while COND BODY INIT) over
 * a state tuple. The state is the loop's control-flow state from the analyses (the
 * variables the loop changes that the next iteration or the code after it reads),
 * then, as the loop needs them, the iteration counter of a `for`, a break flag, and a
 * return flag with the returned value. COND tests the flags before the loop's test
 * (so the test is not evaluated after a break or a return, as in Python); BODY is a
 * loop frame: every jump in it ends the iteration with the next state (pf_finish).
 * After the loop, a return flag that is set returns from the enclosing frame, and the
 * `else` block runs when no break happened.
 *
 * for x in range(a, b, step) counts with an integer (step a nonzero integer constant);
 * for x in SEQ (a tuple, or a tensor's rows), enumerate(SEQ[, start]) and
 * zip(SEQ, ...) index the sequences, which are evaluated once before the loop.
 */
#include <stdio.h>
#include <string.h>

#include "pf_int.h"

typedef enum { LOOP_WHILE, LOOP_RANGE, LOOP_SEQ } loop_kind;

typedef struct loop {
  const py_stmt *s;
  loop_kind kind;
  const py_seq *body, *orelse;
  const py_expr *target; /* for */
  gr_node *start, *stop; /* range */
  int64_t step;
  gr_node *seqs[8]; /* seq: the sequences (zip: several) */
  int nseq;
  gr_node *count;     /* seq: how many iterations */
  gr_node *enum_from; /* enumerate's start, or NULL */
} loop;

static gr_node *bool_const(pf_cur *c, bool b, const void *at) { return pf_const(c, gv_bool(b), at); }
static gr_node *give_false(pf_cur *c, void *at) { return bool_const(c, false, at); }

typedef struct test_arg {
  loop *L;
  gr_node *counter; /* the counter parameter of COND */
} test_arg;

/* the loop's own test, in COND's (branch) cursor */
static gr_node *loop_test(pf_cur *c, void *arg) {
  test_arg *t = arg;
  loop *L = t->L;
  const py_stmt *s = L->s;
  if (L->kind == LOOP_WHILE) return pf_expr(c, s->v.While.test);
  gr_node *in[2] = {t->counter, L->kind == LOOP_RANGE ? L->stop : L->count};
  return pf_call_prim(c, L->kind == LOOP_RANGE && L->step < 0 ? ">" : "<", in, 2, s);
}

/* At the start of an iteration of a for: the target gets the next item, the counter
 * moves on (so `continue` needs nothing more). */
static sg_code for_prologue(pf_cur *c, loop *L, int counter_slot) {
  pf_module *M = c->F->M;
  const py_stmt *s = L->s;
  gr_node *k = c->env[counter_slot], *item;
  if (L->kind == LOOP_RANGE) {
    item = k;
  } else {
    gr_node *items[8];
    for (int i = 0; i < L->nseq; i++) {
      gr_node *gi[3] = {pf_prim(c, "getitem", s), L->seqs[i], k};
      items[i] = pf_apply(c, gi, 3, s);
    }
    if (L->nseq == 1 && !L->enum_from) {
      item = items[0];
    } else {
      gr_node *in[10];
      int n = 0;
      in[n++] = pf_prim(c, "tuple", s);
      if (L->enum_from) {
        gr_node *add[2] = {k, L->enum_from};
        in[n++] = pf_call_prim(c, "+", add, 2, s);
      }
      for (int i = 0; i < L->nseq; i++) in[n++] = items[i];
      item = pf_apply(c, in, n, s);
    }
  }
  gr_node *next[2] = {k, pf_const(c, gv_int(L->kind == LOOP_RANGE ? L->step : 1), s)};
  gr_node *k1 = pf_call_prim(c, "+", next, 2, s);
  if (!k1 || !item) return M->err->code;
  c->env[counter_slot] = k1;
  return pf_assign(c, L->target, item);
}

static gr_graph *loop_graph(pf_cur *c, const char *what, const py_stmt *s, const int *state, int ns) {
  pf_module *M = c->F->M;
  char name[64];
  snprintf(name, sizeof name, "%s_L%d", what, s->lineno);
  gr_graph *g = gr_graph_new(M->m, pf_intern(M, name), c->g);
  g->line = s->lineno;
  g->col = s->col_offset + 1;
  for (int i = 0; i < ns; i++) pf_located(gr_param_new(M->m, g, c->F->slot_names[state[i]]), s);
  return g;
}

/* A cursor over g (a loop graph) whose state slots are g's parameters. */
static void loop_cursor(pf_cur *sub, pf_cur *c, gr_graph *g, const int *state, int ns, pf_frame *fr) {
  int cap = c->F->nslots;
  gr_node **env = pf_env_copy(c);
  pf_cur_init(sub, c->F, g, env, cap, fr);
  for (int i = 0; i < ns; i++) env[state[i]] = g->params[i];
  sub->stmt = c->stmt;
  sub->blk = c->blk;
  sub->blk_i = c->blk_i;
}

static sg_code lower_loop(pf_cur *c, loop *L, py_symset vars_set) {
  pf_fn *F = c->F;
  pf_module *M = F->M;
  const py_stmt *s = L->s;
  int *vars;
  int nv = pf_state_slots(c, vars_set, &vars);
  bool is_for = L->kind != LOOP_WHILE;
  int counter = is_for ? pf_slot_synthetic(F, "i$") : -1;
  int brk = pf_has_break(L->body) ? pf_slot_synthetic(F, "break$") : -1;
  int ret = pf_has_return(L->body) ? pf_slot_synthetic(F, "return$") : -1;
  int retval = ret >= 0 ? pf_slot_synthetic(F, "result$") : -1;
  pf_env_sync(c);
  int *state = sg_arena_alloc(&M->tmp, sizeof(int) * (size_t)(nv + 5));
  int ns = 0;
  for (int i = 0; i < nv; i++) state[ns++] = vars[i];
  if (counter >= 0) state[ns++] = counter;
  if (brk >= 0) state[ns++] = brk;
  if (ret >= 0) {
    state[ns++] = ret;
    state[ns++] = retval;
  }
  /* the initial state */
  gr_node **init = sg_xcalloc((size_t)ns + 1, sizeof(gr_node *));
  init[0] = pf_prim(c, "tuple", s);
  for (int i = 0; i < ns; i++) {
    int sl = state[i];
    gr_node *v = sl == counter ? (L->kind == LOOP_RANGE ? L->start : pf_const(c, gv_int(0), s))
                 : sl == brk || sl == ret ? bool_const(c, false, s)
                 : sl < c->nenv ? c->env[sl]
                                : NULL;
    init[i + 1] = !v ? pf_none(c, s) : v->kind == GR_CONST ? pf_const(c, gv_retain(v->value), s) : v;
  }
  gr_node *init_t = pf_apply(c, init, ns + 1, s);
  free(init);
  if (!init_t) return M->err->code;

  /* COND: not after a break or a return, then the loop's test */
  gr_graph *cg = loop_graph(c, "cond", s, state, ns);
  pf_cur cc;
  loop_cursor(&cc, c, cg, state, ns, c->frame);
  test_arg ta = {L, counter >= 0 ? cc.env[counter] : NULL};
  gr_node *test;
  if (brk >= 0 || ret >= 0) {
    gr_node *flag = brk >= 0 ? cc.env[brk] : cc.env[ret];
    if (brk >= 0 && ret >= 0) {
      gr_node *both[2] = {cc.env[brk], cc.env[ret]};
      flag = pf_call_prim(&cc, "or", both, 2, s);
    }
    test = pf_if_value(&cc, flag, give_false, (void *)s, loop_test, &ta, s);
  } else {
    test = loop_test(&cc, &ta);
  }
  pf_set_output(&cc, test, s);
  pf_cur_free(&cc);
  if (pf_failed(M)) return M->err->code;

  /* BODY: a loop frame */
  gr_graph *bg = loop_graph(c, "body", s, state, ns);
  pf_frame fr = {.loop = true, .outer = c->frame, .state = state, .nstate = ns, .brk = brk, .ret = ret,
                 .retval = retval};
  pf_cur cb;
  loop_cursor(&cb, c, bg, state, ns, &fr);
  sg_code rc = is_for ? for_prologue(&cb, L, counter) : SG_OK;
  if (!rc) rc = pf_lower_stmts(&cb, L->body);
  if (!rc && !cb.done) pf_finish(&cb, PF_FALL, NULL, L->body->a[L->body->n - 1]);
  pf_cur_free(&cb);
  if (pf_failed(M)) return M->err->code;

  gr_node *in[4] = {pf_prim(c, "while", s), pf_graph_const(c, cg, s), pf_graph_const(c, bg, s), init_t};
  gr_node *w = pf_apply(c, in, 4, s);
  if (!w) return M->err->code;
  gr_node *brk_v = NULL, *ret_v = NULL, *retval_v = NULL;
  for (int i = 0; i < ns; i++) {
    int sl = state[i];
    if (sl == counter) continue;
    gr_node *gi[3] = {pf_prim(c, "getitem", s), w, pf_const(c, gv_int(i), s)};
    gr_node *v = pf_apply(c, gi, 3, s);
    if (sl == brk) brk_v = v;
    else if (sl == ret) ret_v = v;
    else if (sl == retval) retval_v = v;
    else pf_bind(c, sl, v);
  }
  if (pf_failed(M)) return M->err->code;

  /* a return in the body returns from the enclosing frame; the rest continues in the
   * else branch of that test */
  if (ret >= 0) {
    gr_node *ifin[4] = {pf_prim(c, "if", s), ret_v, NULL, NULL};
    gr_graph *ht = pf_branch_graph(c, "then", s), *he = pf_branch_graph(c, "else", s);
    pf_cur ct;
    pf_cur_init(&ct, F, ht, pf_env_copy(c), c->F->nslots, c->frame);
    ct.stmt = c->stmt;
    ct.wrap = c->wrap;
    ct.wrap_vars = c->wrap_vars;
    pf_finish(&ct, PF_RETURN, retval_v, s);
    pf_cur_free(&ct);
    ifin[2] = pf_graph_const(c, ht, s);
    ifin[3] = pf_graph_const(c, he, s);
    pf_set_output(c, pf_apply(c, ifin, 4, s), s);
    if (pf_failed(M)) return M->err->code;
    c->g = he;
    c->done = false;
  }
  if (PY_SEQ_LEN(L->orelse)) {
    if (brk < 0) return pf_lower_stmts(c, L->orelse);
    py_symset st = py_symset_inter(M->an, py_an_block_activity(M->an, L->orelse).modified, py_an_live_out(M->an, s));
    return pf_lower_if_parts(c, brk_v, NULL, L->orelse, st, s);
  }
  return SG_OK;
}

sg_code pf_lower_while(pf_cur *c, const py_stmt *s) {
  loop L = {.s = s, .kind = LOOP_WHILE, .body = s->v.While.body, .orelse = s->v.While.orelse};
  return lower_loop(c, &L, py_an_cf_state(c->F->M->an, s).state);
}

/* The callee of `for ... in NAME(...)` when NAME is that builtin, not rebound. */
static bool builtin_call(pf_cur *c, const py_expr *e, const char *name) {
  if (e->kind != PY_K_Call || e->v.Call.func->kind != PY_K_Name || strcmp(e->v.Call.func->v.Name.id, name)) return false;
  pf_ref r;
  pf_module *M = c->F->M;
  py_sym s = py_an_sym(M->an, name);
  if (py_symset_has(c->F->scope->locals, s)) return false;
  return pf_resolve(c, e->v.Call.func, name, &r) && r.kind == PF_REF_BUILTIN;
}

/* a nonzero integer literal (-3 too) */
static bool const_step(const py_expr *e, int64_t *v) {
  bool neg = false;
  if (e->kind == PY_K_UnaryOp && e->v.UnaryOp.op == PY_USub) {
    neg = true;
    e = e->v.UnaryOp.operand;
  }
  if (e->kind != PY_K_Constant || e->v.Constant.value.kind != PY_CONST_INT || strlen(e->v.Constant.value.s) > 18)
    return false;
  *v = strtoll(e->v.Constant.value.s, NULL, 10) * (neg ? -1 : 1);
  return *v != 0;
}

static gr_node *index_arg(pf_cur *c, const py_expr *e) {
  gr_node *x = pf_expr(c, e);
  return x ? pf_call_prim(c, "pyindex", &x, 1, e) : NULL;
}

static gr_node *give_node(pf_cur *c, void *arg) {
  gr_node *n = arg;
  return n->kind == GR_CONST ? pf_const(c, gv_retain(n->value), NULL) : n;
}

sg_code pf_lower_for(pf_cur *c, const py_stmt *s) {
  pf_module *M = c->F->M;
  loop L = {.s = s, .kind = LOOP_SEQ, .body = s->v.For.body, .orelse = s->v.For.orelse, .target = s->v.For.target};
  const py_expr *it = s->v.For.iter;
  if (builtin_call(c, it, "range")) {
    const py_seq *a = it->v.Call.args;
    int n = PY_SEQ_LEN(a);
    if (n < 1 || n > 3 || PY_SEQ_LEN(it->v.Call.keywords))
      return PF_INVALID(M, it, "range() takes 1 to 3 positional arguments");
    L.kind = LOOP_RANGE;
    L.step = 1;
    if (n == 3 && !const_step(a->a[2], &L.step))
      return PF_UNSUPPORTED(M, (const py_expr *)a->a[2],
                            "range() with a step that is not a nonzero integer constant is outside the subset");
    L.start = n == 1 ? pf_const(c, gv_int(0), it) : index_arg(c, a->a[0]);
    L.stop = index_arg(c, a->a[n == 1 ? 0 : 1]);
  } else {
    const py_seq *seqs = NULL;
    const py_expr *one = it;
    if (builtin_call(c, it, "enumerate")) {
      int n = PY_SEQ_LEN(it->v.Call.args);
      const py_keyword *kw = PY_SEQ_LEN(it->v.Call.keywords) ? it->v.Call.keywords->a[0] : NULL;
      if (n < 1 || n + (kw ? 1 : 0) > 2 || (kw && strcmp(kw->arg, "start")))
        return PF_INVALID(M, it, "enumerate() takes an iterable and an optional start");
      one = it->v.Call.args->a[0];
      L.enum_from = n == 2 ? index_arg(c, it->v.Call.args->a[1]) : kw ? index_arg(c, kw->value)
                                                                      : pf_const(c, gv_int(0), it);
    } else if (builtin_call(c, it, "zip")) {
      seqs = it->v.Call.args;
      if (PY_SEQ_LEN(seqs) < 1 || PY_SEQ_LEN(seqs) > 8 || PY_SEQ_LEN(it->v.Call.keywords))
        return PF_UNSUPPORTED(M, it, "zip() of 1 to 8 sequences (no keywords) is what the subset has");
    }
    L.nseq = seqs ? seqs->n : 1;
    for (int i = 0; i < L.nseq && !pf_failed(M); i++) {
      const py_expr *e = seqs ? seqs->a[i] : one;
      L.seqs[i] = pf_expr(c, e);
      gr_node *len = L.seqs[i] ? pf_call_prim(c, "len", &L.seqs[i], 1, e) : NULL;
      if (!len) break;
      if (!L.count) { /* zip stops at the shortest */
        L.count = len;
      } else {
        gr_node *lt[2] = {len, L.count};
        L.count = pf_if_value(c, pf_call_prim(c, "<", lt, 2, e), give_node, len, give_node, L.count, e);
      }
    }
  }
  if (pf_failed(M)) return M->err->code;
  return lower_loop(c, &L, py_an_cf_state(M->an, s).state);
}
