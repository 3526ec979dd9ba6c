// SPDX-License-Identifier: Apache-2.0
/*
 * kernels_layout.c — launchers for the layout and constructor kernels: the general
 * strided copy behind transpose / slice / concat / stack (strided_copy.comp), gather
 * and one_hot (indices checked on the host and uploaded as uint32), fill (zeros, ones,
 * full: a repeating 4- or 8-byte pattern); the copies take 1-, 2-, 4- and 8-byte
 * elements and arange (int64 / float64).
 */
#include "vk_internal.h"

#include <string.h>

sg_code kn_vk_copy_strided(kn_vk_batch *bt, kn_vk_buffer *a, const kn_vk_shape *shape,
                           int64_t in_offset, const int64_t *in_stride, kn_vk_buffer *out,
                           int64_t out_offset, const int64_t *out_stride, size_t elem_bytes,
                           sg_error *err) {
  sg_code code = kn_vk_check_shape(shape, "copy", err);
  if (code != SG_OK)
    return code;
  const char *kernel = kn_vk_sized_kernel(
      (const char *const[]){"strided_copy1", "strided_copy2", "strided_copy", "strided_copy8"},
      elem_bytes);
  if (!kernel)
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: copy of %zu-byte elements", elem_bytes);
  int64_t n = kn_vk_shape_size(shape);
  /* the highest element each side touches must lie inside its buffer */
  int64_t ilo = in_offset, ihi = in_offset, olo = out_offset, ohi = out_offset;
  for (int i = 0; i < shape->ndim && n > 0; i++) {
    int64_t span = (shape->dims[i] - 1);
    if (in_stride[i] < 0) ilo += span * in_stride[i];
    else ihi += span * in_stride[i];
    if (out_stride[i] < 0) olo += span * out_stride[i];
    else ohi += span * out_stride[i];
  }
  if (n > 0 && (ilo < 0 || olo < 0))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: strided copy starts before its buffer");
  if (n > 0 && ((code = kn_vk_check_buffer_of(a, ihi + 1, elem_bytes, "operand", err)) ||
                (code = kn_vk_check_buffer_of(out, ohi + 1, elem_bytes, "result", err))))
    return code;
  struct {
    uint32_t n, ndim, ioffset, ooffset;
    uint32_t shape[KN_VK_MAX_DIMS], istride[KN_VK_MAX_DIMS], ostride[KN_VK_MAX_DIMS];
  } pc = {.n = (uint32_t)n,
          .ndim = (uint32_t)shape->ndim,
          .ioffset = (uint32_t)in_offset,
          .ooffset = (uint32_t)out_offset};
  for (int i = 0; i < shape->ndim; i++) {
    pc.shape[i] = (uint32_t)shape->dims[i];
    pc.istride[i] = (uint32_t)in_stride[i]; /* negative: wraps, and so do the sums */
    pc.ostride[i] = (uint32_t)out_stride[i];
  }
  _Static_assert(sizeof pc <= KN_VK_PUSH_BYTES, "strided copy push constants too big");
  kn_vk_binding binds[2] = {{a, false}, {out, true}};
  return kn_vk_dispatch_items(bt, kernel, binds, 2, &pc, sizeof pc,
                              n, err);
}

sg_code kn_vk_gather(kn_vk_batch *bt, kn_vk_buffer *a, int64_t outer, int64_t len, int64_t inner,
                     kn_vk_buffer *idx, int64_t nidx, size_t elem_bytes, kn_vk_buffer *out,
                     sg_error *err) {
  const char *kernel = kn_vk_sized_kernel(
      (const char *const[]){"gather1", "gather2", "gather", "gather8"}, elem_bytes);
  if (!kernel)
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: gather of %zu-byte elements", elem_bytes);
  if (outer < 0 || len < 0 || inner <= 0 || nidx < 0 || outer * len * inner > (int64_t)UINT32_MAX ||
      outer * nidx * inner > (int64_t)UINT32_MAX)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad gather shape");
  int64_t n = outer * nidx * inner;
  sg_code code;
  if ((code = kn_vk_check_buffer_of(a, outer * len * inner, elem_bytes, "operand", err)) ||
      (code = kn_vk_check_buffer_of(idx, nidx, 4, "indices", err)) ||
      (code = kn_vk_check_buffer_of(out, n, elem_bytes, "result", err)))
    return code;
  uint32_t pc[4] = {(uint32_t)n, (uint32_t)len, (uint32_t)(nidx ? nidx : 1), (uint32_t)inner};
  kn_vk_binding binds[3] = {{a, false}, {idx, false}, {out, true}};
  return kn_vk_dispatch_items(bt, kernel, binds, 3, pc, sizeof pc,
                              n, err);
}

sg_code kn_vk_one_hot(kn_vk_batch *bt, kn_vk_buffer *idx, int64_t n, int64_t depth,
                      kn_vk_buffer *out, sg_error *err) {
  if (n < 0 || depth <= 0 || n * depth > (int64_t)UINT32_MAX)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad one_hot shape");
  sg_code code;
  if ((code = kn_vk_check_buffer_of(idx, n, 4, "indices", err)) ||
      (code = kn_vk_check_buffer_of(out, n * depth, 4, "result", err)))
    return code;
  uint32_t pc[2] = {(uint32_t)(n * depth), (uint32_t)depth};
  kn_vk_binding binds[2] = {{idx, false}, {out, true}};
  return kn_vk_dispatch_items(bt, "one_hot", binds, 2, pc, sizeof pc,
                              n * depth, err);
}

sg_code kn_vk_fill(kn_vk_batch *bt, kn_vk_buffer *out, uint64_t nbytes, uint64_t pattern,
                   bool pattern8, sg_error *err) {
  if (nbytes % (pattern8 ? 8 : 4) || nbytes / 4 > UINT32_MAX)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad fill size %llu",
                        (unsigned long long)nbytes);
  sg_code code = kn_vk_check_buffer_of(out, (int64_t)nbytes, 1, "result", err);
  if (code)
    return code;
  uint32_t pc[4] = {(uint32_t)(nbytes / 4), pattern8 ? 2u : 1u, (uint32_t)pattern,
                    (uint32_t)(pattern >> 32)};
  kn_vk_binding binds[1] = {{out, true}};
  return kn_vk_dispatch_items(bt, "fill", binds, 1, pc, sizeof pc,
                              (int64_t)(nbytes / 4), err);
}

sg_code kn_vk_arange(kn_vk_batch *bt, kn_vk_elem et, uint64_t start_bits, uint64_t step_bits,
                     int64_t n, kn_vk_buffer *out, sg_error *err) {
  kn_vk_context *ctx = kn_vk_batch_context(bt);
  if ((et != KN_VK_I64 && et != KN_VK_F64) || !ctx->int64_ops ||
      (et == KN_VK_F64 && !ctx->float64_ops))
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: no arange for element type %d", (int)et);
  if (n < 0 || n > (int64_t)UINT32_MAX)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad arange length %lld", (long long)n);
  sg_code code = kn_vk_check_buffer_of(out, n, 8, "result", err);
  if (code)
    return code;
  uint32_t pc[6] = {(uint32_t)n, 0, (uint32_t)start_bits, (uint32_t)(start_bits >> 32),
                    (uint32_t)step_bits, (uint32_t)(step_bits >> 32)};
  kn_vk_binding binds[1] = {{out, true}};
  const char *kernel = et == KN_VK_F64 ? "arange_f64" : "arange_i64";
  return kn_vk_dispatch_items(bt, kernel, binds, 1, pc, sizeof pc,
                              n, err);
}
