// SPDX-License-Identifier: Apache-2.0
/*
 * pf_lib.c — the names staged Python may call besides its own functions: Python
 * builtins (abs, len, pow, max, min, divmod, print, int, float, bool), NumPy's
 * spellings of the primitives (np.exp, np.sum(x, axis=1), np.zeros((2, 3), dtype=...),
 * ...), every primitive as stagd.NAME (positional arguments, the S-expression order),
 * stagd.grad, array methods and attributes (x.sum(axis), x.reshape(...), x.T, x.shape),
 * and constants (np.pi, math.pi, np.float32, ...). docs/pyfront.md lists them.
 *
 * A name is a module's when its root is a module-level import (`import numpy as np`,
 * `from numpy import exp`); which module is a matter of its dotted path, so `np`,
 * `numpy` and `jnp = numpy` aliases all work.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_int.h"

/* how a library function converts an argument */
enum { A_VAL, A_SHAPE, A_DTYPE, A_AXIS, A_SEQ };

enum { SP_NONE, SP_SQUARE, SP_NDIM, SP_ARRAY };

typedef struct libfn {
  const char *name;     /* the name in its module */
  const char *prim;     /* the primitive (SP_NONE) */
  int special;
  int nreq;             /* required arguments */
  const char *params[5]; /* parameter names in the primitive's argument order (NULL ends) */
  unsigned char kinds[5];
} libfn;

#define UN(n, p) {n, p, SP_NONE, 1, {"x"}, {A_VAL}}
#define BIN(n, p) {n, p, SP_NONE, 2, {"x1", "x2"}, {A_VAL, A_VAL}}
#define RED(n, p) {n, p, SP_NONE, 1, {"a", "axis"}, {A_VAL, A_AXIS}}

static const libfn numpy_fns[] = {
    UN("exp", "exp"), UN("log", "log"), UN("sqrt", "sqrt"), UN("tanh", "tanh"), UN("sin", "sin"),
    UN("cos", "cos"), UN("abs", "abs"), UN("absolute", "abs"), UN("negative", "neg"),
    UN("logical_not", "not"), {"square", NULL, SP_SQUARE, 1, {"x"}, {A_VAL}},
    BIN("add", "+"), BIN("subtract", "-"), BIN("multiply", "*"), BIN("divide", "/"), BIN("true_divide", "/"),
    BIN("floor_divide", "//"), BIN("power", "**"), BIN("mod", "%"), BIN("remainder", "%"),
    BIN("maximum", "maximum"), BIN("minimum", "minimum"), BIN("equal", "=="), BIN("not_equal", "!="),
    BIN("less", "<"), BIN("less_equal", "<="), BIN("greater", ">"), BIN("greater_equal", ">="),
    BIN("logical_and", "and"), BIN("logical_or", "or"), BIN("matmul", "matmul"),
    {"where", "where", SP_NONE, 3, {"condition", "x", "y"}, {A_VAL, A_VAL, A_VAL}},
    RED("sum", "sum"), RED("mean", "mean"), RED("max", "max"), RED("min", "min"), RED("amax", "max"),
    RED("amin", "min"), RED("argmax", "argmax"),
    {"transpose", "transpose", SP_NONE, 1, {"a", "axes"}, {A_VAL, A_SHAPE}},
    {"reshape", "reshape", SP_NONE, 2, {"a", "newshape"}, {A_VAL, A_SHAPE}},
    {"concatenate", "concat", SP_NONE, 1, {"arrays", "axis"}, {A_SEQ, A_AXIS}},
    {"stack", "stack", SP_NONE, 1, {"arrays", "axis"}, {A_SEQ, A_AXIS}},
    {"zeros", "zeros", SP_NONE, 1, {"shape", "dtype"}, {A_SHAPE, A_DTYPE}},
    {"ones", "ones", SP_NONE, 1, {"shape", "dtype"}, {A_SHAPE, A_DTYPE}},
    {"full", "fill", SP_NONE, 2, {"shape", "fill_value", "dtype"}, {A_SHAPE, A_VAL, A_DTYPE}},
    {"arange", "arange", SP_NONE, 1, {"", "", ""}, {A_VAL, A_VAL, A_VAL}},
    {"take", "gather", SP_NONE, 3, {"a", "indices", "axis"}, {A_VAL, A_VAL, A_AXIS}},
    {"shape", "shape", SP_NONE, 1, {"a"}, {A_VAL}},
    {"size", "size", SP_NONE, 1, {"a"}, {A_VAL}},
    {"ndim", NULL, SP_NDIM, 1, {"a"}, {A_VAL}},
    {"array", NULL, SP_ARRAY, 1, {"object", "dtype"}, {A_VAL, A_DTYPE}},
    {NULL, NULL, 0, 0, {NULL}, {0}},
};

/* the Python client's TensorFlow-style names (clients/python/stagd), beside the rows */
static const libfn stagd_fns[] = {
    BIN("add", "+"), BIN("subtract", "-"), BIN("multiply", "*"), BIN("divide", "/"),
    {"square", NULL, SP_SQUARE, 1, {"x"}, {A_VAL}},
    {"reduce_sum", "sum", SP_NONE, 1, {"x", "axis"}, {A_VAL, A_AXIS}},
    {"reduce_mean", "mean", SP_NONE, 1, {"x", "axis"}, {A_VAL, A_AXIS}},
    {NULL, NULL, 0, 0, {NULL}, {0}},
};

/* methods of arrays: x.NAME(...) is NAME(x, ...) */
static const libfn methods[] = {
    RED("sum", "sum"), RED("mean", "mean"), RED("max", "max"), RED("min", "min"), RED("argmax", "argmax"),
    {"astype", "cast", SP_NONE, 2, {"", "dtype"}, {A_VAL, A_DTYPE}},
    {NULL, NULL, 0, 0, {NULL}, {0}},
};

static const struct {
  const char *path;
  double value;
} constants[] = {
    {"numpy.pi", M_PI}, {"numpy.e", M_E}, {"numpy.inf", INFINITY}, {"numpy.nan", NAN},
    {"math.pi", M_PI},  {"math.e", M_E},  {"math.inf", INFINITY},  {"math.nan", NAN}, {"math.tau", 2 * M_PI},
};

static const struct {
  const char *name, *dtype;
} dtypes[] = {
    {"float16", "float16"}, {"float32", "float32"}, {"float64", "float64"}, {"int32", "int32"},
    {"int64", "int64"},     {"bool_", "bool"},      {"bool", "bool"},
};

/* ---------------------------------------------------------------- names */

/* The module an unshadowed name is an import of ("numpy", "numpy.exp"), or NULL. */
static const char *import_of(pf_cur *c, const char *name) {
  py_sym s = py_an_sym(c->F->M->an, name);
  for (pf_fn *F = c->module_scope ? NULL : c->F; F; F = F->parent)
    if (py_symset_has(F->scope->locals, s)) return NULL;
  pf_global *g = pf_global_of(c->F->M, name);
  return g && g->kind == PF_G_IMPORT ? g->what : NULL;
}

static bool is_builtin(pf_cur *c, const char *name) {
  py_sym s = py_an_sym(c->F->M->an, name);
  for (pf_fn *F = c->module_scope ? NULL : c->F; F; F = F->parent)
    if (py_symset_has(F->scope->locals, s)) return false;
  return !pf_global_of(c->F->M, name) && py_an_builtin_name(name);
}

const char *pf_module_path(pf_cur *c, const py_expr *e, sg_buf *tmp) {
  if (e->kind == PY_K_Name) {
    const char *w = import_of(c, e->v.Name.id);
    if (!w) return NULL;
    sg_buf_clear(tmp);
    sg_buf_puts(tmp, w);
    return tmp->data;
  }
  if (e->kind != PY_K_Attribute || !pf_module_path(c, e->v.Attribute.value, tmp)) return NULL;
  sg_buf_printf(tmp, ".%s", e->v.Attribute.attr);
  return tmp->data;
}

/* "numpy.linalg.norm" → namespace "numpy", name "linalg.norm" */
static const char *in_module(const char *path, const char *mod) {
  size_t n = strlen(mod);
  return !strncmp(path, mod, n) && path[n] == '.' ? path + n + 1 : NULL;
}

static const libfn *find_fn(const libfn *t, const char *name) {
  for (; name && t->name; t++)
    if (!strcmp(t->name, name)) return t;
  return NULL;
}

static const char *dtype_name(const char *path) {
  const char *n = in_module(path, "numpy");
  if (!n) n = in_module(path, "stagd");
  for (size_t i = 0; n && i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (!strcmp(n, dtypes[i].name)) return dtypes[i].dtype;
  return NULL;
}

static gr_node *str_node(pf_cur *c, const char *s, const void *at) {
  return pf_const(c, (gr_val){.tag = GV_STR, .u.s = pf_intern(c->F->M, s)}, at);
}

/* stagd.NAME: a row of the op table the subset lets programs call */
static const gr_op *stagd_prim(const char *name) {
  static const char *const hidden[] = {"if", "while", "grad", "seq", "variable", "read", "assign", "assign_add", "assign_sub", NULL};
  const gr_op *op = name ? gr_op_lookup(name) : NULL;
  for (int i = 0; op && hidden[i]; i++)
    if (!strcmp(op->name, hidden[i])) return NULL;
  return op;
}

static gr_node *path_value(pf_cur *c, const char *path, const py_expr *at, bool *handled) {
  *handled = true;
  for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
    if (!strcmp(path, constants[i].path)) return pf_const(c, gv_float(constants[i].value), at);
  const char *dt = dtype_name(path);
  if (dt) return str_node(c, dt, at);
  const libfn *f = find_fn(numpy_fns, in_module(path, "numpy"));
  if (f && f->prim && f->nreq == (f->params[1] ? 2 : 1) && !f->params[f->nreq]) {
    const gr_op *op = gr_op_lookup(f->prim);
    return pf_const(c, (gr_val){.tag = GV_PRIM, .u.op = op}, at);
  }
  const gr_op *op = stagd_prim(in_module(path, "stagd"));
  if (op) return pf_const(c, (gr_val){.tag = GV_PRIM, .u.op = op}, at);
  PF_UNSUPPORTED(c->F->M, at, "'%s' is outside the subset (docs/pyfront.md lists the library names it has)", path);
  return NULL;
}

gr_node *pf_lib_value(pf_cur *c, const py_expr *e, bool *handled) {
  *handled = false;
  if (e->kind == PY_K_Name && is_builtin(c, e->v.Name.id)) {
    *handled = true;
    static const char *const prims[][2] = {{"abs", "abs"}, {"len", "len"}, {"pow", "**"}};
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
      if (!strcmp(e->v.Name.id, prims[i][0]))
        return pf_const(c, (gr_val){.tag = GV_PRIM, .u.op = gr_op_lookup(prims[i][1])}, e);
    PF_UNSUPPORTED(c->F->M, e, "the builtin '%s' is outside the subset as a value", e->v.Name.id);
    return NULL;
  }
  sg_buf tmp = SG_BUF_INIT;
  const char *path = pf_module_path(c, e, &tmp);
  gr_node *r = NULL;
  if (path && strchr(path, '.')) r = path_value(c, path, e, handled);
  else if (path) {
    *handled = true;
    PF_UNSUPPORTED(c->F->M, e, "the module '%s' used as a value (the subset has its functions and constants)", path);
  }
  sg_buf_free(&tmp);
  return r;
}

gr_node *pf_lib_attribute(pf_cur *c, const py_expr *e, gr_node *x) {
  const char *a = e->v.Attribute.attr;
  if (!strcmp(a, "shape") || !strcmp(a, "size")) return pf_call_prim(c, a, &x, 1, e);
  if (!strcmp(a, "T")) return pf_call_prim(c, "transpose", &x, 1, e);
  if (!strcmp(a, "ndim")) {
    gr_node *s = pf_call_prim(c, "shape", &x, 1, e);
    return s ? pf_call_prim(c, "len", &s, 1, e) : NULL;
  }
  PF_UNSUPPORTED(c->F->M, e, "the attribute '.%s' is outside the subset (arrays have .shape, .T, .ndim, .size)", a);
  return NULL;
}

/* ------------------------------------------------------------- arguments */

static gr_node *seq_display(pf_cur *c, const py_expr *e) {
  const py_seq *elts = e->kind == PY_K_List ? e->v.List.elts : e->v.Tuple.elts;
  int n = PY_SEQ_LEN(elts);
  gr_node **in = sg_xcalloc((size_t)n + 1, sizeof(gr_node *));
  in[0] = pf_prim(c, "tuple", e);
  gr_node *r = NULL;
  int i = 0;
  for (; i < n; i++)
    if (!(in[i + 1] = pf_expr(c, elts->a[i]))) break;
  if (i == n) r = pf_apply(c, in, n + 1, e);
  free(in);
  return r;
}

/* One argument of kind k; *omit when it is None (the primitive's default). */
static gr_node *lib_arg(pf_cur *c, const py_expr *e, int k, bool *omit) {
  *omit = false;
  if ((k == A_AXIS || k == A_DTYPE || k == A_SHAPE) && e->kind == PY_K_Constant &&
      e->v.Constant.value.kind == PY_CONST_NONE) {
    *omit = true;
    return NULL;
  }
  if ((k == A_SHAPE || k == A_SEQ) && (e->kind == PY_K_List || e->kind == PY_K_Tuple)) return seq_display(c, e);
  if (k == A_DTYPE) {
    static const char *const py[][2] = {{"float", "float64"}, {"int", "int64"}, {"bool", "bool"}};
    for (size_t i = 0; e->kind == PY_K_Name && i < 3; i++)
      if (!strcmp(e->v.Name.id, py[i][0]) && is_builtin(c, e->v.Name.id)) return str_node(c, py[i][1], e);
    if (e->kind == PY_K_Constant && e->v.Constant.value.kind == PY_CONST_STR) {
      kn_dtype dt;
      if (!kn_dtype_parse(e->v.Constant.value.s, &dt)) {
        PF_INVALID(c->F->M, e, "data type '%s' not understood (bool, int32, int64, float16, float32, float64)",
                   e->v.Constant.value.s);
        return NULL;
      }
      return str_node(c, kn_dtype_name(dt), e);
    }
  }
  return pf_expr(c, e);
}

/* Matches the call's arguments to f's parameters (as Python would) and applies f's
 * primitive to them; `self` is the receiver of a method. */
static gr_node *call_libfn(pf_cur *c, const py_expr *call, const libfn *f, const char *shown, gr_node *self) {
  pf_module *M = c->F->M;
  const py_seq *args = call->v.Call.args, *kws = call->v.Call.keywords;
  int np = 0;
  while (np < 5 && f->params[np]) np++;
  const py_expr *given[5] = {0};
  int off = self ? 1 : 0;
  if (PY_SEQ_LEN(args) + off > np) {
    PF_INVALID(M, call, "%s() takes at most %d argument%s, got %d", shown, np - off, np - off == 1 ? "" : "s",
               PY_SEQ_LEN(args));
    return NULL;
  }
  for (int i = 0; i < PY_SEQ_LEN(args); i++) given[i + off] = args->a[i];
  for (int k = 0; k < PY_SEQ_LEN(kws); k++) {
    const py_keyword *kw = kws->a[k];
    int i = off;
    while (i < np && strcmp(f->params[i], kw->arg)) i++;
    if (i == np) {
      PF_UNSUPPORTED(M, kw, "%s() with the keyword '%s' is outside the subset", shown, kw->arg);
      return NULL;
    }
    if (given[i]) {
      PF_INVALID(M, kw, "%s() got multiple values for argument '%s'", shown, kw->arg);
      return NULL;
    }
    given[i] = kw->value;
  }
  gr_node *vals[6];
  int n = 0;
  if (self) vals[n++] = self;
  for (int i = off; i < np; i++) {
    bool omit = !given[i];
    gr_node *v = given[i] ? lib_arg(c, given[i], f->kinds[i], &omit) : NULL;
    if (pf_failed(M)) return NULL;
    if (omit) {
      if (i < f->nreq) {
        PF_INVALID(M, call, "%s() missing a required argument%s%s", shown, *f->params[i] ? ": " : "", f->params[i]);
        return NULL;
      }
      for (int j = i + 1; j < np; j++)
        if (given[j]) {
          PF_UNSUPPORTED(M, given[j], "%s() with '%s' but without '%s' is outside the subset", shown, f->params[j],
                         f->params[i]);
          return NULL;
        }
      break;
    }
    vals[n++] = v;
  }
  switch (f->special) {
  case SP_SQUARE: {
    gr_node *in[2] = {vals[0], vals[0]};
    return pf_call_prim(c, "*", in, 2, call);
  }
  case SP_NDIM: {
    gr_node *s = pf_call_prim(c, "shape", vals, 1, call);
    return s ? pf_call_prim(c, "len", &s, 1, call) : NULL;
  }
  default: return pf_call_prim(c, f->prim, vals, n, call);
  }
}

/* ---------------------------------------------------------------- builtins */

typedef struct pick_arg {
  gr_node *a, *b;
} pick_arg;
static gr_node *pick_a(pf_cur *c, void *arg) {
  gr_node *n = ((pick_arg *)arg)->a;
  return n->kind == GR_CONST ? pf_const(c, gv_retain(n->value), NULL) : n;
}
static gr_node *pick_b(pf_cur *c, void *arg) {
  gr_node *n = ((pick_arg *)arg)->b;
  return n->kind == GR_CONST ? pf_const(c, gv_retain(n->value), NULL) : n;
}

/* float("inf"), float("1.5"): Python's parse of a string constant */
static gr_node *float_of_string(pf_cur *c, const py_expr *arg) {
  const char *s = arg->v.Constant.value.s;
  while (*s == ' ' || *s == '\t' || *s == '\n') s++;
  char *end;
  double d = strtod(s, &end);
  bool hex = strchr(s, 'x') || strchr(s, 'X') || strchr(s, 'p') || strchr(s, 'P');
  while (*end == ' ' || *end == '\t' || *end == '\n') end++;
  if (end == s || *end || hex) {
    PF_INVALID(c->F->M, arg, "ValueError: could not convert string to float: '%s'", arg->v.Constant.value.s);
    return NULL;
  }
  return pf_const(c, gv_float(d), arg);
}

static gr_node *builtin_call(pf_cur *c, const py_expr *call, const char *name) {
  pf_module *M = c->F->M;
  const py_seq *args = call->v.Call.args;
  int n = PY_SEQ_LEN(args);
  bool kw = PY_SEQ_LEN(call->v.Call.keywords) > 0;
  static const char *const convs[][2] = {{"int", "pyint"}, {"float", "pyfloat"}, {"bool", "pybool"}};
  for (int i = 0; i < 3; i++)
    if (!strcmp(name, convs[i][0])) {
      if (n != 1 || kw) {
        PF_UNSUPPORTED(M, call, "%s() is in the subset with one argument", name);
        return NULL;
      }
      const py_expr *a0 = args->a[0];
      if (a0->kind == PY_K_Constant && a0->v.Constant.value.kind == PY_CONST_STR) {
        if (i == 1) return float_of_string(c, a0);
        PF_UNSUPPORTED(M, a0, "%s() of a string is outside the subset", name);
        return NULL;
      }
      gr_node *x = pf_expr(c, a0);
      return x ? pf_call_prim(c, convs[i][1], &x, 1, call) : NULL;
    }
  if (!strcmp(name, "print")) {
    if (kw) {
      PF_UNSUPPORTED(M, call, "print() with keyword arguments (sep, end, file) is outside the subset");
      return NULL;
    }
    gr_node **in = sg_xcalloc((size_t)n + 1, sizeof(gr_node *));
    in[0] = pf_prim(c, "print", call);
    gr_node *r = NULL;
    int i = 0;
    for (; i < n; i++)
      if (!(in[i + 1] = pf_expr(c, args->a[i]))) break;
    if (i == n) r = pf_apply(c, in, n + 1, call);
    free(in);
    return r;
  }
  static const libfn simple[] = {UN("abs", "abs"), UN("len", "len"), BIN("pow", "**"), {NULL, NULL, 0, 0, {NULL}, {0}}};
  const libfn *f = find_fn(simple, name);
  if (f) {
    if (kw || n != f->nreq) {
      PF_INVALID(M, call, "%s() takes %d argument%s (no keywords) in the subset", name, f->nreq, f->nreq == 1 ? "" : "s");
      return NULL;
    }
    return call_libfn(c, call, f, name, NULL);
  }
  if (!strcmp(name, "divmod") && n == 2 && !kw) {
    gr_node *ab[2] = {pf_expr(c, args->a[0]), NULL};
    ab[1] = ab[0] ? pf_expr(c, args->a[1]) : NULL;
    if (!ab[1]) return NULL;
    gr_node *t[2] = {pf_call_prim(c, "//", ab, 2, call), pf_call_prim(c, "%", ab, 2, call)};
    return pf_call_prim(c, "tuple", t, 2, call);
  }
  if ((!strcmp(name, "max") || !strcmp(name, "min")) && n >= 2 && !kw) {
    /* Python keeps the first of equal items: m = x if x > m else m, left to right */
    gr_node *m = pf_expr(c, args->a[0]);
    for (int i = 1; m && i < n; i++) {
      gr_node *x = pf_expr(c, args->a[i]);
      if (!x) return NULL;
      gr_node *in[2] = {x, m};
      pick_arg p = {x, m};
      m = pf_if_value(c, pf_call_prim(c, name[1] == 'a' ? ">" : "<", in, 2, call), pick_a, &p, pick_b, &p, call);
    }
    return m;
  }
  if (!strcmp(name, "range") || !strcmp(name, "enumerate") || !strcmp(name, "zip")) {
    PF_UNSUPPORTED(M, call, "%s() is in the subset only as the iterable of a for loop", name);
    return NULL;
  }
  PF_UNSUPPORTED(M, call, "the builtin %s() is outside the subset%s", name,
                 !strcmp(name, "max") || !strcmp(name, "min") ? " with one argument (use np.max / np.min)" : "");
  return NULL;
}

/* ------------------------------------------------------------------ grad */

/* stagd.grad(f, argnums=0): the gradient function of a known function (a module-level
 * def, a nested def or lambda), w.r.t. the parameters argnums (an int or a tuple). */
static gr_node *grad_call(pf_cur *c, const py_expr *call) {
  pf_module *M = c->F->M;
  const py_seq *args = call->v.Call.args;
  const py_expr *fe = PY_SEQ_LEN(args) ? args->a[0] : NULL, *an = PY_SEQ_LEN(args) > 1 ? args->a[1] : NULL;
  for (int k = 0; k < PY_SEQ_LEN(call->v.Call.keywords); k++) {
    const py_keyword *kw = call->v.Call.keywords->a[k];
    if (!strcmp(kw->arg, "argnums") && !an) an = kw->value;
    else {
      PF_UNSUPPORTED(M, kw, "stagd.grad() with the keyword '%s' is outside the subset", kw->arg);
      return NULL;
    }
  }
  if (!fe || PY_SEQ_LEN(args) > 2) {
    PF_INVALID(M, call, "stagd.grad(f, argnums=0) takes a function and the indices of its parameters");
    return NULL;
  }
  gr_node *f = pf_expr(c, fe);
  if (!f) return NULL;
  if (!gr_is_const_graph(f)) {
    PF_UNSUPPORTED(M, fe,
                   "stagd.grad() of a function known only at run time is outside the subset: name a def or write "
                   "the lambda there");
    return NULL;
  }
  gr_node *in[18] = {pf_prim(c, "grad", call), f};
  int n = 2;
  const py_seq *items = an && an->kind == PY_K_Tuple ? an->v.Tuple.elts : NULL;
  int ni = an ? (items ? PY_SEQ_LEN(items) : 1) : 0;
  if (ni > 16) {
    PF_UNSUPPORTED(M, an, "more than 16 argnums");
    return NULL;
  }
  for (int i = 0; i < ni; i++) {
    const py_expr *x = items ? items->a[i] : an;
    if (x->kind != PY_K_Constant || x->v.Constant.value.kind != PY_CONST_INT) {
      PF_UNSUPPORTED(M, x, "stagd.grad() argnums must be integer constants");
      return NULL;
    }
    in[n++] = pf_const(c, gv_int(strtoll(x->v.Constant.value.s, NULL, 10)), x);
  }
  if (!an) in[n++] = pf_const(c, gv_int(0), call);
  return pf_apply(c, in, n, call);
}

/* ------------------------------------------------------------------- calls */

static gr_node *module_call(pf_cur *c, const py_expr *call, const char *path) {
  pf_module *M = c->F->M;
  const char *n;
  const libfn *f;
  if ((n = in_module(path, "numpy")) && (f = find_fn(numpy_fns, n))) {
    if (f->special == SP_ARRAY) {
      PF_UNSUPPORTED(M, call, "numpy.array() is outside the subset (build arrays with np.zeros, np.stack, ...)");
      return NULL;
    }
    return call_libfn(c, call, f, path, NULL);
  }
  if ((n = in_module(path, "stagd"))) {
    if (!strcmp(n, "grad")) return grad_call(c, call);
    if ((f = find_fn(stagd_fns, n))) return call_libfn(c, call, f, path, NULL);
    const gr_op *op = stagd_prim(n);
    if (op) {
      if (PY_SEQ_LEN(call->v.Call.keywords)) {
        PF_UNSUPPORTED(M, call, "%s() takes positional arguments (in the primitive's order, docs/sexpr.md)", path);
        return NULL;
      }
      int na = PY_SEQ_LEN(call->v.Call.args);
      if (na < op->min_args || (op->max_args >= 0 && na > op->max_args)) {
        PF_INVALID(M, call, "%s() takes %d to %d arguments, got %d", path, op->min_args, op->max_args, na);
        return NULL;
      }
      gr_node **in = sg_xcalloc((size_t)na + 1, sizeof(gr_node *));
      in[0] = pf_const(c, (gr_val){.tag = GV_PRIM, .u.op = op}, call);
      gr_node *r = NULL;
      int i = 0;
      for (; i < na; i++) {
        const py_expr *a = call->v.Call.args->a[i];
        bool omit;
        if (!(in[i + 1] = lib_arg(c, a, A_VAL, &omit))) break;
      }
      if (i == na) r = pf_apply(c, in, na + 1, call);
      free(in);
      return r;
    }
  }
  if (in_module(path, "math"))
    PF_UNSUPPORTED(M, call, "%s() is outside the subset (math's functions raise where NumPy's return nan or inf: use "
                            "the numpy spelling)",
                   path);
  else
    PF_UNSUPPORTED(M, call, "%s() is outside the subset (docs/pyfront.md lists the library functions it has)", path);
  return NULL;
}

gr_node *pf_lib_call(pf_cur *c, const py_expr *call, bool *handled) {
  const py_expr *fn = call->v.Call.func;
  *handled = true;
  if (fn->kind == PY_K_Name && is_builtin(c, fn->v.Name.id)) return builtin_call(c, call, fn->v.Name.id);
  sg_buf tmp = SG_BUF_INIT;
  const char *path = pf_module_path(c, fn, &tmp);
  gr_node *r = NULL;
  if (path) {
    r = module_call(c, call, path);
  } else if (fn->kind == PY_K_Attribute) { /* a method of a value */
    const char *m = fn->v.Attribute.attr;
    const libfn *f = find_fn(methods, m);
    gr_node *x = pf_expr(c, fn->v.Attribute.value);
    const py_seq *args = call->v.Call.args;
    int na = PY_SEQ_LEN(args);
    if (!x) {
      r = NULL;
    } else if (f) {
      r = call_libfn(c, call, f, m, x);
    } else if (!strcmp(m, "reshape") || !strcmp(m, "transpose")) {
      /* x.reshape(2, 3) / x.reshape((2, 3)); x.transpose() / x.transpose(1, 0) */
      gr_node *v[2] = {x, NULL};
      if (PY_SEQ_LEN(call->v.Call.keywords)) {
        PF_UNSUPPORTED(c->F->M, call, ".%s() with keywords is outside the subset", m);
      } else if (na == 1) {
        bool omit;
        v[1] = lib_arg(c, args->a[0], A_SHAPE, &omit);
        if (!pf_failed(c->F->M)) r = pf_call_prim(c, m, v, omit ? 1 : 2, call);
      } else if (na == 0 && m[0] == 't') {
        r = pf_call_prim(c, m, v, 1, call);
      } else if (na > 1) {
        gr_node **in = sg_xcalloc((size_t)na + 1, sizeof(gr_node *));
        in[0] = pf_prim(c, "tuple", call);
        int i = 0;
        for (; i < na; i++)
          if (!(in[i + 1] = pf_expr(c, args->a[i]))) break;
        if (i == na && (v[1] = pf_apply(c, in, na + 1, call))) r = pf_call_prim(c, m, v, 2, call);
        free(in);
      } else {
        PF_INVALID(c->F->M, call, ".reshape() needs a shape");
      }
    } else if (!strcmp(m, "copy") && na == 0) {
      r = x; /* values are immutable here: a copy is the value */
    } else {
      PF_UNSUPPORTED(c->F->M, fn, "the method '.%s()' is outside the subset", m);
    }
  } else {
    *handled = false;
  }
  sg_buf_free(&tmp);
  return r;
}
