// SPDX-License-Identifier: Apache-2.0
/*
 * test_ad_train.c — a whole training loop as one staged graph ("Model and Loop in
 * Graph"): a functional while over steps whose body takes (grad loss 0 1 2) of a
 * two-layer MLP (tanh hidden layer with a broadcast bias, logistic loss) and applies
 * the optimizer-step primitives `adam` and `sgd_momentum` (op-table rows). Synthetic
 * two-blob classification set, float32.
 * Stated targets: Adam, 60 steps, lr 0.05: loss from above 0.6 to below 0.02;
 * SGD with momentum, 150 steps, lr 0.2, mu 0.9: to below 0.02.
 * Usage: test_ad_train [DEVICE]   DEVICE "cpu" (default) or "vulkan:N": the run on
 * DEVICE must also agree with the CPU run (final loss within 1e-4 relative), and no
 * primitive of the loop (the AD helpers and the optimizer steps included) may fall back
 * to the CPU.
 */
#include "ad_test_util.h"
#include "gr_vulkan.h"

static const char *device = "cpu";

#define LOSS \
  "(def loss (w1 b1 w2 x y)\n" \
  "  (mean (log (+ 1.0 (exp (neg (* y (matmul (tanh (+ (matmul x w1) b1)) w2))))))))\n"

static const char *ADAM =
    LOSS
    "(def train (w1 b1 w2 x y steps lr)\n"
    "  (let s (while (lambda (i w1 b1 w2 m1 mb m2 v1 vb v2) (< i steps))\n"
    "    (lambda (i w1 b1 w2 m1 mb m2 v1 vb v2)\n"
    "      (let g ((grad loss 0 1 2) w1 b1 w2 x y)\n"
    "        (let u1 (adam w1 m1 v1 (getitem g 0) (+ i 1) lr)\n"
    "          (let ub (adam b1 mb vb (getitem g 1) (+ i 1) lr)\n"
    "            (let u2 (adam w2 m2 v2 (getitem g 2) (+ i 1) lr)\n"
    "              (tuple (+ i 1) (getitem u1 0) (getitem ub 0) (getitem u2 0)\n"
    "                     (getitem u1 1) (getitem ub 1) (getitem u2 1)\n"
    "                     (getitem u1 2) (getitem ub 2) (getitem u2 2)))))))\n"
    "    (tuple 0 w1 b1 w2 (zeros_like w1) (zeros_like b1) (zeros_like w2)\n"
    "           (zeros_like w1) (zeros_like b1) (zeros_like w2)))\n"
    "    (tuple (loss w1 b1 w2 x y) (loss (getitem s 1) (getitem s 2) (getitem s 3) x y))))\n";

static const char *SGD =
    LOSS
    "(def train (w1 b1 w2 x y steps lr)\n"
    "  (let s (while (lambda (i w1 b1 w2 v1 vb v2) (< i steps))\n"
    "    (lambda (i w1 b1 w2 v1 vb v2)\n"
    "      (let g ((grad loss 0 1 2) w1 b1 w2 x y)\n"
    "        (let u1 (sgd_momentum w1 v1 (getitem g 0) lr 0.9)\n"
    "          (let ub (sgd_momentum b1 vb (getitem g 1) lr 0.9)\n"
    "            (let u2 (sgd_momentum w2 v2 (getitem g 2) lr 0.9)\n"
    "              (tuple (+ i 1) (getitem u1 0) (getitem ub 0) (getitem u2 0)\n"
    "                     (getitem u1 1) (getitem ub 1) (getitem u2 1)))))))\n"
    "    (tuple 0 w1 b1 w2 (zeros_like w1) (zeros_like b1) (zeros_like w2)))\n"
    "    (tuple (loss w1 b1 w2 x y) (loss (getitem s 1) (getitem s 2) (getitem s 3) x y))))\n";

static uint64_t lcg = 777;
static double rnd(void) {
  lcg = (lcg * 1103515245u + 12345u) % 2147483648u;
  return (double)lcg / 2147483648.0 - 0.5;
}

static void put(sg_buf *b, int nd, int r, int c, const double *d) {
  if (nd == 1) sg_buf_printf(b, "{\"dtype\":\"float32\",\"shape\":[%d],\"data\":[", c);
  else sg_buf_printf(b, "{\"dtype\":\"float32\",\"shape\":[%d,%d],\"data\":[", r, c);
  for (int i = 0; i < r * c; i++) sg_buf_printf(b, "%s%.9g", i ? "," : "", d[i]);
  sg_buf_puts(b, "]},");
}

static char *train_args(int steps, double lr) {
  enum { N = 64, H = 8 };
  double x[N * 2], y[N], w1[2 * H], b1[H], w2[H];
  lcg = 777;
  for (int i = 0; i < N; i++) {
    double c = i % 2 ? 1.0 : -1.0;
    x[2 * i] = c * 0.7 + rnd();
    x[2 * i + 1] = -c * 0.5 + rnd();
    y[i] = c;
  }
  for (int i = 0; i < 2 * H; i++) w1[i] = rnd();
  for (int i = 0; i < H; i++) b1[i] = rnd() * 0.1, w2[i] = rnd();
  sg_buf b = SG_BUF_INIT;
  sg_buf_puts(&b, "[");
  put(&b, 2, 2, H, w1);
  put(&b, 1, 1, H, b1);
  put(&b, 2, H, 1, w2);
  put(&b, 2, N, 2, x);
  put(&b, 2, N, 1, y);
  sg_buf_printf(&b, "%d,%g]", steps, lr);
  return sg_buf_detach(&b, NULL);
}

static void losses_on(const char *src, const char *args, const char *dev, bool no_opt, double *l) {
  gr_stage_options so = {.no_optimize = no_opt};
  gr_exec_options xo = {.device = dev};
  char *res = NULL, *printed = NULL;
  sg_error e = SG_ERROR_INIT;
  sg_code rc = gr_run_source(src, strlen(src), "train.sexp", &so, &xo, args, &res, &printed, &e);
  if (rc) fprintf(stderr, "%s: %s\n", dev, e.message);
  assert_int_equal(rc, SG_OK);
  assert_int_equal(nums(res, l, 2), 2);
  free(res);
  free(printed);
}

static void train(const char *src, int steps, double lr) {
  char *args = train_args(steps, lr);
  double cpu[2], l[2];
  losses_on(src, args, "cpu", false, cpu);
  fprintf(stderr, "loss %.6f -> %.6f after %d steps (cpu)\n", cpu[0], cpu[1], steps);
  assert_true(cpu[0] > 0.6);
  assert_true(cpu[1] < 0.02);
  losses_on(src, args, "cpu", true, l); /* unoptimized: the same program */
  assert_true(fabs(l[1] - cpu[1]) <= 1e-5 * (1 + cpu[1]));
  if (strcmp(device, "cpu")) {
    gr_vk_stats before, after;
    gr_vk_stats_get(&before);
    losses_on(src, args, device, false, l);
    gr_vk_stats_get(&after);
    fprintf(stderr, "loss %.6f -> %.6f after %d steps (%s): %llu dispatches, %llu submits, %llu uploads, "
            "%llu downloads, %llu CPU fallbacks\n", l[0], l[1], steps, device,
            (unsigned long long)(after.dispatches - before.dispatches),
            (unsigned long long)(after.submits - before.submits),
            (unsigned long long)(after.uploads - before.uploads),
            (unsigned long long)(after.downloads - before.downloads),
            (unsigned long long)(after.cpu_fallbacks - before.cpu_fallbacks));
    assert_int_equal(after.cpu_fallbacks - before.cpu_fallbacks, 0);
    /* the loop's state (weights, optimizer moments, the loss) stays on the device: only
     * the two losses of the result come back, and the batch is submitted when it is
     * full (BATCH_MAX_DISPATCHES), not once per iteration */
    assert_int_equal(after.downloads - before.downloads, 2);
    assert_true(after.submits - before.submits <= (after.dispatches - before.dispatches) / 1024 + 1);
    assert_true(after.uploads - before.uploads < 3 * (uint64_t)steps); /* hyperparameters cached */
    assert_true(fabs(l[0] - cpu[0]) <= 1e-4 * cpu[0]);
    assert_true(fabs(l[1] - cpu[1]) <= 1e-4 * cpu[1]);
  }
  free(args);
}

static void ad_train_adam(void **state) {
  (void)state;
  train(ADAM, 60, 0.05);
}

static void ad_train_sgd_momentum(void **state) {
  (void)state;
  train(SGD, 150, 0.2);
}

/* The loop stays one while node with the gradient and the updates inlined. */
static void ad_train_is_one_graph(void **state) {
  (void)state;
  char *d = dump(ADAM, GR_DUMP_TEXT, false);
  assert_non_null(strstr(d, "= while "));
  assert_non_null(strstr(d, "= adam "));
  assert_null(strstr(d, "= grad "));
  free(d);
}

int main(int argc, char **argv) {
  if (argc > 1) device = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ad_train_adam),
      cmocka_unit_test(ad_train_sgd_momentum),
      cmocka_unit_test(ad_train_is_one_graph),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
