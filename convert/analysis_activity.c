// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_activity.c — activity analysis: which symbols each scope and each
 * statement reads, modifies and deletes, and the scope tree with Python's rules
 * (function, lambda, comprehension and class scopes; global / nonlocal; walrus in a
 * comprehension binds in the enclosing function; a class body's names are invisible
 * to its methods; a comprehension's first iterable is evaluated outside it).
 *
 * One walker serves two modes:
 *   build   walks the whole module once, creating scopes and collecting each scope's
 *           direct reads / writes / bindings (nested scopes are walked recursively);
 *   summary walks only the part of a statement one CFG node stands for, and uses the
 *           finished summaries of nested scopes (their free names count as reads at
 *           the point of definition, a comprehension's walrus targets as writes).
 */
#include <string.h>

#include "analysis_priv.h"

typedef struct walker {
  py_an *an;
  an_scope *sc;       /* the scope the code evaluates in */
  an_collector *col;  /* where symbols go */
  bool build;
  py_cfg_node *node;  /* summary mode: Names are linked to this node */
  int lazy;           /* inside an operand that may not be evaluated (`and` / `or` after
                         the first, a conditional expression's branches) */
} walker;

bool an_is_expr_kind(py_kind k) { return k >= PY_K_BoolOp && k <= PY_K_Slice; }

an_scope *an_scope_get(const py_an *an, const void *node) {
  return an_get(&an->scope_by_node, node);
}

const py_scope *py_an_scope(const py_an *an, const void *node) {
  an_scope *s = an_scope_get(an, node);
  return s ? &s->pub : NULL;
}

const py_scope *py_an_scope_of(const py_an *an, const void *node) {
  an_scope *s = an_get(&an->scope_of, node);
  return s ? &s->pub : NULL;
}

static bool vec_has(const an_symvec *v, py_sym x) {
  for (size_t i = 0; i < v->len; i++)
    if (v->data[i] == x) return true;
  return false;
}

/* ------------------------------------------------------------- bindings */

void an_binding_note(py_an *an, an_scope *sc, py_sym name, const py_live_value *lv) {
  uint64_t key = ((uint64_t)(uint32_t)sc->index << 32) | (uint32_t)name;
  void *v = NULL;
  an_binding *b;
  if (sg_map_get(&an->bindings, key, &v)) {
    b = v;
  } else {
    b = sg_arena_calloc(&an->arena, 1, sizeof *b);
    sg_map_put(&an->bindings, key, b);
  }
  b->count++;
  if (b->count == 1 && lv) b->lv = *lv;
  else b->lv.kind = PY_LV_UNKNOWN, b->lv.what = NULL;
}

const an_binding *an_binding_get(const py_an *an, const an_scope *sc, py_sym name) {
  uint64_t key = ((uint64_t)(uint32_t)sc->index << 32) | (uint32_t)name;
  void *v = NULL;
  return sg_map_get(&an->bindings, key, &v) ? v : NULL;
}

static an_scope *module_scope(py_an *an) { return an->scopes.data[0]; }

/* Records that simple name x is bound in scope sc (build mode). */
static void bind_in(walker *w, an_scope *sc, py_sym x, const py_live_value *lv) {
  if (!w->build) return;
  if (vec_has(&sc->globals, x)) {
    an_scope *m = module_scope(w->an);
    sg_vec_push(&m->bound, x);
    an_binding_note(w->an, m, x, lv);
    return;
  }
  if (vec_has(&sc->nonlocals, x)) {
    /* the binding lives in some enclosing function: taint every candidate */
    for (an_scope *p = (an_scope *)sc->pub.parent; p; p = (an_scope *)p->pub.parent)
      if (p->pub.kind == PY_SCOPE_FUNCTION) an_binding_note(w->an, p, x, NULL);
    return;
  }
  sg_vec_push(&sc->bound, x);
  an_binding_note(w->an, sc, x, lv);
}

static void note_read(walker *w, py_sym s) {
  if (s != PY_SYM_NONE) sg_vec_push(&w->col->read, s);
}

static void note_write(walker *w, py_sym s, const py_live_value *lv) {
  if (s == PY_SYM_NONE) return;
  sg_vec_push(&w->col->write, s);
  if (w->an->syms.data[s].kind == PY_QN_NAME) bind_in(w, w->sc, s, lv);
}

static void note_del(walker *w, py_sym s) {
  if (s == PY_SYM_NONE) return;
  sg_vec_push(&w->col->del, s);
  note_write(w, s, NULL);
}

static void note_name_node(walker *w, const py_expr *e) {
  if (w->build) an_put(&w->an->scope_of, e, w->sc);
  else if (w->node) an_put(&w->an->name_node, e, w->node);
}

/* ------------------------------------------------------------- scopes */

static an_scope *scope_new(walker *w, py_scope_kind kind, const void *node) {
  py_an *an = w->an;
  an_scope *s = sg_arena_calloc(&an->arena, 1, sizeof *s);
  s->pub.kind = kind;
  s->pub.node = node;
  s->pub.parent = w->sc ? &w->sc->pub : NULL;
  s->pub.depth = w->sc ? w->sc->pub.depth + 1 : 0;
  s->index = (int)an->scopes.len;
  sg_vec_push(&an->scopes, s);
  if (w->sc) sg_vec_push(&w->sc->children, s);
  an_put(&an->scope_by_node, node, s);
  return s;
}

static void walk_expr(walker *w, const py_expr *e);
static void walk_stmt_full(walker *w, const py_stmt *s);
static void walk_block_full(walker *w, const py_seq *b);

static void walk_expr_seq(walker *w, const py_seq *s) {
  for (int i = 0; i < PY_SEQ_LEN(s); i++)
    if (s->a[i]) walk_expr(w, s->a[i]);
}

static void bind_param(walker *w, an_scope *sc, const py_arg *a) {
  if (!a) return;
  py_sym x = py_an_sym(w->an, a->arg);
  sg_vec_push(&sc->params, x);
  sg_vec_push(&sc->bound, x);
  sg_vec_push(&sc->col.write, x);
  an_binding_note(w->an, sc, x, NULL);
}

static void bind_params(walker *w, an_scope *sc, const py_arguments *args) {
  if (!args) return;
  for (int i = 0; i < PY_SEQ_LEN(args->posonlyargs); i++) bind_param(w, sc, args->posonlyargs->a[i]);
  for (int i = 0; i < PY_SEQ_LEN(args->args); i++) bind_param(w, sc, args->args->a[i]);
  bind_param(w, sc, args->vararg);
  for (int i = 0; i < PY_SEQ_LEN(args->kwonlyargs); i++) bind_param(w, sc, args->kwonlyargs->a[i]);
  bind_param(w, sc, args->kwarg);
}

/* Defaults (and, for def, annotations) are evaluated where the function is defined. */
static void walk_arg_defaults(walker *w, const py_arguments *args, bool annotations) {
  if (!args) return;
  walk_expr_seq(w, args->defaults);
  walk_expr_seq(w, args->kw_defaults);
  if (!annotations) return;
  const py_seq *lists[3] = {args->posonlyargs, args->args, args->kwonlyargs};
  for (int l = 0; l < 3; l++)
    for (int i = 0; i < PY_SEQ_LEN(lists[l]); i++) {
      const py_arg *a = lists[l]->a[i];
      if (a->annotation) walk_expr(w, a->annotation);
    }
  if (args->vararg && args->vararg->annotation) walk_expr(w, args->vararg->annotation);
  if (args->kwarg && args->kwarg->annotation) walk_expr(w, args->kwarg->annotation);
}

/* A nested scope met by the walker: walk it (build) or use its summary. */
static void nested_scope(walker *w, py_scope_kind kind, const void *node) {
  if (!w->build) {
    an_scope *c = an_scope_get(w->an, node);
    if (!c) return;
    for (int i = 0; i < c->free_read.n; i++) note_read(w, c->free_read.a[i]);
    for (int i = 0; i < c->leaked_set.n; i++) {
      sg_vec_push(&w->col->write, c->leaked_set.a[i]);
      sg_vec_push(&w->col->maybe, c->leaked_set.a[i]); /* zero iterations bind nothing */
    }
    return;
  }
  an_scope *c = scope_new(w, kind, node);
  walker cw = *w;
  cw.sc = c;
  cw.col = &c->col;
  switch (kind) {
  case PY_SCOPE_LAMBDA: {
    const py_expr *e = node;
    bind_params(&cw, c, e->v.Lambda.args);
    walk_expr(&cw, e->v.Lambda.body);
    break;
  }
  case PY_SCOPE_COMPREHENSION: {
    const py_expr *e = node;
    const py_seq *gens = NULL;
    switch (e->kind) {
    case PY_K_ListComp: gens = e->v.ListComp.generators; break;
    case PY_K_SetComp: gens = e->v.SetComp.generators; break;
    case PY_K_DictComp: gens = e->v.DictComp.generators; break;
    default: gens = e->v.GeneratorExp.generators; break;
    }
    for (int i = 0; i < PY_SEQ_LEN(gens); i++) {
      const py_comprehension *g = gens->a[i];
      if (i > 0) walk_expr(&cw, g->iter);
      walk_expr(&cw, g->target);
      walk_expr_seq(&cw, g->ifs);
    }
    switch (e->kind) {
    case PY_K_ListComp: walk_expr(&cw, e->v.ListComp.elt); break;
    case PY_K_SetComp: walk_expr(&cw, e->v.SetComp.elt); break;
    case PY_K_DictComp:
      walk_expr(&cw, e->v.DictComp.key);
      walk_expr(&cw, e->v.DictComp.value);
      break;
    default: walk_expr(&cw, e->v.GeneratorExp.elt); break;
    }
    break;
  }
  case PY_SCOPE_FUNCTION: {
    const py_stmt *s = node;
    bind_params(&cw, c, s->v.FunctionDef.args); /* AsyncFunctionDef has the same layout */
    walk_block_full(&cw, s->v.FunctionDef.body);
    break;
  }
  case PY_SCOPE_CLASS:
    walk_block_full(&cw, ((const py_stmt *)node)->v.ClassDef.body);
    break;
  case PY_SCOPE_MODULE:
    break;
  }
}

/* (x := v) inside a comprehension binds x in the nearest enclosing non-comprehension
 * scope; every comprehension on the way "leaks" the write and treats x as declared
 * nonlocal (global when that scope is the module), as CPython's compiler does. */
static void walrus_in_comprehension(walker *w, const py_expr *target) {
  py_sym x = py_an_sym(w->an, target->v.Name.id);
  note_name_node(w, target);
  sg_vec_push(&w->col->write, x);
  if (!w->build) return;
  an_scope *s = w->sc;
  while (s->pub.kind == PY_SCOPE_COMPREHENSION) s = (an_scope *)s->pub.parent;
  for (an_scope *c = w->sc; c != s; c = (an_scope *)c->pub.parent) {
    sg_vec_push(&c->leaked, x);
    sg_vec_push(s->pub.kind == PY_SCOPE_MODULE ? &c->globals : &c->nonlocals, x);
  }
  sg_vec_push(&s->col.write, x);
  bind_in(w, s, x, NULL);
}

static void walk_qn_node(walker *w, const py_expr *e, py_expr_context ctx) {
  py_sym q = py_an_qn(w->an, e);
  if (ctx == PY_Load) note_read(w, q);
  else if (ctx == PY_Store) note_write(w, q, NULL);
  else note_del(w, q);
}

static bool visit_child(void *node, py_kind kind, void *ctx) {
  walker *w = ctx;
  if (an_is_expr_kind(kind)) walk_expr(w, node);
  else if (kind == PY_K_keyword) walk_expr(w, ((const py_keyword *)node)->value);
  return true;
}

static void walk_expr(walker *w, const py_expr *e) {
  if (!e) return;
  switch (e->kind) {
  case PY_K_Name: {
    py_sym x = py_an_sym(w->an, e->v.Name.id);
    note_name_node(w, e);
    if (e->v.Name.ctx == PY_Load) note_read(w, x);
    else if (e->v.Name.ctx == PY_Store) note_write(w, x, NULL);
    else note_del(w, x);
    return;
  }
  case PY_K_Attribute:
    walk_qn_node(w, e, e->v.Attribute.ctx);
    walk_expr(w, e->v.Attribute.value);
    return;
  case PY_K_Subscript:
    walk_qn_node(w, e, e->v.Subscript.ctx);
    walk_expr(w, e->v.Subscript.value);
    walk_expr(w, e->v.Subscript.slice);
    return;
  case PY_K_NamedExpr:
    walk_expr(w, e->v.NamedExpr.value);
    if (w->sc->pub.kind == PY_SCOPE_COMPREHENSION && e->v.NamedExpr.target->kind == PY_K_Name)
      walrus_in_comprehension(w, e->v.NamedExpr.target);
    else
      walk_expr(w, e->v.NamedExpr.target);
    if (w->lazy && e->v.NamedExpr.target->kind == PY_K_Name) /* it may not happen */
      sg_vec_push(&w->col->maybe, py_an_sym(w->an, e->v.NamedExpr.target->v.Name.id));
    return;
  case PY_K_BoolOp:
    for (int i = 0; i < PY_SEQ_LEN(e->v.BoolOp.values); i++) {
      w->lazy += i > 0;
      walk_expr(w, e->v.BoolOp.values->a[i]);
      w->lazy -= i > 0;
    }
    return;
  case PY_K_Compare: /* `a < b < c` evaluates c only when a < b */
    walk_expr(w, e->v.Compare.left);
    for (int i = 0; i < PY_SEQ_LEN(e->v.Compare.comparators); i++) {
      w->lazy += i > 0;
      walk_expr(w, e->v.Compare.comparators->a[i]);
      w->lazy -= i > 0;
    }
    return;
  case PY_K_IfExp:
    walk_expr(w, e->v.IfExp.test);
    w->lazy++;
    walk_expr(w, e->v.IfExp.body);
    walk_expr(w, e->v.IfExp.orelse);
    w->lazy--;
    return;
  case PY_K_Lambda:
    walk_arg_defaults(w, e->v.Lambda.args, false);
    nested_scope(w, PY_SCOPE_LAMBDA, e);
    return;
  case PY_K_ListComp:
  case PY_K_SetComp:
  case PY_K_DictComp:
  case PY_K_GeneratorExp: {
    const py_seq *gens = e->kind == PY_K_ListComp  ? e->v.ListComp.generators
                         : e->kind == PY_K_SetComp ? e->v.SetComp.generators
                         : e->kind == PY_K_DictComp ? e->v.DictComp.generators
                                                    : e->v.GeneratorExp.generators;
    if (PY_SEQ_LEN(gens)) walk_expr(w, ((const py_comprehension *)gens->a[0])->iter);
    nested_scope(w, PY_SCOPE_COMPREHENSION, e);
    return;
  }
  default:
    py_visit_children((void *)e, visit_child, w);
    return;
  }
}

/* ------------------------------------------------------------- statements */

static void walk_pattern(walker *w, const py_pattern *p) {
  if (!p) return;
  switch (p->kind) {
  case PY_K_MatchValue: walk_expr(w, p->v.MatchValue.value); return;
  case PY_K_MatchSequence:
    for (int i = 0; i < PY_SEQ_LEN(p->v.MatchSequence.patterns); i++)
      walk_pattern(w, p->v.MatchSequence.patterns->a[i]);
    return;
  case PY_K_MatchMapping:
    walk_expr_seq(w, p->v.MatchMapping.keys);
    for (int i = 0; i < PY_SEQ_LEN(p->v.MatchMapping.patterns); i++)
      walk_pattern(w, p->v.MatchMapping.patterns->a[i]);
    if (p->v.MatchMapping.rest) note_write(w, py_an_sym(w->an, p->v.MatchMapping.rest), NULL);
    return;
  case PY_K_MatchClass:
    walk_expr(w, p->v.MatchClass.cls);
    for (int i = 0; i < PY_SEQ_LEN(p->v.MatchClass.patterns); i++)
      walk_pattern(w, p->v.MatchClass.patterns->a[i]);
    for (int i = 0; i < PY_SEQ_LEN(p->v.MatchClass.kwd_patterns); i++)
      walk_pattern(w, p->v.MatchClass.kwd_patterns->a[i]);
    return;
  case PY_K_MatchStar:
    if (p->v.MatchStar.name) note_write(w, py_an_sym(w->an, p->v.MatchStar.name), NULL);
    return;
  case PY_K_MatchAs:
    walk_pattern(w, p->v.MatchAs.pattern);
    if (p->v.MatchAs.name) note_write(w, py_an_sym(w->an, p->v.MatchAs.name), NULL);
    return;
  case PY_K_MatchOr:
    for (int i = 0; i < PY_SEQ_LEN(p->v.MatchOr.patterns); i++)
      walk_pattern(w, p->v.MatchOr.patterns->a[i]);
    return;
  default:
    return;
  }
}

static const char *import_text(py_an *an, const char *module, int level, const char *name) {
  sg_buf b = SG_BUF_INIT;
  for (int i = 0; i < level; i++) sg_buf_putc(&b, '.');
  if (module) {
    sg_buf_puts(&b, module);
    if (name) sg_buf_putc(&b, '.');
  }
  if (name) sg_buf_puts(&b, name);
  const char *t = sg_intern_str(&an->ctx->names, b.data ? b.data : "");
  sg_buf_free(&b);
  return t;
}

static void walk_import(walker *w, const py_stmt *s) {
  bool from = s->kind == PY_K_ImportFrom;
  const py_seq *names = from ? s->v.ImportFrom.names : s->v.Import.names;
  for (int i = 0; i < PY_SEQ_LEN(names); i++) {
    const py_alias *a = names->a[i];
    py_live_value lv;
    const char *bound;
    if (from) {
      if (!strcmp(a->name, "*")) {
        if (w->build) w->sc->star_import = true;
        continue;
      }
      bound = a->asname ? a->asname : a->name;
      lv.kind = PY_LV_IMPORTED;
      lv.what = import_text(w->an, s->v.ImportFrom.module, s->v.ImportFrom.level, a->name);
    } else if (a->asname) {
      bound = a->asname;
      lv.kind = PY_LV_MODULE;
      lv.what = sg_intern_str(&w->an->ctx->names, a->name);
    } else {
      const char *dot = strchr(a->name, '.');
      size_t n = dot ? (size_t)(dot - a->name) : strlen(a->name);
      bound = sg_intern_n(&w->an->ctx->names, a->name, n);
      lv.kind = PY_LV_MODULE;
      lv.what = bound;
    }
    note_write(w, py_an_sym(w->an, bound), &lv);
  }
}

/* The part of a statement its CFG node stands for (a compound statement's head). */
static void walk_stmt_head(walker *w, const py_stmt *s) {
  switch (s->kind) {
  case PY_K_FunctionDef:
  case PY_K_AsyncFunctionDef:
    walk_expr_seq(w, s->v.FunctionDef.decorator_list);
    walk_arg_defaults(w, s->v.FunctionDef.args, true);
    walk_expr(w, s->v.FunctionDef.returns);
    nested_scope(w, PY_SCOPE_FUNCTION, s);
    note_write(w, py_an_sym(w->an, s->v.FunctionDef.name), NULL);
    return;
  case PY_K_ClassDef:
    walk_expr_seq(w, s->v.ClassDef.decorator_list);
    walk_expr_seq(w, s->v.ClassDef.bases);
    for (int i = 0; i < PY_SEQ_LEN(s->v.ClassDef.keywords); i++)
      walk_expr(w, ((const py_keyword *)s->v.ClassDef.keywords->a[i])->value);
    nested_scope(w, PY_SCOPE_CLASS, s);
    note_write(w, py_an_sym(w->an, s->v.ClassDef.name), NULL);
    return;
  case PY_K_Return: walk_expr(w, s->v.Return.value); return;
  case PY_K_Delete: walk_expr_seq(w, s->v.Delete.targets); return;
  case PY_K_Assign:
    walk_expr(w, s->v.Assign.value);
    walk_expr_seq(w, s->v.Assign.targets);
    return;
  case PY_K_TypeAlias:
    walk_expr(w, s->v.TypeAlias.value);
    walk_expr(w, s->v.TypeAlias.name);
    return;
  case PY_K_AugAssign: {
    const py_expr *t = s->v.AugAssign.target;
    walk_expr(w, s->v.AugAssign.value);
    note_read(w, py_an_qn(w->an, t));
    walk_expr(w, t);
    return;
  }
  case PY_K_AnnAssign: {
    const py_expr *t = s->v.AnnAssign.target;
    /* evaluated only at module / class level, but (like CPython's symtable) counted
     * everywhere: code re-emitted elsewhere still has to resolve those names */
    walk_expr(w, s->v.AnnAssign.annotation);
    if (s->v.AnnAssign.value) {
      walk_expr(w, s->v.AnnAssign.value);
      walk_expr(w, t);
    } else if (t->kind == PY_K_Name) {
      /* `x: int` makes x local without binding it; `(x): int` does nothing */
      note_name_node(w, t);
      if (w->build && s->v.AnnAssign.simple) sg_vec_push(&w->sc->bound, py_an_sym(w->an, t->v.Name.id));
    } else if (t->kind == PY_K_Attribute) {
      walk_expr(w, t->v.Attribute.value); /* `a.b: int` evaluates a, assigns nothing */
    } else if (t->kind == PY_K_Subscript) {
      walk_expr(w, t->v.Subscript.value);
      walk_expr(w, t->v.Subscript.slice);
    }
    return;
  }
  case PY_K_For:
  case PY_K_AsyncFor:
    walk_expr(w, s->v.For.iter);
    walk_expr(w, s->v.For.target);
    return;
  case PY_K_While: walk_expr(w, s->v.While.test); return;
  case PY_K_If: walk_expr(w, s->v.If.test); return;
  case PY_K_With:
  case PY_K_AsyncWith:
    for (int i = 0; i < PY_SEQ_LEN(s->v.With.items); i++) {
      const py_withitem *it = s->v.With.items->a[i];
      walk_expr(w, it->context_expr);
      walk_expr(w, it->optional_vars);
    }
    return;
  case PY_K_Match: walk_expr(w, s->v.Match.subject); return;
  case PY_K_Raise:
    walk_expr(w, s->v.Raise.exc);
    walk_expr(w, s->v.Raise.cause);
    return;
  case PY_K_Assert:
    walk_expr(w, s->v.Assert.test);
    walk_expr(w, s->v.Assert.msg);
    return;
  case PY_K_Import:
  case PY_K_ImportFrom: walk_import(w, s); return;
  case PY_K_Global:
  case PY_K_Nonlocal:
    if (w->build)
      for (int i = 0; i < PY_SEQ_LEN(s->v.Global.names); i++) {
        py_sym x = py_an_sym(w->an, s->v.Global.names->a[i]);
        sg_vec_push(s->kind == PY_K_Global ? &w->sc->globals : &w->sc->nonlocals, x);
      }
    return;
  case PY_K_Expr: walk_expr(w, s->v.Expr.value); return;
  default: return; /* Try, TryStar, Pass, Break, Continue */
  }
}

static void walk_handler(walker *w, const py_excepthandler *h) {
  walk_expr(w, h->v.ExceptHandler.type);
  if (h->v.ExceptHandler.name) note_write(w, py_an_sym(w->an, h->v.ExceptHandler.name), NULL);
}

static void walk_case(walker *w, const py_match_case *c) {
  walk_pattern(w, c->pattern);
  walk_expr(w, c->guard);
}

static void walk_block_full(walker *w, const py_seq *b) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++) walk_stmt_full(w, b->a[i]);
}

/* Build mode: a statement with everything nested in it. */
static void walk_stmt_full(walker *w, const py_stmt *s) {
  an_put(&w->an->scope_of, s, w->sc);
  walk_stmt_head(w, s);
  switch (s->kind) {
  case PY_K_For:
  case PY_K_AsyncFor:
    walk_block_full(w, s->v.For.body);
    walk_block_full(w, s->v.For.orelse);
    return;
  case PY_K_While:
  case PY_K_If:
    walk_block_full(w, s->v.If.body); /* While and If share the layout */
    walk_block_full(w, s->v.If.orelse);
    return;
  case PY_K_With:
  case PY_K_AsyncWith: walk_block_full(w, s->v.With.body); return;
  case PY_K_Match:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++) {
      const py_match_case *c = s->v.Match.cases->a[i];
      an_put(&w->an->scope_of, c, w->sc);
      walk_case(w, c);
      walk_block_full(w, c->body);
    }
    return;
  case PY_K_Try:
  case PY_K_TryStar:
    walk_block_full(w, s->v.Try.body);
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++) {
      const py_excepthandler *h = s->v.Try.handlers->a[i];
      an_put(&w->an->scope_of, h, w->sc);
      walk_handler(w, h);
      walk_block_full(w, h->v.ExceptHandler.body);
    }
    walk_block_full(w, s->v.Try.orelse);
    walk_block_full(w, s->v.Try.finalbody);
    return;
  default: return;
  }
}

/* ------------------------------------------------------------- finishing */

static py_symset vec_set(py_an *an, an_symvec *v) {
  /* sorts v in place; the vector itself stays usable */
  return an_symset_from(an, v->data, v->len);
}

static void finish_scope(py_an *an, an_scope *s) {
  py_scope *p = &s->pub;
  p->read = vec_set(an, &s->col.read);
  p->modified = vec_set(an, &s->col.write);
  p->deleted = vec_set(an, &s->col.del);
  p->params = vec_set(an, &s->params);
  p->globals = vec_set(an, &s->globals);
  p->nonlocals = vec_set(an, &s->nonlocals);
  s->leaked_set = vec_set(an, &s->leaked);
  py_symset bound = py_symset_names(an, vec_set(an, &s->bound));
  p->locals = py_symset_diff(an, py_symset_diff(an, bound, p->globals), p->nonlocals);

  an_symvec fv = {0}, rv = {0};
  an_symvec gv = {0};
  const py_symset own[4] = {p->read, p->modified, p->deleted, p->nonlocals};
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < own[k].n; i++) {
      py_sym x = own[k].a[i];
      const py_sym_info *in = &an->syms.data[x];
      if (py_symset_has(p->locals, in->root) || py_symset_has(p->globals, in->root)) continue;
      if (in->kind == PY_QN_NAME || k == 0) sg_vec_push(&fv, x);
      if (k == 0) sg_vec_push(&rv, x);
    }
  for (int i = 0; i < p->globals.n; i++) sg_vec_push(&gv, p->globals.a[i]);
  for (size_t c = 0; c < s->children.len; c++) {
    const py_scope *cp = &s->children.data[c]->pub;
    const an_scope *cs = s->children.data[c];
    for (int pass = 0; pass < 2; pass++) {
      py_symset cf = pass ? cs->free_read : cp->free;
      for (int i = 0; i < cf.n; i++) {
        py_sym x = cf.a[i];
        py_sym r = an->syms.data[x].root;
        if (p->kind == PY_SCOPE_CLASS ||
            (!py_symset_has(p->locals, r) && !py_symset_has(p->globals, r)))
          sg_vec_push(pass ? &rv : &fv, x);
      }
    }
    for (int i = 0; i < cp->global_uses.n; i++) sg_vec_push(&gv, cp->global_uses.a[i]);
  }
  p->free = an_symset_from(an, fv.data, fv.len);
  p->global_uses = an_symset_from(an, gv.data, gv.len);
  s->free_read = an_symset_from(an, rv.data, rv.len);
  sg_vec_free(&fv);
  sg_vec_free(&rv);
  sg_vec_free(&gv);
}

void an_activity_module(py_an *an, const py_mod *mod) {
  walker w = {an, NULL, NULL, true, NULL, 0};
  an_scope *m = scope_new(&w, PY_SCOPE_MODULE, mod);
  w.sc = m;
  w.col = &m->col;
  walk_block_full(&w, mod->v.Module.body);
  /* children were created after their parents: finish them first */
  for (size_t i = an->scopes.len; i-- > 0;) finish_scope(an, an->scopes.data[i]);
}

/* ------------------------------------------------------------- per node */

void an_node_activity(py_an *an, an_scope *sc, py_cfg_node *n, an_collector *c) {
  walker w = {an, sc, c, false, n, 0};
  switch (n->kind) {
  case PY_CFG_ENTRY:
    for (int i = 0; i < sc->pub.params.n; i++) sg_vec_push(&c->write, sc->pub.params.a[i]);
    return;
  case PY_CFG_EXIT: return;
  case PY_CFG_STMT: walk_stmt_head(&w, n->ast); return;
  case PY_CFG_HANDLER: walk_handler(&w, n->ast); return;
  case PY_CFG_HANDLER_END: {
    const py_excepthandler *h = n->ast;
    note_del(&w, py_an_sym(an, h->v.ExceptHandler.name));
    return;
  }
  case PY_CFG_CASE: walk_case(&w, n->ast); return;
  }
}

/* ------------------------------------------------------------- queries */

static void add_act(an_collector *c, const py_activity *a) {
  for (int i = 0; i < a->read.n; i++) sg_vec_push(&c->read, a->read.a[i]);
  for (int i = 0; i < a->modified.n; i++) sg_vec_push(&c->write, a->modified.a[i]);
  for (int i = 0; i < a->deleted.n; i++) sg_vec_push(&c->del, a->deleted.a[i]);
}

static void collect_block(py_an *an, const py_seq *b, an_collector *c);

static void collect_node(py_an *an, const void *ast, an_collector *c) {
  const py_cfg_node *n = an_get(&an->node_of, ast);
  if (n) add_act(c, &n->act);
}

static void collect_stmt(py_an *an, const py_stmt *s, an_collector *c) {
  collect_node(an, s, c);
  switch (s->kind) {
  case PY_K_For:
  case PY_K_AsyncFor:
    collect_block(an, s->v.For.body, c);
    collect_block(an, s->v.For.orelse, c);
    return;
  case PY_K_While:
  case PY_K_If:
    collect_block(an, s->v.If.body, c);
    collect_block(an, s->v.If.orelse, c);
    return;
  case PY_K_With:
  case PY_K_AsyncWith: collect_block(an, s->v.With.body, c); return;
  case PY_K_Match:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++) {
      const py_match_case *mc = s->v.Match.cases->a[i];
      collect_node(an, mc, c);
      collect_block(an, mc->body, c);
    }
    return;
  case PY_K_Try:
  case PY_K_TryStar:
    collect_block(an, s->v.Try.body, c);
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++) {
      const py_excepthandler *h = s->v.Try.handlers->a[i];
      collect_node(an, h, c);
      collect_block(an, h->v.ExceptHandler.body, c);
    }
    collect_block(an, s->v.Try.orelse, c);
    collect_block(an, s->v.Try.finalbody, c);
    return;
  default: return;
  }
}

static void collect_block(py_an *an, const py_seq *b, an_collector *c) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++) collect_stmt(an, b->a[i], c);
}

py_activity py_an_activity(py_an *an, const py_stmt *s) {
  py_activity *cached = an_get(&an->act_cache, s);
  if (cached) return *cached;
  an_col_clear(&an->scratch);
  if (s) collect_stmt(an, s, &an->scratch);
  py_activity *a = sg_arena_alloc(&an->arena, sizeof *a);
  *a = an_col_finish(an, &an->scratch);
  if (s) an_put(&an->act_cache, s, a);
  return *a;
}

py_activity py_an_block_activity(py_an *an, const py_seq *stmts) {
  an_col_clear(&an->scratch);
  collect_block(an, stmts, &an->scratch);
  return an_col_finish(an, &an->scratch);
}

py_activity py_an_expr_activity(py_an *an, const py_expr *e, const py_stmt *in) {
  an_scope *sc = in ? an_get(&an->scope_of, in) : NULL;
  if (!sc && an->scopes.len) sc = an->scopes.data[0];
  py_activity empty = {{0, NULL}, {0, NULL}, {0, NULL}};
  if (!sc) return empty;
  an_col_clear(&an->scratch);
  walker w = {an, sc, &an->scratch, false, NULL, 0};
  walk_expr(&w, e);
  return an_col_finish(an, &an->scratch);
}
