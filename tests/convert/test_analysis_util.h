// SPDX-License-Identifier: Apache-2.0
/*
 * test_analysis_util.h — helpers shared by the analysis unit tests
 * (test_analysis_*.c): parse + analyse a snippet, find statements and names by
 * location, compare symbol sets and dump lines as text.
 */
#ifndef STAGD_TEST_ANALYSIS_UTIL_H
#define STAGD_TEST_ANALYSIS_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis.h"

typedef struct fx {
  py_ctx ctx;
  py_mod *mod;
  py_an *an;
  sg_buf buf;
} fx;

static inline fx *fx_new(const char *src) {
  fx *f = calloc(1, sizeof *f);
  py_ctx_init(&f->ctx);
  sg_error err = SG_ERROR_INIT;
  f->mod = py_parse(&f->ctx, src, strlen(src), "t.py", &err);
  if (!f->mod) fprintf(stderr, "parse error: %s:%d:%d\n", err.message, err.line, err.col);
  assert_non_null(f->mod);
  f->an = py_an_new(&f->ctx);
  py_an_module(f->an, f->mod);
  return f;
}

static inline void fx_free(fx *f) {
  py_an_free(f->an);
  py_ctx_free(&f->ctx);
  sg_buf_free(&f->buf);
  free(f);
}

typedef struct fx_find {
  int line, col;
  py_kind kind; /* PY_K_NONE: any statement */
  void *found;
} fx_find;

static inline bool fx_is_stmt(py_kind k) { return k >= PY_K_FunctionDef && k <= PY_K_Continue; }

static inline bool fx_find_visit(void *node, py_kind kind, void *ctx) {
  fx_find *q = ctx;
  if (q->found) return false;
  if (q->kind == PY_K_Name) {
    if (kind == PY_K_Name) {
      const py_expr *e = node;
      if (e->lineno == q->line && e->col_offset == q->col) {
        q->found = node;
        return false;
      }
    }
  } else if (fx_is_stmt(kind)) {
    const py_stmt *s = node;
    if (s->lineno == q->line && (q->kind == PY_K_NONE || q->kind == kind)) {
      q->found = node;
      return false;
    }
  }
  return py_visit_children(node, fx_find_visit, ctx);
}

/* The first statement (of kind, or any) on line. */
static inline const py_stmt *fx_stmt(fx *f, int line, py_kind kind) {
  fx_find q = {line, 0, kind, NULL};
  py_visit_children(f->mod, fx_find_visit, &q);
  if (!q.found) fprintf(stderr, "no statement %s on line %d\n", py_kind_name(kind), line);
  assert_non_null(q.found);
  return q.found;
}

/* The Name node at line:col (col 0-based). */
static inline const py_expr *fx_name(fx *f, int line, int col) {
  fx_find q = {line, col, PY_K_Name, NULL};
  py_visit_children(f->mod, fx_find_visit, &q);
  assert_non_null(q.found);
  return q.found;
}

/* Formats a set as "{a, b}" (valid until the next call). */
static inline const char *fx_set(fx *f, py_symset s) {
  sg_buf_clear(&f->buf);
  py_symset_format(f->an, s, &f->buf);
  return f->buf.data;
}

#define assert_set(f, s, text) assert_string_equal(fx_set((f), (s)), (text))

/* Asserts that dump contains `line` as a whole line. */
static inline void assert_has_line(const char *dump, const char *line) {
  size_t n = strlen(line);
  for (const char *p = dump; (p = strstr(p, line)) != NULL; p++)
    if ((p == dump || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0')) return;
  fprintf(stderr, "line not found: [%s]\nin:\n%s", line, dump);
  fail();
}

#endif
