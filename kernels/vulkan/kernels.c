// SPDX-License-Identifier: Apache-2.0
/*
 * kernels.c — typed launchers for the arithmetic kernels (binary, unary, reduce, argmax,
 * softmax, transpose); kernels_matmul.c (matmul variants and their choice),
 * kernels_logic.c and kernels_layout.c hold the others. Each validates shapes and buffer sizes, fills the
 * kernel's push constants, picks workgroup sizes for the device (specialization
 * constants 0..1) and records one kn_vk_dispatch into the batch. The graph's op table can call these, or
 * kn_vk_dispatch directly by kernel name.
 *
 * Indices inside shaders are 32-bit: tensors of 2^32 elements or more are refused.
 */
#include "vk_internal.h"

#include <stddef.h>

#include <stdlib.h>
#include <string.h>


/* Push-constant layouts; must match the shaders' `push_constant` blocks. */
typedef struct binary_push {
  uint32_t n, ndim, pad0, pad1;
  uint32_t shape[KN_VK_MAX_DIMS];
  uint32_t sa[KN_VK_MAX_DIMS];
  uint32_t sb[KN_VK_MAX_DIMS];
} binary_push;
_Static_assert(sizeof(binary_push) <= KN_VK_PUSH_BYTES, "binary push constants too big");

int64_t kn_vk_shape_size(const kn_vk_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->ndim; i++)
    n *= s->dims[i];
  return n;
}

/* The largest power of two ≤ want that the device accepts as a 1-D workgroup. */
uint32_t kn_vk_wg_size(const kn_vk_context *ctx, uint32_t want) {
  uint32_t lim = ctx->limits.maxComputeWorkGroupInvocations;
  if (ctx->limits.maxComputeWorkGroupSize[0] < lim)
    lim = ctx->limits.maxComputeWorkGroupSize[0];
  while (want > lim)
    want /= 2;
  return want;
}

uint32_t kn_vk_grid(int64_t items, uint32_t per_group) {
  int64_t g = (items + per_group - 1) / per_group;
  return g > KN_VK_MAX_GROUPS ? KN_VK_MAX_GROUPS : (uint32_t)g;
}

const char *kn_vk_sized_kernel(const char *const names[4], size_t elem_bytes) {
  switch (elem_bytes) {
  case 1: return names[0];
  case 2: return names[1];
  case 4: return names[2];
  case 8: return names[3];
  default: return NULL;
  }
}

sg_code kn_vk_dispatch_items(kn_vk_batch *bt, const char *kernel, kn_vk_binding *binds,
                             int nbinds, const void *push, size_t push_bytes, int64_t items,
                             sg_error *err) {
  return kn_vk_dispatch_items_spec(bt, kernel, binds, nbinds, push, push_bytes, items, NULL, 0, err);
}

sg_code kn_vk_dispatch_items_spec(kn_vk_batch *bt, const char *kernel, kn_vk_binding *binds,
                                  int nbinds, const void *push, size_t push_bytes, int64_t items,
                                  const uint32_t *spec, int nspec, sg_error *err) {
  uint32_t all[8];
  if (nspec < 0 || nspec > 7)
    return sg_error_set(err, SG_INTERNAL, "vulkan: %s: %d specialization constants", kernel, nspec);
  all[0] = kn_vk_wg_size(kn_vk_batch_context(bt), 256);
  for (int i = 0; i < nspec; i++) all[i + 1] = spec[i];
  kn_vk_dispatch_desc d = {.kernel = kernel,
                           .bindings = binds,
                           .nbindings = nbinds,
                           .push = push,
                           .push_bytes = push_bytes,
                           .spec = all,
                           .nspec = nspec + 1,
                           .groups = {kn_vk_grid(items, all[0]), 1, 1}};
  return kn_vk_dispatch(bt, &d, err);
}

sg_code kn_vk_check_shape(const kn_vk_shape *s, const char *what, sg_error *err) {
  if (s->ndim < 0 || s->ndim > KN_VK_MAX_DIMS)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: %s has %d dimensions (max %d)", what,
                        s->ndim, KN_VK_MAX_DIMS);
  for (int i = 0; i < s->ndim; i++)
    if (s->dims[i] < 0 || s->dims[i] > UINT32_MAX)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: %s has a bad dimension %lld", what,
                          (long long)s->dims[i]);
  if (kn_vk_shape_size(s) > (int64_t)UINT32_MAX)
    return sg_error_set(err, SG_UNIMPLEMENTED,
                        "vulkan: %s has 2^32 elements or more (not supported)", what);
  return SG_OK;
}

sg_code kn_vk_check_buffer_of(const kn_vk_buffer *buf, int64_t elems, size_t esize,
                               const char *what, sg_error *err) {
  if (buf == NULL)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: %s buffer is NULL", what);
  if (buf->size < (uint64_t)elems * esize)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "vulkan: %s buffer holds %llu bytes, %lld elements need %lld", what,
                        (unsigned long long)buf->size, (long long)elems,
                        (long long)elems * (long long)esize);
  return SG_OK;
}

/* ------------------------------------------------------------ element types */
/* Invocation items of an elementwise kernel over n elements: float16 kernels write one
 * 32-bit word (two halves) per item. */
static int64_t elem_items(kn_vk_elem et, int64_t n) { return et == KN_VK_F16 ? (n + 1) / 2 : n; }
static const struct {
  const char *binary, *unary, *reduce, *argmax;
  size_t size;
} elems[] = {
    [KN_VK_F32] = {"binary", "unary", "reduce", "argmax", 4},
    [KN_VK_F64] = {"binary_f64", "unary_f64", "reduce_f64", "argmax_f64", 8},
    [KN_VK_I32] = {"binary_i32", "unary_i32", "reduce_i32", "argmax_i32", 4},
    [KN_VK_I64] = {"binary_i64", "unary_i64", "reduce_i64", "argmax_i64", 8},
    [KN_VK_BOOL] = {NULL, NULL, NULL, NULL, 1},
    [KN_VK_F16] = {"binary_f16", "unary_f16", "reduce_f16", "argmax_f16", 2}};

size_t kn_vk_elem_size(kn_vk_elem e) { return (unsigned)e <= KN_VK_F16 ? elems[e].size : 0; }

/* buf holds n elements of et (halves: whole 32-bit words, kn_vk_elem_bytes) */
static sg_code check_elems(const kn_vk_buffer *buf, kn_vk_elem et, int64_t n, const char *what,
                           sg_error *err) {
  return et == KN_VK_F16 ? kn_vk_check_buffer_of(buf, elem_items(et, n), 4, what, err)
                         : kn_vk_check_buffer_of(buf, n, elems[et].size, what, err);
}

bool kn_vk_elem_supported(const kn_vk_context *ctx, kn_vk_elem e) {
  switch (e) {
  case KN_VK_F32:
  case KN_VK_I32:
  case KN_VK_BOOL:
  case KN_VK_F16: return true; /* halves in 32-bit words: casts, copies and the
                                  elementwise kernels convert in software; matmul also
                                  needs float16_ops (kn_vk_matmul_available) */
  case KN_VK_F64: return ctx->float64_ops;
  case KN_VK_I64: return ctx->int64_ops;
  }
  return false;
}

/* float16 (binary_f16, unary_f16) computes in float32: it has float32's ops */
static bool float_elem(kn_vk_elem e) { return e == KN_VK_F32 || e == KN_VK_F64 || e == KN_VK_F16; }

bool kn_vk_binary_supported(kn_vk_elem e, kn_vk_binop op) {
  if ((unsigned)op >= KN_VK_NBINOPS || (unsigned)e > KN_VK_F16 || e == KN_VK_BOOL)
    return false;
  if (op == KN_VK_DIV)
    return float_elem(e); /* integer `/` is true division (float) */
  return true;
}

bool kn_vk_unary_supported(kn_vk_elem e, kn_vk_unop op) {
  if ((unsigned)op >= KN_VK_NUNOPS || (unsigned)e > KN_VK_F16 || e == KN_VK_BOOL)
    return false;
  switch (op) {
  case KN_VK_EXP:
  case KN_VK_LOG:
  case KN_VK_TANH:
  case KN_VK_SIGMOID:
  case KN_VK_SIN:
  case KN_VK_COS: /* float64: f64_math.glsl */
  case KN_VK_SQRT:
  case KN_VK_RECIPROCAL: return float_elem(e);
  default: return true;
  }
}

sg_code kn_vk_broadcast_shape(const kn_vk_shape *a, const kn_vk_shape *b, kn_vk_shape *out,
                              sg_error *err) {
  int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  kn_vk_shape r = {.ndim = nd};
  for (int i = 0; i < nd; i++) {
    int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) /* kn_err_broadcast's family (this folder has no kn.h) */
      return sg_error_set_reason(err, SG_REASON_SHAPE_MISMATCH, SG_INVALID_ARGUMENT,
                                 "vulkan: shapes do not broadcast: dimension %d is %lld vs %lld", i,
                                 (long long)da, (long long)db);
    r.dims[i] = da == 1 ? db : da;
  }
  *out = r;
  return SG_OK;
}

/* Strides of `s` (row-major) aligned to the output's dimensions, 0 where broadcast. */
void kn_vk_broadcast_strides(const kn_vk_shape *s, const kn_vk_shape *out, uint32_t *st) {
  uint32_t stride = 1;
  for (int i = out->ndim - 1; i >= 0; i--) {
    int is = i - (out->ndim - s->ndim);
    int64_t d = is >= 0 ? s->dims[is] : 1;
    st[i] = d == 1 ? 0 : stride;
    stride *= (uint32_t)d;
  }
}

sg_code kn_vk_binary(kn_vk_batch *bt, kn_vk_binop op, kn_vk_buffer *a, const kn_vk_shape *as,
                     kn_vk_buffer *b, const kn_vk_shape *bs, kn_vk_buffer *out, sg_error *err) {
  return kn_vk_binary_typed(bt, KN_VK_F32, op, a, as, b, bs, out, err);
}

sg_code kn_vk_binary_typed(kn_vk_batch *bt, kn_vk_elem et, kn_vk_binop op, kn_vk_buffer *a,
                           const kn_vk_shape *as, kn_vk_buffer *b, const kn_vk_shape *bs,
                           kn_vk_buffer *out, sg_error *err) {
  if ((unsigned)op >= KN_VK_NBINOPS)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: unknown binary op %d", (int)op);
  if (!kn_vk_binary_supported(et, op) || !kn_vk_elem_supported(kn_vk_batch_context(bt), et))
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: binary op %d has no kernel for element type %d",
                        (int)op, (int)et);
  sg_code code;
  kn_vk_shape os;
  if ((code = kn_vk_check_shape(as, "left operand", err)) ||
      (code = kn_vk_check_shape(bs, "right operand", err)) ||
      (code = kn_vk_broadcast_shape(as, bs, &os, err)) || (code = kn_vk_check_shape(&os, "result", err)))
    return code;
  int64_t n = kn_vk_shape_size(&os), na = kn_vk_shape_size(as), nb = kn_vk_shape_size(bs);
  if ((code = check_elems(a, et, na, "left operand", err)) ||
      (code = check_elems(b, et, nb, "right operand", err)) ||
      (code = check_elems(out, et, n, "result", err)))
    return code;
  binary_push pc = {.n = (uint32_t)n, .ndim = (uint32_t)os.ndim};
  for (int i = 0; i < os.ndim; i++)
    pc.shape[i] = (uint32_t)os.dims[i];
  kn_vk_broadcast_strides(as, &os, pc.sa);
  kn_vk_broadcast_strides(bs, &os, pc.sb);
  uint32_t flags = (na == n ? 1u : na == 1 ? 2u : 0u) | (nb == n ? 4u : nb == 1 ? 8u : 0u);
  uint32_t spec[3] = {kn_vk_wg_size(kn_vk_batch_context(bt), 256), (uint32_t)op, flags};
  kn_vk_binding binds[3] = {{a, false}, {b, false}, {out, true}};
  kn_vk_dispatch_desc d = {.kernel = elems[et].binary,
                           .bindings = binds,
                           .nbindings = 3,
                           .push = &pc,
                           .push_bytes = sizeof pc,
                           .spec = spec,
                           .nspec = 3,
                           .groups = {kn_vk_grid(elem_items(et, n), spec[0]), 1, 1}};
  return kn_vk_dispatch(bt, &d, err);
}

sg_code kn_vk_unary(kn_vk_batch *bt, kn_vk_unop op, kn_vk_buffer *a, kn_vk_buffer *out, int64_t n,
                    sg_error *err) {
  return kn_vk_unary_typed(bt, KN_VK_F32, op, a, out, n, err);
}

sg_code kn_vk_unary_typed(kn_vk_batch *bt, kn_vk_elem et, kn_vk_unop op, kn_vk_buffer *a,
                          kn_vk_buffer *out, int64_t n, sg_error *err) {
  if ((unsigned)op >= KN_VK_NUNOPS)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: unknown unary op %d", (int)op);
  if (!kn_vk_unary_supported(et, op) || !kn_vk_elem_supported(kn_vk_batch_context(bt), et))
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: unary op %d has no kernel for element type %d",
                        (int)op, (int)et);
  if (n < 0 || n > (int64_t)UINT32_MAX)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad element count %lld", (long long)n);
  sg_code code;
  if ((code = check_elems(a, et, n, "operand", err)) ||
      (code = check_elems(out, et, n, "result", err)))
    return code;
  uint32_t pc[1] = {(uint32_t)n};
  uint32_t spec[2] = {kn_vk_wg_size(kn_vk_batch_context(bt), 256), (uint32_t)op};
  kn_vk_binding binds[2] = {{a, false}, {out, true}};
  kn_vk_dispatch_desc d = {.kernel = elems[et].unary,
                           .bindings = binds,
                           .nbindings = 2,
                           .push = pc,
                           .push_bytes = sizeof pc,
                           .spec = spec,
                           .nspec = 2,
                           .groups = {kn_vk_grid(elem_items(et, n), spec[0]), 1, 1}};
  return kn_vk_dispatch(bt, &d, err);
}

bool kn_vk_env_flag(const char *name, atomic_int *cache) {
  int f = atomic_load(cache);
  if (f < 0) { /* racing first calls store the same value */
    const char *v = getenv(name);
    f = v && *v && strcmp(v, "0") != 0;
    atomic_store(cache, f);
  }
  return f;
}

/* [outer, len, inner] of s around axis (negative counts from the end). */
static sg_code axis_view(const kn_vk_shape *s, int axis, int64_t *outer, int64_t *len,
                         int64_t *inner, sg_error *err) {
  sg_code code = kn_vk_check_shape(s, "operand", err);
  if (code != SG_OK)
    return code;
  if (axis < 0)
    axis += s->ndim;
  if (axis < 0 || axis >= s->ndim)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "vulkan: reduction axis out of range for a %d-dimensional tensor", s->ndim);
  *outer = 1, *inner = 1, *len = s->dims[axis];
  for (int i = 0; i < axis; i++)
    *outer *= s->dims[i];
  for (int i = axis + 1; i < s->ndim; i++)
    *inner *= s->dims[i];
  return SG_OK;
}

sg_code kn_vk_reduce(kn_vk_batch *bt, kn_vk_reduce_op op, kn_vk_buffer *a, const kn_vk_shape *s,
                     int axis, kn_vk_buffer *out, sg_error *err) {
  return kn_vk_reduce_typed(bt, KN_VK_F32, op, a, s, axis, out, err);
}

/* Must match reduce.comp's push_constant block (the epilogue's fields with one). */
typedef struct reduce_push {
  uint32_t outer, len, inner;
  float scale;
  kn_vk_epi_push epi;
} reduce_push;

/* kn_vk_reduce_typed, with epilogue epi (float32) when not NULL */
static sg_code reduce_record(kn_vk_batch *bt, kn_vk_elem et, kn_vk_reduce_op op, kn_vk_buffer *a,
                             const kn_vk_shape *s, int axis, kn_vk_buffer *out, const kn_vk_epilogue *epi,
                             sg_error *err) {
  kn_vk_context *ctx = kn_vk_batch_context(bt);
  if ((unsigned)op > KN_VK_REDUCE_MEAN)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: unknown reduction %d", (int)op);
  if ((unsigned)et > KN_VK_F16 || et == KN_VK_BOOL || !kn_vk_elem_supported(ctx, et) ||
      (et == KN_VK_I32 && op == KN_VK_REDUCE_SUM && !ctx->int64_ops))
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: no reduction for element type %d", (int)et);
  if (op == KN_VK_REDUCE_MEAN && et != KN_VK_F32 && et != KN_VK_F16)
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: no mean kernel for element type %d",
                        (int)et);
  int64_t outer, len, inner;
  sg_code code = axis_view(s, axis, &outer, &len, &inner, err);
  if (code != SG_OK)
    return code;
  bool widen = et == KN_VK_I32 && op == KN_VK_REDUCE_SUM; /* int32 sums are int64 */
  if ((code = check_elems(a, et, outer * len * inner, "operand", err)) ||
      (code = widen ? kn_vk_check_buffer_of(out, outer * inner, 8, "result", err)
                    : check_elems(out, et, outer * inner, "result", err)))
    return code;
  /* mean: the float32 product the scaling dispatch of the float64 mean would compute */
  float scale = (float)(1.0 / (double)len);
  reduce_push pc = {.outer = (uint32_t)outer, .len = (uint32_t)len, .inner = (uint32_t)inner, .scale = scale};
  uint32_t spec[6 + KN_VK_EPI_STEPS] = {kn_vk_wg_size(ctx, 256), (uint32_t)op}, nspec = 2;
  if (len < 64 && inner > 1)
    spec[0] = kn_vk_wg_size(ctx, 32); /* short strided columns: fewer idle invocations */
  const char *kernel = widen ? "reduce_i32_sum" : elems[et].reduce;
  if (et == KN_VK_F32 && ctx->subgroup_ops)
    kernel = "reduce_subgroup";
  if (et == KN_VK_F16 && ctx->subgroup_ops)
    kernel = "reduce_subgroup_f16";
  kn_vk_binding binds[3 + KN_VK_EPI_INPUTS] = {{a, false}, {out, true}, {a, false}};
  int nbind = 2;
  char epi_name[KN_VK_EPI_NAME];
  if (epi) { /* the float32 kernels with an epilogue (binding 2 unused) */
    if (et != KN_VK_F32 || widen)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: a reduction's epilogue is float32 only");
    if ((code = kn_vk_epilogue_prepare(epi, "reduction", outer * inner, &pc.epi, spec, &nspec, binds, a, &kernel,
                                       epi_name, err)))
      return code;
    nbind = 3 + KN_VK_EPI_INPUTS;
  }
  kn_vk_dispatch_desc d = {.kernel = kernel,
                           .bindings = binds,
                           .nbindings = nbind,
                           .push = &pc,
                           .push_bytes = epi ? sizeof pc : offsetof(reduce_push, epi),
                           .spec = spec,
                           .nspec = (int)nspec,
                           .groups = {kn_vk_grid(outer * inner, 1), 1, 1}};
  return kn_vk_dispatch(bt, &d, err);
}

sg_code kn_vk_reduce_typed(kn_vk_batch *bt, kn_vk_elem et, kn_vk_reduce_op op, kn_vk_buffer *a,
                           const kn_vk_shape *s, int axis, kn_vk_buffer *out, sg_error *err) {
  return reduce_record(bt, et, op, a, s, axis, out, NULL, err);
}

sg_code kn_vk_reduce_epilogue(kn_vk_batch *bt, kn_vk_reduce_op op, kn_vk_buffer *a, const kn_vk_shape *s, int axis,
                              kn_vk_buffer *out, const kn_vk_epilogue *epi, sg_error *err) {
  if (!epi) return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: reduction epilogue missing");
  return reduce_record(bt, KN_VK_F32, op, a, s, axis, out, epi, err);
}

sg_code kn_vk_argmax(kn_vk_batch *bt, kn_vk_elem et, kn_vk_buffer *a, const kn_vk_shape *s,
                     int axis, kn_vk_buffer *out, sg_error *err) {
  kn_vk_context *ctx = kn_vk_batch_context(bt);
  if ((unsigned)et > KN_VK_F16 || et == KN_VK_BOOL || !kn_vk_elem_supported(ctx, et))
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: no argmax for element type %d", (int)et);
  int64_t outer, len, inner;
  sg_code code = axis_view(s, axis, &outer, &len, &inner, err);
  if (code != SG_OK)
    return code;
  if (len == 0 && outer * inner > 0)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: argmax of an empty axis");
  if ((code = check_elems(a, et, outer * len * inner, "operand", err)) ||
      (code = kn_vk_check_buffer_of(out, outer * inner, 8, "result", err)))
    return code;
  uint32_t pc[3] = {(uint32_t)outer, (uint32_t)len, (uint32_t)inner};
  uint32_t wg = kn_vk_wg_size(ctx, len < 64 ? 32 : 256);
  kn_vk_binding binds[2] = {{a, false}, {out, true}};
  kn_vk_dispatch_desc d = {.kernel = elems[et].argmax,
                           .bindings = binds,
                           .nbindings = 2,
                           .push = pc,
                           .push_bytes = sizeof pc,
                           .spec = &wg,
                           .nspec = 1,
                           .groups = {kn_vk_grid(outer * inner, 1), 1, 1}};
  return kn_vk_dispatch(bt, &d, err);
}

sg_code kn_vk_transpose(kn_vk_batch *bt, kn_vk_buffer *a, const kn_vk_shape *s, const int *perm,
                        size_t elem_bytes, kn_vk_buffer *out, sg_error *err) {
  sg_code code = kn_vk_check_shape(s, "operand", err);
  if (code != SG_OK)
    return code;
  bool seen[KN_VK_MAX_DIMS] = {0};
  for (int i = 0; i < s->ndim; i++) {
    if (perm[i] < 0 || perm[i] >= s->ndim || seen[perm[i]])
      return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: transpose: bad permutation");
    seen[perm[i]] = true;
  }
  /* a permuted view of the input copied into a contiguous output */
  int64_t in_stride[KN_VK_MAX_DIMS], st = 1;
  for (int i = s->ndim - 1; i >= 0; i--) {
    in_stride[i] = st;
    st *= s->dims[i];
  }
  kn_vk_shape os = {.ndim = s->ndim};
  int64_t istr[KN_VK_MAX_DIMS], ostr[KN_VK_MAX_DIMS];
  for (int i = 0; i < s->ndim; i++) {
    os.dims[i] = s->dims[perm[i]];
    istr[i] = in_stride[perm[i]];
  }
  st = 1;
  for (int i = s->ndim - 1; i >= 0; i--) {
    ostr[i] = st;
    st *= os.dims[i];
  }
  return kn_vk_copy_strided(bt, a, &os, 0, istr, out, 0, ostr, elem_bytes, err);
}

sg_code kn_vk_softmax(kn_vk_batch *bt, kn_vk_buffer *a, int64_t rows, int64_t cols,
                      kn_vk_buffer *out, sg_error *err) {
  return kn_vk_softmax_axis(bt, a, rows, cols, 1, false, out, err);
}

sg_code kn_vk_softmax_axis(kn_vk_batch *bt, kn_vk_buffer *a, int64_t outer, int64_t len,
                           int64_t inner, bool log_, kn_vk_buffer *out, sg_error *err) {
  return kn_vk_softmax_typed(bt, KN_VK_F32, a, outer, len, inner, log_, out, err);
}

sg_code kn_vk_softmax_typed(kn_vk_batch *bt, kn_vk_elem e, kn_vk_buffer *a, int64_t outer, int64_t len,
                            int64_t inner, bool log_, kn_vk_buffer *out, sg_error *err) {
  if (e != KN_VK_F32 && e != KN_VK_F64 && e != KN_VK_F16)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "vulkan: softmax takes float32, float64 or float16 elements");
  if (outer < 0 || len < 0 || inner < 0 || outer * len * inner > (int64_t)UINT32_MAX)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "vulkan: bad softmax shape [%lld, %lld, %lld]",
                        (long long)outer, (long long)len, (long long)inner);
  sg_code code;
  if ((code = check_elems(a, e, outer * len * inner, "operand", err)) ||
      (code = check_elems(out, e, outer * len * inner, "result", err)))
    return code;
  kn_vk_context *ctx = kn_vk_batch_context(bt);
  if (!kn_vk_elem_supported(ctx, e))
    return sg_error_set(err, SG_UNIMPLEMENTED, "vulkan: this device has no float64 shader arithmetic");
  uint32_t pc[3] = {(uint32_t)outer, (uint32_t)len, (uint32_t)inner};
  uint32_t spec[2] = {kn_vk_wg_size(ctx, len <= 64 ? 64 : 256), log_ ? 1u : 0u};
  kn_vk_binding binds[2] = {{a, false}, {out, true}};
  static const char *const names[3][2] = {{"softmax", "softmax_subgroup"},
                                          {"softmax_f64", "softmax_subgroup_f64"},
                                          {"softmax_f16", "softmax_subgroup_f16"}};
  int row = e == KN_VK_F64 ? 1 : e == KN_VK_F16 ? 2 : 0;
  kn_vk_dispatch_desc d = {.kernel = names[row][ctx->subgroup_ops],
                           .bindings = binds,
                           .nbindings = 2,
                           .push = pc,
                           .push_bytes = sizeof pc,
                           .spec = spec,
                           .nspec = 2,
                           .groups = {len == 0 ? 0 : kn_vk_grid(outer * inner, 1), 1, 1}};
  return kn_vk_dispatch(bt, &d, err);
}
