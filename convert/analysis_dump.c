// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_dump.c — text dumps of every analysis, one fact per line, used by the unit
 * tests (tests/convert/test_analysis*.c) and by `pyast_tool --analyze`. Formats are in
 * docs/analyses.md. Statements are listed in source order, nested bodies (functions
 * and classes included) after their head.
 */
#include <string.h>

#include "analysis_priv.h"

typedef void (*stmt_fn)(py_an *an, const py_stmt *s, int depth, sg_buf *out);

static void each_block(py_an *an, const py_seq *b, int depth, stmt_fn fn, sg_buf *out);

static void each_stmt(py_an *an, const py_stmt *s, int depth, stmt_fn fn, sg_buf *out) {
  fn(an, s, depth, out);
  switch (s->kind) {
  case PY_K_FunctionDef:
  case PY_K_AsyncFunctionDef: each_block(an, s->v.FunctionDef.body, depth + 1, fn, out); return;
  case PY_K_ClassDef: each_block(an, s->v.ClassDef.body, depth + 1, fn, out); return;
  case PY_K_For:
  case PY_K_AsyncFor:
    each_block(an, s->v.For.body, depth + 1, fn, out);
    each_block(an, s->v.For.orelse, depth + 1, fn, out);
    return;
  case PY_K_While:
  case PY_K_If:
    each_block(an, s->v.If.body, depth + 1, fn, out);
    each_block(an, s->v.If.orelse, depth + 1, fn, out);
    return;
  case PY_K_With:
  case PY_K_AsyncWith: each_block(an, s->v.With.body, depth + 1, fn, out); return;
  case PY_K_Match:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++)
      each_block(an, ((const py_match_case *)s->v.Match.cases->a[i])->body, depth + 1, fn, out);
    return;
  case PY_K_Try:
  case PY_K_TryStar:
    each_block(an, s->v.Try.body, depth + 1, fn, out);
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++)
      each_block(an, ((const py_excepthandler *)s->v.Try.handlers->a[i])->v.ExceptHandler.body,
                 depth + 1, fn, out);
    each_block(an, s->v.Try.orelse, depth + 1, fn, out);
    each_block(an, s->v.Try.finalbody, depth + 1, fn, out);
    return;
  default: return;
  }
}

static void each_block(py_an *an, const py_seq *b, int depth, stmt_fn fn, sg_buf *out) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++) each_stmt(an, b->a[i], depth, fn, out);
}

static void each_module_stmt(py_an *an, stmt_fn fn, sg_buf *out) {
  if (an->mod) each_block(an, an->mod->v.Module.body, 0, fn, out);
}

static void stmt_label(const py_stmt *s, int depth, sg_buf *out) {
  for (int i = 0; i < depth; i++) sg_buf_puts(out, "  ");
  sg_buf_printf(out, "L%d %s", s->lineno, py_kind_name(s->kind));
}

static void put_set(const py_an *an, const char *label, py_symset s, bool always, sg_buf *out) {
  if (!s.n && !always) return;
  sg_buf_printf(out, " %s=", label);
  py_symset_format(an, s, out);
}

/* ------------------------------------------------------------- scopes */

static void scope_label(const py_scope *s, sg_buf *out) {
  const py_stmt *st = s->node;
  const py_expr *e = s->node;
  switch (s->kind) {
  case PY_SCOPE_MODULE: sg_buf_puts(out, "module"); return;
  case PY_SCOPE_FUNCTION: sg_buf_printf(out, "function %s", st->v.FunctionDef.name); return;
  case PY_SCOPE_CLASS: sg_buf_printf(out, "class %s", st->v.ClassDef.name); return;
  case PY_SCOPE_LAMBDA: sg_buf_printf(out, "lambda@%d:%d", e->lineno, e->col_offset); return;
  case PY_SCOPE_COMPREHENSION:
    sg_buf_printf(out, "%s@%d:%d", py_kind_name(e->kind), e->lineno, e->col_offset);
    return;
  }
}

void py_an_dump_scopes(py_an *an, sg_buf *out) {
  for (size_t i = 0; i < an->scopes.len; i++) {
    const py_scope *s = &an->scopes.data[i]->pub;
    for (int d = 0; d < s->depth; d++) sg_buf_puts(out, "  ");
    scope_label(s, out);
    sg_buf_putc(out, ':');
    put_set(an, "params", s->params, false, out);
    put_set(an, "locals", s->locals, true, out);
    put_set(an, "globals", s->globals, false, out);
    put_set(an, "nonlocals", s->nonlocals, false, out);
    put_set(an, "free", s->free, true, out);
    put_set(an, "read", s->read, false, out);
    put_set(an, "modified", s->modified, false, out);
    put_set(an, "deleted", s->deleted, false, out);
    sg_buf_putc(out, '\n');
  }
}

/* ------------------------------------------------------------- activity */

static void act_line(py_an *an, const py_stmt *s, int depth, sg_buf *out) {
  py_activity a = py_an_activity(an, s);
  stmt_label(s, depth, out);
  sg_buf_putc(out, ':');
  put_set(an, "read", a.read, true, out);
  put_set(an, "modified", a.modified, true, out);
  put_set(an, "deleted", a.deleted, false, out);
  sg_buf_putc(out, '\n');
}

void py_an_dump_activity(py_an *an, sg_buf *out) { each_module_stmt(an, act_line, out); }

/* ------------------------------------------------------------- CFG */

static void node_label(const py_cfg_node *n, sg_buf *out) {
  switch (n->kind) {
  case PY_CFG_ENTRY: sg_buf_puts(out, "entry"); return;
  case PY_CFG_EXIT: sg_buf_puts(out, "exit"); return;
  case PY_CFG_STMT: {
    const py_stmt *s = n->ast;
    sg_buf_printf(out, "L%d %s", s->lineno, py_kind_name(s->kind));
    return;
  }
  case PY_CFG_HANDLER:
    sg_buf_printf(out, "L%d except", ((const py_excepthandler *)n->ast)->lineno);
    return;
  case PY_CFG_HANDLER_END:
    sg_buf_printf(out, "L%d end except", ((const py_excepthandler *)n->ast)->lineno);
    return;
  case PY_CFG_CASE:
    sg_buf_printf(out, "L%d case", ((const py_match_case *)n->ast)->pattern->lineno);
    return;
  }
}

void py_an_dump_cfg(py_an *an, const py_cfg *g, sg_buf *out) {
  if (!g) return;
  sg_buf_puts(out, "cfg ");
  scope_label(g->scope, out);
  sg_buf_putc(out, '\n');
  for (int i = 0; i < g->nnodes; i++) {
    const py_cfg_node *n = g->nodes[i];
    sg_buf_printf(out, "  %d ", n->index);
    node_label(n, out);
    sg_buf_puts(out, " ->");
    for (int k = 0; k < n->nnext; k++) sg_buf_printf(out, " %d", n->next[k]->index);
    sg_buf_putc(out, '\n');
  }
  (void)an;
}

/* ------------------------------------------------------------- dataflow */

/* Only symbols rooted at locals of the statement's scope: the rest is always defined. */
static py_symset locals_only(py_an *an, const py_stmt *s, py_symset x) {
  const py_scope *sc = py_an_scope_of(an, s);
  if (!sc) return x;
  py_sym *a = sg_arena_alloc(&an->arena, (size_t)(x.n ? x.n : 1) * sizeof *a);
  int k = 0;
  for (int i = 0; i < x.n; i++)
    if (py_symset_has(sc->locals, an->syms.data[x.a[i]].root)) a[k++] = x.a[i];
  py_symset r = {k, k ? a : NULL};
  return r;
}

static void defined_line(py_an *an, const py_stmt *s, int depth, sg_buf *out) {
  stmt_label(s, depth, out);
  sg_buf_putc(out, ':');
  put_set(an, "defined", locals_only(an, s, py_an_defined_in(an, s)), true, out);
  put_set(an, "maybe", locals_only(an, s, py_an_maybe_defined_in(an, s)), true, out);
  sg_buf_putc(out, '\n');
}

void py_an_dump_defined(py_an *an, sg_buf *out) { each_module_stmt(an, defined_line, out); }

static void live_line(py_an *an, const py_stmt *s, int depth, sg_buf *out) {
  stmt_label(s, depth, out);
  sg_buf_putc(out, ':');
  put_set(an, "in", locals_only(an, s, py_an_live_in(an, s)), true, out);
  put_set(an, "out", locals_only(an, s, py_an_live_out(an, s)), true, out);
  sg_buf_putc(out, '\n');
}

void py_an_dump_liveness(py_an *an, sg_buf *out) { each_module_stmt(an, live_line, out); }

/* ------------------------------------------------------------- live values */

typedef struct lv_ctx {
  py_an *an;
  sg_buf *out;
} lv_ctx;

static bool lv_visit(void *node, py_kind kind, void *ctx) {
  lv_ctx *c = ctx;
  if (kind == PY_K_Name || kind == PY_K_Attribute) {
    const py_expr *e = node;
    py_live_value v = py_an_live_value(c->an, e);
    if (v.kind != PY_LV_UNKNOWN) {
      static const char *const kinds[] = {"unknown", "builtin", "module", "imported"};
      sg_buf_printf(c->out, "L%d:%d ", e->lineno, e->col_offset);
      py_unparse_expr(e, c->out);
      sg_buf_printf(c->out, " -> %s %s\n", kinds[v.kind], v.what);
    }
  }
  return py_visit_children(node, lv_visit, ctx);
}

void py_an_dump_live_values(py_an *an, sg_buf *out) {
  lv_ctx c = {an, out};
  if (an->mod) py_visit_children((void *)an->mod, lv_visit, &c);
}
