// SPDX-License-Identifier: Apache-2.0
/*
 * exec_vulkan_int.h — private to graph/vulkan: what the Vulkan executor's files share:
 * the request state (struct gr_vk_exec), device tensors and buffers, and the helpers
 * the op recorders use. The files stand in layers, each using only those below it:
 *   exec_vulkan.c            begin/end, the backend hooks, dispatch, the Vulkan column
 *   exec_vulkan_resident.c   resident tensors and variables on the device
 *   exec_vulkan_dtype.c      NumPy promotion around a recorder
 *   exec_vulkan_arith.c, _layout.c, _adjoint.c, _random.c, _fused.c   the recorders
 *   exec_vulkan_request.c    requests, contexts, buffers, batches, transfers
 */
#ifndef STAGD_GRAPH_EXEC_VULKAN_INT_H
#define STAGD_GRAPH_EXEC_VULKAN_INT_H

#include "gr_vulkan.h"
#include "kn_vulkan.h"

/* Records op on the device. *done false (with SG_OK) means "not for this dtype/shape":
 * the caller runs the CPU kernel instead. */
typedef sg_code (*gr_vk_fn)(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                            bool *done, sg_error *err);
typedef struct gr_vk_op {
  const char *pipeline; /* embedded kernel it records (kn_vk_kernel_names), or "" */
  gr_vk_fn run;
} gr_vk_op;

extern const gr_vk_op gr_vk_binary, gr_vk_unary, gr_vk_reduce, gr_vk_softmax, gr_vk_matmul,
    gr_vk_reshape, gr_vk_transpose, gr_vk_where, gr_vk_cast, gr_vk_join, gr_vk_slice,
    gr_vk_gather, gr_vk_one_hot, gr_vk_fill, gr_vk_arange, gr_vk_random, gr_vk_adjoint, gr_vk_optim;

/* The op table's Vulkan column: the recorder of op's family (exec_vulkan.c); NULL:
 * the op runs on the host (documented in docs/vulkan.md). */
const gr_vk_op *gr_vk_op_of(const gr_op *op);

/* This request's Vulkan state, or NULL when it runs on the CPU (gr_ctx.dev). */
static inline struct gr_vk_exec *gr_vkx(const gr_ctx *ctx) { return (struct gr_vk_exec *)ctx->dev; }

/* Device-resident tensors (exec_vulkan_resident.c). gr_vk_prim hands ops with
 * resident arguments and the variable ops to gr_vkr_prim (gr_vkr_wants); kernel says
 * whether op has a recorder (resident arguments are then borrowed on the device, else
 * read through their host copies). */
typedef struct gr_rbuf gr_rbuf;
bool gr_vkr_wants(const gr_op *op, const gr_val *args, int n);
sg_code gr_vkr_prim(gr_ctx *ctx, const gr_op *op, bool kernel, gr_val *args, int n, gr_val *out,
                    sg_error *err);
struct gr_vk_exec;
/* Resident tensor r as x's request reads it (*out owned): its buffer borrowed as a
 * device tensor, or a host copy when r lives on another device. */
sg_code gr_vkr_import(struct gr_vk_exec *x, gr_resident *r, gr_val *out, sg_error *err);
/* *v (owned) kept on x's device: its tensors, in tuples, records and closures too,
 * become resident; anything else is left alone. */
sg_code gr_vkr_keep(struct gr_vk_exec *x, gr_val *v, sg_error *err);
/* The hooks values use for this backend's device tensors (exec_vulkan.c), and the
 * resident tensors' part of them (exec_vulkan_resident.c). */
extern const gr_device_ops gr_vk_device_ops;
void gr_vkr_resident_free(gr_resident *r);
sg_code gr_vkr_resident_host(gr_resident *r, kn_tensor **out, sg_error *err);
/* The backend's primitive hook (gr_backend.prim). */
sg_code gr_vk_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                   sg_error *err);


typedef struct gr_dbuf {
  kn_vk_buffer *buf;
  uint64_t bytes;
  int rc;       /* live gr_dtensors using it; 0 = on the free list */
  bool clean;   /* no pending dispatch reads it (safe to upload into) */
  /* a resident tensor's buffer (borrowed, or exported by this request): never reused
   * for outputs nor destroyed here; the request's reference goes at its end */
  struct gr_rbuf *res;
} gr_dbuf;

/* A resident tensor's device buffer: reference counted by the resident tensors
 * (reshaped views share it) and the requests that borrow it. */
struct gr_rbuf {
  atomic_int rc;
  int device;
  kn_vk_context *vk; /* a reference: the buffer's context outlives the buffer */
  kn_vk_buffer *buf;
  uint64_t bytes;
};
/* A new resident buffer (one reference) taking over buf, on x's device. */
gr_rbuf *gr_vkx_rbuf_new(struct gr_vk_exec *x, kn_vk_buffer *buf, uint64_t bytes);
gr_rbuf *gr_vkx_rbuf_retain(gr_rbuf *rb);
void gr_vkx_rbuf_release(gr_rbuf *rb);

struct gr_dtensor {
  const gr_device_ops *ops; /* first: values reach the backend through it (gr_dtensor_ops) */
  int rc;
  gr_dbuf *db;
  kn_dtype dtype;
  int ndim;
  int64_t shape[KN_MAX_DIMS];
  int64_t size;
  kn_tensor *host; /* cached download, or the uploaded source */
};
typedef struct gr_dtensor gr_dtensor;
enum { UPLOAD_CACHE = 64, SCALAR_CACHE = 32 };
/* A batch is sent once it holds this many dispatches (without waiting: the host
 * records the next one meanwhile), so a long loop with no host read in it neither
 * grows one command buffer without bound nor keeps every buffer it uploads into
 * pinned until its end. */
enum { BATCH_MAX_DISPATCHES = 1024 };

struct gr_vk_exec {
  int device;
  kn_vk_context *vk;
  kn_vk_batch *batch; /* NULL until the first dispatch after a submit */
  kn_vk_inflight *inflight; /* a full batch the device may still be running, or NULL */
  SG_VEC(gr_dbuf *) bufs;
  SG_VEC(gr_dtensor *) tensors;
  uint64_t deadline_ns;
  /* host tensors already on the device (weights used by several ops or loop
   * iterations are uploaded once); the cache holds a reference to each */
  struct { const kn_tensor *host; gr_dtensor *dev; } uploaded[UPLOAD_CACHE];
  int next_slot;
  /* Python numbers as one-element tensors (a loop's hyperparameters are uploaded
   * once, not once per iteration), keyed by dtype and value */
  struct { kn_dtype dt; uint8_t tag; uint64_t bits; gr_dtensor *dev; } scalars[SCALAR_CACHE];
  int next_scalar;
  gr_vk_stats st; /* this request's counts (added to `totals` at the end) */
};

/* Opens a request on device ("auto", "vulkan[:N]"; *out NULL: it runs on the CPU):
 * the --device auto policy is decided once per process; SG_UNAVAILABLE / SG_NOT_FOUND
 * when the device cannot be had. */
sg_code gr_vkx_begin(const char *device, uint64_t deadline_ns, struct gr_vk_exec **out,
                     sg_error *err);
/* Ends request x (NULL: returns rc): when rc is SG_OK the device tensors in *result come
 * home (one submit, one download each); every buffer of the request is freed. */
sg_code gr_vkx_end(struct gr_vk_exec *x, gr_val *result, sg_code rc, sg_error *err);
/* A device or resident tensor *v (owned; gv_map_leaves' leaf function, arg the request)
 * replaced by its host copy. */
sg_code gr_vkx_host_leaf(void *arg, gr_val *v, sg_error *err);
/* vals[0..n) as the CPU kernels take them: device tensors, also inside tuples and
 * records, become host copies. vals[i] is replaced by an owned value where owned[i] is
 * set (release it after use), by a borrowed host tensor otherwise. */
sg_code gr_vkx_args_to_host(struct gr_vk_exec *x, gr_val *vals, int n, bool *owned, sg_error *err);
/* A device buffer of >= bytes bytes from the request's free list or new. */
sg_code gr_vkx_dbuf_get(struct gr_vk_exec *x, uint64_t bytes, bool for_upload, gr_dbuf **out,
                        sg_error *err);
gr_dtensor *gr_vkx_dt_new(struct gr_vk_exec *x, gr_dbuf *db, kn_dtype dt, int ndim,
                          const int64_t *shape);
void gr_vkx_dt_retain(gr_dtensor *t);
void gr_vkx_dt_release(gr_dtensor *t);
/* A new device tensor (buffer sized for dt: bools take whole 32-bit words). */
sg_code gr_vkx_new_output(struct gr_vk_exec *x, kn_dtype dt, int ndim, const int64_t *shape,
                          gr_dtensor **out, sg_error *err);
/* The batch being recorded (begun on first use). */
sg_code gr_vkx_batch(struct gr_vk_exec *x, kn_vk_batch **out, sg_error *err);
sg_code gr_vkx_flush(struct gr_vk_exec *x, sg_error *err);
sg_code gr_vkx_upload(struct gr_vk_exec *x, const gr_val *v, kn_dtype dt, gr_dtensor **out,
                      sg_error *err);
sg_code gr_vkx_download(struct gr_vk_exec *x, gr_dtensor *d, sg_error *err);
/* v as a device tensor of dtype dt: itself when already on the device (*tmp false),
 * else uploaded (*tmp true: release it after use). */
sg_code gr_vkx_operand_as(struct gr_vk_exec *x, const gr_val *v, kn_dtype dt, gr_dtensor **out,
                          bool *tmp, sg_error *err);
sg_code gr_vkx_operand(struct gr_vk_exec *x, const gr_val *v, gr_dtensor **out, bool *tmp,
                       sg_error *err);
bool gr_vkx_is_f32(const gr_val *v);
/* The kernels' element type of a dtype (float16: KN_VK_F16, storage only). */
int gr_vkx_elem_of(kn_dtype dt);
bool gr_vkx_tensor_dtype(const gr_val *v, kn_dtype *dt);
/* A tensor value's dtype and shape, on the device or the host; false for anything else
 * (resident tensors included: gr_vk_prim imports them before a recorder sees them). */
bool gr_vkx_tensor_meta(const gr_val *v, kn_dtype *dt, int *nd, const int64_t **shape);
bool gr_vkx_weak_scalar_fits(const gr_val *v, kn_dtype dt);
kn_vk_shape gr_vkx_vshape(const gr_dtensor *d);
/* Ends a recorder: on success out = the device value r and *done = true; on error r is
 * released. */
sg_code gr_vkx_finish(gr_dtensor *r, sg_code rc, gr_val *out, bool *done);
/* Whether the binary / unary recorder has a kernel for op code `code` with both
 * operands (the operand) of dtype dt and a result of the kernel's own rules. */
bool gr_vkx_binary_kernel(struct gr_vk_exec *x, int code, kn_dtype dt);
bool gr_vkx_unary_kernel(struct gr_vk_exec *x, int code, kn_dtype dt);
/* The kernels' op (kn_vk_binop / kn_vk_unop) of a kn_binop / kn_unop code; -1: none
 * (exec_vulkan_arith.c). */
int gr_vkx_binop(int code);
int gr_vkx_unop(int code);
/* The backend's fused-chain hook (gr_backend.fused; exec_vulkan_fused.c). */
sg_code gr_vkx_fused(gr_ctx *ctx, const gr_fused *f, gr_val *out, bool *done, sg_error *err);
/* The backend's epilogue hook (gr_backend.epilogue; exec_vulkan_fused.c): a float32
 * matmul whose elementwise chain runs in its kernel's stores. */
sg_code gr_vkx_epilogue(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, const gr_fused *f, gr_val *out,
                        bool *done, sg_error *err);
/* A matmul on the device (exec_vulkan_arith.c): its operands (device or host tensors),
 * dtype, kernel element type, transposition (a matmul row's op->code), sizes, the
 * batch strides of its operands (0: one matrix for every batch) and the result's shape. */
typedef struct gr_vkx_mm {
  const gr_val *a, *b;
  kn_dtype dt;
  int et, trans;
  int64_t m, k, n, batch, stride_a, stride_b;
  int ond;
  int64_t oshape[KN_MAX_DIMS];
} gr_vkx_mm;
/* The matmul op computes on args (resident ones imported first), where a device kernel
 * can: false leaves it to the CPU kernel (other broadcasts, dtypes, its errors). */
bool gr_vkx_matmul_plan(struct gr_vk_exec *x, const gr_op *op, const gr_val *args, gr_vkx_mm *mm);
/* The [outer, len, inner] view (*s, *axis: the reduced one) of a reduction of tensor a
 * (device or host) over *axis (has_axis false: all of it), the result's shape, the
 * reduced length and the results' count; false: no tensor, or the axis is out of range
 * (the CPU kernel reports it). */
bool gr_vkx_reduce_view(const gr_val *a, bool has_axis, int64_t *axis, kn_vk_shape *s, int64_t *oshape, int *ond,
                        int64_t *len, int64_t *nout);
/* Records mm (with epilogue epi, float32 and k > 0, when not NULL) into a new device
 * tensor: *out, *done. */
sg_code gr_vkx_matmul_record(struct gr_vk_exec *x, const gr_vkx_mm *mm, const kn_vk_epilogue *epi,
                             gr_val *out, bool *done, sg_error *err);
/* exec_vulkan_dtype.c: *out = d cast to dtype dt (a new device tensor, one dispatch). */
sg_code gr_vkx_cast_to(struct gr_vk_exec *x, gr_dtensor *d, kn_dtype dt, gr_dtensor **out,
                       sg_error *err);
/* exec_vulkan_dtype.c: runs op's recorder v after NumPy promotion on the device
 * (operands cast to the computing dtype, the result cast to the CPU executor's dtype). */
sg_code gr_vkx_dtype_run(gr_ctx *ctx, const gr_op *op, const gr_vk_op *v, gr_val *args, int n,
                         gr_val *out, bool *done, sg_error *err);
/* Bytes of n elements of dt on the device. */
uint64_t gr_vkx_bytes(kn_dtype dt, int64_t n);

#endif /* STAGD_GRAPH_EXEC_VULKAN_INT_H */
