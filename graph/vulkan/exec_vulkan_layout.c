// SPDX-License-Identifier: Apache-2.0
/*
 * exec_vulkan_layout.c — the Vulkan executor's recorders for where, cast, the layout
 * ops (concat, stack, slice, slice_update, gather, one_hot) and the constructors (zeros, ones, fill,
 * arange). Each returns with *done false (SG_OK) whenever its case is not covered —
 * mixed dtypes of where, bad arguments (the CPU kernel then reports them with its
 * message) — and the caller runs the CPU kernel. Elements of every dtype (1, 2, 4 or 8
 * bytes) are copied as bits.
 * Indices (gather, one_hot) are checked on the host, like the CPU kernel does, then
 * uploaded as uint32: an index tensor computed on the device is read back first.
 */
#include <math.h>
#include <string.h>

#include "gr_vulkan.h"

#ifdef GR_HAVE_VULKAN
#include "exec_vulkan_int.h"

/* where(c, a, b): c a bool tensor; a and b tensors of one dtype (or one
 * of them a Python number that keeps the other's dtype). */
static sg_code run_where(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                         bool *done, sg_error *err) {
  (void)op, (void)n;
  struct gr_vk_exec *x = gr_vkx(ctx);
  kn_dtype ct, dt, dt2;
  if (!gr_vkx_tensor_dtype(&args[0], &ct) || ct != KN_BOOL) return SG_OK;
  bool ka = gr_vkx_tensor_dtype(&args[1], &dt), kb = gr_vkx_tensor_dtype(&args[2], &dt2);
  if (!ka && !kb) return SG_OK;
  if (!ka) dt = dt2;
  if (ka && kb && dt != dt2) return SG_OK;
  if ((!ka && !gr_vkx_weak_scalar_fits(&args[1], dt)) ||
      (!kb && !gr_vkx_weak_scalar_fits(&args[2], dt)))
    return SG_OK;
  size_t es = kn_dtype_size(dt);
  gr_dtensor *d[3] = {0}, *r;
  bool tmp[3] = {0};
  sg_code rc = SG_OK;
  for (int i = 0; i < 3 && !rc; i++)
    rc = gr_vkx_operand_as(x, &args[i], i ? dt : KN_BOOL, &d[i], &tmp[i], err);
  kn_vk_shape cs, as, bs, ab, os;
  if (!rc) {
    cs = gr_vkx_vshape(d[0]), as = gr_vkx_vshape(d[1]), bs = gr_vkx_vshape(d[2]);
    if (kn_vk_broadcast_shape(&as, &bs, &ab, NULL) || kn_vk_broadcast_shape(&cs, &ab, &os, NULL) ||
        os.ndim > 6)
      goto cleanup; /* the CPU kernel reports a mismatch */
    kn_vk_batch *bt;
    if (!(rc = gr_vkx_new_output(x, dt, os.ndim, os.dims, &r, err))) {
      if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
        rc = kn_vk_where(bt, d[0]->db->buf, &cs, d[1]->db->buf, &as, d[2]->db->buf, &bs, es,
                         r->db->buf, err);
      rc = gr_vkx_finish(r, rc, out, done);
    }
  }
cleanup:
  for (int i = 0; i < 3; i++)
    if (tmp[i] && d[i]) gr_vkx_dt_release(d[i]);
  return rc;
}

/* cast(a, DTYPE) between any two dtypes (float16 rounds like kn_f32_to_f16) */
static sg_code run_cast(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                        bool *done, sg_error *err) {
  (void)op, (void)n;
  struct gr_vk_exec *x = gr_vkx(ctx);
  kn_dtype from, to;
  if (!gr_vkx_tensor_dtype(&args[0], &from) || args[1].tag != GV_STR ||
      !kn_dtype_parse(args[1].u.s, &to))
    return SG_OK;
  int ef = gr_vkx_elem_of(from), et = gr_vkx_elem_of(to);
  if (ef < 0 || et < 0 || !kn_vk_cast_supported(x->vk)) return SG_OK;
  gr_dtensor *da, *r;
  bool ta;
  sg_code rc = gr_vkx_operand_as(x, &args[0], from, &da, &ta, err);
  if (rc) return rc;
  kn_vk_batch *bt;
  if (!(rc = gr_vkx_new_output(x, to, da->ndim, da->shape, &r, err))) {
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_cast(bt, (kn_vk_elem)ef, (kn_vk_elem)et, da->db->buf, r->db->buf, r->size, err);
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  return rc;
}

static void row_major(int nd, const int64_t *shape, int64_t *stride) {
  int64_t st = 1;
  for (int i = nd - 1; i >= 0; i--) {
    stride[i] = st;
    st *= shape[i];
  }
}

static int ndim_of(const gr_val *v) { return v->tag == GV_DEVICE ? v->u.d->ndim : v->u.t->ndim; }
static const int64_t *shape_of(const gr_val *v) {
  return v->tag == GV_DEVICE ? v->u.d->shape : v->u.t->shape;
}

/* concat / stack: (OP T1 T2 ... [AXIS]) or (OP (tuple T...) [AXIS]); every input of one
 * dtype. Each input is one strided copy into its place in the output. */
static sg_code run_join(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                        bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  int64_t axis = 0;
  if (n > 1 && args[n - 1].tag == GV_INT) axis = args[n - 1].u.i, n--;
  gr_val *items = args;
  if (n == 1 && args[0].tag == GV_TUPLE) items = args[0].u.o->items, n = args[0].u.o->n;
  bool stack = op->code != 0;
  kn_dtype dt;
  if (n < 1 || !gr_vkx_tensor_dtype(&items[0], &dt)) return SG_OK;
  size_t es = kn_dtype_size(dt);
  int nd = ndim_of(&items[0]);
  int ond = stack ? nd + 1 : nd;
  if (ond == 0 || ond > KN_MAX_DIMS) return SG_OK;
  if (axis < 0) axis += ond;
  if (axis < 0 || axis >= ond) return SG_OK;
  /* every input viewed with ond dims (stack: a length-1 axis inserted) */
  int64_t oshape[KN_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    kn_dtype d;
    if (!gr_vkx_tensor_dtype(&items[i], &d) || d != dt || ndim_of(&items[i]) != nd) return SG_OK;
    int64_t v[KN_MAX_DIMS];
    const int64_t *s = shape_of(&items[i]);
    for (int k = 0, j = 0; k < ond; k++) v[k] = (stack && k == axis) ? 1 : s[j++];
    for (int k = 0; k < ond; k++) {
      if (i == 0) oshape[k] = v[k];
      else if (k == axis) oshape[k] += v[k];
      else if (oshape[k] != v[k]) return SG_OK; /* the CPU kernel reports it */
    }
  }
  gr_dtensor *r;
  sg_code rc = gr_vkx_new_output(x, dt, ond, oshape, &r, err);
  if (rc) return rc;
  int64_t ostride[KN_MAX_DIMS], off = 0;
  row_major(ond, oshape, ostride);
  kn_vk_batch *bt = NULL;
  for (int i = 0; i < n && !rc; i++) {
    gr_dtensor *d;
    bool tmp;
    if ((rc = gr_vkx_operand_as(x, &items[i], dt, &d, &tmp, err))) break;
    kn_vk_shape s = {.ndim = ond};
    for (int k = 0, j = 0; k < ond; k++) s.dims[k] = (stack && k == axis) ? 1 : d->shape[j++];
    int64_t istride[KN_MAX_DIMS];
    row_major(ond, s.dims, istride);
    if (d->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_copy_strided(bt, d->db->buf, &s, 0, istride, r->db->buf, off * ostride[axis],
                              ostride, es, err);
    off += s.dims[axis];
    if (tmp) gr_vkx_dt_release(d);
  }
  return gr_vkx_finish(r, rc, out, done);
}

/* (slice_update X V START STOP [STEP [AXIS]]) after the bounds are resolved: X copied,
 * then V (cast to X's dtype, broadcast: stride 0 on its size-1 / missing dims) copied
 * into the slice by a second strided copy. *done false when V does not fit (the CPU
 * kernel reports it). */
static sg_code slice_update(struct gr_vk_exec *x, gr_dtensor *da, const gr_val *v, kn_dtype dt,
                            const kn_vk_shape *s, int64_t ooff, const int64_t *ostride,
                            gr_val *out, bool *done, sg_error *err) {
  gr_dtensor *dv, *r;
  bool tv;
  int nd = da->ndim;
  kn_dtype vdt;
  bool tensor = v->tag == GV_DEVICE || v->tag == GV_TENSOR, number = gv_is_scalar(v);
  if (!(tensor || number) || (tensor && ndim_of(v) > nd) ||
      (v->tag == GV_DEVICE && (!gr_vkx_tensor_dtype(v, &vdt) || vdt != dt)))
    return SG_OK; /* a device V of another dtype: the CPU kernel casts it */
  /* a host tensor of another dtype is cast before its upload */
  gr_val hv;
  if (v->tag == GV_TENSOR && v->u.t->dtype != dt) {
    kn_tensor *c = kn_cast(v->u.t, dt);
    if (!c) return kn_alloc_error(err);
    hv = gv_tensor(c);
  } else {
    hv = gv_retain(*v);
  }
  sg_code rc = gr_vkx_operand_as(x, &hv, dt, &dv, &tv, err);
  gv_release(hv);
  if (rc) return rc;
  int64_t vstride[KN_MAX_DIMS], full[KN_MAX_DIMS], sv = 1;
  bool fits = true;
  for (int d = nd - 1; d >= 0; d--) {
    int vd = d - (nd - dv->ndim);
    int64_t len = vd >= 0 ? dv->shape[vd] : 1;
    fits = fits && (len == 1 || len == s->dims[d]);
    vstride[d] = len == 1 ? 0 : sv;
    sv *= len;
  }
  row_major(nd, da->shape, full);
  kn_vk_batch *bt = NULL;
  size_t es = kn_dtype_size(dt);
  if (fits && !(rc = gr_vkx_new_output(x, dt, nd, da->shape, &r, err))) {
    kn_vk_shape whole = gr_vkx_vshape(da);
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_copy_strided(bt, da->db->buf, &whole, 0, full, r->db->buf, 0, full, es, err);
    if (!rc && r->size) {
      int64_t cnt = 1;
      for (int d = 0; d < nd; d++) cnt *= s->dims[d];
      if (cnt) rc = kn_vk_copy_strided(bt, dv->db->buf, s, 0, vstride, r->db->buf, ooff, ostride, es, err);
    }
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (tv) gr_vkx_dt_release(dv);
  return rc;
}

/* slice(a, START, STOP [STEP [AXIS]]): one strided copy (negative steps included);
 * slice_update (code 1, V second): the same slice as the destination of V */
static sg_code run_slice(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                         bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  int b = op->code ? 2 : 1; /* where the bounds start */
  int64_t v[4] = {0, 0, 1, 0};
  bool has[2] = {true, true};
  for (int i = b; i < n; i++) {
    if (args[i].tag == GV_NONE && i < b + 2) has[i - b] = false;
    else if (args[i].tag == GV_INT) v[i - b] = args[i].u.i;
    else return SG_OK;
  }
  kn_dtype dt;
  if (!gr_vkx_tensor_dtype(&args[0], &dt)) return SG_OK;
  size_t es = kn_dtype_size(dt);
  int nd = ndim_of(&args[0]);
  int64_t axis = v[3] < 0 ? v[3] + nd : v[3], step = v[2];
  if (nd == 0 || axis < 0 || axis >= nd || step == 0) return SG_OK;
  gr_dtensor *da, *r;
  bool ta;
  sg_code rc = gr_vkx_operand_as(x, &args[0], dt, &da, &ta, err);
  if (rc) return rc;
  int64_t start = v[0], stop = v[1];
  int64_t cnt = kn_slice_adjust(da->shape[axis], &start, has[0], &stop, has[1], step);
  kn_vk_shape s = gr_vkx_vshape(da);
  s.dims[axis] = cnt;
  int64_t istride[KN_MAX_DIMS], ostride[KN_MAX_DIMS];
  row_major(nd, da->shape, istride);
  row_major(nd, s.dims, ostride);
  int64_t ioff = start * istride[axis];
  istride[axis] *= step;
  kn_vk_batch *bt;
  if (op->code) rc = slice_update(x, da, &args[1], dt, &s, ioff, istride, out, done, err);
  else if (!(rc = gr_vkx_new_output(x, dt, nd, s.dims, &r, err))) {
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_copy_strided(bt, da->db->buf, &s, ioff, istride, r->db->buf, 0, ostride, es, err);
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  return rc;
}

/* Host copy of an integer index tensor (a device one is read back) as uint32 values
 * made non-negative for an axis of length len; false when one is out of range (the CPU
 * kernel reports it) or the tensor is not integers. *idx is an int32 tensor holding the
 * bits, the caller releases it. */
static sg_code host_indices(struct gr_vk_exec *x, gr_val *v, int64_t len, kn_tensor **idx,
                            bool *ok, sg_error *err) {
  *ok = false;
  kn_dtype dt;
  if (!gr_vkx_tensor_dtype(v, &dt) || !kn_dtype_is_int(dt)) return SG_OK;
  if (v->tag == GV_DEVICE) {
    sg_code rc = gr_vkx_download(x, v->u.d, err);
    if (rc) return rc;
  }
  const kn_tensor *t = v->tag == GV_DEVICE ? v->u.d->host : v->u.t;
  if (len > (int64_t)UINT32_MAX) return SG_OK;
  kn_tensor *o = kn_tensor_new(KN_INT32, t->ndim, t->shape);
  if (!o) return kn_alloc_error(err);
  for (int64_t j = 0; j < t->size; j++) {
    int64_t i = kn_get_i64(t, j);
    if (i < -len || i >= len) {
      kn_tensor_release(o);
      return SG_OK;
    }
    ((uint32_t *)o->data)[j] = (uint32_t)(i < 0 ? i + len : i);
  }
  *idx = o;
  *ok = true;
  return SG_OK;
}

/* gather(a, IDX [AXIS]) = np.take */
static sg_code run_gather(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                          bool *done, sg_error *err) {
  (void)op;
  struct gr_vk_exec *x = gr_vkx(ctx);
  int64_t axis = 0;
  if (n > 2 && args[2].tag != GV_INT) return SG_OK;
  if (n > 2) axis = args[2].u.i;
  kn_dtype dt;
  if (!gr_vkx_tensor_dtype(&args[0], &dt)) return SG_OK;
  size_t es = kn_dtype_size(dt);
  int nd = ndim_of(&args[0]);
  if (axis < 0) axis += nd;
  if (nd == 0 || axis < 0 || axis >= nd) return SG_OK;
  const int64_t *sa = shape_of(&args[0]);
  int64_t outer = 1, inner = 1, len = sa[axis];
  for (int i = 0; i < axis; i++) outer *= sa[i];
  for (int i = (int)axis + 1; i < nd; i++) inner *= sa[i];
  kn_tensor *idx;
  bool ok;
  sg_code rc = host_indices(x, &args[1], len, &idx, &ok, err);
  if (rc || !ok) return rc;
  int ond = nd - 1 + idx->ndim;
  if (ond > KN_MAX_DIMS || inner == 0) {
    kn_tensor_release(idx);
    return SG_OK;
  }
  int64_t oshape[KN_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < axis; d++) oshape[k++] = sa[d];
  for (int d = 0; d < idx->ndim; d++) oshape[k++] = idx->shape[d];
  for (int d = (int)axis + 1; d < nd; d++) oshape[k++] = sa[d];
  gr_val iv = gv_tensor(idx);
  gr_dtensor *da = NULL, *di = NULL, *r;
  bool ta = false, ti = false;
  kn_vk_batch *bt;
  if (!(rc = gr_vkx_operand_as(x, &args[0], dt, &da, &ta, err)) &&
      !(rc = gr_vkx_operand_as(x, &iv, KN_INT32, &di, &ti, err)) &&
      !(rc = gr_vkx_new_output(x, dt, ond, oshape, &r, err))) {
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_gather(bt, da->db->buf, outer, len, inner, di->db->buf, idx->size, es,
                        r->db->buf, err);
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  if (ti) gr_vkx_dt_release(di);
  kn_tensor_release(idx);
  return rc;
}

/* one_hot(IDX, DEPTH): float32 rows */
static sg_code run_one_hot(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                           bool *done, sg_error *err) {
  (void)op, (void)n;
  struct gr_vk_exec *x = gr_vkx(ctx);
  if (args[1].tag != GV_INT || args[1].u.i <= 0) return SG_OK;
  int64_t depth = args[1].u.i;
  kn_tensor *idx;
  bool ok;
  sg_code rc = host_indices(x, &args[0], depth, &idx, &ok, err);
  if (rc || !ok) return rc;
  if (idx->ndim + 1 > KN_MAX_DIMS) {
    kn_tensor_release(idx);
    return SG_OK;
  }
  int64_t oshape[KN_MAX_DIMS];
  memcpy(oshape, idx->shape, sizeof(int64_t) * (size_t)idx->ndim);
  oshape[idx->ndim] = depth;
  gr_val iv = gv_tensor(idx);
  gr_dtensor *di = NULL, *r;
  bool ti = false;
  kn_vk_batch *bt;
  if (!(rc = gr_vkx_operand_as(x, &iv, KN_INT32, &di, &ti, err)) &&
      !(rc = gr_vkx_new_output(x, KN_FLOAT32, idx->ndim + 1, oshape, &r, err))) {
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_one_hot(bt, di->db->buf, idx->size, depth, r->db->buf, err);
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ti) gr_vkx_dt_release(di);
  kn_tensor_release(idx);
  return rc;
}

/* zeros / ones / fill: the CPU kernel makes one element (dtype and value by its rules),
 * the device repeats its bits */
static sg_code run_fill(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                        bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  int nd;
  int64_t sh[KN_MAX_DIMS];
  sg_error e = SG_ERROR_INIT;
  if (gr_shape_arg(op, &args[0], &nd, sh, &e) || kn_check_shape(nd, sh, &e)) {
    sg_error_clear(&e);
    return SG_OK; /* the CPU kernel reports it */
  }
  gr_val one_args[3];
  memcpy(one_args, args, sizeof(gr_val) * (size_t)(n < 3 ? n : 3));
  one_args[0] = gv_int(1);
  gr_val proto;
  if (gr_cpu_kernel(op)(ctx, op, one_args, n, &proto, &e)) {
    sg_error_clear(&e);
    return SG_OK;
  }
  kn_tensor *p = proto.u.t;
  size_t es = kn_dtype_size(p->dtype);
  sg_code rc = SG_OK;
  {
    uint64_t pattern = 0;
    if (es == 1) pattern = 0x01010101u * *(uint8_t *)p->data;
    else if (es == 2) pattern = 0x00010001u * *(uint16_t *)p->data;
    else memcpy(&pattern, p->data, es);
    gr_dtensor *r;
    kn_vk_batch *bt;
    if (!(rc = gr_vkx_new_output(x, p->dtype, nd, sh, &r, err))) {
      if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
        rc = kn_vk_fill(bt, r->db->buf, gr_vkx_bytes(p->dtype, r->size), pattern, es == 8, err);
      rc = gr_vkx_finish(r, rc, out, done);
    }
  }
  kn_tensor_release(p);
  return rc;
}

/* arange([START] STOP [STEP]) of Python numbers: int64 when all are integers, else
 * float64 (the CPU kernel's rules and formula) */
static sg_code run_arange(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                          bool *done, sg_error *err) {
  (void)op;
  struct gr_vk_exec *x = gr_vkx(ctx);
  double v[3] = {0, 0, 1};
  bool allint = true;
  for (int i = 0; i < n; i++) {
    double d;
    if (args[i].tag == GV_INT) d = (double)args[i].u.i;
    else if (args[i].tag == GV_FLOAT) d = args[i].u.f, allint = false;
    else return SG_OK;
    v[n == 1 ? 1 : i] = d;
  }
  if (v[2] == 0) return SG_OK; /* the CPU kernel reports it */
  double c = ceil((v[1] - v[0]) / v[2]);
  int64_t cnt = c > 0 ? (int64_t)c : 0;
  if (cnt > KN_MAX_ELEMENTS) return SG_OK;
  uint64_t start, step;
  if (allint) {
    int64_t s0 = (int64_t)v[0], s1 = (int64_t)v[2];
    memcpy(&start, &s0, 8);
    memcpy(&step, &s1, 8);
  } else {
    memcpy(&start, &v[0], 8);
    memcpy(&step, &v[2], 8);
  }
  kn_dtype dt = allint ? KN_INT64 : KN_FLOAT64;
  if (!kn_vk_elem_supported(x->vk, KN_VK_I64) ||
      (!allint && !kn_vk_elem_supported(x->vk, KN_VK_F64)))
    return SG_OK;
  gr_dtensor *r;
  kn_vk_batch *bt;
  sg_code rc = gr_vkx_new_output(x, dt, 1, &cnt, &r, err);
  if (rc) return rc;
  if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
    rc = kn_vk_arange(bt, allint ? KN_VK_I64 : KN_VK_F64, start, step, cnt, r->db->buf, err);
  return gr_vkx_finish(r, rc, out, done);
}

const gr_vk_op gr_vk_where = {"where", run_where};
const gr_vk_op gr_vk_cast = {"cast", run_cast};
const gr_vk_op gr_vk_join = {"strided_copy", run_join};
const gr_vk_op gr_vk_slice = {"strided_copy", run_slice};
const gr_vk_op gr_vk_gather = {"gather", run_gather};
const gr_vk_op gr_vk_one_hot = {"one_hot", run_one_hot};
const gr_vk_op gr_vk_fill = {"fill", run_fill};
const gr_vk_op gr_vk_arange = {"arange_i64", run_arange};

#endif
