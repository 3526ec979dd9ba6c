// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_graph.c — the custom request stagd/graph: the staged graph of one function of
 * an open document.
 *
 *   {textDocument: {uri}, function?: "f", position?: {line, character},
 *    format?: "text" | "dot" | "json" | "sexpr", args?: {param: JSON value}, style?}
 *   → {function, format, text, sexpr, graphId, params, diagnostics}
 *
 * A module-level function inside the staged Python subset (docs/pyfront.md) is staged
 * in the daemon first, from the document's text (graph/pyfront, through the Stage
 * method with language PYTHON): no process is spawned, and `stagedBy` is "daemon".
 * Only a function outside the subset (a construct pyfront refuses with the reason
 * `unsupported`), or a method, goes the way below (`stagedBy` "python").
 *
 * Staging runs the converted Python with staged arguments, and the daemon never runs
 * Python (ARCHITECTURE.md), so a helper does it: the module is converted here (the
 * AutoGraph form, which the runtime stages), `PYTHON -m stagd.runtime.lsp_stage` is
 * spawned with the converted module on its stdin (lsp_child.c: a private libuv loop on
 * this worker, a time limit, killed on $/cancelRequest) and answers the function's
 * S-expression, which goes through the Stage service method (so the graph id works with
 * stagd/execute) and comes back as the dump asked for.
 *
 * What cannot be staged is a RequestFailed (-32803) whose message starts with the
 * FILE:LINE:COL in the user's source and whose `data.diagnostics` holds the LSP
 * Diagnostic[] (a converter diagnostic inside the function, or the Python exception
 * raised while staging, located through the converted module's source map).
 * See docs/lsp.md, "stagd/graph".
 */
#include <stdlib.h>
#include <string.h>

#include "lsp_features.h"
#include "transport.h"

enum { MAX_HELPER_OUTPUT = 64 << 20 };

static const char *uri_filename(const char *uri) { return !strncmp(uri, "file://", 7) ? uri + 7 : uri; }

/* The function the request is about: by qualified name ("f", "Class.method"), or the
 * module-level function / method of a module-level class whose lines hold line1.
 * *qual receives the name (malloc'd). */
typedef struct {
  const char *name; /* wanted qualified name, or NULL: the function holding line1 */
  int line1;
  const py_stmt *def;
  char *qual;
} finding;

static int match_function(const py_stmt *def, const char *qual, void *ctx) {
  finding *f = ctx;
  if (f->name ? strcmp(f->name, qual) != 0
              : f->line1 < sv_lsp_def_first_line(def) || f->line1 > def->end_lineno)
    return 0;
  f->def = def;
  f->qual = sg_xstrdup(qual);
  return 1;
}

static const py_stmt *find_function(const py_mod *mod, const char *name, int line1, char **qual) {
  finding f = {name, line1, NULL, NULL};
  sv_lsp_each_function(mod, match_function, &f);
  *qual = f.qual;
  return f.def;
}

static cJSON *diagnostic(const sv_lsp_text *t, int line1, int col0, int end_line1, int end_col0, int severity,
                         const char *code, const char *message) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddItemToObject(d, "range", sv_lsp_range(t, line1, col0, end_line1, end_col0));
  cJSON_AddNumberToObject(d, "severity", severity);
  cJSON_AddStringToObject(d, "source", "stagd");
  cJSON_AddStringToObject(d, "code", code);
  cJSON_AddStringToObject(d, "message", message);
  return d;
}

/* RequestFailed located at (line1, col0) of the user's source, with that diagnostic. */
static cJSON *fail_at(sv_lsp_request *rq, int line1, int col0, int end_line1, int end_col0, const char *code,
                      const char *kind, const char *message) {
  sv_lsp_fail(rq, LSP_REQUEST_FAILED, "%s:%d:%d: %s", uri_filename(rq->uri), line1, col0 + 1, message);
  cJSON *data = cJSON_CreateObject();
  cJSON_AddStringToObject(data, "kind", kind);
  cJSON_AddStringToObject(data, "file", uri_filename(rq->uri));
  cJSON_AddNumberToObject(data, "line", line1);
  cJSON_AddNumberToObject(data, "column", col0 + 1);
  cJSON *diags = cJSON_AddArrayToObject(data, "diagnostics");
  cJSON_AddItemToArray(diags, diagnostic(&rq->text, line1, col0, end_line1, end_col0, LSP_SEV_ERROR, code, message));
  cJSON_Delete(rq->err_data);
  rq->err_data = data;
  return NULL;
}

/* Byte length of 1-based line line1 (without its line break). */
static int line_bytes(const sv_lsp_text *t, int line1) {
  if (line1 < 1 || line1 > t->nlines) return 0;
  size_t start = t->line_start[line1 - 1];
  size_t end = line1 < t->nlines ? t->line_start[line1] - 1 : t->len;
  if (end > start && t->text[end - 1] == '\r') end--;
  return (int)(end - start);
}

/* The helper's failure answer → a located RequestFailed. */
static cJSON *helper_failure(sv_lsp_request *rq, const cJSON *ans, const py_stmt *def, const char *qual) {
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(ans, "kind");
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(ans, "type");
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(ans, "message");
  const cJSON *line = cJSON_GetObjectItemCaseSensitive(ans, "line");
  const cJSON *col = cJSON_GetObjectItemCaseSensitive(ans, "column");
  const char *k = cJSON_IsString(kind) ? kind->valuestring : "staging";
  sg_buf m = SG_BUF_INIT;
  if (!strcmp(k, "load"))
    sg_buf_printf(&m, "loading the module to stage %s failed: ", qual);
  else if (!strcmp(k, "staging"))
    sg_buf_printf(&m, "staging %s failed: ", qual);
  else
    sg_buf_printf(&m, "cannot stage %s: ", qual);
  if (cJSON_IsString(type) && strcmp(type->valuestring, "StagingError") != 0)
    sg_buf_printf(&m, "%s: ", type->valuestring);
  sg_buf_puts(&m, cJSON_IsString(msg) ? msg->valuestring : "(no message)");
  int l = def->lineno, c = def->col_offset, el = def->lineno, ec = line_bytes(&rq->text, def->lineno);
  if (cJSON_IsNumber(line) && line->valueint >= 1 && line->valueint <= rq->text.nlines) {
    l = el = line->valueint;
    c = cJSON_IsNumber(col) && col->valueint >= 1 ? col->valueint - 1 : 0;
    ec = line_bytes(&rq->text, l);
    if (c > ec) c = 0;
  }
  cJSON *r = fail_at(rq, l, c, el, ec, !strcmp(k, "unsupported") ? "unsupported-construct" : "staging-error", k, m.data);
  sg_buf_free(&m);
  return r;
}

/* Where Python is: the stdio session's `python` option (else --lsp-python, else
 * $STAGD_PYTHON, else python3). A TCP session's option never gets here (lsp.c). */
static const char *python_of(const sv_lsp_request *rq) {
  if (rq->python && *rq->python) return rq->python;
  const char *cfg = sv_service_config(rq->sv)->lsp_python;
  if (cfg && *cfg) return cfg;
  const char *env = getenv("STAGD_PYTHON");
  return env && *env ? env : "python3";
}

/* The daemon's environment with the request's pythonEnv variables put over it: a
 * NULL-terminated array of malloc'd "NAME=VALUE" strings (free with free_env), or
 * NULL when there are none. */
static char **helper_env(const sv_lsp_request *rq) {
  extern char **environ;
  if (!cJSON_IsObject(rq->python_env) || !rq->python_env->child) return NULL;
  size_t n = 0, k = 0;
  for (char **e = environ; *e; e++) n++;
  char **env = sg_xcalloc(n + (size_t)cJSON_GetArraySize(rq->python_env) + 1, sizeof *env);
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    bool replaced = false;
    const cJSON *v;
    cJSON_ArrayForEach(v, rq->python_env) {
      if (eq && strlen(v->string) == (size_t)(eq - *e) && !strncmp(v->string, *e, (size_t)(eq - *e))) replaced = true;
    }
    if (!replaced) env[k++] = sg_xstrdup(*e);
  }
  const cJSON *v;
  cJSON_ArrayForEach(v, rq->python_env) {
    sg_buf b = SG_BUF_INIT;
    sg_buf_printf(&b, "%s=%s", v->string, v->valuestring);
    env[k++] = sg_buf_detach(&b, NULL);
  }
  return env;
}

static void free_env(char **env) {
  for (char **e = env; e && *e; e++) free(*e);
  free(env);
}

/* Runs the helper; its JSON answer, or NULL after sv_lsp_fail (or when cancelled). */
static cJSON *run_helper(sv_lsp_request *rq, const char *module, const char *qual, const cJSON *statics) {
  cJSON *in = cJSON_CreateObject();
  cJSON_AddStringToObject(in, "module", module);
  cJSON_AddStringToObject(in, "filename", uri_filename(rq->uri));
  cJSON_AddStringToObject(in, "function", qual);
  cJSON_AddItemToObject(in, "static", statics ? cJSON_Duplicate(statics, 1) : cJSON_CreateObject());
  char *input = cJSON_PrintUnformatted(in);
  cJSON_Delete(in);
  const char *python = python_of(rq);
  char *argv[] = {(char *)python, "-m", "stagd.runtime.lsp_stage", NULL};
  sv_lsp_child ch;
  sg_error err = SG_ERROR_INIT;
  uint64_t timeout = rq->stage_timeout_ms;
  char **env = helper_env(rq);
  sg_code rc = sv_lsp_run_child(argv, env, input, strlen(input), timeout, rq->cancelled, MAX_HELPER_OUTPUT, &ch, &err);
  free_env(env);
  cJSON_free(input);
  cJSON *ans = NULL;
  if (rc != SG_OK) {
    sv_lsp_fail(rq, LSP_REQUEST_FAILED,
                "stagd/graph: %s: staging runs the converted code in Python (python -m stagd.runtime.lsp_stage); "
                "set the interpreter with initializationOptions.python (VS Code: the stagd.python setting; "
                "docs/editors.md) or $STAGD_PYTHON",
                err.message);
  } else if (ch.cancelled) {
    /* answered -32800 by the transport */
  } else if (ch.timed_out) {
    sv_lsp_fail(rq, LSP_REQUEST_FAILED,
                "stagd/graph: staging %s took longer than %llu ms and was stopped (initializationOptions.stageTimeoutMs)",
                qual, (unsigned long long)timeout);
  } else if (ch.too_large) {
    sv_lsp_fail(rq, LSP_REQUEST_FAILED, "stagd/graph: staging %s printed more than %d MiB", qual,
                MAX_HELPER_OUTPUT >> 20);
  } else if (!(ans = cJSON_Parse(ch.out.data)) || !cJSON_IsObject(ans)) {
    cJSON_Delete(ans);
    ans = NULL;
    /* the last line of stderr is Python's reason ("No module named stagd", ...) */
    char *e = ch.err.data;
    size_t n = ch.err.len;
    while (n > 0 && (e[n - 1] == '\n' || e[n - 1] == '\r')) e[--n] = '\0';
    const char *last = strrchr(e, '\n');
    last = last ? last + 1 : e;
    sv_lsp_fail(rq, LSP_REQUEST_FAILED,
                "stagd/graph: the staging helper '%s -m stagd.runtime.lsp_stage' %s %d without an answer: %s%s", python,
                ch.term_signal ? "was killed by signal" : "exited with status",
                ch.term_signal ? ch.term_signal : (int)ch.exit_status, *last ? last : "(nothing on stderr)",
                strstr(e, "No module named") ? " (the stagd Python package must be importable by that interpreter: "
                                               "install it (the stagd .deb, or pip install clients/python), or set PYTHONPATH for "
                                               "the helper with initializationOptions.pythonEnv, e.g. "
                                               "{\"PYTHONPATH\": \"/path/to/clients/python\"} (VS Code: the "
                                               "stagd.pythonEnv setting; docs/editors.md))"
                                             : "");
  }
  sv_lsp_child_free(&ch);
  sg_error_clear(&err);
  return ans;
}

/* The Stage service method on the S-expression: {graphId, dump text}. */
static cJSON *stage(sv_lsp_request *rq, const char *sexpr, const char *qual, const char *format, const py_stmt *def) {
  const sv_method *m = sv_method_by_name("Stage");
  sg_arena arena;
  sg_arena_init(&arena, 16 * 1024);
  sv_call call = {.id = sv_service_next_id(rq->sv), .arena = &arena, .deadline_ns = 0, .cancelled = rq->cancelled};
  cJSON *params = cJSON_CreateObject();
  cJSON_AddStringToObject(params, "sexpr", sexpr);
  sg_buf fn = SG_BUF_INIT;
  sg_buf_printf(&fn, "<stagd/graph %s>", qual);
  cJSON_AddStringToObject(params, "filename", fn.data);
  cJSON *dumps = cJSON_AddArrayToObject(params, "dumps");
  sg_buf f = SG_BUF_INIT;
  sg_buf_puts(&f, "DUMP_FORMAT_");
  for (const char *p = format; *p; p++) sg_buf_putc(&f, (char)(*p - 'a' + 'A'));
  cJSON_AddItemToArray(dumps, cJSON_CreateString(f.data));
  cJSON *reply = NULL;
  sg_error err = SG_ERROR_INIT;
  cJSON *out = NULL;
  if (sv_service_invoke_json(rq->sv, m, &call, params, &reply, &err) != SG_OK) {
    if (err.code != SG_CANCELLED) {
      char *details = sv_error_details(&err);
      sg_buf msg = SG_BUF_INIT;
      sg_buf_printf(&msg, "the graph library cannot stage %s: %s", qual, details);
      fail_at(rq, def->lineno, def->col_offset, def->lineno, line_bytes(&rq->text, def->lineno), "staging-error",
              "stage", msg.data);
      sg_buf_free(&msg);
      free(details);
    }
  } else {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(reply, "graphId");
    const cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(reply, "dumps"), 0);
    const cJSON *text = d ? cJSON_GetObjectItemCaseSensitive(d, "text") : NULL;
    out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "graphId", cJSON_IsString(id) ? id->valuestring : "");
    cJSON_AddStringToObject(out, "text", cJSON_IsString(text) ? text->valuestring : "");
  }
  cJSON_Delete(reply);
  cJSON_Delete(params);
  sg_buf_free(&fn);
  sg_buf_free(&f);
  sg_error_clear(&err);
  sg_arena_free(&arena);
  return out;
}

/* The Stage method on the document's text as Python (graph/pyfront): the answer, or
 * NULL with *fallback when the function is outside the subset (the helper's turn), or
 * NULL after sv_lsp_fail. */
static cJSON *stage_in_daemon(sv_lsp_request *rq, const char *qual, const char *format, const cJSON *args,
                              const py_stmt *def, bool *fallback) {
  *fallback = false;
  const sv_method *m = sv_method_by_name("Stage");
  sg_arena arena;
  sg_arena_init(&arena, 16 * 1024);
  sv_call call = {.id = sv_service_next_id(rq->sv), .arena = &arena, .deadline_ns = 0, .cancelled = rq->cancelled};
  cJSON *params = cJSON_CreateObject();
  cJSON_AddStringToObject(params, "source", rq->text.text ? rq->text.text : "");
  cJSON_AddStringToObject(params, "language", "SOURCE_LANGUAGE_PYTHON");
  cJSON_AddStringToObject(params, "filename", uri_filename(rq->uri));
  cJSON_AddStringToObject(params, "entry", qual);
  cJSON *dumps = cJSON_AddArrayToObject(params, "dumps");
  sg_buf f = SG_BUF_INIT;
  sg_buf_puts(&f, "DUMP_FORMAT_");
  for (const char *p = format; *p; p++) sg_buf_putc(&f, (char)(*p - 'a' + 'A'));
  cJSON_AddItemToArray(dumps, cJSON_CreateString(f.data));
  cJSON_AddItemToArray(dumps, cJSON_CreateString("DUMP_FORMAT_SEXPR"));
  cJSON *names = cJSON_AddArrayToObject(params, "staticNames"), *values = cJSON_CreateArray();
  for (const cJSON *a = args ? args->child : NULL; a; a = a->next) {
    cJSON_AddItemToArray(names, cJSON_CreateString(a->string));
    cJSON_AddItemToArray(values, cJSON_Duplicate(a, 1));
  }
  char *vals = cJSON_PrintUnformatted(values);
  cJSON_AddStringToObject(params, "staticArgsJson", vals);
  cJSON_free(vals);
  cJSON_Delete(values);
  cJSON *reply = NULL, *out = NULL;
  sg_error err = SG_ERROR_INIT;
  if (sv_service_invoke_json(rq->sv, m, &call, params, &reply, &err) != SG_OK) {
    if (err.reason == SG_REASON_UNSUPPORTED) {
      *fallback = true;
    } else if (err.code != SG_CANCELLED) {
      int line = err.line > 0 && err.line <= rq->text.nlines ? err.line : def->lineno;
      int col = err.line > 0 && err.col > 0 ? err.col - 1 : line == def->lineno ? def->col_offset : 0;
      int end = line_bytes(&rq->text, line);
      sg_buf msg = SG_BUF_INIT;
      sg_buf_printf(&msg, "staging %s failed: %s", qual, err.message ? err.message : "");
      fail_at(rq, line, col > end ? 0 : col, line, end, "staging-error", "stage", msg.data);
      sg_buf_free(&msg);
    }
  } else {
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(reply, "dumps");
    const cJSON *d0 = cJSON_GetArrayItem(ds, 0), *d1 = cJSON_GetArrayItem(ds, 1);
    const cJSON *t0 = d0 ? cJSON_GetObjectItemCaseSensitive(d0, "text") : NULL;
    const cJSON *t1 = d1 ? cJSON_GetObjectItemCaseSensitive(d1, "text") : NULL;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(reply, "graphId");
    out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "function", qual);
    cJSON_AddStringToObject(out, "format", format);
    cJSON_AddStringToObject(out, "text", cJSON_IsString(t0) ? t0->valuestring : "");
    cJSON_AddStringToObject(out, "sexpr", cJSON_IsString(t1) ? t1->valuestring : "");
    cJSON_AddStringToObject(out, "graphId", cJSON_IsString(id) ? id->valuestring : "");
    cJSON *ps = cJSON_AddArrayToObject(out, "params");
    const py_arguments *pa = def->v.FunctionDef.args;
    for (int part = 0; part < 2; part++) {
      const py_seq *s = part ? pa->args : pa->posonlyargs;
      for (int i = 0; i < PY_SEQ_LEN(s); i++) {
        const char *name = ((const py_arg *)s->a[i])->arg;
        if (!args || !cJSON_GetObjectItemCaseSensitive(args, name)) cJSON_AddItemToArray(ps, cJSON_CreateString(name));
      }
    }
    cJSON_AddArrayToObject(out, "diagnostics");
    cJSON_AddStringToObject(out, "stagedBy", "daemon");
  }
  cJSON_Delete(reply);
  cJSON_Delete(params);
  sg_buf_free(&f);
  sg_error_clear(&err);
  sg_arena_free(&arena);
  return out;
}

cJSON *sv_lsp_graph(sv_lsp_request *rq) {
  py_conv_style style;
  const char *function;
  if (!sv_lsp_read_common(rq, &style, &function)) return NULL;
  const cJSON *format = cJSON_GetObjectItemCaseSensitive(rq->params, "format");
  const char *fmt = "text";
  if (format && !cJSON_IsNull(format)) {
    if (!cJSON_IsString(format) || (strcmp(format->valuestring, "dot") != 0 && strcmp(format->valuestring, "text") != 0 &&
                                    strcmp(format->valuestring, "json") != 0 && strcmp(format->valuestring, "sexpr") != 0))
      return sv_lsp_fail(rq, LSP_INVALID_PARAMS,
                         "Invalid params: stagd/graph: 'format' must be \"text\", \"dot\", \"json\" or \"sexpr\"");
    fmt = format->valuestring;
  }
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(rq->params, "args");
  if (args && !cJSON_IsNull(args) && !cJSON_IsObject(args))
    return sv_lsp_fail(rq, LSP_INVALID_PARAMS,
                       "Invalid params: stagd/graph: 'args' must be an object of static argument values "
                       "({\"n\": 2}); the other parameters are staged");
  const cJSON *pos = cJSON_GetObjectItemCaseSensitive(rq->params, "position");
  const cJSON *pl = cJSON_IsObject(pos) ? cJSON_GetObjectItemCaseSensitive(pos, "line") : NULL;
  const cJSON *pc = cJSON_IsObject(pos) ? cJSON_GetObjectItemCaseSensitive(pos, "character") : NULL;
  if (pos && !cJSON_IsNull(pos) && !(cJSON_IsNumber(pl) && cJSON_IsNumber(pc) && pl->valuedouble >= 0 && pc->valuedouble >= 0))
    return sv_lsp_fail(rq, LSP_INVALID_PARAMS, "Invalid params: stagd/graph: 'position' must be {line, character}");
  if (!function && !cJSON_IsObject(pos))
    return sv_lsp_fail(rq, LSP_INVALID_PARAMS,
                       "Invalid params: stagd/graph: give the function to stage as 'function' (\"f\") or "
                       "'position' (a position inside it)");

  py_ctx ctx;
  py_ctx_init(&ctx);
  py_conv_result res;
  memset(&res, 0, sizeof res);
  sg_error err = SG_ERROR_INIT;
  cJSON *out = NULL, *ans = NULL, *staged = NULL;
  char *qual = NULL;
  py_mod *mod = py_parse(&ctx, rq->text.text, rq->text.len, uri_filename(rq->uri), &err);
  if (!mod) {
    char *details = sv_error_details(&err);
    sv_lsp_fail(rq, LSP_REQUEST_FAILED, "cannot convert %s: %s", rq->uri, details);
    free(details);
    goto done;
  }
  int line1 = 0, col0 = 0;
  if (!function) sv_lsp_from_position(&rq->text, (int64_t)pl->valuedouble, (int64_t)pc->valuedouble, &line1, &col0);
  const py_stmt *def = find_function(mod, function, line1, &qual);
  if (def) rq->staged_function = sg_xstrdup(qual);
  if (!def) {
    if (function)
      sv_lsp_fail(rq, LSP_REQUEST_FAILED,
                  "stagd/graph: no function named '%s' in %s (name a module-level function, or Class.method)",
                  function, rq->uri);
    else
      sv_lsp_fail(rq, LSP_REQUEST_FAILED,
                  "stagd/graph: no function at %d:%d of %s: put the position inside a module-level function", line1,
                  col0 + 1, rq->uri);
    goto done;
  }
  if (!strchr(qual, '.') && def->kind == PY_K_FunctionDef) { /* the daemon's own front end first */
    bool fallback;
    out = stage_in_daemon(rq, qual, fmt, cJSON_IsObject(args) ? args : NULL, def, &fallback);
    if (out || !fallback) goto done;
  }
  /* The whole module in the AutoGraph form (what the runtime stages), so the functions
   * the staged one calls are converted too. */
  (void)style; /* the graph is the same in both styles; `style` is only checked */
  if (!rq->python_allowed) {
    sv_lsp_fail(rq, LSP_REQUEST_FAILED,
                "stagd/graph: '%s' is outside the Python the daemon stages itself (docs/pyfront.md), and staging it "
                "would run the document's code in a Python helper, which this daemon does not do for network "
                "clients; its operator can allow it with --lsp-allow-python (docs/security.md)",
                qual);
    goto done;
  }
  if (sv_lsp_convert(&rq->text, rq->uri, PY_STYLE_AUTOGRAPH, NULL, &res, &err) != SG_OK) {
    char *details = sv_error_details(&err);
    sv_lsp_fail(rq, LSP_REQUEST_FAILED, "cannot convert %s: %s", rq->uri, details);
    free(details);
    goto done;
  }
  cJSON *warnings = cJSON_CreateArray();
  for (int i = 0; i < res.ndiags; i++) {
    const py_diag *d = &res.diags[i];
    if (d->line < sv_lsp_def_first_line(def) || d->line > def->end_lineno) continue;
    sg_buf m = SG_BUF_INIT;
    sg_buf_printf(&m, "%s", d->message);
    if (d->hint && *d->hint) sg_buf_printf(&m, "\nhint: %s", d->hint);
    int c0 = d->col > 0 ? d->col - 1 : 0, el = d->end_line > 0 ? d->end_line : d->line;
    int ec0 = d->end_line > 0 && d->end_col > 0 ? d->end_col - 1 : c0 + 1;
    /* a function the converter leaves as it is would run its control flow in Python */
    bool fatal = d->severity == PY_DIAG_ERROR ||
                 (d->code && (!strcmp(d->code, "unsupported-construct") || !strcmp(d->code, "reserved-name")));
    if (fatal) {
      fail_at(rq, d->line, c0, el, ec0, d->code ? d->code : "unsupported-construct", "convert", m.data);
      sg_buf_free(&m);
      cJSON_Delete(warnings);
      goto done;
    }
    cJSON_AddItemToArray(warnings,
                         diagnostic(&rq->text, d->line, c0, el, ec0, LSP_SEV_WARNING, d->code ? d->code : "convert", m.data));
    sg_buf_free(&m);
  }
  if (atomic_load(rq->cancelled) || !(ans = run_helper(rq, res.code.data ? res.code.data : "", qual, args))) {
    cJSON_Delete(warnings);
    goto done;
  }
  const cJSON *ok = cJSON_GetObjectItemCaseSensitive(ans, "ok");
  const cJSON *sexpr = cJSON_GetObjectItemCaseSensitive(ans, "sexpr");
  if (!cJSON_IsTrue(ok) || !cJSON_IsString(sexpr)) {
    helper_failure(rq, ans, def, qual);
    cJSON_Delete(warnings);
    goto done;
  }
  if (!(staged = stage(rq, sexpr->valuestring, qual, fmt, def))) {
    cJSON_Delete(warnings);
    goto done;
  }
  out = cJSON_CreateObject();
  cJSON_AddStringToObject(out, "function", qual);
  cJSON_AddStringToObject(out, "format", fmt);
  cJSON_AddItemToObject(out, "text", cJSON_DetachItemFromObject(staged, "text"));
  cJSON_AddStringToObject(out, "sexpr", sexpr->valuestring);
  cJSON_AddItemToObject(out, "graphId", cJSON_DetachItemFromObject(staged, "graphId"));
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(ans, "params");
  cJSON_AddItemToObject(out, "params", cJSON_IsArray(params) ? cJSON_Duplicate(params, 1) : cJSON_CreateArray());
  cJSON_AddItemToObject(out, "diagnostics", warnings);
  cJSON_AddStringToObject(out, "stagedBy", "python");
done:
  cJSON_Delete(staged);
  cJSON_Delete(ans);
  free(qual);
  py_conv_result_free(&res);
  sg_error_clear(&err);
  py_ctx_free(&ctx);
  return out;
}
