/*
 * exec_vulkan_int.h — what the Vulkan executor's files share (private to graph/):
 * the request state (struct gr_vk_exec), device tensors and buffers, and the helpers
 * the op recorders use. exec_vulkan.c holds the request, buffer and interpreter hooks
 * plus the arithmetic, reduction and matmul recorders; exec_vulkan_layout.c the
 * where / cast / layout / constructor recorders; exec_vulkan_dtype.c NumPy promotion.
 */
#ifndef STAGD_GRAPH_EXEC_VULKAN_INT_H
#define STAGD_GRAPH_EXEC_VULKAN_INT_H

#include "exec_vulkan.h"
#include "kn_vulkan.h"

typedef struct gr_dbuf {
  kn_vk_buffer *buf;
  uint64_t bytes;
  int rc;       /* live gr_dtensors using it; 0 = on the free list */
  bool clean;   /* no pending dispatch reads it (safe to upload into) */
  /* a resident tensor's buffer (borrowed, or exported by this request): never reused
   * for outputs nor destroyed here; the request's reference goes at its end */
  struct gr_rbuf *res;
} gr_dbuf;
void gr_vkr_rbuf_release(struct gr_rbuf *rb);

struct gr_dtensor {
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

/* A device buffer of >= bytes bytes from the request's free list or new. */
sg_code gr_vkx_dbuf_get(struct gr_vk_exec *x, uint64_t bytes, bool for_upload, gr_dbuf **out,
                        sg_error *err);
gr_dtensor *gr_vkx_dt_new(struct gr_vk_exec *x, gr_dbuf *db, kn_dtype dt, int ndim,
                          const int64_t *shape);
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
bool gr_vkx_weak_scalar_fits(const gr_val *v, kn_dtype dt);
kn_vk_shape gr_vkx_vshape(const gr_dtensor *d);
/* Ends a recorder: on success out = the device value r and *done = true; on error r is
 * released. */
sg_code gr_vkx_finish(gr_dtensor *r, sg_code rc, gr_val *out, bool *done);
/* Whether the binary / unary recorder has a kernel for op code `code` with both
 * operands (the operand) of dtype dt and a result of the kernel's own rules. */
bool gr_vkx_binary_kernel(struct gr_vk_exec *x, int code, kn_dtype dt);
bool gr_vkx_unary_kernel(struct gr_vk_exec *x, int code, kn_dtype dt);
/* exec_vulkan_dtype.c: *out = d cast to dtype dt (a new device tensor, one dispatch). */
sg_code gr_vkx_cast_to(struct gr_vk_exec *x, gr_dtensor *d, kn_dtype dt, gr_dtensor **out,
                       sg_error *err);
/* exec_vulkan_dtype.c: runs op's recorder after NumPy promotion on the device (operands
 * cast to the computing dtype, the result cast to the CPU executor's dtype). */
sg_code gr_vkx_dtype_run(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                         bool *done, sg_error *err);
/* Bytes of n elements of dt on the device. */
uint64_t gr_vkx_bytes(kn_dtype dt, int64_t n);

#endif /* STAGD_GRAPH_EXEC_VULKAN_INT_H */
