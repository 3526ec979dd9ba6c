/*
 * ops_adjoint.c — CPU kernels and shape rules of the primitives reverse-mode AD emits
 * (graph/ad.c, ad_rules.c; rows of ops.c with the kernel gr_cpu_adjoint):
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
 *                           a tensor) set to G: the adjoint of getitem/getattr
 *   (slice_grad X G START STOP [STEP [AXIS]])  zeros shaped like X, the slice set to G
 *   (gather_grad X G IDX AXIS)                 zeros shaped like X, G added at IDX
 *   (sens_item S K)         item K of a tuple/record sensitivity S; none when S is none
 *   (or_zeros S X)          S, or zeros_like X when S is none
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
  case GV_TENSOR:
    *out = v->u.t->dtype == KN_BOOL ? gv_none()
                                    : gv_tensor(kn_fill(v->u.t->dtype, v->u.t->ndim, v->u.t->shape, 0.0));
    return SG_OK;
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
    sg_code rc = kn_binary(KN_ADD, z, gt, &r, err);
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
    kn_tensor_release(cur);
    cur = r;
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
  sg_code rc = kn_binary(KN_ADD, z, gt, &r, err);
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
  kn_tensor *z = zeros_for(xt, &args[1]), *g = gv_to_tensor(&args[1], z->dtype), *r;
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
  kn_tensor *idx = gv_to_tensor(&args[2], KN_INT64);
  int64_t outer, inner, len = xt->shape[axis];
  split_at(xt, (int)axis, &outer, &inner);
  kn_tensor *r = zeros_for(xt, &args[1]);
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
  case GR_ADJ_OR_ZEROS:
    if (args[0].tag == GV_NONE) return zeros_like(ctx, &args[1], out, err);
    *out = gv_retain(args[0]);
    return SG_OK;
  default: return adj_err(err, op, "unknown AD helper");
  }
}

/* Shapes: zeros_like / item_grad keep X's type; sum_like / expand_like / slice_grad /
 * gather_grad have X's shape; add_grad is known only when both sides agree. */
GR_INFER(gr_infer_adjoint) {
  gr_aval *x = args[0];
  switch (op->code) {
  case GR_ADJ_OR_ZEROS:
    x = args[1];
    /* fall through */
  case GR_ADJ_ZEROS_LIKE:
    if (x->kind == GA_TENSOR && x->dtype != KN_BOOL) *out = *x;
    if (x->kind == GA_SCALAR && x->dtype != KN_BOOL) {
      out->kind = GA_SCALAR;
      out->dtype = x->dtype;
    }
    break;
  case GR_ADJ_ADD:
    if (x->kind == GA_SCALAR && args[1]->kind == GA_SCALAR && x->dtype == KN_FLOAT64 &&
        args[1]->dtype == KN_FLOAT64) {
      out->kind = GA_SCALAR;
      out->dtype = KN_FLOAT64;
    }
    break;
  case GR_ADJ_SUM_LIKE:
  case GR_ADJ_EXPAND_LIKE:
  case GR_ADJ_SLICE:
  case GR_ADJ_GATHER: {
    bool like = op->code == GR_ADJ_SUM_LIKE || op->code == GR_ADJ_EXPAND_LIKE;
    gr_aval *t = like ? args[1] : x, *g = like ? x : args[1];
    bool gf = (g->kind == GA_TENSOR || g->kind == GA_SCALAR) && float_dt(g->dtype);
    if (t->kind == GA_TENSOR && gf) {
      *out = *t;
      out->has_const = false;
      /* sum_like keeps a float X's dtype; a scalar g takes a float X's dtype */
      if (g->kind == GA_TENSOR && !(op->code == GR_ADJ_SUM_LIKE && float_dt(t->dtype)))
        out->dtype = g->dtype;
      else if (g->kind == GA_SCALAR && !float_dt(t->dtype))
        out->dtype = KN_FLOAT64;
    } else if (t->kind == GA_SCALAR && t->dtype == KN_FLOAT64 && gf && like) {
      out->kind = GA_SCALAR;
      out->dtype = KN_FLOAT64;
    }
    break;
  }
  default: break;
  }
  (void)n, (void)a, (void)err;
  return SG_OK;
}
