// SPDX-License-Identifier: Apache-2.0
/*
 * vk_internal.h — private declarations shared by the files of kernels/vulkan/:
 * the context, buffer and batch structs, and the helpers each file offers the others
 * (instance.c: loader + instance; memory.c: pool; pipeline.c: pipelines; runner.c:
 * command buffers). Nothing outside this folder includes it.
 */
#ifndef STAGD_KERNELS_VK_INTERNAL_H
#define STAGD_KERNELS_VK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <volk.h>

#include "kn_vulkan.h"

/* ------------------------------------------------------------ instance.c */

/* Loads the loader and creates the process-wide instance once (thread-safe).
 * SG_UNAVAILABLE when either step fails. */
sg_code kn_vk_instance_get(VkInstance *out, sg_error *err);
/* Whether the Vulkan 1.2 feature structs can be used with a device of this apiVersion
 * (the instance was created for 1.2 too). */
bool kn_vk_features12(uint32_t device_api);
/* Physical device `index` of the instance and its description (from the list described
 * once per instance); SG_NOT_FOUND naming the count when there is no such device. */
sg_code kn_vk_physical(int index, VkInstance *inst, VkPhysicalDevice *pd, kn_vk_device_info *info,
                       sg_error *err);
/* VkResult → sg_code with a message naming what was being done. */
sg_code kn_vk_check(VkResult r, sg_error *err, const char *what);

/* ------------------------------------------------------------ fault.c */

/* Where a fault can be injected (STAGD_VK_FAULT=KIND@SITE:N, docs/vulkan.md). */
typedef enum kn_vk_fault_site {
  KN_VK_FAULT_SUBMIT, /* vkQueueSubmit (nothing is submitted) */
  KN_VK_FAULT_WAIT,   /* vkWaitForFences (after the work finished) */
  KN_VK_FAULT_ALLOC,  /* vkAllocateMemory (nothing is allocated) */
  KN_VK_FAULT_MAP,    /* vkMapMemory (nothing is mapped) */
  KN_VK_FAULT_NSITES
} kn_vk_fault_site;
/* VK_SUCCESS, or the injected error when this is the armed N-th call at site. */
VkResult kn_vk_fault(kn_vk_fault_site site);
/* Reads STAGD_VK_FAULT once per process; its error (a bad value) on every call. */
sg_code kn_vk_fault_env(sg_error *err);

/* ------------------------------------------------------------ memory.c */

typedef struct kn_vk_range {
  uint64_t off, size;
} kn_vk_range;

typedef struct kn_vk_block {
  VkDeviceMemory memory;
  VkBuffer buffer; /* one VkBuffer spans the block; buffers are (block, offset) */
  uint64_t size;
  void *mapped;   /* non-NULL when the block is mapped directly */
  bool dedicated; /* holds exactly one large buffer */
  /* free list: sorted, non-overlapping ranges */
  SG_VEC(kn_vk_range) free;
} kn_vk_block;

struct kn_vk_buffer {
  kn_vk_context *ctx;
  kn_vk_block *block;
  uint64_t offset;
  uint64_t size;  /* requested bytes */
  uint64_t alloc; /* bytes taken from the block (aligned, ≥ 4) */
};

typedef struct kn_vk_pool {
  pthread_mutex_t lock;
  uint32_t memory_type;
  bool mapped; /* blocks are host-visible + coherent and stay mapped */
  uint64_t block_bytes;
  uint64_t alignment;
  SG_VEC(kn_vk_block *) blocks;
  uint64_t used_bytes, buffer_count;
} kn_vk_pool;

sg_code kn_vk_pool_init(kn_vk_context *ctx, sg_error *err);
void kn_vk_pool_free(kn_vk_context *ctx);

/* ------------------------------------------------------------ pipeline.c */

typedef struct kn_vk_pipeline {
  VkPipeline pipeline;
  VkPipelineLayout layout;
  VkDescriptorSetLayout set_layout;
  int nbindings;
} kn_vk_pipeline;

typedef struct kn_vk_shader_blob {
  const char *name;
  const unsigned char *code;
  size_t size;
  int nbindings;
} kn_vk_shader_blob;

/* From the generated kn_vk_shaders.c (build tree). */
extern const kn_vk_shader_blob kn_vk_shader_blobs[];
extern const size_t kn_vk_shader_blob_count;
extern const char *const kn_vk_shader_names[]; /* NULL-terminated */

/* dir: as kn_vk_options.pipeline_cache_dir (NULL = default location, "" = none). */
sg_code kn_vk_pipelines_init(kn_vk_context *ctx, const char *dir, sg_error *err);
void kn_vk_pipelines_free(kn_vk_context *ctx);
/* Finds or builds the pipeline for (kernel, spec constants). */
sg_code kn_vk_pipeline_get(kn_vk_context *ctx, const char *kernel, const uint32_t *spec, int nspec,
                           const kn_vk_pipeline **out, sg_error *err);

/* ------------------------------------------------------------ runner.c */

typedef struct kn_vk_frame kn_vk_frame; /* command pool + fence + descriptor pools */
kn_vk_context *kn_vk_batch_context(const kn_vk_batch *b);
void kn_vk_frames_free(kn_vk_context *ctx);
/* Reclaims frames whose work finished after their deadline passed. */
void kn_vk_frames_collect(kn_vk_context *ctx, bool wait);
/* Runs a one-off command buffer (used for staging copies) and waits. */
sg_code kn_vk_run_commands(kn_vk_context *ctx,
                           void (*record)(kn_vk_context *, VkCommandBuffer, void *), void *arg,
                           sg_error *err);

/* ------------------------------------------------------------ the context */

struct kn_vk_context {
  kn_vk_device_info info;
  VkInstance instance;
  VkPhysicalDevice physical;
  VkDevice device;
  struct VolkDeviceTable vk; /* device-level functions for this device */
  uint32_t queue_family;
  VkQueue queue;
  pthread_mutex_t queue_lock; /* the one submission queue of the device */
  atomic_int refs;            /* kn_vk_context_retain / release */
  atomic_bool lost;           /* VK_ERROR_DEVICE_LOST seen: refuse further work */
  bool subgroup_ops;          /* use the subgroup variant of reductions */
  bool int64_ops, float64_ops; /* shaderInt64 / shaderFloat64 enabled (typed kernels) */
  bool float16_ops;            /* shaderFloat16 + storageBuffer16BitAccess enabled */
  VkPhysicalDeviceMemoryProperties memprops;
  VkPhysicalDeviceLimits limits;
  kn_vk_options opts;
  char *cache_path; /* pipeline cache file, NULL = not persisted */

  kn_vk_pool pool;

  pthread_mutex_t pipe_lock;
  VkPipelineCache pipeline_cache;
  sg_map pipelines; /* hash(kernel, spec) → kn_vk_pipeline* */

  pthread_mutex_t frame_lock;
  SG_VEC(kn_vk_frame *) free_frames;
  SG_VEC(kn_vk_frame *) pending_frames; /* submitted, deadline passed, not yet done */
};

/* Maps VK_ERROR_DEVICE_LOST etc. and marks the context lost when needed. */
sg_code kn_vk_check_ctx(kn_vk_context *ctx, VkResult r, sg_error *err, const char *what);
/* The error for work asked of a context that was lost earlier (SG_UNAVAILABLE). */
sg_code kn_vk_lost_error(const kn_vk_context *ctx, sg_error *err);

/* Helpers shared by the launchers (kernels.c, kernels_logic.c, kernels_layout.c). */
#define KN_VK_MAX_GROUPS 65535u /* guaranteed minimum of maxComputeWorkGroupCount */
/* The largest power of two <= want that the device accepts as a 1-D workgroup. */
uint32_t kn_vk_wg_size(const kn_vk_context *ctx, uint32_t want);
/* Workgroups for `items` items of per_group each, capped (the shaders grid-stride). */
uint32_t kn_vk_grid(int64_t items, uint32_t per_group);
/* Records `kernel` with one invocation per item (a 1-D grid of 256-wide workgroups, or
 * the device's largest below; the size is specialization constant 0). */
/* The kernel of a bit-copying family for elements of elem_bytes = 1, 2, 4 or 8 bytes:
 * names[] lists the family's builds in that order (-DKN_1BYTE, -DKN_2BYTE, default,
 * -DKN_8BYTE); NULL for other sizes. */
const char *kn_vk_sized_kernel(const char *const names[4], size_t elem_bytes);
sg_code kn_vk_dispatch_items(kn_vk_batch *bt, const char *kernel, kn_vk_binding *binds,
                             int nbinds, const void *push, size_t push_bytes, int64_t items,
                             sg_error *err);
/* The same with specialization constants 1..nspec (constant 0 is the workgroup size). */
sg_code kn_vk_dispatch_items_spec(kn_vk_batch *bt, const char *kernel, kn_vk_binding *binds,
                                  int nbinds, const void *push, size_t push_bytes, int64_t items,
                                  const uint32_t *spec, int nspec, sg_error *err);
sg_code kn_vk_check_shape(const kn_vk_shape *s, const char *what, sg_error *err);
sg_code kn_vk_check_buffer_of(const kn_vk_buffer *buf, int64_t elems, size_t esize,
                              const char *what, sg_error *err);
/* Fused steps as fused_step.glsl's codes (codes[s]) over nins buffers and nscalars
 * scalars; epilogue: step 0 may read KN_VK_FUSED_PREV (a matmul's element).
 * SG_INVALID_ARGUMENT for an op without a float32 kernel or an operand out of range. */
sg_code kn_vk_fused_codes(const kn_vk_fused_step *steps, int nsteps, int nins, int nscalars,
                          bool epilogue, uint32_t *codes, sg_error *err);
/* How each of nins input buffers is read against n output elements: mod[k] (its
 * elements), div[k] (output elements per element), bit k of *bcast when it is broadcast
 * (fewer than n); checks each buffer's size. */
sg_code kn_vk_fused_inputs(kn_vk_buffer *const *ins, const int64_t *in_sizes, const int64_t *in_inners,
                           int nins, int64_t n, uint32_t *mod, uint32_t *div, uint32_t *bcast,
                           sg_error *err);
/* The push-constant fields of a kernel's elementwise epilogue (epilogue_push.glsl),
 * appended to the kernel's own. */
typedef struct kn_vk_epi_push {
  uint32_t zero_a, zero_b; /* opaque()'s masks: 0, unknown to the compiler */
  uint32_t emod[KN_VK_EPI_INPUTS], ediv[KN_VK_EPI_INPUTS];
  float es[KN_VK_EPI_SCALARS];
} kn_vk_epi_push;
/* Checks epi (what) over a result of n elements and fills its push fields, its
 * specialization constants (spec[4], spec[5], spec[6..]: ids 4..13 in every _epi
 * kernel; *nspec becomes 6 + its steps, ids below 4 the caller's, unused ones 0), its
 * bindings binds[3..5] (unused ones `spare`, never read) and the kernel: *kernel, a
 * plain float32 kernel, becomes its -DKN_EPILOGUE build, named with "_epi" appended
 * (in name). */
enum { KN_VK_EPI_NAME = 64 };
sg_code kn_vk_epilogue_prepare(const kn_vk_epilogue *epi, const char *what, int64_t n, kn_vk_epi_push *push,
                               uint32_t *spec, uint32_t *nspec, kn_vk_binding *binds, kn_vk_buffer *spare,
                               const char **kernel, char name[KN_VK_EPI_NAME], sg_error *err);
/* Strides of `s` (row-major) aligned to the output's dimensions, 0 where broadcast. */
void kn_vk_broadcast_strides(const kn_vk_shape *s, const kn_vk_shape *out, uint32_t *st);
/* Whether the device's subgroups suit the subgroup kernels (arithmetic, size 4..128). */
bool kn_vk_subgroup_usable(const kn_vk_device_info *d);

#endif /* STAGD_KERNELS_VK_INTERNAL_H */
