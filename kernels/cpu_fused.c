// SPDX-License-Identifier: Apache-2.0
/*
 * cpu_fused.c — a chain of float32 elementwise ops in one pass over memory: the
 * output is computed block by block (KN_FUSED_BLOCK elements that stay in the L1
 * cache), each step of the chain applied to the whole block before the next, with the
 * same per-element loops as the unfused kernels (kn_binary_f32, kn_unary_f32), so the
 * result has the same bits as running the ops one by one — without writing and
 * re-reading an intermediate tensor per op. A broadcast row (a bias) is read in place
 * where the block lies inside one repetition of it; other broadcasts (a column) are
 * copied for the block.
 */
#include <string.h>

#include "kn_cpu.h"

enum { KN_FUSED_BLOCK = 1024 };

typedef struct fused_job {
  const kn_fused_step *steps;
  int nsteps;
  const kn_fused_input *ins;
  float *out;
} fused_job;

/* operand o of a step over the block [k, k + len): its pointer and stride (0: scalar);
 * a broadcast row that wraps inside the block is copied into scratch */
static const float *operand(const fused_job *j, int o, const float *prev, int64_t k, int64_t len,
                            float *scratch, int64_t *stride) {
  if (o < 0) {
    *stride = 1;
    return prev;
  }
  const kn_fused_input *in = &j->ins[o];
  if (!in->data || in->rows == 1) {
    *stride = 0;
    return in->data ? in->data : &in->scalar;
  }
  *stride = 1;
  if (!in->rows) return in->data + k;
  int64_t inner = in->inner > 1 ? in->inner : 1, at = k / inner % in->rows, rep = k % inner;
  if (inner == 1 && at + len <= in->rows) return in->data + at;
  for (int64_t i = 0; i < len;) { /* element (k + i) / inner % rows: runs of `inner` equal ones */
    if (inner == 1) { /* a row wrapping around: its pieces */
      int64_t run = in->rows - at < len - i ? in->rows - at : len - i;
      memcpy(scratch + i, in->data + at, (size_t)run * sizeof *scratch);
      i += run;
      at = 0;
      continue;
    }
    int64_t run = inner - rep < len - i ? inner - rep : len - i;
    float v = in->data[at];
    for (int64_t r = 0; r < run; r++) scratch[i + r] = v;
    i += run;
    rep = 0;
    if (++at == in->rows) at = 0;
  }
  return scratch;
}

static void fused_range(void *ctx, int64_t k0, int64_t k1) {
  const fused_job *j = ctx;
  float buf[2][KN_FUSED_BLOCK], scratch[2][KN_FUSED_BLOCK];
  for (int64_t k = k0; k < k1; k += KN_FUSED_BLOCK) {
    int64_t len = k1 - k < KN_FUSED_BLOCK ? k1 - k : KN_FUSED_BLOCK;
    const float *prev = NULL;
    for (int s = 0; s < j->nsteps; s++) {
      const kn_fused_step *st = &j->steps[s];
      /* the last step writes the output; the others alternate between the buffers */
      float *dst = s == j->nsteps - 1 ? j->out + k : buf[s & 1];
      int64_t sa, sb;
      const float *a = operand(j, st->a, prev, k, len, scratch[0], &sa);
      if (st->unary && sa == 0) { /* one value (a scalar, a one-element tensor) for the block */
        float v;
        kn_unary_f32((kn_unop)st->op, a, &v, 1);
        for (int64_t i = 0; i < len; i++) dst[i] = v;
      } else if (st->unary) {
        kn_unary_f32((kn_unop)st->op, a, dst, len);
      } else {
        const float *b = operand(j, st->b, prev, k, len, scratch[1], &sb);
        kn_binary_f32((kn_binop)st->op, a, sa, b, sb, dst, len);
      }
      prev = dst;
    }
  }
}

void kn_fused_f32(const kn_fused_step *steps, int nsteps, const kn_fused_input *ins, float *out,
                  int64_t size) {
  fused_job j = {steps, nsteps, ins, out};
  kn_parallel_for(size, fused_range, &j);
}
