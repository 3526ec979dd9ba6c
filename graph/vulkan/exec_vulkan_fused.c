// SPDX-License-Identifier: Apache-2.0
/*
 * exec_vulkan_fused.c — elementwise chains on the device as one generated kernel
 * (gr_backend.fused; docs/vulkan.md "Fused elementwise chains"). The interpreter hands
 * over a chain exec/fused.c found (+ - * / maximum minimum, unary math); when every
 * tensor operand is float32 (on the device, resident or on the host) of the output's
 * shape or one that broadcasts along one run of its axes (a bias row, a column, a 0-d
 * tensor: gr_fused_broadcast) and the rest are
 * Python numbers, the chain is recorded as one kn_vk_fused_f32 dispatch: one output
 * buffer, no intermediate ones, one pass over memory, the bits of the ops one by one.
 * Resident operands (variables, handles) are borrowed as the op-by-op path borrows
 * them. Anything else (other dtypes, other broadcasting, an op without a float32
 * kernel, more operands than the kernel binds) is left to the op-by-op recorders.
 *
 * A chain right after a float32 matmul or reduction (sum, mean, max, min) that only it
 * reads (exec/fused.c marks the head: gr_instr.epilogue) goes into the head's kernel as
 * its epilogue (gr_backend.epilogue; kn_vk_matmul_epilogue, kn_vk_reduce_epilogue,
 * docs/vulkan.md "Epilogues"): at most 8 steps, 3 tensors and 4 numbers, every tensor
 * broadcasting to the head's result shape; that result is never stored on its own.
 * Otherwise the head and the chain run as they would alone.
 */
#include <string.h>

#include "gr_vulkan.h"

#ifdef GR_HAVE_VULKAN
#include "exec_vulkan_int.h"

/* a float32 tensor operand's shape: on the device or the host, or resident (the chain
 * borrows it below); false for anything else */
static bool f32_shape(const gr_val *v, int *ndim, const int64_t **shape) {
  kn_dtype dt;
  bool meta = v->tag == GV_RESIDENT ? gv_tensor_meta(v, &dt, ndim, shape) : gr_vkx_tensor_meta(v, &dt, ndim, shape);
  return meta && dt == KN_FLOAT32;
}

/* The kernel's operands: a buffer slot per distinct tensor, the Python numbers; the
 * output's shape is the broadcast of the tensors' shapes. */
typedef struct operands {
  const gr_val *tensors[KN_VK_FUSED_INPUTS];
  int ndims[KN_VK_FUSED_INPUTS];
  const int64_t *shapes[KN_VK_FUSED_INPUTS];
  int ntensors, nscalars;
  float scalars[KN_VK_FUSED_SCALARS];
} operands;

/* f's value i as a kernel operand (*slot); false when the kernel's limits or the
 * operand's type do not allow it. */
static bool add_operand(operands *o, const gr_fused *f, int i, int *slot) {
  if (f->is_scalar[i]) {
    if (o->nscalars == KN_VK_FUSED_SCALARS) return false;
    o->scalars[o->nscalars] = f->scalar[i];
    *slot = KN_VK_FUSED_SCALAR(o->nscalars++);
    return true;
  }
  const gr_val *v = f->vals[i];
  int nd;
  const int64_t *sh;
  if (!f32_shape(v, &nd, &sh)) return false;
  for (int k = 0; k < o->ntensors; k++)
    if (o->tensors[k]->tag == v->tag && o->tensors[k]->u.o == v->u.o) { /* the same tensor */
      *slot = k;
      return true;
    }
  if (o->ntensors == KN_VK_FUSED_INPUTS) return false;
  o->tensors[o->ntensors] = v;
  o->ndims[o->ntensors] = nd;
  o->shapes[o->ntensors] = sh;
  *slot = o->ntensors++;
  return true;
}

/* f's steps as the kernels' (operands still f's: -1 or an index into f->vals); false
 * when an op has no float32 kernel */
static bool kernel_steps(const gr_fused *f, kn_vk_fused_step *steps) {
  for (int s = 0; s < f->nsteps; s++) {
    const kn_fused_step *st = &f->steps[s];
    int op = st->unary ? gr_vkx_unop(st->op) : gr_vkx_binop(st->op);
    if (op < 0 || (st->unary ? !kn_vk_unary_supported(KN_VK_F32, (kn_vk_unop)op)
                             : !kn_vk_binary_supported(KN_VK_F32, (kn_vk_binop)op)))
      return false;
    steps[s] = (kn_vk_fused_step){.unary = st->unary, .op = op};
  }
  return true;
}

/* f's values as the kernel's operands (o) and each step's operands as kernel slots;
 * false when the kernel cannot take one */
static bool collect(const gr_fused *f, operands *o, kn_vk_fused_step *steps) {
  int slot[2 * GR_FUSED_MAX];
  o->ntensors = o->nscalars = 0;
  for (int i = 0; i < f->nvals; i++)
    if (!add_operand(o, f, i, &slot[i])) return false;
  for (int s = 0; s < f->nsteps; s++) {
    steps[s].a = f->steps[s].a < 0 ? KN_VK_FUSED_PREV : slot[f->steps[s].a];
    steps[s].b = f->steps[s].b < 0 ? KN_VK_FUSED_PREV : slot[f->steps[s].b];
  }
  return true;
}

/* The operands' tensors on the device: resident ones borrowed (held), host ones
 * uploaded (tmp); bufs[k] each one's buffer. *got: how many to give back (release). */
typedef struct on_device {
  gr_dtensor *dev[KN_VK_FUSED_INPUTS];
  kn_vk_buffer *bufs[KN_VK_FUSED_INPUTS];
  gr_val held[KN_VK_FUSED_INPUTS];
  bool tmp[KN_VK_FUSED_INPUTS];
  int got;
} on_device;

static sg_code to_device(struct gr_vk_exec *x, const operands *o, on_device *d, sg_error *err) {
  sg_code rc = SG_OK;
  for (d->got = 0; d->got < o->ntensors && !rc; d->got++) {
    int k = d->got;
    const gr_val *v = o->tensors[k];
    d->held[k] = gv_none();
    d->tmp[k] = false;
    if (v->tag == GV_RESIDENT && !(rc = gr_vkr_import(x, v->u.r, &d->held[k], err))) v = &d->held[k];
    if (!rc && !(rc = gr_vkx_operand_as(x, v, KN_FLOAT32, &d->dev[k], &d->tmp[k], err))) d->bufs[k] = d->dev[k]->db->buf;
    else d->tmp[k] = false;
  }
  return rc;
}

static void release(on_device *d) {
  for (int k = 0; k < d->got; k++) {
    if (d->tmp[k]) gr_vkx_dt_release(d->dev[k]);
    gv_release(d->held[k]);
  }
}

sg_code gr_vkx_fused(gr_ctx *ctx, const gr_fused *f, gr_val *out, bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  *done = false;
  kn_vk_fused_step steps[KN_VK_FUSED_STEPS];
  operands o;
  if (!x || f->nsteps > KN_VK_FUSED_STEPS || !kernel_steps(f, steps) || !collect(f, &o, steps)) return SG_OK;
  int64_t shape[KN_MAX_DIMS], sizes[KN_VK_FUSED_INPUTS], inners[KN_VK_FUSED_INPUTS], size = 1;
  int ndim;
  if (!o.ntensors || !gr_fused_broadcast(o.ntensors, o.ndims, o.shapes, shape, &ndim, sizes, inners))
    return SG_OK;
  for (int d = 0; d < ndim; d++) size *= shape[d];
  if (size == 0 || size > (int64_t)UINT32_MAX) return SG_OK;
  on_device d;
  sg_code rc = to_device(x, &o, &d, err);
  gr_dtensor *r = NULL;
  kn_vk_batch *bt;
  if (!rc && !(rc = gr_vkx_new_output(x, KN_FLOAT32, ndim, shape, &r, err))) {
    if (!(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_fused_f32(bt, steps, f->nsteps, d.bufs, sizes, inners, o.ntensors, o.scalars, o.nscalars,
                           r->db->buf, size, err);
    rc = gr_vkx_finish(r, rc, out, done);
    if (!rc) x->st.fused++;
  }
  release(&d);
  return rc;
}

/* A float32 reduction the reduce kernel takes (sum, mean, max, min over an axis or all;
 * nothing empty) and its view and result shape; false: it runs as it would alone. */
typedef struct reduction {
  kn_vk_reduce_op op;
  int64_t axis, len, nout;
  kn_vk_shape s;
  int ond;
  int64_t oshape[KN_MAX_DIMS];
} reduction;

static bool reduction_of(const gr_op *op, const gr_val *args, int n, reduction *rd) {
  kn_dtype dt;
  bool has_axis = n > 1 && args[1].tag != GV_NONE;
  if (!gr_vkx_tensor_dtype(&args[0], &dt) || dt != KN_FLOAT32 || (has_axis && args[1].tag != GV_INT)) return false;
  switch (op->code) {
  case KN_SUM: rd->op = KN_VK_REDUCE_SUM; break;
  case KN_MEAN: rd->op = KN_VK_REDUCE_MEAN; break;
  case KN_MAX: rd->op = KN_VK_REDUCE_MAX; break;
  case KN_MIN: rd->op = KN_VK_REDUCE_MIN; break;
  default: return false; /* argmax: an int64 result */
  }
  rd->axis = has_axis ? args[1].u.i : 0;
  return gr_vkx_reduce_view(&args[0], has_axis, &rd->axis, &rd->s, rd->oshape, &rd->ond, &rd->len, &rd->nout) &&
         rd->len > 0 && rd->nout > 0;
}

/* Records reduction rd of args[0] with epilogue epi into a new device tensor. */
static sg_code record_reduction(struct gr_vk_exec *x, const reduction *rd, const gr_val *a, const kn_vk_epilogue *epi,
                                gr_val *out, bool *done, sg_error *err) {
  gr_dtensor *da, *r;
  bool ta;
  kn_vk_batch *bt;
  sg_code rc = gr_vkx_operand_as(x, a, KN_FLOAT32, &da, &ta, err);
  if (rc) return rc;
  if (!(rc = gr_vkx_new_output(x, KN_FLOAT32, rd->ond, rd->oshape, &r, err))) {
    if (!(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_reduce_epilogue(bt, rd->op, da->db->buf, &rd->s, (int)rd->axis, r->db->buf, epi, err);
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  return rc;
}

sg_code gr_vkx_epilogue(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, const gr_fused *f, gr_val *out,
                        bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  *done = false;
  kn_vk_fused_step steps[KN_VK_FUSED_STEPS];
  operands o;
  bool mat = op->family == GR_FAM_MATMUL;
  if (!x || (!mat && op->family != GR_FAM_REDUCE) || n < 1 || n > 2 || (mat && n != 2) ||
      f->nsteps > KN_VK_EPI_STEPS || !kernel_steps(f, steps) || !collect(f, &o, steps) ||
      o.ntensors > KN_VK_EPI_INPUTS || o.nscalars > KN_VK_EPI_SCALARS)
    return SG_OK;
  /* the head's tensors, resident ones borrowed as gr_vk_prim does */
  gr_val hargs[2], held[2] = {gv_none(), gv_none()};
  sg_code rc = SG_OK;
  for (int k = 0; k < n && !rc; k++) {
    hargs[k] = args[k];
    if (args[k].tag == GV_RESIDENT && !(rc = gr_vkr_import(x, args[k].u.r, &held[k], err))) hargs[k] = held[k];
  }
  gr_vkx_mm mm;
  reduction rd;
  bool fits = !rc && (mat ? gr_vkx_matmul_plan(x, op, hargs, &mm) && mm.dt == KN_FLOAT32 && mm.k > 0 &&
                                mm.batch * mm.m * mm.n > 0
                          : reduction_of(op, hargs, n, &rd));
  /* the chain's tensors broadcast to the head's result shape (the result keeps it) */
  int ndims[1 + KN_VK_EPI_INPUTS], ndim;
  const int64_t *shapes[1 + KN_VK_EPI_INPUTS];
  int64_t shape[KN_MAX_DIMS], sizes[1 + KN_VK_EPI_INPUTS], inners[1 + KN_VK_EPI_INPUTS];
  if (fits) {
    ndims[0] = mat ? mm.ond : rd.ond;
    shapes[0] = mat ? mm.oshape : rd.oshape;
    for (int k = 0; k < o.ntensors; k++) {
      ndims[1 + k] = o.ndims[k];
      shapes[1 + k] = o.shapes[k];
    }
    fits = gr_fused_broadcast(1 + o.ntensors, ndims, shapes, shape, &ndim, sizes, inners) && ndim == ndims[0] &&
           !memcmp(shape, shapes[0], sizeof(int64_t) * (size_t)ndim);
  }
  if (fits) {
    on_device d;
    if (!(rc = to_device(x, &o, &d, err))) {
      kn_vk_epilogue epi = {.steps = steps, .nsteps = f->nsteps, .ins = d.bufs, .in_sizes = sizes + 1,
                            .in_inners = inners + 1, .nins = o.ntensors, .scalars = o.scalars,
                            .nscalars = o.nscalars};
      rc = mat ? gr_vkx_matmul_record(x, &mm, &epi, out, done, err)
               : record_reduction(x, &rd, &hargs[0], &epi, out, done, err);
      if (!rc && *done) {
        x->st.fused++;
        x->st.epilogues++;
      }
    }
    release(&d);
  }
  for (int k = 0; k < 2; k++) gv_release(held[k]);
  return rc;
}

#endif
