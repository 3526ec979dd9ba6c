// SPDX-License-Identifier: Apache-2.0
/*
 * kernels_matmul.c — the matmul variants (tiled shared-memory, subgroup K-split,
 * cooperative matrix, blocked 128x128), which of them a device and dtype can run, the selection policy
 * (kn_vk_matmul_choice, a pure function of the device description and the product's
 * shape; kn_vk_coop_choice for the coop variant's KHR or NV kernel) and the launcher
 * that records the chosen one.
 *
 * One table, `variants`, names each variant's kernel per element type; a NULL entry is
 * "no kernel for this dtype". The policy never rounds float32 to float16: the
 * cooperative-matrix kernel is for float16 tensors only.
 */
#include "vk_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  const char *kernels[KN_VK_F16 + 1]; /* per kn_vk_elem */
} variants[KN_VK_MATMUL_NVARIANTS] = {
    [KN_VK_MATMUL_AUTO] = {"auto", {NULL}},
    [KN_VK_MATMUL_TILED] = {"tiled",
                            {[KN_VK_F32] = "matmul",
                             [KN_VK_F64] = "matmul_f64",
                             [KN_VK_I32] = "matmul_i32",
                             [KN_VK_I64] = "matmul_i64",
                             [KN_VK_F16] = "matmul_f16"}},
    [KN_VK_MATMUL_SUBGROUP] = {"subgroup",
                               {[KN_VK_F32] = "matmul_subgroup",
                                [KN_VK_F64] = "matmul_subgroup_f64",
                                [KN_VK_I32] = "matmul_subgroup_i32",
                                [KN_VK_I64] = "matmul_subgroup_i64",
                                [KN_VK_F16] = "matmul_subgroup_f16"}},
    [KN_VK_MATMUL_COOP] = {"coop", {[KN_VK_F16] = "matmul_coop"}},
    [KN_VK_MATMUL_BLOCKED] = {"blocked",
                              {[KN_VK_F32] = "matmul_blocked",
                               [KN_VK_F64] = "matmul_blocked_f64",
                               [KN_VK_F16] = "matmul_blocked_f16"}},
};

/* The blocked kernel: 256 invocations, and two A and two B tiles of BK x 128 elements of
 * its accumulation type (float32 for float16 storage) in shared memory. */
enum { BLOCKED_INVOCATIONS = 256, BLOCKED_MIN_BK = 4, BLOCKED_BK = 16 };

/* matmul_coop.comp's shared memory: two 128x40 A and two 32x136 B tiles of halves, and
 * 8 float 16x16 result tiles. */
enum { COOP_SHARED_BYTES = 2 * (128 * 40 + 32 * 136) * 2 + 8 * 16 * 16 * 4 };

static uint32_t blocked_shared_bytes(kn_vk_elem et, uint32_t bk) {
  return 4u * bk * 128u * (et == KN_VK_F64 ? 8u : 4u);
}

/* The auto policy's skinny shapes: few output columns and a long reduction. */
enum { SKINNY_MAX_N = 4, SKINNY_MIN_K = 64 };

const char *kn_vk_matmul_variant_name(kn_vk_matmul_variant v) {
  return (unsigned)v < KN_VK_MATMUL_NVARIANTS ? variants[v].name : "?";
}

/* The index of s among n names (name(i)); NULL or "" is 0, the automatic choice.
 * Unknown: SG_INVALID_ARGUMENT listing the names. */
static sg_code choice_parse(const char *s, const char *(*name)(int), int n, const char *what,
                            int *out, sg_error *err) {
  *out = 0;
  if (s == NULL || *s == '\0')
    return SG_OK;
  for (int i = 0; i < n; i++)
    if (strcmp(s, name(i)) == 0) {
      *out = i;
      return SG_OK;
    }
  char expected[128] = "";
  for (int i = 0; i < n; i++)
    snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "%s%s",
             i == 0 ? "" : i == n - 1 ? " or " : ", ", name(i));
  return sg_error_set(err, SG_INVALID_ARGUMENT, "unknown %s '%s': expected %s", what, s, expected);
}

/* choice_parse of environment variable `var`, the error naming it. */
static sg_code choice_env(const char *var, const char *(*name)(int), int n, const char *what,
                          int *out, sg_error *err) {
  sg_error e = SG_ERROR_INIT;
  sg_code code = choice_parse(getenv(var), name, n, what, out, &e);
  if (code != SG_OK) {
    sg_error_set(err, code, "environment %s: %s", var, e.message);
    sg_error_clear(&e);
  }
  return code;
}

static const char *variant_name_at(int i) { return variants[i].name; }

sg_code kn_vk_matmul_variant_parse(const char *s, kn_vk_matmul_variant *out, sg_error *err) {
  int i;
  sg_code code = choice_parse(s, variant_name_at, KN_VK_MATMUL_NVARIANTS, "matmul variant", &i, err);
  *out = (kn_vk_matmul_variant)i;
  return code;
}

sg_code kn_vk_matmul_env_variant(kn_vk_matmul_variant *out, sg_error *err) {
  int i;
  sg_code code = choice_env("STAGD_VK_MATMUL", variant_name_at, KN_VK_MATMUL_NVARIANTS,
                            "matmul variant", &i, err);
  *out = (kn_vk_matmul_variant)i;
  return code;
}

sg_code kn_vk_matmul_bk_resolve(uint32_t *bk, sg_error *err) {
  const char *env = *bk ? NULL : getenv("STAGD_VK_MATMUL_BK");
  if (env && *env) {
    char *end;
    unsigned long v = strtoul(env, &end, 10);
    *bk = *end || v > 64 ? 0 : (uint32_t)v;
  } else if (*bk == 0) {
    *bk = BLOCKED_BK;
  }
  if (*bk == 4 || *bk == 8 || *bk == 16)
    return SG_OK;
  if (env)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "environment STAGD_VK_MATMUL_BK: '%s' is not a K step of the blocked "
                        "matmul: expected 4, 8 or 16", env);
  return sg_error_set(err, SG_INVALID_ARGUMENT,
                      "vulkan: matmul_bk %u is not a K step of the blocked matmul: expected 4, "
                      "8 or 16", *bk);
}

/* Whether d can run kernels of element type et at all (NULL: yes). */
static const char *elem_missing(const kn_vk_device_info *d, kn_vk_elem et) {
  switch (et) {
  case KN_VK_F32:
  case KN_VK_I32: return NULL;
  case KN_VK_F64: return d->float64 ? NULL : "the device has no shaderFloat64";
  case KN_VK_I64: return d->int64 ? NULL : "the device has no shaderInt64";
  case KN_VK_F16:
    return d->float16 ? NULL : "the device lacks shaderFloat16 or storageBuffer16BitAccess";
  default: return "no matmul kernel for this element type";
  }
}

bool kn_vk_matmul_available(const kn_vk_device_info *d, kn_vk_elem et, kn_vk_matmul_variant v,
                            const char **why) {
  const char *no = NULL;
  if ((unsigned)v >= KN_VK_MATMUL_NVARIANTS || v == KN_VK_MATMUL_AUTO)
    no = "not a matmul variant";
  else if ((no = elem_missing(d, et)) != NULL)
    ;
  else if (variants[v].kernels[et] == NULL)
    no = v == KN_VK_MATMUL_COOP ? "the cooperative-matrix kernel is float16 only (float32 "
                                  "inputs are never rounded to float16)"
                                : "no kernel of this variant for the element type";
  else if (v == KN_VK_MATMUL_BLOCKED && d->max_workgroup_invocations < BLOCKED_INVOCATIONS)
    no = "the device's workgroups hold fewer than 256 invocations";
  else if (v == KN_VK_MATMUL_BLOCKED &&
           d->max_shared_memory_bytes < blocked_shared_bytes(et, BLOCKED_MIN_BK))
    no = "the device's shared memory is too small for the blocked kernel's tiles";
  else if (v == KN_VK_MATMUL_SUBGROUP && !kn_vk_subgroup_usable(d))
    no = "the device offers no subgroup arithmetic in compute shaders";
  else if (v == KN_VK_MATMUL_SUBGROUP && et == KN_VK_I64 && !d->subgroup_extended_types)
    no = "the device has no shaderSubgroupExtendedTypes (subgroupAdd on int64)";
  else if (v == KN_VK_MATMUL_COOP && !d->cooperative_matrix_f16 && !d->cooperative_matrix_khr_f16)
    no = d->cooperative_matrix
             ? "the device's cooperative matrix lacks what matmul_coop needs "
               "(VK_KHR_ or VK_NV_cooperative_matrix with a 16x16x16 float16 -> float32 "
               "subgroup shape, and vulkanMemoryModel)"
             : "the device offers no cooperative matrix";
  else if (v == KN_VK_MATMUL_COOP && (d->subgroup_size == 0 || d->subgroup_size > 128 ||
                                      8 * d->subgroup_size > d->max_workgroup_invocations))
    no = "8 subgroups do not fit in a workgroup";
  else if (v == KN_VK_MATMUL_COOP && d->max_shared_memory_bytes < COOP_SHARED_BYTES)
    no = "the device's shared memory is too small for the cooperative-matrix kernel's tiles";
  if (why)
    *why = no;
  return no == NULL;
}

bool kn_vk_matmul_variant_offered(const kn_vk_device_info *d, kn_vk_matmul_variant v) {
  for (int et = 0; et <= KN_VK_F16; et++)
    if (kn_vk_matmul_available(d, (kn_vk_elem)et, v, NULL))
      return true;
  return false;
}

static const char *const coop_flavours[] = {"auto", "nv", "khr"};

static const char *flavour_name_at(int i) { return coop_flavours[i]; }

sg_code kn_vk_coop_flavour_parse(const char *s, kn_vk_coop_flavour *out, sg_error *err) {
  int i;
  sg_code code = choice_parse(s, flavour_name_at, KN_VK_COOP_KHR + 1, "cooperative-matrix flavour",
                              &i, err);
  *out = (kn_vk_coop_flavour)i;
  return code;
}

sg_code kn_vk_coop_env_flavour(kn_vk_coop_flavour *out, sg_error *err) {
  int i;
  sg_code code = choice_env("STAGD_VK_COOP", flavour_name_at, KN_VK_COOP_KHR + 1,
                            "cooperative-matrix flavour", &i, err);
  *out = (kn_vk_coop_flavour)i;
  return code;
}

kn_vk_coop_flavour kn_vk_coop_choice(const kn_vk_device_info *d, kn_vk_coop_flavour forced,
                                     const char **kernel, const char **reason) {
  bool khr = d->cooperative_matrix_khr_f16, nv = d->cooperative_matrix_f16;
  kn_vk_coop_flavour f = KN_VK_COOP_AUTO;
  const char *why;
  if (forced == KN_VK_COOP_KHR) {
    f = khr ? KN_VK_COOP_KHR : KN_VK_COOP_AUTO;
    why = khr ? "forced (STAGD_VK_COOP=khr): VK_KHR_cooperative_matrix"
              : "STAGD_VK_COOP=khr, but the device offers no VK_KHR_cooperative_matrix "
                "16x16x16 float16 -> float32 subgroup shape";
  } else if (forced == KN_VK_COOP_NV) {
    f = nv ? KN_VK_COOP_NV : KN_VK_COOP_AUTO;
    why = nv ? "forced (STAGD_VK_COOP=nv): VK_NV_cooperative_matrix"
             : "STAGD_VK_COOP=nv, but the device offers no VK_NV_cooperative_matrix "
               "16x16x16 float16 -> float32 subgroup shape";
  } else if (khr) {
    f = KN_VK_COOP_KHR;
    why = nv ? "VK_KHR_cooperative_matrix (preferred over the NV extension, also offered)"
             : "VK_KHR_cooperative_matrix";
  } else if (nv) {
    f = KN_VK_COOP_NV;
    why = "VK_NV_cooperative_matrix (no KHR 16x16x16 float16 -> float32 subgroup shape)";
  } else {
    why = "no 16x16x16 float16 -> float32 subgroup cooperative-matrix shape";
  }
  if (kernel)
    *kernel = f == KN_VK_COOP_KHR ? "matmul_coop_khr" : f == KN_VK_COOP_NV ? "matmul_coop" : NULL;
  if (reason)
    *reason = why;
  return f;
}

kn_vk_matmul_variant kn_vk_context_matmul_variant(const kn_vk_context *ctx) {
  return ctx->opts.matmul_variant;
}

/* The coop variant's kernel is the flavour kn_vk_coop_choice prefers (d NULL: NV). */
static kn_vk_matmul_plan plan_of(kn_vk_matmul_variant v, kn_vk_elem et, const char *reason,
                                 const kn_vk_device_info *d) {
  kn_vk_matmul_plan p = {v, variants[v].kernels[et], reason};
  if (v == KN_VK_MATMUL_COOP && d)
    kn_vk_coop_choice(d, KN_VK_COOP_AUTO, &p.kernel, NULL);
  return p;
}

kn_vk_matmul_plan kn_vk_matmul_choice(const kn_vk_matmul_shape *shape, kn_vk_elem et,
                                      const kn_vk_device_info *d, kn_vk_matmul_variant forced) {
  kn_vk_matmul_plan none = {KN_VK_MATMUL_AUTO, NULL, NULL};
  if ((unsigned)et > KN_VK_F16 || (none.reason = elem_missing(d, et)) != NULL)
    return none;
  if (forced != KN_VK_MATMUL_AUTO) {
    if (!kn_vk_matmul_available(d, et, forced, &none.reason))
      return none;
    return plan_of(forced, et, "forced (STAGD_VK_MATMUL or kn_vk_options.matmul_variant)", d);
  }
  bool skinny = shape && shape->n <= SKINNY_MAX_N && shape->k >= SKINNY_MIN_K;
  if (skinny && kn_vk_matmul_available(d, et, KN_VK_MATMUL_SUBGROUP, NULL))
    return plan_of(KN_VK_MATMUL_SUBGROUP, et,
                   "skinny product (n <= 4, k >= 64): one subgroup per output element", d);
  if (kn_vk_matmul_available(d, et, KN_VK_MATMUL_COOP, NULL))
    return plan_of(KN_VK_MATMUL_COOP, et,
                   "float16 on cooperative-matrix units, float32 accumulation", d);
  bool large = !shape || ((shape->m + 127) / 128) * ((shape->n + 127) / 128) *
                                 (shape->batch > 1 ? shape->batch : 1) >=
                             KN_VK_BLOCKED_MIN_BLOCKS;
  if (large && kn_vk_matmul_available(d, et, KN_VK_MATMUL_BLOCKED, NULL))
    return plan_of(KN_VK_MATMUL_BLOCKED, et,
                   d->cooperative_matrix && et == KN_VK_F32
                       ? "large product; cooperative matrix offers no float32 shape this "
                         "build uses (float32 is never rounded to float16): 128x128 blocks "
                         "with 8x8 register blocks"
                       : "large product: 128x128 blocks with 8x8 register blocks",
                   d);
  if (et == KN_VK_F16)
    return plan_of(KN_VK_MATMUL_TILED, et,
                   d->cooperative_matrix_f16 || d->cooperative_matrix_khr_f16
                       ? "tiled shared-memory kernel"
                       : "no usable float16 cooperative matrix; tiled shared-memory kernel, "
                         "float32 accumulation",
                   d);
  if (et == KN_VK_F32 && d->cooperative_matrix_f32)
    return plan_of(KN_VK_MATMUL_TILED, et,
                   "cooperative matrix offers float32, but this build's cooperative-matrix "
                   "kernel is float16 only; tiled shared-memory kernel", d);
  if (et == KN_VK_F32 && d->cooperative_matrix)
    return plan_of(KN_VK_MATMUL_TILED, et,
                   "cooperative matrix offered without a float32 shape (float32 is never "
                   "rounded to float16); tiled shared-memory kernel", d);
  return plan_of(KN_VK_MATMUL_TILED, et,
                 d->cooperative_matrix ? "tiled shared-memory kernel"
                                       : "no cooperative matrix; tiled shared-memory kernel", d);
}

sg_code kn_vk_matmul(kn_vk_batch *bt, kn_vk_buffer *a, kn_vk_buffer *b, kn_vk_buffer *c, int64_t m,
                     int64_t n, int64_t k, sg_error *err) {
  return kn_vk_matmul_typed(bt, KN_VK_F32, a, b, c, 1, m, n, k, 0, 0, err);
}

/* Must match the `push_constant` block of matmul*.comp; with an epilogue, its fields
 * follow (epilogue_push.glsl). */
typedef struct matmul_push {
  uint32_t m, n, k, batch_a, batch_b, batch_c, batch;
  kn_vk_epi_push epi;
} matmul_push;
_Static_assert(sizeof(matmul_push) <= KN_VK_PUSH_BYTES, "matmul push constants too big");
_Static_assert(6 + KN_VK_EPI_STEPS <= KN_VK_MAX_SPEC, "matmul epilogue specialization constants");
_Static_assert(3 + KN_VK_EPI_INPUTS <= KN_VK_MAX_BINDINGS, "matmul epilogue bindings");

static sg_code record(kn_vk_batch *bt, kn_vk_elem et, int trans, kn_vk_buffer *a, kn_vk_buffer *b,
                      kn_vk_buffer *c, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t stride_a,
                      int64_t stride_b, const kn_vk_epilogue *epi, sg_error *err);

sg_code kn_vk_matmul_typed(kn_vk_batch *bt, kn_vk_elem et, kn_vk_buffer *a, kn_vk_buffer *b,
                           kn_vk_buffer *c, int64_t batch, int64_t m, int64_t n, int64_t k,
                           int64_t stride_a, int64_t stride_b, sg_error *err) {
  return kn_vk_matmul_trans(bt, et, 0, a, b, c, batch, m, n, k, stride_a, stride_b, err);
}

sg_code kn_vk_matmul_trans(kn_vk_batch *bt, kn_vk_elem et, int trans, kn_vk_buffer *a,
                           kn_vk_buffer *b, kn_vk_buffer *c, int64_t batch, int64_t m, int64_t n,
                           int64_t k, int64_t stride_a, int64_t stride_b, sg_error *err) {
  return record(bt, et, trans, a, b, c, batch, m, n, k, stride_a, stride_b, NULL, err);
}

sg_code kn_vk_matmul_epilogue(kn_vk_batch *bt, int trans, kn_vk_buffer *a, kn_vk_buffer *b,
                              kn_vk_buffer *c, int64_t batch, int64_t m, int64_t n, int64_t k,
                              int64_t stride_a, int64_t stride_b, const kn_vk_epilogue *epi,
                              sg_error *err) {
  if (!epi) return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: matmul epilogue missing");
  return record(bt, KN_VK_F32, trans, a, b, c, batch, m, n, k, stride_a, stride_b, epi, err);
}

/* kn_vk_matmul_trans, with epilogue epi (float32) when not NULL */
static sg_code record(kn_vk_batch *bt, kn_vk_elem et, int trans, kn_vk_buffer *a, kn_vk_buffer *b,
                      kn_vk_buffer *c, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t stride_a,
                      int64_t stride_b, const kn_vk_epilogue *epi, sg_error *err) {
  bool ta = trans & KN_VK_MATMUL_TRANS_A, tb = trans & KN_VK_MATMUL_TRANS_B;
  kn_vk_context *ctx = kn_vk_batch_context(bt);
  if ((unsigned)et > KN_VK_F16 || et == KN_VK_BOOL || !kn_vk_elem_supported(ctx, et))
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: no matmul for element type %d", (int)et);
  if (m < 0 || n < 0 || k < 0 || batch < 0 || stride_a < 0 || stride_b < 0 ||
      m * k > (int64_t)UINT32_MAX || k * n > (int64_t)UINT32_MAX ||
      batch * m * n > (int64_t)UINT32_MAX || stride_a * batch > (int64_t)UINT32_MAX ||
      stride_b * batch > (int64_t)UINT32_MAX || batch > KN_VK_MAX_GROUPS)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad matmul shape %lldx%lldx%lld x%lld",
                        (long long)m, (long long)n, (long long)k, (long long)batch);
  size_t es = kn_vk_elem_size(et);
  int64_t nb = batch ? batch : 1;
  sg_code code;
  if ((code = kn_vk_check_buffer_of(a, (nb - 1) * stride_a + m * k, es, "left operand", err)) ||
      (code = kn_vk_check_buffer_of(b, (nb - 1) * stride_b + k * n, es, "right operand", err)) ||
      (code = kn_vk_check_buffer_of(c, batch * m * n, es, "result", err)))
    return code;
  kn_vk_matmul_shape shape = {batch, m, n, k};
  kn_vk_matmul_plan plan = kn_vk_matmul_choice(&shape, et, &ctx->info, ctx->opts.matmul_variant);
  static const char *const elem_names[] = {[KN_VK_F32] = "float32", [KN_VK_F64] = "float64",
                                           [KN_VK_I32] = "int32",   [KN_VK_I64] = "int64",
                                           [KN_VK_F16] = "float16"};
  if (plan.kernel == NULL)
    return sg_error_set(err, SG_FAILED_PRECONDITION, "vulkan:%d: matmul variant '%s' on %s: %s",
                        ctx->info.index, kn_vk_matmul_variant_name(ctx->opts.matmul_variant),
                        elem_names[et], plan.reason);
  if (plan.variant == KN_VK_MATMUL_COOP &&
      kn_vk_coop_choice(&ctx->info, ctx->opts.coop_flavour, &plan.kernel, &plan.reason) ==
          KN_VK_COOP_AUTO) {
    /* the forced flavour (STAGD_VK_COOP) is not offered: an error where coop was forced
     * too, else the tiled kernel */
    if (ctx->opts.matmul_variant == KN_VK_MATMUL_COOP)
      return sg_error_set(err, SG_FAILED_PRECONDITION, "vulkan:%d: cooperative-matrix matmul: %s",
                          ctx->info.index, plan.reason);
    plan = plan_of(KN_VK_MATMUL_TILED, et, plan.reason, NULL);
  }
  if ((ta || tb) && plan.variant == KN_VK_MATMUL_COOP) /* no transposed form */
    plan = plan_of(KN_VK_MATMUL_TILED, et, "operands read transposed: the tiled kernel", NULL);
  matmul_push pc = {.m = (uint32_t)m,
                    .n = (uint32_t)n,
                    .k = (uint32_t)k,
                    .batch_a = (uint32_t)stride_a,
                    .batch_b = (uint32_t)stride_b,
                    .batch_c = (uint32_t)(m * n),
                    .batch = (uint32_t)batch};
  /* tiled: workgroup size x, y, TRANS_A, TRANS_B; blocked: BK, ALIGNED, TRANS_A, TRANS_B;
   * coop: workgroup size, ALIGNED; subgroup: workgroup size, TRANS_A, TRANS_B; then an
   * epilogue's: its step count, broadcast mask and steps (ids 4, 5, 6...) */
  uint32_t spec[6 + KN_VK_EPI_STEPS] = {16, 16, ta, tb}, nspec = 4, groups[3], bm = 128, bn = 128;
  if (plan.variant == KN_VK_MATMUL_BLOCKED) {
    /* 128x128 blocks of C; the context's K step (kn_vk_matmul_bk_resolve), halved until
     * the tiles fit; 4-vector loads and stores where every row and batch starts on a
     * multiple of 4 (a transposed operand's 4 elements along K are not adjacent: it is
     * read by elements, and its row length and batch stride do not matter) */
    uint32_t bk = ctx->opts.matmul_bk;
    while (bk > BLOCKED_MIN_BK && blocked_shared_bytes(et, bk) > ctx->info.max_shared_memory_bytes)
      bk /= 2;
    spec[0] = bk;
    spec[1] = n % 4 == 0 && (ta || (k % 4 == 0 && stride_a % 4 == 0)) && (tb || stride_b % 4 == 0);
  } else if (plan.variant == KN_VK_MATMUL_COOP) {
    /* 128x128 blocks of C (never transposed, see above): 8 subgroups, and 8-half vector
     * loads where rows and batches start on multiples of 8 */
    spec[0] = 8 * ctx->info.subgroup_size;
    spec[1] = k % 8 == 0 && n % 8 == 0 && stride_a % 8 == 0 && stride_b % 8 == 0;
    nspec = 2;
  } else if (plan.variant == KN_VK_MATMUL_SUBGROUP) {
    /* 1-D: each subgroup of a workgroup takes one output element (grid-stride) */
    uint32_t sg = ctx->info.subgroup_size;
    spec[0] = kn_vk_wg_size(ctx, 128);
    if (spec[0] < sg)
      spec[0] = sg;
    spec[1] = ta;
    spec[2] = tb;
    nspec = 3;
  } else {
    /* 64x64 blocks of C: 16x16 invocations with 4x4 register blocks (8 rows of
     * invocations on small devices) */
    bm = bn = 64;
    if (ctx->limits.maxComputeWorkGroupInvocations < 256) {
      spec[1] = 8;
      bm = 32;
    }
  }
  if (plan.variant == KN_VK_MATMUL_SUBGROUP) {
    groups[0] = kn_vk_grid(batch * m * n, spec[0] / ctx->info.subgroup_size);
    groups[1] = groups[2] = 1;
  } else { /* one workgroup per bm x bn block of C, per batch */
    if ((m + bm - 1) / bm > KN_VK_MAX_GROUPS || (n + bn - 1) / bn > KN_VK_MAX_GROUPS)
      return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: matmul of %lldx%lld is too large",
                          (long long)m, (long long)n);
    groups[0] = (uint32_t)((n + bn - 1) / bn);
    groups[1] = (uint32_t)((m + bm - 1) / bm);
    groups[2] = (uint32_t)batch;
  }
  kn_vk_binding binds[3 + KN_VK_EPI_INPUTS] = {{a, false}, {b, false}, {c, true}};
  int nbind = 3;
  char epi_name[KN_VK_EPI_NAME];
  if (epi) { /* the _epi kernel (float32: never coop): spec ids 4.. (the subgroup kernel's 3 is unused), 3 more buffers */
    if ((code = kn_vk_epilogue_prepare(epi, "matmul", batch * m * n, &pc.epi, spec, &nspec, binds, a, &plan.kernel,
                                       epi_name, err)))
      return code;
    nbind = 3 + KN_VK_EPI_INPUTS;
  }
  kn_vk_dispatch_desc d = {.kernel = plan.kernel,
                           .bindings = binds,
                           .nbindings = nbind,
                           .push = &pc,
                           .push_bytes = epi ? sizeof pc : offsetof(matmul_push, epi),
                           .spec = spec,
                           .nspec = (int)nspec,
                           .groups = {groups[0], groups[1], groups[2]}};
  return kn_vk_dispatch(bt, &d, err);
}
