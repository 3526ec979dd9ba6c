// SPDX-License-Identifier: Apache-2.0
/*
 * kernels_logic.c — launchers for the kernels with bool operands or results:
 * comparisons and logic ops (compare.comp), where (where.comp) and dtype casts
 * (cast.comp). Bool tensors are bytes that shaders read and write as 32-bit words (4
 * elements a word), so their buffers are rounded up to 4 bytes (kn_vk_bool_bytes) and
 * no 8-bit storage feature is needed.
 */
#include "vk_internal.h"

#include <string.h>

static const char *const compare_kernel[] = {
    [KN_VK_F32] = "compare",      [KN_VK_F64] = "compare_f64", [KN_VK_I32] = "compare_i32",
    [KN_VK_I64] = "compare_i64",  [KN_VK_BOOL] = "compare_bool", [KN_VK_F16] = "compare_f16"};
static const char *const cast_kernel[] = {[KN_VK_F32] = "cast", [KN_VK_F64] = "cast_f64",
                                          [KN_VK_I32] = "cast_i32", [KN_VK_I64] = "cast_i64",
                                          [KN_VK_BOOL] = "cast_bool", [KN_VK_F16] = "cast_f16"};

static sg_code check_bytes(const kn_vk_buffer *buf, uint64_t bytes, const char *what,
                           sg_error *err) {
  return kn_vk_check_buffer_of(buf, (int64_t)bytes, 1, what, err);
}

sg_code kn_vk_compare(kn_vk_batch *bt, kn_vk_elem et, kn_vk_cmpop op, kn_vk_buffer *a,
                      const kn_vk_shape *as, kn_vk_buffer *b, const kn_vk_shape *bs,
                      kn_vk_buffer *out, sg_error *err) {
  kn_vk_context *ctx = kn_vk_batch_context(bt);
  if ((unsigned)op > KN_VK_NOT)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: unknown comparison %d", (int)op);
  if ((unsigned)et > KN_VK_F16 || !kn_vk_elem_supported(ctx, et))
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: no comparison for element type %d",
                        (int)et);
  kn_vk_shape scalar = {.ndim = 0};
  if (op == KN_VK_NOT) { /* b is a's first element, never read */
    b = a;
    bs = &scalar;
  }
  sg_code code;
  kn_vk_shape os;
  if ((code = kn_vk_check_shape(as, "left operand", err)) ||
      (code = kn_vk_check_shape(bs, "right operand", err)) ||
      (code = kn_vk_broadcast_shape(as, bs, &os, err)) ||
      (code = kn_vk_check_shape(&os, "result", err)))
    return code;
  int64_t n = kn_vk_shape_size(&os), na = kn_vk_shape_size(as), nb = kn_vk_shape_size(bs);
  if ((code = check_bytes(a, kn_vk_elem_bytes(et, na), "left operand", err)) ||
      (op != KN_VK_NOT && (code = check_bytes(b, kn_vk_elem_bytes(et, nb), "right operand", err))) ||
      (code = check_bytes(out, kn_vk_bool_bytes(n), "result", err)))
    return code;
  struct {
    uint32_t n, ndim, pad0, pad1;
    uint32_t shape[KN_VK_MAX_DIMS], sa[KN_VK_MAX_DIMS], sb[KN_VK_MAX_DIMS];
  } pc = {.n = (uint32_t)n, .ndim = (uint32_t)os.ndim};
  for (int i = 0; i < os.ndim; i++)
    pc.shape[i] = (uint32_t)os.dims[i];
  kn_vk_broadcast_strides(as, &os, pc.sa);
  kn_vk_broadcast_strides(bs, &os, pc.sb);
  uint32_t flags = (na == n ? 1u : na == 1 ? 2u : 0u) | (nb == n ? 4u : nb == 1 ? 8u : 0u);
  uint32_t spec[3] = {kn_vk_wg_size(ctx, 256), (uint32_t)op, flags};
  kn_vk_binding binds[3] = {{a, false}, {b, false}, {out, true}};
  kn_vk_dispatch_desc d = {.kernel = compare_kernel[et],
                           .bindings = binds,
                           .nbindings = 3,
                           .push = &pc,
                           .push_bytes = sizeof pc,
                           .spec = spec,
                           .nspec = 3,
                           .groups = {kn_vk_grid((n + 3) / 4, spec[0]), 1, 1}};
  return kn_vk_dispatch(bt, &d, err);
}

sg_code kn_vk_where(kn_vk_batch *bt, kn_vk_buffer *c, const kn_vk_shape *cs, kn_vk_buffer *a,
                    const kn_vk_shape *as, kn_vk_buffer *b, const kn_vk_shape *bs,
                    size_t elem_bytes, kn_vk_buffer *out, sg_error *err) {
  const char *kernel = kn_vk_sized_kernel(
      (const char *const[]){"where1", "where2", "where", "where8"}, elem_bytes);
  if (!kernel)
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: where of %zu-byte elements", elem_bytes);
  sg_code code;
  kn_vk_shape ab, os;
  if ((code = kn_vk_check_shape(cs, "condition", err)) ||
      (code = kn_vk_check_shape(as, "left operand", err)) ||
      (code = kn_vk_check_shape(bs, "right operand", err)) ||
      (code = kn_vk_broadcast_shape(as, bs, &ab, err)) ||
      (code = kn_vk_broadcast_shape(cs, &ab, &os, err)))
    return code;
  if (os.ndim > 6)
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: where of %d dimensions (max 6)", os.ndim);
  int64_t n = kn_vk_shape_size(&os);
  if ((code = check_bytes(c, kn_vk_bool_bytes(kn_vk_shape_size(cs)), "condition", err)) ||
      (code = kn_vk_check_buffer_of(a, kn_vk_shape_size(as), elem_bytes, "left operand", err)) ||
      (code = kn_vk_check_buffer_of(b, kn_vk_shape_size(bs), elem_bytes, "right operand", err)) ||
      (code = kn_vk_check_buffer_of(out, n, elem_bytes, "result", err)))
    return code;
  uint32_t st[3][KN_VK_MAX_DIMS];
  kn_vk_broadcast_strides(cs, &os, st[0]);
  kn_vk_broadcast_strides(as, &os, st[1]);
  kn_vk_broadcast_strides(bs, &os, st[2]);
  struct {
    uint32_t n, ndim, pad0, pad1;
    uint32_t shape[6], sc[6], sa[6], sb[6];
  } pc = {.n = (uint32_t)n, .ndim = (uint32_t)os.ndim};
  for (int i = 0; i < os.ndim; i++) {
    pc.shape[i] = (uint32_t)os.dims[i];
    pc.sc[i] = st[0][i];
    pc.sa[i] = st[1][i];
    pc.sb[i] = st[2][i];
  }
  kn_vk_binding binds[4] = {{c, false}, {a, false}, {b, false}, {out, true}};
  return kn_vk_dispatch_items(bt, kernel, binds, 4, &pc, sizeof pc,
                              n, err);
}

bool kn_vk_cast_supported(const kn_vk_context *ctx) { return ctx->float64_ops && ctx->int64_ops; }

sg_code kn_vk_cast(kn_vk_batch *bt, kn_vk_elem from, kn_vk_elem to, kn_vk_buffer *a,
                   kn_vk_buffer *out, int64_t n, sg_error *err) {
  kn_vk_context *ctx = kn_vk_batch_context(bt);
  if ((unsigned)from > KN_VK_F16 || (unsigned)to > KN_VK_F16 || !kn_vk_cast_supported(ctx))
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: no cast from element type %d to %d",
                        (int)from, (int)to);
  if (n < 0 || n > (int64_t)UINT32_MAX / 2)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad element count %lld", (long long)n);
  sg_code code;
  if ((code = check_bytes(a, kn_vk_elem_bytes(from, n), "operand", err)) ||
      (code = check_bytes(out, kn_vk_elem_bytes(to, n), "result", err)))
    return code;
  /* the shader's destination codes are kn_dtype's numbering */
  static const uint32_t dst_code[] = {[KN_VK_BOOL] = 0, [KN_VK_I32] = 1, [KN_VK_I64] = 2,
                                      [KN_VK_F16] = 3, [KN_VK_F32] = 4, [KN_VK_F64] = 5};
  uint32_t pc[1] = {(uint32_t)n};
  uint32_t spec[2] = {kn_vk_wg_size(ctx, 256), dst_code[to]};
  kn_vk_binding binds[2] = {{a, false}, {out, true}};
  kn_vk_dispatch_desc d = {.kernel = cast_kernel[from],
                           .bindings = binds,
                           .nbindings = 2,
                           .push = pc,
                           .push_bytes = sizeof pc,
                           .spec = spec,
                           .nspec = 2,
                           .groups = {kn_vk_grid((n + 3) / 4, spec[0]), 1, 1}};
  return kn_vk_dispatch(bt, &d, err);
}
