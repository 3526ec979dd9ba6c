// SPDX-License-Identifier: Apache-2.0
/*
 * ad_internal.h — private to graph/ad: what the transformation (ad.c), the builder
 * (ad_build.c) and the gradient rules (ad_rules.c) share. One forward/backward pair
 * under construction (gr_ad); the builder's helpers; the op table's gradient column
 * (gr_grad_rule_of, one rule per op family). A rule gets the builder, the forward node
 * n and its adjoint g, and adds the adjoints of n's inputs with gr_ad_accum (numbers
 * and tensors) or gr_ad_accum_s (any value: tuples, records, closures' environments;
 * accumulated with `add_grad`); it switches on the row's kernel code.
 */
#ifndef STAGD_GRAPH_AD_INTERNAL_H
#define STAGD_GRAPH_AD_INTERNAL_H

#include "gr_ad.h"

/* Shared by one expansion (possibly nested through grad of grad). */
typedef struct ad_state {
  sg_map jmemo;   /* top-level graph → its forward graph ▶F */
  sg_map active;  /* graph → count of replays in progress (recursion detection) */
  sg_map loops;   /* state arity → while_loop_N */
  sg_map prims;   /* op → ▶ wrapper graph */
  sg_map jinfos;  /* tape node → jinfo (calls, ifs, closures) */
  bool fvs_dirty;
} ad_state;

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

/* the builder (ad_build.c), shared by the transformation and the rules */
gr_node *gr_ad_prim(gr_ad *c, const char *name); /* a constant naming primitive NAME */
/* an apply of in[0..n) in graph g, located at the grad site */
gr_node *gr_ad_apply(gr_ad *c, gr_graph *g, gr_node **in, int n);
bool gr_ad_is_prim(const gr_node *n, const char *name);
/* whether x takes an adjoint (not a constant, unless a closure's) */
bool gr_ad_receives(gr_ad *c, const gr_node *x);
static inline bool gr_ad_in_set(const sg_map *s, const void *p) { return sg_map_get(s, (uintptr_t)p, NULL); }
static inline void gr_ad_set_add(sg_map *s, const void *p) { sg_map_put(s, (uintptr_t)p, NULL); }
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

#endif /* STAGD_GRAPH_AD_INTERNAL_H */
