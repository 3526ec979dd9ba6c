// SPDX-License-Identifier: Apache-2.0
/*
 * test_vulkan_cast.c — the cast kernels (cast.comp) against the CPU's conversions
 * (kn_f16_to_f32, kn_f32_to_f16, kn_cast) bit for bit: every one of the 65536 halves to
 * float32 and back, float32 values on and between halves (ties round to even,
 * subnormals, overflow to infinity, NaN), float16 to and from every other dtype, floats
 * to integers where SPIR-V leaves it undefined (NaN, infinities, out of range);
 * the float16 elementwise kernels (binary_f16, unary_f16, compare_f16, which share
 * cast.comp's conversions: half.glsl) on every half against float32 arithmetic rounded
 * by kn_f32_to_f16; element types and sizes without a kernel refused.
 */
#include <stdbool.h>
#include "kn.h"
#include "vk_test_util.h"

/* Runs kn_vk_cast(from → to) on n elements held in `in` (n * kn_vk_elem_size(from)
 * bytes); returns the result's bytes (n * kn_vk_elem_size(to)). */
static void *device_cast(kn_vk_context *ctx, kn_vk_elem from, kn_vk_elem to, const void *in,
                         int64_t n) {
  kn_vk_buffer *a, *c;
  uint64_t ib = kn_vk_elem_bytes(from, n), ob = kn_vk_elem_bytes(to, n);
  VT_OK(kn_vk_buffer_create(ctx, ib, &a, err));
  VT_OK(kn_vk_buffer_create(ctx, ob, &c, err));
  VT_OK(kn_vk_upload(ctx, a, 0, in, (uint64_t)n * kn_vk_elem_size(from), err));
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  VT_OK(kn_vk_cast(bt, from, to, a, c, n, err));
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  void *out = malloc(ob);
  VT_OK(kn_vk_download(ctx, c, 0, out, (uint64_t)n * kn_vk_elem_size(to), err));
  kn_vk_buffer_destroy(a);
  kn_vk_buffer_destroy(c);
  return out;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static void f16_to_f32_all_halves(void **state) {
  uint16_t *h = malloc(65536 * 2);
  for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  uint32_t *got = device_cast(*state, KN_VK_F16, KN_VK_F32, h, 65536);
  for (uint32_t i = 0; i < 65536; i++)
    if (got[i] != f32_bits(kn_f16_to_f32((uint16_t)i)))
      fail_msg("half 0x%04x: got float bits 0x%08x, want 0x%08x", i, got[i],
               f32_bits(kn_f16_to_f32((uint16_t)i)));
  free(got);
  free(h);
}

static void f32_to_f16_rounding(void **state) {
  /* each half's value, the exact midpoint above it (a tie), just below and above the
   * midpoint, and a sweep over float32 bit patterns */
  enum { PER = 4, N = 65536 * PER + 65536 };
  uint32_t *in = malloc((size_t)N * 4);
  for (uint32_t i = 0; i < 65536; i++) {
    uint32_t v = f32_bits(kn_f16_to_f32((uint16_t)i));
    in[i * PER] = v;
    in[i * PER + 1] = v + 0x1000;
    in[i * PER + 2] = v + 0xfff;
    in[i * PER + 3] = v + 0x1001;
    in[65536 * PER + i] = i * 65537u + 12345u;
  }
  uint16_t *got = device_cast(*state, KN_VK_F32, KN_VK_F16, in, N);
  for (int64_t i = 0; i < N; i++) {
    float f;
    memcpy(&f, &in[i], 4);
    if (got[i] != kn_f32_to_f16(f))
      fail_msg("float bits 0x%08x: got half 0x%04x, want 0x%04x", in[i], got[i],
               kn_f32_to_f16(f));
  }
  free(got);
  free(in);
}

static const struct {
  kn_vk_elem e;
  kn_dtype dt;
} types[] = {{KN_VK_BOOL, KN_BOOL}, {KN_VK_I32, KN_INT32}, {KN_VK_I64, KN_INT64},
             {KN_VK_F32, KN_FLOAT32}, {KN_VK_F64, KN_FLOAT64}};

/* float16 → every dtype for every half against kn_cast (infinities and NaN to integers
 * too: 0 and saturated, as on the CPU). */
static void f16_to_every_dtype(void **state) {
  int64_t shape[1] = {65536};
  kn_tensor *h = kn_tensor_new(KN_FLOAT16, 1, shape);
  for (uint32_t i = 0; i < 65536; i++) ((uint16_t *)h->data)[i] = (uint16_t)i;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    kn_tensor *want = kn_cast(h, types[t].dt);
    unsigned char *got = device_cast(*state, KN_VK_F16, types[t].e, h->data, 65536);
    size_t es = kn_dtype_size(types[t].dt);
    for (uint32_t i = 0; i < 65536; i++) {
      bool finite = ((i >> 10) & 0x1f) != 0x1f;
      bool nan = !finite && (i & 0x3ff);
      if (nan && kn_dtype_is_float(types[t].dt)) {
        /* kn_cast goes through double, which quiets a signalling NaN; the kernel keeps
         * the payload like kn_f16_to_f32 (checked above) and NumPy: same NaN, same sign */
        double g = types[t].dt == KN_FLOAT32 ? (double)((float *)(void *)got)[i]
                                             : ((double *)(void *)got)[i];
        if (!isnan(g) || signbit(g) != signbit(kn_get_f64(want, i)))
          fail_msg("half 0x%04x → %s is not the same NaN", i, kn_dtype_name(types[t].dt));
        continue;
      }
      if (memcmp(got + i * es, (unsigned char *)want->data + i * es, es))
        fail_msg("half 0x%04x → %s differs from the CPU", i, kn_dtype_name(types[t].dt));
    }
    free(got);
    kn_tensor_release(want);
  }
  kn_tensor_release(h);
}

/* float32 and float64 → int32 and int64 where SPIR-V leaves the conversion undefined
 * (NaN, infinities, beyond the integer's range) and around it: the CPU's values
 * (kernels/tensor.c f2i: NaN → 0, saturated at int64, int32 the low 32 bits) bit for
 * bit, so both backends agree on every input. */
static void float_to_int_everywhere(void **state) {
  const double vals[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 2.7, -2.7, 2147483647.0, 2147483648.0,
                         -2147483648.0, -2147483649.0, 3e9, -3e9, 4294967296.5, 1e18, 9.2233720368547758e18,
                         -9.2233720368547758e18, 1e19, -1e19, 1e300, -1e300, 123456789.9};
  int64_t n = sizeof vals / sizeof vals[0], shape[1] = {n};
  const struct { kn_vk_elem e; kn_dtype dt; } srcs[] = {{KN_VK_F32, KN_FLOAT32}, {KN_VK_F64, KN_FLOAT64}},
                                            dsts[] = {{KN_VK_I32, KN_INT32}, {KN_VK_I64, KN_INT64}};
  for (int s = 0; s < 2; s++) {
    kn_tensor *a = kn_tensor_new(srcs[s].dt, 1, shape);
    for (int64_t i = 0; i < n; i++) kn_set_f64(a, i, vals[i]);
    for (int d = 0; d < 2; d++) {
      kn_tensor *want = kn_cast(a, dsts[d].dt);
      unsigned char *got = device_cast(*state, srcs[s].e, dsts[d].e, a->data, n);
      size_t es = kn_dtype_size(dsts[d].dt);
      for (int64_t i = 0; i < n; i++)
        if (memcmp(got + i * es, (unsigned char *)want->data + i * es, es))
          fail_msg("%s %.17g → %s: device %lld, CPU %lld", kn_dtype_name(srcs[s].dt), kn_get_f64(a, i),
                   kn_dtype_name(dsts[d].dt),
                   (long long)(es == 4 ? *(int32_t *)(void *)(got + i * es) : *(int64_t *)(void *)(got + i * es)),
                   (long long)kn_get_i64(want, i));
      free(got);
      kn_tensor_release(want);
    }
    kn_tensor_release(a);
  }
}

/* every dtype → float16 against kn_cast: values on, between and beyond halves. */
static void every_dtype_to_f16(void **state) {
  enum { N = 200003 };
  int64_t shape[1] = {N};
  kn_tensor *src = kn_tensor_new(KN_FLOAT64, 1, shape);
  for (int64_t i = 0; i < N; i++) {
    double v = (double)vt_randf(-70000.0f, 70000.0f) / (i % 7 == 0 ? 1e6 : 1.0);
    if (i % 11 == 0) v = (double)(i % 4096) - 2048 + 0.5; /* ties after int truncation */
    if (i % 101 == 0) v = 1e300 * (i % 2 ? 1 : -1);
    if (i == 5) v = NAN;
    ((double *)src->data)[i] = v;
  }
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    kn_tensor *in = kn_cast(src, types[t].dt);
    kn_tensor *want = kn_cast(in, KN_FLOAT16);
    uint16_t *got = device_cast(*state, types[t].e, KN_VK_F16, in->data, N);
    for (int64_t i = 0; i < N; i++) {
      if (got[i] != ((uint16_t *)want->data)[i])
        fail_msg("%s element %lld (%.17g): got half 0x%04x, want 0x%04x",
                 kn_dtype_name(types[t].dt), (long long)i, kn_get_f64(in, i), got[i],
                 ((uint16_t *)want->data)[i]);
    }
    free(got);
    kn_tensor_release(want);
    kn_tensor_release(in);
  }
  kn_tensor_release(src);
}

/* a device buffer holding the n halves of h */
static kn_vk_buffer *halves_buffer(kn_vk_context *ctx, const uint16_t *h, int64_t n) {
  kn_vk_buffer *b;
  VT_OK(kn_vk_buffer_create(ctx, kn_vk_elem_bytes(KN_VK_F16, n), &b, err));
  VT_OK(kn_vk_upload(ctx, b, 0, h, (uint64_t)n * 2, err));
  return b;
}

/* the result's bits as NumPy's float16 ufuncs give them (float32 arithmetic, rounded);
 * NaNs compare as NaN whatever their sign */
static void expect_half(const char *what, uint16_t x, uint16_t got, float want) {
  uint16_t w = kn_f32_to_f16(want);
  if (got != w && !(isnan(want) && isnan(kn_f16_to_f32(got))))
    fail_msg("%s of half 0x%04x: got 0x%04x, want 0x%04x", what, x, got, w);
}

/* every half (an even count) and its first 4095 (an odd count: the last word's high
 * half is padding) through binary_f16 against a 0-d operand, unary_f16 and
 * compare_f16 */
static void f16_elementwise_all_halves(void **state) {
  kn_vk_context *ctx = *state;
  enum { N = 65536 };
  uint16_t *h = malloc(N * 2), *got = malloc(N * 2), k = kn_f32_to_f16(-1.75f);
  for (uint32_t i = 0; i < N; i++) h[i] = (uint16_t)i;
  kn_vk_buffer *a = halves_buffer(ctx, h, N), *b = halves_buffer(ctx, &k, 1), *c;
  VT_OK(kn_vk_buffer_create(ctx, kn_vk_elem_bytes(KN_VK_F16, N), &c, err));
  const float y = kn_f16_to_f32(k);
  static const kn_vk_binop binops[] = {KN_VK_ADD, KN_VK_MUL, KN_VK_DIV, KN_VK_MAXIMUM};
  for (int n = N; n >= 4095; n = n == N ? 4095 : 0) {
    kn_vk_shape as = {.ndim = 1, .dims = {n}}, bs = {.ndim = 0};
    for (size_t o = 0; o < sizeof binops / sizeof *binops; o++) {
      kn_vk_batch *bt;
      VT_OK(kn_vk_batch_begin(ctx, &bt, err));
      VT_OK(kn_vk_binary_typed(bt, KN_VK_F16, binops[o], a, &as, b, &bs, c, err));
      VT_OK(kn_vk_batch_submit(bt, 0, err));
      VT_OK(kn_vk_download(ctx, c, 0, got, kn_vk_elem_bytes(KN_VK_F16, n), err));
      for (int i = 0; i < n; i++) {
        float x = kn_f16_to_f32(h[i]);
        float want = binops[o] == KN_VK_ADD   ? x + y
                     : binops[o] == KN_VK_MUL ? x * y
                     : binops[o] == KN_VK_DIV ? x / y
                                              : (isnan(x) ? x : fmaxf(x, y));
        expect_half("binary_f16", h[i], got[i], want);
      }
      if (n % 2) assert_int_equal(got[n], 0); /* the padding half */
    }
    kn_vk_batch *bt;
    VT_OK(kn_vk_batch_begin(ctx, &bt, err));
    VT_OK(kn_vk_unary_typed(bt, KN_VK_F16, KN_VK_SQRT, a, c, n, err));
    VT_OK(kn_vk_batch_submit(bt, 0, err));
    VT_OK(kn_vk_download(ctx, c, 0, got, (uint64_t)n * 2, err));
    for (int i = 0; i < n; i++)
      expect_half("unary_f16 sqrt", h[i], got[i], sqrtf(kn_f16_to_f32(h[i])));
  }
  /* compare_f16: x < -1.75 as bools */
  unsigned char *lt = malloc(N);
  kn_vk_shape as = {.ndim = 1, .dims = {N}}, bs = {.ndim = 0};
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  VT_OK(kn_vk_compare(bt, KN_VK_F16, KN_VK_LT, a, &as, b, &bs, c, err));
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  VT_OK(kn_vk_download(ctx, c, 0, lt, N, err));
  for (uint32_t i = 0; i < N; i++)
    if (lt[i] != (kn_f16_to_f32((uint16_t)i) < y))
      fail_msg("compare_f16: half 0x%04x < -1.75 gave %d", i, lt[i]);
  free(lt);
  free(h);
  free(got);
  kn_vk_buffer_destroy(a);
  kn_vk_buffer_destroy(b);
  kn_vk_buffer_destroy(c);
}

/* a float16 result needs whole 32-bit words: 5 halves in 8 bytes are refused */
static void f16_result_buffer_too_small(void **state) {
  kn_vk_context *ctx = *state;
  kn_vk_buffer *a, *c;
  VT_OK(kn_vk_buffer_create(ctx, 12, &a, err));
  VT_OK(kn_vk_buffer_create(ctx, 8, &c, err));
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  kn_vk_shape s = {.ndim = 1, .dims = {5}};
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_vk_binary_typed(bt, KN_VK_F16, KN_VK_ADD, a, &s, a, &s, c, &e),
                   SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "result buffer holds 8 bytes"));
  sg_error_clear(&e);
  assert_int_equal(kn_vk_unary_typed(bt, KN_VK_F16, KN_VK_NEG, a, c, 5, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "result"));
  sg_error_clear(&e);
  kn_vk_batch_discard(bt);
  kn_vk_buffer_destroy(a);
  kn_vk_buffer_destroy(c);
}

/* element types and sizes without a kernel are refused with SG_UNIMPLEMENTED */
static void bad_element_types_refused(void **state) {
  kn_vk_context *ctx = *state;
  kn_vk_buffer *a, *c;
  VT_OK(kn_vk_buffer_create(ctx, 64, &a, err));
  VT_OK(kn_vk_buffer_create(ctx, 64, &c, err));
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_vk_cast(bt, (kn_vk_elem)(KN_VK_F16 + 1), KN_VK_F32, a, c, 4, &e),
                   SG_UNIMPLEMENTED);
  sg_error_clear(&e);
  kn_vk_shape s = {.ndim = 1, .dims = {4}};
  int64_t st[1] = {1};
  assert_int_equal(kn_vk_copy_strided(bt, a, &s, 0, st, c, 0, st, 3, &e), SG_UNIMPLEMENTED);
  assert_non_null(strstr(e.message, "3-byte"));
  sg_error_clear(&e);
  assert_int_equal(kn_vk_where(bt, a, &s, a, &s, a, &s, 16, c, &e), SG_UNIMPLEMENTED);
  sg_error_clear(&e);
  kn_vk_batch_discard(bt);
  kn_vk_buffer_destroy(a);
  kn_vk_buffer_destroy(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(f16_to_f32_all_halves),
      cmocka_unit_test(f32_to_f16_rounding),
      cmocka_unit_test(f16_to_every_dtype),
      cmocka_unit_test(every_dtype_to_f16),
      cmocka_unit_test(float_to_int_everywhere),
      cmocka_unit_test(f16_elementwise_all_halves),
      cmocka_unit_test(f16_result_buffer_too_small),
      cmocka_unit_test(bad_element_types_refused),
  };
  return cmocka_run_group_tests(tests, vt_setup, vt_teardown);
}
