// SPDX-License-Identifier: Apache-2.0
/*
 * parser.c — the parser's core: preparing the source (encoding declaration, BOM,
 * newline normalisation, UTF-8 and NUL checks), the token buffer with backtracking,
 * locations, syntax errors, and the public entry points of py.h.
 */
#include "parser.h"
#include "unicode_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <iconv.h>
#include <string.h>

/* ------------------------------------------------------------------ tokens */

static py_tok error_tok = {T_ENDMARKER, "", "", 0, 0, 0, 0, NULL};

static bool fill(py_parser *p, size_t idx) {
  while (p->ntoks <= idx) {
    if (p->tok_failed) return false;
    size_t b = p->ntoks / PY_TOKBLK - p->first_blk;
    if (b == p->nblk) {
      if (p->nblk == p->blkcap) {
        p->blkcap = p->blkcap ? p->blkcap * 2 : 16;
        p->blk = sg_xrealloc(p->blk, p->blkcap * sizeof *p->blk);
      }
      p->blk[p->nblk++] = sg_xmalloc(PY_TOKBLK * sizeof(py_tok));
    }
    py_tok *t = PY_TOK(p, p->ntoks);
    if (p->ntoks > 0 && PY_TOK(p, p->ntoks - 1)->type == T_ENDMARKER) {
      *t = *PY_TOK(p, p->ntoks - 1);
      p->ntoks++;
      continue;
    }
    if (!py_tok_next(&p->tz, t)) {
      p->tok_failed = true;
      p->failed = true;
      p->msg = p->tz.errmsg;
      p->err_line = p->tz.errline;
      p->err_col = p->tz.errcol;
      p->err_end_line = p->tz.errend_line;
      p->err_end_col = p->tz.errend_col;
      return false;
    }
    p->ntoks++;
  }
  if (idx + 1 > p->fill_max) p->fill_max = idx + 1;
  return true;
}

void py_p_compact(py_parser *p) {
  if (p->pos == 0) return;
  size_t keep_from = (p->pos - 1) / PY_TOKBLK; /* keep the previous token */
  size_t drop = keep_from - p->first_blk;
  if (drop == 0) return;
  for (size_t i = 0; i < drop; i++) free(p->blk[i]);
  memmove(p->blk, p->blk + drop, (p->nblk - drop) * sizeof *p->blk);
  p->nblk -= drop;
  p->first_blk += drop;
}

py_tok *py_p_peek_at(py_parser *p, size_t k) {
  if (!fill(p, p->pos + k)) return &error_tok;
  return PY_TOK(p, p->pos + k);
}

py_tok *py_p_peek(py_parser *p) { return py_p_peek_at(p, 0); }

py_tok *py_p_prev(py_parser *p) {
  if (p->pos == 0 || p->pos - 1 < p->first_blk * PY_TOKBLK) return &error_tok;
  return PY_TOK(p, p->pos - 1);
}

py_tok *py_p_next(py_parser *p) {
  py_tok *t = py_p_peek(p);
  if (t != &error_tok) p->pos++;
  return t;
}

bool py_p_check(py_parser *p, int type) { return py_p_peek(p)->type == type && !p->tok_failed; }

bool py_p_accept(py_parser *p, int type) {
  if (!py_p_check(p, type)) return false;
  p->pos++;
  return true;
}

bool py_p_expect(py_parser *p, int type) {
  if (py_p_accept(p, type)) return true;
  py_p_syntax_error(p);
  return false;
}

bool py_p_is_soft(py_parser *p, const char *kw) {
  py_tok *t = py_p_peek(p);
  return t->type == T_NAME && t->name == kw;
}

py_pos py_p_start(py_parser *p) {
  py_tok *t = py_p_peek(p);
  return (py_pos){t->lineno, t->col};
}

py_pos py_p_end(py_parser *p) {
  size_t i = p->pos;
  while (i > p->first_blk * PY_TOKBLK) {
    py_tok *t = PY_TOK(p, i - 1);
    if (t->type != T_NEWLINE && t->type != T_INDENT && t->type != T_DEDENT &&
        t->type != T_ENDMARKER)
      return (py_pos){t->end_lineno, t->end_col};
    i--;
  }
  return (py_pos){1, 0};
}

/* ------------------------------------------------------------------ errors */

static void *verror(py_parser *p, int line, int col, int end_line, int end_col, const char *fmt,
                    va_list ap) {
  if (p->failed) return NULL;
  static __thread char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  p->failed = true;
  p->msg = sg_arena_strdup(p->arena, buf);
  p->err_line = line;
  p->err_col = col;
  p->err_end_line = end_line;
  p->err_end_col = end_col;
  return NULL;
}

void *py_p_error_at(py_parser *p, int line, int col, int end_line, int end_col, const char *fmt,
                    ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, line, col, end_line, end_col, fmt, ap);
  va_end(ap);
  return NULL;
}

void *py_p_error_tok(py_parser *p, const py_tok *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, t->lineno, t->col, t->end_lineno, t->end_col, fmt, ap);
  va_end(ap);
  return NULL;
}

void *py_p_error_node(py_parser *p, const py_expr *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, e->lineno, e->col_offset, e->end_lineno, e->end_col_offset, fmt, ap);
  va_end(ap);
  return NULL;
}

void *py_p_syntax_error(py_parser *p) {
  if (p->failed) return NULL;
  size_t i = p->fill_max ? p->fill_max - 1 : 0;
  if (i >= p->ntoks || i < p->first_blk * PY_TOKBLK)
    return py_p_error_at(p, 1, 0, 0, 0, "invalid syntax");
  py_tok *t = PY_TOK(p, i);
  if (t->type == T_INDENT)
    return py_p_error_at(p, t->lineno, t->col - 1, 0, 0, "unexpected indent");
  if (t->type == T_DEDENT) return py_p_error_tok(p, t, "unexpected unindent");
  if (t->type == T_ENDMARKER && p->tz.level > 0) {
    int l = p->tz.level - 1;
    return py_p_error_at(p, p->tz.parenline[l], p->tz.parencol[l], 0, 0, "'%c' was never closed",
                         p->tz.parenstack[l]);
  }
  return py_p_error_tok(p, t, "invalid syntax");
}

bool py_p_enter(py_parser *p) {
  if (++p->depth > PY_MAX_DEPTH) {
    py_tok *t = py_p_peek(p);
    py_p_error_tok(p, t, "too many nested parentheses");
    return false;
  }
  return true;
}

void py_p_leave(py_parser *p) { p->depth--; }

/* ------------------------------------------------------------------ sequences */

py_seq *py_p_seq(py_parser *p, py_vec *v) {
  if (v->len == 0) {
    sg_vec_free(v);
    return NULL;
  }
  py_seq *s = sg_arena_alloc(p->arena, sizeof(py_seq) + v->len * sizeof(void *));
  s->n = (int)v->len;
  memcpy(s->a, v->data, v->len * sizeof(void *));
  sg_vec_free(v);
  return s;
}

py_seq *py_p_seq1(py_parser *p, void *x) {
  py_seq *s = sg_arena_alloc(p->arena, sizeof(py_seq) + sizeof(void *));
  s->n = 1;
  s->a[0] = x;
  return s;
}

/* ------------------------------------------------------------------ source */

/* Finds a coding declaration ("coding[:=]\s*([-\w.]+)") in a comment on one of the
 * first two lines. Returns a lowercase name in buf ('-' for '_'), as written in raw. */
static bool find_coding(const char *s, size_t len, char *buf, size_t bufsz, char *raw) {
  const char *end = s + len, *p = s;
  for (int line = 0; line < 2 && p < end; line++) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *q = p;
    while (q < eol && (*q == ' ' || *q == '\t' || *q == '\f')) q++;
    if (q < eol && *q == '#') {
      for (const char *c = q; c + 6 < eol; c++) {
        if (memcmp(c, "coding", 6) == 0 && (c[6] == ':' || c[6] == '=')) {
          const char *n = c + 7;
          while (n < eol && (*n == ' ' || *n == '\t')) n++;
          size_t k = 0;
          while (n < eol && k + 1 < bufsz &&
                 ((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
                  (*n >= '0' && *n <= '9') || *n == '-' || *n == '_' || *n == '.')) {
            char ch = *n++;
            raw[k] = ch;
            raw[k + 1] = 0;
            if (ch >= 'A' && ch <= 'Z') ch = (char)(ch + 32);
            if (ch == '_') ch = '-';
            buf[k++] = ch;
          }
          buf[k] = 0;
          if (k) return true;
        }
      }
    } else if (q < eol) {
      return false; /* a non-comment line ends the search */
    }
    p = eol + 1;
  }
  return false;
}

static bool is_utf8_name(const char *n) {
  return !strcmp(n, "utf-8") || !strncmp(n, "utf-8-", 6) || !strcmp(n, "utf8") ||
         !strncmp(n, "utf8-", 5);
}
static bool is_latin1_name(const char *n) {
  return !strcmp(n, "latin-1") || !strcmp(n, "iso-8859-1") || !strcmp(n, "iso-latin-1") ||
         !strncmp(n, "latin-1-", 8) || !strncmp(n, "iso-8859-1-", 11) ||
         !strncmp(n, "iso-latin-1-", 12) || !strcmp(n, "latin1") || !strcmp(n, "l1");
}

/* Length of the valid UTF-8 sequence at s (surrogates rejected), or 0. */
static size_t utf8_len(const unsigned char *s, const unsigned char *end) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned cp;
  if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07;
  else return 0;
  if ((size_t)(end - s) < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) return 0;
  if (cp >= 0xd800 && cp <= 0xdfff) return 0;
  return n;
}

static size_t encode_utf8(char *o, uint32_t cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) {
    o[0] = (char)(0xc0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  o[0] = (char)(0xe0 | (cp >> 12));
  o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[2] = (char)(0x80 | (cp & 0x3f));
  return 3;
}

/* Decodes a multi-byte source encoding (Shift_JIS, EUC-JP, GBK, Big5, ...) to UTF-8
 * with glibc's iconv, as CPython decodes the whole source before tokenizing; decode
 * errors are worded as CPython's codecs word them, with the byte's position. */
static char *mb_decode(py_parser *p, const py_mb_codec *mb, const char *src, size_t len, size_t *out_len) {
  iconv_t cd = iconv_open("UTF-8", mb->iconv);
  if (cd == (iconv_t)-1) {
    py_p_error_at(p, 0, -1, 0, 0, "unknown encoding: %s", mb->python);
    return NULL;
  }
  /* as CPython: newlines translated to '\n' and one appended if missing, then decoded
   * (error positions count in that text) */
  char *tr = sg_xmalloc(len + 2);
  size_t tn = 0;
  for (size_t i = 0; i < len; i++) {
    if (src[i] == '\r') {
      tr[tn++] = '\n';
      if (i + 1 < len && src[i + 1] == '\n') i++;
    } else {
      tr[tn++] = src[i];
    }
  }
  if (tn == 0 || tr[tn - 1] != '\n') tr[tn++] = '\n';
  src = tr;
  len = tn;
  size_t bad = len;
  if (mb->quirk == 2) /* GBK: glibc takes the single byte 0x80 for the euro sign, Python does not */
    for (size_t i = 0; i < len; i++) {
      unsigned char b = (unsigned char)src[i];
      if (b == 0x80 || b == 0xff) {
        bad = i;
        break;
      }
      if (b > 0x80) i++;
    }
  size_t cap = len * 4 + 16, inleft = bad, oleft = cap;
  char *buf = sg_xmalloc(cap), *in = (char *)src, *o = buf;
  while (inleft || bad < len) {
    if (inleft && iconv(cd, &in, &inleft, &o, &oleft) != (size_t)-1) continue;
    if (!inleft) errno = EILSEQ; /* stopped at the GBK byte found above */
    size_t pos = (size_t)(in - src);
    py_p_error_at(p, 0, -1, 0, 0, "'%s' codec can't decode byte 0x%02x in position %zu: %s", mb->python,
                  (unsigned char)src[pos], pos,
                  errno == EINVAL ? "incomplete multibyte sequence" : "illegal multibyte sequence");
    free(buf);
    free(tr);
    iconv_close(cd);
    return NULL;
  }
  iconv(cd, NULL, NULL, &o, &oleft);
  iconv_close(cd);
  free(tr);
  size_t n = (size_t)(o - buf);
  if (mb->quirk == 1) { /* glibc reads the single bytes 0x5c / 0x7e as JIS X 0201: ¥ and ‾ */
    size_t w = 0;
    for (size_t r = 0; r < n;) {
      if (r + 1 < n && (unsigned char)buf[r] == 0xc2 && (unsigned char)buf[r + 1] == 0xa5) buf[w++] = '\\', r += 2;
      else if (r + 2 < n && !memcmp(buf + r, "\xe2\x80\xbe", 3)) buf[w++] = '~', r += 3;
      else buf[w++] = buf[r++];
    }
    n = w;
  }
  *out_len = n;
  return buf;
}

/* Builds the NUL-terminated, '\n'-normalised UTF-8 text the tokenizer reads. */
static char *prepare_source(py_parser *p, const char *src, size_t len, size_t *out_len) {
  if (memchr(src, 0, len)) {
    py_p_error_at(p, 0, -1, 0, 0, "source code cannot contain null bytes");
    return NULL;
  }
  bool bom = len >= 3 && memcmp(src, "\xef\xbb\xbf", 3) == 0;
  if (bom) src += 3, len -= 3;
  char coding[64], raw[64];
  bool latin1 = false;
  const py_codec *codec = NULL;
  const py_mb_codec *mb = NULL;
  char *decoded = NULL;
  if (find_coding(src, len, coding, sizeof coding, raw)) {
    bool utf8 = !strcmp(coding, "utf-8") || !strncmp(coding, "utf-8-", 6);
    if (is_latin1_name(coding)) latin1 = true;
    else if (!utf8 && !is_utf8_name(coding) && !(codec = py_unicode_codec(coding)) &&
             !(mb = py_unicode_mb_codec(coding))) {
      if (py_unicode_nontext_codec(coding))
        py_p_error_at(p, 0, -1, 0, 0, "'%s' is not a text encoding; use codecs.decode() to handle arbitrary codecs",
                      raw);
      else
        py_p_error_at(p, 0, -1, 0, 0, "unknown encoding: %s", raw);
      return NULL;
    }
    if (bom && !utf8) {
      py_p_error_at(p, 0, -1, 0, 0, "encoding problem: %s with BOM", coding);
      return NULL;
    }
  }
  if (codec && !strcmp(coding, "ascii")) codec = NULL;
  if (mb) { /* decode to UTF-8 first; the rest reads it as UTF-8 */
    if (!(decoded = mb_decode(p, mb, src, len, &len))) return NULL;
    src = decoded;
  }
  char *buf = sg_xmalloc(len * (latin1 || codec ? 4 : 1) + 2);
  size_t n = 0;
  const unsigned char *s = (const unsigned char *)src, *end = s + len;
  int line = 1;
  size_t chars = 0; /* characters read, '\r\n' as one: CPython's decode positions */
  while (s < end) {
    chars++;
    unsigned c = *s;
    if (c == '\r') {
      buf[n++] = '\n';
      s += (s + 1 < end && s[1] == '\n') ? 2 : 1;
      line++;
      continue;
    }
    if (c < 0x80) {
      if (c == '\n') line++;
      buf[n++] = (char)c;
      s++;
      continue;
    }
    if (latin1) {
      buf[n++] = (char)(0xc0 | (c >> 6));
      buf[n++] = (char)(0x80 | (c & 0x3f));
      s++;
      continue;
    }
    if (codec) {
      uint32_t cp = codec->to_cp[c];
      if (cp == 0xffffffffu) {
        free(buf);
        free(decoded);
        py_p_error_at(p, 0, -1, 0, 0,
                      "'charmap' codec can't decode byte 0x%02x in position %zu: character maps to <undefined>", c,
                      chars - 1);
        return NULL;
      }
      n += encode_utf8(buf + n, cp);
      s++;
      continue;
    }
    size_t k = utf8_len(s, end);
    if (!k) {
      free(buf);
      free(decoded);
      py_p_error_at(p, line, -1, 0, 0,
                    "(unicode error) 'utf-8' codec can't decode byte 0x%02x in position %zu: "
                    "invalid start byte",
                    c, (size_t)(s - (const unsigned char *)src));
      return NULL;
    }
    memcpy(buf + n, s, k);
    n += k;
    s += k;
  }
  if (n == 0 || buf[n - 1] != '\n') buf[n++] = '\n';
  buf[n] = 0;
  free(decoded);
  *out_len = n;
  return buf;
}

/* ------------------------------------------------------------------ entry points */

void py_ctx_init(py_ctx *ctx) {
  sg_arena_init(&ctx->arena, 0);
  sg_intern_init(&ctx->names);
}

void py_ctx_free(py_ctx *ctx) {
  sg_arena_free(&ctx->arena);
  sg_intern_free(&ctx->names);
}

py_mod *py_parse(py_ctx *ctx, const char *src, size_t len, const char *filename,
                 sg_error *err) {
  py_parser p;
  memset(&p, 0, sizeof p);
  p.arena = &ctx->arena;
  p.names = &ctx->names;
  p.filename = filename;
  p.kw_match = sg_intern_str(p.names, "match");
  p.kw_case = sg_intern_str(p.names, "case");
  p.kw_type = sg_intern_str(p.names, "type");
  p.kw_underscore = sg_intern_str(p.names, "_");
  size_t n = 0;
  char *text = prepare_source(&p, src, len, &n);
  py_mod *mod = NULL;
  if (text) {
    py_tok_init(&p.tz, text, n, p.names);
    mod = py_p_file(&p);
  }
  if (p.failed || !mod) {
    if (!p.failed) py_p_syntax_error(&p);
    /* As CPython does: after a parser error, tokenize the rest of the input; a
     * tokenizer error there (an unclosed bracket, a bad string...) takes priority. */
    if (text && !p.tok_failed) {
      py_tok t;
      int err_line = p.err_line; /* CPython: the line of the furthest token read */
      if (p.fill_max > 0 && p.fill_max - 1 >= p.first_blk * PY_TOKBLK && p.fill_max - 1 < p.ntoks)
        err_line = PY_TOK(&p, p.fill_max - 1)->lineno;
      while (!p.tz.done && py_tok_next(&p.tz, &t)) {
      }
      bool take = p.tz.failed && p.tz.nfmodes == 0;
      if (take && p.tz.eof_unclosed) take = err_line > p.tz.errline; /* CPython's rule */
      if (take) {
        p.msg = p.tz.errmsg;
        p.err_line = p.tz.errline;
        p.err_col = p.tz.errcol;
      }
    }
    /* CPython's offset is 1-based; -1 means no column */
    int col = p.err_col < 0 ? 0 : p.err_col + 1;
    if (p.err_col >= 0 && text && p.err_line > 0) {
      /* CPython counts the offset in characters of the line, not bytes */
      const char *ls = text;
      for (int l = 1; l < p.err_line && ls; l++) {
        ls = strchr(ls, '\n');
        if (ls) ls++;
      }
      if (ls) {
        int chars = 0;
        for (int b = 0; b < p.err_col && ls[b] && ls[b] != '\n'; b++)
          if (((unsigned char)ls[b] & 0xc0) != 0x80) chars++;
        col = chars + 1;
      }
    }
    sg_error_set_at(err, SG_INVALID_ARGUMENT, filename, p.err_line, col, "%s",
                    p.msg ? p.msg : "invalid syntax");
    mod = NULL;
  }
  for (size_t i = 0; i < p.nblk; i++) free(p.blk[i]);
  free(p.blk);
  free(text);
  return mod;
}
