// SPDX-License-Identifier: Apache-2.0
/*
 * literals.c — literal tokens into AST constants: numbers (ints of any size turned
 * into decimal digits, floats, imaginary), strings and bytes with every escape, the
 * implicit concatenation of adjacent literals, and f-strings (PEP 701) into JoinedStr
 * / FormattedValue with CPython 3.12's locations for the constant pieces.
 */
#include "parser.h"
#include "unicode_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define A p->arena

/* ------------------------------------------------------------------ numbers */

/* Appends the decimal form of the digits in [s, e) given in base `base`. */
static char *to_decimal(py_parser *p, const char *s, const char *e, int base) {
  size_t n = (size_t)(e - s);
  uint32_t *limbs = sg_xmalloc((n + 2) * sizeof *limbs); /* base 1e9, little endian */
  size_t nl = 0;
  for (const char *c = s; c < e; c++) {
    int d = *c >= '0' && *c <= '9' ? *c - '0' : (*c | 0x20) - 'a' + 10;
    uint64_t carry = (uint64_t)d;
    for (size_t i = 0; i < nl; i++) {
      uint64_t v = (uint64_t)limbs[i] * (uint64_t)base + carry;
      limbs[i] = (uint32_t)(v % 1000000000u);
      carry = v / 1000000000u;
    }
    while (carry) {
      limbs[nl++] = (uint32_t)(carry % 1000000000u);
      carry /= 1000000000u;
    }
  }
  char *out = sg_arena_alloc(p->arena, nl * 9 + 2);
  if (nl == 0) {
    strcpy(out, "0");
  } else {
    size_t k = (size_t)sprintf(out, "%u", limbs[nl - 1]);
    for (size_t i = nl - 1; i-- > 0;) k += (size_t)sprintf(out + k, "%09u", limbs[i]);
  }
  free(limbs);
  return out;
}

py_expr *py_p_number(py_parser *p, const py_tok *t) {
  size_t n = (size_t)(t->end - t->start);
  char *buf = sg_xmalloc(n + 1);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (t->start[i] != '_') buf[k++] = t->start[i];
  buf[k] = 0;
  py_constant c = {0};
  char last = buf[k - 1];
  bool radix = k > 1 && buf[0] == '0' && strchr("xXoObB", buf[1]);
  if (last == 'j' || last == 'J') {
    buf[k - 1] = 0;
    c.kind = PY_CONST_COMPLEX;
    c.d = strtod(buf, NULL);
  } else if (!radix && (strchr(buf, '.') || strchr(buf, 'e') || strchr(buf, 'E'))) {
    c.kind = PY_CONST_FLOAT;
    c.d = strtod(buf, NULL);
  } else {
    c.kind = PY_CONST_INT;
    if (radix) {
      int base = (buf[1] | 0x20) == 'x' ? 16 : (buf[1] | 0x20) == 'o' ? 8 : 2;
      c.s = to_decimal(p, buf + 2, buf + k, base);
    } else {
      const char *d = buf;
      while (*d == '0' && d[1]) d++;
      c.s = sg_arena_strdup(p->arena, d);
    }
    c.len = strlen(c.s);
  }
  free(buf);
  return py_new_Constant(A, c, NULL, t->lineno, t->col, t->end_lineno, t->end_col);
}

/* ------------------------------------------------------------------ escapes */

static void put_utf8(sg_buf *b, uint32_t cp) {
  char s[4];
  if (cp < 0x80) {
    sg_buf_putc(b, (char)cp);
    return;
  }
  if (cp < 0x800) {
    s[0] = (char)(0xc0 | (cp >> 6));
    s[1] = (char)(0x80 | (cp & 0x3f));
    sg_buf_append(b, s, 2);
  } else if (cp < 0x10000) {
    s[0] = (char)(0xe0 | (cp >> 12));
    s[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    s[2] = (char)(0x80 | (cp & 0x3f));
    sg_buf_append(b, s, 3);
  } else {
    s[0] = (char)(0xf0 | (cp >> 18));
    s[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    s[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    s[3] = (char)(0x80 | (cp & 0x3f));
    sg_buf_append(b, s, 4);
  }
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = (char)(c | 0x20);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Decodes the body [s, e) of a literal into out. fbraces: an f-string piece, where
 * '{{' and '}}' stand for one brace. Returns false with an error set. */
static bool decode(py_parser *p, const py_tok *tok, const char *s, const char *e, bool raw,
                   bool bytes, bool fbraces, sg_buf *out) {
  const char *body = s;
  while (s < e) {
    char c = *s;
    if (fbraces && (c == '{' || c == '}') && s + 1 < e && s[1] == c) {
      sg_buf_putc(out, c);
      s += 2;
      continue;
    }
    if (bytes && (unsigned char)c >= 0x80) {
      py_p_error_tok(p, tok, "bytes can only contain ASCII literal characters");
      return false;
    }
    if (c != '\\' || raw) {
      if (raw && c == '\\' && s + 1 < e) { /* a raw backslash still keeps the next char */
        sg_buf_putc(out, c);
        s++;
        if (fbraces && (*s == '{' || *s == '}')) continue;
        c = *s;
        if (bytes && (unsigned char)c >= 0x80) {
          py_p_error_tok(p, tok, "bytes can only contain ASCII literal characters");
          return false;
        }
      }
      sg_buf_putc(out, c);
      s++;
      continue;
    }
    const char *esc = s;
    s++;
    if (s >= e) {
      sg_buf_putc(out, '\\');
      break;
    }
    c = *s++;
    switch (c) {
    case '\n': break;
    case '\\': sg_buf_putc(out, '\\'); break;
    case '\'': sg_buf_putc(out, '\''); break;
    case '"': sg_buf_putc(out, '"'); break;
    case 'a': sg_buf_putc(out, 7); break;
    case 'b': sg_buf_putc(out, 8); break;
    case 'f': sg_buf_putc(out, 12); break;
    case 'n': sg_buf_putc(out, '\n'); break;
    case 'r': sg_buf_putc(out, '\r'); break;
    case 't': sg_buf_putc(out, '\t'); break;
    case 'v': sg_buf_putc(out, 11); break;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
      uint32_t v = (uint32_t)(c - '0');
      for (int i = 0; i < 2 && s < e && *s >= '0' && *s <= '7'; i++) v = v * 8 + (uint32_t)(*s++ - '0');
      if (bytes) sg_buf_putc(out, (char)(v & 0xff));
      else put_utf8(out, v);
      break;
    }
    case 'x': case 'u': case 'U': {
      if (bytes && c != 'x') {
        sg_buf_putc(out, '\\');
        sg_buf_putc(out, c);
        break;
      }
      int nd = c == 'x' ? 2 : c == 'u' ? 4 : 8;
      uint32_t v = 0;
      int i;
      for (i = 0; i < nd && s < e && hexval(*s) >= 0; i++) v = v * 16 + (uint32_t)hexval(*s++);
      if (i < nd) {
        int pos = (int)(esc - body);
        if (bytes)
          py_p_error_tok(p, tok, "(value error) invalid \\x escape at position %d", pos);
        else
          py_p_error_tok(p, tok,
                         "(unicode error) 'unicodeescape' codec can't decode bytes in position "
                         "%d-%d: truncated \\%s escape",
                         pos, pos + 1 + i, c == 'x' ? "xXX" : c == 'u' ? "uXXXX" : "UXXXXXXXX");
        return false;
      }
      if (bytes) {
        sg_buf_putc(out, (char)v);
      } else {
        if (v > 0x10ffff) {
          int pos = (int)(esc - body);
          py_p_error_tok(p, tok,
                         "(unicode error) 'unicodeescape' codec can't decode bytes in position "
                         "%d-%d: illegal Unicode character",
                         pos, pos + 9);
          return false;
        }
        put_utf8(out, v);
      }
      break;
    }
    case 'N':
      if (!bytes) {
        uint32_t cp;
        const char *close = s < e && *s == '{' ? memchr(s, '}', (size_t)(e - s)) : NULL;
        if (!close || !py_unicode_lookup(s + 1, (size_t)(close - s - 1), &cp)) {
          int pos = (int)(esc - body);
          py_p_error_tok(p, tok,
                         "(unicode error) 'unicodeescape' codec can't decode bytes in position "
                         "%d-%d: %s",
                         pos, close ? (int)(close - body) : (int)(e - body) - 1,
                         close ? "unknown Unicode character name" : "malformed \\N character escape");
          return false;
        }
        put_utf8(out, cp);
        s = close + 1;
        break;
      }
      /* fall through */
    default:
      sg_buf_putc(out, '\\');
      if (fbraces && (c == '{' || c == '}')) {
        s--;
        break;
      }
      s--; /* re-read it as a plain character (may be multi-byte) */
      break;
    }
  }
  return true;
}

/* ------------------------------------------------------------------ concatenation */

/* One piece of an implicitly concatenated literal: decoded text with the span CPython
 * gives it, or a FormattedValue. */
typedef struct piece {
  py_expr *node; /* FormattedValue, or NULL for text */
  size_t off, len; /* text in the scratch buffer */
  int line, col, end_line, end_col;
} piece;

typedef SG_VEC(piece) piece_vec;

static bool fstring_parts(py_parser *p, piece_vec *pieces, sg_buf *text, bool raw, bool spec);

static py_constant str_const(py_parser *p, const char *s, size_t len, bool bytes) {
  py_constant c = {0};
  c.kind = bytes ? PY_CONST_BYTES : PY_CONST_STR;
  char *d = sg_arena_alloc(p->arena, len + 1);
  memcpy(d, s, len);
  d[len] = 0;
  c.s = d;
  c.len = len;
  return c;
}

/* Builds JoinedStr values from pieces, merging adjacent text (CPython drops the empty
 * ones at the top level and keeps them in format specs). */
static py_seq *join_pieces(py_parser *p, piece *ps, size_t n, sg_buf *text, bool keep_empty) {
  py_vec v = {0};
  for (size_t i = 0; i < n;) {
    if (ps[i].node) {
      sg_vec_push(&v, ps[i].node);
      i++;
      continue;
    }
    size_t j = i;
    sg_buf merged = SG_BUF_INIT;
    while (j < n && !ps[j].node) {
      if (ps[j].len) sg_buf_append(&merged, text->data + ps[j].off, ps[j].len);
      j++;
    }
    if (merged.len || keep_empty) {
      py_constant c = str_const(p, merged.data ? merged.data : "", merged.len, false);
      sg_vec_push(&v, py_new_Constant(A, c, NULL, ps[i].line, ps[i].col, ps[j - 1].end_line,
                                      ps[j - 1].end_col));
    }
    sg_buf_free(&merged);
    i = j;
  }
  return py_p_seq(p, &v);
}

/* fstring_replacement_field -> '{' (yield_expr | star_expressions) ['='] ['!' NAME]
 *                              [':' fstring_format_spec*] '}' */
static py_expr *replacement_field(py_parser *p, bool raw, py_expr **debug_out) {
  py_tok *lb = py_p_next(p);
  py_pos s = {lb->lineno, lb->col};
  if (py_p_check(p, T_RBRACE) || py_p_check(p, T_EXCLAMATION) || py_p_check(p, T_COLON) ||
      py_p_check(p, T_EQUAL)) {
    py_tok *t = py_p_peek(p);
    if (t->type == T_RBRACE) return py_p_error_tok(p, t, "f-string: valid expression required before '}'");
    if (t->type == T_EXCLAMATION) return py_p_error_tok(p, t, "f-string: valid expression required before '!'");
    if (t->type == T_COLON) return py_p_error_tok(p, t, "f-string: valid expression required before ':'");
    return py_p_error_tok(p, t, "f-string: valid expression required before '='");
  }
  py_expr *e = py_p_check(p, T_YIELD) ? py_p_yield_expr(p) : py_p_star_expressions(p);
  if (!e) return NULL;
  py_expr *debug = NULL;
  if (py_p_check(p, T_EQUAL)) {
    py_p_next(p);
    py_tok *nx = py_p_peek(p);
    const char *ts = lb->end, *te = nx->start;
    /* the debug text is the source, less its comments (as CPython 3.12 does) */
    sg_buf dt = SG_BUF_INIT;
    char quote = 0;
    for (const char *c = ts; c < te; c++) {
      if (quote) {
        if (*c == '\\' && c + 1 < te) sg_buf_putc(&dt, *c++);
        else if (*c == quote) quote = 0;
      } else if (*c == '\'' || *c == '"') {
        quote = *c;
      } else if (*c == '#') {
        while (c + 1 < te && c[1] != '\n') c++;
        continue;
      }
      sg_buf_putc(&dt, *c);
    }
    py_constant c = str_const(p, dt.data ? dt.data : "", dt.len, false);
    sg_buf_free(&dt);
    debug = py_new_Constant(A, c, NULL, lb->end_lineno, lb->end_col, nx->lineno, nx->col);
  }
  int conversion = -1;
  if (py_p_accept(p, T_EXCLAMATION)) {
    py_tok *n = py_p_peek(p);
    if (n->type != T_NAME && !(n->type >= T_KW_FIRST && n->type < T_COUNT))
      return py_p_error_tok(p, n, "f-string: missing conversion character");
    size_t len = (size_t)(n->end - n->start);
    if (len != 1 || (n->start[0] != 's' && n->start[0] != 'r' && n->start[0] != 'a'))
      return py_p_error_tok(p, n,
                            "f-string: invalid conversion character '%.*s': expected 's', 'r', "
                            "or 'a'",
                            (int)len, n->start);
    if (n->lineno != py_p_prev(p)->end_lineno || n->col != py_p_prev(p)->end_col)
      return py_p_error_tok(p, n, "f-string: conversion type must come right after the exclamanation mark");
    conversion = n->start[0];
    py_p_next(p);
  }
  py_expr *spec = NULL;
  if (py_p_check(p, T_COLON)) {
    py_tok *colon = py_p_next(p);
    piece_vec ps = {0};
    sg_buf text = SG_BUF_INIT;
    if (!fstring_parts(p, &ps, &text, raw, true)) {
      sg_vec_free(&ps);
      sg_buf_free(&text);
      return NULL;
    }
    py_tok *rb = py_p_peek(p);
    py_seq *vals = join_pieces(p, ps.data, ps.len, &text, true);
    spec = py_new_JoinedStr(A, vals, colon->lineno, colon->col, rb->lineno, rb->col);
    sg_vec_free(&ps);
    sg_buf_free(&text);
  }
  if (!py_p_check(p, T_RBRACE)) {
    py_tok *t = py_p_peek(p);
    if (p->failed) return NULL;
    if (t->type == T_FSTRING_END || t->type == T_FSTRING_MIDDLE)
      return py_p_error_tok(p, t, "f-string: expecting '}'");
    return py_p_syntax_error(p);
  }
  py_p_next(p);
  if (debug && conversion < 0 && !spec) conversion = 'r';
  py_expr *fv = py_new_FormattedValue(A, e, conversion, spec, LOC(s));
  *debug_out = debug; /* the caller puts the debug text before the value */
  return fv;
}

/* The middle of an f-string or of a format spec: FSTRING_MIDDLE pieces and replacement
 * fields, up to FSTRING_END (or '}' for a spec). */
static bool fstring_parts(py_parser *p, piece_vec *pieces, sg_buf *text, bool raw, bool spec) {
  for (;;) {
    py_tok *t = py_p_peek(p);
    if (p->failed) return false;
    if (t->type == T_FSTRING_MIDDLE) {
      py_p_next(p);
      piece pc = {NULL, text->len, 0, t->lineno, t->col, t->end_lineno, t->end_col};
      if (!decode(p, t, t->start, t->end, raw, false, true, text)) return false;
      pc.len = text->len - pc.off;
      sg_vec_push(pieces, pc);
    } else if (t->type == T_LBRACE) {
      if (!py_p_enter(p)) return false;
      py_expr *dbg = NULL;
      py_expr *fv = replacement_field(p, raw, &dbg);
      py_p_leave(p);
      if (!fv) return false;
      if (dbg) {
        piece dp = {NULL, text->len, dbg->v.Constant.value.len, dbg->lineno, dbg->col_offset,
                    dbg->end_lineno, dbg->end_col_offset};
        sg_buf_append(text, dbg->v.Constant.value.s, dbg->v.Constant.value.len);
        sg_vec_push(pieces, dp);
      }
      piece pc = {fv, 0, 0, 0, 0, 0, 0};
      sg_vec_push(pieces, pc);
    } else if (spec ? t->type == T_RBRACE : t->type == T_FSTRING_END) {
      return true;
    } else {
      if (spec) py_p_error_tok(p, t, "f-string: expecting '}'");
      else py_p_syntax_error(p);
      return false;
    }
  }
}

/* strings -> (STRING | fstring)+ */
py_expr *py_p_strings(py_parser *p) {
  py_pos s = py_p_start(p);
  piece_vec ps = {0};
  sg_buf text = SG_BUF_INIT;
  bool any_f = false, bytes = false, first = true, kind_u = false;
  py_expr *result = NULL;
  for (;;) {
    py_tok *t = py_p_peek(p);
    if (t->type != T_STRING && t->type != T_FSTRING_START) break;
    const char *q = t->start;
    bool raw = false, isb = false, isu = false;
    while (*q != '\'' && *q != '"') {
      char c = (char)(*q | 0x20);
      raw |= c == 'r';
      isb |= c == 'b';
      isu |= c == 'u';
      q++;
    }
    if (first) {
      bytes = isb;
      kind_u = isu;
    } else if (bytes != isb) {
      py_p_error_at(p, t->end_lineno, t->end_col, 0, 0, "cannot mix bytes and nonbytes literals");
      goto done;
    }
    first = false;
    if (t->type == T_STRING) {
      py_p_next(p);
      size_t ql = (q[0] == q[1] && q[1] == q[2] && t->end - q >= 6) ? 3 : 1;
      piece pc = {NULL, text.len, 0, t->lineno, t->col, t->end_lineno, t->end_col};
      if (!decode(p, t, q + ql, t->end - ql, raw, isb, false, &text)) goto done;
      pc.len = text.len - pc.off;
      sg_vec_push(&ps, pc);
    } else {
      any_f = true;
      py_p_next(p);
      if (!fstring_parts(p, &ps, &text, raw, false)) goto done;
      py_p_next(p); /* FSTRING_END */
    }
  }
  if (!any_f) {
    py_constant c = str_const(p, text.data ? text.data : "", text.len, bytes);
    result = py_new_Constant(A, c, kind_u ? sg_intern_str(p->names, "u") : NULL, LOC(s));
  } else {
    py_seq *vals = join_pieces(p, ps.data, ps.len, &text, false);
    result = py_new_JoinedStr(A, vals, LOC(s));
  }
done:
  sg_vec_free(&ps);
  sg_buf_free(&text);
  return result;
}
