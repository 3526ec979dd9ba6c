// SPDX-License-Identifier: Apache-2.0
/*
 * documents.h — open LSP documents (server/documents.c): one store per LSP session.
 */
#ifndef STAGD_SERVER_DOCUMENTS_H
#define STAGD_SERVER_DOCUMENTS_H

#include "sv.h"

typedef struct sv_doc {
  char *uri;
  char *language_id;
  int64_t version;
  sg_buf text; /* UTF-8 */
  /* Analysis state (lsp.c): the generation of the text (a session-wide counter,
   * bumped on every open / change), whether it awaits the debounce timer, and the
   * analysis in flight (its cancel flag is set when a newer text supersedes it). */
  uint64_t gen;
  bool dirty;
  void *analysis;
  /* stagd/convertedCode's answer in the session style for generation code_gen
   * (raw JSON, malloc'd; NULL if none): repeated requests without edits reuse it. */
  char *code_json;
  uint64_t code_gen;
  /* What textDocument/publishDiagnostics last said (lsp.c): the analysis's
   * Diagnostic[] of generation diags_gen (document version diags_version), and the
   * staging errors stagd/graph met on generation stage_gen, one per function
   * (data.function); both are sent together, so a staging error shows in place until
   * the text changes or the function stages. Owned; NULL when none. */
  cJSON *analysis_diags;
  uint64_t diags_gen;
  int64_t diags_version;
  cJSON *stage_diags;
  uint64_t stage_gen;
} sv_doc;

typedef struct sv_docs {
  sg_map by_uri; /* hash of the URI → chain of entries */
  size_t count;
} sv_docs;

void sv_docs_init(sv_docs *d);
void sv_docs_free(sv_docs *d);
/* Opens (or, if already open, replaces) a document; returns it. */
sv_doc *sv_docs_open(sv_docs *d, const char *uri, const char *language_id, int64_t version, const char *text,
                     size_t len);
sv_doc *sv_docs_get(sv_docs *d, const char *uri);
bool sv_docs_close(sv_docs *d, const char *uri);
/* Calls fn on every open document (fn must not open or close documents). */
void sv_docs_foreach(sv_docs *d, void (*fn)(sv_doc *doc, void *ud), void *ud);

/* Byte offset of an LSP position in text; utf16 selects UTF-16 code units for
 * `character` (else UTF-8 bytes). Clamped as the protocol specifies. */
size_t sv_doc_offset(const char *text, size_t len, int64_t line, int64_t character, bool utf16);
/* Applies one TextDocumentContentChangeEvent (with a range: incremental; without:
 * the whole text). */
sg_code sv_doc_apply_change(sv_doc *doc, const cJSON *change, bool utf16, sg_error *err);

#endif
