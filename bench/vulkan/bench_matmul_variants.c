/*
 * bench_matmul_variants.c — `bench_vulkan --matmul-variants`: GFLOPS of each matmul
 * variant (tiled, subgroup, coop; forced through kn_vk_options.matmul_variant) on each
 * Vulkan device, and of the auto choice, against the CPU backend (kn_matmul) on the
 * same products: square float32, skinny float32 (matrix @ vector, n = 4), and float16.
 * Lines look like
 *   mmv float32 512x512x512       cpu                  105.20 GFLOPS
 *   mmv float32 512x512x512       vulkan:0 tiled         2.41 GFLOPS  (0.02x CPU backend)
 * so bench/vulkan/compare.py can add NumPy's figure for the same product.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_vulkan.h"
#include "kn.h"
#include "kn_vulkan.h"

typedef struct product {
  kn_dtype dt;
  kn_vk_elem et;
  int64_t m, n, k;
} product;

static double now_s(void) { return (double)sg_now_ns() / 1e9; }

static kn_tensor *filled(kn_dtype dt, int64_t r, int64_t c) {
  int64_t shape[2] = {r, c};
  kn_tensor *t = kn_tensor_new(dt, 2, shape);
  uint64_t s = 12345;
  for (int64_t i = 0; i < t->size; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    kn_set_f64(t, i, (double)((s >> 40) & 0xffff) / 65536.0 - 0.5);
  }
  return t;
}

static double gflops(const product *p, double secs) {
  return 2.0 * (double)p->m * (double)p->n * (double)p->k / secs / 1e9;
}

static double cpu_gflops(const product *p, int reps) {
  kn_tensor *a = filled(p->dt, p->m, p->k), *b = filled(p->dt, p->k, p->n), *c;
  sg_error e = SG_ERROR_INIT;
  double best = 1e30;
  for (int r = 0; r <= reps; r++) {
    double t0 = now_s();
    if (kn_matmul(a, b, &c, &e) != SG_OK) {
      fprintf(stderr, "bench_vulkan: cpu matmul: %s\n", e.message);
      exit(1);
    }
    double t = now_s() - t0;
    kn_tensor_release(c);
    if (r > 0 && t < best)
      best = t;
  }
  kn_tensor_release(a);
  kn_tensor_release(b);
  return gflops(p, best);
}

/* Best of reps (after a warm-up that builds the pipeline); 0 when the variant fails. */
static double device_gflops(kn_vk_context *ctx, const product *p, int reps) {
  kn_tensor *ha = filled(p->dt, p->m, p->k), *hb = filled(p->dt, p->k, p->n);
  size_t es = kn_dtype_size(p->dt);
  sg_error e = SG_ERROR_INIT;
  kn_vk_buffer *a = NULL, *b = NULL, *c = NULL;
  double best = 1e30;
  sg_code rc;
  if ((rc = kn_vk_buffer_create(ctx, (uint64_t)ha->size * es, &a, &e)) ||
      (rc = kn_vk_buffer_create(ctx, (uint64_t)hb->size * es, &b, &e)) ||
      (rc = kn_vk_buffer_create(ctx, (uint64_t)(p->m * p->n) * es, &c, &e)) ||
      (rc = kn_vk_upload(ctx, a, 0, ha->data, (uint64_t)ha->size * es, &e)) ||
      (rc = kn_vk_upload(ctx, b, 0, hb->data, (uint64_t)hb->size * es, &e)))
    goto done;
  for (int r = 0; r <= reps && rc == SG_OK; r++) {
    kn_vk_batch *bt;
    if ((rc = kn_vk_batch_begin(ctx, &bt, &e)))
      break;
    double t0 = now_s();
    if ((rc = kn_vk_matmul_typed(bt, p->et, a, b, c, 1, p->m, p->n, p->k, 0, 0, &e))) {
      kn_vk_batch_discard(bt);
      break;
    }
    if ((rc = kn_vk_batch_submit(bt, 0, &e)))
      break;
    double t = now_s() - t0;
    if (r > 0 && t < best)
      best = t;
  }
done:
  if (rc != SG_OK) {
    printf("  (failed: %s)\n", e.message);
    sg_error_clear(&e);
  }
  kn_vk_buffer_destroy(a);
  kn_vk_buffer_destroy(b);
  kn_vk_buffer_destroy(c);
  kn_tensor_release(ha);
  kn_tensor_release(hb);
  return rc == SG_OK ? gflops(p, best) : 0;
}

int bench_matmul_variants(bool quick) {
  const product all[] = {
      {KN_FLOAT32, KN_VK_F32, 256, 256, 256},   {KN_FLOAT32, KN_VK_F32, 512, 512, 512},
      {KN_FLOAT32, KN_VK_F32, 1024, 1024, 1024}, {KN_FLOAT32, KN_VK_F32, 4096, 1, 4096},
      {KN_FLOAT32, KN_VK_F32, 1024, 4, 4096},   {KN_FLOAT16, KN_VK_F16, 256, 256, 256},
      {KN_FLOAT16, KN_VK_F16, 512, 512, 512},   {KN_FLOAT16, KN_VK_F16, 4096, 1, 4096},
  };
  size_t np = sizeof all / sizeof *all;
  kn_vk_device_info *devs;
  size_t ndev;
  if (!bench_devices(&devs, &ndev))
    return 0;
  sg_error e = SG_ERROR_INIT;
  printf("# matmul variants: GFLOPS per (dtype, MxNxK), forced variant vs CPU backend "
         "(kn_matmul: %s for float32, a float64 loop for float16)\n",
         kn_blas_name());
  double cpu[sizeof all / sizeof *all];
  for (size_t i = 0; i < np; i++) {
    const product *p = &all[i];
    if (quick && p->m * p->n * p->k > (int64_t)512 * 512 * 512)
      continue;
    cpu[i] = cpu_gflops(p, p->dt == KN_FLOAT16 ? 1 : 3);
    printf("mmv %-7s %lldx%lldx%-10lld cpu              %9.2f GFLOPS\n", kn_dtype_name(p->dt),
           (long long)p->m, (long long)p->n, (long long)p->k, cpu[i]);
  }
  for (size_t d = 0; d < ndev; d++) {
    printf("\n# vulkan:%zu  %s\n", d, devs[d].name);
    for (int v = KN_VK_MATMUL_AUTO; v < KN_VK_MATMUL_NVARIANTS; v++) {
      if (v != KN_VK_MATMUL_AUTO && !kn_vk_matmul_variant_offered(&devs[d], v)) {
        printf("variant %s: not offered by this device\n",
               kn_vk_matmul_variant_name((kn_vk_matmul_variant)v));
        continue;
      }
      kn_vk_options opts = {.matmul_variant = (kn_vk_matmul_variant)v};
      kn_vk_context *ctx;
      if (kn_vk_context_create((int)d, &opts, &ctx, &e) != SG_OK) {
        printf("cannot open: %s\n", e.message);
        sg_error_clear(&e);
        continue;
      }
      for (size_t i = 0; i < np; i++) {
        const product *p = &all[i];
        if (quick && p->m * p->n * p->k > (int64_t)512 * 512 * 512)
          continue;
        if (v != KN_VK_MATMUL_AUTO &&
            !kn_vk_matmul_available(&devs[d], p->et, (kn_vk_matmul_variant)v, NULL))
          continue;
        kn_vk_matmul_shape sh = {1, p->m, p->n, p->k};
        kn_vk_matmul_plan plan =
            kn_vk_matmul_choice(&sh, p->et, &devs[d], (kn_vk_matmul_variant)v);
        char who[64];
        if (v == KN_VK_MATMUL_AUTO)
          snprintf(who, sizeof who, "vulkan:%zu auto=%s", d,
                   kn_vk_matmul_variant_name(plan.variant));
        else
          snprintf(who, sizeof who, "vulkan:%zu %s", d,
                   kn_vk_matmul_variant_name((kn_vk_matmul_variant)v));
        double g = device_gflops(ctx, p, p->m * p->n * p->k >= (int64_t)1 << 30 ? 1 : 3);
        printf("mmv %-7s %lldx%lldx%-10lld %-20s %9.2f GFLOPS  (%.3fx CPU backend)\n",
               kn_dtype_name(p->dt), (long long)p->m, (long long)p->n, (long long)p->k, who, g,
               g / cpu[i]);
      }
      kn_vk_context_destroy(ctx);
    }
  }
  free(devs);
  return 0;
}
