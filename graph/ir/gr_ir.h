// SPDX-License-Identifier: Apache-2.0
/*
 * gr_ir.h — graph/ir: what a staged program *is*, with no knowledge of how it is
 * inferred, optimized, differentiated or run (those subsystems sit above it and see
 * only this header). It owns:
 *   sexpr_read.c  text → sx trees (with line:col)        sexpr_print.c  sx → text
 *   value.c       runtime values (scalars, tensors, tuples, records, closures, vars),
 *                 device tensors through their backend's hooks (gr_device_ops)
 *   pyscalar.c    Python scalar arithmetic and NumPy's weak-scalar dtype rules
 *   json_value.c  JSON ↔ values (ARCHITECTURE.md "JSON values")
 *   ops.c         THE op table: one row per primitive (name, alias, arity, effects,
 *                 family, kernel code); each subsystem keeps its column — shape rule,
 *                 CPU kernel, Vulkan recorder, gradient rule — keyed by the family
 *   ir.c          node/graph construction, use lists, replace, schedules, free vars
 *   aval.c        abstract values (type, dtype, shape, constant) as dumps print them
 *   lower.c       sx trees → gr_module (graphs of nodes; scopes, closures, set!)
 *   dump_*.c      sexpr / text / dot / json dumps
 */
#ifndef STAGD_GRAPH_IR_GR_IR_H
#define STAGD_GRAPH_IR_GR_IR_H

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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
  GV_DEVICE, /* a tensor in a device backend's memory (vulkan/): lives only inside the
              * request; reference counted like the others, tuples/records/closures own them */
  GV_RESIDENT /* a device tensor that outlives requests (vulkan/exec_vulkan_resident.c) */
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
/* Device tensors are made and run by a device backend (vulkan/); values only hold them,
 * and reach the backend through these hooks, so nothing here depends on a backend. */
typedef struct gr_resident gr_resident;
typedef struct gr_device_ops {
  void (*dtensor_retain)(struct gr_dtensor *d);
  void (*dtensor_release)(struct gr_dtensor *d);
  void (*resident_free)(gr_resident *r); /* the last reference went */
  /* r's host copy (retained), downloaded once and cached in r->host */
  sg_code (*resident_host)(gr_resident *r, kn_tensor **out, sg_error *err);
} gr_device_ops;
/* A backend's device tensor (GV_DEVICE) begins with a pointer to its hooks. */
static inline const gr_device_ops *gr_dtensor_ops(const struct gr_dtensor *d) {
  return *(const gr_device_ops *const *)(const void *)d;
}
/* A device-resident tensor (GV_RESIDENT): reference counted, immutable, readable by
 * any request (the batch that wrote it completed before it was made). The buffer is
 * the backend's (vulkan/exec_vulkan_resident.c); the metadata is here for type checks
 * and inference. */
struct gr_resident {
  atomic_int rc;
  const gr_device_ops *ops;
  struct gr_rbuf *rb; /* the device buffer (shared by reshaped views) */
  kn_dtype dtype;
  int ndim;
  int64_t shape[KN_MAX_DIMS];
  int64_t size;
  pthread_mutex_t lock; /* guards host */
  kn_tensor *host;      /* cached download (or the uploaded source), or NULL */
};
void gr_resident_release(gr_resident *r);
/* The host copy of r (retained), downloaded once and cached. */
sg_code gr_resident_host(gr_resident *r, kn_tensor **out, sg_error *err);
/* *v (owned) with its resident tensors (in tuples too) replaced by host copies: one
 * download each, cached in the resident tensor. */
sg_code gv_resident_to_host(gr_val *v, sg_error *err);
/* dst[0..n) = owned copies of src with resident tensors replaced by host copies, when
 * any argument holds one (*any); else nothing is copied. */
sg_code gv_args_to_host(gr_val *dst, const gr_val *src, int n, bool *any, sg_error *err);

static inline bool gv_is_heap(const gr_val *v) {
  return v->tag == GV_TENSOR || v->tag == GV_TUPLE || v->tag == GV_RECORD ||
         v->tag == GV_CLOSURE || v->tag == GV_VAR || v->tag == GV_RESIDENT || v->tag == GV_DEVICE;
}
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
  else if (v.tag == GV_DEVICE) gr_dtensor_ops(v.u.d)->dtensor_retain(v.u.d);
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
  struct gr_code *code; /* the executor's compiled form (exec/), opaque here */
};

typedef struct gr_module {
  sg_arena arena;
  sg_intern strings;
  const char *file;
  gr_graph_vec graphs;
  gr_node_vec all_nodes;
  uint32_t next_node_id, next_graph_id;
  int max_nodes;
  SG_VEC(gr_val) held; /* values kept for the module's life (gr_module_hold) */
} gr_module;

void gr_module_init(gr_module *m, const char *file);
void gr_module_free(gr_module *m);
/* m takes over a reference to v and releases it when m is freed (the compiled code's
 * constants: the executor's form borrows them). */
void gr_module_hold(gr_module *m, gr_val v);
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
/* The nodes g uses, one at a time: each input of its live nodes, then its output.
 * `gr_use_iter it = {0}; for (gr_node *in; (in = gr_uses_next(g, &it));) ...` */
typedef struct gr_use_iter {
  size_t k;
  int j;
} gr_use_iter;
gr_node *gr_uses_next(const gr_graph *g, gr_use_iter *it);
/* The graph constants g's live nodes and output use, in order (repeats kept). */
void gr_graph_callees(const gr_graph *g, gr_graph_vec *out);
/* Appends to `out` root and the graphs it reaches that `seen` does not hold yet,
 * breadth first, adding them to `seen`: one walk serves several roots. */
void gr_reach_more(gr_graph *root, sg_map *seen, gr_graph_vec *out);
void gr_compute_fvs(gr_module *m);
/* Lowers read forms into m; *entry gets the named def (or the last). (grad f i ...)
 * applies stay as they are: AD expands them (ad/). */
sg_code gr_lower(gr_module *m, sx **forms, int nforms, const char *entry_name,
                 gr_graph **entry, sg_error *err);
sg_code gr_error_at(sg_error *err, sg_code code, const gr_module *m, const gr_node *n,
                    const char *fmt, ...) SG_PRINTF(5, 6);

/* --------------------------------------------------------------- op table */
enum {
  GR_OP_PURE = 1,    /* no side effects: CSE, folding, DCE allowed */
  GR_OP_EFFECT = 2,  /* print, assert, variables: kept, ordered */
  GR_OP_CALLS = 4,   /* calls function values (if, while): never folded */
  GR_OP_NOGRAD = 8,  /* optimizer steps: AD passes no gradient through them */
};

/* The kind of op a row is: its arguments' meaning and the one shape rule, CPU kernel,
 * Vulkan recorder and gradient rule every row of the family shares (each subsystem
 * keeps its column, indexed by family: infer/, exec/, vulkan/, ad/). A row's `code`
 * tells the members of a family apart (kn_binop, kn_unop, kn_reduce_op, ...). */
typedef enum gr_op_family {
  GR_FAM_BINARY, GR_FAM_UNARY, GR_FAM_WHERE, GR_FAM_CAST, GR_FAM_MATMUL, GR_FAM_TRANSPOSE,
  GR_FAM_RESHAPE, GR_FAM_REDUCE, GR_FAM_SOFTMAX, GR_FAM_JOIN, GR_FAM_SLICE, GR_FAM_GATHER,
  GR_FAM_ONE_HOT, GR_FAM_FILL, GR_FAM_ARANGE, GR_FAM_RANDOM, GR_FAM_SHAPE, GR_FAM_TUPLE,
  GR_FAM_GETITEM, GR_FAM_RECORD, GR_FAM_GETATTR,
  GR_FAM_ADJOINT, /* what reverse-mode AD emits (code: GR_ADJ_*) */
  GR_FAM_OPTIM,   /* optimizer steps (sgd_momentum, adam) */
  GR_FAM_PRINT, GR_FAM_ASSERT, GR_FAM_VARIABLE, GR_FAM_SEQ, GR_FAM_IF, GR_FAM_WHILE, GR_FAM_GRAD,
  GR_FAM_PYCONV,  /* Python's conversions of a value to a scalar (code: GR_PY_*) */
  GR_FAM_COUNT
} gr_op_family;

/* kernel codes of the AD helper rows (GR_FAM_ADJOINT) */
enum {
  GR_ADJ_ZEROS_LIKE, GR_ADJ_ADD, GR_ADJ_SUM_LIKE, GR_ADJ_EXPAND_LIKE, GR_ADJ_ITEM,
  GR_ADJ_SLICE, GR_ADJ_GATHER, GR_ADJ_SENS_ITEM, GR_ADJ_OR_ZEROS, GR_ADJ_MATMUL, GR_ADJ_JOIN, GR_ADJ_CAPTURED
};

/* kernel codes of the Python conversions (GR_FAM_PYCONV): operator.index(x), int(x),
 * float(x), bool(x) of a number or a one-element tensor, with Python's errors; what
 * staged Python (graph/pyfront) uses for range() bounds, indices and the builtins */
enum { GR_PY_INDEX, GR_PY_INT, GR_PY_FLOAT, GR_PY_BOOL };

struct gr_op {
  const char *name;
  const char *alias;
  int min_args, max_args; /* max -1 = variadic */
  int flags;
  gr_op_family family;
  int code; /* kn_binop / kn_unop / kn_reduce_op where relevant */
};

const gr_op *gr_op_lookup(const char *name);
const gr_op *gr_op_table(int *n);
/* Whether op takes na arguments. */
static inline bool gr_op_takes(const gr_op *op, int na) {
  return na >= op->min_args && (op->max_args < 0 || na <= op->max_args);
}
/* The matmul row reading its operands transposed as trans says (KN_MATMUL_TRANS_A |
 * KN_MATMUL_TRANS_B; 0: plain matmul): matmul, matmul_tn, matmul_nt, matmul_tt. */
const gr_op *gr_op_matmul(int trans);
/* Whether transposes are folded into matmuls (opt/opt_matmul.c, and matmul_grad's
 * products): on unless the environment sets STAGD_MATMUL_TRANSPOSE_FOLD=0 (the
 * benchmark's baseline: transposes materialized as before). */
bool gr_matmul_fold_enabled(void);
extern const gr_op *const gr_op_if, *const gr_op_seq, *const gr_op_while, *const gr_op_add,
    *const gr_op_sub, *const gr_op_mul, *const gr_op_div;

/* ------------------------------------------------------------ Python scalars */
/* Python's arithmetic on two scalars (bool, int, float) for binary op code k; errors
 * (division by zero) name op. Inference (constants), the CPU kernels and the Vulkan
 * layer all use it; inline because it is the interpreter's scalar path (a call per op
 * costs about 5% of a scalar op, measured with callgrind on bench/graph_overhead.py's
 * chain). */
static inline sg_code gr_scalar_binary(const gr_op *op, kn_binop k, const gr_val *a,
                                       const gr_val *b, gr_val *out, sg_error *err) {
  bool fl = a->tag == GV_FLOAT || b->tag == GV_FLOAT;
  bool cmp = k >= KN_EQ && k <= KN_GE;
  if (k == KN_AND || k == KN_OR) {
    bool x, y;
    gv_truthy(a, &x);
    gv_truthy(b, &y);
    *out = gv_bool(k == KN_AND ? (x && y) : (x || y));
    return SG_OK;
  }
  if (fl || k == KN_DIV) {
    double x = a->tag == GV_FLOAT ? a->u.f : (double)(a->tag == GV_INT ? a->u.i : a->u.b);
    double y = b->tag == GV_FLOAT ? b->u.f : (double)(b->tag == GV_INT ? b->u.i : b->u.b);
    if (y == 0 && (k == KN_DIV || k == KN_FLOORDIV || k == KN_MOD))
      return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: division by zero", op->name);
    double r = kn_binop_f64(k, x, y);
    *out = cmp ? gv_bool(r != 0) : gv_float(r);
    return SG_OK;
  }
  int64_t x = a->tag == GV_INT ? a->u.i : a->u.b, y = b->tag == GV_INT ? b->u.i : b->u.b;
  if (y == 0 && (k == KN_FLOORDIV || k == KN_MOD))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: integer division or modulo by zero", op->name);
  if (k == KN_POW && y < 0) {
    *out = gv_float(pow((double)x, (double)y));
    return SG_OK;
  }
  int64_t r = kn_binop_i64(k, x, y);
  if (cmp) *out = gv_bool(r != 0);
  else if (a->tag == GV_BOOL && b->tag == GV_BOOL && (k == KN_MAXIMUM || k == KN_MINIMUM)) *out = gv_bool(r != 0);
  else *out = gv_int(r);
  return SG_OK;
}
/* (pyscalar.c) */
/* The dtype a Python scalar takes next to a tensor of dtype t (NumPy 1.24's weak
 * scalars), and its own dtype alone (bool / int64 / float64). */
kn_dtype gr_weak_dtype(const gr_val *s, kn_dtype t);
kn_dtype gr_strong_dtype(const gr_val *s);
/* The dtype a scalar of dtype s (a 0-d tensor: float(), int(), t[i], a reduction) takes
 * next to a tensor of dtype t with at least one dimension: NumPy 1.24's value-based
 * casting without the value (a value unknown until run time): t when s's kind (bool <
 * int < float) is no higher than t's, else kn_promote(s, t) (docs/sexpr.md "Values and
 * semantics"). */
kn_dtype gr_weak_kind_dtype(kn_dtype s, kn_dtype t);

/* An abstract value as dumps and error messages show it ("float32[2,?]", "int=3"). */
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

#endif /* STAGD_GRAPH_IR_GR_IR_H */
