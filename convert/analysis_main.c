// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_main.c — the py_an object (new / run / free) and the symbol-set helpers
 * every analysis shares: sorted-array sets in the arena and unsorted collectors.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis_priv.h"

py_an *py_an_new(py_ctx *ctx) {
  py_an *an = sg_xcalloc(1, sizeof *an);
  an->ctx = ctx;
  sg_arena_init(&an->arena, 0);
  return an;
}

void py_an_module(py_an *an, const py_mod *mod) {
  if (an->done || !mod || mod->kind != PY_K_Module) return;
  an->done = true;
  an->mod = mod;
  an_activity_module(an, mod);
  an_cfg_build_all(an);
  for (size_t i = 0; i < an->cfgs.len; i++) {
    an_dataflow_prepare(an, an->cfgs.data[i]);
    an_liveness_solve(an, an->cfgs.data[i]);
    an_reaching_solve(an, an->cfgs.data[i]);
  }
}

void py_an_free(py_an *an) {
  if (!an) return;
  for (size_t i = 0; i < an->scopes.len; i++) {
    an_scope *s = an->scopes.data[i];
    an_col_free(&s->col);
    sg_vec_free(&s->params);
    sg_vec_free(&s->globals);
    sg_vec_free(&s->nonlocals);
    sg_vec_free(&s->bound);
    sg_vec_free(&s->leaked);
    sg_vec_free(&s->children);
  }
  for (size_t i = 0; i < an->cfgs.len; i++) {
    an_cfg *g = an->cfgs.data[i];
    free(g->live_in);
    free(g->live_out);
    free(g->must_out);
    free(g->may_out);
    free(g->must_in);
    free(g->may_in);
    free(g->body_first);
    free(g->nonlocal_bits);
    free(g->composite_bits);
  }
  sg_vec_free(&an->scopes);
  sg_vec_free(&an->cfgs);
  sg_vec_free(&an->syms);
  sg_map_free(&an->sym_by_text);
  sg_map_free(&an->scope_by_node);
  sg_map_free(&an->scope_of);
  sg_map_free(&an->cfg_by_owner);
  sg_map_free(&an->node_of);
  sg_map_free(&an->stmt_info);
  sg_map_free(&an->name_node);
  sg_map_free(&an->node_cfg);
  sg_map_free(&an->act_cache);
  sg_map_free(&an->bindings);
  sg_map_free(&an->maybe_writes);
  an_col_free(&an->scratch);
  sg_arena_free(&an->arena);
  free(an);
}

/* ------------------------------------------------------------ collectors */

void an_col_clear(an_collector *c) {
  c->read.len = c->write.len = c->del.len = c->maybe.len = 0;
}

void an_col_free(an_collector *c) {
  sg_vec_free(&c->read);
  sg_vec_free(&c->write);
  sg_vec_free(&c->del);
  sg_vec_free(&c->maybe);
}

static int cmp_sym(const void *a, const void *b) {
  py_sym x = *(const py_sym *)a, y = *(const py_sym *)b;
  return (x > y) - (x < y);
}

py_symset an_symset_from(py_an *an, py_sym *v, size_t n) {
  py_symset s = {0, NULL};
  if (!n) return s;
  qsort(v, n, sizeof *v, cmp_sym);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || v[i] != v[k - 1]) v[k++] = v[i];
  py_sym *a = sg_arena_alloc(&an->arena, k * sizeof *a);
  memcpy(a, v, k * sizeof *a);
  s.n = (int)k;
  s.a = a;
  return s;
}

py_activity an_col_finish(py_an *an, an_collector *c) {
  py_activity a;
  a.read = an_symset_from(an, c->read.data, c->read.len);
  a.modified = an_symset_from(an, c->write.data, c->write.len);
  a.deleted = an_symset_from(an, c->del.data, c->del.len);
  return a;
}

/* ------------------------------------------------------------ symbol sets */

bool py_symset_has(py_symset s, py_sym x) {
  int lo = 0, hi = s.n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (s.a[mid] == x) return true;
    if (s.a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/* Merge of two sorted sets; op: 0 union, 1 intersection, 2 difference. */
static py_symset merge(py_an *an, py_symset x, py_symset y, int op) {
  py_symset r = {0, NULL};
  int cap = op == 0 ? x.n + y.n : x.n;
  if (!cap) return r;
  py_sym *out = sg_arena_alloc(&an->arena, (size_t)cap * sizeof *out);
  int i = 0, j = 0, k = 0;
  while (i < x.n || j < y.n) {
    if (j >= y.n || (i < x.n && x.a[i] < y.a[j])) {
      if (op != 1) out[k++] = x.a[i];
      i++;
    } else if (i >= x.n || y.a[j] < x.a[i]) {
      if (op == 0) out[k++] = y.a[j];
      j++;
    } else {
      if (op != 2) out[k++] = x.a[i];
      i++;
      j++;
    }
  }
  r.n = k;
  r.a = k ? out : NULL;
  return r;
}

py_symset py_symset_union(py_an *an, py_symset x, py_symset y) {
  if (!y.n) return x;
  if (!x.n) return y;
  return merge(an, x, y, 0);
}
py_symset py_symset_inter(py_an *an, py_symset x, py_symset y) { return merge(an, x, y, 1); }
py_symset py_symset_diff(py_an *an, py_symset x, py_symset y) {
  if (!y.n) return x;
  return merge(an, x, y, 2);
}

py_symset py_symset_names(py_an *an, py_symset s) {
  py_symset r = {0, NULL};
  if (!s.n) return r;
  py_sym *out = sg_arena_alloc(&an->arena, (size_t)s.n * sizeof *out);
  int k = 0;
  for (int i = 0; i < s.n; i++)
    if (an->syms.data[s.a[i]].kind == PY_QN_NAME) out[k++] = s.a[i];
  r.n = k;
  r.a = k ? out : NULL;
  return r;
}

static _Thread_local const py_an *g_sort_an; /* qsort has no context argument */
static int cmp_text(const void *a, const void *b) {
  return strcmp(py_an_sym_text(g_sort_an, *(const py_sym *)a),
                py_an_sym_text(g_sort_an, *(const py_sym *)b));
}

void py_symset_format(const py_an *an, py_symset s, sg_buf *out) {
  py_sym *tmp = sg_xmalloc((size_t)(s.n ? s.n : 1) * sizeof *tmp);
  if (s.n) memcpy(tmp, s.a, (size_t)s.n * sizeof *tmp);
  g_sort_an = an;
  qsort(tmp, (size_t)s.n, sizeof *tmp, cmp_text);
  sg_buf_putc(out, '{');
  for (int i = 0; i < s.n; i++) {
    if (i) sg_buf_puts(out, ", ");
    sg_buf_puts(out, py_an_sym_text(an, tmp[i]));
  }
  sg_buf_putc(out, '}');
  free(tmp);
}
