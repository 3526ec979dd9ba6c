/*
 * gr_internal.h — the private header of graph/: S-expression trees, the Myia-style
 * graph IR, runtime values, the op table and the executor's compiled form.
 *
 * How the pieces fit:
 *   sexpr_read.c  text → sx trees (with line:col)        sexpr_print.c  sx → text
 *   lower.c       sx trees → gr_module (graphs of nodes; scopes, closures, set!)
 *   ir.c          node/graph construction, use lists, replace, schedules, free vars
 *   infer.c       abstract values (type, dtype, shape, constant) per node
 *   opt_*.c       passes: inline, cse, constfold, dce, algebra (each stand-alone)
 *   ops.c         THE op table: name, aliases, arity, flags, shape rule, CPU kernel,
 *                 Vulkan pipeline slot, gradient slot
 *   value.c       runtime values (scalars, tensors, tuples, records, closures, vars)
 *   json_value.c  JSON ↔ values (ARCHITECTURE.md "JSON values")
 *   compile.c     closure conversion + linear code per graph for the executor
 *   exec.c        the interpreter (calls, if, while, limits, deadline)
 *   dump_*.c      sexpr / text / dot / json dumps
 *   program.c     gr_stage / gr_execute / the program cache (the public API, gr.h)
 */
#ifndef STAGD_GRAPH_GR_INTERNAL_H
#define STAGD_GRAPH_GR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "gr.h"
#include "kn.h"
#include "sg.h"

/* ------------------------------------------------------------- S-expressions */
typedef enum sx_kind { SX_LIST, SX_SYM, SX_INT, SX_FLOAT, SX_STR, SX_BOOL, SX_NONE } sx_kind;

typedef struct sx {
  sx_kind kind;
  int line, col;
  union {
    struct {
      struct sx **items;
      int n;
    } list;
    const char *sym; /* interned */
    int64_t i;
    double f;
    struct {
      const char *s;
      size_t len;
    } str;
    bool b;
  } u;
} sx;

#define GR_MAX_NESTING 1000
#define GR_MAX_VALUE_DEPTH 2000

/* Reads all top-level forms. Trees live in `arena`, symbols in `strings`. */
sg_code sx_read(const char *src, size_t len, const char *file, sg_arena *arena,
                sg_intern *strings, sx ***forms, int *nforms, sg_error *err);
void sx_print(sg_buf *b, const sx *x);
/* A float in the fewest digits that read back as the same double, always with a '.',
 * 'e', "inf" or "nan" (sexpr_print.c; also the JSON values and printed output). */
void gr_format_float(sg_buf *b, double f);
/* A string literal as sx_read reads it back (escapes \" \\ \n \t, other bytes raw). */
void sx_print_string(sg_buf *b, const char *s, size_t n);
bool sx_is_sym(const sx *x, const char *name);
/* "prim:NAME" always names primitive NAME, whatever a def or binding of that name says
 * (lower.c); the sexpr dump spells a primitive so when a top-level def shadows it. */
#define GR_PRIM_PREFIX "prim:"

/* ------------------------------------------------------------------- values */
typedef struct gr_graph gr_graph;
typedef struct gr_node gr_node;
typedef struct gr_op gr_op;
typedef struct gr_obj gr_obj;

typedef enum gr_vtag {
  GV_NONE, GV_BOOL, GV_INT, GV_FLOAT, GV_STR, GV_TENSOR, GV_TUPLE, GV_RECORD,
  GV_GRAPH,   /* a graph without free variables: no allocation */
  GV_CLOSURE, /* graph + captured free-variable values */
  GV_PRIM, GV_VAR,
  GV_DEVICE, /* a tensor in device memory (exec_vulkan.c): lives only inside the request;
              * reference counted like the others, tuples/records/closures own them */
  GV_RESIDENT /* a device tensor that outlives requests (exec_vulkan_resident.c) */
} gr_vtag;

typedef struct gr_val {
  uint8_t tag;
  union {
    bool b;
    int64_t i;
    double f;
    const char *s; /* interned, lives with the program */
    kn_tensor *t;
    gr_obj *o; /* tuple, record, closure, var */
    gr_graph *g;
    const gr_op *op;
    struct gr_dtensor *d; /* GV_DEVICE */
    struct gr_resident *r; /* GV_RESIDENT */
  } u;
} gr_val;

/* Tuple: items[n]. Record: names[n] + items[n]. Closure: graph + items = env.
 * Var: items[0] is the current value. */
struct gr_obj {
  atomic_int rc;
  int n;
  int depth; /* nesting depth of tuples/records, bounded by GR_MAX_VALUE_DEPTH */
  gr_graph *graph;
  const char **names;
  atomic_bool escaped; /* a variable cell reachable from a handle (gv_var_escape) */
  gr_val items[];
};

static inline gr_val gv_none(void) { gr_val v = {.tag = GV_NONE}; return v; }
static inline gr_val gv_bool(bool b) { gr_val v = {.tag = GV_BOOL, .u.b = b}; return v; }
static inline gr_val gv_int(int64_t i) { gr_val v = {.tag = GV_INT, .u.i = i}; return v; }
static inline gr_val gv_float(double f) { gr_val v = {.tag = GV_FLOAT, .u.f = f}; return v; }
static inline gr_val gv_tensor(kn_tensor *t) { gr_val v = {.tag = GV_TENSOR, .u.t = t}; return v; }
/* A device-resident tensor (GV_RESIDENT): reference counted, immutable, readable by
 * any request (the batch that wrote it completed before it was made). The buffer is
 * exec_vulkan_resident.c's; the metadata is here for type checks and inference. */
typedef struct gr_resident {
  atomic_int rc;
  struct gr_rbuf *rb; /* the device buffer (shared by reshaped views) */
  kn_dtype dtype;
  int ndim;
  int64_t shape[KN_MAX_DIMS];
  int64_t size;
  pthread_mutex_t lock; /* guards host */
  kn_tensor *host;      /* cached download (or the uploaded source), or NULL */
} gr_resident;
void gr_resident_release(gr_resident *r);
/* *v (owned) with its resident tensors (in tuples too) replaced by host copies: one
 * download each, cached in the resident tensor (exec_vulkan_resident.c). */
sg_code gr_vk_resident_to_host(gr_val *v, sg_error *err);
struct gr_ctx;
/* A control-flow predicate *v (owned) computed on the request's device, read back as a
 * host tensor (exec_vulkan.c); anything else is left alone. */
sg_code gr_vk_predicate(struct gr_ctx *ctx, gr_val *v, sg_error *err);

static inline bool gv_is_heap(const gr_val *v) {
  return v->tag == GV_TENSOR || v->tag == GV_TUPLE || v->tag == GV_RECORD ||
         v->tag == GV_CLOSURE || v->tag == GV_VAR || v->tag == GV_RESIDENT || v->tag == GV_DEVICE;
}
/* A request's device tensor gains / loses a reference (exec_vulkan.c; the last one
 * hands its buffer back to the request's free list). */
void gr_vk_dtensor_retain(struct gr_dtensor *d);
void gr_vk_dtensor_release(struct gr_dtensor *d);
static inline bool gv_is_scalar(const gr_val *v) {
  return v->tag == GV_BOOL || v->tag == GV_INT || v->tag == GV_FLOAT;
}
void gv_release_obj_(gr_val v);
static inline void gv_release(gr_val v) {
  if (gv_is_heap(&v)) gv_release_obj_(v);
}
static inline gr_val gv_retain(gr_val v) {
  if (v.tag == GV_TENSOR) kn_tensor_retain(v.u.t);
  else if (v.tag == GV_RESIDENT) atomic_fetch_add_explicit(&v.u.r->rc, 1, memory_order_relaxed);
  else if (v.tag == GV_DEVICE) gr_vk_dtensor_retain(v.u.d);
  else if (gv_is_heap(&v)) atomic_fetch_add_explicit(&v.u.o->rc, 1, memory_order_relaxed);
  return v;
}
gr_obj *gv_obj_new(int n);
/* A variable cell's value, retained, read under the cell's lock (value.c); hold the
 * lock with gv_var_lock/unlock across a read-modify-write of items[0]. */
gr_val gv_var_get(gr_obj *cell);
void gv_var_lock(gr_obj *cell);
void gv_var_unlock(gr_obj *cell);
gr_val gv_tuple_new(int n); /* items set to none; fill them (ownership moves in) */
/* s interned for the life of the process in a bounded table (value.c); NULL with
 * RESOURCE_EXHAUSTED when it is full. For strings from clients' binary arguments. */
const char *gv_client_string(const char *s, sg_error *err);
bool gv_truthy(const gr_val *v, bool *out);
/* Structural equality (CSE of constants, tests). */
bool gv_equal(const gr_val *a, const gr_val *b);
uint64_t gv_hash(const gr_val *v);
/* Short human/sexpr form ("3", "2.5", "true", "(tuple 1 2)", tensor summary). */
void gv_print(sg_buf *b, const gr_val *v);
/* NumPy-style print used by the `print` primitive. */
void gv_print_py(sg_buf *b, const gr_val *v);
const char *gv_type_name(const gr_val *v);

/* Walking the tensors inside a value: a leaf is any value for which pick() holds,
 * looked for inside tuples and records (and closures' captured values when `closures`).
 * gv_map_leaves replaces *v (owned) by a copy in which f has replaced each leaf (f takes
 * the leaf's reference and writes its replacement; on error it leaves the leaf as it
 * was). The containers on the way are copied, never changed in place, and containers
 * without such a leaf are shared. */
typedef bool (*gv_pick_fn)(const gr_val *v);
typedef sg_code (*gv_leaf_fn)(void *arg, gr_val *leaf, sg_error *err);
bool gv_has_leaf(const gr_val *v, gv_pick_fn pick, bool closures);
sg_code gv_map_leaves(gr_val *v, gv_pick_fn pick, bool closures, gv_leaf_fn f, void *arg,
                      sg_error *err);
/* dtype and shape of a host or resident tensor; false for anything else. */
bool gv_tensor_meta(const gr_val *v, kn_dtype *dt, int *ndim, const int64_t **shape);
/* *v (owned), made fit to live in a variable cell beyond its request and program: its
 * strings and field names re-pointed at the process-wide string table (a full table:
 * RESOURCE_EXHAUSTED). For a cell that has escaped (below), functions are refused
 * (INVALID_ARGUMENT: they point into their program's graphs) and cells inside v escape
 * too. */
sg_code gv_own_strings(gr_val *v, bool escaping, sg_error *err);
/* Marks the cells inside v (nested ones too) as escaped: reachable beyond the request,
 * from a handle. Refuses (and marks nothing new) when one holds a function. */
sg_code gv_escape(const gr_val *v, sg_error *err);
/* A variable cell's replacement (takes nv's reference), under the cell's lock (see
 * gv_var_get above). */
void gv_var_set(gr_obj *cell, gr_val nv);
/* Scalar → 0-d tensor (dtype: bool / int64 / float64), tensor → retained. */
kn_tensor *gv_to_tensor(const gr_val *v, kn_dtype dt);

/* A boxed value (gr.h gr_value; eager.c): shared by the daemon's handles. */
struct gr_value {
  atomic_int rc;
  gr_val v;
};

/* --------------------------------------------------------------- abstract values */
typedef enum gr_akind {
  GA_ANY, GA_NONE, GA_SCALAR, GA_TENSOR, GA_TUPLE, GA_RECORD, GA_FUNC, GA_STR, GA_VAR
} gr_akind;

typedef struct gr_aval {
  gr_akind kind;
  kn_dtype dtype; /* scalar: BOOL/INT64/FLOAT64; tensor dtype */
  int ndim;       /* tensor: -1 = unknown rank */
  int64_t shape[KN_MAX_DIMS]; /* -1 = unknown dim `?` */
  int n;                      /* tuple/record arity */
  struct gr_aval **elems;
  const char **names;
  bool has_const;
  gr_val cval; /* scalar constant value when known */
} gr_aval;

/* --------------------------------------------------------------------- IR */
typedef SG_VEC(gr_node *) gr_node_vec;
typedef SG_VEC(gr_graph *) gr_graph_vec;
typedef enum gr_node_kind { GR_APPLY, GR_PARAM, GR_CONST } gr_node_kind;

typedef struct gr_use {
  gr_node *user;
  int index;
} gr_use;

struct gr_node {
  gr_node_kind kind;
  uint32_t id;
  gr_graph *graph; /* owner; NULL for constants */
  gr_node **inputs; /* inputs[0] is the function */
  int ninputs;
  SG_VEC(gr_use) uses;
  gr_val value;     /* constants */
  const char *name; /* debug name (parameters, let-bound names) */
  int line, col;
  int slot;         /* executor slot within its graph */
  gr_aval *aval;    /* inferred, may be NULL */
  bool dead;
};

struct gr_graph {
  uint32_t id;
  const char *name;
  gr_node **params;
  int nparams;
  gr_node *output;
  gr_graph *parent; /* lexical parent (NULL for top-level graphs) */
  gr_node_vec nodes; /* apply nodes owned by this graph (creation order) */
  gr_node_vec fvs;   /* free variables (filled by gr_compute_fvs) */
  int line, col;
  bool is_branch;          /* an `if` branch (printed inline) */
  bool dead;
  bool generated; /* a top-level graph AD made (grad_F, fwd_F, while_loop_N, prim_OP):
                     no def of the source, so the optimizer drops it once unreachable */
  struct gr_code *code;
};

typedef struct gr_module {
  sg_arena arena;
  sg_intern strings;
  const char *file;
  gr_graph_vec graphs;
  gr_node_vec all_nodes;
  uint32_t next_node_id, next_graph_id;
  int max_nodes;
} gr_module;

void gr_module_init(gr_module *m, const char *file);
void gr_module_free(gr_module *m);
gr_graph *gr_graph_new(gr_module *m, const char *name, gr_graph *parent);
gr_node *gr_param_new(gr_module *m, gr_graph *g, const char *name);
gr_node *gr_const_new(gr_module *m, gr_val v);
gr_node *gr_apply_new(gr_module *m, gr_graph *g, gr_node **inputs, int n);
void gr_set_input(gr_node *user, int index, gr_node *input);
void gr_set_output(gr_graph *g, gr_node *out);
/* Points every use of old at new (graph outputs too). */
void gr_replace(gr_module *m, gr_node *old, gr_node *new_);
int gr_live_uses(const gr_node *n);
static inline bool gr_is_const_graph(const gr_node *n) {
  return n->kind == GR_CONST && (n->value.tag == GV_GRAPH);
}
const gr_op *gr_node_prim(const gr_node *n); /* apply node whose head is a prim const */
/* Apply nodes of g reachable from its output, inputs first (left to right), with
 * the free variables of nested graphs owned by g scheduled before their use. */
void gr_schedule(gr_graph *g, gr_node_vec *out);
/* Graphs reachable from `entry` through graph constants. */
void gr_reachable_graphs(gr_module *m, gr_graph *entry, gr_graph_vec *out);
void gr_compute_fvs(gr_module *m);
/* Lowers read forms into m; *entry gets the named def (or the last). */
sg_code gr_lower(gr_module *m, sx **forms, int nforms, const char *entry_name,
                 gr_graph **entry, sg_error *err);
/* Replaces each (grad f i ...) apply by a constant gradient graph (ad.c). */
sg_code gr_ad_expand(gr_module *m, sg_error *err);
sg_code gr_error_at(sg_error *err, sg_code code, const gr_module *m, const gr_node *n,
                    const char *fmt, ...) SG_PRINTF(5, 6);

/* --------------------------------------------------------------- op table */
typedef struct gr_ctx gr_ctx;
typedef sg_code (*gr_cpu_fn)(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                             sg_error *err);
typedef sg_code (*gr_infer_fn)(const gr_op *op, gr_aval **args, int n, gr_aval *out,
                               sg_arena *a, sg_error *err);

enum {
  GR_OP_PURE = 1,    /* no side effects: CSE, folding, DCE allowed */
  GR_OP_EFFECT = 2,  /* print, assert, variables: kept, ordered */
  GR_OP_CALLS = 4,   /* calls function values (if, while): never folded */
  GR_OP_NOGRAD = 8,  /* optimizer steps: AD passes no gradient through them */
};

/* kernel codes of the AD helper rows (gr_cpu_adjoint, ops_adjoint.c) */
enum {
  GR_ADJ_ZEROS_LIKE, GR_ADJ_ADD, GR_ADJ_SUM_LIKE, GR_ADJ_EXPAND_LIKE, GR_ADJ_ITEM,
  GR_ADJ_SLICE, GR_ADJ_GATHER, GR_ADJ_SENS_ITEM, GR_ADJ_OR_ZEROS, GR_ADJ_MATMUL, GR_ADJ_JOIN, GR_ADJ_CAPTURED
};

struct gr_op {
  const char *name;
  const char *alias;
  int min_args, max_args; /* max -1 = variadic */
  int flags;
  int code; /* kn_binop / kn_unop / kn_reduce_op where relevant */
  gr_infer_fn infer;
  gr_cpu_fn cpu;
  const void *vulkan; /* filled by the Vulkan issue */
  const void *grad;   /* filled by the AD issue */
};

const gr_op *gr_op_lookup(const char *name);
/* Runs primitive op on the request's backend: the Vulkan executor when ctx->vk (a GPU
 * kernel, else the CPU kernel on downloaded inputs), else the CPU kernel (exec.c).
 * Composite kernels (optimizer steps, AD helpers) chain their steps through it. */
sg_code gr_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err);
const gr_op *gr_op_table(int *n);
/* The matmul row reading its operands transposed as trans says (KN_MATMUL_TRANS_A |
 * KN_MATMUL_TRANS_B; 0: plain matmul): matmul, matmul_tn, matmul_nt, matmul_tt. */
const gr_op *gr_op_matmul(int trans);
/* Whether transposes are folded into matmuls (opt_matmul.c, and matmul_grad's products):
 * on unless the environment sets STAGD_MATMUL_TRANSPOSE_FOLD=0 (the benchmark's
 * baseline: transposes materialized as before). */
bool gr_matmul_fold_enabled(void);
extern const gr_op *const gr_op_if, *const gr_op_seq, *const gr_op_while, *const gr_op_add,
    *const gr_op_sub, *const gr_op_mul, *const gr_op_div;

/* ---------------------------------------------------------------- executor */
typedef enum gr_okind { GO_LOCAL, GO_CONST, GO_FREE } gr_okind;
typedef struct gr_operand {
  uint32_t kind : 2;
  uint32_t idx : 30;
} gr_operand;

typedef enum gr_ikind { GI_PRIM, GI_CALL, GI_MKCLOS } gr_ikind;
typedef struct gr_instr {
  uint8_t kind;
  uint16_t nargs;
  uint32_t dst;
  const gr_op *op;    /* GI_PRIM */
  gr_graph *graph;    /* GI_MKCLOS */
  gr_operand fn;      /* GI_CALL */
  gr_operand *args;
  gr_node *node;      /* for error locations */
} gr_instr;

typedef struct gr_code {
  int nparams, nslots, ninstr, nconsts;
  gr_instr *instrs;
  gr_val *consts;
  gr_operand out;
  /* per slot, the last instruction reading it (-1: none; ninstr: the output slot, which
   * never dies): the interpreter releases a local's value right after that instruction */
  int *last_use;
} gr_code;

/* Compiles every graph reachable from entry (closure conversion + schedules). */
sg_code gr_compile(gr_module *m, gr_graph *entry, sg_error *err);

struct gr_ctx {
  gr_module *mod;
  uint64_t deadline_ns; /* absolute sg_now_ns(); 0 = none */
  int depth, max_depth;
  uint32_t tick;
  char *stack_base;
  size_t max_stack;
  sg_buf *printed;
  gr_node *site; /* node being executed (for locations) */
  struct gr_vk_exec *vk; /* non-NULL: this request runs on a Vulkan device (exec_vulkan.c) */
};

sg_code gr_call(gr_ctx *ctx, gr_val fn, gr_val *args, int n, gr_val *out, sg_error *err);
/* Run a primitive directly (constant folding). */
sg_code gr_apply_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                      sg_error *err);
sg_code gr_check_deadline(gr_ctx *ctx, sg_error *err);

/* ------------------------------------------------------------------ passes */
typedef struct gr_pass_stats {
  int inlined, cse_merged, folded, dead_removed, simplified;
} gr_pass_stats;
bool gr_opt_inline(gr_module *m, gr_graph *entry, gr_pass_stats *st);
bool gr_opt_cse(gr_module *m, gr_graph *entry, gr_pass_stats *st);
bool gr_opt_constfold(gr_module *m, gr_graph *entry, gr_pass_stats *st);
bool gr_opt_dce(gr_module *m, gr_graph *entry, gr_pass_stats *st);
bool gr_opt_algebra(gr_module *m, gr_graph *entry, gr_pass_stats *st);
bool gr_opt_matmul(gr_module *m, gr_graph *entry, gr_pass_stats *st);
void gr_optimize(gr_module *m, gr_graph *entry, gr_pass_stats *st);

sg_code gr_infer(gr_module *m, gr_graph *entry, sg_error *err);
/* Re-infers g for the argument types of one call (the input signature); thread-safe
 * (reads the module only). Errors are located like stage-time ones. */
sg_code gr_infer_signature(gr_module *m, gr_graph *g, const gr_val *args, int n, sg_error *err);
uint64_t gr_signature_hash(const gr_val *args, int n);
void gr_aval_print(sg_buf *b, const gr_aval *a);

/* ------------------------------------------------------------------- dumps */
void gr_dump_sexpr(sg_buf *b, gr_module *m, gr_graph *entry);
void gr_dump_text(sg_buf *b, gr_module *m, gr_graph *entry);
void gr_dump_dot(sg_buf *b, gr_module *m, gr_graph *entry);
void gr_dump_json(sg_buf *b, gr_module *m, gr_graph *entry);

/* ------------------------------------------------------------- JSON values */
sg_code gr_json_args(const char *json, gr_module *m, sg_arena *a, gr_val **vals, int *n,
                     sg_error *err);
void gr_value_to_json(sg_buf *b, const gr_val *v);

#endif /* STAGD_GRAPH_GR_INTERNAL_H */
