/*
 * gr.h — the public API of graph/: stage staged S-expressions into an optimized,
 * typed graph IR (Myia style), dump it, cache it by content id, and execute it.
 *
 * Lifecycle:
 *   gr_program *p; sg_error e = SG_ERROR_INIT;
 *   gr_stage(src, len, "f.sexp", &opts, &p, &e)      → located error or a program
 *   gr_program_id(p), gr_program_dump(p, GR_DUMP_TEXT)
 *   gr_execute_json(p, &xopts, "[10]", &result, &printed, &e)
 *   gr_program_release(p)
 * Programs are immutable after staging and reference counted, so any number of
 * threads may execute the same program at once. gr_cache maps ids to programs.
 * Prefix: gr_.
 */
#ifndef STAGD_GRAPH_GR_H
#define STAGD_GRAPH_GR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sg.h"

typedef struct gr_program gr_program;

typedef enum gr_dump_format { GR_DUMP_SEXPR, GR_DUMP_TEXT, GR_DUMP_DOT, GR_DUMP_JSON } gr_dump_format;
/* "sexpr", "text", "dot", "json" */
bool gr_dump_format_parse(const char *name, gr_dump_format *out);

typedef struct gr_stage_options {
  bool no_optimize;   /* skip every optimization pass */
  const char *entry;  /* def to stage as entry; NULL → the last top-level def */
  int max_nodes;      /* graph node limit; 0 → 1,000,000 */
} gr_stage_options;

/* Reads, lowers, infers and (unless no_optimize) optimizes. filename is used in error
 * locations. Errors: SG_INVALID_ARGUMENT (syntax, unknown names, arity, type/shape
 * mismatches, with file:line:col), SG_RESOURCE_EXHAUSTED (node limit),
 * SG_UNIMPLEMENTED (e.g. `grad`, until AD lands). */
sg_code gr_stage(const char *src, size_t len, const char *filename,
                 const gr_stage_options *opts, gr_program **out, sg_error *err);

gr_program *gr_program_retain(gr_program *p);
void gr_program_release(gr_program *p);
/* Content-addressed id: "g" + 16 hex digits of the hash of the optimized IR's sexpr
 * dump and the entry name. Valid while p lives. */
const char *gr_program_id(const gr_program *p);
const char *gr_program_entry(const gr_program *p);
/* The dump as a malloc'd NUL-terminated string the caller frees. */
char *gr_program_dump(const gr_program *p, gr_dump_format fmt);

typedef struct gr_exec_options {
  const char *entry;    /* NULL → the staged entry; else any top-level def */
  uint64_t deadline_ns; /* absolute, on sg_now_ns()'s clock; 0 → none */
  const char *device;   /* NULL/"cpu", "auto" or "vulkan[:N]" (graph/exec_vulkan.c) */
  int max_depth;        /* call depth limit; 0 → 2000 */
} gr_exec_options;

/* args_json: a JSON array, one element per parameter (ARCHITECTURE.md "JSON values";
 * NULL or "" means []). On success *result_json is one JSON value and *printed the
 * text `print` wrote (both malloc'd, caller frees). Errors: SG_INVALID_ARGUMENT
 * (bad args, shape mismatches at run time, located in the S-expression),
 * SG_FAILED_PRECONDITION (assert failed), SG_DEADLINE_EXCEEDED,
 * SG_RESOURCE_EXHAUSTED (recursion depth). */
sg_code gr_execute_json(gr_program *p, const gr_exec_options *opts, const char *args_json,
                        char **result_json, char **printed, sg_error *err);

/* Convenience for stagctl-like tools: stage + execute in one go. */
sg_code gr_run_source(const char *src, size_t len, const char *filename,
                      const gr_stage_options *sopts, const gr_exec_options *xopts,
                      const char *args_json, char **result_json, char **printed,
                      sg_error *err);

/* ---------------------------------------------------------------- cache */
/* Thread-safe map id → program, holding a reference to each; evicts the least
 * recently used beyond `capacity` programs (0 → 1024). */
typedef struct gr_cache gr_cache;
gr_cache *gr_cache_new(size_t capacity);
void gr_cache_free(gr_cache *c);
/* Adds p (retains it). If a program with the same id is cached, returns that one
 * instead (retained) and leaves p alone; else returns p retained. */
gr_program *gr_cache_put(gr_cache *c, gr_program *p);
/* NULL when absent; else a retained program the caller releases. */
gr_program *gr_cache_get(gr_cache *c, const char *id);
size_t gr_cache_size(gr_cache *c);

#endif /* STAGD_GRAPH_GR_H */
