// SPDX-License-Identifier: Apache-2.0
/*
 * eager.c — the eager half of the service (docs/client.md): Put stores a value as a
 * device-resident handle, EagerOp runs one op-table primitive (graph/ir/ops.c, through
 * gr_eager_op) on handles and values and stores the result as new handles, Fetch
 * reads handles back as tensors, Release frees them. Execute (service.c) uses the
 * same Value ↔ gr_value conversions to take handles as arguments and, on request,
 * to leave its results in the daemon.
 *
 * Hot path: an EagerOp on small CPU tensors costs one protobuf decode, a map lookup
 * per handle, the kernel, one map insert and a small reply — no JSON anywhere.
 *
 * On a Vulkan device handles hold device-resident tensors (graph/vulkan/exec_vulkan_resident.c):
 * Put uploads once, EagerOp and Execute (return_handles) leave results on the device,
 * Fetch downloads once and caches the host copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eager.h"
#include "kn.h"
#include "shm.h"

static sg_code bad_arg(sg_error *err, const char *path, const char *what) {
  return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: %s", path, what);
}

sg_code sv_check_device(const char *device, sg_error *err) {
  if (!strcmp(device, "cpu") || !strcmp(device, "auto") || !strcmp(device, "vulkan")) return SG_OK;
  if (!strncmp(device, "vulkan:", 7) && device[7]) {
    const char *p = device + 7;
    while (*p >= '0' && *p <= '9') p++;
    if (!*p) return SG_OK;
  }
  return sg_error_set(err, SG_INVALID_ARGUMENT,
                      "unknown device '%s' (expected cpu, auto, vulkan or vulkan:N; ListDevices "
                      "names the devices of this daemon)",
                      device);
}

/* The tensor a shared-memory file is read into, made once the file checked out. */
typedef struct shm_dest {
  kn_dtype dt;
  int ndim;
  const int64_t *shape;
  kn_tensor *k;
} shm_dest;

static void *shm_alloc(void *ud) {
  shm_dest *d = ud;
  d->k = kn_tensor_empty(d->dt, d->ndim, d->shape); /* every byte read into it */
  return d->k ? d->k->data : NULL;                  /* NULL: out of host memory */
}

/* A Tensor message → a tensor value: its bytes from `data`, or (the local data path) from
 * the shared-memory file it names, read straight into the tensor's storage. */
static sg_code tensor_in(sv_shm *shm, const Stagd__V1__Tensor *t, const char *path, gr_value **out, sg_error *err) {
  if (t->dtype < STAGD__V1__DTYPE__DTYPE_BOOL || t->dtype > STAGD__V1__DTYPE__DTYPE_FLOAT64)
    return bad_arg(err, path, "tensor has no dtype");
  kn_dtype dt = (kn_dtype)(t->dtype - 1);
  if (t->n_shape > KN_MAX_DIMS)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: %zu dimensions, at most %d", path, t->n_shape, KN_MAX_DIMS);
  int64_t shape[KN_MAX_DIMS];
  for (size_t i = 0; i < t->n_shape; i++) shape[i] = t->shape[i];
  sg_code rc = kn_check_shape((int)t->n_shape, shape, err);
  if (rc) return rc;
  uint64_t n = 1;
  for (size_t i = 0; i < t->n_shape; i++) n *= (uint64_t)shape[i];
  if (t->shm && *t->shm) {
    if (!shm)
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "%s: a tensor in shared memory ('%.64s'), but this call has no local data path (it "
                          "is only for clients on the daemon's unix socket, and off with --no-shm)",
                          path, t->shm);
    if (t->data.len) return bad_arg(err, path, "a tensor has both data and a shm file");
    shm_dest d = {dt, (int)t->n_shape, shape, NULL};
    sg_code rc2 = sv_shm_take(shm, t->shm, (size_t)(n * kn_dtype_size(dt)), t->shm_keep, shm_alloc, &d, path, err);
    if (rc2) {
      if (d.k) kn_tensor_release(d.k);
      else if (rc2 == SG_RESOURCE_EXHAUSTED) return sg_error_prefix(err, kn_alloc_error(err), "%s", path);
      return rc2;
    }
    *out = gr_value_tensor(d.k);
    return SG_OK;
  }
  if (t->data.len != n * kn_dtype_size(dt))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: %s tensor of %llu elements needs %llu bytes, got %zu", path,
                        kn_dtype_name(dt), (unsigned long long)n, (unsigned long long)(n * kn_dtype_size(dt)),
                        t->data.len);
  kn_tensor *k = kn_tensor_empty(dt, (int)t->n_shape, shape); /* every byte copied below */
  if (!k) return sg_error_prefix(err, kn_alloc_error(err), "%s", path);
  if (t->data.len) memcpy(k->data, t->data.data, t->data.len);
  *out = gr_value_tensor(k);
  return SG_OK;
}

static sg_code value_in(sv_handles *h, sv_shm *shm, const sv_owner *who, const Stagd__V1__Value *v, const char *path, int depth, gr_value **out,
                        sg_error *err);

/* A Record's fields in order; errors name the field's path (args[0].params.w). */
static sg_code record_in(sv_handles *h, sv_shm *shm, const sv_owner *who, const Stagd__V1__Record *r, const char *path, int depth, gr_value **out,
                         sg_error *err) {
  int n = (int)r->n_fields;
  gr_value **items = sg_xcalloc((size_t)(n ? n : 1), sizeof *items);
  const char **names = sg_xcalloc((size_t)(n ? n : 1), sizeof *names);
  sg_code rc = SG_OK;
  char sub[256];
  int got = 0;
  for (; got < n && !rc; got++) {
    const Stagd__V1__Field *f = r->fields[got];
    names[got] = f->name;
    snprintf(sub, sizeof sub, "%s.%s", path, *f->name ? f->name : "<empty name>");
    if (!f->value) rc = bad_arg(err, sub, "field without a value");
    else rc = value_in(h, shm, who, f->value, sub, depth + 1, &items[got], err);
  }
  if (rc) {
    for (int k = 0; k < got; k++) gr_value_release(items[k]);
  } else if (!(*out = gr_value_record(names, items, n, err))) {
    rc = sg_error_prefix(err, err->code, "%s", path);
  }
  free(items);
  free(names);
  return rc;
}

static sg_code value_in(sv_handles *h, sv_shm *shm, const sv_owner *who, const Stagd__V1__Value *v, const char *path, int depth, gr_value **out,
                        sg_error *err) {
  *out = NULL;
  if (depth > 64) return bad_arg(err, path, "values nest too deeply");
  switch (v->kind_case) {
  case STAGD__V1__VALUE__KIND_NONE: *out = gr_value_none(); return SG_OK;
  case STAGD__V1__VALUE__KIND_BOOL_VALUE: *out = gr_value_bool(v->bool_value); return SG_OK;
  case STAGD__V1__VALUE__KIND_INT_VALUE: *out = gr_value_int(v->int_value); return SG_OK;
  case STAGD__V1__VALUE__KIND_FLOAT_VALUE: *out = gr_value_float(v->float_value); return SG_OK;
  case STAGD__V1__VALUE__KIND_STRING_VALUE:
    if (!(*out = gr_value_string(v->string_value, err))) return sg_error_prefix(err, err->code, "%s", path);
    return SG_OK;
  case STAGD__V1__VALUE__KIND_TENSOR: return tensor_in(shm, v->tensor, path, out, err);
  case STAGD__V1__VALUE__KIND_HANDLE: {
    gr_value *r = sv_handles_get(h, who, v->handle->id, NULL, err);
    if (!r) return sg_error_prefix(err, SG_NOT_FOUND, "%s", path);
    *out = r;
    return SG_OK;
  }
  case STAGD__V1__VALUE__KIND_TUPLE: {
    int n = (int)v->tuple->n_items;
    gr_value **items = sg_xcalloc((size_t)(n ? n : 1), sizeof *items);
    char sub[256];
    for (int i = 0; i < n; i++) {
      snprintf(sub, sizeof sub, "%s.tuple[%d]", path, i);
      sg_code rc = value_in(h, shm, who, v->tuple->items[i], sub, depth + 1, &items[i], err);
      if (rc) {
        for (int k = 0; k < i; k++) gr_value_release(items[k]);
        free(items);
        return rc;
      }
    }
    *out = gr_value_tuple(items, n);
    free(items);
    return SG_OK;
  }
  case STAGD__V1__VALUE__KIND_RECORD: return record_in(h, shm, who, v->record, path, depth, out, err);
  default: return bad_arg(err, path, "empty Value");
  }
}

sv_owner sv_call_owner(const sv_call *call) { return (sv_owner){call->session, call->principal}; }

sg_code sv_value_to_gr(sv_handles *h, const sv_call *call, const Stagd__V1__Value *v, const char *path,
                       gr_value **out, sg_error *err) {
  sv_owner who = sv_call_owner(call);
  return value_in(h, call->shm, &who, v, path, 0, out, err);
}

static Stagd__V1__Value *new_value(sv_call *call) {
  Stagd__V1__Value *r = sg_arena_alloc(call->arena, sizeof *r);
  stagd__v1__value__init(r);
  return r;
}

static void fill_meta(sv_call *call, const gr_value *v, Stagd__V1__DType *dtype, size_t *n_shape, int64_t **shape) {
  int dt, nd;
  const int64_t *sh;
  if (!gr_value_tensor_meta(v, &dt, &nd, &sh)) return;
  *dtype = (Stagd__V1__DType)(dt + 1);
  *n_shape = (size_t)nd;
  *shape = sg_arena_alloc(call->arena, sizeof(int64_t) * (size_t)(nd ? nd : 1));
  for (int i = 0; i < nd; i++) (*shape)[i] = sh[i];
}

static void release_tensor(void *t) { kn_tensor_release(t); }

/* A tensor value (host or device-resident: downloaded once, cached) inline. The reply
 * points at the tensor's own storage, no copy: the call's arena holds a reference until
 * the transport has encoded the reply (sg_arena_on_free). */
static sg_code inline_tensor(sv_call *call, const gr_value *v, Stagd__V1__Value **out, sg_error *err) {
  kn_tensor *t;
  sg_code rc = gr_value_host_tensor(v, &t, err);
  if (rc) return rc;
  Stagd__V1__Value *r = new_value(call);
  Stagd__V1__Tensor *m = sg_arena_alloc(call->arena, sizeof *m);
  stagd__v1__tensor__init(m);
  fill_meta(call, v, &m->dtype, &m->n_shape, &m->shape);
  size_t bytes = (size_t)t->size * kn_dtype_size(t->dtype);
  if (call->shm && call->shm_min_bytes && bytes && bytes >= call->shm_min_bytes) {
    /* the local data path: the bytes go to the client's staging file (once per call),
     * else to a new file the client reads and removes */
    if (call->shm_into && sv_shm_put_into(call->shm, call->shm_into, t->data, bytes)) {
      m->shm = (char *)call->shm_into;
      m->shm_keep = true;
      call->shm_into = NULL;
    } else {
      char name[SV_SHM_NAME_MAX];
      rc = sv_shm_give(call->shm, call->session, t->data, bytes, name, err);
      if (!rc) m->shm = sg_arena_strdup(call->arena, name);
    }
    kn_tensor_release(t);
    if (rc) return rc;
  } else {
    m->data.len = bytes;
    m->data.data = t->data;
    sg_arena_on_free(call->arena, release_tensor, t);
  }
  r->kind_case = STAGD__V1__VALUE__KIND_TENSOR;
  r->tensor = m;
  *out = r;
  return SG_OK;
}

static sg_code value_out(sv_handles *h, sv_call *call, const gr_value *v, const char *device, bool as_handles,
                         int depth, Stagd__V1__Value **out, sg_error *err) {
  Stagd__V1__Value *r = new_value(call);
  *out = r;
  bool b;
  int64_t i;
  double f;
  gr_value_kind k = gr_value_kind_of(v);
  switch (k) {
  case GR_VALUE_NONE: r->kind_case = STAGD__V1__VALUE__KIND_NONE; r->none = true; return SG_OK;
  case GR_VALUE_BOOL:
  case GR_VALUE_INT:
  case GR_VALUE_FLOAT:
    gr_value_scalar(v, &b, &i, &f);
    if (k == GR_VALUE_BOOL) r->kind_case = STAGD__V1__VALUE__KIND_BOOL_VALUE, r->bool_value = b;
    else if (k == GR_VALUE_INT) r->kind_case = STAGD__V1__VALUE__KIND_INT_VALUE, r->int_value = i;
    else r->kind_case = STAGD__V1__VALUE__KIND_FLOAT_VALUE, r->float_value = f;
    return SG_OK;
  case GR_VALUE_TENSOR:
  case GR_VALUE_VARIABLE: {
    if (k == GR_VALUE_TENSOR && !as_handles) return inline_tensor(call, v, out, err);
    gr_value *cur = k == GR_VALUE_VARIABLE ? gr_value_variable_get(v) : gr_value_retain((gr_value *)v);
    Stagd__V1__TensorHandle *hd = sg_arena_alloc(call->arena, sizeof *hd);
    stagd__v1__tensor_handle__init(hd);
    fill_meta(call, cur, &hd->dtype, &hd->n_shape, &hd->shape);
    gr_value_release(cur);
    char id[SV_HANDLE_ID_MAX];
    sv_owner who = sv_call_owner(call);
    sg_code rc = sv_handles_put(h, device, &who, gr_value_retain((gr_value *)v), id, sizeof id, err);
    if (rc) return rc;
    hd->id = sg_arena_strdup(call->arena, id);
    hd->device = sg_arena_strdup(call->arena, device);
    hd->variable = k == GR_VALUE_VARIABLE;
    r->kind_case = STAGD__V1__VALUE__KIND_HANDLE;
    r->handle = hd;
    return SG_OK;
  }
  case GR_VALUE_TUPLE: {
    if (depth > 64) return sg_error_set(err, SG_INVALID_ARGUMENT, "result nests too deeply");
    int n = gr_value_tuple_len(v);
    Stagd__V1__Tuple *t = sg_arena_alloc(call->arena, sizeof *t);
    stagd__v1__tuple__init(t);
    t->n_items = (size_t)n;
    t->items = sg_arena_calloc(call->arena, (size_t)(n ? n : 1), sizeof *t->items);
    for (int j = 0; j < n; j++) {
      gr_value *item = gr_value_tuple_item(v, j);
      sg_code rc = value_out(h, call, item, device, as_handles, depth + 1, &t->items[j], err);
      gr_value_release(item);
      if (rc) return rc;
    }
    r->kind_case = STAGD__V1__VALUE__KIND_TUPLE;
    r->tuple = t;
    return SG_OK;
  }
  case GR_VALUE_STR:
    r->kind_case = STAGD__V1__VALUE__KIND_STRING_VALUE;
    r->string_value = sg_arena_strdup(call->arena, gr_value_str_of(v)); /* the reply outlives v */
    return SG_OK;
  case GR_VALUE_RECORD: {
    if (depth > 64) return sg_error_set(err, SG_INVALID_ARGUMENT, "result nests too deeply");
    int n = gr_value_record_len(v);
    Stagd__V1__Record *rec = sg_arena_alloc(call->arena, sizeof *rec);
    stagd__v1__record__init(rec);
    rec->n_fields = (size_t)n;
    rec->fields = sg_arena_calloc(call->arena, (size_t)(n ? n : 1), sizeof *rec->fields);
    for (int j = 0; j < n; j++) {
      Stagd__V1__Field *fd = sg_arena_alloc(call->arena, sizeof *fd);
      stagd__v1__field__init(fd);
      const char *name;
      gr_value *item = gr_value_record_field(v, j, &name);
      fd->name = sg_arena_strdup(call->arena, name);
      sg_code rc = value_out(h, call, item, device, as_handles, depth + 1, &fd->value, err);
      gr_value_release(item);
      if (rc) return rc;
      rec->fields[j] = fd;
    }
    r->kind_case = STAGD__V1__VALUE__KIND_RECORD;
    r->record = rec;
    return SG_OK;
  }
  default: {
    char *d = gr_value_describe(v);
    sg_code rc = sg_error_set(err, SG_INVALID_ARGUMENT, "a %s cannot leave the daemon (results are tensors, "
                              "scalars, strings, variables and tuples and records of them)", d);
    free(d);
    return rc;
  }
  }
}

sg_code sv_value_from_gr(sv_handles *h, sv_call *call, const gr_value *v, const char *device,
                         bool as_handles, Stagd__V1__Value **out, sg_error *err) {
  return value_out(h, call, v, device, as_handles, 0, out, err);
}

/* ---------------------------------------------------------------- handlers */

const char *sv_device_or_cpu(const char *d) { return d && *d ? d : "cpu"; }

sg_code sv_h_put(sv_service *sv, sv_call *call, const ProtobufCMessage *req_, ProtobufCMessage *reply_,
                 sg_error *err) {
  const Stagd__V1__PutRequest *q = (const void *)req_;
  Stagd__V1__PutReply *r = (void *)reply_;
  const char *device = sv_device_or_cpu(q->device);
  sg_code rc = sv_check_device(device, err);
  if (rc) return rc;
  if (!q->value) return sg_error_set(err, SG_INVALID_ARGUMENT, "Put: no value");
  gr_value *v, *placed;
  sv_handles *h = sv_service_handles(sv);
  if ((rc = sv_value_to_gr(h, call, q->value, "value", &v, err))) return rc;
  /* the handle limit is checked before the device memory is taken; then one upload */
  bool host = sv_service_config(sv)->host_handles;
  sv_owner who = sv_call_owner(call);
  if (!(rc = sv_handles_check_room(h, device, &who, gr_value_bytes(v), err)) &&
      !(rc = host ? (placed = gr_value_retain(v), SG_OK) : gr_value_to_device(v, device, &placed, err))) {
    rc = sv_value_from_gr(h, call, placed, device, true, &r->result, err);
    gr_value_release(placed);
  }
  gr_value_release(v);
  return rc;
}

enum { MAX_EAGER_ARGS = 64 };

/* "op 'NAME' args[" (the name cut at 32 bytes) into path, which holds 64; its length.
 * Every argument of every eager op names its path (for its errors): no printf there. */
static size_t arg_path_head(char *path, const char *op) {
  size_t n = strnlen(op, 32);
  memcpy(path, "op '", 4);
  memcpy(path + 4, op, n);
  memcpy(path + 4 + n, "' args[", 7);
  return 4 + n + 7;
}

/* path after its head: "I]" (I < MAX_EAGER_ARGS, at most 2 digits). */
static void arg_path_index(char *path, size_t at, size_t i) {
  if (i >= 10) path[at++] = (char)('0' + i / 10 % 10);
  path[at++] = (char)('0' + i % 10);
  path[at++] = ']';
  path[at] = 0;
}

sg_code sv_eager_run(sv_service *sv, sv_call *call, const char *op, Stagd__V1__Value *const *argv, size_t n_args,
                     const char *device, gr_value **res, sg_error *err) {
  *res = NULL;
  if (n_args > MAX_EAGER_ARGS)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "op '%s': %zu arguments, at most %d", op, n_args, MAX_EAGER_ARGS);
  sv_handles *h = sv_service_handles(sv);
  gr_value *args[MAX_EAGER_ARGS];
  size_t got = 0;
  sg_code rc = SG_OK;
  char path[64];
  size_t at = arg_path_head(path, op);
  for (; got < n_args; got++) {
    arg_path_index(path, at, got);
    if ((rc = sv_value_to_gr(h, call, argv[got], path, &args[got], err))) break;
  }
  if (!rc) rc = gr_eager_op_keep(op, args, (int)n_args, device, !sv_service_config(sv)->host_handles, res, err);
  for (size_t i = 0; i < got; i++) gr_value_release(args[i]);
  return rc;
}

sg_code sv_h_eager_op(sv_service *sv, sv_call *call, const ProtobufCMessage *req_, ProtobufCMessage *reply_,
                      sg_error *err) {
  const Stagd__V1__EagerOpRequest *q = (const void *)req_;
  Stagd__V1__EagerOpReply *r = (void *)reply_;
  const char *device = sv_device_or_cpu(q->device);
  sg_code rc = sv_check_device(device, err);
  if (rc) return rc;
  gr_value *res = NULL;
  rc = sv_eager_run(sv, call, q->op, q->args, q->n_args, device, &res, err);
  if (!rc) rc = sv_value_from_gr(sv_service_handles(sv), call, res, device, true, &r->result, err);
  gr_value_release(res);
  return rc;
}

/* A Fetch that fails after some results went to shared-memory files: the reply is never
 * sent, so nobody would read them. */
static sg_code fetch_failed(sv_call *call, Stagd__V1__FetchReply *r, sg_code rc) {
  for (size_t i = 0; call->shm && i < r->n_values; i++) {
    const Stagd__V1__Value *v = r->values[i];
    if (v && v->kind_case == STAGD__V1__VALUE__KIND_TENSOR && v->tensor->shm && *v->tensor->shm &&
        !v->tensor->shm_keep) /* a staging file is the client's */
      sv_shm_remove(call->shm, v->tensor->shm);
  }
  r->n_values = 0; /* (a reply that still goes out, with eager_first: no half a result) */
  return rc;
}

static sg_code fetch_ids(sv_service *sv, sv_call *call, const ProtobufCMessage *req_, ProtobufCMessage *reply_,
                         sg_error *err) {
  const Stagd__V1__FetchRequest *q = (const void *)req_;
  Stagd__V1__FetchReply *r = (void *)reply_;
  sv_handles *h = sv_service_handles(sv);
  r->values = sg_arena_calloc(call->arena, q->n_ids ? q->n_ids : 1, sizeof *r->values);
  sv_owner who = sv_call_owner(call);
  call->shm_min_bytes = q->shm_min_bytes; /* used only when call->shm is set (a local caller) */
  call->shm_into = q->shm_into && *q->shm_into ? sg_arena_strdup(call->arena, q->shm_into) : NULL;
  for (size_t i = 0; i < q->n_ids; i++) {
    gr_value *v = sv_handles_get(h, &who, q->ids[i], NULL, err);
    if (!v) return fetch_failed(call, r, SG_NOT_FOUND);
    gr_value *cur = gr_value_kind_of(v) == GR_VALUE_VARIABLE ? gr_value_variable_get(v) : gr_value_retain(v);
    gr_value_release(v);
    /* tensors inline (a device-resident one downloaded once, its host copy cached) */
    sg_code rc = sv_value_from_gr(h, call, cur, "cpu", false, &r->values[r->n_values++], err);
    gr_value_release(cur);
    if (rc) return fetch_failed(call, r, rc);
  }
  return SG_OK;
}

sg_code sv_h_fetch(sv_service *sv, sv_call *call, const ProtobufCMessage *req_, ProtobufCMessage *reply_,
                   sg_error *err) {
  const Stagd__V1__FetchRequest *q = (const void *)req_;
  Stagd__V1__FetchReply *r = (void *)reply_;
  return sv_with_eager_first(sv, call, q->eager_first, &r->eager_first, &r->failed, fetch_ids, req_, reply_, err);
}

sg_code sv_h_release(sv_service *sv, sv_call *call, const ProtobufCMessage *req_, ProtobufCMessage *reply_,
                     sg_error *err) {
  (void)err;
  const Stagd__V1__ReleaseRequest *q = (const void *)req_;
  Stagd__V1__ReleaseReply *r = (void *)reply_;
  sv_handles *h = sv_service_handles(sv);
  sv_owner who = sv_call_owner(call);
  for (size_t i = 0; i < q->n_ids; i++) r->released += sv_handles_release(h, &who, q->ids[i]);
  sv_handles_stats(h, &r->live_handles, &r->live_bytes);
  return SG_OK;
}

sg_code sv_h_session(sv_service *sv, sv_call *call, const ProtobufCMessage *req_, ProtobufCMessage *reply_,
                     sg_error *err) {
  const Stagd__V1__SessionRequest *q = (const void *)req_;
  Stagd__V1__SessionReply *r = (void *)reply_;
  if (!call->session)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "Session: the call carries no stagd-session metadata (a session is named by the "
                        "client that opens it, on every call)");
  sv_handles *h = sv_service_handles(sv);
  sv_owner who = sv_call_owner(call);
  r->lease_ms = sv_service_config(sv)->handle_lease_ms;
  if (q->n_grant_ids && !*q->grant_to)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "Session: grant_ids without grant_to (the session to share them with)");
  for (size_t i = 0; i < q->n_grant_ids; i++) {
    sg_code rc = sv_handles_grant(h, &who, q->grant_ids[i], q->grant_to, err);
    if (rc) return sg_error_prefix(err, rc, "Session: grant_ids[%zu]", i);
    r->granted++;
  }
  if (q->end) {
    r->released = sv_handles_end_session(h, &who);
    sv_shm_end_session(sv_service_shm(sv), call->session); /* results its client never read */
    SG_DEBUG(call->id, "session %s ended: %llu handles released", call->session, (unsigned long long)r->released);
  } else {
    r->handles = sv_handles_session_count(h, &who, NULL, NULL);
  }
  return SG_OK;
}
