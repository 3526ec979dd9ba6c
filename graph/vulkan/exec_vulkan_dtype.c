// SPDX-License-Identifier: Apache-2.0
/*
 * exec_vulkan_dtype.c — NumPy dtype promotion for the Vulkan executor: the layer
 * between the primitive dispatch (gr_vk_prim) and the kernel recorders. Where the
 * kernels cannot take an op's dtypes as they are, it converts the operands on the
 * device with the cast kernel, runs the recorder on the converted values and casts its
 * result to the dtype the CPU executor gives:
 *   - mixed dtypes, Python scalars and 0-d tensors: promoted by the CPU executor's
 *     rules (gr_weak_dtype / gr_weak_kind_dtype / gr_strong_dtype, kn_promote,
 *     kn_binop_result); a scalar is uploaded as a 0-d tensor of the computing dtype;
 *   - bool arithmetic, unary math and reductions compute in int32 (then cast back:
 *     `+` on bools is `or`, `*` is `and`, as in NumPy);
 *   - float16 ops (arithmetic, unary math, comparisons, reductions, argmax, softmax)
 *     have float16 kernels (float32 arithmetic between exact conversions, one
 *     dispatch), so they pass through; the environment variable STAGD_VK_F16_CAST=1
 *     (for tests: it is the reference the float16 reduction kernels must equal bit
 *     for bit) makes reductions and softmax take the former path instead: cast to
 *     float32, the float32 kernel, cast back (kn_f32_to_f16's rounding);
 *   - integer inputs of float-valued ops (true division, sqrt) compute in float64;
 *   - where's two tensor values of different dtypes are cast to their promotion.
 * Ops whose dtypes need nothing go straight to their recorder; what no kernel can do
 * after promotion (float64 transcendentals, ...) is left to the CPU kernel.
 */
#include <string.h>

#include "gr_vulkan.h"

#ifdef GR_HAVE_VULKAN
#include "exec_vulkan_int.h"

/* The dtype the kernels compute a `want` result or operand in: bool arithmetic in
 * int32 (logic: comparisons and logic ops, whose kernels take bools), float16 as it is
 * where the op has a float16 kernel (f16_kernel: the elementwise ones), else in
 * float32. */
static kn_dtype computing(kn_dtype want, bool logic, bool f16_kernel) {
  if (want == KN_BOOL) return logic ? KN_BOOL : KN_INT32;
  if (want == KN_FLOAT16) return f16_kernel ? KN_FLOAT16 : KN_FLOAT32;
  return want;
}

/* The rank of a host or device tensor (-1: not a tensor). */
static int tensor_ndim(const gr_val *v) {
  return v->tag == GV_DEVICE ? v->u.d->ndim : v->tag == GV_TENSOR ? v->u.t->ndim : -1;
}

/* The dtype an operand of a binary op takes (ops_cpu.c operand_dtypes: weak Python
 * scalars, and 0-d tensors weak next to a tensor of at least one dimension); false
 * for what is not a number. */
static bool operand_dtype(const gr_val *v, const gr_val *other, kn_dtype *dt) {
  kn_dtype o;
  bool other_tensor = gr_vkx_tensor_dtype(other, &o);
  if (gr_vkx_tensor_dtype(v, dt)) {
    if (other_tensor && tensor_ndim(v) == 0 && tensor_ndim(other) > 0) *dt = gr_weak_kind_dtype(*dt, o);
    return true;
  }
  if (v->tag != GV_INT && v->tag != GV_FLOAT && v->tag != GV_BOOL) return false;
  *dt = other_tensor ? gr_weak_dtype(v, o) : gr_strong_dtype(v);
  return true;
}

/* The plan of one op: nconv arguments from the first-th on are converted to ct, the
 * recorder's result is cast to rt. false: leave the op to its recorder as it is. */
typedef struct dtype_plan {
  int first, nconv; /* arguments first .. first + nconv - 1 are converted */
  kn_dtype ct, rt;
} dtype_plan;

static bool plan_binary(struct gr_vk_exec *x, const gr_op *op, const gr_val *args,
                        dtype_plan *p) {
  kn_dtype da, db;
  if (!gr_vkx_tensor_dtype(&args[0], &da) && !gr_vkx_tensor_dtype(&args[1], &db))
    return false; /* Python numbers only: Python arithmetic on the host */
  if (!operand_dtype(&args[0], &args[1], &da) || !operand_dtype(&args[1], &args[0], &db))
    return false;
  kn_binop k = (kn_binop)op->code;
  kn_dtype in = kn_promote(da, db);
  p->nconv = 2;
  p->rt = kn_binop_result(k, da, db);
  bool logic = kn_binop_result(k, KN_INT32, KN_INT32) == KN_BOOL; /* comparisons, and/or */
  kn_dtype want = !logic && kn_dtype_is_float(p->rt) && !kn_dtype_is_float(in) ? p->rt : in;
  p->ct = computing(want, logic, gr_vkx_binary_kernel(x, op->code, KN_FLOAT16));
  return gr_vkx_binary_kernel(x, op->code, p->ct);
}

static bool plan_unary(struct gr_vk_exec *x, int code, const gr_val *a, dtype_plan *p) {
  kn_dtype dt;
  if (!gr_vkx_tensor_dtype(a, &dt)) return false;
  p->nconv = 1;
  p->rt = kn_unop_result((kn_unop)code, dt);
  bool logic = code == KN_NOT;
  kn_dtype want = !logic && kn_dtype_is_float(p->rt) && !kn_dtype_is_float(dt) ? p->rt : dt;
  p->ct = computing(want, logic, gr_vkx_unary_kernel(x, code, KN_FLOAT16));
  return gr_vkx_unary_kernel(x, code, p->ct);
}

/* where(c, a, b) with a and b tensors of different dtypes (a 0-d one next to an array
 * by NumPy's kind rule): both become the promoted dtype, which the kernel copies as
 * it is. Python numbers stay with run_where (a weak scalar that fits). */
static bool plan_where(const gr_val *args, dtype_plan *p) {
  kn_dtype c, da, db;
  if (!gr_vkx_tensor_dtype(&args[0], &c) || c != KN_BOOL || !gr_vkx_tensor_dtype(&args[1], &da) ||
      !gr_vkx_tensor_dtype(&args[2], &db))
    return false;
  operand_dtype(&args[1], &args[2], &da);
  operand_dtype(&args[2], &args[1], &db);
  *p = (dtype_plan){.first = 1, .nconv = 2, .ct = kn_promote(da, db), .rt = kn_promote(da, db)};
  return true;
}

/* STAGD_VK_F16_CAST set (and not "0"): float16 reductions and softmax through float32 */
static bool f16_cast_forced(void) {
  static atomic_int forced = -1;
  return kn_vk_env_flag("STAGD_VK_F16_CAST", &forced);
}

static bool plan_reduce(const gr_op *op, const gr_val *a, dtype_plan *p) {
  kn_dtype dt;
  if (!gr_vkx_tensor_dtype(a, &dt) || (dt != KN_BOOL && dt != KN_FLOAT16)) return false;
  if (dt == KN_FLOAT16 && !f16_cast_forced()) return false;
  p->nconv = 1;
  p->ct = computing(dt, false, false);
  p->rt = kn_reduce_result((kn_reduce_op)op->code, dt);
  return true;
}

static bool plan_softmax(const gr_val *a, dtype_plan *p) {
  kn_dtype dt;
  if (!gr_vkx_tensor_dtype(a, &dt) || dt != KN_FLOAT16 || !f16_cast_forced()) return false;
  *p = (dtype_plan){.nconv = 1, .ct = KN_FLOAT32, .rt = KN_FLOAT16};
  return true;
}

/* The plan for op on args; false when the recorder takes them as they are. */
static bool plan_for(struct gr_vk_exec *x, const gr_op *op, const gr_val *args, int n,
                     dtype_plan *p) {
  if (!kn_vk_cast_supported(x->vk)) return false;
  gr_op_family f = op->family;
  bool ok = false;
  if (f == GR_FAM_BINARY && n == 2) ok = plan_binary(x, op, args, p);
  else if (f == GR_FAM_BINARY && n == 1) ok = plan_unary(x, KN_NEG, &args[0], p);
  else if (f == GR_FAM_UNARY && n == 1) ok = plan_unary(x, op->code, &args[0], p);
  else if (f == GR_FAM_REDUCE && n >= 1) ok = plan_reduce(op, &args[0], p);
  else if (f == GR_FAM_SOFTMAX && n >= 1) ok = plan_softmax(&args[0], p);
  else if (f == GR_FAM_WHERE && n == 3) ok = plan_where(args, p);
  if (!ok) return false;
  for (int i = p->first; i < p->first + p->nconv; i++) { /* anything to convert? */
    kn_dtype dt;
    if (!gr_vkx_tensor_dtype(&args[i], &dt) || dt != p->ct) return true;
  }
  return false;
}

sg_code gr_vkx_cast_to(struct gr_vk_exec *x, gr_dtensor *d, kn_dtype dt, gr_dtensor **out,
                       sg_error *err) {
  gr_dtensor *r;
  kn_vk_batch *bt;
  sg_code rc = gr_vkx_new_output(x, dt, d->ndim, d->shape, &r, err);
  if (rc) return rc;
  if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
    rc = kn_vk_cast(bt, (kn_vk_elem)gr_vkx_elem_of(d->dtype), (kn_vk_elem)gr_vkx_elem_of(dt),
                    d->db->buf, r->db->buf, r->size, err);
  if (rc) {
    gr_vkx_dt_release(r);
    return rc;
  }
  *out = r;
  return SG_OK;
}

/* v as a device tensor of dtype dt, converted on the device (a host tensor is uploaded
 * in its own dtype first; a Python number is uploaded as a 0-d tensor of dt). The
 * caller releases *out. */
static sg_code operand_cast(struct gr_vk_exec *x, const gr_val *v, kn_dtype dt, gr_dtensor **out,
                            sg_error *err) {
  kn_dtype own;
  if (!gr_vkx_tensor_dtype(v, &own)) return gr_vkx_upload(x, v, dt, out, err);
  gr_dtensor *d;
  bool tmp;
  sg_code rc = gr_vkx_operand_as(x, v, own, &d, &tmp, err);
  if (rc) return rc;
  if (own == dt) {
    if (!tmp) d->rc++;
    *out = d;
    return SG_OK;
  }
  rc = gr_vkx_cast_to(x, d, dt, out, err);
  if (tmp) gr_vkx_dt_release(d);
  return rc;
}

sg_code gr_vkx_dtype_run(gr_ctx *ctx, const gr_op *op, const gr_vk_op *v, gr_val *args, int n,
                         gr_val *out, bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  dtype_plan p = {0};
  gr_val conv[4];
  if (n > 4 || !plan_for(x, op, args, n, &p)) return v->run(ctx, op, args, n, out, done, err);
  gr_dtensor *tmp[2] = {0};
  sg_code rc = SG_OK;
  memcpy(conv, args, sizeof(gr_val) * (size_t)n);
  for (int i = 0; i < p.nconv && !rc; i++)
    if (!(rc = operand_cast(x, &args[p.first + i], p.ct, &tmp[i], err))) {
      conv[p.first + i].tag = GV_DEVICE;
      conv[p.first + i].u.d = tmp[i];
    }
  if (!rc) rc = v->run(ctx, op, conv, n, out, done, err);
  if (!rc && *done && out->tag == GV_DEVICE && out->u.d->dtype != p.rt) {
    gr_dtensor *r;
    rc = gr_vkx_cast_to(x, out->u.d, p.rt, &r, err);
    gr_vkx_dt_release(out->u.d);
    if (rc) {
      out->tag = GV_NONE;
      *done = false;
    } else {
      out->u.d = r;
    }
  }
  for (int i = 0; i < 2; i++)
    if (tmp[i]) gr_vkx_dt_release(tmp[i]);
  return rc;
}
#endif
