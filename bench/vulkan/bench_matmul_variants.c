// SPDX-License-Identifier: Apache-2.0
/*
 * bench_matmul_variants.c — `bench_vulkan --matmul-variants`: GFLOPS of each matmul
 * variant (tiled, subgroup, coop; forced through kn_vk_options.matmul_variant) on each
 * Vulkan device, and of the auto choice, against the CPU backend (kn_matmul) on the
 * same products: square float32, skinny float32 (matrix @ vector, n = 4), and float16.
 * With a size list (--sizes 256,...,4096) the products are the float32 and float16
 * squares of those sizes instead, and --no-cpu leaves the CPU baseline out (the GPU
 * sweep of scripts/gpu-run.sh: a float16 4096 product on the CPU's float64 loop would
 * take minutes). Lines look like
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
  for (int64_t i = 0; i < t->size; i++)
    kn_set_f64(t, i, bench_uniform(&s));
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

static const product DEFAULT_PRODUCTS[] = {
      {KN_FLOAT32, KN_VK_F32, 256, 256, 256},   {KN_FLOAT32, KN_VK_F32, 512, 512, 512},
      {KN_FLOAT32, KN_VK_F32, 1024, 1024, 1024}, {KN_FLOAT32, KN_VK_F32, 4096, 1, 4096},
      {KN_FLOAT32, KN_VK_F32, 1024, 4, 4096},   {KN_FLOAT16, KN_VK_F16, 256, 256, 256},
      {KN_FLOAT16, KN_VK_F16, 512, 512, 512},   {KN_FLOAT16, KN_VK_F16, 4096, 1, 4096},
};

/* The products to time: the float32 then float16 squares of sizes, else (no sizes) the
 * default list, less those over 512^3 when quick. Sets *np; malloc'd. */
static product *products(const bench_mmv_options *o, size_t *np) {
  size_t ndef = sizeof DEFAULT_PRODUCTS / sizeof *DEFAULT_PRODUCTS;
  product *all = malloc((o->nsizes ? 2 * (size_t)o->nsizes : ndef) * sizeof *all);
  *np = 0;
  if (o->nsizes) {
    for (int f16 = 0; f16 < 2; f16++)
      for (int i = 0; i < o->nsizes; i++) {
        int64_t n = o->sizes[i];
        all[(*np)++] = (product){f16 ? KN_FLOAT16 : KN_FLOAT32, f16 ? KN_VK_F16 : KN_VK_F32,
                                 n, n, n};
      }
    return all;
  }
  for (size_t i = 0; i < ndef; i++) {
    const product *p = &DEFAULT_PRODUCTS[i];
    if (!o->quick || p->m * p->n * p->k <= (int64_t)512 * 512 * 512)
      all[(*np)++] = *p;
  }
  return all;
}

int bench_matmul_variants(const bench_mmv_options *o) {
  size_t np;
  product *all = products(o, &np);
  kn_vk_device_info *devs;
  size_t ndev;
  if (!bench_devices(&devs, &ndev)) {
    free(all);
    return 0;
  }
  sg_error e = SG_ERROR_INIT;
  if (o->with_cpu)
    printf("# matmul variants: GFLOPS per (dtype, MxNxK), forced variant vs CPU backend "
           "(kn_matmul: %s for float32, a float64 loop for float16)\n",
           kn_blas_name());
  else
    printf("# matmul variants: GFLOPS per (dtype, MxNxK), forced variant (no CPU baseline)\n");
  double *cpu = calloc(np, sizeof *cpu);
  for (size_t i = 0; i < np && o->with_cpu; i++) {
    const product *p = &all[i];
    cpu[i] = cpu_gflops(p, p->dt == KN_FLOAT16 ? 1 : 3);
    printf("mmv %-7s %lldx%lldx%-10lld cpu              %9.2f GFLOPS\n", kn_dtype_name(p->dt),
           (long long)p->m, (long long)p->n, (long long)p->k, cpu[i]);
  }
  for (size_t d = 0; d < ndev; d++) {
    printf("\n# vulkan:%zu  %s  (%s, %s %s)\n", d, devs[d].name,
           kn_vk_device_type_name(devs[d].type), devs[d].driver_name, devs[d].driver_info);
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
        int reps = o->reps ? o->reps : p->m * p->n * p->k >= (int64_t)1 << 30 ? 1 : 3;
        double g = device_gflops(ctx, p, reps);
        printf("mmv %-7s %lldx%lldx%-10lld %-20s %9.2f GFLOPS", kn_dtype_name(p->dt),
               (long long)p->m, (long long)p->n, (long long)p->k, who, g);
        if (o->with_cpu)
          printf("  (%.3fx CPU backend)", g / cpu[i]);
        printf("\n");
        fflush(stdout);
      }
      kn_vk_context_destroy(ctx);
    }
  }
  free(devs);
  free(cpu);
  free(all);
  return 0;
}
