// SPDX-License-Identifier: Apache-2.0
/*
 * dump_names.c — deterministic graph and node names shared by all dumps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_names.h"

/* Appends NAME_A_B to the names (NAME: `name` without the "_3" or "_0_3" suffix a
 * previous dump added, or dflt) and maps n to it. */
static void add_name(gr_dumpctx *d, const gr_node *n, const char *name, const char *dflt, size_t a, size_t b) {
  size_t len = name ? strlen(name) : 0;
  for (int round = 0; round < 2 && name; round++) {
    size_t u = len;
    while (u > 0 && name[u - 1] >= '0' && name[u - 1] <= '9') u--;
    if (u == len || u < 2 || name[u - 1] != '_') break;
    len = u - 1;
  }
  sg_map_put(&d->nname, (uintptr_t)n, (void *)(uintptr_t)(d->names.len + 1));
  if (name) sg_buf_append(&d->names, name, len);
  else sg_buf_puts(&d->names, dflt);
  char num[48];
  int k = snprintf(num, sizeof num, "_%zu_%zu", a, b);
  sg_buf_append(&d->names, num, (size_t)k + 1);
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
    for (int p = 0; p < g->nparams; p++) add_name(d, g->params[p], g->params[p]->name, "p", i, (size_t)p);
    for (size_t k = 0; k < d->scheds[i].len; k++)
      add_name(d, d->scheds[i].data[k], d->scheds[i].data[k]->name, "v", i, k);
    const gr_op *op = !g->parent && g->name ? gr_op_lookup(g->name) : NULL;
    if (op) sg_map_put(&d->prim_clash, (uintptr_t)op, NULL);
  }
}

bool gr_dump_prim_clashes(const gr_dumpctx *d, const gr_op *op) {
  return sg_map_get(&d->prim_clash, (uintptr_t)op, NULL);
}

void gr_dumpctx_free(gr_dumpctx *d) {
  sg_map_free(&d->nname);
  sg_buf_free(&d->names);
  sg_map_free(&d->prim_clash);
  sg_map_free(&d->gindex);
  for (size_t i = 0; i < d->graphs.len; i++) sg_vec_free(&d->scheds[i]);
  free(d->scheds);
  sg_vec_free(&d->graphs);
}

const char *gr_dump_node_name(gr_dumpctx *d, const gr_node *n) {
  void *v;
  if (sg_map_get(&d->nname, (uintptr_t)n, &v)) return d->names.data + (uintptr_t)v - 1;
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
