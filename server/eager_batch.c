// SPDX-License-Identifier: Apache-2.0
/*
 * eager_batch.c — EagerBatch (docs/client.md "Asynchronous eager"): the Python client
 * queues eager ops and sends them here many at a time. The ops run in order, each as
 * one EagerOp would (sv_eager_run); a result is stored under the id the client chose
 * for it (sv_handles_put_as), so later ops name it like any handle. A result whose dtype
 * or shape is not the one the client inferred fails its op, so the client's metadata is
 * never silently wrong. An op that fails is reported by index, and so is every later op
 * that names the result of a failed op (its `cause`); the others still run, in order.
 * Then the batch's release_ids are released (tensors the client dropped meanwhile).
 * Execute and Fetch carry a batch the same way (`eager_first`, sv_with_eager_first), so
 * a sync point after queued ops is one round trip.
 */
#include <stdlib.h>
#include <string.h>

#include "eager.h"
#include "transport.h"

enum { MAX_BATCH_OPS = 4096, MAX_SCAN_DEPTH = 64 };

/* The result ids of the batch's failed ops, interned (a batch of 4096 ops with 64
 * arguments each looks up 262,144 ids: a scan of every failed id was quadratic), each
 * with the batch index of the failed op that made it fail. */
typedef struct failed_ids {
  sg_intern ids;
  sg_map cause; /* interned id → cause */
} failed_ids;

/* The first cause recorded for `id`, or -1. */
static int failed_lookup(const failed_ids *f, const char *id) {
  void *v;
  const char *k = f->cause.len ? sg_intern_find(&f->ids, id, strlen(id)) : NULL;
  return k && sg_map_get(&f->cause, (uintptr_t)k, &v) ? (int)(uintptr_t)v : -1;
}

/* Records `id` as made by a failed op (the first record of an id stays). */
static void failed_add(failed_ids *f, const char *id, uint32_t cause) {
  const char *k = sg_intern_str(&f->ids, id);
  if (!sg_map_get(&f->cause, (uintptr_t)k, NULL)) sg_map_put(&f->cause, (uintptr_t)k, (void *)(uintptr_t)cause);
}

/* The batch index of the failed op whose result `v` names (through tuples and records),
 * or -1. */
static int failed_cause(const Stagd__V1__Value *v, const failed_ids *failed, int depth) {
  if (!failed->cause.len || depth > MAX_SCAN_DEPTH) return -1;
  switch (v->kind_case) {
  case STAGD__V1__VALUE__KIND_HANDLE: return failed_lookup(failed, v->handle->id);
  case STAGD__V1__VALUE__KIND_TUPLE:
    for (size_t i = 0; i < v->tuple->n_items; i++) {
      int c = failed_cause(v->tuple->items[i], failed, depth + 1);
      if (c >= 0) return c;
    }
    return -1;
  case STAGD__V1__VALUE__KIND_RECORD:
    for (size_t i = 0; i < v->record->n_fields; i++) {
      const Stagd__V1__Value *f = v->record->fields[i]->value;
      int c = f ? failed_cause(f, failed, depth + 1) : -1;
      if (c >= 0) return c;
    }
    return -1;
  default: return -1;
  }
}

/* A failure as an EagerBatchError (in the call's arena): code, message, reason. */
static Stagd__V1__EagerBatchError *batch_error(sv_call *call, sg_code rc, const sg_error *e, const char *message) {
  Stagd__V1__EagerBatchError *be = sg_arena_alloc(call->arena, sizeof *be);
  stagd__v1__eager_batch_error__init(be);
  be->code = (int32_t)rc;
  be->message = sg_arena_strdup(call->arena, message);
  if (e->reason) be->reason = (char *)sg_reason_name(e->reason);
  return be;
}

/* INTERNAL unless `res` is a tensor of the dtype and shape the client inferred. */
static sg_code check_meta(const Stagd__V1__EagerBatchOp *o, const gr_value *res, sg_error *err) {
  int dt, nd;
  const int64_t *sh;
  if (!gr_value_tensor_meta(res, &dt, &nd, &sh))
    return sg_error_set(err, SG_INTERNAL, "op '%s': the result is not a tensor, so it cannot be queued (the client "
                        "should have run it synchronously)", o->op);
  bool same = (int)o->dtype == dt + 1 && (size_t)nd == o->n_shape;
  for (int i = 0; same && i < nd; i++) same = sh[i] == o->shape[i];
  if (same) return SG_OK;
  return sg_error_set(err, SG_INTERNAL, "op '%s': the client inferred dtype %d and %zu dimensions for its result, "
                      "the daemon computed dtype %d and %d dimensions (a client inference bug; set "
                      "STAGD_EAGER_SYNC=1 to work around it)", o->op, (int)o->dtype - 1, o->n_shape, dt, nd);
}

/* One op: run, check, store. */
static sg_code run_one(sv_service *sv, sv_call *call, const Stagd__V1__EagerBatchOp *o, sg_error *err) {
  const char *device = sv_device_or_cpu(o->device);
  sg_code rc = sv_check_device(device, err);
  if (rc) return rc;
  gr_value *res = NULL;
  if ((rc = sv_eager_run(sv, call, o->op, o->args, o->n_args, device, &res, err))) return rc;
  if (*o->result_id && !(rc = check_meta(o, res, err))) {
    sv_owner who = sv_call_owner(call);
    return sv_handles_put_as(sv_service_handles(sv), device, &who, res, o->result_id, err);
  }
  gr_value_release(res);
  return rc;
}

sg_code sv_h_eager_batch(sv_service *sv, sv_call *call, const ProtobufCMessage *req_, ProtobufCMessage *reply_,
                         sg_error *err) {
  const Stagd__V1__EagerBatchRequest *q = (const void *)req_;
  Stagd__V1__EagerBatchReply *r = (void *)reply_;
  if (q->n_ops > MAX_BATCH_OPS)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "EagerBatch: %zu ops, at most %d per batch", q->n_ops, MAX_BATCH_OPS);
  size_t n = q->n_ops ? q->n_ops : 1;
  failed_ids failed = {.cause = SG_MAP_INIT};
  sg_intern_init(&failed.ids);
  r->errors = sg_arena_calloc(call->arena, n, sizeof *r->errors);
  for (size_t i = 0; i < q->n_ops; i++) {
    const Stagd__V1__EagerBatchOp *o = q->ops[i];
    int cause = -1;
    for (size_t a = 0; a < o->n_args && cause < 0; a++) cause = failed_cause(o->args[a], &failed, 0);
    sg_error e = SG_ERROR_INIT;
    /* a cancelled or late call runs no more ops: each left fails with that reason */
    sg_code rc = sg_watch_poll("running an EagerBatch", &e);
    if (!rc)
      rc = cause >= 0 ? sg_error_set(&e, SG_FAILED_PRECONDITION,
                                     "op '%s' uses the result of op %d of the batch, which failed", o->op, cause)
                      : run_one(sv, call, o, &e);
    if (!rc) {
      r->ran++;
      continue;
    }
    Stagd__V1__EagerBatchError *be = batch_error(call, rc, &e, e.message ? e.message : "failed");
    be->index = (uint32_t)i;
    be->cause = cause >= 0 ? (uint32_t)cause : (uint32_t)i;
    r->errors[r->n_errors++] = be;
    sg_error_clear(&e);
    if (*o->result_id && rc != SG_ALREADY_EXISTS) /* an id in use still names its own value */
      failed_add(&failed, o->result_id, be->cause);
  }
  sg_map_free(&failed.cause);
  sg_intern_free(&failed.ids);
  sv_owner who = sv_call_owner(call);
  for (size_t i = 0; i < q->n_release_ids; i++) sv_handles_release(sv_service_handles(sv), &who, q->release_ids[i]);
  (void)err;
  return SG_OK;
}

sg_code sv_with_eager_first(sv_service *sv, sv_call *call, const Stagd__V1__EagerBatchRequest *first,
                            Stagd__V1__EagerBatchReply **first_reply, Stagd__V1__EagerBatchError **failed,
                            sv_handler run, const ProtobufCMessage *req, ProtobufCMessage *reply, sg_error *err) {
  if (!first) return run(sv, call, req, reply, err);
  Stagd__V1__EagerBatchReply *br = sg_arena_alloc(call->arena, sizeof *br);
  stagd__v1__eager_batch_reply__init(br);
  sg_code rc = sv_h_eager_batch(sv, call, &first->base, &br->base, err);
  if (rc) return rc; /* refused whole: nothing ran */
  *first_reply = br;
  rc = br->n_errors ? sg_error_set(err, SG_FAILED_PRECONDITION,
                                   "not run: op %u of the eager ops sent with this call failed", br->errors[0]->index)
                    : run(sv, call, req, reply, err);
  if (!rc) return SG_OK;
  char *details = sv_error_details(err); /* with its location, as the status details would say */
  *failed = batch_error(call, rc, err, details);
  free(details);
  sg_error_clear(err);
  return SG_OK;
}
