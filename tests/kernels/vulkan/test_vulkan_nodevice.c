// SPDX-License-Identifier: Apache-2.0
/*
 * test_vulkan_nodevice.c — run by ctest with VK_ICD_FILENAMES / VK_DRIVER_FILES naming
 * a file that does not exist: the loader finds no driver, and every entry point must
 * answer SG_UNAVAILABLE with a clear message (no crash), while `--device auto` quietly
 * chooses the CPU backend.
 */
#include "vk_test_util.h"

static void everything_unavailable(void **state) {
  (void)state;
  sg_error e = SG_ERROR_INIT;
  kn_vk_device_info *devs = (kn_vk_device_info *)1;
  size_t n = 7;
  assert_int_equal(kn_vk_enumerate(&devs, &n, &e), SG_UNAVAILABLE);
  assert_null(devs);
  assert_int_equal(n, 0);
  assert_non_null(e.message);
  assert_non_null(strstr(e.message, "vulkan"));

  kn_vk_context *ctx = (kn_vk_context *)1;
  assert_int_equal(kn_vk_context_create(0, NULL, &ctx, &e), SG_UNAVAILABLE);
  assert_null(ctx);

  int idx = 5;
  assert_int_equal(kn_vk_choose_device("vulkan:0", &idx, &e), SG_UNAVAILABLE);
  assert_int_equal(kn_vk_choose_device("vulkan", &idx, &e), SG_UNAVAILABLE);
  assert_int_equal(idx, -1);
  VT_OK(kn_vk_choose_device("auto", &idx, err));
  assert_int_equal(idx, -1);
  VT_OK(kn_vk_choose_device("cpu", &idx, err));
  assert_int_equal(idx, -1);
  sg_error_clear(&e);
  kn_vk_shutdown();
}

int main(void) {
  /* ctest sets these too; setting them here keeps the test right when run by hand */
  setenv("VK_ICD_FILENAMES", "/nonexistent/icd.json", 1);
  setenv("VK_DRIVER_FILES", "/nonexistent/icd.json", 1);
  const struct CMUnitTest tests[] = {cmocka_unit_test(everything_unavailable)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
