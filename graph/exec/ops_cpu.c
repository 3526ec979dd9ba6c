// SPDX-License-Identifier: Apache-2.0
/*
 * ops_cpu.c — the CPU kernels of the op families (the op table is ir/ops.c; kernels.c
 * is its CPU column):
 * argument checking and Python-scalar / NumPy-tensor semantics on top of kernels/.
 *
 * Scalars (bool, int, float) follow Python; as soon as a tensor is involved NumPy
 * 1.24's rules apply, with Python scalars "weak" (value-based casting): int32 tensor
 * + 1 stays int32, float32 tensor * 2.5 stays float32, int tensor + 2.5 → float64.
 * A 0-d tensor (float(), int(), t[i] staged) is weak next to a tensor of at least one
 * dimension unless its kind is higher: float32 tensor * float64 0-d stays float32.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops_cpu.h"

static sg_code bad(sg_error *err, const gr_op *op, const char *fmt, const char *what) {
  sg_buf b = SG_BUF_INIT;
  sg_buf_printf(&b, "%s: ", op->name);
  sg_buf_printf(&b, fmt, what);
  sg_error_set(err, SG_INVALID_ARGUMENT, "%s", b.data);
  sg_buf_free(&b);
  return SG_INVALID_ARGUMENT;
}

static bool is_num(const gr_val *v) { return gv_is_scalar(v) || v->tag == GV_TENSOR; }

/* A binary operand as a tensor of dtype dt: a Python scalar as a 0-d tensor, a tensor
 * cast when its dtype differs (a weak 0-d tensor next to an array). Only 0-d tensors
 * are made, below KN_POOL_MIN bytes, so this never fails (kn.h). */
static kn_tensor *operand_as(const gr_val *v, kn_dtype dt) {
  if (v->tag == GV_TENSOR && v->u.t->dtype != dt) return kn_cast(v->u.t, dt);
  return gv_to_tensor(v, dt);
}

/* The dtypes of a binary op's operands (both numbers or tensors, not both Python
 * scalars) by NumPy 1.24's value-based casting without the value: a Python scalar next
 * to a tensor is weak (gr_weak_dtype); a 0-d tensor next to a tensor of at least one
 * dimension is weak too, with NumPy's kind rule (gr_weak_kind_dtype); otherwise each
 * keeps its own dtype and kn_promote / kn_binop_result combine them. */
static void operand_dtypes(const gr_val *a, const gr_val *b, kn_dtype *da, kn_dtype *db) {
  bool ta = a->tag == GV_TENSOR, tb = b->tag == GV_TENSOR;
  *da = ta ? a->u.t->dtype : gr_strong_dtype(a);
  *db = tb ? b->u.t->dtype : gr_strong_dtype(b);
  if (ta && !tb) *db = gr_weak_dtype(b, *da);
  else if (tb && !ta) *da = gr_weak_dtype(a, *db);
  else if (ta && a->u.t->ndim == 0 && b->u.t->ndim > 0) *da = gr_weak_kind_dtype(*da, *db);
  else if (tb && b->u.t->ndim == 0 && a->u.t->ndim > 0) *db = gr_weak_kind_dtype(*db, *da);
}

/* Tensors for a binary op, each of its dtype by operand_dtypes. */
static void to_tensors(const gr_val *a, const gr_val *b, kn_tensor **ta, kn_tensor **tb) {
  kn_dtype da, db;
  operand_dtypes(a, b, &da, &db);
  *ta = operand_as(a, da);
  *tb = operand_as(b, db);
}

sg_code gr_int_arg(const gr_op *op, const gr_val *v, int64_t *out, sg_error *err) {
  if (v->tag == GV_INT) *out = v->u.i;
  else if (v->tag == GV_BOOL) *out = v->u.b;
  else if (v->tag == GV_TENSOR && v->u.t->ndim == 0 && !kn_dtype_is_float(v->u.t->dtype))
    *out = kn_get_i64(v->u.t, 0);
  else return bad(err, op, "expected an integer, got a %s", gv_type_name(v));
  return SG_OK;
}

static sg_code num_arg(const gr_op *op, const gr_val *v, double *out, sg_error *err) {
  if (v->tag == GV_INT) *out = (double)v->u.i;
  else if (v->tag == GV_BOOL) *out = v->u.b;
  else if (v->tag == GV_FLOAT) *out = v->u.f;
  else if (v->tag == GV_TENSOR && v->u.t->ndim == 0) *out = kn_get_f64(v->u.t, 0);
  else return bad(err, op, "expected a number, got a %s", gv_type_name(v));
  return SG_OK;
}

sg_code gr_shape_arg(const gr_op *op, const gr_val *v, int *ndim, int64_t *shape, sg_error *err) {
  if (v->tag == GV_INT) {
    *ndim = 1;
    shape[0] = v->u.i;
    return SG_OK;
  }
  if (v->tag == GV_TUPLE) {
    if (v->u.o->n > KN_MAX_DIMS) return bad(err, op, "too many dimensions%s", "");
    *ndim = v->u.o->n;
    for (int i = 0; i < v->u.o->n; i++)
      if (gr_int_arg(op, &v->u.o->items[i], &shape[i], err)) return err->code;
    return SG_OK;
  }
  if (v->tag == GV_TENSOR && v->u.t->ndim == 1 && !kn_dtype_is_float(v->u.t->dtype) &&
      v->u.t->size <= KN_MAX_DIMS) {
    *ndim = (int)v->u.t->size;
    for (int i = 0; i < *ndim; i++) shape[i] = kn_get_i64(v->u.t, i);
    return SG_OK;
  }
  return bad(err, op, "expected a shape (a tuple of integers), got a %s", gv_type_name(v));
}

static sg_code dtype_arg(const gr_op *op, const gr_val *v, kn_dtype *dt, sg_error *err) {
  if (v->tag != GV_STR || !kn_dtype_parse(v->u.s, dt))
    return bad(err, op, "expected a dtype (bool int32 int64 float16 float32 float64)%s", "");
  return SG_OK;
}

static sg_code check_shape(const gr_op *op, int ndim, const int64_t *shape, sg_error *err) {
  if (kn_check_shape(ndim, shape, err)) {
    char *m = sg_xasprintf("%s: %s", op->name, err->message);
    sg_error_set(err, err->code, "%s", m);
    free(m);
    return err->code;
  }
  return SG_OK;
}

/* ------------------------------------------------------------------ arithmetic */
sg_code gr_cpu_binary(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  kn_binop k = (kn_binop)op->code;
  if (n == 1 && k == KN_SUB) return gr_cpu_unary_code(ctx, op, KN_NEG, args, out, err);
  gr_val *a = &args[0], *b = &args[1];
  if (gv_is_scalar(a) && gv_is_scalar(b)) return gr_scalar_binary(op, k, a, b, out, err);
  if (!is_num(a)) return bad(err, op, "expected a number or tensor, got a %s", gv_type_name(a));
  if (!is_num(b)) return bad(err, op, "expected a number or tensor, got a %s", gv_type_name(b));
  kn_tensor *ta, *tb, *r;
  to_tensors(a, b, &ta, &tb);
  sg_code rc = kn_binary(k, ta, tb, &r, err);
  kn_tensor_release(ta);
  kn_tensor_release(tb);
  if (rc) {
    if (err && err->message) sg_error_prefix(err, rc, "%s", op->name);
    return rc;
  }
  *out = gv_tensor(r);
  return SG_OK;
}

sg_code gr_cpu_unary_code(gr_ctx *ctx, const gr_op *op, int code, gr_val *args, gr_val *out,
                          sg_error *err) {
  kn_unop k = (kn_unop)code;
  gr_val *a = &args[0];
  if (gv_is_scalar(a)) {
    if (k == KN_NOT) {
      bool t;
      gv_truthy(a, &t);
      *out = gv_bool(!t);
      return SG_OK;
    }
    if (a->tag != GV_FLOAT && (k == KN_NEG || k == KN_ABS || k == KN_RELU)) {
      int64_t x = a->tag == GV_INT ? a->u.i : a->u.b;
      *out = gv_int(k == KN_NEG ? -x : k == KN_ABS ? (x < 0 ? -x : x) : (x > 0 ? x : 0));
      return SG_OK;
    }
    double x = a->tag == GV_FLOAT ? a->u.f : (double)(a->tag == GV_INT ? a->u.i : a->u.b);
    if (k == KN_LOG && x <= 0 && a->tag != GV_FLOAT)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: math domain error", op->name);
    *out = gv_float(kn_unop_f64(k, x));
    return SG_OK;
  }
  if (a->tag != GV_TENSOR) return bad(err, op, "expected a number or tensor, got a %s", gv_type_name(a));
  if (k == KN_NEG && a->u.t->dtype == KN_BOOL)
    return bad(err, op, "the numpy boolean negative is not supported, use not%s", "");
  kn_tensor *r;
  if (kn_unary(k, a->u.t, &r, err)) return err->code;
  *out = gv_tensor(r);
  return SG_OK;
}

sg_code gr_cpu_unary(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  return gr_cpu_unary_code(ctx, op, op->code, args, out, err);
}

sg_code gr_cpu_where(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  for (int i = 0; i < 3; i++)
    if (!is_num(&args[i])) return bad(err, op, "expected numbers or tensors, got a %s", gv_type_name(&args[i]));
  kn_tensor *c = gv_to_tensor(&args[0], KN_BOOL), *a, *b, *r;
  to_tensors(&args[1], &args[2], &a, &b);
  sg_code rc = kn_where(c, a, b, &r, err);
  kn_tensor_release(c);
  kn_tensor_release(a);
  kn_tensor_release(b);
  if (!rc) *out = gv_tensor(r);
  return rc;
}

sg_code gr_cpu_cast(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  kn_dtype dt;
  if (dtype_arg(op, &args[1], &dt, err)) return err->code;
  if (!is_num(&args[0])) return bad(err, op, "expected a number or tensor, got a %s", gv_type_name(&args[0]));
  kn_tensor *t = gv_to_tensor(&args[0], gr_strong_dtype(&args[0]));
  kn_tensor *r = kn_cast(t, dt);
  kn_tensor_release(t);
  if (!r) return kn_alloc_error(err);
  *out = gv_tensor(r);
  return SG_OK;
}

static sg_code tensor_arg(const gr_op *op, const gr_val *v, kn_tensor **t, sg_error *err) {
  if (v->tag == GV_TENSOR) {
    *t = kn_tensor_retain(v->u.t);
    return SG_OK;
  }
  if (gv_is_scalar(v)) {
    *t = gv_to_tensor(v, gr_strong_dtype(v));
    return SG_OK;
  }
  return bad(err, op, "expected a tensor, got a %s", gv_type_name(v));
}

sg_code gr_cpu_matmul(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  if (args[0].tag != GV_TENSOR || args[1].tag != GV_TENSOR)
    return bad(err, op, "expected two tensors (matmul does not take scalars)%s", "");
  kn_tensor *r;
  if (kn_matmul_t(args[0].u.t, args[1].u.t, op->code, &r, err)) return err->code;
  *out = gv_tensor(r);
  return SG_OK;
}

sg_code gr_cpu_reduce(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  kn_tensor *t, *r;
  int64_t axis = 0;
  bool has_axis = n > 1 && args[1].tag != GV_NONE;
  if (has_axis && gr_int_arg(op, &args[1], &axis, err)) return err->code;
  if (tensor_arg(op, &args[0], &t, err)) return err->code;
  sg_code rc = kn_reduce((kn_reduce_op)op->code, t, has_axis, (int)axis, &r, err);
  kn_tensor_release(t);
  if (rc) return sg_error_prefix(err, SG_INVALID_ARGUMENT, "%s", op->name);
  *out = gv_tensor(r);
  return SG_OK;
}

sg_code gr_cpu_softmax(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  kn_tensor *t, *r;
  int64_t axis = -1;
  if (n > 1 && gr_int_arg(op, &args[1], &axis, err)) return err->code;
  if (tensor_arg(op, &args[0], &t, err)) return err->code;
  sg_code rc = kn_softmax(t, (int)axis, op->code != 0, &r, err);
  kn_tensor_release(t);
  if (rc) return sg_error_prefix(err, SG_INVALID_ARGUMENT, "%s", op->name);
  *out = gv_tensor(r);
  return SG_OK;
}

sg_code gr_cpu_transpose(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  kn_tensor *t, *r;
  int perm[KN_MAX_DIMS], np_ = 0;
  if (n > 1) {
    int64_t sh[KN_MAX_DIMS];
    int nd;
    if (gr_shape_arg(op, &args[1], &nd, sh, err)) return err->code;
    for (int i = 0; i < nd; i++) perm[i] = (int)sh[i];
    np_ = nd;
  }
  if (tensor_arg(op, &args[0], &t, err)) return err->code;
  sg_code rc = kn_transpose(t, n > 1 ? perm : NULL, np_, &r, err);
  kn_tensor_release(t);
  if (!rc) *out = gv_tensor(r);
  return rc;
}

sg_code gr_cpu_reshape(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  kn_tensor *t, *r;
  int nd;
  int64_t sh[KN_MAX_DIMS];
  if (gr_shape_arg(op, &args[1], &nd, sh, err)) return err->code;
  if (tensor_arg(op, &args[0], &t, err)) return err->code;
  sg_code rc = kn_reshape(t, nd, sh, &r, err);
  kn_tensor_release(t);
  if (!rc) *out = gv_tensor(r);
  return rc;
}

/* concat / stack: (OP T1 T2 ... [AXIS]) or (OP (tuple T...) [AXIS]) */
sg_code gr_cpu_join(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  int64_t axis = 0;
  if (n > 1 && (args[n - 1].tag == GV_INT)) {
    axis = args[n - 1].u.i;
    n--;
  }
  gr_val *items = args;
  if (n == 1 && args[0].tag == GV_TUPLE) {
    items = args[0].u.o->items;
    n = args[0].u.o->n;
  }
  kn_tensor **ts = sg_xcalloc((size_t)(n ? n : 1), sizeof(kn_tensor *));
  sg_code rc = SG_OK;
  for (int i = 0; i < n && !rc; i++) rc = tensor_arg(op, &items[i], &ts[i], err);
  kn_tensor *r = NULL;
  if (!rc) rc = op->code ? kn_stack(ts, n, (int)axis, &r, err) : kn_concat(ts, n, (int)axis, &r, err);
  for (int i = 0; i < n; i++) kn_tensor_release(ts[i]);
  free(ts);
  if (!rc) *out = gv_tensor(r);
  return rc;
}

/* (slice X START STOP [STEP [AXIS]]) and, code 1, (slice_update X V START STOP [STEP [AXIS]]) */
sg_code gr_cpu_slice(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  int b = op->code ? 2 : 1; /* where the bounds start */
  int64_t v[4] = {0, 0, 1, 0};
  bool has[2] = {true, true};
  for (int i = b; i < n; i++) {
    if (args[i].tag == GV_NONE && i < b + 2) {
      has[i - b] = false;
      continue;
    }
    if (gr_int_arg(op, &args[i], &v[i - b], err)) return err->code;
  }
  kn_tensor *t, *u = NULL, *r;
  if (tensor_arg(op, &args[0], &t, err)) return err->code;
  if (op->code && tensor_arg(op, &args[1], &u, err)) {
    kn_tensor_release(t);
    return err->code;
  }
  sg_code rc = op->code ? kn_slice_update(t, u, (int)v[3], v[0], v[1], v[2], has[0], has[1], &r, err)
                        : kn_slice(t, (int)v[3], v[0], v[1], v[2], has[0], has[1], &r, err);
  kn_tensor_release(t);
  kn_tensor_release(u);
  if (!rc) *out = gv_tensor(r);
  return rc;
}

sg_code gr_cpu_gather(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  int64_t axis = 0;
  if (n > 2 && gr_int_arg(op, &args[2], &axis, err)) return err->code;
  kn_tensor *t, *idx, *r;
  if (tensor_arg(op, &args[0], &t, err)) return err->code;
  if (tensor_arg(op, &args[1], &idx, err)) {
    kn_tensor_release(t);
    return err->code;
  }
  sg_code rc = kn_gather(t, idx, (int)axis, &r, err);
  kn_tensor_release(t);
  kn_tensor_release(idx);
  if (!rc) *out = gv_tensor(r);
  return rc;
}

sg_code gr_cpu_one_hot(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  int64_t depth;
  if (gr_int_arg(op, &args[1], &depth, err)) return err->code;
  kn_tensor *t, *r;
  if (tensor_arg(op, &args[0], &t, err)) return err->code;
  sg_code rc = kn_one_hot(t, depth, &r, err);
  kn_tensor_release(t);
  if (!rc) *out = gv_tensor(r);
  return rc;
}

/* zeros / ones: (OP SHAPE [DTYPE]) default float64; fill: (fill SHAPE VALUE [DTYPE]) */
sg_code gr_cpu_fill(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  int nd;
  int64_t sh[KN_MAX_DIMS];
  if (gr_shape_arg(op, &args[0], &nd, sh, err) || check_shape(op, nd, sh, err)) return err->code;
  double value = op->code;
  kn_dtype dt = KN_FLOAT64;
  int dti = 1;
  if (op->code == 2) { /* fill */
    if (num_arg(op, &args[1], &value, err)) return err->code;
    dt = args[1].tag == GV_TENSOR ? args[1].u.t->dtype : gr_strong_dtype(&args[1]);
    dti = 2;
  }
  if (n > dti && dtype_arg(op, &args[dti], &dt, err)) return err->code;
  kn_tensor *r = kn_fill(dt, nd, sh, value);
  if (!r) return kn_alloc_error(err);
  *out = gv_tensor(r);
  return SG_OK;
}

/* arange: ([START] STOP [STEP]); int64 when all are integers, else float64 */
sg_code gr_cpu_arange(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  double v[3] = {0, 0, 1};
  bool allint = true;
  for (int i = 0; i < n; i++) {
    if (num_arg(op, &args[i], &v[n == 1 ? 1 : i], err)) return err->code;
    if (args[i].tag == GV_FLOAT || (args[i].tag == GV_TENSOR && kn_dtype_is_float(args[i].u.t->dtype)))
      allint = false;
  }
  kn_tensor *r;
  if (kn_arange(v[0], v[1], v[2], allint ? KN_INT64 : KN_FLOAT64, &r, err)) return err->code;
  *out = gv_tensor(r);
  return SG_OK;
}

/* random_normal / random_uniform: (OP SHAPE SEED [DTYPE]) default float64 */
sg_code gr_cpu_random(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  int nd;
  int64_t sh[KN_MAX_DIMS], seed;
  kn_dtype dt = KN_FLOAT64;
  if (gr_shape_arg(op, &args[0], &nd, sh, err) || check_shape(op, nd, sh, err)) return err->code;
  if (gr_int_arg(op, &args[1], &seed, err)) return err->code;
  if (n > 2 && dtype_arg(op, &args[2], &dt, err)) return err->code;
  if (!kn_dtype_is_float(dt)) return bad(err, op, "dtype must be a float type%s", "");
  kn_tensor *r = kn_random(op->code != 0, (uint64_t)seed, dt, nd, sh);
  if (!r) return kn_alloc_error(err);
  *out = gv_tensor(r);
  return SG_OK;
}

/* shape → tuple of ints; len → first dim / tuple length; size → element count */
sg_code gr_cpu_shape(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  gr_val *a = &args[0];
  if (op->code == 1 && (a->tag == GV_TUPLE || a->tag == GV_RECORD)) {
    *out = gv_int(a->u.o->n);
    return SG_OK;
  }
  if (a->tag != GV_TENSOR && !gv_is_scalar(a)) return bad(err, op, "expected a tensor, got a %s", gv_type_name(a));
  int nd = a->tag == GV_TENSOR ? a->u.t->ndim : 0;
  const int64_t *sh = a->tag == GV_TENSOR ? a->u.t->shape : NULL;
  if (op->code == 0) {
    *out = gv_tuple_new(nd);
    for (int i = 0; i < nd; i++) out->u.o->items[i] = gv_int(sh[i]);
  } else if (op->code == 1) {
    if (nd == 0) return bad(err, op, "len() of a 0-d tensor%s", "");
    *out = gv_int(sh[0]);
  } else {
    *out = gv_int(a->tag == GV_TENSOR ? a->u.t->size : 1);
  }
  return SG_OK;
}

sg_code gr_cpu_print(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  if (ctx->printed) {
    for (int i = 0; i < n; i++) {
      if (i) sg_buf_putc(ctx->printed, ' ');
      gv_print_py(ctx->printed, &args[i]);
    }
    sg_buf_putc(ctx->printed, '\n');
  }
  *out = gv_none();
  return SG_OK;
}

/* grad_scalar X: X when it is one number (a Python number, or a tensor of one
 * element), else the error grad gives for a function of another value */
static sg_code grad_scalar(const gr_op *op, gr_val *args, gr_val *out, sg_error *err) {
  const gr_val *x = &args[0];
  kn_dtype dt;
  int nd;
  const int64_t *shape;
  bool number = x->tag == GV_INT || x->tag == GV_FLOAT || x->tag == GV_BOOL;
  if (!number && gv_tensor_meta(x, &dt, &nd, &shape)) {
    int64_t size = 1;
    for (int d = 0; d < nd; d++) size *= shape[d];
    number = size == 1;
    if (!number) {
      sg_buf b = SG_BUF_INIT;
      for (int d = 0; d < nd; d++) sg_buf_printf(&b, d ? ", %lld" : "%lld", (long long)shape[d]);
      sg_error_set(err, SG_INVALID_ARGUMENT,
                   "grad: the function must return one number (a scalar), it returns a %s tensor of shape (%s%s)",
                   kn_dtype_name(dt), b.data ? b.data : "", nd == 1 ? "," : "");
      sg_buf_free(&b);
      return SG_INVALID_ARGUMENT;
    }
  }
  if (!number)
    return bad(err, op, "grad: the function must return one number (a scalar), it returns a %s", gv_type_name(x));
  *out = gv_retain(*x);
  return SG_OK;
}

sg_code gr_cpu_assert(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  if (op->code == 1) return grad_scalar(op, args, out, err);
  bool ok = true;
  if (args[0].tag == GV_TENSOR) {
    for (int64_t i = 0; i < args[0].u.t->size; i++)
      if (kn_get_f64(args[0].u.t, i) == 0) ok = false;
  } else if (!gv_truthy(&args[0], &ok)) {
    return bad(err, op, "condition must be a bool or tensor, got a %s", gv_type_name(&args[0]));
  }
  if (!ok) {
    /* assume (code 2): a speculative graph's assumption, which the client answers by
     * running the call imperatively (docs/client.md "Speculative mode") */
    bool assume = op->code == 2;
    sg_buf m = SG_BUF_INIT;
    if (n > 1) gv_print_py(&m, &args[1]);
    sg_error_set_reason(err, assume ? SG_REASON_SPECULATION : SG_REASON_ASSERTION, SG_FAILED_PRECONDITION,
                        "%s%s%s", assume ? "speculation failed" : "assertion failed", n > 1 ? ": " : "",
                        n > 1 ? m.data : "");
    sg_buf_free(&m);
    return SG_FAILED_PRECONDITION;
  }
  *out = gv_none();
  return SG_OK;
}

/* variable / read / assign / assign_add / assign_sub (code 0..4) */
sg_code gr_cpu_variable(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  if (op->code == 0) {
    gr_val init = gv_retain(args[0]);
    if (gv_own_strings(&init, false, err)) { /* a new cell: not yet reachable from a handle */
      gv_release(init);
      return err->code;
    }
    gr_val v = {.tag = GV_VAR};
    v.u.o = gv_obj_new(1);
    v.u.o->items[0] = init;
    *out = v;
    return SG_OK;
  }
  if (args[0].tag != GV_VAR) return bad(err, op, "expected a variable, got a %s", gv_type_name(&args[0]));
  gr_obj *cell = args[0].u.o;
  if (op->code == 1) {
    *out = gr_var_read(ctx, cell);
    /* a cell on a Vulkan device read by a CPU request: its host copy */
    return ctx->backend ? SG_OK : gv_resident_to_host(out, err);
  }
  /* assign / assign_add / assign_sub: the new value goes to the request's log (txn.c) */
  gr_val nv;
  if (op->code >= 3) {
    gr_val pair[2] = {gr_var_read(ctx, cell), args[1]};
    sg_code rc = gv_resident_to_host(&pair[0], err);
    if (!rc) rc = gr_cpu_binary(ctx, op->code == 3 ? gr_op_add : gr_op_sub, pair, 2, &nv, err);
    gv_release(pair[0]);
    if (rc) return rc;
  } else {
    if (gr_var_refuse_cycle(ctx, &args[1], cell, err)) return err->code;
    nv = gv_retain(args[1]);
    if (gv_own_strings(&nv, atomic_load(&cell->escaped), err)) { /* the cell may outlive the request */
      gv_release(nv);
      return err->code;
    }
  }
  gr_var_write(ctx, cell, gv_retain(nv));
  *out = nv;
  return SG_OK;
}

/* Values nested deeper than GR_MAX_VALUE_DEPTH are refused: printing, JSON and
 * release recurse over them. */
static sg_code nest_depth(const gr_op *op, gr_val *args, int n, int *depth, sg_error *err) {
  int d = 0;
  for (int i = 0; i < n; i++)
    if ((args[i].tag == GV_TUPLE || args[i].tag == GV_RECORD) && args[i].u.o->depth > d) d = args[i].u.o->depth;
  if (d + 1 > GR_MAX_VALUE_DEPTH)
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "%s: values nested deeper than %d levels", op->name,
                        GR_MAX_VALUE_DEPTH);
  *depth = d + 1;
  return SG_OK;
}

sg_code gr_cpu_tuple(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  int depth = 0;
  if (nest_depth(op, args, n, &depth, err)) return err->code;
  *out = gv_tuple_new(n);
  out->u.o->depth = depth;
  for (int i = 0; i < n; i++) out->u.o->items[i] = gv_retain(args[i]);
  return SG_OK;
}

sg_code gr_cpu_getitem(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  int64_t i;
  if (gr_int_arg(op, &args[1], &i, err)) return err->code;
  if (args[0].tag == GV_TUPLE) {
    int len = args[0].u.o->n;
    if (i < -len || i >= len) return kn_err_tuple_index(err, i, len);
    *out = gv_retain(args[0].u.o->items[i < 0 ? i + len : i]);
    return SG_OK;
  }
  if (args[0].tag == GV_TENSOR) {
    kn_tensor *r;
    if (kn_index(args[0].u.t, i, &r, err)) return err->code;
    *out = gv_tensor(r);
    return SG_OK;
  }
  return bad(err, op, "expected a tuple or tensor, got a %s", gv_type_name(&args[0]));
}

sg_code gr_cpu_record(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  if (n % 2) return bad(err, op, "expected field/value pairs%s", "");
  int depth = 0;
  if (nest_depth(op, args, n, &depth, err)) return err->code;
  gr_val v = {.tag = GV_RECORD};
  v.u.o = gv_obj_new(n / 2);
  v.u.o->depth = depth;
  v.u.o->names = sg_xcalloc((size_t)(n / 2 + 1), sizeof(char *));
  for (int i = 0; i < n / 2; i++) {
    v.u.o->names[i] = args[2 * i].tag == GV_STR ? args[2 * i].u.s : "?";
    v.u.o->items[i] = gv_retain(args[2 * i + 1]);
  }
  *out = v;
  return SG_OK;
}

sg_code gr_cpu_getattr(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  if (args[0].tag != GV_RECORD) return bad(err, op, "expected a record, got a %s", gv_type_name(&args[0]));
  if (args[1].tag != GV_STR) return bad(err, op, "expected a field name%s", "");
  gr_obj *o = args[0].u.o;
  for (int i = 0; i < o->n; i++)
    if (strcmp(o->names[i], args[1].u.s) == 0) {
      *out = gv_retain(o->items[i]);
      return SG_OK;
    }
  return sg_error_set(err, SG_INVALID_ARGUMENT, "getattr: record has no field '%s'", args[1].u.s);
}

sg_code gr_cpu_seq(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  *out = gv_retain(args[n - 1]);
  return SG_OK;
}

/* A condition computed on the request's device, brought to the host. */
static sg_code predicate(gr_ctx *ctx, gr_val *v, sg_error *err) {
  return ctx->backend ? ctx->backend->predicate(ctx, v, err) : SG_OK;
}

sg_code gr_cpu_if(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  gr_val p = gv_retain(args[0]);
  if (predicate(ctx, &p, err)) { /* a condition computed on a device */
    gv_release(p);
    return err->code;
  }
  bool c;
  bool ok = gv_truthy(&p, &c);
  gv_release(p);
  if (!ok)
    return bad(err, op, "condition must be a bool, number or one-element tensor, got a %s",
               gv_type_name(&args[0]));
  return gr_call(ctx, args[c ? 1 : 2], NULL, 0, out, err);
}

sg_code gr_cpu_while(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  if (args[2].tag != GV_TUPLE) return bad(err, op, "the initial state must be a tuple, got a %s", gv_type_name(&args[2]));
  gr_val state = gv_retain(args[2]);
  for (;;) {
    if (gr_check_deadline(ctx, err)) break;
    gr_val c;
    if (gr_call(ctx, args[0], state.u.o->items, state.u.o->n, &c, err)) break;
    if (predicate(ctx, &c, err)) { /* a condition computed on a device */
      gv_release(c);
      break;
    }
    bool t;
    bool ok = gv_truthy(&c, &t);
    gv_release(c);
    if (!ok) {
      bad(err, op, "the condition function must return a bool%s", "");
      break;
    }
    if (!t) {
      *out = state;
      return SG_OK;
    }
    gr_val next;
    if (gr_call(ctx, args[1], state.u.o->items, state.u.o->n, &next, err)) break;
    if (next.tag != GV_TUPLE || next.u.o->n != state.u.o->n) {
      gv_release(next);
      sg_error_set(err, SG_INVALID_ARGUMENT, "while: the body function must return a tuple of %d elements",
                   state.u.o->n);
      break;
    }
    gv_release(state);
    state = next;
  }
  gv_release(state);
  return err->code;
}

sg_code gr_cpu_grad(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  return sg_error_set(err, SG_UNIMPLEMENTED, "grad: reverse-mode AD is not implemented yet");
}
