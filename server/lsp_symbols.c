// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_symbols.c — textDocument/documentSymbol (classes, functions, methods, nested
 * ones as children; also those defined inside if / for / while / with / try blocks)
 * and textDocument/codeLens ("Show converted code" and "Show graph" on every function
 * the converter takes: module-level functions and methods of module-level classes,
 * with the argument [{uri, function: "f" | "Class.method"}] the VS Code extension's
 * commands stagd.showConvertedCode / stagd.showGraph expect).
 */
#include <string.h>

#include "lsp_features.h"

bool sv_lsp_is_def(const py_stmt *s) {
  return s->kind == PY_K_FunctionDef || s->kind == PY_K_AsyncFunctionDef;
}

const char *sv_lsp_def_name(const py_stmt *s) {
  return s->kind == PY_K_ClassDef ? s->v.ClassDef.name
         : s->kind == PY_K_AsyncFunctionDef ? s->v.AsyncFunctionDef.name
                                            : s->v.FunctionDef.name;
}

py_seq *sv_lsp_def_body(const py_stmt *s) {
  return s->kind == PY_K_ClassDef ? s->v.ClassDef.body
         : s->kind == PY_K_AsyncFunctionDef ? s->v.AsyncFunctionDef.body
                                            : s->v.FunctionDef.body;
}

py_seq *sv_lsp_def_decorators(const py_stmt *s) {
  return s->kind == PY_K_ClassDef ? s->v.ClassDef.decorator_list
         : s->kind == PY_K_AsyncFunctionDef ? s->v.AsyncFunctionDef.decorator_list
                                            : s->v.FunctionDef.decorator_list;
}

int sv_lsp_def_first_line(const py_stmt *s) {
  int line = s->lineno;
  py_seq *dec = sv_lsp_def_decorators(s);
  for (int i = 0; i < PY_SEQ_LEN(dec); i++) {
    const py_expr *d = dec->a[i];
    if (d->lineno < line) line = d->lineno;
  }
  return line;
}

int sv_lsp_each_function(const py_mod *mod, sv_lsp_def_fn fn, void *ctx) {
  const py_seq *body = mod->v.Module.body;
  for (int i = 0; i < PY_SEQ_LEN(body); i++) {
    const py_stmt *s = body->a[i];
    int r = 0;
    if (sv_lsp_is_def(s)) {
      r = fn(s, sv_lsp_def_name(s), ctx);
    } else if (s->kind == PY_K_ClassDef) {
      const py_seq *cb = s->v.ClassDef.body;
      for (int k = 0; k < PY_SEQ_LEN(cb) && !r; k++) {
        const py_stmt *m = cb->a[k];
        if (!sv_lsp_is_def(m)) continue;
        sg_buf q = SG_BUF_INIT;
        sg_buf_printf(&q, "%s.%s", s->v.ClassDef.name, sv_lsp_def_name(m));
        r = fn(m, q.data, ctx);
        sg_buf_free(&q);
      }
    }
    if (r) return r;
  }
  return 0;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f'; }

/* Byte column of the name in "async def NAME" / "def NAME" / "class NAME" (on the
 * statement's first line); the statement's column if it cannot be found there. */
static int name_col(const sv_lsp_text *t, const py_stmt *s) {
  if (s->lineno < 1 || s->lineno > t->nlines) return s->col_offset;
  size_t start = t->line_start[s->lineno - 1];
  size_t end = s->lineno < t->nlines ? t->line_start[s->lineno] : t->len;
  size_t i = start + (size_t)s->col_offset;
  const char *kw[] = {"async", "def", "class"};
  for (int k = 0; k < 3 && i < end; k++) {
    size_t n = strlen(kw[k]);
    if (i + n <= end && !memcmp(t->text + i, kw[k], n) && i + n < end && is_space(t->text[i + n])) {
      i += n;
      while (i < end && is_space(t->text[i])) i++;
    }
  }
  const char *name = sv_lsp_def_name(s);
  size_t n = strlen(name);
  if (i + n <= end && !memcmp(t->text + i, name, n)) return (int)(i - start);
  return s->col_offset;
}

/* Range of a def/class including its decorators ('@' is one byte before the expression). */
static cJSON *full_range(const sv_lsp_text *t, const py_stmt *s) {
  int line = s->lineno, col = s->col_offset;
  py_seq *dec = sv_lsp_def_decorators(s);
  if (PY_SEQ_LEN(dec) > 0) {
    const py_expr *d = dec->a[0];
    if (d->lineno < line || (d->lineno == line && d->col_offset < col)) {
      line = d->lineno;
      col = d->col_offset > 0 ? d->col_offset - 1 : 0;
    }
  }
  return sv_lsp_range(t, line, col, s->end_lineno, s->end_col_offset);
}

static cJSON *name_range(const sv_lsp_text *t, const py_stmt *s) {
  int c = name_col(t, s);
  return sv_lsp_range(t, s->lineno, c, s->lineno, c + (int)strlen(sv_lsp_def_name(s)));
}

static void symbols_in(const sv_lsp_text *t, const py_seq *body, bool in_class, cJSON *out);

/* Statements whose blocks may hold definitions at the same level. */
static void symbols_in_blocks(const sv_lsp_text *t, const py_stmt *s, bool in_class, cJSON *out) {
  switch (s->kind) {
    case PY_K_If:
      symbols_in(t, s->v.If.body, in_class, out);
      symbols_in(t, s->v.If.orelse, in_class, out);
      break;
    case PY_K_While:
      symbols_in(t, s->v.While.body, in_class, out);
      symbols_in(t, s->v.While.orelse, in_class, out);
      break;
    case PY_K_For:
    case PY_K_AsyncFor:
      symbols_in(t, s->v.For.body, in_class, out);
      symbols_in(t, s->v.For.orelse, in_class, out);
      break;
    case PY_K_With:
    case PY_K_AsyncWith:
      symbols_in(t, s->v.With.body, in_class, out);
      break;
    case PY_K_Try:
    case PY_K_TryStar:
      symbols_in(t, s->v.Try.body, in_class, out);
      for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++) {
        const py_excepthandler *h = s->v.Try.handlers->a[i];
        symbols_in(t, h->v.ExceptHandler.body, in_class, out);
      }
      symbols_in(t, s->v.Try.orelse, in_class, out);
      symbols_in(t, s->v.Try.finalbody, in_class, out);
      break;
    case PY_K_Match:
      for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++) {
        const py_match_case *mc = s->v.Match.cases->a[i];
        symbols_in(t, mc->body, in_class, out);
      }
      break;
    default:
      break;
  }
}

static void symbols_in(const sv_lsp_text *t, const py_seq *body, bool in_class, cJSON *out) {
  for (int i = 0; i < PY_SEQ_LEN(body); i++) {
    const py_stmt *s = body->a[i];
    if (!sv_lsp_is_def(s) && s->kind != PY_K_ClassDef) {
      symbols_in_blocks(t, s, in_class, out);
      continue;
    }
    cJSON *sym = cJSON_CreateObject();
    cJSON_AddStringToObject(sym, "name", sv_lsp_def_name(s));
    int kind = s->kind == PY_K_ClassDef ? LSP_SYM_CLASS : in_class ? LSP_SYM_METHOD : LSP_SYM_FUNCTION;
    cJSON_AddStringToObject(sym, "detail", s->kind == PY_K_ClassDef ? "class"
                                           : s->kind == PY_K_AsyncFunctionDef ? "async def"
                                                                              : "def");
    cJSON_AddNumberToObject(sym, "kind", kind);
    cJSON_AddItemToObject(sym, "range", full_range(t, s));
    cJSON_AddItemToObject(sym, "selectionRange", name_range(t, s));
    cJSON *children = cJSON_AddArrayToObject(sym, "children");
    symbols_in(t, sv_lsp_def_body(s), s->kind == PY_K_ClassDef, children);
    cJSON_AddItemToArray(out, sym);
  }
}

/* Parses the request's document; NULL on a syntax error (publishDiagnostics reports
 * it; symbols and lenses are then empty, as editors ask for them while one types). */
static py_mod *parse_doc(sv_lsp_request *rq, py_ctx *ctx) {
  sg_error err = SG_ERROR_INIT;
  py_mod *mod = py_parse(ctx, rq->text.text, rq->text.len, rq->uri, &err);
  sg_error_clear(&err);
  return mod;
}

cJSON *sv_lsp_document_symbol(sv_lsp_request *rq) {
  py_ctx ctx;
  py_ctx_init(&ctx);
  py_mod *mod = parse_doc(rq, &ctx);
  cJSON *out = cJSON_CreateArray();
  if (mod) {
    symbols_in(&rq->text, mod->v.Module.body, false, out);
  }
  py_ctx_free(&ctx);
  return out;
}

static cJSON *lens(const sv_lsp_text *t, const py_stmt *s, const char *uri, const char *qualname, const char *title,
                   const char *command) {
  cJSON *l = cJSON_CreateObject();
  cJSON_AddItemToObject(l, "range", name_range(t, s));
  cJSON *c = cJSON_AddObjectToObject(l, "command");
  cJSON_AddStringToObject(c, "title", title);
  cJSON_AddStringToObject(c, "command", command);
  cJSON *args = cJSON_AddArrayToObject(c, "arguments");
  cJSON *target = cJSON_CreateObject();
  cJSON_AddStringToObject(target, "uri", uri);
  cJSON_AddStringToObject(target, "function", qualname);
  cJSON_AddItemToArray(args, target);
  return l;
}

static void lenses_for(const sv_lsp_text *t, const py_stmt *s, const char *uri, const char *qualname, cJSON *out) {
  cJSON_AddItemToArray(out, lens(t, s, uri, qualname, "Show converted code", "stagd.showConvertedCode"));
  cJSON_AddItemToArray(out, lens(t, s, uri, qualname, "Show graph", "stagd.showGraph"));
}

typedef struct {
  sv_lsp_request *rq;
  cJSON *out;
} lens_ctx;

static int lens_one(const py_stmt *def, const char *qual, void *ctx) {
  lens_ctx *lc = ctx;
  lenses_for(&lc->rq->text, def, lc->rq->uri, qual, lc->out);
  return 0;
}

cJSON *sv_lsp_code_lens(sv_lsp_request *rq) {
  py_ctx ctx;
  py_ctx_init(&ctx);
  py_mod *mod = parse_doc(rq, &ctx);
  cJSON *out = cJSON_CreateArray();
  if (mod) {
    lens_ctx lc = {rq, out};
    sv_lsp_each_function(mod, lens_one, &lc);
  }
  py_ctx_free(&ctx);
  return out;
}
