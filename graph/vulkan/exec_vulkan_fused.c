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

sg_code gr_vkx_fused(gr_ctx *ctx, const gr_fused *f, gr_val *out, bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  *done = false;
  if (!x || f->nsteps > KN_VK_FUSED_STEPS) return SG_OK;
  kn_vk_fused_step steps[KN_VK_FUSED_STEPS];
  for (int s = 0; s < f->nsteps; s++) {
    const kn_fused_step *st = &f->steps[s];
    int op = st->unary ? gr_vkx_unop(st->op) : gr_vkx_binop(st->op);
    if (op < 0 || (st->unary ? !kn_vk_unary_supported(KN_VK_F32, (kn_vk_unop)op)
                             : !kn_vk_binary_supported(KN_VK_F32, (kn_vk_binop)op)))
      return SG_OK;
    steps[s] = (kn_vk_fused_step){.unary = st->unary, .op = op};
  }
  operands o = {.ntensors = 0};
  int slot[2 * GR_FUSED_MAX];
  for (int i = 0; i < f->nvals; i++)
    if (!add_operand(&o, f, i, &slot[i])) return SG_OK;
  int64_t shape[KN_MAX_DIMS], sizes[KN_VK_FUSED_INPUTS], inners[KN_VK_FUSED_INPUTS], size = 1;
  int ndim;
  if (!o.ntensors || !gr_fused_broadcast(o.ntensors, o.ndims, o.shapes, shape, &ndim, sizes, inners))
    return SG_OK;
  for (int d = 0; d < ndim; d++) size *= shape[d];
  if (size == 0 || size > (int64_t)UINT32_MAX) return SG_OK;
  for (int s = 0; s < f->nsteps; s++) {
    steps[s].a = f->steps[s].a < 0 ? KN_VK_FUSED_PREV : slot[f->steps[s].a];
    steps[s].b = f->steps[s].b < 0 ? KN_VK_FUSED_PREV : slot[f->steps[s].b];
  }
  /* each tensor on the device: resident ones borrowed (held), host ones uploaded (tmp) */
  gr_dtensor *dev[KN_VK_FUSED_INPUTS];
  kn_vk_buffer *bufs[KN_VK_FUSED_INPUTS];
  gr_val held[KN_VK_FUSED_INPUTS];
  bool tmp[KN_VK_FUSED_INPUTS] = {false};
  sg_code rc = SG_OK;
  int k = 0;
  for (; k < o.ntensors && !rc; k++) {
    const gr_val *v = o.tensors[k];
    held[k] = gv_none();
    if (v->tag == GV_RESIDENT && !(rc = gr_vkr_import(x, v->u.r, &held[k], err))) v = &held[k];
    if (!rc && !(rc = gr_vkx_operand_as(x, v, KN_FLOAT32, &dev[k], &tmp[k], err))) bufs[k] = dev[k]->db->buf;
    else tmp[k] = false;
  }
  int got = k;
  gr_dtensor *r = NULL;
  kn_vk_batch *bt;
  if (!rc && !(rc = gr_vkx_new_output(x, KN_FLOAT32, ndim, shape, &r, err))) {
    if (!(rc = gr_vkx_batch(x, &bt, err)))
      rc = kn_vk_fused_f32(bt, steps, f->nsteps, bufs, sizes, inners, o.ntensors, o.scalars, o.nscalars,
                           r->db->buf, size, err);
    rc = gr_vkx_finish(r, rc, out, done);
    if (!rc) x->st.fused++;
  }
  for (k = 0; k < got; k++) {
    if (tmp[k]) gr_vkx_dt_release(dev[k]);
    gv_release(held[k]);
  }
  return rc;
}

#endif
