// SPDX-License-Identifier: Apache-2.0
/*
 * bench_mlp.c — `bench_vulkan --mlp B,D0,D1,...,Dn`: one staged MLP forward pass
 *   (def mlp (x w1 .. wn) (softmax (matmul (relu (.. (matmul x w1) ..)) wn)))
 * with x [B,D0] and wi [D(i-1),Di] float32, executed through gr_execute_values on the
 * CPU backend and on each Vulkan device, two ways per device:
 *   resident — arguments uploaded once beforehand, result kept on the device (the
 *              compute a serving loop pays);
 *   host     — host tensors in, host tensor out (uploads and the download included).
 * Each device's result is checked against the CPU backend's (‖out − ref‖ / ‖ref‖).
 * Lines look like
 *   mlp 64x256x256x10                cpu                  0.412 ms     20.36 GFLOPS
 *   mlp 64x256x256x10                vulkan:0 resident    1.903 ms      4.41 GFLOPS
 *     (rel err 3.1e-08 vs CPU backend)   [on the same line]
 * so bench/vulkan/torch_compare.py can put PyTorch's figure for the same pass beside it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_vulkan.h"
#include "gr.h"
#include "kn.h"

static void die_on(sg_code code, sg_error *e, const char *what) {
  if (code != SG_OK) {
    fprintf(stderr, "bench_vulkan: mlp %s: %s\n", what, e->message);
    exit(1);
  }
}

/* [rows, cols] float32, uniform with variance 1/fan_in (activations stay near unit size). */
static gr_value *uniform(int64_t rows, int64_t cols, int64_t fan_in, uint64_t seed) {
  int64_t shape[2] = {rows, cols};
  kn_tensor *t = kn_tensor_new(KN_FLOAT32, 2, shape);
  float *v = t->data;
  double scale = sqrt(12.0 / (double)fan_in);
  uint64_t s = seed;
  for (int64_t i = 0; i < t->size; i++)
    v[i] = (float)(bench_uniform(&s) * scale);
  return gr_value_tensor(t);
}

/* The program's source for n layers: relu between them, softmax at the end. */
static char *mlp_source(int layers) {
  sg_buf b = SG_BUF_INIT;
  sg_buf_puts(&b, "(def mlp (x");
  for (int i = 1; i <= layers; i++)
    sg_buf_printf(&b, " w%d", i);
  sg_buf_puts(&b, ") (softmax ");
  for (int i = layers; i >= 1; i--)
    sg_buf_puts(&b, i == 1 ? "(matmul x w1)" : "(matmul (relu ");
  for (int i = 2; i <= layers; i++)
    sg_buf_printf(&b, ") w%d)", i);
  sg_buf_puts(&b, "))");
  return b.data;
}

/* Best of reps timed runs after one warm-up, in seconds; *out keeps the last result. */
static double timed(gr_program *p, const char *device, bool keep, gr_value **args, int n,
                    int reps, gr_value **out) {
  gr_exec_options xo = {.device = device, .keep_on_device = keep};
  double best = 1e30;
  *out = NULL;
  for (int r = 0; r <= reps; r++) {
    sg_error e = SG_ERROR_INIT;
    gr_value *res;
    char *printed = NULL;
    uint64_t t0 = sg_now_ns();
    die_on(gr_execute_values(p, &xo, args, n, &res, &printed, &e), &e, device);
    double t = (double)(sg_now_ns() - t0) / 1e9;
    free(printed);
    if (*out)
      gr_value_release(*out);
    *out = res;
    if (r > 0 && t < best)
      best = t;
  }
  return best;
}

/* ‖got − ref‖ / ‖ref‖ over two float32 tensor values (got may be device-resident). */
static double rel_error(const gr_value *got, const gr_value *ref) {
  sg_error e = SG_ERROR_INIT;
  kn_tensor *g;
  die_on(gr_value_host_tensor(got, &g, &e), &e, "download");
  const kn_tensor *r = gr_value_tensor_of(ref);
  const float *gv = g->data, *rv = r->data;
  double num = 0, den = 0;
  for (int64_t i = 0; i < r->size; i++) {
    double d = (double)gv[i] - (double)rv[i];
    num += d * d;
    den += (double)rv[i] * (double)rv[i];
  }
  kn_tensor_release(g);
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void report(const char *shape, const char *who, double secs, double flops,
                   double err) {
  printf("mlp %-28s %-20s %9.3f ms %9.2f GFLOPS", shape, who, secs * 1e3, flops / secs / 1e9);
  if (err >= 0)
    printf("  (rel err %.1e vs CPU backend)", err);
  printf("\n");
  fflush(stdout);
}

int bench_mlp(const int64_t *dims, int ndims, int reps) {
  int layers = ndims - 2;
  if (layers < 1) {
    fprintf(stderr, "bench_vulkan: --mlp needs B,D0,D1 at least (batch, input, one layer)\n");
    return 2;
  }
  if (reps <= 0)
    reps = 3;
  char shape[128] = "";
  double flops = 0;
  for (int i = 0; i < ndims; i++)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? "x" : "",
             (long long)dims[i]);
  for (int i = 1; i <= layers; i++)
    flops += 2.0 * (double)dims[0] * (double)dims[i] * (double)dims[i + 1];

  char *src = mlp_source(layers);
  sg_error e = SG_ERROR_INIT;
  gr_program *p;
  die_on(gr_stage(src, strlen(src), "bench_mlp.sexp", NULL, &p, &e), &e, "stage");
  gr_value **args = calloc((size_t)layers + 1, sizeof *args);
  gr_value **dev_args = calloc((size_t)layers + 1, sizeof *dev_args);
  args[0] = uniform(dims[0], dims[1], 1, 1);
  for (int i = 1; i <= layers; i++)
    args[i] = uniform(dims[i], dims[i + 1], dims[i], 1 + (uint64_t)i);
  printf("# staged MLP forward %s: %s (%.3g GFLOP per pass)\n", shape, src, flops / 1e9);

  gr_value *ref;
  double cpu = timed(p, "cpu", false, args, layers + 1, 1, &ref);
  report(shape, "cpu", cpu, flops, -1);

  kn_vk_device_info *devs;
  size_t ndev;
  if (bench_devices(&devs, &ndev)) {
    for (size_t d = 0; d < ndev; d++) {
      char dev[32], who[64];
      snprintf(dev, sizeof dev, "vulkan:%zu", d);
      int i = 0;
      for (; i <= layers; i++) {
        if (gr_value_to_device(args[i], dev, &dev_args[i], &e) != SG_OK)
          break;
      }
      if (i <= layers) {
        printf("mlp %-28s %-20s cannot upload: %s\n", shape, dev, e.message);
        sg_error_clear(&e);
      } else {
        gr_value *out;
        double t = timed(p, dev, true, dev_args, layers + 1, reps, &out);
        snprintf(who, sizeof who, "%s resident", dev);
        report(shape, who, t, flops, rel_error(out, ref));
        gr_value_release(out);
        t = timed(p, dev, false, args, layers + 1, reps, &out);
        snprintf(who, sizeof who, "%s host", dev);
        report(shape, who, t, flops, rel_error(out, ref));
        gr_value_release(out);
      }
      for (int k = 0; k < i; k++) {
        gr_value_release(dev_args[k]);
        dev_args[k] = NULL;
      }
    }
    free(devs);
  }
  gr_value_release(ref);
  for (int i = 0; i <= layers; i++)
    gr_value_release(args[i]);
  free(args);
  free(dev_args);
  gr_program_release(p);
  free(src);
  return 0;
}
