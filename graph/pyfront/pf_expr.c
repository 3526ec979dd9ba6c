// SPDX-License-Identifier: Apache-2.0
/*
 * pf_expr.c — expressions. Python's evaluation order is kept (left to right; `and`,
 * `or`, conditional expressions and comparison chains evaluate lazily through `if`
 * branches, whose truth test is Python's: a number, a bool or a one-element tensor,
 * an error for a bigger tensor). Every node is located at its expression.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pf_int.h"

static gr_node *lower_expr(pf_cur *c, const py_expr *e);

gr_node *pf_expr(pf_cur *c, const py_expr *e) {
  pf_module *M = c->F->M;
  if (pf_failed(M)) return NULL;
  if (++M->depth > PF_MAX_DEPTH) {
    M->depth--;
    PF_INVALID(M, e, "expression nested deeper than %d levels", PF_MAX_DEPTH);
    return NULL;
  }
  gr_node *r = lower_expr(c, e);
  M->depth--;
  return pf_failed(M) ? NULL : r;
}

static gr_node *str_const(pf_cur *c, const char *s, size_t n, const void *at) {
  return pf_const(c, (gr_val){.tag = GV_STR, .u.s = sg_intern_n(&c->F->M->m->strings, s, n)}, at);
}

static gr_node *constant(pf_cur *c, const py_expr *e) {
  pf_module *M = c->F->M;
  const py_constant *k = &e->v.Constant.value;
  switch (k->kind) {
  case PY_CONST_NONE: return pf_none(c, e);
  case PY_CONST_TRUE: return pf_const(c, gv_bool(true), e);
  case PY_CONST_FALSE: return pf_const(c, gv_bool(false), e);
  case PY_CONST_FLOAT: return pf_const(c, gv_float(k->d), e);
  case PY_CONST_STR: return str_const(c, k->s, k->len, e);
  case PY_CONST_INT: {
    int64_t v = 0;
    for (size_t i = 0; k->s[i]; i++) {
      int d = k->s[i] - '0';
      if (v > (INT64_MAX - d) / 10) {
        PF_UNSUPPORTED(M, e, "the integer %s does not fit in 64 bits: integers in the subset are 64-bit", k->s);
        return NULL;
      }
      v = v * 10 + d;
    }
    return pf_const(c, gv_int(v), e);
  }
  case PY_CONST_COMPLEX: PF_UNSUPPORTED(M, e, "complex numbers are outside the subset"); return NULL;
  case PY_CONST_BYTES: PF_UNSUPPORTED(M, e, "bytes are outside the subset"); return NULL;
  case PY_CONST_ELLIPSIS: PF_UNSUPPORTED(M, e, "'...' (Ellipsis) is outside the subset"); return NULL;
  }
  return NULL;
}

gr_node *pf_binop(pf_cur *c, py_operator op, gr_node *a, gr_node *b, const void *at) {
  static const char *const prims[] = {
      [PY_Add] = "+", [PY_Sub] = "-", [PY_Mult] = "*", [PY_MatMult] = "matmul", [PY_Div] = "/",
      [PY_Mod] = "%", [PY_Pow] = "**", [PY_FloorDiv] = "//",
  };
  static const char *const sym[] = {
      [PY_LShift] = "<<", [PY_RShift] = ">>", [PY_BitOr] = "|", [PY_BitXor] = "^", [PY_BitAnd] = "&",
  };
  if ((unsigned)op < sizeof prims / sizeof prims[0] && prims[op]) {
    gr_node *in[2] = {a, b};
    return pf_call_prim(c, prims[op], in, 2, at);
  }
  PF_UNSUPPORTED(c->F->M, (const py_expr *)at, "the operator '%s' is outside the subset",
                 (unsigned)op < sizeof sym / sizeof sym[0] && sym[op] ? sym[op] : "?");
  return NULL;
}

/* ------------------------------------------------------- lazy forms */

static gr_node *give_node(pf_cur *c, void *arg) {
  gr_node *n = arg;
  return n->kind == GR_CONST ? pf_const(c, gv_retain(n->value), NULL) : n;
}
static gr_node *give_true(pf_cur *c, void *arg) { return pf_const(c, gv_bool(true), arg); }
static gr_node *give_false(pf_cur *c, void *arg) { return pf_const(c, gv_bool(false), arg); }

gr_node *pf_truth(pf_cur *c, gr_node *x, bool negate, const void *at) {
  return pf_if_value(c, x, negate ? give_false : give_true, (void *)at, negate ? give_true : give_false, (void *)at,
                     at);
}

typedef struct boolop_arg {
  const py_expr *e;
  int i;
} boolop_arg;

/* values[i] and values[i+1] and ... (or: or) */
static gr_node *boolop_from(pf_cur *c, void *arg) {
  boolop_arg *b = arg;
  const py_seq *vals = b->e->v.BoolOp.values;
  gr_node *x = pf_expr(c, vals->a[b->i]);
  if (!x || b->i == vals->n - 1) return x;
  boolop_arg rest = {b->e, b->i + 1};
  if (b->e->v.BoolOp.op == PY_And) return pf_if_value(c, x, boolop_from, &rest, give_node, x, vals->a[b->i]);
  return pf_if_value(c, x, give_node, x, boolop_from, &rest, vals->a[b->i]);
}

static gr_node *compare_op(pf_cur *c, const py_expr *e, py_cmpop op, gr_node *l, gr_node *r) {
  static const char *const prims[] = {
      [PY_Eq] = "==", [PY_NotEq] = "!=", [PY_Lt] = "<", [PY_LtE] = "<=", [PY_Gt] = ">", [PY_GtE] = ">=",
  };
  if (op == PY_Is || op == PY_IsNot) { /* identity is known only between constants here */
    if (l->kind == GR_CONST && r->kind == GR_CONST &&
        (l->value.tag == GV_NONE || r->value.tag == GV_NONE || l->value.tag == GV_BOOL || r->value.tag == GV_BOOL)) {
      bool same = l->value.tag == r->value.tag && gv_equal(&l->value, &r->value);
      return pf_const(c, gv_bool(op == PY_Is ? same : !same), e);
    }
    PF_UNSUPPORTED(c->F->M, e, "'is' / 'is not' is in the subset only between None, True, False and constants");
    return NULL;
  }
  if (op == PY_In || op == PY_NotIn) {
    PF_UNSUPPORTED(c->F->M, e, "'in' / 'not in' is outside the subset");
    return NULL;
  }
  gr_node *in[2] = {l, r};
  return pf_call_prim(c, prims[op], in, 2, e);
}

typedef struct cmp_arg {
  const py_expr *e;
  int i;
  gr_node *left;
} cmp_arg;

/* left OP_i comparators[i] and (comparators[i] OP_i+1 ...): each operand evaluated once */
static gr_node *compare_from(pf_cur *c, void *arg) {
  cmp_arg *a = arg;
  const py_expr *e = a->e;
  gr_node *right = pf_expr(c, e->v.Compare.comparators->a[a->i]);
  if (!right) return NULL;
  gr_node *r = compare_op(c, e, (py_cmpop)(intptr_t)e->v.Compare.ops->a[a->i], a->left, right);
  if (!r || a->i == e->v.Compare.ops->n - 1) return r;
  cmp_arg rest = {e, a->i + 1, right};
  return pf_if_value(c, r, compare_from, &rest, give_node, r, e);
}

/* ------------------------------------------------------------ functions */

gr_graph *pf_nested_function(pf_cur *c, const void *node, const char *name, pf_fn **out) {
  pf_module *M = c->F->M;
  pf_fn *G = pf_fn_new(M, c->F, node, pf_intern(M, name), c->g);
  G->parent_env = pf_env_copy(c);
  G->parent_nenv = c->nenv;
  G->parent_stmt = c->stmt;
  G->parent_block = c->blk;
  G->parent_index = c->blk_i;
  if (c->module_scope) {
    PF_UNSUPPORTED(M, (const py_expr *)node, "a lambda inside a module constant is outside the subset");
    return NULL;
  }
  if (out) *out = G;
  return pf_lower_function(G) ? NULL : G->graph;
}

gr_node *pf_call_value(pf_cur *c, gr_node *callee, gr_node **args, int n, const void *at) {
  gr_node **in = sg_xcalloc((size_t)n + 1, sizeof(gr_node *));
  in[0] = callee;
  if (n) memcpy(in + 1, args, sizeof(gr_node *) * (size_t)n);
  gr_node *r = pf_apply(c, in, n + 1, at);
  free(in);
  return r;
}

/* A default value of a known function, as a constant (check_signature allowed only
 * constants, so its value does not depend on where it is evaluated). */
static gr_node *default_value(pf_cur *c, const py_expr *d) {
  bool was = c->module_scope;
  c->module_scope = true;
  gr_node *v = pf_expr(c, d);
  c->module_scope = was;
  return v;
}

/* f(args, kw=...) of a function whose parameters are known: keywords and defaults are
 * matched here, as Python would (its TypeErrors become located errors). */
static gr_node *call_known(pf_cur *c, const py_expr *e, gr_node *callee, pf_fn *F) {
  pf_module *M = c->F->M;
  const py_arguments *a = F->args;
  int npos = PY_SEQ_LEN(a->posonlyargs), np = npos + PY_SEQ_LEN(a->args);
  const char *fname = F->name ? F->name : "<lambda>";
  const py_seq *args = e->v.Call.args, *kws = e->v.Call.keywords;
  if (PY_SEQ_LEN(args) > np) {
    PF_INVALID(M, e, "%s() takes %d positional argument%s but %d were given", fname, np, np == 1 ? "" : "s",
               PY_SEQ_LEN(args));
    return NULL;
  }
  gr_node **vals = sg_xcalloc((size_t)np + 1, sizeof(gr_node *));
  gr_node *r = NULL;
  for (int i = 0; i < PY_SEQ_LEN(args); i++)
    if (!(vals[i] = pf_expr(c, args->a[i]))) goto out;
  for (int k = 0; k < PY_SEQ_LEN(kws); k++) {
    const py_keyword *kw = kws->a[k];
    int i = npos;
    while (i < np && strcmp(((const py_arg *)a->args->a[i - npos])->arg, kw->arg)) i++;
    if (i == np) {
      PF_INVALID(M, kw, "%s() got an unexpected keyword argument '%s'", fname, kw->arg);
      goto out;
    }
    if (vals[i]) {
      PF_INVALID(M, kw, "%s() got multiple values for argument '%s'", fname, kw->arg);
      goto out;
    }
    if (!(vals[i] = pf_expr(c, kw->value))) goto out;
  }
  int nd = PY_SEQ_LEN(a->defaults);
  for (int i = 0; i < np; i++) {
    if (vals[i]) continue;
    if (i >= np - nd) {
      if (!(vals[i] = default_value(c, a->defaults->a[i - (np - nd)]))) goto out;
      continue;
    }
    const py_arg *p = i < npos ? a->posonlyargs->a[i] : a->args->a[i - npos];
    PF_INVALID(M, e, "%s() missing a required argument: '%s'", fname, p->arg);
    goto out;
  }
  r = pf_call_value(c, callee, vals, np, e);
out:
  free(vals);
  return r;
}

static gr_node *lower_call(pf_cur *c, const py_expr *e) {
  pf_module *M = c->F->M;
  if (c->module_scope) {
    PF_UNSUPPORTED(M, e, "a call in a module constant: the daemon does not run module code (pass the value as an "
                         "argument or write a literal)");
    return NULL;
  }
  for (int i = 0; i < PY_SEQ_LEN(e->v.Call.args); i++)
    if (((const py_expr *)e->v.Call.args->a[i])->kind == PY_K_Starred) {
      PF_UNSUPPORTED(M, (const py_expr *)e->v.Call.args->a[i], "*args in a call is outside the subset");
      return NULL;
    }
  for (int i = 0; i < PY_SEQ_LEN(e->v.Call.keywords); i++)
    if (!((const py_keyword *)e->v.Call.keywords->a[i])->arg) {
      PF_UNSUPPORTED(M, (const py_keyword *)e->v.Call.keywords->a[i], "**kwargs in a call is outside the subset");
      return NULL;
    }
  bool handled = false;
  gr_node *r = pf_lib_call(c, e, &handled);
  if (handled || pf_failed(M)) return r;
  gr_node *callee = pf_expr(c, e->v.Call.func);
  if (!callee) return NULL;
  void *fv;
  if (gr_is_const_graph(callee) && sg_map_get(&M->by_graph, (uintptr_t)callee->value.u.g, &fv))
    return call_known(c, e, callee, fv);
  if (callee->kind == GR_CONST && callee->value.tag != GV_GRAPH && callee->value.tag != GV_PRIM &&
      callee->value.tag != GV_CLOSURE) {
    PF_INVALID(M, e, "'%s' object is not callable", gv_type_name(&callee->value));
    return NULL;
  }
  if (PY_SEQ_LEN(e->v.Call.keywords)) {
    PF_UNSUPPORTED(M, (const py_keyword *)e->v.Call.keywords->a[0],
                   "keyword arguments in a call of a function value (one known only at run time) are outside the "
                   "subset");
    return NULL;
  }
  int n = PY_SEQ_LEN(e->v.Call.args);
  gr_node **args = sg_xcalloc((size_t)n + 1, sizeof(gr_node *));
  for (int i = 0; i < n; i++)
    if (!(args[i] = pf_expr(c, e->v.Call.args->a[i]))) {
      free(args);
      return NULL;
    }
  r = pf_call_value(c, callee, args, n, e);
  free(args);
  return r;
}

/* --------------------------------------------------------------- names */

static bool const_expr_ok(const py_expr *e, const py_expr **bad) {
  switch (e->kind) {
  case PY_K_Constant:
  case PY_K_Name:
  case PY_K_Attribute: return true;
  case PY_K_UnaryOp: return const_expr_ok(e->v.UnaryOp.operand, bad);
  case PY_K_BinOp: return const_expr_ok(e->v.BinOp.left, bad) && const_expr_ok(e->v.BinOp.right, bad);
  case PY_K_Tuple:
    for (int i = 0; i < PY_SEQ_LEN(e->v.Tuple.elts); i++)
      if (!const_expr_ok(e->v.Tuple.elts->a[i], bad)) return false;
    return true;
  default: *bad = e; return false;
  }
}

static gr_node *global_value(pf_cur *c, const py_expr *at, pf_global *g) {
  pf_module *M = c->F->M;
  switch (g->kind) {
  case PF_G_FUNC: return pf_graph_const(c, pf_global_fn(M, g)->graph, at);
  case PF_G_CONST: {
    const py_expr *bad = NULL;
    if (!const_expr_ok(g->value, &bad)) {
      PF_UNSUPPORTED(M, at,
                     "'%s' is bound at module level (line %d) to something other than a constant expression (numbers, "
                     "bools, None, strings, tuples and operators on them): the daemon does not run module code",
                     g->name, g->at->lineno);
      return NULL;
    }
    if (g->evaluating) {
      PF_INVALID(M, at, "the module constant '%s' refers to itself", g->name);
      return NULL;
    }
    g->evaluating = true;
    bool was = c->module_scope;
    c->module_scope = true;
    gr_node *v = pf_expr(c, g->value);
    c->module_scope = was;
    g->evaluating = false;
    return v;
  }
  case PF_G_IMPORT: {
    bool handled = false;
    gr_node *v = pf_lib_value(c, at, &handled);
    if (!handled && !pf_failed(M))
      PF_UNSUPPORTED(M, at, "'%s' (imported from '%s') is not a value the subset knows", g->name, g->what);
    return v;
  }
  case PF_G_OTHER:
    PF_UNSUPPORTED(M, at,
                   "'%s' is bound at module level by a statement the daemon does not run (line %d): only defs, "
                   "imports and constants are visible to staged functions (pass it as an argument)",
                   g->name, g->at->lineno);
    return NULL;
  case PF_G_MULTI:
    PF_UNSUPPORTED(M, at,
                   "'%s' is bound more than once at module level (first at line %d), or assigned through 'global': "
                   "the subset needs one binding",
                   g->name, g->at->lineno);
    return NULL;
  }
  return NULL;
}

static gr_node *name_value(pf_cur *c, const py_expr *e) {
  pf_ref r;
  if (!pf_resolve(c, e, e->v.Name.id, &r)) return NULL;
  if (r.kind == PF_REF_NODE) return r.node;
  if (r.kind == PF_REF_GLOBAL) return global_value(c, e, r.global);
  bool handled = false;
  gr_node *v = pf_lib_value(c, e, &handled);
  if (!handled && !pf_failed(c->F->M))
    PF_UNSUPPORTED(c->F->M, e, "the builtin '%s' is outside the subset", e->v.Name.id);
  return v;
}

/* ------------------------------------------------------------ subscripts */

static gr_node *slice_bound(pf_cur *c, const py_expr *b, const py_expr *at) {
  return b ? pf_expr(c, b) : pf_none(c, at);
}

/* x[lo:hi:step] along axis (-1: the 3-argument form, axis 0) */
static gr_node *slice_of(pf_cur *c, gr_node *x, const py_expr *sl, int axis) {
  gr_node *a[5] = {x, slice_bound(c, sl->v.Slice.lower, sl), slice_bound(c, sl->v.Slice.upper, sl), NULL, NULL};
  int n = 3;
  if (sl->v.Slice.step || axis > 0) {
    a[n++] = slice_bound(c, sl->v.Slice.step, sl);
    if (axis > 0) a[n++] = pf_const(c, gv_int(axis), sl);
  }
  return pf_call_prim(c, "slice", a, n, sl);
}

static gr_node *subscript(pf_cur *c, const py_expr *e) {
  pf_module *M = c->F->M;
  gr_node *x = pf_expr(c, e->v.Subscript.value);
  if (!x) return NULL;
  const py_expr *sl = e->v.Subscript.slice;
  if (sl->kind == PY_K_Slice) return slice_of(c, x, sl, -1);
  if (sl->kind != PY_K_Tuple) {
    gr_node *a[2] = {x, pf_expr(c, sl)};
    return pf_call_prim(c, "getitem", a, 2, e);
  }
  /* x[i, a:b, j]: one axis after another; an index removes its axis */
  int axis = 0;
  for (int i = 0; x && i < PY_SEQ_LEN(sl->v.Tuple.elts); i++) {
    const py_expr *it = sl->v.Tuple.elts->a[i];
    if (it->kind == PY_K_Slice) {
      x = slice_of(c, x, it, axis++);
      continue;
    }
    if (it->kind == PY_K_Starred || (it->kind == PY_K_Constant && (it->v.Constant.value.kind == PY_CONST_ELLIPSIS ||
                                                                   it->v.Constant.value.kind == PY_CONST_NONE))) {
      PF_UNSUPPORTED(M, it, "'...', None (np.newaxis) and starred items in a subscript are outside the subset");
      return NULL;
    }
    gr_node *idx = pf_expr(c, it);
    if (!idx) return NULL;
    /* each index must be an integer scalar: NumPy indexes arrays of indices jointly */
    idx = pf_call_prim(c, "pyindex", &idx, 1, it);
    gr_node *a[3] = {x, idx, pf_const(c, gv_int(axis), it)};
    x = pf_call_prim(c, "gather", a, 3, e);
  }
  return x;
}

/* -------------------------------------------------------------- dispatch */

static gr_node *give_ifexp_body(pf_cur *c, void *arg) { return pf_expr(c, ((const py_expr *)arg)->v.IfExp.body); }
static gr_node *give_ifexp_else(pf_cur *c, void *arg) { return pf_expr(c, ((const py_expr *)arg)->v.IfExp.orelse); }

static const char *unsupported_expr(py_kind k) {
  switch (k) {
  case PY_K_NamedExpr: return "an assignment expression (:=)";
  case PY_K_Dict: return "a dict display";
  case PY_K_Set: return "a set display";
  case PY_K_ListComp: return "a list comprehension";
  case PY_K_SetComp: return "a set comprehension";
  case PY_K_DictComp: return "a dict comprehension";
  case PY_K_GeneratorExp: return "a generator expression";
  case PY_K_Await: return "'await'";
  case PY_K_Yield:
  case PY_K_YieldFrom: return "'yield' (generators)";
  case PY_K_JoinedStr:
  case PY_K_FormattedValue: return "an f-string";
  case PY_K_Starred: return "a starred expression (*x)";
  case PY_K_Slice: return "a slice outside a subscript";
  case PY_K_List: return "a list display (lists are mutable: use a tuple)";
  default: return "this expression";
  }
}

static gr_node *lower_expr(pf_cur *c, const py_expr *e) {
  pf_module *M = c->F->M;
  switch (e->kind) {
  case PY_K_Constant: return constant(c, e);
  case PY_K_Name: return name_value(c, e);
  case PY_K_BinOp: {
    gr_node *a = pf_expr(c, e->v.BinOp.left);
    gr_node *b = a ? pf_expr(c, e->v.BinOp.right) : NULL;
    return b ? pf_binop(c, e->v.BinOp.op, a, b, e) : NULL;
  }
  case PY_K_UnaryOp: {
    gr_node *x = pf_expr(c, e->v.UnaryOp.operand);
    if (!x) return NULL;
    switch (e->v.UnaryOp.op) {
    case PY_USub: return pf_call_prim(c, "neg", &x, 1, e);
    case PY_UAdd: { /* +x: x as a number (+True is 1) */
      gr_node *a[2] = {x, pf_const(c, gv_int(1), e)};
      return pf_call_prim(c, "*", a, 2, e);
    }
    case PY_Not: return pf_truth(c, x, true, e);
    case PY_Invert: PF_UNSUPPORTED(M, e, "the operator '~' is outside the subset"); return NULL;
    }
    return NULL;
  }
  case PY_K_BoolOp: {
    boolop_arg b = {e, 0};
    return boolop_from(c, &b);
  }
  case PY_K_Compare: {
    gr_node *l = pf_expr(c, e->v.Compare.left);
    if (!l) return NULL;
    cmp_arg a = {e, 0, l};
    return compare_from(c, &a);
  }
  case PY_K_IfExp:
    return pf_if_value(c, pf_expr(c, e->v.IfExp.test), give_ifexp_body, (void *)e, give_ifexp_else, (void *)e, e);
  case PY_K_Call: return lower_call(c, e);
  case PY_K_Tuple: {
    int n = PY_SEQ_LEN(e->v.Tuple.elts);
    gr_node **in = sg_xcalloc((size_t)n + 1, sizeof(gr_node *));
    in[0] = pf_prim(c, "tuple", e);
    gr_node *r = NULL;
    int i = 0;
    for (; i < n; i++) {
      const py_expr *x = e->v.Tuple.elts->a[i];
      if (x->kind == PY_K_Starred) {
        PF_UNSUPPORTED(M, x, "%s is outside the subset", unsupported_expr(x->kind));
        break;
      }
      if (!(in[i + 1] = pf_expr(c, x))) break;
    }
    if (i == n) r = pf_apply(c, in, n + 1, e);
    free(in);
    return r;
  }
  case PY_K_Subscript: return subscript(c, e);
  case PY_K_Attribute: {
    bool handled = false;
    gr_node *v = pf_lib_value(c, e, &handled);
    if (handled || pf_failed(M)) return v;
    gr_node *x = pf_expr(c, e->v.Attribute.value);
    return x ? pf_lib_attribute(c, e, x) : NULL;
  }
  case PY_K_Lambda: {
    gr_graph *g = pf_nested_function(c, e, "lambda", NULL);
    return g ? pf_graph_const(c, g, e) : NULL;
  }
  default: PF_UNSUPPORTED(M, e, "%s is outside the subset", unsupported_expr(e->kind)); return NULL;
  }
}
