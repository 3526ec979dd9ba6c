// SPDX-License-Identifier: Apache-2.0
/*
 * dump_sexpr.c — the IR printed back as S-expressions that gr_stage reads again.
 *
 * Each top-level graph is a (def NAME (PARAMS) BODY); a body is a flat
 *   (let* ((v_0_0 (OP a b)) (v_0_1 (OP v_0_0 c)) ...) OUTPUT)
 * so that long chains do not nest. `if` branches print inline as expressions, other
 * nested graphs as (begin (def NAME (PARAMS) BODY) NAME) — a def may refer to itself.
 * A nested graph used from more than one place is printed once, as a binding
 * (NAME (begin (def NAME ...) NAME)) in the let* of the innermost graph enclosing all
 * its uses, right after the last of its free variables there, and named at each use:
 * printed at each use, it would re-stage as that many graphs, another program.
 */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include "dump_names.h"

/* A nested graph bound once in a host graph's let*: before schedule position `at`;
 * rank: how many hoisted graphs it reaches (those bind first at the same position). */
typedef struct hoist {
  gr_graph *g;
  size_t at, rank;
  int host; /* the host's dump index */
} hoist;
typedef SG_VEC(hoist) hoist_vec;

typedef struct sp {
  gr_dumpctx *d;
  sg_buf *b;
  gr_graph_vec stack; /* graphs being printed (for recursive references) */
  hoist_vec *hoists;  /* per graph index: its hoisted children, by position */
  sg_map hoisted;     /* hoisted graphs */
} sp;

static void body(sp *s, gr_graph *g);
static void nested_def(sp *s, gr_graph *h, const char *name);

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
  if (gr_dump_prim_clashes(s->d, op) || op == gr_op_if) sg_buf_puts(s->b, GR_PRIM_PREFIX); /* `if`: the form */
  sg_buf_puts(s->b, op->name);
}

static void nested_def(sp *s, gr_graph *h, const char *name) {
  sg_buf_printf(s->b, "(begin (def %s ", name);
  params(s, h);
  sg_buf_putc(s->b, ' ');
  body(s, h);
  sg_buf_printf(s->b, ") %s)", name);
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
  if (!h->parent || on_stack(s, h) || sg_map_get(&s->hoisted, (uintptr_t)h, NULL)) {
    sg_buf_puts(s->b, name);
    return;
  }
  /* an `if` branch outside an `if` (the optimizer folded the `if`) prints as any nested
   * def: read back, it is one, so re-staging prints the same */
  nested_def(s, h, name);
}

/* Binds g's hoisted children whose position is `at` (let* bindings). */
static void print_hoists(sp *s, hoist_vec *hv, size_t *next, size_t at, bool *first) {
  char nb[128];
  for (; *next < hv->len && hv->data[*next].at == at; ++*next) {
    gr_graph *h = hv->data[*next].g;
    const char *name = gr_dump_graph_name(s->d, h, nb, sizeof nb);
    sg_buf_printf(s->b, *first ? "(%s " : " (%s ", name);
    *first = false;
    nested_def(s, h, name);
    sg_buf_putc(s->b, ')');
  }
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

/* Whether apply n calls a primitive or a def with a number of arguments it does not
 * take (the reader refuses that of a call by name). */
static bool called_amiss(const gr_node *n) {
  const gr_node *h = n->inputs[0];
  int na = n->ninputs - 1;
  if (h->kind != GR_CONST) return false;
  if (h->value.tag == GV_PRIM) return !gr_op_takes(h->value.u.op, na);
  return h->value.tag == GV_GRAPH && h->value.u.g->line && h->value.u.g->nparams != na;
}

/* Whether n is an `if` as the reader makes the form: its branches `if` branch graphs
 * (else it prints as a call of the primitive, `(prim:if c a b)`, which reads back as
 * that: branches that are values, defs, or an arity the form does not have). */
static bool if_form(const gr_node *n) {
  if (gr_node_prim(n) != gr_op_if || n->ninputs != 4) return false;
  for (int b = 2; b < 4; b++)
    if (!gr_is_const_graph(n->inputs[b]) || !n->inputs[b]->value.u.g->is_branch) return false;
  return true;
}

static void expr(sp *s, const gr_node *n) {
  const gr_op *op = gr_node_prim(n);
  sg_buf_putc(s->b, '(');
  if (if_form(n)) {
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
    /* a call of the wrong number of arguments (the optimizer folded its function in)
     * reads back only with the function computed: `((begin ones))` */
    bool wrap = called_amiss(n);
    if (wrap) sg_buf_puts(s->b, "(begin ");
    for (int i = 0; i < n->ninputs; i++) {
      if (i) sg_buf_putc(s->b, ' ');
      if (i == 0 && op) prim_name(s, op);
      else atom(s, n->inputs[i]);
      if (i == 0 && wrap) sg_buf_putc(s->b, ')');
    }
  }
  sg_buf_putc(s->b, ')');
}

static void body(sp *s, gr_graph *g) {
  int gi = gr_dump_graph_index(s->d, g);
  gr_node_vec *sched = &s->d->scheds[gi];
  hoist_vec *hv = &s->hoists[gi];
  sg_vec_push(&s->stack, g);
  if (sched->len == 0 && hv->len == 0) {
    atom(s, g->output);
  } else {
    sg_buf_puts(s->b, "(let* (");
    size_t next = 0;
    bool first = true;
    for (size_t k = 0; k < sched->len; k++) {
      print_hoists(s, hv, &next, k, &first);
      sg_buf_puts(s->b, first ? "(" : " (");
      first = false;
      sg_buf_puts(s->b, gr_dump_node_name(s->d, sched->data[k]));
      sg_buf_putc(s->b, ' ');
      expr(s, sched->data[k]);
      sg_buf_putc(s->b, ')');
    }
    print_hoists(s, hv, &next, sched->len, &first);
    sg_buf_puts(s->b, ") ");
    atom(s, g->output);
    sg_buf_putc(s->b, ')');
  }
  s->stack.len--;
}

/* Whether g is h or lies inside it (its uses there print h's name). */
static bool within(const gr_graph *g, const gr_graph *h) {
  for (; g; g = g->parent)
    if (g == h) return true;
  return false;
}

/* Whether h is named again by a graph it names that lies outside it (mutual recursion:
 * printed inline, each names the other where the other is being printed). */
static bool calls_back(gr_graph *h) {
  sg_map seen = SG_MAP_INIT;
  gr_graph_vec reach = {0}, callees = {0};
  gr_reach_more(h, &seen, &reach);
  bool back = false;
  for (size_t r = 1; r < reach.len && !back; r++) {
    if (within(reach.data[r], h)) continue;
    gr_graph_callees(reach.data[r], &callees);
    for (size_t k = 0; k < callees.len && !back; k++) back = callees.data[k] == h;
  }
  sg_vec_free(&callees);
  sg_vec_free(&reach);
  sg_map_free(&seen);
  return back;
}

/* The innermost graph that is or encloses both a and b (NULL: none). */
static gr_graph *common_scope(gr_graph *a, gr_graph *b) {
  for (; a; a = a->parent)
    if (within(b, a)) return a;
  return NULL;
}

/* Counts where each nested graph is printed (not inside itself, nor as an `if` branch
 * branch() inlines), and hoists those printed from more than one place into the
 * innermost graph enclosing every use — its lexical parent, or inside it (after
 * inlining, the parent may even be a graph the dump no longer holds). */
static void find_hoists(sp *s) {
  gr_dumpctx *d = s->d;
  sg_map host = SG_MAP_INIT; /* nested graph → innermost graph enclosing its uses so far */
  sg_map multi = SG_MAP_INIT;
  gr_graph_vec order = {0};  /* the graphs printed more than once, in dump order */
  for (size_t i = 0; i < d->graphs.len; i++) {
    gr_graph *g = d->graphs.data[i];
    gr_node_vec *sched = &d->scheds[i];
    for (size_t k = 0; k <= sched->len; k++) {
      const gr_node *n = k < sched->len ? sched->data[k] : NULL;
      bool is_if = n && if_form(n);
      int nin = n ? n->ninputs : 1;
      for (int j = 0; j < nin; j++) {
        const gr_node *in = n ? n->inputs[j] : g->output;
        if (!in || !gr_is_const_graph(in)) continue;
        gr_graph *h = in->value.u.g;
        if (!h->parent || within(g, h) || (is_if && j >= 2 && h->is_branch)) continue;
        void *at;
        if (!sg_map_get(&host, (uintptr_t)h, &at)) {
          sg_map_put(&host, (uintptr_t)h, g);
          continue;
        }
        sg_map_put(&host, (uintptr_t)h, common_scope(at, g));
        if (!sg_map_get(&multi, (uintptr_t)h, NULL)) {
          sg_map_put(&multi, (uintptr_t)h, NULL);
          sg_vec_push(&order, h);
        }
      }
    }
  }
  s->hoists = sg_xcalloc(d->graphs.len + 1, sizeof(hoist_vec));
  hoist_vec cand = {0};
  for (size_t q = 0; q < order.len; q++) {
    gr_graph *h = order.data[q];
    void *hg = NULL;
    sg_map_get(&host, (uintptr_t)h, &hg);
    int pi = hg ? gr_dump_graph_index(d, hg) : -1;
    if (pi < 0 || calls_back(h)) continue; /* uses in two top-level defs; mutual recursion */
    /* right after the last of h's free variables the host computes (h's free variables
     * include those of every graph it names: a hoisted graph it names comes before) */
    gr_node_vec *sched = &d->scheds[pi];
    size_t at = 0;
    for (size_t k = 0; k < sched->len; k++)
      for (size_t f = 0; f < h->fvs.len; f++)
        if (h->fvs.data[f] == sched->data[k]) at = k + 1;
    hoist hz = {h, at, 0, pi};
    sg_vec_push(&cand, hz);
    sg_map_put(&s->hoisted, (uintptr_t)h, NULL);
  }
  /* at one position, a graph that names another hoisted graph binds after it: ordered
   * by how many hoisted graphs each reaches (one that reaches k reaches all k reaches) */
  gr_graph_vec reach = {0};
  for (size_t q = 0; q < cand.len; q++) {
    sg_map seen = SG_MAP_INIT;
    reach.len = 0;
    gr_reach_more(cand.data[q].g, &seen, &reach);
    for (size_t r = 1; r < reach.len; r++) cand.data[q].rank += sg_map_get(&s->hoisted, (uintptr_t)reach.data[r], NULL);
    sg_map_free(&seen);
  }
  for (size_t q = 0; q < cand.len; q++) {
    hoist c = cand.data[q];
    hoist_vec *hv = &s->hoists[c.host];
    sg_vec_push(hv, c);
    size_t r = hv->len - 1; /* insertion by (position, rank), stable */
    for (; r > 0; r--) {
      hoist prev = hv->data[r - 1];
      if (prev.at < c.at || (prev.at == c.at && prev.rank <= c.rank)) break;
      hv->data[r] = prev;
    }
    hv->data[r] = c;
  }
  sg_vec_free(&reach);
  sg_vec_free(&cand);
  sg_vec_free(&order);
  sg_map_free(&multi);
  sg_map_free(&host);
}

void gr_dump_sexpr(sg_buf *b, gr_module *m, gr_graph *entry) {
  gr_dumpctx d;
  gr_dumpctx_init(&d, m, entry);
  sp s = {&d, b, {0}, NULL, SG_MAP_INIT};
  find_hoists(&s);
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
  for (size_t i = 0; i < d.graphs.len; i++) sg_vec_free(&s.hoists[i]);
  free(s.hoists);
  sg_map_free(&s.hoisted);
  gr_dumpctx_free(&d);
}
