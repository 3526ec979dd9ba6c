// SPDX-License-Identifier: Apache-2.0
/*
 * sexpr_read.c — the S-expression reader (docs/sexpr.md "Lexical").
 *
 * A hand-written scanner + recursive reader in the style of Lua's llex/lparser: one
 * function per rule, the rule as a comment on its first line, and a depth counter so
 * deeply nested input is an error, never a stack overflow. Every error says what was
 * expected, at FILE:LINE:COL.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include "gr_ir.h"

typedef struct reader {
  const char *src, *end, *p;
  const char *file;
  int line, col;
  int depth;
  sg_arena *arena;
  sg_intern *strings;
  sg_error *err;
} reader;

static sg_code rd_error(reader *r, int line, int col, const char *fmt, const char *arg) {
  return sg_error_set_at(r->err, SG_INVALID_ARGUMENT, r->file, line, col, fmt, arg);
}

static void advance(reader *r) {
  if (*r->p == '\n') {
    r->line++;
    r->col = 1;
  } else {
    r->col++;
  }
  r->p++;
}

static void skip_space(reader *r) {
  while (r->p < r->end) {
    char c = *r->p;
    if (c == ';') {
      while (r->p < r->end && *r->p != '\n') advance(r);
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      advance(r);
    } else {
      break;
    }
  }
}

static bool is_delim(char c) {
  return c == '(' || c == ')' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
         c == ';' || c == '"' || c == '\f' || c == '\v';
}

static sx *new_sx(reader *r, sx_kind k, int line, int col) {
  sx *x = sg_arena_calloc(r->arena, 1, sizeof *x);
  x->kind = k;
  x->line = line;
  x->col = col;
  return x;
}

/* string -> '"' { char | '\"' | '\\' | '\n' | '\t' } '"' */
static sg_code read_string(reader *r, sx **out) {
  int line = r->line, col = r->col;
  advance(r);
  sg_buf b = SG_BUF_INIT;
  for (;;) {
    if (r->p >= r->end) {
      sg_buf_free(&b);
      return rd_error(r, line, col, "unterminated string: expected '\"' before end of input%s", "");
    }
    char c = *r->p;
    if (c == '"') {
      advance(r);
      break;
    }
    if (c == '\\') {
      advance(r);
      if (r->p >= r->end) continue;
      char e = *r->p;
      char v = e == 'n' ? '\n' : e == 't' ? '\t' : e == '"' ? '"' : e == '\\' ? '\\' : 0;
      if (!v) {
        sg_buf_free(&b);
        char s[2] = {e, 0};
        return rd_error(r, r->line, r->col - 1,
                        "unknown escape '\\%s' in string: expected \\\" \\\\ \\n or \\t", s);
      }
      sg_buf_putc(&b, v);
      advance(r);
      continue;
    }
    sg_buf_putc(&b, c);
    advance(r);
  }
  sx *x = new_sx(r, SX_STR, line, col);
  x->u.str.s = sg_arena_strndup(r->arena, b.data ? b.data : "", b.len);
  x->u.str.len = b.len;
  sg_buf_free(&b);
  *out = x;
  return SG_OK;
}

/* atom -> integer | float | 'true' | 'false' | 'none' | symbol */
static sg_code read_atom(reader *r, sx **out) {
  int line = r->line, col = r->col;
  const char *s = r->p;
  while (r->p < r->end && !is_delim(*r->p)) advance(r);
  size_t n = (size_t)(r->p - s);
  char buf[128];
  if (n < sizeof buf) {
    memcpy(buf, s, n);
    buf[n] = 0;
    char *e;
    bool numeric_start = (buf[0] >= '0' && buf[0] <= '9') ||
                         ((buf[0] == '-' || buf[0] == '+' || buf[0] == '.') &&
                          ((buf[1] >= '0' && buf[1] <= '9') || (buf[1] == '.' && buf[2] >= '0' && buf[2] <= '9')));
    if (numeric_start) {
      errno = 0;
      long long v = strtoll(buf, &e, 10);
      if (*e == 0 && errno == ERANGE)
        return rd_error(r, line, col, "integer '%s' out of range: integers are 64-bit", buf);
      if (*e == 0) {
        sx *x = new_sx(r, SX_INT, line, col);
        x->u.i = v;
        *out = x;
        return SG_OK;
      }
      double d = strtod(buf, &e);
      if (*e == 0) {
        sx *x = new_sx(r, SX_FLOAT, line, col);
        x->u.f = d;
        *out = x;
        return SG_OK;
      }
      return rd_error(r, line, col, "malformed number '%s': expected an integer or a float", buf);
    }
    if (!strcmp(buf, "inf") || !strcmp(buf, "-inf") || !strcmp(buf, "nan")) {
      sx *x = new_sx(r, SX_FLOAT, line, col);
      x->u.f = buf[0] == 'n' ? NAN : buf[0] == '-' ? -INFINITY : INFINITY;
      *out = x;
      return SG_OK;
    }
    if (!strcmp(buf, "true") || !strcmp(buf, "false")) {
      sx *x = new_sx(r, SX_BOOL, line, col);
      x->u.b = buf[0] == 't';
      *out = x;
      return SG_OK;
    }
    if (!strcmp(buf, "none")) {
      *out = new_sx(r, SX_NONE, line, col);
      return SG_OK;
    }
  }
  sx *x = new_sx(r, SX_SYM, line, col);
  x->u.sym = sg_intern_n(r->strings, s, n);
  *out = x;
  return SG_OK;
}

static sg_code read_expr(reader *r, sx **out);

/* list -> '(' { expr } ')' */
static sg_code read_list(reader *r, sx **out) {
  int line = r->line, col = r->col;
  if (++r->depth > GR_MAX_NESTING)
    return sg_error_set_at(r->err, SG_INVALID_ARGUMENT, r->file, line, col,
                           "nesting deeper than %d levels", GR_MAX_NESTING);
  advance(r);
  SG_VEC(sx *) items = {0};
  for (;;) {
    skip_space(r);
    if (r->p >= r->end) {
      sg_vec_free(&items);
      return sg_error_set_at(r->err, SG_INVALID_ARGUMENT, r->file, line, col,
                             "unbalanced parentheses: expected ')' to close the '(' opened "
                             "here before end of input");
    }
    if (*r->p == ')') {
      advance(r);
      break;
    }
    sx *item;
    if (read_expr(r, &item)) {
      sg_vec_free(&items);
      return r->err->code;
    }
    sg_vec_push(&items, item);
  }
  sx *x = new_sx(r, SX_LIST, line, col);
  x->u.list.n = (int)items.len;
  x->u.list.items = sg_arena_alloc(r->arena, sizeof(sx *) * (items.len ? items.len : 1));
  if (items.len) memcpy(x->u.list.items, items.data, sizeof(sx *) * items.len);
  sg_vec_free(&items);
  r->depth--;
  *out = x;
  return SG_OK;
}

/* expr -> list | string | atom */
static sg_code read_expr(reader *r, sx **out) {
  char c = *r->p;
  if (c == '(') return read_list(r, out);
  if (c == ')') return rd_error(r, r->line, r->col, "unbalanced parentheses: unexpected ')'%s", "");
  if (c == '"') return read_string(r, out);
  return read_atom(r, out);
}

/* program -> { expr } EOF */
sg_code sx_read(const char *src, size_t len, const char *file, sg_arena *arena,
                sg_intern *strings, sx ***forms, int *nforms, sg_error *err) {
  reader r = {src, src + len, src, file, 1, 1, 0, arena, strings, err};
  SG_VEC(sx *) v = {0};
  for (;;) {
    skip_space(&r);
    if (r.p >= r.end) break;
    sx *x;
    if (read_expr(&r, &x)) {
      sg_vec_free(&v);
      return err->code;
    }
    sg_vec_push(&v, x);
  }
  *nforms = (int)v.len;
  *forms = sg_arena_alloc(arena, sizeof(sx *) * (v.len ? v.len : 1));
  if (v.len) memcpy(*forms, v.data, sizeof(sx *) * v.len);
  sg_vec_free(&v);
  return SG_OK;
}

bool sx_is_sym(const sx *x, const char *name) {
  return x && x->kind == SX_SYM && strcmp(x->u.sym, name) == 0;
}
