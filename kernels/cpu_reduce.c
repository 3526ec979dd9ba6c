/*
 * cpu_reduce.c — reductions (sum, mean, max, min, argmax) over one axis or all
 * elements, and softmax / log_softmax along an axis, with NumPy's result dtypes.
 *
 * A tensor reduced along `axis` is viewed as [outer, len, inner]; every kernel here
 * walks that view, so one loop shape serves all axes. Large reductions use the cores:
 * many outputs are split among threads; a single output (a full reduction) is summed
 * in fixed blocks of RED_BLOCK elements combined in order, so the result does not
 * depend on the number of threads.
 */
#include <math.h>

#include <stdlib.h>

#include "kn_cpu.h"

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

/* One reduction job: a viewed as [outer, len, inner]; output oi = po * inner + pi. */
typedef struct red_job {
  kn_reduce_op op;
  const kn_tensor *a;
  kn_tensor *o;
  int64_t len, inner;
  bool fdom;
  /* full reductions in blocks: partial results per block of RED_BLOCK elements */
  double *pf;
  int64_t *pi;
  bool *pnan;
} red_job;

#define RED_BLOCK ((int64_t)1 << 15)

/* Reduces elements base + j*inner for j in [j0, j1): float sum / max / min (with a
 * NaN flag), int sum / max / min, or argmax (index of the first NaN, else of the first
 * maximum) — the same order of operations as a single sequential loop. */
static void reduce_span(const red_job *J, int64_t base, int64_t j0, int64_t j1, double *facc,
                        int64_t *iacc, bool *nan) {
  const kn_tensor *a = J->a;
  kn_reduce_op op = J->op;
  int64_t inner = J->inner;
  if (op == KN_ARGMAX && inner == 1 && a->dtype == KN_FLOAT32) { /* contiguous float32 */
    const float *x = (const float *)a->data + base;
    int64_t best = j0;
    float bv = j1 > j0 ? x[j0] : 0;
    for (int64_t j = j0 + 1; j < j1 && !isnan(bv); j++)
      if (x[j] > bv || isnan(x[j])) bv = x[j], best = j;
    *iacc = best;
    *facc = bv;
    return;
  }
  if (op == KN_ARGMAX) {
    int64_t best = j0;
    double bv = j1 > j0 ? kn_get_f64(a, base + j0 * inner) : 0;
    for (int64_t j = j0 + 1; j < j1; j++) {
      double v = kn_get_f64(a, base + j * inner);
      if (isnan(bv)) break;
      if (v > bv || isnan(v)) {
        bv = v;
        best = j;
      }
    }
    *iacc = best;
    *facc = bv;
    return;
  }
  if (J->fdom) {
    double acc = op == KN_MAX ? -INFINITY : op == KN_MIN ? INFINITY : 0.0;
    bool sum = op == KN_SUM || op == KN_MEAN;
    if (inner == 1 && a->dtype == KN_FLOAT32 && sum) {
      const float *x = (const float *)a->data + base;
      for (int64_t j = j0; j < j1; j++) acc += (double)x[j];
    } else if (inner == 1 && a->dtype == KN_FLOAT64 && sum) {
      const double *x = (const double *)a->data + base;
      for (int64_t j = j0; j < j1; j++) acc += x[j];
    } else if (inner == 1 && a->dtype == KN_FLOAT32) { /* max / min, NaN noted apart */
      const float *x = (const float *)a->data + base;
      float m = op == KN_MAX ? -INFINITY : INFINITY;
      bool seen_nan = false;
      if (op == KN_MAX)
        for (int64_t j = j0; j < j1; j++) {
          seen_nan |= x[j] != x[j];
          m = x[j] > m ? x[j] : m;
        }
      else
        for (int64_t j = j0; j < j1; j++) {
          seen_nan |= x[j] != x[j];
          m = x[j] < m ? x[j] : m;
        }
      if (seen_nan) *nan = true;
      acc = m;
    } else {
      for (int64_t j = j0; j < j1; j++) {
        double v = kn_get_f64(a, base + j * inner);
        if (sum) acc += v;
        else if (isnan(v)) *nan = true;
        else if (op == KN_MAX ? v > acc : v < acc) acc = v;
      }
    }
    *facc = acc;
    return;
  }
  int64_t acc = op == KN_MAX ? INT64_MIN : op == KN_MIN ? INT64_MAX : 0;
  for (int64_t j = j0; j < j1; j++) {
    int64_t v = kn_get_i64(a, base + j * inner);
    if (op == KN_SUM) acc = (int64_t)((uint64_t)acc + (uint64_t)v);
    else if (op == KN_MAX ? v > acc : v < acc) acc = v;
  }
  *iacc = acc;
}

static void store(const red_job *J, int64_t oi, double facc, int64_t iacc, bool nan) {
  if (J->op == KN_ARGMAX) kn_set_i64(J->o, oi, iacc);
  else if (J->fdom) {
    if (nan) facc = NAN;
    if (J->op == KN_MEAN) facc = J->len ? facc / (double)J->len : NAN;
    kn_set_f64(J->o, oi, facc);
  } else {
    kn_set_i64(J->o, oi, iacc);
  }
}

/* outputs [k0, k1): one sequential reduction each */
static void reduce_outputs(void *ctx, int64_t k0, int64_t k1) {
  const red_job *J = ctx;
  for (int64_t oi = k0; oi < k1; oi++) {
    int64_t po = oi / J->inner, pi = oi % J->inner;
    double f = 0;
    int64_t i = 0;
    bool nan = false;
    reduce_span(J, po * J->len * J->inner + pi, 0, J->len, &f, &i, &nan);
    store(J, oi, f, i, nan);
  }
}

/* blocks [b0, b1) of a full reduction: partial results, combined in block order */
static void reduce_blocks(void *ctx, int64_t b0, int64_t b1) {
  const red_job *J = ctx;
  for (int64_t b = b0; b < b1; b++) {
    int64_t j0 = b * RED_BLOCK, j1 = j0 + RED_BLOCK < J->len ? j0 + RED_BLOCK : J->len;
    J->pnan[b] = false;
    reduce_span(J, 0, j0, j1, &J->pf[b], &J->pi[b], &J->pnan[b]);
  }
}

static void reduce_all_parallel(red_job *J) {
  int64_t nb = (J->len + RED_BLOCK - 1) / RED_BLOCK;
  J->pf = sg_xcalloc((size_t)nb, sizeof(double));
  J->pi = sg_xcalloc((size_t)nb, sizeof(int64_t));
  J->pnan = sg_xcalloc((size_t)nb, sizeof(bool));
  kn_parallel_blocks(nb, reduce_blocks, J);
  kn_reduce_op op = J->op;
  double f = J->pf[0];
  int64_t i = J->pi[0];
  bool nan = J->pnan[0];
  for (int64_t b = 1; b < nb; b++) {
    if (op == KN_ARGMAX) {
      if (!isnan(f) && (J->pf[b] > f || isnan(J->pf[b]))) f = J->pf[b], i = J->pi[b];
    } else if (J->fdom) {
      nan = nan || J->pnan[b];
      if (op == KN_SUM || op == KN_MEAN) f += J->pf[b];
      else if (op == KN_MAX ? J->pf[b] > f : J->pf[b] < f) f = J->pf[b];
    } else if (op == KN_SUM) {
      i = (int64_t)((uint64_t)i + (uint64_t)J->pi[b]);
    } else if (op == KN_MAX ? J->pi[b] > i : J->pi[b] < i) {
      i = J->pi[b];
    }
  }
  store(J, 0, f, i, nan);
  free(J->pf);
  free(J->pi);
  free(J->pnan);
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
  red_job J = {.op = op, .a = a, .o = o, .len = len, .inner = inner,
               .fdom = kn_dtype_is_float(a->dtype) || op == KN_MEAN};
  int64_t nout = outer * inner;
  if (a->size < KN_PARALLEL_MIN || nout == 0) reduce_outputs(&J, 0, nout);
  else if (nout == 1) reduce_all_parallel(&J); /* one output: split the elements */
  else kn_parallel_blocks(nout, reduce_outputs, &J); /* many outputs: split them */
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
