// SPDX-License-Identifier: Apache-2.0
/*
 * bench_vulkan.h — the parts of bench_vulkan that live in their own files.
 */
#ifndef STAGD_BENCH_VULKAN_H
#define STAGD_BENCH_VULKAN_H

#include <stdbool.h>
#include <stdint.h>

#include "kn_vulkan.h"

/* The benchmarks' pseudo-random inputs: the next value in [-0.5, 0.5) of the sequence
 * *state (a 64-bit LCG; any seed), the same on every run (bench_vulkan.c). */
double bench_uniform(uint64_t *state);

/* The Vulkan devices (kn_vk_enumerate); false after printing "no Vulkan: WHY", which
 * ends a benchmark with nothing to measure (bench_vulkan.c). */
bool bench_devices(kn_vk_device_info **devs, size_t *ndev);

/* Options of `bench_vulkan --matmul-variants`. */
typedef struct bench_mmv_options {
  bool quick;       /* default products up to 512^3 only */
  const int *sizes; /* nsizes > 0: the float32 and float16 squares of these instead */
  int nsizes;
  bool with_cpu; /* time the CPU backend too, and print each variant's ratio to it */
  int reps;      /* timed runs per product (best of); 0 → 3, or 1 from 2^30 multiply-adds */
} bench_mmv_options;

/* `bench_vulkan --matmul-variants`: each matmul variant on each device vs the CPU
 * backend (bench_matmul_variants.c). Returns the exit status. */
int bench_matmul_variants(const bench_mmv_options *o);

/* `bench_vulkan --mlp B,D0,...,Dn`: a staged MLP forward pass on the CPU backend and on
 * each device, inputs resident or sent from the host (bench_mlp.c). reps: timed runs
 * per device (best of), 0 → 3. Returns the exit status. */
int bench_mlp(const int64_t *dims, int ndims, int reps);

/* A float16 elementwise chain of 8 ops, then float16 reductions and softmax, on ctx:
 * one float16 dispatch per op vs the cast path (cast, float32 kernel, cast back) it
 * replaced (bench_f16_chain.c). */
void bench_f16_chain(kn_vk_context *ctx, int device, bool quick);
/* An 11-op float32 elementwise chain as one generated kernel vs one dispatch per op,
 * and the fused kernel's bandwidth against a one-op kernel's (bench_fused_chain.c). */
void bench_fused_chain(kn_vk_context *ctx, int device, bool quick);
/* bench_fused_chain on every device; the exit status. */
int bench_fused_chain_all(bool quick);

#endif /* STAGD_BENCH_VULKAN_H */
