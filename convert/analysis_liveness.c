// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_liveness.c — live variables, the standard backward may-analysis over a
 * CFG: live_in(n) = read(n) ∪ (live_out(n) \ kill(n)), live_out(n) = ∪ live_in(succ).
 * kill(n) is what n writes or deletes plus the qualified names below them (after
 * `a = ...`, the old a.b is dead). At EXIT of a function, globals, nonlocals, free
 * names and every composite (object mutations stay visible) are live; at EXIT of a
 * module or class body, everything is (its namespace survives).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis_priv.h"
#include "analysis_dataflow.h"

void an_liveness_solve(py_an *an, an_cfg *g) {
  (void)an;
  int nn = g->pub.nnodes, W = g->words ? g->words : 1;
  const an_dataflow *d = g->df;
  g->live_in = sg_xcalloc((size_t)nn * (size_t)W, sizeof(uint64_t));
  g->live_out = sg_xcalloc((size_t)nn * (size_t)W, sizeof(uint64_t));
  uint64_t *exit_in = g->live_in + (size_t)g->pub.exit->index * (size_t)W;
  if (g->scope->pub.kind == PY_SCOPE_FUNCTION) {
    for (int w = 0; w < g->words; w++) exit_in[w] = g->nonlocal_bits[w] | g->composite_bits[w];
  } else {
    for (int i = 0; i < g->nuniv; i++) BIT_SET(exit_in, i);
  }
  /* sweeps in reverse node order, recomputing only nodes whose successors changed */
  uint64_t *tmp = an_bits_new(g);
  unsigned char *dirty = sg_xmalloc((size_t)nn);
  memset(dirty, 1, (size_t)nn);
  bool changed = true;
  while (changed) {
    changed = false;
    for (int i = nn - 1; i >= 0; i--) {
      const py_cfg_node *n = g->pub.nodes[i];
      if (n == g->pub.exit || !dirty[i]) continue;
      dirty[i] = 0;
      uint64_t *out = g->live_out + (size_t)i * (size_t)W;
      uint64_t *in = g->live_in + (size_t)i * (size_t)W;
      for (int k = 0; k < n->nnext; k++) {
        const uint64_t *s = g->live_in + (size_t)n->next[k]->index * (size_t)W;
        for (int w = 0; w < g->words; w++) out[w] |= s[w];
      }
      /* a `for` / `with` head binds its target only on the edge into the body */
      int bf = g->body_first[i];
      if (bf >= 0) memcpy(tmp, g->live_in + (size_t)bf * (size_t)W, (size_t)W * sizeof *tmp);
      else memcpy(tmp, out, (size_t)W * sizeof *tmp);
      for (const int *x = d->must_mod[i]; *x >= 0; x++) BIT_CLR(tmp, *x);
      for (const int *x = d->del[i]; *x >= 0; x++) BIT_CLR(tmp, *x);
      an_kill_desc(d, d->must_mod[i], tmp);
      if (bf >= 0)
        for (int k = 0; k < n->nnext; k++) {
          if (n->next[k]->index == bf) continue;
          const uint64_t *s = g->live_in + (size_t)n->next[k]->index * (size_t)W;
          for (int w = 0; w < g->words; w++) tmp[w] |= s[w];
        }
      for (const int *x = d->read[i]; *x >= 0; x++) BIT_SET(tmp, *x);
      bool moved = false;
      for (int w = 0; w < g->words; w++)
        if (tmp[w] & ~in[w]) {
          in[w] |= tmp[w];
          moved = true;
        }
      if (moved) {
        changed = true;
        for (int k = 0; k < n->nprev; k++) dirty[n->prev[k]->index] = 1;
      }
    }
  }
  free(dirty);
  free(tmp);
}

static an_cfg *cfg_of_node(const py_an *an, const py_cfg_node *n) {
  return n ? an_get(&an->node_cfg, n) : NULL;
}

py_symset py_an_node_live_in(py_an *an, const py_cfg_node *n) {
  an_cfg *g = cfg_of_node(an, n);
  py_symset none = {0, NULL};
  if (!g) return none;
  return an_bits_to_set(an, g, g->live_in + (size_t)n->index * (size_t)(g->words ? g->words : 1));
}

py_symset py_an_node_live_out(py_an *an, const py_cfg_node *n) {
  an_cfg *g = cfg_of_node(an, n);
  py_symset none = {0, NULL};
  if (!g) return none;
  return an_bits_to_set(an, g, g->live_out + (size_t)n->index * (size_t)(g->words ? g->words : 1));
}

py_symset py_an_live_in(py_an *an, const py_stmt *s) {
  return py_an_node_live_in(an, py_an_cfg_node(an, s));
}

py_symset py_an_live_out(py_an *an, const py_stmt *s) {
  py_symset none = {0, NULL};
  an_stmt_info *info = an_stmt_info_get(an, s);
  if (!info) return none;
  an_cfg *g = info->cfg;
  int W = g->words ? g->words : 1;
  const py_cfg_node *const *next;
  int nn = py_an_stmt_next(an, s, &next);
  uint64_t *acc = an_bits_new(g);
  for (int i = 0; i < nn; i++) {
    const uint64_t *b = g->live_in + (size_t)next[i]->index * (size_t)W;
    for (int w = 0; w < g->words; w++) acc[w] |= b[w];
  }
  py_symset r = an_bits_to_set(an, g, acc);
  free(acc);
  return r;
}
