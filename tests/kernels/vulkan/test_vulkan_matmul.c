// SPDX-License-Identifier: Apache-2.0
/*
 * test_vulkan_matmul.c — the matmul variants (tiled, subgroup, cooperative matrix,
 * blocked: its 4-vector path where K and N are multiples of 4, the element path else) on
 * the first Vulkan device against the CPU backend's kn_matmul: every variant the device
 * offers, forced through kn_vk_options.matmul_variant, for every element type it runs
 * (float32, float64, int32, int64, float16) over odd sizes, k = 0, n = 1, m = 1, long k
 * and batches with a broadcast operand, each with A, B, both or neither stored transposed
 * (kn_vk_matmul_trans; the coop variant runs the tiled kernel then); a
 * variant the device lacks must be refused with its reason. Also the selection policy on
 * described devices and STAGD_VK_MATMUL, and the float32 kernels with an elementwise
 * epilogue (kn_vk_matmul_epilogue) against the product and kn_vk_fused_f32 as two
 * kernels, bit for bit, with their limits refused.
 */
#include "vk_test_util.h"

#include "kn.h"

static const struct {
  kn_vk_elem et;
  kn_dtype dt;
  const char *name;
} DTYPES[] = {{KN_VK_F32, KN_FLOAT32, "float32"}, {KN_VK_F64, KN_FLOAT64, "float64"},
              {KN_VK_I32, KN_INT32, "int32"},     {KN_VK_I64, KN_INT64, "int64"},
              {KN_VK_F16, KN_FLOAT16, "float16"}};
#define NDTYPES (sizeof DTYPES / sizeof *DTYPES)

/* {batch_a, batch_b, m, n, k}: batch 0 = a 2-D operand (broadcast over the other's batch) */
static const int64_t SHAPES[][5] = {
    {0, 0, 1, 1, 1},    {0, 0, 7, 7, 7},     {0, 0, 65, 63, 33}, {0, 0, 129, 1, 200},
    {0, 0, 1, 129, 7},  {0, 0, 5, 3, 0},     {0, 0, 0, 5, 5},    {0, 0, 3, 4, 300},
    {0, 0, 70, 2, 517}, {0, 3, 5, 70, 33},   {3, 0, 17, 1, 90},  {2, 2, 33, 31, 65},
    /* K and N multiples of 4 (the blocked kernel's 4-vector loads): partial 128x128
     * blocks in both directions, K not a multiple of the K step, batched operands */
    {0, 0, 130, 132, 36}, {0, 2, 64, 256, 20}, {2, 0, 129, 8, 12}, {2, 2, 200, 136, 4},
    /* multiples of 8 (the float16 cooperative-matrix kernel's 8-half vectors): several
     * K steps of 32 and a partial one, a broadcast left operand */
    {0, 0, 136, 264, 104}, {2, 0, 72, 16, 24},
};

static kn_tensor *random_tensor(kn_dtype dt, int ndim, const int64_t *shape) {
  kn_tensor *t = kn_tensor_new(dt, ndim, shape);
  for (int64_t i = 0; i < t->size; i++) {
    if (dt == KN_INT32 || dt == KN_INT64)
      kn_set_i64(t, i, (int64_t)vt_randf(-4, 4));
    else
      kn_set_f64(t, i, vt_randf(-1, 1));
  }
  return t;
}

static kn_vk_buffer *upload(kn_vk_context *ctx, const kn_tensor *t) {
  kn_vk_buffer *b;
  uint64_t bytes = (uint64_t)t->size * kn_dtype_size(t->dtype);
  VT_OK(kn_vk_buffer_create(ctx, bytes, &b, err));
  VT_OK(kn_vk_upload(ctx, b, 0, t->data, bytes, err));
  return b;
}

/* got vs the CPU's want: exact for integers; floats within the dtype's tolerance,
 * scaled by k for the float32 / float16 accumulation order. */
static void expect_matches(const kn_tensor *got, const kn_tensor *want, int64_t k,
                           const char *what) {
  assert_int_equal(got->size, want->size);
  double rtol = want->dtype == KN_FLOAT16 ? 2e-3 : want->dtype == KN_FLOAT32 ? 1e-5 : 1e-12;
  double atol = want->dtype == KN_FLOAT16   ? 1e-3 * (double)(k + 1)
                : want->dtype == KN_FLOAT32 ? 1e-6 * (double)(k + 1)
                                            : 1e-12 * (double)(k + 1);
  for (int64_t i = 0; i < want->size; i++) {
    if (want->dtype == KN_INT32 || want->dtype == KN_INT64) {
      if (kn_get_i64(got, i) != kn_get_i64(want, i))
        fail_msg("%s: element %lld is %lld, want %lld", what, (long long)i,
                 (long long)kn_get_i64(got, i), (long long)kn_get_i64(want, i));
      continue;
    }
    double g = kn_get_f64(got, i), w = kn_get_f64(want, i);
    if (!(fabs(g - w) <= atol + rtol * fabs(w)))
      fail_msg("%s: element %lld is %.9g, want %.9g", what, (long long)i, g, w);
  }
}

/* t with its last two axes swapped (a copy), when `swap`; else t retained. */
static kn_tensor *stored(kn_tensor *t, bool swap) {
  if (!swap) return kn_tensor_retain(t);
  int perm3[3] = {0, 2, 1}, perm2[2] = {1, 0};
  kn_tensor *r;
  VT_OK(kn_transpose(t, t->ndim == 3 ? perm3 : perm2, t->ndim, &r, err));
  return r;
}

/* One product through the context's (forced) variant, against kn_matmul: the operands
 * stored transposed as trans says (KN_VK_MATMUL_TRANS_A / _B). */
static void check_product(kn_vk_context *ctx, kn_dtype dt, kn_vk_elem et, const int64_t *s,
                          const char *label, int trans) {
  int64_t ba = s[0], bb = s[1], m = s[2], n = s[3], k = s[4];
  int64_t batch = ba > bb ? ba : bb;
  int64_t sha[3] = {ba, m, k}, shb[3] = {bb, k, n};
  kn_tensor *a = random_tensor(dt, ba ? 3 : 2, ba ? sha : sha + 1);
  kn_tensor *b = random_tensor(dt, bb ? 3 : 2, bb ? shb : shb + 1);
  kn_tensor *want;
  VT_OK(kn_matmul(a, b, &want, err));
  kn_tensor *sa = stored(a, trans & KN_VK_MATMUL_TRANS_A), *sb = stored(b, trans & KN_VK_MATMUL_TRANS_B);
  kn_vk_buffer *bufa = upload(ctx, sa), *bufb = upload(ctx, sb), *bufc;
  kn_tensor_release(sa);
  kn_tensor_release(sb);
  /* garbage in the output proves every element (k == 0 included) is written */
  kn_tensor *junk = random_tensor(dt, want->ndim, want->shape);
  bufc = upload(ctx, junk);
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  VT_OK(kn_vk_matmul_trans(bt, et, trans, bufa, bufb, bufc, batch ? batch : 1, m, n, k,
                           ba ? m * k : 0, bb ? k * n : 0, err));
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  VT_OK(kn_vk_download(ctx, bufc, 0, junk->data, (uint64_t)junk->size * kn_dtype_size(dt), err));
  char what[160];
  static const char *const tnames[] = {"", " A^T", " B^T", " A^T B^T"};
  snprintf(what, sizeof what, "%s%s %s batch %lld/%lld %lldx%lldx%lld", label, tnames[trans & 3],
           kn_dtype_name(dt), (long long)ba, (long long)bb, (long long)m, (long long)n,
           (long long)k);
  expect_matches(junk, want, k, what);
  kn_tensor_release(a);
  kn_tensor_release(b);
  kn_tensor_release(want);
  kn_tensor_release(junk);
  kn_vk_buffer_destroy(bufa);
  kn_vk_buffer_destroy(bufb);
  kn_vk_buffer_destroy(bufc);
}

static kn_vk_context *open_with(kn_vk_matmul_variant v) {
  kn_vk_options opts = {.pipeline_cache_dir = "", .matmul_variant = v};
  kn_vk_context *ctx;
  VT_OK(kn_vk_context_create(0, &opts, &ctx, err));
  return ctx;
}

/* Each variant the device offers, each dtype it runs, every shape; the rest refused. */
static void each_variant_vs_cpu(kn_vk_matmul_variant v) {
  kn_vk_context *ctx = open_with(v);
  assert_int_equal(kn_vk_context_matmul_variant(ctx), v);
  const kn_vk_device_info *info = kn_vk_context_info(ctx);
  int ran = 0;
  for (size_t d = 0; d < NDTYPES; d++) {
    const char *why = NULL;
    if (kn_vk_matmul_available(info, DTYPES[d].et, v, &why)) {
      /* coop runs the tiled kernel for transposed operands: one case of it */
      int step = v == KN_VK_MATMUL_COOP ? 3 : 1;
      for (int trans = 0; trans < 4; trans += step)
        for (size_t s = 0; s < sizeof SHAPES / sizeof *SHAPES; s++)
          check_product(ctx, DTYPES[d].dt, DTYPES[d].et, SHAPES[s], kn_vk_matmul_variant_name(v),
                        trans);
      ran++;
      continue;
    }
    assert_non_null(why);
    if (!kn_vk_elem_supported(ctx, DTYPES[d].et))
      continue; /* the launcher refuses the dtype itself (SG_UNIMPLEMENTED) */
    /* forced but unavailable: a clear error naming the variant and the reason */
    kn_vk_buffer *buf;
    VT_OK(kn_vk_buffer_create(ctx, 64, &buf, err));
    kn_vk_batch *bt;
    VT_OK(kn_vk_batch_begin(ctx, &bt, err));
    sg_error e = SG_ERROR_INIT;
    assert_int_equal(kn_vk_matmul_typed(bt, DTYPES[d].et, buf, buf, buf, 1, 2, 2, 2, 0, 0, &e),
                     SG_FAILED_PRECONDITION);
    assert_non_null(strstr(e.message, kn_vk_matmul_variant_name(v)));
    assert_non_null(strstr(e.message, why));
    sg_error_clear(&e);
    kn_vk_batch_discard(bt);
    kn_vk_buffer_destroy(buf);
  }
  printf("matmul variant %s: %d dtype(s) checked against the CPU backend\n",
         kn_vk_matmul_variant_name(v), ran);
  if (v == KN_VK_MATMUL_TILED)
    assert_true(ran >= 2); /* float32 and int32 run everywhere */
  kn_vk_context_destroy(ctx);
}

static void tiled_vs_cpu(void **state) {
  (void)state;
  each_variant_vs_cpu(KN_VK_MATMUL_TILED);
}
static void subgroup_vs_cpu(void **state) {
  (void)state;
  each_variant_vs_cpu(KN_VK_MATMUL_SUBGROUP);
}
static void coop_vs_cpu(void **state) {
  (void)state;
  each_variant_vs_cpu(KN_VK_MATMUL_COOP);
}
static void blocked_vs_cpu(void **state) {
  (void)state;
  each_variant_vs_cpu(KN_VK_MATMUL_BLOCKED);
  /* every K step the option takes */
  static const uint32_t steps[] = {4, 8};
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    kn_vk_options opts = {.pipeline_cache_dir = "", .matmul_variant = KN_VK_MATMUL_BLOCKED,
                          .matmul_bk = steps[i]};
    kn_vk_context *ctx;
    VT_OK(kn_vk_context_create(0, &opts, &ctx, err));
    if (kn_vk_matmul_available(kn_vk_context_info(ctx), KN_VK_F32, KN_VK_MATMUL_BLOCKED, NULL))
      for (int trans = 0; trans < 4; trans += 3)
        for (size_t s = 0; s < sizeof SHAPES / sizeof *SHAPES; s++)
          check_product(ctx, KN_FLOAT32, KN_VK_F32, SHAPES[s],
                        steps[i] == 4 ? "blocked bk 4" : "blocked bk 8", trans);
    kn_vk_context_destroy(ctx);
  }
}

/* The auto choice on this device, shape by shape, against the CPU too. */
static void auto_vs_cpu(void **state) {
  (void)state;
  kn_vk_context *ctx = open_with(KN_VK_MATMUL_AUTO);
  for (size_t d = 0; d < NDTYPES; d++)
    if (kn_vk_elem_supported(ctx, DTYPES[d].et))
      for (int trans = 0; trans < 4; trans += 3) /* each variant ran every flag above */
        for (size_t s = 0; s < sizeof SHAPES / sizeof *SHAPES; s++)
          check_product(ctx, DTYPES[d].dt, DTYPES[d].et, SHAPES[s], "auto", trans);
  kn_vk_context_destroy(ctx);
}

/* The selection policy on described devices (this machine has only lavapipe). */
static void choice_policy(void **state) {
  (void)state;
  kn_vk_matmul_shape square = {1, 512, 512, 512}, matvec = {1, 512, 1, 4096},
                     short_k = {1, 512, 2, 16};
  kn_vk_device_info plain = {.max_workgroup_invocations = 1024};
  kn_vk_device_info sub = {.subgroup_arithmetic = true, .subgroup_size = 32,
                           .max_workgroup_invocations = 1024, .float16 = true};
  kn_vk_device_info gpu = sub;
  gpu.cooperative_matrix = gpu.cooperative_matrix_f16 = true;
  gpu.max_shared_memory_bytes = 49152; /* NVIDIA's */
  kn_vk_device_info khr_only = sub;
  khr_only.cooperative_matrix = true;
  kn_vk_device_info f32coop = gpu;
  f32coop.cooperative_matrix_f32 = true;

  kn_vk_matmul_plan p = kn_vk_matmul_choice(&square, KN_VK_F32, &plain, KN_VK_MATMUL_AUTO);
  assert_int_equal(p.variant, KN_VK_MATMUL_TILED);
  assert_string_equal(p.kernel, "matmul");
  assert_non_null(strstr(p.reason, "no cooperative matrix"));
  /* skinny: subgroup where offered, tiled otherwise or when k is short */
  p = kn_vk_matmul_choice(&matvec, KN_VK_F32, &sub, KN_VK_MATMUL_AUTO);
  assert_string_equal(p.kernel, "matmul_subgroup");
  assert_non_null(strstr(p.reason, "skinny"));
  const kn_vk_matmul_variant AUTO = KN_VK_MATMUL_AUTO;
  assert_string_equal(kn_vk_matmul_choice(&matvec, KN_VK_F32, &plain, AUTO).kernel, "matmul");
  assert_string_equal(kn_vk_matmul_choice(&short_k, KN_VK_F32, &sub, AUTO).kernel, "matmul");
  assert_string_equal(kn_vk_matmul_choice(NULL, KN_VK_F32, &sub, AUTO).kernel, "matmul");
  /* int64 subgroup sums need shaderSubgroupExtendedTypes */
  kn_vk_device_info sub64 = sub;
  sub64.int64 = true;
  assert_string_equal(kn_vk_matmul_choice(&matvec, KN_VK_I64, &sub64, AUTO).kernel, "matmul_i64");
  sub64.subgroup_extended_types = true;
  assert_string_equal(kn_vk_matmul_choice(&matvec, KN_VK_I64, &sub64, AUTO).kernel,
                      "matmul_subgroup_i64");
  /* cooperative matrix: float16 only; float32 is never rounded to float16 */
  p = kn_vk_matmul_choice(&square, KN_VK_F16, &gpu, KN_VK_MATMUL_AUTO);
  assert_string_equal(p.kernel, "matmul_coop");
  assert_int_equal(p.variant, KN_VK_MATMUL_COOP);
  p = kn_vk_matmul_choice(&square, KN_VK_F32, &f32coop, KN_VK_MATMUL_AUTO);
  assert_string_equal(p.kernel, "matmul");
  assert_non_null(strstr(p.reason, "float16 only"));
  p = kn_vk_matmul_choice(&square, KN_VK_F32, &gpu, KN_VK_MATMUL_AUTO);
  assert_string_equal(p.kernel, "matmul");
  assert_non_null(strstr(p.reason, "never rounded to float16"));
  p = kn_vk_matmul_choice(&square, KN_VK_F16, &khr_only, KN_VK_MATMUL_AUTO);
  assert_string_equal(p.kernel, "matmul_f16");
  assert_string_equal(kn_vk_matmul_choice(&matvec, KN_VK_F16, &gpu, AUTO).kernel,
                      "matmul_subgroup_f16");
  /* forced variants: used where available, else no kernel and the reason */
  p = kn_vk_matmul_choice(&square, KN_VK_F32, &sub, KN_VK_MATMUL_SUBGROUP);
  assert_string_equal(p.kernel, "matmul_subgroup");
  p = kn_vk_matmul_choice(&matvec, KN_VK_F32, &sub, KN_VK_MATMUL_TILED);
  assert_string_equal(p.kernel, "matmul");
  p = kn_vk_matmul_choice(&square, KN_VK_F32, &gpu, KN_VK_MATMUL_COOP);
  assert_null(p.kernel);
  assert_non_null(strstr(p.reason, "float16 only"));
  p = kn_vk_matmul_choice(&square, KN_VK_F16, &khr_only, KN_VK_MATMUL_COOP);
  assert_null(p.kernel);
  assert_non_null(strstr(p.reason, "VK_NV_cooperative_matrix"));
  p = kn_vk_matmul_choice(&square, KN_VK_F32, &plain, KN_VK_MATMUL_SUBGROUP);
  assert_null(p.kernel);
  assert_non_null(strstr(p.reason, "subgroup arithmetic"));
  /* dtypes the device lacks, and bool */
  p = kn_vk_matmul_choice(&square, KN_VK_F64, &plain, KN_VK_MATMUL_AUTO);
  assert_null(p.kernel);
  assert_non_null(strstr(p.reason, "shaderFloat64"));
  p = kn_vk_matmul_choice(&square, KN_VK_F16, &plain, KN_VK_MATMUL_TILED);
  assert_null(p.kernel);
  assert_null(kn_vk_matmul_choice(&square, KN_VK_BOOL, &gpu, AUTO).kernel);
  assert_true(kn_vk_matmul_variant_offered(&gpu, KN_VK_MATMUL_COOP));
  assert_false(kn_vk_matmul_variant_offered(&khr_only, KN_VK_MATMUL_COOP));
  assert_false(kn_vk_matmul_variant_offered(&plain, KN_VK_MATMUL_SUBGROUP));
  /* large products: blocked where the device has 256 invocations and room for its
   * tiles in shared memory, for float32, float64 and float16 without coop */
  kn_vk_matmul_shape big = {1, 1024, 1024, 1024}, batched = {4, 512, 512, 64},
                     fewer = {1, 1024, 896, 64};
  kn_vk_device_info roomy = plain;
  roomy.max_shared_memory_bytes = 32768;
  roomy.float64 = roomy.float16 = true;
  p = kn_vk_matmul_choice(&big, KN_VK_F32, &roomy, AUTO);
  assert_string_equal(p.kernel, "matmul_blocked");
  assert_int_equal(p.variant, KN_VK_MATMUL_BLOCKED);
  assert_non_null(strstr(p.reason, "large product"));
  assert_string_equal(kn_vk_matmul_choice(&batched, KN_VK_F32, &roomy, AUTO).kernel,
                      "matmul_blocked"); /* 4 x 4 x 4 blocks */
  assert_string_equal(kn_vk_matmul_choice(&fewer, KN_VK_F32, &roomy, AUTO).kernel, "matmul");
  assert_string_equal(kn_vk_matmul_choice(NULL, KN_VK_F32, &roomy, AUTO).kernel, "matmul_blocked");
  assert_string_equal(kn_vk_matmul_choice(&big, KN_VK_F64, &roomy, AUTO).kernel,
                      "matmul_blocked_f64");
  assert_string_equal(kn_vk_matmul_choice(&big, KN_VK_F16, &roomy, AUTO).kernel,
                      "matmul_blocked_f16");
  assert_string_equal(kn_vk_matmul_choice(&big, KN_VK_I32, &roomy, AUTO).kernel, "matmul_i32");
  p = kn_vk_matmul_choice(&big, KN_VK_I32, &roomy, KN_VK_MATMUL_BLOCKED);
  assert_null(p.kernel);
  assert_non_null(strstr(p.reason, "no kernel of this variant"));
  kn_vk_device_info coop_roomy = gpu;
  assert_string_equal(kn_vk_matmul_choice(&big, KN_VK_F16, &coop_roomy, AUTO).kernel,
                      "matmul_coop");
  p = kn_vk_matmul_choice(&big, KN_VK_F32, &coop_roomy, AUTO);
  assert_string_equal(p.kernel, "matmul_blocked");
  assert_non_null(strstr(p.reason, "never rounded to float16"));
  kn_vk_device_info cramped = roomy;
  cramped.max_shared_memory_bytes = 4096;
  assert_string_equal(kn_vk_matmul_choice(&big, KN_VK_F32, &cramped, AUTO).kernel, "matmul");
  p = kn_vk_matmul_choice(&big, KN_VK_F32, &cramped, KN_VK_MATMUL_BLOCKED);
  assert_null(p.kernel);
  assert_non_null(strstr(p.reason, "shared memory"));
  cramped = roomy;
  cramped.max_workgroup_invocations = 128;
  p = kn_vk_matmul_choice(&big, KN_VK_F32, &cramped, KN_VK_MATMUL_BLOCKED);
  assert_null(p.kernel);
  assert_non_null(strstr(p.reason, "256 invocations"));
  /* the cooperative-matrix kernel: 8 subgroups and 45 KiB of tiles */
  kn_vk_device_info coop_small = gpu;
  coop_small.max_shared_memory_bytes = 32768;
  p = kn_vk_matmul_choice(&big, KN_VK_F16, &coop_small, KN_VK_MATMUL_COOP);
  assert_null(p.kernel);
  assert_non_null(strstr(p.reason, "shared memory"));
  coop_small = gpu;
  coop_small.subgroup_size = 64;
  coop_small.max_workgroup_invocations = 256;
  p = kn_vk_matmul_choice(&big, KN_VK_F16, &coop_small, KN_VK_MATMUL_COOP);
  assert_null(p.kernel);
  assert_non_null(strstr(p.reason, "8 subgroups"));
  /* every kernel the table can name is embedded */
  for (int v = KN_VK_MATMUL_TILED; v < KN_VK_MATMUL_NVARIANTS; v++)
    for (size_t d = 0; d < NDTYPES; d++) {
      kn_vk_device_info all = gpu;
      all.float64 = all.int64 = all.subgroup_extended_types = true;
      all.max_shared_memory_bytes = 49152;
      const char *want = kn_vk_matmul_choice(&square, DTYPES[d].et, &all, v).kernel;
      bool found = want == NULL;
      for (const char *const *nm = kn_vk_kernel_names(); *nm && !found; nm++)
        found = !strcmp(*nm, want);
      assert_true(found);
    }
}

static void variant_names(void **state) {
  (void)state;
  kn_vk_matmul_variant v;
  VT_OK(kn_vk_matmul_variant_parse("subgroup", &v, err));
  assert_int_equal(v, KN_VK_MATMUL_SUBGROUP);
  VT_OK(kn_vk_matmul_variant_parse(NULL, &v, err));
  assert_int_equal(v, KN_VK_MATMUL_AUTO);
  for (int i = 0; i < KN_VK_MATMUL_NVARIANTS; i++) {
    VT_OK(kn_vk_matmul_variant_parse(kn_vk_matmul_variant_name((kn_vk_matmul_variant)i), &v, err));
    assert_int_equal(v, i);
  }
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_vk_matmul_variant_parse("fast", &v, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "'fast'"));
  assert_non_null(strstr(e.message, "auto, tiled, subgroup, coop or blocked"));
  sg_error_clear(&e);
}

/* STAGD_VK_MATMUL: read when the options say auto; a bad value fails the context. */
static void environment_override(void **state) {
  (void)state;
  setenv("STAGD_VK_MATMUL", "subgroup", 1);
  kn_vk_context *ctx = open_with(KN_VK_MATMUL_AUTO);
  assert_int_equal(kn_vk_context_matmul_variant(ctx), KN_VK_MATMUL_SUBGROUP);
  kn_vk_context_destroy(ctx);
  ctx = open_with(KN_VK_MATMUL_TILED); /* explicit options win */
  assert_int_equal(kn_vk_context_matmul_variant(ctx), KN_VK_MATMUL_TILED);
  kn_vk_context_destroy(ctx);
  setenv("STAGD_VK_MATMUL", "bogus", 1);
  kn_vk_options opts = {.pipeline_cache_dir = ""};
  sg_error e = SG_ERROR_INIT;
  ctx = NULL;
  assert_int_equal(kn_vk_context_create(0, &opts, &ctx, &e), SG_INVALID_ARGUMENT);
  assert_null(ctx);
  assert_non_null(strstr(e.message, "STAGD_VK_MATMUL"));
  assert_non_null(strstr(e.message, "'bogus'"));
  sg_error_clear(&e);
  unsetenv("STAGD_VK_MATMUL");
  /* STAGD_VK_MATMUL_BK: 4, 8 or 16 where the options leave the step 0 */
  const char *bad[] = {"12", "8x", "-8", "0", "99999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("STAGD_VK_MATMUL_BK", bad[i], 1);
    assert_int_equal(kn_vk_context_create(0, &opts, &ctx, &e), SG_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(e.message, "STAGD_VK_MATMUL_BK"));
    assert_non_null(strstr(e.message, bad[i]));
    sg_error_clear(&e);
  }
  setenv("STAGD_VK_MATMUL_BK", "8", 1);
  uint32_t bk = 0;
  VT_OK(kn_vk_matmul_bk_resolve(&bk, err));
  assert_int_equal(bk, 8);
  bk = 4; /* the options win */
  VT_OK(kn_vk_matmul_bk_resolve(&bk, err));
  assert_int_equal(bk, 4);
  unsetenv("STAGD_VK_MATMUL_BK");
  bk = 0;
  VT_OK(kn_vk_matmul_bk_resolve(&bk, err));
  assert_int_equal(bk, 16);
  opts.matmul_bk = 5;
  assert_int_equal(kn_vk_context_create(0, &opts, &ctx, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "matmul_bk 5"));
  sg_error_clear(&e);
}

/* tanh((C + bias row) * 2) - D, then maximum with a column: the epilogue of one kernel
 * against the product stored and the same chain as a fused kernel, bit for bit. */
static void check_epilogue(kn_vk_context *ctx, const int64_t *s, int trans, const char *label) {
  int64_t ba = s[0], bb = s[1], m = s[2], n = s[3], k = s[4];
  int64_t batch = ba > bb ? ba : bb, nb = batch ? batch : 1, size = nb * m * n;
  int64_t sha[3] = {ba, m, k}, shb[3] = {bb, k, n}, shc[3] = {nb, m, n};
  kn_tensor *a = random_tensor(KN_FLOAT32, ba ? 3 : 2, ba ? sha : sha + 1);
  kn_tensor *b = random_tensor(KN_FLOAT32, bb ? 3 : 2, bb ? shb : shb + 1);
  kn_tensor *sa = stored(a, trans & KN_VK_MATMUL_TRANS_A), *sb = stored(b, trans & KN_VK_MATMUL_TRANS_B);
  kn_tensor *bias = random_tensor(KN_FLOAT32, 1, &n), *full = random_tensor(KN_FLOAT32, 3, shc);
  kn_tensor *col = random_tensor(KN_FLOAT32, 1, &m);
  kn_vk_buffer *bufa = upload(ctx, sa), *bufb = upload(ctx, sb), *bbias = upload(ctx, bias);
  kn_vk_buffer *bfull = upload(ctx, full), *bcol = upload(ctx, col), *prod, *two, *one;
  VT_OK(kn_vk_buffer_create(ctx, (uint64_t)size * 4, &prod, err));
  VT_OK(kn_vk_buffer_create(ctx, (uint64_t)size * 4, &two, err));
  VT_OK(kn_vk_buffer_create(ctx, (uint64_t)size * 4, &one, err));
  const float scalars[] = {2.0f};
  /* the epilogue: operands 0 bias, 1 full, 2 column; as a chain after the stored
   * product: 0 the product, 1 bias, 2 full, 3 column */
  const kn_vk_fused_step epi_steps[] = {
      {false, KN_VK_ADD, KN_VK_FUSED_PREV, 0},      {false, KN_VK_MUL, KN_VK_FUSED_PREV, KN_VK_FUSED_SCALAR(0)},
      {true, KN_VK_TANH, KN_VK_FUSED_PREV, 0},       {false, KN_VK_SUB, KN_VK_FUSED_PREV, 1},
      {false, KN_VK_MAXIMUM, 2, KN_VK_FUSED_PREV}};
  kn_vk_fused_step chain[5];
  memcpy(chain, epi_steps, sizeof chain);
  chain[0].a = 0;
  chain[0].b = 1;
  chain[3].b = 2;
  chain[4].a = 3;
  kn_vk_buffer *epi_ins[] = {bbias, bfull, bcol}, *chain_ins[] = {prod, bbias, bfull, bcol};
  int64_t epi_sizes[] = {n, size, m}, epi_inners[] = {1, 1, n};
  int64_t chain_sizes[] = {size, n, size, m}, chain_inners[] = {1, 1, 1, n};
  kn_vk_epilogue epi = {epi_steps, 5, epi_ins, epi_sizes, epi_inners, 3, scalars, 1};
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  VT_OK(kn_vk_matmul_trans(bt, KN_VK_F32, trans, bufa, bufb, prod, nb, m, n, k, ba ? m * k : 0,
                           bb ? k * n : 0, err));
  VT_OK(kn_vk_fused_f32(bt, chain, 5, chain_ins, chain_sizes, chain_inners, 4, scalars, 1, two, size, err));
  VT_OK(kn_vk_matmul_epilogue(bt, trans, bufa, bufb, one, nb, m, n, k, ba ? m * k : 0, bb ? k * n : 0, &epi,
                              err));
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  float *want = vt_download(ctx, two, (size_t)size), *got = vt_download(ctx, one, (size_t)size);
  for (int64_t i = 0; i < size; i++)
    if (memcmp(&got[i], &want[i], 4))
      fail_msg("%s epilogue, trans %d, batch %lld/%lld %lldx%lldx%lld: element %lld is %.9g, two kernels "
               "give %.9g", label, trans, (long long)ba, (long long)bb, (long long)m, (long long)n, (long long)k,
               (long long)i, got[i], want[i]);
  free(want);
  free(got);
  kn_vk_buffer *bufs[] = {bufa, bufb, bbias, bfull, bcol, prod, two, one};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) kn_vk_buffer_destroy(bufs[i]);
  kn_tensor *ts[] = {a, b, sa, sb, bias, full, col};
  for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) kn_tensor_release(ts[i]);
}

/* Each float32 variant with an epilogue (tiled, subgroup, blocked), every shape with a
 * reduction, both storage orders; steps, buffers and scalars past the limits refused. */
static void epilogue_vs_two_kernels(void **state) {
  (void)state;
  static const kn_vk_matmul_variant vs[] = {KN_VK_MATMUL_TILED, KN_VK_MATMUL_SUBGROUP, KN_VK_MATMUL_BLOCKED};
  int ran = 0;
  for (size_t v = 0; v < sizeof vs / sizeof *vs; v++) {
    kn_vk_context *ctx = open_with(vs[v]);
    if (kn_vk_matmul_available(kn_vk_context_info(ctx), KN_VK_F32, vs[v], NULL)) {
      for (int trans = 0; trans < 4; trans += 3)
        for (size_t s = 0; s < sizeof SHAPES / sizeof *SHAPES; s++)
          if (SHAPES[s][2] && SHAPES[s][3] && SHAPES[s][4]) check_epilogue(ctx, SHAPES[s], trans, kn_vk_matmul_variant_name(vs[v]));
      ran++;
    }
    kn_vk_context_destroy(ctx);
  }
  assert_true(ran >= 1);
  kn_vk_context *ctx = open_with(KN_VK_MATMUL_AUTO);
  kn_vk_buffer *buf;
  VT_OK(kn_vk_buffer_create(ctx, 64, &buf, err));
  kn_vk_fused_step steps[9];
  for (int i = 0; i < 9; i++) steps[i] = (kn_vk_fused_step){true, KN_VK_NEG, KN_VK_FUSED_PREV, 0};
  kn_vk_buffer *ins[4] = {buf, buf, buf, buf};
  float sc[5] = {0};
  const struct {
    kn_vk_epilogue e;
    const char *msg;
  } bad[] = {{{steps, 9, ins, NULL, NULL, 0, sc, 0}, "9 steps"},
             {{steps, 0, ins, NULL, NULL, 0, sc, 0}, "0 steps"},
             {{steps, 1, ins, NULL, NULL, 4, sc, 0}, "4 buffers"},
             {{steps, 1, ins, NULL, NULL, 0, sc, 5}, "5 scalars"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    kn_vk_batch *bt;
    VT_OK(kn_vk_batch_begin(ctx, &bt, err));
    sg_error e = SG_ERROR_INIT;
    assert_int_equal(kn_vk_matmul_epilogue(bt, 0, buf, buf, buf, 1, 2, 2, 2, 0, 0, &bad[i].e, &e),
                     SG_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, bad[i].msg));
    sg_error_clear(&e);
    kn_vk_batch_discard(bt);
  }
  /* an op past the float32 kernels, an operand past the buffers */
  kn_vk_fused_step wrong[] = {{false, KN_VK_NBINOPS, KN_VK_FUSED_PREV, KN_VK_FUSED_PREV},
                              {false, KN_VK_ADD, KN_VK_FUSED_PREV, 1}};
  for (int i = 0; i < 2; i++) {
    kn_vk_epilogue e1 = {&wrong[i], 1, ins, NULL, NULL, 1, sc, 0};
    kn_vk_batch *bt;
    VT_OK(kn_vk_batch_begin(ctx, &bt, err));
    sg_error e = SG_ERROR_INIT;
    assert_int_equal(kn_vk_matmul_epilogue(bt, 0, buf, buf, buf, 1, 2, 2, 2, 0, 0, &e1, &e), SG_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "fused step 0"));
    sg_error_clear(&e);
    kn_vk_batch_discard(bt);
  }
  kn_vk_buffer_destroy(buf);
  kn_vk_context_destroy(ctx);
}

int main(void) {
  /* the forced runs below choose their own variant and K step */
  unsetenv("STAGD_VK_MATMUL");
  unsetenv("STAGD_VK_MATMUL_BK");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(choice_policy),        cmocka_unit_test(variant_names),
      cmocka_unit_test(environment_override), cmocka_unit_test(tiled_vs_cpu),
      cmocka_unit_test(subgroup_vs_cpu),      cmocka_unit_test(coop_vs_cpu),
      cmocka_unit_test(blocked_vs_cpu),       cmocka_unit_test(auto_vs_cpu),
      cmocka_unit_test(epilogue_vs_two_kernels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
