// SPDX-License-Identifier: Apache-2.0
/*
 * gr_exec.h — graph/exec: running programs. compile.c turns each graph into linear
 * code (closure conversion, slots, last uses); exec.c interprets it (calls, closures,
 * limits, deadline); the CPU kernels of every op family live beside it (ops_cpu.c,
 * ops_adjoint.c, ops_optim.c) and form the op table's CPU column (kernels.c). A device
 * backend (vulkan/) plugs in through gr_backend: the interpreter hands it each
 * primitive of a request it runs, and never knows which backend it is. Sees the IR only.
 */
#ifndef STAGD_GRAPH_EXEC_GR_EXEC_H
#define STAGD_GRAPH_EXEC_GR_EXEC_H

#include "gr_ir.h"

typedef struct gr_ctx gr_ctx;
typedef struct gr_txn gr_txn;

/* A family's CPU kernel: args borrowed, *out owned by the caller. */
typedef sg_code (*gr_cpu_fn)(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                             sg_error *err);
/* The op table's CPU column: the kernel of op's family (every family has one). */
extern const gr_cpu_fn gr_cpu_kernels[GR_FAM_COUNT];
static inline gr_cpu_fn gr_cpu_kernel(const gr_op *op) { return gr_cpu_kernels[op->family]; }

/* An elementwise chain about to run as one pass (fused.c): its steps (kn_fused_step,
 * each operand -1 for the previous step's value or an index into vals) and operands,
 * each a tensor value (unchecked: the runner checks its dtype and shape) or a Python
 * number, whose float32 value is scalar[i]. dying[i]: vals[i] is a temporary of the
 * frame read for the last time in the chain, whose tensor the chain may write its
 * output over when nothing else holds it (the epilogue of a matmul, a reduction). */
enum { GR_FUSED_MAX = 32 };
typedef struct gr_fused {
  int nsteps, nvals;
  kn_fused_step steps[GR_FUSED_MAX];
  const gr_val *vals[2 * GR_FUSED_MAX];
  bool is_scalar[2 * GR_FUSED_MAX];
  float scalar[2 * GR_FUSED_MAX];
  bool dying[2 * GR_FUSED_MAX];
} gr_fused;

/* The output shape (out, *ndim: NumPy's broadcast of the n tensor shapes) of a chain
 * whose tensors' dims other than 1 each form one run of the output's axes (a bias row
 * [C] or [1, C] and a column [R, 1] against [R, C], a 0-d tensor), and how a fused
 * kernel reads tensor k: element i of the output is element (i / inners[k]) %
 * sizes[k] of it (sizes[k]: its element count). false for any other broadcast ([R, 1,
 * C] against [R, K, C]: two runs), which runs op by op. */
bool gr_fused_broadcast(int n, const int *ndims, const int64_t *const *shapes, int64_t *out, int *ndim,
                        int64_t *sizes, int64_t *inners);

/* A device backend for one request (installed in the context by the backend when the
 * request starts; vulkan/gr_vulkan.h). */
typedef struct gr_backend {
  /* Runs one primitive: a device kernel, or the CPU kernel on host copies. */
  sg_code (*prim)(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err);
  /* A control-flow predicate *v (owned) computed on the device, read back as a host
   * tensor; anything else is left alone. */
  sg_code (*predicate)(gr_ctx *ctx, gr_val *v, sg_error *err);
  /* Runs chain f as one pass on the device when its operands allow: *out (the last
   * step's value) and *done set; *done false: the steps run one by one. NULL: never. */
  sg_code (*fused)(gr_ctx *ctx, const gr_fused *f, gr_val *out, bool *done, sg_error *err);
  /* Runs primitive op (a matmul, a reduction) on args with chain f as its epilogue — f's step 0
   * reads the op's result as its previous value — in one kernel where the device can:
   * *out (the chain's last value) and *done set; *done false: the op, then the chain,
   * run as they are. NULL: never. */
  sg_code (*epilogue)(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, const gr_fused *f, gr_val *out,
                      bool *done, sg_error *err);
} gr_backend;

/* ------------------------------------------------------------ compiled code */
typedef enum gr_okind { GO_LOCAL, GO_CONST, GO_FREE } gr_okind;
typedef struct gr_operand {
  uint32_t kind : 2;
  uint32_t idx : 30;
} gr_operand;

typedef enum gr_ikind { GI_PRIM, GI_CALL, GI_MKCLOS } gr_ikind;
typedef struct gr_instr {
  uint8_t kind;
  uint16_t nargs;
  /* on the first instruction of an elementwise chain (fused.c): how many of the
   * following instructions belong to it; 0 elsewhere */
  uint16_t fuse;
  /* on the first instruction of a chain (of one step or more) that reads a temporary
   * for the last time: its output may be written over that temporary (fused.c) */
  uint8_t in_place;
  /* on a matmul or reduction whose result only the chain starting at the next
   * instruction reads: a device may run that chain in its kernel (gr_backend.epilogue) */
  uint8_t epilogue;
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
  gr_val *consts; /* borrowed: the module holds them (gr_module_hold) */
  gr_operand out;
  /* per slot, the last instruction reading it (-1: none; ninstr: the output slot, which
   * never dies): the interpreter releases a local's value right after that instruction */
  int *last_use;
} gr_code;

/* Compiles every graph reachable from entry (closure conversion + schedules). */
sg_code gr_compile(gr_module *m, gr_graph *entry, sg_error *err);

/* ----------------------------------------------------------------- running */
struct gr_ctx {
  gr_module *mod;
  uint64_t deadline_ns; /* absolute sg_now_ns(); 0 = none */
  atomic_bool *cancel;  /* the client gave up (client cancel, disconnect, shutdown); NULL = none */
  int depth, max_depth;
  uint32_t tick;
  char *stack_base;
  size_t max_stack;
  sg_buf *printed;
  gr_node *site; /* node being executed (for locations) */
  const gr_backend *backend; /* NULL: every primitive runs on the CPU kernels */
  void *dev;                 /* the backend's state for this request */
  gr_txn *txn;               /* the request's variable log (txn.c); NULL: none */
};

sg_code gr_call(gr_ctx *ctx, gr_val fn, gr_val *args, int n, gr_val *out, sg_error *err);
/* A primitive called as a value (arity checked): on the request's backend, or on the
 * CPU with device-resident arguments read through host copies. */
sg_code gr_apply_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                      sg_error *err);
/* Runs primitive op on the request's backend, else its CPU kernel. Composite kernels
 * (optimizer steps, AD helpers) chain their steps through it. */
static inline sg_code gr_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                              sg_error *err) {
  return ctx->backend ? ctx->backend->prim(ctx, op, args, n, out, err)
                      : gr_cpu_kernel(op)(ctx, op, args, n, out, err);
}
/* CANCELLED, DEADLINE_EXCEEDED or RESOURCE_EXHAUSTED (max-request-bytes) when the
 * request must stop; loops in kernels call it at their back-edges. */
sg_code gr_check_deadline(gr_ctx *ctx, sg_error *err);
/* How many elementwise chains ran as one fused pass on the CPU (fused.c) since the
 * process began (a device's own: gr_vk_stats.fused); STAGD_FUSE=0 runs every chain op
 * by op. */
uint64_t gr_exec_fused_chains(void);
/* How many of those wrote their output over a temporary they read for the last time
 * (a matmul's, a reduction's result: no new tensor) instead of a new tensor. */
uint64_t gr_exec_fused_in_place(void);

/* ------------------------------------------- all-or-nothing variables (txn.c)
 * A request runs between gr_txn_begin and gr_txn_end; its variable kernels read and
 * write cells through gr_var_read / gr_var_write, which see and log the request's own
 * updates; gr_txn_end publishes them all when rc is SG_OK, else none. It returns
 * GR_TXN_RETRY when a cell the request read changed meanwhile (nothing published):
 * the caller discards the attempt's results and runs it again with attempt + 1. */
enum { GR_TXN_RETRY = 1000 };
sg_code gr_txn_begin(gr_ctx *ctx, int attempt, sg_error *err);
/* The loop around them: attempt(ctx, arg, res) in a transaction until it commits or
 * fails (*res is set whatever it returns; an attempt starts from scratch). */
typedef sg_code (*gr_txn_attempt)(gr_ctx *ctx, void *arg, gr_val *res, sg_error *err);
sg_code gr_txn_run(gr_ctx *ctx, gr_txn_attempt attempt, void *arg, gr_val *res, sg_error *err);
sg_code gr_txn_end(gr_ctx *ctx, sg_code rc, sg_error *err);
/* The request's view of a cell (new reference). */
gr_val gr_var_read(gr_ctx *ctx, gr_obj *cell);
/* INVALID_ARGUMENT when storing v in cell would make a cycle (v reaches cell through
 * containers or other cells as this request sees them): assign refuses it (txn.c). */
sg_code gr_var_refuse_cycle(gr_ctx *ctx, const gr_val *v, const gr_obj *cell, sg_error *err);
/* Logs nv (taken) as the cell's new value. */
void gr_var_write(gr_ctx *ctx, gr_obj *cell, gr_val nv);
/* Constant folding's evaluator (opt/gr_opt.h gr_fold_fn): op's CPU kernel on host
 * constants, in a context of its own. */
sg_code gr_exec_fold(const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err);

/* ------------------------------------------------- kernel argument helpers */
sg_code gr_int_arg(const gr_op *op, const gr_val *v, int64_t *out, sg_error *err);
sg_code gr_shape_arg(const gr_op *op, const gr_val *v, int *ndim, int64_t *shape, sg_error *err);

#endif /* STAGD_GRAPH_EXEC_GR_EXEC_H */
