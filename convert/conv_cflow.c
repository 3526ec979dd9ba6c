// SPDX-License-Identifier: Apache-2.0
/*
 * conv_cflow.c — the control-flow pass (AutoGraph §7.2; Snek Figure 3 with --style
 * snek): `if` / `while` / `for` become nested functions plus a runtime call. The
 * variables a construct modifies stay the function's own variables (the nested
 * functions declare them `nonlocal`, or `global` where the function does), so plain
 * Python values behave exactly as before; the loop / branch state the runtime needs for
 * staging is (modified ∩ live after / live at the loop head), from the analyses.
 * Local names that are bound only inside converted constructs are bound first to
 * sg__.Undefined('x'), and their reads where reaching definitions cannot prove them
 * defined go through sg__.ld(x), which raises UnboundLocalError like Python.
 */
#include <stdio.h>
#include <string.h>

#include "conv_priv.h"

typedef struct cf_fn {
  cv *c;
  const py_scope *sc;
  py_symset uinit; /* names bound to sg__.Undefined at the top */
  bool snek_returns;
  const struct cf_fn *parent; /* the enclosing converted function (nested defs) */
  py_symset lifted; /* Snek: names lifted into sg__.var__() cells */
  /* locals a nested def deletes through `nonlocal` (also in uinit): the analysis cannot
   * tell where, so every read of them goes through sg__.ld */
  py_symset nl_del;
  /* state names of the enclosing constructs: their get_state reads these after a
   * nested construct, so a nested staged if must restore them too (live or not) */
  py_symset outer_state;
} cf_fn;

static bool is_construct(const py_stmt *s) {
  return s->kind == PY_K_If || s->kind == PY_K_While || s->kind == PY_K_For;
}

/* ------------------------------------------------------------ pre-pass */

static void collect_modified_in_constructs(cf_fn *f, const py_seq *b, py_symset *acc);
static void collect_bound_outside(cf_fn *f, const py_seq *b, py_symset *acc);

/* A one-symbol set in the arena (a set on the stack could be returned by a union). */
static py_symset set1(cf_fn *f, py_sym x) {
  py_sym *a = sg_arena_alloc(f->c->A, sizeof(py_sym));
  *a = x;
  return (py_symset){1, a};
}

static void add_set(cf_fn *f, py_symset *acc, py_symset s) {
  *acc = py_symset_union(f->c->an, *acc, py_symset_names(f->c->an, s));
}

static void collect_modified_in_constructs(cf_fn *f, const py_seq *b, py_symset *acc) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++) {
    const py_stmt *s = b->a[i];
    if (is_construct(s)) {
      add_set(f, acc, py_an_activity(f->c->an, s).modified);
      continue;
    }
    switch (s->kind) {
    case PY_K_Try:
    case PY_K_TryStar:
      collect_modified_in_constructs(f, s->v.Try.body, acc);
      for (int k = 0; k < PY_SEQ_LEN(s->v.Try.handlers); k++)
        collect_modified_in_constructs(f, ((py_excepthandler *)s->v.Try.handlers->a[k])->v.ExceptHandler.body, acc);
      collect_modified_in_constructs(f, s->v.Try.orelse, acc);
      collect_modified_in_constructs(f, s->v.Try.finalbody, acc);
      break;
    case PY_K_With: collect_modified_in_constructs(f, s->v.With.body, acc); break;
    case PY_K_Match:
      for (int k = 0; k < PY_SEQ_LEN(s->v.Match.cases); k++)
        collect_modified_in_constructs(f, ((py_match_case *)s->v.Match.cases->a[k])->body, acc);
      break;
    default: break;
    }
  }
}

static void bind_target_names(cf_fn *f, const py_expr *t, py_symset *acc) {
  if (!t) return;
  if (t->kind == PY_K_Name) {
    py_sym s = py_an_sym(f->c->an, t->v.Name.id);
    py_symset one = set1(f, s);
    *acc = py_symset_union(f->c->an, *acc, one);
  } else if (t->kind == PY_K_Tuple || t->kind == PY_K_List) {
    py_seq *e = t->kind == PY_K_Tuple ? t->v.Tuple.elts : t->v.List.elts;
    for (int i = 0; i < PY_SEQ_LEN(e); i++) bind_target_names(f, e->a[i], acc);
  } else if (t->kind == PY_K_Starred) {
    bind_target_names(f, t->v.Starred.value, acc);
  }
}

static void add_name(cf_fn *f, py_symset *acc, const char *n) {
  if (!n) return;
  py_sym x = py_an_sym(f->c->an, n);
  py_symset one = set1(f, x);
  *acc = py_symset_union(f->c->an, *acc, one);
}

/* A tree walk that collects names into *acc (capture_visit, nl_del_visit). */
typedef struct name_walk {
  cf_fn *f;
  py_symset *acc;
} name_walk;

/* Names a match pattern captures. */
static bool capture_visit(void *node, py_kind k, void *ud) {
  name_walk *st = ud;
  const py_pattern *p = node;
  if (k == PY_K_MatchAs) add_name(st->f, st->acc, p->v.MatchAs.name);
  else if (k == PY_K_MatchStar) add_name(st->f, st->acc, p->v.MatchStar.name);
  else if (k == PY_K_MatchMapping) add_name(st->f, st->acc, p->v.MatchMapping.rest);
  return py_visit_children(node, capture_visit, ud);
}

static void collect_bound_outside(cf_fn *f, const py_seq *b, py_symset *acc) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++) {
    const py_stmt *s = b->a[i];
    if (is_construct(s)) continue;
    switch (s->kind) {
    case PY_K_Try:
    case PY_K_TryStar:
      collect_bound_outside(f, s->v.Try.body, acc);
      for (int k = 0; k < PY_SEQ_LEN(s->v.Try.handlers); k++) {
        const py_excepthandler *h = s->v.Try.handlers->a[k];
        if (h->v.ExceptHandler.name) {
          py_sym x = py_an_sym(f->c->an, h->v.ExceptHandler.name);
          py_symset one = set1(f, x);
          *acc = py_symset_union(f->c->an, *acc, one);
        }
        collect_bound_outside(f, h->v.ExceptHandler.body, acc);
      }
      collect_bound_outside(f, s->v.Try.orelse, acc);
      collect_bound_outside(f, s->v.Try.finalbody, acc);
      break;
    case PY_K_With:
      for (int k = 0; k < PY_SEQ_LEN(s->v.With.items); k++)
        bind_target_names(f, ((py_withitem *)s->v.With.items->a[k])->optional_vars, acc);
      collect_bound_outside(f, s->v.With.body, acc);
      break;
    case PY_K_Match:
      for (int k = 0; k < PY_SEQ_LEN(s->v.Match.cases); k++) {
        const py_match_case *mc = s->v.Match.cases->a[k];
        name_walk st = {f, acc};
        capture_visit(mc->pattern, mc->pattern->kind, &st);
        collect_bound_outside(f, mc->body, acc);
      }
      break;
    default: add_set(f, acc, py_an_activity(f->c->an, s).modified); break;
    }
  }
}

/* Reads, by statements that end up inside helper functions (bodies of converted
 * constructs, `while` tests) or lambdas (operands the logical / ternary passes move:
 * `a and b` → `sg__.and_(lambda: a, lambda: b)`; an assert's message, where reading an
 * unbound local would raise NameError from an empty free variable), of names not
 * definitely defined there. */
static void collect_undef_reads(cf_fn *f, const py_seq *b, bool inside, py_symset *acc) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++) {
    const py_stmt *s = b->a[i];
    if (s->kind == PY_K_FunctionDef || s->kind == PY_K_AsyncFunctionDef || s->kind == PY_K_ClassDef) continue;
    const py_cfg_node *n = py_an_cfg_node(f->c->an, s);
    if (n && (inside || s->kind == PY_K_While || cv_has_lambda_operands(s) || cv_assert_msg_to_lambda(s)))
      add_set(f, acc, py_symset_diff(f->c->an, n->act.read, py_an_defined_in(f->c->an, s)));
    bool in = inside || is_construct(s);
    switch (s->kind) {
    case PY_K_If:
      collect_undef_reads(f, s->v.If.body, in, acc);
      collect_undef_reads(f, s->v.If.orelse, in, acc);
      break;
    case PY_K_While:
      collect_undef_reads(f, s->v.While.body, in, acc);
      collect_undef_reads(f, s->v.While.orelse, in, acc);
      break;
    case PY_K_For:
      collect_undef_reads(f, s->v.For.body, in, acc);
      collect_undef_reads(f, s->v.For.orelse, in, acc);
      break;
    case PY_K_With: collect_undef_reads(f, s->v.With.body, in, acc); break;
    case PY_K_Try:
    case PY_K_TryStar:
      collect_undef_reads(f, s->v.Try.body, in, acc);
      for (int k = 0; k < PY_SEQ_LEN(s->v.Try.handlers); k++)
        collect_undef_reads(f, ((py_excepthandler *)s->v.Try.handlers->a[k])->v.ExceptHandler.body, in, acc);
      collect_undef_reads(f, s->v.Try.orelse, in, acc);
      collect_undef_reads(f, s->v.Try.finalbody, in, acc);
      break;
    case PY_K_Match:
      for (int k = 0; k < PY_SEQ_LEN(s->v.Match.cases); k++)
        collect_undef_reads(f, ((py_match_case *)s->v.Match.cases->a[k])->body, in, acc);
      break;
    default: break;
    }
  }
}

/* The names a construct's state must hold when modified in it: live after it (an if),
 * live at its head too (a loop), live where an if's orelse starts (a staged if runs
 * the body, then the orelse from the same state: what the body modifies and the
 * orelse reads must be restored), and the enclosing constructs' state names (their
 * get_state reads them after this one, live or not). */
static bool name_read_visit(void *node, py_kind k, void *ud) {
  name_walk *st = ud;
  if (k == PY_K_Name) add_name(st->f, st->acc, ((const py_expr *)node)->v.Name.id);
  return py_visit_children(node, name_read_visit, ud);
}

static py_symset state_live(cf_fn *f, const py_stmt *s) {
  py_an *an = f->c->an;
  py_symset live = py_an_live_out(an, s);
  if (s->kind != PY_K_If) live = py_symset_union(an, live, py_an_live_in(an, s));
  /* a for's extra test (its break / return flags) is read before each item, but lives
   * outside the analysed tree: its flags are loop state (a staged for must carry them,
   * or a break on the last statement of the body is lost) */
  py_expr *extra = s->kind == PY_K_For ? cv_extra_test(f->c, s) : NULL;
  if (extra) {
    name_walk st = {f, &live};
    name_read_visit(extra, extra->kind, &st);
  }
  if (s->kind == PY_K_If && PY_SEQ_LEN(s->v.If.orelse) > 0)
    live = py_symset_union(an, live, py_an_live_in(an, s->v.If.orelse->a[0]));
  return py_symset_union(an, live, f->outer_state);
}

/* State variables of a construct (modified in it and live after it / at a loop head)
 * that may be unbound when it starts: get_state must see sg__.Undefined there, as in
 * AutoGraph, rather than an empty cell. */
static void collect_unbound_state(cf_fn *f, const py_seq *b, py_symset *acc) {
  py_an *an = f->c->an;
  for (int i = 0; i < PY_SEQ_LEN(b); i++) {
    const py_stmt *s = b->a[i];
    if (is_construct(s)) {
      py_symset mod = py_symset_names(an, py_an_activity(an, s).modified);
      py_symset live = state_live(f, s);
      add_set(f, acc, py_symset_diff(an, py_symset_inter(an, mod, live), py_an_defined_in(an, s)));
    }
    switch (s->kind) {
    case PY_K_If:
      collect_unbound_state(f, s->v.If.body, acc);
      collect_unbound_state(f, s->v.If.orelse, acc);
      break;
    case PY_K_While: collect_unbound_state(f, s->v.While.body, acc); break;
    case PY_K_For: collect_unbound_state(f, s->v.For.body, acc); break;
    case PY_K_With: collect_unbound_state(f, s->v.With.body, acc); break;
    case PY_K_Try:
    case PY_K_TryStar:
      collect_unbound_state(f, s->v.Try.body, acc);
      for (int k = 0; k < PY_SEQ_LEN(s->v.Try.handlers); k++)
        collect_unbound_state(f, ((py_excepthandler *)s->v.Try.handlers->a[k])->v.ExceptHandler.body, acc);
      collect_unbound_state(f, s->v.Try.orelse, acc);
      collect_unbound_state(f, s->v.Try.finalbody, acc);
      break;
    case PY_K_Match:
      for (int k = 0; k < PY_SEQ_LEN(s->v.Match.cases); k++)
        collect_unbound_state(f, ((py_match_case *)s->v.Match.cases->a[k])->body, acc);
      break;
    default: break;
    }
  }
}

/* ------------------------------------------------------------ ld wrapping */

typedef struct ld_ud {
  cf_fn *f;
  py_symset undef; /* uinit names not definitely defined at the statement */
} ld_ud;

/* How a read reaches its variable: in its own function, from a nested function or
 * lambda (a free-variable read: NameError when unbound), or only through list / set /
 * dict comprehensions (a function of their own before Python 3.12, inlined since). */
typedef enum ld_kind { LD_LOCAL, LD_FREE, LD_COMP } ld_kind;

/* The scope whose variable Name e (Load) reads (NULL: a global / builtin); *how says
 * which scopes the lookup leaves on the way. */
static const py_scope *resolve(cf_fn *f, const py_expr *e, ld_kind *how) {
  const py_scope *s = py_an_scope_of(f->c->an, e);
  py_sym x = py_an_sym(f->c->an, e->v.Name.id);
  *how = LD_LOCAL;
  bool first = true;
  for (; s; s = s->parent, first = false) {
    if (s->kind == PY_SCOPE_CLASS && !first) continue; /* invisible to nested functions */
    if (py_symset_has(s->globals, x)) return NULL;
    if (py_symset_has(s->locals, x) || py_symset_has(s->params, x)) return s;
    bool genexp = s->kind == PY_SCOPE_COMPREHENSION && ((const py_expr *)s->node)->kind == PY_K_GeneratorExp;
    if (s->kind == PY_SCOPE_FUNCTION || s->kind == PY_SCOPE_LAMBDA || genexp) *how = LD_FREE;
    else if (s->kind == PY_SCOPE_COMPREHENSION && *how == LD_LOCAL) *how = LD_COMP;
  }
  return NULL;
}

/* sg__.ld(e), sg__.ld(e, free=True) or sg__.ld(e, comp=True). */
static py_expr *ld_call(cv *c, py_expr *e, ld_kind how) {
  cv_loc at = cv_loc_of_expr(e);
  py_expr *call = cv_call_sg(c, "ld", at, 1, e);
  if (how != LD_LOCAL)
    call->v.Call.keywords = cv_seq1(c, py_new_keyword(c->A, cv_intern(c, how == LD_FREE ? "free" : "comp"),
                                                      cv_bool(c, true, at), at.l, at.c, at.el, at.ec));
  return call;
}

/* A read of the variable that Name node `at` (any context) names, as the expression e
 * (a Load of it): e wrapped in sg__.ld / sg__.read__ where needed. */
static py_expr *ld_read(cv *c, const py_expr *at, py_expr *e, ld_ud *u) {
  ld_kind how;
  const py_scope *owner = resolve(u->f, at, &how);
  if (!owner) return e;
  py_sym x = py_an_sym(c->an, e->v.Name.id);
  if (owner == u->f->sc && py_symset_has(u->f->lifted, x)) return cv_call_sg(c, "read__", cv_loc_of_expr(e), 1, e);
  if (owner == u->f->sc) return py_symset_has(u->undef, x) ? ld_call(c, e, how) : e;
  for (const cf_fn *a = u->f->parent; a; a = a->parent)
    if (a->sc == owner) return py_symset_has(a->uinit, x) ? ld_call(c, e, LD_FREE) : e;
  return e;
}

static py_expr *ld_wrap(cv *c, py_expr *e, const py_stmt *st, void *ud_) {
  (void)st;
  if (e->kind != PY_K_Name || e->v.Name.ctx != PY_Load) return e;
  return ld_read(c, e, e, ud_);
}

/* The uinit names that may be unbound when s starts. */
static py_symset maybe_undef(cf_fn *f, const py_stmt *s) {
  if (!f->uinit.n) return f->uinit;
  return py_symset_union(f->c->an, py_symset_diff(f->c->an, f->uinit, py_an_defined_in(f->c->an, s)), f->nl_del);
}

/* Wraps the reads in the statement's own expressions (not its nested blocks). */
static void ld_head(cf_fn *f, py_stmt *s, cv_vec *pre) {
  cv *c = f->c;
  bool outer = false;
  for (const cf_fn *a = f->parent; a && !outer; a = a->parent) outer = a->uinit.n > 0;
  if (!f->uinit.n && !outer && !f->lifted.n) return;
  py_symset undef = maybe_undef(f, s);
  if (!undef.n && !outer && !f->lifted.n) return;
  ld_ud u = {f, undef};
#define W(slot) \
  do { \
    if (slot) cv_rewrite_expr_slot(c, &(slot), s, ld_wrap, &u); \
  } while (0)
  switch (s->kind) {
  case PY_K_If: W(s->v.If.test); break;
  case PY_K_While: W(s->v.While.test); break;
  case PY_K_For: W(s->v.For.iter); break;
  case PY_K_With:
    for (int i = 0; i < PY_SEQ_LEN(s->v.With.items); i++) W(((py_withitem *)s->v.With.items->a[i])->context_expr);
    break;
  case PY_K_Match: W(s->v.Match.subject); break;
  case PY_K_Try:
  case PY_K_TryStar:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++)
      W(((py_excepthandler *)s->v.Try.handlers->a[i])->v.ExceptHandler.type);
    break;
  case PY_K_FunctionDef:
  case PY_K_AsyncFunctionDef:
  case PY_K_ClassDef: break;
  case PY_K_AugAssign: {
    py_expr *t = s->v.AugAssign.target;
    if (t->kind == PY_K_Name) {
      /* the read half of `x += …`: ld_wrap's rule for a Load of x (a `nonlocal x` of an
       * enclosing function's Undefined-bound local included) */
      cv_loc at = cv_loc_of_stmt(s);
      py_expr *rd = ld_read(c, t, cv_name(c, t->v.Name.id, PY_Load, at), &u);
      if (rd->kind == PY_K_Call && !py_symset_has(f->lifted, py_an_sym(c->an, t->v.Name.id)))
        cv_push(c, pre, cv_expr_stmt(c, rd, at));
    }
    W(s->v.AugAssign.value);
    if (t->kind != PY_K_Name) W(s->v.AugAssign.target);
    break;
  }
  default: {
    /* simple statement: every expression */
    py_seq *b = cv_seq1(c, s);
    cv_rewrite_exprs_block(c, b, ld_wrap, &u);
    break;
  }
  }
#undef W
}

/* ------------------------------------------------------------ helpers */

typedef struct decls {
  const char *nl[256];
  int nnl;
  const char *gl[256];
  int ngl;
} decls;

static const char *sym_name(cv *c, py_sym s) {
  const py_sym_info *i = py_an_sym_info(c->an, s);
  return i && i->kind == PY_QN_NAME ? i->name : NULL;
}

/* The declarations a nested function needs to write `mod` (simple names). */
static void make_decls(cf_fn *f, py_symset mod, decls *d) {
  cv *c = f->c;
  d->nnl = d->ngl = 0;
  for (int i = 0; i < mod.n; i++) {
    const char *n = sym_name(c, mod.a[i]);
    if (!n || py_symset_has(f->lifted, mod.a[i])) continue; /* a var__ cell is never rebound */
    if (py_symset_has(f->sc->globals, mod.a[i])) {
      if (d->ngl < 256) d->gl[d->ngl++] = n;
    } else if (py_symset_has(f->sc->locals, mod.a[i]) || py_symset_has(f->sc->params, mod.a[i]) ||
               py_symset_has(f->sc->nonlocals, mod.a[i])) {
      if (d->nnl < 256) d->nl[d->nnl++] = n;
    }
  }
}

static void push_decls(cv *c, cv_vec *v, const decls *d, cv_loc at) {
  if (d->ngl) cv_push(c, v, cv_decl(c, true, d->ngl, d->gl, at));
  if (d->nnl) cv_push(c, v, cv_decl(c, false, d->nnl, d->nl, at));
}

static py_stmt *helper(cv *c, const char *name, int np, const char **params, const decls *d, py_seq *pre,
                       py_seq *body, cv_loc at) {
  cv_vec v = {0};
  if (d) push_decls(c, &v, d, at);
  int ndecl = v.n;
  cv_push_seq(c, &v, pre);
  cv_push_seq(c, &v, body);
  if (v.n == ndecl) cv_push(c, &v, cv_pass(c, at));
  return cv_def(c, name, np, params, cv_seq(c, &v), at);
}

/* get_state__N / set_state__N for the state names. */
static void state_fns(cf_fn *f, py_symset state, int n, cv_vec *out, cv_loc at, py_expr **names_tuple) {
  cv *c = f->c;
  cv_vec loads = {0}, stores = {0}, strs = {0};
  for (int i = 0; i < state.n; i++) {
    const char *nm = sym_name(c, state.a[i]);
    cv_push(c, &loads, cv_name(c, nm, PY_Load, at));
    cv_push(c, &stores, cv_name(c, nm, PY_Store, at));
    cv_push(c, &strs, cv_str(c, nm, at));
  }
  const char *gs = cv_fresh(c, "get_state", n), *ss = cv_fresh(c, "set_state", n);
  cv_push(c, out, cv_def(c, gs, 0, NULL, cv_seq1(c, cv_return(c, cv_tuple(c, cv_seq(c, &loads), PY_Load, at), at)), at));
  decls d;
  make_decls(f, state, &d);
  const char *vals = "vals__";
  py_seq *body = state.n ? cv_seq1(c, cv_assign(c, cv_tuple(c, cv_seq(c, &stores), PY_Store, at),
                                                cv_name(c, vals, PY_Load, at), at))
                         : NULL;
  cv_push(c, out, helper(c, ss, 1, &vals, &d, NULL, body, at));
  *names_tuple = cv_tuple(c, cv_seq(c, &strs), PY_Load, at);
}

/* Names bound by walrus in e (not inside lambdas). */
static bool walrus_visit(void *node, py_kind k, void *ud) {
  py_expr **acc = ud;
  if (k == PY_K_Lambda) return true;
  if (k == PY_K_NamedExpr) {
    py_expr *e = node;
    if (e->v.NamedExpr.target->kind == PY_K_Name && !*acc) *acc = e->v.NamedExpr.target;
  }
  return py_visit_children(node, walrus_visit, ud);
}

/* ------------------------------------------------------------ Snek lifting */

/* Flag reads in a generated extra test (nodes the analysis does not know): they are
 * the function's own variables, so lifted ones read their cell. */
static py_expr *lift_flag_read(cv *c, py_expr *e, const py_stmt *st, void *ud) {
  (void)st;
  cf_fn *f = ud;
  if (e->kind == PY_K_Name && e->v.Name.ctx == PY_Load && py_symset_has(f->lifted, py_an_sym(c->an, e->v.Name.id)))
    return cv_call_sg(c, "read__", cv_loc_of_expr(e), 1, e);
  return e;
}

static bool lifted_target(cf_fn *f, const py_expr *t) {
  return t && t->kind == PY_K_Name && f->lifted.n && py_symset_has(f->lifted, py_an_sym(f->c->an, t->v.Name.id));
}

/* Names that cannot be lifted into var__ cells: bound any other way than `x = e`,
 * `x op= e` or `for x in`, declared in a nested scope, or read by a nested scope. */
typedef struct lift_st {
  cf_fn *f;
  py_symset bad;
  int depth; /* > 0 inside a nested def / lambda */
} lift_st;

static void lift_bad(lift_st *st, const char *n) {
  if (n) add_name(st->f, &st->bad, n);
}

static bool lift_visit(void *node, py_kind k, void *ud) {
  lift_st *st = ud;
  switch (k) {
  case PY_K_Name: {
    const py_expr *e = node;
    if (e->v.Name.ctx != PY_Load || st->depth > 0) lift_bad(st, e->v.Name.id);
    return true;
  }
  case PY_K_Assign: {
    const py_stmt *s = node;
    if (s->v.Assign.targets->n == 1 && ((py_expr *)s->v.Assign.targets->a[0])->kind == PY_K_Name && !st->depth) {
      return lift_visit(s->v.Assign.value, s->v.Assign.value->kind, ud);
    }
    break;
  }
  case PY_K_AugAssign: {
    const py_stmt *s = node;
    if (s->v.AugAssign.target->kind == PY_K_Name && !st->depth)
      return lift_visit(s->v.AugAssign.value, s->v.AugAssign.value->kind, ud);
    break;
  }
  case PY_K_For: {
    const py_stmt *s = node;
    if (s->v.For.target->kind == PY_K_Name && !st->depth) {
      lift_visit(s->v.For.iter, s->v.For.iter->kind, ud);
      for (int i = 0; i < PY_SEQ_LEN(s->v.For.body); i++)
        lift_visit(s->v.For.body->a[i], ((py_stmt *)s->v.For.body->a[i])->kind, ud);
      for (int i = 0; i < PY_SEQ_LEN(s->v.For.orelse); i++)
        lift_visit(s->v.For.orelse->a[i], ((py_stmt *)s->v.For.orelse->a[i])->kind, ud);
      return true;
    }
    break;
  }
  case PY_K_FunctionDef:
  case PY_K_AsyncFunctionDef:
  case PY_K_ClassDef:
  case PY_K_Lambda: {
    if (k != PY_K_Lambda) lift_bad(st, k == PY_K_ClassDef ? ((py_stmt *)node)->v.ClassDef.name : ((py_stmt *)node)->v.FunctionDef.name);
    st->depth++;
    py_visit_children(node, lift_visit, ud);
    st->depth--;
    return true;
  }
  case PY_K_ExceptHandler: lift_bad(st, ((py_excepthandler *)node)->v.ExceptHandler.name); break;
  case PY_K_alias: {
    const py_alias *a = node;
    if (a->asname) lift_bad(st, a->asname);
    else if (a->name) {
      const char *dot = strchr(a->name, '.');
      lift_bad(st, dot ? sg_arena_strndup(st->f->c->A, a->name, (size_t)(dot - a->name)) : a->name);
    }
    break;
  }
  case PY_K_Global:
  case PY_K_Nonlocal: {
    const py_stmt *s = node;
    py_seq *ns = k == PY_K_Global ? s->v.Global.names : s->v.Nonlocal.names;
    for (int i = 0; i < PY_SEQ_LEN(ns); i++) lift_bad(st, ns->a[i]);
    break;
  }
  case PY_K_MatchAs: lift_bad(st, ((py_pattern *)node)->v.MatchAs.name); break;
  case PY_K_MatchStar: lift_bad(st, ((py_pattern *)node)->v.MatchStar.name); break;
  case PY_K_MatchMapping: lift_bad(st, ((py_pattern *)node)->v.MatchMapping.rest); break;
  default: break;
  }
  return py_visit_children(node, lift_visit, ud);
}

/* Snek: the names to lift — locals rebound inside extracted functions whose every
 * binding is a plain one and every read is provably after a definition. */
static py_symset lift_set(cf_fn *f, py_symset inc, py_symset locals) {
  py_symset cand = py_symset_diff(f->c->an, py_symset_inter(f->c->an, inc, locals), f->uinit);
  if (!cand.n) return cand;
  lift_st st = {f, {0, NULL}, 0};
  py_seq *body = ((py_stmt *)f->sc->node)->v.FunctionDef.body;
  for (int i = 0; i < PY_SEQ_LEN(body); i++) lift_visit(body->a[i], ((py_stmt *)body->a[i])->kind, &st);
  py_symset early = {0, NULL};
  collect_undef_reads(f, body, true, &early);
  return py_symset_diff(f->c->an, py_symset_diff(f->c->an, cand, st.bad), early);
}

/* ------------------------------------------------------------ the pass */

static py_seq *cf_block(cf_fn *f, py_seq *b);
static void cf_function(cv *c, py_stmt *fn, const cf_fn *parent);

static py_expr *name_of_fn(cv *c, const char *n, cv_loc at) { return cv_name(c, n, PY_Load, at); }

/* Is Name t (a `del` target in f) an enclosing function's local bound to
 * sg__.Undefined at its top (t is a `nonlocal` of f)? */
static bool enclosing_undef(cf_fn *f, const py_expr *t) {
  ld_kind how;
  const py_scope *owner = resolve(f, t, &how);
  if (!owner || owner == f->sc) return false;
  for (const cf_fn *a = f->parent; a; a = a->parent)
    if (a->sc == owner) return py_symset_has(a->uinit, py_an_sym(f->c->an, t->v.Name.id));
  return false;
}

/* `del t1, t2, ...` where some ti is a name bound to sg__.Undefined at the top, of f or
 * (a `nonlocal`) of an enclosing function. f's own such name becomes
 * `[sg__.ld(x);] x = sg__.Undefined('x')` (ld first where x may be unbound: Python's
 * `del` of an unbound local raises UnboundLocalError); an enclosing function's becomes
 * `sg__.ld(x, free=True); x = sg__.Undefined('x')` (NameError while it holds
 * sg__.Undefined; the enclosing function reads x through sg__.ld everywhere, see
 * cf_fn.nl_del). The other targets stay `del ti`, in order. Returns false (nothing
 * written) when no target is such a name. */
static bool del_names(cf_fn *f, py_stmt *s, cv_vec *out) {
  cv *c = f->c;
  py_seq *ts = s->v.Delete.targets;
  bool any = false;
  for (int i = 0; i < PY_SEQ_LEN(ts) && !any; i++) {
    const py_expr *t = ts->a[i];
    any = t->kind == PY_K_Name && (py_symset_has(f->uinit, py_an_sym(c->an, t->v.Name.id)) || enclosing_undef(f, t));
  }
  if (!any) return false;
  py_symset undef = maybe_undef(f, s);
  for (int i = 0; i < PY_SEQ_LEN(ts); i++) {
    py_expr *t = ts->a[i];
    cv_loc at = cv_loc_of_expr(t);
    bool own = t->kind == PY_K_Name && py_symset_has(f->uinit, py_an_sym(c->an, t->v.Name.id));
    bool outer = !own && t->kind == PY_K_Name && enclosing_undef(f, t);
    py_expr *rd = t->kind == PY_K_Name ? cv_name(c, t->v.Name.id, PY_Load, at) : NULL;
    if (own || outer) {
      if (outer) cv_push(c, out, cv_expr_stmt(c, ld_call(c, rd, LD_FREE), at));
      else if (py_symset_has(undef, py_an_sym(c->an, t->v.Name.id)))
        cv_push(c, out, cv_expr_stmt(c, ld_call(c, rd, LD_LOCAL), at));
      cv_push(c, out, cv_assign_name(c, t->v.Name.id, cv_call_sg(c, "Undefined", at, 1, cv_str(c, t->v.Name.id, at)), at));
      continue;
    }
    py_stmt *d = py_new_Delete(c->A, cv_seq1(c, t), at.l, at.c, at.el, at.ec);
    cv_vec pre = {0};
    ld_head(f, d, &pre);
    cv_push_seq(c, out, cv_seq(c, &pre));
    cv_push(c, out, d);
  }
  return true;
}

static void cf_stmt(cf_fn *f, py_stmt *s, cv_vec *out) {
  cv *c = f->c;
  cv_loc at = cv_loc_of_stmt(s);
  bool snek = c->style == PY_STYLE_SNEK;
  cv_vec pre = {0};
  if (s->kind == PY_K_FunctionDef) {
    cf_function(c, s, f);
    cv_push(c, out, s);
    return;
  }
  if (s->kind == PY_K_Delete && del_names(f, s, out)) return;
  if (!is_construct(s)) {
    ld_head(f, s, &pre);
    cv_push_seq(c, out, cv_seq(c, &pre));
    switch (s->kind) {
    case PY_K_Try:
    case PY_K_TryStar:
      s->v.Try.body = cf_block(f, s->v.Try.body);
      for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++) {
        py_excepthandler *h = s->v.Try.handlers->a[i];
        h->v.ExceptHandler.body = cf_block(f, h->v.ExceptHandler.body);
      }
      s->v.Try.orelse = cf_block(f, s->v.Try.orelse);
      s->v.Try.finalbody = cf_block(f, s->v.Try.finalbody);
      break;
    case PY_K_With: s->v.With.body = cf_block(f, s->v.With.body); break;
    case PY_K_Match:
      for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++) {
        py_match_case *mc = s->v.Match.cases->a[i];
        mc->body = cf_block(f, mc->body);
      }
      break;
    case PY_K_Return:
      if (snek && f->snek_returns) {
        /* inside an extracted function: non-local return */
        py_expr *v = s->v.Return.value ? s->v.Return.value : cv_none(c, at);
        cv_push(c, out, cv_expr_stmt(c, cv_call_sg(c, "return__", at, 1, v), at));
        return;
      }
      break;
    case PY_K_Break:
      if (snek) {
        cv_push(c, out, cv_expr_stmt(c, cv_call_sg(c, "break__", at, 0), at));
        return;
      }
      break;
    case PY_K_Continue:
      if (snek) {
        cv_push(c, out, cv_expr_stmt(c, cv_call_sg(c, "continue__", at, 0), at));
        return;
      }
      break;
    case PY_K_Assign:
      if (lifted_target(f, s->v.Assign.targets->n == 1 ? s->v.Assign.targets->a[0] : NULL)) {
        py_expr *t = s->v.Assign.targets->a[0];
        cv_push(c, out, cv_expr_stmt(c, cv_call_sg(c, "assign__", at, 2, cv_name(c, t->v.Name.id, PY_Load, at),
                                                   s->v.Assign.value), at));
        return;
      }
      break;
    case PY_K_AugAssign:
      if (lifted_target(f, s->v.AugAssign.target)) {
        /* t = read__(x); t op= v; assign__(x, t): keeps in-place operators in place */
        const char *x = s->v.AugAssign.target->v.Name.id, *t = cv_fresh(c, "aug", ++c->counter);
        cv_push(c, out, cv_assign_name(c, t, cv_call_sg(c, "read__", at, 1, cv_name(c, x, PY_Load, at)), at));
        cv_push(c, out, py_new_AugAssign(c->A, cv_name(c, t, PY_Store, at), s->v.AugAssign.op, s->v.AugAssign.value,
                                         at.l, at.c, at.el, at.ec));
        cv_push(c, out, cv_expr_stmt(c, cv_call_sg(c, "assign__", at, 2, cv_name(c, x, PY_Load, at),
                                                   cv_name(c, t, PY_Load, at)), at));
        return;
      }
      break;
    default: break;
    }
    cv_push(c, out, s);
    return;
  }

  /* queries first (the analysis knows only the original nodes) */
  py_an *an = c->an;
  py_symset mod = py_symset_names(an, py_an_activity(an, s).modified);
  py_symset live = state_live(f, s);
  decls d;
  make_decls(f, mod, &d);
  py_symset state = {0, NULL};
  {
    py_sym *tmp = sg_arena_alloc(c->A, sizeof(py_sym) * (size_t)(mod.n + 1));
    int n = 0;
    for (int i = 0; i < mod.n; i++)
      if (py_symset_has(live, mod.a[i]) &&
          (py_symset_has(f->sc->locals, mod.a[i]) || py_symset_has(f->sc->params, mod.a[i]) ||
           py_symset_has(f->sc->nonlocals, mod.a[i]) || py_symset_has(f->sc->globals, mod.a[i])))
        tmp[n++] = mod.a[i];
    state = (py_symset){n, tmp};
  }
  py_symset saved_outer = f->outer_state;
  f->outer_state = py_symset_union(an, f->outer_state, state);
  ld_head(f, s, &pre);
  cv_push_seq(c, out, cv_seq(c, &pre));
  bool saved_ret = f->snek_returns;
  f->snek_returns = true;
  int n = ++c->counter;
  py_expr *names = NULL;

  if (s->kind == PY_K_If) {
    py_seq *body = cf_block(f, s->v.If.body), *orelse = cf_block(f, s->v.If.orelse);
    f->outer_state = saved_outer;
    f->snek_returns = saved_ret;
    const char *t = cv_fresh(c, snek ? "then" : "if_true", n), *e = cv_fresh(c, snek ? "else" : "if_false", n);
    cv_push(c, out, helper(c, t, 0, NULL, &d, NULL, body, at));
    cv_push(c, out, helper(c, e, 0, NULL, &d, NULL, orelse, at));
    if (snek) {
      cv_push(c, out, cv_expr_stmt(c, cv_call_sg(c, "if__", at, 3, s->v.If.test, name_of_fn(c, t, at), name_of_fn(c, e, at)), at));
      return;
    }
    state_fns(f, state, n, out, at, &names);
    py_expr *call = cv_call(c, cv_sg(c, "if_stmt", at), NULL, NULL, at);
    void *args[7] = {s->v.If.test, name_of_fn(c, t, at), name_of_fn(c, e, at), name_of_fn(c, cv_fresh(c, "get_state", n), at),
                     name_of_fn(c, cv_fresh(c, "set_state", n), at), names, cv_int(c, state.n, at)};
    call->v.Call.args = cv_seq_n(c, 7, args);
    cv_push(c, out, cv_expr_stmt(c, call, at));
    return;
  }

  if (s->kind == PY_K_While) {
    py_seq *body = cf_block(f, s->v.While.body);
    f->outer_state = saved_outer;
    f->snek_returns = saved_ret;
    const char *tn = cv_fresh(c, snek ? "cond" : "loop_test", n), *bn = cv_fresh(c, snek ? "body" : "loop_body", n);
    /* a walrus in the test binds in the function: declare it in the test function */
    py_expr *w = NULL;
    walrus_visit(s->v.While.test, s->v.While.test->kind, &w);
    decls dt = {.nnl = 0, .ngl = 0};
    if (w) {
      py_sym ws = py_an_sym(an, w->v.Name.id);
      make_decls(f, set1(f, ws), &dt);
    }
    cv_push(c, out, helper(c, tn, 0, NULL, w ? &dt : NULL, NULL, cv_seq1(c, cv_return(c, s->v.While.test, at)), at));
    cv_push(c, out, helper(c, bn, 0, NULL, &d, NULL, body, at));
    if (snek) {
      cv_push(c, out, cv_expr_stmt(c, cv_call_sg(c, "while__", at, 2, name_of_fn(c, tn, at), name_of_fn(c, bn, at)), at));
      return;
    }
    state_fns(f, state, n, out, at, &names);
    py_expr *opts = cv_loop_options(c, s);
    if (!opts) opts = py_new_Dict(c->A, NULL, NULL, at.l, at.c, at.el, at.ec);
    py_expr *call = cv_call(c, cv_sg(c, "while_stmt", at), NULL, NULL, at);
    void *args[6] = {name_of_fn(c, tn, at), name_of_fn(c, bn, at), name_of_fn(c, cv_fresh(c, "get_state", n), at),
                     name_of_fn(c, cv_fresh(c, "set_state", n), at), names, opts};
    call->v.Call.args = cv_seq_n(c, 6, args);
    cv_push(c, out, cv_expr_stmt(c, call, at));
    return;
  }

  /* For */
  py_seq *body = cf_block(f, s->v.For.body);
  f->outer_state = saved_outer;
  f->snek_returns = saved_ret;
  const char *bn = cv_fresh(c, snek ? "body" : "loop_body", n);
  const char *itr = cv_fresh(c, "itr", n);
  py_seq *tgt = lifted_target(f, s->v.For.target)
                    ? cv_seq1(c, cv_expr_stmt(c, cv_call_sg(c, "assign__", at, 2,
                                                            cv_name(c, s->v.For.target->v.Name.id, PY_Load, at),
                                                            cv_name(c, itr, PY_Load, at)), at))
                    : cv_seq1(c, cv_assign(c, s->v.For.target, cv_name(c, itr, PY_Load, at), at));
  py_expr *extra = cv_extra_test(c, s);
  if (extra && f->lifted.n) cv_rewrite_expr_slot(c, &extra, s, lift_flag_read, f);
  if (snek && extra) {
    /* the flag passes ran (a jump inside with/try): sg__.for__ has no extra test, so
     * the body ends the loop itself once a flag is set (before the next item) */
    cv_vec nb = {0};
    cv_push_seq(c, &nb, body);
    cv_push(c, &nb, cv_expr_stmt(c, cv_call_sg(c, "break_unless__", at, 1, extra), at));
    body = cv_seq(c, &nb);
  }
  cv_push(c, out, helper(c, bn, 1, &itr, &d, tgt, body, at));
  if (snek) {
    cv_push(c, out, cv_expr_stmt(c, cv_call_sg(c, "for__", at, 2, s->v.For.iter, name_of_fn(c, bn, at)), at));
    return;
  }
  py_expr *extra_fn = cv_none(c, at);
  if (extra) {
    const char *en = cv_fresh(c, "extra_test", n);
    cv_push(c, out, helper(c, en, 0, NULL, NULL, NULL, cv_seq1(c, cv_return(c, extra, at)), at));
    extra_fn = name_of_fn(c, en, at);
  }
  state_fns(f, state, n, out, at, &names);
  py_expr *opts = cv_loop_options(c, s);
  if (!opts) opts = py_new_Dict(c->A, NULL, NULL, at.l, at.c, at.el, at.ec);
  py_expr *call = cv_call(c, cv_sg(c, "for_stmt", at), NULL, NULL, at);
  void *args[7] = {s->v.For.iter, extra_fn, name_of_fn(c, bn, at), name_of_fn(c, cv_fresh(c, "get_state", n), at),
                   name_of_fn(c, cv_fresh(c, "set_state", n), at), names, opts};
  call->v.Call.args = cv_seq_n(c, 7, args);
  cv_push(c, out, cv_expr_stmt(c, call, at));
}

static py_seq *cf_block(cf_fn *f, py_seq *b) {
  if (!b) return NULL;
  cv_vec out = {0};
  for (int i = 0; i < b->n; i++) cf_stmt(f, b->a[i], &out);
  return cv_seq(f->c, &out);
}

static int doc_start(const py_seq *body) {
  if (PY_SEQ_LEN(body) && ((py_stmt *)body->a[0])->kind == PY_K_Expr) {
    const py_expr *e = ((py_stmt *)body->a[0])->v.Expr.value;
    if (e->kind == PY_K_Constant && e->v.Constant.value.kind == PY_CONST_STR) return 1;
  }
  return 0;
}

static bool has_nested_return(const py_seq *b, int depth);
static bool stmt_nested_return(const py_stmt *s, int depth) {
  switch (s->kind) {
  case PY_K_Return: return depth > 0;
  case PY_K_If: return has_nested_return(s->v.If.body, depth + 1) || has_nested_return(s->v.If.orelse, depth + 1);
  case PY_K_While: return has_nested_return(s->v.While.body, depth + 1) || has_nested_return(s->v.While.orelse, depth);
  case PY_K_For: return has_nested_return(s->v.For.body, depth + 1) || has_nested_return(s->v.For.orelse, depth);
  case PY_K_With: return has_nested_return(s->v.With.body, depth);
  case PY_K_Try:
  case PY_K_TryStar:
    if (has_nested_return(s->v.Try.body, depth) || has_nested_return(s->v.Try.orelse, depth) ||
        has_nested_return(s->v.Try.finalbody, depth))
      return true;
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++)
      if (has_nested_return(((py_excepthandler *)s->v.Try.handlers->a[i])->v.ExceptHandler.body, depth)) return true;
    return false;
  case PY_K_Match:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++)
      if (has_nested_return(((py_match_case *)s->v.Match.cases->a[i])->body, depth)) return true;
    return false;
  default: return false;
  }
}
static bool has_nested_return(const py_seq *b, int depth) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++)
    if (stmt_nested_return(b->a[i], depth)) return true;
  return false;
}

/* Names deleted through `nonlocal` in the functions nested in s (any depth). */
static bool nl_del_visit(void *node, py_kind k, void *ud) {
  name_walk *st = ud;
  if (k == PY_K_FunctionDef || k == PY_K_AsyncFunctionDef) {
    const py_scope *sc = py_an_scope(st->f->c->an, node);
    if (sc) add_set(st->f, st->acc, py_symset_inter(st->f->c->an, sc->deleted, sc->nonlocals));
  }
  return py_visit_children(node, nl_del_visit, ud);
}

static void nested_nonlocal_dels(cf_fn *f, py_stmt *s, py_symset *acc) {
  name_walk st = {f, acc};
  nl_del_visit(s, s->kind, &st);
}

static void cf_function(cv *c, py_stmt *fn, const cf_fn *parent) {
  cf_fn f = {c, py_an_scope(c->an, fn), {0, NULL}, false, parent, {0, NULL}, {0, NULL}, {0, NULL}};
  if (!f.sc) return;
  py_seq *body = fn->v.FunctionDef.body;
  py_symset inc = {0, NULL}, bound = {0, NULL};
  collect_modified_in_constructs(&f, body, &inc);
  collect_bound_outside(&f, body, &bound);
  py_symset locals = py_symset_diff(c->an, f.sc->locals, f.sc->params);
  f.uinit = py_symset_inter(c->an, py_symset_diff(c->an, inc, bound), locals);
  /* plus locals a helper may read before they are bound: the helper must see
   * sg__.Undefined (and raise UnboundLocalError through sg__.ld), not an empty cell */
  py_symset early = {0, NULL};
  collect_undef_reads(&f, body, false, &early);
  collect_unbound_state(&f, body, &early);
  f.uinit = py_symset_union(c->an, f.uinit, py_symset_inter(c->an, early, locals));
  /* plus deleted locals: `del x` becomes `x = sg__.Undefined('x')` (del_names), so a
   * helper reading x afterwards raises UnboundLocalError through sg__.ld, not NameError
   * from an empty cell */
  f.uinit = py_symset_union(c->an, f.uinit, py_symset_inter(c->an, py_symset_names(c->an, f.sc->deleted), locals));
  /* plus locals a nested def deletes through `nonlocal` (del_names rebinds them to
   * sg__.Undefined there), read through sg__.ld everywhere */
  for (int i = 0; i < PY_SEQ_LEN(body); i++) nested_nonlocal_dels(&f, body->a[i], &f.nl_del);
  f.nl_del = py_symset_inter(c->an, f.nl_del, locals);
  f.uinit = py_symset_union(c->an, f.uinit, f.nl_del);
  if (c->style == PY_STYLE_SNEK) f.lifted = lift_set(&f, inc, locals);
  bool snek_wrap = c->style == PY_STYLE_SNEK && has_nested_return(body, 0);
  int start = doc_start(body);
  cv_vec out = {0}, rest = {0};
  for (int i = 0; i < start; i++) cv_push(c, &out, body->a[i]);
  cv_loc at = cv_loc_of_stmt(PY_SEQ_LEN(body) > start ? body->a[start] : body->a[0]);
  for (int i = 0; i < f.uinit.n; i++) {
    const char *nm = sym_name(c, f.uinit.a[i]);
    cv_push(c, &out, cv_assign_name(c, nm, cv_call_sg(c, "Undefined", at, 1, cv_str(c, nm, at)), at));
  }
  for (int i = 0; i < f.lifted.n; i++)
    cv_push(c, &out, cv_assign_name(c, sym_name(c, f.lifted.a[i]), cv_call_sg(c, "var__", at, 0), at));
  for (int i = start; i < PY_SEQ_LEN(body); i++) cf_stmt(&f, body->a[i], &rest);
  if (snek_wrap) {
    /* try: body except sg__.NonLocalReturnValue as r__: return r__.value */
    py_expr *rv = py_new_Attribute(c->A, cv_name(c, "r__", PY_Load, at), cv_intern(c, "value"), PY_Load, at.l, at.c,
                                   at.el, at.ec);
    py_excepthandler *h = py_new_ExceptHandler(c->A, cv_sg(c, "NonLocalReturnValue", at), cv_intern(c, "r__"),
                                               cv_seq1(c, cv_return(c, rv, at)), at.l, at.c, at.el, at.ec);
    py_stmt *t = py_new_Try(c->A, cv_seq(c, &rest), cv_seq1(c, h), NULL, NULL, at.l, at.c, at.el, at.ec);
    cv_push(c, &out, t);
  } else {
    cv_push_seq(c, &out, cv_seq(c, &rest));
  }
  if (out.n == 0) cv_push(c, &out, cv_pass(c, at));
  fn->v.FunctionDef.body = cv_seq(c, &out);
}

void cv_pass_control_flow(cv *c, py_stmt *fn) {
  if (!c->an) return;
  cf_function(c, fn, NULL);
}
