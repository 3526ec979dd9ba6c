// SPDX-License-Identifier: Apache-2.0
/*
 * test_parser.c — unit tests of convert/'s public API (py.h): error paths with
 * CPython 3.12's messages and locations (each checked against CPython by hand and by
 * syntax_errors.py), robustness on hostile input (deep nesting, NUL bytes, invalid
 * UTF-8, a 50 MB file), the visitor, and the parse → unparse → parse round trip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "py.h"

static sg_code dump(const char *src, size_t len, sg_buf *out, sg_error *err) {
  return py_parse_dump(src, len, "t.py", false, out, err);
}

static void expect_error(const char *src, const char *msg, int line, int col) {
  sg_buf out = SG_BUF_INIT;
  sg_error err = SG_ERROR_INIT;
  assert_int_equal(dump(src, strlen(src), &out, &err), SG_INVALID_ARGUMENT);
  assert_non_null(err.message);
  assert_string_equal(err.message, msg);
  assert_string_equal(err.file, "t.py");
  assert_int_equal(err.line, line);
  assert_int_equal(err.col, col);
  sg_error_clear(&err);
  sg_buf_free(&out);
}

static void test_errors_match_cpython(void **state) {
  (void)state;
  /* (message, lineno, offset) as CPython 3.12.1 reports them */
  expect_error("x = (1, 2\n", "'(' was never closed", 1, 5);
  expect_error("'abc\n", "unterminated string literal (detected at line 1)", 1, 1);
  expect_error("    x = 1\n", "unexpected indent", 1, 4);
  expect_error("if x:\npass\n", "expected an indented block after 'if' statement on line 1", 2, 1);
  expect_error("x = 1 +\n", "invalid syntax", 1, 8);
  expect_error("f() = 1\n", "cannot assign to function call here. Maybe you meant '==' instead of '='?", 1, 1);
  expect_error("if x:\n\ta = 1\n        b = 2\n",
               "inconsistent use of tabs and spaces in indentation", 3, 1);
  expect_error("x = 0777\n",
               "leading zeros in decimal integer literals are not permitted; use an 0o prefix "
               "for octal integers",
               1, 5);
}

static void test_deep_nesting_is_an_error(void **state) {
  (void)state;
  size_t n = 100000;
  char *src = malloc(2 * n + 2);
  memset(src, '(', n);
  memset(src + n, ')', n);
  src[2 * n] = '\n';
  sg_buf out = SG_BUF_INIT;
  sg_error err = SG_ERROR_INIT;
  assert_int_equal(dump(src, 2 * n + 1, &out, &err), SG_INVALID_ARGUMENT);
  assert_string_equal(err.message, "too many nested parentheses");
  sg_error_clear(&err);
  /* brackets too, and long unary chains (no stack overflow either way) */
  memset(src, '[', n);
  assert_int_equal(dump(src, 2 * n + 1, &out, &err), SG_INVALID_ARGUMENT);
  sg_error_clear(&err);
  memset(src, '-', 2 * n);
  src[2 * n - 1] = '1';
  assert_int_equal(dump(src, 2 * n + 1, &out, &err), SG_INVALID_ARGUMENT);
  sg_error_clear(&err);
  memset(src, '~', 2 * n);
  memcpy(src, "not ", 4);
  for (size_t i = 0; i + 4 < 2 * n; i += 4) memcpy(src + i, "not ", 4);
  src[2 * n - 1] = 'x';
  assert_int_equal(dump(src, 2 * n + 1, &out, &err), SG_INVALID_ARGUMENT);
  sg_error_clear(&err);
  sg_buf_free(&out);
  free(src);
}

static void test_hostile_bytes(void **state) {
  (void)state;
  sg_buf out = SG_BUF_INIT;
  sg_error err = SG_ERROR_INIT;
  assert_int_equal(dump("x = 1\0\n", 7, &out, &err), SG_INVALID_ARGUMENT);
  assert_string_equal(err.message, "source code cannot contain null bytes");
  sg_error_clear(&err);
  assert_int_equal(dump("x = '\xff'\n", 8, &out, &err), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "can't decode byte 0xff"));
  sg_error_clear(&err);
  /* a lone surrogate from an escape is a valid str constant; repr escapes it */
  const char *sur = "x = '\\ud800'\n";
  assert_int_equal(dump(sur, strlen(sur), &out, &err), SG_OK);
  assert_non_null(strstr(out.data, "value='\\ud800'"));
  /* input need not be NUL-terminated: only len bytes are read */
  sg_buf_clear(&out);
  const char *two = "x = 1\ngarbage(";
  assert_int_equal(dump(two, 6, &out, &err), SG_OK);
  sg_buf_free(&out);
}

static void test_large_file(void **state) {
  (void)state;
  const char *line = "value = compute(alpha, beta[1:2], {'k': 3.5}) + 1\n";
  size_t ll = strlen(line), target = 50u << 20;
  sg_buf src = SG_BUF_INIT;
  while (src.len < target) sg_buf_append(&src, line, ll);
  py_ctx ctx;
  py_ctx_init(&ctx);
  sg_error err = SG_ERROR_INIT;
  py_mod *m = py_parse(&ctx, src.data, src.len, "big.py", &err);
  assert_non_null(m);
  assert_int_equal(PY_SEQ_LEN(m->v.Module.body), (int)(src.len / ll));
  py_ctx_free(&ctx);
  sg_buf_free(&src);
}

static bool count_names(void *node, py_kind kind, void *ctx) {
  if (kind == PY_K_Name) (*(int *)ctx)++;
  return py_visit_children(node, count_names, ctx);
}

static void test_visitor(void **state) {
  (void)state;
  const char *src = "def f(a, b=c):\n    return [x + a for x in b if d]\n";
  py_ctx ctx;
  py_ctx_init(&ctx);
  sg_error err = SG_ERROR_INIT;
  py_mod *m = py_parse(&ctx, src, strlen(src), "v.py", &err);
  assert_non_null(m);
  int n = 0;
  count_names(m, m->kind, &n);
  assert_int_equal(n, 6); /* c, x, a, x, b, d */
  py_stmt *def = m->v.Module.body->a[0];
  assert_int_equal(def->kind, PY_K_FunctionDef);
  assert_string_equal(def->v.FunctionDef.name, "f");
  assert_int_equal(def->lineno, 1);
  assert_int_equal(def->end_lineno, 2);
  py_ctx_free(&ctx);
}

static void test_unparse_round_trip(void **state) {
  (void)state;
  const char *srcs[] = {
      "x = (yield)\n",
      "def f[T: int, *Ts, **P](a, /, b=1, *c, d, **e) -> T: return -(a ** -b) ** c\n",
      "match p:\n    case [1, *rest] | {'k': _, **kw} if rest: pass\n    case C(x=1) as y: pass\n",
      "print(f'{x!r:>{w}} {y=} {\"q\"}' 'tail')\n",
      "with (open(a) as f, open(b) as g): pass\n",
      "try:\n    pass\nexcept* (A, B) as e:\n    raise X from e\n",
      "a[1:2, ::3, *b] = lambda *a, k=1: (x := k)\n",
      "if a: pass\nelif b: pass\nelif c: pass\nelse: pass\n",
  };
  for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
    sg_buf d1 = SG_BUF_INIT, u = SG_BUF_INIT, d2 = SG_BUF_INIT;
    sg_error err = SG_ERROR_INIT;
    assert_int_equal(dump(srcs[i], strlen(srcs[i]), &d1, &err), SG_OK);
    assert_int_equal(py_unparse_source(srcs[i], strlen(srcs[i]), "t.py", &u, &err), SG_OK);
    assert_int_equal(dump(u.data, u.len, &d2, &err), SG_OK);
    assert_string_equal(d1.data, d2.data);
    sg_buf_free(&d1);
    sg_buf_free(&u);
    sg_buf_free(&d2);
  }
}

static void test_json(void **state) {
  (void)state;
  sg_buf out = SG_BUF_INIT;
  sg_error err = SG_ERROR_INIT;
  const char *src = "x = [1, 'a', None, 2.5, b'z', 1j, ...]\n";
  assert_int_equal(py_parse_json(src, strlen(src), "t.py", true, &out, &err), SG_OK);
  assert_non_null(strstr(out.data, "{\"_type\":\"Module\",\"body\":["));
  assert_non_null(strstr(out.data, "\"lineno\":1"));
  assert_non_null(strstr(out.data, "\"value\":null"));
  sg_buf_free(&out);
}

/* Source encodings (iconv), NFKC of whole identifiers, \N{} aliases: the dumps equal
 * CPython 3.12's (checked against it; source_cases/ runs the same through
 * conformance.py). */
static void test_encodings_and_identifiers(void **state) {
  sg_buf out = SG_BUF_INIT;
  sg_error err = SG_ERROR_INIT;
  /* Shift_JIS: x = '日本\' ; 0x5c after the trail byte 0x96 is an ASCII backslash */
  const char sj[] = "# coding: shift_jis\nx = '\x93\xfa\x96{\\\\'\n";
  assert_int_equal(dump(sj, sizeof sj - 1, &out, &err), SG_OK);
  assert_string_equal(out.data, "Module(body=[Assign(targets=[Name(id='x', ctx=Store())], "
                                "value=Constant(value='\xe6\x97\xa5\xe6\x9c\xac\\\\'))], type_ignores=[])");
  sg_buf_free(&out);
  /* e + COMBINING ACUTE composes to U+00E9; HANGUL jamo L V T compose to one syllable */
  const char *nf = "e\xcc\x81 = \xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8\n";
  assert_int_equal(dump(nf, strlen(nf), &out, &err), SG_OK);
  assert_string_equal(out.data, "Module(body=[Assign(targets=[Name(id='\xc3\xa9', ctx=Store())], "
                                "value=Name(id='\xea\xb0\x81', ctx=Load()))], type_ignores=[])");
  sg_buf_free(&out);
  const char *al = "'\\N{BYTE ORDER MARK}\\N{lf}'\n";
  assert_int_equal(dump(al, strlen(al), &out, &err), SG_OK);
  assert_string_equal(out.data, "Module(body=[Expr(value=Constant(value='\\ufeff\\n'))], type_ignores=[])");
  sg_buf_free(&out);
  expect_error("# coding: rot13\nx = 1\n", "'rot13' is not a text encoding; use codecs.decode() to handle arbitrary codecs",
               0, 0);
  expect_error("# coding: euc_jp\nx = '\xa4'\n",
               "'euc_jp' codec can't decode byte 0xa4 in position 22: illegal multibyte sequence", 0, 0);
  expect_error("def f() -> : pass\n", "expected ':'", 1, 9);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors_match_cpython),
      cmocka_unit_test(test_deep_nesting_is_an_error),
      cmocka_unit_test(test_hostile_bytes),
      cmocka_unit_test(test_large_file),
      cmocka_unit_test(test_visitor),
      cmocka_unit_test(test_unparse_round_trip),
      cmocka_unit_test(test_json),
      cmocka_unit_test(test_encodings_and_identifiers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
