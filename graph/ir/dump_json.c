// SPDX-License-Identifier: Apache-2.0
/*
 * dump_json.c — the IR as JSON (schema in docs/graph.md):
 *   {"entry": NAME, "graphs": [{"name", "parent", "params": [ID...], "output": ID,
 *     "free_variables": [ID...], "nodes": [{"id", "kind": "apply"|"param"|"constant",
 *     "op"?, "inputs": [ID...], "value"?, "type"?, "line", "col"}]}]}
 * Constants appear in the node list of the graph that uses them.
 */
#include <string.h>

#include <stdio.h>
#include "dump_names.h"

static void jstr(sg_buf *b, const char *s) { sg_buf_put_json_string(b, s, strlen(s)); }

static void node_json(sg_buf *b, gr_dumpctx *d, const gr_node *n, bool *first) {
  char nb[128];
  sg_buf_printf(b, "%s\n      {\"id\":%u,\"kind\":\"%s\"", *first ? "" : ",", n->id,
                n->kind == GR_APPLY ? "apply" : n->kind == GR_PARAM ? "param" : "constant");
  *first = false;
  if (n->kind == GR_PARAM || n->kind == GR_APPLY) {
    sg_buf_puts(b, ",\"name\":");
    jstr(b, gr_dump_node_name(d, n));
  }
  if (n->kind == GR_APPLY) {
    const gr_op *op = gr_node_prim(n);
    if (op) {
      sg_buf_puts(b, ",\"op\":");
      jstr(b, op->name);
    }
    sg_buf_puts(b, ",\"inputs\":[");
    for (int j = 0; j < n->ninputs; j++) sg_buf_printf(b, j ? ",%u" : "%u", n->inputs[j]->id);
    sg_buf_putc(b, ']');
  }
  if (n->kind == GR_CONST) {
    sg_buf_puts(b, ",\"value\":");
    if (n->value.tag == GV_GRAPH) {
      sg_buf_puts(b, "{\"graph\":");
      jstr(b, gr_dump_graph_name(d, n->value.u.g, nb, sizeof nb));
      sg_buf_putc(b, '}');
    } else if (n->value.tag == GV_PRIM) {
      sg_buf_puts(b, "{\"primitive\":");
      jstr(b, n->value.u.op->name);
      sg_buf_putc(b, '}');
    } else {
      gr_value_to_json(b, &n->value);
    }
  }
  if (n->aval) {
    sg_buf b2 = SG_BUF_INIT;
    gr_aval_print(&b2, n->aval);
    sg_buf_puts(b, ",\"type\":");
    jstr(b, b2.data ? b2.data : "");
    sg_buf_free(&b2);
  }
  if (n->line) sg_buf_printf(b, ",\"line\":%d,\"col\":%d", n->line, n->col);
  sg_buf_putc(b, '}');
}

void gr_dump_json(sg_buf *b, gr_module *m, gr_graph *entry) {
  gr_dumpctx d;
  gr_dumpctx_init(&d, m, entry);
  char nb[128];
  sg_buf_puts(b, "{\"entry\":");
  jstr(b, entry->name);
  sg_buf_puts(b, ",\"file\":");
  jstr(b, m->file);
  sg_buf_puts(b, ",\"graphs\":[");
  for (size_t i = 0; i < d.graphs.len; i++) {
    gr_graph *g = d.graphs.data[i];
    sg_buf_printf(b, "%s\n  {\"name\":", i ? "," : "");
    jstr(b, gr_dump_graph_name(&d, g, nb, sizeof nb));
    sg_buf_puts(b, ",\"parent\":");
    if (g->parent) jstr(b, gr_dump_graph_name(&d, g->parent, nb, sizeof nb));
    else sg_buf_puts(b, "null");
    sg_buf_puts(b, ",\"params\":[");
    for (int p = 0; p < g->nparams; p++) sg_buf_printf(b, p ? ",%u" : "%u", g->params[p]->id);
    sg_buf_printf(b, "],\"output\":%u,\"free_variables\":[", g->output->id);
    for (size_t k = 0; k < g->fvs.len; k++) sg_buf_printf(b, k ? ",%u" : "%u", g->fvs.data[k]->id);
    sg_buf_puts(b, "],\"nodes\":[");
    bool first = true;
    for (int p = 0; p < g->nparams; p++) node_json(b, &d, g->params[p], &first);
    sg_map seen = SG_MAP_INIT;
    for (size_t k = 0; k <= d.scheds[i].len; k++) {
      gr_node *n = k < d.scheds[i].len ? d.scheds[i].data[k] : NULL;
      int cnt = n ? n->ninputs : 1;
      for (int j = 0; j < cnt; j++) {
        gr_node *in = n ? n->inputs[j] : g->output;
        if (in->kind == GR_CONST && !sg_map_get(&seen, (uintptr_t)in, NULL)) {
          sg_map_put(&seen, (uintptr_t)in, NULL);
          node_json(b, &d, in, &first);
        }
      }
      if (n) node_json(b, &d, n, &first);
    }
    sg_map_free(&seen);
    sg_buf_puts(b, "]}");
  }
  sg_buf_puts(b, "\n]}\n");
  gr_dumpctx_free(&d);
}
