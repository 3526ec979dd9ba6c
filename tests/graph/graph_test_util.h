// SPDX-License-Identifier: Apache-2.0
/*
 * graph_test_util.h — helpers shared by the graph/ cmocka tests: run a program and
 * compare its JSON result (optimized and not), expect a located error, get a dump.
 */
#ifndef STAGD_TESTS_GRAPH_TEST_UTIL_H
#define STAGD_TESTS_GRAPH_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr.h"

static inline char *run_ok(const char *src, const char *args, bool no_opt) {
  gr_stage_options so = {.no_optimize = no_opt};
  gr_exec_options xo = {0};
  char *res = NULL, *printed = NULL;
  sg_error e = SG_ERROR_INIT;
  sg_code rc = gr_run_source(src, strlen(src), "t.sexp", &so, &xo, args, &res, &printed, &e);
  if (rc) fprintf(stderr, "unexpected error: %s\n", e.message);
  assert_int_equal(rc, SG_OK);
  free(printed);
  return res;
}

static inline void expect_result(const char *src, const char *args, const char *want) {
  for (int no_opt = 0; no_opt < 2; no_opt++) {
    char *r = run_ok(src, args, no_opt);
    assert_string_equal(r, want);
    free(r);
  }
}

/* Runs src and expects an error with the given code at line:col (0 = don't check). */
static inline void expect_error(const char *src, const char *args, sg_code code, int line, int col,
                         const char *needle, uint64_t deadline_ms) {
  gr_stage_options so = {0};
  gr_exec_options xo = {0};
  if (deadline_ms) xo.deadline_ns = sg_now_ns() + deadline_ms * 1000000ull;
  char *res = NULL, *printed = NULL;
  sg_error e = SG_ERROR_INIT;
  sg_code rc = gr_run_source(src, strlen(src), "bad.sexp", &so, &xo, args, &res, &printed, &e);
  if (rc != code || (line && e.line != line) || (col && e.col != col) ||
      (needle && (!e.message || !strstr(e.message, needle))))
    fprintf(stderr, "got %s %d:%d %s\n", sg_code_name(rc), e.line, e.col, e.message ? e.message : "");
  assert_int_equal(rc, code);
  if (line) assert_int_equal(e.line, line);
  if (col) assert_int_equal(e.col, col);
  if (needle) assert_non_null(strstr(e.message, needle));
  if (line) assert_string_equal(e.file, "bad.sexp");
  assert_null(res);
  sg_error_clear(&e);
}

static inline char *dump(const char *src, gr_dump_format fmt, bool no_opt) {
  gr_stage_options so = {.no_optimize = no_opt};
  gr_program *p;
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(gr_stage(src, strlen(src), "t.sexp", &so, &p, &e), SG_OK);
  char *d = gr_program_dump(p, fmt);
  gr_program_release(p);
  return d;
}

static inline int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

#endif
