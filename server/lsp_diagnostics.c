// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_diagnostics.c — the Diagnostic[] of textDocument/publishDiagnostics: a syntax
 * error (CPython's message and location, as the Parse RPC reports it; code "syntax"),
 * else what the converter cannot convert (code "unsupported-construct",
 * "reserved-name", ..., with the converter's hint appended to the message and in
 * `data.hint`). Source "stagd" on every diagnostic.
 */
#include <string.h>

#include "lsp_features.h"

static cJSON *diagnostic(cJSON *range, int severity, const char *code, const char *message, const char *hint) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddItemToObject(d, "range", range);
  cJSON_AddNumberToObject(d, "severity", severity);
  cJSON_AddStringToObject(d, "code", code);
  cJSON_AddStringToObject(d, "source", "stagd");
  if (hint && *hint) {
    sg_buf b = SG_BUF_INIT;
    sg_buf_printf(&b, "%s\nhint: %s", message, hint);
    cJSON_AddStringToObject(d, "message", b.data);
    sg_buf_free(&b);
    cJSON *data = cJSON_AddObjectToObject(d, "data");
    cJSON_AddStringToObject(data, "hint", hint);
  } else {
    cJSON_AddStringToObject(d, "message", message);
  }
  return d;
}

/* A syntax error: one character at CPython's (line, offset), or the end of the line. */
static cJSON *syntax_diagnostic(const sv_lsp_text *t, const sg_error *err) {
  int line = err->line > 0 ? err->line : 1;
  int col = sv_lsp_cp_to_byte(t, line, err->col > 0 ? err->col : 1);
  int end = sv_lsp_cp_to_byte(t, line, (err->col > 0 ? err->col : 1) + 1);
  return diagnostic(sv_lsp_range(t, line, col, line, end), LSP_SEV_ERROR, "syntax",
                    err->message ? err->message : "invalid syntax", NULL);
}

cJSON *sv_lsp_diagnostics(const sv_lsp_text *t, const char *uri, py_conv_style style, atomic_bool *cancelled,
                          atomic_bool *want_code, char **code_json) {
  if (cancelled && atomic_load(cancelled)) return NULL;
  py_conv_result res;
  sg_error err = SG_ERROR_INIT;
  sg_watch w = {.cancel = cancelled}; /* the converter polls it (common/watch.c) */
  sg_watch *prev = sg_watch_enter(&w);
  sg_code rc = sv_lsp_convert(t, uri, style, NULL, &res, &err);
  sg_watch_leave(prev);
  cJSON *out = NULL;
  if (cancelled && atomic_load(cancelled)) goto done;
  out = cJSON_CreateArray();
  if (rc != SG_OK) {
    if (err.code == SG_INVALID_ARGUMENT && err.line > 0) cJSON_AddItemToArray(out, syntax_diagnostic(t, &err));
    else cJSON_AddItemToArray(out, diagnostic(sv_lsp_range(t, 1, 0, 1, 0), LSP_SEV_ERROR, "internal",
                                              err.message ? err.message : "the converter failed", NULL));
    goto done;
  }
  if (want_code && atomic_load(want_code) && code_json) *code_json = sv_lsp_code_json(&res);
  for (int i = 0; i < res.ndiags; i++) {
    const py_diag *pd = &res.diags[i];
    int sev = pd->severity == PY_DIAG_ERROR ? LSP_SEV_ERROR : pd->severity == PY_DIAG_WARNING ? LSP_SEV_WARNING
                                                                                              : LSP_SEV_INFO;
    int el = pd->end_line > 0 ? pd->end_line : pd->line, ec = pd->end_line > 0 ? pd->end_col - 1 : pd->col - 1;
    cJSON_AddItemToArray(out, diagnostic(sv_lsp_range(t, pd->line, pd->col - 1, el, ec), sev,
                                         pd->code ? pd->code : "unsupported-construct", pd->message, pd->hint));
  }
done:
  py_conv_result_free(&res);
  sg_error_clear(&err);
  return out;
}
