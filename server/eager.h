// SPDX-License-Identifier: Apache-2.0
/*
 * eager.h — private to server/: the eager handlers (Put, EagerOp, Fetch, Release) and
 * the stagd.v1.Value ↔ gr_value conversions Execute shares with them (eager.c), and
 * Execute's core, which RunModel shares (service.c).
 */
#ifndef STAGD_SERVER_EAGER_H
#define STAGD_SERVER_EAGER_H

#include "gr.h"
#include "handles.h"
#include "stagd.pb-c.h"
#include "sv.h"

/* A request Value → a boxed graph value; handles are looked up in `h` as call's. Errors name
 * the argument path (args[1].tuple[0]). */
sg_code sv_value_to_gr(sv_handles *h, const sv_call *call, const Stagd__V1__Value *v, const char *path,
                       gr_value **out, sg_error *err);
/* Whose handles a call may use (its session and principal). */
sv_owner sv_call_owner(const sv_call *call);
/* A result → a reply Value in call's arena: tensors and variables become new handles
 * on `device` when as_handles, else inline tensors (variables always handles). */
sg_code sv_value_from_gr(sv_handles *h, sv_call *call, const gr_value *v, const char *device,
                         bool as_handles, Stagd__V1__Value **out, sg_error *err);
/* NULL for "cpu", "auto", "vulkan" and "vulkan:N"; else a message naming the device. */
sg_code sv_check_device(const char *device, sg_error *err);

/* The request's device name, "cpu" when empty. */
const char *sv_device_or_cpu(const char *device);
/* Runs op-table primitive `op` on the decoded arguments on `device` (checked by the
 * caller); *res: the result (the caller releases it). EagerOp and EagerBatch share it. */
sg_code sv_eager_run(sv_service *sv, sv_call *call, const char *op, Stagd__V1__Value *const *argv, size_t n_args,
                     const char *device, gr_value **res, sg_error *err);

sg_code sv_h_put(sv_service *sv, sv_call *call, const ProtobufCMessage *req, ProtobufCMessage *reply,
                 sg_error *err);
sg_code sv_h_eager_op(sv_service *sv, sv_call *call, const ProtobufCMessage *req, ProtobufCMessage *reply,
                      sg_error *err);
/* EagerBatch (eager_batch.c). */
sg_code sv_h_eager_batch(sv_service *sv, sv_call *call, const ProtobufCMessage *req, ProtobufCMessage *reply,
                         sg_error *err);
/* A call carrying queued eager ops (ExecuteRequest / FetchRequest.eager_first, NULL:
 * none): they run first, as one EagerBatch whose reply goes in *first_reply; then `run`
 * (the call's own handler) unless one of them failed. The call's failure — its own, or
 * "not run" after a failed op — goes in *failed and the status is OK, so that the ops'
 * reply reaches the client; a batch refused whole (too many ops) is the call's error. */
sg_code sv_with_eager_first(sv_service *sv, sv_call *call, const Stagd__V1__EagerBatchRequest *first,
                            Stagd__V1__EagerBatchReply **first_reply, Stagd__V1__EagerBatchError **failed,
                            sv_handler run, const ProtobufCMessage *req, ProtobufCMessage *reply, sg_error *err);
sg_code sv_h_fetch(sv_service *sv, sv_call *call, const ProtobufCMessage *req, ProtobufCMessage *reply,
                   sg_error *err);
sg_code sv_h_release(sv_service *sv, sv_call *call, const ProtobufCMessage *req, ProtobufCMessage *reply,
                     sg_error *err);
sg_code sv_h_session(sv_service *sv, sv_call *call, const ProtobufCMessage *req, ProtobufCMessage *reply,
                     sg_error *err);

/* Execute's work on program p (service.c), with `extra` boxed values appended to the
 * request's arguments (borrowed; an exported model's variables, models.c). */
sg_code sv_execute(sv_service *sv, sv_call *call, const Stagd__V1__ExecuteRequest *q, Stagd__V1__ExecuteReply *r,
                   gr_program *p, gr_value *const *extra, int n_extra, sg_error *err);

/* Program p run on request Values (handles looked up as call's, `extra` boxed values
 * appended, borrowed) on `device`; tensor results stay resident on a Vulkan device when
 * keep_on_device. *res: the result, *printed: its printed output (malloc'd, may be NULL);
 * *result_tensors (when given): gr_exec_options's.
 * Execute and EagerBatch's queued calls share it (service.c). */
sg_code sv_run_program(sv_service *sv, sv_call *call, gr_program *p, const char *entry,
                       Stagd__V1__Value *const *argv, size_t n_args, gr_value *const *extra, int n_extra,
                       const char *device, bool keep_on_device, bool *result_tensors, gr_value **res,
                       char **printed, sg_error *err);
/* The staged graph `id`; when the daemon no longer keeps it (or id is empty) and sexpr is
 * given, sexpr staged now with `entry` (a program staging under another id is refused).
 * New reference; NULL with err (NOT_FOUND: no such graph and no sexpr). */
gr_program *sv_program_or_stage(sv_service *sv, const char *id, const char *sexpr, const char *entry,
                                const char *file, sg_error *err);

/* The service's handle store (service.c). */
sv_handles *sv_service_handles(sv_service *sv);

#endif /* STAGD_SERVER_EAGER_H */
