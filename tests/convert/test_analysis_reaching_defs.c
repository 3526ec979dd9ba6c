// SPDX-License-Identifier: Apache-2.0
/*
 * test_analysis_reaching_defs.c — reaching definitions (analysis_reaching_defs.c):
 * definitely / possibly defined symbols on entry to statements (if without else,
 * if/else, loops that may not run, del, try, match), composites after rebinding,
 * and the definitions reaching one Name.
 */
#include "test_analysis_util.h"

static void test_if_without_else(void **state) {
  (void)state;
  fx *f = fx_new("def f(c):\n"
                 "    if c:\n"
                 "        x = 1\n"
                 "    return x\n");
  const py_stmt *ret = fx_stmt(f, 4, PY_K_Return);
  py_sym x = py_an_sym(f->an, "x");
  assert_false(py_symset_has(py_an_defined_in(f->an, ret), x));
  assert_true(py_symset_has(py_an_maybe_defined_in(f->an, ret), x));
  assert_true(py_symset_has(py_an_defined_in(f->an, ret), py_an_sym(f->an, "c")));
  /* the definition that reaches `x` in `return x`, and the path without one */
  const py_cfg_node *const *defs;
  bool undef = false;
  assert_int_equal(py_an_reaching_defs(f->an, fx_name(f, 4, 11), &defs, &undef), 1);
  assert_ptr_equal(defs[0]->ast, fx_stmt(f, 3, PY_K_Assign));
  assert_true(undef);
  /* after the if: defined_out of the If is the same as on entry to the return */
  assert_false(py_symset_has(py_an_defined_out(f->an, fx_stmt(f, 2, PY_K_If)), x));
  fx_free(f);
}

static void test_if_else_both_define(void **state) {
  (void)state;
  fx *f = fx_new("def f(c):\n"
                 "    if c:\n"
                 "        x = 1\n"
                 "    else:\n"
                 "        x = 2\n"
                 "    return x\n");
  const py_stmt *ret = fx_stmt(f, 6, PY_K_Return);
  assert_true(py_symset_has(py_an_defined_in(f->an, ret), py_an_sym(f->an, "x")));
  assert_true(py_symset_has(py_an_defined_out(f->an, fx_stmt(f, 2, PY_K_If)), py_an_sym(f->an, "x")));
  const py_cfg_node *const *defs;
  bool undef = true;
  assert_int_equal(py_an_reaching_defs(f->an, fx_name(f, 6, 11), &defs, &undef), 2);
  assert_ptr_equal(defs[0]->ast, fx_stmt(f, 3, PY_K_Assign));
  assert_ptr_equal(defs[1]->ast, fx_stmt(f, 5, PY_K_Assign));
  assert_false(undef);
  fx_free(f);
}

static void test_loops_and_del(void **state) {
  (void)state;
  fx *f = fx_new("def f(n):\n"
                 "    for i in range(n):\n"
                 "        y = i\n"
                 "    z = 1\n"
                 "    del z\n"
                 "    while n:\n"
                 "        n -= 1\n"
                 "    return y\n");
  sg_buf_clear(&f->buf);
  py_an_dump_defined(f->an, &f->buf);
  const char *d = f->buf.data;
  assert_has_line(d, "  L2 For: defined={n} maybe={i, n, y}");
  assert_has_line(d, "    L3 Assign: defined={i, n} maybe={i, n, y}");
  assert_has_line(d, "  L4 Assign: defined={n} maybe={i, n, y}"); /* the loop may not run */
  assert_has_line(d, "  L5 Delete: defined={n, z} maybe={i, n, y, z}");
  assert_has_line(d, "  L6 While: defined={n} maybe={i, n, y}");
  assert_has_line(d, "  L8 Return: defined={n} maybe={i, n, y}");
  fx_free(f);
}

static void test_try_and_match(void **state) {
  (void)state;
  fx *f = fx_new("def f(p):\n"
                 "    try:\n"
                 "        a = g()\n"
                 "        b = 1\n"
                 "    except E:\n"
                 "        a = 0\n"
                 "    match p:\n"
                 "        case [x]:\n"
                 "            r = x\n"
                 "        case _:\n"
                 "            r = 0\n"
                 "    return a, b, r\n");
  const py_stmt *ret = fx_stmt(f, 12, PY_K_Return);
  py_symset d = py_an_defined_in(f->an, ret);
  assert_true(py_symset_has(d, py_an_sym(f->an, "a")));
  assert_false(py_symset_has(d, py_an_sym(f->an, "b"))); /* not if g() raised */
  assert_true(py_symset_has(d, py_an_sym(f->an, "r")));  /* every case binds r */
  assert_false(py_symset_has(d, py_an_sym(f->an, "x")));
  /* inside the handler, a may or may not have been assigned */
  const py_stmt *h = fx_stmt(f, 6, PY_K_Assign);
  assert_false(py_symset_has(py_an_defined_in(f->an, h), py_an_sym(f->an, "a")));
  assert_true(py_symset_has(py_an_maybe_defined_in(f->an, h), py_an_sym(f->an, "a")));
  fx_free(f);
}

static void test_with_may_suppress_and_handler_names_are_deleted(void **state) {
  (void)state;
  fx *f = fx_new("def f(m):\n"
                 "    with m as c:\n"
                 "        x = c.read()\n"
                 "    try:\n"
                 "        pass\n"
                 "    except E as e:\n"
                 "        y = e\n"
                 "    return x, c, e, y\n");
  const py_stmt *ret = fx_stmt(f, 8, PY_K_Return);
  py_symset d = py_an_defined_in(f->an, ret), m = py_an_maybe_defined_in(f->an, ret);
  /* __exit__ may swallow an exception from c.read(): x may be unbound; so may c, as
   * __exit__ also runs when binding the `as` target fails (CPython agrees) */
  assert_false(py_symset_has(d, py_an_sym(f->an, "x")));
  assert_true(py_symset_has(m, py_an_sym(f->an, "x")));
  assert_false(py_symset_has(d, py_an_sym(f->an, "c")));
  assert_true(py_symset_has(m, py_an_sym(f->an, "c")));
  /* inside the body, c is bound */
  assert_true(py_symset_has(py_an_defined_in(f->an, fx_stmt(f, 3, PY_K_Assign)),
                            py_an_sym(f->an, "c")));
  /* `except E as e` deletes e at the end of the handler */
  assert_false(py_symset_has(m, py_an_sym(f->an, "e")));
  assert_true(py_symset_has(m, py_an_sym(f->an, "y")));
  bool undef = false;
  const py_cfg_node *const *defs;
  assert_int_equal(py_an_reaching_defs(f->an, fx_name(f, 8, 17), &defs, &undef), 0);
  assert_true(undef);
  fx_free(f);
}

static void test_for_target_after_loop(void **state) {
  (void)state;
  fx *f = fx_new("def f(xs):\n"
                 "    for i in xs:\n"
                 "        pass\n"
                 "    return i\n");
  /* an empty xs binds nothing: i may be unbound after the loop */
  const py_cfg_node *const *defs;
  bool undef = false;
  assert_int_equal(py_an_reaching_defs(f->an, fx_name(f, 4, 11), &defs, &undef), 1);
  assert_ptr_equal(defs[0]->ast, fx_stmt(f, 2, PY_K_For));
  assert_true(undef);
  assert_false(py_symset_has(py_an_defined_in(f->an, fx_stmt(f, 4, PY_K_Return)),
                             py_an_sym(f->an, "i")));
  fx_free(f);
}

static void test_walrus_in_comprehension_may_not_bind(void **state) {
  (void)state;
  fx *f = fx_new("def f(xs):\n"
                 "    ys = [(y := x) for x in xs]\n"
                 "    return y\n");
  const py_stmt *ret = fx_stmt(f, 3, PY_K_Return);
  py_sym y = py_an_sym(f->an, "y");
  assert_false(py_symset_has(py_an_defined_in(f->an, ret), y)); /* xs may be empty */
  assert_true(py_symset_has(py_an_maybe_defined_in(f->an, ret), y));
  assert_true(py_symset_has(py_an_activity(f->an, fx_stmt(f, 2, PY_K_Assign)).modified, y));
  const py_cfg_node *const *defs;
  bool undef = false;
  assert_int_equal(py_an_reaching_defs(f->an, fx_name(f, 3, 11), &defs, &undef), 1);
  assert_true(undef);
  fx_free(f);
}

static void test_composites_and_rebinding(void **state) {
  (void)state;
  fx *f = fx_new("def f():\n"
                 "    x = g()\n"
                 "    x.a = 1\n"
                 "    y = x.a\n"
                 "    x = g()\n"
                 "    return x.a\n");
  py_sym xa = py_an_sym(f->an, "x"); /* make sure x exists before asking for x.a */
  (void)xa;
  const py_stmt *s4 = fx_stmt(f, 4, PY_K_Assign);
  py_sym x_a = py_an_qn(f->an, s4->v.Assign.value);
  assert_string_equal(py_an_sym_text(f->an, x_a), "x.a");
  assert_true(py_symset_has(py_an_defined_in(f->an, s4), x_a));
  /* rebinding x makes x.a unknown again */
  assert_false(py_symset_has(py_an_defined_in(f->an, fx_stmt(f, 6, PY_K_Return)), x_a));
  assert_true(py_symset_has(py_an_defined_in(f->an, fx_stmt(f, 6, PY_K_Return)), py_an_sym(f->an, "x")));
  fx_free(f);
}

static void test_params_and_non_locals(void **state) {
  (void)state;
  fx *f = fx_new("G = 1\n"
                 "def f(a):\n"
                 "    return a + G\n");
  const py_cfg_node *const *defs;
  bool undef = true;
  /* a parameter and a global are both "defined at entry" */
  assert_int_equal(py_an_reaching_defs(f->an, fx_name(f, 3, 11), &defs, &undef), 1);
  assert_int_equal(defs[0]->kind, PY_CFG_ENTRY);
  assert_false(undef);
  assert_int_equal(py_an_reaching_defs(f->an, fx_name(f, 3, 15), &defs, &undef), 1);
  assert_int_equal(defs[0]->kind, PY_CFG_ENTRY);
  assert_false(undef);
  py_symset d = py_an_defined_in(f->an, fx_stmt(f, 3, PY_K_Return));
  assert_true(py_symset_has(d, py_an_sym(f->an, "a")));
  assert_true(py_symset_has(d, py_an_sym(f->an, "G")));
  /* at module level, G is defined only after its assignment */
  assert_false(py_symset_has(py_an_defined_in(f->an, fx_stmt(f, 1, PY_K_Assign)), py_an_sym(f->an, "G")));
  assert_true(py_symset_has(py_an_defined_in(f->an, fx_stmt(f, 2, PY_K_FunctionDef)), py_an_sym(f->an, "G")));
  fx_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_if_without_else),
      cmocka_unit_test(test_if_else_both_define),
      cmocka_unit_test(test_loops_and_del),
      cmocka_unit_test(test_try_and_match),
      cmocka_unit_test(test_with_may_suppress_and_handler_names_are_deleted),
      cmocka_unit_test(test_for_target_after_loop),
      cmocka_unit_test(test_walrus_in_comprehension_may_not_bind),
      cmocka_unit_test(test_composites_and_rebinding),
      cmocka_unit_test(test_params_and_non_locals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
