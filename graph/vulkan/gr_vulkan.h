// SPDX-License-Identifier: Apache-2.0
/*
 * gr_vulkan.h — graph/vulkan: the executor's Vulkan backend. A request opened on a
 * Vulkan device installs the backend in its context (exec/gr_exec.h gr_backend): the
 * interpreter then hands it every primitive, results of GPU kernels are GV_DEVICE
 * values that stay in device buffers, recorded into one command buffer until something
 * on the host needs them (docs/vulkan.md, "Executing graphs"). Device-resident tensors
 * (GV_RESIDENT) outlive requests. Sees the IR and the executor (exec/), never the
 * passes; the op table's Vulkan column (one recorder per family) is exec_vulkan.c's.
 *   exec_vulkan.c           requests, buffers, the backend hooks, arithmetic, reductions,
 *                           matmul
 *   exec_vulkan_layout.c    where / cast / layout / constructors
 *   exec_vulkan_dtype.c     NumPy promotion on the device
 *   exec_vulkan_adjoint.c   AD helper rows and optimizer steps
 *   exec_vulkan_random.c    random tensors (the CPU generator's stream)
 *   exec_vulkan_resident.c  device-resident tensors
 */
#ifndef STAGD_GRAPH_VULKAN_GR_VULKAN_H
#define STAGD_GRAPH_VULKAN_GR_VULKAN_H

#include "gr_exec.h"

/* Opens the backend for one request: device NULL/"cpu" → no backend is installed; "auto"
 * → the `--device auto` policy (decided once per process); "vulkan[:N]" → that
 * device (SG_UNAVAILABLE / SG_NOT_FOUND when it cannot be had). */
sg_code gr_vk_exec_begin(gr_ctx *ctx, const char *device, sg_error *err);
/* Ends the request: when rc is SG_OK, *result is brought to the host (one submit,
 * one download per device tensor in it); frees every device buffer of the request.
 * Returns rc or the error of the final read-back. No-op without a backend. */
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
  uint64_t fused;       /* elementwise chains run as one generated kernel */
  uint64_t epilogues;   /* of those, chains run in a matmul's or reduction's kernel (its epilogue) */
  uint64_t upload_bytes, download_bytes; /* bytes of those copies */
} gr_vk_stats;
void gr_vk_stats_get(gr_vk_stats *out);

/* gr_vk_exec_end, and before it (keep_on_device) a device or host tensor result
 * becomes resident; without keep_on_device resident results become host copies. */
sg_code gr_vk_exec_finish(gr_ctx *ctx, gr_val *res, sg_code rc, bool keep_on_device, sg_error *err);
/* *v (owned; a tensor or a tuple of them) uploaded to `device` as resident tensors;
 * unchanged for the CPU. */
sg_code gr_vk_resident_upload(gr_val *v, const char *device, sg_error *err);
void gr_vk_resident_stats(uint64_t *bytes, uint64_t *buffers);
uint64_t gr_vk_resident_bytes(const gr_resident *r); /* device bytes of its buffer */

#endif /* STAGD_GRAPH_VULKAN_GR_VULKAN_H */
