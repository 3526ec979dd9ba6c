// SPDX-License-Identifier: Apache-2.0
/*
 * ops_pyconv.c — the CPU kernel of the Python conversions (GR_FAM_PYCONV): what
 * operator.index(x), int(x), float(x) and bool(x) give for a Python number or a NumPy
 * array, with the errors CPython and NumPy 1.24 raise (their type and wording, as the
 * message). Staged Python (graph/pyfront) uses them for range() bounds, indices and the
 * builtins int/float/bool.
 */
#include <math.h>
#include <stdarg.h>

#include "ops_cpu.h"

static sg_code py_error(sg_error *err, const char *fmt, ...) SG_PRINTF(2, 3);
static sg_code py_error(sg_error *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sg_error_setv(err, SG_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return SG_INVALID_ARGUMENT;
}

/* The one element of a one-element tensor as a Python scalar of its kind. */
static gr_val element(const kn_tensor *t) {
  if (t->dtype == KN_BOOL) return gv_bool(kn_get_i64(t, 0) != 0);
  if (kn_dtype_is_float(t->dtype)) return gv_float(kn_get_f64(t, 0));
  return gv_int(kn_get_i64(t, 0));
}

static sg_code to_index(const gr_val *x, gr_val *out, sg_error *err) {
  switch (x->tag) {
  case GV_BOOL: *out = gv_int(x->u.b); return SG_OK;
  case GV_INT: *out = *x; return SG_OK;
  case GV_TENSOR:
    if (x->u.t->ndim == 0 && x->u.t->dtype != KN_BOOL && !kn_dtype_is_float(x->u.t->dtype)) {
      *out = gv_int(kn_get_i64(x->u.t, 0));
      return SG_OK;
    }
    return py_error(err, "TypeError: only integer scalar arrays can be converted to a scalar index");
  default: return py_error(err, "TypeError: '%s' object cannot be interpreted as an integer", gv_type_name(x));
  }
}

static sg_code to_int(const gr_val *s, gr_val *out, sg_error *err) {
  switch (s->tag) {
  case GV_BOOL: *out = gv_int(s->u.b); return SG_OK;
  case GV_INT: *out = *s; return SG_OK;
  case GV_FLOAT: {
    double f = s->u.f;
    if (isnan(f)) return py_error(err, "ValueError: cannot convert float NaN to integer");
    if (isinf(f)) return py_error(err, "OverflowError: cannot convert float infinity to integer");
    double t = trunc(f);
    if (t >= 9223372036854775808.0 || t < -9223372036854775808.0)
      return py_error(err, "OverflowError: int(%g) does not fit in 64 bits (integers are 64-bit here)", f);
    *out = gv_int((int64_t)t);
    return SG_OK;
  }
  default: return SG_INTERNAL;
  }
}

sg_code gr_cpu_pyconv(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  (void)ctx;
  (void)n;
  const gr_val *x = &args[0];
  if (op->code == GR_PY_INDEX) return to_index(x, out, err);
  gr_val s = *x;
  if (x->tag == GV_TENSOR) {
    if (x->u.t->size != 1) {
      if (op->code != GR_PY_BOOL)
        return py_error(err, "TypeError: only size-1 arrays can be converted to Python scalars");
      if (x->u.t->size > 1)
        return py_error(err, "ValueError: The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all()");
      *out = gv_bool(false); /* NumPy 1.24: an empty array is false (deprecated) */
      return SG_OK;
    }
    s = element(x->u.t);
  }
  if (op->code == GR_PY_BOOL) {
    bool b;
    if (gv_truthy(&s, &b)) *out = gv_bool(b);
    else if (s.tag == GV_TUPLE || s.tag == GV_RECORD) *out = gv_bool(s.u.o->n > 0);
    else if (s.tag == GV_STR) *out = gv_bool(s.u.s[0] != 0);
    else *out = gv_bool(true); /* functions */
    return SG_OK;
  }
  if (!gv_is_scalar(&s))
    return py_error(err, "TypeError: %s() argument must be a real number, not '%s'",
                    op->code == GR_PY_INT ? "int" : "float", gv_type_name(&s));
  if (op->code == GR_PY_INT) return to_int(&s, out, err);
  *out = gv_float(s.tag == GV_FLOAT ? s.u.f : s.tag == GV_INT ? (double)s.u.i : (double)s.u.b);
  return SG_OK;
}
