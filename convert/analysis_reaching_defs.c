// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_reaching_defs.c — which symbols are defined where. Two forward analyses
 * over each CFG with bitsets: "must" (defined on every path: intersection at joins)
 * and "may" (on some path: union). ENTRY defines the parameters and everything not
 * local to the scope. A write defines its symbol and makes the qualified names below
 * it unknown (after `a = ...`, a.b is no longer known to exist); `del` undefines.
 * The definitions reaching one Name are found on demand by a backward search.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis_priv.h"
#include "analysis_dataflow.h"

static void transfer(const an_dataflow *d, int i, const uint64_t *in, uint64_t *out, int W,
                     bool must) {
  const int *mod = must ? d->must_mod[i] : d->mod[i];
  memcpy(out, in, (size_t)W * sizeof *out);
  an_kill_desc(d, d->must_mod[i], out);
  for (const int *x = mod; *x >= 0; x++) BIT_SET(out, *x);
  for (const int *x = d->del[i]; *x >= 0; x++) BIT_CLR(out, *x);
  an_kill_desc(d, d->del[i], out);
}

/* in-set of node n: meet (and = intersection, else union) over its preds. A `for` or
 * `with` head binds its target only on the edge into its body: on its other edges
 * the pred's in-set flows instead of its out-set. */
static void meet(const an_cfg *g, const py_cfg_node *n, const uint64_t *outs,
                 const uint64_t *ins, bool and, uint64_t *in) {
  int W = g->words ? g->words : 1;
  memset(in, 0, (size_t)W * sizeof *in);
  for (int k = 0; k < n->nprev; k++) {
    int pi = n->prev[k]->index;
    bool exit_edge = g->body_first[pi] >= 0 && g->body_first[pi] != n->index;
    const uint64_t *p = (exit_edge ? ins : outs) + (size_t)pi * (size_t)W;
    for (int w = 0; w < W; w++) in[w] = (and && k) ? (in[w] & p[w]) : (in[w] | p[w]);
  }
}

void an_reaching_solve(py_an *an, an_cfg *g) {
  (void)an;
  int nn = g->pub.nnodes, W = g->words ? g->words : 1;
  const an_dataflow *d = g->df;
  g->must_out = sg_xcalloc((size_t)nn * (size_t)W, sizeof(uint64_t));
  g->may_out = sg_xcalloc((size_t)nn * (size_t)W, sizeof(uint64_t));
  g->must_in = sg_xcalloc((size_t)nn * (size_t)W, sizeof(uint64_t));
  g->may_in = sg_xcalloc((size_t)nn * (size_t)W, sizeof(uint64_t));
  int entry = g->pub.entry->index;
  /* top: every symbol of the universe (whole words, then the tail) */
  uint64_t *top = an_bits_new(g);
  for (int w = 0; w < g->nuniv / 64; w++) top[w] = ~0ULL;
  if (g->nuniv % 64) top[g->nuniv / 64] = (1ULL << (g->nuniv % 64)) - 1;
  for (int i = 0; i < nn; i++) {
    if (i == entry) continue;
    memcpy(g->must_out + (size_t)i * (size_t)W, top, (size_t)W * sizeof *top);
    memcpy(g->must_in + (size_t)i * (size_t)W, top, (size_t)W * sizeof *top);
  }
  free(top);
  uint64_t *e_must = g->must_out + (size_t)entry * (size_t)W;
  uint64_t *e_may = g->may_out + (size_t)entry * (size_t)W;
  for (int w = 0; w < g->words; w++) e_must[w] = g->nonlocal_bits[w];
  for (const int *x = d->mod[entry]; *x >= 0; x++) BIT_SET(e_must, *x);
  memcpy(e_may, e_must, (size_t)W * sizeof *e_may);

  /* sweeps in node order (≈ source order), recomputing only nodes whose preds
   * changed since they were last computed */
  uint64_t *in = an_bits_new(g), *out = an_bits_new(g);
  unsigned char *dirty = sg_xmalloc((size_t)nn);
  memset(dirty, 1, (size_t)nn);
  bool changed = true;
  while (changed) {
    changed = false;
    for (int i = 0; i < nn; i++) {
      if (i == entry || !dirty[i]) continue;
      dirty[i] = 0;
      const py_cfg_node *n = g->pub.nodes[i];
      bool moved = false;
      for (int pass = 0; pass < 2; pass++) {
        uint64_t *outs = pass ? g->may_out : g->must_out;
        uint64_t *ins = pass ? g->may_in : g->must_in;
        meet(g, n, outs, ins, pass == 0, in);
        uint64_t *cur_in = ins + (size_t)i * (size_t)W;
        if (memcmp(cur_in, in, (size_t)W * sizeof *in)) {
          memcpy(cur_in, in, (size_t)W * sizeof *in);
          moved = true; /* exit edges of for / with heads carry the in-set */
        }
        transfer(d, i, in, out, W, pass == 0);
        uint64_t *cur = outs + (size_t)i * (size_t)W;
        if (memcmp(cur, out, (size_t)W * sizeof *out)) {
          memcpy(cur, out, (size_t)W * sizeof *out);
          moved = true;
        }
      }
      if (moved) {
        changed = true;
        for (int k = 0; k < n->nnext; k++) dirty[n->next[k]->index] = 1;
      }
    }
  }
  free(dirty);
  free(in);
  free(out);
}

static py_symset node_in(py_an *an, const py_stmt *s, bool must) {
  py_symset none = {0, NULL};
  const py_cfg_node *n = py_an_cfg_node(an, s);
  an_cfg *g = n ? an_get(&an->node_cfg, n) : NULL;
  if (!g) return none;
  size_t W = (size_t)(g->words ? g->words : 1);
  return an_bits_to_set(an, g, (must ? g->must_in : g->may_in) + (size_t)n->index * W);
}

py_symset py_an_defined_in(py_an *an, const py_stmt *s) { return node_in(an, s, true); }
py_symset py_an_maybe_defined_in(py_an *an, const py_stmt *s) { return node_in(an, s, false); }

py_symset py_an_defined_out(py_an *an, const py_stmt *s) {
  py_symset none = {0, NULL};
  an_stmt_info *info = an_stmt_info_get(an, s);
  if (!info || !info->nfront) return none;
  an_cfg *g = info->cfg;
  int W = g->words ? g->words : 1;
  uint64_t *acc = an_bits_new(g);
  for (int i = 0; i < info->nfront; i++) {
    int fi = info->front[i]->index;
    const uint64_t *b = (g->body_first[fi] >= 0 ? g->must_in : g->must_out) + (size_t)fi * (size_t)W;
    for (int w = 0; w < W; w++) acc[w] = i ? (acc[w] & b[w]) : b[w];
  }
  py_symset r = an_bits_to_set(an, g, acc);
  free(acc);
  return r;
}

static int cmp_index(const void *x, const void *y) {
  const py_cfg_node *a = *(const py_cfg_node *const *)x, *b = *(const py_cfg_node *const *)y;
  return (a->index > b->index) - (a->index < b->index);
}

int py_an_reaching_defs(py_an *an, const py_expr *name, const py_cfg_node *const **out,
                        bool *maybe_undefined) {
  *out = NULL;
  if (maybe_undefined) *maybe_undefined = false;
  if (!name || name->kind != PY_K_Name) return 0;
  const py_cfg_node *start = an_get(&an->name_node, name);
  an_cfg *g = start ? an_get(&an->node_cfg, start) : NULL;
  if (!g) return 0;
  py_sym x = py_an_sym(an, name->v.Name.id);
  bool local = py_symset_has(g->scope->pub.locals, x);
  bool undef = false;
  /* visited per (node, "reached over a for head's exit edge", where the head's
   * target binding does not happen) */
  unsigned char *seen = sg_xcalloc((size_t)g->pub.nnodes, 1);
  typedef struct item {
    const py_cfg_node *n;
    bool exit_edge;
  } item;
  SG_VEC(item) stack = {0};
  SG_VEC(const py_cfg_node *) found = {0};
#define PUSH_PREDS(m)                                                                   \
  for (int k = 0; k < (m)->nprev; k++) {                                                \
    const py_cfg_node *p_ = (m)->prev[k];                                               \
    item it_ = {p_, g->body_first[p_->index] >= 0 && g->body_first[p_->index] != (m)->index}; \
    sg_vec_push(&stack, it_);                                                           \
  }
  PUSH_PREDS(start);
  while (stack.len) {
    item it = sg_vec_pop(&stack);
    const py_cfg_node *m = it.n;
    unsigned char bit = it.exit_edge ? 2 : 1;
    if (seen[m->index] & bit) continue;
    seen[m->index] |= bit;
    if (py_symset_has(m->act.deleted, x)) {
      undef = true;
    } else if (!it.exit_edge && py_symset_has(m->act.modified, x)) {
      sg_vec_push(&found, m);
      const py_symset *maybe = an_get(&an->maybe_writes, m);
      if (maybe && py_symset_has(*maybe, x)) PUSH_PREDS(m); /* it may not happen */
    } else if (m->kind == PY_CFG_ENTRY) {
      if (!local) sg_vec_push(&found, m);
      else undef = true;
    } else {
      PUSH_PREDS(m);
    }
  }
#undef PUSH_PREDS
  int n = (int)found.len;
  if (n) {
    qsort(found.data, found.len, sizeof *found.data, cmp_index); /* stable output */
    n = 0;
    for (size_t i = 0; i < found.len; i++) /* a node can be found over both edge kinds */
      if (!n || found.data[n - 1] != found.data[i]) found.data[n++] = found.data[i];
    const py_cfg_node **a = sg_arena_alloc(&an->arena, (size_t)n * sizeof *a);
    memcpy(a, found.data, (size_t)n * sizeof *a);
    *out = a;
  }
  if (maybe_undefined) *maybe_undefined = undef;
  free(seen);
  sg_vec_free(&stack);
  sg_vec_free(&found);
  return n;
}
