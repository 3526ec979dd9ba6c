// SPDX-License-Identifier: Apache-2.0
/*
 * infer_ops.c — static shape/dtype rules (the op table's `infer` column) for joining,
 * slicing and indexing (concat, stack, slice, slice_update, gather, one_hot), constructors (arange,
 * random_*), records (record, getattr), variables (variable, read, assign,
 * assign_add) and seq. Each rule mirrors its CPU kernel (ops_cpu.c, kernels/): an
 * unknown input (`any`, an unknown rank, a `?` dim, a non-constant axis) gives an
 * unknown part of the result, never an error; a definite mismatch is an error that
 * the walker (infer.c) locates at the node.
 */
#include <math.h>
#include <string.h>

#include "infer_rules.h"

static bool is_any(const gr_aval *x) { return x->kind == GA_ANY; }

static bool const_int(const gr_aval *x, int64_t *v) {
  if (x->kind != GA_SCALAR || !x->has_const) return false;
  if (x->cval.tag == GV_INT) *v = x->cval.u.i;
  else if (x->cval.tag == GV_BOOL) *v = x->cval.u.b;
  else return false;
  return true;
}

static bool const_num(const gr_aval *x, double *v) {
  if (x->kind != GA_SCALAR || !x->has_const) return false;
  if (x->cval.tag == GV_INT) *v = (double)x->cval.u.i;
  else if (x->cval.tag == GV_BOOL) *v = x->cval.u.b;
  else if (x->cval.tag == GV_FLOAT) *v = x->cval.u.f;
  else return false;
  return true;
}

/* A tensor operand as the kernels see it: scalars are 0-d tensors of their dtype. */
static bool as_tensor(const gr_aval *x, gr_aval *t) {
  if (x->kind == GA_TENSOR) {
    *t = *x;
    return true;
  }
  if (x->kind == GA_SCALAR) {
    memset(t, 0, sizeof *t);
    t->kind = GA_TENSOR;
    t->dtype = x->dtype;
    t->ndim = 0;
    return true;
  }
  return false;
}

static sg_code expected_tensor(const gr_op *op, const gr_aval *x, sg_error *err) {
  sg_buf b = SG_BUF_INIT;
  gr_aval_print(&b, x);
  sg_error_set(err, SG_INVALID_ARGUMENT, "%s: expected a tensor, got %s", op->name, b.data);
  sg_buf_free(&b);
  return SG_INVALID_ARGUMENT;
}

static sg_code axis_check(const gr_op *op, int64_t *axis, int nd, sg_error *err) {
  if (*axis < -nd || *axis >= nd) return kn_err_axis(err, op->name, *axis, nd);
  if (*axis < 0) *axis += nd;
  return SG_OK;
}

/* Two dims that must be equal: a known one wins over `?`. */
static bool merge_dim(int64_t a, int64_t b, int64_t *out) {
  if (a >= 0 && b >= 0 && a != b) return false;
  *out = a >= 0 ? a : b;
  return true;
}

/* concat / stack: (OP T ... [AXIS]) or (OP (tuple T ...) [AXIS]); trailing int = axis */
GR_INFER(gr_infer_join) {
  int64_t axis = 0;
  if (n > 1 && args[n - 1]->kind == GA_SCALAR && args[n - 1]->dtype == KN_INT64) {
    if (!const_int(args[n - 1], &axis)) return SG_OK; /* a run-time axis */
    n--;
  } else if (n > 1 && is_any(args[n - 1])) {
    return SG_OK; /* could be the axis */
  }
  gr_aval **items = args;
  if (n == 1 && args[0]->kind == GA_TUPLE) {
    items = args[0]->elems;
    n = args[0]->n;
  } else if (n == 1 && is_any(args[0])) {
    return SG_OK;
  }
  if (n == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: need at least one tensor", op->name);
  gr_aval t[1], first;
  memset(&first, 0, sizeof first);
  bool have_first = false, rank_known = true;
  kn_dtype dt = KN_BOOL;
  for (int i = 0; i < n; i++) {
    if (is_any(items[i])) return SG_OK;
    if (!as_tensor(items[i], &t[0])) return expected_tensor(op, items[i], err);
    dt = i == 0 ? t[0].dtype : kn_promote(dt, t[0].dtype);
    if (t[0].ndim < 0) {
      rank_known = false;
      continue;
    }
    if (!have_first) {
      first = t[0];
      have_first = true;
      continue;
    }
    if (t[0].ndim != first.ndim)
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          op->code ? "%s: all input arrays must have the same shape (input %d has %d dims, expected %d)"
                                   : "%s: all inputs must have the same number of dimensions (input %d has %d, expected %d)",
                          op->name, i, t[0].ndim, first.ndim);
  }
  out->kind = GA_TENSOR;
  out->dtype = dt;
  if (!have_first || !rank_known) return SG_OK; /* rank unknown */
  int nd = first.ndim;
  if (!op->code && nd == 0)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "concat: zero-dimensional tensors cannot be concatenated");
  if (op->code && nd + 1 > KN_MAX_DIMS) return sg_error_set(err, SG_INVALID_ARGUMENT, "stack: too many dims");
  if (axis_check(op, &axis, op->code ? nd + 1 : nd, err)) return err->code;
  int64_t sh[KN_MAX_DIMS];
  memcpy(sh, first.shape, sizeof sh);
  if (!op->code) sh[axis] = 0;
  for (int i = 0; i < n; i++) {
    as_tensor(items[i], &t[0]);
    for (int d = 0; d < nd; d++) {
      if (!op->code && d == axis) {
        sh[d] = sh[d] < 0 || t[0].shape[d] < 0 ? -1 : sh[d] + t[0].shape[d];
      } else if (!merge_dim(sh[d], t[0].shape[d], &sh[d])) {
        return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: input %d has size %lld on axis %d, expected %lld",
                            op->name, i, (long long)t[0].shape[d], d, (long long)sh[d]);
      }
    }
  }
  if (op->code) { /* stack: a new axis of length n */
    out->ndim = nd + 1;
    for (int d = 0, j = 0; d <= nd; d++) out->shape[d] = d == axis ? n : sh[j++];
  } else {
    out->ndim = nd;
    memcpy(out->shape, sh, sizeof(int64_t) * (size_t)nd);
  }
  return SG_OK;
}

/* V (a tensor or scalar) broadcast into the slice's shape: a definite mismatch is an
 * error; unknown dims and ranks pass. */
static sg_code update_fits(const gr_aval *sl, const gr_aval *v, sg_error *err) {
  gr_aval t;
  if (is_any(v) || !as_tensor(v, &t) || t.ndim < 0 || sl->ndim < 0) return SG_OK;
  bool ok = t.ndim <= sl->ndim;
  for (int d = 0; ok && d < t.ndim; d++) {
    int64_t vl = t.shape[t.ndim - 1 - d], sd = sl->shape[sl->ndim - 1 - d];
    ok = vl < 0 || sd < 0 || vl == 1 || vl == sd;
  }
  return ok ? SG_OK : kn_slice_misfit(err, t.ndim, t.shape, sl->ndim, sl->shape);
}

/* slice: (slice X START STOP [STEP [AXIS]]), Python's clamping of the bounds; code 1,
 * (slice_update X V START STOP [STEP [AXIS]]): X's type, V must fit the slice */
GR_INFER(gr_infer_slice) {
  gr_aval x;
  int b = op->code ? 2 : 1; /* where the bounds start */
  if (is_any(args[0])) return SG_OK;
  if (!as_tensor(args[0], &x)) return expected_tensor(op, args[0], err);
  if (op->code && !is_any(args[1]) && args[1]->kind != GA_TENSOR && args[1]->kind != GA_SCALAR)
    return expected_tensor(op, args[1], err);
  int64_t v[4] = {0, 0, 1, 0};
  bool has[2] = {true, true}, known = true;
  for (int i = b; i < n; i++) {
    if (args[i]->kind == GA_NONE && i < b + 2) has[i - b] = false;
    else if (!const_int(args[i], &v[i - b])) known = false;
  }
  out->kind = GA_TENSOR;
  out->dtype = x.dtype;
  if (x.ndim < 0) return SG_OK;
  if (x.ndim == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: cannot slice a 0-d tensor", op->name);
  out->ndim = x.ndim;
  memcpy(out->shape, x.shape, sizeof out->shape);
  int64_t axis = v[3];
  if (n > b + 3 && !const_int(args[b + 3], &axis)) { /* which axis is unknown: every dim may change */
    for (int d = 0; d < x.ndim && !op->code; d++) out->shape[d] = -1;
    return SG_OK;
  }
  if (axis_check(op, &axis, x.ndim, err)) return err->code;
  if (n > b + 2 && known && v[2] == 0)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: step cannot be zero", op->name);
  int64_t len = x.shape[axis], start = v[0], stop = v[1], step = v[2];
  gr_aval sl = *out;
  sl.shape[axis] = !known || len < 0 ? -1 : kn_slice_adjust(len, &start, has[0], &stop, has[1], step);
  if (!op->code) *out = sl;
  return op->code ? update_fits(&sl, args[1], err) : SG_OK;
}

/* gather: (gather X IDX [AXIS]) → X.shape[:axis] + IDX.shape + X.shape[axis+1:] */
GR_INFER(gr_infer_gather) {
  gr_aval x, idx;
  if (is_any(args[0]) || is_any(args[1])) return SG_OK;
  if (!as_tensor(args[0], &x)) return expected_tensor(op, args[0], err);
  if (!as_tensor(args[1], &idx)) return expected_tensor(op, args[1], err);
  if (kn_dtype_is_float(idx.dtype))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "gather: indices must be integers, got %s", kn_dtype_name(idx.dtype));
  out->kind = GA_TENSOR;
  out->dtype = x.dtype;
  if (x.ndim == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "gather: cannot index a 0-d tensor");
  int64_t axis = 0;
  if (n > 2 && !const_int(args[2], &axis)) return SG_OK;
  if (x.ndim < 0 || idx.ndim < 0) return SG_OK;
  if (axis_check(op, &axis, x.ndim, err)) return err->code;
  int nd = x.ndim - 1 + idx.ndim;
  if (nd > KN_MAX_DIMS) return sg_error_set(err, SG_INVALID_ARGUMENT, "gather: too many dims");
  int k = 0;
  for (int d = 0; d < axis; d++) out->shape[k++] = x.shape[d];
  for (int d = 0; d < idx.ndim; d++) out->shape[k++] = idx.shape[d];
  for (int d = (int)axis + 1; d < x.ndim; d++) out->shape[k++] = x.shape[d];
  out->ndim = nd;
  return SG_OK;
}

/* one_hot: (one_hot IDX DEPTH) → float32, IDX.shape + (DEPTH,) */
GR_INFER(gr_infer_one_hot) {
  gr_aval idx;
  if (is_any(args[0])) return SG_OK;
  if (!as_tensor(args[0], &idx)) return expected_tensor(op, args[0], err);
  if (kn_dtype_is_float(idx.dtype))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "one_hot: indices must be integers");
  int64_t depth = -1;
  if (const_int(args[1], &depth) && depth < 0)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "one_hot: bad depth %lld", (long long)depth);
  out->kind = GA_TENSOR;
  out->dtype = KN_FLOAT32;
  if (idx.ndim < 0) return SG_OK;
  if (idx.ndim + 1 > KN_MAX_DIMS) return sg_error_set(err, SG_INVALID_ARGUMENT, "one_hot: too many dims");
  out->ndim = idx.ndim + 1;
  memcpy(out->shape, idx.shape, sizeof(int64_t) * (size_t)idx.ndim);
  out->shape[idx.ndim] = depth;
  return SG_OK;
}

/* arange: ([START] STOP [STEP]) → 1-d; int64 when all are integers, else float64 */
GR_INFER(gr_infer_arange) {
  double v[3] = {0, 0, 1};
  bool known = true, allint = true;
  for (int i = 0; i < n; i++) {
    const gr_aval *x = args[i];
    if (is_any(x)) return SG_OK;
    bool num = x->kind == GA_SCALAR || (x->kind == GA_TENSOR && x->ndim == 0);
    if (!num && x->kind == GA_TENSOR && x->ndim > 0)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "arange: expected a number, got a tensor");
    if (!num && x->kind != GA_TENSOR) {
      sg_buf b = SG_BUF_INIT;
      gr_aval_print(&b, x);
      sg_error_set(err, SG_INVALID_ARGUMENT, "arange: expected a number, got %s", b.data);
      sg_buf_free(&b);
      return SG_INVALID_ARGUMENT;
    }
    if (kn_dtype_is_float(x->dtype)) allint = false;
    if (!const_num(x, &v[n == 1 ? 1 : i])) known = false;
  }
  out->kind = GA_TENSOR;
  out->dtype = allint ? KN_INT64 : KN_FLOAT64;
  out->ndim = 1;
  out->shape[0] = -1;
  if (known) {
    if (v[2] == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "arange: step cannot be zero");
    double c = ceil((v[1] - v[0]) / v[2]);
    if (c > (double)KN_MAX_ELEMENTS) return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "arange: too many elements");
    out->shape[0] = c > 0 ? (int64_t)c : 0;
  }
  return SG_OK;
}

/* random_normal / random_uniform: (OP SHAPE SEED [DTYPE]) → float tensor of SHAPE */
GR_INFER(gr_infer_random) {
  kn_dtype dt = KN_FLOAT64;
  if (n > 2) {
    if (args[2]->kind != GA_STR || !args[2]->has_const || args[2]->cval.tag != GV_STR) return SG_OK;
    if (!kn_dtype_parse(args[2]->cval.u.s, &dt)) return SG_OK; /* the kernel reports it */
    if (!kn_dtype_is_float(dt))
      return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: dtype must be a float type", op->name);
  }
  if (args[1]->kind == GA_SCALAR && args[1]->dtype == KN_FLOAT64)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: the seed must be an integer", op->name);
  out->kind = GA_TENSOR;
  out->dtype = dt;
  const gr_aval *s = args[0];
  int64_t d;
  bool neg = false;
  if (const_int(s, &d)) {
    out->ndim = 1;
    out->shape[0] = d;
    neg = d < 0;
  } else if (s->kind == GA_TUPLE && s->n <= KN_MAX_DIMS) {
    out->ndim = s->n;
    for (int i = 0; i < s->n; i++) {
      bool k = const_int(s->elems[i], &d);
      out->shape[i] = k ? d : -1;
      if (k && d < 0) neg = true;
    }
  } else {
    return SG_OK; /* rank unknown */
  }
  if (neg) return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: negative dimensions are not allowed", op->name);
  return SG_OK;
}

/* record: (record "f" V ...) as lowered from (record (f V) ...) */
GR_INFER(gr_infer_record) {
  if (n % 2) return sg_error_set(err, SG_INVALID_ARGUMENT, "record: expected field/value pairs");
  for (int i = 0; i < n; i += 2)
    if (args[i]->kind != GA_STR || !args[i]->has_const) return SG_OK;
  out->kind = GA_RECORD;
  out->n = n / 2;
  out->names = sg_arena_alloc(a, sizeof(char *) * (size_t)(n / 2 + 1));
  out->elems = sg_arena_alloc(a, sizeof(gr_aval *) * (size_t)(n / 2 + 1));
  for (int i = 0; i < n / 2; i++) {
    out->names[i] = args[2 * i]->cval.u.s;
    out->elems[i] = args[2 * i + 1];
  }
  return SG_OK;
}

/* getattr: (getattr R "f") → the field's value; a missing field is an error */
GR_INFER(gr_infer_getattr) {
  const gr_aval *r = args[0], *f = args[1];
  if (is_any(r)) return SG_OK;
  if (r->kind != GA_RECORD) {
    sg_buf b = SG_BUF_INIT;
    gr_aval_print(&b, r);
    sg_error_set(err, SG_INVALID_ARGUMENT, "getattr: expected a record, got %s", b.data);
    sg_buf_free(&b);
    return SG_INVALID_ARGUMENT;
  }
  if (f->kind != GA_STR || !f->has_const) return SG_OK;
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->names[i], f->cval.u.s)) {
      *out = *r->elems[i];
      return SG_OK;
    }
  return sg_error_set(err, SG_INVALID_ARGUMENT, "getattr: record has no field '%s'", f->cval.u.s);
}

/* A known tensor type: dtype, rank and every dimension. */
static bool known_tensor(const gr_aval *v) {
  if (v->kind != GA_TENSOR || v->ndim < 0) return false;
  for (int i = 0; i < v->ndim; i++)
    if (v->shape[i] < 0) return false;
  return true;
}

/* Typed cells (gr_infer_result_is_tensors): whether `x` assigned (code 2) or
 * added/subtracted (3, 4) into a cell of type `cell` keeps the cell's type. */
static bool keeps_cell_type(const gr_aval *cell, const gr_aval *x, int code) {
  if (!known_tensor(cell)) return false;
  if (code != 2 && x->kind == GA_SCALAR) /* a weak number: an int into a numeric cell, a float into a float one */
    return x->dtype == KN_INT64 ? cell->dtype != KN_BOOL : x->dtype == KN_FLOAT64 && kn_dtype_is_float(cell->dtype);
  if (!known_tensor(x) || x->dtype != cell->dtype) return false;
  if (code == 2) {
    if (x->ndim != cell->ndim) return false;
    for (int i = 0; i < x->ndim; i++)
      if (x->shape[i] != cell->shape[i]) return false;
    return true;
  }
  if (x->ndim > cell->ndim) return false; /* broadcast into the cell's shape only */
  for (int i = 1; i <= x->ndim; i++) {
    int64_t d = x->shape[x->ndim - i];
    if (d != 1 && d != cell->shape[cell->ndim - i]) return false;
  }
  return true;
}

/* variable (code 0) → a cell holding INIT's type; read (1) → any (the cell may have been
 * assigned a value of another type); assign (2) → the new value; assign_add, assign_sub (3, 4) → any.
 * With typed cells (gr_infer_typed_cells) a read gives the cell's type, and an assign
 * that may change it is noted. */
GR_INFER(gr_infer_variable) {
  if (op->code == 0) {
    out->kind = GA_VAR;
    out->n = 1;
    out->elems = sg_arena_alloc(a, sizeof(gr_aval *));
    out->elems[0] = args[0];
    return SG_OK;
  }
  if (!is_any(args[0]) && args[0]->kind != GA_VAR) {
    sg_buf b = SG_BUF_INIT;
    gr_aval_print(&b, args[0]);
    sg_error_set(err, SG_INVALID_ARGUMENT, "%s: expected a variable, got %s", op->name, b.data);
    sg_buf_free(&b);
    return SG_INVALID_ARGUMENT;
  }
  if (op->code == 2) *out = *args[1];
  if (gr_infer_typed_cells()) {
    const gr_aval *cell = args[0]->kind == GA_VAR && args[0]->n == 1 ? args[0]->elems[0] : NULL;
    if (op->code == 1 && cell) *out = *cell;
    if (op->code >= 2 && (!cell || !keeps_cell_type(cell, args[1], op->code))) gr_infer_cell_conflict();
  }
  return SG_OK;
}

/* seq: the value of the last argument */
GR_INFER(gr_infer_seq) {
  *out = *args[n - 1];
  return SG_OK;
}

/* Python's conversions to a scalar: operator.index (code GR_PY_INDEX) and int → int64,
 * float → float64, bool → bool. What is known to fail in Python fails here, located:
 * a float index, an array that is not one element (not 0-d for an index), int(None). */
GR_INFER(gr_infer_pyconv) {
  (void)n;
  (void)a;
  const gr_aval *x = args[0];
  int code = op->code;
  if (x->kind == GA_SCALAR && code == GR_PY_INDEX && x->dtype == KN_FLOAT64)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "TypeError: 'float' object cannot be interpreted as an integer");
  if (x->kind == GA_TENSOR && x->ndim >= 0) {
    int64_t size = 1;
    for (int i = 0; i < x->ndim && size >= 0; i++) size = x->shape[i] < 0 ? -1 : size * x->shape[i];
    if (code == GR_PY_INDEX && (x->ndim != 0 || x->dtype == KN_BOOL || kn_dtype_is_float(x->dtype)))
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "TypeError: only integer scalar arrays can be converted to a scalar index");
    if ((code == GR_PY_INT || code == GR_PY_FLOAT) && size >= 0 && size != 1)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "TypeError: only size-1 arrays can be converted to Python scalars");
    if (code == GR_PY_BOOL && size > 1)
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "ValueError: The truth value of an array with more than one element is ambiguous");
  }
  bool numeric = x->kind == GA_SCALAR || x->kind == GA_TENSOR || x->kind == GA_ANY;
  if (!numeric && code != GR_PY_BOOL) {
    sg_buf b = SG_BUF_INIT;
    gr_aval_print(&b, x);
    sg_error_set(err, SG_INVALID_ARGUMENT, "TypeError: %s() of %s: expected a number or a one-element array",
                 code == GR_PY_INDEX ? "index" : code == GR_PY_INT ? "int" : "float", b.data);
    sg_buf_free(&b);
    return SG_INVALID_ARGUMENT;
  }
  out->kind = GA_SCALAR;
  out->dtype = code == GR_PY_FLOAT ? KN_FLOAT64 : code == GR_PY_BOOL ? KN_BOOL : KN_INT64;
  return SG_OK;
}
