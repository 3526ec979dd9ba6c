// SPDX-License-Identifier: Apache-2.0
/*
 * dump_text.c — the readable text IR, one graph per block:
 *
 *   graph @runX(%in1_0_0) {              ; f.sexp:1:1
 *     %x0_0_0 = * %in1_0_0 1              : int
 *     return %x1_0_1
 *   }
 * Nested graphs (closures, if branches) list their free variables.
 */
#include <stdio.h>
#include "dump_names.h"

static void operand(sg_buf *b, gr_dumpctx *d, const gr_node *n) {
  char nb[128];
  if (n->kind == GR_CONST) {
    if (n->value.tag == GV_GRAPH) sg_buf_printf(b, "@%s", gr_dump_graph_name(d, n->value.u.g, nb, sizeof nb));
    else gv_print(b, &n->value);
  } else {
    sg_buf_printf(b, "%%%s", gr_dump_node_name(d, n));
  }
}

void gr_dump_text(sg_buf *b, gr_module *m, gr_graph *entry) {
  gr_dumpctx d;
  gr_dumpctx_init(&d, m, entry);
  char nb[128];
  for (size_t i = 0; i < d.graphs.len; i++) {
    gr_graph *g = d.graphs.data[i];
    sg_buf_printf(b, "%sgraph @%s(", i ? "\n" : "", gr_dump_graph_name(&d, g, nb, sizeof nb));
    for (int p = 0; p < g->nparams; p++) {
      sg_buf_printf(b, "%s%%%s", p ? ", " : "", gr_dump_node_name(&d, g->params[p]));
      if (g->params[p]->aval) {
        sg_buf_puts(b, ": ");
        gr_aval_print(b, g->params[p]->aval);
      }
    }
    sg_buf_puts(b, ") {");
    if (g->line) sg_buf_printf(b, "  ; %s:%d:%d", m->file, g->line, g->col);
    sg_buf_putc(b, '\n');
    if (g->fvs.len) {
      sg_buf_puts(b, "  ; free variables:");
      for (size_t k = 0; k < g->fvs.len; k++) sg_buf_printf(b, " %%%s", gr_dump_node_name(&d, g->fvs.data[k]));
      sg_buf_putc(b, '\n');
    }
    for (size_t k = 0; k < d.scheds[i].len; k++) {
      gr_node *n = d.scheds[i].data[k];
      sg_buf_printf(b, "  %%%s = ", gr_dump_node_name(&d, n));
      for (int j = 0; j < n->ninputs; j++) {
        if (j) sg_buf_putc(b, ' ');
        const gr_node *in = n->inputs[j];
        if (j == 0 && in->kind == GR_CONST && in->value.tag == GV_PRIM) sg_buf_puts(b, in->value.u.op->name);
        else operand(b, &d, in);
      }
      if (n->aval) {
        sg_buf_puts(b, "  : ");
        gr_aval_print(b, n->aval);
      }
      if (n->line) sg_buf_printf(b, "  ; %d:%d", n->line, n->col);
      sg_buf_putc(b, '\n');
    }
    sg_buf_puts(b, "  return ");
    operand(b, &d, g->output);
    sg_buf_puts(b, "\n}\n");
  }
  gr_dumpctx_free(&d);
}
