/*
 * exec_vulkan.h — the graph executor's Vulkan backend (private to graph/).
 *
 * The op table's `vulkan` column (ops.c) points at a gr_vk_op: the pipeline it records
 * and the function that records it. The interpreter (exec.c) calls gr_vk_prim for
 * every primitive while a request runs on a Vulkan device (ctx->vk != NULL); results
 * of GPU kernels are GV_DEVICE values that stay in device buffers, recorded into one
 * command buffer until something on the host needs them (see docs/vulkan.md,
 * "Executing graphs").
 */
#ifndef STAGD_GRAPH_EXEC_VULKAN_H
#define STAGD_GRAPH_EXEC_VULKAN_H

#include "gr_internal.h"

/* Records op on the device. *done false (with SG_OK) means "not for this dtype/shape":
 * the caller runs the CPU kernel instead. */
typedef sg_code (*gr_vk_fn)(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                            bool *done, sg_error *err);
typedef struct gr_vk_op {
  const char *pipeline; /* embedded kernel it records (kn_vk_kernel_names), or "" */
  gr_vk_fn run;
} gr_vk_op;

extern const gr_vk_op gr_vk_binary, gr_vk_unary, gr_vk_reduce, gr_vk_softmax, gr_vk_matmul,
    gr_vk_reshape, gr_vk_transpose, gr_vk_where, gr_vk_cast, gr_vk_join, gr_vk_slice,
    gr_vk_gather, gr_vk_one_hot, gr_vk_fill, gr_vk_arange, gr_vk_random, gr_vk_adjoint, gr_vk_optim;

/* The vulkan column of an op-table row, keyed by the row's CPU kernel (ops.c's ROW
 * macro pastes the name). NULL: the op runs on the host (documented in vulkan.md). */
#define GR_VK_SLOT(cpu) GR_VK_SLOT_##cpu
#define GR_VK_SLOT_gr_cpu_binary (&gr_vk_binary)
#define GR_VK_SLOT_gr_cpu_unary (&gr_vk_unary)
#define GR_VK_SLOT_gr_cpu_reduce (&gr_vk_reduce)
#define GR_VK_SLOT_gr_cpu_softmax (&gr_vk_softmax)
#define GR_VK_SLOT_gr_cpu_matmul (&gr_vk_matmul)
#define GR_VK_SLOT_gr_cpu_reshape (&gr_vk_reshape)
#define GR_VK_SLOT_gr_cpu_where (&gr_vk_where)
#define GR_VK_SLOT_gr_cpu_cast (&gr_vk_cast)
#define GR_VK_SLOT_gr_cpu_transpose (&gr_vk_transpose)
#define GR_VK_SLOT_gr_cpu_join (&gr_vk_join)
#define GR_VK_SLOT_gr_cpu_slice (&gr_vk_slice)
#define GR_VK_SLOT_gr_cpu_gather (&gr_vk_gather)
#define GR_VK_SLOT_gr_cpu_one_hot (&gr_vk_one_hot)
#define GR_VK_SLOT_gr_cpu_fill (&gr_vk_fill)
#define GR_VK_SLOT_gr_cpu_arange (&gr_vk_arange)
#define GR_VK_SLOT_gr_cpu_random (&gr_vk_random) /* the CPU generator's stream */
#define GR_VK_SLOT_gr_cpu_shape NULL
#define GR_VK_SLOT_gr_cpu_tuple NULL
#define GR_VK_SLOT_gr_cpu_getitem NULL
#define GR_VK_SLOT_gr_cpu_record NULL
#define GR_VK_SLOT_gr_cpu_getattr NULL
#define GR_VK_SLOT_gr_cpu_print NULL
#define GR_VK_SLOT_gr_cpu_assert NULL
#define GR_VK_SLOT_gr_cpu_variable NULL
#define GR_VK_SLOT_gr_cpu_seq NULL
#define GR_VK_SLOT_gr_cpu_if NULL
#define GR_VK_SLOT_gr_cpu_while NULL
#define GR_VK_SLOT_gr_cpu_grad NULL
#define GR_VK_SLOT_gr_cpu_adjoint (&gr_vk_adjoint)
#define GR_VK_SLOT_gr_cpu_optim (&gr_vk_optim)

/* Opens the backend for one request: device NULL/"cpu" → ctx->vk stays NULL; "auto"
 * → the `--device auto` policy (decided once per process); "vulkan[:N]" → that
 * device (SG_UNAVAILABLE / SG_NOT_FOUND when it cannot be had). */
sg_code gr_vk_exec_begin(gr_ctx *ctx, const char *device, sg_error *err);
/* Ends the request: when rc is SG_OK, *result is brought to the host (one submit,
 * one download per device tensor in it); frees every device buffer of the request.
 * Returns rc or the error of the final read-back. No-op when ctx->vk is NULL. */
sg_code gr_vk_exec_end(gr_ctx *ctx, gr_val *result, sg_code rc, sg_error *err);

/* Process-wide counters of the Vulkan executor (tests, benchmarks, debugging). */
typedef struct gr_vk_stats {
  uint64_t requests;    /* requests that ran on a Vulkan device */
  uint64_t dispatches;  /* kernels recorded */
  uint64_t submits;     /* command buffers submitted (one per straight-line region) */
  uint64_t uploads;     /* host → device tensor copies */
  uint64_t downloads;   /* device → host tensor copies (outputs, predicates, CPU ops) */
  uint64_t buffers;     /* device buffers created (the rest were reused by liveness) */
  uint64_t reused;      /* kernel outputs served from a dead tensor's buffer */
  uint64_t cpu_fallbacks; /* primitives run on the CPU during Vulkan requests */
  uint64_t upload_bytes, download_bytes; /* bytes of those copies */
} gr_vk_stats;
void gr_vk_stats_get(gr_vk_stats *out);

/* Device-resident tensors (exec_vulkan_resident.c). gr_vk_prim hands ops with
 * resident arguments and the variable ops to gr_vkr_prim (gr_vkr_wants). */
typedef struct gr_rbuf gr_rbuf;
bool gr_vkr_wants(const gr_op *op, const gr_val *args, int n);
sg_code gr_vkr_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err);
/* gr_vk_exec_end, and before it (keep_on_device) a device or host tensor result
 * becomes resident; without keep_on_device resident results become host copies. */
sg_code gr_vk_exec_finish(gr_ctx *ctx, gr_val *res, sg_code rc, bool keep_on_device, sg_error *err);
/* dst[0..n) = owned copies of src with resident tensors replaced by host copies, when
 * any (*any); else nothing is written. */
sg_code gr_vk_args_to_host(gr_val *dst, const gr_val *src, int n, bool *any, sg_error *err);
/* *v (owned; a tensor or a tuple of them) uploaded to `device` as resident tensors;
 * unchanged for the CPU. */
sg_code gr_vk_resident_upload(gr_val *v, const char *device, sg_error *err);
/* The host copy of r (retained), downloaded once and cached. */
sg_code gr_vk_resident_host(gr_resident *r, kn_tensor **out, sg_error *err);
void gr_vk_resident_stats(uint64_t *bytes, uint64_t *buffers);
uint64_t gr_vk_resident_bytes(const gr_resident *r); /* device bytes of its buffer */

/* The interpreter's hooks (only called when ctx->vk != NULL). */
sg_code gr_vk_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                   sg_error *err);

#endif /* STAGD_GRAPH_EXEC_VULKAN_H */
