// SPDX-License-Identifier: Apache-2.0
/*
 * pyscalar.c — the dtype a Python scalar takes next to a tensor (NumPy 1.24's weak
 * scalars). Shared by inference, the CPU kernels and the Vulkan executor's dtype layer,
 * so all of them give one answer. Python's arithmetic on two scalars, their other
 * shared rule, is gr_scalar_binary in gr_ir.h (inline: the interpreter's scalar path).
 */

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
