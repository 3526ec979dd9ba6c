// SPDX-License-Identifier: Apache-2.0
/*
 * infer.c — abstract interpretation of the graph: for every node a type (scalar,
 * tensor, tuple, record, function, none), dtype, shape (dims may be unknown `?`, the
 * rank may be unknown) and, for scalars, the constant value when it is known.
 *
 * Graphs are inferred per input signature: a call of a known graph re-infers the
 * callee with the caller's argument types (memoised on graph + signature; a recursive
 * call still in progress yields "any"), so a shape mismatch inside a helper is
 * reported at the helper's node for the call that causes it. The generic pass over
 * every top-level def (parameter annotations or "any") records node->aval for dumps.
 * Shape/dtype rules are the `infer` column of the op table (`rules` below, indexed by
 * the row's family, ir/ops.c); ops without one give "any" and are checked at run time.
 */
#include <string.h>

#include "infer_rules.h"

/* The infer column of the op table: each family's shape rule. */
static const gr_infer_fn rules[GR_FAM_COUNT] = {
    [GR_FAM_BINARY] = gr_infer_binary,     [GR_FAM_UNARY] = gr_infer_unary,
    [GR_FAM_WHERE] = gr_infer_where,       [GR_FAM_CAST] = gr_infer_cast,
    [GR_FAM_MATMUL] = gr_infer_matmul,     [GR_FAM_TRANSPOSE] = gr_infer_transpose,
    [GR_FAM_RESHAPE] = gr_infer_reshape,   [GR_FAM_REDUCE] = gr_infer_reduce,
    [GR_FAM_SOFTMAX] = gr_infer_same,      [GR_FAM_JOIN] = gr_infer_join,
    [GR_FAM_SLICE] = gr_infer_slice,       [GR_FAM_GATHER] = gr_infer_gather,
    [GR_FAM_ONE_HOT] = gr_infer_one_hot,   [GR_FAM_FILL] = gr_infer_fill,
    [GR_FAM_ARANGE] = gr_infer_arange,     [GR_FAM_RANDOM] = gr_infer_random,
    [GR_FAM_SHAPE] = gr_infer_shape,       [GR_FAM_TUPLE] = gr_infer_tuple,
    [GR_FAM_GETITEM] = gr_infer_getitem,   [GR_FAM_RECORD] = gr_infer_record,
    [GR_FAM_GETATTR] = gr_infer_getattr,   [GR_FAM_ADJOINT] = gr_infer_adjoint,
    [GR_FAM_OPTIM] = gr_infer_optim,       [GR_FAM_PRINT] = gr_infer_none,
    [GR_FAM_ASSERT] = gr_infer_assert,       [GR_FAM_VARIABLE] = gr_infer_variable,
    [GR_FAM_SEQ] = gr_infer_seq,           [GR_FAM_IF] = NULL,
    [GR_FAM_WHILE] = NULL,                 [GR_FAM_GRAD] = NULL,
    [GR_FAM_PYCONV] = gr_infer_pyconv,
};

gr_infer_fn gr_infer_rule(const gr_op *op) { return rules[op->family]; }

typedef struct ienv {
  sg_map vals; /* node → gr_aval* */
  struct ienv *parent;
} ienv;

typedef struct ictx {
  gr_module *m;
  sg_arena *arena; /* abstract values (the module's at stage time, a local one at run time) */
  sg_error *err;
  sg_map memo;     /* signature hash → gr_aval* (result) */
  sg_map inprog;   /* signature hash → present while being inferred */
  sg_map seen;     /* graphs inferred at least once (gr_infer's sweep of the others) */
  int depth;
} ictx;

static gr_aval *new_aval(sg_arena *a, gr_akind k) {
  gr_aval *v = sg_arena_calloc(a, 1, sizeof *v);
  v->kind = k;
  v->ndim = -1;
  return v;
}

static gr_aval ANY_ = {.kind = GA_ANY, .ndim = -1};
static gr_aval *any(void) { return &ANY_; }

static gr_aval *aval_of_value(sg_arena *a, const gr_val *v) {
  gr_aval *r;
  switch (v->tag) {
  case GV_BOOL:
  case GV_INT:
  case GV_FLOAT:
    r = new_aval(a, GA_SCALAR);
    r->dtype = v->tag == GV_BOOL ? KN_BOOL : v->tag == GV_INT ? KN_INT64 : KN_FLOAT64;
    r->has_const = true;
    r->cval = *v;
    return r;
  case GV_TENSOR:
  case GV_RESIDENT: {
    const int64_t *shape;
    r = new_aval(a, GA_TENSOR);
    gv_tensor_meta(v, &r->dtype, &r->ndim, &shape);
    memcpy(r->shape, shape, sizeof r->shape);
    return r;
  }
  case GV_NONE: return new_aval(a, GA_NONE);
  case GV_STR:
    r = new_aval(a, GA_STR);
    r->has_const = true;
    r->cval = *v;
    return r;
  case GV_GRAPH:
  case GV_PRIM:
  case GV_CLOSURE:
    r = new_aval(a, GA_FUNC);
    r->has_const = v->tag != GV_CLOSURE;
    r->cval = v->tag != GV_CLOSURE ? *v : gv_none();
    return r;
  case GV_TUPLE:
    r = new_aval(a, GA_TUPLE);
    r->n = v->u.o->n;
    r->elems = sg_arena_alloc(a, sizeof(gr_aval *) * (size_t)(r->n + 1));
    for (int i = 0; i < r->n; i++) r->elems[i] = aval_of_value(a, &v->u.o->items[i]);
    return r;
  default: return any();
  }
}

static uint64_t aval_hash(const gr_aval *v) {
  uint64_t h = sg_hash_u64((uint64_t)v->kind * 31 + (uint64_t)v->dtype + 7);
  h = sg_hash_u64(h ^ (uint64_t)(v->ndim + 2));
  for (int i = 0; i < v->ndim && i < KN_MAX_DIMS; i++) h = sg_hash_u64(h ^ (uint64_t)v->shape[i]);
  if (v->has_const) h = sg_hash_u64(h ^ gv_hash(&v->cval));
  for (int i = 0; i < v->n && v->elems; i++) h = sg_hash_u64(h ^ aval_hash(v->elems[i]));
  for (int i = 0; i < v->n && v->names; i++) /* record fields: interned names */
    h = sg_hash_u64(h ^ (uint64_t)(uintptr_t)v->names[i]);
  return h;
}

static bool numeric(const gr_aval *a) { return a->kind == GA_SCALAR || a->kind == GA_TENSOR; }

static sg_code not_numeric(const gr_op *op, const gr_aval *a, sg_error *err) {
  sg_buf b = SG_BUF_INIT;
  gr_aval_print(&b, a);
  sg_error_set(err, SG_INVALID_ARGUMENT, "%s: expected a number or tensor, got %s", op->name, b.data);
  sg_buf_free(&b);
  return SG_INVALID_ARGUMENT;
}

/* A Python scalar's dtype next to a tensor of dtype t (ops_cpu.c gr_weak_dtype). */
static kn_dtype weak(const gr_aval *s, kn_dtype t) {
  return s->dtype == KN_BOOL ? KN_BOOL : gr_weak_kind_dtype(s->dtype, t);
}

/* Whether tensor s is weak next to tensor o (NumPy 1.24: a 0-d tensor next to one of at
 * least one dimension, ops_cpu.c operand_dtypes): 1 yes, 0 no, -1 an unknown rank decides. */
static int weak_0d(const gr_aval *s, const gr_aval *o) {
  if (s->ndim > 0 || o->ndim == 0) return 0;
  return s->ndim == 0 && o->ndim > 0 ? 1 : -1;
}

static kn_dtype combine(int k, kn_dtype a, kn_dtype b) {
  return k < 0 ? kn_promote(a, b) : kn_binop_result((kn_binop)k, a, b);
}

/* The result dtype of binary op k (-1: where's two values) on numeric x and y, not
 * both Python scalars, by the executors' rule (ops_cpu.c operand_dtypes). false
 * when it depends on a rank inference does not know. */
static bool result_dtype(const gr_aval *x, const gr_aval *y, int k, kn_dtype *rt) {
  if (x->kind != GA_TENSOR || y->kind != GA_TENSOR) {
    kn_dtype dx = x->kind == GA_TENSOR || y->kind != GA_TENSOR ? x->dtype : weak(x, y->dtype);
    kn_dtype dy = y->kind == GA_TENSOR || x->kind != GA_TENSOR ? y->dtype : weak(y, x->dtype);
    *rt = combine(k, dx, dy);
    return true;
  }
  int wx = weak_0d(x, y), wy = weak_0d(y, x);
  kn_dtype strong = combine(k, x->dtype, y->dtype);
  kn_dtype rx = combine(k, gr_weak_kind_dtype(x->dtype, y->dtype), y->dtype);
  kn_dtype ry = combine(k, x->dtype, gr_weak_kind_dtype(y->dtype, x->dtype));
  *rt = wx > 0 ? rx : wy > 0 ? ry : strong;
  return !(wx < 0 && rx != strong) && !(wy < 0 && ry != strong);
}

/* Broadcast with unknown dims: a known dim other than 1 wins over `?`. */
static sg_code bcast(const gr_op *op, const gr_aval *x, const gr_aval *y, gr_aval *out, sg_error *err) {
  if (x->ndim < 0 || y->ndim < 0) {
    out->ndim = -1;
    return SG_OK;
  }
  int n = x->ndim > y->ndim ? x->ndim : y->ndim;
  for (int i = 0; i < n; i++) {
    int64_t a = i < n - x->ndim ? 1 : x->shape[i - (n - x->ndim)];
    int64_t b = i < n - y->ndim ? 1 : y->shape[i - (n - y->ndim)];
    int64_t r;
    if (a == b) r = a;
    else if (a == 1) r = b;
    else if (b == 1) r = a;
    else if (a < 0) r = b;
    else if (b < 0) r = a;
    else return kn_err_broadcast(err, op->name, x->ndim, x->shape, y->ndim, y->shape);
    out->shape[i] = r;
  }
  out->ndim = n;
  return SG_OK;
}

GR_INFER(gr_infer_binary) {
  if (n == 1) return gr_infer_unary(op, args, n, out, a, err); /* unary minus */
  gr_aval *x = args[0], *y = args[1];
  if (x->kind == GA_ANY || y->kind == GA_ANY) return SG_OK;
  if (!numeric(x)) return not_numeric(op, x, err);
  if (!numeric(y)) return not_numeric(op, y, err);
  kn_binop k = (kn_binop)op->code;
  bool cmp = (k >= KN_EQ && k <= KN_GE) || k == KN_AND || k == KN_OR;
  if (x->kind == GA_SCALAR && y->kind == GA_SCALAR) {
    out->kind = GA_SCALAR;
    if (x->has_const && y->has_const) {
      gr_val av[2] = {x->cval, y->cval}, r;
      if (gr_scalar_binary(op, k, &av[0], &av[1], &r, err)) return err->code;
      out->dtype = r.tag == GV_BOOL ? KN_BOOL : r.tag == GV_INT ? KN_INT64 : KN_FLOAT64;
      out->has_const = true;
      out->cval = r;
      return SG_OK;
    }
    bool fl = x->dtype == KN_FLOAT64 || y->dtype == KN_FLOAT64 || k == KN_DIV;
    out->dtype = cmp ? KN_BOOL : fl ? KN_FLOAT64 : KN_INT64;
    if (k == KN_POW && !fl) out->kind = GA_ANY; /* int ** negative int is a float */
    return SG_OK;
  }
  gr_aval ax = *x, ay = *y, r;
  if (x->kind == GA_SCALAR) ax.ndim = 0;
  if (y->kind == GA_SCALAR) ay.ndim = 0;
  memset(&r, 0, sizeof r);
  if (bcast(op, &ax, &ay, &r, err)) return err->code;
  if (!result_dtype(x, y, (int)k, &r.dtype)) return SG_OK; /* an unknown rank decides */
  r.kind = GA_TENSOR;
  *out = r;
  return SG_OK;
}

GR_INFER(gr_infer_unary) {
  gr_aval *x = args[0];
  if (x->kind == GA_ANY) return SG_OK;
  if (!numeric(x)) return not_numeric(op, x, err);
  kn_unop k = (kn_unop)(op->code == KN_SUB ? KN_NEG : op->code);
  if (n == 1 && op->code == KN_SUB) k = KN_NEG;
  if (x->kind == GA_SCALAR) {
    out->kind = GA_SCALAR;
    out->dtype = k == KN_NOT ? KN_BOOL
                 : (x->dtype != KN_FLOAT64 && (k == KN_NEG || k == KN_ABS || k == KN_RELU)) ? KN_INT64
                 : KN_FLOAT64;
    return SG_OK;
  }
  *out = *x;
  out->dtype = kn_unop_result(k, x->dtype);
  return SG_OK;
}

/* matmul and its transposed-operand rows (op->code: KN_MATMUL_TRANS_A / _B): a
 * transposed operand is looked at with its last two axes swapped */
static sg_code matmul_operand(const gr_op *op, const gr_aval *x, bool trans, gr_aval *out,
                              sg_error *err) {
  *out = *x;
  if (!trans || x->ndim < 0) return SG_OK;
  if (x->ndim < 2)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: a transposed operand must be at least 2-d", op->name);
  out->shape[x->ndim - 2] = x->shape[x->ndim - 1];
  out->shape[x->ndim - 1] = x->shape[x->ndim - 2];
  return SG_OK;
}

GR_INFER(gr_infer_matmul) {
  gr_aval xv, yv, *x = &xv, *y = &yv;
  if (args[0]->kind == GA_ANY || args[1]->kind == GA_ANY) return SG_OK;
  if (args[0]->kind != GA_TENSOR || args[1]->kind != GA_TENSOR)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: expected two tensors", op->name);
  out->kind = GA_TENSOR;
  out->dtype = kn_promote(args[0]->dtype, args[1]->dtype);
  if (args[0]->ndim < 0 || args[1]->ndim < 0) return SG_OK;
  if (args[0]->ndim == 0 || args[1]->ndim == 0)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: operands must be at least 1-d", op->name);
  if (matmul_operand(op, args[0], op->code & KN_MATMUL_TRANS_A, x, err) ||
      matmul_operand(op, args[1], op->code & KN_MATMUL_TRANS_B, y, err))
    return err->code;
  int64_t k1 = x->shape[x->ndim - 1], k2 = y->ndim == 1 ? y->shape[0] : y->shape[y->ndim - 2];
  if (k1 >= 0 && k2 >= 0 && k1 != k2)
    return kn_err_misaligned(err, op->name, args[0]->ndim, args[0]->shape, args[1]->ndim,
                             args[1]->shape, (int)op->code, k1, k2);
  if (x->ndim <= 2 && y->ndim <= 2) {
    int nd = 0;
    if (x->ndim == 2) out->shape[nd++] = x->shape[0];
    if (y->ndim == 2) out->shape[nd++] = y->shape[1];
    out->ndim = nd;
  }
  return SG_OK;
}

GR_INFER(gr_infer_reduce) {
  gr_aval *x = args[0];
  if (x->kind == GA_ANY) return SG_OK;
  if (!numeric(x)) return not_numeric(op, x, err);
  kn_dtype dt = x->kind == GA_TENSOR ? x->dtype : x->dtype;
  out->kind = GA_TENSOR;
  out->dtype = kn_reduce_result((kn_reduce_op)op->code, dt);
  if (n == 1 || args[1]->kind == GA_NONE) {
    out->ndim = 0;
    return SG_OK;
  }
  int nd = x->kind == GA_SCALAR ? 0 : x->ndim;
  if (nd < 0 || args[1]->kind != GA_SCALAR || !args[1]->has_const || args[1]->cval.tag != GV_INT) {
    out->ndim = -1;
    return SG_OK;
  }
  int64_t ax = args[1]->cval.u.i;
  if (ax < -nd || ax >= nd) return kn_err_axis(err, op->name, ax, nd);
  if (ax < 0) ax += nd;
  out->ndim = 0;
  for (int i = 0; i < nd; i++)
    if (i != ax) out->shape[out->ndim++] = x->shape[i];
  return SG_OK;
}

GR_INFER(gr_infer_same) {
  gr_aval *x = args[0];
  if (x->kind != GA_TENSOR) return SG_OK;
  *out = *x;
  if (!kn_dtype_is_float(out->dtype)) out->dtype = KN_FLOAT64;
  return SG_OK;
}

GR_INFER(gr_infer_tuple) {
  out->kind = GA_TUPLE;
  out->n = n;
  out->elems = sg_arena_alloc(a, sizeof(gr_aval *) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) out->elems[i] = args[i];
  return SG_OK;
}

GR_INFER(gr_infer_getitem) {
  gr_aval *x = args[0], *i = args[1];
  if (x->kind == GA_TUPLE && i->kind == GA_SCALAR && i->has_const && i->cval.tag == GV_INT) {
    int64_t k = i->cval.u.i;
    if (k < -x->n || k >= x->n) return kn_err_tuple_index(err, k, x->n);
    *out = *x->elems[k < 0 ? k + x->n : k];
    return SG_OK;
  }
  if (x->kind == GA_TENSOR && x->ndim > 0) {
    out->kind = GA_TENSOR;
    out->dtype = x->dtype;
    out->ndim = x->ndim - 1;
    memcpy(out->shape, x->shape + 1, sizeof(int64_t) * (size_t)out->ndim);
  }
  return SG_OK;
}

GR_INFER(gr_infer_bool_scalar) {
  out->kind = GA_SCALAR;
  out->dtype = KN_BOOL;
  return SG_OK;
}

GR_INFER(gr_infer_none) {
  out->kind = GA_NONE;
  return SG_OK;
}

/* assert and assume (code 0, 2) → none; grad_scalar X (code 1, what grad checks of its
 * function's value) → X, refused here when X is known not to be one number */
GR_INFER(gr_infer_assert) {
  if (op->code != 1) return gr_infer_none(op, args, n, out, a, err);
  const gr_aval *x = args[0];
  *out = *x;
  bool one = true;
  if (x->kind == GA_TENSOR && x->ndim > 0)
    for (int d = 0; d < x->ndim; d++) one = one && x->shape[d] != 0 && (x->shape[d] < 0 || x->shape[d] == 1);
  bool known_many = x->kind == GA_TENSOR && x->ndim > 0 && !one;
  for (int d = 0; known_many && d < x->ndim; d++) known_many = x->shape[d] >= 0;
  if (!known_many && x->kind != GA_TUPLE && x->kind != GA_RECORD && x->kind != GA_NONE && x->kind != GA_STR &&
      x->kind != GA_FUNC)
    return SG_OK;
  sg_buf b = SG_BUF_INIT;
  gr_aval_print(&b, x);
  sg_error_set(err, SG_INVALID_ARGUMENT, "grad: the function must return one number (a scalar), it returns %s",
               b.data);
  sg_buf_free(&b);
  return SG_INVALID_ARGUMENT;
}

/* ------------------------------------------------------------ the walker */
static gr_aval *lookup(ienv *e, gr_node *n) {
  for (; e; e = e->parent) {
    void *v;
    if (sg_map_get(&e->vals, (uintptr_t)n, &v)) return v;
  }
  return any();
}

static gr_aval *aval_of(ictx *c, ienv *e, gr_node *n) {
  if (n->kind == GR_CONST) return aval_of_value(c->arena, &n->value);
  return lookup(e, n);
}

/* The least upper bound of two abstract values (if branches, loop states): what both
 * have in common; dims that differ become `?`, ranks that differ an unknown rank,
 * constants that differ are dropped. Returns a or b when one already covers both. */
static gr_aval *join(sg_arena *ar, gr_aval *a, gr_aval *b) {
  if (a == b) return a;
  if (a->kind != b->kind) return any();
  if (a->kind == GA_SCALAR) {
    if (a->dtype != b->dtype) return any();
    if (!a->has_const) return a;
    if (!b->has_const) return b;
    if (gv_equal(&a->cval, &b->cval)) return a;
    gr_aval *r = new_aval(ar, GA_SCALAR);
    r->dtype = a->dtype;
    return r;
  }
  if (a->kind == GA_TENSOR) {
    if (a->dtype != b->dtype) return any();
    if (a->ndim < 0) return a;
    if (b->ndim < 0) return b;
    bool same = a->ndim == b->ndim;
    for (int i = 0; same && i < a->ndim; i++) same = a->shape[i] == b->shape[i];
    if (same) return a;
    gr_aval *r = new_aval(ar, GA_TENSOR);
    r->dtype = a->dtype;
    if (a->ndim == b->ndim) {
      r->ndim = a->ndim;
      for (int i = 0; i < a->ndim; i++) r->shape[i] = a->shape[i] == b->shape[i] ? a->shape[i] : -1;
    }
    return r;
  }
  if (a->kind == GA_TUPLE || a->kind == GA_RECORD) {
    if (a->n != b->n) return any();
    for (int i = 0; a->kind == GA_RECORD && i < a->n; i++)
      if (strcmp(a->names[i], b->names[i])) return any();
    gr_aval *r = new_aval(ar, a->kind);
    *r = *a;
    r->elems = sg_arena_alloc(ar, sizeof(gr_aval *) * (size_t)(a->n + 1));
    bool same = true;
    for (int i = 0; i < a->n; i++) {
      r->elems[i] = join(ar, a->elems[i], b->elems[i]);
      same = same && r->elems[i] == a->elems[i];
    }
    return same ? a : r;
  }
  if (a->kind == GA_FUNC && a->has_const && b->has_const && gv_equal(&a->cval, &b->cval)) return a;
  if (a->kind == GA_NONE) return a;
  if (a->kind == GA_STR) return a->has_const && b->has_const && gv_equal(&a->cval, &b->cval) ? a : new_aval(ar, GA_STR);
  return any();
}

static sg_code infer_graph(ictx *c, gr_graph *g, gr_aval **args, ienv *parent, bool record,
                           gr_aval **out);

static sg_code infer_call(ictx *c, ienv *e, gr_node *n, gr_graph *callee, gr_aval **args, int na,
                          bool record, gr_aval **out) {
  *out = any();
  if (na != callee->nparams)
    return gr_error_at(c->err, SG_INVALID_ARGUMENT, c->m, n, "wrong number of arguments to '%s': expected %d, got %d",
                       callee->name ? callee->name : "lambda", callee->nparams, na);
  if (c->depth > 48) return SG_OK;
  uint64_t h = sg_hash_u64((uintptr_t)callee);
  for (int i = 0; i < na; i++) h = sg_hash_u64(h ^ aval_hash(args[i]) ^ (uint64_t)i);
  void *v;
  bool closed = callee->fvs.len == 0;
  if (closed && sg_map_get(&c->memo, h, &v)) {
    *out = v;
    return SG_OK;
  }
  if (sg_map_get(&c->inprog, h, NULL)) return SG_OK; /* recursion: unknown */
  sg_map_put(&c->inprog, h, NULL);
  c->depth++;
  sg_code rc = infer_graph(c, callee, args, closed ? NULL : e, record && false, out);
  c->depth--;
  sg_map_remove(&c->inprog, h);
  if (!rc && closed) sg_map_put(&c->memo, h, *out);
  return rc;
}

/* a without the constants of its scalars (tuples element by element) */
static gr_aval *unconst(sg_arena *ar, gr_aval *a) {
  if (a->kind == GA_SCALAR && a->has_const) {
    gr_aval *r = new_aval(ar, GA_SCALAR);
    r->dtype = a->dtype;
    return r;
  }
  if (a->kind != GA_TUPLE) return a;
  gr_aval *r = new_aval(ar, GA_TUPLE);
  *r = *a;
  r->elems = sg_arena_alloc(ar, sizeof(gr_aval *) * (size_t)(a->n + 1));
  for (int i = 0; i < a->n; i++) r->elems[i] = unconst(ar, a->elems[i]);
  return r;
}

/* while: the state's type is the join of INIT and what BODY returns for it, iterated
 * to a fixed point (joins only widen: a few rounds suffice; past them, any). COND and
 * BODY are checked against the state, so a mismatch inside them is located there.
 * The first round's state holds INIT's constants, with which a body that never runs
 * may fail (`for x in ()`: (getitem () 0)); an error there is only reported if the
 * body fails without them too. */
static sg_code infer_while(ictx *c, ienv *e, gr_node *n, gr_aval **av, bool record, gr_aval **out) {
  *out = any();
  gr_node *cf = n->inputs[1], *bf = n->inputs[2];
  gr_aval *st = av[2];
  if (st->kind != GA_TUPLE) {
    if (st->kind == GA_ANY) return SG_OK;
    return gr_error_at(c->err, SG_INVALID_ARGUMENT, c->m, n, "while: the initial state must be a tuple");
  }
  if (!gr_is_const_graph(cf) || !gr_is_const_graph(bf)) return SG_OK;
  for (int round = 0; round < 6; round++) {
    gr_aval *cr, *br;
    sg_code rc = infer_call(c, e, n, cf->value.u.g, st->elems, st->n, record, &cr);
    if (!rc) rc = infer_call(c, e, n, bf->value.u.g, st->elems, st->n, record, &br);
    if (rc && round == 0 && unconst(c->arena, st) != st) {
      if (c->err) sg_error_clear(c->err);
      st = unconst(c->arena, st);
      rc = infer_call(c, e, n, cf->value.u.g, st->elems, st->n, record, &cr);
      if (!rc) rc = infer_call(c, e, n, bf->value.u.g, st->elems, st->n, record, &br);
    }
    if (rc) return rc;
    if (br->kind == GA_ANY) return SG_OK;
    if (br->kind != GA_TUPLE || br->n != st->n)
      return gr_error_at(c->err, SG_INVALID_ARGUMENT, c->m, n,
                         "while: the body function must return a tuple of %d elements", st->n);
    gr_aval *next = join(c->arena, st, br);
    if (next == st) {
      *out = st;
      return SG_OK;
    }
    if (next->kind != GA_TUPLE) return SG_OK;
    st = next;
  }
  return SG_OK;
}

static sg_code infer_graph(ictx *c, gr_graph *g, gr_aval **args, ienv *parent, bool record,
                           gr_aval **out) {
  *out = any();
  if (sg_watch_stopped()) return sg_watch_poll("inferring types", c->err); /* the request gave up */
  ienv e = {SG_MAP_INIT, parent};
  sg_map_put(&c->seen, (uintptr_t)g, NULL);
  for (int i = 0; i < g->nparams; i++)
    sg_map_put(&e.vals, (uintptr_t)g->params[i], args ? args[i] : (g->params[i]->aval ? g->params[i]->aval : any()));
  gr_node_vec sched = {0};
  gr_schedule(g, &sched);
  sg_code rc = SG_OK;
  gr_aval *av_local[16];
  for (size_t k = 0; k < sched.len && !rc; k++) {
    gr_node *n = sched.data[k];
    int na = n->ninputs - 1;
    gr_aval **av = na <= 16 ? av_local : sg_xmalloc(sizeof(gr_aval *) * (size_t)na);
    for (int i = 0; i < na; i++) av[i] = aval_of(c, &e, n->inputs[i + 1]);
    gr_aval *res = any();
    const gr_op *op = gr_node_prim(n);
    gr_node *head = n->inputs[0];
    if (op == gr_op_if) {
      gr_aval *r[2] = {any(), any()};
      for (int b = 0; b < 2 && !rc; b++) {
        gr_node *br = n->inputs[2 + b];
        if (gr_is_const_graph(br) && br->value.u.g->nparams == 0) rc = infer_graph(c, br->value.u.g, NULL, &e, record, &r[b]);
      }
      if (!rc) {
        gr_aval *cond = av[0];
        if (cond->kind == GA_SCALAR && cond->has_const) {
          bool t;
          gv_truthy(&cond->cval, &t);
          res = r[t ? 0 : 1];
        } else {
          res = join(c->arena, r[0], r[1]);
        }
      }
    } else if (op && !gr_op_takes(op, na)) { /* a call the reader did not see by name (`((begin ones))`) */
      rc = gr_error_at(c->err, SG_INVALID_ARGUMENT, c->m, n, "wrong number of arguments to '%s': got %d", op->name, na);
    } else if (op == gr_op_while) {
      rc = infer_while(c, &e, n, av, record, &res);
    } else if (op && gr_infer_rule(op)) {
      gr_aval tmp = {.kind = GA_ANY, .ndim = -1};
      if (gr_infer_rule(op)(op, av, na, &tmp, c->arena, c->err)) {
        rc = c->err->code;
        if (c->err->line == 0) {
          char *msg = sg_xstrdup(c->err->message ? c->err->message : "");
          sg_reason why = c->err->reason;
          gr_error_at(c->err, rc, c->m, n, "%s", msg);
          c->err->reason = why; /* the same error, now located */
          free(msg);
        }
      } else if (tmp.kind != GA_ANY) {
        res = sg_arena_alloc(c->arena, sizeof *res);
        *res = tmp;
      }
    } else if (!op && gr_is_const_graph(head)) {
      rc = infer_call(c, &e, n, head->value.u.g, av, na, record, &res);
    } else if (!op) {
      /* a call of something known not to be a function (after inlining, say) fails
       * here with the location the executor would give it, not at run time */
      gr_aval *h = aval_of(c, &e, head);
      if (h->kind != GA_ANY && h->kind != GA_FUNC) {
        sg_buf b = SG_BUF_INIT;
        gr_aval_print(&b, h);
        rc = gr_error_at(c->err, SG_INVALID_ARGUMENT, c->m, n, "cannot call a value of type %s (expected a function)", b.data);
        sg_buf_free(&b);
      }
    }
    if (av != av_local) free(av);
    sg_map_put(&e.vals, (uintptr_t)n, res);
    if (record) n->aval = res->kind == GA_ANY ? NULL : res;
  }
  if (!rc) *out = aval_of(c, &e, g->output);
  sg_vec_free(&sched);
  sg_map_free(&e.vals);
  return rc;
}

sg_code gr_infer(gr_module *m, gr_graph *entry, sg_error *err) {
  ictx c = {.m = m, .arena = &m->arena, .err = err};
  sg_code rc = SG_OK;
  for (size_t i = 0; i < m->graphs.len && !rc; i++) {
    gr_graph *g = m->graphs.data[i];
    if (g->parent || g->dead) continue;
    gr_aval *out;
    rc = infer_graph(&c, g, NULL, NULL, true, &out);
    if (!rc && sg_watch_stopped()) rc = sg_watch_poll("inferring types", err); /* the request gave up */
  }
  /* Nested graphs no call reached (a closure only returned or stored, say) are checked
   * too, their parameters and free variables unknown, as top-level defs are: otherwise
   * an error in them surfaces only at run time, or after the optimizer folded it into
   * something the S-expression reader rejects. Checking one may reach others. */
  for (bool more = true; more && !rc;) {
    more = false;
    for (size_t i = 0; i < m->graphs.len && !rc; i++) {
      gr_graph *g = m->graphs.data[i];
      if (!g->parent || g->dead || sg_map_get(&c.seen, (uintptr_t)g, NULL)) continue;
      gr_aval *out;
      rc = infer_graph(&c, g, NULL, NULL, false, &out);
      more = true;
    }
  }
  sg_map_free(&c.memo);
  sg_map_free(&c.inprog);
  sg_map_free(&c.seen);
  (void)entry;
  return rc;
}

/* gr_infer_result_is_tensors's pass (this thread): cells typed by their values. */
static _Thread_local struct {
  bool on, conflict;
} typed_cells;

bool gr_infer_typed_cells(void) { return typed_cells.on; }
void gr_infer_cell_conflict(void) { typed_cells.conflict = true; }

/* Abstract value of a run-time argument: its type, dtype and shape, not its value
 * (so one check covers every call with the same signature); with typed cells, a
 * variable's cell of its value's type. */
static gr_aval *aval_of_arg(sg_arena *a, const gr_val *v) {
  if (v->tag == GV_VAR && typed_cells.on) { /* a cell of its value's type (a tensor), or of any */
    gr_aval *r = new_aval(a, GA_VAR);
    r->n = 1;
    r->elems = sg_arena_alloc(a, sizeof(gr_aval *));
    gr_val cur = gv_var_get(v->u.o);
    r->elems[0] = cur.tag == GV_TENSOR || cur.tag == GV_RESIDENT ? aval_of_value(a, &cur) : any();
    gv_release(cur);
    return r;
  }
  if (v->tag == GV_BOOL || v->tag == GV_INT || v->tag == GV_FLOAT) {
    gr_aval *r = new_aval(a, GA_SCALAR);
    r->dtype = v->tag == GV_BOOL ? KN_BOOL : v->tag == GV_INT ? KN_INT64 : KN_FLOAT64;
    return r;
  }
  if (v->tag == GV_TUPLE) {
    gr_aval *r = new_aval(a, GA_TUPLE);
    r->n = v->u.o->n;
    r->elems = sg_arena_alloc(a, sizeof(gr_aval *) * (size_t)(r->n + 1));
    for (int i = 0; i < r->n; i++) r->elems[i] = aval_of_arg(a, &v->u.o->items[i]);
    return r;
  }
  if (v->tag == GV_TENSOR || v->tag == GV_RESIDENT) return aval_of_value(a, v);
  return any();
}

uint64_t gr_signature_hash(const gr_val *args, int n) {
  sg_arena a;
  sg_arena_init(&a, 0);
  uint64_t h = sg_hash_u64((uint64_t)n + 1);
  for (int i = 0; i < n; i++) h = sg_hash_u64(h ^ aval_hash(aval_of_arg(&a, &args[i])));
  sg_arena_free(&a);
  return h;
}

static sg_code infer_once(gr_module *m, gr_graph *g, const gr_val *args, int n, bool *tensor_result, sg_error *err) {
  sg_arena a;
  sg_arena_init(&a, 0);
  ictx c = {.m = m, .arena = &a, .err = err};
  gr_aval **av = sg_xcalloc((size_t)n + 1, sizeof(gr_aval *));
  for (int i = 0; i < n; i++) av[i] = aval_of_arg(&a, &args[i]);
  gr_aval *out;
  sg_code rc = infer_graph(&c, g, av, NULL, false, &out);
  if (!rc && tensor_result) {
    bool all = out->kind == GA_TENSOR || (out->kind == GA_TUPLE && out->n > 0);
    for (int i = 0; out->kind == GA_TUPLE && i < out->n; i++) all = all && out->elems[i]->kind == GA_TENSOR;
    *tensor_result = all;
  }
  free(av);
  sg_map_free(&c.memo);
  sg_map_free(&c.inprog);
  sg_map_free(&c.seen);
  sg_arena_free(&a);
  return rc;
}

sg_code gr_infer_signature(gr_module *m, gr_graph *g, const gr_val *args, int n, sg_error *err) {
  return infer_once(m, g, args, n, NULL, err);
}

bool gr_infer_result_is_tensors(gr_module *m, gr_graph *g, const gr_val *args, int n) {
  sg_error e = SG_ERROR_INIT; /* a failure of this pass only means "not known" */
  typed_cells.on = true;
  typed_cells.conflict = false;
  bool tensors = false;
  bool ok = !infer_once(m, g, args, n, &tensors, &e) && !typed_cells.conflict;
  typed_cells.on = false;
  sg_error_clear(&e);
  return ok && tensors;
}

/* ------------------------------------------------- rules for layout and constructors */
static bool const_int(const gr_aval *a, int64_t *v) {
  if (a->kind != GA_SCALAR || !a->has_const) return false;
  if (a->cval.tag == GV_INT) *v = a->cval.u.i;
  else if (a->cval.tag == GV_BOOL) *v = a->cval.u.b;
  else return false;
  return true;
}

/* A constant shape argument: an int or a tuple of constant ints. */
static bool const_shape(const gr_aval *a, int *nd, int64_t *shape) {
  if (const_int(a, &shape[0])) {
    *nd = 1;
    return true;
  }
  if (a->kind != GA_TUPLE || a->n > KN_MAX_DIMS) return false;
  for (int i = 0; i < a->n; i++)
    if (!const_int(a->elems[i], &shape[i])) return false;
  *nd = a->n;
  return true;
}

static bool const_dtype(const gr_aval *a, kn_dtype *dt) {
  return a->kind == GA_STR && a->has_const && a->cval.tag == GV_STR && kn_dtype_parse(a->cval.u.s, dt);
}

GR_INFER(gr_infer_cast) {
  kn_dtype dt;
  if (!numeric(args[0]) || !const_dtype(args[1], &dt)) return SG_OK;
  out->kind = GA_TENSOR;
  out->dtype = dt;
  out->ndim = args[0]->kind == GA_SCALAR ? 0 : args[0]->ndim;
  memcpy(out->shape, args[0]->shape, sizeof out->shape);
  return SG_OK;
}

GR_INFER(gr_infer_transpose) {
  gr_aval *x = args[0];
  if (x->kind != GA_TENSOR || x->ndim < 0 || n > 1) return SG_OK;
  *out = *x;
  for (int i = 0; i < x->ndim; i++) out->shape[i] = x->shape[x->ndim - 1 - i];
  return SG_OK;
}

GR_INFER(gr_infer_reshape) {
  gr_aval *x = args[0];
  int nd;
  int64_t sh[KN_MAX_DIMS];
  if (x->kind != GA_TENSOR || !const_shape(args[1], &nd, sh)) return SG_OK;
  int64_t known = 1, size = 1;
  int unknown = -1;
  bool size_known = x->ndim >= 0;
  for (int i = 0; i < x->ndim && size_known; i++) {
    if (x->shape[i] < 0) size_known = false;
    else size *= x->shape[i];
  }
  for (int i = 0; i < nd; i++) {
    if (sh[i] == -1 && unknown < 0) unknown = i;
    else if (sh[i] < 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "reshape: bad dimension %lld", (long long)sh[i]);
    else if (sh[i] && known > KN_MAX_ELEMENTS / sh[i])
      return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "reshape: more than %lld elements (limit)",
                          (long long)KN_MAX_ELEMENTS);
    else known *= sh[i];
  }
  if (size_known && unknown < 0 && known != size)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "reshape: cannot reshape a tensor of size %lld into %lld elements",
                        (long long)size, (long long)known);
  if (unknown >= 0) sh[unknown] = size_known && known > 0 && size % known == 0 ? size / known : -1;
  out->kind = GA_TENSOR;
  out->dtype = x->dtype;
  out->ndim = nd;
  memcpy(out->shape, sh, sizeof(int64_t) * (size_t)nd);
  return SG_OK;
}

GR_INFER(gr_infer_where) {
  for (int i = 0; i < 3; i++)
    if (args[i]->kind == GA_ANY) return SG_OK;
  for (int i = 0; i < 3; i++)
    if (!numeric(args[i])) return not_numeric(op, args[i], err);
  gr_aval c = *args[0], x = *args[1], y = *args[2], t, r;
  if (c.kind == GA_SCALAR) c.ndim = 0;
  if (x.kind == GA_SCALAR) x.ndim = 0;
  if (y.kind == GA_SCALAR) y.ndim = 0;
  memset(&t, 0, sizeof t);
  memset(&r, 0, sizeof r);
  if (bcast(op, &c, &x, &t, err) || bcast(op, &t, &y, &r, err)) return err->code;
  if (!result_dtype(args[1], args[2], -1, &r.dtype)) return SG_OK; /* an unknown rank decides */
  r.kind = GA_TENSOR;
  *out = r;
  return SG_OK;
}

/* zeros / ones / fill with a constant shape and dtype */
GR_INFER(gr_infer_fill) {
  int nd;
  int64_t sh[KN_MAX_DIMS];
  if (!const_shape(args[0], &nd, sh)) return SG_OK;
  kn_dtype dt = KN_FLOAT64;
  int dti = op->code == 2 ? 2 : 1;
  if (op->code == 2) {
    if (args[1]->kind == GA_SCALAR) dt = args[1]->dtype;
    else return SG_OK;
  }
  if (n > dti && !const_dtype(args[dti], &dt)) return SG_OK;
  out->kind = GA_TENSOR;
  out->dtype = dt;
  out->ndim = nd;
  memcpy(out->shape, sh, sizeof(int64_t) * (size_t)nd);
  return SG_OK;
}

/* shape (code 0) → tuple of ints; len (1), size (2) → int (constant when known) */
GR_INFER(gr_infer_shape) {
  gr_aval *x = args[0];
  if (x->kind == GA_TUPLE && op->code == 1) {
    out->kind = GA_SCALAR;
    out->dtype = KN_INT64;
    out->has_const = true;
    out->cval = gv_int(x->n);
    return SG_OK;
  }
  if (x->kind != GA_TENSOR || x->ndim < 0) {
    if (op->code != 0 && x->kind == GA_TENSOR) {
      out->kind = GA_SCALAR;
      out->dtype = KN_INT64;
    }
    return SG_OK;
  }
  if (op->code == 0) {
    out->kind = GA_TUPLE;
    out->n = x->ndim;
    out->elems = sg_arena_alloc(a, sizeof(gr_aval *) * (size_t)(x->ndim + 1));
    for (int i = 0; i < x->ndim; i++) {
      gr_aval *e = new_aval(a, GA_SCALAR);
      e->dtype = KN_INT64;
      if (x->shape[i] >= 0) {
        e->has_const = true;
        e->cval = gv_int(x->shape[i]);
      }
      out->elems[i] = e;
    }
    return SG_OK;
  }
  if (op->code == 1 && x->ndim == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "len: len() of a 0-d tensor");
  out->kind = GA_SCALAR;
  out->dtype = KN_INT64;
  int64_t v = 1;
  bool known = true;
  if (op->code == 1) v = x->shape[0], known = v >= 0;
  else
    for (int i = 0; i < x->ndim; i++) {
      if (x->shape[i] < 0) known = false;
      else v *= x->shape[i];
    }
  if (known) {
    out->has_const = true;
    out->cval = gv_int(v);
  }
  return SG_OK;
}
