// SPDX-License-Identifier: Apache-2.0
/*
 * exec_vulkan_request.c — the Vulkan executor's requests (the bottom of graph/vulkan:
 * every other file of the folder builds on it, it calls none of them).
 *
 * One request = one gr_vk_exec: a shared kn_vk_context (one per device, opened on
 * first use, kept until the device is lost), the batch being recorded, and every device
 * buffer of the request. GPU kernels write GV_DEVICE values (gr_dtensor: shape, dtype,
 * a reference-counted gr_dbuf). Dispatches accumulate in one command buffer (the
 * runner places barriers) until the host needs a value — a CPU-only op, a control-flow
 * predicate, the request's result — then the batch is submitted once and only the
 * needed tensors are downloaded. A device value dies with its last reference (a slot
 * is released at its last use, gr_code.last_use) and its buffer goes back to the
 * request's free list, from which later kernel outputs of the same size class are
 * served. Resident tensors' buffers (gr_rbuf) are reference counted here too: a request
 * that borrows one holds a reference until it ends.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gr_vulkan.h"

#ifdef GR_HAVE_VULKAN
#include "exec_vulkan_int.h"

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static gr_vk_stats totals;

void gr_vk_stats_get(gr_vk_stats *out) {
  pthread_mutex_lock(&stats_lock);
  *out = totals;
  pthread_mutex_unlock(&stats_lock);
}

/* ------------------------------------------------------------ contexts */
enum { MAX_DEVICES = 16 };
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static kn_vk_context *contexts[MAX_DEVICES];
static int auto_choice = -2; /* -2 undecided, -1 CPU, else a device */

/* At exit: the device contexts go (saving their pipeline caches; Mesa frees its
 * per-device allocations). The instance stays: see docs/vulkan.md on unloading. */
static void close_contexts(void) {
  pthread_mutex_lock(&ctx_lock);
  for (int i = 0; i < MAX_DEVICES; i++) {
    kn_vk_context_release(contexts[i]);
    contexts[i] = NULL;
  }
  pthread_mutex_unlock(&ctx_lock);
}

/* contexts[] holds one reference to each context, each request (gr_vk_exec) and each
 * resident buffer another. A lost context is dropped from contexts[] by the next
 * request on its device, which opens a new one; the old one is destroyed when its
 * last request ends and its last resident tensor is released. */
static sg_code open_context(int index, kn_vk_context **out, sg_error *err) {
  if (index < 0 || index >= MAX_DEVICES)
    return sg_error_set(err, SG_NOT_FOUND, "vulkan:%d: no such device", index);
  pthread_mutex_lock(&ctx_lock);
  sg_code rc = SG_OK;
  if (contexts[index] && kn_vk_context_lost(contexts[index])) {
    SG_WARN(0, "vulkan:%d was lost: opening it again", index);
    kn_vk_context_release(contexts[index]);
    contexts[index] = NULL;
  }
  if (!contexts[index]) {
    static bool registered;
    if (!registered) atexit(close_contexts);
    registered = true;
    rc = kn_vk_context_create(index, NULL, &contexts[index], err);
    if (rc == SG_OK) {
      const kn_vk_device_info *d = kn_vk_context_info(contexts[index]);
      kn_vk_matmul_variant forced = kn_vk_context_matmul_variant(contexts[index]);
      kn_vk_matmul_plan mp = kn_vk_matmul_choice(NULL, KN_VK_F32, d, forced);
      SG_INFO(0, "graph executor: vulkan:%d is %s (%s%s); matmul: %s (%s)%s%s", index, d->name,
              d->subgroup_arithmetic ? "subgroup arithmetic: subgroup reductions and softmax"
                                     : "no subgroup arithmetic: shared-memory reductions",
              d->cooperative_matrix ? ", cooperative matrix" : "",
              mp.kernel ? mp.kernel : "none", mp.reason,
              forced != KN_VK_MATMUL_AUTO ? ", STAGD_VK_MATMUL=" : "",
              forced != KN_VK_MATMUL_AUTO ? kn_vk_matmul_variant_name(forced) : "");
    }
  }
  *out = kn_vk_context_retain(contexts[index]); /* the request's reference */
  pthread_mutex_unlock(&ctx_lock);
  return rc;
}

sg_code gr_vkx_begin(const char *device, uint64_t deadline_ns, struct gr_vk_exec **out,
                     sg_error *err) {
  *out = NULL;
  if (!device || !strcmp(device, "cpu")) return SG_OK;
  int index;
  if (!strcmp(device, "auto")) {
    pthread_mutex_lock(&ctx_lock);
    int choice = auto_choice;
    pthread_mutex_unlock(&ctx_lock);
    if (choice == -2) {
      sg_error e = SG_ERROR_INIT;
      if (kn_vk_choose_device("auto", &choice, &e) != SG_OK) choice = -1;
      sg_error_clear(&e);
      pthread_mutex_lock(&ctx_lock);
      auto_choice = choice;
      pthread_mutex_unlock(&ctx_lock);
    }
    index = choice;
  } else {
    sg_code rc = kn_vk_choose_device(device, &index, err);
    if (rc) return rc;
  }
  if (index < 0) return SG_OK;
  kn_vk_context *vk = NULL;
  sg_code rc = open_context(index, &vk, err);
  if (rc) return rc;
  struct gr_vk_exec *x = sg_xcalloc(1, sizeof *x);
  x->device = index;
  x->vk = vk;
  x->deadline_ns = deadline_ns;
  *out = x;
  return SG_OK;
}

/* ------------------------------------------------------------ resident buffers */
static atomic_uint_fast64_t resident_bytes, resident_buffers;

gr_rbuf *gr_vkx_rbuf_new(struct gr_vk_exec *x, kn_vk_buffer *buf, uint64_t bytes) {
  gr_rbuf *rb = sg_xcalloc(1, sizeof *rb);
  atomic_init(&rb->rc, 1);
  rb->device = x->device;
  rb->vk = kn_vk_context_retain(x->vk);
  rb->buf = buf;
  rb->bytes = bytes;
  atomic_fetch_add(&resident_bytes, bytes);
  atomic_fetch_add(&resident_buffers, 1);
  return rb;
}

gr_rbuf *gr_vkx_rbuf_retain(gr_rbuf *rb) {
  atomic_fetch_add_explicit(&rb->rc, 1, memory_order_relaxed);
  return rb;
}

void gr_vkx_rbuf_release(gr_rbuf *rb) {
  if (!rb || atomic_fetch_sub(&rb->rc, 1) != 1) return;
  kn_vk_buffer_destroy(rb->buf);
  kn_vk_context_release(rb->vk);
  atomic_fetch_sub(&resident_bytes, rb->bytes);
  atomic_fetch_sub(&resident_buffers, 1);
  free(rb);
}

void gr_vk_resident_stats(uint64_t *bytes, uint64_t *buffers) {
  *bytes = atomic_load(&resident_bytes);
  *buffers = atomic_load(&resident_buffers);
}

/* ------------------------------------------------------------ buffers */
sg_code gr_vkx_dbuf_get(struct gr_vk_exec *x, uint64_t bytes, bool for_upload, gr_dbuf **out,
                        sg_error *err) {
  gr_dbuf *best = NULL;
  bool pending = (x->batch && kn_vk_batch_dispatch_count(x->batch) > 0) || x->inflight;
  for (size_t i = 0; i < x->bufs.len; i++) {
    gr_dbuf *d = x->bufs.data[i];
    if (d->rc || d->res || d->bytes < bytes || d->bytes > 2 * bytes + 256) continue;
    if (for_upload && pending && !d->clean) continue;
    if (!best || d->bytes < best->bytes) best = d;
  }
  if (best && !for_upload) x->st.reused++;
  if (!best) {
    x->st.buffers++;
    kn_vk_buffer *b;
    sg_code rc = kn_vk_buffer_create(x->vk, bytes, &b, err);
    if (rc) return rc;
    best = sg_xcalloc(1, sizeof *best);
    best->buf = b;
    best->bytes = bytes;
    sg_vec_push(&x->bufs, best);
  }
  best->rc = 1;
  best->clean = !for_upload ? false : best->clean;
  *out = best;
  return SG_OK;
}

gr_dtensor *gr_vkx_dt_new(struct gr_vk_exec *x, gr_dbuf *db, kn_dtype dt, int ndim,
                          const int64_t *shape) {
  gr_dtensor *t = sg_xcalloc(1, sizeof *t);
  t->ops = &gr_vk_device_ops;
  t->rc = 1;
  t->db = db;
  t->dtype = dt;
  t->ndim = ndim;
  t->size = kn_shape_copy(t->shape, shape, ndim);
  sg_vec_push(&x->tensors, t);
  return t;
}

void gr_vkx_dt_release(gr_dtensor *t) {
  if (--t->rc > 0) return;
  if (t->host) kn_tensor_release(t->host);
  t->host = NULL;
  if (--t->db->rc == 0) t->db->clean = false;
}

void gr_vkx_dt_retain(gr_dtensor *d) { d->rc++; }

sg_code gr_vkx_new_output(struct gr_vk_exec *x, kn_dtype dt, int ndim, const int64_t *shape,
                          gr_dtensor **out, sg_error *err) {
  int64_t size = 1;
  for (int i = 0; i < ndim; i++) size *= shape[i];
  sg_code rc = kn_check_shape(ndim, shape, err);
  if (rc) return rc;
  gr_dbuf *db;
  rc = gr_vkx_dbuf_get(x, gr_vkx_bytes(dt, size), false, &db, err);
  if (rc) return rc;
  *out = gr_vkx_dt_new(x, db, dt, ndim, shape);
  return SG_OK;
}

/* A full batch goes to the device without waiting (the previous one in flight, if any,
 * is waited for first: at most one batch runs while the next is recorded). */
static sg_code send_full_batch(struct gr_vk_exec *x, sg_error *err) {
  sg_code rc = kn_vk_inflight_wait(x->inflight, x->deadline_ns, err);
  x->inflight = NULL;
  if (rc) return rc;
  kn_vk_batch *b = x->batch;
  x->batch = NULL;
  x->st.submits++;
  x->st.dispatches += kn_vk_batch_dispatch_count(b);
  return kn_vk_batch_send(b, &x->inflight, err);
}

sg_code gr_vkx_batch(struct gr_vk_exec *x, kn_vk_batch **out, sg_error *err) {
  if (x->batch && kn_vk_batch_dispatch_count(x->batch) >= BATCH_MAX_DISPATCHES) {
    sg_code rc = send_full_batch(x, err);
    if (rc) return rc;
  }
  if (!x->batch) {
    sg_code rc = kn_vk_batch_begin(x->vk, &x->batch, err);
    if (rc) return rc;
    if (x->inflight) kn_vk_batch_after_inflight(x->batch); /* it may read what that one writes */
  }
  *out = x->batch;
  return SG_OK;
}

/* Waits for the batch in flight, then submits the recorded batch (if any) and waits
 * for it: afterwards no dispatch reads any buffer. */
sg_code gr_vkx_flush(struct gr_vk_exec *x, sg_error *err) {
  bool waited = x->inflight != NULL;
  sg_code rc = kn_vk_inflight_wait(x->inflight, x->deadline_ns, err);
  x->inflight = NULL;
  if (rc) return rc;
  if (!x->batch) {
    for (size_t i = 0; waited && i < x->bufs.len; i++) x->bufs.data[i]->clean = true;
    return SG_OK;
  }
  kn_vk_batch *b = x->batch;
  x->batch = NULL;
  x->st.submits++;
  x->st.dispatches += kn_vk_batch_dispatch_count(b);
  rc = kn_vk_batch_submit(b, x->deadline_ns, err);
  if (rc == SG_OK)
    for (size_t i = 0; i < x->bufs.len; i++) x->bufs.data[i]->clean = true;
  return rc;
}

/* A host tensor (or Python scalar, as dtype dt) as a device tensor the caller owns a
 * reference to. Tensors are looked up in, and added to, the request's upload cache. */
/* The bits naming a Python number as dtype dt in the scalar cache; false: not one. */
static bool scalar_key(const gr_val *v, uint64_t *bits) {
  if (v->tag == GV_INT) *bits = (uint64_t)v->u.i;
  else if (v->tag == GV_BOOL) *bits = v->u.b;
  else if (v->tag == GV_FLOAT) memcpy(bits, &v->u.f, sizeof *bits);
  else return false;
  return true;
}

static gr_dtensor *cache_hit(gr_dtensor *d) {
  d->rc++;
  return d;
}

sg_code gr_vkx_upload(struct gr_vk_exec *x, const gr_val *v, kn_dtype dt, gr_dtensor **out,
                      sg_error *err) {
  bool cacheable = v->tag == GV_TENSOR && v->u.t->dtype == dt;
  uint64_t bits = 0;
  bool scalar = scalar_key(v, &bits);
  if (cacheable)
    for (int i = 0; i < UPLOAD_CACHE; i++)
      if (x->uploaded[i].host == v->u.t) {
        *out = cache_hit(x->uploaded[i].dev);
        return SG_OK;
      }
  if (scalar)
    for (int i = 0; i < SCALAR_CACHE; i++)
      if (x->scalars[i].dev && x->scalars[i].dt == dt && x->scalars[i].tag == v->tag &&
          x->scalars[i].bits == bits) {
        *out = cache_hit(x->scalars[i].dev);
        return SG_OK;
      }
  kn_tensor *t = gv_to_tensor(v, dt);
  gr_dbuf *db = NULL;
  x->st.uploads++;
  x->st.upload_bytes += (uint64_t)t->size * kn_dtype_size(t->dtype);
  sg_code rc = gr_vkx_dbuf_get(x, gr_vkx_bytes(t->dtype, t->size), true, &db, err);
  if (rc == SG_OK && t->size)
    rc = kn_vk_upload(x->vk, db->buf, 0, t->data, (uint64_t)t->size * kn_dtype_size(t->dtype), err);
  if (rc) {
    if (db) db->rc = 0;
    kn_tensor_release(t);
    return rc;
  }
  gr_dtensor *d = gr_vkx_dt_new(x, db, t->dtype, t->ndim, t->shape);
  d->host = t; /* keeps v's tensor alive, so its address names it while cached */
  if (cacheable) {
    int slot = x->next_slot++ % UPLOAD_CACHE;
    if (x->uploaded[slot].dev) gr_vkx_dt_release(x->uploaded[slot].dev);
    x->uploaded[slot].host = t;
    x->uploaded[slot].dev = cache_hit(d);
  } else if (scalar) {
    int slot = x->next_scalar++ % SCALAR_CACHE;
    if (x->scalars[slot].dev) gr_vkx_dt_release(x->scalars[slot].dev);
    x->scalars[slot].dt = dt;
    x->scalars[slot].tag = v->tag;
    x->scalars[slot].bits = bits;
    x->scalars[slot].dev = cache_hit(d);
  }
  *out = d;
  return SG_OK;
}

sg_code gr_vkx_download(struct gr_vk_exec *x, gr_dtensor *d, sg_error *err) {
  if (d->host) return SG_OK;
  sg_code rc = gr_vkx_flush(x, err);
  if (rc) return rc;
  x->st.downloads++;
  x->st.download_bytes += (uint64_t)d->size * kn_dtype_size(d->dtype);
  kn_tensor *t = kn_tensor_empty(d->dtype, d->ndim, d->shape); /* the download fills it */
  if (!t) return kn_alloc_error(err);
  if (d->size) rc = kn_vk_download(x->vk, d->db->buf, 0, t->data, (uint64_t)d->size * kn_dtype_size(d->dtype), err);
  if (rc) {
    kn_tensor_release(t);
    return rc;
  }
  d->host = t;
  return SG_OK;
}

/* ------------------------------------------------------------ host copies */
static bool on_device(const gr_val *v) { return v->tag == GV_DEVICE || v->tag == GV_RESIDENT; }
static bool is_device(const gr_val *v) { return v->tag == GV_DEVICE; }

/* A device or resident tensor *v (owned) replaced by its host copy (one download,
 * cached in the tensor). */
sg_code gr_vkx_host_leaf(void *arg, gr_val *v, sg_error *err) {
  if (v->tag == GV_RESIDENT) return gv_resident_to_host(v, err);
  gr_dtensor *d = v->u.d;
  sg_code rc = gr_vkx_download(arg, d, err);
  if (rc) return rc;
  *v = gv_tensor(kn_tensor_retain(d->host));
  gr_vkx_dt_release(d);
  return SG_OK;
}

/* vals[0..n) as the CPU kernels take them: device tensors, also inside tuples and
 * records, become host copies. vals[i] is replaced by an owned value where owned[i]
 * is set (release it after use), by a borrowed host tensor otherwise. */
sg_code gr_vkx_args_to_host(struct gr_vk_exec *x, gr_val *vals, int n, bool *owned, sg_error *err) {
  for (int i = 0; i < n; i++) owned[i] = false;
  for (int i = 0; i < n; i++) {
    if (vals[i].tag == GV_DEVICE) {
      gr_dtensor *d = vals[i].u.d;
      sg_code rc = gr_vkx_download(x, d, err);
      if (rc) return rc;
      vals[i] = gv_tensor(d->host);
    } else if ((vals[i].tag == GV_TUPLE || vals[i].tag == GV_RECORD) && gv_has_leaf(&vals[i], on_device, false)) {
      gr_val c = gv_retain(vals[i]);
      sg_code rc = gv_map_leaves(&c, on_device, false, gr_vkx_host_leaf, x, err);
      if (rc) {
        gv_release(c);
        return rc;
      }
      vals[i] = c;
      owned[i] = true;
    }
  }
  return SG_OK;
}

sg_code gr_vkx_end(struct gr_vk_exec *x, gr_val *result, sg_code rc, sg_error *err) {
  if (!x) return rc;
  /* the result's device tensors (in tuples, records and closures too) come home: none
   * may outlive the request's buffers */
  if (rc == SG_OK) rc = gv_map_leaves(result, is_device, true, gr_vkx_host_leaf, x, err);
  if (rc != SG_OK && gv_has_leaf(result, is_device, true)) {
    gv_release(*result);
    *result = gv_none();
  }
  SG_DEBUG(0, "vulkan:%d request: %llu dispatches in %llu submissions, %llu uploads, %llu downloads, "
              "%llu buffers (%llu outputs reused), %llu ops on the CPU, %llu fused chains", x->device,
           (unsigned long long)x->st.dispatches, (unsigned long long)x->st.submits,
           (unsigned long long)x->st.uploads, (unsigned long long)x->st.downloads,
           (unsigned long long)x->st.buffers, (unsigned long long)x->st.reused,
           (unsigned long long)x->st.cpu_fallbacks, (unsigned long long)x->st.fused);
  pthread_mutex_lock(&stats_lock);
  totals.requests++;
  totals.dispatches += x->st.dispatches;
  totals.submits += x->st.submits;
  totals.uploads += x->st.uploads;
  totals.downloads += x->st.downloads;
  totals.buffers += x->st.buffers;
  totals.reused += x->st.reused;
  totals.cpu_fallbacks += x->st.cpu_fallbacks;
  totals.fused += x->st.fused;
  totals.epilogues += x->st.epilogues;
  totals.upload_bytes += x->st.upload_bytes;
  totals.download_bytes += x->st.download_bytes;
  pthread_mutex_unlock(&stats_lock);
  if (x->inflight) { /* the device may still use the buffers freed below: wait (no deadline) */
    sg_error late = SG_ERROR_INIT;
    sg_code wrc = kn_vk_inflight_wait(x->inflight, 0, rc ? &late : err);
    x->inflight = NULL;
    sg_error_clear(&late);
    if (!rc) rc = wrc;
  }
  if (x->batch) {
    /* an error left recorded work behind: never submitted, dropped */
    kn_vk_batch_discard(x->batch);
    x->batch = NULL;
  }
  for (size_t i = 0; i < x->tensors.len; i++) {
    gr_dtensor *t = x->tensors.data[i];
    if (t->host) kn_tensor_release(t->host);
    free(t);
  }
  for (size_t i = 0; i < x->bufs.len; i++) {
    if (x->bufs.data[i]->res) gr_vkx_rbuf_release(x->bufs.data[i]->res); /* resident: not ours */
    else kn_vk_buffer_destroy(x->bufs.data[i]->buf);
    free(x->bufs.data[i]);
  }
  sg_vec_free(&x->tensors);
  sg_vec_free(&x->bufs);
  if (rc != SG_OK && err && err->message && kn_vk_context_lost(x->vk) &&
      strstr(err->message, " was lost")) {
    char *m = sg_xasprintf("%s; the request failed, the device is reopened for the next one",
                           err->message);
    free(err->message);
    err->message = m;
  }
  kn_vk_context_release(x->vk);
  free(x);
  return rc;
}


/* ------------------------------------------------------------ recorders' helpers */
/* A float32 operand: a device tensor, a host tensor (uploaded) or a Python number.
 * *tmp is set when the operand was uploaded for this op (release it after). */
bool gr_vkx_is_f32(const gr_val *v) {
  return (v->tag == GV_DEVICE && v->u.d->dtype == KN_FLOAT32) ||
         (v->tag == GV_TENSOR && v->u.t->dtype == KN_FLOAT32);
}

sg_code gr_vkx_operand_as(struct gr_vk_exec *x, const gr_val *v, kn_dtype dt, gr_dtensor **out,
                          bool *tmp, sg_error *err) {
  *tmp = false;
  if (v->tag == GV_DEVICE) {
    *out = v->u.d;
    return SG_OK;
  }
  *tmp = true;
  return gr_vkx_upload(x, v, dt, out, err);
}

sg_code gr_vkx_operand(struct gr_vk_exec *x, const gr_val *v, gr_dtensor **out, bool *tmp,
                       sg_error *err) {
  return gr_vkx_operand_as(x, v, KN_FLOAT32, out, tmp, err);
}

uint64_t gr_vkx_bytes(kn_dtype dt, int64_t n) {
  int et = gr_vkx_elem_of(dt);
  return et < 0 ? (uint64_t)n * kn_dtype_size(dt) : kn_vk_elem_bytes((kn_vk_elem)et, n);
}

int gr_vkx_elem_of(kn_dtype dt) {
  switch (dt) {
  case KN_BOOL: return KN_VK_BOOL;
  case KN_FLOAT32: return KN_VK_F32;
  case KN_FLOAT64: return KN_VK_F64;
  case KN_INT32: return KN_VK_I32;
  case KN_INT64: return KN_VK_I64;
  case KN_FLOAT16: return KN_VK_F16;
  default: return -1;
  }
}

/* The dtype of a tensor operand (device or host); false for anything else. */
bool gr_vkx_tensor_dtype(const gr_val *v, kn_dtype *dt) {
  if (v->tag == GV_DEVICE) *dt = v->u.d->dtype;
  else if (v->tag == GV_TENSOR) *dt = v->u.t->dtype;
  else return false;
  return true;
}

/* A Python number that NumPy 1.24 combines with a `dt` tensor without changing dt. */
bool gr_vkx_tensor_meta(const gr_val *v, kn_dtype *dt, int *nd, const int64_t **shape) {
  if (v->tag == GV_DEVICE) {
    *dt = v->u.d->dtype, *nd = v->u.d->ndim, *shape = v->u.d->shape;
    return true;
  }
  return v->tag == GV_TENSOR && gv_tensor_meta(v, dt, nd, shape);
}

bool gr_vkx_weak_scalar_fits(const gr_val *v, kn_dtype dt) {
  if (v->tag == GV_FLOAT) return kn_dtype_is_float(dt);
  if (v->tag != GV_INT) return false;
  if (dt == KN_INT32) return v->u.i >= INT32_MIN && v->u.i <= INT32_MAX;
  return dt == KN_INT64 || kn_dtype_is_float(dt);
}

kn_vk_shape gr_vkx_vshape(const gr_dtensor *d) {
  kn_vk_shape s = {.ndim = d->ndim};
  for (int i = 0; i < d->ndim; i++) s.dims[i] = d->shape[i];
  return s;
}

sg_code gr_vkx_finish(gr_dtensor *r, sg_code rc, gr_val *out, bool *done) {
  if (rc) {
    gr_vkx_dt_release(r);
    return rc;
  }
  out->tag = GV_DEVICE;
  out->u.d = r;
  *done = true;
  return SG_OK;
}

#else /* !GR_HAVE_VULKAN */
void gr_vk_stats_get(gr_vk_stats *out) { memset(out, 0, sizeof *out); }
void gr_vk_resident_stats(uint64_t *bytes, uint64_t *buffers) { *bytes = *buffers = 0; }
#endif
