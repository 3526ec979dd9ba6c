// SPDX-License-Identifier: Apache-2.0
/*
 * kn_vulkan.h — the public API of the Vulkan compute backend (kernels/vulkan/).
 *
 * How the pieces fit:
 *   - the loader is reached through volk at run time (no link-time libvulkan): when no
 *     loader or no driver is present every entry point returns SG_UNAVAILABLE and the
 *     caller falls back to the CPU backend;
 *   - kn_vk_enumerate lists the physical devices ("vulkan:0", "vulkan:1", ...) and
 *     kn_vk_choose_device turns a `--device` string into a device index (or the CPU);
 *   - a kn_vk_context is one logical device: a compute queue behind a mutex, a
 *     sub-allocating memory pool, and a pipeline cache persisted on disk;
 *   - kn_vk_buffer is a range of device memory; kn_vk_upload / kn_vk_download move
 *     bytes (direct mapping where device memory is host-visible, else staging);
 *   - a kn_vk_batch records many dispatches into ONE command buffer (barriers between
 *     dependent dispatches are inserted automatically), is submitted once, and is
 *     waited on with a deadline.
 *   - kernels are named pipelines ("binary", "unary", "compare", "cast", "reduce",
 *     "argmax", "matmul" and their per-type variants, "where", "softmax",
 *     "strided_copy", "gather", "one_hot", "fill", "arange_*"; kn_vk_kernel_names)
 *     launched generically with kn_vk_dispatch, or through the typed helpers at the
 *     end of this header (kn_vk_binary, kn_vk_compare, kn_vk_matmul_typed, ...).
 *
 * Thread safety: contexts may be shared between threads; a batch belongs to one
 * thread at a time. Prefix: kn_vk_.
 */
#ifndef STAGD_KERNELS_KN_VULKAN_H
#define STAGD_KERNELS_KN_VULKAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sg.h"

/* ------------------------------------------------------------ devices */

typedef enum kn_vk_device_type {
  KN_VK_DEVICE_OTHER = 0,
  KN_VK_DEVICE_INTEGRATED_GPU,
  KN_VK_DEVICE_DISCRETE_GPU,
  KN_VK_DEVICE_VIRTUAL_GPU,
  KN_VK_DEVICE_CPU, /* lavapipe / SwiftShader: Vulkan running on the host CPU */
} kn_vk_device_type;

#define KN_VK_MAX_HEAPS 16

typedef struct kn_vk_device_info {
  int index;      /* N in "vulkan:N" */
  char name[256]; /* "llvmpipe (LLVM 15.0.6, 256 bits)" */
  kn_vk_device_type type;
  uint32_t vendor_id;
  const char *vendor_name; /* static string: "NVIDIA", "AMD", "Intel", "Mesa", ... */
  uint32_t device_id;
  char driver_name[256]; /* "llvmpipe" (empty when the driver does not say) */
  char driver_info[256]; /* "Mesa 22.3.6 (LLVM 15.0.6)" */
  uint32_t api_version;  /* VK_MAKE_API_VERSION encoding */
  uint8_t uuid[16];      /* pipelineCacheUUID */
  int heap_count;
  uint64_t heap_size[KN_VK_MAX_HEAPS];
  bool heap_device_local[KN_VK_MAX_HEAPS];
  uint64_t device_local_bytes; /* sum of device-local heaps */
  bool unified_memory;         /* a device-local memory type is host-visible too */
  uint32_t subgroup_size;
  bool subgroup_arithmetic; /* subgroupAdd/Max in compute shaders */
  bool cooperative_matrix;  /* VK_KHR_ or VK_NV_cooperative_matrix offered */
  bool cooperative_matrix_f32; /* ... with a float32 x float32 -> float32 shape */
  /* VK_NV_cooperative_matrix with the 16x16x16 float16 x float16 -> float32 subgroup
   * shape of matmul_coop (and vulkanMemoryModel, which its SPIR-V declares) */
  bool cooperative_matrix_f16;
  /* the same shape, cooperativeMatrix and vulkanMemoryModel through
   * VK_KHR_cooperative_matrix (matmul_coop_khr, the NV kernel rewritten at build time) */
  bool cooperative_matrix_khr_f16;
  bool float16;                 /* shaderFloat16 + storageBuffer16BitAccess */
  bool subgroup_extended_types; /* subgroup arithmetic on int64 (and 8/16-bit) values */
  bool float64, int64;          /* shaderFloat64, shaderInt64 */
  uint32_t max_workgroup_size[3];
  uint32_t max_workgroup_invocations;
  uint32_t max_workgroup_count[3];
  uint32_t max_shared_memory_bytes;
  uint64_t max_storage_buffer_range;
  uint32_t max_push_constants_bytes;
} kn_vk_device_info;

const char *kn_vk_device_type_name(
    kn_vk_device_type t); /* "discrete", "integrated", "virtual", "cpu", "other" */

/* Appends d as one JSON object: {"name":"vulkan:0","description":"llvmpipe ...",
 * "type":"cpu","vendor":"Mesa","driver":"llvmpipe","driver_info":...,"api_version":
 * "1.3.230","memory_bytes":...,"heaps":[...],"subgroup_size":8,...}. */
void kn_vk_device_info_json(const kn_vk_device_info *d, sg_buf *out);

/* Lists the Vulkan devices (described once per instance; this is a copy). *out is
 * malloc'd (free() it); *count may be 0 with SG_OK
 * when a loader exists but offers no device. SG_UNAVAILABLE when there is no loader or
 * the instance cannot be created. */
sg_code kn_vk_enumerate(kn_vk_device_info **out, size_t *count, sg_error *err);

/* The `--device auto` policy over a list: the first discrete GPU, else the first
 * integrated GPU, else -1 (= the CPU backend; CPU-type Vulkan devices and virtual GPUs
 * are only used when named explicitly). */
int kn_vk_pick_auto(const kn_vk_device_info *devs, size_t count);

/* Parses a `--device` value: "auto", "cpu", "vulkan" (the best Vulkan device of any
 * type) or "vulkan:N". Sets *vulkan_index to the device to open, or -1 for the CPU.
 * "auto" never fails for lack of Vulkan: it logs one line and picks the CPU. Explicit
 * Vulkan requests fail with SG_UNAVAILABLE / SG_NOT_FOUND; bad syntax is
 * SG_INVALID_ARGUMENT. */
sg_code kn_vk_choose_device(const char *spec, int *vulkan_index, sg_error *err);

/* Destroys the process-wide instance (all contexts must be gone). Optional: for leak
 * checkers and tests that change the environment between runs. */
void kn_vk_shutdown(void);

/* ------------------------------------------------------------ contexts */

typedef struct kn_vk_context kn_vk_context;

/* Matmul kernel variants (kernels/vulkan/kernels_matmul.c):
 *   tiled    — 64x64 shared-memory tiles, 4x4 register blocks (every dtype, every device);
 *   blocked  — 128x128 double-buffered tiles, 8x8 register blocks, 4-vector loads where
 *              K and N are multiples of 4 (float32, float64, float16; large products);
 *   subgroup — one subgroup per output element, subgroupAdd over a K split (skinny
 *              shapes: matrix @ vector, n <= 4 with a long K);
 *   coop     — cooperative-matrix units (VK_KHR_cooperative_matrix, else
 *              VK_NV_cooperative_matrix: kn_vk_coop_choice), float16 only: float32
 *              inputs are never rounded to float16. */
typedef enum kn_vk_matmul_variant {
  KN_VK_MATMUL_AUTO = 0,
  KN_VK_MATMUL_TILED,
  KN_VK_MATMUL_SUBGROUP,
  KN_VK_MATMUL_COOP,
  KN_VK_MATMUL_BLOCKED,
  KN_VK_MATMUL_NVARIANTS
} kn_vk_matmul_variant;

/* Which cooperative-matrix extension the coop variant's kernel uses: matmul_coop_khr
 * (VK_KHR_cooperative_matrix) or matmul_coop (VK_NV_cooperative_matrix). */
typedef enum kn_vk_coop_flavour {
  KN_VK_COOP_AUTO = 0, /* KHR where offered, else NV */
  KN_VK_COOP_NV,
  KN_VK_COOP_KHR
} kn_vk_coop_flavour;

typedef struct kn_vk_options {
  /* Where the VkPipelineCache is persisted. NULL → $XDG_CACHE_HOME/stagd or
   * ~/.cache/stagd; "" → no persistence. */
  const char *pipeline_cache_dir;
  uint64_t pool_block_bytes; /* size of the VkDeviceMemory blocks; 0 → 64 MiB */
  bool force_staging;        /* never map device memory directly (tests the staging path) */
  bool no_subgroup_ops;      /* use the shared-memory reductions even where subgroup
                                arithmetic is offered (tests the fallback) */
  /* Matmul variant for every product; AUTO → the environment's
   * STAGD_VK_MATMUL=auto|tiled|subgroup|coop|blocked, else the shape-based choice. */
  kn_vk_matmul_variant matmul_variant;
  /* The blocked kernel's step along K: 4, 8 or 16 (halved where the device's shared
   * memory is too small); 0 → the environment's STAGD_VK_MATMUL_BK, else 16. */
  uint32_t matmul_bk;
  /* Cooperative-matrix extension; AUTO → the environment's STAGD_VK_COOP=nv|khr, else
   * KHR where offered. Only the chosen extension is enabled on the device. */
  kn_vk_coop_flavour coop_flavour;
} kn_vk_options;

/* Opens device `index` (as listed by kn_vk_enumerate). opts may be NULL. */
sg_code kn_vk_context_create(int index, const kn_vk_options *opts, kn_vk_context **out,
                             sg_error *err);
/* Waits for outstanding work, saves the pipeline cache, frees everything. NULL is ok. */
void kn_vk_context_destroy(kn_vk_context *ctx);
/* Reference counting for contexts shared by several users (a new context holds one
 * reference): release destroys it when the last one goes. Both take NULL. */
kn_vk_context *kn_vk_context_retain(kn_vk_context *ctx);
void kn_vk_context_release(kn_vk_context *ctx);
/* Whether the device was lost (VK_ERROR_DEVICE_LOST): the context then refuses all
 * work with SG_UNAVAILABLE, its buffers' contents are gone (they may still be
 * destroyed), and only a new context reaches the device again. */
bool kn_vk_context_lost(const kn_vk_context *ctx);
/* Test-only fault injection (kernels/vulkan/fault.c, docs/vulkan.md): spec as the
 * environment's STAGD_VK_FAULT, "KIND@SITE:N[,...]" with KIND lost | oom and SITE
 * submit | wait | alloc | map: the N-th call at SITE, counted from now, fails once with
 * VK_ERROR_DEVICE_LOST / VK_ERROR_OUT_OF_DEVICE_MEMORY. NULL or "" disarms it. */
sg_code kn_vk_fault_set(const char *spec, sg_error *err);
const kn_vk_device_info *kn_vk_context_info(const kn_vk_context *ctx);
/* Whether buffers are mapped directly (no staging copies). */
bool kn_vk_context_direct_mapped(const kn_vk_context *ctx);

typedef struct kn_vk_memory_stats {
  uint64_t block_count;
  uint64_t block_bytes;  /* VkDeviceMemory allocated */
  uint64_t used_bytes;   /* handed out to live buffers (aligned sizes) */
  uint64_t buffer_count; /* live buffers */
} kn_vk_memory_stats;
void kn_vk_memory_stats_get(kn_vk_context *ctx, kn_vk_memory_stats *out);

/* ------------------------------------------------------------ buffers */

typedef struct kn_vk_buffer kn_vk_buffer;

/* A device-local buffer of `bytes` bytes (0 is allowed: an empty tensor). Out of device
 * memory → SG_RESOURCE_EXHAUSTED. */
sg_code kn_vk_buffer_create(kn_vk_context *ctx, uint64_t bytes, kn_vk_buffer **out, sg_error *err);
void kn_vk_buffer_destroy(kn_vk_buffer *buf); /* NULL is ok; must not be in flight */
uint64_t kn_vk_buffer_size(const kn_vk_buffer *buf);

/* Synchronous host ↔ device copies (wait for earlier submitted batches first). */
sg_code kn_vk_upload(kn_vk_context *ctx, kn_vk_buffer *dst, uint64_t offset, const void *src,
                     uint64_t bytes, sg_error *err);
sg_code kn_vk_download(kn_vk_context *ctx, const kn_vk_buffer *src, uint64_t offset, void *dst,
                       uint64_t bytes, sg_error *err);

/* ------------------------------------------------------------ batches */

typedef struct kn_vk_batch kn_vk_batch;

sg_code kn_vk_batch_begin(kn_vk_context *ctx, kn_vk_batch **out, sg_error *err);
/* Submits once and waits. deadline_ns is an absolute sg_now_ns() time, 0 = none;
 * passing it → SG_DEADLINE_EXCEEDED (the work is left to finish in the background and
 * its resources are reclaimed later). Out of device memory → SG_RESOURCE_EXHAUSTED;
 * device lost → SG_UNAVAILABLE (the context stays unusable). The batch is consumed in
 * every case. */
sg_code kn_vk_batch_submit(kn_vk_batch *b, uint64_t deadline_ns, sg_error *err);
/* Submits without waiting: *out is the submission in flight, to be waited for with
 * kn_vk_inflight_wait (exactly once; its errors are kn_vk_batch_submit's). The batch is
 * consumed in every case. A batch recorded while another is in flight and touching its
 * buffers starts with kn_vk_batch_after_inflight (one barrier against everything
 * submitted before it). */
typedef struct kn_vk_inflight kn_vk_inflight;
sg_code kn_vk_batch_send(kn_vk_batch *b, kn_vk_inflight **out, sg_error *err);
sg_code kn_vk_inflight_wait(kn_vk_inflight *w, uint64_t deadline_ns, sg_error *err);
void kn_vk_batch_after_inflight(kn_vk_batch *b);
/* Drops a batch that was never submitted. NULL is ok. */
void kn_vk_batch_discard(kn_vk_batch *b);
size_t kn_vk_batch_dispatch_count(const kn_vk_batch *b);
/* Pipeline barriers recorded so far (for tests and profiling). */
size_t kn_vk_batch_barrier_count(const kn_vk_batch *b);

/* A generic dispatch: the pipeline is named (see kn_vk_kernel_names), its storage
 * buffers are bound in order 0..n-1, each marked written or read-only (the runner uses
 * this to place barriers), push constants are up to 128 bytes, spec[] fills
 * specialization constants 0..nspec-1 (constant 0..2 are the workgroup size). */
#define KN_VK_MAX_BINDINGS 8
#define KN_VK_MAX_SPEC 40 /* fused.comp: workgroup, step count, broadcasts, 32 steps */
#define KN_VK_PUSH_BYTES 128

typedef struct kn_vk_binding {
  kn_vk_buffer *buffer;
  bool written;
} kn_vk_binding;

typedef struct kn_vk_dispatch_desc {
  const char *kernel;
  const kn_vk_binding *bindings;
  int nbindings;
  const void *push;
  uint32_t push_bytes;
  const uint32_t *spec;
  int nspec;
  uint32_t groups[3];
} kn_vk_dispatch_desc;

sg_code kn_vk_dispatch(kn_vk_batch *b, const kn_vk_dispatch_desc *d, sg_error *err);
/* NULL-terminated list of embedded kernels. */
const char *const *kn_vk_kernel_names(void);

/* ------------------------------------------------------------ kernels (float32) */

#define KN_VK_MAX_DIMS 8

typedef struct kn_vk_shape {
  int ndim; /* 0 = scalar */
  int64_t dims[KN_VK_MAX_DIMS];
} kn_vk_shape;

int64_t kn_vk_shape_size(const kn_vk_shape *s);

typedef enum kn_vk_binop {
  KN_VK_ADD = 0,
  KN_VK_SUB,
  KN_VK_MUL,
  KN_VK_DIV,
  KN_VK_MAXIMUM,
  KN_VK_MINIMUM,
  KN_VK_POW,
  KN_VK_FLOORDIV, /* Python's //: rounds toward -inf; integer x // 0 is 0 */
  KN_VK_MOD,      /* Python's %: the divisor's sign; integer x % 0 is 0 */
  KN_VK_NBINOPS
} kn_vk_binop;

typedef enum kn_vk_unop {
  KN_VK_NEG = 0,
  KN_VK_EXP,
  KN_VK_LOG,
  KN_VK_TANH,
  KN_VK_RELU,
  KN_VK_SQRT,
  KN_VK_ABS,
  KN_VK_SIGMOID,
  KN_VK_SQUARE,
  KN_VK_RECIPROCAL,
  KN_VK_SIN,
  KN_VK_COS,
  KN_VK_NUNOPS
} kn_vk_unop;

typedef enum kn_vk_reduce_op {
  KN_VK_REDUCE_SUM = 0,
  KN_VK_REDUCE_MAX,
  KN_VK_REDUCE_MIN,
  KN_VK_REDUCE_MEAN /* float32 and float16: the float32 sum times float32(1 / len) */
} kn_vk_reduce_op;

/* NumPy broadcasting of two shapes; SG_INVALID_ARGUMENT when incompatible. */
sg_code kn_vk_broadcast_shape(const kn_vk_shape *a, const kn_vk_shape *b, kn_vk_shape *out,
                              sg_error *err);

/* out = a OP b with broadcasting; `out` must hold the broadcast shape. */
sg_code kn_vk_binary(kn_vk_batch *bt, kn_vk_binop op, kn_vk_buffer *a, const kn_vk_shape *as,
                     kn_vk_buffer *b, const kn_vk_shape *bs, kn_vk_buffer *out, sg_error *err);
/* out = OP(a) over n elements. */
sg_code kn_vk_unary(kn_vk_batch *bt, kn_vk_unop op, kn_vk_buffer *a, kn_vk_buffer *out, int64_t n,
                    sg_error *err);
/* Reduces `axis` of a tensor of shape s (out has s without that axis). An empty
 * reduced axis gives 0 for sum and -inf/+inf for max/min. */
sg_code kn_vk_reduce(kn_vk_batch *bt, kn_vk_reduce_op op, kn_vk_buffer *a, const kn_vk_shape *s,
                     int axis, kn_vk_buffer *out, sg_error *err);
/* Element types of the typed elementwise kernels (binary_*, unary_*). float64 needs
 * shaderFloat64 and int64 shaderInt64 (enabled at context creation where offered). */
/* KN_VK_F16 (halves): casts (cast_f16), the bit copies, the elementwise binary, unary
 * and compare kernels (binary_f16, unary_f16, compare_f16: halves in 32-bit words
 * converted in software, float32 arithmetic, rounded to nearest even like NumPy's
 * float16 ufuncs; no device feature needed) and matmul (f16 storage, f32 accumulation;
 * needs shaderFloat16 + storageBuffer16BitAccess) read and write it, and so do the
 * reductions, argmax and softmax (reduce_f16, argmax_f16, softmax_f16 and their subgroup
 * variants: float32 accumulation in the float32 kernel's order, one rounding at the end,
 * bit for bit the float32 kernel between casts; no device feature needed). */
typedef enum kn_vk_elem {
  KN_VK_F32 = 0, KN_VK_F64, KN_VK_I32, KN_VK_I64, KN_VK_BOOL, KN_VK_F16
} kn_vk_elem;
/* Bool tensors are bytes (0/1), read and written by shaders as 32-bit words: a buffer
 * holding n bools must have room for kn_vk_bool_bytes(n) bytes. */
static inline uint64_t kn_vk_bool_bytes(int64_t n) { return ((uint64_t)n + 3u) & ~(uint64_t)3u; }
/* Bytes a buffer needs for n elements of e: bools and halves fill whole 32-bit words. */
static inline uint64_t kn_vk_elem_bytes(kn_vk_elem e, int64_t n) {
  return e == KN_VK_BOOL ? kn_vk_bool_bytes(n)
         : e == KN_VK_F16 ? kn_vk_bool_bytes(2 * n)
                          : (uint64_t)n * (e == KN_VK_F64 || e == KN_VK_I64 ? 8u : 4u);
}
size_t kn_vk_elem_size(kn_vk_elem e);
bool kn_vk_elem_supported(const kn_vk_context *ctx, kn_vk_elem e);
/* Which ops exist per element type: exp/log/tanh/sigmoid/sin/cos/sqrt/reciprocal/div
 * are float32, float64 (through f64_math.glsl) and float16 (in float32), pow every
 * numeric type; bool has none (compare/cast handle it). */
bool kn_vk_binary_supported(kn_vk_elem e, kn_vk_binop op);
bool kn_vk_unary_supported(kn_vk_elem e, kn_vk_unop op);
/* As kn_vk_binary / kn_vk_unary for element type et; SG_UNIMPLEMENTED when the pair
 * (type, op) has no kernel or the device lacks the type. */
sg_code kn_vk_binary_typed(kn_vk_batch *bt, kn_vk_elem et, kn_vk_binop op, kn_vk_buffer *a,
                           const kn_vk_shape *as, kn_vk_buffer *b, const kn_vk_shape *bs,
                           kn_vk_buffer *out, sg_error *err);
sg_code kn_vk_unary_typed(kn_vk_batch *bt, kn_vk_elem et, kn_vk_unop op, kn_vk_buffer *a,
                          kn_vk_buffer *out, int64_t n, sg_error *err);
/* A chain of float32 elementwise ops in one dispatch (fused.comp: one pipeline per
 * chain, specialised from one module): step s computes op(a) (unary: a kn_vk_unop)
 * or op(a, b) (a kn_vk_binop); an operand is KN_VK_FUSED_PREV (the previous step's
 * value; not in step 0), 0..nins-1 (ins[k]) or KN_VK_FUSED_SCALAR(k) (scalars[k], the
 * same for every element). ins[k] holds in_sizes[k] floats (in_sizes NULL: all n): n,
 * or fewer, broadcast: element i reads ins[k][(i / in_inners[k]) % in_sizes[k]]
 * (in_inners NULL: all 1; size * inner divides n) — NumPy's broadcasting of a shape
 * whose dims other than 1 are one run of the output's axes: a bias row has inner 1, a
 * column [R, 1] against [R, C] inner C. out[0, n) gets the last step's values: the bits the ops give one by one
 * (kn_vk_unary / kn_vk_binary, which read each operand from memory: no optimisation of
 * the driver's reaches across steps or sees a step's two operands as one value). At
 * most KN_VK_FUSED_STEPS steps, KN_VK_FUSED_INPUTS buffers (at least one) and
 * KN_VK_FUSED_SCALARS scalars; SG_INVALID_ARGUMENT otherwise. */
enum { KN_VK_FUSED_STEPS = 32, KN_VK_FUSED_INPUTS = 7, KN_VK_FUSED_SCALARS = 15 };
#define KN_VK_FUSED_PREV (-1)
#define KN_VK_FUSED_SCALAR(k) (KN_VK_FUSED_INPUTS + (k))
typedef struct kn_vk_fused_step {
  bool unary;
  int op;
  int a, b;
} kn_vk_fused_step;
sg_code kn_vk_fused_f32(kn_vk_batch *bt, const kn_vk_fused_step *steps, int nsteps,
                        kn_vk_buffer *const *ins, const int64_t *in_sizes, const int64_t *in_inners,
                        int nins, const float *scalars, int nscalars, kn_vk_buffer *out, int64_t n,
                        sg_error *err);
/* out = the transposition of `a` (shape s, elements of elem_bytes = 1, 2, 4 or 8 bytes,
 * copied as bits): out's dim i is s's dim perm[i]. */
sg_code kn_vk_transpose(kn_vk_batch *bt, kn_vk_buffer *a, const kn_vk_shape *s, const int *perm,
                        size_t elem_bytes, kn_vk_buffer *out, sg_error *err);
/* Softmax along the last axis of a [rows, cols] view. */
sg_code kn_vk_softmax(kn_vk_batch *bt, kn_vk_buffer *a, int64_t rows, int64_t cols,
                      kn_vk_buffer *out, sg_error *err);
/* Softmax (log_ false) or log_softmax along the middle axis of an [outer, len, inner]
 * float32 view; the subgroup variant where the device offers subgroup arithmetic. */
sg_code kn_vk_softmax_axis(kn_vk_batch *bt, kn_vk_buffer *a, int64_t outer, int64_t len,
                           int64_t inner, bool log_, kn_vk_buffer *out, sg_error *err);
/* The same on float32, float64 (f64_math.glsl's exp and log) or float16 elements
 * (float32 arithmetic, rounded once). */
sg_code kn_vk_softmax_typed(kn_vk_batch *bt, kn_vk_elem e, kn_vk_buffer *a, int64_t outer, int64_t len,
                            int64_t inner, bool log_, kn_vk_buffer *out, sg_error *err);
/* c[M,N] = a[M,K] @ b[K,N], row-major, float32. */
sg_code kn_vk_matmul(kn_vk_batch *bt, kn_vk_buffer *a, kn_vk_buffer *b, kn_vk_buffer *c, int64_t m,
                     int64_t n, int64_t k, sg_error *err);
/* `batch` products c[z] = a[z] @ b[z] of element type et (float32, float64, int32,
 * int64, float16): a[z] starts at z * stride_a elements (0: one matrix for every z),
 * b[z] at z * stride_b, c[z] at z * m * n. The kernel variant is
 * kn_vk_matmul_choice(shape, et, device, the context's forced variant); a forced
 * variant the device or dtype lacks is SG_FAILED_PRECONDITION with the reason. */
sg_code kn_vk_matmul_typed(kn_vk_batch *bt, kn_vk_elem et, kn_vk_buffer *a, kn_vk_buffer *b,
                           kn_vk_buffer *c, int64_t batch, int64_t m, int64_t n, int64_t k,
                           int64_t stride_a, int64_t stride_b, sg_error *err);
/* The same with operands read transposed as trans says (KN_VK_MATMUL_TRANS_A: a[z] holds
 * the k x m matrix A^T; KN_VK_MATMUL_TRANS_B: b[z] holds n x k; the bits of kn.h's
 * KN_MATMUL_TRANS_A / _B), no copy made: the tiled, subgroup and
 * blocked kernels swap their index arithmetic (specialization constants TRANS_A,
 * TRANS_B); where the choice is the coop variant, the tiled kernel runs. */
enum { KN_VK_MATMUL_TRANS_A = 1, KN_VK_MATMUL_TRANS_B = 2 };
sg_code kn_vk_matmul_trans(kn_vk_batch *bt, kn_vk_elem et, int trans, kn_vk_buffer *a,
                           kn_vk_buffer *b, kn_vk_buffer *c, int64_t batch, int64_t m, int64_t n,
                           int64_t k, int64_t stride_a, int64_t stride_b, sg_error *err);
/* A float32 matmul (as kn_vk_matmul_trans with KN_VK_F32) whose every result element goes
 * through an elementwise epilogue before it is stored (epilogue.glsl: the kernel
 * variant's _epi build, one pipeline per epilogue): a bias, an activation, a scale cost
 * no kernel and no pass over the result of their own. The epilogue's steps are
 * kn_vk_fused_f32's, with KN_VK_FUSED_PREV at step 0 the product's element; its buffers
 * ins[0, nins) hold in_sizes[k] floats broadcast against the whole result (batch * m * n
 * elements) as kn_vk_fused_f32 reads them, scalars[0, nscalars) are
 * KN_VK_FUSED_SCALAR(k). Each element gets the bits of the product stored, then the
 * ops one by one. At most KN_VK_EPI_STEPS steps (at least one), KN_VK_EPI_INPUTS
 * buffers, KN_VK_EPI_SCALARS scalars: SG_INVALID_ARGUMENT otherwise. */
enum { KN_VK_EPI_STEPS = 8, KN_VK_EPI_INPUTS = 3, KN_VK_EPI_SCALARS = 4 };
typedef struct kn_vk_epilogue {
  const kn_vk_fused_step *steps;
  int nsteps;
  kn_vk_buffer *const *ins;
  const int64_t *in_sizes, *in_inners;
  int nins;
  const float *scalars;
  int nscalars;
} kn_vk_epilogue;
sg_code kn_vk_matmul_epilogue(kn_vk_batch *bt, int trans, kn_vk_buffer *a, kn_vk_buffer *b,
                              kn_vk_buffer *c, int64_t batch, int64_t m, int64_t n, int64_t k,
                              int64_t stride_a, int64_t stride_b, const kn_vk_epilogue *epi,
                              sg_error *err);
/* A float32 reduction (kn_vk_reduce_typed with KN_VK_F32: sum, max, min, mean) whose
 * every result element goes through epilogue epi before it is stored (reduce.comp's
 * _epi builds), as kn_vk_matmul_epilogue's: its buffers broadcast against the
 * outer * inner results. */
sg_code kn_vk_reduce_epilogue(kn_vk_batch *bt, kn_vk_reduce_op op, kn_vk_buffer *a, const kn_vk_shape *s, int axis,
                              kn_vk_buffer *out, const kn_vk_epilogue *epi, sg_error *err);

const char *kn_vk_matmul_variant_name(kn_vk_matmul_variant v); /* "auto", "tiled", ... */
/* Parses auto|tiled|subgroup|coop|blocked (NULL or "" is auto); SG_INVALID_ARGUMENT
 * otherwise. */
sg_code kn_vk_matmul_variant_parse(const char *s, kn_vk_matmul_variant *out, sg_error *err);
/* The product's shape; batch 1 for a single matrix. */
typedef struct kn_vk_matmul_shape {
  int64_t batch, m, n, k;
} kn_vk_matmul_shape;
/* The auto policy's large products: at least this many 128x128 blocks of C (over the
 * batch) run the blocked kernel where it is available; fewer keep more workgroups in
 * flight with the tiled kernel's 64x64 blocks. */
enum { KN_VK_BLOCKED_MIN_BLOCKS = 64 };
typedef struct kn_vk_matmul_plan {
  kn_vk_matmul_variant variant;
  const char *kernel; /* "matmul", "matmul_subgroup_f64", ...; NULL: none can run */
  const char *reason; /* one line: what the device offers and why this kernel */
} kn_vk_matmul_plan;
/* The selection policy, a pure function of the device description (tests feed it
 * devices this machine lacks). forced = AUTO: coop for float16 where the device has the
 * cooperative-matrix shape, subgroup for skinny shapes (n <= 4 and k >= 64) where
 * subgroup arithmetic is offered, blocked for large products (KN_VK_BLOCKED_MIN_BLOCKS)
 * where available, else tiled. shape NULL = a large square product (for
 * logs and device listings). Another forced variant is used where available for
 * (et, device); else kernel is NULL and reason says why. */
kn_vk_matmul_plan kn_vk_matmul_choice(const kn_vk_matmul_shape *shape, kn_vk_elem et,
                                      const kn_vk_device_info *d, kn_vk_matmul_variant forced);
/* Whether variant v (not AUTO) has a kernel for et on d; *why (may be NULL) gets the
 * reason when not. */
bool kn_vk_matmul_available(const kn_vk_device_info *d, kn_vk_elem et, kn_vk_matmul_variant v,
                            const char **why);
/* Whether variant v runs on d for at least one element type (ListDevices). */
bool kn_vk_matmul_variant_offered(const kn_vk_device_info *d, kn_vk_matmul_variant v);
/* The variant named by the environment's STAGD_VK_MATMUL (unset or "" → AUTO);
 * SG_INVALID_ARGUMENT naming the variable for anything else. */
sg_code kn_vk_matmul_env_variant(kn_vk_matmul_variant *out, sg_error *err);
/* The blocked kernel's K step: *bk 0 → the environment's STAGD_VK_MATMUL_BK (unset or
 * "" → 16); a step other than 4, 8 or 16 (from either) is SG_INVALID_ARGUMENT. */
sg_code kn_vk_matmul_bk_resolve(uint32_t *bk, sg_error *err);
/* The cooperative-matrix kernel d runs for the coop variant: with forced = AUTO,
 * matmul_coop_khr where the device offers the shape through VK_KHR_cooperative_matrix,
 * else matmul_coop through VK_NV; a forced flavour only where offered. Returns the
 * flavour (AUTO: none; *kernel NULL) and *reason (one line). Pure (tests feed it). */
kn_vk_coop_flavour kn_vk_coop_choice(const kn_vk_device_info *d, kn_vk_coop_flavour forced,
                                     const char **kernel, const char **reason);
/* Parses auto|nv|khr (NULL or "" is auto); SG_INVALID_ARGUMENT otherwise. */
sg_code kn_vk_coop_flavour_parse(const char *s, kn_vk_coop_flavour *out, sg_error *err);
/* The flavour named by STAGD_VK_COOP; an invalid value is an error naming the variable. */
sg_code kn_vk_coop_env_flavour(kn_vk_coop_flavour *out, sg_error *err);
/* The variant a context uses for every product (AUTO: chosen per product). */
kn_vk_matmul_variant kn_vk_context_matmul_variant(const kn_vk_context *ctx);
/* Reductions of element type et: float32/float64/int64/float16 give the same type; int32
 * max/min give int32 and sum gives int64 (NumPy's sum dtype). KN_VK_REDUCE_MEAN takes
 * float32 and float16 only. */
sg_code kn_vk_reduce_typed(kn_vk_batch *bt, kn_vk_elem et, kn_vk_reduce_op op, kn_vk_buffer *a,
                           const kn_vk_shape *s, int axis, kn_vk_buffer *out, sg_error *err);
/* int64 indices of the maxima along `axis` (NumPy: first maximum, NaN wins); axis -1
 * with s of one dimension is the flat argmax. len must be > 0. */
sg_code kn_vk_argmax(kn_vk_batch *bt, kn_vk_elem et, kn_vk_buffer *a, const kn_vk_shape *s,
                     int axis, kn_vk_buffer *out, sg_error *err);

/* ------------------------------------------------------------ logic and casts */
typedef enum kn_vk_cmpop {
  KN_VK_EQ = 0, KN_VK_NE, KN_VK_LT, KN_VK_LE, KN_VK_GT, KN_VK_GE, KN_VK_AND, KN_VK_OR,
  KN_VK_NOT /* unary: b and bs are ignored */
} kn_vk_cmpop;
/* out (bool) = a OP b with broadcasting, a and b of element type et (bool included). */
sg_code kn_vk_compare(kn_vk_batch *bt, kn_vk_elem et, kn_vk_cmpop op, kn_vk_buffer *a,
                      const kn_vk_shape *as, kn_vk_buffer *b, const kn_vk_shape *bs,
                      kn_vk_buffer *out, sg_error *err);
/* out = c ? a : b with broadcasting of all three (up to 6 dims); c is bool, a/b/out
 * have elements of elem_bytes = 1, 2, 4 or 8 bytes. */
sg_code kn_vk_where(kn_vk_batch *bt, kn_vk_buffer *c, const kn_vk_shape *cs, kn_vk_buffer *a,
                    const kn_vk_shape *as, kn_vk_buffer *b, const kn_vk_shape *bs,
                    size_t elem_bytes, kn_vk_buffer *out, sg_error *err);
/* n elements of type from → type to (NumPy astype), any pair of the six element types
 * (float16 rounds to nearest even bit for bit like kn_f32_to_f16). Needs float64 and
 * int64 shader support (kn_vk_cast_supported). */
bool kn_vk_cast_supported(const kn_vk_context *ctx);
/* Whether the environment variable `name` is set to something other than "" and "0",
 * read once into *cache (which starts at -1): the test-only switches
 * STAGD_VK_NO_SUBGROUP (device.c: no_subgroup_ops for every context opened after) and
 * STAGD_VK_F16_CAST (graph/vulkan/exec_vulkan_dtype.c: float16 reductions through float32). */
bool kn_vk_env_flag(const char *name, atomic_int *cache);
sg_code kn_vk_cast(kn_vk_batch *bt, kn_vk_elem from, kn_vk_elem to, kn_vk_buffer *a,
                   kn_vk_buffer *out, int64_t n, sg_error *err);

/* ------------------------------------------------------------ layout and constructors */
/* The general strided copy behind transpose, slice and concat/stack: for each
 * coordinate of `shape`, out[out_offset + sum coord*out_stride] =
 * a[in_offset + sum coord*in_stride] (strides in elements, negative allowed), elements
 * of elem_bytes = 1, 2, 4 or 8 bytes copied as bits. */
sg_code kn_vk_copy_strided(kn_vk_batch *bt, kn_vk_buffer *a, const kn_vk_shape *shape,
                           int64_t in_offset, const int64_t *in_stride, kn_vk_buffer *out,
                           int64_t out_offset, const int64_t *out_stride, size_t elem_bytes,
                           sg_error *err);
/* np.take on an [outer, len, inner] view: out [outer, nidx, inner]; idx holds nidx
 * uint32 indices, each < len (the caller checks them); elements of 1, 2, 4 or 8 bytes. */
sg_code kn_vk_gather(kn_vk_batch *bt, kn_vk_buffer *a, int64_t outer, int64_t len, int64_t inner,
                     kn_vk_buffer *idx, int64_t nidx, size_t elem_bytes, kn_vk_buffer *out,
                     sg_error *err);
/* float32 one-hot rows: out[j, d] = idx[j] == d (uint32 indices, < depth). */
sg_code kn_vk_one_hot(kn_vk_batch *bt, kn_vk_buffer *idx, int64_t n, int64_t depth,
                      kn_vk_buffer *out, sg_error *err);
/* Fills nbytes (a multiple of 4) with a pattern of 4 bytes, or of 8 (pattern8). */
sg_code kn_vk_fill(kn_vk_batch *bt, kn_vk_buffer *out, uint64_t nbytes, uint64_t pattern,
                   bool pattern8, sg_error *err);
/* out[i] = start + i * step for n elements, int64 (KN_VK_I64; start/step are the
 * int64 values' bits) or float64 (KN_VK_F64; the doubles' bits). */
sg_code kn_vk_arange(kn_vk_batch *bt, kn_vk_elem et, uint64_t start_bits, uint64_t step_bits,
                     int64_t n, kn_vk_buffer *out, sg_error *err);
/* n draws of random_uniform (normal false) or random_normal from `seed`, the CPU
 * generator's stream (kn_random), as float32 or float64 (kernels_random.c). */
sg_code kn_vk_random(kn_vk_batch *bt, kn_vk_elem et, bool normal, uint64_t seed, int64_t n, kn_vk_buffer *out,
                     sg_error *err);

#endif /* STAGD_KERNELS_KN_VULKAN_H */
