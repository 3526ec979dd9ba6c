// SPDX-License-Identifier: Apache-2.0
/*
 * models.h — private to server/: exported models served by name (--models DIR;
 * docs/deploy.md "Models"). models.c loads every DIR/NAME/VERSION/ that stagd.export
 * wrote, checks its content hash, stages its program, reads its variables, and a
 * thread rescans DIR every --models-poll-ms for new and removed versions. RunModel
 * and ListModels are its handlers.
 */
#ifndef STAGD_SERVER_MODELS_H
#define STAGD_SERVER_MODELS_H

#include "sv.h"

typedef struct sv_models sv_models;

/* Loads what dir holds now and (poll_ms > 0) starts the rescanning thread. A version
 * that fails to load is logged and skipped; a dir that is not a readable directory is
 * an error. */
sv_models *sv_models_open(const char *dir, uint64_t poll_ms, sg_error *err);
/* Stops the thread and drops every version (calls in flight keep theirs). NULL ok. */
void sv_models_close(sv_models *m);
/* Scans the directory once now (the thread's work; tests call it too). */
void sv_models_rescan(sv_models *m);
/* Models, versions loaded, versions loaded since start, versions that failed. */
void sv_models_counts(sv_models *m, uint64_t *models, uint64_t *versions, uint64_t *loads, uint64_t *errors);

/* The service's models (service.c), NULL without --models. */
sv_models *sv_service_models(sv_service *sv);

sg_code sv_h_run_model(sv_service *sv, sv_call *call, const ProtobufCMessage *req, ProtobufCMessage *reply,
                       sg_error *err);
sg_code sv_h_list_models(sv_service *sv, sv_call *call, const ProtobufCMessage *req, ProtobufCMessage *reply,
                         sg_error *err);

#endif /* STAGD_SERVER_MODELS_H */
