// SPDX-License-Identifier: Apache-2.0
/*
 * cpu_matmul.c — NumPy matmul on the CPU.
 *
 * float32/float64 go to CBLAS (OpenBLAS, multi-threaded, when the build found it:
 * KN_HAVE_CBLAS) and otherwise to a cache-blocked kernel written here; other dtypes use
 * a plain triple loop in double / int64. 1-d operands and broadcast batch dims follow
 * np.matmul. Either operand may be read transposed (kn_matmul_t): CBLAS gets Trans
 * flags, the loops read through row and column strides, so no transposed copy is made.
 */
#include <string.h>

#include "kn_cpu.h"

#ifdef KN_HAVE_CBLAS
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>

/* One thread policy (docs/daemon.md "Threads"): OpenBLAS gets as many threads as the
 * CPU kernel pool (kn_cpu_threads: the cores, or STAGD_CPU_THREADS), unless the user
 * set OPENBLAS_NUM_THREADS / OMP_NUM_THREADS, which OpenBLAS reads itself. */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static void blas_threads(void) {
  if (!getenv("OPENBLAS_NUM_THREADS") && !getenv("OMP_NUM_THREADS"))
    openblas_set_num_threads(kn_cpu_threads());
}
#define BLAS_INIT() pthread_once(&blas_once, blas_threads)

/* GEMV and threads (docs/daemon.md "Threads"): OpenBLAS splits a GEMV of 9,216 matrix
 * elements or more over its threads, and below GEMV_SERIAL_MAX waking them costs more
 * than it saves (a 128x128 GEMV: 2.7 us with two threads, 0.8 us on one; the TreeRNN of
 * bench/treernn_bench.py is made of such products). A GEMV of that middle size runs on
 * the calling thread, as chunks of outputs (a multiple of 16) each small enough that
 * OpenBLAS keeps it serial. Every output is still one OpenBLAS dot product over the
 * whole reduction; its last bits can differ from the threaded call's, as OpenBLAS's own
 * results differ between thread counts. */
enum { GEMV_BLAS_SERIAL = 9216, GEMV_SERIAL_MAX = 1 << 16 };

/* y = op(A) x for row-major A (rows x cols, leading dimension lda), op = transpose when
 * trans: what cblas_?gemv(CblasRowMajor, ...) computes with alpha 1, beta 0. */
#define GEMV_CHUNKED(NAME, T, GEMV)                                                          \
  static void NAME(bool trans, int rows, int cols, const T *a, int lda, const T *x, T *y) {  \
    int outs = trans ? cols : rows, red = trans ? rows : cols;                               \
    int chunk = (GEMV_BLAS_SERIAL - 1) / red / 16 * 16;                                      \
    int64_t total = (int64_t)rows * cols;                                                    \
    if (total < GEMV_BLAS_SERIAL || total >= GEMV_SERIAL_MAX || chunk < 16) chunk = outs;    \
    for (int o = 0; o < outs; o += chunk) {                                                  \
      int len = outs - o < chunk ? outs - o : chunk;                                         \
      if (trans) GEMV(CblasRowMajor, CblasTrans, rows, len, 1, a + o, lda, x, 1, 0, y + o, 1); \
      else GEMV(CblasRowMajor, CblasNoTrans, len, cols, 1, a + (int64_t)o * lda, lda, x, 1, 0, \
                y + o, 1);                                                                   \
    }                                                                                        \
  }
GEMV_CHUNKED(sgemv, float, cblas_sgemv)
GEMV_CHUNKED(dgemv, double, cblas_dgemv)
#endif

const char *kn_blas_name(void) {
#ifdef KN_HAVE_CBLAS
  return "openblas";
#else
  return "blocked";
#endif
}

enum { BM = 64, BN = 256, BK = 128 };

typedef struct sgemm_job {
  int64_t m, n, k;
  const float *a, *b;
  float *c;
} sgemm_job;

/* Rows [i0, i1) of C (a multiple of BM apart): blocks over k and j, four rows of A
 * at a time so each loaded row of B feeds four accumulating rows of C; `restrict`
 * lets the compiler vectorise the j loop. */
static void sgemm_rows(void *p, int64_t r0, int64_t r1) {
  const sgemm_job *J = p;
  int64_t n = J->n, k = J->k;
  const float *restrict A = J->a;
  const float *restrict B = J->b;
  float *restrict C = J->c;
  int64_t i_lo = r0 * BM, i_hi = r1 * BM < J->m ? r1 * BM : J->m;
  for (int64_t i = i_lo; i < i_hi; i++)
    for (int64_t j = 0; j < n; j++) C[i * n + j] = 0;
  for (int64_t i0 = i_lo; i0 < i_hi; i0 += BM)
    for (int64_t k0 = 0; k0 < k; k0 += BK)
      for (int64_t j0 = 0; j0 < n; j0 += BN) {
        int64_t i1 = i0 + BM < i_hi ? i0 + BM : i_hi;
        int64_t k1 = k0 + BK < k ? k0 + BK : k;
        int64_t j1 = j0 + BN < n ? j0 + BN : n;
        int64_t i = i0;
        for (; i + 4 <= i1; i += 4) {
          float *restrict c0 = C + i * n, *restrict c1 = c0 + n, *restrict c2 = c1 + n,
                *restrict c3 = c2 + n;
          for (int64_t kk = k0; kk < k1; kk++) {
            float a0 = A[i * k + kk], a1 = A[(i + 1) * k + kk], a2 = A[(i + 2) * k + kk],
                  a3 = A[(i + 3) * k + kk];
            const float *restrict bk = B + kk * n;
            for (int64_t j = j0; j < j1; j++) {
              float bv = bk[j];
              c0[j] += a0 * bv;
              c1[j] += a1 * bv;
              c2[j] += a2 * bv;
              c3[j] += a3 * bv;
            }
          }
        }
        for (; i < i1; i++) {
          float *restrict ci = C + i * n;
          for (int64_t kk = k0; kk < k1; kk++) {
            float aik = A[i * k + kk];
            const float *restrict bk = B + kk * n;
            for (int64_t j = j0; j < j1; j++) ci[j] += aik * bk[j];
          }
        }
      }
}

/* C = A B, row-major, all cores for large products. */
void kn_sgemm_blocked(int64_t m, int64_t n, int64_t k, const float *a, const float *b,
                      float *c) {
  sgemm_job J = {m, n, k, a, b, c};
  int64_t nblocks = (m + BM - 1) / BM;
  if (m * n * k >= ((int64_t)1 << 21)) kn_parallel_blocks(nblocks, sgemm_rows, &J);
  else sgemm_rows(&J, 0, nblocks);
}

/* C[m,n] = op(A) op(B) by plain loops, op(X)[i][j] at x[i * rs + j * cs]: the
 * fallback for transposed operands without CBLAS. */
#define STRIDED_GEMM(NAME, T)                                                            \
  static void NAME(int64_t m, int64_t n, int64_t k, const T *a, int64_t rsa, int64_t csa, \
                   const T *b, int64_t rsb, int64_t csb, T *c) {                          \
    memset(c, 0, (size_t)(m * n) * sizeof(T));                                            \
    for (int64_t i = 0; i < m; i++)                                                       \
      for (int64_t kk = 0; kk < k; kk++) {                                                \
        T aik = a[i * rsa + kk * csa];                                                    \
        for (int64_t j = 0; j < n; j++) c[i * n + j] += aik * b[kk * rsb + j * csb];      \
      }                                                                                   \
  }
#ifndef KN_HAVE_CBLAS
STRIDED_GEMM(sgemm_strided, float)
#endif
STRIDED_GEMM(dgemm_strided, double)

static void sgemm(int trans, int64_t m, int64_t n, int64_t k, const float *a, const float *b,
                  float *c) {
  bool ta = trans & KN_MATMUL_TRANS_A, tb = trans & KN_MATMUL_TRANS_B;
#ifdef KN_HAVE_CBLAS
  BLAS_INIT();
  if (m && n && k && (m == 1 || n == 1)) { /* a vector: GEMV, no packing (NumPy does so) */
    if (m == 1) sgemv(!tb, (int)(tb ? n : k), (int)(tb ? k : n), b, (int)(tb ? k : n), a, c);
    else sgemv(ta, (int)(ta ? k : m), (int)(ta ? m : k), a, (int)(ta ? m : k), b, c);
    return;
  }
  if (m && n && k) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, 1.0f, a, (int)(ta ? m : k), b, (int)(tb ? k : n), 0.0f, c,
                (int)n);
    return;
  }
  memset(c, 0, (size_t)(m * n) * sizeof(float));
#else
  if (!trans) kn_sgemm_blocked(m, n, k, a, b, c);
  else sgemm_strided(m, n, k, a, ta ? 1 : k, ta ? m : 1, b, tb ? 1 : n, tb ? k : 1, c);
#endif
}

void kn_sgemm(int64_t m, int64_t n, int64_t k, const float *a, const float *b, float *c) {
  sgemm(0, m, n, k, a, b, c);
}

static void dgemm(int trans, int64_t m, int64_t n, int64_t k, const double *a, const double *b,
                  double *c) {
  bool ta = trans & KN_MATMUL_TRANS_A, tb = trans & KN_MATMUL_TRANS_B;
#ifdef KN_HAVE_CBLAS
  BLAS_INIT();
  if (m && n && k && (m == 1 || n == 1)) {
    if (m == 1) dgemv(!tb, (int)(tb ? n : k), (int)(tb ? k : n), b, (int)(tb ? k : n), a, c);
    else dgemv(ta, (int)(ta ? k : m), (int)(ta ? m : k), a, (int)(ta ? m : k), b, c);
    return;
  }
  if (m && n && k) {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, 1.0, a, (int)(ta ? m : k), b, (int)(tb ? k : n), 0.0, c,
                (int)n);
    return;
  }
#endif
  dgemm_strided(m, n, k, a, ta ? 1 : k, ta ? m : 1, b, tb ? 1 : n, tb ? k : 1, c);
}

sg_code kn_matmul(const kn_tensor *a0, const kn_tensor *b0, kn_tensor **out, sg_error *err) {
  return kn_matmul_t(a0, b0, 0, out, err);
}

sg_code kn_matmul_t(const kn_tensor *a0, const kn_tensor *b0, int trans, kn_tensor **out,
                    sg_error *err) {
  if (a0->ndim == 0 || b0->ndim == 0)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "matmul: operands must be at least 1-d");
  bool ta = trans & KN_MATMUL_TRANS_A, tb = trans & KN_MATMUL_TRANS_B;
  if ((ta && a0->ndim < 2) || (tb && b0->ndim < 2))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "matmul: a transposed operand must be at least 2-d");
  kn_dtype rt = kn_promote(a0->dtype, b0->dtype);
  /* view both as batches of matrices: op(A) is m x k, op(B) k x n */
  int an = a0->ndim, bn = b0->ndim;
  int64_t m = ta ? a0->shape[an - 1] : an == 1 ? 1 : a0->shape[an - 2];
  int64_t k = ta ? a0->shape[an - 2] : a0->shape[an - 1];
  int64_t kb = tb ? b0->shape[bn - 1] : bn == 1 ? b0->shape[0] : b0->shape[bn - 2];
  int64_t n = tb ? b0->shape[bn - 2] : bn == 1 ? 1 : b0->shape[bn - 1];
  if (k != kb) return kn_err_misaligned(err, "matmul", an, a0->shape, bn, b0->shape, trans, k, kb);
  /* op(A)[i][kk] at i * rsa + kk * csa, op(B)[kk][j] at kk * rsb + j * csb */
  int64_t rsa = ta ? 1 : k, csa = ta ? m : 1, rsb = tb ? 1 : n, csb = tb ? k : 1;
  int abn = an > 2 ? an - 2 : 0, bbn = bn > 2 ? bn - 2 : 0, on;
  int64_t bshape[KN_MAX_DIMS];
  if (!kn_broadcast_shape(abn, a0->shape, bbn, b0->shape, &on, bshape))
    return sg_error_set_reason(err, SG_REASON_SHAPE_MISMATCH, SG_INVALID_ARGUMENT,
                               "matmul: batch dimensions do not broadcast");
  int64_t oshape[KN_MAX_DIMS];
  int ond = 0;
  int64_t nbatch = 1;
  for (int i = 0; i < on; i++) {
    oshape[ond++] = bshape[i];
    nbatch *= bshape[i];
  }
  if (an > 1) oshape[ond++] = m;
  if (bn > 1) oshape[ond++] = n;
  if (ond > KN_MAX_DIMS) return sg_error_set(err, SG_INVALID_ARGUMENT, "matmul: too many dims");
  if (kn_check_shape(ond, oshape, err)) return err->code;
  kn_tensor *a = a0->dtype == rt ? (kn_tensor *)a0 : kn_cast(a0, rt);
  kn_tensor *b = b0->dtype == rt ? (kn_tensor *)b0 : kn_cast(b0, rt);
  /* every path below writes all of C (BLAS with beta 0, the loops zero it first) */
  kn_tensor *o = a && b ? kn_tensor_empty(rt, ond, oshape) : NULL;
  if (!o) {
    if (a && a != a0) kn_tensor_release(a);
    if (b && b != b0) kn_tensor_release(b);
    return kn_alloc_error(err);
  }
  size_t es = kn_dtype_size(rt);
  for (int64_t bi = 0; bi < nbatch; bi++) {
    /* batch index → offsets into a and b (broadcast) */
    int64_t rem = bi, ao = 0, bo = 0, astr = m * k, bstr = k * n;
    for (int d = on - 1; d >= 0; d--) {
      int64_t idx = rem % bshape[d];
      rem /= bshape[d];
      int ad = d - (on - abn), bd = d - (on - bbn);
      if (ad >= 0) {
        if (a->shape[ad] != 1) ao += idx * astr;
        astr *= a->shape[ad];
      }
      if (bd >= 0) {
        if (b->shape[bd] != 1) bo += idx * bstr;
        bstr *= b->shape[bd];
      }
    }
    int64_t oo = bi * m * n;
    if (rt == KN_FLOAT32) {
      sgemm(trans, m, n, k, (const float *)a->data + ao, (const float *)b->data + bo,
            (float *)o->data + oo);
    } else if (rt == KN_FLOAT64) {
      dgemm(trans, m, n, k, (const double *)a->data + ao, (const double *)b->data + bo,
            (double *)o->data + oo);
    } else {
      bool f = kn_dtype_is_float(rt);
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          double sf = 0;
          int64_t si = 0;
          for (int64_t kk = 0; kk < k; kk++) {
            int64_t ia = ao + i * rsa + kk * csa, ib = bo + kk * rsb + j * csb;
            if (f) sf += kn_get_f64(a, ia) * kn_get_f64(b, ib);
            else si += kn_get_i64(a, ia) * kn_get_i64(b, ib);
          }
          if (f) kn_set_f64(o, oo + i * n + j, sf);
          else kn_set_i64(o, oo + i * n + j, rt == KN_BOOL ? si != 0 : si);
        }
    }
  }
  (void)es;
  if (a != a0) kn_tensor_release(a);
  if (b != b0) kn_tensor_release(b);
  *out = o;
  return SG_OK;
}
