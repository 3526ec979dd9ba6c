/*
 * dump_names.c — deterministic graph and node names shared by all dumps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_names.h"

/* "x_0_3" → "x": names from a previous dump lose the suffix this file adds */
static char *base_name(const char *name, const char *dflt) {
  if (!name) return sg_xstrdup(dflt);
  char *s = sg_xstrdup(name);
  for (int round = 0; round < 2; round++) {
    char *u = strrchr(s, '_');
    if (!u || u == s || !u[1] || strspn(u + 1, "0123456789") != strlen(u + 1)) return s;
    if (round == 0) *u = 0;
    else {
      *u = 0;
      return s;
    }
  }
  return s;
}

void gr_dumpctx_init(gr_dumpctx *d, gr_module *m, gr_graph *entry) {
  memset(d, 0, sizeof *d);
  d->m = m;
  gr_graph_vec tmp = {0};
  gr_graph_vec roots = {0};
  sg_vec_push(&roots, entry);
  for (size_t i = 0; i < m->graphs.len; i++) {
    gr_graph *g = m->graphs.data[i];
    if (!g->parent && !g->dead && g != entry) sg_vec_push(&roots, g);
  }
  for (size_t r = 0; r < roots.len; r++) {
    gr_reachable_graphs(m, roots.data[r], &tmp);
    for (size_t k = 0; k < tmp.len; k++)
      if (!sg_map_get(&d->gindex, (uintptr_t)tmp.data[k], NULL)) {
        sg_vec_push(&d->graphs, tmp.data[k]);
        sg_map_put(&d->gindex, (uintptr_t)tmp.data[k], (void *)(uintptr_t)d->graphs.len);
      }
  }
  sg_vec_free(&tmp);
  sg_vec_free(&roots);
  d->scheds = sg_xcalloc(d->graphs.len + 1, sizeof(gr_node_vec));
  for (size_t i = 0; i < d->graphs.len; i++) {
    gr_graph *g = d->graphs.data[i];
    gr_schedule(g, &d->scheds[i]);
    for (int p = 0; p < g->nparams; p++) {
      char *bn = base_name(g->params[p]->name, "p");
      char *s = sg_xasprintf("%s_%zu_%d", bn, i, p);
      free(bn);
      sg_map_put(&d->nname, (uintptr_t)g->params[p], s);
    }
    for (size_t k = 0; k < d->scheds[i].len; k++) {
      gr_node *n = d->scheds[i].data[k];
      char *bn = base_name(n->name, "v");
      char *s = sg_xasprintf("%s_%zu_%zu", bn, i, k);
      free(bn);
      sg_map_put(&d->nname, (uintptr_t)n, s);
    }
  }
}

void gr_dumpctx_free(gr_dumpctx *d) {
  uint64_t k;
  void *v;
  for (size_t i = 0; sg_map_next(&d->nname, &i, &k, &v);) free(v);
  sg_map_free(&d->nname);
  sg_map_free(&d->gindex);
  for (size_t i = 0; i < d->graphs.len; i++) sg_vec_free(&d->scheds[i]);
  free(d->scheds);
  sg_vec_free(&d->graphs);
}

const char *gr_dump_node_name(gr_dumpctx *d, const gr_node *n) {
  void *v;
  if (sg_map_get(&d->nname, (uintptr_t)n, &v)) return v;
  return "?";
}

int gr_dump_graph_index(gr_dumpctx *d, const gr_graph *g) {
  void *v;
  return sg_map_get(&d->gindex, (uintptr_t)g, &v) ? (int)(uintptr_t)v - 1 : -1;
}

const char *gr_dump_graph_name(gr_dumpctx *d, const gr_graph *g, char *buf, size_t cap) {
  if (!g->parent) return g->name;
  const char *name = g->name ? g->name : "lambda";
  const char *u = strrchr(name, '_');
  int len = (int)strlen(name);
  if (u && u[1] && strspn(u + 1, "0123456789") == strlen(u + 1)) len = (int)(u - name);
  snprintf(buf, cap, "%.*s_%d", len, name, gr_dump_graph_index(d, g));
  return buf;
}
