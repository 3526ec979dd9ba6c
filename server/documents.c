// SPDX-License-Identifier: Apache-2.0
/*
 * documents.c — the text of the documents an LSP client has open, kept in step with
 * textDocument/didOpen, didChange (full or incremental) and didClose.
 *
 * LSP positions are (line, character) with character counted in UTF-16 code units
 * unless the client and server agree on UTF-8 (positionEncoding). Positions past the
 * end of a line mean the end of that line, and lines past the end mean the end of
 * the document, as the protocol specifies.
 */
#include <stdlib.h>
#include <string.h>

#include "documents.h"

struct sv_doc_entry {
  sv_doc doc;
  struct sv_doc_entry *next; /* same hash */
};

void sv_docs_init(sv_docs *d) { *d = (sv_docs){SG_MAP_INIT, 0}; }

static uint64_t uri_hash(const char *uri) { return sg_hash_bytes(uri, strlen(uri), 0x5d0c); }

/* The chain of entries whose URI has uri's hash. */
static struct sv_doc_entry *chain(sv_docs *d, const char *uri) {
  void *v = NULL;
  sg_map_get(&d->by_uri, uri_hash(uri), &v);
  return v;
}

sv_doc *sv_docs_get(sv_docs *d, const char *uri) {
  for (struct sv_doc_entry *e = chain(d, uri); e; e = e->next)
    if (!strcmp(e->doc.uri, uri)) return &e->doc;
  return NULL;
}

static void doc_free(struct sv_doc_entry *e) {
  free(e->doc.uri);
  free(e->doc.language_id);
  free(e->doc.code_json);
  cJSON_Delete(e->doc.analysis_diags);
  cJSON_Delete(e->doc.stage_diags);
  sg_buf_free(&e->doc.text);
  free(e);
}

sv_doc *sv_docs_open(sv_docs *d, const char *uri, const char *language_id, int64_t version, const char *text,
                     size_t len) {
  sv_doc *old = sv_docs_get(d, uri);
  if (old) { /* reopened without a close: replace the text */
    sg_buf_clear(&old->text);
    sg_buf_append(&old->text, text, len);
    old->version = version;
    return old;
  }
  struct sv_doc_entry *e = sg_xcalloc(1, sizeof *e);
  e->doc.uri = sg_xstrdup(uri);
  e->doc.language_id = sg_xstrdup(language_id ? language_id : "");
  e->doc.version = version;
  sg_buf_append(&e->doc.text, text, len);
  e->next = chain(d, uri);
  sg_map_put(&d->by_uri, uri_hash(uri), e);
  d->count++;
  return &e->doc;
}

bool sv_docs_close(sv_docs *d, const char *uri) {
  struct sv_doc_entry *head = chain(d, uri);
  for (struct sv_doc_entry **p = &head; *p; p = &(*p)->next) {
    if (strcmp((*p)->doc.uri, uri) != 0) continue;
    struct sv_doc_entry *e = *p;
    *p = e->next;
    if (head) sg_map_put(&d->by_uri, uri_hash(uri), head);
    else sg_map_remove(&d->by_uri, uri_hash(uri));
    doc_free(e);
    d->count--;
    return true;
  }
  return false;
}

void sv_docs_foreach(sv_docs *d, void (*fn)(sv_doc *doc, void *ud), void *ud) {
  size_t it = 0;
  void *v;
  while (sg_map_next(&d->by_uri, &it, NULL, &v))
    for (struct sv_doc_entry *e = v; e; e = e->next) fn(&e->doc, ud);
}

void sv_docs_free(sv_docs *d) {
  size_t it = 0;
  void *v;
  while (sg_map_next(&d->by_uri, &it, NULL, &v)) {
    for (struct sv_doc_entry *e = v, *next; e; e = next) {
      next = e->next;
      doc_free(e);
    }
  }
  sg_map_free(&d->by_uri);
  d->count = 0;
}

/* Length in bytes of the UTF-8 sequence starting with byte c (1 for invalid bytes,
 * so malformed text still advances). */
static size_t utf8_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}

size_t sv_doc_offset(const char *text, size_t len, int64_t line, int64_t character, bool utf16) {
  size_t i = 0;
  if (line < 0) return 0;
  for (int64_t l = 0; l < line; l++) {
    const char *nl = memchr(text + i, '\n', len - i);
    if (!nl) return len; /* past the last line: the end */
    i = (size_t)(nl - text) + 1;
  }
  int64_t units = 0;
  while (i < len && text[i] != '\n' && !(text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')) {
    size_t n = utf8_len((unsigned char)text[i]);
    if (i + n > len) n = len - i;
    int64_t w = utf16 ? (n == 4 ? 2 : 1) : (int64_t)n;
    if (units + w > character) break; /* inside a surrogate pair or sequence: stop before it */
    units += w;
    i += n;
  }
  return i;
}

sg_code sv_doc_apply_change(sv_doc *doc, const cJSON *change, bool utf16, sg_error *err) {
  const cJSON *text = cJSON_GetObjectItemCaseSensitive(change, "text");
  if (!cJSON_IsString(text))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "content change without a 'text' string");
  const cJSON *range = cJSON_GetObjectItemCaseSensitive(change, "range");
  size_t tlen = strlen(text->valuestring);
  if (!range || cJSON_IsNull(range)) {
    sg_buf_clear(&doc->text);
    sg_buf_append(&doc->text, text->valuestring, tlen);
    return SG_OK;
  }
  const cJSON *start = cJSON_GetObjectItemCaseSensitive(range, "start");
  const cJSON *end = cJSON_GetObjectItemCaseSensitive(range, "end");
  const cJSON *sl = cJSON_GetObjectItemCaseSensitive(start, "line"), *sc = cJSON_GetObjectItemCaseSensitive(start, "character");
  const cJSON *el = cJSON_GetObjectItemCaseSensitive(end, "line"), *ec = cJSON_GetObjectItemCaseSensitive(end, "character");
  if (!cJSON_IsNumber(sl) || !cJSON_IsNumber(sc) || !cJSON_IsNumber(el) || !cJSON_IsNumber(ec))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "content change 'range' needs start/end {line, character} numbers");
  size_t a = sv_doc_offset(doc->text.data, doc->text.len, (int64_t)sl->valuedouble, (int64_t)sc->valuedouble, utf16);
  size_t b = sv_doc_offset(doc->text.data, doc->text.len, (int64_t)el->valuedouble, (int64_t)ec->valuedouble, utf16);
  if (b < a)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "content change range ends before it starts (%d:%d..%d:%d)",
                        sl->valueint, sc->valueint, el->valueint, ec->valueint);
  sg_buf out = SG_BUF_INIT;
  sg_buf_reserve(&out, doc->text.len - (b - a) + tlen);
  sg_buf_append(&out, doc->text.data, a);
  sg_buf_append(&out, text->valuestring, tlen);
  sg_buf_append(&out, doc->text.data + b, doc->text.len - b);
  sg_buf_free(&doc->text);
  doc->text = out;
  return SG_OK;
}
