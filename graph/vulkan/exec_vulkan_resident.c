// SPDX-License-Identifier: Apache-2.0
/*
 * exec_vulkan_resident.c — device-resident tensors (GV_RESIDENT; docs/client.md,
 * "Device-resident tensors"): Vulkan buffers that outlive a request, so the daemon's
 * eager handles, staged calls' results (return_handles) and variables on vulkan:N stay
 * on the device between requests.
 *
 * A resident tensor is only made from a device value whose batch has completed
 * (export_device flushes first) and is never written again, so any number of requests
 * may read it at once with no ordering between them. A request borrows it (import):
 * the request's gr_dbuf points at the resident buffer (dbuf->res) and the request never
 * reuses, writes or frees it (exec_vulkan.c skips such buffers). Host copies: Put
 * uploads once (gr_value_to_device), Fetch downloads once and caches the host copy in
 * the resident tensor (resident_host), so later reads cost nothing.
 *
 * Variables on a Vulkan device hold resident tensors: `assign` exports its value into
 * the request's log, published when the request succeeds (exec/txn.c); `read` hands
 * out the resident tensor, which the next kernel imports without a copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_vulkan.h"

#ifdef GR_HAVE_VULKAN
#include "exec_vulkan_int.h"

/* Takes over rb's reference and host's. */
static gr_resident *resident_new(gr_rbuf *rb, kn_dtype dt, int ndim, const int64_t *shape,
                                 kn_tensor *host) {
  gr_resident *r = sg_xcalloc(1, sizeof *r);
  atomic_init(&r->rc, 1);
  r->ops = &gr_vk_device_ops;
  r->rb = rb;
  r->dtype = dt;
  r->ndim = ndim;
  r->size = kn_shape_copy(r->shape, shape, ndim);
  pthread_mutex_init(&r->lock, NULL);
  r->host = host;
  return r;
}

void gr_vkr_resident_free(gr_resident *r) {
  gr_vkx_rbuf_release(r->rb);
  if (r->host) kn_tensor_release(r->host);
  pthread_mutex_destroy(&r->lock);
  free(r);
}

/* ------------------------------------------------------------ request side */

/* The error for reading r when its device was lost: its buffer went with the old
 * context, and requests on that device now run on a new one. */
static sg_code lost_error(const gr_resident *r, sg_error *err) {
  return sg_error_set(err, SG_UNAVAILABLE,
                      "a tensor's data was on vulkan:%d, which was lost; compute it again",
                      r->rb->device);
}

/* r as a device value of request x (a new dtensor reference the caller releases), or
 * its host copy when it lives on another device. */
static sg_code resident_host(gr_resident *r, kn_tensor **out, sg_error *err);

static gr_dtensor *borrow(struct gr_vk_exec *x, gr_resident *r) {
  gr_dbuf *db = NULL;
  for (size_t i = 0; i < x->bufs.len && !db; i++)
    if (x->bufs.data[i]->res == r->rb) db = x->bufs.data[i];
  if (!db) {
    db = sg_xcalloc(1, sizeof *db);
    db->buf = r->rb->buf;
    db->bytes = r->rb->bytes;
    db->clean = true;
    db->res = gr_vkx_rbuf_retain(r->rb); /* released when the request ends */
    sg_vec_push(&x->bufs, db);
  }
  db->rc++;
  return gr_vkx_dt_new(x, db, r->dtype, r->ndim, r->shape);
}

sg_code gr_vkr_import(struct gr_vk_exec *x, gr_resident *r, gr_val *out, sg_error *err) {
  if (r->rb->device != x->device || r->rb->vk != x->vk) {
    kn_tensor *t;
    sg_code rc = resident_host(r, &t, err);
    if (rc) return rc;
    *out = gv_tensor(t);
    return SG_OK;
  }
  gr_dtensor *d = borrow(x, r);
  pthread_mutex_lock(&r->lock);
  if (r->host) d->host = kn_tensor_retain(r->host); /* a later CPU op reads this, no download */
  pthread_mutex_unlock(&r->lock);
  out->tag = GV_DEVICE;
  out->u.d = d;
  return SG_OK;
}

/* A device value of x as a resident tensor: the batch that writes it is submitted and
 * waited for first, then its buffer leaves the request's pool. */
static sg_code export_device(struct gr_vk_exec *x, gr_dtensor *d, gr_resident **out, sg_error *err) {
  sg_code rc = gr_vkx_flush(x, err);
  if (rc) return rc;
  gr_dbuf *db = d->db;
  if (!db->res) db->res = gr_vkx_rbuf_new(x, db->buf, db->bytes); /* the request's reference */
  *out = resident_new(gr_vkx_rbuf_retain(db->res), d->dtype, d->ndim, d->shape,
                      d->host ? kn_tensor_retain(d->host) : NULL);
  return SG_OK;
}

/* A device value or host tensor *v (owned) made resident on x's device (a host tensor
 * is uploaded once). */
static sg_code keep_leaf(void *arg, gr_val *v, sg_error *err) {
  struct gr_vk_exec *x = arg;
  gr_dtensor *d = NULL;
  sg_code rc = SG_OK;
  if (v->tag == GV_TENSOR) {
    if ((rc = gr_vkx_upload(x, v, v->u.t->dtype, &d, err))) return rc;
  } else {
    d = v->u.d;
    d->rc++;
  }
  gr_resident *r;
  rc = export_device(x, d, &r, err);
  gr_vkx_dt_release(d);
  if (rc) return rc;
  gv_release(*v);
  v->tag = GV_RESIDENT;
  v->u.r = r;
  return SG_OK;
}

static bool keepable(const gr_val *v) { return v->tag == GV_TENSOR || v->tag == GV_DEVICE; }

/* *v (owned) kept on x's device: its tensors, in tuples, records and closures too,
 * become resident; anything else is left alone. */
sg_code gr_vkr_keep(struct gr_vk_exec *x, gr_val *v, sg_error *err) {
  return gv_map_leaves(v, keepable, true, keep_leaf, x, err);
}

/* variable / read / assign / assign_add / assign_sub on a Vulkan device: cells hold
 * resident tensors. assign_add and assign_sub compute on the device; the new value goes to the request's log and
 * is published when the request succeeds (exec/txn.c). */
static sg_code run_variable(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                            sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  if (op->code == 1 || (op->code != 0 && args[0].tag != GV_VAR)) /* read, or the CPU's error */
    return gr_cpu_kernel(op)(ctx, op, args, n, out, err);
  gr_obj *cell = op->code == 0 ? NULL : args[0].u.o;
  gr_val nv = gv_none();
  sg_code rc = SG_OK;
  if (op->code >= 3) {
    gr_val pair[2] = {gr_var_read(ctx, cell), args[1]};
    rc = gr_prim(ctx, op->code == 3 ? gr_op_add : gr_op_sub, pair, 2, &nv, err); /* on this device */
    gv_release(pair[0]);
  } else if (op->code == 2 && gr_var_refuse_cycle(ctx, &args[1], cell, err)) {
    return err->code;
  } else {
    nv = gv_retain(args[op->code == 0 ? 0 : 1]);
  }
  if (!rc && ((rc = gr_vkr_keep(x, &nv, err)) || (rc = gv_own_strings(&nv, cell && atomic_load(&cell->escaped), err)))) gv_release(nv);
  if (rc) return rc;
  if (!cell) {
    gr_val args2[1] = {nv};
    rc = gr_cpu_kernel(op)(ctx, op, args2, 1, out, err);
  } else {
    gr_var_write(ctx, cell, gv_retain(nv));
    *out = gv_retain(nv);
  }
  gv_release(nv);
  return rc;
}

static bool any_resident(const gr_val *args, int n) {
  for (int i = 0; i < n; i++)
    if (args[i].tag == GV_RESIDENT) return true;
  return false;
}

bool gr_vkr_wants(const gr_op *op, const gr_val *args, int n) {
  return op->family == GR_FAM_VARIABLE || any_resident(args, n);
}

enum { MAX_ARGS = 64 };

sg_code gr_vkr_prim(gr_ctx *ctx, const gr_op *op, bool kernel, gr_val *args, int n, gr_val *out,
                    sg_error *err) {
  if (op->family == GR_FAM_VARIABLE) return run_variable(ctx, op, args, n, out, err);
  if (n > MAX_ARGS) return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: too many arguments", op->name);
  /* ops with a kernel borrow the buffer; the others read the cached host copy */
  gr_val a[MAX_ARGS], tmp[MAX_ARGS];
  sg_code rc = SG_OK;
  int i = 0;
  for (; i < n && !rc; i++) {
    a[i] = args[i];
    tmp[i] = gv_none();
    if (args[i].tag != GV_RESIDENT) continue;
    if (kernel) {
      rc = gr_vkr_import(gr_vkx(ctx), args[i].u.r, &tmp[i], err);
    } else {
      tmp[i] = gv_retain(args[i]);
      rc = gv_resident_to_host(&tmp[i], err);
    }
    if (!rc) a[i] = tmp[i];
  }
  if (!rc) rc = gr_prim(ctx, op, a, n, out, err); /* no resident argument left */
  for (int k = 0; k < i; k++) gv_release(tmp[k]);
  return rc;
}

/* ------------------------------------------------------------ host side */

/* A one-shot request on r's device (Fetch's download). */
static sg_code open_on(int device, struct gr_vk_exec **x, sg_error *err) {
  char name[32];
  snprintf(name, sizeof name, "vulkan:%d", device);
  return gr_vkx_begin(name, 0, x, err);
}

static sg_code resident_host(gr_resident *r, kn_tensor **out, sg_error *err) {
  pthread_mutex_lock(&r->lock); /* one download, however many readers ask at once */
  sg_code rc = !r->host && kn_vk_context_lost(r->rb->vk) ? lost_error(r, err) : SG_OK;
  if (!r->host && !rc) {
    struct gr_vk_exec *x = NULL;
    gr_val none = gv_none();
    rc = open_on(r->rb->device, &x, err);
    if (!rc && x->vk != r->rb->vk) rc = lost_error(r, err); /* reopened since */
    if (!rc) {
      gr_dtensor *d = borrow(x, r);
      rc = gr_vkx_download(x, d, err);
      if (!rc) r->host = kn_tensor_retain(d->host);
      gr_vkx_dt_release(d);
    }
    if (x) rc = gr_vkx_end(x, &none, rc, err);
  }
  if (!rc) *out = kn_tensor_retain(r->host);
  pthread_mutex_unlock(&r->lock);
  return rc;
}

sg_code gr_vkr_resident_host(gr_resident *r, kn_tensor **out, sg_error *err) { return resident_host(r, out, err); }

uint64_t gr_vk_resident_bytes(const gr_resident *r) { return r->rb->bytes; }

#endif
