/*
 * bench_f16_chain.c — a float16 elementwise chain on one device, before and after the
 * float16 kernels (binary_f16): eight binary ops over n halves recorded into one
 * command buffer, either one float16 dispatch per op, or as exec_vulkan_dtype.c
 * recorded float16 ops before (each operand cast to float32, the float32 kernel, the
 * result cast back: four dispatches and three float32 buffers per op). Prints the
 * dispatch counts, ms per chain (best of reps) and the ratio.
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
}
