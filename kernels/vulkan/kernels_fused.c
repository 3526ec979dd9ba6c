// SPDX-License-Identifier: Apache-2.0
/*
 * kernels_fused.c — the launcher of fused.comp: a chain of float32 elementwise ops as
 * one dispatch (kn_vk_fused_f32, kn_vulkan.h). It checks the chain, encodes each step
 * as the shader's specialization constant (op, then operand sources: 0 the previous
 * value, 1..7 a buffer, 8.. a push-constant scalar: kn_vk_fused_codes, which the matmul
 * epilogues use too) and the broadcast buffers as a bit mask (their element counts and
 * repeats are push constants: kn_vk_fused_inputs), binds the input buffers (unused
 * bindings repeat the first input: never read) and records one dispatch. The pipeline
 * of each distinct chain is built once per context and kept in the pipeline cache.
 */
#include "vk_internal.h"

#include <stdio.h>
#include <string.h>

/* Must match fused.comp's push_constant block. */
typedef struct fused_push {
  uint32_t n;
  uint32_t zero_a, zero_b; /* opaque()'s masks: the compiler cannot know they are 0 */
  uint32_t mod[KN_VK_FUSED_INPUTS]; /* a broadcast buffer's element count */
  uint32_t div[KN_VK_FUSED_INPUTS]; /* output elements per element of it */
  float s[KN_VK_FUSED_SCALARS];
} fused_push;
_Static_assert(sizeof(fused_push) <= KN_VK_PUSH_BYTES, "fused push constants too big");
_Static_assert(KN_VK_FUSED_INPUTS + 1 <= KN_VK_MAX_BINDINGS, "fused bindings");
_Static_assert(KN_VK_FUSED_STEPS + 3 <= KN_VK_MAX_SPEC, "fused specialization constants");

/* operand o of a step as fused_step.glsl's 5-bit source code; -1 when not valid there
 * (the previous value at step 0 only in an epilogue, where it is the product) */
static int source(int o, bool prev_ok, int nins, int nscalars) {
  if (o == KN_VK_FUSED_PREV) return prev_ok ? 0 : -1;
  if (o >= 0 && o < nins) return 1 + o;
  int k = o - KN_VK_FUSED_INPUTS;
  if (k >= 0 && k < nscalars) return 8 + k;
  return -1;
}

sg_code kn_vk_fused_codes(const kn_vk_fused_step *steps, int nsteps, int nins, int nscalars,
                          bool epilogue, uint32_t *codes, sg_error *err) {
  for (int s = 0; s < nsteps; s++) {
    const kn_vk_fused_step *st = &steps[s];
    bool op_ok = st->unary ? kn_vk_unary_supported(KN_VK_F32, (kn_vk_unop)st->op)
                           : kn_vk_binary_supported(KN_VK_F32, (kn_vk_binop)st->op);
    int a = source(st->a, s > 0 || epilogue, nins, nscalars);
    int b = st->unary ? 0 : source(st->b, s > 0 || epilogue, nins, nscalars);
    if (!op_ok || a < 0 || b < 0)
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "vulkan: fused step %d: %s op %d with operands %d, %d is not a float32 "
                          "kernel over the chain's %d buffers and %d scalars",
                          s, st->unary ? "unary" : "binary", st->op, st->a, st->b, nins, nscalars);
    codes[s] = (uint32_t)st->op | (st->unary ? 0u : 16u) | (uint32_t)a << 5 | (uint32_t)b << 10;
  }
  return SG_OK;
}

sg_code kn_vk_fused_inputs(kn_vk_buffer *const *ins, const int64_t *in_sizes, const int64_t *in_inners,
                           int nins, int64_t n, uint32_t *mod, uint32_t *div, uint32_t *bcast,
                           sg_error *err) {
  *bcast = 0;
  for (int k = 0; k < nins; k++) {
    int64_t size = in_sizes ? in_sizes[k] : n, inner = in_inners ? in_inners[k] : 1;
    mod[k] = div[k] = 0;
    if (n == 0 && size == 0) continue; /* nothing to run */
    if (size < 1 || inner < 1 || size > n / inner || n % (size * inner))
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "vulkan: fused operand %d of %lld elements, each for %lld, does not broadcast "
                          "to %lld", k, (long long)size, (long long)inner, (long long)n);
    mod[k] = (uint32_t)size;
    div[k] = (uint32_t)inner;
    if (size != n) *bcast |= 1u << k;
    sg_code code = kn_vk_check_buffer_of(ins[k], size, 4, "fused operand", err);
    if (code) return code;
  }
  return SG_OK;
}

sg_code kn_vk_epilogue_prepare(const kn_vk_epilogue *epi, const char *what, int64_t n, kn_vk_epi_push *push,
                               uint32_t *spec, uint32_t *nspec, kn_vk_binding *binds, kn_vk_buffer *spare,
                               const char **kernel, char name[KN_VK_EPI_NAME], sg_error *err) {
  if (!epi || epi->nsteps < 1 || epi->nsteps > KN_VK_EPI_STEPS || epi->nins < 0 ||
      epi->nins > KN_VK_EPI_INPUTS || epi->nscalars < 0 || epi->nscalars > KN_VK_EPI_SCALARS)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "vulkan: %s epilogue of %d steps, %d buffers, %d scalars (limits: 1..%d, %d, %d)", what,
                        epi ? epi->nsteps : 0, epi ? epi->nins : 0, epi ? epi->nscalars : 0, KN_VK_EPI_STEPS,
                        KN_VK_EPI_INPUTS, KN_VK_EPI_SCALARS);
  sg_code code;
  if ((code = kn_vk_fused_inputs(epi->ins, epi->in_sizes, epi->in_inners, epi->nins, n, push->emod, push->ediv,
                                 &spec[5], err)) ||
      (code = kn_vk_fused_codes(epi->steps, epi->nsteps, epi->nins, epi->nscalars, true, spec + 6, err)))
    return code;
  for (uint32_t i = *nspec; i < 4; i++) spec[i] = 0;
  spec[4] = (uint32_t)epi->nsteps;
  *nspec = 6 + (uint32_t)epi->nsteps;
  if (epi->nscalars) memcpy(push->es, epi->scalars, (size_t)epi->nscalars * sizeof *push->es);
  for (int i = 0; i < KN_VK_EPI_INPUTS; i++)
    binds[3 + i] = (kn_vk_binding){i < epi->nins ? epi->ins[i] : epi->nins ? epi->ins[0] : spare, false};
  snprintf(name, KN_VK_EPI_NAME, "%s_epi", *kernel);
  *kernel = name;
  return SG_OK;
}

sg_code kn_vk_fused_f32(kn_vk_batch *bt, const kn_vk_fused_step *steps, int nsteps,
                        kn_vk_buffer *const *ins, const int64_t *in_sizes, const int64_t *in_inners,
                        int nins, const float *scalars, int nscalars, kn_vk_buffer *out, int64_t n,
                        sg_error *err) {
  if (nsteps < 1 || nsteps > KN_VK_FUSED_STEPS || nins < 1 || nins > KN_VK_FUSED_INPUTS ||
      nscalars < 0 || nscalars > KN_VK_FUSED_SCALARS)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "vulkan: fused chain of %d steps, %d buffers, %d scalars (limits: 1..%d, 1..%d, %d)",
                        nsteps, nins, nscalars, KN_VK_FUSED_STEPS, KN_VK_FUSED_INPUTS,
                        KN_VK_FUSED_SCALARS);
  if (n < 0 || n > (int64_t)UINT32_MAX)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad element count %lld", (long long)n);
  uint32_t spec[KN_VK_FUSED_STEPS + 3];
  spec[0] = kn_vk_wg_size(kn_vk_batch_context(bt), 256);
  spec[1] = (uint32_t)nsteps;
  fused_push pc = {.n = (uint32_t)n};
  sg_code code;
  if ((code = kn_vk_fused_inputs(ins, in_sizes, in_inners, nins, n, pc.mod, pc.div, &spec[2], err)) ||
      (code = kn_vk_fused_codes(steps, nsteps, nins, nscalars, false, spec + 3, err)) ||
      (code = kn_vk_check_buffer_of(out, n, 4, "fused result", err)))
    return code;
  if (nscalars) memcpy(pc.s, scalars, (size_t)nscalars * sizeof *scalars);
  kn_vk_binding binds[KN_VK_FUSED_INPUTS + 1];
  for (int k = 0; k < KN_VK_FUSED_INPUTS; k++) binds[k] = (kn_vk_binding){ins[k < nins ? k : 0], false};
  binds[KN_VK_FUSED_INPUTS] = (kn_vk_binding){out, true};
  kn_vk_dispatch_desc d = {.kernel = "fused",
                           .bindings = binds,
                           .nbindings = KN_VK_FUSED_INPUTS + 1,
                           .push = &pc,
                           .push_bytes = sizeof pc,
                           .spec = spec,
                           .nspec = nsteps + 3,
                           .groups = {kn_vk_grid(n, spec[0]), 1, 1}};
  return kn_vk_dispatch(bt, &d, err);
}
