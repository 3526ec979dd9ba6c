// SPDX-License-Identifier: Apache-2.0
/*
 * fused.c — elementwise chains run in one pass (docs/graph.md "Fused elementwise
 * chains").
 *
 * After compile.c has linearised a graph, gr_fuse_mark finds runs of consecutive
 * instructions that are elementwise ops (+ - * / maximum minimum, and the unary math
 * ops) where each one's result is read only by the next one: a chain. The first
 * instruction records the chain's length. When the interpreter reaches a chain on the
 * CPU, gr_fused_run looks at the operands: if every tensor among them is float32 of the
 * output's shape or broadcasts along one run of its axes (a bias row, a column:
 * gr_fused_broadcast) and the others
 * are Python numbers (weak, so float32 too, as NumPy's rules make them), the whole
 * chain runs as one kn_fused_f32 pass — one output tensor, no
 * intermediate ones, the same bits as the steps one by one. On a device the backend
 * gets the same plan (gr_backend.fused; Vulkan: one generated shader per chain,
 * graph/vulkan/exec_vulkan_fused.c). Otherwise (other dtypes, other broadcasting, no fused
 * kernel) nothing happens and the interpreter runs the steps as they are, so errors,
 * dtypes and locations stay exactly those of the unfused code.
 *
 * Epilogues (docs/graph.md "Epilogues in place"): a chain (one step or more) that
 * reads a temporary for the last time — a matmul's product, a reduction's result —
 * writes its output over that tensor on the CPU when it has the output's shape and
 * nothing else holds it (reusable). On a device, a matmul or reduction whose result only
 * the next chain reads is marked (gr_instr.epilogue) and the pair goes to the backend
 * as one kernel (gr_epilogue_run, gr_backend.epilogue).
 */
#include <string.h>

#include "fused.h"

static atomic_uint_fast64_t fused_runs, fused_in_place;

uint64_t gr_exec_fused_chains(void) { return atomic_load_explicit(&fused_runs, memory_order_relaxed); }
uint64_t gr_exec_fused_in_place(void) { return atomic_load_explicit(&fused_in_place, memory_order_relaxed); }

/* The elementwise step an instruction is, if it is one the fused kernel runs. */
static bool as_step(const gr_instr *in, kn_fused_step *st) {
  if (in->kind != GI_PRIM) return false;
  const gr_op *op = in->op;
  if (op->family == GR_FAM_BINARY && in->nargs == 2 && kn_binary_f32_exact((kn_binop)op->code)) {
    *st = (kn_fused_step){.unary = false, .op = op->code};
    return true;
  }
  if (op->family == GR_FAM_BINARY && in->nargs == 1 && op->code == KN_SUB) {
    *st = (kn_fused_step){.unary = true, .op = KN_NEG};
    return true;
  }
  if (op->family == GR_FAM_UNARY && in->nargs == 1 && op->code != KN_NOT) {
    *st = (kn_fused_step){.unary = true, .op = op->code};
    return true;
  }
  return false;
}

/* next reads prev's result, and nothing after next does */
static bool links(const gr_code *c, int prev, int next) {
  const gr_instr *p = &c->instrs[prev], *n = &c->instrs[next];
  if (c->last_use[p->dst] != next) return false;
  for (int k = 0; k < n->nargs; k++)
    if (n->args[k].kind == GO_LOCAL && n->args[k].idx == p->dst) return true;
  return false;
}

/* operand k of instruction s, a step of the chain starting at pc, is a temporary of the
 * frame (an instruction's result, not a parameter: those are borrowed) read for the
 * last time there, and not the previous step's result */
static bool dies_at(const gr_code *c, int pc, int s, int k) {
  gr_operand o = c->instrs[s].args[k];
  return o.kind == GO_LOCAL && (int)o.idx >= c->nparams && c->last_use[o.idx] == s &&
         !(s > pc && o.idx == c->instrs[s - 1].dst);
}

/* a matmul or a reduction (sum, mean, max, min): a device may run the chain after it
 * in its kernel (gr_backend.epilogue) */
static bool epilogue_head(const gr_instr *in) {
  const gr_op *op = in->op;
  if (op->family == GR_FAM_MATMUL) return in->nargs == 2;
  return op->family == GR_FAM_REDUCE && in->nargs <= 2 &&
         (op->code == KN_SUM || op->code == KN_MEAN || op->code == KN_MAX || op->code == KN_MIN);
}

void gr_fuse_mark(gr_code *c) {
  kn_fused_step st;
  for (int pc = 0; pc < c->ninstr;) {
    int end = pc;
    bool chain = as_step(&c->instrs[pc], &st), dying = false;
    if (chain)
      while (end + 1 < c->ninstr && end + 1 - pc < GR_FUSED_MAX - 1 &&
             as_step(&c->instrs[end + 1], &st) && links(c, end, end + 1))
        end++;
    for (int s = pc; chain && s <= end && !dying; s++)
      for (int k = 0; k < c->instrs[s].nargs && !dying; k++) dying = dies_at(c, pc, s, k);
    c->instrs[pc].fuse = (uint16_t)(end - pc);
    c->instrs[pc].in_place = dying;
    const gr_instr *in = &c->instrs[pc];
    c->instrs[pc].epilogue = !chain && in->kind == GI_PRIM && epilogue_head(in) && pc + 1 < c->ninstr &&
                             as_step(&c->instrs[pc + 1], &st) && links(c, pc, pc + 1);
    pc = end + 1;
  }
}

/* A Python number as float32, as gv_to_tensor makes it for a float32 operand. */
static bool weak_scalar(const gr_val *v, float *out) {
  if (v->tag == GV_FLOAT) *out = (float)v->u.f;
  else if (v->tag == GV_INT) *out = (float)(double)v->u.i;
  else return false; /* bool: a bool operand (NumPy), not float32 */
  return true;
}

static bool is_tensor(const gr_val *v) {
  return v->tag == GV_TENSOR || v->tag == GV_DEVICE || v->tag == GV_RESIDENT;
}

/* The chain at pc as steps over operands; false when it is not one (a step with no
 * tensor operand, an operand neither a tensor nor a Python number). head: the slot of
 * the matmul whose epilogue the chain is (step 0 reads it as the previous value), or
 * -1. */
static bool plan(const gr_code *c, int pc, const gr_val *slots, const gr_val *env, gr_fused *f, int64_t head) {
  const gr_instr *first = &c->instrs[pc];
  f->nsteps = first->fuse + 1;
  f->nvals = 0;
  for (int s = 0; s < f->nsteps; s++) {
    const gr_instr *in = &c->instrs[pc + s];
    if (!as_step(in, &f->steps[s])) return false;
    int ops[2] = {-1, -1}, tensors = 0;
    for (int k = 0; k < in->nargs; k++) {
      gr_operand o = in->args[k];
      if (o.kind == GO_LOCAL && (s > 0 ? o.idx == c->instrs[pc + s - 1].dst : o.idx == head)) {
        tensors++;
        continue; /* -1: the previous step's result */
      }
      const gr_val *v = gr_operand_val(c, slots, env, o);
      int i = f->nvals;
      f->vals[i] = v;
      f->is_scalar[i] = !is_tensor(v);
      if (is_tensor(v)) tensors++;
      else if (!weak_scalar(v, &f->scalar[i])) return false;
      f->dying[i] = dies_at(c, pc, pc + s, k);
      ops[k] = f->nvals++;
    }
    if (tensors == 0) return false; /* Python arithmetic on two numbers */
    f->steps[s].a = ops[0];
    f->steps[s].b = ops[1];
  }
  return true;
}

bool gr_fused_broadcast(int n, const int *ndims, const int64_t *const *shapes, int64_t *out, int *ndim,
                        int64_t *sizes, int64_t *inners) {
  int nd = 0;
  for (int k = 0; k < n; k++) nd = ndims[k] > nd ? ndims[k] : nd;
  for (int d = 0; d < nd; d++) out[d] = 1;
  for (int k = 0; k < n; k++) /* NumPy's broadcast, right-aligned */
    for (int d = 0; d < ndims[k]; d++) {
      int64_t e = shapes[k][d], *r = &out[nd - ndims[k] + d];
      if (e != 1 && *r != 1 && e != *r) return false;
      if (e != 1) *r = e;
    }
  for (int k = 0; k < n; k++) {
    int off = nd - ndims[k], first = -1, last = -1; /* its dims other than 1, in out's axes */
    for (int d = 0; d < ndims[k]; d++)
      if (shapes[k][d] != 1) {
        if (first < 0) first = off + d;
        last = off + d;
      }
    sizes[k] = inners[k] = 1;
    if (first < 0) continue; /* one element */
    for (int d = first; d <= last; d++) {
      if (shapes[k][d - off] != out[d]) return false; /* a 1 inside the run: two pieces */
      sizes[k] *= out[d];
    }
    for (int d = last + 1; d < nd; d++) inners[k] *= out[d];
  }
  *ndim = nd;
  return true;
}

/* A dying operand of f whose tensor the output may overwrite: a host float32 tensor of
 * the output's shape that nothing else holds (one reference, its slot's; not a view,
 * whose buffer another tensor owns); retained. Every element of the output is written
 * after the reads of the same element (cpu_fused.c works block by block, the last step
 * writing), and an operand of the output's shape is read only at the element written. */
static kn_tensor *reusable(const gr_fused *f, int ndim, const int64_t *shape) {
  for (int i = 0; i < f->nvals; i++) {
    if (!f->dying[i] || f->is_scalar[i]) continue;
    kn_tensor *t = f->vals[i]->u.t; /* run_cpu checked: a host float32 tensor */
    if (!t->base && atomic_load_explicit(&t->refcount, memory_order_acquire) == 1 && t->ndim == ndim &&
        !memcmp(t->shape, shape, sizeof(int64_t) * (size_t)ndim))
      return kn_tensor_retain(t);
  }
  return NULL;
}

/* f on the CPU: every tensor operand a host float32 tensor of the output's shape or one
 * gr_fused_broadcast takes, the output not empty; a chain of one step only where it
 * runs in place (else the op's own kernel is as good) */
static bool run_cpu(const gr_fused *f, gr_val *out) {
  kn_fused_input ins[2 * GR_FUSED_MAX];
  int ndims[2 * GR_FUSED_MAX], nt = 0, at[2 * GR_FUSED_MAX];
  const int64_t *shapes[2 * GR_FUSED_MAX];
  for (int i = 0; i < f->nvals; i++) {
    if (f->is_scalar[i]) {
      ins[i] = (kn_fused_input){.data = NULL, .scalar = f->scalar[i]};
      continue;
    }
    const gr_val *v = f->vals[i];
    if (v->tag != GV_TENSOR || v->u.t->dtype != KN_FLOAT32) return false;
    ins[i] = (kn_fused_input){.data = v->u.t->data};
    ndims[nt] = v->u.t->ndim;
    shapes[nt] = v->u.t->shape;
    at[nt++] = i;
  }
  int64_t shape[KN_MAX_DIMS], sizes[2 * GR_FUSED_MAX], inners[2 * GR_FUSED_MAX], size = 1;
  int ndim;
  if (!nt || !gr_fused_broadcast(nt, ndims, shapes, shape, &ndim, sizes, inners)) return false;
  for (int d = 0; d < ndim; d++) size *= shape[d];
  if (size == 0) return false;
  for (int k = 0; k < nt; k++) {
    ins[at[k]].rows = sizes[k] == size ? 0 : sizes[k];
    ins[at[k]].inner = sizes[k] == size ? 1 : inners[k];
  }
  kn_tensor *r = reusable(f, ndim, shape);
  if (r) atomic_fetch_add_explicit(&fused_in_place, 1, memory_order_relaxed);
  else if (f->nsteps == 1) return false;
  else if (!(r = kn_tensor_empty(KN_FLOAT32, ndim, shape))) return false; /* no memory: op by op, whose first result reports it */
  kn_fused_f32(f->steps, f->nsteps, ins, r->data, r->size);
  atomic_fetch_add_explicit(&fused_runs, 1, memory_order_relaxed);
  *out = gv_tensor(r);
  return true;
}

sg_code gr_fused_run(gr_ctx *ctx, const gr_code *c, int pc, const gr_val *slots, const gr_val *env,
                     gr_val *out, bool *done, sg_error *err) {
  gr_fused f;
  *done = false;
  if (!plan(c, pc, slots, env, &f, -1)) return SG_OK;
  /* a device runs a chain of one step as that op (no in-place writing there) */
  if (ctx->backend)
    return ctx->backend->fused && f.nsteps > 1 ? ctx->backend->fused(ctx, &f, out, done, err) : SG_OK;
  *done = run_cpu(&f, out);
  return SG_OK;
}

sg_code gr_epilogue_run(gr_ctx *ctx, const gr_code *c, int pc, const gr_val *slots, const gr_val *env,
                        gr_val *out, bool *done, sg_error *err) {
  const gr_instr *head = &c->instrs[pc];
  gr_fused f;
  gr_val args[2];
  *done = false;
  if (!ctx->backend || !ctx->backend->epilogue || !plan(c, pc + 1, slots, env, &f, head->dst)) return SG_OK;
  for (int k = 0; k < head->nargs; k++) args[k] = *gr_operand_val(c, slots, env, head->args[k]);
  return ctx->backend->epilogue(ctx, head->op, args, head->nargs, &f, out, done, err);
}
