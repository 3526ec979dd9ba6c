// SPDX-License-Identifier: Apache-2.0
/*
 * kn_cpu.h — private helpers shared by the CPU kernels of kernels/.
 */
#ifndef STAGD_KERNELS_KN_CPU_H
#define STAGD_KERNELS_KN_CPU_H

#include "kn.h"

#define KN_PARALLEL_MIN ((int64_t)1 << 16)
typedef void (*kn_range_fn)(void *ctx, int64_t k0, int64_t k1);
/* Calls fn over [0, total) in chunks, on several cores when total is large. */
void kn_parallel_for(int64_t total, kn_range_fn fn, void *ctx);
int kn_cpu_threads(void);
/* Calls fn over [0, nblocks) split evenly across the cores (coarse work items). */
void kn_parallel_blocks(int64_t nblocks, kn_range_fn fn, void *ctx);

/* cpu_vmath.c: float32 exp, sigmoid and tanh over arrays (vectorised, within 1 ulp of
 * the correctly rounded result), and r[i] = e^(x[i] - m) in double for softmax. */
void kn_vm_exp_f32(const float *x, float *r, int64_t n);
void kn_vm_sigmoid_f32(const float *x, float *r, int64_t n);
void kn_vm_tanh_f32(const float *x, float *r, int64_t n);
void kn_vm_exp_shifted(const double *x, double m, double *r, int64_t n);
/* max (or min) of x[0, n), sets *nan when a value is NaN (cpu_vmath.c) */
double kn_vm_extremum_f32(const float *x, int64_t n, bool max, bool *nan);
double kn_vm_extremum_f64(const double *x, int64_t n, bool max, bool *nan);

#endif
