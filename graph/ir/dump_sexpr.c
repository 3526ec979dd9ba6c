// SPDX-License-Identifier: Apache-2.0
/*
 * dump_sexpr.c — the IR printed back as S-expressions that gr_stage reads again.
 *
 * Each top-level graph is a (def NAME (PARAMS) BODY); a body is a flat
 *   (let* ((v_0_0 (OP a b)) (v_0_1 (OP v_0_0 c)) ...) OUTPUT)
 * so that long chains do not nest. `if` branches print inline as expressions, other
 * nested graphs as (begin (def NAME (PARAMS) BODY) NAME) — a def may refer to itself.
 */
#include <string.h>

#include <stdio.h>
#include "dump_names.h"

typedef struct sp {
  gr_dumpctx *d;
  sg_buf *b;
  gr_graph_vec stack; /* graphs being printed (for recursive references) */
} sp;

static void body(sp *s, gr_graph *g);

static bool on_stack(sp *s, const gr_graph *g) {
  for (size_t i = 0; i < s->stack.len; i++)
    if (s->stack.data[i] == g) return true;
  return false;
}

static void params(sp *s, gr_graph *g) {
  sg_buf_putc(s->b, '(');
  for (int p = 0; p < g->nparams; p++) {
    if (p) sg_buf_putc(s->b, ' ');
    gr_aval *a = g->params[p]->aval;
    if (a && a->kind == GA_TENSOR && g->params[p]->kind == GR_PARAM && !g->parent) {
      sg_buf_printf(s->b, "(%s %s", gr_dump_node_name(s->d, g->params[p]), kn_dtype_name(a->dtype));
      if (a->ndim >= 0) {
        sg_buf_puts(s->b, " (");
        for (int k = 0; k < a->ndim; k++) {
          if (k) sg_buf_putc(s->b, ' ');
          if (a->shape[k] < 0) sg_buf_putc(s->b, '?');
          else sg_buf_printf(s->b, "%lld", (long long)a->shape[k]);
        }
        sg_buf_putc(s->b, ')');
      }
      sg_buf_putc(s->b, ')');
    } else {
      sg_buf_puts(s->b, gr_dump_node_name(s->d, g->params[p]));
    }
  }
  sg_buf_putc(s->b, ')');
}

/* A primitive's name, as GR_PRIM_PREFIX NAME when a top-level def of that name would
 * take it over when the dump is read back (`(def exp (x) ...)` from a Python `exp`). */
static void prim_name(sp *s, const gr_op *op) {
  if (gr_dump_prim_clashes(s->d, op)) sg_buf_puts(s->b, GR_PRIM_PREFIX);
  sg_buf_puts(s->b, op->name);
}

static void atom(sp *s, const gr_node *n) {
  char nb[128];
  if (n->kind != GR_CONST) {
    sg_buf_puts(s->b, gr_dump_node_name(s->d, n));
    return;
  }
  if (n->value.tag == GV_PRIM) {
    prim_name(s, n->value.u.op);
    return;
  }
  if (n->value.tag != GV_GRAPH) {
    gv_print(s->b, &n->value);
    return;
  }
  gr_graph *h = n->value.u.g;
  const char *name = gr_dump_graph_name(s->d, h, nb, sizeof nb);
  if (!h->parent || on_stack(s, h)) {
    sg_buf_puts(s->b, name);
    return;
  }
  /* an `if` branch outside an `if` (the optimizer folded the `if`) prints as any nested
   * def: read back, it is one, so re-staging prints the same */
  sg_buf_printf(s->b, "(begin (def %s ", name);
  params(s, h);
  sg_buf_putc(s->b, ' ');
  body(s, h);
  sg_buf_printf(s->b, ") %s)", name);
}

static void branch(sp *s, const gr_node *n) {
  if (n->kind == GR_CONST && n->value.tag == GV_GRAPH && n->value.u.g->is_branch &&
      !on_stack(s, n->value.u.g))
    body(s, n->value.u.g);
  else {
    sg_buf_putc(s->b, '(');
    atom(s, n);
    sg_buf_putc(s->b, ')');
  }
}

static void expr(sp *s, const gr_node *n) {
  const gr_op *op = gr_node_prim(n);
  sg_buf_putc(s->b, '(');
  if (op == gr_op_if) {
    sg_buf_puts(s->b, "if ");
    atom(s, n->inputs[1]);
    sg_buf_putc(s->b, ' ');
    branch(s, n->inputs[2]);
    sg_buf_putc(s->b, ' ');
    branch(s, n->inputs[3]);
  } else if (op && !strcmp(op->name, "getattr") && n->inputs[2]->kind == GR_CONST &&
             n->inputs[2]->value.tag == GV_STR) {
    sg_buf_puts(s->b, "getattr ");
    atom(s, n->inputs[1]);
    sg_buf_printf(s->b, " %s", n->inputs[2]->value.u.s);
  } else if (op && !strcmp(op->name, "record")) {
    sg_buf_puts(s->b, "record");
    for (int i = 1; i + 1 < n->ninputs; i += 2) {
      const gr_node *f = n->inputs[i];
      sg_buf_printf(s->b, " (%s ", f->kind == GR_CONST && f->value.tag == GV_STR ? f->value.u.s : "?");
      atom(s, n->inputs[i + 1]);
      sg_buf_putc(s->b, ')');
    }
  } else {
    for (int i = 0; i < n->ninputs; i++) {
      if (i) sg_buf_putc(s->b, ' ');
      if (i == 0 && op) prim_name(s, op);
      else atom(s, n->inputs[i]);
    }
  }
  sg_buf_putc(s->b, ')');
}

static void body(sp *s, gr_graph *g) {
  int gi = gr_dump_graph_index(s->d, g);
  gr_node_vec *sched = &s->d->scheds[gi];
  sg_vec_push(&s->stack, g);
  if (sched->len == 0) {
    atom(s, g->output);
  } else {
    sg_buf_puts(s->b, "(let* (");
    for (size_t k = 0; k < sched->len; k++) {
      sg_buf_puts(s->b, k ? " (" : "(");
      sg_buf_puts(s->b, gr_dump_node_name(s->d, sched->data[k]));
      sg_buf_putc(s->b, ' ');
      expr(s, sched->data[k]);
      sg_buf_putc(s->b, ')');
    }
    sg_buf_puts(s->b, ") ");
    atom(s, g->output);
    sg_buf_putc(s->b, ')');
  }
  s->stack.len--;
}

void gr_dump_sexpr(sg_buf *b, gr_module *m, gr_graph *entry) {
  gr_dumpctx d;
  gr_dumpctx_init(&d, m, entry);
  sp s = {&d, b, {0}};
  /* entry last, so that re-reading without --entry picks it */
  for (size_t pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < d.graphs.len; i++) {
      gr_graph *g = d.graphs.data[i];
      if (g->parent || (pass == 0) == (g == entry)) continue;
      sg_buf_printf(b, "(def %s ", g->name);
      params(&s, g);
      sg_buf_putc(b, ' ');
      body(&s, g);
      sg_buf_puts(b, ")\n");
    }
  sg_vec_free(&s.stack);
  gr_dumpctx_free(&d);
}
