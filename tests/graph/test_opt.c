// SPDX-License-Identifier: Apache-2.0
/*
 * test_opt.c — one test per optimization pass (opt_inline.c, opt_cse.c,
 * opt_constfold.c, opt_dce.c, opt_algebra.c, opt_matmul.c): each asserts on the optimized graph
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
  /* mutual recursion (a cycle of two graphs) is not inlined either, but a graph that
   * only calls into the cycle is: the entry calls @even directly */
  const char *mutual = "(def even (n) (if (== n 0) 1 (odd (- n 1))))\n"
                       "(def odd (n) (if (== n 0) 0 (even (- n 1))))\n"
                       "(def wrap (n) (even (+ n 0)))\n"
                       "(def f (n) (* (wrap n) 10))";
  after = dump(mutual, GR_DUMP_TEXT, false);
  entry_end = strstr(after, "\n}\n");
  assert_non_null(entry_end);
  *entry_end = 0;
  assert_null(strstr(after, "@wrap"));
  assert_non_null(strstr(after, "@even"));
  free(after);
  expect_result(mutual, "[7]", "0");
  expect_result(mutual, "[8]", "10");
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

/* opt_matmul.c: transposes of the last two axes fold into matmul_tn / _nt / _tt (and
 * into matmul_grad's flags); other transposes, unknown ranks and the switch keep them. */
static void opt_matmul_transpose(void **state) {
  const char *m34 = "{\"dtype\":\"float64\",\"shape\":[3,4],\"data\":[1,2,3,4,5,6,7,8,9,10,11,12]}";
  const char *m54 = "{\"dtype\":\"float64\",\"shape\":[5,4],\"data\":[1,0,2,0,0,1,0,3,2,2,1,1,0,0,0,1,4,3,2,1]}";
  char args[512];
  snprintf(args, sizeof args, "[%s,%s]", m34, m54);
  const char *nt = "(def f ((a float64 (3 4)) (b float64 (5 4))) (matmul a (transpose b)))";
  char *after = dump(nt, GR_DUMP_TEXT, false);
  assert_non_null(strstr(after, "= matmul_nt %a_0_0 %b_0_1"));
  assert_null(strstr(after, "transpose"));
  free(after);
  expect_result(nt, args,
                "{\"dtype\":\"float64\",\"shape\":[3,5],\"data\":[7.0,14.0,13.0,4.0,2e+01,19.0,3e+01,37.0,"
                "8.0,6e+01,31.0,46.0,61.0,12.0,1e+02]}");
  /* both operands, one through a literal perm; a transposed matmul_nt operand cancels */
  const char *tt = "(def f ((a float64 (2 4 3)) (b float64 (5 4))) (matmul (transpose a (tuple 0 2 1)) (transpose b)))";
  after = dump(tt, GR_DUMP_TEXT, false);
  assert_non_null(strstr(after, "= matmul_tt %a_0_0 %b_0_1"));
  free(after);
  const char *back = "(def f ((a float64 (3 4)) (b float64 (4 5))) (matmul_nt a (transpose b (tuple -1 -2))))";
  after = dump(back, GR_DUMP_TEXT, false);
  assert_non_null(strstr(after, "= matmul %a_0_0 %b_0_1"));
  free(after);
  /* used elsewhere too: the matmul reads b in place, the transpose stays for the tuple */
  const char *shared = "(def f ((a float64 (3 4)) (b float64 (5 4))) (let t (transpose b) (tuple (matmul a t) t)))";
  after = dump(shared, GR_DUMP_TEXT, false);
  assert_non_null(strstr(after, "= matmul_nt %a_0_0 %b_0_1"));
  assert_int_equal(count(after, "= transpose "), 1);
  free(after);
  /* not a swap of the last two axes, or a rank inference does not know: kept */
  const char *kept[] = {
      "(def f ((a float64 (2 3 4)) (b float64 (2 4 5))) (matmul (transpose a (tuple 1 0 2)) b))",
      "(def f ((a float64 (4 3 2)) (b float64 (2 4 5))) (matmul (transpose a) b))",
      "(def f (a b) (matmul (transpose a) b))",
      "(def f (a b) (matmul (transpose a (tuple 1 0)) b))",
  };
  for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
    after = dump(kept[i], GR_DUMP_TEXT, false);
    assert_non_null(strstr(after, "= transpose "));
    assert_null(strstr(after, "matmul_"));
    free(after);
  }
  /* the training step of x @ w.T: the forward product, and AD's dW (its transpose of
   * matmul_grad's result for w.T) and dX (matmul_grad reading w.T) fold; results equal
   * the unoptimized ones (integers: exact whatever the summation order) */
  const char *step = "(def loss ((x float64 (3 4)) (w float64 (5 4)) (c float64 (3 5)))\n"
                     "  (sum (* (matmul x (transpose w)) c)))\n"
                     "(def f ((x float64 (3 4)) (w float64 (5 4)) (c float64 (3 5))) ((grad loss 0 1) x w c))";
  const char *want_step =
      "{\"tuple\":[{\"dtype\":\"float64\",\"shape\":[3,4],\"data\":[27.0,23.0,15.0,18.0,62.0,53.0,"
      "4e+01,48.0,97.0,83.0,65.0,78.0]},{\"dtype\":\"float64\",\"shape\":[5,4],\"data\":[1.3e+02,"
      "148.0,166.0,184.0,145.0,166.0,187.0,208.0,1.6e+02,184.0,208.0,232.0,175.0,202.0,229.0,256.0,"
      "1.9e+02,2.2e+02,2.5e+02,2.8e+02]}]}";
  after = dump(step, GR_DUMP_TEXT, false);
  assert_null(strstr(after, "transpose"));
  assert_non_null(strstr(after, "= matmul_grad %v_0_3 %x_0_0 %w_0_1 0 2 "));
  assert_non_null(strstr(after, "= matmul_grad %v_0_3 %x_0_0 %w_0_1 1 2 "));
  free(after);
  char *before = dump(step, GR_DUMP_TEXT, true);
  assert_int_equal(count(before, "= transpose "), 3); /* loss, its replay, AD's for dW */
  free(before);
  snprintf(args, sizeof args, "[%s,%s,{\"dtype\":\"float64\",\"shape\":[3,5],\"data\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}]",
           m34, m54);
  expect_result(step, args,
                want_step);
  /* the switch: STAGD_MATMUL_TRANSPOSE_FOLD=0 keeps every transpose (the benchmark's
   * baseline), with the same results */
  setenv("STAGD_MATMUL_TRANSPOSE_FOLD", "0", 1);
  after = dump(nt, GR_DUMP_TEXT, false);
  assert_non_null(strstr(after, "= transpose "));
  assert_null(strstr(after, "matmul_nt"));
  free(after);
  expect_result(step, args,
                want_step);
  unsetenv("STAGD_MATMUL_TRANSPOSE_FOLD");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(opt_cse_merges_duplicates), cmocka_unit_test(opt_dce_removes_dead),
      cmocka_unit_test(opt_constfold),             cmocka_unit_test(opt_inline),
      cmocka_unit_test(opt_algebra),               cmocka_unit_test(opt_matmul_transpose),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
