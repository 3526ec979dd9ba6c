// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_dataflow.c — what the liveness and reaching-definitions solvers share:
 * each CFG's universe (the sorted symbols it mentions; bit i of a bitset is univ[i]),
 * per-node activity translated to universe indices, "descendant" lists (a.b and a[0]
 * are descendants of a: rebinding a kills them), and bitset helpers.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis_priv.h"
#include "analysis_dataflow.h"

static void push_set(an_symvec *v, py_symset s) {
  for (int i = 0; i < s.n; i++) sg_vec_push(v, s.a[i]);
}

int an_univ_index(const an_cfg *g, py_sym s) {
  int lo = 0, hi = g->nuniv;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (g->univ[mid] == s) return mid;
    if (g->univ[mid] < s) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

uint64_t *an_bits_new(const an_cfg *g) {
  return sg_xcalloc((size_t)(g->words ? g->words : 1), sizeof(uint64_t));
}

py_symset an_bits_to_set(py_an *an, const an_cfg *g, const uint64_t *bits) {
  py_symset r = {0, NULL};
  int n = 0;
  for (int w = 0; w < g->words; w++) n += __builtin_popcountll(bits[w]);
  if (!n) return r;
  py_sym *a = sg_arena_alloc(&an->arena, (size_t)n * sizeof *a);
  int k = 0;
  for (int w = 0; w < g->words; w++)
    for (uint64_t x = bits[w]; x; x &= x - 1) a[k++] = g->univ[w * 64 + __builtin_ctzll(x)];
  r.n = n;
  r.a = a;
  return r;
}

static int *to_idx(py_an *an, const an_cfg *g, py_symset s) {
  int *a = sg_arena_alloc(&an->arena, (size_t)(s.n + 1) * sizeof *a);
  for (int i = 0; i < s.n; i++) a[i] = an_univ_index(g, s.a[i]);
  a[s.n] = -1;
  return a;
}

void an_dataflow_prepare(py_an *an, an_cfg *g) {
  const py_scope *sc = &g->scope->pub;
  an_symvec v = {0};
  for (int i = 0; i < g->pub.nnodes; i++) {
    const py_cfg_node *n = g->pub.nodes[i];
    push_set(&v, n->act.read);
    push_set(&v, n->act.modified);
    push_set(&v, n->act.deleted);
  }
  push_set(&v, sc->params);
  push_set(&v, sc->globals);
  push_set(&v, sc->nonlocals);
  py_symset u = an_symset_from(an, v.data, v.len);
  sg_vec_free(&v);
  g->univ = (py_sym *)u.a;
  g->nuniv = u.n;
  g->words = (u.n + 63) / 64;
  g->nonlocal_bits = an_bits_new(g);
  g->composite_bits = an_bits_new(g);
  for (int i = 0; i < u.n; i++) {
    const py_sym_info *in = &an->syms.data[u.a[i]];
    if (!py_symset_has(sc->locals, in->root)) BIT_SET(g->nonlocal_bits, i);
    if (in->kind != PY_QN_NAME) BIT_SET(g->composite_bits, i);
  }
  /* descendants, CSR: desc[desc_start[i] .. desc_start[i+1]) */
  an_dataflow *d = sg_arena_calloc(&an->arena, 1, sizeof *d);
  d->desc_start = sg_arena_calloc(&an->arena, (size_t)u.n + 1, sizeof(int));
  for (int pass = 0; pass < 2; pass++) {
    int *fill = pass ? sg_xcalloc((size_t)u.n + 1, sizeof(int)) : NULL;
    for (int i = 0; i < u.n; i++)
      for (py_sym p = an->syms.data[u.a[i]].parent; p != PY_SYM_NONE; p = an->syms.data[p].parent) {
        int pi = an_univ_index(g, p);
        if (pi < 0) continue;
        if (!pass) d->desc_start[pi + 1]++;
        else d->desc[d->desc_start[pi] + fill[pi]++] = i;
      }
    if (!pass) {
      for (int i = 0; i < u.n; i++) d->desc_start[i + 1] += d->desc_start[i];
      d->desc = sg_arena_alloc(&an->arena, (size_t)(d->desc_start[u.n] + 1) * sizeof(int));
    }
    free(fill);
  }
  d->read = sg_arena_alloc(&an->arena, (size_t)g->pub.nnodes * sizeof(int *));
  d->mod = sg_arena_alloc(&an->arena, (size_t)g->pub.nnodes * sizeof(int *));
  d->del = sg_arena_alloc(&an->arena, (size_t)g->pub.nnodes * sizeof(int *));
  d->must_mod = sg_arena_alloc(&an->arena, (size_t)g->pub.nnodes * sizeof(int *));
  for (int i = 0; i < g->pub.nnodes; i++) {
    const py_cfg_node *n = g->pub.nodes[i];
    d->read[i] = to_idx(an, g, n->act.read);
    d->mod[i] = to_idx(an, g, n->act.modified);
    d->del[i] = to_idx(an, g, n->act.deleted);
    const py_symset *maybe = an_get(&an->maybe_writes, n);
    d->must_mod[i] = maybe ? to_idx(an, g, py_symset_diff(an, n->act.modified, *maybe)) : d->mod[i];
  }
  g->df = d;
  g->body_first = sg_xmalloc((size_t)g->pub.nnodes * sizeof(int));
  for (int i = 0; i < g->pub.nnodes; i++) {
    const py_cfg_node *n = g->pub.nodes[i];
    const py_stmt *st = n->ast;
    g->body_first[i] = -1;
    if (n->kind == PY_CFG_STMT && (st->kind == PY_K_For || st->kind == PY_K_AsyncFor ||
                                   st->kind == PY_K_With || st->kind == PY_K_AsyncWith)) {
      const an_stmt_info *info = an_stmt_info_get(an, st);
      if (info && info->hi > info->lo + 1) g->body_first[i] = info->lo + 1;
    }
  }
}

void an_kill_desc(const an_dataflow *d, const int *idx, uint64_t *bits) {
  for (; *idx >= 0; idx++)
    for (int k = d->desc_start[*idx]; k < d->desc_start[*idx + 1]; k++) BIT_CLR(bits, d->desc[k]);
}
