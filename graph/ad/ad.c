// SPDX-License-Identifier: Apache-2.0
/*
 * ad.c — reverse-mode automatic differentiation on the graph IR (issue #7), Myia
 * style. `(grad f i ...)` lowers to an apply of the `grad` primitive; after lowering,
 * gr_ad_expand replaces each such node whose function is a top-level def by a constant
 * naming a new gradient graph `grad_f`; for a closure f (a lambda or nested def),
 * `grad_f` is nested where f is and takes what f captured as constants, each
 * `(captured X)` (fwd_captured).
 *
 * The gradient graph replays f's primitive applies (a tape, in forward order) and
 * walks the tape backwards, adding each input's adjoint with the primitive's rule
 * from the op table's grad column (ad_rules.c). Calls of other
 * (non-recursive) defs are inlined into the replay, so a straight-line f gives a
 * straight-line gradient that the optimizer reduces like a hand-written one.
 *
 * Everything else goes through Myia's closure transformation: a function F (a def, a
 * lambda, an `if` branch, a primitive used as a value) becomes its forward graph ▶F,
 * with F's parameters, returning (tuple VALUE ◀F); the backpropagator ◀F is a closure
 * nested in ▶F (so it sees the forward values it needs) that takes the output's
 * sensitivity and returns (tuple FV-SENS PARAM-SENS...), FV-SENS being the tuple of
 * the sensitivities of F's free variables (`none` for a variable nothing flowed to). In a forward graph:
 *   - a call of a function value, or of a recursive def, calls its ▶ version and
 *     keeps the backpropagator; in reverse the backpropagator is called and its result
 *     routed to the arguments and (FV-SENS) to the function value itself;
 *   - a closure (a lambda or def with free variables) is created as ▶H; the
 *     sensitivity it accumulates (from every call of it, wherever it flowed) is a
 *     tuple in H's free-variable order, added back to those variables where the
 *     closure was created — gradients w.r.t. free variables reach the capturing scope;
 *   - `(if C T E)` runs (if C ▶T ▶E) whose branches return their value and a
 *     backpropagator returning the sensitivities of the union of both branches' free
 *     variables (so either branch's answer has the same shape);
 *   - `(while COND BODY INIT)` is the call (while_loop_N COND BODY S1..SN) of a
 *     recursive def (N = the state's arity; the def is built here) and differentiates
 *     as recursion does.
 * Sensitivities that are not numbers (tuples, records, closure environments, `none`
 * for zero) are accumulated with `add_grad`; `or_zeros` turns a none into zeros where
 * a primitive's rule or the result needs a value. All of this is ordinary graph IR, so grad of grad
 * works and the optimizer simplifies the result.
 */
#include <string.h>

#include "ad_internal.h"

typedef gr_ad adc;

/* A forward map: original nodes of `orig` (and constants used there) → new nodes
 * built by context c; `up` is the scope of the lexically enclosing graph. */
typedef struct scope {
  sg_map map;
  struct scope *up;
  gr_graph *orig;
  adc *c;
} scope;

/* What the reverse sweep does for tape entries that are not primitive applies. */
typedef enum { JK_CALL, JK_IF, JK_CLOSURE } jkind;
typedef struct jinfo {
  jkind kind;
  gr_node *bp;       /* JK_CALL/JK_IF: the backpropagator (forward node) */
  gr_node *head;     /* JK_CALL: the called function value */
  gr_node **targets; /* JK_CALL: arguments; JK_IF/JK_CLOSURE: free variables */
  int ntargets;
} jinfo;


/* ------------------------------------------------------------ forward replay */
static sg_code expand_graph(gr_module *m, gr_graph *g, sg_error *err);
static gr_node *fwd(adc *c, scope *s, gr_node *x);
static gr_graph *jgraph(adc *pc, scope *ps, gr_graph *h, gr_node **fvl, int nfv, sg_error *err,
                        const gr_node *site);

static gr_node *fnode(adc *c, gr_node **in, int n, const gr_node *like) {
  gr_node *r = gr_apply_new(c->m, c->fg, in, n);
  r->line = like->line;
  r->col = like->col;
  return r;
}

static gr_node *fget(adc *c, gr_node *t, int i, const gr_node *like) {
  gr_node *in[3] = {gr_ad_prim(c, "getitem"), t, gr_ad_int(c, i)};
  return fnode(c, in, 3, like);
}

static gr_node *graph_const(adc *c, gr_graph *g, const gr_node *like) {
  gr_val v = {.tag = GV_GRAPH, .u.g = g};
  gr_node *k = gr_const_new(c->m, v);
  k->line = like->line;
  k->col = like->col;
  return k;
}

static void active_add(ad_state *st, gr_graph *g, int d) {
  void *v = NULL;
  sg_map_get(&st->active, (uintptr_t)g, &v);
  sg_map_put(&st->active, (uintptr_t)g, (void *)((uintptr_t)v + (uintptr_t)(intptr_t)d));
}

static bool is_active(ad_state *st, gr_graph *g) {
  void *v = NULL;
  return sg_map_get(&st->active, (uintptr_t)g, &v) && v;
}

/* A call whose callee returns (value, backpropagator): r = (head args...), the value
 * is the tape entry, the backpropagator is kept for the reverse sweep. */
static gr_node *jcall(adc *c, gr_node *x, gr_node *head, gr_node **args, int na) {
  gr_node **in = sg_xcalloc((size_t)na + 1, sizeof(gr_node *));
  in[0] = head;
  for (int i = 0; i < na; i++) in[i + 1] = args[i];
  gr_node *r = fnode(c, in, na + 1, x);
  free(in);
  gr_node *v = fget(c, r, 0, x);
  v->name = x->name;
  jinfo *ji = sg_arena_alloc(&c->m->arena, sizeof *ji);
  ji->kind = JK_CALL;
  ji->bp = fget(c, r, 1, x);
  ji->head = head;
  ji->ntargets = na;
  ji->targets = sg_arena_alloc(&c->m->arena, sizeof(gr_node *) * (size_t)(na + 1));
  for (int i = 0; i < na; i++) ji->targets[i] = args[i];
  sg_map_put(&c->st->jinfos, (uintptr_t)v, ji);
  sg_vec_push(&c->tape, v);
  return v;
}

static void fvs_fresh(adc *c) {
  if (c->st->fvs_dirty) {
    gr_compute_fvs(c->m);
    c->st->fvs_dirty = false;
  }
}

/* ▶ of a top-level def (memoised; recursion refers to the graph being built). */
static gr_graph *jtop(adc *c, gr_graph *f, const gr_node *site) {
  void *got;
  if (sg_map_get(&c->st->jmemo, (uintptr_t)f, &got)) return got;
  if (expand_graph(c->m, f, c->err)) return NULL;
  fvs_fresh(c);
  return jgraph(c, NULL, f, NULL, 0, c->err, site);
}

/* A new top-level graph PRE_NAME for AD's own use, named so that no other top-level
 * graph has its name (PRE_NAME, then PRE_NAME$1, ...): the sexpr dump names top-level
 * graphs by name, and a re-staged dump may already hold a def PRE_NAME. */
static gr_graph *generated_graph(gr_module *m, const char *pre, const char *name) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s_%.200s", pre, name);
  for (int k = 1;; k++) {
    bool taken = false;
    for (size_t i = 0; i < m->graphs.len && !taken; i++) {
      const gr_graph *g = m->graphs.data[i];
      taken = !g->parent && g->name && !strcmp(g->name, buf);
    }
    if (!taken) break;
    snprintf(buf, sizeof buf, "%s_%.200s$%d", pre, name, k);
  }
  gr_graph *g = gr_graph_new(m, sg_intern_str(&m->strings, buf), NULL);
  g->generated = true;
  return g;
}

/* ▶ of a primitive used as a function value: a def applying it, transformed. */
static gr_graph *jprim(adc *c, const gr_op *op, const gr_node *x) {
  void *got;
  if (sg_map_get(&c->st->prims, (uintptr_t)op, &got)) return got;
  if (op->min_args != op->max_args || (op->flags & (GR_OP_CALLS | GR_OP_EFFECT))) {
    gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, x,
                "grad: cannot differentiate '%s' passed as a function value (variadic or "
                "effectful primitive)", op->name);
    return NULL;
  }
  gr_graph *w = generated_graph(c->m, "prim", op->alias ? op->alias : op->name);
  gr_node **in = sg_xcalloc((size_t)op->max_args + 1, sizeof(gr_node *));
  in[0] = gr_ad_prim(c, op->name);
  for (int i = 0; i < op->max_args; i++) in[i + 1] = gr_param_new(c->m, w, NULL);
  gr_set_output(w, gr_apply_new(c->m, w, in, op->max_args + 1));
  free(in);
  gr_graph *j = jtop(c, w, x);
  if (j) sg_map_put(&c->st->prims, (uintptr_t)op, j);
  return j;
}

/* (def while_loop_N (cond body s1..sN)
 *   (if (cond s1..sN) (let t (body s1..sN) (while_loop_N cond body (getitem t 0)..))
 *       (tuple s1..sN)))  — the functional while as recursion */
static gr_graph *while_loop(adc *c, int n) {
  void *got;
  if (sg_map_get(&c->st->loops, (uintptr_t)n, &got)) return got;
  gr_module *m = c->m;
  char name[32];
  snprintf(name, sizeof name, "%d", n);
  gr_graph *w = generated_graph(m, "while_loop", name);
  gr_node *cf = gr_param_new(m, w, "cond"), *bf = gr_param_new(m, w, "body");
  gr_node **sp = sg_xcalloc((size_t)n + 4, sizeof(gr_node *));
  gr_node **in = sg_xcalloc((size_t)n + 4, sizeof(gr_node *));
  for (int i = 0; i < n; i++) sp[i] = gr_param_new(m, w, "s");
  gr_graph *t = gr_graph_new(m, sg_intern_str(&m->strings, "loop_step"), w);
  gr_graph *e = gr_graph_new(m, sg_intern_str(&m->strings, "loop_done"), w);
  t->is_branch = e->is_branch = true;
  in[0] = bf;
  for (int i = 0; i < n; i++) in[i + 1] = sp[i];
  gr_node *nx = gr_apply_new(m, t, in, n + 1);
  gr_val wv = {.tag = GV_GRAPH, .u.g = w};
  in[0] = gr_const_new(m, wv);
  in[1] = cf;
  in[2] = bf;
  for (int i = 0; i < n; i++) {
    gr_node *gi[3] = {gr_ad_prim(c, "getitem"), nx, gr_ad_int(c, i)};
    in[i + 3] = gr_apply_new(m, t, gi, 3);
  }
  gr_set_output(t, gr_apply_new(m, t, in, n + 3));
  in[0] = gr_ad_prim(c, "tuple");
  for (int i = 0; i < n; i++) in[i + 1] = sp[i];
  gr_set_output(e, gr_apply_new(m, e, in, n + 1));
  in[0] = cf;
  gr_node *cond = gr_apply_new(m, w, in, n + 1);
  gr_val tv = {.tag = GV_GRAPH, .u.g = t}, ev = {.tag = GV_GRAPH, .u.g = e};
  gr_node *ifn[4] = {gr_ad_prim(c, "if"), cond, gr_const_new(m, tv), gr_const_new(m, ev)};
  gr_set_output(w, gr_apply_new(m, w, ifn, 4));
  /* the loop's own nodes are located at the grad form that needed them */
  gr_graph *gs[3] = {w, t, e};
  for (int k = 0; k < 3; k++) {
    gs[k]->line = c->site->line;
    gs[k]->col = c->site->col;
    for (size_t q = 0; q < gs[k]->nodes.len; q++) {
      gs[k]->nodes.data[q]->line = c->site->line;
      gs[k]->nodes.data[q]->col = c->site->col;
    }
  }
  free(sp);
  free(in);
  c->st->fvs_dirty = true;
  sg_map_put(&c->st->loops, (uintptr_t)n, w);
  return w;
}

static int graph_arity(const gr_node *f) {
  return gr_is_const_graph(f) ? f->value.u.g->nparams : -1;
}

/* The free variables of both branches, in order, without repeats. */
static gr_node **union_fvs(gr_graph *a, gr_graph *b, int *n) {
  gr_node **u = sg_xcalloc(a->fvs.len + b->fvs.len + 1, sizeof(gr_node *));
  int k = 0;
  sg_map seen = SG_MAP_INIT;
  for (int pass = 0; pass < 2; pass++) {
    gr_graph *g = pass ? b : a;
    for (size_t i = 0; i < g->fvs.len; i++)
      if (!gr_ad_in_set(&seen, g->fvs.data[i])) {
        gr_ad_set_add(&seen, g->fvs.data[i]);
        u[k++] = g->fvs.data[i];
      }
  }
  sg_map_free(&seen);
  *n = k;
  return u;
}

static gr_node *fwd_if(adc *c, scope *s, gr_node *x, gr_node *cond) {
  gr_node *tb = x->inputs[2], *eb = x->inputs[3];
  if (graph_arity(tb) != 0 || graph_arity(eb) != 0) {
    gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, x, "grad: 'if' branches must be functions");
    return NULL;
  }
  if (expand_graph(c->m, tb->value.u.g, c->err) || expand_graph(c->m, eb->value.u.g, c->err))
    return NULL;
  fvs_fresh(c);
  int nu;
  gr_node **u = union_fvs(tb->value.u.g, eb->value.u.g, &nu);
  gr_graph *jt = jgraph(c, s, tb->value.u.g, u, nu, c->err, x);
  gr_graph *je = jt ? jgraph(c, s, eb->value.u.g, u, nu, c->err, x) : NULL;
  gr_node *v = NULL;
  if (je) {
    jinfo *ji = sg_arena_alloc(&c->m->arena, sizeof *ji);
    ji->kind = JK_IF;
    ji->ntargets = nu;
    ji->targets = sg_arena_alloc(&c->m->arena, sizeof(gr_node *) * (size_t)(nu + 1));
    for (int i = 0; i < nu; i++)
      if (!(ji->targets[i] = fwd(c, s, u[i]))) goto out;
    gr_node *in[4] = {gr_ad_prim(c, "if"), cond, graph_const(c, jt, x), graph_const(c, je, x)};
    gr_node *r = fnode(c, in, 4, x);
    v = fget(c, r, 0, x);
    v->name = x->name;
    ji->bp = fget(c, r, 1, x);
    ji->head = NULL;
    sg_map_put(&c->st->jinfos, (uintptr_t)v, ji);
    sg_vec_push(&c->tape, v);
  }
out:
  free(u);
  return v;
}

/* A graph constant used as a value: ▶ of the graph; a closure's constant goes on the
 * tape so its environment's sensitivity returns to the captured variables. */
static gr_node *fwd_graph_value(adc *c, scope *s, gr_node *x) {
  gr_graph *h = x->value.u.g;
  if (!h->parent) {
    gr_graph *j = jtop(c, h, x);
    return j ? graph_const(c, j, x) : NULL;
  }
  if (is_active(c->st, h)) {
    /* its ▶ version is being built: a nested def that calls itself would be
     * transformed again and again (unbounded native recursion) */
    gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, x,
                "grad: differentiating the recursive nested def '%s' is not implemented "
                "(make it a top-level def)", h->name ? h->name : "lambda");
    return NULL;
  }
  if (expand_graph(c->m, h, c->err)) return NULL;
  fvs_fresh(c);
  int nfv = (int)h->fvs.len;
  gr_node **fvl = sg_arena_alloc(&c->m->arena, sizeof(gr_node *) * (size_t)(nfv + 1));
  if (nfv) memcpy(fvl, h->fvs.data, sizeof(gr_node *) * (size_t)nfv);
  jinfo *ji = sg_arena_alloc(&c->m->arena, sizeof *ji);
  ji->kind = JK_CLOSURE;
  ji->ntargets = nfv;
  ji->targets = sg_arena_alloc(&c->m->arena, sizeof(gr_node *) * (size_t)(nfv + 1));
  for (int i = 0; i < nfv; i++)
    if (!(ji->targets[i] = fwd(c, s, fvl[i]))) return NULL;
  gr_graph *j = jgraph(c, s, h, fvl, nfv, c->err, x);
  if (!j) return NULL;
  gr_node *k = graph_const(c, j, x);
  sg_map_put(&c->st->jinfos, (uintptr_t)k, ji);
  sg_vec_push(&c->tape, k);
  return k;
}

static scope *owner_scope(scope *s, const gr_node *x) {
  for (; s; s = s->up)
    if (s->orig == x->graph) return s;
  return NULL;
}

static gr_node *fwd_apply(adc *c, scope *s, gr_node *x);

static bool encloses(const gr_graph *outer, const gr_graph *g) {
  for (g = g ? g->parent : NULL; g; g = g->parent)
    if (g == outer) return true;
  return false;
}

/* A node of a graph enclosing the differentiated closure (grad of a lambda or nested
 * def): a constant of the gradient, (captured X) in the gradient graph, which is
 * nested where the closure is. `captured` fails at run time on a function value,
 * whose ▶ version a call inside the gradient would need; in grad of grad it is the
 * identity, so the outer gradient flows through the capture. */
static gr_node *fwd_captured(scope *s, gr_node *x) {
  scope *top = s;
  while (top->up) top = top->up;
  adc *c = top->c;
  if (!encloses(x->graph, top->orig)) {
    gr_error_at(c->err, SG_INTERNAL, c->m, x, "internal: grad: node of an unknown scope");
    return NULL;
  }
  void *got;
  if (sg_map_get(&top->map, (uintptr_t)x, &got)) return got;
  gr_node *in[2] = {gr_ad_prim(c, "captured"), x};
  gr_node *r = fnode(c, in, 2, x);
  sg_map_put(&top->map, (uintptr_t)x, r);
  return r;
}

/* The node that stands for original node x in the forward graphs. */
static gr_node *fwd(adc *c, scope *s, gr_node *x) {
  void *got;
  if (x->kind == GR_CONST) {
    if (x->value.tag != GV_GRAPH && x->value.tag != GV_PRIM) return x;
    if (sg_map_get(&s->map, (uintptr_t)x, &got)) return got;
    gr_node *r;
    if (x->value.tag == GV_PRIM) { /* a primitive used as a function value */
      gr_graph *j = jprim(c, x->value.u.op, x);
      r = j ? graph_const(c, j, x) : NULL;
    } else {
      r = fwd_graph_value(c, s, x);
    }
    if (r) sg_map_put(&s->map, (uintptr_t)x, r);
    return r;
  }
  scope *o = owner_scope(s, x);
  if (!o) return fwd_captured(s, x);
  if (o != s) return fwd(o->c, o, x);
  if (sg_map_get(&s->map, (uintptr_t)x, &got)) return got;
  if (x->kind == GR_PARAM) {
    gr_error_at(c->err, SG_INTERNAL, c->m, x, "internal: grad: unmapped parameter '%s'",
                x->name ? x->name : "?");
    return NULL;
  }
  if (++c->depth > GR_MAX_NESTING) {
    gr_error_at(c->err, SG_INVALID_ARGUMENT, c->m, x,
                "grad: calls or expressions nested deeper than %d", GR_MAX_NESTING);
    c->depth--;
    return NULL;
  }
  gr_node *r = fwd_apply(c, s, x);
  c->depth--;
  if (r) sg_map_put(&s->map, (uintptr_t)x, r);
  return r;
}

static gr_node *fwd_apply(adc *c, scope *s, gr_node *x) {
  gr_node *head = x->inputs[0], *r = NULL;
  int na = x->ninputs - 1;
  const gr_op *op = gr_node_prim(x);
  gr_node **in = sg_xcalloc((size_t)x->ninputs + 1, sizeof(gr_node *));
  if (op == gr_op_if) {
    if ((in[1] = fwd(c, s, x->inputs[1]))) r = fwd_if(c, s, x, in[1]);
    goto out;
  }
  if (op == gr_op_while) {
    int n = graph_arity(x->inputs[1]);
    if (n < 0) n = graph_arity(x->inputs[2]);
    if (n < 0 && gr_ad_is_prim(x->inputs[3], "tuple")) n = x->inputs[3]->ninputs - 1;
    if (n < 0) {
      gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, x,
                  "grad: 'while' needs a literal condition or body function (its state's "
                  "arity must be known)");
      goto out;
    }
    gr_node **args = sg_xcalloc((size_t)n + 3, sizeof(gr_node *));
    gr_node *init = NULL;
    bool ok = (args[0] = fwd(c, s, x->inputs[1])) && (args[1] = fwd(c, s, x->inputs[2])) &&
              (init = fwd(c, s, x->inputs[3]));
    for (int i = 0; ok && i < n; i++) {
      args[i + 2] = fget(c, init, i, x);
      sg_vec_push(&c->tape, args[i + 2]);
    }
    gr_graph *w = ok ? while_loop(c, n) : NULL;
    gr_graph *jw = w ? jtop(c, w, x) : NULL;
    if (jw) r = jcall(c, x, graph_const(c, jw, x), args, n + 2);
    free(args);
    goto out;
  }
  /* an assert (Python's assert and raise) runs in the forward pass as written and
   * passes no gradient; other effects are not differentiable */
  bool check = op && !strcmp(op->name, "assert");
  if (op && (op->flags & GR_OP_EFFECT) && !check) {
    gr_error_at(c->err, SG_INVALID_ARGUMENT, c->m, x,
                "grad: '%s' has side effects and is not differentiable", op->name);
    goto out;
  }
  if (op && (op->flags & GR_OP_CALLS)) {
    gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, x,
                "grad: differentiating through '%s' is not implemented", op->name);
    goto out;
  }
  for (int i = 1; i <= na; i++)
    if (!(in[i] = fwd(c, s, x->inputs[i]))) goto out;
  if (op) {
    in[0] = head;
    r = fnode(c, in, x->ninputs, x);
    r->name = x->name;
    if (!(op->flags & GR_OP_NOGRAD) && !check) sg_vec_push(&c->tape, r);
    goto out;
  }
  if (gr_is_const_graph(head) && !head->value.u.g->parent && head->value.u.g->nparams == na &&
      !is_active(c->st, head->value.u.g)) {
    /* a non-recursive def: inline its replay */
    gr_graph *callee = head->value.u.g;
    if (expand_graph(c->m, callee, c->err)) goto out;
    scope inner = {SG_MAP_INIT, NULL, callee, c};
    for (int i = 0; i < na; i++) sg_map_put(&inner.map, (uintptr_t)callee->params[i], in[i + 1]);
    active_add(c->st, callee, 1);
    r = fwd(c, &inner, callee->output);
    active_add(c->st, callee, -1);
    sg_map_free(&inner.map);
    goto out;
  }
  /* a call of a function value or of a recursive def: its ▶ version */
  gr_node *h2 = fwd(c, s, head);
  if (h2 && gr_ad_is_prim(h2, "captured")) {
    gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, x,
                "grad: the differentiated closure calls '%s', a function value captured from "
                "its enclosing def; not implemented (pass it as a parameter of a top-level "
                "def, or use a literal lambda)", head->name ? head->name : "?");
    goto out;
  }
  if (h2) r = jcall(c, x, h2, in + 1, na);
out:
  free(in);
  return r;
}

/* ------------------------------------------------------------- reverse sweep */
/* The gradient rule of one primitive: its op-table row's grad column (ad_rules.c). */
static sg_code ad_rule(adc *c, gr_node *n, gr_node *g) {
  void *jp;
  if (sg_map_get(&c->st->jinfos, (uintptr_t)n, &jp)) {
    jinfo *ji = jp;
    if (ji->kind == JK_CLOSURE) {
      /* the environment's sensitivity: a tuple in the free variables' order (none
       * where nothing flowed) */
      for (int i = 0; i < ji->ntargets; i++)
        gr_ad_accum_s(c, ji->targets[i], gr_ad_mk(c, "sens_item", g, gr_ad_int(c, i)));
      return SG_OK;
    }
    gr_node *in[2] = {ji->bp, g};
    gr_node *sens = gr_ad_apply(c, c->g, in, 2);
    if (ji->kind == JK_IF) {
      gr_node *fs = gr_ad_mk(c, "getitem", sens, gr_ad_int(c, 0));
      for (int i = 0; i < ji->ntargets; i++)
        gr_ad_accum_s(c, ji->targets[i], gr_ad_mk(c, "getitem", fs, gr_ad_int(c, i)));
      return SG_OK;
    }
    gr_ad_accum_s(c, ji->head, gr_ad_mk(c, "getitem", sens, gr_ad_int(c, 0)));
    for (int i = 0; i < ji->ntargets; i++)
      gr_ad_accum_s(c, ji->targets[i], gr_ad_mk(c, "getitem", sens, gr_ad_int(c, i + 1)));
    return SG_OK;
  }
  const gr_op *op = gr_node_prim(n);
  const gr_grad_rule *r = gr_grad_rule_of(op);
  if (!r)
    return gr_error_at(c->err, SG_UNIMPLEMENTED, c->m, n,
                       "grad: no gradient rule for primitive '%s'", op->name);
  /* a sensitivity that may be none (nothing flowed) becomes zeros before the rule */
  if (gr_ad_in_set(&c->structural, g)) g = gr_ad_mk(c, "or_zeros", g, n);
  return r->fn(c, n, g);
}

static sg_code sweep(adc *c) {
  for (size_t k = c->tape.len; k-- > 0;) {
    gr_node *n = c->tape.data[k];
    void *g;
    if (!sg_map_get(&c->adj, (uintptr_t)n, &g)) continue;
    if (ad_rule(c, n, g)) return c->err->code;
  }
  return SG_OK;
}

/* The sensitivity a backpropagator returns for x: none when nothing flowed to it
 * (add_grad treats none as zero; or_zeros makes it concrete where needed). */
static gr_node *adj_or_none(adc *c, gr_node *x) {
  void *g;
  if (gr_ad_receives(c, x) && sg_map_get(&c->adj, (uintptr_t)x, &g)) return g;
  return gr_const_new(c->m, gv_none());
}

static void ctx_free(adc *c) {
  sg_map_free(&c->adj);
  sg_map_free(&c->structural);
  sg_map_free(&c->scalar);
  sg_vec_free(&c->tape);
}

static const char *jname(gr_module *m, const char *pre, const gr_graph *h) {
  char name[256];
  snprintf(name, sizeof name, "%s_%s", pre, h->name ? h->name : "fn");
  return sg_intern_str(&m->strings, name);
}

/* ▶h: h's parameters → (tuple VALUE ◀h), ◀h: dout → (tuple (tuple FV-SENS...)
 * PARAM-SENS...) with the free variables fvl (h's, or both branches' of an `if`).
 * Nested in pc's forward graph (pc NULL: h is a top-level def). */
static gr_graph *jgraph(adc *pc, scope *ps, gr_graph *h, gr_node **fvl, int nfv, sg_error *err,
                        const gr_node *site) {
  gr_module *m = pc->m;
  if (expand_graph(m, h, err)) return NULL;
  adc c = {.m = m, .err = err, .site = site, .st = pc->st};
  c.fg = ps ? gr_graph_new(m, jname(m, "fwd", h), pc->fg) : generated_graph(m, "fwd", h->name ? h->name : "fn");
  c.fg->line = h->line;
  c.fg->col = h->col;
  c.fg->is_branch = h->is_branch && h->nparams == 0;
  c.g = gr_graph_new(m, jname(m, "bprop", h), c.fg);
  c.g->line = h->line;
  c.g->col = h->col;
  if (!ps) sg_map_put(&c.st->jmemo, (uintptr_t)h, c.fg);
  scope s = {SG_MAP_INIT, ps, h, &c};
  for (int i = 0; i < h->nparams; i++) {
    gr_node *p = gr_param_new(m, c.fg, h->params[i]->name);
    p->aval = h->params[i]->aval;
    sg_map_put(&s.map, (uintptr_t)h->params[i], p);
  }
  gr_graph *res = NULL;
  active_add(c.st, h, 1);
  gr_node *out = fwd(&c, &s, h->output);
  active_add(c.st, h, -1);
  gr_node *dout = gr_param_new(m, c.g, "dout");
  gr_node **outs = NULL;
  if (!out) goto done;
  gr_ad_accum_s(&c, out, dout);
  if (sweep(&c)) goto done;
  outs = sg_xcalloc((size_t)(nfv > h->nparams ? nfv : h->nparams) + 2, sizeof(gr_node *));
  for (int i = 0; i < nfv; i++) {
    gr_node *fv = fwd(&c, &s, fvl[i]);
    if (!fv) goto done;
    outs[i] = adj_or_none(&c, fv);
  }
  gr_node *fvsens = gr_ad_mkn(&c, "tuple", outs, nfv);
  outs[0] = fvsens;
  for (int i = 0; i < h->nparams; i++) outs[i + 1] = adj_or_none(&c, c.fg->params[i]);
  gr_set_output(c.g, gr_ad_mkn(&c, "tuple", outs, h->nparams + 1));
  gr_node *fo[3] = {gr_ad_prim(&c, "tuple"), out, graph_const(&c, c.g, site)};
  gr_set_output(c.fg, gr_apply_new(m, c.fg, fo, 3));
  res = c.fg;
  c.st->fvs_dirty = true; /* new graphs with free variables */
done:
  free(outs);
  sg_map_free(&s.map);
  ctx_free(&c);
  return res;
}

/* Builds the gradient graph of f with respect to the parameters in idx[0..nidx). */
static gr_graph *build_grad(gr_module *m, ad_state *st, gr_graph *f, const int *idx, int nidx,
                            const gr_node *site, sg_error *err) {
  adc c = {.m = m, .err = err, .site = site, .st = st};
  /* a closure's gradient is nested where the closure is: it sees what the closure
   * captured (fwd_captured) */
  c.g = c.fg = f->parent ? gr_graph_new(m, jname(m, "grad", f), f->parent)
                         : generated_graph(m, "grad", f->name ? f->name : "fn");
  c.g->line = f->line;
  c.g->col = f->col;
  scope s = {SG_MAP_INIT, NULL, f, &c};
  for (int i = 0; i < f->nparams; i++) {
    gr_node *p = gr_param_new(m, c.g, f->params[i]->name);
    p->aval = f->params[i]->aval;
    sg_map_put(&s.map, (uintptr_t)f->params[i], p);
  }
  gr_graph *res = NULL;
  active_add(st, f, 1);
  gr_node *out = fwd(&c, &s, f->output);
  active_add(st, f, -1);
  if (!out) goto done;
  /* grad differentiates a scalar-valued function: its output is a scalar */
  if (out->kind == GR_APPLY && !sg_map_get(&st->jinfos, (uintptr_t)out, NULL))
    gr_ad_set_add(&c.scalar, out);
  gr_ad_accum(&c, out, gr_ad_float(&c, 1.0));
  if (sweep(&c)) goto done;
  gr_node **outs = sg_xcalloc((size_t)nidx + 1, sizeof(gr_node *));
  for (int i = 0; i < nidx; i++) {
    gr_node *p = c.g->params[idx[i]];
    void *g;
    if (!sg_map_get(&c.adj, (uintptr_t)p, &g)) outs[i] = gr_ad_mk(&c, "*", p, gr_ad_float(&c, 0.0));
    else outs[i] = gr_ad_in_set(&c.structural, g) ? gr_ad_mk(&c, "or_zeros", g, p) : g;
  }
  gr_set_output(c.g, nidx == 1 ? outs[0] : gr_ad_mkn(&c, "tuple", outs, nidx));
  free(outs);
  res = c.g;
  st->fvs_dirty = true;
done:
  sg_map_free(&s.map);
  ctx_free(&c);
  return res;
}

static _Thread_local ad_state *cur_state;

static sg_code expand_node(gr_module *m, gr_node *n, sg_error *err) {
  int na = n->ninputs - 1;
  gr_node *fn = n->inputs[1];
  if (!gr_is_const_graph(fn))
    return gr_error_at(err, SG_UNIMPLEMENTED, m, n,
                       "grad: the function must be a def, nested def or lambda written where "
                       "grad is taken; grad of a function value known only at run time (a "
                       "parameter, a tuple item, the result of an 'if') is not implemented");
  gr_graph *f = fn->value.u.g;
  if (expand_graph(m, f, err)) return err->code;
  int *idx = sg_xcalloc((size_t)(na > 1 ? na : 1), sizeof(int));
  int nidx = 0;
  if (na == 1) idx[nidx++] = 0;
  for (int i = 2; i <= na; i++) {
    gr_node *x = n->inputs[i];
    if (x->kind != GR_CONST || x->value.tag != GV_INT) {
      free(idx);
      return gr_error_at(err, SG_INVALID_ARGUMENT, m, x,
                         "grad: parameter index must be an integer literal");
    }
    if (x->value.u.i < 0 || x->value.u.i >= f->nparams) {
      free(idx);
      return gr_error_at(err, SG_INVALID_ARGUMENT, m, x,
                         "grad: parameter index %lld out of range: '%s' has %d parameter(s)",
                         (long long)x->value.u.i, f->name ? f->name : "?", f->nparams);
    }
    idx[nidx++] = (int)x->value.u.i;
  }
  gr_graph *dg = build_grad(m, cur_state, f, idx, nidx, n, err);
  free(idx);
  if (!dg) return err->code;
  gr_val v = {.tag = GV_GRAPH, .u.g = dg};
  gr_node *k = gr_const_new(m, v);
  k->line = n->line;
  k->col = n->col;
  gr_replace(m, n, k);
  n->dead = true;
  return SG_OK;
}

static _Thread_local int expand_depth; /* grad nested in the def it differentiates */

static sg_code expand_graph(gr_module *m, gr_graph *g, sg_error *err) {
  if (expand_depth > 64)
    return sg_error_set_at(err, SG_INVALID_ARGUMENT, m->file, g->line, g->col,
                           "grad: '%s' differentiates itself (directly or through grad)",
                           g->name ? g->name : "?");
  expand_depth++;
  sg_code rc = SG_OK;
  for (size_t i = 0; i < g->nodes.len; i++) {
    gr_node *n = g->nodes.data[i];
    if (n->dead || n->kind != GR_APPLY || !gr_ad_is_prim(n, "grad")) continue;
    if ((rc = expand_node(m, n, err))) break;
  }
  expand_depth--;
  return rc;
}

sg_code gr_ad_expand(gr_module *m, sg_error *err) {
  ad_state st = {.fvs_dirty = true};
  cur_state = &st;
  sg_code rc = SG_OK;
  size_t n0 = m->graphs.len; /* graphs made here have no grad forms left */
  for (size_t i = 0; i < n0 && !rc; i++) rc = expand_graph(m, m->graphs.data[i], err);
  cur_state = NULL;
  sg_map_free(&st.jmemo);
  sg_map_free(&st.active);
  sg_map_free(&st.loops);
  sg_map_free(&st.prims);
  sg_map_free(&st.jinfos);
  return rc;
}
