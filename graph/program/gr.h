// SPDX-License-Identifier: Apache-2.0
/*
 * gr.h — the public API of graph/ (what the daemon and tools include), implemented by
 * graph/program on top of the subsystems (docs/design.md "graph/"): stage staged
 * S-expressions into an optimized, typed graph IR (Myia style), dump it, cache it by
 * content id, differentiate it, and execute it; eager ops on boxed values.
 *   program.c     staging pipeline (read → lower → AD → infer → optimize → compile),
 *                 execution, dumps, the program cache
 *   eager.c       boxed values (gr_value) and single primitives run eagerly
 *   ad_program.c  gr_grad_program
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
  /* gr_stage_python only: parameters of the entry fixed to values instead of staged (the
   * editor's static arguments): static_names[i] gets element i of the JSON array
   * static_args_json. The program's entry is then ENTRY$static, taking the others. */
  const char *const *static_names;
  int nstatic;
  const char *static_args_json;
} gr_stage_options;

/* Reads, lowers, infers and (unless no_optimize) optimizes. filename is used in error
 * locations. Errors: SG_INVALID_ARGUMENT (syntax, unknown names, arity, type/shape
 * mismatches, with file:line:col), SG_RESOURCE_EXHAUSTED (node limit),
 * SG_UNIMPLEMENTED (e.g. `grad`, until AD lands). */
sg_code gr_stage(const char *src, size_t len, const char *filename,
                 const gr_stage_options *opts, gr_program **out, sg_error *err);

/* gr_stage for Python source (graph/pyfront, docs/pyfront.md): the functions of the
 * module that opts->entry (NULL: the last module-level def) reaches, lowered straight
 * from the AST — no Python runs. Errors are located in the .py file; a construct
 * outside the subset is SG_INVALID_ARGUMENT with reason SG_REASON_UNSUPPORTED. The
 * program's gradient (gr_grad_program) is staged from the same source. */
sg_code gr_stage_python(const char *src, size_t len, const char *filename, const gr_stage_options *opts,
                        gr_program **out, sg_error *err);

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
  const char *device;   /* NULL/"cpu", "auto" or "vulkan[:N]" (graph/vulkan/exec_vulkan.c) */
  int max_depth;        /* call depth limit; 0 → 2000 */
  bool keep_on_device;  /* gr_execute_values on a Vulkan device: a tensor result stays
                           there as a resident tensor (no download) */
  atomic_bool *cancel;  /* the caller gave up: the run stops with SG_CANCELLED; NULL → none */
  uint64_t max_bytes;   /* budget for the tensors the run holds at once; 0 → none
                           (SG_RESOURCE_EXHAUSTED naming max-request-bytes) */
  bool *result_tensors; /* when set: whether type inference proves the result, for
                           arguments of these types, a tensor or a tuple of tensors
                           (gr_infer_result_is_tensors, once per signature) */
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

/* ------------------------------------------------------------ boxed values */
/* A graph value held outside the executor (the daemon's tensor handles, the eager
 * client's op arguments): reference counted, immutable except variables, whose cell
 * the `assign`/`assign_add` primitives update in place (shared by every holder). */
typedef struct gr_value gr_value;
typedef enum gr_value_kind {
  GR_VALUE_NONE, GR_VALUE_BOOL, GR_VALUE_INT, GR_VALUE_FLOAT, GR_VALUE_STR, GR_VALUE_TENSOR,
  GR_VALUE_TUPLE, GR_VALUE_RECORD, GR_VALUE_VARIABLE, GR_VALUE_OTHER
} gr_value_kind;
struct kn_tensor;
gr_value *gr_value_none(void);
gr_value *gr_value_bool(bool b);
gr_value *gr_value_int(int64_t i);
gr_value *gr_value_float(double f);
gr_value *gr_value_str(const char *s); /* dtype names, e.g. for `cast` */
/* Any string (a client's argument): interned for the life of the process in a bounded
 * table (dtype names take no room); NULL with RESOURCE_EXHAUSTED when it is full. */
gr_value *gr_value_string(const char *s, sg_error *err);
/* The text of a string value (borrowed), else NULL. */
const char *gr_value_str_of(const gr_value *v);
/* A record with fields names[i] = items[i], in that order. Takes over the caller's
 * references to items[0..n) (on error too); names are interned like gr_value_string.
 * NULL with INVALID_ARGUMENT for an empty or duplicate name (err says which). */
gr_value *gr_value_record(const char *const *names, gr_value **items, int n, sg_error *err);
int gr_value_record_len(const gr_value *v); /* -1 when not a record */
/* Field i of a record: its name (borrowed, lives as long as the process or program)
 * and its value (new reference); NULL when v is not a record or i is out of range. */
gr_value *gr_value_record_field(const gr_value *v, int i, const char **name);
/* Takes over the caller's reference to t. */
gr_value *gr_value_tensor(struct kn_tensor *t);
/* Takes over the caller's references to items[0..n). */
gr_value *gr_value_tuple(gr_value **items, int n);
gr_value *gr_value_retain(gr_value *v);
void gr_value_release(gr_value *v);
gr_value_kind gr_value_kind_of(const gr_value *v);
/* The tensor (borrowed) of a tensor value, else NULL. */
struct kn_tensor *gr_value_tensor_of(const gr_value *v);
/* Scalars of BOOL/INT/FLOAT values. */
bool gr_value_scalar(const gr_value *v, bool *b, int64_t *i, double *f);
/* A variable's current value (new reference); NULL when v is not a variable. */
gr_value *gr_value_variable_get(const gr_value *v);
int gr_value_tuple_len(const gr_value *v);             /* -1 when not a tuple */
gr_value *gr_value_tuple_item(const gr_value *v, int i); /* new reference */
/* dtype (kn_dtype) and shape of a tensor value, host or device-resident; false for
 * anything else. */
bool gr_value_tensor_meta(const gr_value *v, int *dtype, int *ndim, const int64_t **shape);
/* The host tensor of a tensor value (retained): a device-resident one is downloaded
 * once and the copy cached in it, so concurrent and later readers share it. */
sg_code gr_value_host_tensor(const gr_value *v, struct kn_tensor **out, sg_error *err);
/* v placed on `device`: on a Vulkan device its tensors (a tensor or a tuple of them)
 * are uploaded once and become device-resident; on the CPU v itself. Out of device
 * memory is RESOURCE_EXHAUSTED naming the device. */
sg_code gr_value_to_device(gr_value *v, const char *device, gr_value **out, sg_error *err);
/* Host ↔ device traffic of the Vulkan executor since the process started, the device
 * memory held by resident tensors now, and the fused elementwise chains run. */
typedef struct gr_device_stats {
  uint64_t uploads, downloads, upload_bytes, download_bytes;
  uint64_t resident_bytes, resident_buffers;
  uint64_t requests, submits, dispatches; /* requests run on Vulkan, their command buffers and kernels */
  uint64_t cpu_fallbacks;                 /* primitives of Vulkan requests run on the CPU */
  uint64_t vulkan_fused, cpu_fused;       /* elementwise chains run as one pass (docs/graph.md) */
  uint64_t cpu_fused_in_place;            /* of cpu_fused, those written over a dying temporary */
  uint64_t vulkan_epilogues;              /* of vulkan_fused, those run in a matmul's or reduction's kernel */
} gr_device_stats;
void gr_device_stats_get(gr_device_stats *out);
/* Bytes of tensor data a value holds (a variable: its current value; a device-resident
 * tensor: its device buffer). */
uint64_t gr_value_bytes(const gr_value *v);
/* v is about to outlive its request (a handle will hold it): the variables inside it
 * are marked so that later assigns keep them free of functions; refused
 * (INVALID_ARGUMENT) when one already holds a function. */
sg_code gr_value_escape(const gr_value *v, sg_error *err);
/* One-line summary (type, dtype, shape) for error messages; malloc'd. */
char *gr_value_describe(const gr_value *v);
/* The same summary of a tensor type (kn_dtype dtype, shape[0, ndim)): "float32 tensor
 * of shape (2, 3)"; malloc'd. */
char *gr_tensor_type_describe(int dtype, int ndim, const int64_t *shape);

/* The names the S-expression reader takes as primitives: the op table's rows and their
 * aliases (graph/ir/ops.c), i = 0, 1, ...; NULL past the end. A def of the same name
 * shadows the primitive in its program (docs/sexpr.md "Primitive names"). */
const char *gr_primitive_name(size_t i);

/* Runs one primitive of the op table (graph/ir/ops.c) on boxed values — the eager path.
 * device as in gr_exec_options. Errors name the op; unknown ops, ops that call
 * functions (if/while/grad) and wrong arities are SG_INVALID_ARGUMENT. */
sg_code gr_eager_op(const char *op, gr_value *const *args, int n, const char *device,
                    gr_value **out, sg_error *err);
/* gr_eager_op with a choice: keep_on_device false reads a Vulkan result back to the
 * host (the daemon's --host-handles comparison mode); gr_eager_op keeps it resident. */
sg_code gr_eager_op_keep(const char *op, gr_value *const *args, int n, const char *device,
                         bool keep_on_device, gr_value **out, sg_error *err);
/* gr_execute_json with boxed arguments appended after the JSON array's (borrowed; an
 * exported model's variables, server/models.c). */
sg_code gr_execute_json_with(gr_program *p, const gr_exec_options *opts, const char *args_json,
                             gr_value *const *extra, int n_extra, char **result_json, char **printed,
                             sg_error *err);
/* args_json (a JSON array, read as gr_execute_json reads it for p) → one boxed value per
 * element, in a new array the caller frees after releasing each value. */
sg_code gr_values_from_json(gr_program *p, const char *args_json, gr_value ***out, int *n, sg_error *err);
/* gr_execute_json with boxed arguments and result (variables passed by reference). */
sg_code gr_execute_values(gr_program *p, const gr_exec_options *opts, gr_value *const *args,
                          int n, gr_value **result, char **printed, sg_error *err);
/* The JSON encoding (ARCHITECTURE.md "JSON values") of v; malloc'd. */
char *gr_value_to_json_text(const gr_value *v);

/* ------------------------------------------------------------ gradients */
/* Stages a new program whose entry `grad_NAME` takes NAME's parameters and returns
 * the gradient of NAME (a def of p; NULL → p's entry) w.r.t. parameters wrt[0..nwrt)
 * (nwrt 0 → all), a tuple when more than one. Errors: SG_INVALID_ARGUMENT (unknown
 * def, index out of range, non-differentiable primitive), SG_UNIMPLEMENTED (forms AD
 * does not handle yet), located in the program's sexpr dump — or, for a program staged
 * from Python, in its .py file (the gradient is staged from the same source). The Grad
 * RPC's back end. */
sg_code gr_grad_program(gr_program *p, const char *entry, const int32_t *wrt, size_t nwrt,
                        bool no_optimize, gr_program **out, sg_error *err);

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
