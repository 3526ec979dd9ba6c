// SPDX-License-Identifier: Apache-2.0
/*
 * ad_bench.c — reverse-mode AD cost (issue 7): for an MLP loss and an RNN cell loss,
 * the time of one Execute of value-and-gradient (a def returning the loss and
 * (grad loss ...)) over the time of the value alone, both staged and optimized the
 * same way and run side by side on the CPU backend. Target: ratio ≤ 3. Each Execute
 * runs K = 20 evaluations in a staged while and returns a scalar (value_and_grad adds
 * the sum of each gradient tensor, which keeps all of it computed), so JSON parsing
 * and printing do not swamp the arithmetic.
 * rnn8 runs the cell over 8 steps in a functional while and differentiates through it.
 * Usage: ad_bench [ITERATIONS]   (prints one line per model with the ratio)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr.h"

/* K evaluations inside one staged while, so argument JSON parsing is amortized */
#define LOOPS                                                                           \
  "(def value (a b c d k) (getitem (while (lambda (i s) (< i k))\n"                     \
  "  (lambda (i s) (tuple (+ i 1) (+ s (loss a b c d)))) (tuple 0 0.0)) 1))\n"          \
  "(def value_and_grad (a b c d k) (getitem (while (lambda (i s) (< i k))\n"            \
  "  (lambda (i s) (tuple (+ i 1) (+ s (vg a b c d)))) (tuple 0 0.0)) 1))\n"

static const char *MLP =
    "(def loss (w1 w2 x y)\n"
    "  (mean (log (+ 1.0 (exp (neg (* y (matmul (tanh (matmul x w1)) w2))))))))\n"
    "(def vg (w1 w2 x y)\n"
    "  (let g ((grad loss 0 1) w1 w2 x y)\n"
    "    (+ (loss w1 w2 x y) (+ (sum (getitem g 0)) (sum (getitem g 1))))))\n"
    LOOPS;

/* one step of an Elman RNN cell h' = tanh(x Wx + h Wh), loss = sum(h' * h') */
static const char *RNN =
    "(def loss (wx wh x h) (let n (tanh (+ (matmul x wx) (matmul h wh))) (sum (* n n))))\n"
    "(def vg (wx wh x h)\n"
    "  (let g ((grad loss 0 1) wx wh x h)\n"
    "    (+ (loss wx wh x h) (+ (sum (getitem g 0)) (sum (getitem g 1))))))\n"
    LOOPS;

/* the same cell unrolled over 8 time steps by a functional while: the gradient goes
 * through the loop (Myia's closure transformation: a recursive loop whose
 * backpropagators chain the steps' in reverse) */
static const char *RNN_SEQ =
    "(def loss (wx wh x h)\n"
    "  (let hs (while (lambda (t h) (< t 8))\n"
    "                 (lambda (t h) (tuple (+ t 1) (tanh (+ (matmul x wx) (matmul h wh)))))\n"
    "                 (tuple 0 h))\n"
    "    (let n (getitem hs 1) (sum (* n n)))))\n"
    "(def vg (wx wh x h)\n"
    "  (let g ((grad loss 0 1) wx wh x h)\n"
    "    (+ (loss wx wh x h) (+ (sum (getitem g 0)) (sum (getitem g 1))))))\n"
    LOOPS;

static uint64_t lcg = 7;
static double rnd(void) {
  lcg = (lcg * 1103515245u + 12345u) % 2147483648u;
  return (double)lcg / 2147483648.0 - 0.5;
}

static void put_tensor(sg_buf *b, int r, int c) {
  sg_buf_printf(b, "{\"dtype\":\"float64\",\"shape\":[%d,%d],\"data\":[", r, c);
  for (int i = 0; i < r * c; i++) sg_buf_printf(b, "%s%.6f", i ? "," : "", rnd());
  sg_buf_puts(b, "]}");
}

static double time_entry(const char *src, const char *entry, const char *args, int iters) {
  gr_stage_options so = {.entry = entry};
  gr_program *p;
  sg_error e = SG_ERROR_INIT;
  if (gr_stage(src, strlen(src), "bench.sexp", &so, &p, &e)) {
    fprintf(stderr, "stage %s: %s\n", entry, e.message);
    exit(1);
  }
  gr_exec_options xo = {0};
  double best = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    uint64_t t0 = sg_now_ns();
    for (int i = 0; i < iters; i++) {
      char *res = NULL, *printed = NULL;
      if (gr_execute_json(p, &xo, args, &res, &printed, &e)) {
        fprintf(stderr, "execute %s: %s\n", entry, e.message);
        exit(1);
      }
      free(res);
      free(printed);
    }
    double t = (double)(sg_now_ns() - t0) / iters;
    if (t < best) best = t;
  }
  gr_program_release(p);
  return best;
}

static void bench(const char *name, const char *src, int n, int a, int b, int c, int iters) {
  sg_buf args = SG_BUF_INIT;
  sg_buf_puts(&args, "[");
  put_tensor(&args, a, b); /* first weight */
  sg_buf_puts(&args, ",");
  put_tensor(&args, b, c); /* second weight */
  sg_buf_puts(&args, ",");
  put_tensor(&args, n, a); /* input */
  sg_buf_puts(&args, ",");
  put_tensor(&args, n, c); /* labels / previous state */
  sg_buf_puts(&args, ",20]");
  double v = time_entry(src, "value", args.data, iters);
  double vg = time_entry(src, "value_and_grad", args.data, iters);
  printf("%-5s value %9.1f us  value+grad %9.1f us  ratio %.2f (target <= 3)\n", name, v / 1e3,
         vg / 1e3, vg / v);
  sg_buf_free(&args);
}

int main(int argc, char **argv) {
  sg_memory_tune_for_reuse(); /* as the daemon does */
  int iters = argc > 1 ? atoi(argv[1]) : 50;
  if (iters < 1) iters = 1;
  bench("mlp", MLP, 256, 64, 64, 1, iters);  /* x 256x64, w1 64x64, w2 64x1, y 256x1 */
  bench("rnn", RNN, 64, 64, 64, 64, iters);  /* x 64x64, wx 64x64, wh 64x64, h 64x64 */
  bench("rnn8", RNN_SEQ, 64, 64, 64, 64, iters); /* the same over 8 steps in a while */
  return 0;
}
