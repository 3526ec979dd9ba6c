// SPDX-License-Identifier: Apache-2.0
/*
 * runner.c — batches: many dispatches recorded into ONE command buffer, submitted once
 * on the device's queue, waited on with a fence and a deadline — at once
 * (kn_vk_batch_submit) or later (kn_vk_batch_send / kn_vk_inflight_wait, so the host
 * records the next batch while the device runs this one).
 *
 * Barriers: the batch remembers which buffer ranges were written and read since the
 * last barrier. A dispatch that reads or writes a range written earlier (RAW, WAW), or
 * writes a range read earlier (WAR), gets buffer memory barriers first; independent
 * dispatches get none, so the driver may overlap them.
 *
 * Frames (command pool + command buffer + fence + descriptor pools) are recycled through
 * a free list. A frame whose deadline passed stays on a pending list until its fence
 * signals, so nothing the GPU may still touch is freed early.
 */
#include "vk_internal.h"

#include <stdlib.h>
#include <string.h>

#define SETS_PER_POOL 256

struct kn_vk_frame {
  VkCommandPool pool;
  VkCommandBuffer cb;
  VkFence fence;
  SG_VEC(VkDescriptorPool) dpools;
  size_t dpool_cur;
};

typedef struct span {
  VkBuffer buffer;
  uint64_t off, size;
} span;

struct kn_vk_inflight {
  kn_vk_context *ctx;
  kn_vk_frame *frame;
};

struct kn_vk_batch {
  kn_vk_context *ctx;
  kn_vk_frame *frame;
  SG_VEC(span) written; /* since the last barrier */
  SG_VEC(span) read;
  size_t dispatches;
  size_t barriers;
};

static void frame_destroy(kn_vk_context *ctx, kn_vk_frame *f) {
  for (size_t i = 0; i < f->dpools.len; i++)
    ctx->vk.vkDestroyDescriptorPool(ctx->device, f->dpools.data[i], NULL);
  sg_vec_free(&f->dpools);
  if (f->fence)
    ctx->vk.vkDestroyFence(ctx->device, f->fence, NULL);
  if (f->pool)
    ctx->vk.vkDestroyCommandPool(ctx->device, f->pool, NULL);
  free(f);
}

static void frame_recycle(kn_vk_context *ctx, kn_vk_frame *f) {
  if (ctx->lost || ctx->vk.vkResetFences(ctx->device, 1, &f->fence) != VK_SUCCESS ||
      ctx->vk.vkResetCommandPool(ctx->device, f->pool, 0) != VK_SUCCESS) {
    frame_destroy(ctx, f);
    return;
  }
  for (size_t i = 0; i < f->dpools.len; i++)
    ctx->vk.vkResetDescriptorPool(ctx->device, f->dpools.data[i], 0);
  f->dpool_cur = 0;
  pthread_mutex_lock(&ctx->frame_lock);
  sg_vec_push(&ctx->free_frames, f);
  pthread_mutex_unlock(&ctx->frame_lock);
}

void kn_vk_frames_collect(kn_vk_context *ctx, bool wait) {
  pthread_mutex_lock(&ctx->frame_lock);
  SG_VEC(kn_vk_frame *) done = {0};
  for (size_t i = 0; i < ctx->pending_frames.len;) {
    kn_vk_frame *f = ctx->pending_frames.data[i];
    VkResult r = wait ? ctx->vk.vkWaitForFences(ctx->device, 1, &f->fence, VK_TRUE, UINT64_MAX)
                      : ctx->vk.vkGetFenceStatus(ctx->device, f->fence);
    if (r == VK_NOT_READY || r == VK_TIMEOUT) {
      i++;
      continue;
    }
    if (r == VK_ERROR_DEVICE_LOST)
      kn_vk_check_ctx(ctx, r, NULL, "waiting for abandoned work");
    sg_vec_push(&done, f);
    ctx->pending_frames.data[i] = ctx->pending_frames.data[--ctx->pending_frames.len];
  }
  pthread_mutex_unlock(&ctx->frame_lock);
  for (size_t i = 0; i < done.len; i++)
    frame_recycle(ctx, done.data[i]);
  sg_vec_free(&done);
}

void kn_vk_frames_free(kn_vk_context *ctx) {
  for (size_t i = 0; i < ctx->free_frames.len; i++)
    frame_destroy(ctx, ctx->free_frames.data[i]);
  for (size_t i = 0; i < ctx->pending_frames.len; i++)
    frame_destroy(ctx, ctx->pending_frames.data[i]);
  sg_vec_free(&ctx->free_frames);
  sg_vec_free(&ctx->pending_frames);
}

static sg_code frame_get(kn_vk_context *ctx, kn_vk_frame **out, sg_error *err) {
  if (ctx->lost)
    return kn_vk_lost_error(ctx, err);
  kn_vk_frames_collect(ctx, false); /* reclaim frames abandoned at a deadline */
  pthread_mutex_lock(&ctx->frame_lock);
  kn_vk_frame *f = ctx->free_frames.len ? sg_vec_pop(&ctx->free_frames) : NULL;
  pthread_mutex_unlock(&ctx->frame_lock);
  if (!f) {
    f = sg_xcalloc(1, sizeof *f);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
                                   .queueFamilyIndex = ctx->queue_family};
    VkResult r = ctx->vk.vkCreateCommandPool(ctx->device, &pci, NULL, &f->pool);
    if (r == VK_SUCCESS) {
      VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .commandPool = f->pool,
                                        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = 1};
      r = ctx->vk.vkAllocateCommandBuffers(ctx->device, &ai, &f->cb);
    } else {
      f->pool = VK_NULL_HANDLE;
    }
    if (r == VK_SUCCESS) {
      VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      r = ctx->vk.vkCreateFence(ctx->device, &fci, NULL, &f->fence);
      if (r != VK_SUCCESS)
        f->fence = VK_NULL_HANDLE;
    }
    if (r != VK_SUCCESS) {
      frame_destroy(ctx, f);
      return kn_vk_check_ctx(ctx, r, err, "creating a command buffer");
    }
  }
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult r = ctx->vk.vkBeginCommandBuffer(f->cb, &bi);
  if (r != VK_SUCCESS) {
    frame_destroy(ctx, f);
    return kn_vk_check_ctx(ctx, r, err, "vkBeginCommandBuffer");
  }
  *out = f;
  return SG_OK;
}

/* Ends and submits a recorded frame (its fence signals when the device is done). On
 * failure the frame is destroyed. */
static sg_code frame_send(kn_vk_context *ctx, kn_vk_frame *f, sg_error *err) {
  if (ctx->lost) { /* lost since the frame was begun (by another user of the context) */
    frame_destroy(ctx, f);
    return kn_vk_lost_error(ctx, err);
  }
  VkResult r = ctx->vk.vkEndCommandBuffer(f->cb);
  if (r != VK_SUCCESS) {
    frame_destroy(ctx, f);
    return kn_vk_check_ctx(ctx, r, err, "vkEndCommandBuffer");
  }
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &f->cb};
  pthread_mutex_lock(&ctx->queue_lock);
  r = kn_vk_fault(KN_VK_FAULT_SUBMIT);
  if (r == VK_SUCCESS)
    r = ctx->vk.vkQueueSubmit(ctx->queue, 1, &si, f->fence);
  pthread_mutex_unlock(&ctx->queue_lock);
  if (r != VK_SUCCESS) {
    frame_destroy(ctx, f);
    return kn_vk_check_ctx(ctx, r, err, "vkQueueSubmit");
  }
  return SG_OK;
}

/* Waits for a sent frame. On a deadline the frame goes to the pending list; otherwise
 * it is recycled (or destroyed if the device is lost). */
/* Waits in slices of this much while the request can be cancelled, so a cancel, a
 * client's disconnect or shutdown stops the wait (the work itself runs to its end on
 * the device; its frame is recycled when its fence signals). */
enum { CANCEL_SLICE_NS = 10 * 1000 * 1000 };

static sg_code frame_wait(kn_vk_context *ctx, kn_vk_frame *f, uint64_t deadline_ns, sg_error *err) {
  VkResult r;
  const sg_watch *w = sg_watch_current(); /* the request's cancel flag (common/watch.c) */
  bool cancelled = false;
  for (;;) {
    uint64_t timeout = UINT64_MAX;
    uint64_t now = sg_now_ns();
    if (deadline_ns) timeout = deadline_ns > now ? deadline_ns - now : 0;
    bool sliced = w && w->cancel && timeout > CANCEL_SLICE_NS;
    r = ctx->vk.vkWaitForFences(ctx->device, 1, &f->fence, VK_TRUE, sliced ? CANCEL_SLICE_NS : timeout);
    if (r != VK_TIMEOUT || !sliced) break;
    if ((cancelled = atomic_load(w->cancel))) break;
  }
  if (r == VK_SUCCESS)
    r = kn_vk_fault(KN_VK_FAULT_WAIT); /* injected after the work finished */
  if (r == VK_TIMEOUT) {
    pthread_mutex_lock(&ctx->frame_lock);
    sg_vec_push(&ctx->pending_frames, f);
    pthread_mutex_unlock(&ctx->frame_lock);
    if (cancelled)
      return sg_error_set(err, SG_CANCELLED, "vulkan:%d: cancelled while waiting for the device", ctx->info.index);
    return sg_error_set(err, SG_DEADLINE_EXCEEDED,
                        "vulkan:%d: deadline exceeded waiting for the device", ctx->info.index);
  }
  if (r != VK_SUCCESS) {
    sg_code code = kn_vk_check_ctx(ctx, r, err, "waiting for the device");
    if (ctx->lost)
      frame_destroy(ctx, f);
    else {
      /* unknown state: keep it until the fence signals */
      pthread_mutex_lock(&ctx->frame_lock);
      sg_vec_push(&ctx->pending_frames, f);
      pthread_mutex_unlock(&ctx->frame_lock);
    }
    return code;
  }
  frame_recycle(ctx, f);
  return SG_OK;
}

sg_code kn_vk_run_commands(kn_vk_context *ctx,
                           void (*record)(kn_vk_context *, VkCommandBuffer, void *), void *arg,
                           sg_error *err) {
  kn_vk_frame *f;
  sg_code code = frame_get(ctx, &f, err);
  if (code != SG_OK)
    return code;
  record(ctx, f->cb, arg);
  code = frame_send(ctx, f, err);
  return code ? code : frame_wait(ctx, f, 0, err);
}

/* ------------------------------------------------------------ batches */

sg_code kn_vk_batch_begin(kn_vk_context *ctx, kn_vk_batch **out, sg_error *err) {
  *out = NULL;
  kn_vk_frame *f;
  sg_code code = frame_get(ctx, &f, err);
  if (code != SG_OK)
    return code;
  kn_vk_batch *b = sg_xcalloc(1, sizeof *b);
  b->ctx = ctx;
  b->frame = f;
  *out = b;
  return SG_OK;
}

static void batch_free(kn_vk_batch *b) {
  sg_vec_free(&b->written);
  sg_vec_free(&b->read);
  free(b);
}

void kn_vk_batch_discard(kn_vk_batch *b) {
  if (!b)
    return;
  kn_vk_context *ctx = b->ctx;
  if (ctx->vk.vkEndCommandBuffer(b->frame->cb) == VK_SUCCESS)
    frame_recycle(ctx, b->frame);
  else
    frame_destroy(ctx, b->frame);
  batch_free(b);
}

size_t kn_vk_batch_dispatch_count(const kn_vk_batch *b) { return b->dispatches; }

size_t kn_vk_batch_barrier_count(const kn_vk_batch *b) { return b->barriers; }

kn_vk_context *kn_vk_batch_context(const kn_vk_batch *b) { return b->ctx; }

/* Ends the batch's command buffer and sends it; the batch is consumed. */
static sg_code batch_send(kn_vk_batch *b, kn_vk_frame **out, sg_error *err) {
  kn_vk_context *ctx = b->ctx;
  /* make the last shader writes visible to the host (mapped reads) and to copies */
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT};
  if (b->dispatches)
    ctx->vk.vkCmdPipelineBarrier(b->frame->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                 VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                                 &mb, 0, NULL, 0, NULL);
  kn_vk_frame *f = b->frame;
  batch_free(b);
  *out = f;
  return frame_send(ctx, f, err);
}

sg_code kn_vk_batch_submit(kn_vk_batch *b, uint64_t deadline_ns, sg_error *err) {
  kn_vk_context *ctx = b->ctx;
  kn_vk_frame *f;
  sg_code code = batch_send(b, &f, err);
  return code ? code : frame_wait(ctx, f, deadline_ns, err);
}

sg_code kn_vk_batch_send(kn_vk_batch *b, kn_vk_inflight **out, sg_error *err) {
  kn_vk_context *ctx = b->ctx;
  kn_vk_frame *f;
  *out = NULL;
  sg_code code = batch_send(b, &f, err);
  if (code)
    return code;
  kn_vk_inflight *w = sg_xcalloc(1, sizeof *w);
  w->ctx = ctx;
  w->frame = f;
  *out = w;
  return SG_OK;
}

sg_code kn_vk_inflight_wait(kn_vk_inflight *w, uint64_t deadline_ns, sg_error *err) {
  if (!w)
    return SG_OK;
  sg_code code = frame_wait(w->ctx, w->frame, deadline_ns, err);
  free(w);
  return code;
}

void kn_vk_batch_after_inflight(kn_vk_batch *b) {
  /* the previous submission's shader writes (and any transfer) before this batch's
   * reads and writes: a barrier's first scope covers earlier submissions on the queue */
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
  b->ctx->vk.vkCmdPipelineBarrier(b->frame->cb,
                                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
  b->barriers++;
}

static bool overlaps(const span *s, VkBuffer buf, uint64_t off, uint64_t size) {
  return s->buffer == buf && off < s->off + s->size && s->off < off + size;
}

static bool any_overlap(const span *v, size_t n, VkBuffer buf, uint64_t off, uint64_t size) {
  for (size_t i = 0; i < n; i++)
    if (overlaps(&v[i], buf, off, size))
      return true;
  return false;
}

static void insert_barrier(kn_vk_batch *b) {
  size_t n = b->written.len + b->read.len;
  VkBufferMemoryBarrier *bars = sg_xcalloc(n ? n : 1, sizeof *bars);
  size_t k = 0;
  for (size_t i = 0; i < b->written.len; i++, k++)
    bars[k] = (VkBufferMemoryBarrier){.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                      .dstAccessMask =
                                          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                                      .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                      .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                      .buffer = b->written.data[i].buffer,
                                      .offset = b->written.data[i].off,
                                      .size = b->written.data[i].size};
  /* reads before a later write only need ordering: an execution dependency, which
   * these barriers with no access masks express */
  for (size_t i = 0; i < b->read.len; i++, k++)
    bars[k] = (VkBufferMemoryBarrier){.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                      .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                      .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                      .buffer = b->read.data[i].buffer,
                                      .offset = b->read.data[i].off,
                                      .size = b->read.data[i].size};
  b->ctx->vk.vkCmdPipelineBarrier(b->frame->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL, (uint32_t)n,
                                  bars, 0, NULL);
  free(bars);
  b->written.len = 0;
  b->read.len = 0;
  b->barriers++;
}

static sg_code alloc_set(kn_vk_batch *b, VkDescriptorSetLayout layout, VkDescriptorSet *out,
                         sg_error *err) {
  kn_vk_context *ctx = b->ctx;
  kn_vk_frame *f = b->frame;
  for (;;) {
    if (f->dpool_cur < f->dpools.len) {
      VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                        .descriptorPool = f->dpools.data[f->dpool_cur],
                                        .descriptorSetCount = 1,
                                        .pSetLayouts = &layout};
      VkResult r = ctx->vk.vkAllocateDescriptorSets(ctx->device, &ai, out);
      if (r == VK_SUCCESS)
        return SG_OK;
      if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
        return kn_vk_check_ctx(ctx, r, err, "vkAllocateDescriptorSets");
      f->dpool_cur++;
      continue;
    }
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                 SETS_PER_POOL * KN_VK_MAX_BINDINGS};
    VkDescriptorPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                      .maxSets = SETS_PER_POOL,
                                      .poolSizeCount = 1,
                                      .pPoolSizes = &size};
    VkDescriptorPool pool;
    VkResult r = ctx->vk.vkCreateDescriptorPool(ctx->device, &pci, NULL, &pool);
    if (r != VK_SUCCESS)
      return kn_vk_check_ctx(ctx, r, err, "vkCreateDescriptorPool");
    sg_vec_push(&f->dpools, pool);
    f->dpool_cur = f->dpools.len - 1;
  }
}

sg_code kn_vk_dispatch(kn_vk_batch *b, const kn_vk_dispatch_desc *d, sg_error *err) {
  kn_vk_context *ctx = b->ctx;
  if (d->nbindings < 0 || d->nbindings > KN_VK_MAX_BINDINGS || d->push_bytes > KN_VK_PUSH_BYTES)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad dispatch of '%s'", d->kernel);
  for (int i = 0; i < 3; i++)
    if (d->groups[i] > ctx->limits.maxComputeWorkGroupCount[i])
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "vulkan: dispatch of '%s' with %u workgroups in dimension %d (max %u)",
                          d->kernel, d->groups[i], i, ctx->limits.maxComputeWorkGroupCount[i]);
  const kn_vk_pipeline *p;
  sg_code code = kn_vk_pipeline_get(ctx, d->kernel, d->spec, d->nspec, &p, err);
  if (code != SG_OK)
    return code;
  if (d->nbindings != p->nbindings)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: kernel '%s' takes %d buffers, not %d",
                        d->kernel, p->nbindings, d->nbindings);
  if (d->groups[0] == 0 || d->groups[1] == 0 || d->groups[2] == 0)
    return SG_OK; /* nothing to do: empty tensors */

  bool hazard = false;
  for (int i = 0; i < d->nbindings && !hazard; i++) {
    const kn_vk_buffer *buf = d->bindings[i].buffer;
    VkBuffer vb = buf->block->buffer;
    hazard = any_overlap(b->written.data, b->written.len, vb, buf->offset, buf->alloc) ||
             (d->bindings[i].written &&
              any_overlap(b->read.data, b->read.len, vb, buf->offset, buf->alloc));
  }
  if (hazard)
    insert_barrier(b);

  VkDescriptorSet set;
  code = alloc_set(b, p->set_layout, &set, err);
  if (code != SG_OK)
    return code;
  VkDescriptorBufferInfo infos[KN_VK_MAX_BINDINGS];
  VkWriteDescriptorSet writes[KN_VK_MAX_BINDINGS];
  for (int i = 0; i < d->nbindings; i++) {
    const kn_vk_buffer *buf = d->bindings[i].buffer;
    infos[i] = (VkDescriptorBufferInfo){buf->block->buffer, buf->offset, buf->alloc};
    writes[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                       .dstSet = set,
                                       .dstBinding = (uint32_t)i,
                                       .descriptorCount = 1,
                                       .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                       .pBufferInfo = &infos[i]};
    span s = {buf->block->buffer, buf->offset, buf->alloc};
    if (d->bindings[i].written)
      sg_vec_push(&b->written, s);
    else
      sg_vec_push(&b->read, s);
  }
  ctx->vk.vkUpdateDescriptorSets(ctx->device, (uint32_t)d->nbindings, writes, 0, NULL);
  VkCommandBuffer cb = b->frame->cb;
  ctx->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
  ctx->vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0,
                                  NULL);
  uint8_t push[KN_VK_PUSH_BYTES] = {0};
  if (d->push_bytes)
    memcpy(push, d->push, d->push_bytes);
  ctx->vk.vkCmdPushConstants(cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, KN_VK_PUSH_BYTES, push);
  ctx->vk.vkCmdDispatch(cb, d->groups[0], d->groups[1], d->groups[2]);
  b->dispatches++;
  return SG_OK;
}
