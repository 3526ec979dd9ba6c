// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_cfg.c — statement-level control-flow graphs (AutoGraph §7.1), one per
 * module, function and class body. One node per simple statement; a compound
 * statement gets one node for its head (test, iteration step, items, subject, or a
 * no-op for `try`) plus the subgraphs of its blocks; except handlers and match cases
 * get a node each. No merge or basic-block nodes: only synthetic ENTRY and EXIT.
 *
 * The builder keeps a "front": the nodes whose fall-through successor is the next
 * node created. Jumps (break, continue, return, raise) walk a stack of frames:
 *   LOOP     break → collected as the loop's exits, continue → the loop head;
 *   EXCEPT   handlers are reached from every node of the try body (any statement may
 *            raise), so a raise only stops here when a handler catches everything;
 *   FINALLY  any jump is routed into the finally block, which afterwards performs
 *            the jumps it absorbed (the finally subgraph is shared, not duplicated).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis_priv.h"

typedef SG_VEC(py_cfg_node *) nodevec;
typedef struct edge {
  int from, to;
} edge;

enum { J_BREAK, J_CONTINUE, J_RETURN, J_RAISE };
enum { F_LOOP, F_EXCEPT, F_FINALLY };

typedef struct frame {
  int kind;
  py_cfg_node *head; /* LOOP: continue target */
  nodevec breaks;    /* LOOP: nodes that leave the loop by break */
  nodevec pending;   /* FINALLY: nodes that jump into the finally block */
  unsigned kinds;    /* FINALLY: which jumps it must resume */
  bool catch_all;    /* EXCEPT */
} frame;

typedef struct builder {
  py_an *an;
  an_cfg *g;
  an_scope *sc;
  nodevec nodes;
  nodevec front;
  SG_VEC(edge) edges;
  SG_VEC(frame *) frames;
} builder;

static void add_edge(builder *b, py_cfg_node *from, py_cfg_node *to) {
  edge e = {from->index, to->index};
  sg_vec_push(&b->edges, e);
}

static py_cfg_node *new_node(builder *b, py_cfg_kind kind, const void *ast) {
  py_an *an = b->an;
  py_cfg_node *n = sg_arena_calloc(&an->arena, 1, sizeof *n);
  n->index = (int)b->nodes.len;
  n->kind = kind;
  n->ast = ast;
  sg_vec_push(&b->nodes, n);
  if (kind != PY_CFG_ENTRY && kind != PY_CFG_EXIT && kind != PY_CFG_HANDLER_END)
    an_put(&an->node_of, ast, n);
  an_put(&an->node_cfg, n, b->g);
  an_col_clear(&an->scratch);
  an_node_activity(an, b->sc, n, &an->scratch);
  if (an->scratch.maybe.len) {
    py_symset *m = sg_arena_alloc(&an->arena, sizeof *m);
    *m = an_symset_from(an, an->scratch.maybe.data, an->scratch.maybe.len);
    an_put(&an->maybe_writes, n, m);
  }
  n->act = an_col_finish(an, &an->scratch);
  return n;
}

/* A node that follows the current front. */
static py_cfg_node *add(builder *b, py_cfg_kind kind, const void *ast) {
  py_cfg_node *n = new_node(b, kind, ast);
  for (size_t i = 0; i < b->front.len; i++) add_edge(b, b->front.data[i], n);
  b->front.len = 0;
  sg_vec_push(&b->front, n);
  return n;
}

static void front_set1(builder *b, py_cfg_node *n) {
  b->front.len = 0;
  sg_vec_push(&b->front, n);
}

static void push_all(nodevec *dst, py_cfg_node *const *src, size_t n) {
  for (size_t i = 0; i < n; i++) sg_vec_push(dst, src[i]);
}

/* Control leaves srcs by a jump of `kind`, seen from frame `top` outwards. */
static void jump(builder *b, int kind, py_cfg_node *const *srcs, size_t n, int top) {
  for (int i = top; i >= 0; i--) {
    frame *f = b->frames.data[i];
    if (f->kind == F_LOOP) {
      if (kind == J_BREAK) {
        push_all(&f->breaks, srcs, n);
        return;
      }
      if (kind == J_CONTINUE) {
        for (size_t k = 0; k < n; k++) add_edge(b, srcs[k], f->head);
        return;
      }
    } else if (f->kind == F_EXCEPT) {
      if (kind == J_RAISE && f->catch_all) return;
    } else {
      push_all(&f->pending, srcs, n);
      f->kinds |= 1u << kind;
      return;
    }
  }
  for (size_t k = 0; k < n; k++) add_edge(b, srcs[k], b->g->pub.exit);
}

static void build_block(builder *b, const py_seq *body);

static void build_loop(builder *b, const py_stmt *s, const py_seq *body, const py_seq *orelse,
                       bool infinite) {
  py_cfg_node *head = add(b, PY_CFG_STMT, s);
  frame f = {F_LOOP, head, {0}, {0}, 0, false};
  sg_vec_push(&b->frames, &f);
  build_block(b, body);
  for (size_t i = 0; i < b->front.len; i++) add_edge(b, b->front.data[i], head);
  b->frames.len--;
  if (infinite) b->front.len = 0;
  else front_set1(b, head);
  build_block(b, orelse);
  push_all(&b->front, f.breaks.data, f.breaks.len);
  sg_vec_free(&f.breaks);
}

static bool catches_all(const py_excepthandler *h) {
  const py_expr *t = h->v.ExceptHandler.type;
  return !t || (t->kind == PY_K_Name && !strcmp(t->v.Name.id, "BaseException"));
}

static void build_try(builder *b, const py_stmt *s) {
  py_cfg_node *head = add(b, PY_CFG_STMT, s);
  const py_seq *handlers = s->v.Try.handlers, *finalbody = s->v.Try.finalbody;
  frame fin = {F_FINALLY, NULL, {0}, {0}, 0, false};
  frame exc = {F_EXCEPT, NULL, {0}, {0}, 0, false};
  if (PY_SEQ_LEN(finalbody)) sg_vec_push(&b->frames, &fin);
  for (int i = 0; i < PY_SEQ_LEN(handlers); i++) exc.catch_all |= catches_all(handlers->a[i]);
  size_t lo = b->nodes.len;
  if (PY_SEQ_LEN(handlers)) sg_vec_push(&b->frames, &exc);
  build_block(b, s->v.Try.body);
  size_t hi = b->nodes.len;
  if (PY_SEQ_LEN(handlers)) b->frames.len--;

  nodevec body_front = {0}, normal = {0};
  push_all(&body_front, b->front.data, b->front.len);
  for (int i = 0; i < PY_SEQ_LEN(handlers); i++) {
    const py_excepthandler *h = handlers->a[i];
    front_set1(b, head);
    push_all(&b->front, b->nodes.data + lo, hi - lo);
    add(b, PY_CFG_HANDLER, h);
    build_block(b, h->v.ExceptHandler.body);
    if (h->v.ExceptHandler.name && b->front.len) add(b, PY_CFG_HANDLER_END, h);
    push_all(&normal, b->front.data, b->front.len);
  }
  b->front.len = 0;
  push_all(&b->front, body_front.data, body_front.len);
  build_block(b, s->v.Try.orelse);
  push_all(&normal, b->front.data, b->front.len);

  if (PY_SEQ_LEN(finalbody)) {
    b->frames.len--;
    size_t end = b->nodes.len;
    bool had_normal = normal.len > 0;
    b->front.len = 0;
    push_all(&b->front, normal.data, normal.len);
    push_all(&b->front, fin.pending.data, fin.pending.len);
    sg_vec_push(&b->front, head);
    push_all(&b->front, b->nodes.data + lo, end - lo); /* anything may raise into finally */
    build_block(b, finalbody);
    nodevec F = {0};
    push_all(&F, b->front.data, b->front.len);
    fin.kinds |= 1u << J_RAISE;
    for (int k = J_BREAK; k <= J_RAISE; k++)
      if (fin.kinds & (1u << k)) jump(b, k, F.data, F.len, (int)b->frames.len - 1);
    if (!had_normal) b->front.len = 0;
    sg_vec_free(&F);
  } else {
    b->front.len = 0;
    push_all(&b->front, normal.data, normal.len);
  }
  sg_vec_free(&fin.pending);
  sg_vec_free(&body_front);
  sg_vec_free(&normal);
}

static bool irrefutable(const py_match_case *c) {
  const py_pattern *p = c->pattern;
  return !c->guard && p->kind == PY_K_MatchAs && !p->v.MatchAs.pattern;
}

/* Every case is entered from the head: a failed pattern binds nothing as far as the
 * analyses are concerned (CPython may leave partial captures; code cannot rely on
 * them), so the cases' writes do not flow into the next case. */
static void build_match(builder *b, const py_stmt *s) {
  py_cfg_node *head = add(b, PY_CFG_STMT, s);
  nodevec done = {0};
  bool exhaustive = false;
  for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases) && !exhaustive; i++) {
    const py_match_case *c = s->v.Match.cases->a[i];
    front_set1(b, head);
    add(b, PY_CFG_CASE, c);
    build_block(b, c->body);
    push_all(&done, b->front.data, b->front.len);
    exhaustive = irrefutable(c);
  }
  b->front.len = 0;
  if (!exhaustive) sg_vec_push(&b->front, head); /* no case matched */
  push_all(&b->front, done.data, done.len);
  sg_vec_free(&done);
}

/* An exception in the body reaches __exit__, which may suppress it: control may then
 * continue after the statement from any point of the body (each node standing for
 * "an exception in whatever comes after it", the head for one in the first). Return,
 * break and continue leave without a later point to fail at. */
static void build_with(builder *b, const py_stmt *s) {
  py_cfg_node *head = add(b, PY_CFG_STMT, s);
  size_t lo = b->nodes.len;
  build_block(b, s->v.With.body);
  sg_vec_push(&b->front, head);
  for (size_t i = lo; i < b->nodes.len; i++) {
    py_cfg_node *n = b->nodes.data[i];
    const py_stmt *st = n->ast;
    if (n->kind == PY_CFG_STMT &&
        (st->kind == PY_K_Return || st->kind == PY_K_Break || st->kind == PY_K_Continue))
      continue;
    sg_vec_push(&b->front, n);
  }
}

static void build_stmt(builder *b, const py_stmt *s) {
  size_t lo = b->nodes.len;
  switch (s->kind) {
  case PY_K_If: {
    py_cfg_node *head = add(b, PY_CFG_STMT, s);
    build_block(b, s->v.If.body);
    nodevec then_front = {0};
    push_all(&then_front, b->front.data, b->front.len);
    front_set1(b, head);
    build_block(b, s->v.If.orelse);
    push_all(&b->front, then_front.data, then_front.len);
    sg_vec_free(&then_front);
    break;
  }
  case PY_K_While: {
    const py_expr *t = s->v.While.test;
    bool infinite = t->kind == PY_K_Constant && t->v.Constant.value.kind == PY_CONST_TRUE;
    build_loop(b, s, s->v.While.body, s->v.While.orelse, infinite);
    break;
  }
  case PY_K_For:
  case PY_K_AsyncFor: build_loop(b, s, s->v.For.body, s->v.For.orelse, false); break;
  case PY_K_With:
  case PY_K_AsyncWith: build_with(b, s); break;
  case PY_K_Try:
  case PY_K_TryStar: build_try(b, s); break;
  case PY_K_Match: build_match(b, s); break;
  case PY_K_Return:
  case PY_K_Raise:
  case PY_K_Break:
  case PY_K_Continue: {
    py_cfg_node *n = add(b, PY_CFG_STMT, s);
    b->front.len = 0;
    int kind = s->kind == PY_K_Return  ? J_RETURN
               : s->kind == PY_K_Raise ? J_RAISE
               : s->kind == PY_K_Break ? J_BREAK
                                       : J_CONTINUE;
    jump(b, kind, &n, 1, (int)b->frames.len - 1);
    break;
  }
  default: add(b, PY_CFG_STMT, s); break;
  }
  an_stmt_info *info = sg_arena_calloc(&b->an->arena, 1, sizeof *info);
  info->cfg = b->g;
  info->lo = (int)lo;
  info->hi = (int)b->nodes.len;
  info->nfront = (int)b->front.len;
  if (info->nfront) {
    info->front = sg_arena_alloc(&b->an->arena, b->front.len * sizeof *info->front);
    memcpy(info->front, b->front.data, b->front.len * sizeof *info->front);
  }
  an_put(&b->an->stmt_info, s, info);
}

static void build_block(builder *b, const py_seq *body) {
  for (int i = 0; i < PY_SEQ_LEN(body); i++) build_stmt(b, body->a[i]);
}

static int cmp_edge(const void *x, const void *y) {
  const edge *a = x, *b = y;
  if (a->from != b->from) return a->from < b->from ? -1 : 1;
  return (a->to > b->to) - (a->to < b->to);
}

/* Sorted, deduplicated edges → next / prev arrays in the arena. */
static void freeze_edges(builder *b) {
  py_an *an = b->an;
  size_t ne = b->edges.len;
  qsort(b->edges.data, ne, sizeof(edge), cmp_edge);
  size_t k = 0;
  for (size_t i = 0; i < ne; i++)
    if (i == 0 || cmp_edge(&b->edges.data[i], &b->edges.data[k - 1])) b->edges.data[k++] = b->edges.data[i];
  ne = k;
  for (size_t i = 0; i < ne; i++) {
    b->nodes.data[b->edges.data[i].from]->nnext++;
    b->nodes.data[b->edges.data[i].to]->nprev++;
  }
  for (size_t i = 0; i < b->nodes.len; i++) {
    py_cfg_node *n = b->nodes.data[i];
    n->next = sg_arena_alloc(&an->arena, (size_t)(n->nnext ? n->nnext : 1) * sizeof *n->next);
    n->prev = sg_arena_alloc(&an->arena, (size_t)(n->nprev ? n->nprev : 1) * sizeof *n->prev);
    n->nnext = n->nprev = 0;
  }
  for (size_t i = 0; i < ne; i++) {
    py_cfg_node *f = b->nodes.data[b->edges.data[i].from], *t = b->nodes.data[b->edges.data[i].to];
    f->next[f->nnext++] = t;
    t->prev[t->nprev++] = f;
  }
}

static void build_cfg(py_an *an, an_scope *sc, const void *owner, const py_seq *body) {
  an_cfg *g = sg_arena_calloc(&an->arena, 1, sizeof *g);
  g->pub.owner = owner;
  g->pub.scope = &sc->pub;
  g->scope = sc;
  builder b = {0};
  b.an = an;
  b.g = g;
  b.sc = sc;
  g->pub.entry = new_node(&b, PY_CFG_ENTRY, owner);
  g->pub.exit = new_node(&b, PY_CFG_EXIT, owner);
  front_set1(&b, g->pub.entry);
  build_block(&b, body);
  for (size_t i = 0; i < b.front.len; i++) add_edge(&b, b.front.data[i], g->pub.exit);
  freeze_edges(&b);
  g->pub.nnodes = (int)b.nodes.len;
  g->pub.nodes = sg_arena_alloc(&an->arena, b.nodes.len * sizeof *g->pub.nodes);
  memcpy(g->pub.nodes, b.nodes.data, b.nodes.len * sizeof *g->pub.nodes);
  sg_vec_free(&b.nodes);
  sg_vec_free(&b.front);
  sg_vec_free(&b.edges);
  sg_vec_free(&b.frames);
  sg_vec_push(&an->cfgs, g);
  an_put(&an->cfg_by_owner, owner, g);
}

void an_cfg_build_all(py_an *an) {
  for (size_t i = 0; i < an->scopes.len; i++) {
    an_scope *sc = an->scopes.data[i];
    const void *node = sc->pub.node;
    switch (sc->pub.kind) {
    case PY_SCOPE_MODULE: build_cfg(an, sc, node, ((const py_mod *)node)->v.Module.body); break;
    case PY_SCOPE_FUNCTION: build_cfg(an, sc, node, ((const py_stmt *)node)->v.FunctionDef.body); break;
    case PY_SCOPE_CLASS: build_cfg(an, sc, node, ((const py_stmt *)node)->v.ClassDef.body); break;
    default: break;
    }
  }
}

/* ------------------------------------------------------------- queries */

an_stmt_info *an_stmt_info_get(const py_an *an, const void *stmt) {
  return an_get(&an->stmt_info, stmt);
}

const py_cfg *py_an_cfg(const py_an *an, const void *owner) {
  an_cfg *g = an_get(&an->cfg_by_owner, owner);
  return g ? &g->pub : NULL;
}

const py_cfg_node *py_an_cfg_node(const py_an *an, const void *ast) {
  return an_get(&an->node_of, ast);
}

const py_cfg *py_an_cfg_of(const py_an *an, const void *ast) {
  const py_cfg_node *n = an_get(&an->node_of, ast);
  an_cfg *g = n ? an_get(&an->node_cfg, n) : NULL;
  return g ? &g->pub : NULL;
}

static int cmp_node(const void *x, const void *y) {
  const py_cfg_node *a = *(py_cfg_node *const *)x, *b = *(py_cfg_node *const *)y;
  return (a->index > b->index) - (a->index < b->index);
}

int py_an_stmt_next(py_an *an, const py_stmt *s, const py_cfg_node *const **out) {
  an_stmt_info *info = an_stmt_info_get(an, s);
  *out = NULL;
  if (!info) return 0;
  nodevec v = {0};
  for (int i = 0; i < info->nfront; i++) {
    const py_cfg_node *f = info->front[i];
    for (int k = 0; k < f->nnext; k++) {
      py_cfg_node *t = f->next[k];
      if (t->index < info->lo || t->index >= info->hi) sg_vec_push(&v, t);
    }
  }
  int n = 0;
  if (v.len) {
    qsort(v.data, v.len, sizeof *v.data, cmp_node);
    py_cfg_node **a = sg_arena_alloc(&an->arena, v.len * sizeof *a);
    for (size_t i = 0; i < v.len; i++)
      if (!n || a[n - 1] != v.data[i]) a[n++] = v.data[i];
    *out = (const py_cfg_node *const *)a;
  }
  sg_vec_free(&v);
  return n;
}

int py_an_stmt_prev(py_an *an, const py_stmt *s, const py_cfg_node *const **out) {
  const py_cfg_node *n = an_get(&an->node_of, s);
  *out = n ? (const py_cfg_node *const *)n->prev : NULL;
  return n ? n->nprev : 0;
}
