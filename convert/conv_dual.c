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
  for (int i = 0; i < rest.n; i++) cv_push(c, &body, rest.a[i]);
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
