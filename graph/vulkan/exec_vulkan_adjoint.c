// SPDX-License-Identifier: Apache-2.0
/*
 * exec_vulkan_adjoint.c — the Vulkan executor's recorders for the rows reverse-mode AD
 * emits (ops_adjoint.c) and the optimizer steps (ops_optim.c), so a differentiated
 * training step stays on the device instead of downloading every sensitivity:
 *   zeros_like / or_zeros   `zeros` of the tensor's shape and dtype (fill kernel)
 *   add_grad                none is zero; tensors through `+`
 *   sum_like                `sum` over the broadcast axes (last first), then `reshape`
 *   expand_like             `reshape` (re-inserting the reduced axis), then `+` onto zeros
 *   sens_item               item K of a tuple/record sensitivity (no data moves)
 *   captured                the value itself (no data moves)
 *   slice_grad (any step)   zeros (fill), then G copied into place by one strided copy
 *   item_grad (tensor row)  the same, G as one row at K along axis 0
 *   matmul_grad             ops_adjoint.c's chain (reshape, transpose, matmul, sum_like)
 *   join_grad               ops_adjoint.c's slices of G, one per item (reshaped for stack)
 *   gather_grad             one_hot(idx)^T @ G per outer block (`matmul`): the scatter-add
 *                           as a deterministic product, indices checked on the host (read
 *                           back when computed on the device; G stays there)
 *   sgd_momentum / adam     ops_optim.c's own step chain, each step dispatched by gr_prim
 * Each composes primitives through gr_prim, so a step the device cannot run (a dtype,
 * a broadcast) runs on the CPU by itself; on tuples and records zeros_like / or_zeros /
 * add_grad / item_grad are ops_adjoint.c's own, which builds the items through gr_prim
 * the same way. Scalars
 * and number sensitivities leave *done false: the CPU kernel runs (docs/vulkan.md).
 */
#include <string.h>

#include "gr_vulkan.h"

#ifdef GR_HAVE_VULKAN
#include "exec_vulkan_int.h"

static gr_val shape_tuple(int nd, const int64_t *shape) {
  gr_val t = gv_tuple_new(nd);
  t.u.o->depth = 1;
  for (int i = 0; i < nd; i++) t.u.o->items[i] = gv_int(shape[i]);
  return t;
}

/* Runs the primitive `name` on two arguments; takes neither. */
static sg_code prim2(gr_ctx *ctx, const char *name, gr_val a, gr_val b, gr_val *out, sg_error *err) {
  gr_val args[2] = {a, b};
  return gr_prim(ctx, gr_op_lookup(name), args, 2, out, err);
}

/* zeros of (nd, shape) in dt */
static sg_code zeros(gr_ctx *ctx, kn_dtype dt, int nd, const int64_t *shape, gr_val *out, sg_error *err) {
  gr_val dims = shape_tuple(nd, shape);
  gr_val s = {.tag = GV_STR};
  s.u.s = kn_dtype_name(dt);
  sg_code rc = prim2(ctx, "zeros", dims, s, out, err);
  gv_release(dims);
  return rc;
}

static bool zeroable(kn_dtype dt) { return dt != KN_BOOL && dt != KN_FLOAT16; }

/* G summed down to X's shape: every axis where X has 1 and G not (last first, so the
 * earlier indices hold), then G's extra leading axes, then X's exact shape. */
static sg_code sum_like(gr_ctx *ctx, const gr_val *g, int xn, const int64_t *xs, gr_val *out, sg_error *err) {
  kn_dtype gdt = KN_FLOAT32;
  int gn = 0;
  const int64_t *gs = NULL;
  gr_vkx_tensor_meta(g, &gdt, &gn, &gs);
  int lead = gn - xn;
  int64_t gshape[KN_MAX_DIMS];
  memcpy(gshape, gs, sizeof(int64_t) * (size_t)gn);
  gr_val cur = gv_retain(*g);
  sg_code rc = SG_OK;
  for (int i = xn - 1; i >= 0 && !rc; i--) {
    if (xs[i] != 1 || gshape[lead + i] == 1) continue;
    gr_val r;
    if (!(rc = prim2(ctx, "sum", cur, gv_int(lead + i), &r, err))) {
      gv_release(cur);
      cur = r;
    }
  }
  for (int i = 0; i < lead && !rc; i++) {
    gr_val r;
    if (!(rc = prim2(ctx, "sum", cur, gv_int(0), &r, err))) {
      gv_release(cur);
      cur = r;
    }
  }
  if (!rc) {
    gr_val dims = shape_tuple(xn, xs), r;
    if (!(rc = prim2(ctx, "reshape", cur, dims, &r, err))) {
      gv_release(cur);
      cur = r;
    }
    gv_release(dims);
  }
  if (rc) {
    gv_release(cur);
    return rc;
  }
  *out = cur;
  return SG_OK;
}

static sg_code expand_like(gr_ctx *ctx, const gr_val *g, kn_dtype dt, int xn, const int64_t *xs,
                           int64_t axis, gr_val *out, sg_error *err) {
  gr_val cur = gv_retain(*g);
  sg_code rc = SG_OK;
  if (axis >= 0) { /* the reduced axis comes back as size 1 */
    kn_dtype gdt = KN_FLOAT32;
    int gn = 0;
    const int64_t *gs = NULL;
    gr_vkx_tensor_meta(g, &gdt, &gn, &gs);
    int64_t sh[KN_MAX_DIMS];
    for (int i = 0, k = 0; i < xn; i++) sh[i] = i == axis ? 1 : gs[k++];
    gr_val dims = shape_tuple(xn, sh), r;
    if (!(rc = prim2(ctx, "reshape", cur, dims, &r, err))) {
      gv_release(cur);
      cur = r;
    }
    gv_release(dims);
  }
  gr_val z = gv_none();
  if (!rc && !(rc = zeros(ctx, dt, xn, xs, &z, err))) rc = prim2(ctx, "+", z, cur, out, err);
  gv_release(z);
  gv_release(cur);
  return rc;
}

/* zeros_like X for a device or host tensor X; *done false for other values */
static sg_code zeros_like(gr_ctx *ctx, const gr_val *x, gr_val *out, bool *done, sg_error *err) {
  kn_dtype dt;
  int nd;
  const int64_t *shape;
  if (!gr_vkx_tensor_meta(x, &dt, &nd, &shape) || !zeroable(dt)) return SG_OK;
  *done = true;
  return zeros(ctx, dt, nd, shape, out, err);
}

/* The dtype of the zeros an adjoint builds around G (ops_adjoint.c zeros_for). */
static kn_dtype zeros_dtype(kn_dtype xdt, kn_dtype gdt) {
  return kn_dtype_is_float(gdt) ? gdt : kn_dtype_is_float(xdt) ? xdt : KN_FLOAT64;
}

/* X-shaped zeros (dtype dt, 4- or 8-byte elements) with G — X's shape but `cnt` along
 * axis — written at start, start+step, ... along axis: one fill and one strided copy
 * (a negative step is a negative output stride). */
static sg_code place(gr_ctx *ctx, const gr_val *g, kn_dtype dt, int nd, const int64_t *shape, int axis,
                     int64_t start, int64_t step, gr_val *out, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  gr_dtensor *dg, *r;
  bool tg;
  sg_code rc = gr_vkx_operand_as(x, g, dt, &dg, &tg, err);
  if (rc) return rc;
  if (!(rc = gr_vkx_new_output(x, dt, nd, shape, &r, err))) {
    int64_t ostride[KN_MAX_DIMS], istride[KN_MAX_DIMS], so = 1, si = 1;
    for (int i = nd - 1; i >= 0; i--) {
      ostride[i] = so, istride[i] = si;
      so *= shape[i], si *= dg->shape[i];
    }
    int64_t ooff = start * ostride[axis];
    ostride[axis] *= step;
    kn_vk_shape gshape = gr_vkx_vshape(dg);
    kn_vk_batch *bt;
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_fill(bt, r->db->buf, gr_vkx_bytes(dt, r->size), 0, false, err);
    if (!rc && dg->size)
      rc = kn_vk_copy_strided(bt, dg->db->buf, &gshape, 0, istride, r->db->buf, ooff, ostride,
                              kn_dtype_size(dt), err);
    bool finished;
    rc = gr_vkx_finish(r, rc, out, &finished);
  }
  if (tg) gr_vkx_dt_release(dg);
  return rc;
}

static bool same_shape_but(int nd, const int64_t *a, const int64_t *b, int axis, int64_t len) {
  for (int i = 0; i < nd; i++)
    if (a[i] != (i == axis ? len : b[i])) return false;
  return true;
}

/* (slice_grad X G START STOP [STEP [AXIS]]) with step 1 and G of the slice's shape */
static sg_code slice_grad(gr_ctx *ctx, gr_val *args, int n, gr_val *out, bool *done, sg_error *err) {
  kn_dtype dt, gdt;
  int nd, gn;
  const int64_t *shape, *gs;
  if (!gr_vkx_tensor_meta(&args[0], &dt, &nd, &shape) || nd == 0 || !gr_vkx_tensor_meta(&args[1], &gdt, &gn, &gs) || gn != nd)
    return SG_OK;
  int64_t v[4] = {0, 0, 1, 0};
  bool has[2] = {true, true};
  for (int i = 2; i < n; i++) {
    if (args[i].tag == GV_NONE && i <= 3) has[i - 2] = false;
    else if (args[i].tag == GV_INT) v[i - 2] = args[i].u.i;
    else return SG_OK; /* the CPU kernel reports it */
  }
  int64_t axis = v[3] < 0 ? v[3] + nd : v[3];
  if (axis < 0 || axis >= nd || v[2] == 0) return SG_OK; /* the CPU kernel reports it */
  int64_t cnt = kn_slice_adjust(shape[axis], &v[0], has[0], &v[1], has[1], v[2]);
  kn_dtype zdt = zeros_dtype(dt, gdt);
  if (zdt != gdt || !zeroable(zdt) || !same_shape_but(nd, gs, shape, (int)axis, cnt)) return SG_OK;
  *done = true;
  return place(ctx, &args[1], zdt, nd, shape, (int)axis, v[0], v[2], out, err);
}

/* (item_grad X K G) for a tensor X: G (X's shape without the first axis) at row K */
static sg_code item_grad(gr_ctx *ctx, gr_val *args, gr_val *out, bool *done, sg_error *err) {
  kn_dtype dt, gdt;
  int nd, gn;
  const int64_t *shape, *gs;
  if (!gr_vkx_tensor_meta(&args[0], &dt, &nd, &shape) || nd == 0 || args[1].tag != GV_INT ||
      !gr_vkx_tensor_meta(&args[2], &gdt, &gn, &gs) || gn != nd - 1)
    return SG_OK;
  int64_t i = args[1].u.i < 0 ? args[1].u.i + shape[0] : args[1].u.i;
  kn_dtype zdt = zeros_dtype(dt, gdt);
  if (i < 0 || i >= shape[0] || zdt != gdt || !same_shape_but(gn, gs, shape + 1, -1, 0)) return SG_OK;
  int64_t row[KN_MAX_DIMS];
  row[0] = 1;
  memcpy(row + 1, gs, sizeof(int64_t) * (size_t)gn);
  gr_val dims = shape_tuple(nd, row), g1;
  sg_code rc = prim2(ctx, "reshape", args[2], dims, &g1, err);
  gv_release(dims);
  *done = true;
  if (rc) return rc;
  rc = place(ctx, &g1, zdt, nd, shape, 0, i, 1, out, err);
  gv_release(g1);
  return rc;
}

/* (gather_grad X G IDX AXIS): the scatter-add r[.., idx[j], ..] += G[.., j, ..] as
 * one_hot(idx, len)^T [len, m] @ G viewed as [outer, m, inner] — a deterministic
 * product (no atomics), on host-checked indices. float32 and float64 sensitivities. */
static sg_code gather_grad(gr_ctx *ctx, gr_val *args, gr_val *out, bool *done, sg_error *err) {
  kn_dtype dt, gdt, idt;
  int nd, gn, in;
  const int64_t *shape, *gs, *is;
  if (!gr_vkx_tensor_meta(&args[0], &dt, &nd, &shape) || nd == 0 || !gr_vkx_tensor_meta(&args[1], &gdt, &gn, &gs) ||
      (gdt != KN_FLOAT32 && gdt != KN_FLOAT64) || zeros_dtype(dt, gdt) != gdt || args[3].tag != GV_INT ||
      !gr_vkx_tensor_meta(&args[2], &idt, &in, &is) || (idt != KN_INT32 && idt != KN_INT64))
    return SG_OK;
  if (args[2].tag == GV_DEVICE) { /* computed on the device: only the indices come back, G stays */
    sg_code rc = gr_vkx_download(gr_vkx(ctx), args[2].u.d, err);
    if (rc) {
      *done = true;
      return rc;
    }
  }
  const kn_tensor *idx = args[2].tag == GV_DEVICE ? args[2].u.d->host : args[2].u.t;
  int64_t axis = args[3].u.i < 0 ? args[3].u.i + nd : args[3].u.i;
  if (axis < 0 || axis >= nd) return SG_OK;
  int64_t len = shape[axis], m = idx->size, outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= shape[i];
  for (int i = (int)axis + 1; i < nd; i++) inner *= shape[i];
  int64_t gsize = 1;
  for (int i = 0; i < gn; i++) gsize *= gs[i];
  if (gsize != outer * m * inner || m == 0 || len == 0) return SG_OK;
  kn_tensor *norm = kn_tensor_new(KN_INT64, 1, &m);
  if (!norm) {
    *done = true;
    return kn_alloc_error(err);
  }
  for (int64_t j = 0; j < m; j++) {
    int64_t q = kn_get_i64(idx, j);
    if (q < 0) q += len;
    if (q < 0 || q >= len) { /* the CPU kernel reports it */
      kn_tensor_release(norm);
      return SG_OK;
    }
    ((int64_t *)norm->data)[j] = q;
  }
  *done = true;
  gr_val t[6];
  for (int i = 0; i < 6; i++) t[i] = gv_none();
  gr_val nv = gv_tensor(norm), g3dims = shape_tuple(3, (int64_t[]){outer, m, inner});
  sg_code rc = prim2(ctx, "one_hot", nv, gv_int(len), &t[0], err);          /* [m, len] f32 */
  if (!rc) rc = gr_prim(ctx, gr_op_lookup("transpose"), &t[0], 1, &t[1], err); /* [len, m] */
  if (!rc && gdt == KN_FLOAT64) {
    gr_val s = {.tag = GV_STR};
    s.u.s = kn_dtype_name(KN_FLOAT64);
    rc = prim2(ctx, "cast", t[1], s, &t[2], err);
  } else if (!rc) {
    t[2] = gv_retain(t[1]);
  }
  if (!rc) rc = prim2(ctx, "reshape", args[1], g3dims, &t[3], err);      /* [outer, m, inner] */
  if (!rc) rc = prim2(ctx, "matmul", t[2], t[3], &t[4], err);            /* [outer, len, inner] */
  if (!rc) {
    gr_val xdims = shape_tuple(nd, shape);
    rc = prim2(ctx, "reshape", t[4], xdims, out, err);
    gv_release(xdims);
  }
  for (int i = 0; i < 6; i++) gv_release(t[i]);
  gv_release(nv);
  gv_release(g3dims);
  return rc;
}

static bool composite(const gr_val *v) { return v->tag == GV_TUPLE || v->tag == GV_RECORD; }

static sg_code run_adjoint(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, bool *done,
                           sg_error *err) {
  kn_dtype dt, gdt;
  int nd, gn;
  const int64_t *shape, *gs;
  /* moving no data itself: sens_item, captured, and the rows on tuples and records, which
   * ops_adjoint.c builds item by item through gr_prim (each item on the device) */
  bool none0 = args[0].tag == GV_NONE;
  if (op->code == GR_ADJ_SENS_ITEM || op->code == GR_ADJ_CAPTURED ||
      (composite(&args[0]) && (op->code == GR_ADJ_ZEROS_LIKE || op->code == GR_ADJ_ITEM ||
                               (op->code == GR_ADJ_ADD && args[1].tag == args[0].tag))) ||
      (op->code == GR_ADJ_OR_ZEROS && (!none0 || composite(&args[1]))) ||
      (op->code == GR_ADJ_ADD && (none0 || args[1].tag == GV_NONE))) {
    *done = true;
    return gr_cpu_kernel(op)(ctx, op, args, n, out, err);
  }
  switch (op->code) {
  case GR_ADJ_OR_ZEROS: return zeros_like(ctx, &args[1], out, done, err);
  case GR_ADJ_ZEROS_LIKE: return zeros_like(ctx, &args[0], out, done, err);
  case GR_ADJ_ADD:
    if (!gr_vkx_tensor_meta(&args[0], &dt, &nd, &shape) || !gr_vkx_tensor_meta(&args[1], &gdt, &gn, &gs)) return SG_OK;
    *done = true;
    return prim2(ctx, "+", args[0], args[1], out, err);
  case GR_ADJ_SUM_LIKE: {
    if (!gr_vkx_tensor_meta(&args[0], &gdt, &gn, &gs) || !gr_vkx_tensor_meta(&args[1], &dt, &nd, &shape)) return SG_OK;
    if (gdt != dt || !kn_dtype_is_float(dt) || gn < nd) return SG_OK; /* casts, broadcasts up: CPU */
    for (int i = 0; i < nd; i++)
      if (gs[gn - nd + i] != shape[i] && shape[i] != 1) return SG_OK; /* the CPU kernel reports it */
    *done = true;
    return sum_like(ctx, &args[0], nd, shape, out, err);
  }
  case GR_ADJ_EXPAND_LIKE: {
    if (!gr_vkx_tensor_meta(&args[1], &dt, &nd, &shape)) return SG_OK;
    if (args[0].tag == GV_FLOAT || args[0].tag == GV_INT) { /* a number: zeros + it */
      kn_dtype zdt = kn_dtype_is_float(dt) ? dt : KN_FLOAT64;
      if (!zeroable(zdt)) return SG_OK;
      gr_val z = gv_none();
      sg_code rc = zeros(ctx, zdt, nd, shape, &z, err);
      if (!rc) rc = prim2(ctx, "+", z, args[0], out, err);
      gv_release(z);
      *done = true;
      return rc;
    }
    if (!gr_vkx_tensor_meta(&args[0], &gdt, &gn, &gs)) return SG_OK;
    int64_t axis = -1;
    if (n > 2 && args[2].tag != GV_NONE && gn == nd - 1) {
      if (args[2].tag != GV_INT) return SG_OK;
      axis = args[2].u.i < 0 ? args[2].u.i + nd : args[2].u.i;
      if (axis < 0 || axis >= nd) return SG_OK;
    }
    if (!zeroable(gdt)) return SG_OK;
    *done = true;
    return expand_like(ctx, &args[0], gdt, nd, shape, axis, out, err);
  }
  case GR_ADJ_SLICE: return slice_grad(ctx, args, n, out, done, err);
  case GR_ADJ_ITEM: return item_grad(ctx, args, out, done, err);
  case GR_ADJ_GATHER: return gather_grad(ctx, args, out, done, err);
  case GR_ADJ_MATMUL: /* reshapes, transposes, matmul, sum_like: each through gr_prim */
  case GR_ADJ_JOIN:   /* one slice (and reshape) per item, each through gr_prim */
    *done = true;
    return gr_cpu_kernel(op)(ctx, op, args, n, out, err);
  default: return SG_OK;
  }
}

/* The optimizer steps: ops_optim.c's chain, whose steps go through gr_prim; the
 * hyperparameters must be numbers the chain can read on the host. */
static sg_code run_optim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, bool *done,
                         sg_error *err) {
  int first_hyper = op->code == 0 ? 3 : 4;
  for (int i = first_hyper; i < n; i++)
    if (args[i].tag != GV_INT && args[i].tag != GV_FLOAT) return SG_OK;
  *done = true;
  return gr_cpu_kernel(op)(ctx, op, args, n, out, err); /* a tuple owning its device tensors */
}

const gr_vk_op gr_vk_adjoint = {"fill", run_adjoint};
const gr_vk_op gr_vk_optim = {"binary", run_optim};

#endif
