/*
 * test_kernels.c — kernels/ in C: float16 conversion, NumPy dtype promotion and
 * broadcast shapes, the blocked sgemm against a naive triple loop, size limits and
 * error messages. Values against NumPy are covered by test_ops_numpy.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kn.h"

static void float16_round_trip(void **state) {
  /* every finite half converts to float and back unchanged */
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00) continue; /* inf/nan */
    float f = kn_f16_to_f32((uint16_t)h);
    assert_int_equal(kn_f32_to_f16(f), h);
  }
  assert_true(kn_f16_to_f32(kn_f32_to_f16(1.0f)) == 1.0f);
  assert_true(kn_f16_to_f32(kn_f32_to_f16(65504.0f)) == 65504.0f);
  assert_true(isinf(kn_f16_to_f32(kn_f32_to_f16(1e6f))));
  /* ties round to even: 2049 is halfway between 2048 and 2050 */
  assert_true(kn_f16_to_f32(kn_f32_to_f16(2049.0f)) == 2048.0f);
}

static void promotion_and_broadcast(void **state) {
  assert_int_equal(kn_promote(KN_INT32, KN_FLOAT32), KN_FLOAT64);
  assert_int_equal(kn_promote(KN_BOOL, KN_INT32), KN_INT32);
  assert_int_equal(kn_promote(KN_FLOAT16, KN_FLOAT32), KN_FLOAT32);
  assert_int_equal(kn_binop_result(KN_DIV, KN_INT32, KN_INT32), KN_FLOAT64);
  assert_int_equal(kn_binop_result(KN_LT, KN_FLOAT32, KN_FLOAT32), KN_BOOL);
  int64_t a[] = {3, 1}, b[] = {4}, out[KN_MAX_DIMS];
  int n;
  assert_true(kn_broadcast_shape(2, a, 1, b, &n, out));
  assert_int_equal(n, 2);
  assert_int_equal(out[0], 3);
  assert_int_equal(out[1], 4);
  int64_t c[] = {3};
  assert_false(kn_broadcast_shape(1, c, 1, b, &n, out));
  kn_dtype dt;
  assert_true(kn_dtype_parse("f32", &dt));
  assert_int_equal(dt, KN_FLOAT32);
  assert_false(kn_dtype_parse("complex64", &dt));
}

static void blocked_sgemm_matches_naive(void **state) {
  int64_t m = 70, n = 300, k = 130;
  float *A = malloc(sizeof(float) * (size_t)(m * k)), *B = malloc(sizeof(float) * (size_t)(k * n));
  float *C = malloc(sizeof(float) * (size_t)(m * n)), *D = malloc(sizeof(float) * (size_t)(m * n));
  for (int64_t i = 0; i < m * k; i++) A[i] = (float)((i * 7) % 13) - 6.0f;
  for (int64_t i = 0; i < k * n; i++) B[i] = (float)((i * 5) % 11) - 5.0f;
  kn_sgemm_blocked(m, n, k, A, B, C);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t q = 0; q < k; q++) s += (double)A[i * k + q] * B[q * n + j];
      D[i * n + j] = (float)s;
    }
  for (int64_t i = 0; i < m * n; i++) assert_true(C[i] == D[i]); /* small ints: exact */
  kn_sgemm(m, n, k, A, B, C);
  for (int64_t i = 0; i < m * n; i++) assert_true(C[i] == D[i]);
  free(A);
  free(B);
  free(C);
  free(D);
}

static void errors_and_limits(void **state) {
  sg_error e = SG_ERROR_INIT;
  int64_t s1[] = {2, 3}, s2[] = {4, 5};
  kn_tensor *a = kn_tensor_new(KN_FLOAT32, 2, s1), *b = kn_tensor_new(KN_FLOAT32, 2, s2), *o = NULL;
  assert_int_equal(kn_matmul(a, b, &o, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "(2,3) and (4,5) do not align"));
  assert_int_equal(kn_binary(KN_ADD, a, b, &o, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "cannot be broadcast"));
  int64_t big[] = {1 << 20, 1 << 20};
  assert_int_equal(kn_check_shape(2, big, &e), SG_RESOURCE_EXHAUSTED);
  assert_int_equal(kn_reduce(KN_SUM, a, true, 5, &o, &e), SG_INVALID_ARGUMENT);
  int64_t z[] = {0};
  kn_tensor *empty = kn_tensor_new(KN_FLOAT32, 1, z);
  assert_int_equal(kn_reduce(KN_MAX, empty, false, 0, &o, &e), SG_INVALID_ARGUMENT);
  assert_int_equal(kn_reduce(KN_SUM, empty, false, 0, &o, &e), SG_OK);
  assert_int_equal(o->ndim, 0);
  assert_true(kn_get_f64(o, 0) == 0.0);
  kn_tensor_release(o);
  kn_tensor_release(empty);
  kn_tensor_release(a);
  kn_tensor_release(b);
  sg_error_clear(&e);
}

/* Large unary ops and reductions run on several cores (cpu_parallel.c): the results
 * equal an element-by-element computation, NaN and argmax ties included, whatever the
 * split. */
static void parallel_unary_and_reductions(void **state) {
  int64_t n = 300001, s2[2] = {1000, 301};
  kn_tensor *a = kn_tensor_new(KN_FLOAT32, 1, &n), *m = kn_tensor_new(KN_INT32, 2, s2), *o = NULL;
  float *x = a->data;
  for (int64_t i = 0; i < n; i++) x[i] = (float)((i * 7919) % 1000) / 250.0f - 2.0f;
  int32_t *mi = m->data;
  for (int64_t i = 0; i < m->size; i++) mi[i] = (int32_t)((i * 31) % 977) - 400;
  sg_error e = SG_ERROR_INIT;
  const kn_unop uops[] = {KN_EXP, KN_TANH, KN_NEG, KN_RELU, KN_SIGMOID, KN_ABS};
  for (size_t u = 0; u < sizeof uops / sizeof uops[0]; u++) {
    assert_int_equal(kn_unary(uops[u], a, &o, &e), SG_OK);
    const float *r = o->data;
    for (int64_t i = 0; i < n; i += 997) {
      float want = uops[u] == KN_EXP ? expf(x[i]) : uops[u] == KN_TANH ? tanhf(x[i])
                                                   : (float)kn_unop_f64(uops[u], x[i]);
      assert_true(r[i] == want);
    }
    kn_tensor_release(o);
  }
  /* full reductions: sum (blocks combined in order), max, argmax of the first maximum */
  x[123457] = 9.0f;
  x[250000] = 9.0f;
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += x[i];
  assert_int_equal(kn_reduce(KN_SUM, a, false, 0, &o, &e), SG_OK);
  assert_true(fabs(((float *)o->data)[0] - sum) <= 1e-6 * fabs(sum) + 1e-3);
  kn_tensor_release(o);
  assert_int_equal(kn_reduce(KN_MAX, a, false, 0, &o, &e), SG_OK);
  assert_true(((float *)o->data)[0] == 9.0f);
  kn_tensor_release(o);
  assert_int_equal(kn_reduce(KN_ARGMAX, a, false, 0, &o, &e), SG_OK);
  assert_int_equal(((int64_t *)o->data)[0], 123457);
  kn_tensor_release(o);
  /* a NaN anywhere: max is NaN and argmax is the first NaN */
  x[200000] = NAN;
  x[290000] = NAN;
  assert_int_equal(kn_reduce(KN_MAX, a, false, 0, &o, &e), SG_OK);
  assert_true(isnan(((float *)o->data)[0]));
  kn_tensor_release(o);
  assert_int_equal(kn_reduce(KN_ARGMAX, a, false, 0, &o, &e), SG_OK);
  assert_int_equal(((int64_t *)o->data)[0], 200000);
  kn_tensor_release(o);
  /* axis reductions with many outputs: int sum and min per column and per row */
  for (int axis = 0; axis < 2; axis++) {
    assert_int_equal(kn_reduce(KN_SUM, m, true, axis, &o, &e), SG_OK);
    kn_tensor *mn = NULL;
    assert_int_equal(kn_reduce(KN_MIN, m, true, axis, &mn, &e), SG_OK);
    int64_t nout = axis == 0 ? s2[1] : s2[0], len = axis == 0 ? s2[0] : s2[1];
    for (int64_t k = 0; k < nout; k++) {
      int64_t acc = 0, lo = INT64_MAX;
      for (int64_t j = 0; j < len; j++) {
        int64_t v = mi[axis == 0 ? j * s2[1] + k : k * s2[1] + j];
        acc += v;
        if (v < lo) lo = v;
      }
      assert_int_equal(((int64_t *)o->data)[k], acc);
      assert_int_equal(((int32_t *)mn->data)[k], lo);
    }
    kn_tensor_release(o);
    kn_tensor_release(mn);
  }
  kn_tensor_release(a);
  kn_tensor_release(m);
}

/* Large loops from several threads at once: one uses the worker pool, the others find it
 * busy and run on their own thread; every result equals the one computed alone, bit for
 * bit (reduction blocks are fixed by the size, not by who runs them). */
typedef struct loop_arg {
  const kn_tensor *a;
  float sum0, exp0_last;
  int ok;
} loop_arg;

static void *loop_worker(void *p) {
  loop_arg *L = p;
  sg_error e = SG_ERROR_INIT;
  for (int r = 0; r < 40; r++) {
    kn_tensor *o = NULL, *u = NULL;
    if (kn_reduce(KN_SUM, L->a, false, 0, &o, &e) != SG_OK) break;
    if (kn_unary(KN_EXP, L->a, &u, &e) != SG_OK) break;
    bool same = ((float *)o->data)[0] == L->sum0 &&
                ((float *)u->data)[L->a->size - 1] == L->exp0_last;
    kn_tensor_release(o);
    kn_tensor_release(u);
    if (!same) break;
    L->ok++;
  }
  return NULL;
}

static void parallel_loops_from_threads(void **state) {
  (void)state;
  int64_t n = 1 << 19;
  kn_tensor *a = kn_tensor_new(KN_FLOAT32, 1, &n), *o = NULL, *u = NULL;
  for (int64_t i = 0; i < n; i++) ((float *)a->data)[i] = (float)((i * 7919) % 1000) / 500.0f;
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_reduce(KN_SUM, a, false, 0, &o, &e), SG_OK);
  assert_int_equal(kn_unary(KN_EXP, a, &u, &e), SG_OK);
  loop_arg args[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (loop_arg){a, ((float *)o->data)[0], ((float *)u->data)[n - 1], 0};
    assert_int_equal(pthread_create(&t[i], NULL, loop_worker, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(args[i].ok, 40);
  }
  kn_tensor_release(o);
  kn_tensor_release(u);
  kn_tensor_release(a);
}

int main(void) {
  /* four chunks per loop even on a 2-core machine, so the pool has several workers */
  setenv("STAGD_CPU_THREADS", "4", 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(float16_round_trip),
      cmocka_unit_test(promotion_and_broadcast),
      cmocka_unit_test(blocked_sgemm_matches_naive),
      cmocka_unit_test(errors_and_limits),
      cmocka_unit_test(parallel_unary_and_reductions),
      cmocka_unit_test(parallel_loops_from_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
