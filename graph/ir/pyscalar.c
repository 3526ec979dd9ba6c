/*
 * pyscalar.c — Python's scalars as the IR's values meet them: arithmetic on two
 * scalars (bool, int, float: Python's rules, exact int64, true division), and the
 * dtype a scalar takes next to a tensor (NumPy 1.24's weak scalars). Shared by
 * inference (constants), the CPU kernels and the Vulkan executor's dtype layer, so
 * all of them give one answer.
 */
#include <math.h>

#include "gr_ir.h"

/* NumPy's kinds, in promotion order: bool < integer < float. */
static int dtype_kind(kn_dtype dt) { return dt == KN_BOOL ? 0 : kn_dtype_is_float(dt) ? 2 : 1; }

kn_dtype gr_weak_kind_dtype(kn_dtype s, kn_dtype t) {
  return dtype_kind(s) <= dtype_kind(t) ? t : kn_promote(s, t);
}

/* The dtype a Python scalar takes next to a tensor of dtype t (NumPy weak scalars). */
kn_dtype gr_weak_dtype(const gr_val *s, kn_dtype t) {
  if (s->tag == GV_BOOL) return KN_BOOL;
  return gr_weak_kind_dtype(gr_strong_dtype(s), t);
}

kn_dtype gr_strong_dtype(const gr_val *s) {
  return s->tag == GV_BOOL ? KN_BOOL : s->tag == GV_INT ? KN_INT64 : KN_FLOAT64;
}

sg_code gr_scalar_binary(const gr_op *op, kn_binop k, const gr_val *a, const gr_val *b,
                         gr_val *out, sg_error *err) {
  bool fl = a->tag == GV_FLOAT || b->tag == GV_FLOAT;
  bool cmp = k >= KN_EQ && k <= KN_GE;
  if (k == KN_AND || k == KN_OR) {
    bool x, y;
    gv_truthy(a, &x);
    gv_truthy(b, &y);
    *out = gv_bool(k == KN_AND ? (x && y) : (x || y));
    return SG_OK;
  }
  if (fl || k == KN_DIV) {
    double x = a->tag == GV_FLOAT ? a->u.f : (double)(a->tag == GV_INT ? a->u.i : a->u.b);
    double y = b->tag == GV_FLOAT ? b->u.f : (double)(b->tag == GV_INT ? b->u.i : b->u.b);
    if (y == 0 && (k == KN_DIV || k == KN_FLOORDIV || k == KN_MOD))
      return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: division by zero", op->name);
    double r = kn_binop_f64(k, x, y);
    *out = cmp ? gv_bool(r != 0) : gv_float(r);
    return SG_OK;
  }
  int64_t x = a->tag == GV_INT ? a->u.i : a->u.b, y = b->tag == GV_INT ? b->u.i : b->u.b;
  if (y == 0 && (k == KN_FLOORDIV || k == KN_MOD))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: integer division or modulo by zero", op->name);
  if (k == KN_POW && y < 0) {
    *out = gv_float(pow((double)x, (double)y));
    return SG_OK;
  }
  int64_t r = kn_binop_i64(k, x, y);
  if (cmp) *out = gv_bool(r != 0);
  else if (a->tag == GV_BOOL && b->tag == GV_BOOL && (k == KN_MAXIMUM || k == KN_MINIMUM)) *out = gv_bool(r != 0);
  else *out = gv_int(r);
  return SG_OK;
}

