// SPDX-License-Identifier: Apache-2.0
/*
 * cpu_elementwise.c — NumPy-style elementwise kernels on the CPU: binary ops with
 * broadcasting and dtype promotion, unary math, where.
 *
 * Every element is computed in one of two domains: double (any float input or a float
 * result) or int64 (integers and bools), then stored in the result dtype. For + - * /
 * on float32 this rounds exactly as float32 arithmetic does (double has more than
 * 2p+2 bits); transcendental functions may differ from NumPy in the last ulp.
 */
#include <math.h>
#include <string.h>

#include "kn_cpu.h"

bool kn_broadcast_shape(int an, const int64_t *as, int bn, const int64_t *bs, int *out_ndim,
                        int64_t *out) {
  int n = an > bn ? an : bn;
  for (int i = 0; i < n; i++) {
    int64_t da = i < n - an ? 1 : as[i - (n - an)];
    int64_t db = i < n - bn ? 1 : bs[i - (n - bn)];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return false;
  }
  *out_ndim = n;
  return true;
}

static bool is_cmp(kn_binop op) { return op >= KN_EQ && op <= KN_GE; }

kn_dtype kn_binop_result(kn_binop op, kn_dtype a, kn_dtype b) {
  if (is_cmp(op) || op == KN_AND || op == KN_OR) return KN_BOOL;
  kn_dtype p = kn_promote(a, b);
  if (op == KN_DIV && !kn_dtype_is_float(p)) return KN_FLOAT64;
  if ((op == KN_FLOORDIV || op == KN_MOD || op == KN_POW || op == KN_SUB) && p == KN_BOOL)
    return KN_INT64;
  return p;
}

kn_dtype kn_unop_result(kn_unop op, kn_dtype a) {
  switch (op) {
  case KN_NEG:
  case KN_ABS:
  case KN_RELU: return a == KN_BOOL && op == KN_NEG ? KN_INT64 : a;
  case KN_NOT: return KN_BOOL;
  default:
    if (kn_dtype_is_float(a)) return a;
    return a == KN_BOOL ? KN_FLOAT16 : KN_FLOAT64;
  }
}

static double py_fmod(double a, double b) {
  double m = fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  else if (m == 0) m = copysign(0.0, b);
  return m;
}

static double py_floordiv(double a, double b) {
  if (b == 0) return a / b;
  double m = fmod(a, b);
  double div = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) div -= 1.0;
  if (div == 0) return copysign(0.0, a / b);
  double fl = floor(div);
  if (div - fl > 0.5) fl += 1.0;
  return fl;
}

double kn_binop_f64(kn_binop op, double a, double b) {
  switch (op) {
  case KN_ADD: return a + b;
  case KN_SUB: return a - b;
  case KN_MUL: return a * b;
  case KN_DIV: return a / b;
  case KN_FLOORDIV: return py_floordiv(a, b);
  case KN_MOD: return b == 0 ? NAN : py_fmod(a, b);
  case KN_POW: return pow(a, b);
  case KN_EQ: return a == b;
  case KN_NE: return a != b;
  case KN_LT: return a < b;
  case KN_LE: return a <= b;
  case KN_GT: return a > b;
  case KN_GE: return a >= b;
  case KN_AND: return a != 0 && b != 0;
  case KN_OR: return a != 0 || b != 0;
  case KN_MAXIMUM: return isnan(a) || isnan(b) ? NAN : (a > b ? a : b);
  case KN_MINIMUM: return isnan(a) || isnan(b) ? NAN : (a < b ? a : b);
  default: return 0;
  }
}

static int64_t ipow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? (b & 1 ? -1 : 1) : 0);
  uint64_t r = 1, x = (uint64_t)a;
  while (b) {
    if (b & 1) r *= x;
    x *= x;
    b >>= 1;
  }
  return (int64_t)r;
}

int64_t kn_binop_i64(kn_binop op, int64_t a, int64_t b) {
  switch (op) {
  case KN_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
  case KN_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
  case KN_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
  case KN_FLOORDIV: {
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
  }
  case KN_MOD: {
    if (b == 0 || b == -1) return 0;
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
  }
  case KN_POW: return ipow(a, b);
  case KN_EQ: return a == b;
  case KN_NE: return a != b;
  case KN_LT: return a < b;
  case KN_LE: return a <= b;
  case KN_GT: return a > b;
  case KN_GE: return a >= b;
  case KN_AND: return a != 0 && b != 0;
  case KN_OR: return a != 0 || b != 0;
  case KN_MAXIMUM: return a > b ? a : b;
  case KN_MINIMUM: return a < b ? a : b;
  default: return 0;
  }
}

double kn_unop_f64(kn_unop op, double a) {
  switch (op) {
  case KN_NEG: return -a;
  case KN_ABS: return fabs(a);
  case KN_EXP: return exp(a);
  case KN_LOG: return log(a);
  case KN_SQRT: return sqrt(a);
  case KN_TANH: return tanh(a);
  case KN_SIGMOID: return 1.0 / (1.0 + exp(-a));
  case KN_RELU: return a >= 0 || isnan(a) ? a : 0.0; /* np.maximum(a, 0): -inf → 0 */
  case KN_SIN: return sin(a);
  case KN_COS: return cos(a);
  case KN_NOT: return a == 0;
  default: return 0;
  }
}

/* Strides (in elements) of t broadcast to an n-d output shape: 0 on broadcast dims. */
static void bcast_strides(const kn_tensor *t, int n, int64_t *st) {
  int64_t s = 1;
  for (int i = n - 1; i >= 0; i--) {
    int ti = i - (n - t->ndim);
    if (ti < 0 || t->shape[ti] == 1) st[i] = 0;
    else st[i] = s;
    if (ti >= 0) s *= t->shape[ti];
  }
}

/* A position in a broadcast loop: the output's multi-index and, per operand (up to 3),
 * the element offset its broadcast strides give. Loops seek to their first output
 * element, take a run along the innermost dimension (or one element), and advance. */
typedef struct bcast_cursor {
  int n, nops;
  const int64_t *shape;
  const int64_t *st[3];
  int64_t idx[KN_MAX_DIMS], off[3];
} bcast_cursor;

static void cursor_seek(bcast_cursor *c, int64_t k) {
  for (int o = 0; o < c->nops; o++) c->off[o] = 0;
  for (int d = c->n - 1; d >= 0; d--) {
    c->idx[d] = k % c->shape[d];
    k /= c->shape[d];
    for (int o = 0; o < c->nops; o++) c->off[o] += c->idx[d] * c->st[o][d];
  }
}

/* the elements left in the current innermost run, at most `left` */
static int64_t cursor_run(const bcast_cursor *c, int64_t left) {
  int64_t len = c->shape[c->n - 1] - c->idx[c->n - 1];
  return len < left ? len : left;
}

/* advances by len elements along the innermost dimension (len ≤ its run), then carries */
static void cursor_advance(bcast_cursor *c, int64_t len) {
  for (int d = c->n - 1; d >= 0; d--) {
    int64_t step = d == c->n - 1 ? len : 1;
    for (int o = 0; o < c->nops; o++) c->off[o] += step * c->st[o][d];
    if ((c->idx[d] += step) < c->shape[d]) return;
    for (int o = 0; o < c->nops; o++) c->off[o] -= c->st[o][d] * c->shape[d];
    c->idx[d] = 0;
  }
}

typedef struct bin_job {
  kn_binop op;
  const kn_tensor *a, *b;
  kn_tensor *o;
  int n;
  const int64_t *shape;
  int64_t sa[KN_MAX_DIMS], sb[KN_MAX_DIMS];
  bool fdom;
} bin_job;

/* Built per instruction set like cpu_vmath.c: + - * / sqrt abs neg are exact in
 * every vector width, so each clone gives the same bits. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define EW_CLONES
#endif

EW_CLONES static void f32_range(void *p, int64_t k0, int64_t k1) {
  bin_job *j = p;
  const float *x = j->a->data, *y = j->b->data;
  float *z = j->o->data;
  switch (j->op) {
  case KN_ADD: for (int64_t i = k0; i < k1; i++) z[i] = x[i] + y[i]; break;
  case KN_SUB: for (int64_t i = k0; i < k1; i++) z[i] = x[i] - y[i]; break;
  case KN_MUL: for (int64_t i = k0; i < k1; i++) z[i] = x[i] * y[i]; break;
  default: for (int64_t i = k0; i < k1; i++) z[i] = x[i] / y[i]; break;
  }
}

/* Float32 same-shape fast path for the common arithmetic ops. */
static bool fast_f32(kn_binop op, const kn_tensor *a, const kn_tensor *b, kn_tensor *o) {
  if (a->dtype != KN_FLOAT32 || b->dtype != KN_FLOAT32 || o->dtype != KN_FLOAT32 ||
      a->size != o->size || b->size != o->size || op > KN_DIV)
    return false;
  bin_job j = {.op = op, .a = a, .b = b, .o = o};
  kn_parallel_for(o->size, f32_range, &j);
  return true;
}

/* One run along the innermost dimension for float32 + - * / (float32 in and out):
 * z[i] = x[i*sx] OP y[i*sy] with strides 0 (a broadcast operand) or 1. Float32
 * arithmetic gives the same bits as the generic path's double arithmetic rounded to
 * float32 (a double holds the exact sum/product of two floats closely enough that one
 * rounding to float32 is correct). */
#define F32_RUN(EXPR)                                                                        \
  do {                                                                                       \
    if (sx && sy) for (int64_t i = 0; i < len; i++) { float a_ = x[i], b_ = y[i]; z[i] = EXPR; } \
    else if (sx) for (int64_t i = 0; i < len; i++) { float a_ = x[i], b_ = y[0]; z[i] = EXPR; } \
    else if (sy) for (int64_t i = 0; i < len; i++) { float a_ = x[0], b_ = y[i]; z[i] = EXPR; } \
    else for (int64_t i = 0; i < len; i++) { float a_ = x[0], b_ = y[0]; z[i] = EXPR; }      \
  } while (0)

EW_CLONES static void f32_run(kn_binop op, const float *x, int64_t sx, const float *y, int64_t sy, float *z,
                    int64_t len) {
  switch (op) {
  case KN_ADD: F32_RUN(a_ + b_); break;
  case KN_SUB: F32_RUN(a_ - b_); break;
  case KN_MUL: F32_RUN(a_ * b_); break;
  default: F32_RUN(a_ / b_); break;
  }
}

bool kn_binary_f32_exact(kn_binop op) { return op <= KN_DIV || op == KN_MAXIMUM || op == KN_MINIMUM; }

void kn_binary_f32(kn_binop op, const float *x, int64_t sx, const float *y, int64_t sy, float *z,
                   int64_t len) {
  if (op <= KN_DIV) {
    f32_run(op, x, sx, y, sy, z, len);
    return;
  }
  /* maximum / minimum: bin_range's double domain, rounded to float32 (exact here) */
  for (int64_t i = 0; i < len; i++) z[i] = (float)kn_binop_f64(op, x[i * sx], y[i * sy]);
}

/* The general broadcasting loop over output elements [k0, k1). float32 + - * / take
 * whole runs of the innermost dimension (f32_run); the rest goes element by element
 * through the generic accessors. */
static void bin_range(void *p, int64_t k0, int64_t k1) {
  bin_job *j = p;
  int n = j->n;
  bcast_cursor cu = {.n = n, .nops = 2, .shape = j->shape, .st = {j->sa, j->sb}};
  cursor_seek(&cu, k0);
  kn_dtype rt = j->o->dtype;
  bool runs = n > 0 && j->a->dtype == KN_FLOAT32 && j->b->dtype == KN_FLOAT32 && rt == KN_FLOAT32 &&
              j->op <= KN_DIV;
  for (int64_t k = k0; k < k1;) {
    int64_t len = 1, ia = cu.off[0], ib = cu.off[1];
    if (runs) {
      len = cursor_run(&cu, k1 - k);
      f32_run(j->op, (const float *)j->a->data + ia, j->sa[n - 1], (const float *)j->b->data + ib,
              j->sb[n - 1], (float *)j->o->data + k, len);
    } else if (j->fdom) {
      double x = kn_get_f64(j->a, ia), y = kn_get_f64(j->b, ib);
      double r = kn_binop_f64(j->op, x, y);
      if (rt == KN_FLOAT32 && j->op == KN_POW) r = powf((float)x, (float)y);
      kn_set_f64(j->o, k, r);
    } else {
      kn_set_i64(j->o, k, kn_binop_i64(j->op, kn_get_i64(j->a, ia), kn_get_i64(j->b, ib)));
    }
    k += len;
    cursor_advance(&cu, len);
  }
}

sg_code kn_binary(kn_binop op, const kn_tensor *a, const kn_tensor *b, kn_tensor **out,
                  sg_error *err) {
  int n;
  int64_t shape[KN_MAX_DIMS];
  if (!kn_broadcast_shape(a->ndim, a->shape, b->ndim, b->shape, &n, shape))
    return kn_err_broadcast(err, NULL, a->ndim, a->shape, b->ndim, b->shape);
  if (kn_check_shape(n, shape, err)) return err->code;
  kn_dtype rt = kn_binop_result(op, a->dtype, b->dtype);
  kn_tensor *o = kn_tensor_empty(rt, n, shape);
  if (!o) return kn_alloc_error(err);
  *out = o;
  if (o->size == 0 || fast_f32(op, a, b, o)) return SG_OK;
  kn_dtype p = kn_promote(a->dtype, b->dtype);
  bin_job j = {.op = op, .a = a, .b = b, .o = o, .n = n, .shape = shape,
               .fdom = kn_dtype_is_float(rt) || kn_dtype_is_float(p)};
  bcast_strides(a, n, j.sa);
  bcast_strides(b, n, j.sb);
  kn_parallel_for(o->size, bin_range, &j);
  return SG_OK;
}

/* Unary ops run over [k0, k1) so large tensors split across the cores; float32 and
 * float64 in and out take a direct loop, other dtypes the generic accessors. */
typedef struct unary_job {
  kn_unop op;
  const kn_tensor *a;
  kn_tensor *o;
} unary_job;

static float unop_f32(kn_unop op, float x) {
  float r;
  switch (op) {
  case KN_EXP: kn_vm_exp_f32(&x, &r, 1); return r;
  case KN_SIGMOID: kn_vm_sigmoid_f32(&x, &r, 1); return r;
  case KN_TANH: kn_vm_tanh_f32(&x, &r, 1); return r;
  case KN_LOG: return logf(x);
  case KN_SQRT: return sqrtf(x);
  case KN_SIN: return sinf(x);
  case KN_COS: return cosf(x);
  default: return (float)kn_unop_f64(op, x);
  }
}

EW_CLONES void kn_unary_f32(kn_unop op, const float *x, float *r, int64_t n) {
  if (op == KN_NEG) for (int64_t i = 0; i < n; i++) r[i] = -x[i];
  else if (op == KN_ABS) for (int64_t i = 0; i < n; i++) r[i] = fabsf(x[i]);
  else if (op == KN_RELU) for (int64_t i = 0; i < n; i++) r[i] = x[i] >= 0 || isnan(x[i]) ? x[i] : 0.0f;
  else if (op == KN_EXP) kn_vm_exp_f32(x, r, n);
  else if (op == KN_SIGMOID) kn_vm_sigmoid_f32(x, r, n);
  else if (op == KN_TANH) kn_vm_tanh_f32(x, r, n);
  else if (op == KN_SQRT) for (int64_t i = 0; i < n; i++) r[i] = sqrtf(x[i]); /* sqrtps: exact */
  else for (int64_t i = 0; i < n; i++) r[i] = unop_f32(op, x[i]);
}

static void unary_range(void *ctx, int64_t k0, int64_t k1) {
  const unary_job *j = ctx;
  kn_unop op = j->op;
  const kn_tensor *a = j->a;
  kn_tensor *o = j->o;
  kn_dtype rt = o->dtype;
  if (a->dtype == KN_FLOAT32 && rt == KN_FLOAT32) {
    kn_unary_f32(op, (const float *)a->data + k0, (float *)o->data + k0, k1 - k0);
    return;
  }
  if (a->dtype == KN_FLOAT64 && rt == KN_FLOAT64) {
    const double *x = a->data;
    double *r = o->data;
    for (int64_t i = k0; i < k1; i++) r[i] = kn_unop_f64(op, x[i]);
    return;
  }
  if (kn_dtype_is_float(rt) || (op != KN_NOT && kn_dtype_is_float(a->dtype))) {
    for (int64_t i = k0; i < k1; i++) {
      double x = kn_get_f64(a, i);
      kn_set_f64(o, i, rt == KN_FLOAT32 ? (double)unop_f32(op, (float)x) : kn_unop_f64(op, x));
    }
    return;
  }
  for (int64_t i = k0; i < k1; i++) {
    if (op == KN_NOT) {
      kn_set_i64(o, i, kn_get_f64(a, i) == 0);
      continue;
    }
    int64_t x = kn_get_i64(a, i), r;
    switch (op) {
    case KN_NEG: r = (int64_t)(0 - (uint64_t)x); break;
    case KN_ABS: r = x < 0 ? (int64_t)(0 - (uint64_t)x) : x; break;
    case KN_RELU: r = x > 0 ? x : 0; break;
    default: r = 0; break;
    }
    kn_set_i64(o, i, r);
  }
}

sg_code kn_unary(kn_unop op, const kn_tensor *a, kn_tensor **out, sg_error *err) {
  kn_dtype rt = kn_unop_result(op, a->dtype);
  kn_tensor *o = kn_tensor_empty(rt, a->ndim, a->shape);
  if (!o) return kn_alloc_error(err);
  *out = o;
  unary_job j = {op, a, o};
  kn_parallel_for(a->size, unary_range, &j);
  return SG_OK;
}

/* where over output elements [k0, k1). With a bool condition and both branches of the
 * result dtype, whole innermost runs copy elements by size (strides 0 or 1, as
 * broadcasting gives); otherwise element by element through the generic accessors. */
typedef struct where_job {
  const kn_tensor *c, *a, *b;
  kn_tensor *o;
  int n;
  const int64_t *shape;
  int64_t sc[KN_MAX_DIMS], sa[KN_MAX_DIMS], sb[KN_MAX_DIMS];
  bool copy; /* the typed run path applies */
} where_job;

#define WHERE_RUN(T)                                                                         \
  do {                                                                                       \
    const T *x = (const T *)J->a->data + ia, *y = (const T *)J->b->data + ib;                \
    T *z = (T *)J->o->data + k;                                                              \
    for (int64_t i = 0; i < len; i++) z[i] = cc[i * tc] ? x[i * ta] : y[i * tb];             \
  } while (0)

static void where_range(void *ctx, int64_t k0, int64_t k1) {
  const where_job *J = ctx;
  int n = J->n;
  bcast_cursor cu = {.n = n, .nops = 3, .shape = J->shape, .st = {J->sc, J->sa, J->sb}};
  cursor_seek(&cu, k0);
  bool fdom = kn_dtype_is_float(J->o->dtype);
  size_t es = kn_dtype_size(J->o->dtype);
  for (int64_t k = k0; k < k1;) {
    int64_t len = 1, ic = cu.off[0], ia = cu.off[1], ib = cu.off[2];
    if (J->copy && n > 0) {
      len = cursor_run(&cu, k1 - k);
      const uint8_t *cc = (const uint8_t *)J->c->data + ic;
      int64_t tc = J->sc[n - 1], ta = J->sa[n - 1], tb = J->sb[n - 1];
      if (es == 1) WHERE_RUN(uint8_t);
      else if (es == 2) WHERE_RUN(uint16_t);
      else if (es == 4) WHERE_RUN(uint32_t);
      else WHERE_RUN(uint64_t);
    } else {
      bool take_a = kn_get_f64(J->c, ic) != 0;
      if (fdom) kn_set_f64(J->o, k, take_a ? kn_get_f64(J->a, ia) : kn_get_f64(J->b, ib));
      else kn_set_i64(J->o, k, take_a ? kn_get_i64(J->a, ia) : kn_get_i64(J->b, ib));
    }
    k += len;
    cursor_advance(&cu, len);
  }
}

sg_code kn_where(const kn_tensor *c, const kn_tensor *a, const kn_tensor *b, kn_tensor **out,
                 sg_error *err) {
  int n1, n;
  int64_t s1[KN_MAX_DIMS] = {0}, shape[KN_MAX_DIMS] = {0};
  if (!kn_broadcast_shape(c->ndim, c->shape, a->ndim, a->shape, &n1, s1))
    return kn_err_broadcast(err, "where", c->ndim, c->shape, a->ndim, a->shape);
  if (!kn_broadcast_shape(n1, s1, b->ndim, b->shape, &n, shape))
    return kn_err_broadcast(err, "where", n1, s1, b->ndim, b->shape);
  if (kn_check_shape(n, shape, err)) return err->code;
  kn_dtype rt = kn_promote(a->dtype, b->dtype);
  kn_tensor *o = kn_tensor_empty(rt, n, shape);
  if (!o) return kn_alloc_error(err);
  *out = o;
  if (o->size == 0) return SG_OK; /* where_range divides by each dimension */
  where_job J = {.c = c, .a = a, .b = b, .o = o, .n = n, .shape = shape,
                 .copy = c->dtype == KN_BOOL && a->dtype == rt && b->dtype == rt};
  bcast_strides(c, n, J.sc);
  bcast_strides(a, n, J.sa);
  bcast_strides(b, n, J.sb);
  kn_parallel_for(o->size, where_range, &J);
  return SG_OK;
}
