// SPDX-License-Identifier: Apache-2.0
/*
 * exec_vulkan_arith.c — the Vulkan executor's recorders for arithmetic (binary and
 * unary elementwise ops, comparisons), reductions, softmax, matmul (the variant the
 * device's plan picks), reshape and transpose.
 */
#include <math.h>
#include <string.h>

#include "gr_vulkan.h"

#ifdef GR_HAVE_VULKAN
#include "exec_vulkan_int.h"

int gr_vkx_binop(int code) {
  switch (code) {
  case KN_ADD: return KN_VK_ADD;
  case KN_SUB: return KN_VK_SUB;
  case KN_MUL: return KN_VK_MUL;
  case KN_DIV: return KN_VK_DIV;
  case KN_POW: return KN_VK_POW;
  case KN_FLOORDIV: return KN_VK_FLOORDIV;
  case KN_MOD: return KN_VK_MOD;
  case KN_MAXIMUM: return KN_VK_MAXIMUM;
  case KN_MINIMUM: return KN_VK_MINIMUM;
  default: return -1;
  }
}

/* comparisons and logic ops (bool results): the compare kernels */
static int vk_cmpop(int code) {
  switch (code) {
  case KN_EQ: return KN_VK_EQ;
  case KN_NE: return KN_VK_NE;
  case KN_LT: return KN_VK_LT;
  case KN_LE: return KN_VK_LE;
  case KN_GT: return KN_VK_GT;
  case KN_GE: return KN_VK_GE;
  case KN_AND: return KN_VK_AND;
  case KN_OR: return KN_VK_OR;
  default: return -1;
  }
}

/* The element type of the typed kernels for dt on this device; -1 for float16 (a
 * storage type: exec_vulkan_dtype.c computes it in float32) and what the device lacks.
 * Bool passes: only the compare kernels take it (run_binary / run_unary check). */
static int arith_elem(struct gr_vk_exec *x, kn_dtype dt) {
  int et = gr_vkx_elem_of(dt);
  return et < 0 || et == KN_VK_F16 || !kn_vk_elem_supported(x->vk, (kn_vk_elem)et) ? -1 : et;
}

/* arith_elem for the kernels with float16 variants (binary_f16, unary_f16, compare_f16,
 * reduce_f16, argmax_f16: float32 arithmetic between exact conversions) */
static int elementwise_elem(struct gr_vk_exec *x, kn_dtype dt) {
  return dt == KN_FLOAT16 ? KN_VK_F16 : arith_elem(x, dt);
}

bool gr_vkx_binary_kernel(struct gr_vk_exec *x, int code, kn_dtype dt) {
  int et = elementwise_elem(x, dt), vop = gr_vkx_binop(code);
  kn_dtype rt = kn_binop_result((kn_binop)code, dt, dt);
  if (et < 0) return false;
  if (vk_cmpop(code) >= 0) return rt == KN_BOOL;
  return vop >= 0 && kn_vk_binary_supported((kn_vk_elem)et, (kn_vk_binop)vop) && rt == dt;
}

static sg_code run_binary(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                          bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  if (n == 1) /* unary minus */
    return gr_vk_unary.run(ctx, gr_op_lookup("neg"), args, 1, out, done, err);
  int vop = gr_vkx_binop(op->code), cop = vk_cmpop(op->code);
  const gr_val *a = &args[0], *b = &args[1];
  kn_dtype dt, dt2;
  bool ka = gr_vkx_tensor_dtype(a, &dt), kb = gr_vkx_tensor_dtype(b, &dt2);
  if (!ka && !kb) return SG_OK;
  if (!ka) dt = dt2;
  if (ka && kb && dt != dt2) return SG_OK; /* mixed dtypes promote: CPU */
  if ((!ka && !gr_vkx_weak_scalar_fits(a, dt)) || (!kb && !gr_vkx_weak_scalar_fits(b, dt)))
    return SG_OK;
  int et = gr_vkx_elem_of(dt);
  if (!gr_vkx_binary_kernel(x, op->code, dt)) return SG_OK;
  kn_dtype rt = kn_binop_result((kn_binop)op->code, dt, dt);
  gr_dtensor *da, *db, *r = NULL;
  bool ta, tb;
  sg_code rc = gr_vkx_operand_as(x, a, dt, &da, &ta, err);
  if (rc) return rc;
  rc = gr_vkx_operand_as(x, b, dt, &db, &tb, err);
  if (rc) {
    if (ta) gr_vkx_dt_release(da);
    return rc;
  }
  kn_vk_shape as = gr_vkx_vshape(da), bs = gr_vkx_vshape(db), os;
  kn_vk_batch *bt;
  if (kn_vk_broadcast_shape(&as, &bs, &os, NULL) != SG_OK) {
    rc = SG_OK; /* let the CPU kernel report the mismatch */
  } else if (!(rc = gr_vkx_new_output(x, rt, os.ndim, os.dims, &r, err))) {
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = cop >= 0 ? kn_vk_compare(bt, (kn_vk_elem)et, (kn_vk_cmpop)cop, da->db->buf, &as,
                                    db->db->buf, &bs, r->db->buf, err)
                    : kn_vk_binary_typed(bt, (kn_vk_elem)et, (kn_vk_binop)vop, da->db->buf, &as,
                                         db->db->buf, &bs, r->db->buf, err);
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  if (tb) gr_vkx_dt_release(db);
  return rc;
}

int gr_vkx_unop(int code) {
  switch (code) {
  case KN_NEG: return KN_VK_NEG;
  case KN_ABS: return KN_VK_ABS;
  case KN_EXP: return KN_VK_EXP;
  case KN_LOG: return KN_VK_LOG;
  case KN_SQRT: return KN_VK_SQRT;
  case KN_TANH: return KN_VK_TANH;
  case KN_SIGMOID: return KN_VK_SIGMOID;
  case KN_RELU: return KN_VK_RELU;
  case KN_SIN: return KN_VK_SIN;
  case KN_COS: return KN_VK_COS;
  default: return -1;
  }
}

bool gr_vkx_unary_kernel(struct gr_vk_exec *x, int code, kn_dtype dt) {
  int et = elementwise_elem(x, dt), vop = gr_vkx_unop(code);
  if (et < 0) return false;
  if (code == KN_NOT) return true;
  return vop >= 0 && kn_vk_unary_supported((kn_vk_elem)et, (kn_vk_unop)vop) &&
         kn_unop_result((kn_unop)code, dt) == dt;
}

static sg_code run_unary(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                         bool *done, sg_error *err) {
  (void)n;
  struct gr_vk_exec *x = gr_vkx(ctx);
  int vop = gr_vkx_unop(op->code);
  bool is_not = op->code == KN_NOT;
  kn_dtype dt;
  if ((vop < 0 && !is_not) || !gr_vkx_tensor_dtype(&args[0], &dt)) return SG_OK;
  if (!gr_vkx_unary_kernel(x, op->code, dt)) return SG_OK;
  int et = gr_vkx_elem_of(dt);
  kn_dtype rt = kn_unop_result((kn_unop)op->code, dt);
  gr_dtensor *da, *r;
  bool ta;
  sg_code rc = gr_vkx_operand_as(x, &args[0], dt, &da, &ta, err);
  if (rc) return rc;
  kn_vk_batch *bt;
  if (!(rc = gr_vkx_new_output(x, rt, da->ndim, da->shape, &r, err))) {
    kn_vk_shape s = gr_vkx_vshape(da);
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = is_not ? kn_vk_compare(bt, (kn_vk_elem)et, KN_VK_NOT, da->db->buf, &s, NULL, NULL,
                                  r->db->buf, err)
                  : kn_vk_unary_typed(bt, (kn_vk_elem)et, (kn_vk_unop)vop, da->db->buf,
                                      r->db->buf, r->size, err);
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  return rc;
}

/* r *= scale in place (a one-element operand), r of float32 or float64 */
static sg_code scale_in_place(struct gr_vk_exec *x, kn_vk_batch *bt, gr_dtensor *r, double scale,
                              sg_error *err) {
  gr_val v = gv_float(scale);
  gr_dtensor *sc;
  sg_code rc = gr_vkx_upload(x, &v, r->dtype, &sc, err);
  if (rc) return rc;
  kn_vk_shape rs = gr_vkx_vshape(r), ss = {.ndim = 0};
  rc = kn_vk_binary_typed(bt, r->dtype == KN_FLOAT64 ? KN_VK_F64 : KN_VK_F32, KN_VK_MUL,
                          r->db->buf, &rs, sc->db->buf, &ss, r->db->buf, err);
  gr_vkx_dt_release(sc);
  return rc;
}

bool gr_vkx_reduce_view(const gr_val *a, bool has_axis, int64_t *axis, kn_vk_shape *s, int64_t *oshape, int *ond,
                        int64_t *len, int64_t *nout) {
  kn_dtype dt;
  int nd;
  const int64_t *shape;
  if (!gr_vkx_tensor_meta(a, &dt, &nd, &shape)) return false;
  *s = (kn_vk_shape){.ndim = nd};
  int64_t size = 1;
  for (int i = 0; i < nd; i++) size *= s->dims[i] = shape[i];
  *ond = 0;
  if (!has_axis) {
    *s = (kn_vk_shape){.ndim = 1, .dims = {size}};
    *axis = 0;
  } else {
    if (*axis < 0) *axis += nd;
    if (*axis < 0 || *axis >= nd) return false; /* the CPU kernel reports it */
    for (int i = 0; i < nd; i++)
      if (i != *axis) oshape[(*ond)++] = shape[i];
  }
  *len = s->dims[*axis];
  *nout = 1;
  for (int i = 0; i < *ond; i++) *nout *= oshape[i];
  return true;
}

/* sum / mean / max / min / argmax along one axis or over everything (bool inputs arrive
 * converted by exec_vulkan_dtype.c; float16 has its own kernels: reduce_f16, argmax_f16);
 * an empty reduced axis gives sum 0 and mean NaN here, and max/min/argmax of nothing go
 * to the CPU kernel, which reports the error. The mean of float32 and float16 is one
 * dispatch (KN_VK_REDUCE_MEAN), that of float64 a sum and a scaling. */
static sg_code run_reduce(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                          bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  int code = op->code;
  kn_dtype dt;
  if (!gr_vkx_tensor_dtype(&args[0], &dt) || dt == KN_BOOL) return SG_OK;
  int et = elementwise_elem(x, dt);
  if (et < 0) return SG_OK;
  kn_dtype rt = kn_reduce_result((kn_reduce_op)code, dt);
  bool int_mean = code == KN_MEAN && !kn_dtype_is_float(dt);
  if ((int_mean || (dt == KN_INT32 && code == KN_SUM)) && !kn_vk_cast_supported(x->vk))
    return SG_OK;
  bool has_axis = n > 1 && args[1].tag != GV_NONE;
  int64_t axis = 0;
  if (has_axis && (args[1].tag != GV_INT)) return SG_OK;
  if (has_axis) axis = args[1].u.i;
  kn_vk_shape s;
  int64_t oshape[KN_MAX_DIMS], len, nout;
  int ond;
  if (!gr_vkx_reduce_view(&args[0], has_axis, &axis, &s, oshape, &ond, &len, &nout)) return SG_OK;
  if (len == 0 && nout > 0 && code != KN_SUM && code != KN_MEAN) return SG_OK;
  gr_dtensor *da;
  bool ta;
  sg_code rc = gr_vkx_operand_as(x, &args[0], dt, &da, &ta, err);
  if (rc) return rc;
  gr_dtensor *r;
  kn_vk_batch *bt;
  if (!(rc = gr_vkx_new_output(x, rt, ond, oshape, &r, err))) {
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err))) {
      if (len == 0) { /* sum of nothing is 0, mean of nothing NaN (like the CPU) */
        double v = code == KN_SUM ? 0.0 : (double)NAN;
        uint64_t bits;
        if (rt == KN_FLOAT32) {
          float f = (float)v;
          uint32_t b32;
          memcpy(&b32, &f, 4);
          bits = b32;
        } else if (rt == KN_FLOAT64) {
          memcpy(&bits, &v, 8);
        } else if (rt == KN_FLOAT16) { /* two halves a word: 0 or the quiet NaN 0x7e00 */
          bits = code == KN_SUM ? 0 : 0x7e007e00u;
        } else {
          bits = 0;
        }
        rc = kn_vk_fill(bt, r->db->buf, gr_vkx_bytes(rt, r->size), bits, kn_dtype_size(rt) == 8, err);
      } else if (code == KN_ARGMAX) {
        rc = kn_vk_argmax(bt, (kn_vk_elem)et, da->db->buf, &s, (int)axis, r->db->buf, err);
      } else if (int_mean) {
        /* NumPy's mean of integers: the int64 sum, as float64, times 1/len */
        gr_dtensor *sum;
        if (!(rc = gr_vkx_new_output(x, dt == KN_INT32 ? KN_INT64 : dt, ond, oshape, &sum, err))) {
          if (!(rc = kn_vk_reduce_typed(bt, (kn_vk_elem)et, KN_VK_REDUCE_SUM, da->db->buf, &s,
                                        (int)axis, sum->db->buf, err)) &&
              !(rc = kn_vk_cast(bt, KN_VK_I64, KN_VK_F64, sum->db->buf, r->db->buf, r->size, err)))
            rc = scale_in_place(x, bt, r, 1.0 / (double)len, err);
          gr_vkx_dt_release(sum);
        }
      } else {
        bool mean_kernel = et == KN_VK_F32 || et == KN_VK_F16;
        kn_vk_reduce_op vop = code == KN_MAX                    ? KN_VK_REDUCE_MAX
                              : code == KN_MIN                  ? KN_VK_REDUCE_MIN
                              : code == KN_MEAN && mean_kernel ? KN_VK_REDUCE_MEAN
                                                                : KN_VK_REDUCE_SUM;
        rc = kn_vk_reduce_typed(bt, (kn_vk_elem)et, vop, da->db->buf, &s, (int)axis, r->db->buf,
                                err);
        if (!rc && code == KN_MEAN && !mean_kernel)
          rc = scale_in_place(x, bt, r, 1.0 / (double)len, err);
      }
    }
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  return rc;
}

/* softmax / log_softmax (row code 1) along any axis, float32, float64 or float16 */
static sg_code run_softmax(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                           bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  kn_dtype dt;
  if (!gr_vkx_tensor_dtype(&args[0], &dt) || !kn_dtype_is_float(dt)) return SG_OK;
  kn_vk_elem el = (kn_vk_elem)gr_vkx_elem_of(dt);
  if (!kn_vk_elem_supported(x->vk, el)) return SG_OK;
  const gr_val *a = &args[0];
  int nd = a->tag == GV_DEVICE ? a->u.d->ndim : a->u.t->ndim;
  if (nd == 0) return SG_OK;
  int64_t axis = nd - 1;
  if (n > 1) {
    if (args[1].tag != GV_INT) return SG_OK;
    axis = args[1].u.i < 0 ? args[1].u.i + nd : args[1].u.i;
    if (axis < 0 || axis >= nd) return SG_OK; /* the CPU kernel reports it */
  }
  gr_dtensor *da, *r;
  bool ta;
  sg_code rc = gr_vkx_operand_as(x, a, dt, &da, &ta, err);
  if (rc) return rc;
  int64_t outer = 1, inner = 1, len = da->shape[axis];
  for (int i = 0; i < axis; i++) outer *= da->shape[i];
  for (int i = (int)axis + 1; i < nd; i++) inner *= da->shape[i];
  kn_vk_batch *bt;
  if (!(rc = gr_vkx_new_output(x, dt, da->ndim, da->shape, &r, err))) {
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_softmax_typed(bt, el, da->db->buf, outer, len, inner, op->code != 0, r->db->buf, err);
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  return rc;
}

/* NumPy matmul: 1-d operands (a vector is a 1-row / 1-column matrix whose dimension is
 * dropped from the result) and batches whose leading dims broadcast, where each
 * operand's batch is either the whole broadcast batch or a single matrix (stride 0);
 * other broadcasts run on the host. float32, float64, int32, int64, float16 (the only
 * float16 kernel: float32 accumulation). The matmul_tn / _nt / _tt rows (op->code) read
 * an operand transposed: the kernel swaps its index arithmetic (kn_vk_matmul_trans). */
_Static_assert((int)KN_VK_MATMUL_TRANS_A == (int)KN_MATMUL_TRANS_A && (int)KN_VK_MATMUL_TRANS_B == (int)KN_MATMUL_TRANS_B,
               "one encoding of the transpose flags");
bool gr_vkx_matmul_plan(struct gr_vk_exec *x, const gr_op *op, const gr_val *args, gr_vkx_mm *mm) {
  bool tra = op->code & KN_MATMUL_TRANS_A, trb = op->code & KN_MATMUL_TRANS_B;
  const gr_val *a = &args[0], *b = &args[1];
  kn_dtype dt, dt2;
  if (!gr_vkx_tensor_dtype(a, &dt) || !gr_vkx_tensor_dtype(b, &dt2) || dt != dt2) return false;
  int et = dt == KN_FLOAT16 ? KN_VK_F16 : gr_vkx_elem_of(dt);
  if (et < 0 || et == KN_VK_BOOL || !kn_vk_elem_supported(x->vk, (kn_vk_elem)et)) return false;
  if (et == KN_VK_F16 && /* a device without shaderFloat16: the CPU kernel */
      !kn_vk_matmul_available(kn_vk_context_info(x->vk), KN_VK_F16, KN_VK_MATMUL_TILED, NULL))
    return false;
  int na = a->tag == GV_DEVICE ? a->u.d->ndim : a->u.t->ndim;
  int nb = b->tag == GV_DEVICE ? b->u.d->ndim : b->u.t->ndim;
  const int64_t *sa = a->tag == GV_DEVICE ? a->u.d->shape : a->u.t->shape;
  const int64_t *sb = b->tag == GV_DEVICE ? b->u.d->shape : b->u.t->shape;
  if (na == 0 || nb == 0 || (tra && na < 2) || (trb && nb < 2)) return false; /* the CPU's error */
  int64_t m = tra ? sa[na - 1] : na == 1 ? 1 : sa[na - 2], k = tra ? sa[na - 2] : sa[na - 1];
  int64_t kb = trb ? sb[nb - 1] : nb == 1 ? sb[0] : sb[nb - 2];
  int64_t nn = trb ? sb[nb - 2] : nb == 1 ? 1 : sb[nb - 1];
  if (k != kb) return false; /* the CPU kernel reports the mismatch */
  /* batch dims: a's sa[0..na-2), b's sb[0..nb-2), broadcast */
  int bna = na > 2 ? na - 2 : 0, bnb = nb > 2 ? nb - 2 : 0;
  int bn = bna > bnb ? bna : bnb;
  int64_t bshape[KN_MAX_DIMS], batch = 1, pa = 1, pb = 1;
  for (int i = 0; i < bn; i++) {
    int ia = i - (bn - bna), ib = i - (bn - bnb);
    int64_t da_ = ia >= 0 ? sa[ia] : 1, db_ = ib >= 0 ? sb[ib] : 1;
    if (da_ != db_ && da_ != 1 && db_ != 1) return false;
    bshape[i] = da_ == 1 ? db_ : da_;
    batch *= bshape[i];
    pa *= da_;
    pb *= db_;
  }
  if ((pa != 1 && pa != batch) || (pb != 1 && pb != batch)) return false;
  for (int i = 0; i < bn; i++) { /* a partial broadcast (e.g. [2,1] with [1,3]) */
    int ia = i - (bn - bna), ib = i - (bn - bnb);
    if (pa != 1 && (ia < 0 || sa[ia] != bshape[i])) return false;
    if (pb != 1 && (ib < 0 || sb[ib] != bshape[i])) return false;
  }
  *mm = (gr_vkx_mm){.a = a, .b = b, .dt = dt, .et = et, .trans = op->code, .m = m, .k = k, .n = nn,
                    .batch = batch, .stride_a = pa == 1 ? 0 : m * k, .stride_b = pb == 1 ? 0 : k * nn};
  for (int i = 0; i < bn; i++) mm->oshape[mm->ond++] = bshape[i];
  if (na > 1) mm->oshape[mm->ond++] = m;
  if (nb > 1) mm->oshape[mm->ond++] = nn;
  return true;
}

sg_code gr_vkx_matmul_record(struct gr_vk_exec *x, const gr_vkx_mm *mm, const kn_vk_epilogue *epi,
                             gr_val *out, bool *done, sg_error *err) {
  gr_dtensor *da, *db, *r;
  bool ta, tb;
  sg_code rc = gr_vkx_operand_as(x, mm->a, mm->dt, &da, &ta, err);
  if (rc) return rc;
  if ((rc = gr_vkx_operand_as(x, mm->b, mm->dt, &db, &tb, err))) {
    if (ta) gr_vkx_dt_release(da);
    return rc;
  }
  kn_vk_batch *bt;
  if (!(rc = gr_vkx_new_output(x, mm->dt, mm->ond, mm->oshape, &r, err))) {
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err))) {
      if (epi)
        rc = kn_vk_matmul_epilogue(bt, mm->trans, da->db->buf, db->db->buf, r->db->buf, mm->batch, mm->m, mm->n,
                                   mm->k, mm->stride_a, mm->stride_b, epi, err);
      else if (mm->k == 0 && mm->dt != KN_FLOAT16) /* an empty sum: zeros (float16: the kernel writes them) */
        rc = kn_vk_fill(bt, r->db->buf, gr_vkx_bytes(mm->dt, r->size), 0, false, err);
      else
        rc = kn_vk_matmul_trans(bt, (kn_vk_elem)mm->et, mm->trans, da->db->buf, db->db->buf, r->db->buf,
                                mm->batch, mm->m, mm->n, mm->k, mm->stride_a, mm->stride_b, err);
    }
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  if (tb) gr_vkx_dt_release(db);
  return rc;
}

static sg_code run_matmul(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                          bool *done, sg_error *err) {
  (void)n;
  struct gr_vk_exec *x = gr_vkx(ctx);
  gr_vkx_mm mm;
  return gr_vkx_matmul_plan(x, op, args, &mm) ? gr_vkx_matmul_record(x, &mm, NULL, out, done, err) : SG_OK;
}

static sg_code run_reshape(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                           bool *done, sg_error *err) {
  if (args[0].tag != GV_DEVICE) { /* a host tensor's reshape is a host view: no kernel */
    sg_code rc = gr_cpu_kernel(op)(ctx, op, args, n, out, err);
    *done = rc == SG_OK;
    return rc;
  }
  gr_dtensor *d = args[0].u.d;
  int nd;
  int64_t sh[KN_MAX_DIMS];
  sg_error e = SG_ERROR_INIT;
  if (gr_shape_arg(op, &args[1], &nd, sh, &e)) {
    sg_error_clear(&e);
    return SG_OK;
  }
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < nd; i++) {
    if (sh[i] == -1 && infer < 0) infer = i;
    else if (sh[i] < 0) return SG_OK;
    else known *= sh[i];
  }
  if (infer >= 0) {
    if (known == 0 || d->size % known) return SG_OK;
    sh[infer] = d->size / known;
    known *= sh[infer];
  }
  if (known != d->size) return SG_OK; /* the CPU kernel reports the mismatch */
  gr_dtensor *r = gr_vkx_dt_new(gr_vkx(ctx), d->db, d->dtype, nd, sh);
  d->db->rc++;
  out->tag = GV_DEVICE;
  out->u.d = r;
  *done = true;
  return SG_OK;
}

static sg_code run_transpose(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                             bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  kn_dtype dt;
  if (!gr_vkx_tensor_dtype(&args[0], &dt) || gr_vkx_elem_of(dt) < 0) return SG_OK;
  int nd = args[0].tag == GV_DEVICE ? args[0].u.d->ndim : args[0].u.t->ndim;
  int perm[KN_MAX_DIMS];
  if (n > 1) {
    int64_t sh[KN_MAX_DIMS];
    int np_;
    sg_error e = SG_ERROR_INIT;
    bool bad = gr_shape_arg(op, &args[1], &np_, sh, &e) != SG_OK || np_ != nd;
    sg_error_clear(&e);
    if (bad) return SG_OK; /* the CPU kernel reports it */
    bool seen[KN_MAX_DIMS] = {0};
    for (int i = 0; i < nd; i++) {
      int64_t ax = sh[i] < 0 ? sh[i] + nd : sh[i];
      if (ax < 0 || ax >= nd || seen[ax]) return SG_OK;
      seen[ax] = true;
      perm[i] = (int)ax;
    }
  } else {
    for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
  }
  gr_dtensor *da, *r;
  bool ta;
  sg_code rc = gr_vkx_operand_as(x, &args[0], dt, &da, &ta, err);
  if (rc) return rc;
  int64_t oshape[KN_MAX_DIMS];
  for (int i = 0; i < nd; i++) oshape[i] = da->shape[perm[i]];
  kn_vk_batch *bt;
  if (!(rc = gr_vkx_new_output(x, dt, nd, oshape, &r, err))) {
    kn_vk_shape s = gr_vkx_vshape(da);
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_transpose(bt, da->db->buf, &s, perm, kn_dtype_size(dt), r->db->buf, err);
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  return rc;
}

const gr_vk_op gr_vk_binary = {"binary", run_binary};
const gr_vk_op gr_vk_transpose = {"strided_copy", run_transpose};
const gr_vk_op gr_vk_unary = {"unary", run_unary};
const gr_vk_op gr_vk_reduce = {"reduce", run_reduce};
const gr_vk_op gr_vk_softmax = {"softmax", run_softmax};
const gr_vk_op gr_vk_matmul = {"matmul", run_matmul};
const gr_vk_op gr_vk_reshape = {"", run_reshape};
#endif
