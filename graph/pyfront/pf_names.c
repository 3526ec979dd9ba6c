// SPDX-License-Identifier: Apache-2.0
/*
 * pf_names.c — what a Python name means inside a staged function, by Python's scope
 * rules (convert/'s scope analysis says which names are local to which function):
 *
 *   local      the variable's current SSA binding; the name must be assigned on every
 *              path to the read (the analyses' definite assignment: a read that Python
 *              might answer with UnboundLocalError is refused);
 *   enclosing  a variable of an enclosing function, read by a closure. A closure sees the
 *              variable, not a copy, so the binding it captures is the right one only
 *              when the variable is assigned before the definition and never again after
 *              it (no write reachable from the definition in the enclosing function's
 *              CFG). A name bound only by one `def` is a fixed graph: closures may call
 *              it from anywhere after it runs, and a def may call the defs that follow it
 *              directly (mutual recursion);
 *   module     a module-level def, constant or import (pf_module.c);
 *   builtin    len, abs, max, ... (pf_lib.c).
 */
#include <string.h>

#include "pf_int.h"

typedef struct pf_loc {
  py_kind kind;
  int lineno, col_offset;
} pf_loc;

pf_fn *pf_fn_new(pf_module *M, pf_fn *parent, const void *node, const char *name, gr_graph *parent_graph) {
  pf_fn *F = sg_xcalloc(1, sizeof *F);
  F->M = M;
  F->parent = parent;
  F->node = node;
  F->name = name;
  F->scope = py_an_scope(M->an, node);
  const pf_loc *l = node;
  F->line = l->lineno;
  F->col = l->col_offset + 1;
  if (l->kind == PY_K_Lambda) F->args = ((const py_expr *)node)->v.Lambda.args;
  else F->args = ((const py_stmt *)node)->v.FunctionDef.args;
  F->graph = gr_graph_new(M->m, name, parent_graph);
  F->graph->line = F->line;
  F->graph->col = F->col;
  sg_map_put(&M->by_graph, (uintptr_t)F->graph, F);
  sg_vec_push(&M->fns, F);
  return F;
}

static int add_slot(pf_fn *F, const char *name) {
  if (F->nslots == F->cap_slots) {
    F->cap_slots = F->cap_slots ? 2 * F->cap_slots : 16;
    F->slot_names = sg_xrealloc(F->slot_names, sizeof(char *) * (size_t)F->cap_slots);
  }
  F->slot_names[F->nslots] = pf_intern(F->M, name);
  return F->nslots++;
}

int pf_slot_find(const pf_fn *F, const char *name) {
  void *v;
  return sg_map_get(&F->slots, (uintptr_t)name, &v) ? (int)(uintptr_t)v - 1 : -1;
}

int pf_slot(pf_fn *F, const char *name) {
  int s = pf_slot_find(F, name);
  if (s >= 0) return s;
  s = add_slot(F, name);
  sg_map_put(&F->slots, (uintptr_t)name, (void *)(uintptr_t)(s + 1));
  return s;
}

int pf_slot_synthetic(pf_fn *F, const char *what) { return add_slot(F, what); }

void pf_bind(pf_cur *c, int slot, gr_node *n) {
  pf_env_sync(c);
  c->env[slot] = n;
  if (n->kind != GR_CONST && !n->name) n->name = c->F->slot_names[slot];
}

static bool has(py_symset s, py_sym x) { return py_symset_has(s, x); }

static const char *fn_label(const pf_fn *F) { return F->name ? F->name : "lambda"; }

/* The names of P bound by exactly one def and nothing else (counted over P's CFG: one
 * node writes them, and it is that def). */
static void compute_defconsts(pf_fn *P) {
  P->have_defconsts = true;
  const py_cfg *cfg = py_an_cfg(P->M->an, P->node);
  if (!cfg) return;
  sg_map count = SG_MAP_INIT;
  for (int i = 0; i < cfg->nnodes; i++) {
    const py_cfg_node *n = cfg->nodes[i];
    for (int k = 0; k < n->act.modified.n; k++) {
      void *v = NULL;
      uint64_t key = (uint64_t)n->act.modified.a[k] + 1;
      sg_map_get(&count, key, &v);
      sg_map_put(&count, key, (void *)((uintptr_t)v + 1));
    }
  }
  for (int i = 0; i < cfg->nnodes; i++) {
    const py_cfg_node *n = cfg->nodes[i];
    if (n->kind != PY_CFG_STMT || ((const py_stmt *)n->ast)->kind != PY_K_FunctionDef) continue;
    const py_stmt *d = n->ast;
    py_sym s = py_an_sym(P->M->an, d->v.FunctionDef.name);
    void *v = NULL;
    if (sg_map_get(&count, (uint64_t)s + 1, &v) && (uintptr_t)v == 1)
      sg_map_put(&P->defconsts, (uint64_t)s + 1, (void *)d);
  }
  sg_map_free(&count);
}

static const py_stmt *defconst_of(pf_fn *P, py_sym s) {
  if (!P->have_defconsts) compute_defconsts(P);
  void *v;
  return sg_map_get(&P->defconsts, (uint64_t)s + 1, &v) ? v : NULL;
}

/* The pf_fn of a nested def, made before its statement is lowered when a closure calls
 * it first (its graph's parent is set when it is lowered). */
pf_fn *pf_nested_fn(pf_module *M, pf_fn *P, const py_stmt *def) {
  void *v;
  if (sg_map_get(&M->nested, (uintptr_t)def, &v)) return v;
  pf_fn *G = pf_fn_new(M, P, def, pf_intern(M, def->v.FunctionDef.name), NULL);
  sg_map_put(&M->nested, (uintptr_t)def, G);
  return G;
}

/* def D follows child's definition in the same block with only defs in between (or is
 * that definition): calling it from the child cannot happen before D has run. */
static bool follows_directly(const pf_fn *child, const py_stmt *D) {
  const py_seq *b = child->parent_block;
  for (int i = child->parent_index; b && i < b->n; i++) {
    const py_stmt *s = b->a[i];
    if (s == D) return true;
    bool inert = s->kind == PY_K_FunctionDef || s->kind == PY_K_Pass ||
                 (s->kind == PY_K_Expr && s->v.Expr.value->kind == PY_K_Constant);
    if (i > child->parent_index && !inert) return false;
  }
  return false;
}

/* Symbols that some write may change once child's definition has run: the writes of its
 * statement itself and of every CFG node reachable from it. */
static py_symset later_writes(pf_fn *child, const py_cfg_node **first_writer, py_sym want) {
  pf_fn *P = child->parent;
  py_an *an = P->M->an;
  const py_cfg *cfg = py_an_cfg(an, P->node);
  const py_cfg_node *start = child->parent_stmt ? py_an_cfg_node(an, child->parent_stmt) : NULL;
  if (!cfg || !start) return P->scope->modified;
  py_symset acc = start->act.modified;
  if (first_writer && has(acc, want)) *first_writer = start;
  char *seen = sg_xcalloc((size_t)cfg->nnodes, 1);
  SG_VEC(const py_cfg_node *) stack = {0};
  for (int i = 0; i < start->nnext; i++) sg_vec_push(&stack, start->next[i]);
  while (stack.len) {
    const py_cfg_node *n = sg_vec_pop(&stack);
    if (seen[n->index]) continue;
    seen[n->index] = 1;
    if (first_writer && !*first_writer && has(n->act.modified, want)) *first_writer = n;
    if (n->act.modified.n) acc = py_symset_union(an, acc, n->act.modified);
    for (int i = 0; i < n->nnext; i++)
      if (!seen[n->next[i]->index]) sg_vec_push(&stack, n->next[i]);
  }
  sg_vec_free(&stack);
  free(seen);
  return acc;
}

static gr_node *copy_if_const(pf_cur *c, gr_node *n, const void *at) {
  if (n->kind != GR_CONST) return n;
  return pf_const(c, gv_retain(n->value), at);
}

/* name, a local of P, read by child (nested in P; the reader is child or inside it). */
static bool capture(pf_cur *c, const py_expr *at, const char *name, py_sym s, pf_fn *P, pf_fn *child,
                    pf_ref *out) {
  pf_module *M = c->F->M;
  int slot = pf_slot_find(P, name);
  gr_node *n = slot >= 0 && child->parent_env && slot < child->parent_nenv ? child->parent_env[slot] : NULL;
  bool is_def = ((const pf_loc *)P->node)->kind != PY_K_Lambda;
  if (!is_def) { /* a lambda's locals are its parameters: bound once, before its body */
    if (!n) return PF_INVALID(M, at, "internal: lambda parameter '%s' has no binding", name), false;
    out->kind = PF_REF_NODE;
    out->node = copy_if_const(c, n, at);
    return true;
  }
  const py_stmt *D = defconst_of(P, s);
  bool defined = child->parent_stmt && has(py_an_defined_in(M->an, child->parent_stmt), s);
  if (D) {
    if (!(defined && n) && !follows_directly(child, D)) {
      PF_UNSUPPORTED(M, at,
                     "'%s' reads '%s', a function that '%s' defines (line %d) after it and not directly after: "
                     "define '%s' before '%s'",
                     fn_label(child), name, fn_label(P), D->lineno, name, fn_label(child));
      return false;
    }
    out->kind = PF_REF_NODE;
    out->node = n && defined ? copy_if_const(c, n, at) : pf_graph_const(c, pf_nested_fn(M, P, D)->graph, at);
    return true;
  }
  if (!defined || !n) {
    PF_UNSUPPORTED(M, at,
                   "'%s' reads '%s', which '%s' has not assigned on every path before '%s' is defined (line %d): "
                   "a closure may read only variables assigned before its definition",
                   fn_label(child), name, fn_label(P), fn_label(child), child->line);
    return false;
  }
  if (!child->have_later_writes) {
    child->later_writes = later_writes(child, NULL, 0);
    child->have_later_writes = true;
  }
  if (has(child->later_writes, s)) {
    const py_cfg_node *w = NULL;
    later_writes(child, &w, s);
    int wl = w && w->ast ? ((const pf_loc *)w->ast)->lineno : 0;
    PF_UNSUPPORTED(M, at,
                   "'%s' reads '%s', which '%s' assigns again after '%s' is defined (line %d): a closure sees the "
                   "variable, not its value at the definition, so closures over variables that change are outside "
                   "the subset (pass '%s' as an argument)",
                   fn_label(child), name, fn_label(P), fn_label(child), wl, name);
    return false;
  }
  out->kind = PF_REF_NODE;
  out->node = copy_if_const(c, n, at);
  return true;
}

bool pf_resolve(pf_cur *c, const py_expr *at, const char *name, pf_ref *out) {
  pf_fn *F = c->F;
  pf_module *M = F->M;
  memset(out, 0, sizeof *out);
  py_sym s = py_an_sym(M->an, name);
  if (!c->module_scope) {
    if (has(F->scope->locals, s)) {
      int slot = pf_slot_find(F, name);
      gr_node *n = slot >= 0 && slot < c->nenv ? c->env[slot] : NULL;
      bool is_lambda = ((const pf_loc *)F->node)->kind == PY_K_Lambda;
      if (!is_lambda && c->stmt && !has(py_an_defined_in(M->an, c->stmt), s)) n = NULL;
      if (!n) {
        PF_UNSUPPORTED(M, at,
                       "local variable '%s' is not assigned on every path to this read (Python may raise "
                       "UnboundLocalError here): assign it before on every path",
                       name);
        return false;
      }
      out->kind = PF_REF_NODE;
      out->node = copy_if_const(c, n, at);
      return true;
    }
    for (pf_fn *child = F, *P = F->parent; P; child = P, P = P->parent)
      if (has(P->scope->locals, s)) return capture(c, at, name, s, P, child, out);
  }
  pf_global *g = pf_global_of(M, name);
  if (g) {
    out->kind = PF_REF_GLOBAL;
    out->global = g;
    return true;
  }
  if (py_an_builtin_name(name)) {
    out->kind = PF_REF_BUILTIN;
    out->name = name;
    return true;
  }
  if (M->star_import)
    PF_INVALID(M, at, "name '%s' is not defined (or comes from 'from %s import *', line %d, which the daemon does not "
                      "resolve: import it by name)",
               name, M->star_import->v.ImportFrom.module ? M->star_import->v.ImportFrom.module : ".",
               M->star_import->lineno);
  else
    PF_INVALID(M, at, "name '%s' is not defined", name);
  return false;
}
