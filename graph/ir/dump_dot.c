// SPDX-License-Identifier: Apache-2.0
/*
 * dump_dot.c — Graphviz DOT: one cluster per graph, a box per apply node labelled
 * with its operation, ellipses for parameters, plain text for constants (one per
 * use, as in the IR), dashed edges for free variables and for graph constants.
 */
#include <string.h>

#include <stdio.h>
#include "dump_names.h"

static void label_escape(sg_buf *b, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') sg_buf_putc(b, '\\');
    if (*s == '\n') {
      sg_buf_puts(b, "\\n");
      continue;
    }
    sg_buf_putc(b, *s);
  }
}

void gr_dump_dot(sg_buf *b, gr_module *m, gr_graph *entry) {
  gr_dumpctx d;
  gr_dumpctx_init(&d, m, entry);
  char nb[128];
  sg_buf_puts(b, "digraph stagd {\n  rankdir=BT;\n  node [fontname=\"monospace\", fontsize=10];\n");
  for (size_t i = 0; i < d.graphs.len; i++) {
    gr_graph *g = d.graphs.data[i];
    sg_buf_printf(b, "  subgraph cluster_%zu {\n    label=\"@", i);
    label_escape(b, gr_dump_graph_name(&d, g, nb, sizeof nb));
    sg_buf_puts(b, "\";\n");
    for (int p = 0; p < g->nparams; p++) {
      sg_buf_printf(b, "    n%u [shape=ellipse, label=\"", g->params[p]->id);
      label_escape(b, g->params[p]->name ? g->params[p]->name : "p");
      sg_buf_puts(b, "\"];\n");
    }
    for (size_t k = 0; k < d.scheds[i].len; k++) {
      gr_node *n = d.scheds[i].data[k];
      const gr_op *op = gr_node_prim(n);
      sg_buf_printf(b, "    n%u [shape=box, label=\"", n->id);
      label_escape(b, op ? op->name : "call");
      sg_buf_puts(b, "\"];\n");
    }
    sg_buf_printf(b, "    out%zu [shape=doublecircle, label=\"return\"];\n  }\n", i);
    /* edges */
    for (size_t k = 0; k <= d.scheds[i].len; k++) {
      gr_node *n = k < d.scheds[i].len ? d.scheds[i].data[k] : NULL;
      int cnt = n ? n->ninputs : 1;
      for (int j = 0; j < cnt; j++) {
        gr_node *in = n ? n->inputs[j] : g->output;
        if (n && j == 0 && gr_node_prim(n)) continue;
        char dst[32];
        if (n) snprintf(dst, sizeof dst, "n%u", n->id);
        else snprintf(dst, sizeof dst, "out%zu", i);
        if (in->kind == GR_CONST) {
          if (in->value.tag == GV_GRAPH) {
            int hi = gr_dump_graph_index(&d, in->value.u.g);
            sg_buf_printf(b, "  c%u [shape=plaintext, label=\"@", in->id);
            label_escape(b, gr_dump_graph_name(&d, in->value.u.g, nb, sizeof nb));
            sg_buf_printf(b, "\"];\n  c%u -> %s [label=\"%d\"];\n", in->id, dst, j);
            if (hi >= 0) sg_buf_printf(b, "  c%u -> out%d [style=dashed, dir=back, color=gray];\n", in->id, hi);
          } else {
            sg_buf cb = SG_BUF_INIT;
            gv_print(&cb, &in->value);
            if (cb.len > 40) {
              cb.len = 37;
              sg_buf_puts(&cb, "...");
            }
            sg_buf_printf(b, "  c%u [shape=plaintext, label=\"", in->id);
            label_escape(b, cb.data ? cb.data : "");
            sg_buf_printf(b, "\"];\n  c%u -> %s [label=\"%d\"];\n", in->id, dst, j);
            sg_buf_free(&cb);
          }
        } else {
          bool fv = in->graph != g;
          sg_buf_printf(b, "  n%u -> %s [label=\"%d\"%s];\n", in->id, dst, j, fv ? ", style=dashed" : "");
        }
      }
    }
  }
  sg_buf_puts(b, "}\n");
  gr_dumpctx_free(&d);
}
