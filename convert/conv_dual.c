// SPDX-License-Identifier: Apache-2.0
/*
 * conv_dual.c — the plain path of a converted function (docs/converter.md "Plain
 * path"): its body starts with
 *
 *     if not sg__.staging:
 *         <the original body>
 *         return None
 *     <the converted body>
 *
 * so that, when nothing is being staged (no staged value can exist then), the function
 * runs its own statements: Python's meaning by construction, its speed, and one frame
 * per call (a recursion reaches the depth it reached before conversion). While a trace
 * is built the converted body runs (plain values keep Python's meaning there too).
 * Nested functions are converted ones in both copies (the same node, made dual in turn),
 * so a closure made outside staging stages when a trace calls it. `global` / `nonlocal`
 * declarations of the function's own scope move to its top (Python wants them before
 * any use, and the plain copy comes first).
 *
 * A converted body that makes closures (the helpers of staged control flow, the
 * lambdas of `and_` / `if_exp`) would turn the variables they use into cells of the
 * function, and every call — plain ones too — would make a cell per variable and reach
 * each through it (html.parser's suite ran 4.8x slower). Such a body is a nested
 * function of its own, `def NAME__staged(PARAMS)`, called with the arguments (unless
 * the user's body defines functions, lambdas or classes itself: their `__qualname__`
 * would then name NAME__staged while a trace runs):
 *
 *     if not sg__.staging:
 *         <the original body>
 *     def f__staged(x, *a, k, **kw):
 *         <the converted body>
 *     return f__staged(x, *a, k=k, **kw)
 */
#include <string.h>

#include "conv_priv.h"

typedef struct nested {
  py_stmt **a; /* the user's nested defs of the converted tree */
  int n, cap;
} nested;

static bool is_def(const py_stmt *s) { return s->kind == PY_K_FunctionDef || s->kind == PY_K_AsyncFunctionDef; }

static bool docstring(const py_stmt *s) {
  return s->kind == PY_K_Expr && s->v.Expr.value->kind == PY_K_Constant &&
         s->v.Expr.value->v.Constant.value.kind == PY_CONST_STR;
}

typedef struct def_walk {
  cv *c;
  nested *out;
} def_walk;

/* Every def under a node, helpers included (they never match an original def: their
 * names end in __N); not the methods of a class (class bodies stay as written). */
static bool def_visit(void *node, py_kind k, void *ud) {
  def_walk *w = ud;
  if (k == PY_K_ClassDef) return true;
  if (k == PY_K_FunctionDef || k == PY_K_AsyncFunctionDef) {
    nested *out = w->out;
    if (out->n == out->cap) {
      int cap = out->cap ? out->cap * 2 : 16;
      py_stmt **a = sg_arena_alloc(w->c->A, sizeof *a * (size_t)cap);
      if (out->n) memcpy(a, out->a, sizeof *a * (size_t)out->n);
      out->a = a;
      out->cap = cap;
    }
    out->a[out->n++] = node;
  }
  return py_visit_children(node, def_visit, ud);
}

static void collect_defs(cv *c, py_stmt *fn, nested *out) {
  def_walk w = {c, out};
  py_visit_children(fn, def_visit, &w);
}

static py_stmt *converted_twin(const nested *defs, const py_stmt *orig) {
  for (int i = 0; i < defs->n; i++) {
    const py_stmt *d = defs->a[i];
    if (d->lineno == orig->lineno && d->col_offset == orig->col_offset && d->kind == orig->kind &&
        !strcmp(d->v.FunctionDef.name, orig->v.FunctionDef.name))
      return defs->a[i];
  }
  return NULL;
}

typedef struct decls {
  cv_vec global, nonlocal; /* interned names */
} decls;

static void add_names(cv *c, cv_vec *v, const py_seq *names) {
  for (int i = 0; i < PY_SEQ_LEN(names); i++) {
    bool seen = false;
    for (int k = 0; k < v->n && !seen; k++) seen = v->a[k] == names->a[i] || !strcmp(v->a[k], names->a[i]);
    if (!seen) cv_push(c, v, (void *)names->a[i]);
  }
}

static py_seq *scope_block(cv *c, const py_seq *b, const nested *defs, decls *d, bool plain);

/* A statement of the function's own scope: `global` / `nonlocal` collected (dropped),
 * blocks walked, and in the plain copy a nested def replaced by its converted twin. */
static void scope_stmt(cv *c, py_stmt *s, const nested *defs, decls *d, bool plain, cv_vec *out) {
  if (s->kind == PY_K_Global || s->kind == PY_K_Nonlocal) {
    add_names(c, s->kind == PY_K_Global ? &d->global : &d->nonlocal,
              s->kind == PY_K_Global ? s->v.Global.names : s->v.Nonlocal.names);
    return;
  }
  if (is_def(s)) {
    py_stmt *twin = plain ? converted_twin(defs, s) : NULL;
    cv_push(c, out, twin ? twin : s);
    return;
  }
  if (plain) { /* the original nodes are shared with nothing: copy the block lists */
    py_stmt *t = sg_arena_alloc(c->A, sizeof *t);
    *t = *s;
    s = t;
  }
  switch (s->kind) {
  case PY_K_If:
    s->v.If.body = scope_block(c, s->v.If.body, defs, d, plain);
    s->v.If.orelse = scope_block(c, s->v.If.orelse, defs, d, plain);
    break;
  case PY_K_For:
  case PY_K_AsyncFor:
    s->v.For.body = scope_block(c, s->v.For.body, defs, d, plain);
    s->v.For.orelse = scope_block(c, s->v.For.orelse, defs, d, plain);
    break;
  case PY_K_While:
    s->v.While.body = scope_block(c, s->v.While.body, defs, d, plain);
    s->v.While.orelse = scope_block(c, s->v.While.orelse, defs, d, plain);
    break;
  case PY_K_With:
  case PY_K_AsyncWith: s->v.With.body = scope_block(c, s->v.With.body, defs, d, plain); break;
  case PY_K_Try:
  case PY_K_TryStar: {
    s->v.Try.body = scope_block(c, s->v.Try.body, defs, d, plain);
    py_seq *hs = s->v.Try.handlers;
    if (PY_SEQ_LEN(hs)) {
      cv_vec nh = {0};
      for (int k = 0; k < hs->n; k++) {
        py_excepthandler *h = hs->a[k];
        if (plain) {
          py_excepthandler *t = sg_arena_alloc(c->A, sizeof *t);
          *t = *h;
          h = t;
        }
        h->v.ExceptHandler.body = scope_block(c, h->v.ExceptHandler.body, defs, d, plain);
        cv_push(c, &nh, h);
      }
      s->v.Try.handlers = cv_seq(c, &nh);
    }
    s->v.Try.orelse = scope_block(c, s->v.Try.orelse, defs, d, plain);
    s->v.Try.finalbody = scope_block(c, s->v.Try.finalbody, defs, d, plain);
    break;
  }
  case PY_K_Match: {
    py_seq *cs = s->v.Match.cases;
    cv_vec nc = {0};
    for (int k = 0; k < PY_SEQ_LEN(cs); k++) {
      py_match_case *mc = cs->a[k];
      if (plain) {
        py_match_case *t = sg_arena_alloc(c->A, sizeof *t);
        *t = *mc;
        mc = t;
      }
      mc->body = scope_block(c, mc->body, defs, d, plain);
      cv_push(c, &nc, mc);
    }
    if (nc.n) s->v.Match.cases = cv_seq(c, &nc);
    break;
  }
  default: break;
  }
  cv_push(c, out, s);
}

static py_seq *scope_block(cv *c, const py_seq *b, const nested *defs, decls *d, bool plain) {
  if (!b) return NULL;
  cv_vec out = {0};
  for (int i = 0; i < b->n; i++) scope_stmt(c, b->a[i], defs, d, plain, &out);
  if (!out.n && b->n) return cv_seq1(c, cv_pass(c, cv_loc_of_stmt(b->a[0])));
  return cv_seq(c, &out);
}

/* Whether statements define functions, lambdas or classes (closures over locals). */
static bool makes_closures(const cv_vec *stmts) {
  static const py_kind kinds[] = {PY_K_FunctionDef, PY_K_AsyncFunctionDef, PY_K_Lambda, PY_K_ClassDef};
  for (int i = 0; i < stmts->n; i++) {
    const py_stmt *s = stmts->a[i];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
      if (s->kind == kinds[k] || cv_contains(s, kinds[k], false)) return true;
  }
  return false;
}

static py_arg *bare_arg(cv *c, const py_arg *a) {
  return a ? py_new_arg(c->A, a->arg, NULL, NULL, a->lineno, a->col_offset, a->end_lineno, a->end_col_offset)
           : NULL;
}

static py_seq *bare_args(cv *c, const py_seq *s) {
  cv_vec v = {0};
  for (int i = 0; i < PY_SEQ_LEN(s); i++) cv_push(c, &v, bare_arg(c, s->a[i]));
  return v.n ? cv_seq(c, &v) : NULL;
}

/* Appends to out `def NAME__staged(PARAMS): BODY` (fn's parameters without defaults or
 * annotations) and `return NAME__staged(ARGS)` passing each parameter as it came. */
static void staged_twin(cv *c, const py_stmt *fn, py_seq *body, cv_loc at, cv_vec *out) {
  const py_arguments *a = fn->v.FunctionDef.args;
  py_arguments *params = py_new_arguments(c->A, bare_args(c, a->posonlyargs), bare_args(c, a->args),
                                          bare_arg(c, a->vararg), bare_args(c, a->kwonlyargs), NULL,
                                          bare_arg(c, a->kwarg), NULL);
  size_t n = strlen(fn->v.FunctionDef.name);
  char *name = sg_arena_alloc(c->A, n + sizeof "__staged");
  memcpy(name, fn->v.FunctionDef.name, n);
  memcpy(name + n, "__staged", sizeof "__staged");
  const char *iname = cv_intern(c, name);
  cv_push(c, out, py_new_FunctionDef(c->A, iname, params, body, NULL, NULL, NULL, NULL, at.l, at.c, at.el, at.ec));
  cv_vec pos = {0}, kws = {0};
  for (int i = 0; i < PY_SEQ_LEN(a->posonlyargs); i++)
    cv_push(c, &pos, cv_name(c, ((py_arg *)a->posonlyargs->a[i])->arg, PY_Load, at));
  for (int i = 0; i < PY_SEQ_LEN(a->args); i++) cv_push(c, &pos, cv_name(c, ((py_arg *)a->args->a[i])->arg, PY_Load, at));
  if (a->vararg)
    cv_push(c, &pos, py_new_Starred(c->A, cv_name(c, a->vararg->arg, PY_Load, at), PY_Load, at.l, at.c, at.el, at.ec));
  for (int i = 0; i < PY_SEQ_LEN(a->kwonlyargs); i++) {
    const char *k = ((py_arg *)a->kwonlyargs->a[i])->arg;
    cv_push(c, &kws, py_new_keyword(c->A, k, cv_name(c, k, PY_Load, at), at.l, at.c, at.el, at.ec));
  }
  if (a->kwarg)
    cv_push(c, &kws, py_new_keyword(c->A, NULL, cv_name(c, a->kwarg->arg, PY_Load, at), at.l, at.c, at.el, at.ec));
  py_expr *call = cv_call(c, cv_name(c, iname, PY_Load, at), pos.n ? cv_seq(c, &pos) : NULL,
                          kws.n ? cv_seq(c, &kws) : NULL, at);
  cv_push(c, out, cv_return(c, call, at));
}

static void dual(cv *c, py_stmt *fn, const py_stmt *orig, const nested *defs) {
  py_seq *conv = fn->v.FunctionDef.body, *ob = orig->v.FunctionDef.body;
  cv_loc at = cv_loc_of_stmt(PY_SEQ_LEN(ob) ? ob->a[0] : orig);
  int odoc = PY_SEQ_LEN(ob) && docstring(ob->a[0]);
  int cdoc = PY_SEQ_LEN(conv) && docstring(conv->a[0]);
  decls d = {{0}, {0}};
  /* the original body, its nested defs the converted ones */
  cv_vec plain = {0};
  for (int i = odoc; i < PY_SEQ_LEN(ob); i++) scope_stmt(c, ob->a[i], defs, &d, true, &plain);
  py_stmt *last = plain.n ? plain.a[plain.n - 1] : NULL;
  if (!last || (last->kind != PY_K_Return && last->kind != PY_K_Raise)) cv_push(c, &plain, cv_return(c, cv_none(c, at), at));
  cv_vec rest = {0};
  for (int i = cdoc; i < PY_SEQ_LEN(conv); i++) scope_stmt(c, conv->a[i], defs, &d, false, &rest);
  cv_vec body = {0};
  if (cdoc) cv_push(c, &body, conv->a[0]);
  if (d.global.n) cv_push(c, &body, cv_decl(c, true, d.global.n, (const char *const *)d.global.a, at));
  if (d.nonlocal.n) cv_push(c, &body, cv_decl(c, false, d.nonlocal.n, (const char *const *)d.nonlocal.a, at));
  py_expr *staging = py_new_Attribute(c->A, cv_name(c, "sg__", PY_Load, at), cv_intern(c, "staging"), PY_Load, at.l,
                                      at.c, at.el, at.ec);
  cv_push(c, &body, cv_if(c, cv_not(c, staging, at), cv_seq(c, &plain), NULL, at));
  cv_vec ov = {0};
  for (int i = 0; i < PY_SEQ_LEN(ob); i++) cv_push(c, &ov, ob->a[i]);
  /* not when the user's own body defines functions, lambdas or classes: their
   * __qualname__ would name NAME__staged while a trace runs */
  if (fn->kind == PY_K_FunctionDef && makes_closures(&rest) && !makes_closures(&ov)) {
    cv_vec inner = {0};
    if (d.global.n) cv_push(c, &inner, cv_decl(c, true, d.global.n, (const char *const *)d.global.a, at));
    if (d.nonlocal.n) cv_push(c, &inner, cv_decl(c, false, d.nonlocal.n, (const char *const *)d.nonlocal.a, at));
    for (int i = 0; i < rest.n; i++) cv_push(c, &inner, rest.a[i]);
    staged_twin(c, fn, cv_seq(c, &inner), at, &body);
  } else {
    for (int i = 0; i < rest.n; i++) cv_push(c, &body, rest.a[i]);
  }
  fn->v.FunctionDef.body = cv_seq(c, &body);
}

bool cv_is_plain_path(const py_stmt *s) {
  const py_expr *t = s->v.If.test;
  if (s->kind != PY_K_If || t->kind != PY_K_UnaryOp || t->v.UnaryOp.op != PY_Not) return false;
  const py_expr *a = t->v.UnaryOp.operand;
  return a->kind == PY_K_Attribute && !strcmp(a->v.Attribute.attr, "staging") &&
         a->v.Attribute.value->kind == PY_K_Name && !strcmp(a->v.Attribute.value->v.Name.id, "sg__");
}

void cv_dual_body(cv *c, py_stmt *fn, const py_stmt *orig) {
  nested defs = {0}, odefs = {0};
  collect_defs(c, fn, &defs);
  collect_defs(c, (py_stmt *)orig, &odefs);
  /* nested user defs first (the plain copy of fn shares their nodes) */
  for (int i = 0; i < odefs.n; i++) {
    py_stmt *twin = converted_twin(&defs, odefs.a[i]);
    if (twin) {
      nested inner = {0};
      collect_defs(c, twin, &inner);
      dual(c, twin, odefs.a[i], &inner);
    }
  }
  dual(c, fn, orig, &defs);
}
