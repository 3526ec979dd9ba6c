// SPDX-License-Identifier: Apache-2.0
/*
 * pipeline.c — compute pipelines built from the SPIR-V embedded at build time
 * (kn_vk_shaders.c, generated from kernels/shaders/ (*.comp)), cached per context by
 * (kernel name, specialization constants), and a VkPipelineCache persisted on disk so
 * a restarted daemon does not recompile shaders in the driver.
 *
 * Cache file: <dir>/pipelines-<vendor>-<device>-<pipelineCacheUUID>.bin, where dir is
 * kn_vk_options.pipeline_cache_dir, else $XDG_CACHE_HOME/stagd, else ~/.cache/stagd.
 * A file whose header does not match the device is ignored (drivers are required to
 * cope, but not all do). It is written on context destruction, atomically (rename).
 */
#include "vk_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const *kn_vk_kernel_names(void) { return kn_vk_shader_names; }

static const kn_vk_shader_blob *find_blob(const char *name) {
  for (size_t i = 0; i < kn_vk_shader_blob_count; i++)
    if (strcmp(kn_vk_shader_blobs[i].name, name) == 0)
      return &kn_vk_shader_blobs[i];
  return NULL;
}

static void mkdir_p(const char *path) {
  char *tmp = sg_xstrdup(path);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(tmp, 0700);
      *p = '/';
    }
  mkdir(tmp, 0700);
  free(tmp);
}

static char *cache_dir(const char *configured) {
  if (configured)
    return configured[0] ? sg_xstrdup(configured) : NULL;
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/')
    return sg_xasprintf("%s/stagd", xdg);
  const char *home = getenv("HOME");
  if (home && home[0])
    return sg_xasprintf("%s/.cache/stagd", home);
  return NULL;
}

/* Returns malloc'd file contents when they carry this device's cache header. */
static void *load_cache(kn_vk_context *ctx, size_t *len) {
  *len = 0;
  FILE *f = fopen(ctx->cache_path, "rb");
  if (!f)
    return NULL;
  sg_buf b = SG_BUF_INIT;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    sg_buf_append(&b, chunk, n);
  fclose(f);
  bool ok = b.len >= 32;
  if (ok) {
    uint32_t hdr[4];
    memcpy(hdr, b.data, sizeof hdr);
    ok = hdr[0] >= 32 && hdr[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
         hdr[2] == ctx->info.vendor_id && hdr[3] == ctx->info.device_id &&
         memcmp(b.data + 16, ctx->info.uuid, 16) == 0;
  }
  if (!ok) {
    SG_INFO(0, "vulkan: ignoring pipeline cache %s (not for this device/driver)", ctx->cache_path);
    sg_buf_free(&b);
    return NULL;
  }
  return sg_buf_detach(&b, len);
}

static void save_cache(kn_vk_context *ctx) {
  if (!ctx->cache_path || ctx->pipeline_cache == VK_NULL_HANDLE)
    return;
  size_t len = 0;
  if (ctx->vk.vkGetPipelineCacheData(ctx->device, ctx->pipeline_cache, &len, NULL) != VK_SUCCESS ||
      len == 0)
    return;
  void *data = sg_xmalloc(len);
  if (ctx->vk.vkGetPipelineCacheData(ctx->device, ctx->pipeline_cache, &len, data) == VK_SUCCESS) {
    char *dir = sg_xstrdup(ctx->cache_path);
    char *slash = strrchr(dir, '/');
    if (slash)
      *slash = '\0';
    mkdir_p(dir);
    free(dir);
    char *tmp = sg_xasprintf("%s.%ld.tmp", ctx->cache_path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
      ok = false;
    if (ok && rename(tmp, ctx->cache_path) == 0)
      SG_DEBUG(0, "vulkan: saved %zu bytes of pipeline cache to %s", len, ctx->cache_path);
    else {
      SG_WARN(0, "vulkan: cannot write pipeline cache %s: %s", ctx->cache_path, strerror(errno));
      unlink(tmp);
    }
    free(tmp);
  }
  free(data);
}

sg_code kn_vk_pipelines_init(kn_vk_context *ctx, const char *configured, sg_error *err) {
  char *dir = cache_dir(configured);
  if (dir) {
    sg_buf name = SG_BUF_INIT;
    sg_buf_printf(&name, "%s/pipelines-%04x-%04x-", dir, ctx->info.vendor_id, ctx->info.device_id);
    for (int i = 0; i < 16; i++)
      sg_buf_printf(&name, "%02x", ctx->info.uuid[i]);
    sg_buf_puts(&name, ".bin");
    ctx->cache_path = sg_buf_detach(&name, NULL);
    free(dir);
  }
  size_t len = 0;
  void *data = ctx->cache_path ? load_cache(ctx, &len) : NULL;
  VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                  .initialDataSize = len,
                                  .pInitialData = data};
  VkResult r = ctx->vk.vkCreatePipelineCache(ctx->device, &ci, NULL, &ctx->pipeline_cache);
  if (r != VK_SUCCESS && data) {
    /* a stale or corrupt file: start empty */
    ci.initialDataSize = 0;
    ci.pInitialData = NULL;
    r = ctx->vk.vkCreatePipelineCache(ctx->device, &ci, NULL, &ctx->pipeline_cache);
  }
  free(data);
  if (r != VK_SUCCESS) {
    ctx->pipeline_cache = VK_NULL_HANDLE;
    return kn_vk_check_ctx(ctx, r, err, "vkCreatePipelineCache");
  }
  return SG_OK;
}

static void pipeline_free(kn_vk_context *ctx, kn_vk_pipeline *p) {
  if (p->pipeline)
    ctx->vk.vkDestroyPipeline(ctx->device, p->pipeline, NULL);
  if (p->layout)
    ctx->vk.vkDestroyPipelineLayout(ctx->device, p->layout, NULL);
  if (p->set_layout)
    ctx->vk.vkDestroyDescriptorSetLayout(ctx->device, p->set_layout, NULL);
  free(p);
}

void kn_vk_pipelines_free(kn_vk_context *ctx) {
  uint64_t key;
  void *v;
  for (size_t it = 0; sg_map_next(&ctx->pipelines, &it, &key, &v);)
    pipeline_free(ctx, v);
  sg_map_free(&ctx->pipelines);
  if (!ctx->lost) /* a lost device's cache data is not worth keeping */
    save_cache(ctx);
  if (ctx->pipeline_cache)
    ctx->vk.vkDestroyPipelineCache(ctx->device, ctx->pipeline_cache, NULL);
  ctx->pipeline_cache = VK_NULL_HANDLE;
}

static sg_code pipeline_build(kn_vk_context *ctx, const kn_vk_shader_blob *blob,
                              const uint32_t *spec, int nspec, kn_vk_pipeline **out,
                              sg_error *err) {
  kn_vk_pipeline *p = sg_xcalloc(1, sizeof *p);
  p->nbindings = blob->nbindings;
  VkDescriptorSetLayoutBinding binds[KN_VK_MAX_BINDINGS];
  for (int i = 0; i < blob->nbindings; i++)
    binds[i] = (VkDescriptorSetLayoutBinding){.binding = (uint32_t)i,
                                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1,
                                              .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dl = {.sType =
                                            VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                        .bindingCount = (uint32_t)blob->nbindings,
                                        .pBindings = binds};
  VkResult r = ctx->vk.vkCreateDescriptorSetLayout(ctx->device, &dl, NULL, &p->set_layout);
  VkPushConstantRange pc = {
      .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = KN_VK_PUSH_BYTES};
  if (r == VK_SUCCESS) {
    VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &p->set_layout,
                                     .pushConstantRangeCount = 1,
                                     .pPushConstantRanges = &pc};
    r = ctx->vk.vkCreatePipelineLayout(ctx->device, &pl, NULL, &p->layout);
  }
  VkShaderModule module = VK_NULL_HANDLE;
  if (r == VK_SUCCESS) {
    VkShaderModuleCreateInfo sm = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = blob->size,
                                   .pCode = (const uint32_t *)(const void *)blob->code};
    r = ctx->vk.vkCreateShaderModule(ctx->device, &sm, NULL, &module);
  }
  if (r == VK_SUCCESS) {
    VkSpecializationMapEntry entries[KN_VK_MAX_SPEC];
    for (int i = 0; i < nspec; i++)
      entries[i] = (VkSpecializationMapEntry){(uint32_t)i, (uint32_t)(i * 4), 4};
    VkSpecializationInfo si = {.mapEntryCount = (uint32_t)nspec,
                               .pMapEntries = entries,
                               .dataSize = (size_t)nspec * 4,
                               .pData = spec};
    VkComputePipelineCreateInfo cp = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module,
                  .pName = "main",
                  .pSpecializationInfo = nspec ? &si : NULL},
        .layout = p->layout};
    r = ctx->vk.vkCreateComputePipelines(ctx->device, ctx->pipeline_cache, 1, &cp, NULL,
                                         &p->pipeline);
    ctx->vk.vkDestroyShaderModule(ctx->device, module, NULL);
  }
  if (r != VK_SUCCESS) {
    pipeline_free(ctx, p);
    sg_code code = kn_vk_check_ctx(ctx, r, err, "building a compute pipeline");
    return sg_error_set(err, code, "vulkan: building pipeline '%s' failed: %s", blob->name,
                        err && err->message ? err->message : "");
  }
  *out = p;
  return SG_OK;
}

sg_code kn_vk_pipeline_get(kn_vk_context *ctx, const char *kernel, const uint32_t *spec, int nspec,
                           const kn_vk_pipeline **out, sg_error *err) {
  if (nspec < 0 || nspec > KN_VK_MAX_SPEC)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: %d specialization constants (max %d)",
                        nspec, KN_VK_MAX_SPEC);
  const kn_vk_shader_blob *blob = find_blob(kernel);
  if (!blob)
    return sg_error_set(err, SG_NOT_FOUND, "vulkan: no kernel named '%s'", kernel);
  uint64_t key = sg_hash_bytes(kernel, strlen(kernel), 0x5eed);
  key = sg_hash_bytes(spec, (size_t)nspec * sizeof *spec, key ^ (uint64_t)nspec);
  pthread_mutex_lock(&ctx->pipe_lock);
  void *found;
  sg_code code = SG_OK;
  if (sg_map_get(&ctx->pipelines, key, &found)) {
    *out = found;
  } else {
    kn_vk_pipeline *p;
    code = pipeline_build(ctx, blob, spec, nspec, &p, err);
    if (code == SG_OK) {
      sg_map_put(&ctx->pipelines, key, p);
      *out = p;
    }
  }
  pthread_mutex_unlock(&ctx->pipe_lock);
  return code;
}
