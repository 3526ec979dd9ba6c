/*
 * ad_rules.h — the op table's gradient column (graph/ops.c): GR_AD_SLOT(cpu) names
 * the gradient rule of a row from its CPU kernel family (like GR_VK_SLOT), and the
 * rule switches on the row's kernel code. A rule gets the builder of the gradient
 * graph (ad.c), the forward node n and its adjoint g, and adds the adjoints of n's
 * inputs with gr_ad_accum (rules live in ad_rules.c).
 */
#ifndef STAGD_GRAPH_AD_RULES_H
#define STAGD_GRAPH_AD_RULES_H

#include "gr_internal.h"

/* The gradient graph under construction (ad.c). */
typedef struct gr_ad {
  gr_module *m;
  gr_graph *g;          /* the gradient graph being built */
  gr_node_vec tape;     /* new primitive applies, forward order */
  sg_map adj;           /* new node → adjoint node */
  sg_error *err;
  int depth;
  const gr_node *site;  /* the grad node (for locations) */
} gr_ad;

typedef struct gr_grad_rule {
  sg_code (*fn)(gr_ad *c, gr_node *n, gr_node *g);
} gr_grad_rule;

/* builder helpers for rules (ad.c) */
gr_node *gr_ad_mk(gr_ad *c, const char *op, gr_node *a, gr_node *b); /* b NULL: unary */
gr_node *gr_ad_mk3(gr_ad *c, const char *op, gr_node *a, gr_node *b, gr_node *d);
gr_node *gr_ad_float(gr_ad *c, double f);
void gr_ad_accum(gr_ad *c, gr_node *x, gr_node *d);

extern const gr_grad_rule gr_grad_binary, gr_grad_unary, gr_grad_matmul, gr_grad_reduce,
    gr_grad_none, gr_grad_where, gr_grad_transpose, gr_grad_reshape;

#define GR_AD_SLOT(cpu) GR_AD_SLOT_##cpu
#define GR_AD_SLOT_gr_cpu_binary (&gr_grad_binary)
#define GR_AD_SLOT_gr_cpu_unary (&gr_grad_unary)
#define GR_AD_SLOT_gr_cpu_matmul (&gr_grad_matmul)
#define GR_AD_SLOT_gr_cpu_reduce (&gr_grad_reduce)
#define GR_AD_SLOT_gr_cpu_shape (&gr_grad_none)
#define GR_AD_SLOT_gr_cpu_arange NULL
#define GR_AD_SLOT_gr_cpu_assert NULL
#define GR_AD_SLOT_gr_cpu_cast NULL
#define GR_AD_SLOT_gr_cpu_fill NULL
#define GR_AD_SLOT_gr_cpu_gather NULL
#define GR_AD_SLOT_gr_cpu_getattr NULL
#define GR_AD_SLOT_gr_cpu_getitem NULL
#define GR_AD_SLOT_gr_cpu_grad NULL
#define GR_AD_SLOT_gr_cpu_if NULL
#define GR_AD_SLOT_gr_cpu_join NULL
#define GR_AD_SLOT_gr_cpu_one_hot NULL
#define GR_AD_SLOT_gr_cpu_print NULL
#define GR_AD_SLOT_gr_cpu_random NULL
#define GR_AD_SLOT_gr_cpu_record NULL
#define GR_AD_SLOT_gr_cpu_reshape (&gr_grad_reshape)
#define GR_AD_SLOT_gr_cpu_seq NULL
#define GR_AD_SLOT_gr_cpu_slice NULL
#define GR_AD_SLOT_gr_cpu_softmax NULL
#define GR_AD_SLOT_gr_cpu_transpose (&gr_grad_transpose)
#define GR_AD_SLOT_gr_cpu_tuple NULL
#define GR_AD_SLOT_gr_cpu_variable NULL
#define GR_AD_SLOT_gr_cpu_where (&gr_grad_where)
#define GR_AD_SLOT_gr_cpu_while NULL

#endif /* STAGD_GRAPH_AD_RULES_H */
