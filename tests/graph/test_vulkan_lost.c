// SPDX-License-Identifier: Apache-2.0
/*
 * test_vulkan_lost.c — device loss and device out-of-memory on Vulkan (lavapipe in CI),
 * provoked with the test-only fault hook (kn_vk_fault_set, the API of STAGD_VK_FAULT):
 * the failing request gets a clear error naming the device, the next request on the
 * same device runs on a new context and computes the right answer, and resident
 * tensors whose buffers were on the lost device give a clear error when read.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr.h"
#include "kn.h"
#include "kn_vulkan.h"

#define DEV "vulkan:0"

/* sum((x + 1) * x) for x = [1, 2, 3]: 2 + 6 + 12 */
static const char *SUM_SRC = "(def f (x) (sum (* (+ x 1.0) x)))\n";
static const char *SUM_ARGS = "[{\"dtype\":\"float32\",\"shape\":[3],\"data\":[1,2,3]}]";

static void arm(const char *spec) {
  sg_error e = SG_ERROR_INIT;
  if (kn_vk_fault_set(spec, &e) != SG_OK)
    fail_msg("kn_vk_fault_set(%s): %s", spec ? spec : "NULL", e.message);
}

/* Runs src on vulkan:0; *msg (malloc'd, caller frees) is the error's message. */
static sg_code run(const char *src, const char *args, char **result, char **msg) {
  gr_exec_options xo = {.device = DEV};
  char *printed = NULL;
  sg_error e = SG_ERROR_INIT;
  *result = NULL;
  sg_code rc = gr_run_source(src, strlen(src), "lost.sexp", NULL, &xo, args, result, &printed, &e);
  free(printed);
  *msg = e.message ? sg_xstrdup(e.message) : NULL;
  sg_error_clear(&e);
  return rc;
}

static void expect_sum_ok(void) {
  char *res, *msg;
  sg_code rc = run(SUM_SRC, SUM_ARGS, &res, &msg);
  if (rc) fail_msg("the next request failed: %s", msg);
  if (!strstr(res, "\"data\":[2e+01]")) fail_msg("result %s", res);
  free(res);
  free(msg);
}

static void expect_contains(const char *msg, const char *want) {
  if (!msg || !strstr(msg, want)) fail_msg("expected '%s' in: %s", want, msg ? msg : "(none)");
}

static void fault_spec_errors(void **state) {
  (void)state;
  static const struct { const char *spec, *want; } bad[] = {
      {"lost", "expected KIND@SITE:N"},
      {"gone@submit:1", "bad fault kind 'gone': expected lost or oom"},
      {"lost@queue:1", "bad fault site 'queue': expected submit, wait, alloc or map"},
      {"lost@submit:0", "bad fault count '0'"},
      {"oom@alloc:x", "bad fault count 'x'"},
      {"lost@submit:1,oom@submit:2", "fault site 'submit' given twice"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sg_error e = SG_ERROR_INIT;
    assert_int_equal(kn_vk_fault_set(bad[i].spec, &e), SG_INVALID_ARGUMENT);
    expect_contains(e.message, bad[i].want);
    sg_error_clear(&e);
  }
  arm("lost@submit:3,oom@alloc:1");
  arm(NULL); /* disarmed: nothing fails */
  expect_sum_ok();
  expect_sum_ok();
}

/* The device layer: a lost context refuses all work; out of memory does not lose it. */
static void context_refuses_work_after_loss(void **state) {
  (void)state;
  kn_vk_options o = {.pipeline_cache_dir = ""};
  kn_vk_context *ctx;
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_vk_context_create(0, &o, &ctx, &e), SG_OK);
  arm("oom@map:1");
  kn_vk_buffer *b = NULL;
  assert_int_equal(kn_vk_buffer_create(ctx, 1024, &b, &e), SG_RESOURCE_EXHAUSTED);
  expect_contains(e.message, "vulkan:0: out of device memory allocating 67108864 bytes");
  assert_false(kn_vk_context_lost(ctx));
  assert_int_equal(kn_vk_buffer_create(ctx, 1024, &b, &e), SG_OK); /* the next one works */

  arm("lost@submit:1");
  kn_vk_batch *bt;
  assert_int_equal(kn_vk_batch_begin(ctx, &bt, &e), SG_OK);
  assert_int_equal(kn_vk_batch_submit(bt, 0, &e), SG_UNAVAILABLE);
  expect_contains(e.message, "vulkan:0 (");
  expect_contains(e.message, ") was lost during vkQueueSubmit");
  assert_true(kn_vk_context_lost(ctx));
  kn_vk_buffer *b2 = NULL;
  assert_int_equal(kn_vk_buffer_create(ctx, 1024, &b2, &e), SG_UNAVAILABLE);
  expect_contains(e.message, ") was lost");
  assert_int_equal(kn_vk_batch_begin(ctx, &bt, &e), SG_UNAVAILABLE);
  float x = 1;
  assert_int_equal(kn_vk_upload(ctx, b, 0, &x, sizeof x, &e), SG_UNAVAILABLE);
  assert_int_equal(kn_vk_download(ctx, b, 0, &x, sizeof x, &e), SG_UNAVAILABLE);
  sg_error_clear(&e);
  /* a second holder keeps the lost context alive; its buffers may still be freed */
  kn_vk_context_retain(ctx);
  kn_vk_context_release(ctx);
  kn_vk_buffer_destroy(b);
  kn_vk_context_release(ctx);
  arm(NULL);
}

static void loss_fails_one_request_and_the_device_reopens(const char *spec, const char *during) {
  expect_sum_ok(); /* the device is open and working */
  arm(spec);
  char *res, *msg;
  assert_int_equal(run(SUM_SRC, SUM_ARGS, &res, &msg), SG_UNAVAILABLE);
  assert_null(res);
  expect_contains(msg, "vulkan:0 (");
  expect_contains(msg, during);
  expect_contains(msg, "; the request failed, the device is reopened for the next one");
  free(msg);
  expect_sum_ok(); /* a new context */
  expect_sum_ok();
  arm(NULL);
}

static void lost_at_submit(void **state) {
  (void)state;
  loss_fails_one_request_and_the_device_reopens("lost@submit:1", ") was lost during vkQueueSubmit");
}

static void lost_at_wait(void **state) {
  (void)state;
  loss_fails_one_request_and_the_device_reopens("lost@wait:1",
                                                ") was lost during waiting for the device");
}

static void lost_at_alloc(void **state) {
  (void)state;
  /* 80 MB of float64 zeros: more than a pool block (64 MiB), a dedicated allocation */
  static const char *src = "(def f (n) (sum (zeros n)))\n";
  char *res, *msg;
  expect_sum_ok();
  arm("lost@alloc:1");
  assert_int_equal(run(src, "[10000000]", &res, &msg), SG_UNAVAILABLE);
  expect_contains(msg, ") was lost during allocating a device memory block; the request failed");
  free(msg);
  arm(NULL);
  assert_int_equal(run(src, "[10000000]", &res, &msg), SG_OK);
  assert_non_null(strstr(res, "0"));
  free(res);
  free(msg);
}

static void oom_at_alloc_fails_one_request(void **state) {
  (void)state;
  static const char *src = "(def f (n) (sum (zeros n)))\n";
  char *res, *msg;
  expect_sum_ok();
  arm("oom@alloc:1");
  assert_int_equal(run(src, "[10000000]", &res, &msg), SG_RESOURCE_EXHAUSTED);
  expect_contains(msg, "vulkan:0: out of device memory allocating 80000000 bytes");
  assert_null(strstr(msg, "reopened"));
  free(msg);
  assert_int_equal(run(src, "[10000000]", &res, &msg), SG_OK);
  free(res);
  free(msg);
  expect_sum_ok();
  arm(NULL);
}

static gr_value *host_vector(float a, float b) {
  int64_t shape[1] = {2};
  kn_tensor *t = kn_tensor_new(KN_FLOAT32, 1, shape);
  ((float *)t->data)[0] = a;
  ((float *)t->data)[1] = b;
  return gr_value_tensor(t);
}

/* Resident tensors made before a loss: one computed on the device has no host copy
 * and gives a clear error; one Put from the host still has its host copy. */
static void resident_tensors_after_loss(void **state) {
  (void)state;
  sg_error e = SG_ERROR_INIT;
  gr_value *x = host_vector(1, 2), *put = NULL, *sum = NULL;
  assert_int_equal(gr_value_to_device(x, DEV, &put, &e), SG_OK);
  gr_value *args[2] = {put, put}, *var = NULL;
  assert_int_equal(gr_eager_op("add", args, 2, DEV, &sum, &e), SG_OK);
  assert_int_equal(gr_eager_op("variable", &sum, 1, DEV, &var, &e), SG_OK);

  arm("lost@submit:1");
  char *res, *msg;
  assert_int_equal(run(SUM_SRC, SUM_ARGS, &res, &msg), SG_UNAVAILABLE);
  free(msg);
  arm(NULL);
  expect_sum_ok(); /* reopened */

  kn_tensor *t = NULL;
  assert_int_equal(gr_value_host_tensor(sum, &t, &e), SG_UNAVAILABLE);
  expect_contains(e.message, "a tensor's data was on vulkan:0, which was lost; compute it again");
  /* as an operand of a new op on the reopened device: the same error, no garbage */
  gr_value *out = NULL;
  gr_value *args2[2] = {sum, put};
  assert_int_equal(gr_eager_op("mul", args2, 2, DEV, &out, &e), SG_UNAVAILABLE);
  expect_contains(e.message, "which was lost");
  assert_null(out);
  /* a variable holding it: reading fails the same way, assigning a new value works */
  assert_int_equal(gr_eager_op("read", &var, 1, DEV, &out, &e), SG_OK);
  assert_int_equal(gr_value_host_tensor(out, &t, &e), SG_UNAVAILABLE);
  expect_contains(e.message, "which was lost");
  gr_value_release(out);
  gr_value *assigned = NULL;
  assert_int_equal(gr_eager_op("assign", (gr_value *[]){var, put}, 2, DEV, &assigned, &e), SG_OK);
  gr_value_release(assigned);
  gr_value *cur = gr_value_variable_get(var);
  assert_int_equal(gr_value_host_tensor(cur, &t, &e), SG_OK);
  assert_true(((float *)t->data)[1] == 2.0f);
  kn_tensor_release(t);
  gr_value_release(cur);
  gr_value_release(var);
  /* the Put value's host copy is still good, and works as an operand */
  assert_int_equal(gr_value_host_tensor(put, &t, &e), SG_OK);
  assert_true(((float *)t->data)[0] == 1.0f && ((float *)t->data)[1] == 2.0f);
  kn_tensor_release(t);
  assert_int_equal(gr_eager_op("add", args, 2, DEV, &out, &e), SG_OK);
  assert_int_equal(gr_value_host_tensor(out, &t, &e), SG_OK);
  assert_true(((float *)t->data)[0] == 2.0f && ((float *)t->data)[1] == 4.0f);
  kn_tensor_release(t);
  gr_value_release(out);
  sg_error_clear(&e);
  /* the last references to the lost context: it is destroyed here */
  gr_value_release(sum);
  gr_value_release(put);
  gr_value_release(x);
  expect_sum_ok();
}

/* Requests running on the context when it is lost: each either computes the right
 * answer or fails with the loss, none crashes or reads freed memory (ASan), and the
 * lost context is destroyed when the last of them ends. */
enum { THREADS = 4, PER_THREAD = 8 };

static void *hammer(void *arg) {
  int *failed = arg;
  for (int i = 0; i < PER_THREAD; i++) {
    char *res, *msg;
    sg_code rc = run(SUM_SRC, SUM_ARGS, &res, &msg);
    bool right = rc == SG_OK && strstr(res, "\"data\":[2e+01]");
    bool lost = rc == SG_UNAVAILABLE && msg && strstr(msg, "vulkan:0 (") &&
                strstr(msg, " was lost") && strstr(msg, "the device is reopened for the next one");
    if (lost) {
      (*failed)++;
    } else if (!right) {
      fprintf(stderr, "unexpected: %s / %s\n", sg_code_name(rc), msg ? msg : res);
      *failed = -1000;
    }
    free(res);
    free(msg);
  }
  return NULL;
}

static void loss_under_concurrent_requests(void **state) {
  (void)state;
  expect_sum_ok();
  arm("lost@submit:6");
  pthread_t t[THREADS];
  int failed[THREADS] = {0};
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, hammer, &failed[i]);
  int total = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    assert_true(failed[i] >= 0);
    total += failed[i];
  }
  fprintf(stderr, "%d of %d concurrent requests failed with the loss\n", total,
          THREADS * PER_THREAD);
  assert_true(total >= 1); /* the request whose submission was lost, and any sharing it */
  assert_true(total < THREADS * PER_THREAD);
  arm(NULL);
  expect_sum_ok();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fault_spec_errors),
      cmocka_unit_test(context_refuses_work_after_loss),
      cmocka_unit_test(lost_at_submit),
      cmocka_unit_test(lost_at_wait),
      cmocka_unit_test(lost_at_alloc),
      cmocka_unit_test(oom_at_alloc_fails_one_request),
      cmocka_unit_test(resident_tensors_after_loss),
      cmocka_unit_test(loss_under_concurrent_requests),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
