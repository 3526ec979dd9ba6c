// SPDX-License-Identifier: Apache-2.0
/*
 * test_vulkan_kernels.c — every embedded kernel against a straightforward C reference
 * on random inputs: broadcasting binary ops (size-1 dims, scalars, empty tensors),
 * unary ops, fused chains (the bits of the same ops one by one) and their refusals,
 * reductions (sum, max, min, mean; NaN rows) along each axis and their
 * refusals, softmax and log_softmax along each axis (with
 * and without subgroup operations), matmul at odd sizes and batched with broadcasting,
 * the matmul kernel selection policy; several dependent dispatches in one batch
 * (barriers); deadlines.
 */
#include "vk_test_util.h"

#include <pthread.h>

static int64_t shape_size(const kn_vk_shape *s) { return kn_vk_shape_size(s); }

/* ------------------------------------------------------------ binary */

static float ref_binop(kn_vk_binop op, float x, float y) {
  switch (op) {
  case KN_VK_ADD: return x + y;
  case KN_VK_SUB: return x - y;
  case KN_VK_MUL: return x * y;
  case KN_VK_DIV: return x / y;
  case KN_VK_MAXIMUM: return x > y ? x : y;
  case KN_VK_MINIMUM: return x < y ? x : y;
  case KN_VK_FLOORDIV: { /* Python's //, as NumPy computes it */
    float m = fmodf(x, y), d = (x - m) / y;
    if (m != 0 && (y < 0) != (m < 0)) d -= 1;
    float f = floorf(d);
    return d - f > 0.5f ? f + 1 : f;
  }
  case KN_VK_MOD: {
    float m = fmodf(x, y);
    return m != 0 && (y < 0) != (m < 0) ? m + y : m;
  }
  default: return powf(x, y);
  }
}

/* NumPy broadcasting the plain way: unravel the output index, clamp broadcast dims. */
static void ref_binary(kn_vk_binop op, const float *a, const kn_vk_shape *as, const float *b,
                       const kn_vk_shape *bs, const kn_vk_shape *os, float *out) {
  int64_t n = shape_size(os);
  for (int64_t i = 0; i < n; i++) {
    int64_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (int d = os->ndim - 1; d >= 0; d--) {
      int64_t c = rest % os->dims[d];
      rest /= os->dims[d];
      int da = d - (os->ndim - as->ndim), db = d - (os->ndim - bs->ndim);
      if (da >= 0) {
        ia += (as->dims[da] == 1 ? 0 : c) * sa;
        sa *= as->dims[da];
      }
      if (db >= 0) {
        ib += (bs->dims[db] == 1 ? 0 : c) * sb;
        sb *= bs->dims[db];
      }
    }
    out[i] = ref_binop(op, a[ia], b[ib]);
  }
}

static void binary_broadcasting(void **state) {
  kn_vk_context *ctx = *state;
  struct {
    kn_vk_shape a, b;
  } cases[] = {
      {{3, {2, 3, 4}}, {3, {2, 3, 4}}},
      {{3, {2, 3, 4}}, {1, {4}}},
      {{3, {2, 1, 4}}, {2, {3, 1}}},
      {{0, {0}}, {2, {5, 6}}},
      {{2, {5, 6}}, {0, {0}}},
      {{0, {0}}, {0, {0}}},
      {{1, {1}}, {1, {7}}},
      {{5, {4, 1, 3, 1, 2}}, {3, {3, 5, 2}}},
      {{2, {1, 300}}, {2, {257, 1}}},
      {{2, {0, 3}}, {1, {3}}},
      {{2, {3, 0}}, {1, {1}}},
      {{8, {2, 1, 2, 1, 2, 1, 2, 3}}, {7, {2, 1, 2, 1, 2, 1, 1}}},
  };
  kn_vk_batch *bt;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    kn_vk_shape os;
    VT_OK(kn_vk_broadcast_shape(&cases[c].a, &cases[c].b, &os, err));
    int64_t na = shape_size(&cases[c].a), nb = shape_size(&cases[c].b), n = shape_size(&os);
    for (int op = 0; op < KN_VK_NBINOPS; op++) {
      float *a = vt_random((size_t)na, op == KN_VK_POW ? 0.1f : -2.0f, 2.0f);
      float *b = vt_random((size_t)nb, -2.0f, 2.0f);
      float *want = malloc((size_t)(n ? n : 1) * sizeof *want);
      ref_binary(op, a, &cases[c].a, b, &cases[c].b, &os, want);
      kn_vk_buffer *ba = vt_buffer_from(ctx, a, (size_t)na),
                   *bb = vt_buffer_from(ctx, b, (size_t)nb);
      kn_vk_buffer *bo;
      VT_OK(kn_vk_buffer_create(ctx, (uint64_t)n * sizeof(float), &bo, err));
      VT_OK(kn_vk_batch_begin(ctx, &bt, err));
      VT_OK(kn_vk_binary(bt, op, ba, &cases[c].a, bb, &cases[c].b, bo, err));
      assert_int_equal(kn_vk_batch_dispatch_count(bt), n ? 1 : 0);
      VT_OK(kn_vk_batch_submit(bt, 0, err));
      float *got = vt_download(ctx, bo, (size_t)n);
      char what[64];
      snprintf(what, sizeof what, "case %zu op %d", c, op);
      vt_expect_close(got, want, (size_t)n, 1e-5f, 1e-6f, what);
      free(got);
      free(want);
      free(a);
      free(b);
      kn_vk_buffer_destroy(ba);
      kn_vk_buffer_destroy(bb);
      kn_vk_buffer_destroy(bo);
    }
  }
}

/* ------------------------------------------------------------ unary */

static float ref_unop(kn_vk_unop op, float x) {
  switch (op) {
  case KN_VK_NEG: return -x;
  case KN_VK_EXP: return expf(x);
  case KN_VK_LOG: return logf(x);
  case KN_VK_TANH: return tanhf(x);
  case KN_VK_RELU: return x > 0 ? x : 0;
  case KN_VK_SQRT: return sqrtf(x);
  case KN_VK_ABS: return fabsf(x);
  case KN_VK_SIGMOID: return 1.0f / (1.0f + expf(-x));
  case KN_VK_SQUARE: return x * x;
  case KN_VK_SIN: return sinf(x);
  case KN_VK_COS: return cosf(x);
  default: return 1.0f / x;
  }
}

static void unary_ops(void **state) {
  kn_vk_context *ctx = *state;
  size_t sizes[] = {0, 1, 1000, 100003};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    size_t n = sizes[s];
    for (int op = 0; op < KN_VK_NUNOPS; op++) {
      bool positive = op == KN_VK_LOG || op == KN_VK_SQRT || op == KN_VK_RECIPROCAL;
      float lim = op == KN_VK_SIN || op == KN_VK_COS ? 6.0f : 20.0f; /* about one period */
      float *a = vt_random(n, positive ? 0.01f : -lim, positive ? 3.0f : lim);
      float *want = malloc((n ? n : 1) * sizeof *want);
      for (size_t i = 0; i < n; i++)
        want[i] = ref_unop(op, a[i]);
      kn_vk_buffer *ba = vt_buffer_from(ctx, a, n), *bo;
      VT_OK(kn_vk_buffer_create(ctx, n * sizeof(float), &bo, err));
      kn_vk_batch *bt;
      VT_OK(kn_vk_batch_begin(ctx, &bt, err));
      VT_OK(kn_vk_unary(bt, op, ba, bo, (int64_t)n, err));
      VT_OK(kn_vk_batch_submit(bt, 0, err));
      float *got = vt_download(ctx, bo, n);
      char what[64];
      snprintf(what, sizeof what, "unary op %d n %zu", op, n);
      vt_expect_close(got, want, n, 2e-5f, 1e-6f, what);
      free(got);
      free(want);
      free(a);
      kn_vk_buffer_destroy(ba);
      kn_vk_buffer_destroy(bo);
    }
  }
}

/* ------------------------------------------------------------ fused chains */

/* One random chain: steps over prev / nins buffers / nsc scalars (step 0 reads no prev,
 * and buffer 0). */
static int random_chain(kn_vk_fused_step *st, int nsteps, int nins, int nsc) {
  for (int s = 0; s < nsteps; s++) {
    bool unary = vt_randf(0, 1) < 0.45f;
    int op = (int)vt_randf(0, unary ? KN_VK_NUNOPS : KN_VK_NBINOPS);
    int pick[2];
    for (int k = 0; k < 2; k++) {
      float r = vt_randf(0, 1);
      if (s > 0 && (k == 0 || r < 0.2f)) pick[k] = KN_VK_FUSED_PREV;
      else if (r < 0.7f || nsc == 0) pick[k] = (int)vt_randf(0, (float)nins);
      else pick[k] = KN_VK_FUSED_SCALAR((int)vt_randf(0, (float)nsc));
    }
    if (vt_randf(0, 1) < 0.3f) { int t = pick[0]; pick[0] = pick[1]; pick[1] = t; }
    if (s > 0 && unary) pick[0] = KN_VK_FUSED_PREV; /* a unary step continues the chain */
    /* step 0 reads buffer 0 (never broadcast): every step's value has the output's shape */
    if (s == 0 && pick[0] != 0 && (unary || pick[1] != 0)) pick[vt_randf(0, 1) < 0.5f || unary ? 0 : 1] = 0;
    st[s] = (kn_vk_fused_step){.unary = unary, .op = op, .a = pick[0], .b = unary ? 0 : pick[1]};
  }
  return nsteps;
}

/* The chain's steps as one kn_vk_unary / kn_vk_binary dispatch each over [rows, cols]
 * (buffers with bc[k] 1 are [cols] rows, with 2 [rows, 1] columns, scalars 0-d buffers:
 * all broadcast), the last writing out. */
static void chain_op_by_op(kn_vk_context *ctx, const kn_vk_fused_step *st, int nsteps,
                           kn_vk_buffer **ins, const int *bc, kn_vk_buffer **sc, kn_vk_buffer *out,
                           size_t rows, size_t cols) {
  size_t n = rows * cols;
  kn_vk_buffer *tmp[2];
  VT_OK(kn_vk_buffer_create(ctx, n * 4, &tmp[0], err));
  VT_OK(kn_vk_buffer_create(ctx, n * 4, &tmp[1], err));
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  kn_vk_shape full = {2, {(int64_t)rows, (int64_t)cols}}, row = {1, {(int64_t)cols}},
              col = {2, {(int64_t)rows, 1}}, zero = {0, {0}};
  kn_vk_buffer *prev = NULL;
  for (int s = 0; s < nsteps; s++) {
    kn_vk_buffer *dst = s == nsteps - 1 ? out : tmp[s & 1];
    kn_vk_buffer *opnd[2];
    for (int k = 0; k < 2; k++) {
      int o = k ? st[s].b : st[s].a;
      opnd[k] = o == KN_VK_FUSED_PREV ? prev : o < KN_VK_FUSED_INPUTS ? ins[o] : sc[o - KN_VK_FUSED_INPUTS];
    }
    if (st[s].unary) {
      VT_OK(kn_vk_unary(bt, (kn_vk_unop)st[s].op, opnd[0], dst, (int64_t)n, err));
    } else {
      const kn_vk_shape *sh[2];
      for (int k = 0; k < 2; k++) {
        int o = k ? st[s].b : st[s].a;
        sh[k] = o >= KN_VK_FUSED_INPUTS ? &zero : o < 0 || !bc[o] ? &full : bc[o] == 1 ? &row : &col;
      }
      VT_OK(kn_vk_binary(bt, (kn_vk_binop)st[s].op, opnd[0], sh[0], opnd[1], sh[1], dst, err));
    }
    prev = dst;
  }
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  kn_vk_buffer_destroy(tmp[0]);
  kn_vk_buffer_destroy(tmp[1]);
}

/* Random chains of every float32 op, fused and op by op: the same bits, every element
 * (signed zeros included; NaN as NaN), at sizes around the workgroup, with some
 * buffers broadcast rows or columns of the [rows, cols] output. */
static void fused_chains_match_op_by_op(void **state) {
  kn_vk_context *ctx = *state;
  size_t shapes[][2] = {{1, 1}, {3, 85}, {257, 1}, {64, 64}};
  for (int c = 0; c < 48; c++) {
    size_t rows = shapes[c % 4][0], cols = shapes[c % 4][1], n = rows * cols;
    int bc[KN_VK_FUSED_INPUTS];
    int64_t sizes[KN_VK_FUSED_INPUTS], inners[KN_VK_FUSED_INPUTS];
    int nins = 1 + c % KN_VK_FUSED_INPUTS, nsc = c % 5 == 0 ? 0 : 1 + c % 4;
    int nsteps = c == 47 ? KN_VK_FUSED_STEPS : 1 + (int)vt_randf(0, 12);
    kn_vk_fused_step st[KN_VK_FUSED_STEPS];
    random_chain(st, nsteps, nins, nsc);
    kn_vk_buffer *ins[KN_VK_FUSED_INPUTS], *sc[KN_VK_FUSED_SCALARS], *fused, *plain;
    float scalars[KN_VK_FUSED_SCALARS];
    for (int k = 0; k < nins; k++) {
      bc[k] = k == 0 ? 0 : (c + k) % 4 == 0 ? 1 : (c + k) % 4 == 1 ? 2 : 0;
      sizes[k] = (int64_t)(bc[k] == 1 ? cols : bc[k] == 2 ? rows : n);
      inners[k] = bc[k] == 2 ? (int64_t)cols : 1;
      float *a = vt_random((size_t)sizes[k], -3.0f, 3.0f);
      if (sizes[k] > 4) a[1] = 0.0f, a[2] = -0.0f, a[3] = NAN;
      ins[k] = vt_buffer_from(ctx, a, (size_t)sizes[k]);
      free(a);
    }
    for (int k = 0; k < nsc; k++) {
      scalars[k] = k == 1 ? 2.0f : vt_randf(-4.0f, 4.0f);
      sc[k] = vt_buffer_from(ctx, &scalars[k], 1);
    }
    VT_OK(kn_vk_buffer_create(ctx, n * 4, &fused, err));
    VT_OK(kn_vk_buffer_create(ctx, n * 4, &plain, err));
    kn_vk_batch *bt;
    VT_OK(kn_vk_batch_begin(ctx, &bt, err));
    bool any_bc = false; /* (in_sizes NULL: every buffer holds n) */
    for (int k = 0; k < nins; k++) any_bc |= sizes[k] != (int64_t)n;
    VT_OK(kn_vk_fused_f32(bt, st, nsteps, ins, any_bc || c % 2 ? sizes : NULL, any_bc || c % 2 ? inners : NULL,
                          nins, scalars, nsc, fused, (int64_t)n, err));
    assert_int_equal(kn_vk_batch_dispatch_count(bt), 1);
    VT_OK(kn_vk_batch_submit(bt, 0, err));
    chain_op_by_op(ctx, st, nsteps, ins, bc, sc, plain, rows, cols);
    float *got = vt_download(ctx, fused, n), *want = vt_download(ctx, plain, n);
    /* every bit equal — but a NaN only as a NaN: an op on two NaNs returns either one's
     * sign and payload (IEEE 754 leaves it open), and a compiler may swap the operands of
     * a commutative op, so that choice differs between two builds of the same step */
    for (size_t i = 0; i < n; i++)
      if (memcmp(&got[i], &want[i], 4) && !(isnan(got[i]) && isnan(want[i]))) {
        for (int q = 0; q < nsteps; q++)
          print_message("  step %d: %s op %d (%d, %d)\n", q, st[q].unary ? "unary" : "binary", st[q].op,
                        st[q].a, st[q].b);
        fail_msg("chain %d (%d steps, n %zu): element %zu fused %.9g (0x%08x), op by op %.9g (0x%08x)", c,
                 nsteps, n, i, (double)got[i], *(uint32_t *)&got[i], (double)want[i], *(uint32_t *)&want[i]);
      }
    free(got);
    free(want);
    for (int k = 0; k < nins; k++) kn_vk_buffer_destroy(ins[k]);
    for (int k = 0; k < nsc; k++) kn_vk_buffer_destroy(sc[k]);
    kn_vk_buffer_destroy(fused);
    kn_vk_buffer_destroy(plain);
  }
}

static void expect_fused_refused(kn_vk_context *ctx, const kn_vk_fused_step *st, int nsteps,
                                 kn_vk_buffer **ins, const int64_t *sizes, const int64_t *inners,
                                 int nins, int nsc, kn_vk_buffer *out, int64_t n, const char *needle) {
  float scalars[KN_VK_FUSED_SCALARS + 1] = {0};
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  sg_error e = SG_ERROR_INIT;
  sg_code rc = kn_vk_fused_f32(bt, st, nsteps, ins, sizes, inners, nins, scalars, nsc, out, n, &e);
  assert_int_equal(rc, SG_INVALID_ARGUMENT);
  if (!strstr(e.message, needle)) fail_msg("message '%s' lacks '%s'", e.message, needle);
  sg_error_clear(&e);
  assert_int_equal(kn_vk_batch_dispatch_count(bt), 0);
  VT_OK(kn_vk_batch_submit(bt, 0, err));
}

static void fused_chain_errors(void **state) {
  kn_vk_context *ctx = *state;
  float a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  kn_vk_buffer *in = vt_buffer_from(ctx, a, 8), *out = vt_buffer_from(ctx, a, 8);
  kn_vk_buffer *ins[KN_VK_FUSED_INPUTS + 1];
  for (int k = 0; k <= KN_VK_FUSED_INPUTS; k++) ins[k] = in;
  kn_vk_fused_step st[KN_VK_FUSED_STEPS + 1];
  for (int s = 0; s <= KN_VK_FUSED_STEPS; s++)
    st[s] = (kn_vk_fused_step){.unary = true, .op = KN_VK_NEG, .a = s ? KN_VK_FUSED_PREV : 0};
  expect_fused_refused(ctx, st, KN_VK_FUSED_STEPS + 1, ins, NULL, NULL, 1, 0, out, 8, "33 steps");
  expect_fused_refused(ctx, st, 0, ins, NULL, NULL, 1, 0, out, 8, "0 steps");
  expect_fused_refused(ctx, st, 2, ins, NULL, NULL, 0, 0, out, 8, "0 buffers");
  expect_fused_refused(ctx, st, 2, ins, NULL, NULL, KN_VK_FUSED_INPUTS + 1, 0, out, 8, "8 buffers");
  expect_fused_refused(ctx, st, 2, ins, NULL, NULL, 1, KN_VK_FUSED_SCALARS + 1, out, 8, "16 scalars");
  kn_vk_fused_step bad[2] = {{.unary = true, .op = KN_VK_NEG, .a = KN_VK_FUSED_PREV}};
  expect_fused_refused(ctx, bad, 1, ins, NULL, NULL, 1, 0, out, 8, "step 0");              /* no previous value */
  bad[0] = (kn_vk_fused_step){.unary = false, .op = KN_VK_ADD, .a = 0, .b = 3};
  expect_fused_refused(ctx, bad, 1, ins, NULL, NULL, 2, 0, out, 8, "step 0");              /* buffer 3 of 2 */
  bad[0].b = KN_VK_FUSED_SCALAR(1);
  expect_fused_refused(ctx, bad, 1, ins, NULL, NULL, 1, 1, out, 8, "step 0");              /* scalar 1 of 1 */
  bad[0] = (kn_vk_fused_step){.unary = true, .op = KN_VK_NUNOPS, .a = 0};
  expect_fused_refused(ctx, bad, 1, ins, NULL, NULL, 1, 0, out, 8, "unary op");
  bad[0] = (kn_vk_fused_step){.unary = false, .op = -1, .a = 0, .b = 0};
  expect_fused_refused(ctx, bad, 1, ins, NULL, NULL, 1, 0, out, 8, "binary op");
  expect_fused_refused(ctx, st, 2, ins, NULL, NULL, 1, 0, out, 9, "fused operand");       /* 9 of 8 floats */
  expect_fused_refused(ctx, st, 2, ins, NULL, NULL, 1, 0, out, -1, "element count");
  int64_t three = 3, zero = 0, nine = 9; /* 3 does not divide 8; 9 is more than 8 */
  expect_fused_refused(ctx, st, 2, ins, &three, NULL, 1, 0, out, 8, "does not broadcast");
  expect_fused_refused(ctx, st, 2, ins, &zero, NULL, 1, 0, out, 8, "does not broadcast");
  expect_fused_refused(ctx, st, 2, ins, &nine, NULL, 1, 0, out, 8, "does not broadcast");
  int64_t two = 2, four = 4; /* 2 elements each for 4 outputs: 8 — fine; each for 3: no */
  int64_t three_each = 3;
  expect_fused_refused(ctx, st, 2, ins, &two, &three_each, 1, 0, out, 8, "does not broadcast");
  expect_fused_refused(ctx, st, 2, ins, &four, &four, 1, 0, out, 8, "does not broadcast");
  expect_fused_refused(ctx, st, 2, ins, &two, &zero, 1, 0, out, 8, "does not broadcast");
  kn_vk_buffer_destroy(in);
  kn_vk_buffer_destroy(out);
}

/* A reduction with an epilogue (kn_vk_reduce_epilogue: sqrt(|tanh(r * 2 + b)|) - 1 with
 * b of the result's shape) against the reduction stored and the same chain as a fused
 * kernel, bit for bit: every op, axes inner, outer and middle, and all elements. */
static void reduce_epilogue_matches_two_kernels(void **state) {
  kn_vk_context *ctx = *state;
  static const struct {
    kn_vk_shape s;
    int axis;
  } cases[] = {{{2, {7, 33}}, 1}, {{2, {7, 33}}, 0}, {{1, {1000}}, 0}, {{3, {3, 5, 4}}, 1}};
  const float scalars[] = {2.0f, 1.0f};
  const kn_vk_fused_step epi_steps[] = {{false, KN_VK_MUL, KN_VK_FUSED_PREV, KN_VK_FUSED_SCALAR(0)},
                                        {false, KN_VK_ADD, KN_VK_FUSED_PREV, 0},
                                        {true, KN_VK_TANH, KN_VK_FUSED_PREV, 0},
                                        {true, KN_VK_ABS, KN_VK_FUSED_PREV, 0},
                                        {true, KN_VK_SQRT, KN_VK_FUSED_PREV, 0},
                                        {false, KN_VK_SUB, KN_VK_FUSED_PREV, KN_VK_FUSED_SCALAR(1)}};
  kn_vk_fused_step chain[6];
  memcpy(chain, epi_steps, sizeof chain);
  chain[0].a = 0; /* the stored reduction */
  chain[1].b = 1;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int op = KN_VK_REDUCE_SUM; op <= KN_VK_REDUCE_MEAN; op++) {
      const kn_vk_shape *sh = &cases[c].s;
      size_t n = 1, nout = 1;
      for (int d = 0; d < sh->ndim; d++) {
        n *= (size_t)sh->dims[d];
        if (d != cases[c].axis) nout *= (size_t)sh->dims[d];
      }
      float *a = vt_random(n, -2.0f, 2.0f), *b = vt_random(nout, -1.0f, 1.0f);
      kn_vk_buffer *ba = vt_buffer_from(ctx, a, n), *bb = vt_buffer_from(ctx, b, nout), *red, *two, *one;
      free(a);
      free(b);
      VT_OK(kn_vk_buffer_create(ctx, nout * 4, &red, err));
      VT_OK(kn_vk_buffer_create(ctx, nout * 4, &two, err));
      VT_OK(kn_vk_buffer_create(ctx, nout * 4, &one, err));
      kn_vk_buffer *epi_ins[] = {bb}, *chain_ins[] = {red, bb};
      kn_vk_epilogue epi = {epi_steps, 6, epi_ins, NULL, NULL, 1, scalars, 2};
      kn_vk_batch *bt;
      VT_OK(kn_vk_batch_begin(ctx, &bt, err));
      VT_OK(kn_vk_reduce_typed(bt, KN_VK_F32, (kn_vk_reduce_op)op, ba, sh, cases[c].axis, red, err));
      VT_OK(kn_vk_fused_f32(bt, chain, 6, chain_ins, NULL, NULL, 2, scalars, 2, two, (int64_t)nout, err));
      VT_OK(kn_vk_reduce_epilogue(bt, (kn_vk_reduce_op)op, ba, sh, cases[c].axis, one, &epi, err));
      assert_int_equal(kn_vk_batch_dispatch_count(bt), 3);
      VT_OK(kn_vk_batch_submit(bt, 0, err));
      float *want = vt_download(ctx, two, nout), *got = vt_download(ctx, one, nout);
      for (size_t i = 0; i < nout; i++)
        if (memcmp(&got[i], &want[i], 4))
          fail_msg("reduction %d, case %zu: element %zu is %.9g with the epilogue, %.9g as two kernels", op, c, i,
                   (double)got[i], (double)want[i]);
      free(want);
      free(got);
      kn_vk_buffer *bufs[] = {ba, bb, red, two, one};
      for (size_t i = 0; i < 5; i++) kn_vk_buffer_destroy(bufs[i]);
    }
  /* refused: no epilogue, another element type, an operand past the buffers */
  float x[4] = {1, 2, 3, 4};
  kn_vk_buffer *bx = vt_buffer_from(ctx, x, 4), *bo = vt_buffer_from(ctx, x, 4);
  kn_vk_shape s4 = {1, {4}};
  kn_vk_fused_step past = {false, KN_VK_ADD, KN_VK_FUSED_PREV, 2};
  kn_vk_epilogue bad = {&past, 1, &bx, NULL, NULL, 1, scalars, 0};
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_vk_reduce_epilogue(bt, KN_VK_REDUCE_SUM, bx, &s4, 0, bo, NULL, &e), SG_INVALID_ARGUMENT);
  sg_error_clear(&e);
  assert_int_equal(kn_vk_reduce_epilogue(bt, KN_VK_REDUCE_SUM, bx, &s4, 0, bo, &bad, &e), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "fused step 0"));
  sg_error_clear(&e);
  assert_int_equal(kn_vk_batch_dispatch_count(bt), 0);
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  kn_vk_buffer_destroy(bx);
  kn_vk_buffer_destroy(bo);
}

/* ------------------------------------------------------------ reductions */

static void ref_reduce(kn_vk_reduce_op op, const float *a, const kn_vk_shape *s, int axis,
                       float *out) {
  int64_t outer = 1, inner = 1, len = s->dims[axis];
  for (int i = 0; i < axis; i++)
    outer *= s->dims[i];
  for (int i = axis + 1; i < s->ndim; i++)
    inner *= s->dims[i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      bool sum = op == KN_VK_REDUCE_SUM || op == KN_VK_REDUCE_MEAN;
      double acc = sum ? 0 : op == KN_VK_REDUCE_MAX ? -INFINITY : INFINITY;
      for (int64_t k = 0; k < len; k++) {
        double v = a[(o * len + k) * inner + in];
        acc = sum                      ? acc + v
              : op == KN_VK_REDUCE_MAX ? fmax(acc, v)
                                       : fmin(acc, v);
      }
      if (op == KN_VK_REDUCE_MEAN) acc = len ? acc / (double)len : NAN;
      out[o * inner + in] = (float)acc;
    }
}

static void reductions_on(kn_vk_context *ctx) {
  kn_vk_shape shapes[] = {{3, {3, 5, 7}},   {1, {1000}},     {3, {4, 0, 3}}, {2, {2, 300}},
                          {3, {2, 300, 2}}, {2, {70000, 2}}, {2, {1, 1}},    {4, {2, 3, 1, 65}}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    const kn_vk_shape *sh = &shapes[s];
    int64_t n = shape_size(sh);
    float *a = vt_random((size_t)n, -3.0f, 3.0f);
    kn_vk_buffer *ba = vt_buffer_from(ctx, a, (size_t)n);
    for (int axis = -1; axis < sh->ndim; axis++) {
      int ax = axis < 0 ? sh->ndim - 1 : axis;
      int64_t nout = 1;
      for (int i = 0; i < sh->ndim; i++)
        if (i != ax)
          nout *= sh->dims[i];
      for (int op = 0; op <= KN_VK_REDUCE_MEAN; op++) {
        float *want = malloc((size_t)(nout ? nout : 1) * sizeof *want);
        ref_reduce(op, a, sh, ax, want);
        kn_vk_buffer *bo;
        VT_OK(kn_vk_buffer_create(ctx, (uint64_t)nout * sizeof(float), &bo, err));
        kn_vk_batch *bt;
        VT_OK(kn_vk_batch_begin(ctx, &bt, err));
        VT_OK(kn_vk_reduce(bt, op, ba, sh, axis, bo, err));
        VT_OK(kn_vk_batch_submit(bt, 0, err));
        float *got = vt_download(ctx, bo, (size_t)nout);
        char what[64];
        snprintf(what, sizeof what, "shape %zu axis %d op %d", s, axis, op);
        vt_expect_close(got, want, (size_t)nout, 1e-5f, 1e-4f, what);
        free(got);
        free(want);
        kn_vk_buffer_destroy(bo);
      }
    }
    free(a);
    kn_vk_buffer_destroy(ba);
  }
  /* a NaN anywhere in a row is its max and min (subgroupMax/Min alone may drop it) */
  kn_vk_shape sh = {2, {2, 300}};
  float *a = vt_random(600, -3.0f, 3.0f);
  a[137] = NAN;
  a[300 + 255] = NAN;
  kn_vk_buffer *ba = vt_buffer_from(ctx, a, 600), *bo;
  VT_OK(kn_vk_buffer_create(ctx, 2 * sizeof(float), &bo, err));
  for (int op = KN_VK_REDUCE_MAX; op <= KN_VK_REDUCE_MIN; op++) {
    kn_vk_batch *bt;
    VT_OK(kn_vk_batch_begin(ctx, &bt, err));
    VT_OK(kn_vk_reduce(bt, op, ba, &sh, 1, bo, err));
    VT_OK(kn_vk_batch_submit(bt, 0, err));
    float *got = vt_download(ctx, bo, 2);
    assert_true(isnan(got[0]) && isnan(got[1]));
    free(got);
  }
  free(a);
  kn_vk_buffer_destroy(ba);
  kn_vk_buffer_destroy(bo);
}

/* With subgroup arithmetic where the device offers it (lavapipe does). */
static void reductions_each_axis(void **state) { reductions_on(*state); }

/* The shared-memory fallback used on devices without subgroup arithmetic. */
static void reductions_shared_memory_fallback(void **state) {
  (void)state;
  kn_vk_options opts = {.pipeline_cache_dir = "", .no_subgroup_ops = true};
  kn_vk_context *ctx;
  VT_OK(kn_vk_context_create(0, &opts, &ctx, err));
  reductions_on(ctx);
  kn_vk_context_destroy(ctx);
}

/* Refusals before anything is recorded: an unknown reduction, mean of a type without a
 * mean kernel, a float16 result buffer too small (halves: whole 32-bit words). */
static void reduction_errors(void **state) {
  kn_vk_context *ctx = *state;
  kn_vk_shape sh = {2, {2, 5}};
  kn_vk_buffer *ba, *bo;
  VT_OK(kn_vk_buffer_create(ctx, 64, &ba, err));
  VT_OK(kn_vk_buffer_create(ctx, 4, &bo, err));
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_vk_reduce_typed(bt, KN_VK_F32, (kn_vk_reduce_op)4, ba, &sh, 1, bo, &e),
                   SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "unknown reduction"));
  sg_error_clear(&e);
  assert_int_equal(kn_vk_reduce_typed(bt, KN_VK_I32, KN_VK_REDUCE_MEAN, ba, &sh, 1, bo, &e),
                   SG_UNIMPLEMENTED);
  assert_non_null(strstr(e.message, "no mean kernel"));
  sg_error_clear(&e);
  /* 2 halves fit in 4 bytes (axis 1), 5 do not (axis 0) */
  assert_int_equal(kn_vk_reduce_typed(bt, KN_VK_F16, KN_VK_REDUCE_SUM, ba, &sh, 0, bo, &e),
                   SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "result"));
  sg_error_clear(&e);
  assert_int_equal(kn_vk_softmax_typed(bt, KN_VK_BOOL, ba, 2, 5, 1, false, bo, &e),
                   SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "float16"));
  sg_error_clear(&e);
  assert_int_equal(kn_vk_softmax_typed(bt, KN_VK_F16, ba, 2, 5, 1, false, bo, &e),
                   SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "result"));
  sg_error_clear(&e);
  VT_OK(kn_vk_reduce_typed(bt, KN_VK_F16, KN_VK_REDUCE_SUM, ba, &sh, 1, bo, err));
  kn_vk_batch_discard(bt);
  kn_vk_buffer_destroy(ba);
  kn_vk_buffer_destroy(bo);
}

/* ------------------------------------------------------------ softmax */

static void softmax_rows(void **state) {
  kn_vk_context *ctx = *state;
  int64_t cases[][2] = {{1, 1}, {3, 7}, {5, 1000}, {0, 4}, {4, 0}, {100, 33}, {2, 257}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int64_t rows = cases[c][0], cols = cases[c][1], n = rows * cols;
    float *a = vt_random((size_t)n, -30.0f, 30.0f);
    float *want = malloc((size_t)(n ? n : 1) * sizeof *want);
    for (int64_t r = 0; r < rows; r++) {
      double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < cols; k++)
        m = fmax(m, a[r * cols + k]);
      for (int64_t k = 0; k < cols; k++)
        s += exp(a[r * cols + k] - m);
      for (int64_t k = 0; k < cols; k++)
        want[r * cols + k] = (float)(exp(a[r * cols + k] - m) / s);
    }
    kn_vk_buffer *ba = vt_buffer_from(ctx, a, (size_t)n), *bo;
    VT_OK(kn_vk_buffer_create(ctx, (uint64_t)n * sizeof(float), &bo, err));
    kn_vk_batch *bt;
    VT_OK(kn_vk_batch_begin(ctx, &bt, err));
    VT_OK(kn_vk_softmax(bt, ba, rows, cols, bo, err));
    VT_OK(kn_vk_batch_submit(bt, 0, err));
    float *got = vt_download(ctx, bo, (size_t)n);
    char what[64];
    snprintf(what, sizeof what, "softmax %lldx%lld", (long long)rows, (long long)cols);
    vt_expect_close(got, want, (size_t)n, 1e-4f, 1e-7f, what);
    free(got);
    free(want);
    free(a);
    kn_vk_buffer_destroy(ba);
    kn_vk_buffer_destroy(bo);
  }
}

/* softmax / log_softmax along the middle axis of [outer, len, inner] views */
static void softmax_axes_on(kn_vk_context *ctx) {
  int64_t cases[][3] = {{1, 5, 1}, {3, 4, 2}, {2, 300, 3}, {1, 7, 17}, {4, 1, 5}, {2, 0, 3}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int lg = 0; lg < 2; lg++) {
      int64_t outer = cases[c][0], len = cases[c][1], inner = cases[c][2];
      int64_t n = outer * len * inner;
      float *a = vt_random((size_t)n, -20.0f, 20.0f);
      float *want = malloc((size_t)(n ? n : 1) * sizeof *want);
      for (int64_t o = 0; o < outer; o++)
        for (int64_t r = 0; r < inner; r++) {
          double m = -INFINITY, s = 0;
          int64_t base = o * len * inner + r;
          for (int64_t k = 0; k < len; k++)
            m = fmax(m, a[base + k * inner]);
          for (int64_t k = 0; k < len; k++)
            s += exp(a[base + k * inner] - m);
          for (int64_t k = 0; k < len; k++) {
            double x = a[base + k * inner] - m;
            want[base + k * inner] = (float)(lg ? x - log(s) : exp(x) / s);
          }
        }
      kn_vk_buffer *ba = vt_buffer_from(ctx, a, (size_t)n), *bo;
      VT_OK(kn_vk_buffer_create(ctx, (uint64_t)n * sizeof(float), &bo, err));
      kn_vk_batch *bt;
      VT_OK(kn_vk_batch_begin(ctx, &bt, err));
      VT_OK(kn_vk_softmax_axis(bt, ba, outer, len, inner, lg, bo, err));
      VT_OK(kn_vk_batch_submit(bt, 0, err));
      float *got = vt_download(ctx, bo, (size_t)n);
      char what[80];
      snprintf(what, sizeof what, "%s [%lld,%lld,%lld]", lg ? "log_softmax" : "softmax",
               (long long)outer, (long long)len, (long long)inner);
      vt_expect_close(got, want, (size_t)n, 1e-4f, 1e-6f, what);
      free(got);
      free(want);
      free(a);
      kn_vk_buffer_destroy(ba);
      kn_vk_buffer_destroy(bo);
    }
}

/* With subgroupMax/subgroupAdd where offered (lavapipe does). */
static void softmax_each_axis(void **state) { softmax_axes_on(*state); }

/* The shared-memory tree used on devices without subgroup arithmetic. */
static void softmax_shared_memory_fallback(void **state) {
  (void)state;
  kn_vk_options opts = {.pipeline_cache_dir = "", .no_subgroup_ops = true};
  kn_vk_context *ctx;
  VT_OK(kn_vk_context_create(0, &opts, &ctx, err));
  softmax_axes_on(ctx);
  kn_vk_context_destroy(ctx);
}

/* ------------------------------------------------------------ matmul */

/* A batch of 3 products where a is one matrix for every z (stride 0) and b is 3. */
static void matmul_batched_broadcast(void **state) {
  kn_vk_context *ctx = *state;
  int64_t batch = 3, m = 5, n = 70, k = 33;
  float *a = vt_random((size_t)(m * k), -1, 1), *b = vt_random((size_t)(batch * k * n), -1, 1);
  float *want = calloc((size_t)(batch * m * n), sizeof *want);
  for (int64_t z = 0; z < batch; z++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t p = 0; p < k; p++)
          s += (double)a[i * k + p] * b[z * k * n + p * n + j];
        want[z * m * n + i * n + j] = (float)s;
      }
  kn_vk_buffer *ba = vt_buffer_from(ctx, a, (size_t)(m * k));
  kn_vk_buffer *bb = vt_buffer_from(ctx, b, (size_t)(batch * k * n)), *bc;
  VT_OK(kn_vk_buffer_create(ctx, (uint64_t)(batch * m * n) * sizeof(float), &bc, err));
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  VT_OK(kn_vk_matmul_typed(bt, KN_VK_F32, ba, bb, bc, batch, m, n, k, 0, k * n, err));
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  float *got = vt_download(ctx, bc, (size_t)(batch * m * n));
  vt_expect_close(got, want, (size_t)(batch * m * n), 1e-4f, 1e-4f, "batched matmul");
  /* a buffer too small for the batch is refused before anything is recorded */
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(kn_vk_matmul_typed(bt, KN_VK_F32, ba, bb, bc, batch, m, n, k, m * k, k * n, &e),
                   SG_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "left operand"));
  sg_error_clear(&e);
  kn_vk_batch_discard(bt);
  free(got);
  free(want);
  free(a);
  free(b);
  kn_vk_buffer_destroy(ba);
  kn_vk_buffer_destroy(bb);
  kn_vk_buffer_destroy(bc);
}

static void matmul_odd_sizes(void **state) {
  kn_vk_context *ctx = *state;
  int64_t cases[][3] = {{1, 1, 1},       {7, 7, 7},    {63, 63, 63}, {65, 65, 65},
                        {129, 129, 129}, {7, 65, 129}, {129, 1, 63}, {1, 129, 7},
                        {65, 63, 0},     {0, 5, 5},    {200, 3, 17}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int64_t m = cases[c][0], n = cases[c][1], k = cases[c][2];
    float *a = vt_random((size_t)(m * k), -1, 1), *b = vt_random((size_t)(k * n), -1, 1);
    float *want = calloc((size_t)(m * n > 0 ? m * n : 1), sizeof *want);
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t p = 0; p < k; p++)
          s += (double)a[i * k + p] * b[p * n + j];
        want[i * n + j] = (float)s;
      }
    kn_vk_buffer *ba = vt_buffer_from(ctx, a, (size_t)(m * k));
    kn_vk_buffer *bb = vt_buffer_from(ctx, b, (size_t)(k * n)), *bc;
    VT_OK(kn_vk_buffer_create(ctx, (uint64_t)(m * n) * sizeof(float), &bc, err));
    /* garbage in the output proves k == 0 writes zeros */
    float *junk = vt_random((size_t)(m * n), 5, 6);
    VT_OK(kn_vk_upload(ctx, bc, 0, junk, (uint64_t)(m * n) * sizeof(float), err));
    free(junk);
    kn_vk_batch *bt;
    VT_OK(kn_vk_batch_begin(ctx, &bt, err));
    VT_OK(kn_vk_matmul(bt, ba, bb, bc, m, n, k, err));
    VT_OK(kn_vk_batch_submit(bt, 0, err));
    float *got = vt_download(ctx, bc, (size_t)(m * n));
    char what[64];
    snprintf(what, sizeof what, "matmul %lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
    vt_expect_close(got, want, (size_t)(m * n), 1e-4f, 1e-5f * (float)(k + 1), what);
    free(got);
    free(want);
    free(a);
    free(b);
    kn_vk_buffer_destroy(ba);
    kn_vk_buffer_destroy(bb);
    kn_vk_buffer_destroy(bc);
  }
}

/* ------------------------------------------------------------ batches */

/* y = exp(x); z = y * x (RAW); x = -y (WAR on x); s = sum of z's rows; p = softmax(z);
 * q = z @ p (p's data viewed as [C, R]): six dependent dispatches, one command buffer. */
static void dependent_dispatches_one_batch(void **state) {
  kn_vk_context *ctx = *state;
  enum { R = 33, C = 70 };
  float *x = vt_random(R * C, -1, 1);
  kn_vk_buffer *bx = vt_buffer_from(ctx, x, R * C), *by, *bz, *bs, *bp, *bq;
  VT_OK(kn_vk_buffer_create(ctx, R * C * 4, &by, err));
  VT_OK(kn_vk_buffer_create(ctx, R * C * 4, &bz, err));
  VT_OK(kn_vk_buffer_create(ctx, R * 4, &bs, err));
  VT_OK(kn_vk_buffer_create(ctx, R * C * 4, &bp, err));
  VT_OK(kn_vk_buffer_create(ctx, R * R * 4, &bq, err));
  kn_vk_shape sh = {2, {R, C}};
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  VT_OK(kn_vk_unary(bt, KN_VK_EXP, bx, by, R * C, err));
  VT_OK(kn_vk_binary(bt, KN_VK_MUL, by, &sh, bx, &sh, bz, err));
  VT_OK(kn_vk_unary(bt, KN_VK_NEG, by, bx, R * C, err));
  VT_OK(kn_vk_reduce(bt, KN_VK_REDUCE_SUM, bz, &sh, 1, bs, err));
  VT_OK(kn_vk_softmax(bt, bz, R, C, bp, err));
  /* q[R,R] = z[R,C] @ p viewed as [C,R] */
  VT_OK(kn_vk_matmul(bt, bz, bp, bq, R, R, C, err));
  assert_int_equal(kn_vk_batch_dispatch_count(bt), 6);
  VT_OK(kn_vk_batch_submit(bt, sg_now_ns() + UINT64_C(60) * 1000000000, err));

  float y[R * C], z[R * C], nx[R * C], s[R], p[R * C], q[R * R];
  for (int i = 0; i < R * C; i++) {
    y[i] = expf(x[i]);
    z[i] = y[i] * x[i];
    nx[i] = -y[i];
  }
  for (int r = 0; r < R; r++) {
    double acc = 0, m = -INFINITY, e = 0;
    for (int c = 0; c < C; c++) {
      acc += z[r * C + c];
      m = fmax(m, z[r * C + c]);
    }
    s[r] = (float)acc;
    for (int c = 0; c < C; c++)
      e += exp(z[r * C + c] - m);
    for (int c = 0; c < C; c++)
      p[r * C + c] = (float)(exp(z[r * C + c] - m) / e);
  }
  for (int i = 0; i < R; i++)
    for (int j = 0; j < R; j++) {
      double acc = 0;
      for (int k = 0; k < C; k++)
        acc += (double)z[i * C + k] * p[k * R + j];
      q[i * R + j] = (float)acc;
    }
  float *g;
  g = vt_download(ctx, bx, R * C);
  vt_expect_close(g, nx, R * C, 1e-5f, 1e-6f, "x = -exp(x)");
  free(g);
  g = vt_download(ctx, bz, R * C);
  vt_expect_close(g, z, R * C, 1e-5f, 1e-6f, "z");
  free(g);
  g = vt_download(ctx, bs, R);
  vt_expect_close(g, s, R, 1e-4f, 1e-4f, "sum");
  free(g);
  g = vt_download(ctx, bp, R * C);
  vt_expect_close(g, p, R * C, 1e-4f, 1e-7f, "softmax");
  free(g);
  g = vt_download(ctx, bq, R * R);
  vt_expect_close(g, q, R * R, 1e-4f, 1e-4f, "matmul");
  free(g);
  free(x);
  kn_vk_buffer *all[] = {bx, by, bz, bs, bp, bq};
  for (size_t i = 0; i < 6; i++)
    kn_vk_buffer_destroy(all[i]);
}

/* Barriers exactly where a dispatch depends on an earlier one of the same batch. */
static void barriers_only_between_dependent_dispatches(void **state) {
  kn_vk_context *ctx = *state;
  float init[4] = {1, -2, 3, -4};
  kn_vk_buffer *a = vt_buffer_from(ctx, init, 4), *b, *c = vt_buffer_from(ctx, init, 4), *d, *e, *f;
  VT_OK(kn_vk_buffer_create(ctx, 16, &b, err));
  VT_OK(kn_vk_buffer_create(ctx, 16, &d, err));
  VT_OK(kn_vk_buffer_create(ctx, 16, &e, err));
  VT_OK(kn_vk_buffer_create(ctx, 16, &f, err));
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  VT_OK(kn_vk_unary(bt, KN_VK_ABS, a, b, 4, err)); /* b = |a| */
  VT_OK(kn_vk_unary(bt, KN_VK_NEG, c, d, 4, err)); /* independent (same memory block) */
  VT_OK(kn_vk_unary(bt, KN_VK_NEG, a, f, 4, err)); /* reads a again: read after read */
  assert_int_equal(kn_vk_batch_barrier_count(bt), 0);
  VT_OK(kn_vk_unary(bt, KN_VK_SQUARE, b, e, 4, err)); /* RAW on b */
  assert_int_equal(kn_vk_batch_barrier_count(bt), 1);
  VT_OK(kn_vk_unary(bt, KN_VK_SQRT, e, e, 4, err)); /* RAW + WAW on e */
  assert_int_equal(kn_vk_batch_barrier_count(bt), 2);
  /* d was written and c read before barrier 1: both already ordered */
  VT_OK(kn_vk_unary(bt, KN_VK_NEG, d, c, 4, err));
  assert_int_equal(kn_vk_batch_barrier_count(bt), 2);
  VT_OK(kn_vk_unary(bt, KN_VK_ABS, f, a, 4, err)); /* a not read since barrier 2 */
  assert_int_equal(kn_vk_batch_barrier_count(bt), 2);
  VT_OK(kn_vk_unary(bt, KN_VK_NEG, b, c, 4, err)); /* WAW on c, written by dispatch 6 */
  assert_int_equal(kn_vk_batch_barrier_count(bt), 3);
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  float want_a[4] = {1, 2, 3, 4}, want_c[4] = {-1, -2, -3, -4}, want_e[4] = {1, 2, 3, 4};
  float *g = vt_download(ctx, a, 4);
  assert_memory_equal(g, want_a, sizeof want_a);
  free(g);
  g = vt_download(ctx, c, 4);
  assert_memory_equal(g, want_c, sizeof want_c);
  free(g);
  g = vt_download(ctx, e, 4);
  assert_memory_equal(g, want_e, sizeof want_e);
  free(g);
  kn_vk_buffer *all[] = {a, b, c, d, e, f};
  for (size_t i = 0; i < 6; i++)
    kn_vk_buffer_destroy(all[i]);
}

static void many_batches_reuse_frames(void **state) {
  kn_vk_context *ctx = *state;
  float one = 1;
  kn_vk_buffer *acc = vt_buffer_from(ctx, &one, 1), *tmp;
  VT_OK(kn_vk_buffer_create(ctx, 4, &tmp, err));
  kn_vk_shape s = {0, {0}};
  for (int i = 0; i < 50; i++) {
    kn_vk_batch *bt;
    VT_OK(kn_vk_batch_begin(ctx, &bt, err));
    VT_OK(kn_vk_binary(bt, KN_VK_ADD, acc, &s, acc, &s, tmp, err)); /* 2a */
    VT_OK(kn_vk_binary(bt, KN_VK_MUL, tmp, &s, tmp, &s, acc, err)); /* (2a)^2 */
    VT_OK(kn_vk_unary(bt, KN_VK_SQRT, acc, tmp, 1, err));           /* 2a */
    VT_OK(kn_vk_unary(bt, KN_VK_ABS, tmp, acc, 1, err));
    VT_OK(kn_vk_batch_submit(bt, 0, err));
  }
  /* each round: a → sqrt((2a)^2) = 2a; 50 rounds of doubling */
  float got;
  VT_OK(kn_vk_download(ctx, acc, 0, &got, 4, err));
  assert_true(got == ldexpf(1.0f, 50));
  /* 600 dispatches: more than one descriptor pool's worth of sets */
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  for (int j = 0; j < 600; j++)
    VT_OK(kn_vk_unary(bt, KN_VK_ABS, acc, tmp, 1, err));
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  kn_vk_buffer_destroy(acc);
  kn_vk_buffer_destroy(tmp);
}

static void deadline_exceeded(void **state) {
  kn_vk_context *ctx = *state;
  enum { N = 384 };
  float *a = vt_random(N * N, -1, 1);
  kn_vk_buffer *ba = vt_buffer_from(ctx, a, N * N), *bc;
  VT_OK(kn_vk_buffer_create(ctx, N * N * 4, &bc, err));
  sg_error e = SG_ERROR_INIT;
  /* a deadline already in the past */
  kn_vk_batch *bt;
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  VT_OK(kn_vk_matmul(bt, ba, ba, bc, N, N, N, err));
  assert_int_equal(kn_vk_batch_submit(bt, 1, &e), SG_DEADLINE_EXCEEDED);
  assert_non_null(strstr(e.message, "deadline"));
  /* 2.3 GFLOP of dependent matmuls with a 20 us budget: more than a second on lavapipe,
   * still well over 20 us on a big GPU */
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  for (int i = 0; i < 20; i++)
    VT_OK(kn_vk_matmul(bt, ba, ba, bc, N, N, N, err));
  uint64_t t0 = sg_now_ns();
  assert_int_equal(kn_vk_batch_submit(bt, t0 + 20000, &e), SG_DEADLINE_EXCEEDED);
  assert_true(sg_now_ns() - t0 < UINT64_C(500) * 1000000); /* returned at the deadline */
  sg_error_clear(&e);
  /* the context keeps working afterwards */
  float two[2] = {3, 4}, got[2];
  kn_vk_buffer *bt2 = vt_buffer_from(ctx, two, 2), *bo;
  VT_OK(kn_vk_buffer_create(ctx, 8, &bo, err));
  VT_OK(kn_vk_batch_begin(ctx, &bt, err));
  VT_OK(kn_vk_unary(bt, KN_VK_SQUARE, bt2, bo, 2, err));
  VT_OK(kn_vk_batch_submit(bt, 0, err));
  VT_OK(kn_vk_download(ctx, bo, 0, got, 8, err));
  assert_true(got[0] == 9 && got[1] == 16);
  free(a);
  kn_vk_buffer_destroy(ba); /* waits for the abandoned work first */
  kn_vk_buffer_destroy(bc);
  kn_vk_buffer_destroy(bt2);
  kn_vk_buffer_destroy(bo);
}

/* Several threads share one context: one queue (behind its mutex), one pool, one
 * pipeline cache; every thread must get its own right answers. */
typedef struct worker {
  kn_vk_context *ctx;
  int id;
  int failures;
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  enum { N = 5000 };
  for (int round = 0; round < 15; round++) {
    float a[N], b[N], got[N];
    for (int i = 0; i < N; i++) {
      a[i] = (float)(w->id * 1000 + round);
      b[i] = (float)i;
    }
    sg_error e = SG_ERROR_INIT;
    kn_vk_buffer *ba = NULL, *bb = NULL, *bc = NULL;
    kn_vk_batch *bt = NULL;
    kn_vk_shape s = {1, {N}};
    if (kn_vk_buffer_create(w->ctx, sizeof a, &ba, &e) ||
        kn_vk_buffer_create(w->ctx, sizeof a, &bb, &e) ||
        kn_vk_buffer_create(w->ctx, sizeof a, &bc, &e) ||
        kn_vk_upload(w->ctx, ba, 0, a, sizeof a, &e) ||
        kn_vk_upload(w->ctx, bb, 0, b, sizeof b, &e) || kn_vk_batch_begin(w->ctx, &bt, &e) ||
        kn_vk_binary(bt, round % 2 ? KN_VK_SUB : KN_VK_ADD, ba, &s, bb, &s, bc, &e) ||
        kn_vk_batch_submit(bt, 0, &e) || kn_vk_download(w->ctx, bc, 0, got, sizeof got, &e)) {
      w->failures++;
    } else {
      for (int i = 0; i < N; i++)
        if (got[i] != (round % 2 ? a[i] - b[i] : a[i] + b[i]))
          w->failures++;
    }
    sg_error_clear(&e);
    kn_vk_buffer_destroy(ba);
    kn_vk_buffer_destroy(bb);
    kn_vk_buffer_destroy(bc);
  }
  return NULL;
}

static void threads_share_a_context(void **state) {
  worker w[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){*state, i, 0};
    assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(w[i].failures, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(binary_broadcasting),
      cmocka_unit_test(unary_ops),
      cmocka_unit_test(reductions_each_axis),
      cmocka_unit_test(reductions_shared_memory_fallback),
      cmocka_unit_test(reduction_errors),
      cmocka_unit_test(softmax_rows),
      cmocka_unit_test(softmax_each_axis),
      cmocka_unit_test(softmax_shared_memory_fallback),
      cmocka_unit_test(matmul_odd_sizes),
      cmocka_unit_test(matmul_batched_broadcast),
      cmocka_unit_test(dependent_dispatches_one_batch),
      cmocka_unit_test(barriers_only_between_dependent_dispatches),
      cmocka_unit_test(many_batches_reuse_frames),
      cmocka_unit_test(deadline_exceeded),
      cmocka_unit_test(threads_share_a_context),
      /* last: they draw from the shared random stream, the data of the tests above stays */
      cmocka_unit_test(fused_chains_match_op_by_op),
      cmocka_unit_test(fused_chain_errors),
      cmocka_unit_test(reduce_epilogue_matches_two_kernels),
  };
  return cmocka_run_group_tests(tests, vt_setup, vt_teardown);
}
