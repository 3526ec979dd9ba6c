/*
 * exec_vulkan_adjoint.c — the Vulkan executor's recorders for the rows reverse-mode AD
 * emits (ops_adjoint.c) and the optimizer steps (ops_optim.c), so a differentiated
 * training step stays on the device instead of downloading every sensitivity:
 *   zeros_like / or_zeros   `zeros` of the tensor's shape and dtype (fill kernel)
 *   add_grad                none is zero; tensors through `+`
 *   sum_like                `sum` over the broadcast axes (last first), then `reshape`
 *   expand_like             `reshape` (re-inserting the reduced axis), then `+` onto zeros
 *   sens_item               item K of a tuple/record sensitivity (no data moves)
 *   sgd_momentum / adam     ops_optim.c's own step chain, each step dispatched by gr_prim
 * Each composes primitives through gr_prim, so a step the device cannot run (a dtype,
 * a broadcast) runs on the CPU by itself. Scalars, tuples of tensors, item_grad,
 * slice_grad and gather_grad leave *done false: the CPU kernel runs (docs/vulkan.md).
 */
#include <string.h>

#include "exec_vulkan.h"
#include "ops_cpu.h"

#ifdef GR_HAVE_VULKAN
#include "exec_vulkan_int.h"

/* A tensor value's dtype and shape (on the device or the host). */
static bool tensor_of(const gr_val *v, kn_dtype *dt, int *nd, const int64_t **shape) {
  if (v->tag == GV_DEVICE) {
    *dt = v->u.d->dtype, *nd = v->u.d->ndim, *shape = v->u.d->shape;
    return true;
  }
  if (v->tag == GV_TENSOR) {
    *dt = v->u.t->dtype, *nd = v->u.t->ndim, *shape = v->u.t->shape;
    return true;
  }
  return false;
}

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
  tensor_of(g, &gdt, &gn, &gs);
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
    tensor_of(g, &gdt, &gn, &gs);
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
  if (!tensor_of(x, &dt, &nd, &shape) || !zeroable(dt)) return SG_OK;
  *done = true;
  return zeros(ctx, dt, nd, shape, out, err);
}

static sg_code run_adjoint(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, bool *done,
                           sg_error *err) {
  kn_dtype dt, gdt;
  int nd, gn;
  const int64_t *shape, *gs;
  switch (op->code) {
  case GR_ADJ_SENS_ITEM: /* moves no data: the CPU kernel, on the values as they are */
    *done = true;
    return gr_cpu_adjoint(ctx, op, args, n, out, err);
  case GR_ADJ_OR_ZEROS:
    if (args[0].tag != GV_NONE) {
      *out = gv_retain(args[0]);
      *done = true;
      return SG_OK;
    }
    return zeros_like(ctx, &args[1], out, done, err);
  case GR_ADJ_ZEROS_LIKE: return zeros_like(ctx, &args[0], out, done, err);
  case GR_ADJ_ADD:
    if (args[0].tag == GV_NONE || args[1].tag == GV_NONE) {
      *out = gv_retain(args[args[0].tag == GV_NONE ? 1 : 0]);
      *done = true;
      return SG_OK;
    }
    if (!tensor_of(&args[0], &dt, &nd, &shape) || !tensor_of(&args[1], &gdt, &gn, &gs)) return SG_OK;
    *done = true;
    return prim2(ctx, "+", args[0], args[1], out, err);
  case GR_ADJ_SUM_LIKE: {
    if (!tensor_of(&args[0], &gdt, &gn, &gs) || !tensor_of(&args[1], &dt, &nd, &shape)) return SG_OK;
    if (gdt != dt || !kn_dtype_is_float(dt) || gn < nd) return SG_OK; /* casts, broadcasts up: CPU */
    for (int i = 0; i < nd; i++)
      if (gs[gn - nd + i] != shape[i] && shape[i] != 1) return SG_OK; /* the CPU kernel reports it */
    *done = true;
    return sum_like(ctx, &args[0], nd, shape, out, err);
  }
  case GR_ADJ_EXPAND_LIKE: {
    if (!tensor_of(&args[1], &dt, &nd, &shape)) return SG_OK;
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
    if (!tensor_of(&args[0], &gdt, &gn, &gs)) return SG_OK;
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
  default: return SG_OK; /* item_grad, slice_grad, gather_grad: the CPU kernel */
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
  return gr_cpu_optim(ctx, op, args, n, out, err);
}

const gr_vk_op gr_vk_adjoint = {"fill", run_adjoint};
const gr_vk_op gr_vk_optim = {"binary", run_optim};

#else /* !GR_HAVE_VULKAN */
const gr_vk_op gr_vk_adjoint, gr_vk_optim;
#endif
