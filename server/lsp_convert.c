// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_convert.c — the custom request stagd/convertedCode, the params it shares with
 * stagd/graph (lsp_graph.c), and sv_lsp_convert, the one call into the converter
 * (convert/convert.h) that every LSP feature goes through.
 *
 *   stagd/convertedCode {textDocument: {uri}, style?, function?}
 *                       → {text, sourceMap: [{convertedLine, original: {line, column}}]}
 *
 * Lines and columns in the results are 1-based, as everywhere in the stagd API
 * (clients/vscode/src/protocol.ts).
 */
#include <stdlib.h>
#include <string.h>

#include "lsp_features.h"
#include "transport.h"

/* "file:///a/b.py" → "/a/b.py" for messages; other URIs as they are. */
static const char *uri_filename(const char *uri) {
  return !strncmp(uri, "file://", 7) ? uri + 7 : uri;
}

sg_code sv_lsp_convert(const sv_lsp_text *t, const char *uri, py_conv_style style, const char *function,
                       py_conv_result *out, sg_error *err) {
  return py_convert(t->text, t->len, uri_filename(uri), style, function, out, err);
}

/* Written as raw JSON: the result for a large module is megabytes, and this is the
 * request an editor makes after every edit. Runs of converted lines from the same
 * original position keep only their first entry: a line without an entry belongs to
 * the entry above it (clients/vscode/src/sourceMap.ts), so nothing is lost. */
char *sv_lsp_code_json(const py_conv_result *res) {
  sg_buf json = SG_BUF_INIT;
  sg_buf_reserve(&json, res->code.len + 64 + (size_t)res->nmap * 16);
  sg_buf_puts(&json, "{\"text\":");
  sg_buf_put_json_string(&json, res->code.data ? res->code.data : "", res->code.len);
  sg_buf_puts(&json, ",\"sourceMap\":[");
  int prev_line = -1, prev_col = -1, n = 0;
  for (int i = 0; i < res->nmap; i++) {
    int col = res->map[i].col > 0 ? res->map[i].col : 1;
    if (res->map[i].line == prev_line && col == prev_col) continue;
    prev_line = res->map[i].line, prev_col = col;
    sg_buf_printf(&json, "%s{\"convertedLine\":%d,\"original\":{\"line\":%d,\"column\":%d}}", n++ ? "," : "",
                  res->map[i].converted_line, res->map[i].line, col);
  }
  sg_buf_puts(&json, "]}");
  size_t len;
  return sg_buf_detach(&json, &len);
}

bool sv_lsp_read_common(sv_lsp_request *rq, py_conv_style *style, const char **function) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(rq->params, "style");
  *style = rq->style;
  if (s && !cJSON_IsNull(s)) {
    if (!cJSON_IsString(s) || !sv_lsp_parse_style(s->valuestring, style)) {
      sv_lsp_fail(rq, LSP_INVALID_PARAMS, "Invalid params: %s: 'style' must be \"autograph\" or \"snek\"", rq->method);
      return false;
    }
  }
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(rq->params, "function");
  *function = NULL;
  if (f && !cJSON_IsNull(f)) {
    if (!cJSON_IsString(f)) {
      sv_lsp_fail(rq, LSP_INVALID_PARAMS, "Invalid params: %s: 'function' must be a string (\"f\" or \"Class.method\")",
                  rq->method);
      return false;
    }
    *function = f->valuestring;
  }
  return true;
}

cJSON *sv_lsp_converted_code(sv_lsp_request *rq) {
  py_conv_style style;
  const char *function;
  if (!sv_lsp_read_common(rq, &style, &function)) return NULL;
  py_conv_result res;
  sg_error err = SG_ERROR_INIT;
  cJSON *out = NULL;
  if (sv_lsp_convert(&rq->text, rq->uri, style, function, &res, &err) != SG_OK) {
    char *details = sv_error_details(&err);
    sv_lsp_fail(rq, LSP_REQUEST_FAILED, "cannot convert %s: %s", rq->uri, details);
    free(details);
    goto done;
  }
  if (function && *function) {
    for (int i = 0; i < res.ndiags; i++) {
      if (res.diags[i].code && !strcmp(res.diags[i].code, "unknown-function")) {
        sv_lsp_fail(rq, LSP_REQUEST_FAILED, "%s: %s (%s)", rq->method, res.diags[i].message, res.diags[i].hint);
        goto done;
      }
    }
  }
  char *json = sv_lsp_code_json(&res);
  out = cJSON_CreateRaw(json);
  free(json);
done:
  py_conv_result_free(&res);
  sg_error_clear(&err);
  return out;
}
