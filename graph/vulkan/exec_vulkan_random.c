// SPDX-License-Identifier: Apache-2.0
/*
 * exec_vulkan_random.c — the Vulkan executor's recorder for random_uniform and
 * random_normal (OP SHAPE SEED [DTYPE]): float32/float64 results drawn on the device
 * from the CPU generator's stream (kernels/shaders/random.comp), so a graph that draws
 * noise does not stop to upload it. uniform is bit-identical to the CPU; normal goes
 * through the device's float64 log and cos (f64_math.glsl, a few ulps from libm's).
 * Bad arguments, float16 and devices without int64/float64 shaders leave *done false
 * and the CPU kernel runs (and reports errors with its message).
 */
#include "gr_vulkan.h"

#ifdef GR_HAVE_VULKAN
#include "exec_vulkan_int.h"

static sg_code run_random(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                          bool *done, sg_error *err) {
  struct gr_vk_exec *x = gr_vkx(ctx);
  int nd;
  int64_t sh[KN_MAX_DIMS], seed;
  kn_dtype dt = KN_FLOAT64;
  sg_error e = SG_ERROR_INIT;
  if (gr_shape_arg(op, &args[0], &nd, sh, &e) || kn_check_shape(nd, sh, &e) ||
      gr_int_arg(op, &args[1], &seed, &e)) {
    sg_error_clear(&e);
    return SG_OK; /* the CPU kernel reports it */
  }
  if (n > 2 && (args[2].tag != GV_STR || !kn_dtype_parse(args[2].u.s, &dt))) return SG_OK;
  if (dt != KN_FLOAT32 && dt != KN_FLOAT64) return SG_OK;
  if (!kn_vk_elem_supported(x->vk, KN_VK_I64) || !kn_vk_elem_supported(x->vk, KN_VK_F64)) return SG_OK;
  gr_dtensor *r;
  kn_vk_batch *bt;
  sg_code rc = gr_vkx_new_output(x, dt, nd, sh, &r, err);
  if (rc) return rc;
  if (r->size && !(rc = gr_vkx_batch(x, &bt, err)))
    rc = kn_vk_random(bt, dt == KN_FLOAT64 ? KN_VK_F64 : KN_VK_F32, op->code != 0, (uint64_t)seed, r->size,
                      r->db->buf, err);
  return gr_vkx_finish(r, rc, out, done);
}

const gr_vk_op gr_vk_random = {"random", run_random};

#endif
