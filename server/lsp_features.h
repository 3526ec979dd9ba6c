// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_features.h — the private interface between the LSP transport (lsp.c) and the
 * language features (lsp_*.c): diagnostics, document symbols, code lenses, hover and
 * the stagd/convertedCode and stagd/graph requests.
 *
 * The transport runs on the libuv loop and owns the documents; a feature runs on a
 * worker thread over a snapshot of one document's text (sv_lsp_text), so features
 * never touch shared state. A feature returns its JSON result, or NULL after
 * sv_lsp_fail() recorded a JSON-RPC error.
 *
 * Positions: the AST has 1-based lines and 0-based UTF-8 byte columns; LSP has
 * 0-based lines and characters in UTF-16 code units (or UTF-8 bytes when negotiated).
 * sv_lsp_text converts between them.
 */
#ifndef STAGD_SERVER_LSP_FEATURES_H
#define STAGD_SERVER_LSP_FEATURES_H

#include <stdatomic.h>

#include "convert.h"
#include "sv.h"

enum {
  LSP_PARSE_ERROR = -32700,
  LSP_INVALID_REQUEST = -32600,
  LSP_METHOD_NOT_FOUND = -32601,
  LSP_INVALID_PARAMS = -32602,
  LSP_SERVER_NOT_INITIALIZED = -32002,
  LSP_SERVER_ERROR = -32000,
  LSP_REQUEST_CANCELLED = -32800,
  LSP_REQUEST_FAILED = -32803,
};

/* LSP DiagnosticSeverity / SymbolKind values used here. */
enum { LSP_SEV_ERROR = 1, LSP_SEV_WARNING = 2, LSP_SEV_INFO = 3 };
enum { LSP_SYM_CLASS = 5, LSP_SYM_METHOD = 6, LSP_SYM_FUNCTION = 12 };

/* ------------------------------------------------------------ text snapshot */

typedef struct sv_lsp_text {
  const char *text; /* UTF-8, not owned */
  size_t len;
  size_t *line_start; /* byte offset of each line (0-based index) */
  int nlines;
  bool utf16; /* LSP characters are UTF-16 code units (else UTF-8 bytes) */
} sv_lsp_text;

void sv_lsp_text_init(sv_lsp_text *t, const char *text, size_t len, bool utf16);
void sv_lsp_text_free(sv_lsp_text *t);
/* LSP character of byte column col0 (0-based) on 1-based line line1 (clamped). */
int64_t sv_lsp_char(const sv_lsp_text *t, int line1, int col0);
/* {line, character} / {start, end} for AST positions (1-based line, 0-based byte col). */
cJSON *sv_lsp_position(const sv_lsp_text *t, int line1, int col0);
cJSON *sv_lsp_range(const sv_lsp_text *t, int line1, int col0, int end_line1, int end_col0);
/* Byte column (0-based) of the 1-based code-point column cp1 on line1 (syntax errors
 * count columns in characters, as CPython does). */
int sv_lsp_cp_to_byte(const sv_lsp_text *t, int line1, int cp1);
/* The AST position (1-based line, 0-based byte column) of an LSP position. */
void sv_lsp_from_position(const sv_lsp_text *t, int64_t line0, int64_t character, int *line1, int *col0);

/* ------------------------------------------------------------ requests */

typedef struct sv_lsp_request {
  const char *method;
  const char *uri;
  int64_t version;
  sv_lsp_text text;
  const cJSON *params; /* the request's params object */
  py_conv_style style; /* the session's default style */
  atomic_bool *cancelled;
  sv_service *sv;            /* the service (stagd/graph stages through it) */
  const char *python;        /* the interpreter stagd/graph's helper runs on */
  const cJSON *python_env;   /* variables added to the helper's environment ({NAME: "VALUE"}), or NULL */
  bool python_allowed;       /* the helper may run (stdio, or --lsp-allow-python) */
  uint64_t principal;        /* the connection's token fingerprint (0: none) */
  uint64_t stage_timeout_ms; /* how long that helper may take */
  char *staged_function; /* stagd/graph: the function it staged or tried to (malloc'd) */
  int err_code; /* set by sv_lsp_fail */
  sg_buf err_message;
  cJSON *err_data; /* optional `error.data`, owned (set after sv_lsp_fail) */
} sv_lsp_request;

/* Records a JSON-RPC error for the request; returns NULL for `return sv_lsp_fail(...)`. */
cJSON *sv_lsp_fail(sv_lsp_request *rq, int code, const char *fmt, ...) SG_PRINTF(3, 4);

typedef cJSON *(*sv_lsp_feature_fn)(sv_lsp_request *rq);

typedef struct sv_lsp_feature {
  const char *method;    /* "textDocument/hover", "stagd/convertedCode" */
  sv_lsp_feature_fn run; /* on a worker thread */
  bool custom;           /* a stagd/ request: announced in capabilities.experimental */
} sv_lsp_feature;

const sv_lsp_feature *sv_lsp_feature_by_name(const char *method);
size_t sv_lsp_feature_count(void);
const sv_lsp_feature *sv_lsp_feature_at(size_t i);

/* workspace/executeCommand (lsp_commands.c): the lens commands, and the feature
 * request a command runs with its params (*feature_params, owned by the caller); NULL
 * with a -32602 message in why for an unknown command or bad arguments. */
size_t sv_lsp_command_count(void);
const char *sv_lsp_command_at(size_t i);
const sv_lsp_feature *sv_lsp_command_params(const cJSON *params, cJSON **feature_params, sg_buf *why);

/* Parses a "style" value: "autograph" / "snek"; false if it is neither. */
bool sv_lsp_parse_style(const char *s, py_conv_style *out);

/* The features (one file each). */
cJSON *sv_lsp_document_symbol(sv_lsp_request *rq); /* lsp_symbols.c */
cJSON *sv_lsp_code_lens(sv_lsp_request *rq);       /* lsp_symbols.c */
cJSON *sv_lsp_hover(sv_lsp_request *rq);           /* lsp_hover.c */
cJSON *sv_lsp_converted_code(sv_lsp_request *rq);  /* lsp_convert.c */
cJSON *sv_lsp_graph(sv_lsp_request *rq);           /* lsp_graph.c */

/* Definitions (lsp_symbols.c): def / async def / class statements. */
bool sv_lsp_is_def(const py_stmt *s);         /* def or async def */
const char *sv_lsp_def_name(const py_stmt *s);  /* def, async def or class */
py_seq *sv_lsp_def_body(const py_stmt *s);
py_seq *sv_lsp_def_decorators(const py_stmt *s);
int sv_lsp_def_first_line(const py_stmt *s);  /* its first decorator's line, else its own */
/* Calls fn on every function the converter takes (module-level functions and methods
 * of module-level classes) with its qualified name ("f", "Class.method") until fn
 * returns non-zero; returns that value (0 when fn never did). */
typedef int (*sv_lsp_def_fn)(const py_stmt *def, const char *qual, void *ctx);
int sv_lsp_each_function(const py_mod *mod, sv_lsp_def_fn fn, void *ctx);

/* Reads a request's optional "style" (default: the session's) and "function" params
 * (lsp_convert.c); false after sv_lsp_fail. */
bool sv_lsp_read_common(sv_lsp_request *rq, py_conv_style *style, const char **function);

/* ------------------------------------------------------------ helper processes */

typedef struct sv_lsp_child {
  sg_buf out, err;     /* the child's stdout, and the tail of its stderr */
  int64_t exit_status; /* when it exited */
  int term_signal;     /* when a signal ended it */
  bool timed_out, cancelled, too_large;
} sv_lsp_child;

/* Runs argv (argv[0] looked up in PATH) with `input` on its stdin until it exits, on a
 * private libuv loop of the calling worker thread (lsp_child.c), in the environment
 * env ("NAME=VALUE" strings, NULL-terminated; NULL: the daemon's). It is killed after
 * timeout_ms (0: never), when *cancelled becomes true, or when its stdout passes
 * max_out bytes; res says which. SG_UNAVAILABLE when it cannot be started. Free res
 * with sv_lsp_child_free in every case. */
sg_code sv_lsp_run_child(char *const argv[], char *const env[], const char *input, size_t len, uint64_t timeout_ms,
                         atomic_bool *cancelled, size_t max_out, sv_lsp_child *res, sg_error *err);
void sv_lsp_child_free(sv_lsp_child *res);

/* The one call into the converter that the LSP features make (lsp_convert.c). */
sg_code sv_lsp_convert(const sv_lsp_text *t, const char *uri, py_conv_style style, const char *function,
                       py_conv_result *out, sg_error *err);

/* ------------------------------------------------------------ diagnostics */

/* The Diagnostic[] of a document (lsp_diagnostics.c): its syntax error, else what the
 * converter cannot convert (with its hint). NULL when *cancelled became true. When
 * *want_code is true once the module is converted, *code_json receives the
 * stagd/convertedCode result of that conversion (all functions, this style), so an
 * edit costs one conversion for both. */
cJSON *sv_lsp_diagnostics(const sv_lsp_text *t, const char *uri, py_conv_style style, atomic_bool *cancelled,
                          atomic_bool *want_code, char **code_json);
/* The raw JSON text of a stagd/convertedCode result (lsp_convert.c), malloc'd. */
char *sv_lsp_code_json(const py_conv_result *res);

#endif /* STAGD_SERVER_LSP_FEATURES_H */
