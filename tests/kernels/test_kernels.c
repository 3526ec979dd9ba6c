// SPDX-License-Identifier: Apache-2.0
/*
 * test_kernels.c — kernels/ in C: float16 conversion, NumPy dtype promotion and
 * broadcast shapes, the blocked sgemm against a naive triple loop, size limits and
 * error messages, the vectorised float32 exp/sigmoid/tanh/softmax against double libm.
 * Values against NumPy are covered by test_ops_numpy.py.
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
#include "kn_cpu.h"

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

/* Each kernel site of an error family sets its reason (kn_errors.c) with the family's
 * wording; other errors carry none. */
static void error_families_set_their_reason(void **state) {
  sg_error e = SG_ERROR_INIT;
  int64_t s23[] = {2, 3}, s4[] = {4}, s2[] = {2};
  kn_tensor *a = kn_tensor_new(KN_FLOAT32, 2, s23), *b = kn_tensor_new(KN_FLOAT32, 1, s4), *o = NULL;
  kn_tensor *c = kn_tensor_new(KN_BOOL, 1, s2), *idx = kn_tensor_new(KN_INT64, 1, s2);
#define FAMILY(call, r, t)                                                                  \
  do {                                                                                      \
    assert_int_not_equal((call), SG_OK);                                                    \
    if (!strstr(e.message, t)) fail_msg("'%s' lacks '%s'", e.message, t);                   \
    assert_int_equal(e.reason, r);                                                          \
    assert_null(o);                                                                         \
  } while (0)
  FAMILY(kn_binary(KN_ADD, a, b, &o, &e), SG_REASON_SHAPE_MISMATCH, "shapes (2,3) and (4) cannot be broadcast together");
  FAMILY(kn_where(c, a, a, &o, &e), SG_REASON_SHAPE_MISMATCH, "where: shapes (2) and (2,3) cannot be broadcast together");
  FAMILY(kn_where(a, a, b, &o, &e), SG_REASON_SHAPE_MISMATCH, "where: shapes (2,3) and (4) cannot be broadcast together");
  FAMILY(kn_slice_update(a, b, 1, 0, 2, 1, true, true, &o, &e), SG_REASON_SHAPE_MISMATCH,
         "slice_update: could not broadcast a value of shape (4) into a slice of shape (2,2)");
  FAMILY(kn_reduce(KN_SUM, a, true, 2, &o, &e), SG_REASON_INDEX_OUT_OF_BOUNDS, "axis 2 is out of bounds for a 2-d tensor");
  FAMILY(kn_softmax(a, -3, false, &o, &e), SG_REASON_INDEX_OUT_OF_BOUNDS, "axis -3 is out of bounds for a 2-d tensor");
  FAMILY(kn_concat(&a, 1, 3, &o, &e), SG_REASON_INDEX_OUT_OF_BOUNDS, "concat: axis 3 is out of bounds for a 2-d tensor");
  FAMILY(kn_slice(a, 2, 0, 1, 1, true, true, &o, &e), SG_REASON_INDEX_OUT_OF_BOUNDS, "slice: axis 2 is out of bounds");
  FAMILY(kn_gather(a, idx, 5, &o, &e), SG_REASON_INDEX_OUT_OF_BOUNDS, "gather: axis 5 is out of bounds for a 2-d tensor");
  kn_set_i64(idx, 1, 3);
  FAMILY(kn_gather(a, idx, 1, &o, &e), SG_REASON_INDEX_OUT_OF_BOUNDS, "gather: index 3 is out of bounds for axis 1 with size 3");
  FAMILY(kn_index(a, -3, &o, &e), SG_REASON_INDEX_OUT_OF_BOUNDS, "getitem: index -3 is out of bounds for axis 0 with size 2");
  FAMILY(kn_err_tuple_index(&e, 4, 2), SG_REASON_INDEX_OUT_OF_BOUNDS, "getitem: tuple index 4 out of range (length 2)");
  /* matmul's inner and batch dimensions (NumPy: ValueError) */
  FAMILY(kn_matmul(a, a, &o, &e), SG_REASON_SHAPE_MISMATCH, "matmul: shapes (2,3) and (2,3) do not align (3 != 2)");
  int64_t s223[] = {2, 2, 3}, s332[] = {3, 3, 2};
  kn_tensor *p = kn_tensor_new(KN_FLOAT32, 3, s223), *q = kn_tensor_new(KN_FLOAT32, 3, s332);
  FAMILY(kn_matmul(p, q, &o, &e), SG_REASON_SHAPE_MISMATCH, "matmul: batch dimensions do not broadcast");
  kn_tensor_release(p);
  kn_tensor_release(q);
  /* other errors carry no reason */
  int64_t big[] = {1 << 20, 1 << 20};
  FAMILY(kn_check_shape(2, big, &e), SG_REASON_NONE, "");
#undef FAMILY
  /* the shape printer of the messages marks unknown dims (inference) */
  sg_buf sb = SG_BUF_INIT;
  kn_put_shape(&sb, 3, (int64_t[]){2, -1, 4});
  assert_string_equal(sb.data, "(2,?,4)");
  sg_buf_free(&sb);
  sg_error_clear(&e);
  kn_tensor_release(a);
  kn_tensor_release(b);
  kn_tensor_release(c);
  kn_tensor_release(idx);
}

/* kn_matmul_t reads operands transposed: the same values as kn_matmul on transposed
 * copies, for BLAS (float32, float64) and the loops (int32, float16), a batched A with
 * a broadcast B; and its errors. */
static void matmul_transposed_operands(void **state) {
  static const kn_dtype dts[] = {KN_FLOAT32, KN_FLOAT64, KN_INT32, KN_FLOAT16};
  int perm3[3] = {0, 2, 1}, perm2[2] = {1, 0};
  int64_t sa[3] = {3, 5, 7}, sb[2] = {7, 4};
  sg_error e = SG_ERROR_INIT;
  for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
    kn_tensor *a = kn_tensor_new(dts[d], 3, sa), *b = kn_tensor_new(dts[d], 2, sb), *want, *at, *bt;
    for (int64_t i = 0; i < a->size; i++) kn_set_f64(a, i, (double)((i * 7) % 11) - 5);
    for (int64_t i = 0; i < b->size; i++) kn_set_f64(b, i, (double)((i * 5) % 9) - 4);
    assert_int_equal(kn_matmul(a, b, &want, &e), SG_OK);
    assert_int_equal(kn_transpose(a, perm3, 3, &at, &e), SG_OK);
    assert_int_equal(kn_transpose(b, perm2, 2, &bt, &e), SG_OK);
    for (int trans = 1; trans < 4; trans++) {
      kn_tensor *got;
      assert_int_equal(kn_matmul_t(trans & KN_MATMUL_TRANS_A ? at : a, trans & KN_MATMUL_TRANS_B ? bt : b,
                                   trans, &got, &e), SG_OK);
      assert_int_equal(got->ndim, 3);
      assert_int_equal(got->shape[1], 5);
      assert_int_equal(got->shape[2], 4);
      for (int64_t i = 0; i < want->size; i++) /* small integers: exact */
        assert_true(kn_get_f64(got, i) == kn_get_f64(want, i));
      kn_tensor_release(got);
    }
    kn_tensor_release(a), kn_tensor_release(b), kn_tensor_release(at), kn_tensor_release(bt);
    kn_tensor_release(want);
  }
  int64_t s1[] = {4}, s2[] = {3, 4};
  kn_tensor *v = kn_tensor_new(KN_FLOAT32, 1, s1), *m = kn_tensor_new(KN_FLOAT32, 2, s2), *o = NULL;
  assert_int_equal(kn_matmul_t(m, v, KN_MATMUL_TRANS_B, &o, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "transposed operand must be at least 2-d"));
  assert_int_equal(kn_matmul_t(m, m, KN_MATMUL_TRANS_A | KN_MATMUL_TRANS_B, &o, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "(3,4) (transposed) and (3,4) (transposed) do not align (3 != 4)"));
  assert_int_equal(kn_matmul_t(m, m, KN_MATMUL_TRANS_B, &o, &e), SG_OK); /* (3,4) @ (4,3) */
  assert_int_equal(o->shape[0], 3);
  assert_int_equal(o->shape[1], 3);
  kn_tensor_release(o), kn_tensor_release(v), kn_tensor_release(m);
  sg_error_clear(&e);
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
      float want;
      if (uops[u] == KN_EXP) kn_vm_exp_f32(&x[i], &want, 1);
      else if (uops[u] == KN_TANH) kn_vm_tanh_f32(&x[i], &want, 1);
      else if (uops[u] == KN_SIGMOID) kn_vm_sigmoid_f32(&x[i], &want, 1);
      else want = (float)kn_unop_f64(uops[u], x[i]);
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

/* kn_reshape is a view: no copy, the buffer lives while any view of it does (released
 * in any order; ASan reports a use after free or a leak), views of views hold the root. */
static void reshape_is_a_view(void **state) {
  int64_t s6 = 6, s23[2] = {2, 3}, s32[2] = {3, 2};
  kn_tensor *a = kn_tensor_new(KN_INT32, 1, &s6), *v = NULL, *w = NULL;
  for (int i = 0; i < 6; i++) ((int32_t *)a->data)[i] = i * 10;
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_reshape(a, 2, s23, &v, &e), SG_OK);
  assert_int_equal(kn_reshape(v, 2, s32, &w, &e), SG_OK);
  assert_ptr_equal(v->data, a->data);
  assert_ptr_equal(w->base, a);
  assert_int_equal(v->shape[1], 3);
  kn_tensor_release(a);
  kn_tensor_release(v);
  assert_int_equal(kn_get_i64(w, 5), 50);
  assert_int_equal(w->shape[0], 3);
  kn_tensor_release(w);
}

/* kn_slice of one contiguous run (axis 0 or an outer size of 1, step 1) is a view of
 * the buffer at an offset; other slices copy. kn_slice_update writes V (cast,
 * broadcast) into a copy of X and leaves X alone. */
static void slice_views_and_updates(void **state) {
  (void)state;
  int64_t s34[2] = {3, 4}, s4 = 4;
  kn_tensor *a = kn_tensor_new(KN_INT32, 2, s34), *v = NULL, *c = NULL, *u = NULL;
  for (int i = 0; i < 12; i++) ((int32_t *)a->data)[i] = i;
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_slice(a, 0, 1, 3, 1, true, true, &v, &e), SG_OK);
  assert_ptr_equal(v->base, a);
  assert_ptr_equal(v->data, (int32_t *)a->data + 4);
  assert_int_equal(v->shape[0], 2);
  assert_int_equal(kn_get_i64(v, 7), 11);
  assert_int_equal(kn_slice(a, 1, 1, 3, 1, true, true, &c, &e), SG_OK); /* a column range: copies */
  assert_null(c->base);
  assert_int_equal(kn_get_i64(c, 3), 6);
  kn_tensor *row = kn_tensor_new(KN_FLOAT64, 1, &s4);
  for (int i = 0; i < 4; i++) kn_set_f64(row, i, 100.5 + i);
  assert_int_equal(kn_slice_update(a, row, 0, -1, 0, -2, true, false, &u, &e), SG_OK); /* a[::-2] = row */
  int32_t want[12] = {100, 101, 102, 103, 4, 5, 6, 7, 100, 101, 102, 103};
  for (int i = 0; i < 12; i++) assert_int_equal(kn_get_i64(u, i), want[i]);
  assert_int_equal(kn_get_i64(a, 0), 0); /* x itself unchanged */
  kn_tensor_release(u);
  kn_tensor *bad = kn_tensor_new(KN_INT32, 1, (int64_t[]){3});
  assert_int_equal(kn_slice_update(a, bad, 1, 0, 2, 1, true, true, &u, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "could not broadcast a value of shape (3) into a slice of shape (3,2)"));
  sg_error_clear(&e);
  kn_tensor_release(bad);
  kn_tensor_release(row);
  kn_tensor_release(a);
  kn_tensor_release(c);
  assert_int_equal(kn_get_i64(v, 0), 4); /* the view keeps the buffer */
  kn_tensor_release(v);
}

/* The sequential definition of one output of a reduction along an axis: sums in double
 * (integer sums wrap in int64), max/min NaN if any value is, argmax the first NaN or
 * else the first maximum. Written as a single loop, apart from the kernels. */
static double reduce_ref(kn_reduce_op op, const kn_tensor *a, int64_t base, int64_t len, int64_t inner) {
  bool fdom = kn_dtype_is_float(a->dtype) || op == KN_MEAN;
  if (op == KN_ARGMAX) {
    int64_t best = 0;
    for (int64_t j = 1; j < len; j++) {
      double v = kn_get_f64(a, base + j * inner), b = kn_get_f64(a, base + best * inner);
      if (isnan(b)) break;
      if (v > b || isnan(v)) best = j;
    }
    return (double)best;
  }
  if (!fdom) {
    int64_t acc = op == KN_MAX ? INT64_MIN : op == KN_MIN ? INT64_MAX : 0;
    for (int64_t j = 0; j < len; j++) {
      int64_t v = kn_get_i64(a, base + j * inner);
      acc = op == KN_SUM ? (int64_t)((uint64_t)acc + (uint64_t)v) : op == KN_MAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
    }
    return (double)acc;
  }
  double acc = op == KN_MAX ? -INFINITY : op == KN_MIN ? INFINITY : 0.0;
  for (int64_t j = 0; j < len; j++) {
    double v = kn_get_f64(a, base + j * inner);
    if (op == KN_SUM || op == KN_MEAN) acc += v;
    else if (isnan(v) || isnan(acc)) acc = NAN;
    else acc = op == KN_MAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
  }
  if (op == KN_MEAN) acc = len ? acc / (double)len : NAN;
  return acc;
}

/* Reductions along a non-last axis (cpu_reduce.c reduce_columns: blocks of 1,024
 * columns, rows folded in order): bit-identical to the sequential definition
 * (reduce_ref) for sum, mean, max, min and argmax of float32/float64/int32/bool inputs,
 * across column blocks (inner 1,500), several outer indices, an empty axis (sum 0, mean
 * NaN, max an error), NaN (first in some columns, later in others; argmax keeps the first
 * NaN), ties (argmax keeps the first), and large inputs split across threads. */
static void axis_reductions_match_sequential(void **state) {
  const int64_t shapes[][3] = {{3, 5, 7}, {2, 4, 1500}, {1, 0, 9}, {4, 300, 257}, {2, 70000, 3}};
  const kn_dtype dts[] = {KN_FLOAT32, KN_FLOAT64, KN_INT32, KN_BOOL};
  const kn_reduce_op ops[] = {KN_SUM, KN_MEAN, KN_MAX, KN_MIN, KN_ARGMAX};
  sg_error e = SG_ERROR_INIT;
  for (size_t si = 0; si < 5; si++)
    for (size_t di = 0; di < 4; di++)
      for (size_t oi = 0; oi < 5; oi++) {
        const int64_t *sh = shapes[si];
        kn_reduce_op op = ops[oi];
        kn_tensor *a = kn_tensor_new(dts[di], 3, sh), *o = NULL;
        for (int64_t i = 0; i < a->size; i++) kn_set_f64(a, i, (double)((i * 7919) % 1001) / 8.0 - 60.0);
        if (a->size > 40 && kn_dtype_is_float(dts[di])) { /* NaN first in column 2, later in 10 and 12 */
          kn_set_f64(a, 2, NAN);
          kn_set_f64(a, 10 + 2 * sh[2], NAN);
          kn_set_f64(a, 12 + sh[2], NAN);
          kn_set_f64(a, 12 + 3 * sh[2], NAN);
        }
        if (sh[1] == 0 && (op == KN_MAX || op == KN_MIN || op == KN_ARGMAX)) {
          assert_int_equal(kn_reduce(op, a, true, 1, &o, &e), SG_INVALID_ARGUMENT);
          sg_error_clear(&e);
          kn_tensor_release(a);
          continue;
        }
        assert_int_equal(kn_reduce(op, a, true, 1, &o, &e), SG_OK);
        for (int64_t po = 0; po < sh[0]; po++)
          for (int64_t pi = 0; pi < sh[2]; pi++) {
            double want = reduce_ref(op, a, po * sh[1] * sh[2] + pi, sh[1], sh[2]);
            kn_tensor *w = kn_tensor_new(o->dtype, 0, NULL);
            kn_set_f64(w, 0, want);
            double got = kn_get_f64(o, po * sh[2] + pi);
            want = kn_get_f64(w, 0);
            kn_tensor_release(w);
            if (!(got == want || (isnan(got) && isnan(want))))
              fail_msg("op %d %s [%lld,%lld,%lld] at (%lld,%lld): %.17g, want %.17g", (int)op,
                       kn_dtype_name(dts[di]), (long long)sh[0], (long long)sh[1], (long long)sh[2],
                       (long long)po, (long long)pi, got, want);
          }
        kn_tensor_release(o);
        kn_tensor_release(a);
      }
}

/* Broadcasting float32 + - * / in whole innermost runs (cpu_elementwise.c f32_run):
 * bit-identical to the operation done in double and rounded, element by element, for
 * every broadcast pattern (scalar, row, column, both sides), and for outputs large
 * enough to be split across threads mid-run. */
static void broadcast_runs_match_elementwise(void **state) {
  const int64_t shapes[][2][3] = {
      {{3, 4, 5}, {1, 4, 1}}, {{3, 1, 5}, {1, 4, 1}}, {{1, 1, 7}, {3, 1, 1}}, {{2, 3, 1}, {1, 1, 4}},
      {{1, 1, 1}, {2, 2, 9}}, {{300, 1, 229}, {1, 1, 229}}, {{300, 229, 1}, {1, 1, 1}},
      {{5, 1, 1}, {1, 70001, 1}}};
  sg_error e = SG_ERROR_INIT;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (int op = KN_ADD; op <= KN_DIV; op++) {
      kn_tensor *a = kn_tensor_new(KN_FLOAT32, 3, shapes[si][0]), *b = kn_tensor_new(KN_FLOAT32, 3, shapes[si][1]);
      for (int64_t i = 0; i < a->size; i++) ((float *)a->data)[i] = (float)((i * 7919) % 1013) / 7.0f - 50.0f;
      for (int64_t i = 0; i < b->size; i++) ((float *)b->data)[i] = (float)((i * 31) % 97) / 3.0f - 10.0f;
      kn_tensor *o = NULL;
      assert_int_equal(kn_binary((kn_binop)op, a, b, &o, &e), SG_OK);
      int64_t d[3];
      for (int k = 0; k < 3; k++) d[k] = shapes[si][0][k] > shapes[si][1][k] ? shapes[si][0][k] : shapes[si][1][k];
      for (int64_t i0 = 0; i0 < d[0]; i0++)
        for (int64_t i1 = 0; i1 < d[1]; i1++)
          for (int64_t i2 = 0; i2 < d[2]; i2++) {
            const int64_t *sa = a->shape, *sb = b->shape;
            double x = ((float *)a->data)[((i0 % sa[0]) * sa[1] + i1 % sa[1]) * sa[2] + i2 % sa[2]];
            double y = ((float *)b->data)[((i0 % sb[0]) * sb[1] + i1 % sb[1]) * sb[2] + i2 % sb[2]];
            float want = (float)(op == KN_ADD ? x + y : op == KN_SUB ? x - y : op == KN_MUL ? x * y : x / y);
            float got = ((float *)o->data)[(i0 * d[1] + i1) * d[2] + i2];
            if (got != want && !(isnan(got) && isnan(want)))
              fail_msg("shapes %zu op %d at (%lld,%lld,%lld): %a, want %a", si, op, (long long)i0,
                       (long long)i1, (long long)i2, (double)got, (double)want);
          }
      kn_tensor_release(o);
      kn_tensor_release(a);
      kn_tensor_release(b);
    }
}

/* where with a bool condition and branches of the result dtype copies innermost runs
 * (cpu_elementwise.c where_range): equal to choosing element by element, for each
 * element size and broadcast pattern, split across threads mid-run, and mixed dtypes
 * (the generic path) still promoting. */
static void where_runs_match_elementwise(void **state) {
  const int64_t shapes[][3][3] = {{{2, 3, 5}, {2, 3, 5}, {2, 3, 5}}, {{1, 3, 1}, {2, 1, 5}, {1, 1, 1}},
                                  {{2, 1, 5}, {1, 1, 1}, {2, 3, 1}}, {{3, 100, 301}, {1, 1, 301}, {3, 100, 1}},
                                  {{1, 0, 7}, {1, 1, 1}, {1, 1, 7}}}; /* empty: vkdiff seed 1 */
  const kn_dtype dts[] = {KN_BOOL, KN_FLOAT16, KN_FLOAT32, KN_INT64, KN_INT32};
  sg_error e = SG_ERROR_INIT;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (size_t di = 0; di < 5; di++) {
      const int64_t(*sh)[3] = shapes[si];
      kn_tensor *c = kn_tensor_new(KN_BOOL, 3, sh[0]), *a = kn_tensor_new(dts[di], 3, sh[1]);
      kn_tensor *b = kn_tensor_new(di == 4 ? KN_FLOAT32 : dts[di], 3, sh[2]), *o = NULL;
      for (int64_t i = 0; i < c->size; i++) kn_set_i64(c, i, (i * 7) % 3 == 0);
      for (int64_t i = 0; i < a->size; i++) kn_set_f64(a, i, (double)(i % 50) + 1);
      for (int64_t i = 0; i < b->size; i++) kn_set_f64(b, i, -(double)(i % 40) - 0.5 * (di != 4));
      assert_int_equal(kn_where(c, a, b, &o, &e), SG_OK);
      assert_int_equal(o->dtype, kn_promote(a->dtype, b->dtype));
      int64_t d[3];
      for (int k = 0; k < 3; k++) {
        int64_t m = sh[0][k];
        if (sh[1][k] > m) m = sh[1][k];
        if (sh[2][k] > m) m = sh[2][k];
        d[k] = sh[0][k] && sh[1][k] && sh[2][k] ? m : 0; /* broadcasting 0 with 1 gives 0 */
        assert_int_equal(o->shape[k], d[k]);
      }
#define AT(t, i0, i1, i2) \
  ((((i0) % (t)->shape[0]) * (t)->shape[1] + (i1) % (t)->shape[1]) * (t)->shape[2] + (i2) % (t)->shape[2])
      for (int64_t i0 = 0; i0 < d[0]; i0++)
        for (int64_t i1 = 0; i1 < d[1]; i1++)
          for (int64_t i2 = 0; i2 < d[2]; i2++) {
            double want = kn_get_i64(c, AT(c, i0, i1, i2)) ? kn_get_f64(a, AT(a, i0, i1, i2))
                                                          : kn_get_f64(b, AT(b, i0, i1, i2));
            kn_tensor *w = kn_tensor_new(o->dtype, 0, NULL);
            kn_set_f64(w, 0, want);
            double got = kn_get_f64(o, (i0 * d[1] + i1) * d[2] + i2), wv = kn_get_f64(w, 0);
            kn_tensor_release(w);
            if (got != wv)
              fail_msg("where shapes %zu %s at (%lld,%lld,%lld): %g, want %g", si, kn_dtype_name(dts[di]),
                       (long long)i0, (long long)i1, (long long)i2, got, wv);
          }
#undef AT
      kn_tensor_release(o);
      kn_tensor_release(a);
      kn_tensor_release(b);
      kn_tensor_release(c);
    }
}

/* 2-D transposes go through 32x32 tiles (cpu_shape.c transpose_2d): every element lands
 * where the general permutation puts it, for each element size and for shapes that are
 * not multiples of the tile; a 3-D permutation still takes the general path. */
static void transposes_match_indexing(void **state) {
  const kn_dtype dts[] = {KN_BOOL, KN_FLOAT16, KN_INT32, KN_FLOAT64};
  const int64_t shapes[][2] = {{1, 1}, {33, 70}, {64, 32}, {5, 1}, {0, 3}};
  sg_error e = SG_ERROR_INIT;
  for (size_t di = 0; di < 4; di++)
    for (size_t si = 0; si < 5; si++) {
      kn_tensor *a = kn_tensor_new(dts[di], 2, shapes[si]), *o = NULL;
      for (int64_t i = 0; i < a->size; i++) kn_set_i64(a, i, dts[di] == KN_BOOL ? i % 3 == 0 : i % 1000);
      assert_int_equal(kn_transpose(a, NULL, 0, &o, &e), SG_OK);
      assert_int_equal(o->shape[0], shapes[si][1]);
      for (int64_t i = 0; i < shapes[si][0]; i++)
        for (int64_t j = 0; j < shapes[si][1]; j++)
          assert_int_equal(kn_get_i64(o, j * shapes[si][0] + i), kn_get_i64(a, i * shapes[si][1] + j));
      kn_tensor_release(o);
      kn_tensor_release(a);
    }
  int64_t s3[3] = {2, 3, 4};
  int perm[3] = {1, 2, 0};
  kn_tensor *a = kn_tensor_new(KN_INT32, 3, s3), *o = NULL;
  for (int64_t i = 0; i < a->size; i++) kn_set_i64(a, i, i);
  assert_int_equal(kn_transpose(a, perm, 3, &o, &e), SG_OK);
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < 3; j++)
      for (int64_t k = 0; k < 4; k++) assert_int_equal(kn_get_i64(o, (j * 4 + k) * 2 + i), (i * 3 + j) * 4 + k);
  kn_tensor_release(o);
  kn_tensor_release(a);
}

/* kn_fill: every element of every dtype, odd sizes (the byte doubling's last partial
 * copy), -0.0 kept as NumPy's full keeps it. */
static void fill_every_dtype(void **state) {
  const kn_dtype dts[] = {KN_BOOL, KN_INT32, KN_INT64, KN_FLOAT16, KN_FLOAT32, KN_FLOAT64};
  const int64_t sizes[] = {0, 1, 7, 1000, 65537};
  const double vals[] = {2.5, -0.0, 3.0, 0.0};
  for (size_t d = 0; d < 6; d++)
    for (size_t z = 0; z < 5; z++)
      for (size_t v = 0; v < 4; v++) {
        kn_tensor *t = kn_fill(dts[d], 1, &sizes[z], vals[v]);
        kn_tensor *one = kn_fill(dts[d], 0, NULL, vals[v]);
        double want = kn_get_f64(one, 0);
        for (int64_t i = 0; i < t->size; i++) {
          double got = kn_get_f64(t, i);
          if (got != want || signbit(got) != signbit(want))
            fail_msg("fill %s [%lld] with %g: element %lld is %g", kn_dtype_name(dts[d]),
                     (long long)sizes[z], vals[v], (long long)i, got);
        }
        if (kn_dtype_is_float(dts[d]) && vals[v] == 0) assert_true(signbit(want) == signbit(vals[v]));
        kn_tensor_release(t);
        kn_tensor_release(one);
      }
}

/* Distance in ulps between two floats of the same sign class (ordered bit patterns). */
static int64_t ulps(float a, float b) {
  int32_t i, j;
  memcpy(&i, &a, 4);
  memcpy(&j, &b, 4);
  int64_t oa = i < 0 ? -(int64_t)(i & 0x7fffffff) : i, ob = j < 0 ? -(int64_t)(j & 0x7fffffff) : j;
  return oa > ob ? oa - ob : ob - oa;
}

/* cpu_vmath.c promises float32 exp, sigmoid and tanh within 1 ulp of the correctly
 * rounded value (double libm rounded once), over a sweep of every 4099th bit pattern —
 * normals, subnormals, both signs, overflow and underflow — and the specials exactly.
 * (A sweep of all 2^32 patterns, run once by hand, found 1 value 1 ulp away for exp,
 * none for sigmoid and tanh.) */
static void vmath_within_one_ulp(void **state) {
  enum { N = 1 << 16 };
  float *x = malloc(N * sizeof(float)), *r = malloc(N * sizeof(float));
  int64_t exact = 0, total = 0;
  for (int f = 0; f < 3; f++)
    for (uint64_t start = 0; start < (1ULL << 32); start += (uint64_t)N * 4099) {
      int n = 0;
      for (uint64_t b = start; b < start + (uint64_t)N * 4099 && b < (1ULL << 32); b += 4099) {
        uint32_t u = (uint32_t)b;
        memcpy(&x[n++], &u, 4);
      }
      if (f == 0) kn_vm_exp_f32(x, r, n);
      else if (f == 1) kn_vm_sigmoid_f32(x, r, n);
      else kn_vm_tanh_f32(x, r, n);
      for (int i = 0; i < n; i++) {
        double d = x[i];
        float want = f == 0 ? (float)exp(d) : f == 1 ? (float)(1.0 / (1.0 + exp(-d))) : (float)tanh(d);
        if (isnan(want)) {
          assert_true(isnan(r[i]));
          continue;
        }
        assert_true(signbit(r[i]) == signbit(want));
        assert_true(isinf(r[i]) == isinf(want));
        if (ulps(r[i], want) > 1) fail_msg("f%d(%a) = %a, want %a", f, (double)x[i], (double)r[i], (double)want);
        exact += r[i] == want;
        total++;
      }
    }
  assert_true(exact >= total - total / 100000); /* nearly all correctly rounded */
  /* exact facts at the edges: overflow to infinity past ln(FLT_MAX), underflow to 0
   * below the smallest subnormal, signed zeros, tanh saturating and tiny arguments */
  const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, 88.7229f, -104.0f, 1e-30f, -1e-45f, 10.0f};
  const float we[] = {1, 1, INFINITY, 0, INFINITY, 0, 1, 1, (float)exp(10.0)};
  const float wt[] = {0.0f, -0.0f, 1, -1, 1, -1, 1e-30f, -1e-45f, 1};
  for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
    float e, t;
    kn_vm_exp_f32(&sp[i], &e, 1);
    kn_vm_tanh_f32(&sp[i], &t, 1);
    if (e != we[i] || t != wt[i] || signbit(t) != signbit(wt[i]))
      fail_msg("special %a: exp %a (want %a), tanh %a (want %a)", (double)sp[i], (double)e,
               (double)we[i], (double)t, (double)wt[i]);
  }
  float nan = NAN, e;
  kn_vm_exp_f32(&nan, &e, 1);
  assert_true(isnan(e));
  free(x);
  free(r);
}

/* Softmax rows on the CPU: each value within 1 ulp of exp(v - max) / sum in double, the
 * rows' sums 1, whatever the axis (parallel split over lines, scratch rows). */
static void softmax_matches_double_formula(void **state) {
  int64_t shape[2] = {300, 257};
  kn_tensor *a = kn_tensor_new(KN_FLOAT32, 2, shape), *o = NULL;
  float *x = a->data;
  for (int64_t i = 0; i < a->size; i++) x[i] = (float)((i * 7919) % 2001) / 20.0f - 50.0f;
  x[5] = -INFINITY;
  sg_error e = SG_ERROR_INIT;
  for (int axis = 0; axis < 2; axis++)
    for (int lg = 0; lg < 2; lg++) {
      assert_int_equal(kn_softmax(a, axis, lg, &o, &e), SG_OK);
      const float *r = o->data;
      int64_t len = shape[axis], inner = axis == 0 ? shape[1] : 1, lines = a->size / len;
      for (int64_t k = 0; k < lines; k++) {
        int64_t base = (k / inner) * len * inner + k % inner;
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < len; j++) m = fmax(m, x[base + j * inner]);
        for (int64_t j = 0; j < len; j++) s += exp(x[base + j * inner] - m);
        for (int64_t j = 0; j < len; j++) {
          double v = x[base + j * inner] - m;
          float want = (float)(lg ? v - log(s) : exp(v) / s);
          if (ulps(r[base + j * inner], want) > 1)
            fail_msg("axis %d log %d [%lld]: %a, want %a", axis, lg, (long long)(base + j * inner),
                     (double)r[base + j * inner], (double)want);
        }
      }
      kn_tensor_release(o);
    }
  kn_tensor_release(a);
}

/* Vector x matrix and matrix x vector (GEMV, no sgemm packing) with every transpose
 * flag, float32 and float64, against the product computed in long double: small
 * integers, so every order of summation is exact. Sizes: one GEMV OpenBLAS runs
 * serially, and middle sizes the kernel splits into chunks of outputs on the calling
 * thread (cpu_matmul.c), with a last chunk shorter than the others. */
static void gemv_shapes_match_naive(void **state) {
  (void)state;
  sg_error e = SG_ERROR_INIT;
  static const kn_dtype dts[] = {KN_FLOAT32, KN_FLOAT64};
  static const int64_t sizes[][3] = {{37, 29, 41}, {300, 41, 150}, {150, 200, 300}, {20, 1000, 20}};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
  for (size_t d = 0; d < 2; d++)
    for (int trans = 0; trans < 4; trans++)
      for (int vec_left = 0; vec_left < 2; vec_left++) {
        bool ta = trans & KN_MATMUL_TRANS_A, tb = trans & KN_MATMUL_TRANS_B;
        int64_t m = vec_left ? 1 : sizes[si][0], k = sizes[si][1], n = vec_left ? sizes[si][2] : 1;
        int64_t sa[2] = {ta ? k : m, ta ? m : k}, sb[2] = {tb ? n : k, tb ? k : n};
        kn_tensor *a = kn_tensor_new(dts[d], 2, sa), *b = kn_tensor_new(dts[d], 2, sb), *o;
        for (int64_t i = 0; i < a->size; i++) kn_set_f64(a, i, (double)((i * 7) % 13) - 6);
        for (int64_t i = 0; i < b->size; i++) kn_set_f64(b, i, (double)((i * 5) % 11) - 5);
        assert_int_equal(kn_matmul_t(a, b, trans, &o, &e), SG_OK);
        assert_int_equal(o->shape[0], m);
        assert_int_equal(o->shape[1], n);
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++) {
            double want = 0;
            for (int64_t q = 0; q < k; q++)
              want += kn_get_f64(a, ta ? q * m + i : i * k + q) * kn_get_f64(b, tb ? j * k + q : q * n + j);
            assert_true(kn_get_f64(o, i * n + j) == want);
          }
        kn_tensor_release(a), kn_tensor_release(b), kn_tensor_release(o);
      }
  sg_error_clear(&e);
}

/* Random float32 chains through kn_fused_f32 against the same ops one by one through
 * kn_binary / kn_unary (scalars as 0-d tensors, as the executor passes them; a bias
 * row b and a column broadcast over the [rows, cols] inputs): the same bits, on sizes
 * around the block and across the parallel threshold, with rows that wrap inside a
 * block (copied) and rows longer than one (read in place). */
static void fused_chains_match_unfused(void **state) {
  (void)state;
  static const int bin[] = {KN_ADD, KN_SUB, KN_MUL, KN_DIV, KN_MAXIMUM, KN_MINIMUM};
  static const int un[] = {KN_NEG, KN_ABS, KN_EXP, KN_LOG, KN_SQRT, KN_TANH,
                           KN_SIGMOID, KN_RELU, KN_SIN, KN_COS};
  static const int64_t shapes[][2] = {{1, 1}, {33, 31}, {25, 41}, {35, 2000}, {70001, 1}};
  sg_error e = SG_ERROR_INIT;
  uint64_t seed = 42;
  for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
    for (int trial = 0; trial < 6; trial++) {
      int64_t n = shapes[si][0] * shapes[si][1], cols = shapes[si][1];
      kn_tensor *x = kn_tensor_new(KN_FLOAT32, 2, shapes[si]), *y = kn_tensor_new(KN_FLOAT32, 2, shapes[si]);
      kn_tensor *b = kn_tensor_new(KN_FLOAT32, 1, &cols);
      int64_t col_shape[2] = {shapes[si][0], 1};
      kn_tensor *col = kn_tensor_new(KN_FLOAT32, 2, col_shape);
      for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        ((float *)x->data)[i] = (float)((int64_t)(seed >> 40) - (1 << 23)) / (float)(1 << 20);
        ((float *)y->data)[i] = (float)((int64_t)(seed >> 20 & 0xfffff) - (1 << 19)) / (float)(1 << 17);
        if (i < cols) ((float *)b->data)[i] = (float)((int64_t)(seed >> 30 & 0xffff) - (1 << 15)) / 4096.0f;
        if (i < col_shape[0]) ((float *)col->data)[i] = (float)((int64_t)(seed >> 44 & 0xfff) - 2048) / 512.0f;
      }
      kn_fused_input ins[2 * 12 + 4] = {
          {x->data, 0, 0, 0}, {y->data, 0, 0, 0}, {b->data, 0, cols, 1}, {col->data, 0, col_shape[0], cols}};
      int nin = 4;
      kn_fused_step steps[12];
      int nsteps = 3 + (int)(seed % 9);
      kn_tensor *cur = kn_tensor_retain(x);
      for (int s = 0; s < nsteps; s++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        kn_tensor *next;
        if ((seed >> 33) % 3 == 0) {
          int op = un[(seed >> 40) % 10];
          steps[s] = (kn_fused_step){.unary = true, .op = op, .a = s ? -1 : 0, .b = -1};
          assert_int_equal(kn_unary((kn_unop)op, cur, &next, &e), SG_OK);
        } else {
          int op = bin[(seed >> 40) % 6], which = (int)((seed >> 50) % 5);
          kn_tensor *other;
          int oi;
          if (which == 0) { /* a scalar */
            float v = (float)((int)(seed >> 20 & 63) - 31) / 4.0f;
            other = kn_tensor_scalar_f64(KN_FLOAT32, v);
            ins[nin] = (kn_fused_input){NULL, v, 0, 0};
            oi = nin++;
          } else {
            other = kn_tensor_retain(which == 1 ? y : which == 2 ? x : which == 3 ? b : col);
            oi = which == 1 ? 1 : which == 2 ? 0 : which == 3 ? 2 : 3;
          }
          bool swap = (seed >> 60) & 1;
          steps[s] = (kn_fused_step){.unary = false, .op = op, .a = swap ? oi : (s ? -1 : 0),
                                     .b = swap ? (s ? -1 : 0) : oi};
          assert_int_equal(kn_binary((kn_binop)op, swap ? other : cur, swap ? cur : other, &next, &e), SG_OK);
          kn_tensor_release(other);
        }
        kn_tensor_release(cur);
        cur = next;
      }
      assert_int_equal(cur->size, n);
      float *got = malloc((size_t)n * sizeof(float));
      kn_fused_f32(steps, nsteps, ins, got, n);
      assert_memory_equal(got, cur->data, (size_t)n * sizeof(float));
      free(got);
      kn_tensor_release(cur), kn_tensor_release(x), kn_tensor_release(y), kn_tensor_release(b);
      kn_tensor_release(col);
    }
  sg_error_clear(&e);
}

/* The buffer pool: a released buffer serves the next tensor of its size class, small
 * ones bypass it, one larger than a quarter of the bound is not kept, trim empties it,
 * and pooled tensors made by kn_tensor_new are zeroed again. */
static void pool_reuses_within_bound(void **state) {
  (void)state;
  kn_pool_trim();
  int64_t n = 100000; /* 400 kB */
  kn_tensor *t = kn_tensor_new(KN_FLOAT32, 1, &n);
  void *first = t->data;
  ((float *)t->data)[5] = 3.0f;
  kn_tensor_release(t);
  kn_pool_stats s0 = kn_pool_get_stats();
  assert_int_equal(s0.cached_buffers, 1);
  int64_t n2 = 99000; /* the same class (within a quarter) */
  t = kn_tensor_new(KN_FLOAT32, 1, &n2);
  kn_pool_stats s1 = kn_pool_get_stats();
  assert_ptr_equal(t->data, first);
  assert_int_equal(s1.hits, s0.hits + 1);
  assert_int_equal(s1.cached_buffers, 0);
  assert_true(((float *)t->data)[5] == 0.0f); /* kn_tensor_new zeroes */
  kn_tensor_release(t);
  int64_t small = 10;
  t = kn_tensor_new(KN_FLOAT32, 1, &small);
  kn_tensor_release(t);
  assert_int_equal(kn_pool_get_stats().cached_buffers, 1); /* below KN_POOL_MIN: not kept */
  int64_t big = (int64_t)(s1.bound_bytes / 4 / 4) + 1024; /* more than a quarter of the bound */
  t = kn_tensor_empty(KN_FLOAT32, 1, &big);
  kn_tensor_release(t);
  assert_int_equal(kn_pool_get_stats().cached_buffers, 1);
  kn_pool_trim();
  kn_pool_stats s2 = kn_pool_get_stats();
  assert_int_equal(s2.cached_buffers, 0);
  assert_int_equal(s2.cached_bytes, 0);
  assert_true(s2.trims > s1.trims);
}

int main(void) {
  /* four chunks per loop even on a 2-core machine, so the pool has several workers */
  setenv("STAGD_CPU_THREADS", "4", 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(float16_round_trip),
      cmocka_unit_test(promotion_and_broadcast),
      cmocka_unit_test(blocked_sgemm_matches_naive),
      cmocka_unit_test(matmul_transposed_operands), cmocka_unit_test(errors_and_limits),
      cmocka_unit_test(error_families_set_their_reason),
      cmocka_unit_test(parallel_unary_and_reductions),
      cmocka_unit_test(fill_every_dtype),
      cmocka_unit_test(transposes_match_indexing),
      cmocka_unit_test(where_runs_match_elementwise),
      cmocka_unit_test(broadcast_runs_match_elementwise),
      cmocka_unit_test(axis_reductions_match_sequential),
      cmocka_unit_test(reshape_is_a_view),
      cmocka_unit_test(slice_views_and_updates),
      cmocka_unit_test(vmath_within_one_ulp),
      cmocka_unit_test(softmax_matches_double_formula),
      cmocka_unit_test(parallel_loops_from_threads),
      cmocka_unit_test(gemv_shapes_match_naive),
      cmocka_unit_test(fused_chains_match_unfused),
      cmocka_unit_test(pool_reuses_within_bound),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
