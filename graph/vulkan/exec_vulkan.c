/*
 * exec_vulkan.c — runs graphs on a Vulkan device (see exec_vulkan.h, docs/vulkan.md).
 *
 * One request = one gr_vk_exec: a shared kn_vk_context (one per device, opened on
 * first use, kept until the device is lost), the batch being recorded, and every device
 * buffer of the request. GPU kernels write GV_DEVICE values (gr_dtensor: shape, dtype,
 * a reference-counted gr_dbuf). Dispatches accumulate in one command buffer (the
 * runner places barriers) until the host needs a value — a CPU-only op, a control-flow
 * predicate, the request's result — then the batch is submitted once and only the
 * needed tensors are downloaded. A device value dies with its last reference (a slot
 * is released at its last use, gr_code.last_use) and its buffer goes back to the request's free list, from which
 * later kernel outputs of the same size class are served.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "exec_vulkan.h"
#include "ops_cpu.h"

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

sg_code gr_vk_exec_begin(gr_ctx *ctx, const char *device, sg_error *err) {
  ctx->vk = NULL;
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
  x->deadline_ns = ctx->deadline_ns;
  ctx->vk = x;
  return SG_OK;
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

void gr_vk_dtensor_retain(gr_dtensor *d) { d->rc++; }
void gr_vk_dtensor_release(gr_dtensor *d) { gr_vkx_dt_release(d); }

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
  kn_tensor *t = kn_tensor_new(d->dtype, d->ndim, d->shape);
  if (d->size) rc = kn_vk_download(x->vk, d->db->buf, 0, t->data, (uint64_t)d->size * kn_dtype_size(d->dtype), err);
  if (rc) {
    kn_tensor_release(t);
    return rc;
  }
  d->host = t;
  return SG_OK;
}

/* ------------------------------------------------------------ interpreter hooks */
static bool on_device(const gr_val *v) { return v->tag == GV_DEVICE || v->tag == GV_RESIDENT; }
static bool is_device(const gr_val *v) { return v->tag == GV_DEVICE; }

/* A device or resident tensor *v (owned) replaced by its host copy (one download,
 * cached in the tensor). */
static sg_code host_leaf(void *arg, gr_val *v, sg_error *err) {
  if (v->tag == GV_RESIDENT) return gr_vk_resident_to_host(v, err);
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
static sg_code args_to_host(struct gr_vk_exec *x, gr_val *vals, int n, bool *owned, sg_error *err) {
  for (int i = 0; i < n; i++) owned[i] = false;
  for (int i = 0; i < n; i++) {
    if (vals[i].tag == GV_DEVICE) {
      gr_dtensor *d = vals[i].u.d;
      sg_code rc = gr_vkx_download(x, d, err);
      if (rc) return rc;
      vals[i] = gv_tensor(d->host);
    } else if ((vals[i].tag == GV_TUPLE || vals[i].tag == GV_RECORD) && gv_has_leaf(&vals[i], on_device, false)) {
      gr_val c = gv_retain(vals[i]);
      sg_code rc = gv_map_leaves(&c, on_device, false, host_leaf, x, err);
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

/* Ops that only move values around: device tensors pass through them, held by the
 * tuples and records they build (getitem / getattr only on tuples and records: a
 * tensor's getitem indexes it; `while` and `if` hand values to graphs, which take
 * device values, and read their conditions back through gr_vk_predicate). */
static bool moves_values(const gr_op *op, const gr_val *args, int n) {
  if (op->cpu == gr_cpu_tuple || op->cpu == gr_cpu_record || op->cpu == gr_cpu_seq || op->cpu == gr_cpu_while ||
      op->cpu == gr_cpu_if)
    return true;
  return (op->cpu == gr_cpu_getitem || op->cpu == gr_cpu_getattr) && n > 0 &&
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

sg_code gr_vk_predicate(gr_ctx *ctx, gr_val *v, sg_error *err) {
  if (!ctx->vk || v->tag != GV_DEVICE) return SG_OK;
  return host_leaf(ctx->vk, v, err);
}

sg_code gr_vk_exec_end(gr_ctx *ctx, gr_val *result, sg_code rc, sg_error *err) {
  struct gr_vk_exec *x = ctx->vk;
  if (!x) return rc;
  /* the result's device tensors (in tuples, records and closures too) come home: none
   * may outlive the request's buffers */
  if (rc == SG_OK) rc = gv_map_leaves(result, is_device, true, host_leaf, x, err);
  if (rc != SG_OK && gv_has_leaf(result, is_device, true)) {
    gv_release(*result);
    *result = gv_none();
  }
  SG_DEBUG(0, "vulkan:%d request: %llu dispatches in %llu submissions, %llu uploads, %llu downloads, "
              "%llu buffers (%llu outputs reused), %llu ops on the CPU", x->device,
           (unsigned long long)x->st.dispatches, (unsigned long long)x->st.submits,
           (unsigned long long)x->st.uploads, (unsigned long long)x->st.downloads,
           (unsigned long long)x->st.buffers, (unsigned long long)x->st.reused,
           (unsigned long long)x->st.cpu_fallbacks);
  pthread_mutex_lock(&stats_lock);
  totals.requests++;
  totals.dispatches += x->st.dispatches;
  totals.submits += x->st.submits;
  totals.uploads += x->st.uploads;
  totals.downloads += x->st.downloads;
  totals.buffers += x->st.buffers;
  totals.reused += x->st.reused;
  totals.cpu_fallbacks += x->st.cpu_fallbacks;
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
    if (x->bufs.data[i]->res) gr_vkr_rbuf_release(x->bufs.data[i]->res); /* resident: not ours */
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
  ctx->vk = NULL;
  return rc;
}

/* ------------------------------------------------------------ fallback log */
/* Ops that are host plumbing by design (no kernel, nothing to log): the rows below,
 * and any op without a tensor argument (loop counters, Python-number arithmetic: there
 * is no device data to keep on the device). */
static bool is_tensor(const gr_val *v) { return v->tag == GV_TENSOR || on_device(v); }

static bool host_op(const gr_op *op, const gr_val *args, int n) {
  bool tensor = false; /* in tuples and records too: (concat (tuple A B)) moves data */
  for (int i = 0; i < n && !tensor; i++) tensor = gv_has_leaf(&args[i], is_tensor, false);
  if (!tensor) return true;
  /* (tuple, record, seq, if, while never get here: moves_values) */
  static const char *const names[] = {"getitem", "getattr", "shape", "len", "size", "print", "assert",
                                      "variable", "read", "assign", "assign_add", "grad", NULL};
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
  sg_code rc = args_to_host(ctx->vk, h, n, owned, err);
  if (!rc) rc = op->cpu(ctx, op, h, n, out, err);
  for (int i = 0; i < n; i++)
    if (owned[i]) gv_release(h[i]);
  if (h != hl) free(h);
  if (owned != ol) free(owned);
  return rc;
}

sg_code gr_vk_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                   sg_error *err) {
  if (moves_values(op, args, n)) return op->cpu(ctx, op, args, n, out, err);
  if (op->cpu == gr_cpu_shape && n == 1 && device_shape(op, &args[0], out)) return SG_OK;
  if (gr_vkr_wants(op, args, n)) return gr_vkr_prim(ctx, op, args, n, out, err);
  const gr_vk_op *v = op->vulkan;
  if (v && v->run) {
    bool done = false;
    sg_code rc = gr_vkx_dtype_run(ctx, op, args, n, out, &done, err);
    if (rc || done) return rc;
  }
  if (!host_op(op, args, n)) {
    log_fallback(ctx->vk, op, args, n);
    ctx->vk->st.cpu_fallbacks++;
  }
  return run_on_host(ctx, op, args, n, out, err);
}

/* ------------------------------------------------------------ kernels */
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

static int vk_binop(int code) {
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
  int et = elementwise_elem(x, dt), vop = vk_binop(code);
  kn_dtype rt = kn_binop_result((kn_binop)code, dt, dt);
  if (et < 0) return false;
  if (vk_cmpop(code) >= 0) return rt == KN_BOOL;
  return vop >= 0 && kn_vk_binary_supported((kn_vk_elem)et, (kn_vk_binop)vop) && rt == dt;
}

static sg_code run_binary(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                          bool *done, sg_error *err) {
  struct gr_vk_exec *x = ctx->vk;
  if (n == 1) /* unary minus */
    return gr_vk_unary.run(ctx, gr_op_lookup("neg"), args, 1, out, done, err);
  int vop = vk_binop(op->code), cop = vk_cmpop(op->code);
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

static int vk_unop(int code) {
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
  int et = elementwise_elem(x, dt), vop = vk_unop(code);
  if (et < 0) return false;
  if (code == KN_NOT) return true;
  return vop >= 0 && kn_vk_unary_supported((kn_vk_elem)et, (kn_vk_unop)vop) &&
         kn_unop_result((kn_unop)code, dt) == dt;
}

static sg_code run_unary(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                         bool *done, sg_error *err) {
  (void)n;
  struct gr_vk_exec *x = ctx->vk;
  int vop = vk_unop(op->code);
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

/* sum / mean / max / min / argmax along one axis or over everything (bool inputs arrive
 * converted by exec_vulkan_dtype.c; float16 has its own kernels: reduce_f16, argmax_f16);
 * an empty reduced axis gives sum 0 and mean NaN here, and max/min/argmax of nothing go
 * to the CPU kernel, which reports the error. The mean of float32 and float16 is one
 * dispatch (KN_VK_REDUCE_MEAN), that of float64 a sum and a scaling. */
static sg_code run_reduce(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                          bool *done, sg_error *err) {
  struct gr_vk_exec *x = ctx->vk;
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
  gr_dtensor *da;
  bool ta;
  sg_code rc = gr_vkx_operand_as(x, &args[0], dt, &da, &ta, err);
  if (rc) return rc;
  /* the reduced view: [outer, len, inner] */
  kn_vk_shape s = gr_vkx_vshape(da);
  int64_t oshape[KN_MAX_DIMS];
  int ond = 0;
  if (!has_axis) {
    s.ndim = 1;
    s.dims[0] = da->size;
    axis = 0;
  } else {
    if (axis < 0) axis += da->ndim;
    if (axis < 0 || axis >= da->ndim) goto cpu; /* the CPU kernel reports it */
    for (int i = 0; i < da->ndim; i++)
      if (i != axis) oshape[ond++] = da->shape[i];
  }
  int64_t len = s.dims[axis], nout = 1;
  for (int i = 0; i < ond; i++) nout *= oshape[i];
  if (len == 0 && nout > 0 && code != KN_SUM && code != KN_MEAN) goto cpu;
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
cpu:
  if (ta) gr_vkx_dt_release(da);
  return SG_OK;
}

/* softmax / log_softmax (row code 1) along any axis, float32, float64 or float16 */
static sg_code run_softmax(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                           bool *done, sg_error *err) {
  struct gr_vk_exec *x = ctx->vk;
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
static sg_code run_matmul(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                          bool *done, sg_error *err) {
  (void)n;
  bool tra = op->code & KN_MATMUL_TRANS_A, trb = op->code & KN_MATMUL_TRANS_B;
  struct gr_vk_exec *x = ctx->vk;
  const gr_val *a = &args[0], *b = &args[1];
  kn_dtype dt, dt2;
  if (!gr_vkx_tensor_dtype(a, &dt) || !gr_vkx_tensor_dtype(b, &dt2) || dt != dt2) return SG_OK;
  int et = dt == KN_FLOAT16 ? KN_VK_F16 : gr_vkx_elem_of(dt);
  if (et < 0 || et == KN_VK_BOOL || !kn_vk_elem_supported(x->vk, (kn_vk_elem)et)) return SG_OK;
  if (et == KN_VK_F16 && /* a device without shaderFloat16: the CPU kernel */
      !kn_vk_matmul_available(kn_vk_context_info(x->vk), KN_VK_F16, KN_VK_MATMUL_TILED, NULL))
    return SG_OK;
  int na = a->tag == GV_DEVICE ? a->u.d->ndim : a->u.t->ndim;
  int nb = b->tag == GV_DEVICE ? b->u.d->ndim : b->u.t->ndim;
  const int64_t *sa = a->tag == GV_DEVICE ? a->u.d->shape : a->u.t->shape;
  const int64_t *sb = b->tag == GV_DEVICE ? b->u.d->shape : b->u.t->shape;
  if (na == 0 || nb == 0 || (tra && na < 2) || (trb && nb < 2)) return SG_OK; /* the CPU's error */
  int64_t m = tra ? sa[na - 1] : na == 1 ? 1 : sa[na - 2], k = tra ? sa[na - 2] : sa[na - 1];
  int64_t kb = trb ? sb[nb - 1] : nb == 1 ? sb[0] : sb[nb - 2];
  int64_t nn = trb ? sb[nb - 2] : nb == 1 ? 1 : sb[nb - 1];
  if (k != kb) return SG_OK; /* the CPU kernel reports the mismatch */
  /* batch dims: a's sa[0..na-2), b's sb[0..nb-2), broadcast */
  int bna = na > 2 ? na - 2 : 0, bnb = nb > 2 ? nb - 2 : 0;
  int bn = bna > bnb ? bna : bnb;
  int64_t bshape[KN_MAX_DIMS], batch = 1, pa = 1, pb = 1;
  for (int i = 0; i < bn; i++) {
    int ia = i - (bn - bna), ib = i - (bn - bnb);
    int64_t da_ = ia >= 0 ? sa[ia] : 1, db_ = ib >= 0 ? sb[ib] : 1;
    if (da_ != db_ && da_ != 1 && db_ != 1) return SG_OK;
    bshape[i] = da_ == 1 ? db_ : da_;
    batch *= bshape[i];
    pa *= da_;
    pb *= db_;
  }
  if ((pa != 1 && pa != batch) || (pb != 1 && pb != batch)) return SG_OK;
  for (int i = 0; i < bn; i++) { /* a partial broadcast (e.g. [2,1] with [1,3]) */
    int ia = i - (bn - bna), ib = i - (bn - bnb);
    if (pa != 1 && (ia < 0 || sa[ia] != bshape[i])) return SG_OK;
    if (pb != 1 && (ib < 0 || sb[ib] != bshape[i])) return SG_OK;
  }
  int64_t oshape[KN_MAX_DIMS];
  int ond = 0;
  for (int i = 0; i < bn; i++) oshape[ond++] = bshape[i];
  if (na > 1) oshape[ond++] = m;
  if (nb > 1) oshape[ond++] = nn;
  gr_dtensor *da, *db, *r;
  bool ta, tb;
  sg_code rc = gr_vkx_operand_as(x, a, dt, &da, &ta, err);
  if (rc) return rc;
  if ((rc = gr_vkx_operand_as(x, b, dt, &db, &tb, err))) {
    if (ta) gr_vkx_dt_release(da);
    return rc;
  }
  kn_vk_batch *bt;
  if (!(rc = gr_vkx_new_output(x, dt, ond, oshape, &r, err))) {
    if (r->size && !(rc = gr_vkx_batch(x, &bt, err))) {
      if (k == 0 && dt != KN_FLOAT16) /* an empty sum: zeros (float16: the kernel writes them) */
        rc = kn_vk_fill(bt, r->db->buf, gr_vkx_bytes(dt, r->size), 0, false, err);
      else
        rc = kn_vk_matmul_trans(bt, (kn_vk_elem)et, op->code, da->db->buf, db->db->buf, r->db->buf,
                                batch, m, nn, k, pa == 1 ? 0 : m * k, pb == 1 ? 0 : k * nn, err);
    }
    rc = gr_vkx_finish(r, rc, out, done);
  }
  if (ta) gr_vkx_dt_release(da);
  if (tb) gr_vkx_dt_release(db);
  return rc;
}

static sg_code run_reshape(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                           bool *done, sg_error *err) {
  if (args[0].tag != GV_DEVICE) { /* a host tensor's reshape is a host view: no kernel */
    sg_code rc = op->cpu(ctx, op, args, n, out, err);
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
  gr_dtensor *r = gr_vkx_dt_new(ctx->vk, d->db, d->dtype, nd, sh);
  d->db->rc++;
  out->tag = GV_DEVICE;
  out->u.d = r;
  *done = true;
  return SG_OK;
}

static sg_code run_transpose(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                             bool *done, sg_error *err) {
  struct gr_vk_exec *x = ctx->vk;
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

#else /* !GR_HAVE_VULKAN: every device but the CPU is unavailable */

sg_code gr_vk_exec_begin(gr_ctx *ctx, const char *device, sg_error *err) {
  ctx->vk = NULL;
  if (!device || !strcmp(device, "cpu") || !strcmp(device, "auto")) return SG_OK;
  return sg_error_set(err, SG_UNAVAILABLE, "device '%s': this stagd was built without Vulkan",
                      device);
}
sg_code gr_vk_exec_end(gr_ctx *ctx, gr_val *result, sg_code rc, sg_error *err) {
  (void)ctx, (void)result, (void)err;
  return rc;
}
sg_code gr_vk_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                   sg_error *err) {
  return op->cpu(ctx, op, args, n, out, err);
}
void gr_vk_dtensor_retain(struct gr_dtensor *d) { (void)d; }
void gr_vk_dtensor_release(struct gr_dtensor *d) { (void)d; }
sg_code gr_vk_predicate(gr_ctx *ctx, gr_val *v, sg_error *err) { return (void)ctx, (void)v, (void)err, SG_OK; }
void gr_vk_stats_get(gr_vk_stats *out) { memset(out, 0, sizeof *out); }
const gr_vk_op gr_vk_binary, gr_vk_unary, gr_vk_reduce, gr_vk_softmax, gr_vk_matmul,
    gr_vk_reshape, gr_vk_transpose;
#endif
