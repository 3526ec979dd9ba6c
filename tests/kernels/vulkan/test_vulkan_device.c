// SPDX-License-Identifier: Apache-2.0
/*
 * test_vulkan_device.c — the device layer: enumeration (lavapipe must be found, except
 * on a GPU machine without it that says so: STAGD_VK_TEST_NO_LAVAPIPE=1), the
 * `--device` policy, context creation, the memory pool, upload/download round trips
 * through direct mapping and through staging, the persisted pipeline cache, and the
 * generic dispatch's error paths.
 */
#include "vk_test_util.h"

#include <sys/stat.h>
#include <unistd.h>

static void enumerate_finds_lavapipe(void **state) {
  (void)state;
  kn_vk_device_info *devs;
  size_t n;
  VT_OK(kn_vk_enumerate(&devs, &n, err));
  assert_true(n >= 1);
  bool found = false;
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(devs[i].index, (int)i);
    assert_true(devs[i].name[0] != '\0');
    assert_true(devs[i].heap_count >= 1);
    assert_true(devs[i].max_workgroup_invocations >= 128);
    assert_true(devs[i].max_shared_memory_bytes >= 16384);
    assert_true(devs[i].max_push_constants_bytes >= 128);
    assert_non_null(devs[i].vendor_name);
    if (strstr(devs[i].name, "llvmpipe")) {
      found = true;
      assert_int_equal(devs[i].type, KN_VK_DEVICE_CPU);
      assert_string_equal(kn_vk_device_type_name(devs[i].type), "cpu");
      assert_string_equal(devs[i].driver_name, "llvmpipe");
      assert_true(devs[i].unified_memory);
      assert_true(devs[i].subgroup_size >= 4);
    }
  }
  /* CI and every machine without a GPU run on lavapipe; scripts/gpu-run.sh runs these
   * tests on a lent GPU machine, whose loader lists the NVIDIA driver alone */
  if (!found && getenv("STAGD_VK_TEST_NO_LAVAPIPE") == NULL)
    fail_msg("no lavapipe (llvmpipe) device among %zu; set STAGD_VK_TEST_NO_LAVAPIPE=1 "
             "where that is expected", n);
  sg_buf json = SG_BUF_INIT;
  kn_vk_device_info_json(&devs[0], &json);
  assert_true(strncmp(json.data, "{\"name\":\"vulkan:0\",\"description\":\"", 33) == 0);
  assert_non_null(strstr(json.data, "\"max_workgroup_invocations\":"));
  assert_int_equal(json.data[json.len - 1], '}');
  if (strstr(devs[0].name, "llvmpipe")) {
    assert_non_null(strstr(json.data, "\"type\":\"cpu\",\"vendor\":\"Mesa\""));
    /* the kernel choices: lavapipe has subgroup arithmetic, no cooperative matrix */
    assert_non_null(strstr(json.data, "\"cooperative_matrix\":false,\"cooperative_matrix_f32\":false"));
    assert_non_null(strstr(json.data, "\"kernels\":{\"reduce\":\"reduce_subgroup\","
                                      "\"softmax\":\"softmax_subgroup\","
                                      "\"matmul\":\"matmul_blocked\","
                                      "\"matmul_reason\":\"large product"));
    /* float16 storage, int64 subgroup sums: every dtype runs tiled and subgroup, the
     * float ones blocked */
    assert_non_null(strstr(json.data, "\"cooperative_matrix_f16\":false,\"float16\":true,"
                                      "\"subgroup_extended_types\":true"));
    assert_non_null(strstr(json.data,
                           "\"matmul_variants\":{\"tiled\":[\"float32\",\"float64\",\"int32\","
                           "\"int64\",\"float16\"],\"subgroup\":[\"float32\",\"float64\","
                           "\"int32\",\"int64\",\"float16\"],\"coop\":[],"
                           "\"blocked\":[\"float32\",\"float64\",\"float16\"]}}}"));
  }
  /* well-formed for Python's json module */
  char path[] = "/tmp/stagd-vk-json-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, json.data, json.len), (ssize_t)json.len);
  close(fd);
  char *cmd = sg_xasprintf("python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s", path);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  unlink(path);
  sg_buf_free(&json);
  free(devs);
}

/* The list is described once per instance: each call returns an equal, independent
 * copy. */
static void enumerate_returns_copies(void **state) {
  (void)state;
  kn_vk_device_info *a, *b, *c;
  size_t na, nb, nc;
  VT_OK(kn_vk_enumerate(&a, &na, err));
  VT_OK(kn_vk_enumerate(&b, &nb, err));
  assert_int_equal(na, nb);
  assert_true(a != b);
  assert_memory_equal(a, b, na * sizeof *a);
  a[0].name[0] = '\0'; /* the caller's copy: the next call is not affected */
  VT_OK(kn_vk_enumerate(&c, &nc, err));
  assert_int_equal(nc, nb);
  assert_memory_equal(c, b, nb * sizeof *b);
  free(a);
  free(b);
  free(c);
}

static void auto_policy(void **state) {
  (void)state;
  kn_vk_device_info d[3] = {0};
  d[0].type = KN_VK_DEVICE_CPU;
  d[1].type = KN_VK_DEVICE_INTEGRATED_GPU;
  d[2].type = KN_VK_DEVICE_DISCRETE_GPU;
  assert_int_equal(kn_vk_pick_auto(d, 3), 2);
  assert_int_equal(kn_vk_pick_auto(d, 2), 1);
  assert_int_equal(kn_vk_pick_auto(d, 1), -1); /* lavapipe alone → CPU backend */
  assert_int_equal(kn_vk_pick_auto(d, 0), -1);
  d[0].type = KN_VK_DEVICE_VIRTUAL_GPU;
  assert_int_equal(kn_vk_pick_auto(d, 1), -1);
}

static void choose_device_strings(void **state) {
  (void)state;
  int idx = 99;
  sg_error e = SG_ERROR_INIT;
  VT_OK(kn_vk_choose_device("cpu", &idx, err));
  assert_int_equal(idx, -1);
  /* auto is the policy (auto_policy) over this machine's devices: -1 (the CPU backend)
   * where lavapipe is alone, the GPU's index on a GPU machine */
  kn_vk_device_info *devs;
  size_t n;
  VT_OK(kn_vk_enumerate(&devs, &n, err));
  VT_OK(kn_vk_choose_device("auto", &idx, err));
  assert_int_equal(idx, kn_vk_pick_auto(devs, n));
  if (getenv("STAGD_VK_TEST_NO_LAVAPIPE") == NULL && n == 1)
    assert_int_equal(idx, -1); /* lavapipe alone: a CPU-type device */
  free(devs);
  VT_OK(kn_vk_choose_device("vulkan:0", &idx, err));
  assert_int_equal(idx, 0);
  VT_OK(kn_vk_choose_device("vulkan", &idx, err));
  assert_true(idx >= 0);
  assert_int_equal(kn_vk_choose_device("vulkan:99", &idx, &e), SG_NOT_FOUND);
  assert_non_null(strstr(e.message, "vulkan:99"));
  const char *bad[] = {"gpu", "vulkan:", "vulkan:x", "vulkan:1x", "vulkan0", "vulkan:-1", ""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_int_equal(kn_vk_choose_device(bad[i], &idx, &e), SG_INVALID_ARGUMENT);
    assert_int_equal(idx, -1);
  }
  sg_error_clear(&e);
}

static void context_info(void **state) {
  kn_vk_context *ctx = *state;
  const kn_vk_device_info *info = kn_vk_context_info(ctx);
  assert_int_equal(info->index, 0);
  assert_true(kn_vk_context_direct_mapped(ctx) == info->unified_memory ||
              info->type == KN_VK_DEVICE_DISCRETE_GPU);
  sg_error e = SG_ERROR_INIT;
  kn_vk_context *none = NULL;
  assert_int_equal(kn_vk_context_create(42, NULL, &none, &e), SG_NOT_FOUND);
  assert_null(none);
  sg_error_clear(&e);
}

static void round_trip(kn_vk_context *ctx, size_t n) {
  float *src = vt_random(n, -100, 100);
  kn_vk_buffer *b = vt_buffer_from(ctx, src, n);
  assert_int_equal(kn_vk_buffer_size(b), n * sizeof(float));
  float *got = vt_download(ctx, b, n);
  assert_memory_equal(got, src, n * sizeof(float));
  /* partial transfers at an offset */
  if (n >= 10) {
    float five[5] = {1, 2, 3, 4, 5};
    VT_OK(kn_vk_upload(ctx, b, 3 * sizeof(float), five, sizeof five, err));
    float back[7];
    VT_OK(kn_vk_download(ctx, b, 2 * sizeof(float), back, sizeof back, err));
    assert_true(back[0] == src[2] && back[1] == 1 && back[5] == 5 && back[6] == src[8]);
  }
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_vk_download(ctx, b, 4, got, n * sizeof(float), &e), SG_OUT_OF_RANGE);
  sg_error_clear(&e);
  free(got);
  free(src);
  kn_vk_buffer_destroy(b);
}

static void upload_download_mapped(void **state) {
  kn_vk_context *ctx = *state;
  size_t sizes[] = {0, 1, 7, 1000, 1 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    round_trip(ctx, sizes[i]);
}

static void upload_download_staging(void **state) {
  (void)state;
  kn_vk_options opts = {.pipeline_cache_dir = "", .force_staging = true};
  kn_vk_context *ctx;
  VT_OK(kn_vk_context_create(0, &opts, &ctx, err));
  assert_false(kn_vk_context_direct_mapped(ctx));
  size_t sizes[] = {1, 13, 100000};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    round_trip(ctx, sizes[i]);
  /* kernels work on staged memory too */
  float a[5] = {1, 2, 3, 4, 5}, want[5] = {-1, -2, -3, -4, -5};
  kn_vk_buffer *ba = vt_buffer_from(ctx, a, 5), *bc;
  VT_OK(kn_vk_buffer_create(ctx, sizeof a, &bc, err));
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  VT_OK(kn_vk_unary(bt, KN_VK_NEG, ba, bc, 5, err));
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  float *got = vt_download(ctx, bc, 5);
  assert_memory_equal(got, want, sizeof want);
  free(got);
  kn_vk_buffer_destroy(ba);
  kn_vk_buffer_destroy(bc);
  kn_vk_context_destroy(ctx);
}

static void pool_suballocates_and_coalesces(void **state) {
  (void)state;
  kn_vk_options opts = {.pipeline_cache_dir = "", .pool_block_bytes = 1 << 20};
  kn_vk_context *ctx;
  VT_OK(kn_vk_context_create(0, &opts, &ctx, err));
  kn_vk_buffer *bufs[8];
  for (int i = 0; i < 8; i++)
    VT_OK(kn_vk_buffer_create(ctx, 100000, &bufs[i], err));
  kn_vk_memory_stats st;
  kn_vk_memory_stats_get(ctx, &st);
  assert_int_equal(st.buffer_count, 8);
  assert_int_equal(st.block_count, 1); /* 8 x 100 KB fit one 1 MiB block */
  /* each buffer keeps its own contents */
  for (int i = 0; i < 8; i++) {
    float v = (float)i;
    VT_OK(kn_vk_upload(ctx, bufs[i], 0, &v, sizeof v, err));
  }
  for (int i = 0; i < 8; i++) {
    float v;
    VT_OK(kn_vk_download(ctx, bufs[i], 0, &v, sizeof v, err));
    assert_true(v == (float)i);
  }
  for (int i = 1; i < 8; i += 2)
    kn_vk_buffer_destroy(bufs[i]);
  for (int i = 0; i < 8; i += 2)
    kn_vk_buffer_destroy(bufs[i]);
  kn_vk_memory_stats_get(ctx, &st);
  assert_int_equal(st.buffer_count, 0);
  assert_int_equal(st.used_bytes, 0);
  /* after coalescing, one allocation can take nearly the whole block again */
  kn_vk_buffer *big;
  VT_OK(kn_vk_buffer_create(ctx, (1 << 20) - 4096, &big, err));
  kn_vk_memory_stats_get(ctx, &st);
  assert_int_equal(st.block_count, 1);
  /* bigger than a block: a dedicated block, released with the buffer */
  kn_vk_buffer *huge;
  VT_OK(kn_vk_buffer_create(ctx, 3 << 20, &huge, err));
  kn_vk_memory_stats_get(ctx, &st);
  assert_int_equal(st.block_count, 2);
  kn_vk_buffer_destroy(huge);
  kn_vk_memory_stats_get(ctx, &st);
  assert_int_equal(st.block_count, 1);
  kn_vk_buffer_destroy(big);
  /* beyond the device's storage range: a clear error, not a crash */
  sg_error e = SG_ERROR_INIT;
  kn_vk_buffer *none = NULL;
  assert_int_equal(kn_vk_buffer_create(ctx, UINT64_C(1) << 62, &none, &e), SG_RESOURCE_EXHAUSTED);
  assert_null(none);
  sg_error_clear(&e);
  kn_vk_context_destroy(ctx);
}

static void pipeline_cache_persisted(void **state) {
  (void)state;
  char dir[] = "/tmp/stagd-vk-cache-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char *sub = sg_xasprintf("%s/nested/dir", dir);
  kn_vk_options opts = {.pipeline_cache_dir = sub};
  for (int round = 0; round < 2; round++) {
    kn_vk_context *ctx;
    VT_OK(kn_vk_context_create(0, &opts, &ctx, err));
    float a[3] = {1, 4, 9};
    kn_vk_buffer *ba = vt_buffer_from(ctx, a, 3), *bc;
    VT_OK(kn_vk_buffer_create(ctx, sizeof a, &bc, err));
    kn_vk_batch *bt;
    VT_OK(kn_vk_batch_begin(ctx, &bt, err));
    VT_OK(kn_vk_unary(bt, KN_VK_SQRT, ba, bc, 3, err));
    VT_OK(kn_vk_batch_submit(bt, 0, err));
    float *got = vt_download(ctx, bc, 3);
    assert_true(got[0] == 1 && got[1] == 2 && got[2] == 3);
    free(got);
    kn_vk_buffer_destroy(ba);
    kn_vk_buffer_destroy(bc);
    kn_vk_context_destroy(ctx);
  }
  /* the file exists and is not empty */
  char *cmd = sg_xasprintf("test -n \"$(find %s -name 'pipelines-*.bin' -size +0)\"", sub);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  /* a corrupt file is ignored, not fatal */
  cmd = sg_xasprintf("for f in %s/pipelines-*.bin; do echo garbage > \"$f\"; done", sub);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  kn_vk_context *ctx;
  VT_OK(kn_vk_context_create(0, &opts, &ctx, err));
  kn_vk_context_destroy(ctx);
  cmd = sg_xasprintf("rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  free(sub);
}

static void dispatch_errors(void **state) {
  kn_vk_context *ctx = *state;
  const char *const *names = kn_vk_kernel_names();
  int count = 0;
  bool matmul = false;
  for (; names[count]; count++)
    matmul |= strcmp(names[count], "matmul") == 0;
  assert_true(count >= 5 && matmul);

  kn_vk_buffer *b;
  VT_OK(kn_vk_buffer_create(ctx, 64, &b, err));
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  sg_error e = SG_ERROR_INIT;
  kn_vk_binding binds[2] = {{b, false}, {b, true}};
  kn_vk_dispatch_desc d = {
      .kernel = "no_such_kernel", .bindings = binds, .nbindings = 2, .groups = {1, 1, 1}};
  assert_int_equal(kn_vk_dispatch(bt, &d, &e), SG_NOT_FOUND);
  d.kernel = "matmul"; /* takes 3 buffers */
  assert_int_equal(kn_vk_dispatch(bt, &d, &e), SG_INVALID_ARGUMENT);
  d.kernel = "unary";
  d.groups[0] = UINT32_MAX;
  assert_int_equal(kn_vk_dispatch(bt, &d, &e), SG_INVALID_ARGUMENT);
  /* typed launchers check buffer sizes */
  assert_int_equal(kn_vk_unary(bt, KN_VK_EXP, b, b, 1000, &e), SG_INVALID_ARGUMENT);
  kn_vk_shape s1 = {1, {3}}, s2 = {1, {4}};
  assert_int_equal(kn_vk_binary(bt, KN_VK_ADD, b, &s1, b, &s2, b, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "broadcast"));
  assert_int_equal(kn_vk_reduce(bt, KN_VK_REDUCE_SUM, b, &s1, 1, b, &e), SG_INVALID_ARGUMENT);
  assert_int_equal(kn_vk_batch_dispatch_count(bt), 0);
  sg_error_clear(&e);
  kn_vk_batch_discard(bt);
  kn_vk_buffer_destroy(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(enumerate_finds_lavapipe),
      cmocka_unit_test(enumerate_returns_copies),
      cmocka_unit_test(auto_policy),
      cmocka_unit_test(choose_device_strings),
      cmocka_unit_test(context_info),
      cmocka_unit_test(upload_download_mapped),
      cmocka_unit_test(upload_download_staging),
      cmocka_unit_test(pool_suballocates_and_coalesces),
      cmocka_unit_test(pipeline_cache_persisted),
      cmocka_unit_test(dispatch_errors),
  };
  return cmocka_run_group_tests(tests, vt_setup, vt_teardown);
}
