// SPDX-License-Identifier: Apache-2.0
/*
 * bench_fused_chain.c — an 11-op float32 elementwise chain on one device as one
 * generated kernel (kn_vk_fused_f32: what the executor records for a chain,
 * graph/vulkan/exec_vulkan_fused.c) against one dispatch per op (what STAGD_FUSE=0
 * records), each recorded into one command buffer:
 *   y = tanh(sqrt(abs(abs(x*1.5 + 0.5) * x - 0.25) + 1) * 2) + x   (bench/chain_bench.py's)
 * and the same with neg in place of tanh (arithmetic only: memory traffic is all).
 * Prints ms (best of reps), the fused kernel's bandwidth (8 bytes per element: x read,
 * y written) as a share of a one-op kernel's (neg: the same 8 bytes, the most a pass
 * over memory reaches on this device), and checks both ways give the same bits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_vulkan.h"

enum { STEPS = 11, SCALARS = 5, TANH = 9 };
static const float scalars[SCALARS] = {1.5f, 0.5f, 0.25f, 1.0f, 2.0f};
#define X 0
#define S(k) KN_VK_FUSED_SCALAR(k)
#define P KN_VK_FUSED_PREV
static const kn_vk_fused_step chain[STEPS] = {
    {false, KN_VK_MUL, X, S(0)}, {false, KN_VK_ADD, P, S(1)}, {true, KN_VK_ABS, P, 0},
    {false, KN_VK_MUL, P, X},    {false, KN_VK_SUB, P, S(2)}, {true, KN_VK_ABS, P, 0},
    {false, KN_VK_ADD, P, S(3)}, {true, KN_VK_SQRT, P, 0},    {false, KN_VK_MUL, P, S(4)},
    {true, KN_VK_TANH, P, 0},    {false, KN_VK_ADD, P, X}};

static void check(sg_code code, sg_error *e, const char *what) {
  if (code != SG_OK) {
    fprintf(stderr, "bench_vulkan: fused chain: %s: %s\n", what, e->message);
    exit(1);
  }
}

static kn_vk_buffer *buffer(kn_vk_context *ctx, int64_t n) {
  sg_error e = SG_ERROR_INIT;
  kn_vk_buffer *b;
  check(kn_vk_buffer_create(ctx, (uint64_t)n * 4, &b, &e), &e, "buffer");
  return b;
}

typedef struct bufs {
  kn_vk_buffer *x, *y, *tmp[2], *sc[SCALARS];
  int64_t n;
} bufs;

/* the chain recorded fused or one dispatch per op */
static void record(kn_vk_batch *bt, const kn_vk_fused_step *all, bool fused, const bufs *b,
                   sg_error *e) {
  if (fused) {
    kn_vk_buffer *ins[1] = {b->x};
    check(kn_vk_fused_f32(bt, all, STEPS, ins, NULL, NULL, 1, scalars, SCALARS, b->y, b->n, e), e, "fused");
    return;
  }
  kn_vk_shape full = {1, {b->n}}, zero = {0, {0}};
  kn_vk_buffer *prev = NULL;
  for (int s = 0; s < STEPS; s++) {
    kn_vk_buffer *dst = s == STEPS - 1 ? b->y : b->tmp[s & 1], *op[2];
    for (int k = 0; k < 2; k++) {
      int o = k ? all[s].b : all[s].a;
      op[k] = o == P ? prev : o == X ? b->x : b->sc[o - S(0)];
    }
    if (all[s].unary)
      check(kn_vk_unary(bt, (kn_vk_unop)all[s].op, op[0], dst, b->n, e), e, "unary");
    else
      check(kn_vk_binary(bt, (kn_vk_binop)all[s].op, op[0], all[s].a == P || all[s].a == X ? &full : &zero,
                         op[1], all[s].b == P || all[s].b == X ? &full : &zero, dst, e),
            e, "binary");
    prev = dst;
  }
}

/* best seconds of reps runs of one command buffer: the chain (fused or not), or one neg */
static double timed(kn_vk_context *ctx, const kn_vk_fused_step *steps, int way, const bufs *b, int reps) {
  sg_error e = SG_ERROR_INIT;
  double best = 1e30;
  for (int r = 0; r <= reps; r++) { /* run 0 builds the pipelines */
    kn_vk_batch *bt;
    check(kn_vk_batch_begin(ctx, &bt, &e), &e, "batch");
    uint64_t t0 = sg_now_ns();
    if (way == 2) check(kn_vk_unary(bt, KN_VK_NEG, b->x, b->y, b->n, &e), &e, "neg");
    else record(bt, steps, way == 1, b, &e);
    check(kn_vk_batch_submit(bt, 0, &e), &e, "submit");
    double t = (double)(sg_now_ns() - t0) / 1e9;
    if (r > 0 && t < best) best = t;
  }
  return best;
}

static float *download(kn_vk_context *ctx, kn_vk_buffer *buf, int64_t n) {
  sg_error e = SG_ERROR_INIT;
  float *p = malloc((size_t)n * 4);
  check(kn_vk_download(ctx, buf, 0, p, (uint64_t)n * 4, &e), &e, "download");
  return p;
}

void bench_fused_chain(kn_vk_context *ctx, int device, bool quick) {
  sg_error e = SG_ERROR_INIT;
  bufs b = {.n = quick ? 1 << 20 : 1 << 24};
  int reps = quick ? 3 : 5;
  float *h = malloc((size_t)b.n * 4);
  uint64_t seed = 42;
  for (int64_t i = 0; i < b.n; i++) h[i] = (float)(bench_uniform(&seed) * 6.0 - 3.0);
  b.x = buffer(ctx, b.n);
  b.y = buffer(ctx, b.n);
  b.tmp[0] = buffer(ctx, b.n);
  b.tmp[1] = buffer(ctx, b.n);
  check(kn_vk_upload(ctx, b.x, 0, h, (uint64_t)b.n * 4, &e), &e, "upload");
  for (int k = 0; k < SCALARS; k++) {
    b.sc[k] = buffer(ctx, 1);
    check(kn_vk_upload(ctx, b.sc[k], 0, &scalars[k], 4, &e), &e, "upload");
  }
  double one = timed(ctx, chain, 2, &b, reps);
  double copy_gbs = 8.0 * (double)b.n / one / 1e9;
  printf("one-op kernel (neg) f32 n=%lld   vulkan:%d  %8.3f ms  %8.2f GB/s\n", (long long)b.n, device,
         one * 1e3, copy_gbs);
  kn_vk_fused_step arith[STEPS];
  memcpy(arith, chain, sizeof arith);
  arith[TANH] = (kn_vk_fused_step){true, KN_VK_NEG, P, 0};
  const struct { const char *name; const kn_vk_fused_step *steps; } chains[2] = {
      {"tanh chain", chain}, {"arith chain", arith}};
  for (int c = 0; c < 2; c++) {
    double t_plain = timed(ctx, chains[c].steps, 0, &b, reps);
    float *want = download(ctx, b.y, b.n);
    double t_fused = timed(ctx, chains[c].steps, 1, &b, reps);
    float *got = download(ctx, b.y, b.n);
    bool same = memcmp(got, want, (size_t)b.n * 4) == 0;
    double gbs = 8.0 * (double)b.n / t_fused / 1e9;
    printf("%s (%d ops) f32 n=%lld vulkan:%d  fused %8.3f ms (%.2f GB/s, %.0f%% of one-op), "
           "op by op %8.3f ms (%d dispatches): fused %.2fx; bits %s\n",
           chains[c].name, STEPS, (long long)b.n, device, t_fused * 1e3, gbs, 100.0 * gbs / copy_gbs,
           t_plain * 1e3, STEPS, t_plain / t_fused, same ? "equal" : "DIFFER");
    free(got);
    free(want);
    if (!same) exit(1);
  }
  kn_vk_buffer_destroy(b.x);
  kn_vk_buffer_destroy(b.y);
  kn_vk_buffer_destroy(b.tmp[0]);
  kn_vk_buffer_destroy(b.tmp[1]);
  for (int k = 0; k < SCALARS; k++) kn_vk_buffer_destroy(b.sc[k]);
  free(h);
}

int bench_fused_chain_all(bool quick) {
  kn_vk_device_info *devs;
  size_t ndev;
  if (!bench_devices(&devs, &ndev)) return 0;
  for (size_t d = 0; d < ndev; d++) {
    sg_error e = SG_ERROR_INIT;
    kn_vk_context *ctx;
    printf("# vulkan:%zu %s\n", d, devs[d].name);
    if (kn_vk_context_create((int)d, NULL, &ctx, &e) != SG_OK) {
      printf("cannot open: %s\n", e.message);
      sg_error_clear(&e);
      continue;
    }
    bench_fused_chain(ctx, (int)d, quick);
    kn_vk_context_destroy(ctx);
  }
  free(devs);
  return 0;
}
