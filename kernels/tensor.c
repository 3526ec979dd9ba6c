// SPDX-License-Identifier: Apache-2.0
/*
 * tensor.c — kn_tensor lifecycle, dtypes (names, sizes, NumPy promotion, float16
 * conversion) and element access by index.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kn.h"

static const char *const dtype_names[KN_NDTYPES] = {"bool",    "int32",   "int64",
                                                    "float16", "float32", "float64"};
static const size_t dtype_sizes[KN_NDTYPES] = {1, 4, 8, 2, 4, 8};

const char *kn_dtype_name(kn_dtype dt) {
  return (unsigned)dt < KN_NDTYPES ? dtype_names[dt] : "?";
}

size_t kn_dtype_size(kn_dtype dt) { return dtype_sizes[dt]; }

bool kn_dtype_parse(const char *name, kn_dtype *out) {
  static const struct {
    const char *name;
    kn_dtype dt;
  } aliases[] = {{"bool", KN_BOOL},       {"int32", KN_INT32},   {"i32", KN_INT32},
                 {"int64", KN_INT64},     {"i64", KN_INT64},     {"int", KN_INT64},
                 {"float16", KN_FLOAT16}, {"f16", KN_FLOAT16},   {"half", KN_FLOAT16},
                 {"float32", KN_FLOAT32}, {"f32", KN_FLOAT32},   {"float64", KN_FLOAT64},
                 {"f64", KN_FLOAT64},     {"float", KN_FLOAT64}, {"double", KN_FLOAT64}};
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(name, aliases[i].name) == 0) {
      *out = aliases[i].dt;
      return true;
    }
  return false;
}

kn_dtype kn_promote(kn_dtype a, kn_dtype b) {
  if (a == b) return a;
  if (a == KN_BOOL) return b;
  if (b == KN_BOOL) return a;
  bool fa = kn_dtype_is_float(a), fb = kn_dtype_is_float(b);
  if (fa && fb) return a > b ? a : b;
  if (!fa && !fb) return a > b ? a : b;
  /* int32/int64 with any float: NumPy needs float64 to hold every integer */
  return KN_FLOAT64;
}

/* IEEE half <-> single, round to nearest even. */
uint16_t kn_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = (int32_t)((x >> 23) & 0xff);
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  int32_t e = exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;
  return (uint16_t)(sign | half);
}

float kn_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        e++;
        mant <<= 1;
      } while (!(mant & 0x400));
      x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000 | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

sg_code kn_check_shape(int ndim, const int64_t *shape, sg_error *err) {
  int64_t total = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "negative dimension %lld", (long long)shape[i]);
    if (shape[i] && total > KN_MAX_ELEMENTS / shape[i])
      return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "tensor of more than %lld elements (limit)",
                          (long long)KN_MAX_ELEMENTS);
    total *= shape[i];
  }
  return SG_OK;
}

int64_t kn_shape_copy(int64_t *dst, const int64_t *shape, int ndim) {
  int64_t size = 1;
  for (int i = 0; i < ndim; i++) {
    dst[i] = shape[i];
    size *= shape[i];
  }
  return size;
}

/* The calling thread's last tensor whose data could not be allocated (kn_alloc_error). */
static _Thread_local struct {
  size_t bytes;
  kn_dtype dtype;
  int ndim;
  int64_t shape[KN_MAX_DIMS];
} failed;

sg_code kn_alloc_error(sg_error *err) {
  sg_buf b = SG_BUF_INIT;
  kn_put_shape(&b, failed.ndim, failed.shape);
  sg_code c = sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                           "out of host memory allocating %zu bytes for a %s tensor of shape %s",
                           failed.bytes, kn_dtype_name(failed.dtype), b.data);
  sg_buf_free(&b);
  return c;
}

/* A tensor whose storage comes from the pool (pool.c), not yet filled; NULL when the
 * host has no memory for it (recorded for kn_alloc_error). */
static kn_tensor *tensor_alloc(kn_dtype dt, int ndim, const int64_t *shape, size_t *bytes) {
  int64_t size = 1;
  for (int i = 0; i < ndim; i++) size *= shape[i];
  *bytes = (size_t)size * dtype_sizes[dt];
  void *data = kn_pool_alloc(*bytes);
  if (!data) {
    failed.bytes = *bytes;
    failed.dtype = dt;
    kn_shape_copy(failed.shape, shape, ndim);
    failed.ndim = ndim;
    return NULL;
  }
  kn_tensor *t = sg_xmalloc(sizeof *t);
  atomic_init(&t->refcount, 1);
  t->dtype = dt;
  t->ndim = ndim;
  t->size = kn_shape_copy(t->shape, shape, ndim);
  for (int i = ndim; i < KN_MAX_DIMS; i++) t->shape[i] = 1;
  t->data = data;
  t->base = NULL;
  t->charge = sg_watch_charge(*bytes);
  return t;
}

kn_tensor *kn_tensor_new(kn_dtype dt, int ndim, const int64_t *shape) {
  size_t bytes;
  kn_tensor *t = tensor_alloc(dt, ndim, shape, &bytes);
  if (t) memset(t->data, 0, bytes);
  return t;
}

kn_tensor *kn_tensor_empty(kn_dtype dt, int ndim, const int64_t *shape) {
  size_t bytes;
  kn_tensor *t = tensor_alloc(dt, ndim, shape, &bytes);
  if (!t) return NULL;
#if defined(__SANITIZE_ADDRESS__)
  /* the test build: NaN / -1 in every element a kernel forgets to write, so the tests
   * that compare with NumPy see it */
  memset(t->data, 0xff, bytes);
#endif
  return t;
}

kn_tensor *kn_tensor_view(const kn_tensor *a, int ndim, const int64_t *shape) {
  kn_tensor *t = sg_xmalloc(sizeof *t);
  atomic_init(&t->refcount, 1);
  t->dtype = a->dtype;
  t->ndim = ndim;
  t->size = kn_shape_copy(t->shape, shape, ndim);
  for (int i = ndim; i < KN_MAX_DIMS; i++) t->shape[i] = 1;
  t->base = kn_tensor_retain(a->base ? a->base : (kn_tensor *)a); /* a reference, not a write */
  t->data = a->data;
  t->charge = 0;
  return t;
}

kn_tensor *kn_tensor_scalar_f64(kn_dtype dt, double v) {
  kn_tensor *t = kn_tensor_empty(dt, 0, NULL);
  kn_set_f64(t, 0, v);
  return t;
}

kn_tensor *kn_tensor_scalar_i64(kn_dtype dt, int64_t v) {
  kn_tensor *t = kn_tensor_empty(dt, 0, NULL);
  kn_set_i64(t, 0, v);
  return t;
}

void kn_tensor_release(kn_tensor *t) {
  if (!t) return;
  if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) == 1) {
    if (t->base) kn_tensor_release(t->base);
    else {
      size_t bytes = (size_t)t->size * dtype_sizes[t->dtype];
      sg_watch_refund(t->charge, bytes);
      kn_pool_free(t->data, bytes);
    }
    free(t);
  }
}

kn_tensor *kn_tensor_copy(const kn_tensor *t) {
  kn_tensor *c = kn_tensor_empty(t->dtype, t->ndim, t->shape);
  if (!c) return NULL;
  memcpy(c->data, t->data, (size_t)t->size * dtype_sizes[t->dtype]);
  return c;
}

bool kn_tensor_same_shape(const kn_tensor *a, const kn_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

double kn_get_f64(const kn_tensor *t, int64_t i) {
  switch (t->dtype) {
  case KN_BOOL: return ((const uint8_t *)t->data)[i] ? 1.0 : 0.0;
  case KN_INT32: return ((const int32_t *)t->data)[i];
  case KN_INT64: return (double)((const int64_t *)t->data)[i];
  case KN_FLOAT16: return kn_f16_to_f32(((const uint16_t *)t->data)[i]);
  case KN_FLOAT32: return ((const float *)t->data)[i];
  case KN_FLOAT64: return ((const double *)t->data)[i];
  default: return 0;
  }
}

/* float → int as NumPy's astype does for in-range values (truncation); NaN → 0 */
static int64_t f2i(double v) {
  if (isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)v;
}

int64_t kn_get_i64(const kn_tensor *t, int64_t i) {
  switch (t->dtype) {
  case KN_BOOL: return ((const uint8_t *)t->data)[i] ? 1 : 0;
  case KN_INT32: return ((const int32_t *)t->data)[i];
  case KN_INT64: return ((const int64_t *)t->data)[i];
  default: return f2i(kn_get_f64(t, i));
  }
}

void kn_set_f64(kn_tensor *t, int64_t i, double v) {
  switch (t->dtype) {
  case KN_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
  case KN_INT32: ((int32_t *)t->data)[i] = (int32_t)(uint32_t)(uint64_t)f2i(v); break;
  case KN_INT64: ((int64_t *)t->data)[i] = f2i(v); break;
  case KN_FLOAT16: ((uint16_t *)t->data)[i] = kn_f32_to_f16((float)v); break;
  case KN_FLOAT32: ((float *)t->data)[i] = (float)v; break;
  case KN_FLOAT64: ((double *)t->data)[i] = v; break;
  default: break;
  }
}

void kn_set_i64(kn_tensor *t, int64_t i, int64_t v) {
  switch (t->dtype) {
  case KN_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
  case KN_INT32: ((int32_t *)t->data)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
  case KN_INT64: ((int64_t *)t->data)[i] = v; break;
  default: kn_set_f64(t, i, (double)v); break;
  }
}

void kn_put_shape(sg_buf *b, int ndim, const int64_t *shape) {
  sg_buf_putc(b, '(');
  for (int i = 0; i < ndim; i++) {
    if (i) sg_buf_putc(b, ',');
    if (shape[i] < 0) sg_buf_putc(b, '?');
    else sg_buf_printf(b, "%lld", (long long)shape[i]);
  }
  sg_buf_putc(b, ')');
}

kn_tensor *kn_cast(const kn_tensor *a, kn_dtype dt) {
  kn_tensor *o = kn_tensor_empty(dt, a->ndim, a->shape);
  if (!o) return NULL;
  if (a->dtype == dt) {
    memcpy(o->data, a->data, (size_t)a->size * dtype_sizes[dt]);
  } else if (kn_dtype_is_float(a->dtype)) {
    for (int64_t i = 0; i < a->size; i++) kn_set_f64(o, i, kn_get_f64(a, i));
  } else {
    for (int64_t i = 0; i < a->size; i++) kn_set_i64(o, i, kn_get_i64(a, i));
  }
  return o;
}
