/*
 * bench_vulkan.h — the parts of bench_vulkan that live in their own files.
 */
#ifndef STAGD_BENCH_VULKAN_H
#define STAGD_BENCH_VULKAN_H

#include <stdbool.h>

#include "kn_vulkan.h"

/* The Vulkan devices (kn_vk_enumerate); false after printing "no Vulkan: WHY", which
 * ends a benchmark with nothing to measure (bench_vulkan.c). */
bool bench_devices(kn_vk_device_info **devs, size_t *ndev);

/* `bench_vulkan --matmul-variants`: each matmul variant on each device vs the CPU
 * backend (bench_matmul_variants.c). Returns the exit status. */
int bench_matmul_variants(bool quick);

/* A float16 elementwise chain of 8 ops on ctx: one float16 dispatch per op vs the
 * cast path (cast, float32 kernel, cast back) it replaced (bench_f16_chain.c). */
void bench_f16_chain(kn_vk_context *ctx, int device, bool quick);

#endif /* STAGD_BENCH_VULKAN_H */
