/*
 * test_opt.c — one test per optimization pass (opt_inline.c, opt_cse.c,
 * opt_constfold.c, opt_dce.c, opt_algebra.c): each asserts on the optimized graph
 * itself (text dump) and that results are unchanged with and without --no-optimize.
 */
#include "graph_test_util.h"

static const char *TREE =
    "(def tree_prod (base tree)\n  (if (getattr tree is_empty)\n      base\n"
    "      (let l (tree_prod base (getattr tree left))\n"
    "        (let r (tree_prod base (getattr tree right))\n"
    "          (* (* l r) (getattr tree value))))))\n";

static void opt_cse_merges_duplicates(void **state) {
  const char *src = "(def f ((a float32 (3)) (b float32 (3))) (+ (* a b) (* a b)))";
  char *before = dump(src, GR_DUMP_TEXT, true), *after = dump(src, GR_DUMP_TEXT, false);
  assert_int_equal(count(before, " = * "), 2);
  assert_int_equal(count(after, " = * "), 1);
  free(before);
  free(after);
  expect_result(src, "[{\"dtype\":\"float32\",\"shape\":[3],\"data\":[1,2,3]},{\"dtype\":\"float32\",\"shape\":[3],\"data\":[2,2,2]}]",
                "{\"dtype\":\"float32\",\"shape\":[3],\"data\":[4.0,8.0,12.0]}");
}

static void opt_dce_removes_dead(void **state) {
  const char *src = "(def f (a) (let unused (* a 2) (let u2 (tanh a) (+ a 1))))";
  char *before = dump(src, GR_DUMP_TEXT, true), *after = dump(src, GR_DUMP_TEXT, false);
  assert_non_null(strstr(before, "tanh"));
  assert_null(strstr(after, "tanh"));
  assert_null(strstr(after, " * "));
  free(before);
  free(after);
  expect_result(src, "[3]", "4");
}

static void opt_constfold(void **state) {
  const char *src = "(def f (a) (+ a (* (+ 2 1) (- 5 3))))";
  char *after = dump(src, GR_DUMP_TEXT, false);
  assert_non_null(strstr(after, "= + %a_0_0 6"));
  assert_int_equal(count(after, " = "), 1);
  free(after);
  expect_result(src, "[1]", "7");
  const char *src2 = "(def f (a) (if (< 1 2) (* a 10) (* a 20)))";
  after = dump(src2, GR_DUMP_TEXT, false);
  assert_null(strstr(after, " if "));
  assert_null(strstr(after, "20"));
  free(after);
  expect_result(src2, "[2]", "20");
}

static void opt_inline(void **state) {
  const char *src = "(def sq (x) (* x x))\n(def f (a) (sq (sq a)))";
  char *after = dump(src, GR_DUMP_TEXT, false);
  /* the entry no longer calls @sq */
  char *entry_end = strstr(after, "\n}\n");
  assert_non_null(entry_end);
  *entry_end = 0;
  assert_null(strstr(after, "@sq"));
  assert_int_equal(count(after, " = * "), 2);
  free(after);
  expect_result(src, "[3]", "81");
  /* recursive graphs are not inlined */
  after = dump(TREE, GR_DUMP_TEXT, false);
  assert_non_null(strstr(after, "@tree_prod"));
  free(after);
}

static void opt_algebra(void **state) {
  const char *src = "(def f ((a float32 (3))) (getitem (tuple (* a 1) (* 1.0 (- a 0))) 1))";
  char *after = dump(src, GR_DUMP_TEXT, false);
  assert_non_null(strstr(after, "return %a_0_0"));
  assert_int_equal(count(after, " = "), 0);
  free(after);
  /* x*1 with x a bool tensor would change the dtype: not simplified */
  const char *src2 = "(def f ((a bool (3))) (* a 1))";
  after = dump(src2, GR_DUMP_TEXT, false);
  assert_non_null(strstr(after, " = * "));
  free(after);
  expect_result(src2, "[{\"dtype\":\"bool\",\"shape\":[3],\"data\":[true,false,true]}]",
                "{\"dtype\":\"int64\",\"shape\":[3],\"data\":[1,0,1]}");
  /* unknown dtype: kept (True*1 is 1, an int), results unchanged */
  const char *src3 = "(def f (a) (* a 1))";
  after = dump(src3, GR_DUMP_TEXT, false);
  assert_non_null(strstr(after, " = * %a_0_0 1"));
  free(after);
  expect_result(src3, "[true]", "1");
  expect_result(src3, "[2.5]", "2.5");
  /* int tensor * 1.0 is float64: kept; int tensor + 0 and 0 + x fold */
  const char *src4 = "(def f ((a int32 (2))) (tuple (* a 1.0) (+ 0 a) (- a 0)))";
  after = dump(src4, GR_DUMP_TEXT, false);
  assert_int_equal(count(after, " = * "), 1);
  assert_null(strstr(after, " = + "));
  assert_null(strstr(after, " = - "));
  free(after);
  expect_result(src4, "[{\"dtype\":\"int32\",\"shape\":[2],\"data\":[3,-4]}]",
                "{\"tuple\":[{\"dtype\":\"float64\",\"shape\":[2],\"data\":[3.0,-4.0]},"
                "{\"dtype\":\"int32\",\"shape\":[2],\"data\":[3,-4]},{\"dtype\":\"int32\",\"shape\":[2],\"data\":[3,-4]}]}");
  /* float x + 0 is not x (-0.0 + 0 is +0.0): kept; x + -0.0 and x - 0 fold */
  const char *src5 = "(def f ((a float32 (2))) (tuple (+ a 0) (+ a -0.0) (- a 0)))";
  after = dump(src5, GR_DUMP_TEXT, false);
  assert_int_equal(count(after, " = + "), 1);
  assert_non_null(strstr(after, " = + %a_0_0 0"));
  assert_null(strstr(after, " = - "));
  free(after);
  expect_result(src5, "[{\"dtype\":\"float32\",\"shape\":[2],\"data\":[-0.0,1.5]}]",
                "{\"tuple\":[{\"dtype\":\"float32\",\"shape\":[2],\"data\":[0.0,1.5]},"
                "{\"dtype\":\"float32\",\"shape\":[2],\"data\":[-0.0,1.5]},{\"dtype\":\"float32\",\"shape\":[2],\"data\":[-0.0,1.5]}]}");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(opt_cse_merges_duplicates), cmocka_unit_test(opt_dce_removes_dead),
      cmocka_unit_test(opt_constfold),             cmocka_unit_test(opt_inline),
      cmocka_unit_test(opt_algebra),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
