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
 * a sync point after queued ops is one round trip. An op may also be a call of a staged
 * graph (EagerCall: the client's tape gradients), its results stored under the client's
 * ids after each is checked against the dtype and shape the client declared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eager.h"
#include "kn.h"
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

/* A failure as an EagerBatchError (in the call's arena): code, message with its location
 * (as a failed call's status details say it), reason. */
static Stagd__V1__EagerBatchError *batch_error(sv_call *call, sg_code rc, const sg_error *e) {
  Stagd__V1__EagerBatchError *be = sg_arena_alloc(call->arena, sizeof *be);
  stagd__v1__eager_batch_error__init(be);
  be->code = (int32_t)rc;
  char *details = sv_error_details(e);
  be->message = sg_arena_strdup(call->arena, details);
  free(details);
  if (e->reason) be->reason = (char *)sg_reason_name(e->reason);
  return be;
}

/* Whether a tensor of kn dtype dt and shape sh[0, nd) is the declared one (a DType
 * number and shape). */
static bool declared(int dtype, const int64_t *shape, size_t n_shape, int dt, int nd, const int64_t *sh) {
  bool same = dtype == dt + 1 && (size_t)nd == n_shape;
  for (int i = 0; same && i < nd; i++) same = sh[i] == shape[i];
  return same;
}

/* INTERNAL: `what` (an op, a call's result) was declared a tensor type (a DType number
 * and shape) that `v`, which `source` returned, is not. */
static sg_code not_declared(sg_error *err, const char *what, const char *source, int dtype, const int64_t *shape,
                            size_t n_shape, const gr_value *v) {
  char *want = n_shape <= KN_MAX_DIMS ? gr_tensor_type_describe(dtype - 1, (int)n_shape, shape)
                                      : sg_xstrdup("tensor of too many dimensions");
  char *got = gr_value_describe(v);
  sg_code rc = sg_error_set(err, SG_INTERNAL, "%s: the client inferred a %s, the %s returned a %s (a client inference "
                            "bug; set STAGD_EAGER_SYNC=1 to work around it)", what, want, source, got);
  free(want);
  free(got);
  return rc;
}

/* INTERNAL unless `res` is a tensor of the dtype and shape the client inferred. */
static sg_code check_meta(const Stagd__V1__EagerBatchOp *o, const gr_value *res, sg_error *err) {
  int dt, nd;
  const int64_t *sh;
  if (!gr_value_tensor_meta(res, &dt, &nd, &sh))
    return sg_error_set(err, SG_INTERNAL, "op '%s': the result is not a tensor, so it cannot be queued (the client "
                        "should have run it synchronously)", o->op);
  if (declared((int)o->dtype, o->shape, o->n_shape, dt, nd, sh)) return SG_OK;
  char what[48];
  snprintf(what, sizeof what, "op '%.32s'", o->op);
  return not_declared(err, what, "op", (int)o->dtype, o->shape, o->n_shape, res);
}

/* Result k of a queued call as it is stored: a tensor of the declared dtype and shape
 * (else INTERNAL: the client's inference was wrong), or a number made a tensor of the
 * declared dtype filling the declared shape (the optimizer may fold a gradient to a
 * number); declared without a dtype, any tensor. Takes over the reference to v; *out: a
 * new one. */
static sg_code call_result(sv_service *sv, sv_call *call, const Stagd__V1__TensorHandle *d, size_t k,
                           const char *device, gr_value *v, gr_value **out, sg_error *err) {
  *out = NULL;
  int dt, nd;
  const int64_t *sh;
  bool b;
  int64_t i;
  double f;
  gr_value_kind kind = gr_value_kind_of(v);
  sg_code rc = SG_OK;
  if (d->dtype == STAGD__V1__DTYPE__DTYPE_UNSPECIFIED && !d->n_shape) {
    if (gr_value_tensor_meta(v, &dt, &nd, &sh)) {
      *out = v;
      return SG_OK;
    }
    char *got = gr_value_describe(v);
    rc = sg_error_set(err, SG_INTERNAL, "call result %zu: the graph returned a %s where the client expects a tensor "
                      "(as the call's earlier results were; set STAGD_EAGER_SYNC=1 to work around it)", k, got);
    free(got);
  } else if (d->dtype < STAGD__V1__DTYPE__DTYPE_BOOL || d->dtype > STAGD__V1__DTYPE__DTYPE_FLOAT64 ||
      d->n_shape > KN_MAX_DIMS)
    rc = sg_error_set(err, SG_INVALID_ARGUMENT, "call result %zu: no dtype, or more than %d dimensions", k,
                      KN_MAX_DIMS);
  else if (gr_value_tensor_meta(v, &dt, &nd, &sh)) {
    if (declared((int)d->dtype, d->shape, d->n_shape, dt, nd, sh)) {
      *out = v;
      return SG_OK;
    }
    char what[32];
    snprintf(what, sizeof what, "call result %zu", k);
    rc = not_declared(err, what, "graph", (int)d->dtype, d->shape, d->n_shape, v);
  } else if ((kind == GR_VALUE_BOOL || kind == GR_VALUE_INT || kind == GR_VALUE_FLOAT) &&
             gr_value_scalar(v, &b, &i, &f)) {
    kn_dtype want = (kn_dtype)(d->dtype - 1);
    int64_t shape[KN_MAX_DIMS];
    uint64_t n = 1;
    for (size_t j = 0; j < d->n_shape; j++) n *= (uint64_t)(shape[j] = d->shape[j]);
    sv_owner who = sv_call_owner(call);
    if (kind == GR_VALUE_INT && d->n_shape && (i > (1LL << 53) || i < -(1LL << 53)))
      rc = sg_error_set(err, SG_INVALID_ARGUMENT, "call result %zu: the integer %lld cannot fill a shape exactly", k,
                        (long long)i);
    else if (!(rc = kn_check_shape((int)d->n_shape, shape, err)) &&
        !(rc = sv_handles_check_room(sv_service_handles(sv), device, &who, n * kn_dtype_size(want), err))) {
      double x = kind == GR_VALUE_FLOAT ? f : kind == GR_VALUE_INT ? (double)i : (double)b;
      kn_tensor *t = kind == GR_VALUE_FLOAT || d->n_shape ? kn_fill(want, (int)d->n_shape, shape, x)
                                                           : kn_tensor_scalar_i64(want, kind == GR_VALUE_INT ? i : b);
      if (!t) rc = sg_error_set(err, SG_RESOURCE_EXHAUSTED, "call result %zu: out of host memory", k);
      else *out = gr_value_tensor(t);
    }
  } else {
    char *got = gr_value_describe(v);
    rc = sg_error_set(err, SG_INVALID_ARGUMENT, "call result %zu: the graph returned %s, not a tensor or a number, "
                      "so the call cannot be queued", k, got);
    free(got);
  }
  gr_value_release(v);
  return rc;
}

enum { MAX_CALL_RESULTS = 64 };

/* The stored result `v` under `id` on `device` in the reply's results (its handle); the
 * array holds one entry per result the batch's calls left undeclared. */
static void report_result(sv_call *call, Stagd__V1__EagerBatchReply *r, const char *id, const char *device,
                          const gr_value *v) {
  int dt, nd;
  const int64_t *sh;
  if (!gr_value_tensor_meta(v, &dt, &nd, &sh)) return;
  Stagd__V1__TensorHandle *m = sg_arena_alloc(call->arena, sizeof *m);
  stagd__v1__tensor_handle__init(m);
  m->id = sg_arena_strdup(call->arena, id);
  m->device = sg_arena_strdup(call->arena, device);
  m->dtype = (Stagd__V1__DType)(dt + 1);
  m->n_shape = (size_t)nd;
  m->shape = sg_arena_alloc(call->arena, sizeof(int64_t) * (size_t)(nd ? nd : 1));
  memcpy(m->shape, sh, sizeof(int64_t) * (size_t)nd);
  r->results[r->n_results++] = m;
}

/* A queued call of a staged graph (EagerCall): run, check every result, then store them
 * all under the client's ids — none when one fails. */
static sg_code run_call(sv_service *sv, sv_call *call, const Stagd__V1__EagerBatchOp *o, const char *device,
                        Stagd__V1__EagerBatchReply *r, sg_error *err) {
  const Stagd__V1__EagerCall *c = o->call;
  size_t n = c->n_results;
  if (*o->op || *o->result_id)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "a call names no op and no result_id (its results are call.results)");
  if (!n || n > MAX_CALL_RESULTS)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "a call declares %zu results (1 to %d)", n, MAX_CALL_RESULTS);
  gr_program *p = sv_program_or_stage(sv, c->graph_id, c->sexpr, c->entry, "<queued call>", err);
  if (!p) return err->code;
  gr_value *res = NULL;
  char *printed = NULL;
  sg_code rc = sv_run_program(sv, call, p, NULL, o->args, o->n_args, NULL, 0, device, true, NULL, &res, &printed, err);
  free(printed); /* (a gradient prints nothing; Execute's reply has no place for it here) */
  gr_program_release(p);
  if (rc) return rc;
  gr_value *items[MAX_CALL_RESULTS] = {0};
  int len = gr_value_tuple_len(res);
  if (n == 1 && len < 0) {
    items[0] = gr_value_retain(res);
  } else if (len != (int)n) {
    char *got = gr_value_describe(res);
    rc = sg_error_set(err, SG_INTERNAL, "the graph returned %s, the call declared %zu results (a client inference "
                      "bug; set STAGD_EAGER_SYNC=1 to work around it)", got, n);
    free(got);
  } else {
    for (size_t k = 0; k < n; k++) items[k] = gr_value_tuple_item(res, (int)k);
  }
  gr_value_release(res);
  for (size_t k = 0; k < n && !rc; k++) {
    gr_value *v = items[k];
    items[k] = NULL;
    rc = call_result(sv, call, c->results[k], k, device, v, &items[k], err);
  }
  sv_owner who = sv_call_owner(call);
  sv_handles *h = sv_service_handles(sv);
  size_t stored = 0;
  size_t reported = r->n_results;
  for (; stored < n && !rc; stored++) {
    gr_value *v = items[stored];
    items[stored] = NULL;
    if (c->results[stored]->dtype == STAGD__V1__DTYPE__DTYPE_UNSPECIFIED)
      report_result(call, r, c->results[stored]->id, device, v);
    if ((rc = sv_handles_put_as(h, device, &who, v, c->results[stored]->id, err))) break;
  }
  if (rc) {
    for (size_t k = 0; k < stored; k++) sv_handles_release(h, &who, c->results[k]->id); /* all or none */
    r->n_results = reported;
  }
  for (size_t k = 0; k < n; k++) gr_value_release(items[k]);
  return rc;
}

/* One op: run, check, store. */
static sg_code run_one(sv_service *sv, sv_call *call, const Stagd__V1__EagerBatchOp *o,
                       Stagd__V1__EagerBatchReply *r, sg_error *err) {
  const char *device = sv_device_or_cpu(o->device);
  sg_code rc = sv_check_device(device, err);
  if (rc) return rc;
  if (o->call) return run_call(sv, call, o, device, r, err);
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
  size_t n_undeclared = 0; /* calls' results declared without a dtype: reported back */
  for (size_t i = 0; i < q->n_ops; i++)
    for (size_t k = 0; q->ops[i]->call && k < q->ops[i]->call->n_results; k++)
      n_undeclared += q->ops[i]->call->results[k]->dtype == STAGD__V1__DTYPE__DTYPE_UNSPECIFIED;
  r->results = sg_arena_calloc(call->arena, n_undeclared ? n_undeclared : 1, sizeof *r->results);
  for (size_t i = 0; i < q->n_ops; i++) {
    const Stagd__V1__EagerBatchOp *o = q->ops[i];
    int cause = -1;
    for (size_t a = 0; a < o->n_args && cause < 0; a++) cause = failed_cause(o->args[a], &failed, 0);
    sg_error e = SG_ERROR_INIT;
    /* a cancelled or late call runs no more ops: each left fails with that reason */
    sg_code rc = sg_watch_poll("running an EagerBatch", &e);
    if (!rc)
      rc = cause >= 0 ? sg_error_set(&e, SG_FAILED_PRECONDITION,
                                     "op '%s' uses the result of op %d of the batch, which failed",
                                     o->call ? "call" : o->op, cause)
                      : run_one(sv, call, o, r, &e);
    if (!rc) {
      r->ran++;
      continue;
    }
    Stagd__V1__EagerBatchError *be = batch_error(call, rc, &e); /* (a call's: located in its graph) */
    be->index = (uint32_t)i;
    be->cause = cause >= 0 ? (uint32_t)cause : (uint32_t)i;
    r->errors[r->n_errors++] = be;
    sg_error_clear(&e);
    if (rc == SG_ALREADY_EXISTS) continue; /* an id in use still names its own value */
    if (*o->result_id) failed_add(&failed, o->result_id, be->cause);
    for (size_t k = 0; o->call && k < o->call->n_results; k++) failed_add(&failed, o->call->results[k]->id, be->cause);
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
  *failed = batch_error(call, rc, err);
  sg_error_clear(err);
  return SG_OK;
}
