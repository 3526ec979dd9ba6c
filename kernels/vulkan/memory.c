// SPDX-License-Identifier: Apache-2.0
/*
 * memory.c — device memory: a pool of large VkDeviceMemory blocks, each spanned by one
 * VkBuffer, sub-allocated first-fit from a sorted free list (neighbours coalesce on
 * free); allocations bigger than a block get a dedicated block that is released with
 * the buffer. Uploads and downloads memcpy straight into mapped blocks when device
 * memory is host-visible (integrated GPUs, lavapipe), else go through a temporary
 * host-visible staging buffer and a copy command.
 */
#include "vk_internal.h"

#include <stdlib.h>
#include <string.h>

#define BUFFER_USAGE                                                                               \
  (VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |                         \
   VK_BUFFER_USAGE_TRANSFER_DST_BIT)

static int find_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits,
                     VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
    if ((bits & (1u << i)) && (mp->memoryTypes[i].propertyFlags & want) == want)
      return (int)i;
  return -1;
}

/* vkAllocateMemory and vkMapMemory behind the fault hook (fault.c). */
static VkResult allocate(kn_vk_context *ctx, const VkMemoryAllocateInfo *mai, VkDeviceMemory *out) {
  VkResult r = kn_vk_fault(KN_VK_FAULT_ALLOC);
  return r != VK_SUCCESS ? r : ctx->vk.vkAllocateMemory(ctx->device, mai, NULL, out);
}

static VkResult map(kn_vk_context *ctx, VkDeviceMemory memory, void **out) {
  VkResult r = kn_vk_fault(KN_VK_FAULT_MAP);
  return r != VK_SUCCESS ? r : ctx->vk.vkMapMemory(ctx->device, memory, 0, VK_WHOLE_SIZE, 0, out);
}

static sg_code make_buffer(kn_vk_context *ctx, uint64_t size, VkBufferUsageFlags usage,
                           VkBuffer *out, sg_error *err) {
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = size,
                            .usage = usage,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  return kn_vk_check_ctx(ctx, ctx->vk.vkCreateBuffer(ctx->device, &bci, NULL, out), err,
                         "vkCreateBuffer");
}

sg_code kn_vk_pool_init(kn_vk_context *ctx, sg_error *err) {
  kn_vk_pool *p = &ctx->pool;
  VkBuffer probe;
  sg_code code = make_buffer(ctx, 65536, BUFFER_USAGE, &probe, err);
  if (code != SG_OK)
    return code;
  VkMemoryRequirements req;
  ctx->vk.vkGetBufferMemoryRequirements(ctx->device, probe, &req);
  ctx->vk.vkDestroyBuffer(ctx->device, probe, NULL);

  const VkMemoryPropertyFlags mapped = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int local = find_type(&ctx->memprops, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  int both = find_type(&ctx->memprops, req.memoryTypeBits, mapped);
  /* Map directly only where host-visible device memory is the main memory (integrated
   * GPUs, CPU drivers, or a heap as big as the largest device-local one — full ReBAR);
   * a small 256 MiB BAR window on a discrete GPU is not worth spending on tensors. */
  bool use_mapped = false;
  if (both >= 0 && !ctx->opts.force_staging) {
    uint64_t heap = ctx->memprops.memoryHeaps[ctx->memprops.memoryTypes[both].heapIndex].size;
    uint64_t biggest = 0;
    for (uint32_t i = 0; i < ctx->memprops.memoryHeapCount; i++)
      if ((ctx->memprops.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
          ctx->memprops.memoryHeaps[i].size > biggest)
        biggest = ctx->memprops.memoryHeaps[i].size;
    use_mapped = ctx->info.type == KN_VK_DEVICE_INTEGRATED_GPU ||
                 ctx->info.type == KN_VK_DEVICE_CPU || heap >= biggest;
  }
  if (use_mapped)
    local = both;
  if (local < 0)
    local = find_type(&ctx->memprops, req.memoryTypeBits, 0);
  if (local < 0)
    return sg_error_set(err, SG_UNAVAILABLE, "vulkan: no memory type for storage buffers");
  p->memory_type = (uint32_t)local;
  p->mapped = use_mapped;
  p->block_bytes = ctx->opts.pool_block_bytes;
  if (p->block_bytes > ctx->limits.maxStorageBufferRange)
    p->block_bytes = ctx->limits.maxStorageBufferRange;
  uint64_t align = ctx->limits.minStorageBufferOffsetAlignment;
  if (req.alignment > align)
    align = req.alignment;
  if (align < 64)
    align = 64;
  p->alignment = align;
  return SG_OK;
}

static void block_release(kn_vk_context *ctx, kn_vk_block *b) {
  if (b->mapped)
    ctx->vk.vkUnmapMemory(ctx->device, b->memory);
  ctx->vk.vkDestroyBuffer(ctx->device, b->buffer, NULL);
  ctx->vk.vkFreeMemory(ctx->device, b->memory, NULL);
  sg_vec_free(&b->free);
  free(b);
}

void kn_vk_pool_free(kn_vk_context *ctx) {
  kn_vk_pool *p = &ctx->pool;
  if (p->buffer_count)
    SG_WARN(0, "vulkan:%d: %llu buffers still alive at context destruction", ctx->info.index,
            (unsigned long long)p->buffer_count);
  for (size_t i = 0; i < p->blocks.len; i++)
    block_release(ctx, p->blocks.data[i]);
  sg_vec_free(&p->blocks);
}

static sg_code block_new(kn_vk_context *ctx, uint64_t size, bool dedicated, kn_vk_block **out,
                         sg_error *err) {
  kn_vk_block *b = sg_xcalloc(1, sizeof *b);
  b->size = size;
  b->dedicated = dedicated;
  sg_code code = make_buffer(ctx, size, BUFFER_USAGE, &b->buffer, err);
  if (code != SG_OK) {
    free(b);
    return code;
  }
  VkMemoryRequirements req;
  ctx->vk.vkGetBufferMemoryRequirements(ctx->device, b->buffer, &req);
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = ctx->pool.memory_type};
  VkResult r = allocate(ctx, &mai, &b->memory);
  if (r == VK_SUCCESS)
    r = ctx->vk.vkBindBufferMemory(ctx->device, b->buffer, b->memory, 0);
  else
    b->memory = VK_NULL_HANDLE;
  if (r == VK_SUCCESS && ctx->pool.mapped)
    r = map(ctx, b->memory, &b->mapped);
  if (r != VK_SUCCESS) {
    code = kn_vk_check_ctx(ctx, r, err, "allocating a device memory block");
    if (code == SG_RESOURCE_EXHAUSTED)
      sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                   "vulkan:%d: out of device memory allocating %llu bytes (%llu in use)",
                   ctx->info.index, (unsigned long long)size,
                   (unsigned long long)ctx->pool.used_bytes);
    if (b->memory != VK_NULL_HANDLE)
      ctx->vk.vkFreeMemory(ctx->device, b->memory, NULL);
    ctx->vk.vkDestroyBuffer(ctx->device, b->buffer, NULL);
    free(b);
    return code;
  }
  sg_vec_push(&b->free, ((kn_vk_range){0, size}));
  *out = b;
  return SG_OK;
}

/* First fit in one block; returns false when nothing fits. */
static bool block_take(kn_vk_block *b, uint64_t size, uint64_t *off) {
  for (size_t i = 0; i < b->free.len; i++) {
    if (b->free.data[i].size < size)
      continue;
    *off = b->free.data[i].off;
    b->free.data[i].off += size;
    b->free.data[i].size -= size;
    if (b->free.data[i].size == 0) {
      memmove(&b->free.data[i], &b->free.data[i + 1], (b->free.len - i - 1) * sizeof *b->free.data);
      b->free.len--;
    }
    return true;
  }
  return false;
}

static void block_give(kn_vk_block *b, uint64_t off, uint64_t size) {
  size_t i = 0;
  while (i < b->free.len && b->free.data[i].off < off)
    i++;
  bool join_prev = i > 0 && b->free.data[i - 1].off + b->free.data[i - 1].size == off;
  bool join_next = i < b->free.len && off + size == b->free.data[i].off;
  if (join_prev && join_next) {
    b->free.data[i - 1].size += size + b->free.data[i].size;
    memmove(&b->free.data[i], &b->free.data[i + 1], (b->free.len - i - 1) * sizeof *b->free.data);
    b->free.len--;
  } else if (join_prev) {
    b->free.data[i - 1].size += size;
  } else if (join_next) {
    b->free.data[i].off = off;
    b->free.data[i].size += size;
  } else {
    sg_vec_reserve(&b->free, 1);
    memmove(&b->free.data[i + 1], &b->free.data[i], (b->free.len - i) * sizeof *b->free.data);
    b->free.data[i].off = off;
    b->free.data[i].size = size;
    b->free.len++;
  }
}

sg_code kn_vk_buffer_create(kn_vk_context *ctx, uint64_t bytes, kn_vk_buffer **out, sg_error *err) {
  *out = NULL;
  if (ctx->lost)
    return kn_vk_lost_error(ctx, err);
  kn_vk_pool *p = &ctx->pool;
  if (bytes > ctx->limits.maxStorageBufferRange)
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                        "vulkan:%d: buffer of %llu bytes exceeds the device's storage buffer "
                        "range (%u bytes)",
                        ctx->info.index, (unsigned long long)bytes,
                        ctx->limits.maxStorageBufferRange);
  uint64_t alloc =
      bytes == 0 ? p->alignment : (bytes + p->alignment - 1) / p->alignment * p->alignment;
  kn_vk_buffer *buf = sg_xcalloc(1, sizeof *buf);
  buf->ctx = ctx;
  buf->size = bytes;
  buf->alloc = alloc;
  pthread_mutex_lock(&p->lock);
  sg_code code = SG_OK;
  if (alloc > p->block_bytes) {
    code = block_new(ctx, alloc, true, &buf->block, err);
    if (code == SG_OK) {
      block_take(buf->block, alloc, &buf->offset);
      sg_vec_push(&p->blocks, buf->block);
    }
  } else {
    for (size_t i = 0; i < p->blocks.len && buf->block == NULL; i++)
      if (!p->blocks.data[i]->dedicated && block_take(p->blocks.data[i], alloc, &buf->offset))
        buf->block = p->blocks.data[i];
    if (buf->block == NULL) {
      code = block_new(ctx, p->block_bytes, false, &buf->block, err);
      if (code == SG_OK) {
        block_take(buf->block, alloc, &buf->offset);
        sg_vec_push(&p->blocks, buf->block);
      }
    }
  }
  if (code == SG_OK) {
    p->used_bytes += alloc;
    p->buffer_count++;
  }
  pthread_mutex_unlock(&p->lock);
  if (code != SG_OK) {
    free(buf);
    return code;
  }
  *out = buf;
  return SG_OK;
}

void kn_vk_buffer_destroy(kn_vk_buffer *buf) {
  if (buf == NULL)
    return;
  kn_vk_context *ctx = buf->ctx;
  /* work abandoned at a deadline may still use this buffer: let it finish first */
  pthread_mutex_lock(&ctx->frame_lock);
  bool pending = ctx->pending_frames.len > 0;
  pthread_mutex_unlock(&ctx->frame_lock);
  if (pending)
    kn_vk_frames_collect(ctx, true);
  kn_vk_pool *p = &ctx->pool;
  pthread_mutex_lock(&p->lock);
  block_give(buf->block, buf->offset, buf->alloc);
  p->used_bytes -= buf->alloc;
  p->buffer_count--;
  if (buf->block->dedicated) {
    for (size_t i = 0; i < p->blocks.len; i++)
      if (p->blocks.data[i] == buf->block) {
        p->blocks.data[i] = p->blocks.data[--p->blocks.len];
        break;
      }
    block_release(ctx, buf->block);
  }
  pthread_mutex_unlock(&p->lock);
  free(buf);
}

uint64_t kn_vk_buffer_size(const kn_vk_buffer *buf) { return buf->size; }

void kn_vk_memory_stats_get(kn_vk_context *ctx, kn_vk_memory_stats *out) {
  kn_vk_pool *p = &ctx->pool;
  pthread_mutex_lock(&p->lock);
  memset(out, 0, sizeof *out);
  out->block_count = p->blocks.len;
  for (size_t i = 0; i < p->blocks.len; i++)
    out->block_bytes += p->blocks.data[i]->size;
  out->used_bytes = p->used_bytes;
  out->buffer_count = p->buffer_count;
  pthread_mutex_unlock(&p->lock);
}

/* ------------------------------------------------------------ transfers */

typedef struct staging {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped;
} staging;

static void staging_free(kn_vk_context *ctx, staging *s) {
  if (s->mapped)
    ctx->vk.vkUnmapMemory(ctx->device, s->memory);
  if (s->buffer)
    ctx->vk.vkDestroyBuffer(ctx->device, s->buffer, NULL);
  if (s->memory)
    ctx->vk.vkFreeMemory(ctx->device, s->memory, NULL);
}

static sg_code staging_new(kn_vk_context *ctx, uint64_t size, staging *s, sg_error *err) {
  memset(s, 0, sizeof *s);
  sg_code code =
      make_buffer(ctx, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                  &s->buffer, err);
  if (code != SG_OK)
    return code;
  VkMemoryRequirements req;
  ctx->vk.vkGetBufferMemoryRequirements(ctx->device, s->buffer, &req);
  int type = find_type(&ctx->memprops, req.memoryTypeBits,
                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                           VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (type < 0)
    type = find_type(&ctx->memprops, req.memoryTypeBits,
                     VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (type < 0) {
    staging_free(ctx, s);
    return sg_error_set(err, SG_UNAVAILABLE, "vulkan: no host-visible memory for staging");
  }
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = (uint32_t)type};
  VkResult r = allocate(ctx, &mai, &s->memory);
  if (r == VK_SUCCESS)
    r = ctx->vk.vkBindBufferMemory(ctx->device, s->buffer, s->memory, 0);
  if (r == VK_SUCCESS)
    r = map(ctx, s->memory, &s->mapped);
  if (r != VK_SUCCESS) {
    staging_free(ctx, s);
    return kn_vk_check_ctx(ctx, r, err, "allocating a staging buffer");
  }
  return SG_OK;
}

typedef struct copy_args {
  VkBuffer src, dst;
  VkBufferCopy region;
} copy_args;

static void record_copy(kn_vk_context *ctx, VkCommandBuffer cb, void *arg) {
  copy_args *c = arg;
  /* earlier shader writes/reads of the device range complete before the copy */
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                        .dstAccessMask =
                            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
  ctx->vk.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
  ctx->vk.vkCmdCopyBuffer(cb, c->src, c->dst, 1, &c->region);
  VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                           .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                           .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT};
  ctx->vk.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                               VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                               1, &after, 0, NULL, 0, NULL);
}

static sg_code check_range(const kn_vk_buffer *buf, uint64_t offset, uint64_t bytes,
                           sg_error *err) {
  if (offset > buf->size || bytes > buf->size - offset)
    return sg_error_set(err, SG_OUT_OF_RANGE,
                        "vulkan: transfer of %llu bytes at offset %llu outside a buffer of %llu",
                        (unsigned long long)bytes, (unsigned long long)offset,
                        (unsigned long long)buf->size);
  return SG_OK;
}

sg_code kn_vk_upload(kn_vk_context *ctx, kn_vk_buffer *dst, uint64_t offset, const void *src,
                     uint64_t bytes, sg_error *err) {
  sg_code code = check_range(dst, offset, bytes, err);
  if (code != SG_OK || bytes == 0)
    return code;
  if (ctx->lost)
    return kn_vk_lost_error(ctx, err);
  if (dst->block->mapped) {
    memcpy((char *)dst->block->mapped + dst->offset + offset, src, bytes);
    return SG_OK;
  }
  staging s;
  code = staging_new(ctx, bytes, &s, err);
  if (code != SG_OK)
    return code;
  memcpy(s.mapped, src, bytes);
  copy_args c = {s.buffer, dst->block->buffer, {0, dst->offset + offset, bytes}};
  code = kn_vk_run_commands(ctx, record_copy, &c, err);
  staging_free(ctx, &s);
  return code;
}

sg_code kn_vk_download(kn_vk_context *ctx, const kn_vk_buffer *src, uint64_t offset, void *dst,
                       uint64_t bytes, sg_error *err) {
  sg_code code = check_range(src, offset, bytes, err);
  if (code != SG_OK || bytes == 0)
    return code;
  if (ctx->lost)
    return kn_vk_lost_error(ctx, err);
  if (src->block->mapped) {
    memcpy(dst, (const char *)src->block->mapped + src->offset + offset, bytes);
    return SG_OK;
  }
  staging s;
  code = staging_new(ctx, bytes, &s, err);
  if (code != SG_OK)
    return code;
  copy_args c = {src->block->buffer, s.buffer, {src->offset + offset, 0, bytes}};
  code = kn_vk_run_commands(ctx, record_copy, &c, err);
  if (code == SG_OK)
    memcpy(dst, s.mapped, bytes);
  staging_free(ctx, &s);
  return code;
}
