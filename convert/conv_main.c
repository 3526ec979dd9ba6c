// SPDX-License-Identifier: Apache-2.0
/*
 * conv_main.c — py_convert: parse, pick the functions to convert (module-level
 * functions and methods of module-level classes, or the one --function names), check
 * each can be converted (diagnostics otherwise), run the passes in AutoGraph §7.2
 * order, and splice the converted functions into the original text under the module
 * header of docs/runtime.md, with the source map.
 */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_priv.h"

#ifndef STAGD_VERSION
#error "STAGD_VERSION comes from the build (top-level CMakeLists.txt)"
#endif

typedef struct cand {
  py_stmt *fn;
  py_stmt *orig; /* the same def in a second parse: the plain path (conv_dual.c) */
  const char *qualname;
  int start_line, end_line, col; /* original lines spanned (decorators included) */
  bool ok;
} cand;

typedef struct drv {
  cv c;
  py_conv_result *r;
  int capdiag;
  cand *cands;
  int ncands, capcands;
  const char *filename;
  int coding_line; /* the line of the coding declaration (1 or 2), 0: none */
} drv;

static void diag(drv *d, py_diag_severity sev, const char *code, int line, int col, int eline, int ecol, const char *hint,
                 const char *fmt, ...) SG_PRINTF(9, 10);

static void diag(drv *d, py_diag_severity sev, const char *code, int line, int col, int eline, int ecol, const char *hint,
                 const char *fmt, ...) {
  py_conv_result *r = d->r;
  if (r->ndiags == d->capdiag) {
    int cap = d->capdiag ? d->capdiag * 2 : 8;
    py_diag *a = sg_arena_alloc(&r->arena, sizeof(py_diag) * (size_t)cap);
    if (r->ndiags) memcpy(a, r->diags, sizeof(py_diag) * (size_t)r->ndiags);
    r->diags = a;
    d->capdiag = cap;
  }
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  r->diags[r->ndiags++] = (py_diag){sev, code, sg_arena_strdup(&r->arena, msg), sg_arena_strdup(&r->arena, hint),
                                    line, col + 1, eline, ecol + 1};
}

/* ------------------------------------------------------------ candidates */

static void add_cand(drv *d, py_stmt *fn, const char *qual) {
  if (d->ncands == d->capcands) {
    int cap = d->capcands ? d->capcands * 2 : 16;
    cand *a = sg_arena_alloc(d->c.A, sizeof(cand) * (size_t)cap);
    if (d->ncands) memcpy(a, d->cands, sizeof(cand) * (size_t)d->ncands);
    d->cands = a;
    d->capcands = cap;
  }
  int start = fn->lineno;
  py_seq *decs = fn->v.FunctionDef.decorator_list;
  for (int i = 0; i < PY_SEQ_LEN(decs); i++)
    if (((py_expr *)decs->a[i])->lineno < start) start = ((py_expr *)decs->a[i])->lineno;
  d->cands[d->ncands++] = (cand){fn, NULL, qual, start, fn->end_lineno, fn->col_offset, true};
}

static void find_cands(drv *d, py_seq *body, const char *prefix) {
  for (int i = 0; i < PY_SEQ_LEN(body); i++) {
    py_stmt *s = body->a[i];
    char q[512];
    if (s->kind == PY_K_FunctionDef || s->kind == PY_K_AsyncFunctionDef || s->kind == PY_K_ClassDef) {
      const char *nm = s->kind == PY_K_ClassDef ? s->v.ClassDef.name : s->v.FunctionDef.name;
      snprintf(q, sizeof q, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", nm);
      const char *qual = sg_arena_strdup(d->c.A, q);
      if (s->kind == PY_K_ClassDef) find_cands(d, s->v.ClassDef.body, qual);
      else add_cand(d, s, qual);
    }
  }
}

static void find_orig(drv *d, py_seq *body) {
  for (int i = 0; i < PY_SEQ_LEN(body); i++) {
    py_stmt *s = body->a[i];
    if (s->kind == PY_K_ClassDef) find_orig(d, s->v.ClassDef.body);
    if (s->kind != PY_K_FunctionDef && s->kind != PY_K_AsyncFunctionDef) continue;
    for (int k = 0; k < d->ncands; k++)
      if (d->cands[k].fn->lineno == s->lineno && d->cands[k].fn->col_offset == s->col_offset) d->cands[k].orig = s;
  }
}

/* ------------------------------------------------------------ checks */

typedef struct chk {
  drv *d;
  cand *cd;
} chk;

static bool reserved(const char *n) {
  size_t len = strlen(n);
  if (len >= 2 && !strncmp(n, "__", 2)) return false; /* dunder / private: Python's */
  if (len > 2 && !strcmp(n + len - 2, "__")) return true;
  /* name__<digits>: the shape of generated helpers */
  const char *p = strstr(n, "__");
  while (p) {
    const char *q = p + 2;
    if (*q >= '0' && *q <= '9') {
      while (*q >= '0' && *q <= '9') q++;
      if (!*q) return true;
    }
    p = strstr(p + 1, "__");
  }
  return false;
}

static void reject(chk *k, const void *node, const char *code, const char *hint, const char *what) {
  if (!k->cd->ok) return; /* one diagnostic per function */
  const py_expr *e = node;  /* every located node starts with kind + 4 ints */
  k->cd->ok = false;
  diag(k->d, PY_DIAG_WARNING, code, e->lineno, e->col_offset, e->end_lineno, e->end_col_offset, hint,
       "function '%s' is not converted: %s", k->cd->qualname, what);
}

static bool chk_visit(void *node, py_kind kind, void *ud) {
  chk *k = ud;
  char what[256];
  switch (kind) {
  case PY_K_Yield:
  case PY_K_YieldFrom:
    reject(k, node, "unsupported-construct", "generators run as plain Python; move the computation to convert into a helper function",
           "it contains 'yield' (a generator)");
    return false;
  case PY_K_Await:
  case PY_K_AsyncFunctionDef:
  case PY_K_AsyncFor:
  case PY_K_AsyncWith:
    reject(k, node, "unsupported-construct", "async code runs as plain Python; convert the synchronous functions it calls",
           "it contains async code");
    return false;
  case PY_K_Call: {
    const py_expr *e = node;
    if (e->v.Call.func->kind == PY_K_Name && !strcmp(e->v.Call.func->v.Name.id, "super") && !PY_SEQ_LEN(e->v.Call.args)) {
      reject(k, node, "unsupported-construct", "write super(ClassName, self) explicitly",
             "zero-argument super() needs the method's own frame");
      return false;
    }
    break;
  }
  case PY_K_Name: {
    const py_expr *e = node;
    if (!strcmp(e->v.Name.id, "__class__")) {
      reject(k, node, "unsupported-construct", "use type(self) instead", "'__class__' needs the method's own frame");
      return false;
    }
    if (reserved(e->v.Name.id)) {
      snprintf(what, sizeof what, "the name '%s' is reserved for generated code", e->v.Name.id);
      reject(k, node, "reserved-name", "rename it: names ending in '__' (or of the form name__N) are the converter's",
             what);
      return false;
    }
    break;
  }
  case PY_K_arg: {
    const py_arg *a = node;
    if (reserved(a->arg)) {
      snprintf(what, sizeof what, "the parameter '%s' is reserved for generated code", a->arg);
      reject(k, node, "reserved-name", "rename it: names ending in '__' (or of the form name__N) are the converter's",
             what);
      return false;
    }
    break;
  }
  case PY_K_FunctionDef:
  case PY_K_ClassDef: {
    const py_stmt *s = node;
    const char *nm = kind == PY_K_ClassDef ? s->v.ClassDef.name : s->v.FunctionDef.name;
    if (reserved(nm)) {
      snprintf(what, sizeof what, "the name '%s' is reserved for generated code", nm);
      reject(k, node, "reserved-name", "rename it: names ending in '__' (or of the form name__N) are the converter's",
             what);
      return false;
    }
    break;
  }
  case PY_K_Global:
  case PY_K_Nonlocal: {
    const py_stmt *s = node;
    py_seq *ns = kind == PY_K_Global ? s->v.Global.names : s->v.Nonlocal.names;
    for (int i = 0; i < PY_SEQ_LEN(ns); i++)
      if (reserved(ns->a[i])) {
        snprintf(what, sizeof what, "the name '%s' is reserved for generated code", (const char *)ns->a[i]);
        reject(k, node, "reserved-name", "rename it", what);
        return false;
      }
    break;
  }
  default: break;
  }
  return py_visit_children(node, chk_visit, ud);
}

/* A return / break / continue leaving a `finally` block swallows the exception in
 * flight; the flag rewriting cannot express that. Returns the offending statement. */
static const py_stmt *jump_out_of_finally(const py_seq *b, bool in_finally, bool loop_inside);
static const py_stmt *stmt_jump_finally(const py_stmt *s, bool fin, bool loop) {
  const py_stmt *r = NULL;
  switch (s->kind) {
  case PY_K_Return: return fin ? s : NULL;
  case PY_K_Break:
  case PY_K_Continue: return fin && !loop ? s : NULL;
  case PY_K_For:
  case PY_K_AsyncFor:
    if ((r = jump_out_of_finally(s->v.For.body, fin, true))) return r;
    return jump_out_of_finally(s->v.For.orelse, fin, loop);
  case PY_K_While:
    if ((r = jump_out_of_finally(s->v.While.body, fin, true))) return r;
    return jump_out_of_finally(s->v.While.orelse, fin, loop);
  case PY_K_If:
    if ((r = jump_out_of_finally(s->v.If.body, fin, loop))) return r;
    return jump_out_of_finally(s->v.If.orelse, fin, loop);
  case PY_K_With:
  case PY_K_AsyncWith: return jump_out_of_finally(s->v.With.body, fin, loop);
  case PY_K_Match:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++)
      if ((r = jump_out_of_finally(((py_match_case *)s->v.Match.cases->a[i])->body, fin, loop))) return r;
    return NULL;
  case PY_K_Try:
  case PY_K_TryStar:
    if ((r = jump_out_of_finally(s->v.Try.body, fin, loop)) || (r = jump_out_of_finally(s->v.Try.orelse, fin, loop)))
      return r;
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++)
      if ((r = jump_out_of_finally(((py_excepthandler *)s->v.Try.handlers->a[i])->v.ExceptHandler.body, fin, loop)))
        return r;
    return jump_out_of_finally(s->v.Try.finalbody, true, false);
  case PY_K_FunctionDef: return jump_out_of_finally(s->v.FunctionDef.body, false, false);
  default: return NULL;
  }
}
static const py_stmt *jump_out_of_finally(const py_seq *b, bool in_finally, bool loop_inside) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++) {
    const py_stmt *r = stmt_jump_finally(b->a[i], in_finally, loop_inside);
    if (r) return r;
  }
  return NULL;
}

static void check(drv *d, cand *cd) {
  chk k = {d, cd};
  py_stmt *fn = cd->fn;
  if (fn->kind == PY_K_AsyncFunctionDef) {
    reject(&k, fn, "unsupported-construct", "async functions run as plain Python", "it is an async function");
    return;
  }
  if (reserved(fn->v.FunctionDef.name)) {
    reject(&k, fn, "reserved-name", "rename it: names ending in '__' (or of the form name__N) are the converter's",
           "its name is reserved for generated code");
    return;
  }
  const py_stmt *jf = jump_out_of_finally(fn->v.FunctionDef.body, false, false);
  if (jf) {
    reject(&k, jf, "unsupported-construct", "move the return / break / continue after the try statement",
           "a return / break / continue in a 'finally' block (it discards the exception in flight)");
    return;
  }
  /* the body and the parameters (decorators, defaults run in the enclosing scope) */
  py_visit_children(fn->v.FunctionDef.args, chk_visit, &k);
  for (int i = 0; cd->ok && i < PY_SEQ_LEN(fn->v.FunctionDef.body); i++) {
    py_stmt *s = fn->v.FunctionDef.body->a[i];
    if (!chk_visit(s, s->kind, &k)) break;
  }
}

/* ------------------------------------------------------------ driver */

static bool loop_has_else(const py_seq *b);
static bool stmt_loop_else(const py_stmt *s) {
  switch (s->kind) {
  case PY_K_For: return PY_SEQ_LEN(s->v.For.orelse) || loop_has_else(s->v.For.body);
  case PY_K_While: return PY_SEQ_LEN(s->v.While.orelse) || loop_has_else(s->v.While.body);
  case PY_K_If: return loop_has_else(s->v.If.body) || loop_has_else(s->v.If.orelse);
  case PY_K_With: return loop_has_else(s->v.With.body);
  case PY_K_Match:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++)
      if (loop_has_else(((py_match_case *)s->v.Match.cases->a[i])->body)) return true;
    return false;
  case PY_K_Try:
  case PY_K_TryStar:
    if (loop_has_else(s->v.Try.body) || loop_has_else(s->v.Try.orelse) || loop_has_else(s->v.Try.finalbody)) return true;
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++)
      if (loop_has_else(((py_excepthandler *)s->v.Try.handlers->a[i])->v.ExceptHandler.body)) return true;
    return false;
  case PY_K_FunctionDef: return loop_has_else(s->v.FunctionDef.body);
  default: return false;
  }
}
static bool loop_has_else(const py_seq *b) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++)
    if (stmt_loop_else(b->a[i])) return true;
  return false;
}

/* Is there a break / continue / return inside a `with` or `try` block? (Snek's
 * exception-based jumps would be seen by the context manager / handler there.) */
static bool jump_in_guarded(const py_seq *b, bool guarded);
static bool stmt_jump_guarded(const py_stmt *s, bool g) {
  switch (s->kind) {
  case PY_K_Break:
  case PY_K_Continue:
  case PY_K_Return: return g;
  case PY_K_For: return jump_in_guarded(s->v.For.body, g) || jump_in_guarded(s->v.For.orelse, g);
  case PY_K_While: return jump_in_guarded(s->v.While.body, g) || jump_in_guarded(s->v.While.orelse, g);
  case PY_K_If: return jump_in_guarded(s->v.If.body, g) || jump_in_guarded(s->v.If.orelse, g);
  case PY_K_With: return jump_in_guarded(s->v.With.body, true);
  /* nested defs are converted with the function, by the same passes */
  case PY_K_FunctionDef: return jump_in_guarded(s->v.FunctionDef.body, false);
  case PY_K_Match:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++)
      if (jump_in_guarded(((py_match_case *)s->v.Match.cases->a[i])->body, g)) return true;
    return false;
  case PY_K_Try:
  case PY_K_TryStar:
    if (jump_in_guarded(s->v.Try.body, true) || jump_in_guarded(s->v.Try.orelse, true) ||
        jump_in_guarded(s->v.Try.finalbody, true))
      return true;
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++)
      if (jump_in_guarded(((py_excepthandler *)s->v.Try.handlers->a[i])->v.ExceptHandler.body, true)) return true;
    return false;
  default: return false;
  }
}
static bool jump_in_guarded(const py_seq *b, bool guarded) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++)
    if (stmt_jump_guarded(b->a[i], guarded)) return true;
  return false;
}

static void analyse(drv *d) {
  if (d->c.an) py_an_free(d->c.an);
  d->c.an = py_an_new(d->c.ctx);
  py_an_module(d->c.an, d->c.mod);
}

static void run_passes(drv *d) {
  cv *c = &d->c;
  bool snek = c->style == PY_STYLE_SNEK;
  for (int i = 0; i < d->ncands; i++) {
    if (!d->cands[i].ok) continue;
    py_stmt *fn = d->cands[i].fn;
    cv_pass_match(c, fn);
    cv_pass_directives(c, fn);
    /* Snek keeps break/continue/return as sg__.break__() / continue__() / return__()
     * (exceptions) unless a loop `else` needs the break flag, or a `with` / `try`
     * around a jump would see the exception: then the flag passes run. */
    bool guarded = snek && jump_in_guarded(fn->v.FunctionDef.body, false);
    if (!snek || guarded || loop_has_else(fn->v.FunctionDef.body)) {
      cv_pass_break(c, fn);
      cv_pass_continue(c, fn);
    }
    if (!snek || guarded) cv_pass_return(c, fn);
  }
  analyse(d);
  for (int i = 0; i < d->ncands; i++) {
    if (!d->cands[i].ok) continue;
    py_stmt *fn = d->cands[i].fn;
    cv_pass_lists(c, fn);
    cv_pass_slices_builtins_calls(c, fn); /* = slices, builtins, call trees */
  }
  analyse(d);
  for (int i = 0; i < d->ncands; i++)
    if (d->cands[i].ok) cv_pass_control_flow(c, d->cands[i].fn);
  for (int i = 0; i < d->ncands; i++) {
    if (!d->cands[i].ok) continue;
    py_stmt *fn = d->cands[i].fn;
    /* after control flow, which wraps a possibly unbound read in the message as
     * sg__.ld(x) (UnboundLocalError) while it is still the function's own read, not a
     * lambda's free one (NameError) */
    cv_pass_assert(c, fn);
    cv_pass_ternary_logical(c, fn); /* = ternary, logical */
    cv_pass_wrapper(c, fn);
  }
  py_an_free(c->an);
  c->an = NULL;
}

static int cmp_cand(const void *a, const void *b) {
  return ((const cand *)a)->start_line - ((const cand *)b)->start_line;
}

/* Is statement s one that must stay before our header (docstring, __future__)? */
static bool header_before(const py_seq *body, int i) {
  const py_stmt *s = body->a[i];
  if (i == 0 && s->kind == PY_K_Expr && s->v.Expr.value->kind == PY_K_Constant &&
      s->v.Expr.value->v.Constant.value.kind == PY_CONST_STR)
    return true;
  return s->kind == PY_K_ImportFrom && s->v.ImportFrom.module && !strcmp(s->v.ImportFrom.module, "__future__");
}

/* The coding declaration on line 1 or 2 (CPython's rule: a comment line, only comment
 * lines before it, matching `coding[:=][ \t]*NAME`): its line and, in *name, the
 * encoding it names; 0 when there is none. */
static int coding_declaration(cv *c, const char **name) {
  for (int l = 1; l <= 2 && l <= c->nlines; l++) {
    size_t a = c->line_starts[l - 1], b = l < c->nlines ? c->line_starts[l] : c->srclen;
    const char *t = c->src + a;
    while (a < b && (*t == ' ' || *t == '\t' || *t == '\f')) t++, a++;
    if (a == b || *t != '#') return 0; /* only comment lines come before the declaration */
    char *k = sg_arena_strndup(c->A, t, b - a);
    while ((k = strstr(k, "coding")) && k[6] != ':' && k[6] != '=') k++;
    if (!k) continue;
    k += 7;
    while (*k == ' ' || *k == '\t') k++;
    size_t n = 0;
    while (k[n] && (isalnum((unsigned char)k[n]) || k[n] == '-' || k[n] == '_' || k[n] == '.')) n++;
    *name = sg_arena_strndup(c->A, k, n);
    return l;
  }
  return 0;
}

static bool is_utf8_name(const char *name) {
  char norm[16] = {0};
  for (size_t i = 0; name[i] && i < sizeof norm - 1; i++)
    norm[i] = (char)(name[i] == '_' ? '-' : tolower((unsigned char)name[i]));
  return !strcmp(norm, "utf-8") || !strcmp(norm, "utf8") || !strncmp(norm, "utf-8-", 6);
}

static bool has_non_ascii(const char *src, size_t len) {
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)src[i] >= 0x80) return true;
  return false;
}

static void write_output(drv *d, const char *src, size_t len) {
  cv *c = &d->c;
  py_conv_result *r = d->r;
  py_seq *body = c->mod->v.Module.body;
  /* line after which the header goes */
  int hdr_after = 0;
  for (int i = 0; i < PY_SEQ_LEN(body) && header_before(body, i); i++) hdr_after = ((py_stmt *)body->a[i])->end_lineno;
  /* an encoding declaration must stay on its line (1 or 2) */
  if (d->coding_line > hdr_after) hdr_after = d->coding_line;
  qsort(d->cands, (size_t)d->ncands, sizeof(cand), cmp_cand);

  sg_buf out = SG_BUF_INIT, tail = SG_BUF_INIT;
  cv_emit em = {&r->arena, &out, NULL, 1, NULL, 0, 0, NULL, 0, 0};
  int nl = c->nlines;
  int line = 1, ci = 0;
  bool header_done = false;
  sg_buf hdr = SG_BUF_INIT;
  while (line <= nl || !header_done) {
    if (!header_done && line > hdr_after) {
      /* the header: 4 lines; the map line is filled in at the end */
      header_done = true;
      sg_buf_printf(&hdr, "# Converted by stagd %s from %s (style %s, runtime API 2).\n", STAGD_VERSION,
                    d->filename, c->style == PY_STYLE_SNEK ? "snek" : "autograph");
      sg_buf_puts(&hdr, "import stagd.runtime as sg__\nsg__.require_api(2)\n");
      sg_buf_append(&out, hdr.data, hdr.len);
      em.line += 4;
      /* everything after goes to `tail` */
      em.out = &tail;
      continue;
    }
    if (line > nl) break;
    while (ci < d->ncands && !d->cands[ci].ok) ci++;
    if (ci < d->ncands && d->cands[ci].start_line == line) {
      cand *cd = &d->cands[ci++];
      /* keep the original indentation characters (tabs stay tabs) */
      size_t ls = c->line_starts[cd->fn->lineno - 1];
      em.base = sg_arena_strndup(c->A, src + ls, (size_t)cd->col);
      int from = em.nmap;
      cv_find_comments(&em, src, c->line_starts, nl, len, cd->fn->lineno + 1, cd->end_line);
      cv_emit_stmt(&em, cd->fn, 0);
      cv_emit_comments(&em, INT_MAX, 4); /* after the last statement (none expected) */
      em.ncomments = 0;
      em.base = NULL;
      for (int k = from; k < em.nmap; k++) em.map[k].converted_line = -em.map[k].converted_line; /* mark */
      line = cd->end_line + 1;
      continue;
    }
    size_t a = c->line_starts[line - 1];
    size_t b = line < nl ? c->line_starts[line] : len;
    sg_buf_append(em.out, src + a, b - a);
    if (b == a || src[b - 1] != '\n') sg_buf_putc(em.out, '\n');
    cv_emit_line(&em, "", line, 0);
    em.out->len--; /* cv_emit_line wrote an extra newline */
    line++;
  }
  /* the source-map line: converted lines inside converted functions only */
  sg_buf ml = SG_BUF_INIT;
  sg_buf_puts(&ml, "sg__source_map__ = sg__.SourceMap(");
  py_repr_str(&ml, d->filename, strlen(d->filename));
  sg_buf_puts(&ml, ", {");
  bool first = true;
  for (int i = 0; i < em.nmap; i++) {
    py_srcmap_entry *m = &em.map[i];
    /* verbatim lines map to themselves; list only the lines of converted functions
     * (marked with a negative converted line while they were written) */
    if (m->converted_line > 0) continue;
    m->converted_line = -m->converted_line;
    sg_buf_printf(&ml, "%s%d: (%d, %d)", first ? "" : ", ", m->converted_line, m->line, m->col);
    first = false;
  }
  sg_buf_puts(&ml, "})\n");
  sg_buf_append(&r->code, out.data, out.len);
  sg_buf_append(&r->code, ml.data, ml.len);
  sg_buf_append(&r->code, tail.data ? tail.data : "", tail.len);
  /* `from m import *` must not import the runtime's names (sg__, sg__source_map__):
   * a module without __all__ of its own gets one naming its other public names */
  sg_buf_puts(&r->code, "if '__all__' not in globals():\n    __all__ = sg__.public_names(globals())\n");
  r->map = em.map;
  r->nmap = em.nmap;
  sg_buf_free(&out);
  sg_buf_free(&tail);
  sg_buf_free(&hdr);
  sg_buf_free(&ml);
}

void py_conv_result_free(py_conv_result *r) {
  if (!r) return;
  sg_buf_free(&r->code);
  sg_arena_free(&r->arena);
  memset(r, 0, sizeof *r);
}

/* Whether src[i] ends a line: \n, or a \r not followed by \n (Python's universal
 * newlines). */
static bool line_end_at(const char *src, size_t len, size_t i) {
  return src[i] == '\n' || (src[i] == '\r' && (i + 1 == len || src[i + 1] != '\n'));
}

sg_code py_convert(const char *src, size_t len, const char *filename, py_conv_style style, const char *function,
                   py_conv_result *out, sg_error *err) {
  memset(out, 0, sizeof *out);
  sg_arena_init(&out->arena, 0);
  if (!filename || !*filename) filename = "<unknown>";
  py_ctx ctx;
  py_ctx_init(&ctx);
  py_mod *mod = py_parse(&ctx, src, len, filename, err);
  if (!mod) {
    py_ctx_free(&ctx);
    return err && err->code ? err->code : SG_INVALID_ARGUMENT;
  }
  /* a UTF-8 BOM is not part of the first line (the parser's columns skip it) and is
   * invalid after the header the output starts with (found by fuzz_convert) */
  if (len >= 3 && !memcmp(src, "\xef\xbb\xbf", 3)) src += 3, len -= 3;
  drv d;
  memset(&d, 0, sizeof d);
  d.r = out;
  d.filename = filename;
  d.c.ctx = &ctx;
  d.c.A = &ctx.arena;
  d.c.style = style;
  d.c.mod = mod;
  d.c.src = src;
  d.c.srclen = len;
  /* line table: lines end as the tokenizer ends them (\n, \r\n or a lone \r), or the
   * converted functions would replace the wrong lines (found by fuzz_convert) */
  int nl = 0;
  for (size_t i = 0; i < len; i++)
    if (line_end_at(src, len, i)) nl++;
  if (len && !line_end_at(src, len, len - 1)) nl++;
  size_t *ls = sg_arena_alloc(d.c.A, sizeof(size_t) * (size_t)(nl + 1));
  int k = 0;
  ls[k++] = 0;
  for (size_t i = 0; i < len && k < nl; i++)
    if (line_end_at(src, len, i)) ls[k++] = i + 1;
  d.c.line_starts = ls;
  d.c.nlines = nl;

  find_cands(&d, mod->v.Module.body, NULL);
  const char *enc = NULL;
  int enc_line = d.coding_line = coding_declaration(&d.c, &enc);
  if (enc_line && !is_utf8_name(enc) && has_non_ascii(src, len)) {
    /* converted functions are written in UTF-8, the copied lines stay in the declared
     * encoding: the module would mix the two (found by fuzz_convert) */
    diag(&d, PY_DIAG_ERROR, "encoding", enc_line, 0, enc_line, 0, "save the file as UTF-8 (PEP 3120) to convert it",
         "stagd converts modules written in UTF-8 (or ASCII); this one declares the encoding '%s' and holds "
         "non-ASCII text", enc);
    for (int i = 0; i < d.ncands; i++) d.cands[i].ok = false;
  }
  if (function && *function) {
    bool any = false;
    for (int i = 0; i < d.ncands; i++) {
      const char *q = d.cands[i].qualname;
      const char *last = strrchr(q, '.');
      bool match = !strcmp(q, function) || (last && !strcmp(last + 1, function));
      d.cands[i].ok = match;
      any |= match;
    }
    if (!any)
      diag(&d, PY_DIAG_ERROR, "unknown-function", 1, 0, 1, 0, "give the name of a module-level function or of a method as Class.method",
           "no function named '%s' in %s", function, filename);
  }
  for (int i = 0; i < d.ncands && !sg_watch_stopped(); i++)
    if (d.cands[i].ok) check(&d, &d.cands[i]);
  if (sg_watch_stopped()) { /* the request gave up (common/watch.c) */
    py_ctx_free(&ctx);
    return sg_watch_poll("converting", err);
  }
  int nconv = 0;
  for (int i = 0; i < d.ncands; i++) nconv += d.cands[i].ok;
  out->nconverted = nconv;
  if (nconv == 0) {
    sg_buf_append(&out->code, src, len);
    py_ctx_free(&ctx);
    return SG_OK;
  }
  /* a second parse: the original bodies, for each converted function's plain path */
  sg_error perr = {0};
  py_mod *orig = py_parse(&ctx, src, len, filename, &perr);
  if (orig) find_orig(&d, orig->v.Module.body);
  run_passes(&d);
  if (sg_watch_stopped()) {
    py_ctx_free(&ctx);
    return sg_watch_poll("converting", err);
  }
  for (int i = 0; i < d.ncands; i++)
    if (d.cands[i].ok && d.cands[i].orig) cv_dual_body(&d.c, d.cands[i].fn, d.cands[i].orig);
  write_output(&d, src, len);
  /* diagnostics / map strings live in out->arena; the AST goes */
  py_ctx_free(&ctx);
  return SG_OK;
}
