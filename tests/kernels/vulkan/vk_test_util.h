// SPDX-License-Identifier: Apache-2.0
/*
 * vk_test_util.h — helpers shared by the Vulkan backend tests: one context per test
 * group (on the lavapipe / first device), random data, upload/download shortcuts and
 * a float comparison that reports the first mismatch.
 */
#ifndef STAGD_TESTS_VK_TEST_UTIL_H
#define STAGD_TESTS_VK_TEST_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kn_vulkan.h"

static uint64_t vt_rng = 0x9e3779b97f4a7c15ULL;

static inline float vt_randf(float lo, float hi) {
  vt_rng = vt_rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * (float)((vt_rng >> 40) & 0xffffff) / (float)0x1000000;
}

static inline float *vt_random(size_t n, float lo, float hi) {
  float *p = malloc((n ? n : 1) * sizeof *p);
  for (size_t i = 0; i < n; i++)
    p[i] = vt_randf(lo, hi);
  return p;
}

/* Fails the test with the error's message when code is not SG_OK. */
#define VT_OK(expr)                                                                                \
  do {                                                                                             \
    sg_error vt_e_ = SG_ERROR_INIT;                                                                \
    sg_error *err = &vt_e_;                                                                        \
    sg_code vt_c_ = (expr);                                                                        \
    if (vt_c_ != SG_OK)                                                                            \
      fail_msg("%s: %s: %s", #expr, sg_code_name(vt_c_), vt_e_.message ? vt_e_.message : "");      \
    sg_error_clear(&vt_e_);                                                                        \
  } while (0)

static inline kn_vk_buffer *vt_buffer_from(kn_vk_context *ctx, const float *data, size_t n) {
  kn_vk_buffer *b = NULL;
  VT_OK(kn_vk_buffer_create(ctx, n * sizeof(float), &b, err));
  VT_OK(kn_vk_upload(ctx, b, 0, data, n * sizeof(float), err));
  return b;
}

static inline float *vt_download(kn_vk_context *ctx, kn_vk_buffer *b, size_t n) {
  float *p = malloc((n ? n : 1) * sizeof *p);
  VT_OK(kn_vk_download(ctx, b, 0, p, n * sizeof(float), err));
  return p;
}

static inline void vt_expect_close(const float *got, const float *want, size_t n, float rtol,
                                   float atol, const char *what) {
  for (size_t i = 0; i < n; i++) {
    float g = got[i], w = want[i];
    if (isnan(w) && isnan(g))
      continue;
    if (isinf(w) && g == w)
      continue;
    if (!(fabsf(g - w) <= atol + rtol * fabsf(w)))
      fail_msg("%s: element %zu is %.9g, want %.9g", what, i, (double)g, (double)w);
  }
}

/* Opens the first Vulkan device for a group of tests. */
static inline int vt_setup(void **state) {
  kn_vk_context *ctx = NULL;
  sg_error e = SG_ERROR_INIT;
  kn_vk_options opts = {.pipeline_cache_dir = ""};
  if (kn_vk_context_create(0, &opts, &ctx, &e) != SG_OK) {
    fprintf(stderr, "cannot open vulkan:0: %s\n", e.message);
    sg_error_clear(&e);
    return -1;
  }
  *state = ctx;
  return 0;
}

static inline int vt_teardown(void **state) {
  kn_vk_context_destroy(*state);
  /* The instance is kept until exit, as the daemon does: kn_vk_shutdown would unload
   * lavapipe, and Mesa 22.3's lavapipe leaves one 128-byte allocation behind that
   * LeakSanitizer then reports from an "<unknown module>" (it cannot be suppressed by
   * name once the library is gone). While loaded, that memory is still reachable. */
  return 0;
}

#endif /* STAGD_TESTS_VK_TEST_UTIL_H */
