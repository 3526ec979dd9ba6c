// SPDX-License-Identifier: Apache-2.0
/*
 * test_graph.c — graph/ through its public API (gr.h): the SEXPR.md examples, located
 * errors for bad input, limits (depth, deadline, node count), language features,
 * effects in order, dump round trips (defs named like primitives too), the program
 * cache under threads, boxed records and strings (the daemon's binary arguments), and
 * the reasons of the error families (sg_reason) through inference and the executor.
 * The optimization passes have their own tests in test_opt.c.
 */
#include <math.h>
#include <pthread.h>

#include "graph_test_util.h"
#include "gr_ad.h"
#include "gr_exec.h"
#include "gr_infer.h"
#include "gr_ir.h"

/* ------------------------------------------------------------ SEXPR.md examples */
static const char *RUNX = "(def runX (in1)\n (begin\n  (let x0 (* in1 1)\n   (let x1 (* in1 x0)\n    x1))))\n";
static const char *AGG =
    "(def aggregate (x)\n  (getitem\n    (while (lambda (x ret) (> x 0))\n"
    "           (lambda (x ret) (tuple (- x 1) (+ ret x)))\n           (tuple x 0))\n    1))\n";
static const char *TREE =
    "(def tree_prod (base tree)\n  (if (getattr tree is_empty)\n      base\n"
    "      (let l (tree_prod base (getattr tree left))\n"
    "        (let r (tree_prod base (getattr tree right))\n"
    "          (* (* l r) (getattr tree value))))))\n";

static void sexpr_examples(void **state) {
  expect_result(RUNX, "[10]", "100");
  expect_result(AGG, "[100]", "5050");
  expect_result(TREE,
                "[2, {\"record\":{\"is_empty\":false,\"value\":3,"
                "\"left\":{\"record\":{\"is_empty\":true}},"
                "\"right\":{\"record\":{\"is_empty\":false,\"value\":5,"
                "\"left\":{\"record\":{\"is_empty\":true}},\"right\":{\"record\":{\"is_empty\":true}}}}}}]",
                "120");
  /* grad (graph/ad/ad.c; more in test_ad.c): Myia Figure 1 */
  expect_result("(def f (x y) (* (** x 3) (** y 4)))\n(def g (x y) ((grad f 0) x y))", "[2, 3]",
                "972.0");
}

/* set! of a var from an if branch (SSA: the branches return the new values) and from
 * nested lambdas (a variable cell), including a while body and an escaping closure. */
static void set_from_branches_and_lambdas(void **state) {
  const char *br =
      "(def main (a)\n  (var x 0 (var y 10 (begin\n"
      "    (if (> a 0) (set! x (+ x a)) (set! y 0))\n"
      "    (if (> a 5) (begin (set! x (* x 2)) (if (> a 8) (set! y (+ y 1)) none)) none)\n"
      "    (tuple x y)))))";
  expect_result(br, "[-1]", "{\"tuple\":[0,0]}");
  expect_result(br, "[3]", "{\"tuple\":[3,10]}");
  expect_result(br, "[6]", "{\"tuple\":[12,10]}");
  expect_result(br, "[9]", "{\"tuple\":[18,11]}");
  /* the branch value is still the if's value; a var set in one branch only */
  expect_result("(def main (c) (var s 1 (let r (if c (begin (set! s 5) 7) 8) (tuple r s))))", "[true]",
                "{\"tuple\":[7,5]}");
  expect_result("(def main (c) (var s 1 (let r (if c (begin (set! s 5) 7) 8) (tuple r s))))", "[false]",
                "{\"tuple\":[8,1]}");
  /* while body lambda sets an outer var; a closure that escapes keeps setting it */
  const char *lp =
      "(def main (n)\n  (var acc 0 (begin\n"
      "    (while (lambda (i) (< i n)) (lambda (i) (begin (set! acc (+ acc i)) (tuple (+ i 1)))) (tuple 0))\n"
      "    (let before acc (let inc (lambda (k) (set! acc (+ acc k)))\n"
      "      (begin (inc 100) (inc 1) (tuple before acc)))))))";
  expect_result(lp, "[5]", "{\"tuple\":[10,111]}");
  const char *esc = "(def counter () (var c 0 (lambda () (begin (set! c (+ c 1)) c))))\n"
                    "(def main (n) (let k (counter) (begin (k) (k) (tuple (k) ((counter))))))";
  expect_result(esc, "[0]", "{\"tuple\":[3,1]}");
  /* a closure sees the variable, not its value when it was made (set! outside it) */
  expect_result("(def main (a) (var x 0 (let f (lambda () x) (begin (set! x a) (f)))))", "[5]", "5");
  /* a read bound by let keeps the value at the binding, not at its use */
  expect_result("(def main (a) (var x a (let f (lambda () (set! x 0)) (let old x (begin (f) (tuple old x))))))",
                "[4]", "{\"tuple\":[4,0]}");
  /* the branch join is visible in the dump as an if returning a tuple */
  char *d = dump(br, GR_DUMP_TEXT, true);
  assert_non_null(strstr(d, "%x_0_"));
  assert_int_equal(count(d, " = if "), 3);
  assert_true(count(d, " = getitem ") >= 4);
  free(d);
  /* set! of something that is not a var is still an error, located at the name */
  expect_error("(def main (a) (let x 1 (begin (set! x 2) x)))", "[1]", SG_INVALID_ARGUMENT, 1, 37,
               "not a var", 0);
}

/* NumPy 1.24's value-based casting for 0-d tensors (float(), int(), t[i] staged): weak
 * next to a tensor of at least one dimension (its dtype counts only when its kind is
 * higher), strong next to another 0-d tensor; an unknown rank that decides gives any. */
static void weak_0d_inference(void **state) {
  const char *src =
      "(def f ((x float32 (3)) (i int32 (3)) (s float64 ()) (j int64 ()) (u float64) (b bool (3))\n"
      "        (h float32 ()))\n"
      "  (tuple (* x s) (- s x) (+ i j) (/ i j) (* i s) (< x s) (maximum x j) (where b x s) (where b s i)\n"
      "         (+ s h) (+ b h) (* x u) (* x (getitem i 0)) (+ u u) (* i (cast (getitem x 0) int64))))";
  char *d = dump(src, GR_DUMP_TEXT, true);
  const char *want = "  : (float32[3], float32[3], int32[3], float64[3], float64[3], bool[3], float32[3], "
                     "float32[3], float64[3], float64[], float32[3], any, float32[3], float64[...], int32[3])";
  if (!strstr(d, want)) fprintf(stderr, "missing %s in\n%s\n", want, d);
  assert_non_null(strstr(d, want));
  free(d);
  /* the CPU executor agrees (a float32 result; conformance: tests/kernels/test_ops_numpy.py) */
  expect_result("(def f ((x float32 (2)) (s float64 ())) (* x s))",
                "[{\"dtype\":\"float32\",\"shape\":[2],\"data\":[1,2]},"
                "{\"dtype\":\"float64\",\"shape\":[],\"data\":[0.5]}]",
                "{\"dtype\":\"float32\",\"shape\":[2],\"data\":[0.5,1.0]}");
}

/* Static shape/dtype rules (infer_ops.c, the while/if joins in infer.c): the inferred
 * types in the text dump, `?` dims propagated, and mismatches as located errors. */
static void static_inference_rules(void **state) {
  const char *src =
      "(def f ((a float32 (2 3)) (b float32 (? 3)) (i int32 (7)) (x int64))\n"
      "  (tuple (concat a b) (concat (tuple a a) 1) (stack a a 1) (slice a 1 none) (slice a none none -1 1)\n"
      "         (gather a i 1) (one_hot i 10) (arange 2 10 3) (arange 1.5) (random_normal (tuple 2 x) 7 float32)\n"
      "         (getattr (record (p a) (q 1)) p)\n"
      "         (while (lambda (k s) (< k 3)) (lambda (k s) (tuple (+ k 1) (concat s s))) (tuple 0 a))\n"
      "         (let v (variable a) (assign v 2.5)) (seq (print 1) i)))";
  char *d = dump(src, GR_DUMP_TEXT, true);
  const char *want[] = {"concat %a_0_0 %b_0_1  : float32[?,3]", "concat %v_0_1 1  : float32[2,6]",
                        "stack %a_0_0 %a_0_0 1  : float32[2,2,3]", "slice %a_0_0 1 none  : float32[1,3]",
                        "slice %a_0_0 none none -1 1  : float32[2,3]", "gather %a_0_0 %i_0_2 1  : float32[2,7]",
                        "one_hot %i_0_2 10  : float32[7,10]", "arange 2 10 3  : int64[3]",
                        "arange 1.5  : float64[2]", "\"float32\"  : float32[2,?]",
                        "getattr %v_0_12 \"p\"  : float32[2,3]", "  : (int, float32[?,3])",
                        "variable %a_0_0  : variable", "assign %v_0_16 2.5  : float=2.5",
                        "seq %v_0_19 %i_0_2  : int32[7]", "seq %v_0_16 %v_0_17  : float=2.5"};
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    if (!strstr(d, want[k])) fprintf(stderr, "missing %s in\n%s\n", want[k], d);
    assert_non_null(strstr(d, want[k]));
  }
  free(d);
  /* the same program runs, and its results have the inferred shapes */
  expect_result("(def f ((a float32 (2 3))) (tuple (shape (concat a a 1)) (shape (slice a -1 none))))",
                "[{\"dtype\":\"float32\",\"shape\":[2,3],\"data\":[1,2,3,4,5,6]}]",
                "{\"tuple\":[{\"tuple\":[2,6]},{\"tuple\":[1,3]}]}");
  /* mismatches: located at the offending node, with the kernel's wording */
  expect_error("(def f ((a float32 (2 3)) (b float32 (2 4)))\n  (concat a b))", "[]", SG_INVALID_ARGUMENT, 2, 3,
               "concat: input 1 has size 4 on axis 1, expected 3", 0);
  expect_error("(def f ((a float32 (2 3)) (b float32 (2 3 1)))\n  (concat a b))", "[]", SG_INVALID_ARGUMENT, 2,
               3, "same number of dimensions", 0);
  expect_error("(def f ((a float32 (2 3)) (b float32 (3 2)))\n  (stack a b))", "[]", SG_INVALID_ARGUMENT, 2, 3,
               "stack: input 1 has size 3 on axis 0, expected 2", 0);
  expect_error("(def f ((a float32 (2 3)))\n  (slice a 0 1 1 2))", "[]", SG_INVALID_ARGUMENT, 2, 3,
               "slice: axis 2 is out of bounds for a 2-d tensor", 0);
  expect_error("(def f ((a float32 (2 3)) (i float32 (4)))\n  (gather a i))", "[]", SG_INVALID_ARGUMENT, 2, 3,
               "gather: indices must be integers", 0);
  expect_error("(def f ((i int32 (4)))\n  (one_hot i -2))", "[]", SG_INVALID_ARGUMENT, 2, 3, "one_hot: bad depth", 0);
  expect_error("(def f ()\n  (arange 0 5 0))", "[]", SG_INVALID_ARGUMENT, 2, 3, "arange: step cannot be zero", 0);
  expect_error("(def f ()\n  (random_uniform (tuple 2 2) 1 int32))", "[]", SG_INVALID_ARGUMENT, 2, 3,
               "dtype must be a float type", 0);
  expect_error("(def f (x)\n  (getattr (record (a x)) b))", "[1]", SG_INVALID_ARGUMENT, 2, 3,
               "getattr: record has no field 'b'", 0);
  expect_error("(def f ((x float32 (2)))\n  (getattr x b))", "[]", SG_INVALID_ARGUMENT, 2, 3,
               "getattr: expected a record, got float32[2]", 0);
  expect_error("(def f ()\n  (read 3))", "[]", SG_INVALID_ARGUMENT, 2, 3, "read: expected a variable", 0);
  expect_error("(def f ((a float32 (2 3)))\n  (while (lambda (s) true) (lambda (s) (tuple s s)) (tuple a)))", "[]",
               SG_INVALID_ARGUMENT, 2, 3, "body function must return a tuple of 1 elements", 0);
  /* a shape error inside a while body is found for the state's type, located in the body */
  expect_error("(def f ((a float32 (2 3)))\n  (while (lambda (s) true)\n    (lambda (s) (tuple (matmul s s))) (tuple a)))",
               "[]", SG_INVALID_ARGUMENT, 3, 24, "matmul: shapes (2,3) and (2,3) do not align", 0);
}

static void language_features(void **state) {
  /* closures capture, higher-order functions, mutual recursion, nested recursive def */
  expect_result("(def adder (n) (lambda (x) (+ x n)))\n(def main (a) ((adder 10) a))", "[5]", "15");
  expect_result("(def twice (f x) (f (f x)))\n(def main (a) (twice (lambda (y) (* y 3)) a))", "[2]", "18");
  expect_result("(def even (n) (if (== n 0) true (odd (- n 1))))\n"
                "(def odd (n) (if (== n 0) false (even (- n 1))))\n(def main (n) (even n))",
                "[11]", "false");
  expect_result("(def main (n) (begin (def fact (k) (if (<= k 1) 1 (* k (fact (- k 1))))) (fact n)))",
                "[10]", "3628800");
  /* var / set!, records, tuples, floats and tensors */
  expect_result("(def main (a) (var s 0 (begin (set! s (+ s a)) (set! s (* s 2)) s)))", "[4]", "8");
  expect_result("(def main (r) (getattr (record (a (getattr r x)) (b 2)) a))", "[{\"record\":{\"x\":1.5}}]", "1.5");
  expect_result("(def main (x) (tuple x (* x 2.0) none))", "[1]", "{\"tuple\":[1,2.0,null]}");
  expect_result("(def main (x) (sum (* x x)))", "[[1, 2, 3]]", "{\"dtype\":\"int64\",\"shape\":[],\"data\":[14]}");
  expect_result("(def main (x) (+ x 1))", "[[[1.5, 2], [3, 4]]]",
                "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[2.5,3.0,4.0,5.0]}");
  expect_result("(def main (x) (* x 2))", "[{\"dtype\":\"int32\",\"shape\":[3],\"data\":[1,2,3]}]",
                "{\"dtype\":\"int32\",\"shape\":[3],\"data\":[2,4,6]}");
  /* variables */
  expect_result("(def main (a) (let v (variable 1) (begin (assign_add v a) (assign_add v a) (read v))))",
                "[5]", "11");
  expect_result("(def main (a) (let v (variable 10) (begin (assign_sub v a) (assign_add v 1) (assign_sub v a) (read v))))",
                "[3]", "5");
  expect_result("(def main (a) (let v (variable 0.1) (tuple (assign_sub v a) (read v))))", "[0.7]",
                "{\"tuple\":[-0.6,-0.6]}");
  /* the flat let: sequential bindings, a later one sees the earlier ones and shadows */
  expect_result("(def main (a) (let b (+ a 1) c (* b 10) b (- c b) (tuple b c)))", "[2]", "{\"tuple\":[27,30]}");
  expect_result("(def main (a)\n (let\n  b (+ a 1)\n  c (* b b)\n  c))", "[3]", "16");
  expect_result("(def main (a) (let v (variable 1) u (assign_add v a) w (assign_add v a) (read v)))", "[5]", "11");
  /* scopes (lookups go through an index by name, lower.c): an inner binding shadows
   * and then goes out of scope, a lambda's parameter shadows the def's, and a name
   * bound in a sibling scope — made later, so first in the index — is not visible */
  expect_result("(def main (a) (let x 1 (tuple (let x 2 x) x)))", "[0]", "{\"tuple\":[2,1]}");
  expect_result("(def main (x) (let f (lambda (x) (* x 10)) (tuple (f 2) x)))", "[5]", "{\"tuple\":[20,5]}");
  expect_result("(def main (a) (let x a (tuple (let x 7 y (* x 2) y) (let z 3 (+ x z)))))", "[1]",
                "{\"tuple\":[14,4]}");
  expect_error("(def main (a) (tuple (let b 1 b) (let c 2 b)))", "[0]", SG_INVALID_ARGUMENT, 1, 43,
               "unknown name 'b'", 0);
  expect_error("(def main (a) (tuple ((lambda (q) q) 1) q))", "[0]", SG_INVALID_ARGUMENT, 1, 41, "unknown name 'q'", 0);
}

/* A flat let of thousands of bindings (an unrolled loop as the client writes it) stages
 * and runs; the same chain as nested lets is the located nesting error. */
static void long_flat_let(void **state) {
  (void)state;
  enum { N = 5000 };
  sg_buf flat = SG_BUF_INIT, nested = SG_BUF_INIT;
  sg_buf_puts(&flat, "(def f (x) (let\n");
  sg_buf_puts(&nested, "(def f (x) ");
  for (int i = 0; i < N; i++) {
    char prev[16] = "x";
    if (i) snprintf(prev, sizeof prev, "t%d", i - 1);
    sg_buf_printf(&flat, "t%d (+ %s 1)\n", i, prev);
    sg_buf_printf(&nested, "(let t%d (+ %s 1) ", i, prev);
  }
  sg_buf_printf(&flat, "t%d))", N - 1);
  sg_buf_printf(&nested, "t%d", N - 1);
  for (int i = 0; i < N; i++) sg_buf_putc(&nested, ')');
  sg_buf_putc(&nested, ')');
  expect_result(flat.data, "[2]", "5002");
  expect_error(nested.data, "[2]", SG_INVALID_ARGUMENT, 0, 0, "nest", 0);
  sg_buf_free(&flat);
  sg_buf_free(&nested);
}

static void effects_in_order(void **state) {
  /* nested and flat lets order their effects alike */
  const char *srcs[] = {"(def main (a) (begin (print 1) (let u (print a) (print (+ a 1))) (print \"done\") a))",
                        "(def main (a) (begin (print 1) (let u (print a) w (print (+ a 1)) w) (print \"done\") a))"};
  for (int k = 0; k < 2; k++)
  for (int no_opt = 0; no_opt < 2; no_opt++) {
    const char *src = srcs[k];
    gr_stage_options so = {.no_optimize = no_opt};
    char *res, *printed;
    sg_error e = SG_ERROR_INIT;
    assert_int_equal(gr_run_source(src, strlen(src), "t", &so, NULL, "[7]", &res, &printed, &e), SG_OK);
    assert_string_equal(printed, "1\n7\n8\ndone\n");
    assert_string_equal(res, "7");
    free(res);
    free(printed);
  }
  expect_error("(def main (a) (begin (assert (> a 0) \"a must be positive\") a))", "[-1]",
               SG_FAILED_PRECONDITION, 1, 22, "a must be positive", 0);
  /* only the taken branch runs */
  expect_result("(def main (a) (if (> a 0) a (assert false)))", "[3]", "3");
}

/* ------------------------------------------------------------------ bad input */
static void bad_input_is_located(void **state) {
  expect_error("(def f (x)\n  (+ x 1)", "[1]", SG_INVALID_ARGUMENT, 1, 1, "expected ')'", 0);
  expect_error("(def f (x) (+ x 1)))", "[1]", SG_INVALID_ARGUMENT, 1, 20, "unexpected ')'", 0);
  expect_error("(def f (x)\n  (frobnicate x 1))", "[1]", SG_INVALID_ARGUMENT, 2, 4, "frobnicate", 0);
  expect_error("(def f (x)\n  (+ x 1 2))", "[1]", SG_INVALID_ARGUMENT, 2, 3, "expected 2, got 3", 0);
  expect_error("(def f (x) (+ x y))", "[1]", SG_INVALID_ARGUMENT, 1, 17, "unknown name 'y'", 0);
  expect_error("(def f (x) \"abc)", "[1]", SG_INVALID_ARGUMENT, 1, 12, "unterminated string", 0);
  expect_error("(def g (a b) (+ a b))\n(def f ((x float32 (2 3)) (y float32 (4))) (g x y))", "[]",
               SG_INVALID_ARGUMENT, 1, 14, "cannot be broadcast", 0);
  expect_error("(def f ((x float32 (2 3)) (y float32 (4 5))) (matmul x y))", "[]",
               SG_INVALID_ARGUMENT, 1, 46, "do not align", 0);
  /* shape rules of layout ops and constructors */
  expect_error("(def f ((x float32 (2 3)))\n  (let y (reshape (transpose x) (tuple 3 -1))\n"
               "    (+ (cast y float64) (zeros (tuple 3 4)))))",
               "[]", SG_INVALID_ARGUMENT, 3, 5, "(3,2) and (3,4) cannot be broadcast", 0);
  expect_error("(def f ((x float32 (2 3)))\n  (reshape x (tuple 4 2)))", "[]", SG_INVALID_ARGUMENT, 2, 3,
               "size 6 into 8", 0);
  /* inference specialised to the call's input signature finds it before running */
  expect_error("(def g (a b) (+ a b))\n(def main (x y) (begin (print 1) (g x y)))", "[[1,2,3],[[1,2]]]",
               SG_INVALID_ARGUMENT, 1, 14, "cannot be broadcast", 0);
  /* runtime shape mismatch, located at the op */
  expect_error("(def f (x y)\n (+ x y))", "[[1,2,3],[1,2]]", SG_INVALID_ARGUMENT, 2, 2, "broadcast", 0);
  expect_error("(def f (x) (* x 2))", "[1, 2]", SG_INVALID_ARGUMENT, 0, 0, "takes 1 argument", 0);
  expect_error("(def f (x) (* x 2))", "[[1, [2]]]", SG_INVALID_ARGUMENT, 0, 0, "rectangular", 0);
  expect_error("(def f (x) (// x 0))", "[1]", SG_INVALID_ARGUMENT, 1, 12, "division", 0);
  expect_error("", "[]", SG_INVALID_ARGUMENT, 0, 0, "empty program", 0);
  /* a flat let needs NAME EXPR pairs and a body */
  expect_error("(def f (x) (let a 1 b x))", "[1]", SG_INVALID_ARGUMENT, 1, 12, "expected (let NAME EXPR [NAME EXPR ...] BODY)", 0);
  expect_error("(def f (x) (let a 1 (b) 2 a))", "[1]", SG_INVALID_ARGUMENT, 1, 21, "expected (let NAME EXPR", 0);
  expect_error("(def f (x) (let a 1 b (+ a y) b))", "[1]", SG_INVALID_ARGUMENT, 1, 28, "unknown name 'y'", 0);
  /* deep nesting is an error, not a stack overflow */
  sg_buf b = SG_BUF_INIT;
  sg_buf_puts(&b, "(def f (x) ");
  for (int i = 0; i < 5000; i++) sg_buf_puts(&b, "(neg ");
  sg_buf_puts(&b, "x");
  for (int i = 0; i < 5000; i++) sg_buf_putc(&b, ')');
  sg_buf_putc(&b, ')');
  expect_error(b.data, "[1]", SG_INVALID_ARGUMENT, 0, 0, "nest", 0);
  sg_buf_free(&b);
}

static void limits(void **state) {
  expect_error("(def f (n) (+ 1 (f (+ n 1))))", "[0]", SG_RESOURCE_EXHAUSTED, 1, 17, "recursion depth", 0);
  expect_error("(def f (n) (getitem (while (lambda (i) true) (lambda (i) (tuple (+ i 1))) (tuple n)) 0))",
               "[0]", SG_DEADLINE_EXCEEDED, 1, 21, "deadline", 100);
  expect_error("(def f (n) (f n))", "[0]", SG_RESOURCE_EXHAUSTED, 0, 0, "recursion depth", 0);
  gr_stage_options so = {.max_nodes = 10};
  gr_program *p;
  sg_error e = SG_ERROR_INIT;
  const char *src = "(def f (x) (+ (+ (+ (+ (+ (+ x 1) 1) 1) 1) 1) 1))";
  assert_int_equal(gr_stage(src, strlen(src), "big.sexp", &so, &p, &e), SG_RESOURCE_EXHAUSTED);
  assert_true(e.line > 0);
  sg_error_clear(&e);
}

/* ------------------------------------------------------------------ dumps */
static void dumps_round_trip(void **state) {
  const char *srcs[] = {RUNX, AGG, TREE,
                        "(def adder (n) (lambda (x) (+ x n)))\n(def main (a) ((adder 10) a))",
                        "(def main (n) (begin (def fact (k) (if (<= k 1) 1 (* k (fact (- k 1))))) (fact n)))",
                        "(def main (r) (getattr (record (a (getattr r x)) (b 2)) a))",
                        /* a closure meets its free variables in another order than it
                         * made them: two getitems of an if's tuple (graph.fuzz found the
                         * dump's order of p and q swapping on re-staging) */
                        "(def main (c a b) (let r (if c (tuple a b) (tuple b a)) (let p (getitem r 0)"
                        " (let q (getitem r 1) (let h (lambda (x) (let t1 (* x p) (let t2 (* x q)"
                        " (+ t2 t1)))) (h a))))))",
                        /* a closure called from two places prints once (as a let* binding
                         * after its free variable), else it re-stages as two graphs */
                        "(def main (a) (let* ((s (* a 2.0)) (g (lambda (y) (* y s)))) (+ (g a) (g 1.0))))",
                        /* two such closures, one calling the other: bound in that order */
                        "(def main (a) (let* ((s (* a 2.0)) (k (lambda (y) (* y s))) (h (lambda (z) (+ (k z) s))))"
                        " (+ (+ (h a) (h 1.0)) (k a))))",
                        /* `if` called as a primitive on defs: printed so, not as the form */
                        "(def one () 1.0)\n(def two () 2.0)\n(def main (c) (prim:if c one two))"};
  const char *args[] = {"[10]", "[100]", "[2, {\"record\":{\"is_empty\":true}}]", "[5]", "[6]",
                        "[{\"record\":{\"x\":1.5}}]", "[true, 2.0, 3.0]", "[3.0]", "[3.0]", "[false]"};
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
    for (int no_opt = 0; no_opt < 2; no_opt++) {
      char *text = dump(srcs[i], GR_DUMP_SEXPR, no_opt);
      char *r1 = run_ok(srcs[i], args[i], no_opt), *r2 = run_ok(text, args[i], true);
      assert_string_equal(r1, r2);
      /* re-staging the dump gives the same program id */
      gr_program *p1, *p2;
      sg_error e = SG_ERROR_INIT;
      gr_stage_options so = {.no_optimize = true};
      assert_int_equal(gr_stage(text, strlen(text), "a", &so, &p1, &e), SG_OK);
      char *sx2 = gr_program_dump(p1, GR_DUMP_SEXPR);
      assert_int_equal(gr_stage(sx2, strlen(sx2), "b", &so, &p2, &e), SG_OK);
      assert_string_equal(gr_program_id(p1), gr_program_id(p2));
      if (no_opt) { /* and the source itself stages to its dump's program */
        gr_program *p0;
        assert_int_equal(gr_stage(srcs[i], strlen(srcs[i]), "s", &so, &p0, &e), SG_OK);
        assert_string_equal(gr_program_id(p0), gr_program_id(p1));
        gr_program_release(p0);
      }
      gr_program_release(p1);
      gr_program_release(p2);
      free(sx2);
      free(text);
      free(r1);
      free(r2);
    }
  /* unoptimized gradient of mutually recursive defs: AD leaves a getitem of a callee's
   * (value, bprop) that only a stale free-variable list names; the dump printed it and
   * its re-staging kept it alive with a seq — another program (graph.fuzz found it;
   * gr_sweep). The program never ends when run: only the dumps are compared. */
  const char *eo = "(def even (n) (if (== n 0) true (odd (- n 1))))\n"
                   "(def odd (n) (if (neg 0) false (even (size 1))))\n"
                   "(def main (a) ((grad odd 0) a))";
  char *d1 = dump(eo, GR_DUMP_SEXPR, true), *d2 = dump(d1, GR_DUMP_SEXPR, true);
  assert_string_equal(d1, d2);
  free(d1);
  free(d2);
  char *j = dump(TREE, GR_DUMP_JSON, false);
  assert_non_null(strstr(j, "\"entry\":\"tree_prod\""));
  assert_non_null(strstr(j, "\"free_variables\":["));
  free(j);
  char *d = dump(TREE, GR_DUMP_DOT, false);
  assert_true(strncmp(d, "digraph stagd {", 15) == 0);
  free(d);
}

/* A top-level def named like a primitive (a Python function `exp`): the sexpr dump
 * spells the primitive calls the optimizer and AD write as prim:NAME, so reading the
 * dump back keeps their meaning (docs/graph.md); prim: names cannot be defined. */
static void defs_named_like_primitives(void **state) {
  const char *srcs[] = {
      /* AD of the primitive exp writes exp calls into the gradient graph */
      "(def exp (x) (* (prim:exp x) 2.0))\n(def main (x) (+ (exp x) ((grad exp 0) x)))",
      /* the optimizer writes * (x + x → 2 * x style rewrites) next to the user's * */
      "(def * (a b) (- a b))\n(def main (x) (* (prim:* (+ x x) 3.0) (prim:* x 1.0)))",
      /* a primitive as a value, passed to a def */
      "(def neg (f x) (f x))\n(def main (x) (neg prim:neg x))"};
  const char *args[] = {"[0.0]", "[2.5]", "[3.0]"}, *want[] = {"4.0", "12.5", "-3.0"};
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
    for (int no_opt = 0; no_opt < 2; no_opt++) {
      char *r1 = run_ok(srcs[i], args[i], no_opt);
      assert_string_equal(r1, want[i]);
      char *text = dump(srcs[i], GR_DUMP_SEXPR, no_opt);
      assert_non_null(strstr(text, GR_PRIM_PREFIX));
      char *r2 = run_ok(text, args[i], true);
      assert_string_equal(r1, r2);
      gr_program *p1, *p2;
      sg_error e = SG_ERROR_INIT;
      gr_stage_options so = {.no_optimize = no_opt};
      assert_int_equal(gr_stage(srcs[i], strlen(srcs[i]), "a", &so, &p1, &e), SG_OK);
      assert_int_equal(gr_stage(text, strlen(text), "b", &so, &p2, &e), SG_OK);
      assert_string_equal(gr_program_id(p1), gr_program_id(p2));
      if (no_opt) { /* and the source itself stages to its dump's program */
        gr_program *p0;
        assert_int_equal(gr_stage(srcs[i], strlen(srcs[i]), "s", &so, &p0, &e), SG_OK);
        assert_string_equal(gr_program_id(p0), gr_program_id(p1));
        gr_program_release(p0);
      }
      gr_program_release(p1);
      gr_program_release(p2);
      free(text);
      free(r1);
      free(r2);
    }
  /* without a shadowing def the dump spells primitives plainly */
  char *plain = dump("(def f (x) (exp (* x 2.0)))", GR_DUMP_SEXPR, false);
  assert_null(strstr(plain, GR_PRIM_PREFIX));
  free(plain);
  expect_error("(def f (x)\n  (prim:frobnicate x))", "[1]", SG_INVALID_ARGUMENT, 2, 4,
               "unknown primitive 'frobnicate' after 'prim:'", 0);
  expect_error("(def prim:exp (x) x)", "[1]", SG_INVALID_ARGUMENT, 1, 6, "reserved for primitives", 0);
  expect_error("(def f (prim:x) prim:x)", "[1]", SG_INVALID_ARGUMENT, 1, 9, "reserved", 0);
  expect_error("(def f (x) (let prim:y x prim:y))", "[1]", SG_INVALID_ARGUMENT, 1, 17, "reserved", 0);
  expect_error("(def f (x) (let y x prim:z y z))", "[1]", SG_INVALID_ARGUMENT, 1, 21, "reserved", 0);
  expect_error("(def f (x) (let* ((prim:y x)) x))", "[1]", SG_INVALID_ARGUMENT, 1, 20, "reserved", 0);
  expect_error("(def f (x) (begin (def prim:g (y) y) x))", "[1]", SG_INVALID_ARGUMENT, 1, 24, "reserved", 0);
}

/* ------------------------------------------------- variables outlive programs */
/* A variable cell a handle holds outlives the program that filled it (the daemon's
 * cache evicts programs): strings and field names stored in a cell no longer point
 * into the program (ASan: read after gr_program_release), on creation and on assign,
 * through getattr by name too; a function cannot be stored (it would dangle). */
static void variables_outlive_their_program(void **state) {
  sg_error e = SG_ERROR_INIT;
  gr_program *p, *q;
  const char *src = "(def f () (variable (record (field_one \"a string value\") (field_two (tuple 2 \"s2\")))))";
  assert_int_equal(gr_stage(src, strlen(src), "v.sexp", NULL, &p, &e), SG_OK);
  gr_value *var = NULL;
  char *printed = NULL;
  assert_int_equal(gr_execute_values(p, NULL, NULL, 0, &var, &printed, &e), SG_OK);
  free(printed);
  gr_program_release(p);
  /* another program assigns a new record with its own strings, then is released too */
  const char *src2 = "(def g (v) (assign v (record (other_name \"assigned\") (n 3))))";
  assert_int_equal(gr_stage(src2, strlen(src2), "w.sexp", NULL, &q, &e), SG_OK);
  gr_value *cur = gr_value_variable_get(var), *res = NULL;
  char *json = gr_value_to_json_text(cur);
  assert_string_equal(json, "{\"record\":{\"field_one\":\"a string value\",\"field_two\":{\"tuple\":[2,\"s2\"]}}}");
  free(json);
  gr_value_release(cur);
  assert_int_equal(gr_execute_values(q, NULL, &var, 1, &res, &printed, &e), SG_OK);
  free(printed);
  gr_value_release(res);
  gr_program_release(q);
  cur = gr_value_variable_get(var);
  json = gr_value_to_json_text(cur);
  assert_string_equal(json, "{\"record\":{\"other_name\":\"assigned\",\"n\":3}}");
  free(json);
  gr_value_release(cur);
  /* getattr on the stored record from a third program: names compare by content */
  const char *src3 = "(def h (v) (getattr (read v) other_name))";
  assert_int_equal(gr_stage(src3, strlen(src3), "x.sexp", NULL, &q, &e), SG_OK);
  assert_int_equal(gr_execute_values(q, NULL, &var, 1, &res, &printed, &e), SG_OK);
  assert_string_equal(gr_value_str_of(res), "assigned");
  free(printed);
  gr_value_release(res);
  gr_program_release(q);
  gr_value_release(var);
  /* a cell used inside its request may hold a function (Snek's boxed variables do) */
  char *r = run_ok("(def f (x) (let v (variable (lambda (y) (+ x y))) ((read v) 2)))", "[1]", false);
  assert_string_equal(r, "3");
  free(r);
  /* a cell a handle holds may not: refused when it escapes holding one, and on assign
   * after it escaped (nested cells escape with it) */
  const char *src4 = "(def f (x) (tuple (variable (lambda (y) y)) (variable (tuple 1 (variable 2)))))";
  assert_int_equal(gr_stage(src4, strlen(src4), "y.sexp", NULL, &p, &e), SG_OK);
  gr_value *one = gr_value_int(1);
  assert_int_equal(gr_execute_values(p, NULL, &one, 1, &res, &printed, &e), SG_OK);
  free(printed);
  gr_program_release(p);
  gr_value *holds_fn = gr_value_tuple_item(res, 0), *holds_cell = gr_value_tuple_item(res, 1);
  assert_int_equal(gr_value_escape(holds_fn, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "cannot hold a function"));
  sg_error_clear(&e);
  assert_int_equal(gr_value_escape(holds_cell, &e), SG_OK);
  const char *src5 = "(def g (v) (assign (getitem (read v) 1) (lambda (y) y)))";
  assert_int_equal(gr_stage(src5, strlen(src5), "z.sexp", NULL, &q, &e), SG_OK);
  gr_value *none = NULL;
  assert_int_equal(gr_execute_values(q, NULL, &holds_cell, 1, &none, &printed, &e), SG_INVALID_ARGUMENT);
  assert_null(none);
  assert_non_null(strstr(e.message, "cannot hold a function"));
  assert_int_equal(e.line, 1);
  sg_error_clear(&e);
  free(printed);
  gr_program_release(q);
  gr_value_release(holds_fn);
  gr_value_release(holds_cell);
  gr_value_release(res);
  gr_value_release(one);
}

/* --------------------------------------------------------- boxed records */
/* gr_value_record / gr_value_string (the daemon's binary Execute arguments): a record
 * of a tensor, a string and a nested record runs through getattr like a JSON one, comes
 * back field by field, and bad names are refused with every item released. */
static void boxed_records_and_strings(void **state) {
  gr_program *p;
  sg_error e = SG_ERROR_INIT;
  const char *src = "(def f (r) (tuple (* (getattr r w) (getattr (getattr r inner) k)) (getattr r name)))";
  assert_int_equal(gr_stage(src, strlen(src), "r.sexp", NULL, &p, &e), SG_OK);
  int64_t shape[1] = {2};
  kn_tensor *t = kn_tensor_new(KN_FLOAT32, 1, shape);
  ((float *)t->data)[0] = 1.5f, ((float *)t->data)[1] = -2.0f;
  const char *inner_names[] = {"k"};
  gr_value *inner_items[] = {gr_value_int(3)};
  gr_value *inner = gr_value_record(inner_names, inner_items, 1, &e);
  assert_non_null(inner);
  char label[] = "a label, not a dtype";
  const char *names[] = {"w", "inner", "name"};
  gr_value *items[] = {gr_value_tensor(t), inner, gr_value_string(label, &e)};
  assert_non_null(items[2]);
  gr_value *r = gr_value_record(names, items, 3, &e);
  assert_non_null(r);
  label[0] = 'A'; /* the record holds its own copy of every string */
  assert_int_equal(gr_value_kind_of(r), GR_VALUE_RECORD);
  assert_int_equal(gr_value_record_len(r), 3);
  assert_int_equal(gr_value_tuple_len(r), -1);
  const char *name = NULL;
  gr_value *f = gr_value_record_field(r, 2, &name);
  assert_string_equal(name, "name");
  assert_string_equal(gr_value_str_of(f), "a label, not a dtype");
  gr_value_release(f);
  assert_null(gr_value_record_field(r, 3, &name));
  assert_int_equal(gr_value_bytes(r), 8); /* the tensor's bytes */
  char *json = gr_value_to_json_text(r);
  assert_string_equal(json, "{\"record\":{\"w\":{\"dtype\":\"float32\",\"shape\":[2],\"data\":[1.5,-2.0]},"
                            "\"inner\":{\"record\":{\"k\":3}},\"name\":\"a label, not a dtype\"}}");
  free(json);
  gr_value *res = NULL;
  char *printed = NULL;
  assert_int_equal(gr_execute_values(p, NULL, &r, 1, &res, &printed, &e), SG_OK);
  json = gr_value_to_json_text(res);
  assert_string_equal(json, "{\"tuple\":[{\"dtype\":\"float32\",\"shape\":[2],\"data\":[4.5,-6.0]},"
                            "\"a label, not a dtype\"]}");
  free(json);
  free(printed);
  gr_value_release(res);
  gr_value_release(r);
  /* equal strings intern to one pointer; dtype names to the static name */
  gr_value *s1 = gr_value_string("same", &e), *s2 = gr_value_string("same", &e), *dt = gr_value_string("float32", &e);
  assert_ptr_equal(gr_value_str_of(s1), gr_value_str_of(s2));
  gr_value *ds = gr_value_str("float32");
  assert_ptr_equal(gr_value_str_of(dt), gr_value_str_of(ds));
  gr_value_release(ds);
  gr_value_release(s1);
  gr_value_release(s2);
  gr_value_release(dt);
  /* duplicate and empty names: NULL, the error names the field, items released (ASan) */
  const char *dup[] = {"a", "a"};
  gr_value *two[] = {gr_value_int(1), gr_value_tensor(kn_tensor_new(KN_FLOAT32, 1, shape))};
  assert_null(gr_value_record(dup, two, 2, &e));
  assert_int_equal(e.code, SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "duplicate field 'a'"));
  sg_error_clear(&e);
  const char *empty[] = {""};
  gr_value *one[] = {gr_value_none()};
  assert_null(gr_value_record(empty, one, 1, &e));
  assert_non_null(strstr(e.message, "field 0 has an empty name"));
  sg_error_clear(&e);
  /* an empty record is a record */
  gr_value *none = gr_value_record(NULL, NULL, 0, &e);
  assert_int_equal(gr_value_record_len(none), 0);
  gr_value_release(none);
  gr_program_release(p);
}

/* The table of client strings is bounded (65,536 strings): past that a new string is
 * RESOURCE_EXHAUSTED, strings already held and dtype names still work. Runs last: it
 * fills the process-wide table. */
static void client_strings_are_bounded(void **state) {
  sg_error e = SG_ERROR_INIT;
  gr_value *held = gr_value_string("held before the table fills", &e);
  assert_non_null(held);
  int made = 0;
  char name[32];
  for (; made < 70000; made++) {
    snprintf(name, sizeof name, "s%d", made);
    gr_value *v = gr_value_string(name, &e);
    if (!v) break;
    gr_value_release(v);
  }
  assert_true(made > 65000 && made < 65536);
  assert_int_equal(e.code, SG_RESOURCE_EXHAUSTED);
  assert_non_null(strstr(e.message, "table of argument strings and field names is full"));
  sg_error_clear(&e);
  const char *names[] = {"s1", "a new field name"};
  gr_value *items[] = {gr_value_int(1), gr_value_int(2)};
  assert_null(gr_value_record(names, items, 2, &e));
  assert_int_equal(e.code, SG_RESOURCE_EXHAUSTED);
  sg_error_clear(&e);
  gr_value *again = gr_value_string("held before the table fills", &e), *dt = gr_value_string("int32", &e);
  assert_ptr_equal(gr_value_str_of(again), gr_value_str_of(held));
  assert_string_equal(gr_value_str_of(dt), "int32");
  gr_value_release(again);
  gr_value_release(dt);
  gr_value_release(held);
}

/* ------------------------------------------------------------------ cache */
typedef struct {
  gr_cache *c;
  const char *id;
  int ok;
} worker_arg;

static void *worker(void *p) {
  worker_arg *w = p;
  for (int i = 0; i < 200; i++) {
    gr_program *prog = gr_cache_get(w->c, w->id);
    if (!prog) continue;
    char *res = NULL;
    sg_error e = SG_ERROR_INIT;
    if (gr_execute_json(prog, NULL, "[100]", &res, NULL, &e) == SG_OK && !strcmp(res, "5050")) w->ok++;
    free(res);
    sg_error_clear(&e);
    gr_program_release(prog);
  }
  return NULL;
}

static void cache_threads(void **state) {
  gr_cache *c = gr_cache_new(2);
  gr_program *p, *q;
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(gr_stage(AGG, strlen(AGG), "a", NULL, &p, &e), SG_OK);
  assert_int_equal(gr_stage(AGG, strlen(AGG), "a", NULL, &q, &e), SG_OK);
  assert_string_equal(gr_program_id(p), gr_program_id(q)); /* content addressed */
  gr_program *c1 = gr_cache_put(c, p), *c2 = gr_cache_put(c, q);
  assert_ptr_equal(c1, p);
  assert_ptr_equal(c2, p); /* same id → the cached one */
  assert_int_equal(gr_cache_size(c), 1);
  worker_arg w[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker_arg){c, gr_program_id(p), 0};
    pthread_create(&t[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].ok, 200);
  }
  assert_null(gr_cache_get(c, "gnope"));
  gr_program_release(c1);
  gr_program_release(c2);
  gr_program_release(p);
  gr_program_release(q);
  gr_cache_free(c);
}

/* An error's reason (what clients map to IndexError / ValueError / AssertionError)
 * survives inference (which relocates the error at the node) and the CPU executor
 * (whose op wrappers prefix the kernel's message); other errors carry none. */
static void expect_reason(const char *src, const char *args, sg_code code, sg_reason reason,
                          const char *needle) {
  expect_error(src, args, code, 0, 0, needle, 0); /* the message and code */
  gr_stage_options so = {0};
  gr_exec_options xo = {0};
  char *res = NULL, *printed = NULL;
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(gr_run_source(src, strlen(src), "bad.sexp", &so, &xo, args, &res, &printed, &e), code);
  if (e.reason != reason) fprintf(stderr, "%s: reason %s\n", e.message, sg_reason_name(e.reason));
  assert_int_equal(e.reason, reason);
  assert_int_not_equal(e.line, 0); /* located too */
  sg_error_clear(&e);
  free(printed);
}

static void error_reasons(void **state) {
  const sg_code IA = SG_INVALID_ARGUMENT;
  /* found by inference (shapes known from the signature) */
  expect_reason("(def f ((x float32 (2 3)) (y float32 (4)))\n  (+ x y))", "[]", IA,
                SG_REASON_SHAPE_MISMATCH, "+: shapes (2,3) and (4) cannot be broadcast together");
  expect_reason("(def f ((x float32 (2 3)) (v float32 (3)))\n  (slice_update x v 0 2 1 1))", "[]", IA,
                SG_REASON_SHAPE_MISMATCH, "could not broadcast a value of shape (3) into a slice of shape (2,2)");
  expect_reason("(def f ((x float32 (2 3)))\n  (sum x 2))", "[]", IA, SG_REASON_INDEX_OUT_OF_BOUNDS,
                "sum: axis 2 is out of bounds for a 2-d tensor");
  expect_reason("(def f ((x float32 (2 3)))\n  (slice x 0 1 1 -3))", "[]", IA, SG_REASON_INDEX_OUT_OF_BOUNDS,
                "slice: axis -3 is out of bounds for a 2-d tensor");
  expect_reason("(def f (x)\n  (getitem (tuple x x) 2))", "[1]", IA, SG_REASON_INDEX_OUT_OF_BOUNDS,
                "getitem: tuple index 2 out of range (length 2)");
  /* found by the kernels at run time (the index or axis is an argument) */
  expect_reason("(def f (x i)\n  (getitem x i))", "[[1,2,3], 7]", IA, SG_REASON_INDEX_OUT_OF_BOUNDS,
                "getitem: index 7 is out of bounds for axis 0 with size 3");
  expect_reason("(def f (x i)\n  (gather x i))", "[[1,2,3], [0,-4]]", IA, SG_REASON_INDEX_OUT_OF_BOUNDS,
                "gather: index -4 is out of bounds for axis 0 with size 3");
  expect_reason("(def f (x a)\n  (sum x a))", "[[1,2,3], 1]", IA, SG_REASON_INDEX_OUT_OF_BOUNDS,
                "sum: axis 1 is out of bounds for a 1-d tensor");
  expect_reason("(def f (x a)\n  (softmax x a))", "[[1,2,3], -2]", IA, SG_REASON_INDEX_OUT_OF_BOUNDS,
                "softmax: axis -2 is out of bounds for a 1-d tensor");
  expect_reason("(def f (x i)\n  (getitem (tuple x x) i))", "[1, -3]", IA, SG_REASON_INDEX_OUT_OF_BOUNDS,
                "getitem: tuple index -3 out of range (length 2)");
  expect_reason("(def f (x y)\n  (while (lambda (i s) (< i 1)) (lambda (i s) (tuple (+ i 1) (+ s y))) (tuple 0 x)))",
                "[[1,2,3], [1,2]]", IA, SG_REASON_SHAPE_MISMATCH, "shapes (3) and (2) cannot be broadcast together");
  /* a staged assert */
  expect_reason("(def f (x)\n  (assert (> x 5) \"x is small\"))", "[1]", SG_FAILED_PRECONDITION,
                SG_REASON_ASSERTION, "assertion failed: ");
  /* a speculative graph's assumption (docs/graph.md "assume"): its own reason */
  expect_reason("(def f (x)\n  (assume (> x 5) \"if taken true\"))", "[1]", SG_FAILED_PRECONDITION,
                SG_REASON_SPECULATION, "speculation failed: ");
  /* matmul's inner dimensions, by inference and at run time */
  expect_reason("(def f ((x float32 (2 3)))\n  (matmul x x))", "[]", IA, SG_REASON_SHAPE_MISMATCH,
                "matmul: shapes (2,3) and (2,3) do not align (3 != 2)");
  expect_reason("(def f (x y)\n  (matmul x y))", "[[[1,2]], [[1],[2],[3]]]", IA, SG_REASON_SHAPE_MISMATCH,
                "matmul: shapes (1,2) and (3,1) do not align (2 != 3)");
  /* other errors: no reason */
  expect_reason("(def f (x)\n  (+ x y))", "[1]", IA, SG_REASON_NONE, "unknown name 'y'");
}

/* ------------------------------------------------------------- the op table */
/* Every row's family has the columns its kind of op needs: a CPU kernel always, a shape
 * rule unless it calls functions (if, while, grad: inference follows those itself), a
 * gradient rule when it is pure and not an optimizer step; names are unique. */
static void op_table_columns(void **state) {
  (void)state;
  int n;
  const gr_op *ops = gr_op_table(&n);
  assert_true(n > 80);
  for (int i = 0; i < n; i++) {
    const gr_op *op = &ops[i];
    assert_true(op->family >= 0 && op->family < GR_FAM_COUNT);
    if (!gr_cpu_kernel(op)) fail_msg("op '%s' has no CPU kernel", op->name);
    bool calls = (op->flags & GR_OP_CALLS) != 0;
    if (!calls && !gr_infer_rule(op)) fail_msg("op '%s' has no shape rule", op->name);
    if (calls && gr_infer_rule(op)) fail_msg("op '%s' calls functions but has a shape rule", op->name);
    bool grads = (op->flags & GR_OP_PURE) && !(op->flags & GR_OP_NOGRAD);
    if (grads != gr_ad_differentiable(op))
      fail_msg("op '%s': %s", op->name, grads ? "pure but no gradient rule" : "a gradient rule on an effect or step");
    assert_ptr_equal(gr_op_lookup(op->name), op);
    if (op->alias) assert_ptr_equal(gr_op_lookup(op->alias), op);
    for (int k = 0; k < i; k++) assert_string_not_equal(ops[k].name, op->name);
  }
  for (int trans = 0; trans < 4; trans++) {
    const gr_op *mm = gr_op_matmul(trans);
    assert_non_null(mm);
    assert_int_equal(mm->family, GR_FAM_MATMUL);
    assert_int_equal(mm->code, trans);
  }
}

/* Elementwise chains run fused on the CPU (exec/fused.c) when their tensors are
 * float32 of the output's shape or a suffix of it (a bias row); other dtypes and other
 * broadcasting run op by op; a bad operand in a chain is reported at its own node, as
 * without fusion. tests/graph/fusediff.py compares random chains with STAGD_FUSE=0 bit
 * for bit. */
static void fused_chains(void **state) {
  (void)state;
  const char *src = "(def main (x)\n  (- (abs (+ (* x 2) 0.5)) 1))";
  uint64_t n0 = gr_exec_fused_chains();
  expect_result(src, "[{\"dtype\":\"float32\",\"shape\":[3],\"data\":[1,-2,0.25]}]",
                "{\"dtype\":\"float32\",\"shape\":[3],\"data\":[1.5,2.5,0.0]}");
  uint64_t n1 = gr_exec_fused_chains();
  assert_int_equal(n1, n0 + 2); /* optimized and not */
  expect_result(src, "[{\"dtype\":\"float64\",\"shape\":[3],\"data\":[1,-2,0.25]}]",
                "{\"dtype\":\"float64\",\"shape\":[3],\"data\":[1.5,2.5,0.0]}");
  expect_result(src, "[{\"dtype\":\"int32\",\"shape\":[2],\"data\":[1,-2]}]",
                "{\"dtype\":\"float64\",\"shape\":[2],\"data\":[1.5,2.5]}");
  assert_int_equal(gr_exec_fused_chains(), n1);
  /* a bias row [1, 2] and a column [2, 1] fuse (the output [2, 2]); [2, 1, 2] against
   * [2, 2, 2] (two runs of axes) runs op by op */
  const char *bias = "(def main (x b)\n  (relu (+ (* x 2) b)))";
  expect_result(bias, "[{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[[1,-2],[0.25,3]]},"
                      "{\"dtype\":\"float32\",\"shape\":[1,2],\"data\":[[-1,0.5]]}]",
                "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[1.0,0.0,0.0,6.5]}");
  uint64_t n2 = gr_exec_fused_chains();
  assert_int_equal(n2, n1 + 2);
  expect_result(bias, "[{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[[1,-2],[0.25,3]]},"
                      "{\"dtype\":\"float32\",\"shape\":[2,1],\"data\":[[-1],[0.5]]}]",
                "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[1.0,0.0,1.0,6.5]}");
  uint64_t n3 = gr_exec_fused_chains();
  assert_int_equal(n3, n2 + 2);
  expect_result(bias, "[{\"dtype\":\"float32\",\"shape\":[2,2,2],\"data\":[[[1,-2],[0.25,3]],[[1,1],[1,1]]]},"
                      "{\"dtype\":\"float32\",\"shape\":[2,1,2],\"data\":[[[-1,0.5]],[[0,-3]]]}]",
                "{\"dtype\":\"float32\",\"shape\":[2,2,2],\"data\":[1.0,0.0,0.0,6.5,2.0,0.0,2.0,0.0]}");
  assert_int_equal(gr_exec_fused_chains(), n3);
  /* a chain opening with a unary step on a one-element tensor: one value for the block
   * (it read past the tensor) */
  expect_result("(def main (x b)\n  (+ (* (exp b) 2) x))",
                "[{\"dtype\":\"float32\",\"shape\":[4],\"data\":[1,-2,0.25,3]},"
                "{\"dtype\":\"float32\",\"shape\":[1],\"data\":[0]}]",
                "{\"dtype\":\"float32\",\"shape\":[4],\"data\":[3.0,0.0,2.25,5.0]}");
  assert_int_equal(gr_exec_fused_chains(), n3 + 2);
  expect_error("(def main (x)\n  (let a (* x 2)\n    (+ a \"s\")))",
               "[{\"dtype\":\"float32\",\"shape\":[2],\"data\":[1,2]}]", SG_INVALID_ARGUMENT, 3, 5, "+",
               0);
}

/* A chain that reads a temporary for the last time — a matmul's result, a reduction's —
 * writes its output over it when the temporary has the output's shape and nothing else
 * holds it (exec/fused.c "in place"): the epilogue of the matmul, no new tensor, the
 * same values. A temporary read again later, returned, or seen through a view is never
 * written over; nor one of another shape than the output. */
static void fused_in_place(void **state) {
  (void)state;
  const char *x = "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[[1,-2],[0.5,3]]}";
  const char *w = "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[[1,0],[2,-1]]}";
  const char *b = "{\"dtype\":\"float32\",\"shape\":[2],\"data\":[0.5,-1]}";
  char args[512];
  snprintf(args, sizeof args, "[%s,%s,%s]", x, w, b);
  /* x @ w = [[-3, 2], [6.5, -3]] */
  uint64_t p0 = gr_exec_fused_in_place(), c0 = gr_exec_fused_chains();
  expect_result("(def main (x w b)\n  (relu (+ (matmul x w) b)))", args,
                "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[0.0,1.0,7.0,0.0]}");
  assert_int_equal(gr_exec_fused_in_place(), p0 + 2); /* optimized and not */
  assert_int_equal(gr_exec_fused_chains(), c0 + 2);
  /* one step: the bias alone, in place too */
  expect_result("(def main (x w b)\n  (+ (matmul x w) b))", args,
                "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[-2.5,1.0,7.0,-4.0]}");
  uint64_t p1 = gr_exec_fused_in_place();
  assert_int_equal(p1, p0 + 4);
  /* the product returned beside the chain: kept as it was, a new output */
  expect_result("(def main (x w b)\n  (let h (matmul x w)\n    (tuple h (relu (+ h b)))))", args,
                "{\"tuple\":[{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[-3.0,2.0,6.5,-3.0]},"
                "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[0.0,1.0,7.0,0.0]}]}");
  /* held by a tuple that is returned: the slot's is not the only reference */
  expect_result("(def main (x w b)\n  (let h (matmul x w)\n    (let t (tuple h 0)\n      (let y (relu (+ h b))\n"
                "        (tuple t y)))))",
                args,
                "{\"tuple\":[{\"tuple\":[{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[-3.0,2.0,6.5,-3.0]},0]},"
                "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[0.0,1.0,7.0,0.0]}]}");
  /* read again after the chain (by a product with the chain's result) */
  expect_result("(def main (x w b)\n  (let h (matmul x w)\n    (let y (relu (+ h b))\n      (matmul y h))))", args,
                "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[6.5,-3.0,-21.0,14.0]}");
  assert_int_equal(gr_exec_fused_in_place(), p1);
  /* read again by a later step of the chain: the chain's last read of it, in place */
  expect_result("(def main (x w b)\n  (let h (matmul x w)\n    (let y (* (+ h b) 2)\n      (- y h))))", args,
                "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[-2.0,0.0,7.5,-5.0]}");
  assert_int_equal(gr_exec_fused_in_place(), p1 + 2);
  p1 += 2;
  /* a view of the product (reshape shares its buffer) */
  expect_result("(def main (x w b)\n  (+ (* (reshape (matmul x w) (tuple -1)) 2) 1))", args,
                "{\"dtype\":\"float32\",\"shape\":[4],\"data\":[-5.0,5.0,14.0,-5.0]}");
  /* a reduction [2] against a [2, 2] parameter: the output is larger */
  expect_result("(def main (x w b)\n  (* (+ (sum x 0) x) 2))", args,
                "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[5.0,-2.0,4.0,8.0]}");
  assert_int_equal(gr_exec_fused_in_place(), p1);
  /* a reduction's epilogue of its own shape: in place */
  expect_result("(def main (x w b)\n  (sqrt (* (sum (* x x) 1) 0.5)))", args,
                "{\"dtype\":\"float32\",\"shape\":[2],\"data\":[1.5811388492584229,2.1505813598632812]}");
  assert_int_equal(gr_exec_fused_in_place(), p1 + 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(op_table_columns),      cmocka_unit_test(fused_chains),
      cmocka_unit_test(fused_in_place),
      cmocka_unit_test(sexpr_examples),        cmocka_unit_test(language_features),
      cmocka_unit_test(set_from_branches_and_lambdas), cmocka_unit_test(static_inference_rules),
      cmocka_unit_test(weak_0d_inference),
      cmocka_unit_test(effects_in_order),
      cmocka_unit_test(long_flat_let),      cmocka_unit_test(bad_input_is_located),
      cmocka_unit_test(error_reasons),
      cmocka_unit_test(limits),
      cmocka_unit_test(dumps_round_trip),      cmocka_unit_test(cache_threads),
      cmocka_unit_test(variables_outlive_their_program),
      cmocka_unit_test(boxed_records_and_strings), cmocka_unit_test(defs_named_like_primitives),
      cmocka_unit_test(client_strings_are_bounded), /* last: fills the table */
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
