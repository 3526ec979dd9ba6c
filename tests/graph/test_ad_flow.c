/*
 * test_ad_flow.c — reverse-mode AD beyond straight-line code (graph/ad.c, Myia's
 * closure transformation): gradients through `if`, the functional `while`, recursion
 * (tree_prod over a record tree, a recursive power, a fold), closures passed to
 * higher-order functions, returned closures and closures stored in tuples (gradients
 * w.r.t. their free variables), primitives passed as values, grad of grad through
 * control flow, and the optimizer-step primitives (sgd_momentum, adam). Every case
 * runs optimized and not (run_num / grad2 compare both).
 */
#include "ad_test_util.h"

/* The two numbers of a (grad f 0 1) result, optimized and not, which must agree. */
static void grad2(const char *src, const char *args, double *g) {
  double h[2];
  char *r = run_ok(src, args, false);
  assert_int_equal(nums(r, g, 2), 2);
  free(r);
  r = run_ok(src, args, true);
  assert_int_equal(nums(r, h, 2), 2);
  free(r);
  assert_true(fabs(g[0] - h[0]) <= 1e-12 * (1 + fabs(g[0])));
  assert_true(fabs(g[1] - h[1]) <= 1e-12 * (1 + fabs(g[1])));
}

/* f's derivative at x by central differences (f a def of one float parameter). */
static double fd1(const char *fsrc, double x) {
  char args[64];
  double h = 1e-6;
  snprintf(args, sizeof args, "[%.17g]", x + h);
  double fp = run_num(fsrc, args);
  snprintf(args, sizeof args, "[%.17g]", x - h);
  double fm = run_num(fsrc, args);
  return (fp - fm) / (2 * h);
}

static void close_to(double got, double want, double tol) {
  if (fabs(got - want) > tol * (1 + fabs(want))) fprintf(stderr, "got %.15g want %.15g\n", got, want);
  assert_true(fabs(got - want) <= tol * (1 + fabs(want)));
}

static void ad_through_if(void **state) {
  (void)state;
  const char *f = "(def f (x) (if (> x 1.0) (* x (sin x)) (let y (* x x) (+ y (* 3.0 x)))))";
  char src[512];
  snprintf(src, sizeof src, "%s\n(def main (x) ((grad f 0) x))", f);
  close_to(run_num(src, "[2.0]"), fd1(f, 2.0), 1e-6);
  close_to(run_num(src, "[0.5]"), 2 * 0.5 + 3.0, 1e-12);
  /* free variables of both branches, a branch not using x, nested ifs */
  const char *g = "(def f (x y) (if (> x 0.0) (if (> y 0.0) (* x y) y) (* y y)))\n"
                  "(def main (x y) ((grad f 0 1) x y))";
  double d[2];
  grad2(g, "[2.0, 3.0]", d);
  close_to(d[0], 3.0, 1e-12), close_to(d[1], 2.0, 1e-12);
  grad2(g, "[2.0, -3.0]", d);
  close_to(d[0], 0.0, 1e-12), close_to(d[1], 1.0, 1e-12);
  grad2(g, "[-2.0, 3.0]", d);
  close_to(d[0], 0.0, 1e-12), close_to(d[1], 6.0, 1e-12);
  /* grad of grad through if: f = x^3 for x > 0 → f'' = 6x */
  const char *gg = "(def f (x) (if (> x 0.0) (* x (* x x)) (* 3.0 x)))\n"
                   "(def d (x) ((grad f 0) x))\n(def main (x) ((grad d 0) x))";
  close_to(run_num(gg, "[2.0]"), 12.0, 1e-12);
  close_to(run_num(gg, "[-2.0]"), 0.0, 1e-12);
}

static void ad_through_while(void **state) {
  (void)state;
  const char *pw = "(def pw (x n) (getitem (while (lambda (i acc) (< i n))\n"
                   "  (lambda (i acc) (tuple (+ i 1) (* acc x))) (tuple 0 1.0)) 1))\n";
  char src[1024];
  snprintf(src, sizeof src, "%s(def main (x n) ((grad pw 0) x n))", pw);
  close_to(run_num(src, "[1.5, 4]"), 4 * 1.5 * 1.5 * 1.5, 1e-12);
  close_to(run_num(src, "[1.5, 0]"), 0.0, 1e-12);
  /* a long loop: the differentiated while is recursion (two frames per step in reverse) */
  close_to(run_num(src, "[1.001, 900]"), 900 * pow(1.001, 899), 1e-12);
  snprintf(src, sizeof src, "%s(def d (x n) ((grad pw 0) x n))\n(def main (x n) ((grad d 0) x n))", pw);
  close_to(run_num(src, "[1.5, 4]"), 12 * 1.5 * 1.5, 1e-12);
  /* an RNN-like loop over a tensor state: the body closes over w (a free variable) */
  const char *rnn = "(def rnn (w h0 n) (sum (getitem (while (lambda (i h) (< i n))\n"
                    "  (lambda (i h) (tuple (+ i 1) (tanh (* w h)))) (tuple 0 h0)) 1)))\n";
  snprintf(src, sizeof src, "%s(def main (w h n) ((grad rnn 0 1) w h n))", rnn);
  double d[2];
  grad2(src, "[0.7, 0.5, 3]", d);
  char fw[512], fh[512];
  snprintf(fw, sizeof fw, "%s(def f (w) (rnn w 0.5 3))", rnn);
  snprintf(fh, sizeof fh, "%s(def f (h) (rnn 0.7 h 3))", rnn);
  close_to(d[0], fd1(fw, 0.7), 1e-6);
  close_to(d[1], fd1(fh, 0.5), 1e-6);
}

static const char *TREE_PROD =
    "(def tree_prod (base tree)\n"
    "  (if (getattr tree is_empty) base\n"
    "      (let l (tree_prod base (getattr tree left))\n"
    "        (let r (tree_prod base (getattr tree right))\n"
    "          (* (* l r) (getattr tree value))))))\n"
    "(def main (b t) ((grad tree_prod 0 1) b t))";

static void ad_through_recursion(void **state) {
  (void)state;
  /* tree = node(3, node(2, E, E), E): tree_prod = 6 b^3 */
  const char *e = "{\"record\":{\"is_empty\":true,\"value\":0.0,\"left\":null,\"right\":null}}";
  char args[1024];
  snprintf(args, sizeof args,
           "[1.5, {\"record\":{\"is_empty\":false,\"value\":3.0,\"left\":{\"record\":{\"is_empty\":"
           "false,\"value\":2.0,\"left\":%s,\"right\":%s}},\"right\":%s}}]", e, e, e);
  for (int no_opt = 0; no_opt < 2; no_opt++) {
    char *r = run_ok(TREE_PROD, args, no_opt);
    double v[8];
    /* d/dbase, then the tree's sensitivity record: value fields in order */
    int n = nums(r, v, 8);
    assert_true(n >= 3);
    close_to(v[0], 18 * 1.5 * 1.5, 1e-12);           /* d/db 6b^3 */
    assert_non_null(strstr(r, "\"value\":6.75"));     /* d/d root.value = 2 b^3 */
    assert_non_null(strstr(r, "\"value\":10.125"));   /* d/d left.value = 3 b^3 */
    free(r);
  }
  /* a recursive power: p(x, n) = x^n */
  const char *p = "(def p (x n) (if (== n 0) 1.0 (* x (p x (- n 1)))))\n(def main (x n) ((grad p 0) x n))";
  close_to(run_num(p, "[2.0, 5]"), 5 * 16.0, 1e-12);
  /* a recursive fold applying a closure that captures x and y */
  const char *fold = "(def fold (f acc n) (if (== n 0) acc (fold f (f acc) (- n 1))))\n"
                     "(def g (x y) (fold (lambda (a) (* a (+ x y))) 1.0 3))\n"
                     "(def main (x y) ((grad g 0 1) x y))";
  double d[2];
  grad2(fold, "[2.0, 1.0]", d);
  close_to(d[0], 27.0, 1e-12), close_to(d[1], 27.0, 1e-12);
}

static void ad_through_closures(void **state) {
  (void)state;
  double d[2];
  /* a closure passed to a higher-order function: gradient w.r.t. its free variable y */
  grad2("(def apply2 (f x) (f (f x)))\n(def g (x y) (apply2 (lambda (z) (* z y)) x))\n"
        "(def main (x y) ((grad g 0 1) x y))", "[2.0, 3.0]", d);
  close_to(d[0], 9.0, 1e-12), close_to(d[1], 12.0, 1e-12);
  /* a returned closure */
  grad2("(def mk (y) (lambda (x) (* x y)))\n(def f (x y) ((mk y) (* x x)))\n"
        "(def main (x y) ((grad f 0 1) x y))", "[2.0, 3.0]", d);
  close_to(d[0], 12.0, 1e-12), close_to(d[1], 4.0, 1e-12);
  /* a closure inside a tuple */
  grad2("(def app (p x) ((getitem p 0) x))\n"
        "(def f (x y) (app (tuple (lambda (z) (* z (sin y))) 1.0) x))\n"
        "(def main (x y) ((grad f 0 1) x y))", "[2.0, 3.0]", d);
  close_to(d[0], sin(3.0), 1e-12), close_to(d[1], 2.0 * cos(3.0), 1e-12);
  /* a closure called twice and one that is never called */
  grad2("(def f (x y) (let k (lambda (z) (* z y)) (let u (lambda (z) (* z x)) (+ (k x) (k y)))))\n"
        "(def main (x y) ((grad f 0 1) x y))", "[2.0, 3.0]", d);
  close_to(d[0], 3.0, 1e-12), close_to(d[1], 2.0 + 6.0, 1e-12);
  /* a primitive passed as a function value */
  const char *pm = "(def fold (f acc x n) (if (== n 0) acc (fold f (f acc x) x (- n 1))))\n"
                   "(def g (x) (fold * 1.0 x 3))\n(def main (x) ((grad g 0) x))";
  close_to(run_num(pm, "[2.0]"), 12.0, 1e-12);
}

/* Second-order gradients through the AD helpers' own rules (found by the random
 * tester, tests/graph/adfuzz.py: "no gradient rule for 'slice_grad'"): grad of a
 * function that itself takes the gradient of a slice, a gather, a matmul with a 1-D
 * operand (matmul_grad for both operands) and a stack of a run-time tuple (join_grad). */
static void ad_second_order_helpers(void **state) {
  (void)state;
  const char *sl = "(def g (a) (sum (sin (slice a 0 2))))\n"
                   "(def d (a) (sum (* ((grad g 0) a) a)))\n(def main (a) ((grad d 0) a))";
  const char *a3 = "[{\"dtype\":\"float64\",\"shape\":[3],\"data\":[0.5,-1.25,2.0]}]";
  double v[3], a[3] = {0.5, -1.25, 2.0};
  for (int no_opt = 0; no_opt < 2; no_opt++) {
    char *r = run_ok(sl, a3, no_opt);
    assert_int_equal(nums(r, v, 3), 3);
    free(r);
    for (int i = 0; i < 2; i++) close_to(v[i], cos(a[i]) - a[i] * sin(a[i]), 1e-12);
    close_to(v[2], 0.0, 1e-12);
    r = run_ok("(def g (a) (sum (sin (gather a (tensor int64 (3) 0 0 2)))))\n"
               "(def d (a) (sum (* ((grad g 0) a) a)))\n(def main (a) ((grad d 0) a))", a3, no_opt);
    assert_int_equal(nums(r, v, 3), 3);
    free(r);
    close_to(v[0], 2 * (cos(a[0]) - a[0] * sin(a[0])), 1e-12);
    close_to(v[1], 0.0, 1e-12);
    close_to(v[2], cos(a[2]) - a[2] * sin(a[2]), 1e-12);
  }
  const char *mm = "(def g (a b) (sum (sin (matmul a b))))\n"
                   "(def d (x) (let a (stack x (* 0.5 x))\n"
                   "  (let b (reshape (stack x 1.0 (* x x) 0.3 x 2.0) (tuple 2 3))\n"
                   "    (let gs ((grad g 0 1) a b)\n"
                   "      (+ (sum (* (getitem gs 0) a)) (sum (* (getitem gs 1) (sin b))))))))\n";
  char src[1024];
  snprintf(src, sizeof src, "%s(def main (x) ((grad d 0) x))", mm);
  close_to(run_num(src, "[0.7]"), fd1(mm, 0.7), 1e-6);
  /* a stack of a run-time tuple (join_grad's own rule): d = 3x^3 + 3y^3, dd/dx = 9x^2 */
  const char *jn = "(def g (x y) (sum (** (stack (getitem (tuple (tuple x y) 1.0) 0)) 3.0)))\n"
                   "(def d (x y) (let gs ((grad g 0 1) x y) (+ (* (getitem gs 0) x) (* (getitem gs 1) y))))\n"
                   "(def main (x y) ((grad d 0) x y))";
  close_to(run_num(jn, "[0.7, 1.3]"), 9 * 0.7 * 0.7, 1e-12);
}

/* The optimizer steps against the formulas, and no gradient through them. */
static void ad_optimizer_steps(void **state) {
  (void)state;
  char *r = run_ok("(def main (w v g) (sgd_momentum w v g 0.1 0.9))", "[1.0, 0.5, 2.0]", false);
  double o[3];
  assert_int_equal(nums(r, o, 3), 2);
  close_to(o[1], 0.9 * 0.5 + 2.0, 1e-15);
  close_to(o[0], 1.0 - 0.1 * (0.9 * 0.5 + 2.0), 1e-15);
  free(r);
  r = run_ok("(def main (w m v g) (adam w m v g 2 0.01))", "[1.0, 0.1, 0.2, 0.5]", false);
  assert_int_equal(nums(r, o, 3), 3);
  double m = 0.9 * 0.1 + 0.1 * 0.5, v = 0.999 * 0.2 + 0.001 * 0.25;
  double mh = m / (1 - 0.81), vh = v / (1 - 0.999 * 0.999);
  close_to(o[1], m, 1e-15), close_to(o[2], v, 1e-15);
  close_to(o[0], 1.0 - 0.01 * mh / (sqrt(vh) + 1e-8), 1e-14);
  free(r);
  /* tensors, broadcasting a scalar velocity */
  expect_result("(def main (w g) (getitem (sgd_momentum w 0.0 g 0.5 0.9) 0))",
                "[{\"dtype\":\"float64\",\"shape\":[2],\"data\":[1.0,2.0]}, 2.0]",
                "{\"dtype\":\"float64\",\"shape\":[2],\"data\":[0.0,1.0]}");
  /* flagged gradient-free: an update passes no gradient back */
  close_to(run_num("(def f (x) (+ x (getitem (sgd_momentum x 0.0 x 0.1 0.9) 0)))\n"
                   "(def main (x) ((grad f 0) x))", "[3.0]"), 1.0, 0);
  expect_error("(def main (w) (adam w w w w \"t\" 0.1))", "[1.0]", SG_INVALID_ARGUMENT, 0, 0,
               "hyperparameter", 0);
}

/* Forms AD cannot handle: located errors, never a wrong number. */
static void ad_flow_errors(void **state) {
  (void)state;
  expect_error("(def f (x s t) (getitem (while s s t) 0))\n"
               "(def main (x) ((grad f 0) x (lambda (a) (tuple a)) (tuple x)))",
               "[1.0]", SG_UNIMPLEMENTED, 1, 25, "while", 0);
  expect_error("(def f (x) (let v (variable x) (read v)))\n(def main (x) ((grad f 0) x))", "[1.0]",
               SG_INVALID_ARGUMENT, 1, 19, "not differentiable", 0);
  expect_error("(def f (x) (fold concat x))\n(def fold (g x) (g x x))\n(def main (x) ((grad f 0) x))",
               "[1.0]", SG_UNIMPLEMENTED, 1, 18, "concat", 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ad_through_if),       cmocka_unit_test(ad_through_while),
      cmocka_unit_test(ad_through_recursion), cmocka_unit_test(ad_through_closures),
      cmocka_unit_test(ad_optimizer_steps),  cmocka_unit_test(ad_flow_errors),
      cmocka_unit_test(ad_second_order_helpers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
