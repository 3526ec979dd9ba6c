/*
 * ad_rules.h — private to graph/ad: the op table's gradient column (gr_grad_rule_of,
 * one rule per op family, ad_rules.c), and the rule switches on the row's kernel code. A rule gets the builder of the backward
 * graph (ad.c), the forward node n and its adjoint g, and adds the adjoints of n's
 * inputs with gr_ad_accum (numbers and tensors) or gr_ad_accum_s (any value: tuples,
 * records, closures' environments; accumulated with `add_grad`). Rules live in
 * ad_rules.c.
 */
#ifndef STAGD_GRAPH_AD_RULES_H
#define STAGD_GRAPH_AD_RULES_H

#include "gr_ad.h"

struct ad_state;

/* One forward/backward pair under construction (ad.c). For the top-level gradient
 * graph fg == g; for a function's forward graph ▶F, g is its backpropagator ◀F. */
typedef struct gr_ad {
  gr_module *m;
  gr_graph *g;          /* the graph the reverse sweep builds (rules emit here) */
  gr_graph *fg;         /* the graph the forward replay builds */
  gr_node_vec tape;     /* forward nodes to visit in reverse, forward order */
  sg_map adj;           /* forward node → adjoint node */
  sg_map structural;    /* adjoint nodes that may be tuples/records/none (add_grad) */
  sg_map scalar;        /* forward nodes known to be scalars (no broadcast to undo) */
  sg_error *err;
  int depth;
  const gr_node *site;  /* the grad node (for locations) */
  struct ad_state *st;  /* shared across the whole expansion */
} gr_ad;

typedef struct gr_grad_rule {
  sg_code (*fn)(gr_ad *c, gr_node *n, gr_node *g);
} gr_grad_rule;

/* builder helpers for rules (ad.c) */
gr_node *gr_ad_mk(gr_ad *c, const char *op, gr_node *a, gr_node *b); /* b NULL: unary */
gr_node *gr_ad_mk3(gr_ad *c, const char *op, gr_node *a, gr_node *b, gr_node *d);
gr_node *gr_ad_mkn(gr_ad *c, const char *op, gr_node **args, int n);
gr_node *gr_ad_float(gr_ad *c, double f);
gr_node *gr_ad_int(gr_ad *c, int64_t i);
void gr_ad_accum(gr_ad *c, gr_node *x, gr_node *d);
void gr_ad_accum_s(gr_ad *c, gr_node *x, gr_node *d);
/* d summed down to x's shape (sum_like) unless no broadcasting can have happened:
 * n (the forward node) is known to be a scalar, or other is a scalar literal or x. */
gr_node *gr_ad_unbroadcast(gr_ad *c, gr_node *n, gr_node *x, gr_node *other, gr_node *d);
/* n is known to be a scalar: so are its elementwise inputs. */
void gr_ad_mark_scalar_inputs(gr_ad *c, gr_node *n);

extern const gr_grad_rule gr_grad_binary, gr_grad_unary, gr_grad_matmul, gr_grad_reduce,
    gr_grad_none, gr_grad_where, gr_grad_transpose, gr_grad_reshape, gr_grad_cast,
    gr_grad_softmax, gr_grad_tuple, gr_grad_getitem, gr_grad_record, gr_grad_getattr,
    gr_grad_seq, gr_grad_adjoint, gr_grad_join, gr_grad_slice, gr_grad_gather, gr_grad_fill,
    gr_grad_pyconv;

/* The gradient rule of op's family; NULL: no gradient flows (effects, control forms
 * AD handles itself, optimizer steps). */
const gr_grad_rule *gr_grad_rule_of(const gr_op *op);

#endif /* STAGD_GRAPH_AD_RULES_H */
