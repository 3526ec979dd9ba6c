// SPDX-License-Identifier: Apache-2.0
/*
 * test_analysis_live_values.c — live values (analysis_live_values.c): `print` is the
 * builtin unless something it could resolve to binds it (assignment at module level,
 * def, parameter, import, `global` write, star import, comprehension variable);
 * class bodies are invisible to methods; imported modules and attribute chains.
 */
#include "test_analysis_util.h"

static py_live_value lv(fx *f, int line, int col) {
  return py_an_live_value(f->an, fx_name(f, line, col));
}

static void test_print_is_builtin(void **state) {
  (void)state;
  fx *f = fx_new("print(1)\n"
                 "def f(x):\n"
                 "    print(x)\n"
                 "    return len(x)\n");
  py_live_value v = lv(f, 1, 0);
  assert_int_equal(v.kind, PY_LV_BUILTIN);
  assert_string_equal(v.what, "print");
  assert_int_equal(lv(f, 3, 4).kind, PY_LV_BUILTIN);
  const py_stmt *s = fx_stmt(f, 4, PY_K_Return);
  assert_true(py_an_is_builtin_call(f->an, s->v.Return.value, "len"));
  assert_false(py_an_is_builtin_call(f->an, s->v.Return.value, "print"));
  assert_true(py_an_builtin_name("isinstance"));
  assert_false(py_an_builtin_name("numpy"));
  /* an unknown name is not a builtin */
  assert_int_equal(lv(f, 3, 10).kind, PY_LV_UNKNOWN);
  fx_free(f);
}

static void test_shadowed_builtins(void **state) {
  (void)state;
  fx *f = fx_new("def f(print):\n"
                 "    print(1)\n"
                 "def g():\n"
                 "    len = 3\n"
                 "    return len\n"
                 "def h():\n"
                 "    global abs\n"
                 "    abs = None\n"
                 "def k():\n"
                 "    return abs(1), min(2), [max for max in x], [max for max in max(x)]\n"
                 "def min(): pass\n");
  assert_int_equal(lv(f, 2, 4).kind, PY_LV_UNKNOWN);  /* parameter */
  assert_int_equal(lv(f, 5, 11).kind, PY_LV_UNKNOWN); /* local */
  assert_int_equal(lv(f, 10, 11).kind, PY_LV_UNKNOWN); /* rebound by `global abs` in h */
  assert_int_equal(lv(f, 10, 19).kind, PY_LV_UNKNOWN); /* def min at module level */
  assert_int_equal(lv(f, 10, 28).kind, PY_LV_UNKNOWN); /* comprehension variable */
  /* the first iterable runs outside the comprehension: there max is the builtin */
  assert_int_equal(lv(f, 10, 63).kind, PY_LV_BUILTIN);
  assert_int_equal(lv(f, 10, 48).kind, PY_LV_UNKNOWN);
  fx_free(f);
}

static void test_star_import_and_module_assignment(void **state) {
  (void)state;
  fx *f = fx_new("from os import *\n"
                 "print(1)\n");
  assert_int_equal(lv(f, 2, 0).kind, PY_LV_UNKNOWN);
  fx_free(f);
  f = fx_new("def f():\n"
             "    return print(1)\n"
             "if cond:\n"
             "    print = log\n");
  assert_int_equal(lv(f, 2, 11).kind, PY_LV_UNKNOWN);
  fx_free(f);
}

static void test_class_scope_is_skipped_by_methods(void **state) {
  (void)state;
  fx *f = fx_new("class A:\n"
                 "    print = 1\n"
                 "    x = print\n"
                 "    def m(self):\n"
                 "        return print(2)\n");
  assert_int_equal(lv(f, 3, 8).kind, PY_LV_UNKNOWN);  /* A.print */
  assert_int_equal(lv(f, 5, 15).kind, PY_LV_BUILTIN); /* the method sees the builtin */
  fx_free(f);
}

static void test_imports(void **state) {
  (void)state;
  fx *f = fx_new("import numpy as np\n"
                 "import os.path\n"
                 "from a.b import c as d\n"
                 "from . import rel\n"
                 "import re\n"
                 "re = None\n"
                 "def f(x):\n"
                 "    import json\n"
                 "    return np.linalg.norm(x), os.path, d, rel, re, json\n");
  py_live_value v = lv(f, 9, 11);
  assert_int_equal(v.kind, PY_LV_MODULE);
  assert_string_equal(v.what, "numpy");
  const py_stmt *ret = fx_stmt(f, 9, PY_K_Return);
  const py_expr *call = ret->v.Return.value->v.Tuple.elts->a[0];
  v = py_an_live_value(f->an, call->v.Call.func);
  assert_int_equal(v.kind, PY_LV_IMPORTED);
  assert_string_equal(v.what, "numpy.linalg.norm");
  v = lv(f, 9, 30);
  assert_int_equal(v.kind, PY_LV_MODULE);
  assert_string_equal(v.what, "os");
  v = lv(f, 9, 39);
  assert_int_equal(v.kind, PY_LV_IMPORTED);
  assert_string_equal(v.what, "a.b.c");
  v = lv(f, 9, 42);
  assert_int_equal(v.kind, PY_LV_IMPORTED);
  assert_string_equal(v.what, ".rel");
  assert_int_equal(lv(f, 9, 47).kind, PY_LV_UNKNOWN); /* re was rebound */
  v = lv(f, 9, 51);
  assert_int_equal(v.kind, PY_LV_MODULE); /* a function-local import */
  assert_string_equal(v.what, "json");
  sg_buf_clear(&f->buf);
  py_an_dump_live_values(f->an, &f->buf);
  assert_has_line(f->buf.data, "L9:11 np.linalg.norm -> imported numpy.linalg.norm");
  assert_has_line(f->buf.data, "L9:11 np -> module numpy");
  fx_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_print_is_builtin),
      cmocka_unit_test(test_shadowed_builtins),
      cmocka_unit_test(test_star_import_and_module_assignment),
      cmocka_unit_test(test_class_scope_is_skipped_by_methods),
      cmocka_unit_test(test_imports),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
