// SPDX-License-Identifier: Apache-2.0
/*
 * exec.c — the graph interpreter.
 *
 * A call runs a graph's compiled code (compile.c) over a frame of value slots:
 * arguments are borrowed, every instruction result is owned by its slot and released
 * when the frame ends. Primitives are called straight through the op table; calls of
 * function values go through gr_call. Limits: call depth (max_depth), native stack use,
 * the request's cancel flag, deadline and tensor budget (checked between instructions,
 * every 256 calls and on every `while` iteration), each turned into a located sg_error
 * — never a crash.
 */
#include <stdlib.h>
#include <string.h>

#include "fused.h"

enum { LOCAL_SLOTS = 48, LOCAL_ARGS = 8 };

sg_code gr_check_deadline(gr_ctx *ctx, sg_error *err) {
  const sg_watch w = {.deadline_ns = ctx->deadline_ns, .cancel = ctx->cancel};
  if (sg_watch_check(&w, "executing the graph", err)) return err->code;
  return sg_watch_check_memory(0, err); /* the request's tensors (max-request-bytes) */
}

/* Between instructions: the cancel flag and the memory budget every time (a load
 * each), the clock every 64 instructions. */
static inline bool should_check(gr_ctx *ctx) {
  return (ctx->cancel && atomic_load_explicit(ctx->cancel, memory_order_relaxed)) || (++ctx->tick & 63) == 0 ||
         !sg_watch_fits(0);
}

static void locate(gr_ctx *ctx, sg_error *err, const gr_node *n) {
  if (err && err->code && err->line == 0 && n && n->line) {
    free(err->file);
    err->file = sg_xstrdup(ctx->mod->file);
    err->line = n->line;
    err->col = n->col;
  }
}

#define resolve gr_operand_val

/* releases the locals instruction pc read for the last time (args from index nargs on:
 * the arguments are borrowed) */
static void release_dead(const gr_code *c, int pc, gr_val *slots, int nargs) {
  const gr_instr *in = &c->instrs[pc];
  for (int k = 0; k < in->nargs; k++)
    if (in->args[k].kind == GO_LOCAL && (int)in->args[k].idx >= nargs && c->last_use[in->args[k].idx] == pc) {
      gv_release(slots[in->args[k].idx]);
      slots[in->args[k].idx] = gv_none();
    }
  if (in->kind == GI_CALL && in->fn.kind == GO_LOCAL && (int)in->fn.idx >= nargs && c->last_use[in->fn.idx] == pc) {
    gv_release(slots[in->fn.idx]);
    slots[in->fn.idx] = gv_none();
  }
}

/* STAGD_FUSE=0 runs elementwise chains op by op (benchmarks, bisecting) */
static bool fuse_on(void) {
  static atomic_int on = -1; /* every thread computes the same value */
  int v = atomic_load_explicit(&on, memory_order_relaxed);
  if (v < 0) {
    const char *e = getenv("STAGD_FUSE");
    v = !(e && !strcmp(e, "0"));
    atomic_store_explicit(&on, v, memory_order_relaxed);
  }
  return v;
}

static sg_code run_graph(gr_ctx *ctx, gr_graph *g, const gr_val *env, gr_val *args, int nargs,
                         gr_val *out, sg_error *err) {
  const gr_code *c = g->code;
  if (!c) return sg_error_set(err, SG_INTERNAL, "graph @%s was not compiled", g->name ? g->name : "?");
  if (nargs != c->nparams)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "@%s takes %d argument%s, got %d",
                        g->name ? g->name : "lambda", c->nparams, c->nparams == 1 ? "" : "s", nargs);
  char here;
  /* `if` branches run inside their function's frame as far as the limit goes */
  int step = g->is_branch ? 0 : 1;
  ctx->depth += step;
  if (ctx->depth > ctx->max_depth) {
    ctx->depth -= step;
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "recursion depth limit exceeded (%d calls deep) in @%s",
                        ctx->max_depth, g->name ? g->name : "lambda");
  }
  if ((size_t)(ctx->stack_base - &here) > ctx->max_stack) {
    ctx->depth -= step;
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                        "recursion too deep for the native stack (%d calls deep) in @%s", ctx->depth,
                        g->name ? g->name : "lambda");
  }
  if ((++ctx->tick & 255) == 0 && gr_check_deadline(ctx, err)) {
    ctx->depth -= step;
    return err->code;
  }
  gr_val local[LOCAL_SLOTS];
  gr_val *slots = c->nslots <= LOCAL_SLOTS ? local : sg_xmalloc(sizeof(gr_val) * (size_t)c->nslots);
  if (nargs) memcpy(slots, args, sizeof(gr_val) * (size_t)nargs);
  for (int i = nargs; i < c->nslots; i++) slots[i].tag = GV_NONE;
  sg_code rc = SG_OK;
  gr_val av_local[LOCAL_ARGS];
  for (int pc = 0; pc < c->ninstr; pc++) {
    const gr_instr *in = &c->instrs[pc];
    /* a chain in one pass, or a matmul / reduction with the chain after it in one device
     * kernel: instructions pc..last at once, or (not done) one by one */
    bool epi = in->epilogue && ctx->backend;
    if ((epi || in->fuse || in->in_place) && fuse_on()) {
      int last = epi ? pc + 1 + c->instrs[pc + 1].fuse : pc + in->fuse;
      bool done;
      gr_val *res = &slots[c->instrs[last].dst];
      rc = epi ? gr_epilogue_run(ctx, c, pc, slots, env, res, &done, err)
               : gr_fused_run(ctx, c, pc, slots, env, res, &done, err);
      if (rc) {
        locate(ctx, err, in->node);
        break;
      }
      if (done) {
        for (int s = pc; s <= last; s++) release_dead(c, s, slots, nargs);
        pc = last;
        continue;
      }
    }
    gr_val *av = in->nargs <= LOCAL_ARGS ? av_local : sg_xmalloc(sizeof(gr_val) * in->nargs);
    for (int k = 0; k < in->nargs; k++) av[k] = *resolve(c, slots, env, in->args[k]);
    gr_val *dst = &slots[in->dst];
    switch (in->kind) {
    case GI_PRIM:
      rc = gr_prim(ctx, in->op, av, in->nargs, dst, err);
      break;
    case GI_CALL: {
      gr_val fn = *resolve(c, slots, env, in->fn);
      rc = gr_call(ctx, fn, av, in->nargs, dst, err);
      break;
    }
    case GI_MKCLOS: { /* device values are captured as they are: closures own them */
      gr_obj *o = gv_obj_new(in->nargs);
      o->graph = in->graph;
      for (int k = 0; k < in->nargs; k++) o->items[k] = gv_retain(av[k]);
      dst->tag = GV_CLOSURE;
      dst->u.o = o;
      break;
    }
    }
    if (av != av_local) free(av);
    if (rc) {
      locate(ctx, err, in->node);
      break;
    }
    /* a local's value (and the tensors and device buffers it holds) is released at its
     * last use: memory comes back early, and later kernels on a device reuse the buffers */
    release_dead(c, pc, slots, nargs);
    if (should_check(ctx) && (rc = gr_check_deadline(ctx, err))) {
      locate(ctx, err, in->node);
      break;
    }
  }
  if (!rc) *out = gv_retain(*resolve(c, slots, env, c->out));
  for (int i = nargs; i < c->nslots; i++) gv_release(slots[i]);
  if (slots != local) free(slots);
  ctx->depth -= step;
  return rc;
}

sg_code gr_call(gr_ctx *ctx, gr_val fn, gr_val *args, int n, gr_val *out, sg_error *err) {
  switch (fn.tag) {
  case GV_GRAPH: return run_graph(ctx, fn.u.g, NULL, args, n, out, err);
  case GV_CLOSURE: return run_graph(ctx, fn.u.o->graph, fn.u.o->items, args, n, out, err);
  case GV_PRIM: return gr_apply_prim(ctx, fn.u.op, args, n, out, err);
  default:
    return sg_error_set(err, SG_INVALID_ARGUMENT, "cannot call a value of type %s (expected a function)",
                        gv_type_name(&fn));
  }
}

sg_code gr_apply_prim(gr_ctx *ctx, const gr_op *op, gr_val *args, int n, gr_val *out,
                      sg_error *err) {
  if (!gr_op_takes(op, n))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "wrong number of arguments to '%s': got %d",
                        op->name, n);
  if (ctx->backend) return ctx->backend->prim(ctx, op, args, n, out, err); /* as a primitive node would run */
  /* a primitive called as a value reads device-resident arguments through host copies */
  gr_val host[64];
  bool copied = false;
  sg_code rc = n <= 64 ? gv_args_to_host(host, args, n, &copied, err) : SG_OK;
  if (rc) return rc;
  rc = gr_cpu_kernel(op)(ctx, op, copied ? host : args, n, out, err);
  for (int i = 0; copied && i < n; i++) gv_release(host[i]);
  return rc;
}

sg_code gr_exec_fold(const gr_op *op, gr_val *args, int n, gr_val *out, sg_error *err) {
  gr_ctx ctx = {.max_depth = 1};
  return gr_apply_prim(&ctx, op, args, n, out, err);
}
