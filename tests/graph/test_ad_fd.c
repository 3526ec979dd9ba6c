// SPDX-License-Identifier: Apache-2.0
/*
 * test_ad_fd.c — gradients of every differentiable tensor primitive (graph/ad/ad_rules.c)
 * against central finite differences in float64, per element of every input, with
 * NumPy broadcasting between inputs of different shapes (the gradient is summed back
 * to each input's shape), optimized and not; matmul with 1-D and batched operands.
 */
#include "ad_test_util.h"

typedef struct param {
  const char *name;
  int ndim; /* -1: a Python float */
  int64_t shape[3];
} param;

static int64_t psize(const param *p) {
  int64_t n = 1;
  for (int i = 0; i < p->ndim; i++) n *= p->shape[i];
  return n;
}

static void put_param(sg_buf *b, const param *p, const double *d) {
  if (p->ndim < 0) {
    sg_buf_printf(b, "%.17g", d[0]);
    return;
  }
  sg_buf_puts(b, "{\"dtype\":\"float64\",\"shape\":[");
  for (int i = 0; i < p->ndim; i++) sg_buf_printf(b, "%s%lld", i ? "," : "", (long long)p->shape[i]);
  sg_buf_puts(b, "],\"data\":[");
  for (int64_t i = 0; i < psize(p); i++) sg_buf_printf(b, "%s%.17g", i ? "," : "", d[i]);
  sg_buf_puts(b, "]}");
}

static char *args_json(const param *ps, int np, double *const *data) {
  sg_buf b = SG_BUF_INIT;
  sg_buf_puts(&b, "[");
  for (int i = 0; i < np; i++) {
    if (i) sg_buf_puts(&b, ",");
    put_param(&b, &ps[i], data[i]);
  }
  sg_buf_puts(&b, "]");
  return sg_buf_detach(&b, NULL);
}

/* Every number of a JSON value in order (tensor data, Python floats), skipping
 * shapes and strings. */
static int flat_nums(const char *p, double *out, int max) {
  int n = 0;
  while (*p && n < max) {
    if (!strncmp(p, "\"shape\":[", 9)) {
      p = strchr(p, ']');
      if (!p) break;
    } else if (*p == '"') {
      p = strchr(p + 1, '"');
      if (!p) break;
    } else if ((*p >= '0' && *p <= '9') || *p == '-') {
      char *end;
      out[n++] = strtod(p, &end);
      p = end;
      continue;
    }
    p++;
  }
  return n;
}

static double eval_f(const char *fsrc, const param *ps, int np, double *const *data) {
  char *a = args_json(ps, np, data);
  char *r = run_ok(fsrc, a, false);
  double v = 0;
  assert_int_equal(nums(r, &v, 1), 1);
  free(a);
  free(r);
  return v;
}

/* Checks d(body)/d(each element of each param). Values: 0.4 + 0.23*k (mod 1.3),
 * positive and without ties, so log/sqrt/pow/max are smooth there. */
static void check(const char *body, const param *ps, int np) {
  char fsrc[1024], gsrc[2048], plist[128] = "", idx[64] = "";
  for (int i = 0; i < np; i++) {
    snprintf(plist + strlen(plist), sizeof plist - strlen(plist), "%s%s", i ? " " : "", ps[i].name);
    snprintf(idx + strlen(idx), sizeof idx - strlen(idx), " %d", i);
  }
  snprintf(fsrc, sizeof fsrc, "(def f (%s) %s)", plist, body);
  snprintf(gsrc, sizeof gsrc, "%s\n(def main (%s) ((grad f%s) %s))", fsrc, plist, idx, plist);
  double *data[4];
  int64_t total = 0;
  for (int i = 0, k = 0; i < np; i++) {
    int64_t n = ps[i].ndim < 0 ? 1 : psize(&ps[i]);
    data[i] = calloc((size_t)n, sizeof(double));
    for (int64_t j = 0; j < n; j++, k++) data[i][j] = 0.4 + fmod(0.23 * k + 0.07 * i, 1.3);
    total += n;
  }
  char *a = args_json(ps, np, data);
  double *g = calloc((size_t)total, sizeof(double));
  for (int no_opt = 0; no_opt < 2; no_opt++) {
    char *r = run_ok(gsrc, a, no_opt);
    int got = flat_nums(r, g, (int)total + 1);
    if (got != total) fprintf(stderr, "%s: %s\n", body, r);
    assert_int_equal(got, total);
    free(r);
    for (int i = 0, k = 0; i < np; i++) {
      int64_t n = ps[i].ndim < 0 ? 1 : psize(&ps[i]);
      for (int64_t j = 0; j < n; j++, k++) {
        double h = 1e-6, x0 = data[i][j];
        data[i][j] = x0 + h;
        double fp = eval_f(fsrc, ps, np, data);
        data[i][j] = x0 - h;
        double fm = eval_f(fsrc, ps, np, data);
        data[i][j] = x0;
        double fd = (fp - fm) / (2 * h);
        if (fabs(fd - g[k]) > 1e-5 * (1 + fabs(fd)))
          fprintf(stderr, "%s: d/d%s[%lld]: ad %.10g fd %.10g\n", body, ps[i].name, (long long)j, g[k], fd);
        assert_true(fabs(fd - g[k]) <= 1e-5 * (1 + fabs(fd)));
      }
    }
  }
  free(a);
  free(g);
  for (int i = 0; i < np; i++) free(data[i]);
}

#define P23(n) {n, 2, {2, 3}}
#define P3(n) {n, 1, {3}}
#define P21(n) {n, 2, {2, 1}}
#define PS(n) {n, -1, {0}}

static void fd_broadcast_binary(void **state) {
  (void)state;
  const char *bodies[] = {"(sum (+ a b))", "(sum (* (- a b) (+ a 1.0)))", "(sum (* a b))",
                          "(sum (/ a b))", "(sum (** a b))", "(sum (* a (maximum a b)))",
                          "(sum (* a (minimum a b)))", "(sum (* b (% a 0.35)))",
                          "(sum (* a (where (> a 0.9) a b)))"};
  param shapes[][2] = {{P23("a"), P3("b")}, {P23("a"), P21("b")}, {P3("a"), P23("b")},
                       {P23("a"), PS("b")}, {P23("a"), P23("b")}};
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) check(bodies[i], shapes[s], 2);
  /* mod w.r.t. its divisor; a Python-scalar argument gets a Python-float gradient */
  param sc[2] = {PS("a"), PS("b")};
  check("(* (% (* a 3.0) b) b)", sc, 2);
  param mixed[2] = {P3("a"), PS("b")};
  check("(sum (* (exp (* a b)) b))", mixed, 2);
}

static void fd_unary_tensors(void **state) {
  (void)state;
  param p[2] = {P23("a"), P3("b")};
  const char *bodies[] = {"(sum (* b (exp a)))", "(sum (* b (log a)))", "(sum (* b (sqrt a)))",
                          "(sum (* b (tanh a)))", "(sum (* b (sigmoid a)))", "(sum (* b (sin a)))",
                          "(sum (* b (cos a)))", "(sum (* b (relu (- a 0.9))))",
                          "(sum (* b (abs (- a 0.9))))", "(sum (* b (neg a)))"};
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) check(bodies[i], p, 2);
}

static void fd_reductions(void **state) {
  (void)state;
  param p[2] = {P23("a"), P3("b")};
  const char *bodies[] = {
      "(sum (* a a))", "(mean (* a b))", "(sum (* (sum a 0) b))", "(sum (** (sum a 1) 2.0))",
      "(sum (* (mean a 0) b))", "(sum (** (mean a -1) 3.0))", "(* (max (* a b)) 2.0)",
      "(sum (* (max a 0) b))", "(sum (** (min a 1) 2.0))", "(min (* a b))",
      "(sum (* (softmax a) (* a b)))", "(sum (* (softmax a 0) (* a b)))",
      "(sum (* (log_softmax a) b))", "(sum (* (log_softmax a 0) (* a b)))",
      "(sum (* (cast a float64) b))",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) check(bodies[i], p, 2);
}

static void fd_layout(void **state) {
  (void)state;
  param p[2] = {P23("a"), P3("b")};
  const char *bodies[] = {
      "(sum (* (transpose a) (transpose (* a b))))",
      "(sum (* (transpose a (tuple 1 0)) (reshape b (tuple 3 1))))",
      "(sum (** (reshape (* a b) (tuple 3 2)) 2.0))",
      "(sum (tanh (matmul a (transpose (* a b)))))",
      "(sum (** (concat a (reshape b (tuple 1 3)) 0) 2.0))",
      "(sum (** (concat (* a 2.0) a 1) 3.0))",
      "(sum (** (concat (tuple (* a 2.0) (reshape b (tuple 1 3))) 0) 3.0))",
      "(sum (* a (fill (shape a) (sum b))))",
      "(sum (** (stack b (getitem a 1) 0) 3.0))",
      "(sum (** (stack a a 2) 3.0))",
      "(sum (** (slice a 1 3 1 1) 2.0))",
      "(sum (** (slice (* a b) none none -2 1) 3.0))",
      "(sum (** (gather a (tensor int64 (3) 0 1 0) 1) 2.0))",
      "(sum (** (gather b (tensor int64 (2 2) 2 0 2 1)) 2.0))",
      "(sum (** (getitem a 1) 3.0))",
      "(sum (** (getitem a -2) 3.0))",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) check(bodies[i], p, 2);
  param p3[1] = {{"a", 3, {2, 3, 2}}};
  check("(sum (* (transpose a (tuple 2 0 1)) (reshape (arange 12.0) (tuple 2 2 3))))", p3, 1);
  check("(sum (* (transpose a (tuple 1 2 0)) (reshape (arange 12.0) (tuple 3 2 2))))", p3, 1);
}

/* slice_update X V ...: X gets g with the slice zeroed, V the slice summed to its shape */
static void fd_slice_update(void **state) {
  (void)state;
  param p[2] = {P23("a"), P3("b")};
  const char *bodies[] = {
      "(sum (** (slice_update a b 1 2) 2.0))",
      "(sum (** (slice_update (* a b) (* 3.0 (slice a 0 2 1 1)) 1 3 1 1) 3.0))",
      "(sum (* (slice_update a (sum b) none none -2 1) (exp a)))",
      "(sum (** (slice_update a (reshape b (tuple 1 3)) -1 none) 3.0))",
      "(sum (** (slice_update (* a b) 2.0 0 1) 2.0))",
      "(sum (** (slice_update (* a b) (slice_update b (getitem a 0) none none) 0 2 1 0) 3.0))",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) check(bodies[i], p, 2);
}

/* matmul with NumPy semantics (matmul_grad): 1-D operands on either side or both, batched
 * operands, batch dimensions broadcast (summed back), and the gradient of a gradient */
static void fd_matmul(void **state) {
  (void)state;
  param mv[2] = {P23("a"), P3("b")}, vm[2] = {{"a", 1, {2}}, P23("b")}, vv[2] = {P3("a"), P3("b")};
  check("(sum (tanh (matmul a b)))", mv, 2);
  check("(sum (tanh (matmul a b)))", vm, 2);
  check("(tanh (matmul a b))", vv, 2);
  param bb[2] = {{"a", 3, {2, 2, 3}}, {"b", 3, {2, 3, 2}}}, bm[2] = {{"a", 3, {2, 2, 3}}, {"b", 2, {3, 2}}};
  check("(sum (tanh (matmul a b)))", bb, 2);
  check("(sum (tanh (matmul a b)))", bm, 2); /* b broadcast over the batch: summed back */
  param mb[2] = {{"a", 2, {2, 3}}, {"b", 3, {2, 3, 2}}}, b1[2] = {{"a", 3, {2, 2, 3}}, P3("b")};
  check("(sum (tanh (matmul a b)))", mb, 2);
  check("(sum (tanh (matmul a b)))", b1, 2);
  param vb[2] = {{"a", 1, {2}}, {"b", 3, {3, 2, 3}}};
  check("(sum (tanh (matmul a b)))", vb, 2);
}

/* the matmul rows reading an operand transposed (matmul_tn / _nt / _tt, matmul_grad's
 * flags): 2-D, batched, a broadcast 2-D operand (summed back), a 1-D other operand */
static void fd_matmul_transposed(void **state) {
  (void)state;
  param m23[2] = {P23("a"), P23("b")}, m32[2] = {P23("a"), {"b", 2, {3, 2}}};
  check("(sum (tanh (matmul_tn a b)))", m23, 2);
  check("(sum (tanh (matmul_nt a b)))", m23, 2);
  check("(sum (tanh (matmul_tt a b)))", m32, 2);
  param bb[2] = {{"a", 3, {2, 3, 2}}, {"b", 3, {2, 3, 2}}}, bm[2] = {{"a", 3, {2, 2, 3}}, P23("b")};
  check("(sum (tanh (matmul_tn a b)))", bb, 2);
  check("(sum (tanh (matmul_nt a b)))", bm, 2); /* b broadcast over the batch */
  param bt[2] = {{"a", 3, {2, 3, 2}}, {"b", 3, {2, 2, 3}}};
  check("(sum (tanh (matmul_tt a b)))", bt, 2);
  param mb[2] = {P23("a"), {"b", 3, {2, 2, 3}}}, mv[2] = {P23("a"), {"b", 1, {2}}};
  check("(sum (tanh (matmul_tn a b)))", mb, 2); /* a broadcast over the batch */
  check("(sum (tanh (matmul_tn a b)))", mv, 2); /* a^T @ a vector */
  param vm[2] = {P3("a"), P23("b")};
  check("(sum (tanh (matmul_nt a b)))", vm, 2); /* a vector @ b^T */
}

/* concat / stack of a tuple known only at run time (join_grad): chosen by an `if`, taken
 * out of a nested tuple, of Python floats (second order: test_ad_flow.c) */
static void fd_join_runtime_tuple(void **state) {
  (void)state;
  param p[2] = {P23("a"), P21("b")};
  const char *bodies[] = {
      "(sum (** (concat (if (> (sum a) 0.0) (tuple a (* b a)) (tuple b b)) 1) 2.0))",
      "(sum (** (concat (getitem (tuple (tuple (* a 2.0) (sin b)) 1.0) 0) -1) 3.0))",
      "(sum (** (stack (getitem (tuple (tuple a (* a b)) 1.0) 0) 1) 3.0))",
      "(sum (** (stack (getitem (tuple (tuple a (* a b)) 1.0) 0) -1) 3.0))",
      "(sum (** (concat (getitem (tuple a 1.0) 0) 0) 3.0))",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) check(bodies[i], p, 2);
  param s[2] = {PS("a"), PS("b")};
  check("(sum (** (stack (getitem (tuple (tuple a (* a b)) 1.0) 0)) 3.0))", s, 2);
}

static void fd_structures(void **state) {
  (void)state;
  param p[2] = {P23("a"), P3("b")};
  const char *bodies[] = {
      "(let t (tuple a b (* a b)) (sum (* (getitem t 0) (getitem t 2))))",
      "(let r (record (p a) (q b)) (sum (* (getattr r p) (exp (getattr r q)))))",
      "(let t (tuple (tuple a 1.0) b) (sum (* (getitem (getitem t 0) 0) (getitem t 1))))",
      "(sum (seq (* a b)))",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) check(bodies[i], p, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fd_broadcast_binary), cmocka_unit_test(fd_matmul_transposed), cmocka_unit_test(fd_unary_tensors),
      cmocka_unit_test(fd_reductions),       cmocka_unit_test(fd_layout),
      cmocka_unit_test(fd_structures),       cmocka_unit_test(fd_slice_update),
      cmocka_unit_test(fd_matmul),           cmocka_unit_test(fd_join_runtime_tuple),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
