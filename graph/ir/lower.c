// SPDX-License-Identifier: Apache-2.0
/*
 * lower.c — S-expression forms → graph IR (docs/sexpr.md "Forms").
 *
 * One function per form, the production as its first-line comment. Names resolve
 * through a chain of bindings (params, let, var, nested def) then top-level defs, then
 * primitives; a name bound in an enclosing graph becomes a free variable simply by
 * pointing at that graph's node. `if` branches and lambdas become nested graphs, so
 * only the taken branch runs. `begin` and unused `let` bindings are kept alive with
 * a `seq` node so effects happen in program order (the algebra pass drops pure ones).
 * `var`/`set!` (Snek's lifted variables): within one graph `set!` rebinds the name
 * SSA-style; a `set!` inside an `if` branch makes the branches return the var's new
 * value next to their result (a tuple), and the `if` rebinds it (a phi, in SSA
 * terms); a var that some nested lambda/def sets, or reads while it is set anywhere,
 * is boxed instead: a `variable` cell, each reference a `read`, each `set!` an
 * `assign` (effects, in program order), so closures see the variable, not a copy.
 */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include "gr_ir.h"

/* A scope is a chain of bindings, innermost first (`next`). Lookups do not walk it: a
 * staged trace binds thousands of names in one def, and every form's head is looked up
 * (a walk per form made lowering quadratic). Instead the lowerer indexes bindings by
 * name (`same`: the previous binding of that name, in any chain), and a candidate is in
 * scope when it is an ancestor of the scope, found in O(log n) through skew-binary jump
 * pointers (`depth`, `jump`). `vars` links the unboxed vars for `if`. */
typedef struct binding {
  const char *name;
  gr_node *node;
  gr_graph *graph; /* graph where it was bound */
  bool is_var;
  bool boxed; /* var held in a `variable` cell (set! from a nested function) */
  int depth;  /* bindings above it in its chain */
  struct binding *next;
  struct binding *jump; /* an ancestor, for ancestor queries */
  struct binding *same; /* the binding of the same name made before it */
  struct binding *vars; /* the nearest unboxed var above it */
} binding;

typedef struct lowerer {
  gr_module *m;
  sg_error *err;
  sg_map toplevel; /* interned name → gr_graph* */
  sg_map names;    /* interned name → the newest binding of that name */
  int depth;
  int nlambda;
} lowerer;

static sg_code err_at(lowerer *L, const sx *x, sg_code code, const char *fmt, ...) SG_PRINTF(4, 5);
static sg_code err_at(lowerer *L, const sx *x, sg_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sg_error_setv(L->err, code, fmt, ap);
  va_end(ap);
  if (L->err) {
    free(L->err->file);
    L->err->file = sg_xstrdup(L->m->file);
    L->err->line = x->line;
    L->err->col = x->col;
  }
  return code;
}

static gr_node *located(gr_node *n, const sx *x) {
  if (n && !n->line) {
    n->line = x->line;
    n->col = x->col;
  }
  return n;
}

static binding *bind(lowerer *L, binding *env, const char *name, gr_node *n, gr_graph *g) {
  binding *b = sg_arena_calloc(&L->m->arena, 1, sizeof *b);
  b->name = name;
  b->node = n;
  b->graph = g;
  b->next = env;
  b->depth = env ? env->depth + 1 : 0;
  /* jump twice as far as the parent's jump when its last two jumps were equal */
  const binding *j = env ? env->jump : NULL;
  b->jump = j && j->jump && env->depth - j->depth == j->depth - j->jump->depth ? j->jump : env;
  void *prev = NULL;
  sg_map_get(&L->names, (uintptr_t)name, &prev);
  b->same = prev;
  sg_map_put(&L->names, (uintptr_t)name, b);
  b->vars = !env ? NULL : env->is_var && !env->boxed ? env : env->vars;
  return b;
}

/* Whether b is env or above it in env's chain. */
static bool in_scope(const binding *env, const binding *b) {
  while (env && env->depth > b->depth) env = env->jump && env->jump->depth >= b->depth ? env->jump : env->next;
  return env == b;
}

/* Names starting with GR_PRIM_PREFIX cannot be defined or bound (located error). */
static bool reserved_name(lowerer *L, const sx *name) {
  if (strncmp(name->u.sym, GR_PRIM_PREFIX, strlen(GR_PRIM_PREFIX))) return false;
  err_at(L, name, SG_INVALID_ARGUMENT, "'%s': names starting with '" GR_PRIM_PREFIX "' are reserved for primitives",
         name->u.sym);
  return true;
}

/* The innermost binding of (interned) name in scope env, or NULL. */
static binding *lookup(lowerer *L, binding *env, const char *name) {
  void *v;
  if (!env || !sg_map_get(&L->names, (uintptr_t)name, &v)) return NULL;
  for (binding *b = v; b; b = b->same)
    if (in_scope(env, b)) return b;
  return NULL;
}

static gr_node *mk_const(lowerer *L, gr_val v, const sx *x) {
  return located(gr_const_new(L->m, v), x);
}

static gr_node *prim_const(lowerer *L, const gr_op *op, const sx *x) {
  gr_val v = {.tag = GV_PRIM, .u.op = op};
  return mk_const(L, v, x);
}

static gr_node *str_const(lowerer *L, const char *s, const sx *x) {
  gr_val v = {.tag = GV_STR, .u.s = sg_intern_str(&L->m->strings, s)};
  return mk_const(L, v, x);
}

static gr_node *apply(lowerer *L, gr_graph *g, gr_node **in, int n, const sx *x) {
  if ((int)L->m->all_nodes.len >= L->m->max_nodes) {
    err_at(L, x, SG_RESOURCE_EXHAUSTED, "graph node limit (%d nodes) exceeded", L->m->max_nodes);
    return NULL;
  }
  return located(gr_apply_new(L->m, g, in, n), x);
}

static gr_node *lower_expr(lowerer *L, const sx *x, gr_graph *g, binding *env);

static bool is_form(const sx *x, const char *name) {
  return x->kind == SX_LIST && x->u.list.n > 0 && sx_is_sym(x->u.list.items[0], name);
}

static int nargs_of(const sx *x) { return x->u.list.n - 1; }

/* params -> '(' { NAME | '(' NAME DTYPE '(' DIM... ')' ')' } ')' */
static sg_code lower_params(lowerer *L, const sx *ps, gr_graph *g, binding **env) {
  if (ps->kind != SX_LIST)
    return err_at(L, ps, SG_INVALID_ARGUMENT, "expected a parameter list '(NAME ...)'");
  for (int i = 0; i < ps->u.list.n; i++) {
    const sx *p = ps->u.list.items[i];
    const sx *name = p;
    gr_aval *ann = NULL;
    if (p->kind == SX_LIST) {
      if (p->u.list.n < 2 || p->u.list.items[0]->kind != SX_SYM || p->u.list.items[1]->kind != SX_SYM)
        return err_at(L, p, SG_INVALID_ARGUMENT,
                      "expected a parameter: NAME or (NAME DTYPE (DIM ...))");
      name = p->u.list.items[0];
      ann = sg_arena_calloc(&L->m->arena, 1, sizeof *ann);
      kn_dtype dt;
      if (!kn_dtype_parse(p->u.list.items[1]->u.sym, &dt))
        return err_at(L, p->u.list.items[1], SG_INVALID_ARGUMENT,
                      "unknown dtype '%s': expected bool, int32, int64, float16, float32 or float64",
                      p->u.list.items[1]->u.sym);
      ann->kind = GA_TENSOR;
      ann->dtype = dt;
      ann->ndim = -1;
      if (p->u.list.n > 2) {
        const sx *dims = p->u.list.items[2];
        if (dims->kind != SX_LIST || dims->u.list.n > KN_MAX_DIMS)
          return err_at(L, dims, SG_INVALID_ARGUMENT, "expected a list of dims like (2 ? 3)");
        ann->ndim = dims->u.list.n;
        for (int d = 0; d < dims->u.list.n; d++) {
          const sx *dd = dims->u.list.items[d];
          if (dd->kind == SX_INT && dd->u.i >= 0) ann->shape[d] = dd->u.i;
          else if (sx_is_sym(dd, "?")) ann->shape[d] = -1;
          else return err_at(L, dd, SG_INVALID_ARGUMENT, "expected a dimension: a non-negative integer or '?'");
        }
      }
    } else if (p->kind != SX_SYM) {
      return err_at(L, p, SG_INVALID_ARGUMENT, "expected a parameter name");
    }
    if (reserved_name(L, name)) return L->err->code;
    gr_node *pn = located(gr_param_new(L->m, g, name->u.sym), name);
    pn->aval = ann;
    *env = bind(L, *env, name->u.sym, pn, g);
  }
  return SG_OK;
}

/* Lowers BODY into a new graph; returns the graph. */
static gr_graph *lower_function(lowerer *L, const char *name, const sx *params, const sx *body,
                                gr_graph *parent, binding *env, const sx *at, gr_graph *pre) {
  gr_graph *h = pre ? pre : gr_graph_new(L->m, name, parent);
  h->line = at->line;
  h->col = at->col;
  if (lower_params(L, params, h, &env)) return NULL;
  gr_node *out = lower_expr(L, body, h, env);
  if (!out) return NULL;
  gr_set_output(h, out);
  return h;
}

/* lambda -> '(' 'lambda' params BODY ')' */
static gr_node *lower_lambda(lowerer *L, const sx *x, gr_graph *g, binding *env) {
  if (x->u.list.n != 3) {
    err_at(L, x, SG_INVALID_ARGUMENT, "expected (lambda (PARAM ...) BODY)");
    return NULL;
  }
  char name[32];
  snprintf(name, sizeof name, "lambda$%d", ++L->nlambda);
  gr_graph *h = lower_function(L, sg_intern_str(&L->m->strings, name), x->u.list.items[1],
                               x->u.list.items[2], g, env, x, NULL);
  if (!h) return NULL;
  gr_val v = {.tag = GV_GRAPH, .u.g = h};
  return mk_const(L, v, x);
}

/* nested def -> '(' 'def' NAME params BODY ')' ; binds NAME in *env (itself included) */
static gr_node *lower_nested_def(lowerer *L, const sx *x, gr_graph *g, binding **env) {
  if (x->u.list.n != 4 || x->u.list.items[1]->kind != SX_SYM) {
    err_at(L, x, SG_INVALID_ARGUMENT, "expected (def NAME (PARAM ...) BODY)");
    return NULL;
  }
  if (reserved_name(L, x->u.list.items[1])) return NULL;
  const char *name = x->u.list.items[1]->u.sym;
  gr_graph *h = gr_graph_new(L->m, name, g);
  gr_val v = {.tag = GV_GRAPH, .u.g = h};
  /* the name is bound to a graph constant; each use makes a fresh constant node */
  gr_node *self = mk_const(L, v, x);
  binding *inner = bind(L, *env, name, self, NULL);
  *env = inner;
  if (!lower_function(L, name, x->u.list.items[2], x->u.list.items[3], g, inner, x, h)) return NULL;
  return mk_const(L, v, x);
}

/* An apply that may have effects or observe them: an effect primitive (`read` of a
 * boxed var, `assign`, `print`), `if`/`while`, or a call of a function value. */
static bool may_have_effects(const gr_node *n) {
  if (n->kind != GR_APPLY) return false;
  const gr_op *op = gr_node_prim(n);
  return !op || !(op->flags & GR_OP_PURE);
}

/* Keeps `first` alive (and ordered before `rest`) when nothing else uses it. With
 * `in_order` (let) a value that may have effects is ordered first even when used:
 * `(let old x (begin (f) old))` reads x before f runs, as written. */
static gr_node *keep_alive_(lowerer *L, gr_graph *g, gr_node *first, gr_node *rest, const sx *x,
                            bool in_order) {
  if (first == rest || first->kind != GR_APPLY || first->graph != g ||
      (first->uses.len > 0 && !(in_order && may_have_effects(first))))
    return rest;
  gr_node *in[3] = {prim_const(L, gr_op_seq, x), first, rest};
  return apply(L, g, in, 3, x);
}

static gr_node *keep_alive(lowerer *L, gr_graph *g, gr_node *first, gr_node *rest, const sx *x) {
  return keep_alive_(L, g, first, rest, x, false);
}

/* begin -> '(' 'begin' { EXPR | nested def } ')' */
static gr_node *lower_begin(lowerer *L, const sx *x, gr_graph *g, binding *env) {
  int n = x->u.list.n;
  if (n < 2) {
    err_at(L, x, SG_INVALID_ARGUMENT, "expected (begin EXPR ...) with at least one expression");
    return NULL;
  }
  SG_VEC(gr_node *) vals = {0};
  gr_node *last = NULL;
  for (int i = 1; i < n; i++) {
    const sx *e = x->u.list.items[i];
    gr_node *v = (is_form(e, "def") || is_form(e, "define")) ? lower_nested_def(L, e, g, &env)
                                                               : lower_expr(L, e, g, env);
    if (!v) {
      sg_vec_free(&vals);
      return NULL;
    }
    if (i < n - 1 && v->kind == GR_APPLY && v->graph == g) sg_vec_push(&vals, v);
    last = v;
  }
  if (vals.len == 0) {
    sg_vec_free(&vals);
    return last;
  }
  gr_node **in = sg_xmalloc(sizeof(gr_node *) * (vals.len + 2));
  in[0] = prim_const(L, gr_op_seq, x);
  memcpy(in + 1, vals.data, sizeof(gr_node *) * vals.len);
  in[vals.len + 1] = last;
  gr_node *r = apply(L, g, in, (int)vals.len + 2, x);
  free(in);
  sg_vec_free(&vals);
  return r;
}

/* How a var's body uses NAME: set! anywhere, set! inside a lambda/def, any mention
 * inside a lambda/def (in_fn: already inside one). Conservative (ignores shadowing):
 * boxing a var that need not be is only slower. */
typedef struct var_use {
  bool set, set_in_fn, used_in_fn;
} var_use;

static void scan_var(const sx *x, const char *name, bool in_fn, var_use *u) {
  if (x->kind == SX_SYM) {
    if (in_fn && x->u.sym == name) u->used_in_fn = true;
    return;
  }
  if (x->kind != SX_LIST || x->u.list.n == 0) return;
  const sx *h = x->u.list.items[0];
  if (sx_is_sym(h, "set!") && x->u.list.n >= 2 && x->u.list.items[1]->kind == SX_SYM &&
      x->u.list.items[1]->u.sym == name) {
    u->set = true;
    if (in_fn) u->set_in_fn = true;
  }
  bool fn = in_fn || sx_is_sym(h, "lambda") || sx_is_sym(h, "def") || sx_is_sym(h, "define");
  for (int i = 0; i < x->u.list.n; i++) scan_var(x->u.list.items[i], name, fn, u);
}

/* A var is boxed when a nested function sets it, or reads it while it is set
 * somewhere: a closure sees the variable, not its value when the closure was made. */
static bool needs_box(const sx *body, const char *name) {
  var_use u = {0};
  scan_var(body, name, false, &u);
  return u.set_in_fn || (u.set && u.used_in_fn);
}

/* nb sequential bindings names[k] = exprs[k] (each seen by the later ones and by
 * body_x), then the body, with the bound values kept alive around it: as `let` does
 * (as_let: effects in program order, any non-constant value takes the name) or as
 * `let*` does (only unused values kept, only applications named). */
static gr_node *lower_bindings(lowerer *L, gr_graph *g, binding *env, const sx **names, const sx **exprs,
                               int nb, const sx *body_x, const sx *at, bool as_let) {
  gr_node **vals = sg_xcalloc((size_t)nb + 1, sizeof(gr_node *));
  gr_node *body = NULL;
  int k = 0;
  for (; k < nb; k++) {
    gr_node *v = reserved_name(L, names[k]) ? NULL : lower_expr(L, exprs[k], g, env);
    if (!v) break;
    if (!v->name && (as_let ? v->kind != GR_CONST : v->kind == GR_APPLY)) v->name = names[k]->u.sym;
    env = bind(L, env, names[k]->u.sym, v, g);
    vals[k] = v;
  }
  if (k == nb) body = lower_expr(L, body_x, g, env);
  for (k = nb - 1; body && k >= 0; k--) body = keep_alive_(L, g, vals[k], body, at, as_let);
  free(vals);
  return body;
}

/* let -> '(' 'let' NAME EXPR { NAME EXPR } BODY ')' with more than one binding:
 * sequential bindings, each exactly as if nested — (let a A b B BODY) is
 * (let a A (let b B BODY)), effects kept in order — so a staged trace of thousands of
 * operations stays a few levels deep (the reader refuses nesting deeper than
 * GR_MAX_NESTING, and so would one `let` per level). */
static gr_node *lower_let_chain(lowerer *L, const sx *x, gr_graph *g, binding *env) {
  int n = x->u.list.n, nb = (n - 2) / 2;
  const sx **parts = sg_xcalloc((size_t)(2 * nb), sizeof(sx *));
  for (int k = 0; k < nb; k++) {
    parts[k] = x->u.list.items[1 + 2 * k];
    parts[nb + k] = x->u.list.items[2 + 2 * k];
    if (parts[k]->kind != SX_SYM) {
      err_at(L, parts[k], SG_INVALID_ARGUMENT, "expected (let NAME EXPR [NAME EXPR ...] BODY)");
      free(parts);
      return NULL;
    }
  }
  gr_node *r = lower_bindings(L, g, env, parts, parts + nb, nb, x->u.list.items[n - 1], x, true);
  free(parts);
  return r;
}

/* let -> '(' 'let' NAME EXPR BODY ')' ; var -> '(' 'var' NAME INIT BODY ')' */
static gr_node *lower_let(lowerer *L, const sx *x, gr_graph *g, binding *env, bool is_var) {
  if (!is_var && x->u.list.n > 4 && x->u.list.n % 2 == 0) return lower_let_chain(L, x, g, env);
  if (x->u.list.n != 4 || x->u.list.items[1]->kind != SX_SYM) {
    err_at(L, x, SG_INVALID_ARGUMENT, is_var ? "expected (var NAME INIT BODY)" : "expected (let NAME EXPR [NAME EXPR ...] BODY)");
    return NULL;
  }
  if (reserved_name(L, x->u.list.items[1])) return NULL;
  gr_node *v = lower_expr(L, x->u.list.items[2], g, env);
  if (!v) return NULL;
  const char *name = x->u.list.items[1]->u.sym;
  bool boxed = is_var && needs_box(x->u.list.items[3], name);
  if (boxed) {
    gr_node *in[2] = {prim_const(L, gr_op_lookup("variable"), x), v};
    v = apply(L, g, in, 2, x);
    if (!v) return NULL;
  }
  if (v->kind != GR_CONST && !v->name) v->name = name;
  binding *b = bind(L, env, name, v, g);
  b->is_var = is_var;
  b->boxed = boxed;
  gr_node *body = lower_expr(L, x->u.list.items[3], g, b);
  if (!body) return NULL;
  return keep_alive_(L, g, v, body, x, true);
}

/* let* -> '(' 'let*' '(' { '(' NAME EXPR ')' } ')' BODY ')' : the flat form the dump uses */
static gr_node *lower_let_star(lowerer *L, const sx *x, gr_graph *g, binding *env) {
  if (x->u.list.n != 3 || x->u.list.items[1]->kind != SX_LIST) {
    err_at(L, x, SG_INVALID_ARGUMENT, "expected (let* ((NAME EXPR) ...) BODY)");
    return NULL;
  }
  const sx *bs = x->u.list.items[1];
  int nb = bs->u.list.n;
  const sx **parts = sg_xcalloc((size_t)(2 * nb) + 1, sizeof(sx *));
  for (int i = 0; i < nb; i++) {
    const sx *bd = bs->u.list.items[i];
    if (bd->kind != SX_LIST || bd->u.list.n != 2 || bd->u.list.items[0]->kind != SX_SYM) {
      free(parts);
      err_at(L, bd, SG_INVALID_ARGUMENT, "expected a binding (NAME EXPR)");
      return NULL;
    }
    parts[i] = bd->u.list.items[0];
    parts[nb + i] = bd->u.list.items[1];
  }
  gr_node *r = lower_bindings(L, g, env, parts, parts + nb, nb, x->u.list.items[2], x, false);
  free(parts);
  return r;
}

/* set! -> '(' 'set!' NAME EXPR ')' */
static gr_node *lower_set(lowerer *L, const sx *x, gr_graph *g, binding *env) {
  if (x->u.list.n != 3 || x->u.list.items[1]->kind != SX_SYM) {
    err_at(L, x, SG_INVALID_ARGUMENT, "expected (set! NAME EXPR)");
    return NULL;
  }
  binding *b = lookup(L, env, x->u.list.items[1]->u.sym);
  if (!b || !b->is_var) {
    err_at(L, x->u.list.items[1], SG_INVALID_ARGUMENT, "set! of '%s', which is not a var",
           x->u.list.items[1]->u.sym);
    return NULL;
  }
  gr_node *v = lower_expr(L, x->u.list.items[2], g, env);
  if (!v) return NULL;
  if (b->boxed) { /* (assign CELL V): the cell may be a free variable of g */
    gr_node *in[3] = {prim_const(L, gr_op_lookup("assign"), x), b->node, v};
    gr_node *a = apply(L, g, in, 3, x);
    if (!a) return NULL;
    return keep_alive(L, g, a, mk_const(L, gv_none(), x), x);
  }
  /* unboxed: g is b->graph or an `if` branch inside it (lower_if joins the branches) */
  for (gr_graph *h = g; h != b->graph; h = h->parent)
    if (!h || !h->is_branch) {
      err_at(L, x, SG_INTERNAL, "set! of var '%s' from a nested function that was not boxed", b->name);
      return NULL;
    }
  b->node = v;
  if (v->kind != GR_CONST && !v->name) v->name = b->name;
  return keep_alive(L, g, v, mk_const(L, gv_none(), x), x);
}

/* if -> '(' 'if' COND THEN ELSE ')' : branches become nested graphs */
static gr_node *lower_if(lowerer *L, const sx *x, gr_graph *g, binding *env) {
  if (x->u.list.n != 4) {
    err_at(L, x, SG_INVALID_ARGUMENT, "expected (if COND THEN ELSE), got %d arguments", nargs_of(x));
    return NULL;
  }
  gr_node *c = lower_expr(L, x->u.list.items[1], g, env);
  if (!c) return NULL;
  /* the unboxed vars visible here, and their nodes before the branches */
  SG_VEC(binding *) vars = {0};
  SG_VEC(gr_node *) before = {0}, after[2] = {{0}, {0}};
  for (binding *b = env && env->is_var && !env->boxed ? env : env ? env->vars : NULL; b; b = b->vars) {
    sg_vec_push(&vars, b);
    sg_vec_push(&before, b->node);
  }
  gr_node *br[2], *outs[2];
  gr_graph *hs[2];
  for (int k = 0; k < 2; k++) {
    char name[48];
    snprintf(name, sizeof name, "%s$%d", k ? "else" : "then", ++L->nlambda);
    gr_graph *h = gr_graph_new(L->m, sg_intern_str(&L->m->strings, name), g);
    h->is_branch = true;
    h->line = x->u.list.items[2 + k]->line;
    h->col = x->u.list.items[2 + k]->col;
    gr_node *o = lower_expr(L, x->u.list.items[2 + k], h, env);
    for (size_t j = 0; j < vars.len; j++) { /* what the branch set, then undo it */
      sg_vec_push(&after[k], vars.data[j]->node);
      vars.data[j]->node = before.data[j];
    }
    if (!o) {
      sg_vec_free(&vars);
      sg_vec_free(&before);
      sg_vec_free(&after[0]);
      sg_vec_free(&after[1]);
      return NULL;
    }
    gr_set_output(h, o);
    outs[k] = o;
    hs[k] = h;
    gr_val v = {.tag = GV_GRAPH, .u.g = h};
    br[k] = mk_const(L, v, x->u.list.items[2 + k]);
  }
  /* vars set in a branch: each branch returns (tuple RESULT VAR...), the if rebinds */
  SG_VEC(int) set = {0};
  for (size_t j = 0; j < vars.len; j++)
    if (after[0].data[j] != before.data[j] || after[1].data[j] != before.data[j]) sg_vec_push(&set, (int)j);
  gr_node *r = NULL;
  bool ok = true;
  for (int k = 0; k < 2 && set.len; k++) {
    gr_node **in = sg_xmalloc(sizeof(gr_node *) * (set.len + 2));
    in[0] = prim_const(L, gr_op_lookup("tuple"), x);
    in[1] = outs[k];
    for (size_t i = 0; i < set.len; i++) {
      gr_node *nv = after[k].data[set.data[i]];
      in[2 + i] = nv->kind == GR_CONST ? mk_const(L, gv_retain(nv->value), x) : nv;
    }
    gr_node *t = apply(L, hs[k], in, (int)set.len + 2, x);
    free(in);
    if (!t) ok = false;
    else gr_set_output(hs[k], t);
  }
  if (ok) {
    gr_node *in[4] = {prim_const(L, gr_op_if, x), c, br[0], br[1]};
    r = apply(L, g, in, 4, x);
  }
  for (size_t i = 1; r && i <= set.len; i++) {
    gr_node *gi[3] = {prim_const(L, gr_op_lookup("getitem"), x), r, mk_const(L, gv_int((int64_t)i), x)};
    gr_node *e = apply(L, g, gi, 3, x);
    if (!e) {
      r = NULL;
      break;
    }
    binding *b = vars.data[set.data[i - 1]];
    e->name = b->name;
    b->node = e;
  }
  if (r && set.len) { /* the result is element 0 */
    gr_node *gi[3] = {prim_const(L, gr_op_lookup("getitem"), x), r, mk_const(L, gv_int(0), x)};
    r = apply(L, g, gi, 3, x);
  }
  sg_vec_free(&set);
  sg_vec_free(&vars);
  sg_vec_free(&before);
  sg_vec_free(&after[0]);
  sg_vec_free(&after[1]);
  return r;
}

/* record -> '(' 'record' { '(' FIELD EXPR ')' } ')' */
static gr_node *lower_record(lowerer *L, const sx *x, gr_graph *g, binding *env) {
  int n = nargs_of(x);
  gr_node **in = sg_xmalloc(sizeof(gr_node *) * (size_t)(2 * n + 1));
  in[0] = prim_const(L, gr_op_lookup("record"), x);
  for (int i = 0; i < n; i++) {
    const sx *f = x->u.list.items[i + 1];
    if (f->kind != SX_LIST || f->u.list.n != 2 || f->u.list.items[0]->kind != SX_SYM) {
      free(in);
      err_at(L, f, SG_INVALID_ARGUMENT, "expected a record field (FIELD EXPR)");
      return NULL;
    }
    in[1 + 2 * i] = str_const(L, f->u.list.items[0]->u.sym, f);
    in[2 + 2 * i] = lower_expr(L, f->u.list.items[1], g, env);
    if (!in[2 + 2 * i]) {
      free(in);
      return NULL;
    }
  }
  gr_node *r = apply(L, g, in, 2 * n + 1, x);
  free(in);
  return r;
}

/* getattr -> '(' 'getattr' EXPR FIELD ')' */
static gr_node *lower_getattr(lowerer *L, const sx *x, gr_graph *g, binding *env) {
  if (x->u.list.n != 3 || x->u.list.items[2]->kind != SX_SYM) {
    err_at(L, x, SG_INVALID_ARGUMENT, "expected (getattr EXPR FIELD) with FIELD a name");
    return NULL;
  }
  gr_node *e = lower_expr(L, x->u.list.items[1], g, env);
  if (!e) return NULL;
  gr_node *in[3] = {prim_const(L, gr_op_lookup("getattr"), x), e,
                    str_const(L, x->u.list.items[2]->u.sym, x->u.list.items[2])};
  return apply(L, g, in, 3, x);
}

/* tensor literal (as the sexpr dump prints constants) -> '(' 'tensor' DTYPE '(' DIM... ')' V... ')' */
static gr_node *lower_tensor_literal(lowerer *L, const sx *x) {
  kn_dtype dt;
  if (x->u.list.n < 3 || x->u.list.items[1]->kind != SX_SYM ||
      !kn_dtype_parse(x->u.list.items[1]->u.sym, &dt) || x->u.list.items[2]->kind != SX_LIST) {
    err_at(L, x, SG_INVALID_ARGUMENT, "expected (tensor DTYPE (DIM ...) VALUE ...)");
    return NULL;
  }
  const sx *dims = x->u.list.items[2];
  int64_t shape[KN_MAX_DIMS], size = 1;
  if (dims->u.list.n > KN_MAX_DIMS) {
    err_at(L, dims, SG_INVALID_ARGUMENT, "too many dimensions");
    return NULL;
  }
  for (int i = 0; i < dims->u.list.n; i++) {
    if (dims->u.list.items[i]->kind != SX_INT || dims->u.list.items[i]->u.i < 0) {
      err_at(L, dims->u.list.items[i], SG_INVALID_ARGUMENT, "expected a dimension");
      return NULL;
    }
    shape[i] = dims->u.list.items[i]->u.i;
    size *= shape[i];
  }
  if (size != x->u.list.n - 3) {
    err_at(L, x, SG_INVALID_ARGUMENT, "tensor literal: expected %lld values, got %d", (long long)size,
           x->u.list.n - 3);
    return NULL;
  }
  kn_tensor *t = kn_tensor_new(dt, dims->u.list.n, shape);
  if (!t) {
    sg_error e = SG_ERROR_INIT;
    kn_alloc_error(&e);
    err_at(L, x, e.code, "tensor literal: %s", e.message);
    sg_error_clear(&e);
    return NULL;
  }
  for (int64_t i = 0; i < size; i++) {
    const sx *v = x->u.list.items[3 + i];
    if (v->kind == SX_INT) kn_set_i64(t, i, v->u.i);
    else if (v->kind == SX_FLOAT) kn_set_f64(t, i, v->u.f);
    else if (v->kind == SX_BOOL) kn_set_i64(t, i, v->u.b);
    else {
      kn_tensor_release(t);
      err_at(L, v, SG_INVALID_ARGUMENT, "tensor literal: expected a number");
      return NULL;
    }
  }
  return mk_const(L, gv_tensor(t), x);
}

/* symbol reference: binding, top-level def, primitive, or a bare word (dtype names) */
static gr_node *lower_symbol(lowerer *L, const sx *x, gr_graph *g, binding *env, bool head) {
  if (!strncmp(x->u.sym, GR_PRIM_PREFIX, strlen(GR_PRIM_PREFIX))) {
    const gr_op *op = gr_op_lookup(x->u.sym + strlen(GR_PRIM_PREFIX));
    if (op) return prim_const(L, op, x);
    err_at(L, x, SG_INVALID_ARGUMENT, "unknown primitive '%s' after '" GR_PRIM_PREFIX "' (docs/sexpr.md lists them)",
           x->u.sym + strlen(GR_PRIM_PREFIX));
    return NULL;
  }
  binding *b = lookup(L, env, x->u.sym);
  if (b) {
    if (b->boxed) {
      gr_node *in[2] = {prim_const(L, gr_op_lookup("read"), x), b->node};
      return apply(L, g, in, 2, x);
    }
    if (b->node->kind == GR_CONST) return mk_const(L, gv_retain(b->node->value), x);
    return b->node;
  }
  void *gp;
  if (sg_map_get(&L->toplevel, (uintptr_t)x->u.sym, &gp)) {
    gr_val v = {.tag = GV_GRAPH, .u.g = gp};
    return mk_const(L, v, x);
  }
  const gr_op *op = gr_op_lookup(x->u.sym);
  if (op) return prim_const(L, op, x);
  kn_dtype dt;
  if (!head && kn_dtype_parse(x->u.sym, &dt)) return str_const(L, x->u.sym, x);
  if (head)
    err_at(L, x, SG_INVALID_ARGUMENT,
           "unknown primitive or function '%s': expected a primitive (docs/sexpr.md), a def, "
           "or a function-valued name", x->u.sym);
  else
    err_at(L, x, SG_INVALID_ARGUMENT,
           "unknown name '%s': expected a parameter, a let/var-bound name, a def or a primitive",
           x->u.sym);
  return NULL;
}

/* call -> '(' FN ARG ... ')' */
static gr_node *lower_call(lowerer *L, const sx *x, gr_graph *g, binding *env) {
  int n = x->u.list.n;
  const sx *h = x->u.list.items[0];
  gr_node *fn = h->kind == SX_SYM ? lower_symbol(L, h, g, env, true) : lower_expr(L, h, g, env);
  if (!fn) return NULL;
  int na = n - 1;
  /* a name called with the wrong number of arguments is an error here; a function value
   * computed otherwise (`((begin ones))`, as dumps print a call the optimizer made so)
   * is checked when it runs */
  bool named = h->kind == SX_SYM;
  if (named && fn->kind == GR_CONST && fn->value.tag == GV_PRIM) {
    const gr_op *op = fn->value.u.op;
    if (!gr_op_takes(op, na)) {
      if (op->min_args == op->max_args)
        err_at(L, x, SG_INVALID_ARGUMENT, "wrong number of arguments to '%s': expected %d, got %d",
               op->name, op->min_args, na);
      else if (op->max_args < 0)
        err_at(L, x, SG_INVALID_ARGUMENT,
               "wrong number of arguments to '%s': expected at least %d, got %d", op->name,
               op->min_args, na);
      else
        err_at(L, x, SG_INVALID_ARGUMENT,
               "wrong number of arguments to '%s': expected %d to %d, got %d", op->name,
               op->min_args, op->max_args, na);
      return NULL;
    }
  } else if (named && fn->kind == GR_CONST && fn->value.tag == GV_GRAPH && fn->value.u.g->line &&
             fn->value.u.g->nparams != na) {
    err_at(L, x, SG_INVALID_ARGUMENT, "wrong number of arguments to '%s': expected %d, got %d",
           fn->value.u.g->name, fn->value.u.g->nparams, na);
    return NULL;
  } else if (fn->kind == GR_CONST && fn->value.tag != GV_GRAPH && fn->value.tag != GV_PRIM) {
    err_at(L, h, SG_INVALID_ARGUMENT, "cannot call a constant %s", gv_type_name(&fn->value));
    return NULL;
  }
  gr_node **in = sg_xmalloc(sizeof(gr_node *) * (size_t)n);
  in[0] = fn;
  for (int i = 1; i < n; i++) {
    in[i] = lower_expr(L, x->u.list.items[i], g, env);
    if (!in[i]) {
      free(in);
      return NULL;
    }
  }
  gr_node *r = apply(L, g, in, n, x);
  free(in);
  return r;
}

static gr_node *lower_expr(lowerer *L, const sx *x, gr_graph *g, binding *env) {
  switch (x->kind) {
  case SX_INT: return mk_const(L, gv_int(x->u.i), x);
  case SX_FLOAT: return mk_const(L, gv_float(x->u.f), x);
  case SX_BOOL: return mk_const(L, gv_bool(x->u.b), x);
  case SX_NONE: return mk_const(L, gv_none(), x);
  case SX_STR: {
    gr_val v = {.tag = GV_STR, .u.s = sg_intern_n(&L->m->strings, x->u.str.s, x->u.str.len)};
    return mk_const(L, v, x);
  }
  case SX_SYM: return lower_symbol(L, x, g, env, false);
  case SX_LIST: break;
  }
  if (x->u.list.n == 0) {
    err_at(L, x, SG_INVALID_ARGUMENT, "empty form '()': expected (OP ARG ...)");
    return NULL;
  }
  if (++L->depth > GR_MAX_NESTING) {
    err_at(L, x, SG_INVALID_ARGUMENT, "expression nested deeper than %d levels", GR_MAX_NESTING);
    return NULL;
  }
  gr_node *r;
  const sx *h = x->u.list.items[0];
  bool shadowed = h->kind == SX_SYM && lookup(L, env, h->u.sym);
  if (h->kind != SX_SYM || shadowed) r = lower_call(L, x, g, env);
  else if (sx_is_sym(h, "lambda")) r = lower_lambda(L, x, g, env);
  else if (sx_is_sym(h, "let")) r = lower_let(L, x, g, env, false);
  else if (sx_is_sym(h, "let*")) r = lower_let_star(L, x, g, env);
  else if (sx_is_sym(h, "var")) r = lower_let(L, x, g, env, true);
  else if (sx_is_sym(h, "set!")) r = lower_set(L, x, g, env);
  else if (sx_is_sym(h, "begin")) r = lower_begin(L, x, g, env);
  else if (sx_is_sym(h, "if")) r = lower_if(L, x, g, env);
  else if (sx_is_sym(h, "record")) r = lower_record(L, x, g, env);
  else if (sx_is_sym(h, "getattr")) r = lower_getattr(L, x, g, env);
  else if (sx_is_sym(h, "tensor")) r = lower_tensor_literal(L, x);
  else if (sx_is_sym(h, "def") || sx_is_sym(h, "define")) {
    binding *e2 = env;
    r = lower_nested_def(L, x, g, &e2);
  } else r = lower_call(L, x, g, env);
  L->depth--;
  return r;
}

/* program -> { '(' 'def' NAME params BODY ')' } */
sg_code gr_lower(gr_module *m, sx **forms, int nforms, const char *entry_name,
                 gr_graph **entry, sg_error *err) {
  lowerer L = {.m = m, .err = err};
  sg_code rc = SG_OK;
  gr_graph **gs = sg_xcalloc((size_t)(nforms ? nforms : 1), sizeof(gr_graph *));
  /* pass 1: declare every top-level def, so defs see each other */
  for (int i = 0; i < nforms && !rc; i++) {
    const sx *f = forms[i];
    if (!(is_form(f, "def") || is_form(f, "define")) || f->u.list.n != 4 ||
        f->u.list.items[1]->kind != SX_SYM || f->u.list.items[2]->kind != SX_LIST) {
      rc = err_at(&L, f, SG_INVALID_ARGUMENT, "expected (def NAME (PARAM ...) BODY) at top level");
      break;
    }
    const char *name = f->u.list.items[1]->u.sym;
    if (reserved_name(&L, f->u.list.items[1])) {
      rc = err->code;
      break;
    }
    if (sg_map_get(&L.toplevel, (uintptr_t)name, NULL)) {
      rc = err_at(&L, f->u.list.items[1], SG_INVALID_ARGUMENT, "duplicate def '%s'", name);
      break;
    }
    gs[i] = gr_graph_new(m, name, NULL);
    /* record the arity now, so calls lowered before the body know it */
    sg_map_put(&L.toplevel, (uintptr_t)name, gs[i]);
  }
  binding **envs = sg_xcalloc((size_t)(nforms ? nforms : 1), sizeof(binding *));
  for (int i = 0; i < nforms && !rc; i++) {
    gs[i]->line = forms[i]->line;
    gs[i]->col = forms[i]->col;
    rc = lower_params(&L, forms[i]->u.list.items[2], gs[i], &envs[i]);
  }
  /* pass 2: bodies */
  for (int i = 0; i < nforms && !rc; i++) {
    gr_node *out = lower_expr(&L, forms[i]->u.list.items[3], gs[i], envs[i]);
    if (!out) rc = err->code;
    else gr_set_output(gs[i], out);
  }
  free(envs);
  if (!rc) {
    *entry = NULL;
    if (entry_name) {
      void *gp;
      if (sg_map_get(&L.toplevel, (uintptr_t)sg_intern_str(&m->strings, entry_name), &gp)) *entry = gp;
      else rc = sg_error_set(err, SG_INVALID_ARGUMENT, "no def named '%s' to use as the entry", entry_name);
    } else if (nforms > 0) {
      *entry = gs[nforms - 1];
    } else {
      rc = sg_error_set_at(err, SG_INVALID_ARGUMENT, m->file, 1, 1, "empty program: expected at least one (def ...)");
    }
  }
  free(gs);
  sg_map_free(&L.toplevel);
  sg_map_free(&L.names);
  return rc;
}
