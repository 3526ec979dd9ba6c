// SPDX-License-Identifier: Apache-2.0
/*
 * bench_vulkan.c — numbers for the Vulkan backend on every available Vulkan device:
 *   - float32 square matmul GFLOPS for n = 256..--max (default 2048, up to 4096), against
 *     the CPU backend (kn_sgemm: OpenBLAS or the blocked kernel) and a naive C triple
 *     loop (the textbook i-j-k dot product), all measured in this run;
 *   - elementwise add bandwidth (GB/s, 3 x 4 bytes per element), device vs CPU backend;
 *   - softmax along the last axis of [rows, 1024] (GB/s, 8 bytes per element): the
 *     subgroup variant and the shared-memory one on each device, vs the CPU backend;
 *   - a float16 elementwise chain and float16 reductions/softmax: float16 kernels vs the
 *     cast path (bench_f16_chain.c);
 *   - an 11-op float32 elementwise chain as one generated kernel vs one dispatch per
 *     op, and its bandwidth as a share of a one-op kernel's (bench_fused_chain.c);
 *   - per-dispatch cost inside one command buffer and per-submission cost (µs);
 *   - per-graph cost: a staged one-op graph and an MLP forward pass executed through
 *     gr_execute_json on the CPU backend and on each device (µs per request).
 * Usage: bench_vulkan [--quick] [--naive-max N] [--max N]
 *        bench_vulkan --matmul-variants [--quick] [--sizes N,N,..] [--no-cpu] [--reps N]
 *          (each matmul variant: see bench_matmul_variants.c)
 *        bench_vulkan --mlp B,D0,..,Dn [--reps N]   (a staged MLP forward: bench_mlp.c)
 *        bench_vulkan --fused-chain [--quick]   (only the fused chain, every device)
 * bench/vulkan/compare.py adds NumPy's figures to the same run, torch_compare.py
 * PyTorch's (scripts/gpu-run.sh on a GPU).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_vulkan.h"
#include "gr.h"
#include "kn.h"
#include "kn_vulkan.h"

static double secs(uint64_t t0) { return (double)(sg_now_ns() - t0) / 1e9; }

static void die_on(sg_code code, sg_error *e, const char *what) {
  if (code != SG_OK) {
    fprintf(stderr, "bench_vulkan: %s: %s\n", what, e->message);
    exit(1);
  }
}

double bench_uniform(uint64_t *state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)((*state >> 40) & 0xffff) / 65536.0 - 0.5;
}

static float *random_floats(size_t n) {
  float *p = malloc(n * sizeof *p);
  uint64_t s = 12345;
  for (size_t i = 0; i < n; i++)
    p[i] = (float)bench_uniform(&s);
  return p;
}

static double naive_gflops(int n) {
  float *a = random_floats((size_t)n * n), *b = random_floats((size_t)n * n);
  float *c = malloc((size_t)n * n * sizeof *c);
  uint64_t t0 = sg_now_ns();
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float s = 0;
      for (int k = 0; k < n; k++)
        s += a[(size_t)i * n + k] * b[(size_t)k * n + j];
      c[(size_t)i * n + j] = s;
    }
  double t = secs(t0);
  volatile float sink = c[n / 2];
  (void)sink;
  free(a);
  free(b);
  free(c);
  return 2.0 * n * n * n / t / 1e9;
}

static double cpu_gflops(int n, int reps) {
  float *a = random_floats((size_t)n * n), *b = random_floats((size_t)n * n);
  float *c = malloc((size_t)n * n * sizeof *c);
  double best = 1e30;
  for (int r = 0; r <= reps; r++) {
    uint64_t t0 = sg_now_ns();
    kn_sgemm(n, n, n, a, b, c);
    double t = secs(t0);
    if (r > 0 && t < best)
      best = t;
  }
  free(a);
  free(b);
  free(c);
  return 2.0 * n * n * (double)n / best / 1e9;
}

static double cpu_add_bandwidth(size_t n, int reps) {
  int64_t shape[1] = {(int64_t)n};
  kn_tensor *a = kn_tensor_new(KN_FLOAT32, 1, shape), *b = kn_tensor_new(KN_FLOAT32, 1, shape);
  double best = 1e30;
  for (int r = 0; r <= reps; r++) {
    sg_error e = SG_ERROR_INIT;
    kn_tensor *c;
    uint64_t t0 = sg_now_ns();
    die_on(kn_binary(KN_ADD, a, b, &c, &e), &e, "cpu add");
    double t = secs(t0);
    kn_tensor_release(c);
    if (r > 0 && t < best)
      best = t;
  }
  kn_tensor_release(a);
  kn_tensor_release(b);
  return 3.0 * 4.0 * (double)n / best / 1e9;
}

/* Microseconds per gr_execute_json request of `src` on `device` (best of reps). */
static double graph_us(const char *src, const char *args, const char *device, int reps) {
  sg_error e = SG_ERROR_INIT;
  gr_program *p;
  die_on(gr_stage(src, strlen(src), "bench.sexp", NULL, &p, &e), &e, "stage");
  gr_exec_options xo = {.device = device};
  double best = 1e30;
  for (int r = 0; r <= reps; r++) {
    char *res = NULL, *printed = NULL;
    uint64_t t0 = sg_now_ns();
    die_on(gr_execute_json(p, &xo, args, &res, &printed, &e), &e, "execute");
    double t = secs(t0);
    free(res);
    free(printed);
    if (r > 0 && t < best)
      best = t;
  }
  gr_program_release(p);
  return best * 1e6;
}

/* JSON for a float32 tensor of the given shape (values in [-0.5, 0.5)). */
static void json_tensor(sg_buf *b, int64_t rows, int64_t cols) {
  float *v = random_floats((size_t)(rows * cols));
  sg_buf_printf(b, "{\"dtype\":\"float32\",\"shape\":[%lld,%lld],\"data\":[", (long long)rows,
                (long long)cols);
  for (int64_t i = 0; i < rows * cols; i++)
    sg_buf_printf(b, "%s%.4f", i ? "," : "", (double)v[i]);
  sg_buf_puts(b, "]}");
  free(v);
}

static const char *TINY = "(def f (a) (exp a))";
static const char *MLP = "(def mlp (x w1 w2) (softmax (matmul (relu (matmul x w1)) w2)))";

static kn_vk_buffer *make(kn_vk_context *ctx, size_t n, bool fill) {
  sg_error e = SG_ERROR_INIT;
  kn_vk_buffer *b;
  die_on(kn_vk_buffer_create(ctx, n * sizeof(float), &b, &e), &e, "buffer");
  if (fill) {
    float *h = random_floats(n);
    die_on(kn_vk_upload(ctx, b, 0, h, n * sizeof(float), &e), &e, "upload");
    free(h);
  }
  return b;
}

static double matmul_gflops(kn_vk_context *ctx, int n, int reps) {
  sg_error e = SG_ERROR_INIT;
  size_t nn = (size_t)n * n;
  kn_vk_buffer *a = make(ctx, nn, true), *b = make(ctx, nn, true), *c = make(ctx, nn, false);
  double best = 1e30;
  for (int r = 0; r <= reps; r++) { /* r == 0 warms up (pipeline build) */
    kn_vk_batch *bt;
    die_on(kn_vk_batch_begin(ctx, &bt, &e), &e, "batch");
    uint64_t t0 = sg_now_ns();
    die_on(kn_vk_matmul(bt, a, b, c, n, n, n, &e), &e, "matmul");
    die_on(kn_vk_batch_submit(bt, 0, &e), &e, "submit");
    double t = secs(t0);
    if (r > 0 && t < best)
      best = t;
  }
  kn_vk_buffer_destroy(a);
  kn_vk_buffer_destroy(b);
  kn_vk_buffer_destroy(c);
  return 2.0 * n * n * (double)n / best / 1e9;
}

static double add_bandwidth(kn_vk_context *ctx, size_t n, int reps) {
  sg_error e = SG_ERROR_INIT;
  kn_vk_buffer *a = make(ctx, n, true), *b = make(ctx, n, true), *c = make(ctx, n, false);
  kn_vk_shape s = {1, {(int64_t)n}};
  double best = 1e30;
  for (int r = 0; r <= reps; r++) {
    kn_vk_batch *bt;
    die_on(kn_vk_batch_begin(ctx, &bt, &e), &e, "batch");
    uint64_t t0 = sg_now_ns();
    die_on(kn_vk_binary(bt, KN_VK_ADD, a, &s, b, &s, c, &e), &e, "add");
    die_on(kn_vk_batch_submit(bt, 0, &e), &e, "submit");
    double t = secs(t0);
    if (r > 0 && t < best)
      best = t;
  }
  kn_vk_buffer_destroy(a);
  kn_vk_buffer_destroy(b);
  kn_vk_buffer_destroy(c);
  return 3.0 * 4.0 * (double)n / best / 1e9;
}

/* softmax of [rows, cols] float32 rows: GB/s (read + write) */
static double softmax_bandwidth(kn_vk_context *ctx, int64_t rows, int64_t cols, int reps) {
  sg_error e = SG_ERROR_INIT;
  size_t n = (size_t)(rows * cols);
  kn_vk_buffer *a = make(ctx, n, true), *c = make(ctx, n, false);
  double best = 1e30;
  for (int r = 0; r <= reps; r++) {
    kn_vk_batch *bt;
    die_on(kn_vk_batch_begin(ctx, &bt, &e), &e, "batch");
    uint64_t t0 = sg_now_ns();
    die_on(kn_vk_softmax_axis(bt, a, rows, cols, 1, false, c, &e), &e, "softmax");
    die_on(kn_vk_batch_submit(bt, 0, &e), &e, "submit");
    double t = secs(t0);
    if (r > 0 && t < best)
      best = t;
  }
  kn_vk_buffer_destroy(a);
  kn_vk_buffer_destroy(c);
  return 8.0 * (double)n / best / 1e9;
}

static double cpu_softmax_bandwidth(int64_t rows, int64_t cols, int reps) {
  sg_error e = SG_ERROR_INIT;
  int64_t shape[2] = {rows, cols};
  kn_tensor *a = kn_tensor_new(KN_FLOAT32, 2, shape), *c;
  float *v = random_floats((size_t)(rows * cols));
  memcpy(a->data, v, (size_t)(rows * cols) * sizeof(float));
  free(v);
  double best = 1e30;
  for (int r = 0; r <= reps; r++) {
    uint64_t t0 = sg_now_ns();
    die_on(kn_softmax(a, -1, false, &c, &e), &e, "cpu softmax");
    double t = secs(t0);
    kn_tensor_release(c);
    if (r > 0 && t < best)
      best = t;
  }
  kn_tensor_release(a);
  return 8.0 * (double)(rows * cols) / best / 1e9;
}

/* Seconds for one batch of `dispatches` tiny dispatches (best of reps). */
static double tiny_batch(kn_vk_context *ctx, kn_vk_buffer *x, kn_vk_buffer *y, int dispatches,
                         int reps) {
  sg_error e = SG_ERROR_INIT;
  double best = 1e30;
  for (int r = 0; r <= reps; r++) {
    uint64_t t0 = sg_now_ns();
    kn_vk_batch *bt;
    die_on(kn_vk_batch_begin(ctx, &bt, &e), &e, "batch");
    for (int i = 0; i < dispatches; i++)
      die_on(kn_vk_unary(bt, KN_VK_ABS, x, y, 64, &e), &e, "unary");
    die_on(kn_vk_batch_submit(bt, 0, &e), &e, "submit");
    double t = secs(t0);
    if (r > 0 && t < best)
      best = t;
  }
  return best;
}

bool bench_devices(kn_vk_device_info **devs, size_t *ndev) {
  sg_error e = SG_ERROR_INIT;
  if (kn_vk_enumerate(devs, ndev, &e) == SG_OK)
    return true;
  printf("no Vulkan: %s\n", e.message);
  sg_error_clear(&e);
  return false;
}

/* "N,N,..." → up to max positive integers; false on anything else. */
static bool int_list(const char *s, int64_t *out, int max, int *n) {
  *n = 0;
  while (*s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v <= 0 || *n == max || (*end && *end != ','))
      return false;
    out[(*n)++] = v;
    s = *end ? end + 1 : end;
  }
  return *n > 0;
}

int main(int argc, char **argv) {
  sg_memory_tune_for_reuse(); /* as the daemon does */
  bool quick = false, variants = false, no_cpu = false, fused_only = false;
  int naive_max = 1024, max_n = 2048, reps = 0, nsizes = 0, nmlp = 0;
  int64_t sizes64[16], mlp[16];
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (strcmp(argv[i], "--matmul-variants") == 0)
      variants = true;
    else if (strcmp(argv[i], "--no-cpu") == 0)
      no_cpu = true;
    else if (strcmp(argv[i], "--fused-chain") == 0)
      fused_only = true;
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc &&
             int_list(argv[i + 1], sizes64, 16, &nsizes))
      i++;
    else if (strcmp(argv[i], "--mlp") == 0 && i + 1 < argc &&
             int_list(argv[i + 1], mlp, 16, &nmlp))
      i++;
    else if (strcmp(argv[i], "--naive-max") == 0 && i + 1 < argc)
      naive_max = atoi(argv[++i]);
    else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
      max_n = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_vulkan [--quick] [--naive-max N] [--max N]\n"
                      "       bench_vulkan --matmul-variants [--quick] [--sizes N,N,..] "
                      "[--no-cpu] [--reps N]\n"
                      "       bench_vulkan --mlp B,D0,..,Dn [--reps N]\n"
                      "       bench_vulkan --fused-chain [--quick]\n");
      return 2;
    }
  }
  if (nmlp)
    return bench_mlp(mlp, nmlp, reps);
  if (variants) {
    int sq[16];
    for (int i = 0; i < nsizes; i++)
      sq[i] = (int)sizes64[i];
    bench_mmv_options o = {.quick = quick, .sizes = sq, .nsizes = nsizes,
                           .with_cpu = !no_cpu, .reps = reps};
    return bench_matmul_variants(&o);
  }
  if (fused_only)
    return bench_fused_chain_all(quick);
  int sizes[] = {256, 512, 1024, 2048, 4096};
  nsizes = 0;
  while (nsizes < 5 && sizes[nsizes] <= (quick ? 512 : max_n))
    nsizes++;
  if (quick && naive_max > 512)
    naive_max = 512;

  kn_vk_device_info *devs;
  size_t ndev;
  if (!bench_devices(&devs, &ndev))
    return 0;
  sg_error e = SG_ERROR_INIT;

  printf("# CPU backend (kn_sgemm: %s)\n", kn_blas_name());
  double cpu[5] = {0};
  for (int s = 0; s < nsizes; s++) {
    cpu[s] = cpu_gflops(sizes[s], sizes[s] >= 2048 ? 2 : 5);
    printf("matmul f32 n=%-5d cpu         %8.2f GFLOPS\n", sizes[s], cpu[s]);
  }
  size_t add_n = quick ? (size_t)1 << 22 : (size_t)1 << 24;
  double cpu_bw = cpu_add_bandwidth(add_n, 5);
  printf("add f32 n=%zu         cpu         %8.2f GB/s\n", add_n, cpu_bw);
  int64_t sm_rows = quick ? 1024 : 4096, sm_cols = 1024;
  double cpu_sm = cpu_softmax_bandwidth(sm_rows, sm_cols, 3);
  printf("softmax f32 [%lld,%lld]    cpu         %8.2f GB/s\n", (long long)sm_rows,
         (long long)sm_cols, cpu_sm);
  sg_buf tiny_args = SG_BUF_INIT, mlp_args = SG_BUF_INIT;
  sg_buf_puts(&tiny_args, "[");
  json_tensor(&tiny_args, 1, 64);
  sg_buf_puts(&tiny_args, "]");
  sg_buf_puts(&mlp_args, "[");
  json_tensor(&mlp_args, 64, 256);
  sg_buf_puts(&mlp_args, ",");
  json_tensor(&mlp_args, 256, 256);
  sg_buf_puts(&mlp_args, ",");
  json_tensor(&mlp_args, 256, 10);
  sg_buf_puts(&mlp_args, "]");
  double cpu_tiny = graph_us(TINY, tiny_args.data, "cpu", 50);
  double cpu_mlp = graph_us(MLP, mlp_args.data, "cpu", 10);
  printf("graph (exp a) [1,64]       cpu         %8.1f us per request\n", cpu_tiny);
  printf("graph mlp 64x256x256x10    cpu         %8.1f us per request\n", cpu_mlp);

  printf("\n# naive CPU triple loop\n");
  double naive[5] = {0};
  for (int s = 0; s < nsizes; s++) {
    if (sizes[s] > naive_max) {
      printf("matmul f32 n=%-5d naive-cpu   skipped (--naive-max %d)\n", sizes[s], naive_max);
      continue;
    }
    naive[s] = naive_gflops(sizes[s]);
    printf("matmul f32 n=%-5d naive-cpu   %8.2f GFLOPS\n", sizes[s], naive[s]);
  }

  for (size_t d = 0; d < ndev; d++) {
    printf("\n# vulkan:%zu  %s  (%s, %s %s)\n", d, devs[d].name,
           kn_vk_device_type_name(devs[d].type), devs[d].driver_name, devs[d].driver_info);
    kn_vk_options opts = {0};
    kn_vk_context *ctx;
    if (kn_vk_context_create((int)d, &opts, &ctx, &e) != SG_OK) {
      printf("cannot open: %s\n", e.message);
      sg_error_clear(&e);
      continue;
    }
    kn_vk_matmul_plan plan = kn_vk_matmul_choice(NULL, KN_VK_F32, &devs[d], KN_VK_MATMUL_AUTO);
    printf("kernels: matmul %s (%s); reductions/softmax %s\n", plan.kernel, plan.reason,
           devs[d].subgroup_arithmetic ? "with subgroup arithmetic" : "shared-memory trees");
    for (int s = 0; s < nsizes; s++) {
      int n = sizes[s];
      double g = matmul_gflops(ctx, n, n >= 2048 ? 1 : quick ? 2 : 5);
      if (naive[s] > 0)
        printf("matmul f32 n=%-5d vulkan:%zu    %8.2f GFLOPS  (%.2fx CPU backend, %.1fx naive CPU)\n",
               n, d, g, g / cpu[s], g / naive[s]);
      else
        printf("matmul f32 n=%-5d vulkan:%zu    %8.2f GFLOPS  (%.2fx CPU backend)\n", n, d, g,
               g / cpu[s]);
    }
    double bw = add_bandwidth(ctx, add_n, 5);
    printf("add f32 n=%zu         vulkan:%zu    %8.2f GB/s  (%.2fx CPU backend)\n", add_n, d, bw,
           bw / cpu_bw);
    double sm = softmax_bandwidth(ctx, sm_rows, sm_cols, 3);
    printf("softmax f32 [%lld,%lld]    vulkan:%zu    %8.2f GB/s  (%.2fx CPU backend; %s)\n",
           (long long)sm_rows, (long long)sm_cols, d, sm, sm / cpu_sm,
           devs[d].subgroup_arithmetic ? "subgroup variant" : "shared-memory variant");
    bench_f16_chain(ctx, (int)d, quick);
    bench_fused_chain(ctx, (int)d, quick);
    if (devs[d].subgroup_arithmetic) {
      kn_vk_options shared = {.no_subgroup_ops = true};
      kn_vk_context *c2;
      if (kn_vk_context_create((int)d, &shared, &c2, &e) == SG_OK) {
        double sm2 = softmax_bandwidth(c2, sm_rows, sm_cols, 3);
        printf("softmax f32 [%lld,%lld]    vulkan:%zu    %8.2f GB/s  (shared-memory variant: "
               "subgroup is %.2fx)\n",
               (long long)sm_rows, (long long)sm_cols, d, sm2, sm / sm2);
        kn_vk_context_destroy(c2);
      } else {
        sg_error_clear(&e);
      }
    }

    kn_vk_buffer *x = make(ctx, 64, true), *y = make(ctx, 64, false);
    int many = quick ? 200 : 1000;
    double one = tiny_batch(ctx, x, y, 1, 50);
    double lots = tiny_batch(ctx, x, y, many, 5);
    printf(
        "per-submission overhead    vulkan:%zu    %8.1f us  (begin + 1 dispatch + submit + wait)\n",
        d, one * 1e6);
    printf("per-dispatch overhead      vulkan:%zu    %8.2f us  (%d dependent dispatches, one "
           "command buffer)\n",
           d, (lots - one) / (many - 1) * 1e6, many);
    kn_vk_buffer_destroy(x);
    kn_vk_buffer_destroy(y);
    kn_vk_context_destroy(ctx);
    char dev[32];
    snprintf(dev, sizeof dev, "vulkan:%zu", d);
    double t = graph_us(TINY, tiny_args.data, dev, 50);
    printf("graph (exp a) [1,64]       %-10s  %8.1f us per request  (%.1fx CPU backend)\n", dev, t,
           t / cpu_tiny);
    t = graph_us(MLP, mlp_args.data, dev, 10);
    printf("graph mlp 64x256x256x10    %-10s  %8.1f us per request  (%.2fx CPU backend)\n", dev, t,
           t / cpu_mlp);
  }
  sg_buf_free(&tiny_args);
  sg_buf_free(&mlp_args);
  free(devs);
  return 0;
}
