// SPDX-License-Identifier: Apache-2.0
/*
 * conv_expr.c — the statement- and expression-level passes of AutoGraph §7.2 that need
 * no control-flow restructuring: directives, assert, lists (literals, append, pop),
 * slices (get_item / set_item), builtins (sg__.<name>_ where live values prove the
 * builtin), call trees (sg__.converted_call), ternary (sg__.if_exp) and logical
 * expressions (lazy sg__.and_ / sg__.or_, sg__.not_). Each keeps Python's evaluation
 * order and leaves alone what it cannot convert without changing semantics (walrus /
 * yield / await inside an operand that would move into a lambda, zero-argument
 * super(), frame-inspecting builtins).
 */
#include <stdio.h>
#include <string.h>

#include "conv_priv.h"

/* ------------------------------------------------------------------ directives */

/* The directives (AutoGraph §7.2, docs/runtime.md "Directives"), written as calls
 * `stagd.set_loop_options(k=v, ...)` / `set_loop_options(...)` and
 * `stagd.set_element_type(l, dtype[, shape])`:
 *   - set_loop_options with keyword arguments only, as a statement directly in a
 *     while / for body, is removed from the body and its keywords become the loop's
 *     `opts` dict (sg__.while_stmt / for_stmt); elsewhere it stays a plain call;
 *   - set_element_type(l, ...) on a local name l becomes
 *     `l = sg__.set_element_type(l, ...)` (plain lists come back unchanged); the
 *     lists pass does it, since it needs the scopes.
 * The pass also normalises annotated assignments to simple names: inside a function
 * Python never evaluates those annotations, and an annotated name cannot be declared
 * `nonlocal` (which the control-flow pass needs), so `x: T = v` becomes `x = v` and
 * `x: T` becomes `pass`. */

/* s is `[X.]name(...)` as a statement: the call, else NULL. */
static py_expr *directive_call(const py_stmt *s, const char *name) {
  if (s->kind != PY_K_Expr || s->v.Expr.value->kind != PY_K_Call) return NULL;
  py_expr *call = s->v.Expr.value;
  const py_expr *f = call->v.Call.func;
  if (f->kind == PY_K_Attribute && f->v.Attribute.value->kind == PY_K_Name && !strcmp(f->v.Attribute.attr, name))
    return call;
  if (f->kind == PY_K_Name && !strcmp(f->v.Name.id, name)) return call;
  return NULL;
}

/* set_loop_options(k=v, ...) statements at the top level of a loop body → its opts. */
static py_seq *take_loop_options(cv *c, py_stmt *loop, py_seq *body) {
  if (!body) return body;
  cv_vec keep = {0}, keys = {0}, vals = {0};
  bool found = false;
  cv_loc at = cv_loc_of_stmt(loop);
  for (int i = 0; i < body->n; i++) {
    py_stmt *s = body->a[i];
    py_expr *call = directive_call(s, "set_loop_options");
    bool ok = call && PY_SEQ_LEN(call->v.Call.args) == 0;
    for (int k = 0; ok && k < PY_SEQ_LEN(call->v.Call.keywords); k++)
      if (!((py_keyword *)call->v.Call.keywords->a[k])->arg) ok = false; /* **kwargs */
    if (!ok) {
      cv_push(c, &keep, s);
      continue;
    }
    if (!found) at = cv_loc_of_stmt(s);
    found = true;
    for (int k = 0; k < PY_SEQ_LEN(call->v.Call.keywords); k++) {
      py_keyword *kw = call->v.Call.keywords->a[k];
      cv_push(c, &keys, cv_str(c, kw->arg, at));
      cv_push(c, &vals, kw->value);
    }
  }
  if (!found) return body;
  cv_set_loop_options(c, loop, py_new_Dict(c->A, cv_seq(c, &keys), cv_seq(c, &vals), at.l, at.c, at.el, at.ec));
  if (keep.n == 0) return cv_seq1(c, cv_pass(c, cv_loc_of_stmt(body->a[0])));
  return cv_seq(c, &keep);
}

static void directives_stmt(cv *c, py_stmt *s, cv_vec *out, void *ud) {
  (void)ud;
  if (s->kind == PY_K_While) s->v.While.body = take_loop_options(c, s, s->v.While.body);
  if (s->kind == PY_K_For) s->v.For.body = take_loop_options(c, s, s->v.For.body);
  if (s->kind == PY_K_AnnAssign && s->v.AnnAssign.target->kind == PY_K_Name) {
    cv_loc at = cv_loc_of_stmt(s);
    cv_push(c, out, s->v.AnnAssign.value ? cv_assign(c, s->v.AnnAssign.target, s->v.AnnAssign.value, at) : cv_pass(c, at));
    return;
  }
  cv_push(c, out, s);
}

void cv_pass_directives(cv *c, py_stmt *fn) {
  fn->v.FunctionDef.body = cv_rewrite_stmts(c, fn->v.FunctionDef.body, directives_stmt, NULL);
}

/* ------------------------------------------------------------------ assert */

static void assert_stmt(cv *c, py_stmt *s, cv_vec *out, void *ud) {
  (void)ud;
  if (s->kind != PY_K_Assert || (s->v.Assert.msg && !cv_assert_msg_to_lambda(s))) {
    cv_push(c, out, s);
    return;
  }
  cv_loc at = cv_loc_of_stmt(s);
  py_expr *msg = s->v.Assert.msg ? s->v.Assert.msg : cv_none(c, at);
  cv_push(c, out, cv_expr_stmt(c, cv_call_sg(c, "assert_stmt", at, 2, s->v.Assert.test, cv_lambda(c, msg, at)), at));
}

void cv_pass_assert(cv *c, py_stmt *fn) {
  fn->v.FunctionDef.body = cv_rewrite_stmts(c, fn->v.FunctionDef.body, assert_stmt, NULL);
}

/* ------------------------------------------------------------------ lists */

static bool simple_args(const py_expr *call, int max) {
  if (PY_SEQ_LEN(call->v.Call.keywords) || PY_SEQ_LEN(call->v.Call.args) > max) return false;
  for (int i = 0; i < PY_SEQ_LEN(call->v.Call.args); i++)
    if (((py_expr *)call->v.Call.args->a[i])->kind == PY_K_Starred) return false;
  return true;
}

/* call is `NAME.method(...)` with NAME a local of the statement's scope: NAME, else NULL */
static const char *method_on_local(cv *c, const py_stmt *s, const py_expr *call, const char *method) {
  if (!call || call->kind != PY_K_Call) return NULL;
  const py_expr *f = call->v.Call.func;
  if (f->kind != PY_K_Attribute || strcmp(f->v.Attribute.attr, method) != 0) return NULL;
  const py_expr *o = f->v.Attribute.value;
  if (o->kind != PY_K_Name) return NULL;
  const py_scope *sc = c->an ? py_an_scope_of(c->an, s) : NULL;
  if (!sc || sc->kind != PY_SCOPE_FUNCTION || !cv_is_local(c, sc, o->v.Name.id)) return NULL;
  return o->v.Name.id;
}

static void lists_stmt(cv *c, py_stmt *s, cv_vec *out, void *ud) {
  (void)ud;
  cv_loc at = cv_loc_of_stmt(s);
  /* the set_element_type directive (see "directives" above; it needs the scopes) */
  py_expr *et = directive_call(s, "set_element_type");
  if (et && PY_SEQ_LEN(et->v.Call.args) >= 1 && ((py_expr *)et->v.Call.args->a[0])->kind == PY_K_Name) {
    const char *l = ((py_expr *)et->v.Call.args->a[0])->v.Name.id;
    const py_scope *sc = c->an ? py_an_scope_of(c->an, s) : NULL;
    if (sc && sc->kind == PY_SCOPE_FUNCTION && cv_is_local(c, sc, l)) {
      et->v.Call.func = cv_sg(c, "set_element_type", at);
      cv_push(c, out, cv_assign_name(c, l, et, at));
      return;
    }
  }
  if (s->kind == PY_K_Assign && PY_SEQ_LEN(s->v.Assign.targets) == 1 && s->v.Assign.value->kind == PY_K_List &&
      ((py_expr *)s->v.Assign.targets->a[0])->kind == PY_K_Name) {
    s->v.Assign.value = cv_call_sg(c, "new_list", at, 1, s->v.Assign.value);
    cv_push(c, out, s);
    return;
  }
  const char *l;
  if (s->kind == PY_K_Expr && (l = method_on_local(c, s, s->v.Expr.value, "append")) &&
      simple_args(s->v.Expr.value, 1) && PY_SEQ_LEN(s->v.Expr.value->v.Call.args) == 1) {
    py_expr *x = s->v.Expr.value->v.Call.args->a[0];
    cv_push(c, out, cv_assign_name(c, l, cv_call_sg(c, "list_append", at, 2, cv_name(c, l, PY_Load, at), x), at));
    return;
  }
  /* l.pop() / v = l.pop(i) */
  py_expr *call = s->kind == PY_K_Expr ? s->v.Expr.value
                  : (s->kind == PY_K_Assign && PY_SEQ_LEN(s->v.Assign.targets) == 1) ? s->v.Assign.value
                                                                                   : NULL;
  if (call && (l = method_on_local(c, s, call, "pop")) && simple_args(call, 1)) {
    const char *v = NULL;
    if (s->kind == PY_K_Assign) {
      py_expr *t = s->v.Assign.targets->a[0];
      if (t->kind != PY_K_Name || t->v.Name.id == l) {
        cv_push(c, out, s);
        return;
      }
      v = t->v.Name.id;
    } else {
      v = cv_fresh(c, "pop", ++c->counter);
    }
    py_expr *idx = PY_SEQ_LEN(call->v.Call.args) ? call->v.Call.args->a[0] : cv_none(c, at);
    py_expr *tgt[2] = {cv_name(c, l, PY_Store, at), cv_name(c, v, PY_Store, at)};
    cv_push(c, out,
            cv_assign(c, cv_tuple(c, cv_seq_n(c, 2, (void **)tgt), PY_Store, at),
                      cv_call_sg(c, "list_pop", at, 2, cv_name(c, l, PY_Load, at), idx), at));
    return;
  }
  cv_push(c, out, s);
}

void cv_pass_lists(cv *c, py_stmt *fn) {
  fn->v.FunctionDef.body = cv_rewrite_stmts(c, fn->v.FunctionDef.body, lists_stmt, NULL);
}

/* ------------------------------------------------------------------ slices */

static bool simple_index(const py_expr *i) {
  if (i->kind == PY_K_Name || i->kind == PY_K_Constant) return true;
  return i->kind == PY_K_UnaryOp && i->v.UnaryOp.operand->kind == PY_K_Constant;
}

static py_expr *get_item(cv *c, py_expr *e, const py_stmt *s, void *ud) {
  (void)s;
  (void)ud;
  if (e->kind != PY_K_Subscript || e->v.Subscript.ctx != PY_Load || e->v.Subscript.value->kind != PY_K_Name)
    return e;
  py_expr *sl = e->v.Subscript.slice;
  if (sl->kind == PY_K_Slice || cv_contains(sl, PY_K_Slice, false) || sl->kind == PY_K_Starred ||
      cv_contains(sl, PY_K_Starred, false))
    return e;
  return cv_call_sg(c, "get_item", cv_loc_of_expr(e), 2, e->v.Subscript.value, sl);
}

/* `x[K] = v` / `x[K] op= v` on a local name x becomes `x = sg__.set_item(x, K', v)`
 * (docs/converter.md "Item assignment"), K' being K as a value. Python evaluates v, x,
 * K, then calls setitem (augmented: x, K, getitem, v, op, setitem), each once; the
 * rewrite keeps that order with fresh temporaries where it could be observed:
 *   - a duplicable key (names, constants, `...`, slices and tuples of those) is
 *     written out again wherever it is needed; any other key is bound once to key__N
 *     (after x is read: through obj__N when x may be unbound there);
 *   - v is bound to value__N first unless it is quiet (cannot raise, runs no code,
 *     and K cannot rebind a name it reads) or x and K are.
 * A statement whose key (augmented: or value) can rebind x — a walrus on x, a call
 * when a nested function declares x nonlocal — keeps Python's own statement. */

/* K itself, or one part of a tuple K: slices are allowed here */
static bool dup_part(const py_expr *i) {
  if (i->kind == PY_K_Slice)
    return (!i->v.Slice.lower || simple_index(i->v.Slice.lower)) &&
           (!i->v.Slice.upper || simple_index(i->v.Slice.upper)) &&
           (!i->v.Slice.step || simple_index(i->v.Slice.step));
  return simple_index(i);
}

/* A key that may be evaluated twice: the same value, the same (absent) effects. */
static bool dup_index(const py_expr *i) {
  if (i->kind != PY_K_Tuple) return dup_part(i);
  for (int k = 0; k < PY_SEQ_LEN(i->v.Tuple.elts); k++)
    if (!dup_part(i->v.Tuple.elts->a[k])) return false;
  return true;
}

typedef struct item_ctx {
  cv *c;
  const py_scope *sc;
  py_symset defined;    /* definitely bound on entry to the statement */
  py_expr *key, *value; /* the statement's K and v */
  const char *name;     /* the visitors' name */
  bool found;
} item_ctx;

static bool walrus_on_name(void *node, py_kind kind, void *ud) {
  item_ctx *q = ud;
  if (kind == PY_K_NamedExpr) {
    const py_expr *t = ((py_expr *)node)->v.NamedExpr.target;
    if (t->kind == PY_K_Name && !strcmp(t->v.Name.id, q->name)) q->found = true;
  }
  return !q->found && py_visit_children(node, walrus_on_name, ud);
}

static bool nonlocal_name(void *node, py_kind kind, void *ud) {
  item_ctx *q = ud;
  if (kind == PY_K_FunctionDef || kind == PY_K_AsyncFunctionDef) {
    const py_scope *inner = py_an_scope(q->c->an, node);
    if (inner && py_symset_has(inner->nonlocals, py_an_sym(q->c->an, q->name))) q->found = true;
  }
  return !q->found && py_visit_children(node, nonlocal_name, ud);
}

/* Can evaluating e rebind the local `name` (a walrus on it; a call, when a nested
 * function declares it nonlocal)? */
static bool may_rebind(item_ctx *q, py_expr *e, const char *name) {
  q->name = name;
  q->found = false;
  walrus_on_name(e, e->kind, q);
  py_seq *body = ((const py_stmt *)q->sc->node)->v.FunctionDef.body;
  for (int i = 0; i < PY_SEQ_LEN(body) && !q->found; i++) nonlocal_name(body->a[i], ((py_stmt *)body->a[i])->kind, q);
  return q->found;
}

/* e cannot raise, runs no code, and has the same value whenever the statement reads
 * it: a constant, a number's negation, a local name bound on every path to the
 * statement that neither K nor v can rebind, and slices / tuples of those. */
static bool quiet(item_ctx *q, const py_expr *e) {
  switch (e->kind) {
  case PY_K_Constant: return true;
  case PY_K_UnaryOp:
    return (e->v.UnaryOp.op == PY_USub || e->v.UnaryOp.op == PY_UAdd) && e->v.UnaryOp.operand->kind == PY_K_Constant &&
           (e->v.UnaryOp.operand->v.Constant.value.kind == PY_CONST_INT ||
            e->v.UnaryOp.operand->v.Constant.value.kind == PY_CONST_FLOAT);
  case PY_K_Name:
    return cv_is_local(q->c, q->sc, e->v.Name.id) && py_symset_has(q->defined, py_an_sym(q->c->an, e->v.Name.id)) &&
           !may_rebind(q, q->key, e->v.Name.id) && !may_rebind(q, q->value, e->v.Name.id);
  case PY_K_Slice:
    return (!e->v.Slice.lower || quiet(q, e->v.Slice.lower)) && (!e->v.Slice.upper || quiet(q, e->v.Slice.upper)) &&
           (!e->v.Slice.step || quiet(q, e->v.Slice.step));
  case PY_K_Tuple:
    for (int k = 0; k < PY_SEQ_LEN(e->v.Tuple.elts); k++)
      if (!quiet(q, e->v.Tuple.elts->a[k])) return false;
    return true;
  default: return false;
  }
}

/* K as a value (a fresh copy each call: the augmented form reads a duplicable key
 * twice): a slice becomes sg__.slice_(LOWER, UPPER, STEP), a tuple a tuple of those. */
static py_expr *index_value(cv *c, py_expr *i, cv_loc at) {
  if (i->kind == PY_K_Name) return cv_name(c, i->v.Name.id, PY_Load, at);
  if (i->kind == PY_K_Slice) {
    py_expr *p[3] = {i->v.Slice.lower, i->v.Slice.upper, i->v.Slice.step};
    for (int k = 0; k < 3; k++) p[k] = p[k] ? index_value(c, p[k], at) : cv_none(c, at);
    return cv_call_sg(c, "slice_", at, 3, p[0], p[1], p[2]);
  }
  if (i->kind == PY_K_Tuple) {
    cv_vec items = {0};
    for (int k = 0; k < PY_SEQ_LEN(i->v.Tuple.elts); k++) cv_push(c, &items, index_value(c, i->v.Tuple.elts->a[k], at));
    return cv_tuple(c, cv_seq(c, &items), PY_Load, at);
  }
  return i; /* constants are shared (never rewritten); any other part is used once */
}

static void set_item_stmt(cv *c, py_stmt *s, cv_vec *out, void *ud) {
  (void)ud;
  py_expr *t = NULL, *value = NULL;
  bool aug = s->kind == PY_K_AugAssign;
  if (s->kind == PY_K_Assign && PY_SEQ_LEN(s->v.Assign.targets) == 1)
    t = s->v.Assign.targets->a[0], value = s->v.Assign.value;
  else if (aug)
    t = s->v.AugAssign.target, value = s->v.AugAssign.value;
  const py_scope *sc = c->an ? py_an_scope_of(c->an, s) : NULL;
  if (!t || t->kind != PY_K_Subscript || t->v.Subscript.value->kind != PY_K_Name || !sc ||
      sc->kind != PY_SCOPE_FUNCTION || !cv_is_local(c, sc, t->v.Subscript.value->v.Name.id)) {
    cv_push(c, out, s);
    return;
  }
  const char *x = t->v.Subscript.value->v.Name.id;
  py_expr *k = t->v.Subscript.slice, *xe = t->v.Subscript.value;
  item_ctx q = {c, sc, py_an_defined_in(c->an, s), k, value, NULL, false};
  bool dup = dup_index(k), qx = quiet(&q, xe), qk = quiet(&q, k), qv = quiet(&q, value);
  bool rk = !qk && may_rebind(&q, k, x), rv = !qv && may_rebind(&q, value, x);
  if (rk || (aug && rv)) { /* x = set_item(the x read first, ...) would undo the rebinding */
    cv_push(c, out, s);
    return;
  }
  cv_loc at = cv_loc_of_stmt(s);
  const char *o = x, *kn = NULL; /* x is read through o; a bound key is kn */
  if (aug && !dup) {
    int n = ++c->counter;
    if (!qx) { /* x before K: it may be unbound */
      o = cv_fresh(c, "obj", n);
      cv_push(c, out, cv_assign_name(c, o, cv_name(c, x, PY_Load, at), at));
    }
    kn = cv_fresh(c, "key", n);
    cv_push(c, out, cv_assign_name(c, kn, index_value(c, k, at), at));
  }
  if (aug) /* x[K] op= v  ->  x = sg__.set_item(x, K, sg__.aug_item('Op', sg__.get_item(x, K), v)) */
    value = cv_call_sg(c, "aug_item", at, 3, cv_str(c, py_operator_name(s->v.AugAssign.op), at),
                       cv_call_sg(c, "get_item", at, 2, cv_name(c, o, PY_Load, at),
                                  kn ? cv_name(c, kn, PY_Load, at) : index_value(c, k, at)),
                       value);
  else if (!qv && !(qx && qk)) { /* v before x and K (a v that may rebind x makes x not quiet) */
    const char *vn = cv_fresh(c, "value", ++c->counter);
    cv_push(c, out, cv_assign_name(c, vn, value, at));
    value = cv_name(c, vn, PY_Load, at);
  }
  py_expr *key = kn ? cv_name(c, kn, PY_Load, at) : index_value(c, k, at);
  cv_push(c, out, cv_assign_name(c, x, cv_call_sg(c, "set_item", at, 3, cv_name(c, o, PY_Load, at), key, value), at));
}

/* ------------------------------------------------------------------ builtins */

static const char *const BUILTINS[] = {"print", "len", "range", "enumerate", "zip", "int", "float", "bool",
                                       "abs", "min", "max", "sum", "isinstance", NULL};

static py_expr *builtin_call(cv *c, py_expr *e, const py_stmt *s, void *ud) {
  (void)s;
  (void)ud;
  if (e->kind != PY_K_Call || e->v.Call.func->kind != PY_K_Name || !c->an) return e;
  const char *id = e->v.Call.func->v.Name.id;
  for (int i = 0; BUILTINS[i]; i++)
    if (!strcmp(id, BUILTINS[i]) && py_an_is_builtin_call(c->an, e, id)) {
      char b[64];
      snprintf(b, sizeof b, "%s_", id);
      e->v.Call.func = cv_sg(c, b, cv_loc_of_expr(e->v.Call.func));
      break;
    }
  return e;
}

/* ------------------------------------------------------------------ call trees */

/* Calls that must stay direct: they inspect the calling frame. */
static const char *const FRAME_CALLS[] = {"super", "locals", "globals", "vars", "dir", "eval", "exec",
                                          "breakpoint", "__import__", NULL};

static bool is_sg_call(const py_expr *f) {
  return f->kind == PY_K_Attribute && f->v.Attribute.value->kind == PY_K_Name &&
         !strcmp(f->v.Attribute.value->v.Name.id, "sg__");
}

static py_expr *call_tree(cv *c, py_expr *e, const py_stmt *s, void *ud) {
  (void)s;
  (void)ud;
  if (e->kind != PY_K_Call) return e;
  py_expr *f = e->v.Call.func;
  if (is_sg_call(f)) return e;
  if (f->kind == PY_K_Name)
    for (int i = 0; FRAME_CALLS[i]; i++)
      if (!strcmp(f->v.Name.id, FRAME_CALLS[i])) return e;
  /* f(k=1, **d) with 'k' in d raises TypeError, a dict display would merge silently:
   * calls that could repeat a keyword stay direct */
  int nstar = 0;
  for (int i = 0; i < PY_SEQ_LEN(e->v.Call.keywords); i++) nstar += !((py_keyword *)e->v.Call.keywords->a[i])->arg;
  if (nstar > 1 || (nstar == 1 && PY_SEQ_LEN(e->v.Call.keywords) > 1)) return e;
  cv_loc at = cv_loc_of_expr(e);
  py_expr *args = cv_tuple(c, e->v.Call.args, PY_Load, at);
  cv_vec keys = {0}, vals = {0};
  for (int i = 0; i < PY_SEQ_LEN(e->v.Call.keywords); i++) {
    py_keyword *k = e->v.Call.keywords->a[i];
    cv_push(c, &keys, k->arg ? cv_str(c, k->arg, at) : NULL);
    cv_push(c, &vals, k->value);
  }
  py_expr *kw = py_new_Dict(c->A, cv_seq(c, &keys), cv_seq(c, &vals), at.l, at.c, at.el, at.ec);
  return cv_call_sg(c, "converted_call", at, 3, f, args, kw);
}

/* ------------------------------------------------------------------ ternary */

typedef struct src_ud {
  const char *src;
  size_t len;
  const size_t *line_starts;
  int nlines;
} src_ud;

/* The original source text of e, on one line. */
static const char *source_of(cv *c, const src_ud *u, const py_expr *e) {
  if (!u || e->lineno < 1 || e->end_lineno > u->nlines || e->lineno > e->end_lineno) return "";
  size_t a = u->line_starts[e->lineno - 1] + (size_t)e->col_offset;
  size_t b = u->line_starts[e->end_lineno - 1] + (size_t)e->end_col_offset;
  if (b > u->len || a > b) return "";
  char *t = sg_arena_strndup(c->A, u->src + a, b - a);
  for (char *p = t; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
  return t;
}

static py_expr *ternary(cv *c, py_expr *e, const py_stmt *s, void *ud) {
  (void)s;
  if (e->kind != PY_K_IfExp) return e;
  if (!cv_operands_to_lambdas(e)) return e;
  cv_loc at = cv_loc_of_expr(e);
  return cv_call_sg(c, "if_exp", at, 4, e->v.IfExp.test, cv_lambda(c, e->v.IfExp.body, at),
                    cv_lambda(c, e->v.IfExp.orelse, at), cv_str(c, source_of(c, ud, e), at));
}

/* ------------------------------------------------------------------ logical */

static const char *const cmp_names[] = {"", "Eq", "NotEq", "Lt", "LtE", "Gt", "GtE", "Is", "IsNot", "In", "NotIn"};

/* `a < b < c` → sg__.compare_(a, 'Lt', lambda: b, 'Lt', lambda: c): each comparison
 * decides whether the next operand is evaluated, as in Python (a staged one lazily,
 * like and_); `a in b` / `a not in b` → sg__.in_(a, b) / sg__.not_in_(a, b) (a staged
 * container answers with a staged bool, which `in` itself would make a plain one). */
static py_expr *comparison(cv *c, py_expr *e, cv_loc at) {
  py_seq *ops = e->v.Compare.ops, *rest = e->v.Compare.comparators;
  int n = PY_SEQ_LEN(ops);
  if (n == 1) {
    py_cmpop op = (py_cmpop)(intptr_t)ops->a[0];
    if (op != PY_In && op != PY_NotIn) return e;
    return cv_call_sg(c, op == PY_In ? "in_" : "not_in_", at, 2, e->v.Compare.left, rest->a[0]);
  }
  if (!cv_operands_to_lambdas(e)) return e;
  cv_vec args = {0};
  cv_push(c, &args, e->v.Compare.left);
  for (int i = 0; i < n; i++) {
    cv_push(c, &args, cv_str(c, cmp_names[(intptr_t)ops->a[i]], at));
    cv_push(c, &args, cv_lambda(c, rest->a[i], at));
  }
  return cv_call(c, cv_sg(c, "compare_", at), cv_seq(c, &args), NULL, at);
}

static py_expr *logical(cv *c, py_expr *e, const py_stmt *s, void *ud) {
  (void)s;
  (void)ud;
  cv_loc at = cv_loc_of_expr(e);
  if (e->kind == PY_K_UnaryOp && e->v.UnaryOp.op == PY_Not) return cv_call_sg(c, "not_", at, 1, e->v.UnaryOp.operand);
  if (e->kind == PY_K_Compare) return comparison(c, e, at);
  if (e->kind != PY_K_BoolOp || !cv_operands_to_lambdas(e)) return e;
  py_seq *vals = e->v.BoolOp.values;
  cv_vec lams = {0};
  for (int i = 0; i < PY_SEQ_LEN(vals); i++) cv_push(c, &lams, cv_lambda(c, vals->a[i], at));
  return cv_call(c, cv_sg(c, e->v.BoolOp.op == PY_And ? "and_" : "or_", at), cv_seq(c, &lams), NULL, at);
}


/* ------------------------------------------------------------------ wrapper */

void cv_pass_wrapper(cv *c, py_stmt *fn) {
  cv_loc at = cv_loc_of_stmt(fn);
  py_expr *dec = cv_call(c, cv_sg(c, "converted", at), cv_seq1(c, cv_name(c, "sg__source_map__", PY_Load, at)), NULL, at);
  cv_vec d = {0};
  cv_push_seq(c, &d, fn->v.FunctionDef.decorator_list);
  cv_push(c, &d, dec);
  fn->v.FunctionDef.decorator_list = cv_seq(c, &d);
}

/* ------------------------------------------------------------------ fused walks */

/* The slices (loads), builtins and call-trees passes in one post-order walk: at each
 * node the three rewrites apply in pass order, and since every rewrite looks only at
 * the node itself (its children are final), the result equals running the passes one
 * after the other. */
static py_expr *slices_builtins_calls(cv *c, py_expr *e, const py_stmt *s, void *ud) {
  e = get_item(c, e, s, ud);
  e = builtin_call(c, e, s, ud);
  return call_tree(c, e, s, ud);
}

void cv_pass_slices_builtins_calls(cv *c, py_stmt *fn) {
  fn->v.FunctionDef.body = cv_rewrite_stmts(c, fn->v.FunctionDef.body, set_item_stmt, NULL);
  cv_rewrite_exprs_block(c, fn->v.FunctionDef.body, slices_builtins_calls, NULL);
}

/* The ternary and logical passes in one walk (same argument). */
static py_expr *ternary_logical(cv *c, py_expr *e, const py_stmt *s, void *ud) {
  return logical(c, ternary(c, e, s, ud), s, NULL);
}

void cv_pass_ternary_logical(cv *c, py_stmt *fn) {
  src_ud u = {c->src, c->srclen, c->line_starts, c->nlines};
  cv_rewrite_exprs_block(c, fn->v.FunctionDef.body, ternary_logical, c->src ? &u : NULL);
}
