// SPDX-License-Identifier: Apache-2.0
/*
 * conv_util.c — helpers of the converter: statement vectors, AST builders for the
 * generated code (always interned identifiers, locations of the original construct),
 * and the generic expression / statement rewriters the passes are written with.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "conv_priv.h"

/* ------------------------------------------------------------------ vectors */

void cv_push(cv *c, cv_vec *v, void *x) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    void **a = sg_arena_alloc(c->A, sizeof(void *) * (size_t)cap);
    if (v->n) memcpy(a, v->a, sizeof(void *) * (size_t)v->n);
    v->a = a;
    v->cap = cap;
  }
  v->a[v->n++] = x;
}

void cv_push_seq(cv *c, cv_vec *v, const py_seq *s) {
  for (int i = 0; i < PY_SEQ_LEN(s); i++) cv_push(c, v, s->a[i]);
}

py_seq *cv_seq_n(cv *c, int n, void **items) {
  if (n == 0) return NULL;
  py_seq *s = sg_arena_alloc(c->A, sizeof(py_seq) + sizeof(void *) * (size_t)n);
  s->n = n;
  memcpy(s->a, items, sizeof(void *) * (size_t)n);
  return s;
}

py_seq *cv_seq(cv *c, const cv_vec *v) { return cv_seq_n(c, v->n, v->a); }
py_seq *cv_seq1(cv *c, void *x) { return cv_seq_n(c, 1, &x); }

/* ------------------------------------------------------------------ builders */

const char *cv_intern(cv *c, const char *s) { return sg_intern_str(&c->ctx->names, s); }

const char *cv_fresh(cv *c, const char *base, int n) {
  char b[128];
  snprintf(b, sizeof b, "%s__%d", base, n);
  return cv_intern(c, b);
}

cv_loc cv_loc_of_stmt(const py_stmt *s) {
  return (cv_loc){s->lineno, s->col_offset, s->end_lineno, s->end_col_offset};
}
cv_loc cv_loc_of_expr(const py_expr *e) {
  return (cv_loc){e->lineno, e->col_offset, e->end_lineno, e->end_col_offset};
}

#define AT at.l, at.c, at.el, at.ec

py_expr *cv_name(cv *c, const char *id, py_expr_context ctx, cv_loc at) {
  return py_new_Name(c->A, cv_intern(c, id), ctx, AT);
}

py_expr *cv_sg(cv *c, const char *fn, cv_loc at) {
  return py_new_Attribute(c->A, cv_name(c, "sg__", PY_Load, at), cv_intern(c, fn), PY_Load, AT);
}

py_expr *cv_call(cv *c, py_expr *func, py_seq *args, py_seq *kws, cv_loc at) {
  return py_new_Call(c->A, func, args, kws, AT);
}

py_expr *cv_call_sg(cv *c, const char *fn, cv_loc at, int nargs, ...) {
  void *items[16];
  va_list ap;
  va_start(ap, nargs);
  for (int i = 0; i < nargs && i < 16; i++) items[i] = va_arg(ap, py_expr *);
  va_end(ap);
  return cv_call(c, cv_sg(c, fn, at), cv_seq_n(c, nargs, items), NULL, at);
}

py_expr *cv_str(cv *c, const char *s, cv_loc at) {
  py_constant k = {PY_CONST_STR, strlen(s), sg_arena_strdup(c->A, s), 0};
  return py_new_Constant(c->A, k, NULL, AT);
}

py_expr *cv_int(cv *c, int v, cv_loc at) {
  char b[32];
  snprintf(b, sizeof b, "%d", v < 0 ? -v : v);
  py_constant k = {PY_CONST_INT, strlen(b), sg_arena_strdup(c->A, b), 0};
  py_expr *e = py_new_Constant(c->A, k, NULL, AT);
  return v < 0 ? py_new_UnaryOp(c->A, PY_USub, e, AT) : e;
}

py_expr *cv_bool(cv *c, bool v, cv_loc at) {
  py_constant k = {v ? PY_CONST_TRUE : PY_CONST_FALSE, 0, NULL, 0};
  return py_new_Constant(c->A, k, NULL, AT);
}

py_expr *cv_none(cv *c, cv_loc at) {
  py_constant k = {PY_CONST_NONE, 0, NULL, 0};
  return py_new_Constant(c->A, k, NULL, AT);
}

py_expr *cv_not(cv *c, py_expr *e, cv_loc at) { return py_new_UnaryOp(c->A, PY_Not, e, AT); }

py_expr *cv_lambda(cv *c, py_expr *body, cv_loc at) {
  py_arguments *a = py_new_arguments(c->A, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
  return py_new_Lambda(c->A, a, body, AT);
}

py_expr *cv_tuple(cv *c, py_seq *elts, py_expr_context ctx, cv_loc at) {
  return py_new_Tuple(c->A, elts, ctx, AT);
}

py_stmt *cv_assign(cv *c, py_expr *target, py_expr *value, cv_loc at) {
  return py_new_Assign(c->A, cv_seq1(c, target), value, NULL, AT);
}

py_stmt *cv_assign_name(cv *c, const char *name, py_expr *value, cv_loc at) {
  return cv_assign(c, cv_name(c, name, PY_Store, at), value, at);
}

py_stmt *cv_expr_stmt(cv *c, py_expr *e, cv_loc at) { return py_new_Expr(c->A, e, AT); }

py_stmt *cv_if(cv *c, py_expr *test, py_seq *body, py_seq *orelse, cv_loc at) {
  return py_new_If(c->A, test, body, orelse, AT);
}

py_stmt *cv_pass(cv *c, cv_loc at) { return py_new_Pass(c->A, AT); }
py_stmt *cv_return(cv *c, py_expr *e, cv_loc at) { return py_new_Return(c->A, e, AT); }

py_stmt *cv_def(cv *c, const char *name, int nparams, const char *const *params, py_seq *body, cv_loc at) {
  cv_vec ps = {0};
  for (int i = 0; i < nparams; i++) cv_push(c, &ps, py_new_arg(c->A, cv_intern(c, params[i]), NULL, NULL, AT));
  py_arguments *a = py_new_arguments(c->A, NULL, cv_seq(c, &ps), NULL, NULL, NULL, NULL, NULL);
  if (!body) body = cv_seq1(c, cv_pass(c, at));
  return py_new_FunctionDef(c->A, cv_intern(c, name), a, body, NULL, NULL, NULL, NULL, AT);
}

py_stmt *cv_decl(cv *c, bool global, int n, const char *const *names, cv_loc at) {
  cv_vec v = {0};
  for (int i = 0; i < n; i++) cv_push(c, &v, (void *)cv_intern(c, names[i]));
  return global ? py_new_Global(c->A, cv_seq(c, &v), AT) : py_new_Nonlocal(c->A, cv_seq(c, &v), AT);
}

#undef AT

/* ------------------------------------------------------------------ queries */

typedef struct contains_st {
  py_kind k;
  bool scoped;
  bool found;
} contains_st;

static bool contains_visit(void *node, py_kind kind, void *ud) {
  contains_st *st = ud;
  if (kind == st->k) {
    st->found = true;
    return false;
  }
  if (st->scoped && (kind == PY_K_FunctionDef || kind == PY_K_AsyncFunctionDef || kind == PY_K_Lambda ||
                     kind == PY_K_ClassDef))
    return true;
  return py_visit_children(node, contains_visit, ud);
}

bool cv_contains(const void *node, py_kind k, bool scoped) {
  contains_st st = {k, scoped, false};
  py_visit_children((void *)node, contains_visit, &st);
  return st.found;
}

bool cv_expr_unsafe_in_lambda(const py_expr *e) {
  if (e->kind == PY_K_NamedExpr || e->kind == PY_K_Yield || e->kind == PY_K_YieldFrom || e->kind == PY_K_Await)
    return true;
  return cv_contains(e, PY_K_NamedExpr, false) || cv_contains(e, PY_K_Yield, false) ||
         cv_contains(e, PY_K_YieldFrom, false) || cv_contains(e, PY_K_Await, false);
}

bool cv_assert_msg_to_lambda(const py_stmt *s) {
  return s->kind == PY_K_Assert && s->v.Assert.msg && !cv_expr_unsafe_in_lambda(s->v.Assert.msg);
}

bool cv_operands_to_lambdas(const py_expr *e) {
  if (e->kind == PY_K_IfExp)
    return !cv_expr_unsafe_in_lambda(e->v.IfExp.body) && !cv_expr_unsafe_in_lambda(e->v.IfExp.orelse);
  if (e->kind == PY_K_Compare) { /* a chain: the comparators after the first are lazy */
    if (PY_SEQ_LEN(e->v.Compare.ops) < 2) return false;
    for (int i = 0; i < PY_SEQ_LEN(e->v.Compare.comparators); i++)
      if (cv_expr_unsafe_in_lambda(e->v.Compare.comparators->a[i])) return false;
    return true;
  }
  if (e->kind != PY_K_BoolOp) return false;
  for (int i = 0; i < PY_SEQ_LEN(e->v.BoolOp.values); i++)
    if (cv_expr_unsafe_in_lambda(e->v.BoolOp.values->a[i])) return false;
  return true;
}

static bool lambda_operands_visit(void *node, py_kind kind, void *ud) {
  bool *found = ud;
  if ((kind == PY_K_IfExp || kind == PY_K_BoolOp || kind == PY_K_Compare) && cv_operands_to_lambdas(node)) {
    *found = true;
    return false;
  }
  return py_visit_children(node, lambda_operands_visit, ud);
}

bool cv_has_lambda_operands(const void *node) {
  bool found = false;
  py_visit_children((void *)node, lambda_operands_visit, &found);
  return found;
}

bool cv_is_local(cv *c, const py_scope *sc, const char *name) {
  if (!sc || !c->an) return false;
  py_sym s = py_an_sym(c->an, name);
  return py_symset_has(sc->locals, s) || py_symset_has(sc->params, s);
}

/* ------------------------------------------------------------------ extra tests */

py_expr *cv_extra_test(cv *c, const py_stmt *loop) {
  for (int i = 0; i < c->nextra; i++)
    if (c->extra[i].loop == loop) return c->extra[i].test;
  return NULL;
}

void cv_add_extra_test(cv *c, const py_stmt *loop, py_expr *test) {
  for (int i = 0; i < c->nextra; i++)
    if (c->extra[i].loop == loop) {
      cv_loc at = cv_loc_of_expr(test);
      py_expr *vals[2] = {c->extra[i].test, test};
      c->extra[i].test = py_new_BoolOp(c->A, PY_And, cv_seq_n(c, 2, (void **)vals), at.l, at.c, at.el, at.ec);
      return;
    }
  if (c->nextra == c->capextra) {
    int cap = c->capextra ? c->capextra * 2 : 8;
    cv_extra *a = sg_arena_alloc(c->A, sizeof(cv_extra) * (size_t)cap);
    if (c->nextra) memcpy(a, c->extra, sizeof(cv_extra) * (size_t)c->nextra);
    c->extra = a;
    c->capextra = cap;
  }
  c->extra[c->nextra++] = (cv_extra){loop, test};
}

py_expr *cv_loop_options(cv *c, const py_stmt *loop) {
  for (int i = 0; i < c->nloopopts; i++)
    if (c->loopopts[i].loop == loop) return c->loopopts[i].test;
  return NULL;
}

void cv_set_loop_options(cv *c, const py_stmt *loop, py_expr *dict) {
  if (c->nloopopts == c->caploopopts) {
    int cap = c->caploopopts ? c->caploopopts * 2 : 8;
    cv_extra *a = sg_arena_alloc(c->A, sizeof(cv_extra) * (size_t)cap);
    if (c->nloopopts) memcpy(a, c->loopopts, sizeof(cv_extra) * (size_t)c->nloopopts);
    c->loopopts = a;
    c->caploopopts = cap;
  }
  c->loopopts[c->nloopopts++] = (cv_extra){loop, dict};
}

/* ------------------------------------------------------------------ rewriting */

typedef struct rw {
  cv *c;
  cv_expr_fn fn;
  void *ud;
  const py_stmt *stmt;
} rw;

static void rw_expr(rw *r, py_expr **slot);
static void rw_block(rw *r, py_seq *body);

static void rw_seq(rw *r, py_seq *s) {
  for (int i = 0; i < PY_SEQ_LEN(s); i++)
    if (s->a[i]) rw_expr(r, (py_expr **)&s->a[i]);
}

static void rw_opt(rw *r, py_expr **slot) {
  if (*slot) rw_expr(r, slot);
}

static void rw_args(rw *r, py_arguments *a) {
  if (!a) return;
  rw_seq(r, a->defaults);
  rw_seq(r, a->kw_defaults);
}

static void rw_comps(rw *r, py_seq *gens) {
  for (int i = 0; i < PY_SEQ_LEN(gens); i++) {
    py_comprehension *g = gens->a[i];
    rw_expr(r, &g->target);
    rw_expr(r, &g->iter);
    rw_seq(r, g->ifs);
  }
}

static void rw_expr(rw *r, py_expr **slot) {
  py_expr *e = *slot;
  switch (e->kind) {
  case PY_K_BoolOp: rw_seq(r, e->v.BoolOp.values); break;
  case PY_K_NamedExpr: rw_expr(r, &e->v.NamedExpr.value); break;
  case PY_K_BinOp: rw_expr(r, &e->v.BinOp.left); rw_expr(r, &e->v.BinOp.right); break;
  case PY_K_UnaryOp: rw_expr(r, &e->v.UnaryOp.operand); break;
  case PY_K_Lambda: rw_args(r, e->v.Lambda.args); rw_expr(r, &e->v.Lambda.body); break;
  case PY_K_IfExp:
    rw_expr(r, &e->v.IfExp.test);
    rw_expr(r, &e->v.IfExp.body);
    rw_expr(r, &e->v.IfExp.orelse);
    break;
  case PY_K_Dict: rw_seq(r, e->v.Dict.keys); rw_seq(r, e->v.Dict.values); break;
  case PY_K_Set: rw_seq(r, e->v.Set.elts); break;
  case PY_K_ListComp: rw_comps(r, e->v.ListComp.generators); rw_expr(r, &e->v.ListComp.elt); break;
  case PY_K_SetComp: rw_comps(r, e->v.SetComp.generators); rw_expr(r, &e->v.SetComp.elt); break;
  case PY_K_GeneratorExp:
    rw_comps(r, e->v.GeneratorExp.generators);
    rw_expr(r, &e->v.GeneratorExp.elt);
    break;
  case PY_K_DictComp:
    rw_comps(r, e->v.DictComp.generators);
    rw_expr(r, &e->v.DictComp.key);
    rw_expr(r, &e->v.DictComp.value);
    break;
  case PY_K_Await: rw_expr(r, &e->v.Await.value); break;
  case PY_K_Yield: rw_opt(r, &e->v.Yield.value); break;
  case PY_K_YieldFrom: rw_expr(r, &e->v.YieldFrom.value); break;
  case PY_K_Compare: rw_expr(r, &e->v.Compare.left); rw_seq(r, e->v.Compare.comparators); break;
  case PY_K_Call:
    rw_expr(r, &e->v.Call.func);
    rw_seq(r, e->v.Call.args);
    for (int i = 0; i < PY_SEQ_LEN(e->v.Call.keywords); i++)
      rw_expr(r, &((py_keyword *)e->v.Call.keywords->a[i])->value);
    break;
  case PY_K_FormattedValue:
    rw_expr(r, &e->v.FormattedValue.value);
    rw_opt(r, &e->v.FormattedValue.format_spec);
    break;
  case PY_K_JoinedStr: rw_seq(r, e->v.JoinedStr.values); break;
  case PY_K_Attribute: rw_expr(r, &e->v.Attribute.value); break;
  case PY_K_Subscript: rw_expr(r, &e->v.Subscript.value); rw_expr(r, &e->v.Subscript.slice); break;
  case PY_K_Starred: rw_expr(r, &e->v.Starred.value); break;
  case PY_K_List: rw_seq(r, e->v.List.elts); break;
  case PY_K_Tuple: rw_seq(r, e->v.Tuple.elts); break;
  case PY_K_Slice:
    rw_opt(r, &e->v.Slice.lower);
    rw_opt(r, &e->v.Slice.upper);
    rw_opt(r, &e->v.Slice.step);
    break;
  default: break;
  }
  *slot = r->fn(r->c, e, r->stmt, r->ud);
}

static void rw_stmt(rw *r, py_stmt *s) {
  const py_stmt *saved = r->stmt;
  r->stmt = s;
  switch (s->kind) {
  case PY_K_FunctionDef:
  case PY_K_AsyncFunctionDef:
    rw_seq(r, s->v.FunctionDef.decorator_list);
    rw_args(r, s->v.FunctionDef.args);
    rw_block(r, s->v.FunctionDef.body);
    break;
  case PY_K_ClassDef:
    rw_seq(r, s->v.ClassDef.decorator_list);
    rw_seq(r, s->v.ClassDef.bases);
    for (int i = 0; i < PY_SEQ_LEN(s->v.ClassDef.keywords); i++)
      rw_expr(r, &((py_keyword *)s->v.ClassDef.keywords->a[i])->value);
    break; /* class bodies are not converted */
  case PY_K_Return: rw_opt(r, &s->v.Return.value); break;
  case PY_K_Delete: rw_seq(r, s->v.Delete.targets); break;
  case PY_K_Assign: rw_seq(r, s->v.Assign.targets); rw_expr(r, &s->v.Assign.value); break;
  case PY_K_AugAssign: rw_expr(r, &s->v.AugAssign.target); rw_expr(r, &s->v.AugAssign.value); break;
  case PY_K_AnnAssign:
    rw_expr(r, &s->v.AnnAssign.target);
    rw_opt(r, &s->v.AnnAssign.value);
    break;
  case PY_K_For:
  case PY_K_AsyncFor:
    rw_expr(r, &s->v.For.target);
    rw_expr(r, &s->v.For.iter);
    rw_block(r, s->v.For.body);
    rw_block(r, s->v.For.orelse);
    break;
  case PY_K_While:
    rw_expr(r, &s->v.While.test);
    rw_block(r, s->v.While.body);
    rw_block(r, s->v.While.orelse);
    break;
  case PY_K_If:
    rw_expr(r, &s->v.If.test);
    rw_block(r, s->v.If.body);
    rw_block(r, s->v.If.orelse);
    break;
  case PY_K_With:
  case PY_K_AsyncWith:
    for (int i = 0; i < PY_SEQ_LEN(s->v.With.items); i++) {
      py_withitem *w = s->v.With.items->a[i];
      rw_expr(r, &w->context_expr);
      rw_opt(r, &w->optional_vars);
    }
    rw_block(r, s->v.With.body);
    break;
  case PY_K_Match:
    rw_expr(r, &s->v.Match.subject);
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++) {
      py_match_case *mc = s->v.Match.cases->a[i];
      rw_opt(r, &mc->guard);
      rw_block(r, mc->body);
    }
    break;
  case PY_K_Raise: rw_opt(r, &s->v.Raise.exc); rw_opt(r, &s->v.Raise.cause); break;
  case PY_K_Try:
  case PY_K_TryStar:
    rw_block(r, s->v.Try.body);
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++) {
      py_excepthandler *h = s->v.Try.handlers->a[i];
      rw_opt(r, &h->v.ExceptHandler.type);
      rw_block(r, h->v.ExceptHandler.body);
    }
    rw_block(r, s->v.Try.orelse);
    rw_block(r, s->v.Try.finalbody);
    break;
  case PY_K_Assert: rw_expr(r, &s->v.Assert.test); rw_opt(r, &s->v.Assert.msg); break;
  case PY_K_Expr: rw_expr(r, &s->v.Expr.value); break;
  default: break;
  }
  r->stmt = saved;
}

static void rw_block(rw *r, py_seq *body) {
  for (int i = 0; i < PY_SEQ_LEN(body); i++) rw_stmt(r, body->a[i]);
}

void cv_rewrite_exprs_block(cv *c, py_seq *body, cv_expr_fn fn, void *ud) {
  rw r = {c, fn, ud, NULL};
  rw_block(&r, body);
}

void cv_rewrite_expr_slot(cv *c, py_expr **slot, const py_stmt *stmt, cv_expr_fn fn, void *ud) {
  rw r = {c, fn, ud, stmt};
  rw_expr(&r, slot);
}

/* Statement rewriting. */
static py_seq *rs_block(cv *c, py_seq *body, cv_stmt_fn fn, void *ud);

static void rs_stmt_children(cv *c, py_stmt *s, cv_stmt_fn fn, void *ud) {
  switch (s->kind) {
  case PY_K_FunctionDef:
  case PY_K_AsyncFunctionDef: s->v.FunctionDef.body = rs_block(c, s->v.FunctionDef.body, fn, ud); break;
  case PY_K_For:
  case PY_K_AsyncFor:
    s->v.For.body = rs_block(c, s->v.For.body, fn, ud);
    s->v.For.orelse = rs_block(c, s->v.For.orelse, fn, ud);
    break;
  case PY_K_While:
    s->v.While.body = rs_block(c, s->v.While.body, fn, ud);
    s->v.While.orelse = rs_block(c, s->v.While.orelse, fn, ud);
    break;
  case PY_K_If:
    s->v.If.body = rs_block(c, s->v.If.body, fn, ud);
    s->v.If.orelse = rs_block(c, s->v.If.orelse, fn, ud);
    break;
  case PY_K_With:
  case PY_K_AsyncWith: s->v.With.body = rs_block(c, s->v.With.body, fn, ud); break;
  case PY_K_Match:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++) {
      py_match_case *mc = s->v.Match.cases->a[i];
      mc->body = rs_block(c, mc->body, fn, ud);
    }
    break;
  case PY_K_Try:
  case PY_K_TryStar:
    s->v.Try.body = rs_block(c, s->v.Try.body, fn, ud);
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++) {
      py_excepthandler *h = s->v.Try.handlers->a[i];
      h->v.ExceptHandler.body = rs_block(c, h->v.ExceptHandler.body, fn, ud);
    }
    s->v.Try.orelse = rs_block(c, s->v.Try.orelse, fn, ud);
    s->v.Try.finalbody = rs_block(c, s->v.Try.finalbody, fn, ud);
    break;
  default: break;
  }
}

static py_seq *rs_block(cv *c, py_seq *body, cv_stmt_fn fn, void *ud) {
  if (!body) return NULL;
  cv_vec out = {0};
  for (int i = 0; i < body->n; i++) {
    py_stmt *s = body->a[i];
    rs_stmt_children(c, s, fn, ud);
    fn(c, s, &out, ud);
  }
  if (out.n == 0) return cv_seq1(c, cv_pass(c, cv_loc_of_stmt(body->a[0])));
  return cv_seq(c, &out);
}

py_seq *cv_rewrite_stmts(cv *c, py_seq *body, cv_stmt_fn fn, void *ud) { return rs_block(c, body, fn, ud); }
