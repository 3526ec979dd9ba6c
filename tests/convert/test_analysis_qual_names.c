// SPDX-License-Identifier: Apache-2.0
/*
 * test_analysis_qual_names.c — qualified names (analysis_qual_names.c): a.b.c,
 * a[0], a['k'], a[-1], a[i] become symbols with parents and roots; other shapes have
 * none; equal texts are one symbol; symbol-set operations.
 */
#include "test_analysis_util.h"

/* The qualified name of the value of the first statement (an expression). */
static py_sym qn_of(fx *f, int line) {
  const py_stmt *s = fx_stmt(f, line, PY_K_Expr);
  return py_an_qn(f->an, s->v.Expr.value);
}

static void test_attribute_chains_and_subscripts(void **state) {
  (void)state;
  fx *f = fx_new("a.b.c\n"
                 "a[0]\n"
                 "a['k'].x\n"
                 "a[-1]\n"
                 "a[i].b\n"
                 "f().x\n"
                 "a[i + 1]\n"
                 "a[1:2]\n"
                 "a.b\n");
  py_an *an = f->an;
  py_sym abc = qn_of(f, 1);
  assert_string_equal(py_an_sym_text(an, abc), "a.b.c");
  const py_sym_info *in = py_an_sym_info(an, abc);
  assert_int_equal(in->kind, PY_QN_ATTR);
  assert_string_equal(in->name, "c");
  assert_string_equal(py_an_sym_text(an, in->parent), "a.b");
  assert_string_equal(py_an_sym_text(an, in->root), "a");
  assert_int_equal(py_an_sym_info(an, in->root)->kind, PY_QN_NAME);
  assert_int_equal(py_an_sym_info(an, in->root)->parent, PY_SYM_NONE);
  /* a.b on line 9 is the parent of a.b.c: same text, same symbol */
  assert_int_equal(qn_of(f, 9), in->parent);

  py_sym a0 = qn_of(f, 2);
  assert_string_equal(py_an_sym_text(an, a0), "a[0]");
  assert_int_equal(py_an_sym_info(an, a0)->kind, PY_QN_SUBSCRIPT);
  assert_int_equal(py_an_sym_info(an, a0)->index_sym, PY_SYM_NONE);
  assert_string_equal(py_an_sym_text(an, qn_of(f, 3)), "a['k'].x");
  assert_string_equal(py_an_sym_text(an, qn_of(f, 4)), "a[-1]");
  py_sym aib = qn_of(f, 5);
  assert_string_equal(py_an_sym_text(an, aib), "a[i].b");
  py_sym ai = py_an_sym_info(an, aib)->parent;
  assert_string_equal(py_an_sym_text(an, py_an_sym_info(an, ai)->index_sym), "i");
  assert_int_equal(py_an_sym_info(an, ai)->index->kind, PY_K_Name);
  /* not qualifiable */
  assert_int_equal(qn_of(f, 6), PY_SYM_NONE);
  assert_int_equal(qn_of(f, 7), PY_SYM_NONE);
  assert_int_equal(qn_of(f, 8), PY_SYM_NONE);
  assert_string_equal(py_an_sym_text(an, PY_SYM_NONE), "?");
  assert_int_equal(py_an_sym(an, "a"), in->root);
  fx_free(f);
}

static void test_set_operations(void **state) {
  (void)state;
  fx *f = fx_new("pass\n");
  py_an *an = f->an;
  py_sym a = py_an_sym(an, "a"), b = py_an_sym(an, "b"), c = py_an_sym(an, "c");
  py_sym ab[2] = {a < b ? a : b, a < b ? b : a};
  py_sym bc[2] = {b < c ? b : c, b < c ? c : b};
  py_symset x = {2, ab}, y = {2, bc};
  assert_set(f, py_symset_union(an, x, y), "{a, b, c}");
  assert_set(f, py_symset_inter(an, x, y), "{b}");
  assert_set(f, py_symset_diff(an, x, y), "{a}");
  assert_true(py_symset_has(x, a));
  assert_false(py_symset_has(x, c));
  py_symset empty = {0, NULL};
  assert_set(f, py_symset_inter(an, x, empty), "{}");
  assert_set(f, py_symset_union(an, empty, y), "{b, c}");
  fx_free(f);
}

static void test_names_only(void **state) {
  (void)state;
  fx *f = fx_new("x.y = z\n");
  py_activity act = py_an_activity(f->an, fx_stmt(f, 1, PY_K_Assign));
  assert_set(f, act.modified, "{x.y}");
  assert_set(f, py_symset_names(f->an, act.modified), "{}");
  assert_set(f, py_symset_names(f->an, act.read), "{x, z}");
  fx_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_attribute_chains_and_subscripts),
      cmocka_unit_test(test_set_operations),
      cmocka_unit_test(test_names_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
