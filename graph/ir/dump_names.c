// SPDX-License-Identifier: Apache-2.0
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

/* Puts g in the dump order unless it is there already. */
static void add_graph(gr_dumpctx *d, gr_graph *g) {
  if (sg_map_get(&d->gindex, (uintptr_t)g, NULL)) return;
  sg_vec_push(&d->graphs, g);
  sg_map_put(&d->gindex, (uintptr_t)g, (void *)(uintptr_t)d->graphs.len);
}

void gr_dumpctx_init(gr_dumpctx *d, gr_module *m, gr_graph *entry) {
  memset(d, 0, sizeof *d);
  d->m = m;
  /* graphs in the order the dumps print them: from the entry, then each other
   * top-level def, through the graph constants of the scheduled nodes only (what the
   * dump prints; unused nodes left without the optimizer would number graphs that
   * never appear, and re-staging would number them differently) */
  SG_VEC(gr_node_vec) scheds = {0};
  for (size_t r = 0; r <= m->graphs.len; r++) {
    gr_graph *root = r == 0 ? entry : m->graphs.data[r - 1];
    if (r > 0 && (root->parent || root->dead || root == entry)) continue;
    add_graph(d, root);
    for (size_t i = scheds.len; i < d->graphs.len; i++) {
      gr_graph *g = d->graphs.data[i];
      gr_node_vec s = {0};
      gr_schedule(g, &s);
      sg_vec_push(&scheds, s);
      if (g->output && gr_is_const_graph(g->output)) add_graph(d, g->output->value.u.g);
      for (size_t k = 0; k < s.len; k++)
        for (int j = 0; j < s.data[k]->ninputs; j++)
          if (gr_is_const_graph(s.data[k]->inputs[j])) add_graph(d, s.data[k]->inputs[j]->value.u.g);
    }
  }
  d->scheds = sg_xcalloc(d->graphs.len + 1, sizeof(gr_node_vec));
  if (scheds.len) memcpy(d->scheds, scheds.data, sizeof(gr_node_vec) * scheds.len);
  sg_vec_free(&scheds);
  for (size_t i = 0; i < d->graphs.len; i++) {
    gr_graph *g = d->graphs.data[i];
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
