// SPDX-License-Identifier: Apache-2.0
/*
 * kernels_random.c — the launcher of random.comp: random_uniform / random_normal on the
 * device with the CPU generator's splitmix64 stream (kn_random in kernels/cpu_shape.c),
 * element i computing its own draws. Needs int64 and float64 shader arithmetic.
 */
#include "kn_vulkan.h"
#include "vk_internal.h"

sg_code kn_vk_random(kn_vk_batch *bt, kn_vk_elem et, bool normal, uint64_t seed, int64_t n, kn_vk_buffer *out,
                     sg_error *err) {
  kn_vk_context *ctx = kn_vk_batch_context(bt);
  if ((et != KN_VK_F32 && et != KN_VK_F64) || !ctx->int64_ops || !ctx->float64_ops)
    return sg_error_set(err, SG_UNIMPLEMENTED,
                        "vulkan: random needs float32/float64 results and int64 + float64 shader arithmetic");
  if (n < 0 || n > (int64_t)UINT32_MAX)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad random length %lld", (long long)n);
  sg_code code = kn_vk_check_buffer_of(out, n, kn_vk_elem_size(et), "result", err);
  if (code)
    return code;
  uint32_t pc[4] = {(uint32_t)n, 0, (uint32_t)seed, (uint32_t)(seed >> 32)};
  uint32_t kind = normal ? 1u : 0u;
  kn_vk_binding binds[1] = {{out, true}};
  return kn_vk_dispatch_items_spec(bt, et == KN_VK_F64 ? "random_f64" : "random", binds, 1, pc, sizeof pc, n,
                                   &kind, 1, err);
}
