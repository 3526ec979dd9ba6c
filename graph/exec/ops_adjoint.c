// SPDX-License-Identifier: Apache-2.0
/*
 * ops_adjoint.c — CPU kernels and shape rules of the primitives reverse-mode AD emits
 * (graph/ad; the rows of ir/ops.c of family ADJOINT):
 *   (zeros_like X)          the zero sensitivity of X: 0 / zeros of X's shape and dtype,
 *                           tuples and records of those, `none` for values without a
 *                           gradient (functions, strings, bools)
 *   (add_grad A B)          sum of two sensitivities: none is zero, tuples and records
 *                           elementwise, numbers and tensors with `+`
 *   (sum_like G X)          G summed down to X's shape (undoes NumPy broadcasting), in
 *                           X's float dtype; a Python scalar X gives a Python float
 *   (expand_like G X [AX])  G broadcast to X's shape (after re-inserting the reduced
 *                           axis AX): the adjoint of a reduction
 *   (item_grad X K G)       zeros_like X with item K (tuple index, record field, row of
 *                           a tensor) set to G: the adjoint of getitem/getattr;
 *                           none for a none X (the adjoint of (sens_item none K))
 *   (slice_grad X G START STOP [STEP [AXIS]])  zeros shaped like X, the slice set to G
 *   (gather_grad X G IDX AXIS)                 zeros shaped like X, G added at IDX
 *   (sens_item S K)         item K of a tuple/record sensitivity S; none when S is none
 *   (or_zeros S X)          S, or zeros_like X when S is none
 *   (matmul_grad G A B K [T])  the adjoint of (matmul A B) for A (K 0) or B (K 1) with
 *                           NumPy semantics: 1-D operands promoted to a row / column,
 *                           batch dimensions broadcast and summed back; T (default 0)
 *                           is the code of a matmul_tn / _nt / _tt forward (operands
 *                           read transposed)
 *   (join_grad G T AXIS STACK)  the adjoint of (concat T AXIS) (STACK 0) / (stack T AXIS)
 *                           (STACK 1) for a T known only at run time: a tuple of G's
 *                           slices, one per item (a tensor T: its slice)
 *   (captured X)            X itself: a value a differentiated closure captures from its
 *                           enclosing def (a constant of that gradient); an error for a
 *                           function value (also inside a tuple or record), whose
 *                           forward/backward version the gradient would need
 */
#include <string.h>

#include "ops_cpu.h"

static sg_code adj_err(sg_error *err, const gr_op *op, const char *msg) {
  return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: %s", op->name, msg);
}

static bool float_dt(kn_dtype d) { return kn_dtype_is_float(d); }

static bool composite(const gr_val *v) { return v->tag == GV_TUPLE || v->tag == GV_RECORD; }

/* A tuple or record shaped like `like` whose item i is (OP a_i [b_i]), each through
 * gr_prim: on a Vulkan device, tuples of device sensitivities stay there. */
static sg_code each_item(gr_ctx *ctx, const gr_op *op, const gr_val *like, const gr_val *a, const gr_val *b,
                         gr_val *out, sg_error *err) {
  const gr_obj *o = like->u.o;
  gr_val r = {.tag = like->tag};
  r.u.o = gv_obj_new(o->n);
  r.u.o->depth = o->depth;
  if (o->names) {
    r.u.o->names = sg_xcalloc((size_t)o->n + 1, sizeof(char *));
    memcpy(r.u.o->names, o->names, sizeof(char *) * (size_t)o->n);
  }
  sg_code rc = SG_OK;
  for (int i = 0; i < o->n && !rc; i++) {
    gr_val av[2] = {a->u.o->items[i], b ? b->u.o->items[i] : gv_none()};
    rc = gr_prim(ctx, op, av, b ? 2 : 1, &r.u.o->items[i], err);
  }
  if (rc) {
    gv_release(r);
    return rc;
  }
  *out = r;
  return SG_OK;
}

/* The zero sensitivity of v: tuples and records item by item (gr_prim). */
static sg_code zeros_like(gr_ctx *ctx, const gr_val *v, gr_val *out, sg_error *err) {
  switch (v->tag) {
  case GV_FLOAT: *out = gv_float(0.0); return SG_OK;
  case GV_INT: *out = gv_int(0); return SG_OK;
  case GV_TENSOR: {
    if (v->u.t->dtype == KN_BOOL) {
      *out = gv_none();
      return SG_OK;
    }
    kn_tensor *z = kn_fill(v->u.t->dtype, v->u.t->ndim, v->u.t->shape, 0.0);
    if (!z) return kn_alloc_error(err);
    *out = gv_tensor(z);
    return SG_OK;
  }
  case GV_TUPLE:
  case GV_RECORD: return each_item(ctx, gr_op_lookup("zeros_like"), v, v, NULL, out, err);
  default: *out = gv_none(); return SG_OK;
  }
}

static sg_code add_grad(gr_ctx *ctx, const gr_op *op, const gr_val *a, const gr_val *b, gr_val *out,
                        sg_error *err) {
  if (a->tag == GV_NONE) {
    *out = gv_retain(*b);
    return SG_OK;
  }
  if (b->tag == GV_NONE) {
    *out = gv_retain(*a);
    return SG_OK;
  }
  if (composite(a) && a->tag == b->tag) {
    if (a->u.o->n != b->u.o->n) return adj_err(err, op, "sensitivities of different lengths");
    return each_item(ctx, op, a, a, b, out, err);
  }
  gr_val args[2] = {*a, *b};
  return gr_cpu_binary(ctx, gr_op_add, args, 2, out, err);
}

/* A float result of a 0-d tensor, for Python-scalar targets. */
static gr_val to_scalar(kn_tensor *t) {
  gr_val r = gv_float(kn_get_f64(t, 0));
  kn_tensor_release(t);
  return r;
}

static sg_code sum_like(const gr_op *op, const gr_val *g, const gr_val *x, gr_val *out, sg_error *err) {
  if (x->tag != GV_TENSOR && !gv_is_scalar(x)) {
    *out = gv_retain(*g);
    return SG_OK;
  }
  if (gv_is_scalar(g) || (g->tag == GV_TENSOR && x->tag == GV_TENSOR && g->u.t->ndim < x->u.t->ndim)) {
    /* nothing to sum: a smaller g broadcasts up (as an elementwise op would) */
    if (x->tag != GV_TENSOR) {
      *out = g->tag == GV_TENSOR ? to_scalar(kn_tensor_retain(g->u.t)) : gv_retain(*g);
      return SG_OK;
    }
    kn_tensor *gt = gv_to_tensor(g, float_dt(x->u.t->dtype) ? x->u.t->dtype : KN_FLOAT64), *r;
    kn_tensor *z = kn_fill(gt->dtype, x->u.t->ndim, x->u.t->shape, 0.0);
    sg_code rc = z ? kn_binary(KN_ADD, z, gt, &r, err) : kn_alloc_error(err);
    kn_tensor_release(z);
    kn_tensor_release(gt);
    if (!rc) *out = gv_tensor(r);
    return rc;
  }
  if (g->tag != GV_TENSOR) return adj_err(err, op, "expected a number or tensor sensitivity");
  kn_tensor *cur = kn_tensor_retain(g->u.t);
  int xn = x->tag == GV_TENSOR ? x->u.t->ndim : 0;
  const int64_t *xs = x->tag == GV_TENSOR ? x->u.t->shape : NULL;
  int lead = cur->ndim - xn;
  sg_code rc = SG_OK;
  for (int i = 0; i < xn && !rc; i++)
    if (cur->shape[lead + i] != xs[i] && xs[i] != 1)
      rc = adj_err(err, op, "the sensitivity's shape does not broadcast to the input's");
  for (int i = xn - 1; i >= 0 && !rc; i--) {
    if (xs[i] != 1 || cur->shape[lead + i] == 1) continue;
    kn_tensor *r;
    if (!(rc = kn_reduce(KN_SUM, cur, true, lead + i, &r, err))) {
      kn_tensor_release(cur);
      cur = r;
    }
  }
  for (int i = 0; i < lead && !rc; i++) {
    kn_tensor *r;
    if (!(rc = kn_reduce(KN_SUM, cur, true, 0, &r, err))) {
      kn_tensor_release(cur);
      cur = r;
    }
  }
  if (!rc && x->tag != GV_TENSOR) {
    *out = to_scalar(cur);
    return SG_OK;
  }
  if (!rc && (cur->ndim != xn || memcmp(cur->shape, xs, sizeof(int64_t) * (size_t)xn))) {
    kn_tensor *r;
    if (!(rc = kn_reshape(cur, xn, xs, &r, err))) {
      kn_tensor_release(cur);
      cur = r;
    }
  }
  if (!rc && float_dt(x->u.t->dtype) && float_dt(cur->dtype) && cur->dtype != x->u.t->dtype) {
    kn_tensor *r = kn_cast(cur, x->u.t->dtype);
    if (!r) rc = kn_alloc_error(err);
    else {
      kn_tensor_release(cur);
      cur = r;
    }
  }
  if (rc) {
    kn_tensor_release(cur);
    return rc;
  }
  *out = gv_tensor(cur);
  return SG_OK;
}

static sg_code expand_like(const gr_op *op, const gr_val *g, const gr_val *x, const gr_val *axis,
                           gr_val *out, sg_error *err) {
  if (x->tag != GV_TENSOR) {
    *out = g->tag == GV_TENSOR && g->u.t->size == 1 ? to_scalar(kn_tensor_retain(g->u.t)) : gv_retain(*g);
    return SG_OK;
  }
  const kn_tensor *xt = x->u.t;
  kn_dtype dt = g->tag == GV_TENSOR ? g->u.t->dtype : float_dt(xt->dtype) ? xt->dtype : KN_FLOAT64;
  if (!gv_is_scalar(g) && g->tag != GV_TENSOR) return adj_err(err, op, "expected a number or tensor sensitivity");
  kn_tensor *gt = gv_to_tensor(g, dt), *r;
  if (axis && axis->tag != GV_NONE && gt->ndim == xt->ndim - 1) {
    int64_t ax;
    if (gr_int_arg(op, axis, &ax, err)) {
      kn_tensor_release(gt);
      return err->code;
    }
    if (ax < 0) ax += xt->ndim;
    if (ax < 0 || ax >= xt->ndim) {
      kn_tensor_release(gt);
      return adj_err(err, op, "axis out of range");
    }
    int64_t sh[KN_MAX_DIMS];
    for (int i = 0, k = 0; i < xt->ndim; i++) sh[i] = i == ax ? 1 : gt->shape[k++];
    sg_code rc = kn_reshape(gt, xt->ndim, sh, &r, err);
    kn_tensor_release(gt);
    if (rc) return rc;
    gt = r;
  }
  kn_tensor *z = kn_fill(dt, xt->ndim, xt->shape, 0.0);
  sg_code rc = z ? kn_binary(KN_ADD, z, gt, &r, err) : kn_alloc_error(err);
  kn_tensor_release(z);
  kn_tensor_release(gt);
  if (!rc) *out = gv_tensor(r);
  return rc;
}

/* zeros shaped like x (dtype of g when g is a float tensor) */
static kn_tensor *zeros_for(const kn_tensor *x, const gr_val *g) {
  kn_dtype dt = g->tag == GV_TENSOR && float_dt(g->u.t->dtype) ? g->u.t->dtype
                : float_dt(x->dtype)                            ? x->dtype
                                                                : KN_FLOAT64;
  return kn_fill(dt, x->ndim, x->shape, 0.0);
}

static double g_at(const gr_val *g, int64_t i) {
  if (g->tag == GV_TENSOR) return kn_get_f64(g->u.t, g->u.t->size == 1 ? 0 : i);
  return g->tag == GV_FLOAT ? g->u.f : g->tag == GV_INT ? (double)g->u.i : g->u.b;
}

static sg_code item_grad(gr_ctx *ctx, const gr_op *op, gr_val *args, gr_val *out, sg_error *err) {
  const gr_val *x = &args[0], *k = &args[1], *g = &args[2];
  if (x->tag == GV_NONE) { /* the adjoint of (sens_item none K): nothing flowed */
    *out = gv_none();
    return SG_OK;
  }
  if (composite(x)) {
    int idx = -1;
    if (x->tag == GV_TUPLE && k->tag == GV_INT && k->u.i >= -x->u.o->n && k->u.i < x->u.o->n)
      idx = (int)(k->u.i < 0 ? k->u.i + x->u.o->n : k->u.i);
    for (int i = 0; x->tag == GV_RECORD && k->tag == GV_STR && i < x->u.o->n; i++)
      if (!strcmp(x->u.o->names[i], k->u.s)) idx = i;
    if (idx < 0) return adj_err(err, op, "no such item");
    if (zeros_like(ctx, x, out, err)) return err->code;
    gv_release(out->u.o->items[idx]);
    out->u.o->items[idx] = gv_retain(*g);
    return SG_OK;
  }
  if (x->tag != GV_TENSOR || x->u.t->ndim == 0) return adj_err(err, op, "expected a tuple, record or tensor");
  int64_t i;
  if (gr_int_arg(op, k, &i, err)) return err->code;
  const kn_tensor *xt = x->u.t;
  if (i < 0) i += xt->shape[0];
  if (i < 0 || i >= xt->shape[0]) return adj_err(err, op, "index out of range");
  kn_tensor *r = zeros_for(xt, g);
  int64_t row = xt->shape[0] ? xt->size / xt->shape[0] : 0;
  for (int64_t j = 0; j < row; j++) kn_set_f64(r, i * row + j, g_at(g, j));
  *out = gv_tensor(r);
  return SG_OK;
}

static void split_at(const kn_tensor *t, int axis, int64_t *outer, int64_t *inner) {
  *outer = *inner = 1;
  for (int i = 0; i < axis; i++) *outer *= t->shape[i];
  for (int i = axis + 1; i < t->ndim; i++) *inner *= t->shape[i];
}

static sg_code slice_grad(const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  if (args[0].tag != GV_TENSOR || args[0].u.t->ndim == 0) return adj_err(err, op, "expected a tensor");
  const kn_tensor *xt = args[0].u.t;
  int64_t v[4] = {0, 0, 1, 0};
  bool has[2] = {true, true};
  for (int i = 2; i < n; i++) {
    if (args[i].tag == GV_NONE && i <= 3) {
      has[i - 2] = false;
      continue;
    }
    if (gr_int_arg(op, &args[i], &v[i - 2], err)) return err->code;
  }
  kn_tensor *z = zeros_for(xt, &args[1]), *r;
  if (!z) return kn_alloc_error(err);
  kn_tensor *g = gv_to_tensor(&args[1], z->dtype);
  sg_code rc = kn_slice_update(z, g, (int)v[3], v[0], v[1], v[2], has[0], has[1], &r, err);
  kn_tensor_release(z);
  kn_tensor_release(g);
  if (!rc) *out = gv_tensor(r);
  return rc;
}

static sg_code gather_grad(const gr_op *op, gr_val *args, gr_val *out, sg_error *err) {
  if (args[0].tag != GV_TENSOR || args[0].u.t->ndim == 0) return adj_err(err, op, "expected a tensor");
  const kn_tensor *xt = args[0].u.t;
  int64_t axis;
  if (gr_int_arg(op, &args[3], &axis, err)) return err->code;
  if (axis < 0) axis += xt->ndim;
  if (axis < 0 || axis >= xt->ndim) return adj_err(err, op, "axis out of range");
  kn_tensor *r = zeros_for(xt, &args[1]);
  if (!r) return kn_alloc_error(err);
  kn_tensor *idx = gv_to_tensor(&args[2], KN_INT64);
  int64_t outer, inner, len = xt->shape[axis];
  split_at(xt, (int)axis, &outer, &inner);
  sg_code rc = SG_OK;
  for (int64_t o = 0; o < outer && !rc; o++)
    for (int64_t j = 0; j < idx->size && !rc; j++) {
      int64_t q = kn_get_i64(idx, j);
      if (q < 0) q += len;
      if (q < 0 || q >= len) {
        rc = adj_err(err, op, "index out of range");
        break;
      }
      for (int64_t in = 0; in < inner; in++) {
        int64_t d = (o * len + q) * inner + in;
        kn_set_f64(r, d, kn_get_f64(r, d) + g_at(&args[1], (o * idx->size + j) * inner + in));
      }
    }
  kn_tensor_release(idx);
  if (rc) {
    kn_tensor_release(r);
    return rc;
  }
  *out = gv_tensor(r);
  return SG_OK;
}

static sg_code sens_item(const gr_op *op, gr_val *args, gr_val *out, sg_error *err) {
  const gr_val *s = &args[0], *k = &args[1];
  if (s->tag == GV_NONE) {
    *out = gv_none();
    return SG_OK;
  }
  if (s->tag == GV_TUPLE && k->tag == GV_INT && k->u.i >= 0 && k->u.i < s->u.o->n) {
    *out = gv_retain(s->u.o->items[k->u.i]);
    return SG_OK;
  }
  for (int i = 0; s->tag == GV_RECORD && k->tag == GV_STR && i < s->u.o->n; i++)
    if (!strcmp(s->u.o->names[i], k->u.s)) {
      *out = gv_retain(s->u.o->items[i]);
      return SG_OK;
    }
  return adj_err(err, op, "no such item in the sensitivity");
}

/* (OP ARGS...) through gr_prim (on a Vulkan device the value stays there). */
static sg_code prim(gr_ctx *ctx, const char *name, gr_val *args, int n, gr_val *out, sg_error *err) {
  return gr_prim(ctx, gr_op_lookup(name), args, n, out, err);
}

/* A tuple of ints. */
static gr_val int_tuple(const int64_t *v, int n) {
  gr_val t = {.tag = GV_TUPLE};
  t.u.o = gv_obj_new(n);
  for (int i = 0; i < n; i++) t.u.o->items[i] = gv_int(v[i]);
  return t;
}

/* x's shape (through the `shape` primitive, so device values work too); -1 when x is
 * not a tensor. */
static int shape_of(gr_ctx *ctx, gr_val *x, int64_t *dims, sg_error *err) {
  gr_val s = gv_none();
  if (x->tag == GV_TENSOR) { /* on the host: no tuple to build */
    memcpy(dims, x->u.t->shape, sizeof(int64_t) * (size_t)x->u.t->ndim);
    return x->u.t->ndim;
  }
  if (x->tag != GV_DEVICE) return -1;
  if (prim(ctx, "shape", x, 1, &s, err)) return -1;
  int n = s.tag == GV_TUPLE && s.u.o->n <= KN_MAX_DIMS ? s.u.o->n : -1;
  for (int i = 0; i < n; i++) dims[i] = s.u.o->items[i].tag == GV_INT ? s.u.o->items[i].u.i : 1;
  gv_release(s);
  return n;
}

/* x reshaped to its shape with a 1 inserted before its last `from_end` axes. */
static sg_code insert_axis(gr_ctx *ctx, gr_val *x, int from_end, gr_val *out, sg_error *err) {
  int64_t d[KN_MAX_DIMS + 1], e[KN_MAX_DIMS + 1];
  int n = shape_of(ctx, x, d, err);
  if (n < 0) n = 0; /* a number: a 0-d value */
  if (err->code) return err->code;
  if (n >= KN_MAX_DIMS || from_end > n) return sg_error_set(err, SG_INVALID_ARGUMENT, "matmul_grad: bad sensitivity");
  for (int i = 0, k = 0; i <= n; i++) e[i] = i == n - from_end ? 1 : d[k++];
  gr_val args[2] = {*x, int_tuple(e, n + 1)};
  sg_code rc = prim(ctx, "reshape", args, 2, out, err);
  gv_release(args[1]);
  return rc;
}

/* x with its last two axes swapped (rank >= 2). */
static sg_code swap_last(gr_ctx *ctx, gr_val *x, int nd, gr_val *out, sg_error *err) {
  int64_t p[KN_MAX_DIMS];
  for (int i = 0; i < nd; i++) p[i] = i < nd - 2 ? i : i == nd - 2 ? nd - 1 : nd - 2;
  gr_val args[2] = {*x, int_tuple(p, nd)};
  sg_code rc = prim(ctx, "transpose", args, 2, out, err);
  gv_release(args[1]);
  return rc;
}

/* op(X) @ op(Y), op as trans says (KN_MATMUL_TRANS_A / _B), X of rank nx and Y of rank ny:
 * one matmul reading the operands transposed (gr_op_matmul), or, with the fold switched
 * off (gr_matmul_fold_enabled), the transposes materialized before a plain matmul. */
static sg_code product(gr_ctx *ctx, int trans, gr_val *x, int nx, gr_val *y, int ny, gr_val *out,
                       sg_error *err) {
  gr_val m[2] = {*x, *y}, t[2] = {gv_none(), gv_none()};
  if (!trans || gr_matmul_fold_enabled()) return gr_prim(ctx, gr_op_matmul(trans), m, 2, out, err);
  sg_code rc = SG_OK;
  if (trans & KN_MATMUL_TRANS_A) rc = swap_last(ctx, x, nx, &t[0], err), m[0] = t[0];
  if (!rc && (trans & KN_MATMUL_TRANS_B)) rc = swap_last(ctx, y, ny, &t[1], err), m[1] = t[1];
  if (!rc) rc = gr_prim(ctx, gr_op_matmul(0), m, 2, out, err);
  gv_release(t[0]), gv_release(t[1]);
  return rc;
}

/* matmul_grad G A B K [T]: the adjoint of op(A) @ op(B) (T the forward row's code, op a
 * transpose of the last two axes where T says so; default 0, plain matmul). With A1, B1
 * the operands promoted to at least 2-D and G1 the sensitivity reshaped to the product's
 * shape, dA = sum_like(op(G1 @ op(B1)^T), A) and dB = sum_like(op(op(A1)^T @ G1), B) (for
 * a 1-D B, (G1^T @ A1) is summed instead: a row, which sums to B's shape). Each product
 * is one matmul with operands read transposed: A^T @ G is (matmul_tn A G), no copy. */
static sg_code matmul_grad(gr_ctx *ctx, const gr_op *op, gr_val *args, int nargs, gr_val *out,
                           sg_error *err) {
  int64_t da[KN_MAX_DIMS], db[KN_MAX_DIMS], k, code = 0;
  int na = shape_of(ctx, &args[1], da, err), nb = shape_of(ctx, &args[2], db, err);
  if (err->code) return err->code;
  if (na < 1 || nb < 1) return adj_err(err, op, "expected tensors of rank 1 or more");
  if (gr_int_arg(op, &args[3], &k, err)) return err->code;
  if (nargs > 4 && gr_int_arg(op, &args[4], &code, err)) return err->code;
  if (code < 0 || code > (KN_MATMUL_TRANS_A | KN_MATMUL_TRANS_B))
    return adj_err(err, op, "the transpose flags T must be 0 to 3");
  bool ta = code & KN_MATMUL_TRANS_A, tb = code & KN_MATMUL_TRANS_B;
  if ((ta && na < 2) || (tb && nb < 2)) return adj_err(err, op, "a transposed operand must be at least 2-d");
  gr_val a1 = gv_retain(args[1]), b1 = gv_retain(args[2]), g1 = gv_retain(args[0]), t = gv_none(),
         u = gv_none(), p = gv_none();
  sg_code rc = SG_OK;
  int64_t row[2] = {1, -1}, col[2] = {-1, 1};
  if (na == 1) { /* A as a row: G gains the row axis */
    gr_val r[2] = {args[1], int_tuple(row, 2)};
    gv_release(a1);
    a1 = gv_none();
    rc = prim(ctx, "reshape", r, 2, &a1, err);
    gv_release(r[1]);
    if (!rc) rc = insert_axis(ctx, &g1, nb == 1 ? 0 : 1, &t, err);
    if (!rc) gv_release(g1), g1 = t, t = gv_none();
  }
  if (!rc && nb == 1) { /* B as a column: G gains the column axis */
    gr_val r[2] = {args[2], int_tuple(col, 2)};
    gv_release(b1);
    b1 = gv_none();
    rc = prim(ctx, "reshape", r, 2, &b1, err);
    gv_release(r[1]);
    if (!rc) rc = insert_axis(ctx, &g1, 0, &t, err);
    if (!rc) gv_release(g1), g1 = t, t = gv_none();
  }
  int ra = na == 1 ? 2 : na, rb = nb == 1 ? 2 : nb;
  int64_t gdims[KN_MAX_DIMS];
  int rg = rc ? 0 : shape_of(ctx, &g1, gdims, err);
  if (!rc && err->code) rc = err->code;
  const int TA = KN_MATMUL_TRANS_A, TB = KN_MATMUL_TRANS_B;
  if (!rc && k == 0 && !ta) /* G1 @ op(B1)^T */
    rc = product(ctx, tb ? 0 : TB, &g1, rg, &b1, rb, &p, err);
  else if (!rc && k == 0) /* (G1 @ op(B1)^T)^T = op(B1) @ G1^T */
    rc = product(ctx, (tb ? TA : 0) | TB, &b1, rb, &g1, rg, &p, err);
  else if (!rc && (nb == 1 || tb)) /* (op(A1)^T @ G1)^T = G1^T @ op(A1); a 1-D B's row */
    rc = product(ctx, TA | (ta ? TB : 0), &g1, rg, &a1, ra, &p, err);
  else if (!rc) /* op(A1)^T @ G1 */
    rc = product(ctx, ta ? 0 : TA, &a1, ra, &g1, rg, &p, err);
  if (!rc) {
    gr_val s[2] = {p, args[k == 0 ? 1 : 2]};
    rc = prim(ctx, "sum_like", s, 2, &u, err);
  }
  gv_release(a1), gv_release(b1), gv_release(g1), gv_release(t), gv_release(p);
  if (rc) {
    gv_release(u);
    return rc;
  }
  *out = u;
  return SG_OK;
}

/* join_grad: item i gets G[off_i : off_i + len_i] along AXIS (len 1 for stack, then
 * reshaped to the item's shape; a Python-float item gets a Python float). */
static sg_code join_grad(gr_ctx *ctx, const gr_op *op, gr_val *args, gr_val *out, sg_error *err) {
  gr_val *t = &args[1];
  int64_t axis, stack;
  if (gr_int_arg(op, &args[2], &axis, err) || gr_int_arg(op, &args[3], &stack, err)) return err->code;
  bool tup = t->tag == GV_TUPLE;
  int n = tup ? t->u.o->n : 1;
  gr_val r = {.tag = GV_TUPLE};
  r.u.o = gv_obj_new(n);
  int64_t off = 0;
  sg_code rc = SG_OK;
  for (int i = 0; i < n && !rc; i++) {
    gr_val *item = tup ? &t->u.o->items[i] : t, piece = gv_none();
    int64_t d[KN_MAX_DIMS];
    int nd = gv_is_scalar(item) ? 0 : shape_of(ctx, item, d, err);
    if (nd < 0) {
      rc = err->code ? err->code : adj_err(err, op, "expected tensors or numbers");
      break;
    }
    int64_t ax = axis < 0 ? axis + nd + (stack ? 1 : 0) : axis, len = 1;
    if (ax < 0 || ax > nd || (!stack && ax == nd)) {
      rc = adj_err(err, op, "axis out of range");
      break;
    }
    if (!stack) len = d[ax];
    gr_val sa[5] = {args[0], gv_int(off), gv_int(off + len), gv_int(1), gv_int(ax)};
    rc = prim(ctx, "slice", sa, 5, &piece, err);
    if (!rc && stack && nd > 0) {
      gr_val ra[2] = {piece, int_tuple(d, nd)};
      rc = prim(ctx, "reshape", ra, 2, &r.u.o->items[i], err);
      gv_release(ra[1]);
    } else if (!rc && stack) { /* a number: the one element, as sum_like gives it */
      gr_val sa2[2] = {piece, *item};
      rc = prim(ctx, "sum_like", sa2, 2, &r.u.o->items[i], err);
    } else if (!rc) {
      r.u.o->items[i] = gv_retain(piece);
    }
    gv_release(piece);
    off += len;
  }
  if (rc) {
    gv_release(r);
    return rc;
  }
  if (tup) {
    *out = r;
  } else {
    *out = gv_retain(r.u.o->items[0]);
    gv_release(r);
  }
  return SG_OK;
}

/* captured: a function value (also inside a tuple or record) cannot be a constant of
 * a gradient, since calling it there would need its forward/backward version */
static bool holds_function(const gr_val *v) {
  if (v->tag == GV_GRAPH || v->tag == GV_CLOSURE || v->tag == GV_PRIM) return true;
  if (!composite(v)) return false;
  for (int i = 0; i < v->u.o->n; i++)
    if (holds_function(&v->u.o->items[i])) return true;
  return false;
}

sg_code gr_cpu_adjoint(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  switch (op->code) {
  case GR_ADJ_ZEROS_LIKE: return zeros_like(ctx, &args[0], out, err);
  case GR_ADJ_ADD: return add_grad(ctx, op, &args[0], &args[1], out, err);
  case GR_ADJ_SUM_LIKE: return sum_like(op, &args[0], &args[1], out, err);
  case GR_ADJ_EXPAND_LIKE: return expand_like(op, &args[0], &args[1], n > 2 ? &args[2] : NULL, out, err);
  case GR_ADJ_ITEM: return item_grad(ctx, op, args, out, err);
  case GR_ADJ_SLICE: return slice_grad(op, args, n, out, err);
  case GR_ADJ_GATHER: return gather_grad(op, args, out, err);
  case GR_ADJ_SENS_ITEM: return sens_item(op, args, out, err);
  case GR_ADJ_MATMUL: return matmul_grad(ctx, op, args, n, out, err);
  case GR_ADJ_JOIN: return join_grad(ctx, op, args, out, err);
  case GR_ADJ_CAPTURED:
    if (holds_function(&args[0]))
      return adj_err(err, op, "differentiating a closure that uses a function value captured from "
                              "its enclosing def is not implemented (pass it as a parameter of a "
                              "top-level def, or bind it with a literal lambda)");
    *out = gv_retain(args[0]);
    return SG_OK;
  case GR_ADJ_OR_ZEROS:
    if (args[0].tag == GV_NONE) return zeros_like(ctx, &args[1], out, err);
    *out = gv_retain(args[0]);
    return SG_OK;
  default: return adj_err(err, op, "unknown AD helper");
  }
}
