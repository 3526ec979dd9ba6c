// SPDX-License-Identifier: Apache-2.0
/*
 * pf_module.c — gr_pyfront_lower: parse and analyse the module (convert/), collect what
 * each module-level name is bound to, lower the entry function and, on demand, every
 * module-level function it reaches (a work list, no recursion across functions), then
 * the wrappers a request may ask for (static arguments, the gradient).
 *
 * The daemon runs no Python: a module-level name is usable in a staged function only
 * when the module binds it exactly once by a def, an import or the assignment of a
 * constant expression; the rest of the module (calls, classes, `if __name__ ...`) is
 * not run, and a staged function that uses a name bound there gets a located error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pf_int.h"

sg_code pf_error(pf_module *M, bool unsupported, sg_code code, int line, int col0, const char *fmt, ...) {
  if (pf_failed(M)) return M->err->code; /* the first error stands */
  va_list ap;
  va_start(ap, fmt);
  sg_error_setv(M->err, code, fmt, ap);
  va_end(ap);
  if (M->err) {
    free(M->err->file);
    M->err->file = sg_xstrdup(M->m->file);
    M->err->line = line > 0 ? line : 1;
    M->err->col = col0 >= 0 ? col0 + 1 : 1;
    if (unsupported) M->err->reason = SG_REASON_UNSUPPORTED;
  }
  return code;
}

bool pf_failed(const pf_module *M) { return M->err && M->err->code != SG_OK; }

const char *pf_intern(pf_module *M, const char *s) { return sg_intern_str(&M->m->strings, s); }

pf_global *pf_global_of(pf_module *M, const char *name) {
  void *v;
  return sg_map_get(&M->globals, (uintptr_t)name, &v) ? v : NULL;
}

/* Records one binding of name by statement at (kind as given; a second binding makes
 * the name MULTI, whatever the kinds). */
static pf_global *bind_global(pf_module *M, const char *name, pf_gkind kind, const py_stmt *at) {
  pf_global *g = pf_global_of(M, name);
  if (g) {
    g->kind = PF_G_MULTI;
    return NULL;
  }
  g = sg_arena_calloc(&M->ctx.arena, 1, sizeof *g);
  g->kind = kind;
  g->name = name;
  g->at = at;
  sg_map_put(&M->globals, (uintptr_t)name, g);
  return g;
}

/* if __name__ == "__main__": — never run on import, so never staged */
static bool is_main_guard(const py_stmt *s) {
  if (s->kind != PY_K_If) return false;
  const py_expr *t = s->v.If.test;
  if (t->kind != PY_K_Compare || PY_SEQ_LEN(t->v.Compare.ops) != 1) return false;
  const py_expr *l = t->v.Compare.left, *r = t->v.Compare.comparators->a[0];
  return (intptr_t)t->v.Compare.ops->a[0] == PY_Eq && l->kind == PY_K_Name && !strcmp(l->v.Name.id, "__name__") &&
         r->kind == PY_K_Constant && r->v.Constant.value.kind == PY_CONST_STR &&
         !strcmp(r->v.Constant.value.s, "__main__");
}

/* Every module-level binding: defs, imports, constants, and the names other statements
 * bind (OTHER: using them is an error). */
static void collect_globals(pf_module *M) {
  const py_seq *body = M->mod->v.Module.body;
  sg_buf tmp = SG_BUF_INIT;
  for (int i = 0; i < PY_SEQ_LEN(body); i++) {
    const py_stmt *s = body->a[i];
    switch (s->kind) {
    case PY_K_FunctionDef:
    case PY_K_AsyncFunctionDef: { /* async: refused when lowered, located at the def */
      pf_global *g = bind_global(M, s->v.FunctionDef.name, PF_G_FUNC, s);
      if (g) g->fnode = s;
      break;
    }
    case PY_K_Import:
      for (int k = 0; k < PY_SEQ_LEN(s->v.Import.names); k++) {
        const py_alias *a = s->v.Import.names->a[k];
        const char *dot = strchr(a->name, '.');
        const char *bound = a->asname ? a->asname : a->name;
        const char *what = a->name;
        if (!a->asname && dot) { /* import os.path binds os */
          bound = sg_intern_n(&M->ctx.names, a->name, (size_t)(dot - a->name));
          what = bound;
        }
        pf_global *g = bind_global(M, bound, PF_G_IMPORT, s);
        if (g) g->what = what;
      }
      break;
    case PY_K_ImportFrom:
      for (int k = 0; k < PY_SEQ_LEN(s->v.ImportFrom.names); k++) {
        const py_alias *a = s->v.ImportFrom.names->a[k];
        if (!strcmp(a->name, "*")) { /* the names it binds are unknown: resolve as unbound */
          if (!M->star_import) M->star_import = s;
          continue;
        }
        pf_global *g = bind_global(M, a->asname ? a->asname : a->name,
                                   s->v.ImportFrom.level ? PF_G_OTHER : PF_G_IMPORT, s);
        if (g && s->v.ImportFrom.module) {
          sg_buf_clear(&tmp);
          sg_buf_printf(&tmp, "%s.%s", s->v.ImportFrom.module, a->name);
          g->what = sg_intern_str(&M->ctx.names, tmp.data);
        }
      }
      break;
    case PY_K_Assign:
      if (PY_SEQ_LEN(s->v.Assign.targets) == 1 && ((py_expr *)s->v.Assign.targets->a[0])->kind == PY_K_Name) {
        bool fn = s->v.Assign.value->kind == PY_K_Lambda; /* name = lambda ...: a function */
        pf_global *g = bind_global(M, ((py_expr *)s->v.Assign.targets->a[0])->v.Name.id, fn ? PF_G_FUNC : PF_G_CONST, s);
        if (g && fn) g->fnode = s->v.Assign.value;
        else if (g) g->value = s->v.Assign.value;
        break;
      }
      goto other;
    case PY_K_AnnAssign:
      if (!s->v.AnnAssign.value) break; /* x: int binds nothing */
      if (s->v.AnnAssign.target->kind == PY_K_Name) {
        pf_global *g = bind_global(M, s->v.AnnAssign.target->v.Name.id, PF_G_CONST, s);
        if (g) g->value = s->v.AnnAssign.value;
        break;
      }
      goto other;
    case PY_K_Expr: break;
    default:
    other:
      if (is_main_guard(s)) break;
      {
        py_symset mod = py_an_activity(M->an, s).modified;
        for (int k = 0; k < mod.n; k++) {
          const py_sym_info *si = py_an_sym_info(M->an, mod.a[k]);
          if (si->kind == PY_QN_NAME) bind_global(M, si->name, PF_G_OTHER, s);
        }
      }
    }
  }
  /* a name some function declares `global` may be rebound whenever it runs */
  const py_scope *ms = py_an_scope(M->an, M->mod);
  for (int k = 0; ms && k < ms->global_uses.n; k++) {
    const py_sym_info *si = py_an_sym_info(M->an, ms->global_uses.a[k]);
    pf_global *g = si->kind == PY_QN_NAME ? pf_global_of(M, si->name) : NULL;
    if (g) g->kind = PF_G_MULTI;
  }
  sg_buf_free(&tmp);
}

pf_fn *pf_global_fn(pf_module *M, pf_global *gl) {
  if (!gl->fn) {
    gl->fn = pf_fn_new(M, NULL, gl->fnode, pf_intern(M, gl->name), NULL);
    gl->fn->queued = true;
    sg_vec_push(&M->work, gl->fn);
  }
  return gl->fn;
}

/* The entry: the named module-level def, else the last one. */
static pf_fn *find_entry(pf_module *M) {
  const char *want = M->opts->entry;
  const py_seq *body = M->mod->v.Module.body;
  const py_stmt *last = NULL;
  for (int i = 0; i < PY_SEQ_LEN(body); i++) {
    const py_stmt *s = body->a[i];
    if (s->kind == PY_K_FunctionDef || s->kind == PY_K_AsyncFunctionDef) last = s;
  }
  const char *name = want ? sg_intern_str(&M->ctx.names, want) : last ? last->v.FunctionDef.name : NULL;
  if (!name) {
    pf_error(M, false, SG_INVALID_ARGUMENT, 1, 0, "no function to stage: %s defines no module-level function",
             M->m->file);
    return NULL;
  }
  pf_global *g = pf_global_of(M, name);
  if (!g || g->kind != PF_G_FUNC) {
    sg_buf defs = SG_BUF_INIT;
    for (int i = 0; i < PY_SEQ_LEN(body); i++) {
      const py_stmt *s = body->a[i];
      if (s->kind == PY_K_FunctionDef) sg_buf_printf(&defs, "%s%s", defs.len ? ", " : "", s->v.FunctionDef.name);
    }
    if (g && g->kind == PF_G_MULTI)
      pf_error(M, false, SG_INVALID_ARGUMENT, g->at->lineno, g->at->col_offset,
               "'%s' is bound more than once at module level: the entry must be a function defined once", name);
    else
      pf_error(M, false, SG_INVALID_ARGUMENT, 1, 0, "no module-level function named '%s' in %s (functions: %s)", name,
               M->m->file, defs.len ? defs.data : "none");
    sg_buf_free(&defs);
    return NULL;
  }
  return pf_global_fn(M, g);
}

/* A top-level graph named BASE (or BASE_1, ...) that no module-level name uses. */
static gr_graph *fresh_top_graph(pf_module *M, const char *base) {
  sg_buf b = SG_BUF_INIT;
  for (int k = 0;; k++) {
    sg_buf_clear(&b);
    if (k) sg_buf_printf(&b, "%s_%d", base, k);
    else sg_buf_puts(&b, base);
    const char *py = sg_intern_find(&M->ctx.names, b.data, b.len);
    bool used = py && pf_global_of(M, py);
    for (size_t i = 0; !used && i < M->m->graphs.len; i++)
      used = !M->m->graphs.data[i]->parent && !strcmp(M->m->graphs.data[i]->name, b.data);
    if (!used) break;
  }
  gr_graph *g = gr_graph_new(M->m, pf_intern(M, b.data), NULL);
  sg_buf_free(&b);
  return g;
}

static gr_node *at_def(gr_node *n, const pf_fn *F) {
  n->line = F->line;
  n->col = F->col;
  return n;
}

static gr_node *top_apply(pf_module *M, gr_graph *g, gr_node **in, int n, const pf_fn *F) {
  return at_def(gr_apply_new(M->m, g, in, n), F);
}

static gr_node *top_const(pf_module *M, gr_val v, const pf_fn *F) { return at_def(gr_const_new(M->m, v), F); }

/* A parameter of wrapper g standing for parameter p of the wrapped function. */
static gr_node *param_like(pf_module *M, gr_graph *g, const gr_node *p) {
  gr_node *q = gr_param_new(M->m, g, p->name);
  q->line = p->line;
  q->col = p->col;
  return q;
}

/* NAME$static(p...) = NAME(p..., static values in their places): the editor's view of
 * a function with some arguments fixed. */
static gr_graph *static_wrapper(pf_module *M, pf_fn *E) {
  const gr_pyfront_options *o = M->opts;
  gr_val *vals = NULL;
  int nv = 0;
  if (gr_json_args(o->static_args_json ? o->static_args_json : "[]", M->m, &M->m->arena, &vals, &nv, M->err)) {
    M->err->line = 0; /* not a location in the source */
    return NULL;
  }
  gr_graph *g = NULL;
  if (nv != o->nstatic) {
    sg_error_set(M->err, SG_INVALID_ARGUMENT, "%d static argument names but %d values", o->nstatic, nv);
    goto out;
  }
  gr_graph *fg = E->graph;
  int *which = sg_xcalloc((size_t)fg->nparams + 1, sizeof(int)); /* param → static index + 1 */
  for (int i = 0; i < o->nstatic; i++) {
    int k = 0;
    while (k < fg->nparams && strcmp(fg->params[k]->name, o->static_names[i])) k++;
    if (k == fg->nparams) {
      pf_error(M, false, SG_INVALID_ARGUMENT, E->line, E->col - 1, "%s has no parameter named '%s'", fg->name,
               o->static_names[i]);
      free(which);
      goto out;
    }
    which[k] = i + 1;
  }
  char name[300];
  snprintf(name, sizeof name, "%.200s$static", fg->name);
  g = fresh_top_graph(M, name);
  g->line = E->line;
  g->col = E->col;
  gr_node **in = sg_xcalloc((size_t)fg->nparams + 1, sizeof(gr_node *));
  in[0] = top_const(M, (gr_val){.tag = GV_GRAPH, .u.g = fg}, E);
  for (int k = 0; k < fg->nparams; k++) {
    in[k + 1] = which[k] ? top_const(M, gv_retain(vals[which[k] - 1]), E) : param_like(M, g, fg->params[k]);
  }
  gr_set_output(g, top_apply(M, g, in, fg->nparams + 1, E));
  free(in);
  free(which);
out:
  for (int i = 0; i < nv; i++) gv_release(vals[i]);
  free(vals);
  return g;
}

/* grad_NAME(p...) = ((grad NAME i...) p...): the gradient program's entry. */
static gr_graph *grad_wrapper(pf_module *M, gr_graph *fg, const pf_fn *E) {
  const gr_pyfront_options *o = M->opts;
  for (int i = 0; i < o->nwrt; i++)
    if (o->wrt[i] < 0 || o->wrt[i] >= fg->nparams) {
      pf_error(M, false, SG_INVALID_ARGUMENT, E->line, E->col - 1,
               "grad: wrt index %d out of range: '%s' has %d parameter(s)", (int)o->wrt[i], fg->name, fg->nparams);
      return NULL;
    }
  if (fg->nparams == 0) {
    pf_error(M, false, SG_INVALID_ARGUMENT, E->line, E->col - 1,
             "grad: '%s' has no parameters to differentiate with respect to", fg->name);
    return NULL;
  }
  char name[300];
  snprintf(name, sizeof name, "grad_%.200s", fg->name);
  gr_graph *g = fresh_top_graph(M, name);
  g->line = E->line;
  g->col = E->col;
  int nw = o->nwrt ? o->nwrt : fg->nparams;
  gr_node **in = sg_xcalloc((size_t)(nw > fg->nparams ? nw : fg->nparams) + 2, sizeof(gr_node *));
  in[0] = top_const(M, (gr_val){.tag = GV_PRIM, .u.op = gr_op_lookup("grad")}, E);
  in[1] = top_const(M, (gr_val){.tag = GV_GRAPH, .u.g = fg}, E);
  for (int i = 0; i < nw; i++) in[i + 2] = top_const(M, gv_int(o->nwrt ? o->wrt[i] : i), E);
  gr_node *gfn = top_apply(M, g, in, nw + 2, E);
  in[0] = gfn;
  for (int k = 0; k < fg->nparams; k++) in[k + 1] = param_like(M, g, fg->params[k]);
  gr_node *grads = top_apply(M, g, in, fg->nparams + 1, E);
  /* grad seeds the value with 1.0, a scalar's sensitivity: a value of more elements
   * would get a gradient that is silently not its sum's, so the wrapper checks the
   * value's size where it runs (a tuple fails `size` when inferred) */
  in[0] = top_const(M, (gr_val){.tag = GV_GRAPH, .u.g = fg}, E);
  gr_node *value = top_apply(M, g, in, fg->nparams + 1, E);
  gr_node *sz[2] = {top_const(M, (gr_val){.tag = GV_PRIM, .u.op = gr_op_lookup("size")}, E), value};
  gr_node *eq[3] = {top_const(M, (gr_val){.tag = GV_PRIM, .u.op = gr_op_lookup("==")}, E),
                    top_apply(M, g, sz, 2, E), top_const(M, gv_int(1), E)};
  char msg[300];
  snprintf(msg, sizeof msg, "grad: %.200s must return a scalar (a number or a one-element array)", fg->name);
  gr_node *chk[3] = {top_const(M, (gr_val){.tag = GV_PRIM, .u.op = gr_op_lookup("assert")}, E),
                     top_apply(M, g, eq, 3, E),
                     top_const(M, (gr_val){.tag = GV_STR, .u.s = sg_intern_str(&M->m->strings, msg)}, E)};
  gr_node *seq[3] = {top_const(M, (gr_val){.tag = GV_PRIM, .u.op = gr_op_lookup("seq")}, E),
                     top_apply(M, g, chk, 3, E), grads};
  gr_set_output(g, top_apply(M, g, seq, 3, E));
  free(in);
  return g;
}

sg_code gr_pyfront_lower(gr_module *m, const char *src, size_t len, const gr_pyfront_options *opts,
                         gr_graph **entry, sg_error *err) {
  gr_pyfront_options none = {0};
  pf_module M = {.m = m, .err = err, .opts = opts ? opts : &none};
  *entry = NULL;
  py_ctx_init(&M.ctx);
  sg_arena_init(&M.tmp, 0);
  M.mod = py_parse(&M.ctx, src, len, m->file, err);
  if (M.mod) {
    M.an = py_an_new(&M.ctx);
    py_an_module(M.an, M.mod);
    collect_globals(&M);
    pf_fn *E = find_entry(&M);
    while (!pf_failed(&M) && M.work.len) {
      pf_fn *F = sg_vec_pop(&M.work);
      if (!F->lowered) pf_lower_function(F);
    }
    gr_graph *g = E && !pf_failed(&M) ? E->graph : NULL;
    if (g && M.opts->nstatic) g = static_wrapper(&M, E);
    if (g && M.opts->grad) g = grad_wrapper(&M, g, E);
    if (!pf_failed(&M)) *entry = g;
  }
  for (size_t i = 0; i < M.fns.len; i++) {
    sg_map_free(&M.fns.data[i]->slots);
    sg_map_free(&M.fns.data[i]->defconsts);
    free(M.fns.data[i]->slot_names);
    free(M.fns.data[i]);
  }
  sg_vec_free(&M.fns);
  sg_vec_free(&M.work);
  sg_map_free(&M.globals);
  sg_map_free(&M.nested);
  sg_map_free(&M.by_graph);
  if (M.an) py_an_free(M.an);
  sg_arena_free(&M.tmp);
  py_ctx_free(&M.ctx);
  if (!*entry && err && err->code == SG_OK) sg_error_set(err, SG_INTERNAL, "pyfront: no entry and no error");
  return *entry ? SG_OK : err->code;
}
