/*
 * cpu_reduce.c — reductions (sum, mean, max, min, argmax) over one axis or all
 * elements, and softmax / log_softmax along an axis, with NumPy's result dtypes.
 *
 * A tensor reduced along `axis` is viewed as [outer, len, inner]; every kernel here
 * walks that view, so one loop shape serves all axes.
 */
#include <math.h>

#include "kn.h"

kn_dtype kn_reduce_result(kn_reduce_op op, kn_dtype a) {
  switch (op) {
  case KN_SUM: return (a == KN_BOOL || a == KN_INT32) ? KN_INT64 : a;
  case KN_MEAN: return kn_dtype_is_float(a) ? a : KN_FLOAT64;
  case KN_ARGMAX: return KN_INT64;
  default: return a;
  }
}

static sg_code norm_axis(int ndim, int *axis, sg_error *err) {
  int a = *axis;
  if (a < -ndim || a >= ndim || ndim == 0)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "axis %d is out of bounds for a %d-d tensor",
                        a, ndim);
  *axis = a < 0 ? a + ndim : a;
  return SG_OK;
}

sg_code kn_reduce(kn_reduce_op op, const kn_tensor *a, bool has_axis, int axis,
                  kn_tensor **out, sg_error *err) {
  int64_t outer = 1, len = a->size, inner = 1;
  int64_t oshape[KN_MAX_DIMS];
  int on = 0;
  if (has_axis) {
    if (norm_axis(a->ndim, &axis, err)) return err->code;
    outer = 1;
    inner = 1;
    for (int i = 0; i < axis; i++) outer *= a->shape[i];
    for (int i = axis + 1; i < a->ndim; i++) inner *= a->shape[i];
    len = a->shape[axis];
    for (int i = 0; i < a->ndim; i++)
      if (i != axis) oshape[on++] = a->shape[i];
  }
  if (len == 0 && (op == KN_MAX || op == KN_MIN || op == KN_ARGMAX) && outer * inner > 0)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "zero-size reduction has no identity (max/min/argmax of an empty "
                        "tensor)");
  kn_dtype rt = kn_reduce_result(op, a->dtype);
  kn_tensor *o = kn_tensor_new(rt, on, oshape);
  bool fdom = kn_dtype_is_float(a->dtype) || op == KN_MEAN;
  for (int64_t po = 0; po < outer; po++)
    for (int64_t pi = 0; pi < inner; pi++) {
      int64_t base = po * len * inner + pi, oi = po * inner + pi;
      if (op == KN_ARGMAX) {
        int64_t best = 0;
        double bv = len ? kn_get_f64(a, base) : 0;
        for (int64_t j = 1; j < len; j++) {
          double v = kn_get_f64(a, base + j * inner);
          if (isnan(bv)) break;
          if (v > bv || isnan(v)) {
            bv = v;
            best = j;
          }
        }
        kn_set_i64(o, oi, best);
      } else if (fdom) {
        double acc = op == KN_MAX ? -INFINITY : op == KN_MIN ? INFINITY : 0.0;
        bool nan = false;
        for (int64_t j = 0; j < len; j++) {
          double v = kn_get_f64(a, base + j * inner);
          if (op == KN_SUM || op == KN_MEAN) acc += v;
          else if (isnan(v)) nan = true;
          else if (op == KN_MAX ? v > acc : v < acc) acc = v;
        }
        if (nan) acc = NAN;
        if (op == KN_MEAN) acc = len ? acc / (double)len : NAN;
        kn_set_f64(o, oi, acc);
      } else {
        int64_t acc = op == KN_MAX ? INT64_MIN : op == KN_MIN ? INT64_MAX : 0;
        for (int64_t j = 0; j < len; j++) {
          int64_t v = kn_get_i64(a, base + j * inner);
          if (op == KN_SUM) acc = (int64_t)((uint64_t)acc + (uint64_t)v);
          else if (op == KN_MAX ? v > acc : v < acc) acc = v;
        }
        kn_set_i64(o, oi, acc);
      }
    }
  *out = o;
  return SG_OK;
}

sg_code kn_softmax(const kn_tensor *a, int axis, bool log_, kn_tensor **out, sg_error *err) {
  if (norm_axis(a->ndim, &axis, err)) return err->code;
  int64_t outer = 1, inner = 1, len = a->shape[axis];
  for (int i = 0; i < axis; i++) outer *= a->shape[i];
  for (int i = axis + 1; i < a->ndim; i++) inner *= a->shape[i];
  kn_dtype rt = kn_dtype_is_float(a->dtype) ? a->dtype : KN_FLOAT64;
  kn_tensor *o = kn_tensor_new(rt, a->ndim, a->shape);
  for (int64_t po = 0; po < outer; po++)
    for (int64_t pi = 0; pi < inner; pi++) {
      int64_t base = po * len * inner + pi;
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < len; j++) {
        double v = kn_get_f64(a, base + j * inner);
        if (v > m) m = v;
      }
      for (int64_t j = 0; j < len; j++) s += exp(kn_get_f64(a, base + j * inner) - m);
      for (int64_t j = 0; j < len; j++) {
        double v = kn_get_f64(a, base + j * inner) - m;
        kn_set_f64(o, base + j * inner, log_ ? v - log(s) : exp(v) / s);
      }
    }
  *out = o;
  return SG_OK;
}
