// SPDX-License-Identifier: Apache-2.0
/*
 * compile.c — closure conversion and linearisation for the executor.
 *
 * Each graph reachable from a root becomes a gr_code: parameters in slots
 * 0..nparams-1, one slot per scheduled apply node, operands that name a local slot,
 * a constant-pool entry or a free-variable index (the graph's closure environment).
 * A graph constant whose graph has free variables turns into a MKCLOS instruction
 * that captures those values — that is the closure conversion; graphs without free
 * variables stay plain values and cost nothing to pass around.
 */
#include <stdlib.h>
#include <string.h>

#include "fused.h"

typedef struct cbuild {
  gr_module *m;
  gr_graph *g;
  SG_VEC(gr_instr) ins;
  SG_VEC(gr_val) consts;
  sg_map closure_slot; /* nested graph → slot of its MKCLOS */
  int nslots;
} cbuild;

static int fv_index(gr_graph *g, gr_node *n) {
  for (size_t i = 0; i < g->fvs.len; i++)
    if (g->fvs.data[i] == n) return (int)i;
  return -1;
}

static sg_code operand(cbuild *b, gr_node *in, gr_node *site, gr_operand *o, sg_error *err);

static sg_code local_or_free(cbuild *b, gr_node *in, gr_node *site, gr_operand *o, sg_error *err) {
  if (in->graph == b->g) {
    if (in->slot < 0)
      return gr_error_at(err, SG_INTERNAL, b->m, site, "internal: node %u used before it is computed", in->id);
    o->kind = GO_LOCAL;
    o->idx = (uint32_t)in->slot;
    return SG_OK;
  }
  int k = fv_index(b->g, in);
  if (k < 0) return gr_error_at(err, SG_INTERNAL, b->m, site, "internal: free variable %u not captured", in->id);
  o->kind = GO_FREE;
  o->idx = (uint32_t)k;
  return SG_OK;
}

static sg_code operand(cbuild *b, gr_node *in, gr_node *site, gr_operand *o, sg_error *err) {
  if (in->kind != GR_CONST) return local_or_free(b, in, site, o, err);
  if (in->value.tag == GV_GRAPH && in->value.u.g->fvs.len > 0) {
    gr_graph *h = in->value.u.g;
    void *slot;
    if (!sg_map_get(&b->closure_slot, (uintptr_t)h, &slot)) {
      gr_instr ci = {0};
      ci.kind = GI_MKCLOS;
      ci.graph = h;
      ci.nargs = (uint16_t)h->fvs.len;
      ci.args = sg_arena_alloc(&b->m->arena, sizeof(gr_operand) * h->fvs.len);
      ci.node = site;
      for (size_t k = 0; k < h->fvs.len; k++)
        if (local_or_free(b, h->fvs.data[k], site, &ci.args[k], err)) return err->code;
      ci.dst = (uint32_t)b->nslots++;
      slot = (void *)(uintptr_t)ci.dst;
      sg_map_put(&b->closure_slot, (uintptr_t)h, slot);
      sg_vec_push(&b->ins, ci);
    }
    o->kind = GO_LOCAL;
    o->idx = (uint32_t)(uintptr_t)slot;
    return SG_OK;
  }
  o->kind = GO_CONST;
  o->idx = (uint32_t)b->consts.len;
  sg_vec_push(&b->consts, gv_retain(in->value));
  return SG_OK;
}

static sg_code compile_graph(gr_module *m, gr_graph *g, sg_error *err) {
  cbuild b = {.m = m, .g = g};
  gr_node_vec sched = {0};
  gr_schedule(g, &sched);
  for (int i = 0; i < g->nparams; i++) g->params[i]->slot = i;
  b.nslots = g->nparams;
  for (size_t i = 0; i < sched.len; i++) sched.data[i]->slot = -1;
  sg_code rc = SG_OK;
  for (size_t i = 0; i < sched.len && !rc; i++) {
    gr_node *n = sched.data[i];
    gr_instr in = {0};
    in.node = n;
    const gr_op *op = gr_node_prim(n);
    in.nargs = (uint16_t)(n->ninputs - 1);
    in.args = sg_arena_alloc(&m->arena, sizeof(gr_operand) * (size_t)(n->ninputs));
    if (op) {
      in.kind = GI_PRIM;
      in.op = op;
      if (!gr_op_takes(op, in.nargs)) /* a call the reader did not see by name (`((begin ones))`) */
        rc = gr_error_at(err, SG_INVALID_ARGUMENT, m, n, "wrong number of arguments to '%s': got %d", op->name,
                         in.nargs);
    } else {
      in.kind = GI_CALL;
      rc = operand(&b, n->inputs[0], n, &in.fn, err);
    }
    for (int k = 1; k < n->ninputs && !rc; k++) rc = operand(&b, n->inputs[k], n, &in.args[k - 1], err);
    n->slot = b.nslots++;
    in.dst = (uint32_t)n->slot;
    sg_vec_push(&b.ins, in);
  }
  gr_code *c = sg_arena_calloc(&m->arena, 1, sizeof *c);
  if (!rc) rc = operand(&b, g->output, g->output, &c->out, err);
  c->nparams = g->nparams;
  c->nslots = b.nslots;
  c->ninstr = (int)b.ins.len;
  c->instrs = sg_arena_alloc(&m->arena, sizeof(gr_instr) * (b.ins.len ? b.ins.len : 1));
  if (b.ins.len) memcpy(c->instrs, b.ins.data, sizeof(gr_instr) * b.ins.len);
  c->last_use = sg_arena_alloc(&m->arena, sizeof(int) * (size_t)(c->nslots ? c->nslots : 1));
  for (int s = 0; s < c->nslots; s++) c->last_use[s] = -1;
  for (int pc = 0; pc < c->ninstr; pc++) {
    const gr_instr *in = &c->instrs[pc];
    for (int k = 0; k < in->nargs; k++)
      if (in->args[k].kind == GO_LOCAL) c->last_use[in->args[k].idx] = pc;
    if (in->kind == GI_CALL && in->fn.kind == GO_LOCAL) c->last_use[in->fn.idx] = pc;
  }
  if (!rc && c->out.kind == GO_LOCAL) c->last_use[c->out.idx] = c->ninstr;
  if (!rc) gr_fuse_mark(c);
  c->nconsts = (int)b.consts.len;
  c->consts = sg_arena_alloc(&m->arena, sizeof(gr_val) * (b.consts.len ? b.consts.len : 1));
  if (b.consts.len) memcpy(c->consts, b.consts.data, sizeof(gr_val) * b.consts.len);
  for (size_t k = 0; k < b.consts.len; k++) gr_module_hold(m, b.consts.data[k]); /* c borrows */
  g->code = c;
  sg_vec_free(&b.ins);
  sg_vec_free(&b.consts);
  sg_vec_free(&sched);
  sg_map_free(&b.closure_slot);
  return rc;
}

sg_code gr_compile(gr_module *m, gr_graph *entry, sg_error *err) {
  gr_compute_fvs(m);
  gr_graph_vec gs = {0};
  sg_map seen = SG_MAP_INIT;
  /* every live top-level def is a root (run --entry may name any of them) */
  for (size_t i = 0; i < m->graphs.len; i++) {
    gr_graph *r = m->graphs.data[i];
    if (!r->parent && !r->dead && !r->code) gr_reach_more(r, &seen, &gs);
  }
  sg_map_free(&seen);
  sg_code rc = SG_OK;
  for (size_t k = 0; k < gs.len && !rc; k++) {
    if (sg_watch_stopped()) rc = sg_watch_poll("compiling the program", err);
    else if (!gs.data[k]->code) rc = compile_graph(m, gs.data[k], err) ? err->code : SG_OK;
  }
  sg_vec_free(&gs);
  if (rc) return rc;
  (void)entry;
  return SG_OK;
}
