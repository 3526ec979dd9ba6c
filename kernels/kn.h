// SPDX-License-Identifier: Apache-2.0
/*
 * kn.h — the public API of kernels/: tensors and the CPU kernels that compute on them.
 *
 * A kn_tensor is a dense row-major array (dtype, shape, data) with an atomic reference
 * count, so graph values can share it across threads. Kernels never take ownership of
 * their inputs; they return a new tensor (refcount 1) through an out parameter and an
 * sg_code, filling an sg_error on bad input (shape mismatch, bad axis, bad dtype).
 *
 * Dtype and broadcasting rules follow NumPy (1.24): see kn_promote and kn_broadcast.
 * The Vulkan backend (kernels/vulkan/) lives behind its own header; this one is CPU.
 * Prefix: kn_.
 */
#ifndef STAGD_KERNELS_KN_H
#define STAGD_KERNELS_KN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sg.h"

#define KN_MAX_DIMS 8

typedef enum kn_dtype {
  KN_BOOL = 0,
  KN_INT32,
  KN_INT64,
  KN_FLOAT16,
  KN_FLOAT32,
  KN_FLOAT64,
  KN_NDTYPES
} kn_dtype;

typedef struct kn_tensor {
  atomic_int refcount;
  kn_dtype dtype;
  int ndim;
  int64_t shape[KN_MAX_DIMS];
  int64_t size; /* product of shape (1 for 0-d) */
  void *data;   /* size * kn_dtype_size(dtype) bytes, owned unless `base` is set */
  /* A view (kn_reshape): the tensor whose buffer `data` is, held by a reference.
   * Tensors are never written after their kernel made them, so a view can share. */
  struct kn_tensor *base;
  /* the request watch its bytes were charged to (common/watch.c); 0: none */
  uint64_t charge;
} kn_tensor;

/* ------------------------------------------------------------------ dtypes */
const char *kn_dtype_name(kn_dtype dt);               /* "float32" ... */
bool kn_dtype_parse(const char *name, kn_dtype *out); /* also "f32", "int", "float", "bool" */
size_t kn_dtype_size(kn_dtype dt);
static inline bool kn_dtype_is_float(kn_dtype dt) { return dt >= KN_FLOAT16; }
static inline bool kn_dtype_is_int(kn_dtype dt) { return dt == KN_INT32 || dt == KN_INT64; }
/* NumPy's result type of two arrays. */
kn_dtype kn_promote(kn_dtype a, kn_dtype b);

uint16_t kn_f32_to_f16(float f);
float kn_f16_to_f32(uint16_t h);

/* --------------------------------------------------------------- lifecycle */
/* Largest tensor any kernel will create (elements); bigger results are
 * SG_RESOURCE_EXHAUSTED errors instead of an allocation failure. */
#ifndef KN_MAX_ELEMENTS /* the fuzz target (tests/graph/fuzz_graph.c) sets a smaller one */
#define KN_MAX_ELEMENTS ((int64_t)1 << 28)
#endif
/* SG_OK when a tensor of this shape may be created, else fills err. */
sg_code kn_check_shape(int ndim, const int64_t *shape, sg_error *err);
/* New tensor with zeroed data. ndim may be 0 (a scalar).
 * NULL when the host has no memory for its data (a buffer of KN_POOL_MIN bytes or
 * more; smaller ones abort like any bookkeeping allocation): every maker of a tensor
 * (kn_tensor_empty, _copy, kn_cast, kn_fill, kn_random, the kernels) passes that on,
 * the kernels as SG_RESOURCE_EXHAUSTED through kn_alloc_error. */
kn_tensor *kn_tensor_new(kn_dtype dt, int ndim, const int64_t *shape);
/* The same with its data not filled: for kernels that write every element. (The test
 * build, with AddressSanitizer, fills it with 0xff bytes: NaN, -1, true.) */
kn_tensor *kn_tensor_empty(kn_dtype dt, int ndim, const int64_t *shape);

/* The buffer pool behind tensor storage (pool.c): freed buffers of KN_POOL_MIN bytes
 * and more are kept in size classes (four per power of two) for the next tensor of
 * their class, up to STAGD_POOL_MB (default 256) MiB in all; smaller ones are plain
 * malloc/free. A failed allocation empties the pool and retries. */
#define KN_POOL_MIN ((size_t)4096)
/* not zeroed; NULL when memory is exhausted (below KN_POOL_MIN: aborts) */
void *kn_pool_alloc(size_t bytes);
void kn_pool_free(void *p, size_t bytes); /* bytes: as passed to kn_pool_alloc */
void kn_pool_trim(void);                  /* frees every cached buffer */
typedef struct kn_pool_stats {
  uint64_t hits, misses, trims;
  size_t cached_bytes, cached_buffers, bound_bytes;
} kn_pool_stats;
kn_pool_stats kn_pool_get_stats(void);
/* dst[0..ndim) = shape; returns the element count (tensor-like structs' metadata). */
int64_t kn_shape_copy(int64_t *dst, const int64_t *shape, int ndim);
/* A tensor of a's dtype and data under another shape of the same size (no copy). */
kn_tensor *kn_tensor_view(const kn_tensor *a, int ndim, const int64_t *shape);
kn_tensor *kn_tensor_scalar_f64(kn_dtype dt, double v);
kn_tensor *kn_tensor_scalar_i64(kn_dtype dt, int64_t v);
static inline kn_tensor *kn_tensor_retain(kn_tensor *t) {
  atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
  return t;
}
void kn_tensor_release(kn_tensor *t);
kn_tensor *kn_tensor_copy(const kn_tensor *t);
/* SG_RESOURCE_EXHAUSTED "out of host memory allocating N bytes for a DTYPE tensor of
 * shape (...)", naming the calling thread's last failed tensor allocation. */
sg_code kn_alloc_error(sg_error *err);
bool kn_tensor_same_shape(const kn_tensor *a, const kn_tensor *b);

/* Element access as double / int64 (converting from the storage dtype). */
double kn_get_f64(const kn_tensor *t, int64_t i);
int64_t kn_get_i64(const kn_tensor *t, int64_t i);
void kn_set_f64(kn_tensor *t, int64_t i, double v);
void kn_set_i64(kn_tensor *t, int64_t i, int64_t v);

/* ------------------------------------------------------------- elementwise */
typedef enum kn_binop {
  KN_ADD, KN_SUB, KN_MUL, KN_DIV, KN_FLOORDIV, KN_MOD, KN_POW,
  KN_EQ, KN_NE, KN_LT, KN_LE, KN_GT, KN_GE,
  KN_AND, KN_OR, KN_MAXIMUM, KN_MINIMUM,
  KN_NBINOPS
} kn_binop;

typedef enum kn_unop {
  KN_NEG, KN_ABS, KN_EXP, KN_LOG, KN_SQRT, KN_TANH, KN_SIGMOID, KN_RELU, KN_SIN, KN_COS,
  KN_NOT,
  KN_NUNOPS
} kn_unop;

/* Broadcast shape of a and b (NumPy rules) into out/out_ndim; false if incompatible. */
bool kn_broadcast_shape(int an, const int64_t *as, int bn, const int64_t *bs, int *out_ndim,
                        int64_t *out);
/* Result dtype of op on inputs of dtypes a, b. */
kn_dtype kn_binop_result(kn_binop op, kn_dtype a, kn_dtype b);
kn_dtype kn_unop_result(kn_unop op, kn_dtype a);
/* Elementwise ops; both inputs are promoted to the result dtype first (NumPy). */
sg_code kn_binary(kn_binop op, const kn_tensor *a, const kn_tensor *b, kn_tensor **out,
                  sg_error *err);
sg_code kn_unary(kn_unop op, const kn_tensor *a, kn_tensor **out, sg_error *err);
sg_code kn_where(const kn_tensor *c, const kn_tensor *a, const kn_tensor *b, kn_tensor **out,
                 sg_error *err);
kn_tensor *kn_cast(const kn_tensor *a, kn_dtype dt);
/* The float32 loops of kn_binary / kn_unary on raw arrays, the same bits per element
 * (the fused chains of cpu_fused.c use them): z[i] = x[i*sx] OP y[i*sy], strides 0 or 1;
 * kn_binary_f32_exact says which binops it takes (+ - * / maximum minimum). */
bool kn_binary_f32_exact(kn_binop op);
void kn_binary_f32(kn_binop op, const float *x, int64_t sx, const float *y, int64_t sy, float *z,
                   int64_t len);
void kn_unary_f32(kn_unop op, const float *x, float *r, int64_t n); /* op != KN_NOT */

/* A chain of float32 elementwise ops in one pass (cpu_fused.c). Step s computes
 * op(a, b) (binary: a kn_binop kn_binary_f32_exact takes) or op(a) (unary: a kn_unop
 * other than KN_NOT); an operand is -1 (the previous step's result) or an index into
 * the inputs, each an array of `size` floats, or of `rows` floats broadcast (element i
 * reads data[(i / inner) % rows]: NumPy's broadcasting of a shape whose dims other than
 * 1 are one run of the output's axes — a bias row has inner 1, a column [R, 1] against
 * [R, C] inner C), or, with data NULL, one scalar. A unary operand is never a scalar, nor both operands of a binary one;
 * the last step's result is written to out[0, size). Every element has the bits the
 * ops give one by one. */
typedef struct kn_fused_step {
  bool unary;
  int op;
  int a, b;
} kn_fused_step;
typedef struct kn_fused_input {
  const float *data;
  float scalar;
  int64_t rows;  /* 0: `size` floats; else broadcast, this many */
  int64_t inner; /* with rows: each element repeats this many times (0 or 1: once) */
} kn_fused_input;
void kn_fused_f32(const kn_fused_step *steps, int nsteps, const kn_fused_input *ins, float *out,
                  int64_t size);
/* Scalar versions used by the executor's fast path and constant folding. */
double kn_binop_f64(kn_binop op, double a, double b);
int64_t kn_binop_i64(kn_binop op, int64_t a, int64_t b);
double kn_unop_f64(kn_unop op, double a);

/* -------------------------------------------------------------- reductions */
typedef enum kn_reduce_op { KN_SUM, KN_MEAN, KN_MAX, KN_MIN, KN_ARGMAX } kn_reduce_op;
kn_dtype kn_reduce_result(kn_reduce_op op, kn_dtype a);
/* has_axis false → reduce over all elements (argmax: over the flattened array). */
sg_code kn_reduce(kn_reduce_op op, const kn_tensor *a, bool has_axis, int axis,
                  kn_tensor **out, sg_error *err);
sg_code kn_softmax(const kn_tensor *a, int axis, bool log, kn_tensor **out, sg_error *err);

/* ------------------------------------------------------------------ matmul */
/* NumPy matmul: 1-d and 2-d operands, and batches (leading dims broadcast). float32
 * and float64 go to BLAS (OpenBLAS when built with it) or a blocked kernel. */
sg_code kn_matmul(const kn_tensor *a, const kn_tensor *b, kn_tensor **out, sg_error *err);
/* The same with operands read transposed (their last two axes swapped, no copy made):
 * trans is KN_MATMUL_TRANS_A | KN_MATMUL_TRANS_B or 0; a transposed operand must be at
 * least 2-d. BLAS gets its Trans flags, the other loops swap their index arithmetic. */
enum { KN_MATMUL_TRANS_A = 1, KN_MATMUL_TRANS_B = 2 };
sg_code kn_matmul_t(const kn_tensor *a, const kn_tensor *b, int trans, kn_tensor **out,
                    sg_error *err);
/* Row-major C[m,n] = A[m,k] B[k,n], the raw kernels (exposed for benchmarks). */
void kn_sgemm(int64_t m, int64_t n, int64_t k, const float *a, const float *b, float *c);
void kn_sgemm_blocked(int64_t m, int64_t n, int64_t k, const float *a, const float *b,
                      float *c);
const char *kn_blas_name(void); /* "openblas" or "blocked" */

/* ----------------------------------------------------------- shape kernels */
/* perm NULL → reverse the axes. */
sg_code kn_transpose(const kn_tensor *a, const int *perm, int nperm, kn_tensor **out,
                     sg_error *err);
/* One dim may be -1 (inferred). */
sg_code kn_reshape(const kn_tensor *a, int ndim, const int64_t *shape, kn_tensor **out,
                   sg_error *err);
sg_code kn_concat(kn_tensor *const *ts, int n, int axis, kn_tensor **out, sg_error *err);
sg_code kn_stack(kn_tensor *const *ts, int n, int axis, kn_tensor **out, sg_error *err);
/* a[start:stop:step] along axis, with Python's clamping of start/stop. */
/* Python's slice.indices for an axis of length len: clamps *start and *stop (absent
 * ones take the step's default) and returns how many elements the slice selects. */
int64_t kn_slice_adjust(int64_t len, int64_t *start, bool has_start, int64_t *stop,
                        bool has_stop, int64_t step);
sg_code kn_slice(const kn_tensor *a, int axis, int64_t start, int64_t stop, int64_t step,
                 bool has_start, bool has_stop, kn_tensor **out, sg_error *err);
/* np.take(a, idx, axis) */
/* x with x[start:stop:step] along axis replaced by v (cast to x's dtype, broadcast
 * NumPy-style to the slice's shape): a new tensor. */
/* Appends "(d0,d1,...)" to b: the shape in error messages ('?' for an unknown dim). */
void kn_put_shape(sg_buf *b, int ndim, const int64_t *shape);
/* The error families clients catch by type (kn_errors.c): each sets err's reason and
 * returns SG_INVALID_ARGUMENT. op names the op that failed (NULL: no prefix, for callers
 * that add their own).
 *   kn_err_axis       "OP: axis A is out of bounds for a N-d tensor"   index_out_of_bounds
 *   kn_err_index      "OP: index I is out of bounds for axis A with size S"   (the same)
 *   kn_err_tuple_index  "getitem: tuple index I out of range (length N)"   (the same)
 *   kn_err_broadcast  "OP: shapes (..) and (..) cannot be broadcast together"   shape_mismatch
 *   kn_err_misaligned "OP: shapes (..) [(transposed)] and (..) [(transposed)] do not align
 *                     (K != KB)": a matmul's inner dimensions (trans: KN_MATMUL_TRANS_*)
 *                     (the same; NumPy raises ValueError)
 *   kn_slice_misfit   a slice_update value that does not fit its slice   shape_mismatch */
sg_code kn_err_axis(sg_error *err, const char *op, int64_t axis, int ndim);
sg_code kn_err_index(sg_error *err, const char *op, int64_t index, int axis, int64_t size);
sg_code kn_err_tuple_index(sg_error *err, int64_t index, int len);
sg_code kn_err_broadcast(sg_error *err, const char *op, int an, const int64_t *as, int bn,
                         const int64_t *bs);
sg_code kn_err_misaligned(sg_error *err, const char *op, int an, const int64_t *as, int bn,
                          const int64_t *bs, int trans, int64_t k, int64_t kb);
sg_code kn_slice_misfit(sg_error *err, int vn, const int64_t *vshape, int sn, const int64_t *sshape);
sg_code kn_slice_update(const kn_tensor *x, const kn_tensor *v, int axis, int64_t start,
                        int64_t stop, int64_t step, bool has_start, bool has_stop,
                        kn_tensor **out, sg_error *err);
sg_code kn_gather(const kn_tensor *a, const kn_tensor *idx, int axis, kn_tensor **out,
                  sg_error *err);
/* np.eye(depth, dtype=float32)[idx] */
sg_code kn_one_hot(const kn_tensor *idx, int64_t depth, kn_tensor **out, sg_error *err);
/* a[i] (first axis, negative counts from the end). */
sg_code kn_index(const kn_tensor *a, int64_t i, kn_tensor **out, sg_error *err);
kn_tensor *kn_fill(kn_dtype dt, int ndim, const int64_t *shape, double v);
sg_code kn_arange(double start, double stop, double step, kn_dtype dt, kn_tensor **out,
                  sg_error *err);
/* Deterministic from seed (splitmix64 + Box–Muller); uniform in [0, 1). */
kn_tensor *kn_random(bool normal, uint64_t seed, kn_dtype dt, int ndim, const int64_t *shape);

#endif /* STAGD_KERNELS_KN_H */
