// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_hover.c — textDocument/hover on a function or a control-flow statement (if,
 * elif, while, for, return, break, continue): whether stagd stages it or it runs in
 * plain Python, and why.
 *
 * The reasoning uses the analyses of convert/analysis.h: the names a condition or an
 * iterable reads (activity), the function's parameters and locals (scopes), what a
 * staged if / while / for must thread (control-flow state). On top of them a small
 * flow-insensitive fixpoint finds the locals computed from parameters ("y depends on
 * parameter x"). A condition that depends on a parameter is staged when that argument
 * is a staged tensor and is plain Python otherwise (the converted code decides at run
 * time, as AutoGraph's if_stmt / while_stmt do); one that reads only constants and
 * globals always runs in Python, once, while staging.
 */
#include <string.h>

#include "analysis.h"
#include "lsp_features.h"

enum { MAX_CF_DEPTH = 64 };

/* Where the hovered statement sits. */
typedef struct where {
  const py_stmt *target;
  const py_stmt *fn;       /* innermost enclosing def (or the target itself for a def) */
  const py_stmt *top;      /* the module-level function / method the converter takes */
  const char *class_name;  /* top is a method of this module-level class */
  const py_stmt *outer_fn; /* the outermost def around target (nested defs) */
  const py_stmt *cf[MAX_CF_DEPTH]; /* enclosing if / while / for inside fn, outermost first */
  int ncf;
} where;

static bool is_loop(const py_stmt *s) {
  return s->kind == PY_K_While || s->kind == PY_K_For || s->kind == PY_K_AsyncFor;
}

static int first_line(const py_stmt *s) {
  return sv_lsp_is_def(s) || s->kind == PY_K_ClassDef ? sv_lsp_def_first_line(s) : s->lineno;
}

/* The last line of a compound statement's head (up to its first body statement). */
static int head_end(const py_stmt *s) {
  switch (s->kind) {
    case PY_K_If: return s->v.If.test->end_lineno;
    case PY_K_While: return s->v.While.test->end_lineno;
    case PY_K_For:
    case PY_K_AsyncFor: return s->v.For.iter->end_lineno;
    default: {
      py_seq *b = sv_lsp_is_def(s) ? sv_lsp_def_body(s) : NULL;
      if (PY_SEQ_LEN(b) > 0 && ((const py_stmt *)b->a[0])->lineno > s->lineno)
        return ((const py_stmt *)b->a[0])->lineno - 1;
      return s->lineno;
    }
  }
}

static bool find(const py_seq *body, int line, where *w, int depth);

static bool find_in_blocks(const py_stmt *s, int line, where *w, int depth) {
  switch (s->kind) {
    case PY_K_If: return find(s->v.If.body, line, w, depth) || find(s->v.If.orelse, line, w, depth);
    case PY_K_While: return find(s->v.While.body, line, w, depth) || find(s->v.While.orelse, line, w, depth);
    case PY_K_For:
    case PY_K_AsyncFor: return find(s->v.For.body, line, w, depth) || find(s->v.For.orelse, line, w, depth);
    case PY_K_With:
    case PY_K_AsyncWith: return find(s->v.With.body, line, w, depth);
    case PY_K_Try:
    case PY_K_TryStar:
      if (find(s->v.Try.body, line, w, depth)) return true;
      for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++)
        if (find(((const py_excepthandler *)s->v.Try.handlers->a[i])->v.ExceptHandler.body, line, w, depth))
          return true;
      return find(s->v.Try.orelse, line, w, depth) || find(s->v.Try.finalbody, line, w, depth);
    case PY_K_Match:
      for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++)
        if (find(((const py_match_case *)s->v.Match.cases->a[i])->body, line, w, depth)) return true;
      return false;
    default: return false;
  }
}

/* Finds the statement whose head is on `line`; depth 0 = module level. */
static bool find(const py_seq *body, int line, where *w, int depth) {
  for (int i = 0; i < PY_SEQ_LEN(body); i++) {
    const py_stmt *s = body->a[i];
    if (line < first_line(s) || line > s->end_lineno) continue;
    if (sv_lsp_is_def(s)) {
      const py_stmt *saved_fn = w->fn, *saved_top = w->top, *saved_outer = w->outer_fn;
      int saved_ncf = w->ncf;
      if (depth == 0 || (depth == 1 && w->class_name && !w->fn)) w->top = s;
      if (!w->outer_fn) w->outer_fn = s;
      w->fn = s;
      if (line <= head_end(s)) {
        w->target = s;
        return true;
      }
      w->ncf = 0;
      if (find(sv_lsp_def_body(s), line, w, depth + 1)) return true;
      w->fn = saved_fn, w->top = saved_top, w->outer_fn = saved_outer, w->ncf = saved_ncf;
      return false;
    }
    if (s->kind == PY_K_ClassDef) {
      const char *saved = w->class_name;
      if (depth == 0) w->class_name = s->v.ClassDef.name;
      if (find(s->v.ClassDef.body, line, w, depth + 1)) return true;
      w->class_name = saved;
      return false;
    }
    if (s->kind == PY_K_If || is_loop(s)) {
      if (line <= head_end(s)) {
        w->target = s;
        return true;
      }
      if (w->ncf < MAX_CF_DEPTH) w->cf[w->ncf++] = s;
      if (find_in_blocks(s, line, w, depth)) return true;
      w->ncf--;
      return false;
    }
    if (s->kind == PY_K_Return || s->kind == PY_K_Break || s->kind == PY_K_Continue) {
      w->target = s;
      return true;
    }
    return find_in_blocks(s, line, w, depth);
  }
  return false;
}

/* ------------------------------------------------ locals computed from parameters */

typedef struct deps {
  py_an *an;
  const py_scope *scope;
  sg_map origin; /* local name symbol → 1 + the parameter symbol it is computed from */
} deps;

static py_sym origin_of(deps *d, py_sym s) {
  void *v;
  if (py_symset_has(d->scope->params, s)) return s;
  if (sg_map_get(&d->origin, (uint64_t)s, &v)) return (py_sym)((intptr_t)v - 1);
  return PY_SYM_NONE;
}

/* The parameter a set of read symbols depends on (the first found), or NONE. */
static py_sym reads_origin(deps *d, py_symset read) {
  for (int i = 0; i < read.n; i++) {
    const py_sym_info *info = py_an_sym_info(d->an, read.a[i]);
    py_sym o = origin_of(d, info ? info->root : read.a[i]);
    if (o != PY_SYM_NONE) return o;
  }
  return PY_SYM_NONE;
}

static bool taint_names(deps *d, py_symset written, py_sym o) {
  bool changed = false;
  for (int i = 0; i < written.n; i++) {
    const py_sym_info *info = py_an_sym_info(d->an, written.a[i]);
    if (!info || info->kind != PY_QN_NAME || origin_of(d, written.a[i]) != PY_SYM_NONE) continue;
    if (!py_symset_has(d->scope->locals, written.a[i])) continue;
    sg_map_put(&d->origin, (uint64_t)written.a[i], (void *)(intptr_t)(o + 1));
    changed = true;
  }
  return changed;
}

static bool taint_block(deps *d, const py_seq *body);

static bool taint_stmt(deps *d, const py_stmt *s) {
  bool changed = false;
  switch (s->kind) {
    case PY_K_FunctionDef:
    case PY_K_AsyncFunctionDef:
    case PY_K_ClassDef: return false; /* their bodies are other scopes */
    case PY_K_If:
    case PY_K_While: {
      /* a staged if / while turns its outputs / loop variables into staged tensors */
      const py_expr *test = s->kind == PY_K_If ? s->v.If.test : s->v.While.test;
      py_sym o = reads_origin(d, py_an_expr_activity(d->an, test, s).read);
      if (o != PY_SYM_NONE) changed |= taint_names(d, py_an_cf_state(d->an, s).state, o);
      if (s->kind == PY_K_If) return changed | taint_block(d, s->v.If.body) | taint_block(d, s->v.If.orelse);
      return changed | taint_block(d, s->v.While.body) | taint_block(d, s->v.While.orelse);
    }
    case PY_K_For:
    case PY_K_AsyncFor: {
      py_sym o = reads_origin(d, py_an_expr_activity(d->an, s->v.For.iter, s).read);
      if (o != PY_SYM_NONE) {
        py_activity target = py_an_expr_activity(d->an, s->v.For.target, s);
        changed |= taint_names(d, target.modified, o);
        changed |= taint_names(d, target.read, o); /* a Store target may be listed as read */
        changed |= taint_names(d, py_an_cf_state(d->an, s).state, o);
      }
      return changed | taint_block(d, s->v.For.body) | taint_block(d, s->v.For.orelse);
    }
    case PY_K_With:
    case PY_K_AsyncWith: return taint_block(d, s->v.With.body);
    case PY_K_Try:
    case PY_K_TryStar:
      changed |= taint_block(d, s->v.Try.body);
      for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++)
        changed |= taint_block(d, ((const py_excepthandler *)s->v.Try.handlers->a[i])->v.ExceptHandler.body);
      return changed | taint_block(d, s->v.Try.orelse) | taint_block(d, s->v.Try.finalbody);
    case PY_K_Match:
      for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++)
        changed |= taint_block(d, ((const py_match_case *)s->v.Match.cases->a[i])->body);
      return changed;
    default: {
      py_activity a = py_an_activity(d->an, s);
      py_sym o = reads_origin(d, a.read);
      return o != PY_SYM_NONE && taint_names(d, a.modified, o);
    }
  }
}

static bool taint_block(deps *d, const py_seq *body) {
  bool changed = false;
  for (int i = 0; i < PY_SEQ_LEN(body); i++) changed |= taint_stmt(d, body->a[i]);
  return changed;
}

/* ------------------------------------------------------------ verdicts */

typedef enum verdict { V_PARAM, V_LOCAL, V_PYTHON } verdict;

/* Classifies the names expression e (in statement s) reads and appends the reason. */
static verdict explain_expr(deps *d, const py_expr *e, const py_stmt *s, const char *what, sg_buf *out) {
  py_symset read = py_symset_names(d->an, py_an_expr_activity(d->an, e, s).read);
  sg_buf params = SG_BUF_INIT, roots = SG_BUF_INIT, locals = SG_BUF_INIT, others = SG_BUF_INIT;
  for (int i = 0; i < read.n; i++) {
    const char *name = py_an_sym_text(d->an, read.a[i]);
    py_sym o = origin_of(d, read.a[i]);
    if (o != PY_SYM_NONE) {
      const char *pname = py_an_sym_text(d->an, o);
      sg_buf tick = SG_BUF_INIT;
      sg_buf_printf(&tick, "`%s`", pname);
      if (!roots.data || !strstr(roots.data, tick.data)) sg_buf_printf(&roots, "%s%s", roots.len ? " or " : "", tick.data);
      sg_buf_free(&tick);
      if (o == read.a[i]) sg_buf_printf(&params, "%s`%s`", params.len ? ", " : "", name);
      else if (!py_symset_has(read, o)) /* said once: x, not also x (through y) */
        sg_buf_printf(&params, "%s`%s` (through `%s`)", params.len ? ", " : "", pname, name);
    } else if (py_symset_has(d->scope->locals, read.a[i])) {
      sg_buf_printf(&locals, "%s`%s`", locals.len ? ", " : "", name);
    } else {
      sg_buf_printf(&others, "%s`%s`%s", others.len ? ", " : "", name,
                    py_an_builtin_name(name) ? " (builtin)" : " (global)");
    }
  }
  verdict v;
  if (params.len) {
    v = V_PARAM;
    sg_buf_printf(out,
                  "**Staged** when %s is a staged tensor, plain Python otherwise: %s depends on "
                  "parameter %s.",
                  roots.data, what, params.data);
  } else if (locals.len) {
    v = V_LOCAL;
    sg_buf_printf(out,
                  "**Staged** only if %s holds a staged tensor when it runs (computed in the function, not from "
                  "its parameters); plain Python otherwise: %s depends on %s.",
                  locals.data, what, locals.data);
  } else {
    v = V_PYTHON;
    sg_buf_printf(out,
                  "**Runs in Python**: %s only reads constants/globals%s%s%s, so it is evaluated once, while "
                  "staging.",
                  what, others.len ? " (" : "", others.len ? others.data : "", others.len ? ")" : "");
  }
  sg_buf_free(&params);
  sg_buf_free(&roots);
  sg_buf_free(&locals);
  sg_buf_free(&others);
  return v;
}

static const char *kw(const py_stmt *s) {
  switch (s->kind) {
    case PY_K_If: return "if";
    case PY_K_While: return "while";
    case PY_K_For: return "for";
    case PY_K_AsyncFor: return "async for";
    case PY_K_Return: return "return";
    case PY_K_Break: return "break";
    case PY_K_Continue: return "continue";
    default: return "statement";
  }
}

/* The verdict and reason for an if / while / for. */
static verdict explain_cf(deps *d, const py_stmt *s, sg_buf *out) {
  verdict v;
  if (s->kind == PY_K_If) {
    v = explain_expr(d, s->v.If.test, s, "the condition", out);
  } else if (s->kind == PY_K_While) {
    v = explain_expr(d, s->v.While.test, s, "the condition", out);
  } else {
    v = explain_expr(d, s->v.For.iter, s, "the iterable", out);
  }
  py_cf_state st = py_an_cf_state(d->an, s);
  if (v != V_PYTHON && st.state.n > 0) {
    sg_buf_puts(out, s->kind == PY_K_If ? "\n\nBranch outputs when staged: " : "\n\nLoop variables when staged: ");
    py_symset_format(d->an, st.state, out);
    if (st.undefined.n > 0) {
      sg_buf_puts(out, " (may be undefined before it: ");
      py_symset_format(d->an, st.undefined, out);
      sg_buf_puts(out, ")");
    }
  }
  return v;
}

/* One line per if / while / for in body (not in nested defs), in source order. */
static int summarize(deps *d, const py_seq *body, sg_buf *out, int depth) {
  int n = 0;
  for (int i = 0; i < PY_SEQ_LEN(body) && depth < MAX_CF_DEPTH; i++) {
    const py_stmt *c = body->a[i];
    if (c->kind == PY_K_If || is_loop(c)) {
      sg_buf reason = SG_BUF_INIT;
      explain_cf(d, c, &reason);
      char *nl = strstr(reason.data, "\n\n"); /* the summary keeps the first paragraph */
      if (nl) *nl = '\0';
      sg_buf_printf(out, "\n- line %d `%s`: %s", c->lineno, kw(c), reason.data);
      sg_buf_free(&reason);
      n++;
    }
    switch (c->kind) {
      case PY_K_If: n += summarize(d, c->v.If.body, out, depth + 1) + summarize(d, c->v.If.orelse, out, depth + 1); break;
      case PY_K_While: n += summarize(d, c->v.While.body, out, depth + 1) + summarize(d, c->v.While.orelse, out, depth + 1); break;
      case PY_K_For:
      case PY_K_AsyncFor: n += summarize(d, c->v.For.body, out, depth + 1) + summarize(d, c->v.For.orelse, out, depth + 1); break;
      case PY_K_With:
      case PY_K_AsyncWith: n += summarize(d, c->v.With.body, out, depth + 1); break;
      case PY_K_Try:
      case PY_K_TryStar: n += summarize(d, c->v.Try.body, out, depth + 1) + summarize(d, c->v.Try.orelse, out, depth + 1) + summarize(d, c->v.Try.finalbody, out, depth + 1); break;
      default: break;
    }
  }
  return n;
}

/* ------------------------------------------------------------ the request */

/* The converter's error for the function `top` (it is left as plain Python), if any. */
static const py_diag *rejection(const py_conv_result *res, const py_stmt *top) {
  for (int i = 0; i < res->ndiags; i++) {
    const py_diag *pd = &res->diags[i];
    if (pd->code && strcmp(pd->code, "unknown-function") != 0 && pd->line >= first_line(top) &&
        pd->line <= top->end_lineno)
      return pd;
  }
  return NULL;
}

static void describe(sv_lsp_request *rq, py_an *an, const where *w, const py_conv_result *res, sg_buf *out) {
  const py_stmt *s = w->target;
  const char *name = sv_lsp_is_def(s) ? sv_lsp_def_name(s) : kw(s);
  if (s->kind == PY_K_If && s->lineno >= 1 && s->lineno <= rq->text.nlines) {
    size_t at = rq->text.line_start[s->lineno - 1] + (size_t)s->col_offset;
    if (at + 4 <= rq->text.len && !memcmp(rq->text.text + at, "elif", 4)) name = "elif";
  }
  sg_buf_printf(out, "**stagd** · `%s`%s\n\n", name, sv_lsp_is_def(s) ? "" : " statement");
  if (!w->fn) {
    sg_buf_puts(out, "**Runs in Python**: module-level code is not converted; only functions are.");
    return;
  }
  const py_stmt *top = w->top;
  if (!top) {
    sg_buf_printf(out,
                  "**Runs in Python**: `%s` is not converted (stagd converts module-level functions and methods "
                  "of module-level classes, and the functions nested in them).",
                  sv_lsp_def_name(w->fn));
    return;
  }
  sg_buf qual = SG_BUF_INIT;
  sg_buf_printf(&qual, "%s%s%s", w->class_name ? w->class_name : "", w->class_name ? "." : "", sv_lsp_def_name(top));
  const py_diag *rej = res ? rejection(res, top) : NULL;
  if (rej) {
    sg_buf_printf(out, "**Runs in Python**: %s (line %d)", rej->message, rej->line);
    if (rej->hint && *rej->hint) sg_buf_printf(out, "\n\nhint: %s", rej->hint);
    sg_buf_free(&qual);
    return;
  }
  deps d = {an, py_an_scope(an, w->fn), SG_MAP_INIT};
  if (!d.scope) {
    sg_buf_free(&qual);
    return;
  }
  for (int k = 0; k < 16 && taint_block(&d, sv_lsp_def_body(w->fn)); k++) {
  }
  if (sv_lsp_is_def(s)) {
    if (s != top) sg_buf_printf(out, "Converted together with `%s`. ", qual.data);
    else sg_buf_printf(out, "`%s` is converted (%s style). ", qual.data, rq->style == PY_STYLE_SNEK ? "snek" : "autograph");
    sg_buf_puts(out, "Its control flow is staged where the values it tests are staged tensors:\n");
    int n = summarize(&d, sv_lsp_def_body(s), out, 0);
    if (!n) sg_buf_puts(out, "\n- no if / while / for: the body is traced as it is.");
    py_symset params = d.scope->params;
    if (params.n) {
      sg_buf_puts(out, "\n\nParameters: ");
      py_symset_format(an, params, out);
    }
  } else if (s->kind == PY_K_If || is_loop(s)) {
    explain_cf(&d, s, out);
  } else {
    /* return / break / continue: the enclosing control flow decides */
    const py_stmt *encl = NULL;
    for (int i = w->ncf - 1; i >= 0; i--) {
      if (s->kind == PY_K_Return || is_loop(w->cf[i])) {
        encl = w->cf[i];
        break;
      }
    }
    if (!encl) {
      sg_buf_puts(out, s->kind == PY_K_Return ? "A return at the top level of the function: it stays a plain return."
                                              : "Not inside a loop of this function.");
    } else {
      if (s->kind == PY_K_Return)
        sg_buf_printf(out,
                      "Inside the `%s` at line %d: the converter turns this return into setting the return value "
                      "and skipping what follows, so it also works when that statement is staged.\n\n",
                      kw(encl), encl->lineno);
      else
        sg_buf_printf(out,
                      "The converter turns this `%s` into a flag that the `%s` loop at line %d tests, so it also "
                      "works when that loop is staged.\n\n",
                      kw(s), kw(encl), encl->lineno);
      sg_buf_printf(out, "The `%s` at line %d: ", kw(encl), encl->lineno);
      explain_cf(&d, encl, out);
    }
  }
  sg_map_free(&d.origin);
  sg_buf_free(&qual);
}

cJSON *sv_lsp_hover(sv_lsp_request *rq) {
  const cJSON *pos = cJSON_GetObjectItemCaseSensitive(rq->params, "position");
  const cJSON *pl = pos ? cJSON_GetObjectItemCaseSensitive(pos, "line") : NULL;
  const cJSON *pc = pos ? cJSON_GetObjectItemCaseSensitive(pos, "character") : NULL;
  if (!cJSON_IsNumber(pl) || !cJSON_IsNumber(pc) || pl->valuedouble < 0 || pc->valuedouble < 0)
    return sv_lsp_fail(rq, LSP_INVALID_PARAMS,
                       "Invalid params: textDocument/hover needs 'position': {line, character} (numbers >= 0)");
  int line1, col0;
  sv_lsp_from_position(&rq->text, (int64_t)pl->valuedouble, (int64_t)pc->valuedouble, &line1, &col0);
  py_ctx ctx;
  py_ctx_init(&ctx);
  sg_error err = SG_ERROR_INIT;
  py_mod *mod = py_parse(&ctx, rq->text.text, rq->text.len, rq->uri, &err);
  sg_error_clear(&err);
  cJSON *out = cJSON_CreateNull();
  where w = {0};
  if (mod && find(mod->v.Module.body, line1, &w, 0) && w.target) {
    /* the converter's verdict on the one function concerned (cheaper than all) */
    py_conv_result res;
    bool converted = false;
    if (w.top) {
      sg_buf qual = SG_BUF_INIT;
      sg_buf_printf(&qual, "%s%s%s", w.class_name ? w.class_name : "", w.class_name ? "." : "", sv_lsp_def_name(w.top));
      converted = sv_lsp_convert(&rq->text, rq->uri, rq->style, qual.data, &res, &err) == SG_OK;
      sg_buf_free(&qual);
      sg_error_clear(&err);
      if (!converted) py_conv_result_free(&res);
    }
    if (converted || !w.top) {
      py_an *an = py_an_new(&ctx);
      py_an_module(an, mod);
      sg_buf md = SG_BUF_INIT;
      describe(rq, an, &w, converted ? &res : NULL, &md);
      cJSON_Delete(out);
      out = cJSON_CreateObject();
      cJSON *contents = cJSON_AddObjectToObject(out, "contents");
      cJSON_AddStringToObject(contents, "kind", "markdown");
      cJSON_AddStringToObject(contents, "value", md.data ? md.data : "");
      const py_stmt *s = w.target;
      int end_line = head_end(s) < s->end_lineno ? head_end(s) : s->end_lineno;
      int end_col = end_line == s->end_lineno ? s->end_col_offset : 1 << 30;
      cJSON_AddItemToObject(out, "range", sv_lsp_range(&rq->text, s->lineno, s->col_offset, end_line, end_col));
      sg_buf_free(&md);
      py_an_free(an);
    }
    if (converted) py_conv_result_free(&res);
  }
  py_ctx_free(&ctx);
  return out;
}
