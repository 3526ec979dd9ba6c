// SPDX-License-Identifier: Apache-2.0
/*
 * cpu_shape.c — kernels that move data without arithmetic: transpose, reshape,
 * concat, stack, slice (a view when contiguous), slice_update, gather (np.take),
 * one_hot, indexing, and the constructors
 * fill / arange / random.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kn.h"

static sg_code norm_axis(int ndim, int *axis, const char *what, sg_error *err) {
  int a = *axis;
  if (a < -ndim || a >= ndim) return kn_err_axis(err, what, a, ndim);
  *axis = a < 0 ? a + ndim : a;
  return SG_OK;
}

/* A 2-D transpose (x.T in every matmul gradient) in 16x16 tiles, writing each output
 * row's piece contiguously: with power-of-two row lengths, strided stores of wider tiles
 * all fall in one cache set (32x32 tiles writing along columns took 6x longer for a
 * 2048x2048 float32). The general path below copies element by element. */
#define TRANSPOSE_TILE(T)                                                                   \
  do {                                                                                      \
    const T *s_ = src;                                                                      \
    T *d_ = dst;                                                                            \
    for (int64_t j = j0; j < j1; j++)                                                       \
      for (int64_t i = i0; i < i1; i++) d_[j * rows + i] = s_[i * cols + j];                \
  } while (0)

static void transpose_2d(const void *src, void *dst, int64_t rows, int64_t cols, size_t es) {
  enum { TILE = 16 };
  for (int64_t i0 = 0; i0 < rows; i0 += TILE)
    for (int64_t j0 = 0; j0 < cols; j0 += TILE) {
      int64_t i1 = i0 + TILE < rows ? i0 + TILE : rows, j1 = j0 + TILE < cols ? j0 + TILE : cols;
      if (es == 1) TRANSPOSE_TILE(uint8_t);
      else if (es == 2) TRANSPOSE_TILE(uint16_t);
      else if (es == 4) TRANSPOSE_TILE(uint32_t);
      else TRANSPOSE_TILE(uint64_t);
    }
}

sg_code kn_transpose(const kn_tensor *a, const int *perm, int nperm, kn_tensor **out,
                     sg_error *err) {
  int n = a->ndim, p[KN_MAX_DIMS];
  if (perm) {
    if (nperm != n)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "transpose: axes don't match array (%d vs %d)",
                          nperm, n);
    bool seen[KN_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
      int ax = perm[i];
      if (norm_axis(n, &ax, "transpose", err)) return err->code;
      if (seen[ax]) return sg_error_set(err, SG_INVALID_ARGUMENT, "transpose: repeated axis");
      seen[ax] = true;
      p[i] = ax;
    }
  } else {
    for (int i = 0; i < n; i++) p[i] = n - 1 - i;
  }
  int64_t oshape[KN_MAX_DIMS] = {0}, astr[KN_MAX_DIMS], s = 1;
  for (int i = n - 1; i >= 0; i--) {
    astr[i] = s;
    s *= a->shape[i];
  }
  for (int i = 0; i < n; i++) oshape[i] = a->shape[p[i]];
  kn_tensor *o = kn_tensor_new(a->dtype, n, oshape);
  if (!o) return kn_alloc_error(err);
  size_t es = kn_dtype_size(a->dtype);
  *out = o;
  if (n == 2 && p[0] == 1) {
    transpose_2d(a->data, o->data, a->shape[0], a->shape[1], es);
    return SG_OK;
  }
  int64_t idx[KN_MAX_DIMS] = {0}, src = 0;
  for (int64_t k = 0; k < o->size; k++) {
    memcpy((char *)o->data + k * es, (const char *)a->data + src * es, es);
    for (int d = n - 1; d >= 0; d--) {
      src += astr[p[d]];
      if (++idx[d] < oshape[d]) break;
      src -= astr[p[d]] * oshape[d];
      idx[d] = 0;
    }
  }
  *out = o;
  return SG_OK;
}

sg_code kn_reshape(const kn_tensor *a, int ndim, const int64_t *shape, kn_tensor **out,
                   sg_error *err) {
  if (ndim > KN_MAX_DIMS) return sg_error_set(err, SG_INVALID_ARGUMENT, "reshape: too many dims");
  int64_t s[KN_MAX_DIMS], prod = 1;
  int unknown = -1;
  for (int i = 0; i < ndim; i++) {
    s[i] = shape[i];
    if (s[i] == -1) {
      if (unknown >= 0)
        return sg_error_set(err, SG_INVALID_ARGUMENT, "reshape: can only specify one unknown dimension");
      unknown = i;
    } else if (s[i] < 0) {
      return sg_error_set(err, SG_INVALID_ARGUMENT, "reshape: negative dimension %lld",
                          (long long)s[i]);
    } else if (s[i] && prod > KN_MAX_ELEMENTS / s[i]) {
      return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "reshape: more than %lld elements (limit)",
                          (long long)KN_MAX_ELEMENTS);
    } else {
      prod *= s[i];
    }
  }
  if (unknown >= 0) {
    if (prod == 0 || a->size % prod != 0)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "reshape: cannot reshape array of size %lld",
                          (long long)a->size);
    s[unknown] = a->size / prod;
    prod = a->size;
  }
  if (prod != a->size)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "reshape: cannot reshape array of size %lld into %lld elements",
                        (long long)a->size, (long long)prod);
  *out = kn_tensor_view(a, ndim, s); /* row-major data reads the same under the new shape */
  return SG_OK;
}

sg_code kn_concat(kn_tensor *const *ts, int n, int axis, kn_tensor **out, sg_error *err) {
  if (n == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "concat: need at least one tensor");
  int nd = ts[0]->ndim;
  if (nd == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "concat: zero-dimensional tensors cannot be concatenated");
  if (norm_axis(nd, &axis, "concat", err)) return err->code;
  kn_dtype dt = ts[0]->dtype;
  int64_t shape[KN_MAX_DIMS];
  memcpy(shape, ts[0]->shape, sizeof shape);
  shape[axis] = 0;
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim != nd)
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "concat: all inputs must have the same number of dimensions");
    for (int d = 0; d < nd; d++)
      if (d != axis && ts[i]->shape[d] != ts[0]->shape[d])
        return sg_error_set(err, SG_INVALID_ARGUMENT,
                            "concat: input %d has size %lld on axis %d, expected %lld", i,
                            (long long)ts[i]->shape[d], d, (long long)ts[0]->shape[d]);
    shape[axis] += ts[i]->shape[axis];
    dt = kn_promote(dt, ts[i]->dtype);
  }
  kn_tensor *o = kn_tensor_new(dt, nd, shape);
  if (!o) return kn_alloc_error(err);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= shape[d];
  for (int d = axis + 1; d < nd; d++) inner *= shape[d];
  size_t es = kn_dtype_size(dt);
  int64_t off = 0;
  for (int i = 0; i < n; i++) {
    kn_tensor *t = ts[i]->dtype == dt ? ts[i] : kn_cast(ts[i], dt);
    if (!t) {
      kn_tensor_release(o);
      return kn_alloc_error(err);
    }
    int64_t chunk = t->shape[axis] * inner;
    for (int64_t po = 0; po < outer; po++)
      memcpy((char *)o->data + (po * shape[axis] * inner + off) * es,
             (char *)t->data + po * chunk * es, (size_t)chunk * es);
    off += chunk;
    if (t != ts[i]) kn_tensor_release(t);
  }
  *out = o;
  return SG_OK;
}

sg_code kn_stack(kn_tensor *const *ts, int n, int axis, kn_tensor **out, sg_error *err) {
  if (n == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "stack: need at least one tensor");
  int nd = ts[0]->ndim;
  if (nd + 1 > KN_MAX_DIMS) return sg_error_set(err, SG_INVALID_ARGUMENT, "stack: too many dims");
  if (norm_axis(nd + 1, &axis, "stack", err)) return err->code;
  for (int i = 1; i < n; i++)
    if (!kn_tensor_same_shape(ts[i], ts[0]))
      return sg_error_set(err, SG_INVALID_ARGUMENT, "stack: all input arrays must have the same shape");
  kn_tensor *parts[64];
  kn_tensor **pp = n <= 64 ? parts : sg_xmalloc(sizeof(kn_tensor *) * (size_t)n);
  int64_t sh[KN_MAX_DIMS];
  for (int d = 0, j = 0; d <= nd; d++) sh[d] = d == axis ? 1 : ts[0]->shape[j++];
  sg_code rc = SG_OK;
  for (int i = 0; i < n; i++) kn_reshape(ts[i], nd + 1, sh, &pp[i], NULL);
  rc = kn_concat(pp, n, axis, out, err);
  for (int i = 0; i < n; i++) kn_tensor_release(pp[i]);
  if (pp != parts) free(pp);
  return rc;
}

int64_t kn_slice_adjust(int64_t len, int64_t *start, bool has_start, int64_t *stop,
                        bool has_stop, int64_t step) {
  /* Python's PySlice_AdjustIndices */
  int64_t b = *start, e = *stop;
  if (!has_start) b = step < 0 ? len - 1 : 0;
  else if (b < 0) {
    b += len;
    if (b < 0) b = step < 0 ? -1 : 0;
  } else if (b >= len) b = step < 0 ? len - 1 : len;
  if (!has_stop) e = step < 0 ? -1 : len;
  else if (e < 0) {
    e += len;
    if (e < 0) e = step < 0 ? -1 : 0;
  } else if (e >= len) e = step < 0 ? len - 1 : len;
  *start = b;
  *stop = e;
  if (step < 0) return e < b ? (b - e - 1) / (-step) + 1 : 0;
  return b < e ? (e - b - 1) / step + 1 : 0;
}

sg_code kn_slice(const kn_tensor *a, int axis, int64_t start, int64_t stop, int64_t step,
                 bool has_start, bool has_stop, kn_tensor **out, sg_error *err) {
  if (a->ndim == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "slice: cannot slice a 0-d tensor");
  if (norm_axis(a->ndim, &axis, "slice", err)) return err->code;
  if (step == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "slice: step cannot be zero");
  int64_t len = a->shape[axis];
  int64_t cnt = kn_slice_adjust(len, &start, has_start, &stop, has_stop, step);
  int64_t shape[KN_MAX_DIMS];
  memcpy(shape, a->shape, sizeof shape);
  shape[axis] = cnt;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= a->shape[d];
  for (int d = axis + 1; d < a->ndim; d++) inner *= a->shape[d];
  size_t es = kn_dtype_size(a->dtype);
  if (outer == 1 && (step == 1 || cnt <= 1)) { /* one contiguous run: a view, no copy */
    kn_tensor *v = kn_tensor_view(a, a->ndim, shape);
    if (cnt) v->data = (char *)a->data + (size_t)(start * inner) * es;
    *out = v;
    return SG_OK;
  }
  kn_tensor *o = kn_tensor_new(a->dtype, a->ndim, shape);
  if (!o) return kn_alloc_error(err);
  for (int64_t po = 0; po < outer; po++)
    for (int64_t j = 0; j < cnt; j++)
      memcpy((char *)o->data + ((po * cnt + j) * inner) * es,
             (const char *)a->data + ((po * len + start + j * step) * inner) * es,
             (size_t)inner * es);
  *out = o;
  return SG_OK;
}

/* The strides (in elements) that read v broadcast to shape (ndim dims, v's aligned
 * to the right); false when v does not broadcast to it. */
static bool broadcast_strides(const kn_tensor *v, int ndim, const int64_t *shape, int64_t *stride) {
  if (v->ndim > ndim) return false;
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    int vd = d - (ndim - v->ndim);
    int64_t len = vd >= 0 ? v->shape[vd] : 1;
    if (len != 1 && len != shape[d]) return false;
    stride[d] = len == 1 ? 0 : s;
    s *= len;
  }
  return true;
}

sg_code kn_slice_update(const kn_tensor *x, const kn_tensor *v, int axis, int64_t start,
                        int64_t stop, int64_t step, bool has_start, bool has_stop,
                        kn_tensor **out, sg_error *err) {
  if (x->ndim == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "slice_update: cannot slice a 0-d tensor");
  if (norm_axis(x->ndim, &axis, "slice_update", err)) return err->code;
  if (step == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "slice_update: step cannot be zero");
  int64_t cnt = kn_slice_adjust(x->shape[axis], &start, has_start, &stop, has_stop, step);
  int64_t shape[KN_MAX_DIMS], vstride[KN_MAX_DIMS], xstride[KN_MAX_DIMS], s = 1;
  memcpy(shape, x->shape, sizeof shape);
  shape[axis] = cnt;
  if (!broadcast_strides(v, x->ndim, shape, vstride)) return kn_slice_misfit(err, v->ndim, v->shape, x->ndim, shape);
  for (int d = x->ndim - 1; d >= 0; d--) xstride[d] = s, s *= x->shape[d];
  kn_tensor *vc = v->dtype == x->dtype ? kn_tensor_retain((kn_tensor *)v) : kn_cast(v, x->dtype);
  kn_tensor *o = vc ? kn_tensor_copy(x) : NULL;
  if (!o) {
    if (vc) kn_tensor_release(vc);
    return kn_alloc_error(err);
  }
  size_t es = kn_dtype_size(x->dtype);
  int64_t total = 1, idx[KN_MAX_DIMS] = {0};
  for (int d = 0; d < x->ndim; d++) total *= shape[d];
  for (int64_t i = 0; i < total; i++) { /* odometer over the slice's coordinates */
    int64_t xo = 0, vo = 0;
    for (int d = 0; d < x->ndim; d++) {
      xo += (d == axis ? start + idx[d] * step : idx[d]) * xstride[d];
      vo += idx[d] * vstride[d];
    }
    memcpy((char *)o->data + (size_t)xo * es, (const char *)vc->data + (size_t)vo * es, es);
    for (int d = x->ndim - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
  }
  kn_tensor_release(vc);
  *out = o;
  return SG_OK;
}

sg_code kn_gather(const kn_tensor *a, const kn_tensor *idx, int axis, kn_tensor **out,
                  sg_error *err) {
  if (kn_dtype_is_float(idx->dtype))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "gather: indices must be integers, got %s",
                        kn_dtype_name(idx->dtype));
  if (a->ndim == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "gather: cannot index a 0-d tensor");
  if (norm_axis(a->ndim, &axis, "gather", err)) return err->code;
  int nd = a->ndim - 1 + idx->ndim;
  if (nd > KN_MAX_DIMS) return sg_error_set(err, SG_INVALID_ARGUMENT, "gather: too many dims");
  int64_t shape[KN_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < axis; d++) shape[k++] = a->shape[d];
  for (int d = 0; d < idx->ndim; d++) shape[k++] = idx->shape[d];
  for (int d = axis + 1; d < a->ndim; d++) shape[k++] = a->shape[d];
  int64_t outer = 1, inner = 1, len = a->shape[axis];
  for (int d = 0; d < axis; d++) outer *= a->shape[d];
  for (int d = axis + 1; d < a->ndim; d++) inner *= a->shape[d];
  for (int64_t j = 0; j < idx->size; j++) {
    int64_t i = kn_get_i64(idx, j);
    if (i < -len || i >= len) return kn_err_index(err, "gather", i, axis, len);
  }
  if (kn_check_shape(nd, shape, err)) return err->code;
  kn_tensor *o = kn_tensor_new(a->dtype, nd, shape);
  if (!o) return kn_alloc_error(err);
  size_t es = kn_dtype_size(a->dtype);
  for (int64_t po = 0; po < outer; po++)
    for (int64_t j = 0; j < idx->size; j++) {
      int64_t i = kn_get_i64(idx, j);
      if (i < 0) i += len;
      memcpy((char *)o->data + ((po * idx->size + j) * inner) * es,
             (const char *)a->data + ((po * len + i) * inner) * es, (size_t)inner * es);
    }
  *out = o;
  return SG_OK;
}

sg_code kn_one_hot(const kn_tensor *idx, int64_t depth, kn_tensor **out, sg_error *err) {
  if (kn_dtype_is_float(idx->dtype))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "one_hot: indices must be integers");
  if (depth < 0 || idx->ndim + 1 > KN_MAX_DIMS)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "one_hot: bad depth %lld", (long long)depth);
  int64_t shape[KN_MAX_DIMS];
  memcpy(shape, idx->shape, sizeof(int64_t) * (size_t)idx->ndim);
  shape[idx->ndim] = depth;
  for (int64_t j = 0; j < idx->size; j++) {
    int64_t i = kn_get_i64(idx, j);
    if (i < -depth || i >= depth)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "one_hot: index %lld out of range for depth %lld",
                          (long long)i, (long long)depth);
  }
  if (kn_check_shape(idx->ndim + 1, shape, err)) return err->code;
  kn_tensor *o = kn_tensor_new(KN_FLOAT32, idx->ndim + 1, shape);
  if (!o) return kn_alloc_error(err);
  for (int64_t j = 0; j < idx->size; j++) {
    int64_t i = kn_get_i64(idx, j);
    if (i < 0) i += depth;
    ((float *)o->data)[j * depth + i] = 1.0f;
  }
  *out = o;
  return SG_OK;
}

sg_code kn_index(const kn_tensor *a, int64_t i, kn_tensor **out, sg_error *err) {
  if (a->ndim == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "getitem: cannot index a 0-d tensor");
  int64_t len = a->shape[0];
  if (i < -len || i >= len) return kn_err_index(err, "getitem", i, 0, len);
  if (i < 0) i += len;
  kn_tensor *o = kn_tensor_new(a->dtype, a->ndim - 1, a->shape + 1);
  if (!o) return kn_alloc_error(err);
  size_t es = kn_dtype_size(a->dtype);
  memcpy(o->data, (const char *)a->data + i * o->size * es, (size_t)o->size * es);
  *out = o;
  return SG_OK;
}

/* The first element is converted once; its bytes are then doubled with memcpy (a
 * buffer already zeroed stays as it is for +0). */
kn_tensor *kn_fill(kn_dtype dt, int ndim, const int64_t *shape, double v) {
  kn_tensor *o = kn_tensor_new(dt, ndim, shape);
  if (!o || (v == 0 && !signbit(v)) || o->size == 0) return o;
  kn_set_f64(o, 0, v);
  size_t total = (size_t)o->size * kn_dtype_size(dt), done = kn_dtype_size(dt);
  char *d = o->data;
  while (done < total) {
    size_t n = done < total - done ? done : total - done;
    memcpy(d + done, d, n);
    done += n;
  }
  return o;
}

sg_code kn_arange(double start, double stop, double step, kn_dtype dt, kn_tensor **out,
                  sg_error *err) {
  if (step == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "arange: step cannot be zero");
  double c = ceil((stop - start) / step);
  int64_t n = c > 0 ? (int64_t)c : 0;
  if (n > KN_MAX_ELEMENTS) return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "arange: too many elements");
  kn_tensor *o = kn_tensor_new(dt, 1, &n);
  if (!o) return kn_alloc_error(err);
  for (int64_t i = 0; i < n; i++) {
    if (kn_dtype_is_float(dt)) kn_set_f64(o, i, start + (double)i * step);
    else kn_set_i64(o, i, (int64_t)start + i * (int64_t)step);
  }
  *out = o;
  return SG_OK;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static double unif(uint64_t *s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

kn_tensor *kn_random(bool normal, uint64_t seed, kn_dtype dt, int ndim, const int64_t *shape) {
  kn_tensor *o = kn_tensor_new(dt, ndim, shape);
  if (!o) return NULL;
  uint64_t s = seed;
  for (int64_t i = 0; i < o->size; i++) {
    double v;
    if (normal) {
      double u1 = unif(&s), u2 = unif(&s);
      v = sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
    } else {
      v = unif(&s);
    }
    kn_set_f64(o, i, v);
  }
  return o;
}
