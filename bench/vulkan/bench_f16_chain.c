// SPDX-License-Identifier: Apache-2.0
/*
 * bench_f16_chain.c — float16 work on one device, before and after the float16 kernels,
 * recorded into one command buffer each way:
 *   - an elementwise chain (binary_f16): eight binary ops over n halves, one float16
 *     dispatch per op, or as exec_vulkan_dtype.c recorded float16 ops before (each
 *     operand cast to float32, the float32 kernel, the result cast back: four dispatches
 *     and three float32 buffers per op);
 *   - reductions and softmax (reduce_f16, argmax_f16, softmax_f16) on an [r, c] tensor:
 *     sum and max along rows, mean along columns, argmax along rows, softmax along rows
 *     and log_softmax along columns, one dispatch each, or as before (the input cast to
 *     float32, the float32 kernel, a scaling dispatch for the mean, the result cast
 *     back).
 * Prints the dispatch counts, ms per run (best of reps) and the ratio; for the
 * reductions also per op (each alone in a command buffer).
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_vulkan.h"
#include "kn.h"

enum { CHAIN_OPS = 8 };
static const kn_vk_binop chain_ops[CHAIN_OPS] = {KN_VK_ADD, KN_VK_MUL,     KN_VK_SUB, KN_VK_MAXIMUM,
                                                 KN_VK_MUL, KN_VK_MINIMUM, KN_VK_ADD, KN_VK_DIV};

static void check(sg_code code, sg_error *e, const char *what) {
  if (code != SG_OK) {
    fprintf(stderr, "bench_vulkan: float16 chain: %s: %s\n", what, e->message);
    exit(1);
  }
}

static kn_vk_buffer *buffer(kn_vk_context *ctx, kn_vk_elem et, int64_t n) {
  sg_error e = SG_ERROR_INIT;
  kn_vk_buffer *b;
  check(kn_vk_buffer_create(ctx, kn_vk_elem_bytes(et, n), &b, &e), &e, "buffer");
  return b;
}

/* Records the chain x = op(x, y) CHAIN_OPS times (x starts as a, ends in out); cast:
 * through float32 like the old path. Returns the dispatches recorded. */
static int record(kn_vk_batch *bt, bool cast, kn_vk_buffer *a, kn_vk_buffer *y,
                  kn_vk_buffer *tmp[2], kn_vk_buffer *f32[3], int64_t n, sg_error *e) {
  kn_vk_shape s = {1, {n}};
  kn_vk_buffer *x = a;
  int dispatches = 0;
  for (int i = 0; i < CHAIN_OPS; i++) {
    kn_vk_buffer *r = tmp[i % 2];
    if (cast) {
      check(kn_vk_cast(bt, KN_VK_F16, KN_VK_F32, x, f32[0], n, e), e, "cast");
      check(kn_vk_cast(bt, KN_VK_F16, KN_VK_F32, y, f32[1], n, e), e, "cast");
      check(kn_vk_binary_typed(bt, KN_VK_F32, chain_ops[i], f32[0], &s, f32[1], &s, f32[2], e),
            e, "binary");
      check(kn_vk_cast(bt, KN_VK_F32, KN_VK_F16, f32[2], r, n, e), e, "cast");
      dispatches += 4;
    } else {
      check(kn_vk_binary_typed(bt, KN_VK_F16, chain_ops[i], x, &s, y, &s, r, e), e, "binary");
      dispatches++;
    }
    x = r;
  }
  return dispatches;
}

/* The reductions and softmax of bench_f16_reductions over a [rows, cols] float16 a
 * (only: the one of index only, -1: all): results in o16 (halves) or oi (argmax); cast:
 * through float32 (f32[0] holds the converted input, f32[1] the float32 result, one1 a
 * float32 scalar 1/rows for the mean's scaling). Returns the dispatches recorded. */
typedef struct red_bufs {
  kn_vk_buffer *a, *o16, *oi, *f32[2], *one1;
  int64_t rows, cols;
} red_bufs;

enum { RED_OPS = 6 };
static const struct {
  const char *name;
  int kind; /* 0 reduce, 1 argmax, 2 softmax */
  kn_vk_reduce_op op;
  int axis;
} red_ops[RED_OPS] = {{"sum", 0, KN_VK_REDUCE_SUM, 1},       {"max", 0, KN_VK_REDUCE_MAX, 1},
                      {"mean(cols)", 0, KN_VK_REDUCE_MEAN, 0}, {"argmax", 1, 0, 1},
                      {"softmax", 2, 0, 1},                    {"log_softmax(cols)", 2, 1, 0}};

static int record_reductions(kn_vk_batch *bt, bool cast, const red_bufs *b, int only,
                             sg_error *e) {
  kn_vk_shape s = {2, {b->rows, b->cols}}, s0 = {0, {0}};
  int64_t n = b->rows * b->cols;
  int dispatches = 0;
  for (int i = 0; i < RED_OPS; i++) {
    if (only >= 0 && i != only) continue;
    int64_t nout = red_ops[i].kind == 2 ? n : red_ops[i].axis == 1 ? b->rows : b->cols;
    int64_t outer = red_ops[i].axis == 1 ? b->rows : 1, inner = red_ops[i].axis == 1 ? 1 : b->cols;
    int64_t len = red_ops[i].axis == 1 ? b->cols : b->rows;
    kn_vk_elem et = cast ? KN_VK_F32 : KN_VK_F16;
    kn_vk_buffer *in = b->a, *out = red_ops[i].kind == 1 ? b->oi : cast ? b->f32[1] : b->o16;
    if (cast) {
      check(kn_vk_cast(bt, KN_VK_F16, KN_VK_F32, b->a, b->f32[0], n, e), e, "cast");
      in = b->f32[0];
      dispatches++;
    }
    /* before: the mean was a sum and a scaling */
    kn_vk_reduce_op op = red_ops[i].op;
    if (cast && op == KN_VK_REDUCE_MEAN) op = KN_VK_REDUCE_SUM;
    if (red_ops[i].kind == 0)
      check(kn_vk_reduce_typed(bt, et, op, in, &s, red_ops[i].axis, out, e), e, "reduce");
    else if (red_ops[i].kind == 1)
      check(kn_vk_argmax(bt, et, in, &s, red_ops[i].axis, out, e), e, "argmax");
    else
      check(kn_vk_softmax_typed(bt, et, in, outer, len, inner, red_ops[i].op == 1, out, e), e,
            "softmax");
    dispatches++;
    if (cast && op != red_ops[i].op) { /* the mean's scaling */
      kn_vk_shape so = {1, {nout}};
      check(kn_vk_binary_typed(bt, KN_VK_F32, KN_VK_MUL, out, &so, b->one1, &s0, out, e), e,
            "scale");
      dispatches++;
    }
    if (cast && red_ops[i].kind != 1) {
      check(kn_vk_cast(bt, KN_VK_F32, KN_VK_F16, out, b->o16, nout, e), e, "cast");
      dispatches++;
    }
  }
  return dispatches;
}

/* float16 reductions and softmax: the float16 kernels vs the cast path */
static void bench_f16_reductions(kn_vk_context *ctx, int device, bool quick) {
  sg_error e = SG_ERROR_INIT;
  red_bufs b = {.rows = quick ? 1024 : 2048, .cols = quick ? 1024 : 2048};
  int64_t n = b.rows * b.cols;
  int reps = quick ? 3 : 5, dispatches[2] = {0};
  uint16_t *h = malloc((size_t)n * 2);
  for (int64_t i = 0; i < n; i++) h[i] = kn_f32_to_f16((float)(i % 97) / 16.0f - 3.0f);
  b.a = buffer(ctx, KN_VK_F16, n);
  b.o16 = buffer(ctx, KN_VK_F16, n);
  b.oi = buffer(ctx, KN_VK_I64, n);
  b.f32[0] = buffer(ctx, KN_VK_F32, n);
  b.f32[1] = buffer(ctx, KN_VK_F32, n);
  b.one1 = buffer(ctx, KN_VK_F32, 1);
  float scale = (float)(1.0 / (double)b.rows);
  check(kn_vk_upload(ctx, b.a, 0, h, (uint64_t)n * 2, &e), &e, "upload");
  check(kn_vk_upload(ctx, b.one1, 0, &scale, sizeof scale, &e), &e, "upload");
  /* all six in one command buffer, then each alone (only = 0..5) */
  char per_op[512];
  int used = 0;
  for (int only = -1; only < RED_OPS; only++) {
    double best[2] = {1e30, 1e30};
    for (int r = 0; r <= reps; r++) /* alternating, after a warm-up: as bench_f16_chain */
      for (int cast = 0; cast < 2; cast++) {
        kn_vk_batch *bt;
        check(kn_vk_batch_begin(ctx, &bt, &e), &e, "batch");
        uint64_t t0 = sg_now_ns();
        dispatches[cast] = record_reductions(bt, cast, &b, only, &e);
        check(kn_vk_batch_submit(bt, 0, &e), &e, "submit");
        double t = (double)(sg_now_ns() - t0) / 1e6;
        if (r > 0 && t < best[cast]) best[cast] = t;
      }
    if (only < 0)
      printf("f16 reductions+softmax [%lld,%lld] vulkan:%d  casts: %3d dispatches %8.2f ms; "
             "float16 kernels: %3d dispatches %8.2f ms  (%.2fx faster)\n",
             (long long)b.rows, (long long)b.cols, device, dispatches[1], best[1],
             dispatches[0], best[0], best[1] / best[0]);
    else
      used += snprintf(per_op + used, sizeof per_op - (size_t)used, "%s %d->%d %.2fx%s",
                       red_ops[only].name, dispatches[1], dispatches[0], best[1] / best[0],
                       only + 1 < RED_OPS ? ", " : "");
  }
  printf("f16 reductions per op  vulkan:%d  dispatches casts->float16, speed-up: %s\n", device,
         per_op);
  kn_vk_buffer *all[] = {b.a, b.o16, b.oi, b.f32[0], b.f32[1], b.one1};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) kn_vk_buffer_destroy(all[i]);
  free(h);
}

void bench_f16_chain(kn_vk_context *ctx, int device, bool quick) {
  if (!kn_vk_cast_supported(ctx)) {
    printf("f16 chain                  vulkan:%d    skipped (no float64/int64 for the cast "
           "kernel)\n", device);
    return;
  }
  sg_error e = SG_ERROR_INIT;
  int64_t n = quick ? (int64_t)1 << 20 : (int64_t)1 << 22;
  int reps = quick ? 3 : 5, dispatches[2] = {0};
  uint16_t *h = malloc((size_t)n * 2);
  for (int64_t i = 0; i < n; i++) h[i] = kn_f32_to_f16(1.0f + (float)(i % 97) / 64.0f);
  kn_vk_buffer *a = buffer(ctx, KN_VK_F16, n), *y = buffer(ctx, KN_VK_F16, n);
  kn_vk_buffer *tmp[2] = {buffer(ctx, KN_VK_F16, n), buffer(ctx, KN_VK_F16, n)}, *f32[3];
  for (int i = 0; i < 3; i++) f32[i] = buffer(ctx, KN_VK_F32, n);
  check(kn_vk_upload(ctx, a, 0, h, (uint64_t)n * 2, &e), &e, "upload");
  check(kn_vk_upload(ctx, y, 0, h, (uint64_t)n * 2, &e), &e, "upload");
  /* the two variants alternate (best of reps each, after a warm-up that builds the
   * pipelines), so a busy machine slows both alike */
  double best[2] = {1e30, 1e30};
  for (int r = 0; r <= reps; r++)
    for (int cast = 0; cast < 2; cast++) {
      kn_vk_batch *bt;
      check(kn_vk_batch_begin(ctx, &bt, &e), &e, "batch");
      uint64_t t0 = sg_now_ns();
      dispatches[cast] = record(bt, cast, a, y, tmp, f32, n, &e);
      check(kn_vk_batch_submit(bt, 0, &e), &e, "submit");
      double t = (double)(sg_now_ns() - t0) / 1e6;
      if (r > 0 && t < best[cast]) best[cast] = t;
    }
  kn_vk_buffer *all[] = {a, y, tmp[0], tmp[1], f32[0], f32[1], f32[2]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) kn_vk_buffer_destroy(all[i]);
  free(h);
  printf("f16 chain of %d ops n=%lld  vulkan:%d  casts: %3d dispatches %8.2f ms; float16 kernels: "
         "%3d dispatches %8.2f ms  (%.2fx faster)\n",
         CHAIN_OPS, (long long)n, device, dispatches[1], best[1], dispatches[0], best[0],
         best[1] / best[0]);
  bench_f16_reductions(ctx, device, quick);
}
