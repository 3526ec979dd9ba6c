// SPDX-License-Identifier: Apache-2.0
/*
 * exec_vulkan.c — the Vulkan backend as the interpreter sees it (the top of
 * graph/vulkan; see gr_vulkan.h, docs/vulkan.md): a request's begin and end, the
 * backend hooks (gr_backend: every primitive of a request on a device comes through
 * gr_vk_prim), the op table's Vulkan column, and the hooks values use for device
 * tensors. gr_vk_prim sends each op where it runs: values only moved around stay as
 * they are, resident arguments and variables go through exec_vulkan_resident.c, ops
 * with a recorder through the dtype layer (exec_vulkan_dtype.c) to their recorder, and
 * the rest to their CPU kernel on host copies (logged once per op and dtype).
 * Requests, buffers and transfers are exec_vulkan_request.c's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gr_vulkan.h"

#ifdef GR_HAVE_VULKAN
#include "exec_vulkan_int.h"

static const gr_backend vk_backend; /* the hooks, defined at the end */

sg_code gr_vk_exec_begin(gr_ctx *ctx, const char *device, sg_error *err) {
  struct gr_vk_exec *x;
  ctx->dev = NULL;
  ctx->backend = NULL;
  sg_code rc = gr_vkx_begin(device, ctx->deadline_ns, &x, err);
  if (!rc && x) {
    ctx->dev = x;
    ctx->backend = &vk_backend;
  }
  return rc;
}

sg_code gr_vk_exec_end(gr_ctx *ctx, gr_val *result, sg_code rc, sg_error *err) {
  rc = gr_vkx_end(gr_vkx(ctx), result, rc, err);
  ctx->dev = NULL;
  ctx->backend = NULL;
  return rc;
}

sg_code gr_vk_exec_finish(gr_ctx *ctx, gr_val *res, sg_code rc, bool keep_on_device, sg_error *err) {
  if (gr_vkx(ctx) && rc == SG_OK && keep_on_device) {
    rc = gr_vkr_keep(gr_vkx(ctx), res, err);
    if (rc) {
      gv_release(*res);
      *res = gv_none();
    }
  }
  rc = gr_vk_exec_end(ctx, res, rc, err);
  if (rc == SG_OK && !keep_on_device && (rc = gv_resident_to_host(res, err))) {
    gv_release(*res);
    *res = gv_none();
  }
  return rc;
}

sg_code gr_vk_resident_upload(gr_val *v, const char *device, sg_error *err) {
  struct gr_vk_exec *x;
  gr_val none = gv_none();
  sg_code rc = gr_vkx_begin(device, 0, &x, err);
  if (rc || !x) return rc; /* the CPU: nothing to do */
  rc = gr_vkr_keep(x, v, err);
  return gr_vkx_end(x, &none, rc, err);
}

/* ------------------------------------------------------------ interpreter hooks */
/* Ops that only move values around: device tensors pass through them, held by the
 * tuples and records they build (getitem / getattr only on tuples and records: a
 * tensor's getitem indexes it; `while` and `if` hand values to graphs, which take
 * device values, and read their conditions back through the predicate hook). */
static bool moves_values(const gr_op *op, const gr_val *args, int n) {
  if (op->family == GR_FAM_TUPLE || op->family == GR_FAM_RECORD || op->family == GR_FAM_SEQ || op->family == GR_FAM_WHILE ||
      op->family == GR_FAM_IF)
    return true;
  return (op->family == GR_FAM_GETITEM || op->family == GR_FAM_GETATTR) && n > 0 &&
         (args[0].tag == GV_TUPLE || args[0].tag == GV_RECORD);
}

/* shape / len / size of a device or resident tensor: its metadata, no download */
static bool device_shape(const gr_op *op, const gr_val *v, gr_val *out) {
  int nd;
  const int64_t *sh;
  int64_t size;
  if (v->tag == GV_DEVICE) nd = v->u.d->ndim, sh = v->u.d->shape, size = v->u.d->size;
  else if (v->tag == GV_RESIDENT) nd = v->u.r->ndim, sh = v->u.r->shape, size = v->u.r->size;
  else return false;
  if (op->code == 1 && nd == 0) return false; /* the CPU op's error */
  if (op->code == 0) {
    *out = gv_tuple_new(nd);
    out->u.o->depth = 1;
    for (int i = 0; i < nd; i++) out->u.o->items[i] = gv_int(sh[i]);
  } else {
    *out = gv_int(op->code == 1 ? sh[0] : size);
  }
  return true;
}

/* a device or resident tensor of one element (anything else: the CPU kernel decides) */
static bool one_element(const gr_val *v) {
  if (v->tag == GV_DEVICE) return v->u.d->size == 1;
  return v->tag == GV_RESIDENT && v->u.r->size == 1;
}

static sg_code predicate(gr_ctx *ctx, gr_val *v, sg_error *err) {
  if (!gr_vkx(ctx) || v->tag != GV_DEVICE) return SG_OK;
  return gr_vkx_host_leaf(gr_vkx(ctx), v, err);
}

/* ------------------------------------------------------------ fallback log */
/* Ops that are host plumbing by design (no kernel, nothing to log): the rows below,
 * and any op without a tensor argument (loop counters, Python-number arithmetic: there
 * is no device data to keep on the device). */
static bool is_tensor(const gr_val *v) {
  return v->tag == GV_TENSOR || v->tag == GV_DEVICE || v->tag == GV_RESIDENT;
}

static bool host_op(const gr_op *op, const gr_val *args, int n) {
  bool tensor = false; /* in tuples and records too: (concat (tuple A B)) moves data */
  for (int i = 0; i < n && !tensor; i++) tensor = gv_has_leaf(&args[i], is_tensor, false);
  if (!tensor) return true;
  /* (tuple, record, seq, if, while never get here: moves_values) */
  static const char *const names[] = {"getitem", "getattr", "shape", "len", "size", "print", "assert",
                                      "variable", "read", "assign", "assign_add", "assign_sub", "grad", "pyindex", "pyint",
                                      "pyfloat", "pybool", "grad_scalar", "assume", NULL};
  for (int i = 0; names[i]; i++)
    if (!strcmp(op->name, names[i])) return true;
  return false;
}

/* The dtype of the first tensor in v (tuples and records searched), or KN_NDTYPES. */
static int first_dtype(const gr_val *v) {
  if (v->tag == GV_TENSOR) return v->u.t->dtype;
  if (v->tag == GV_DEVICE) return v->u.d->dtype;
  if (v->tag == GV_RESIDENT) return v->u.r->dtype;
  for (int i = 0; (v->tag == GV_TUPLE || v->tag == GV_RECORD) && i < v->u.o->n; i++) {
    int dt = first_dtype(&v->u.o->items[i]);
    if (dt != KN_NDTYPES) return dt;
  }
  return KN_NDTYPES;
}

static void log_fallback(struct gr_vk_exec *x, const gr_op *op, const gr_val *args, int n) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static bool seen[256][KN_NDTYPES + 1];
  int nops;
  const gr_op *table = gr_op_table(&nops);
  int oi = (int)(op - table);
  if (oi < 0 || oi >= nops || oi >= 256) return;
  int dt = KN_NDTYPES; /* "no tensor argument" */
  for (int i = 0; i < n && dt == KN_NDTYPES; i++) dt = first_dtype(&args[i]);
  pthread_mutex_lock(&lock);
  bool first = !seen[oi][dt];
  seen[oi][dt] = true;
  pthread_mutex_unlock(&lock);
  if (first)
    SG_INFO(0, "vulkan:%d: no GPU kernel for '%s' on %s; it runs on the CPU (logged once)",
            x->device, op->name, dt == KN_NDTYPES ? "scalars" : kn_dtype_name((kn_dtype)dt));
}

/* op on the CPU, its device arguments (in tuples and records too) read back first */
static sg_code run_on_host(gr_ctx *ctx, const gr_op *op, const gr_val *args, int n, gr_val *out,
                           sg_error *err) {
  enum { LOCAL = 16 };
  gr_val hl[LOCAL];
  bool ol[LOCAL];
  size_t cnt = n > 0 ? (size_t)n : 0;
  gr_val *h = cnt <= LOCAL ? hl : sg_xmalloc(sizeof *h * cnt);
  bool *owned = cnt <= LOCAL ? ol : sg_xmalloc(sizeof *owned * cnt);
  if (cnt) memcpy(h, args, sizeof *h * cnt);
  sg_code rc = gr_vkx_args_to_host(gr_vkx(ctx), h, n, owned, err);
  if (!rc) rc = gr_cpu_kernel(op)(ctx, op, h, n, out, err);
  for (int i = 0; i < n; i++)
    if (owned[i]) gv_release(h[i]);
  if (h != hl) free(h);
  if (owned != ol) free(owned);
  return rc;
}

sg_code gr_vk_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                   sg_error *err) {
  if (moves_values(op, args, n)) return gr_cpu_kernel(op)(ctx, op, args, n, out, err);
  if (op->family == GR_FAM_SHAPE && n == 1 && device_shape(op, &args[0], out)) return SG_OK;
  if (op->family == GR_FAM_ASSERT && op->code == 1 && n == 1 && one_element(&args[0])) {
    *out = gv_retain(args[0]); /* grad_scalar of one number on the device: no download */
    return SG_OK;
  }
  const gr_vk_op *v = gr_vk_op_of(op);
  if (gr_vkr_wants(op, args, n)) return gr_vkr_prim(ctx, op, v && v->run, args, n, out, err);
  if (v && v->run) {
    bool done = false;
    sg_code rc = gr_vkx_dtype_run(ctx, op, v, args, n, out, &done, err);
    if (rc || done) return rc;
  }
  if (!host_op(op, args, n)) {
    log_fallback(gr_vkx(ctx), op, args, n);
    gr_vkx(ctx)->st.cpu_fallbacks++;
  }
  return run_on_host(ctx, op, args, n, out, err);
}

/* The op table's Vulkan column, by family (ir/ops.c): the recorder of each family with
 * device kernels; the others run on the host (their CPU kernel, on host copies). */
static const gr_vk_op *const vk_column[GR_FAM_COUNT] = {
    [GR_FAM_BINARY] = &gr_vk_binary,       [GR_FAM_UNARY] = &gr_vk_unary,
    [GR_FAM_WHERE] = &gr_vk_where,         [GR_FAM_CAST] = &gr_vk_cast,
    [GR_FAM_MATMUL] = &gr_vk_matmul,       [GR_FAM_TRANSPOSE] = &gr_vk_transpose,
    [GR_FAM_RESHAPE] = &gr_vk_reshape,     [GR_FAM_REDUCE] = &gr_vk_reduce,
    [GR_FAM_SOFTMAX] = &gr_vk_softmax,     [GR_FAM_JOIN] = &gr_vk_join,
    [GR_FAM_SLICE] = &gr_vk_slice,         [GR_FAM_GATHER] = &gr_vk_gather,
    [GR_FAM_ONE_HOT] = &gr_vk_one_hot,     [GR_FAM_FILL] = &gr_vk_fill,
    [GR_FAM_ARANGE] = &gr_vk_arange,       [GR_FAM_RANDOM] = &gr_vk_random, /* the CPU generator's stream */
    [GR_FAM_ADJOINT] = &gr_vk_adjoint,     [GR_FAM_OPTIM] = &gr_vk_optim,
    /* shape, tuple, getitem, record, getattr, print, assert, variable, seq, if, while,
     * grad, pyconv: host work (moves of values, effects, control, Python scalars) */
};

const gr_vk_op *gr_vk_op_of(const gr_op *op) { return vk_column[op->family]; }

/* What values need of this backend's device tensors (ir/gr_ir.h gr_device_ops). */
const gr_device_ops gr_vk_device_ops = {
    .dtensor_retain = gr_vkx_dt_retain,
    .dtensor_release = gr_vkx_dt_release,
    .resident_free = gr_vkr_resident_free,
    .resident_host = gr_vkr_resident_host,
};

/* The interpreter's view of this backend (exec/gr_exec.h gr_backend). */
static const gr_backend vk_backend = {
    .prim = gr_vk_prim, .predicate = predicate, .fused = gr_vkx_fused, .epilogue = gr_vkx_epilogue};

#else /* !GR_HAVE_VULKAN: every device but the CPU is unavailable */

sg_code gr_vk_exec_begin(gr_ctx *ctx, const char *device, sg_error *err) {
  ctx->dev = NULL;
  ctx->backend = NULL;
  if (!device || !strcmp(device, "cpu") || !strcmp(device, "auto")) return SG_OK;
  return sg_error_set(err, SG_UNAVAILABLE, "device '%s': this stagd was built without Vulkan",
                      device);
}
sg_code gr_vk_exec_end(gr_ctx *ctx, gr_val *result, sg_code rc, sg_error *err) {
  (void)ctx, (void)result, (void)err;
  return rc;
}
sg_code gr_vk_exec_finish(gr_ctx *ctx, gr_val *res, sg_code rc, bool keep_on_device, sg_error *err) {
  (void)keep_on_device;
  return gr_vk_exec_end(ctx, res, rc, err);
}
sg_code gr_vk_resident_upload(gr_val *v, const char *device, sg_error *err) {
  gr_ctx ctx = {0};
  (void)v;
  return gr_vk_exec_begin(&ctx, device, err);
}
uint64_t gr_vk_resident_bytes(const gr_resident *r) { return (void)r, 0; }
#endif
