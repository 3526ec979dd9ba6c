// SPDX-License-Identifier: Apache-2.0
/*
 * conv_emit.c — writes converted statements as Python source, one statement per line,
 * recording for each line the original line / column it came from (the source map).
 * Simple statements and compound-statement headers are produced by the unparser
 * (py_unparse_module on a one-statement module whose bodies are `pass`), bodies are
 * written recursively so that every nested statement gets its own map entry.
 *
 * Full-line comments of a converted function survive: each is written, at the
 * indentation of the statement that follows it, before the first statement whose
 * original line comes after it (generated statements carry the line of the construct
 * they come from, so a comment stays beside its code). Comments at the end of a line
 * are dropped (the unparser writes every statement anew).
 */
#include <limits.h>
#include <string.h>

#include "conv_priv.h"

static void emit_block(cv_emit *em, const py_seq *b, int indent);

void cv_emit_line(cv_emit *em, const char *text, int orig_line, int orig_col) {
  sg_buf_puts(em->out, text);
  sg_buf_putc(em->out, '\n');
  if (orig_line > 0) {
    if (em->nmap == em->capmap) {
      int cap = em->capmap ? em->capmap * 2 : 64;
      py_srcmap_entry *m = sg_arena_alloc(em->A, sizeof(*m) * (size_t)cap);
      if (em->nmap) memcpy(m, em->map, sizeof(*m) * (size_t)em->nmap);
      em->map = m;
      em->capmap = cap;
    }
    em->map[em->nmap++] = (py_srcmap_entry){em->line, orig_line, orig_col + 1};
  }
  em->line++;
}

void cv_find_comments(cv_emit *em, const char *src, const size_t *line_starts, int nlines, size_t len, int first,
                      int last) {
  em->ncomments = em->icomment = 0;
  int cap = 0;
  bool in_triple = false; /* a line-based guess: inside a triple-quoted string */
  for (int l = first; l <= last && l <= nlines; l++) {
    size_t a = line_starts[l - 1], b = l < nlines ? line_starts[l] : len;
    while (b > a && (src[b - 1] == '\n' || src[b - 1] == '\r')) b--;
    size_t i = a;
    while (i < b && (src[i] == ' ' || src[i] == '\t' || src[i] == '\f')) i++;
    if (!in_triple && i < b && src[i] == '#') {
      if (em->ncomments == cap) {
        cap = cap ? cap * 2 : 16;
        cv_comment *n = sg_arena_alloc(em->A, sizeof *n * (size_t)cap);
        if (em->ncomments) memcpy(n, em->comments, sizeof *n * (size_t)em->ncomments);
        em->comments = n;
      }
      em->comments[em->ncomments++] = (cv_comment){l, src + i, (int)(b - i)};
      continue;
    }
    /* an odd number of triple quotes on the line toggles the guess */
    for (size_t k = a; k + 2 < b; k++)
      if ((src[k] == '"' || src[k] == '\'') && src[k + 1] == src[k] && src[k + 2] == src[k]) {
        in_triple = !in_triple;
        k += 2;
      }
  }
}

void cv_emit_comments(cv_emit *em, int before, int indent) {
  sg_buf line = SG_BUF_INIT;
  while (em->icomment < em->ncomments && em->comments[em->icomment].line < before) {
    const cv_comment *cm = &em->comments[em->icomment++];
    sg_buf_clear(&line);
    if (em->base) sg_buf_puts(&line, em->base);
    for (int k = 0; k < indent; k++) sg_buf_putc(&line, ' ');
    sg_buf_append(&line, cm->text, (size_t)cm->len);
    sg_buf_putc(&line, '\0');
    cv_emit_line(em, line.data, cm->line, 0);
  }
  sg_buf_free(&line);
}

/* Unparses a one-statement module; returns the text (arena). */
static char *unparse1(cv_emit *em, py_stmt *s) {
  py_seq *b = sg_arena_alloc(em->A, sizeof(py_seq) + sizeof(void *));
  b->n = 1;
  b->a[0] = s;
  py_mod *m = py_new_Module(em->A, b, NULL);
  sg_buf t = SG_BUF_INIT;
  py_unparse_module(m, &t);
  char *r = sg_arena_strndup(em->A, t.data ? t.data : "", t.len);
  sg_buf_free(&t);
  return r;
}

/* Writes lines [from, to) of text (0-based line indices; to < 0: all but the last -to
 * lines) with the given indentation. */
static void emit_text_lines(cv_emit *em, const char *text, int from, int to, int indent, int ol, int oc) {
  int nlines = 0;
  for (const char *p = text; *p; p++)
    if (*p == '\n') nlines++;
  if (to < 0) to = nlines + to;
  const char *p = text;
  sg_buf line = SG_BUF_INIT;
  for (int i = 0; i < nlines && *p; i++) {
    const char *e = strchr(p, '\n');
    if (!e) e = p + strlen(p);
    if (i >= from && i < to) {
      sg_buf_clear(&line);
      if (em->base) sg_buf_puts(&line, em->base);
      for (int k = 0; k < indent; k++) sg_buf_putc(&line, ' ');
      sg_buf_append(&line, p, (size_t)(e - p));
      sg_buf_putc(&line, '\0');
      cv_emit_line(em, line.data, ol, oc);
    }
    p = *e ? e + 1 : e;
  }
  sg_buf_free(&line);
}

static py_seq *pass_body(cv_emit *em, const py_stmt *s) {
  py_seq *b = sg_arena_alloc(em->A, sizeof(py_seq) + sizeof(void *));
  b->n = 1;
  b->a[0] = py_new_Pass(em->A, s->lineno, s->col_offset, s->end_lineno, s->end_col_offset);
  return b;
}

static void emit_else(cv_emit *em, const char *kw, const py_seq *b, int indent, const py_stmt *s) {
  if (!PY_SEQ_LEN(b)) return;
  sg_buf line = SG_BUF_INIT;
  if (em->base) sg_buf_puts(&line, em->base);
      for (int k = 0; k < indent; k++) sg_buf_putc(&line, ' ');
  sg_buf_puts(&line, kw);
  sg_buf_putc(&line, '\0');
  cv_emit_line(em, line.data, s->lineno, s->col_offset);
  sg_buf_free(&line);
  emit_block(em, b, indent + 4);
}

void cv_emit_stmt(cv_emit *em, const py_stmt *s, int indent) {
  int ol = s->lineno, oc = s->col_offset;
  py_stmt h = *s;
  cv_emit_comments(em, ol, indent);
  switch (s->kind) {
  case PY_K_FunctionDef:
  case PY_K_AsyncFunctionDef:
    h.v.FunctionDef.body = pass_body(em, s);
    emit_text_lines(em, unparse1(em, &h), 0, -1, indent, ol, oc);
    emit_block(em, s->v.FunctionDef.body, indent + 4);
    return;
  case PY_K_ClassDef:
    h.v.ClassDef.body = pass_body(em, s);
    emit_text_lines(em, unparse1(em, &h), 0, -1, indent, ol, oc);
    emit_block(em, s->v.ClassDef.body, indent + 4);
    return;
  case PY_K_If:
  case PY_K_While:
  case PY_K_For:
  case PY_K_AsyncFor: {
    py_seq *orelse = s->kind == PY_K_If ? s->v.If.orelse : s->kind == PY_K_While ? s->v.While.orelse : s->v.For.orelse;
    if (s->kind == PY_K_If) {
      h.v.If.body = pass_body(em, s);
      h.v.If.orelse = NULL;
    } else if (s->kind == PY_K_While) {
      h.v.While.body = pass_body(em, s);
      h.v.While.orelse = NULL;
    } else {
      h.v.For.body = pass_body(em, s);
      h.v.For.orelse = NULL;
    }
    emit_text_lines(em, unparse1(em, &h), 0, -1, indent, ol, oc);
    /* a plain path (conv_dual.c) repeats the original statements: the comments go with
     * the converted body that follows it */
    int nc = em->ncomments;
    if (s->kind == PY_K_If && cv_is_plain_path(s)) em->ncomments = em->icomment;
    emit_block(em, s->kind == PY_K_If ? s->v.If.body : s->kind == PY_K_While ? s->v.While.body : s->v.For.body,
               indent + 4);
    em->ncomments = nc;
    /* `else: if` chains (the original statements of an elif chain, conv_dual.c) as
     * `elif`, in a loop: nesting each `if` in its else grew the module quadratically
     * and past Python's 100 indentation levels */
    while (s->kind == PY_K_If && PY_SEQ_LEN(orelse) == 1 && ((py_stmt *)orelse->a[0])->kind == PY_K_If &&
           !cv_is_plain_path(orelse->a[0])) {
      s = orelse->a[0];
      orelse = s->v.If.orelse;
      cv_emit_comments(em, s->lineno, indent);
      py_stmt e = *s;
      e.v.If.body = pass_body(em, s);
      e.v.If.orelse = NULL;
      const char *u = unparse1(em, &e);
      size_t n = strlen(u);
      char *txt = sg_arena_alloc(em->A, n + 3);
      memcpy(txt, "el", 2);
      memcpy(txt + 2, u, n + 1);
      emit_text_lines(em, txt, 0, -1, indent, s->lineno, s->col_offset);
      emit_block(em, s->v.If.body, indent + 4);
    }
    emit_else(em, "else:", orelse, indent, s);
    return;
  }
  case PY_K_With:
  case PY_K_AsyncWith:
    h.v.With.body = pass_body(em, s);
    emit_text_lines(em, unparse1(em, &h), 0, -1, indent, ol, oc);
    emit_block(em, s->v.With.body, indent + 4);
    return;
  case PY_K_Try:
  case PY_K_TryStar: {
    emit_else(em, "try:", s->v.Try.body, indent, s);
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++) {
      py_excepthandler *eh = s->v.Try.handlers->a[i];
      py_excepthandler hh = *eh;
      hh.v.ExceptHandler.body = pass_body(em, s);
      py_excepthandler *hp = &hh;
      py_seq *hs = sg_arena_alloc(em->A, sizeof(py_seq) + sizeof(void *));
      hs->n = 1;
      hs->a[0] = hp;
      h.v.Try.body = pass_body(em, s);
      h.v.Try.handlers = hs;
      h.v.Try.orelse = NULL;
      h.v.Try.finalbody = NULL;
      /* "try:\n    pass\nexcept X:\n    pass\n": line 2 is the handler's header */
      emit_text_lines(em, unparse1(em, &h), 2, 3, indent, eh->lineno, eh->col_offset);
      emit_block(em, eh->v.ExceptHandler.body, indent + 4);
    }
    emit_else(em, "else:", s->v.Try.orelse, indent, s);
    emit_else(em, "finally:", s->v.Try.finalbody, indent, s);
    return;
  }
  case PY_K_Match: {
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++) {
      py_match_case *mc = s->v.Match.cases->a[i];
      py_match_case hc = *mc;
      hc.body = pass_body(em, s);
      py_seq *cs = sg_arena_alloc(em->A, sizeof(py_seq) + sizeof(void *));
      cs->n = 1;
      cs->a[0] = &hc;
      h.v.Match.cases = cs;
      char *t = unparse1(em, &h);
      if (i == 0) emit_text_lines(em, t, 0, 1, indent, ol, oc);
      /* line 1 is "    case ...:" (already indented by 4) */
      emit_text_lines(em, t, 1, 2, indent, ol, oc);
      emit_block(em, mc->body, indent + 8);
    }
    return;
  }
  default: emit_text_lines(em, unparse1(em, &h), 0, 1 << 30, indent, ol, oc); return;
  }
}

static void emit_block(cv_emit *em, const py_seq *b, int indent) {
  if (!PY_SEQ_LEN(b)) {
    sg_buf line = SG_BUF_INIT;
    if (em->base) sg_buf_puts(&line, em->base);
      for (int k = 0; k < indent; k++) sg_buf_putc(&line, ' ');
    sg_buf_puts(&line, "pass");
    sg_buf_putc(&line, '\0');
    cv_emit_line(em, line.data, 0, 0);
    sg_buf_free(&line);
    return;
  }
  for (int i = 0; i < b->n; i++) cv_emit_stmt(em, b->a[i], indent);
}
