// SPDX-License-Identifier: Apache-2.0
/*
 * device.c — kn_vk_context: one logical device with one compute queue (submissions are
 * serialised by queue_lock), its memory pool, pipeline cache and frame pool.
 *
 * Device-level entry points are loaded into a per-context VolkDeviceTable, so several
 * devices can be open at once without volk's global function pointers clashing.
 */
#include "vk_internal.h"
#include "vk_coop_khr.h"

#include <stdlib.h>
#include <string.h>

sg_code kn_vk_check_ctx(kn_vk_context *ctx, VkResult r, sg_error *err, const char *what) {
  if (r == VK_ERROR_DEVICE_LOST && ctx != NULL) {
    if (!atomic_exchange(&ctx->lost, true))
      SG_ERROR(0, "vulkan:%d (%s) was lost during %s", ctx->info.index, ctx->info.name, what);
    return sg_error_set(err, SG_UNAVAILABLE, "vulkan:%d (%s) was lost during %s",
                        ctx->info.index, ctx->info.name, what);
  }
  return kn_vk_check(r, err, what);
}

sg_code kn_vk_lost_error(const kn_vk_context *ctx, sg_error *err) {
  return sg_error_set(err, SG_UNAVAILABLE, "vulkan:%d (%s) was lost", ctx->info.index,
                      ctx->info.name);
}

kn_vk_context *kn_vk_context_retain(kn_vk_context *ctx) {
  if (ctx)
    atomic_fetch_add(&ctx->refs, 1);
  return ctx;
}

void kn_vk_context_release(kn_vk_context *ctx) {
  if (ctx && atomic_fetch_sub(&ctx->refs, 1) == 1)
    kn_vk_context_destroy(ctx);
}

bool kn_vk_context_lost(const kn_vk_context *ctx) { return atomic_load(&ctx->lost); }

static sg_code find_compute_queue(VkPhysicalDevice pd, uint32_t *family, sg_error *err) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
  VkQueueFamilyProperties *q = sg_xcalloc(n ? n : 1, sizeof *q);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
  int best = -1;
  /* Prefer a compute-only family (async compute on discrete GPUs), else any. */
  for (uint32_t i = 0; i < n && best < 0; i++)
    if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
      best = (int)i;
  for (uint32_t i = 0; i < n && best < 0; i++)
    if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
      best = (int)i;
  free(q);
  if (best < 0)
    return sg_error_set(err, SG_UNAVAILABLE, "vulkan: device has no compute queue");
  *family = (uint32_t)best;
  return SG_OK;
}

sg_code kn_vk_context_create(int index, const kn_vk_options *opts, kn_vk_context **out,
                             sg_error *err) {
  *out = NULL;
  VkInstance inst;
  VkPhysicalDevice pd;
  kn_vk_device_info info;
  sg_code code = kn_vk_physical(index, &inst, &pd, &info, err);
  if (code == SG_OK)
    code = kn_vk_fault_env(err);
  if (code != SG_OK)
    return code;

  kn_vk_context *ctx = sg_xcalloc(1, sizeof *ctx);
  atomic_init(&ctx->refs, 1);
  ctx->instance = inst;
  ctx->physical = pd;
  if (opts)
    ctx->opts = *opts;
  if (ctx->opts.pool_block_bytes == 0)
    ctx->opts.pool_block_bytes = 64u << 20;
  ctx->opts.pipeline_cache_dir = NULL; /* not owned: pipeline.c keeps the file name */
  ctx->info = info;
  vkGetPhysicalDeviceMemoryProperties(pd, &ctx->memprops);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  ctx->limits = props.limits;
  /* STAGD_VK_NO_SUBGROUP=1 sets no_subgroup_ops for contexts opened with default options
   * (the graph executor's): tests compare both reduction variants through it */
  atomic_int env_no_subgroup = -1; /* read now: contexts are opened rarely */
  ctx->opts.no_subgroup_ops =
      ctx->opts.no_subgroup_ops || kn_vk_env_flag("STAGD_VK_NO_SUBGROUP", &env_no_subgroup);
  ctx->subgroup_ops = !ctx->opts.no_subgroup_ops && kn_vk_subgroup_usable(&ctx->info);
  if ((ctx->opts.matmul_variant == KN_VK_MATMUL_AUTO &&
       (code = kn_vk_matmul_env_variant(&ctx->opts.matmul_variant, err)) != SG_OK) ||
      (code = kn_vk_matmul_bk_resolve(&ctx->opts.matmul_bk, err)) != SG_OK ||
      (ctx->opts.coop_flavour == KN_VK_COOP_AUTO &&
       (code = kn_vk_coop_env_flavour(&ctx->opts.coop_flavour, err)) != SG_OK)) {
    free(ctx);
    return code;
  }
  pthread_mutex_init(&ctx->queue_lock, NULL);
  pthread_mutex_init(&ctx->pipe_lock, NULL);
  pthread_mutex_init(&ctx->frame_lock, NULL);
  pthread_mutex_init(&ctx->pool.lock, NULL);

  code = find_compute_queue(pd, &ctx->queue_family, err);
  if (code != SG_OK)
    goto fail;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = ctx->queue_family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
  /* What the typed kernels use, where offered (the instance's description of it): 64-bit integer
   * and float arithmetic, float16 storage + arithmetic (matmul_f16), subgroup ops on
   * int64 (matmul_subgroup_i64), and for the coop variant the cooperative-matrix
   * extension kn_vk_coop_choice picks (KHR: matmul_coop_khr, NV: matmul_coop) with the
   * Vulkan memory model its SPIR-V declares. */
  const kn_vk_device_info *in = &ctx->info;
  ctx->int64_ops = in->int64;
  ctx->float64_ops = in->float64;
  ctx->float16_ops = in->float16;
  kn_vk_coop_flavour flavour = kn_vk_coop_choice(in, ctx->opts.coop_flavour, NULL, NULL);
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop_nv = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
      .cooperativeMatrix = VK_TRUE};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop_khr = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
      .cooperativeMatrix = VK_TRUE};
  VkPhysicalDeviceVulkan12Features v12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .pNext = flavour == KN_VK_COOP_KHR ? (void *)&coop_khr
               : flavour == KN_VK_COOP_NV ? (void *)&coop_nv
                                          : NULL,
      .shaderFloat16 = in->float16,
      .shaderSubgroupExtendedTypes = in->subgroup_extended_types,
      .vulkanMemoryModel = flavour != KN_VK_COOP_AUTO};
  VkPhysicalDeviceVulkan11Features v11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
      .pNext = &v12,
      .storageBuffer16BitAccess = in->float16};
  VkPhysicalDeviceFeatures2 want = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  want.features.shaderInt64 = in->int64;
  want.features.shaderFloat64 = in->float64;
  const char *coop_ext = flavour == KN_VK_COOP_KHR ? VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME
                                                   : "VK_NV_cooperative_matrix";
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = flavour != KN_VK_COOP_AUTO ? 1 : 0,
                            .ppEnabledExtensionNames = &coop_ext};
  if (kn_vk_features12(in->api_version)) {
    want.pNext = &v11;
    dci.pNext = &want;
  } else {
    dci.pEnabledFeatures = &want.features;
  }
  VkResult r = vkCreateDevice(pd, &dci, NULL, &ctx->device);
  if (r != VK_SUCCESS) {
    ctx->device = VK_NULL_HANDLE;
    code = kn_vk_check(r, err, "vkCreateDevice");
    goto fail;
  }
  volkLoadDeviceTable(&ctx->vk, ctx->device);
  ctx->vk.vkGetDeviceQueue(ctx->device, ctx->queue_family, 0, &ctx->queue);

  code = kn_vk_pool_init(ctx, err);
  if (code != SG_OK)
    goto fail;
  code = kn_vk_pipelines_init(ctx, opts ? opts->pipeline_cache_dir : NULL, err);
  if (code != SG_OK)
    goto fail;
  SG_DEBUG(0, "vulkan:%d: opened %s (%s, subgroup %u%s, %s memory)", index, ctx->info.name,
           kn_vk_device_type_name(ctx->info.type), ctx->info.subgroup_size,
           ctx->subgroup_ops ? " arithmetic" : "",
           kn_vk_context_direct_mapped(ctx) ? "mapped" : "staged");
  *out = ctx;
  return SG_OK;
fail:
  kn_vk_context_destroy(ctx);
  return code;
}

void kn_vk_context_destroy(kn_vk_context *ctx) {
  if (ctx == NULL)
    return;
  if (ctx->device != VK_NULL_HANDLE) {
    pthread_mutex_lock(&ctx->queue_lock);
    ctx->vk.vkDeviceWaitIdle(ctx->device);
    pthread_mutex_unlock(&ctx->queue_lock);
    kn_vk_frames_collect(ctx, true);
    kn_vk_frames_free(ctx);
    kn_vk_pipelines_free(ctx);
    kn_vk_pool_free(ctx);
    ctx->vk.vkDestroyDevice(ctx->device, NULL);
  }
  pthread_mutex_destroy(&ctx->queue_lock);
  pthread_mutex_destroy(&ctx->pipe_lock);
  pthread_mutex_destroy(&ctx->frame_lock);
  pthread_mutex_destroy(&ctx->pool.lock);
  free(ctx->cache_path);
  free(ctx);
}

const kn_vk_device_info *kn_vk_context_info(const kn_vk_context *ctx) { return &ctx->info; }

bool kn_vk_context_direct_mapped(const kn_vk_context *ctx) { return ctx->pool.mapped; }
