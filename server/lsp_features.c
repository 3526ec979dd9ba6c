// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_features.c — what the LSP features share: the table of request methods that
 * lsp.c dispatches to them, JSON-RPC errors from a feature, and the text snapshot
 * that converts AST positions (1-based lines, UTF-8 byte columns) to LSP positions
 * (0-based lines, UTF-16 code units or UTF-8 bytes) and back.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "documents.h"
#include "lsp_features.h"

/* ------------------------------------------------------------ the table */

static const sv_lsp_feature features[] = {
    {"textDocument/documentSymbol", sv_lsp_document_symbol, false},
    {"textDocument/codeLens", sv_lsp_code_lens, false},
    {"textDocument/hover", sv_lsp_hover, false},
    {"stagd/convertedCode", sv_lsp_converted_code, true},
    {"stagd/graph", sv_lsp_graph, true},
};

size_t sv_lsp_feature_count(void) { return sizeof features / sizeof features[0]; }

const sv_lsp_feature *sv_lsp_feature_at(size_t i) { return i < sv_lsp_feature_count() ? &features[i] : NULL; }

const sv_lsp_feature *sv_lsp_feature_by_name(const char *method) {
  for (size_t i = 0; i < sv_lsp_feature_count(); i++)
    if (!strcmp(features[i].method, method)) return &features[i];
  return NULL;
}

cJSON *sv_lsp_fail(sv_lsp_request *rq, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sg_buf_clear(&rq->err_message);
  sg_buf_vprintf(&rq->err_message, fmt, ap);
  va_end(ap);
  rq->err_code = code;
  return NULL;
}

bool sv_lsp_parse_style(const char *s, py_conv_style *out) {
  if (!strcmp(s, "autograph")) *out = PY_STYLE_AUTOGRAPH;
  else if (!strcmp(s, "snek")) *out = PY_STYLE_SNEK;
  else return false;
  return true;
}

/* ------------------------------------------------------------ positions */

void sv_lsp_text_init(sv_lsp_text *t, const char *text, size_t len, bool utf16) {
  int cap = 64;
  t->text = text;
  t->len = len;
  t->utf16 = utf16;
  t->line_start = sg_xmalloc(sizeof *t->line_start * (size_t)cap);
  t->nlines = 0;
  t->line_start[t->nlines++] = 0;
  for (const char *p = text, *end = text + len; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) {
    if (t->nlines == cap) {
      cap *= 2;
      t->line_start = sg_xrealloc(t->line_start, sizeof *t->line_start * (size_t)cap);
    }
    t->line_start[t->nlines++] = (size_t)(p - text) + 1;
  }
}

void sv_lsp_text_free(sv_lsp_text *t) {
  free(t->line_start);
  t->line_start = NULL;
}

/* [start, end) of 1-based line line1 without its line break; clamped. */
static void line_span(const sv_lsp_text *t, int line1, size_t *start, size_t *end) {
  if (line1 < 1) line1 = 1;
  if (line1 > t->nlines) {
    *start = *end = t->len;
    return;
  }
  *start = t->line_start[line1 - 1];
  size_t e = line1 < t->nlines ? t->line_start[line1] - 1 : t->len; /* at the '\n' */
  if (e > *start && t->text[e - 1] == '\r') e--;
  *end = e;
}

static size_t utf8_seq_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}

int64_t sv_lsp_char(const sv_lsp_text *t, int line1, int col0) {
  size_t start, end;
  line_span(t, line1, &start, &end);
  size_t stop = col0 < 0 ? start : start + (size_t)col0;
  if (stop > end) stop = end;
  if (!t->utf16) return (int64_t)(stop - start);
  int64_t units = 0;
  for (size_t i = start; i < stop;) {
    size_t n = utf8_seq_len((unsigned char)t->text[i]);
    units += n == 4 ? 2 : 1;
    i += n;
  }
  return units;
}

cJSON *sv_lsp_position(const sv_lsp_text *t, int line1, int col0) {
  cJSON *p = cJSON_CreateObject();
  int line = line1 < 1 ? 1 : line1 > t->nlines ? t->nlines : line1;
  cJSON_AddNumberToObject(p, "line", line - 1);
  cJSON_AddNumberToObject(p, "character", (double)sv_lsp_char(t, line, line1 > t->nlines ? 1 << 30 : col0));
  return p;
}

cJSON *sv_lsp_range(const sv_lsp_text *t, int line1, int col0, int end_line1, int end_col0) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToObject(r, "start", sv_lsp_position(t, line1, col0));
  cJSON_AddItemToObject(r, "end", sv_lsp_position(t, end_line1, end_col0));
  return r;
}

int sv_lsp_cp_to_byte(const sv_lsp_text *t, int line1, int cp1) {
  size_t start, end;
  line_span(t, line1, &start, &end);
  size_t i = start;
  for (int k = 1; k < cp1 && i < end; k++) i += utf8_seq_len((unsigned char)t->text[i]);
  if (i > end) i = end;
  return (int)(i - start);
}

void sv_lsp_from_position(const sv_lsp_text *t, int64_t line0, int64_t character, int *line1, int *col0) {
  size_t off = sv_doc_offset(t->text, t->len, line0, character, t->utf16);
  /* the line containing off: binary search over line starts */
  int lo = 0, hi = t->nlines - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (t->line_start[mid] <= off) lo = mid;
    else hi = mid - 1;
  }
  *line1 = lo + 1;
  *col0 = (int)(off - t->line_start[lo]);
}
