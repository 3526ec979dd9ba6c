// SPDX-License-Identifier: Apache-2.0
/*
 * tokenizer.c — Python 3.12 tokenizer: turns UTF-8 source into the tokens of
 * tokenizer.h, one at a time (the parser keeps what it needs to backtrack).
 *
 * It does what CPython's Parser/tokenizer.c does for the `ast` module: INDENT/DEDENT
 * from an indentation stack (with the tabs-vs-spaces consistency check), implicit
 * joining inside brackets and explicit joining with backslashes, all string prefixes,
 * PEP 701 f-strings through a stack of modes, numbers with underscores. The input is
 * already normalised by the caller (parser.c): '\n' line ends, a final '\n', NUL at
 * the end, valid UTF-8.
 *
 * Errors carry CPython's message and location; after one, the tokenizer stops.
 */
#include "tokenizer.h"
#include "unicode_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FM_LIT, FM_EXPR, FM_SPEC };

static const char *const kwnames[] = {
    "False", "None",     "True",  "and",    "as",     "assert", "async",  "await",  "break",
    "class", "continue", "def",   "del",    "elif",   "else",   "except", "finally", "for",
    "from",  "global",   "if",    "import", "in",     "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",    "while",  "with",   "yield"};

void py_tok_init(py_tokenizer *t, const char *src, size_t len, sg_intern *names) {
  memset(t, 0, sizeof *t);
  t->src = t->cur = t->line_start = src;
  t->end = src + len;
  t->lineno = 1;
  t->names = names;
  t->atbol = true;
}

const char *py_tok_type_name(int type) {
  static const char *const n[] = {"ENDMARKER", "NAME", "NUMBER", "STRING", "NEWLINE",
                                  "INDENT", "DEDENT", "FSTRING_START", "FSTRING_MIDDLE",
                                  "FSTRING_END"};
  if (type >= 0 && type <= T_FSTRING_END) return n[type];
  if (type >= T_KW_FIRST && type < T_COUNT) return kwnames[type - T_KW_FIRST];
  return "OP";
}

/* ------------------------------------------------------------------ errors */

static bool tok_error(py_tokenizer *t, int line, int col, const char *fmt, ...) SG_PRINTF(4, 5);
static bool tok_error(py_tokenizer *t, int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->errbuf, sizeof t->errbuf, fmt, ap);
  va_end(ap);
  t->failed = true;
  t->errmsg = t->errbuf;
  t->errline = line;
  t->errcol = col;
  t->errend_line = 0;
  t->errend_col = 0;
  return false;
}

static int col_of(const py_tokenizer *t, const char *p) { return (int)(p - t->line_start); }

/* ------------------------------------------------------------------ helpers */

static bool is_id_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static bool is_id_char(unsigned char c) { return is_id_start(c) || (c >= '0' && c <= '9'); }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static void newline_at(py_tokenizer *t, const char *nl) {
  t->lineno++;
  t->line_start = nl + 1;
}

static void set_tok(py_tokenizer *t, py_tok *tok, int type, const char *start, int line,
                    int col) {
  tok->type = type;
  tok->start = start;
  tok->end = t->cur;
  tok->lineno = line;
  tok->col = col;
  tok->end_lineno = t->lineno;
  tok->end_col = col_of(t, t->cur);
  tok->name = NULL;
}

static py_fmode *top_mode(py_tokenizer *t) {
  return t->nfmodes ? &t->fmodes[t->nfmodes - 1] : NULL;
}

/* ------------------------------------------------------------------ numbers */

/* Digits with single underscores between them; returns false on a bad '_'. */
static bool scan_digits(py_tokenizer *t, bool (*ok)(char)) {
  for (;;) {
    while (ok(*t->cur)) t->cur++;
    if (*t->cur != '_') return true;
    t->cur++;
    if (!ok(*t->cur)) {
      tok_error(t, t->lineno, col_of(t, t->cur) - 1, "invalid decimal literal");
      return false;
    }
  }
}
static bool ok_dec(char c) { return is_digit(c); }
static bool ok_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static bool ok_oct(char c) { return c >= '0' && c <= '7'; }
static bool ok_bin(char c) { return c == '0' || c == '1'; }

/* A number may be followed directly by a keyword (1if x else y) but not by a name. */
static bool verify_end_of_number(py_tokenizer *t, const char *kind) {
  unsigned char c = (unsigned char)*t->cur;
  if (!is_id_char(c)) return true;
  static const char *const ok[] = {"and", "else", "for", "if", "in", "is", "not", "or"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    size_t n = strlen(ok[i]);
    if (strncmp(t->cur, ok[i], n) == 0) return true;
  }
  return tok_error(t, t->lineno, col_of(t, t->cur) - 1, "invalid %s literal", kind);
}

static bool scan_exponent_and_imag(py_tokenizer *t) {
  if (*t->cur == 'e' || *t->cur == 'E') {
    const char *save = t->cur;
    t->cur++;
    if (*t->cur == '+' || *t->cur == '-') t->cur++;
    if (!is_digit(*t->cur)) {
      t->cur = save;
      return verify_end_of_number(t, "decimal");
    }
    if (!scan_digits(t, ok_dec)) return false;
  }
  if (*t->cur == 'j' || *t->cur == 'J') {
    t->cur++;
    return verify_end_of_number(t, "imaginary");
  }
  return verify_end_of_number(t, "decimal");
}

/* number -> hex | oct | bin | decimal ['.' digits] [exponent] ['j'] */
static bool scan_number(py_tokenizer *t) {
  const char *p = t->cur;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X' || p[1] == 'o' || p[1] == 'O' ||
                      p[1] == 'b' || p[1] == 'B')) {
    char k = (char)(p[1] | 0x20);
    bool (*ok)(char) = k == 'x' ? ok_hex : k == 'o' ? ok_oct : ok_bin;
    const char *kind = k == 'x' ? "hexadecimal" : k == 'o' ? "octal" : "binary";
    t->cur += 2;
    if (*t->cur == '_') t->cur++;
    if (!ok(*t->cur)) {
      if (is_digit(*t->cur))
        return tok_error(t, t->lineno, col_of(t, t->cur), "invalid digit '%c' in %s literal",
                         *t->cur, kind);
      return tok_error(t, t->lineno, col_of(t, t->cur) - 1, "invalid %s literal", kind);
    }
    for (;;) {
      while (ok(*t->cur)) t->cur++;
      if (*t->cur != '_') break;
      t->cur++;
      if (!ok(*t->cur))
        return tok_error(t, t->lineno, col_of(t, t->cur) - 1, "invalid %s literal", kind);
    }
    if (is_digit(*t->cur))
      return tok_error(t, t->lineno, col_of(t, t->cur), "invalid digit '%c' in %s literal",
                       *t->cur, kind);
    return verify_end_of_number(t, kind);
  }
  if (*p == '.') { /* .5 */
    t->cur++;
    if (!scan_digits(t, ok_dec)) return false;
    return scan_exponent_and_imag(t);
  }
  bool zeros = *p == '0';
  if (!scan_digits(t, ok_dec)) return false;
  bool nonzero_digit = false;
  for (const char *q = p; q < t->cur; q++)
    if (*q != '0' && *q != '_') nonzero_digit = true;
  if (*t->cur == '.') {
    t->cur++;
    if (is_digit(*t->cur) && !scan_digits(t, ok_dec)) return false;
    return scan_exponent_and_imag(t);
  }
  if (*t->cur == 'e' || *t->cur == 'E' || *t->cur == 'j' || *t->cur == 'J')
    return scan_exponent_and_imag(t);
  if (zeros && nonzero_digit)
    return tok_error(t, t->lineno, col_of(t, p),
                     "leading zeros in decimal integer literals are not permitted; use an 0o "
                     "prefix for octal integers");
  return verify_end_of_number(t, "decimal");
}

/* ------------------------------------------------------------------ strings */

/* Is [s, s+n) a string prefix (r, u, b, f and the allowed combinations)? */
static int string_prefix_kind(const char *s, size_t n, bool *is_f, bool *is_raw) {
  bool r = false, b = false, u = false, f = false;
  if (n > 2) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = (char)(s[i] | 0x20);
    if (c == 'r' && !r) r = true;
    else if (c == 'b' && !b) b = true;
    else if (c == 'u' && !u) u = true;
    else if (c == 'f' && !f) f = true;
    else return 0;
  }
  if (u && (n > 1)) return 0;
  if (b && f) return 0;
  *is_f = f;
  *is_raw = r;
  return 1;
}

/* Scans a non-f string whose opening quote is at t->cur. */
static bool scan_string(py_tokenizer *t, int line, int col) {
  char q = *t->cur;
  py_fmode *fm = t->nfmodes ? &t->fmodes[t->nfmodes - 1] : NULL;
  /* in a replacement field, an unterminated string with the f-string's own quote
   * means the field was never closed */
  const char *unterminated = fm && fm->kind == FM_EXPR && fm->quote == q && !fm->triple
                                 ? "f-string: expecting '}'"
                                 : NULL;
  bool triple = t->cur[1] == q && t->cur[2] == q;
  t->cur += triple ? 3 : 1;
  for (;;) {
    char c = *t->cur;
    if (t->cur >= t->end) {
      if (triple)
        return tok_error(t, line, col,
                         "unterminated triple-quoted string literal (detected at line %d)",
                         t->lineno - 1 > line ? t->lineno - 1 : line);
      if (unterminated) return tok_error(t, line, col, "%s", unterminated);
      return tok_error(t, line, col, "unterminated string literal (detected at line %d)", line);
    }
    if (c == q) {
      if (!triple) {
        t->cur++;
        return true;
      }
      if (t->cur[1] == q && t->cur[2] == q) {
        t->cur += 3;
        return true;
      }
      t->cur++;
      continue;
    }
    if (c == '\n') {
      if (!triple && unterminated) return tok_error(t, line, col, "%s", unterminated);
      if (!triple)
        return tok_error(t, line, col, "unterminated string literal (detected at line %d)",
                         line);
      newline_at(t, t->cur);
      t->cur++;
      continue;
    }
    if (c == '\\') {
      t->cur++;
      if (t->cur >= t->end) continue;
      if (*t->cur == '\n') {
        newline_at(t, t->cur);
      }
      t->cur++;
      continue;
    }
    t->cur++;
  }
}

/* Literal text of an f-string (FM_LIT) or of a format spec (FM_SPEC), up to the next
 * replacement field, the end of the spec or the closing quote. */
static bool scan_fstring_middle(py_tokenizer *t, py_fmode *m) {
  bool spec = m->kind == FM_SPEC;
  for (;;) {
    char c = *t->cur;
    if (t->cur >= t->end) {
      if (m->triple)
        return tok_error(t, m->first_line, m->first_col,
                         "unterminated triple-quoted f-string literal (detected at line %d)",
                         t->lineno - 1);
      return tok_error(t, m->first_line, m->first_col,
                       "unterminated f-string literal (detected at line %d)", t->lineno);
    }
    if (c == m->quote && (!m->triple || (t->cur[1] == c && t->cur[2] == c)))
      return true; /* in a spec, the caller reports the missing '}' */
    if (c == '\n') {
      if (!m->triple) {
        if (spec) return true;
        return tok_error(t, m->first_line, m->first_col,
                         "unterminated f-string literal (detected at line %d)", t->lineno);
      }
      newline_at(t, t->cur);
      t->cur++;
      continue;
    }
    if (c == '\\') {
      char n = t->cur[1];
      if (n == '{' || n == '}') {
        t->cur++;
        continue;
      }
      if (!m->raw && n == 'N' && t->cur[2] == '{') {
        t->cur += 3;
        while (t->cur < t->end && *t->cur != '}' && *t->cur != m->quote && *t->cur != '\n')
          t->cur++;
        if (*t->cur == '}') t->cur++;
        continue;
      }
      t->cur++;
      if (*t->cur == '\n') newline_at(t, t->cur);
      if (t->cur < t->end) t->cur++;
      continue;
    }
    if (c == '{') {
      if (!spec && t->cur[1] == '{') {
        t->cur += 2;
        continue;
      }
      return true;
    }
    if (c == '}') {
      if (spec) return true;
      if (t->cur[1] == '}') {
        t->cur += 2;
        continue;
      }
      return tok_error(t, t->lineno, col_of(t, t->cur), "f-string: single '}' is not allowed");
    }
    t->cur++;
  }
}

/* ------------------------------------------------------------------ brackets */

static bool open_bracket(py_tokenizer *t, char c, int line, int col) {
  if (t->level >= PY_MAX_PAREN)
    return tok_error(t, line, col, "too many nested parentheses");
  t->parenstack[t->level] = c;
  t->parenline[t->level] = line;
  t->parencol[t->level] = col;
  t->level++;
  return true;
}

static bool close_bracket(py_tokenizer *t, char c, int line, int col) {
  if (t->level == 0) return tok_error(t, line, col, "unmatched '%c'", c);
  t->level--;
  char o = t->parenstack[t->level];
  if ((o == '(' && c != ')') || (o == '[' && c != ']') || (o == '{' && c != '}')) {
    if (t->parenline[t->level] != line)
      return tok_error(t, line, col,
                       "closing parenthesis '%c' does not match opening parenthesis '%c' on "
                       "line %d",
                       c, o, t->parenline[t->level]);
    return tok_error(t, line, col,
                     "closing parenthesis '%c' does not match opening parenthesis '%c'", c, o);
  }
  return true;
}

/* ------------------------------------------------------------------ operators */

static int op3(const char *p) {
  if (p[0] == '*' && p[1] == '*' && p[2] == '=') return T_DOUBLESTAREQUAL;
  if (p[0] == '.' && p[1] == '.' && p[2] == '.') return T_ELLIPSIS;
  if (p[0] == '<' && p[1] == '<' && p[2] == '=') return T_LEFTSHIFTEQUAL;
  if (p[0] == '>' && p[1] == '>' && p[2] == '=') return T_RIGHTSHIFTEQUAL;
  if (p[0] == '/' && p[1] == '/' && p[2] == '=') return T_DOUBLESLASHEQUAL;
  return -1;
}

static int op2(const char *p) {
  switch (p[0]) {
  case '!': return p[1] == '=' ? T_NOTEQUAL : -1;
  case '%': return p[1] == '=' ? T_PERCENTEQUAL : -1;
  case '&': return p[1] == '=' ? T_AMPEREQUAL : -1;
  case '*': return p[1] == '*' ? T_DOUBLESTAR : p[1] == '=' ? T_STAREQUAL : -1;
  case '+': return p[1] == '=' ? T_PLUSEQUAL : -1;
  case '-': return p[1] == '=' ? T_MINEQUAL : p[1] == '>' ? T_RARROW : -1;
  case '/': return p[1] == '/' ? T_DOUBLESLASH : p[1] == '=' ? T_SLASHEQUAL : -1;
  case ':': return p[1] == '=' ? T_COLONEQUAL : -1;
  case '<':
    return p[1] == '<' ? T_LEFTSHIFT : p[1] == '=' ? T_LESSEQUAL : p[1] == '>' ? T_NOTEQUAL : -1;
  case '=': return p[1] == '=' ? T_EQEQUAL : -1;
  case '>': return p[1] == '=' ? T_GREATEREQUAL : p[1] == '>' ? T_RIGHTSHIFT : -1;
  case '@': return p[1] == '=' ? T_ATEQUAL : -1;
  case '^': return p[1] == '=' ? T_CIRCUMFLEXEQUAL : -1;
  case '|': return p[1] == '=' ? T_VBAREQUAL : -1;
  default: return -1;
  }
}

static int op1(char c) {
  switch (c) {
  case '(': return T_LPAR;
  case ')': return T_RPAR;
  case '[': return T_LSQB;
  case ']': return T_RSQB;
  case '{': return T_LBRACE;
  case '}': return T_RBRACE;
  case ':': return T_COLON;
  case ',': return T_COMMA;
  case ';': return T_SEMI;
  case '+': return T_PLUS;
  case '-': return T_MINUS;
  case '*': return T_STAR;
  case '/': return T_SLASH;
  case '|': return T_VBAR;
  case '&': return T_AMPER;
  case '<': return T_LESS;
  case '>': return T_GREATER;
  case '=': return T_EQUAL;
  case '.': return T_DOT;
  case '%': return T_PERCENT;
  case '~': return T_TILDE;
  case '^': return T_CIRCUMFLEX;
  case '@': return T_AT;
  case '!': return T_EXCLAMATION;
  default: return -1;
  }
}

/* ------------------------------------------------------------------ indentation */

/* At the beginning of a logical line: measure the indentation and queue
 * INDENT/DEDENT tokens. Blank and comment-only lines do not count. */
static bool handle_indentation(py_tokenizer *t) {
  int col = 0, altcol = 0;
  const char *p = t->cur;
  for (;; p++) {
    if (*p == ' ') col++, altcol++;
    else if (*p == '\t') col = (col / 8 + 1) * 8, altcol++;
    else if (*p == '\f') col = altcol = 0;
    else break;
  }
  t->cur = p;
  if (*p == '#' || *p == '\n' || p >= t->end || (*p == '\\' && p[1] == '\n')) return true;
  if (t->level > 0) return true;
  int i = t->indent;
  if (col == t->indstack[i]) {
    if (altcol != t->altindstack[i]) goto tab_error;
  } else if (col > t->indstack[i]) {
    if (i + 1 >= PY_MAX_INDENT)
      return tok_error(t, t->lineno, col_of(t, p), "too many levels of indentation");
    if (altcol <= t->altindstack[i]) goto tab_error;
    t->pending++;
    t->indent++;
    t->indstack[t->indent] = col;
    t->altindstack[t->indent] = altcol;
  } else {
    while (t->indent > 0 && col < t->indstack[t->indent]) {
      t->pending--;
      t->indent--;
    }
    if (col != t->indstack[t->indent]) {
      tok_error(t, t->lineno, col_of(t, p), "unindent does not match any outer indentation level");
      t->errcol = (int)(strchr(p, '\n') - t->line_start);
      return false;
    }
    if (altcol != t->altindstack[t->indent]) goto tab_error;
  }
  return true;
tab_error:
  return tok_error(t, t->lineno, 0, "inconsistent use of tabs and spaces in indentation");
}

/* ------------------------------------------------------------------ main loop */

static bool emit_name(py_tokenizer *t, py_tok *tok, const char *start, int line, int col) {
  set_tok(t, tok, T_NAME, start, line, col);
  size_t n = (size_t)(t->cur - start);
  tok->name = sg_intern_n(t->names, start, n);
  if (n >= 2 && n <= 8 && ((*start >= 'a' && *start <= 'z') || *start == 'F' || *start == 'N' ||
                           *start == 'T')) {
    for (int k = 0; k < T_COUNT - T_KW_FIRST; k++)
      if (strlen(kwnames[k]) == n && memcmp(kwnames[k], start, n) == 0) {
        tok->type = T_KW_FIRST + k;
        break;
      }
  }
  return true;
}

static uint32_t decode_utf8(const char *s, int *n) {
  const unsigned char *u = (const unsigned char *)s;
  if (u[0] < 0x80) return *n = 1, u[0];
  if (u[0] < 0xe0) return *n = 2, ((u[0] & 0x1fu) << 6) | (u[1] & 0x3fu);
  if (u[0] < 0xf0) return *n = 3, ((u[0] & 0x0fu) << 12) | ((u[1] & 0x3fu) << 6) | (u[2] & 0x3fu);
  return *n = 4, ((u[0] & 0x07u) << 18) | ((u[1] & 0x3fu) << 12) | ((u[2] & 0x3fu) << 6) |
                     (u[3] & 0x3fu);
}

/* A name with non-ASCII characters: each must be XID_Start/XID_Continue (checked on the
 * name as written, like CPython's tokenizer); then the whole name is NFKC-normalised
 * (composition included), as CPython's parser does. */
static bool emit_unicode_name(py_tokenizer *t, py_tok *tok, const char *start, int line,
                              int col) {
  for (const char *p = start; p < t->cur;) {
    int n;
    uint32_t cp = decode_utf8(p, &n);
    bool ok = cp < 0x80 ? (p == start ? is_id_start((unsigned char)cp) : is_id_char((unsigned char)cp))
                        : (p == start ? py_unicode_id_start(cp) : py_unicode_id_continue(cp));
    if (!ok) /* CPython checks the whole name; report the first bad character */
      return tok_error(t, line, col_of(t, p), "invalid character '%.*s' (U+%04X)", n, p,
                       (unsigned)cp);
    p += n;
  }
  set_tok(t, tok, T_NAME, start, line, col);
  size_t nlen;
  char *norm = py_unicode_nfkc(start, (size_t)(t->cur - start), &nlen);
  tok->name = sg_intern_n(t->names, norm, nlen);
  free(norm);
  return true;
}

static bool next_in_fstring_literal(py_tokenizer *t, py_tok *tok, py_fmode *m) {
  const char *start = t->cur;
  int line = t->lineno, col = col_of(t, start);
  if (m->kind == FM_LIT) {
    char q = m->quote;
    if (*t->cur == q && (!m->triple || (t->cur[1] == q && t->cur[2] == q))) {
      t->cur += m->triple ? 3 : 1;
      set_tok(t, tok, T_FSTRING_END, start, line, col);
      t->nfmodes--;
      return true;
    }
    if (*t->cur == '{' && t->cur[1] != '{') {
      if (!open_bracket(t, '{', line, col)) return false;
      t->cur++;
      set_tok(t, tok, T_LBRACE, start, line, col);
      if (t->nfmodes >= PY_MAX_FMODE) return tok_error(t, line, col, "too many nested f-strings");
      py_fmode *e = &t->fmodes[t->nfmodes++];
      *e = *m;
      e->kind = FM_EXPR;
      e->level = t->level;
      return true;
    }
    if (!scan_fstring_middle(t, m)) return false;
    set_tok(t, tok, T_FSTRING_MIDDLE, start, line, col);
    return true;
  }
  /* FM_SPEC */
  if (*t->cur == '{') {
    if (!open_bracket(t, '{', line, col)) return false;
    t->cur++;
    set_tok(t, tok, T_LBRACE, start, line, col);
    m->after_field = false;
    if (t->nfmodes >= PY_MAX_FMODE) return tok_error(t, line, col, "too many nested f-strings");
    py_fmode *e = &t->fmodes[t->nfmodes++];
    *e = *m;
    e->kind = FM_EXPR;
    e->level = t->level;
    return true;
  }
  if (*t->cur == '}') {
    if (m->after_field) { /* CPython 3.12 emits an empty piece here */
      m->after_field = false;
      set_tok(t, tok, T_FSTRING_MIDDLE, start, line, col);
      return true;
    }
    if (!close_bracket(t, '}', line, col)) return false;
    t->cur++;
    set_tok(t, tok, T_RBRACE, start, line, col);
    t->nfmodes--;
    py_fmode *below = top_mode(t);
    if (below && below->kind == FM_SPEC) below->after_field = true;
    return true;
  }
  m->after_field = false;
  if (!scan_fstring_middle(t, m)) return false;
  if (t->cur == start)
    return tok_error(t, line, col, "f-string: expecting '}'");
  set_tok(t, tok, T_FSTRING_MIDDLE, start, line, col);
  return true;
}

bool py_tok_next(py_tokenizer *t, py_tok *tok) {
  if (t->failed) return false;
again:
  if (t->pending != 0) {
    int type = t->pending > 0 ? T_INDENT : T_DEDENT;
    t->pending += t->pending > 0 ? -1 : 1;
    set_tok(t, tok, type, t->cur, t->lineno, col_of(t, t->cur));
    return true;
  }
  py_fmode *m = top_mode(t);
  if (m && m->kind != FM_EXPR) return next_in_fstring_literal(t, tok, m);

  if (t->atbol) {
    t->atbol = false;
    if (!handle_indentation(t)) return false;
    if (t->pending != 0) goto again;
  }
  /* whitespace and comments */
  while (*t->cur == ' ' || *t->cur == '\t' || *t->cur == '\f') t->cur++;
  if (*t->cur == '#') {
    while (*t->cur != '\n' && t->cur < t->end) t->cur++;
  }
  const char *start = t->cur;
  int line = t->lineno, col = col_of(t, start);

  if (t->cur >= t->end) {
    /* CPython puts the end-of-input tokens on the input's last newline */
    if (t->end > t->src) {
      const char *ls = t->end - 1;
      while (ls > t->src && ls[-1] != '\n') ls--;
      line = t->lineno > 1 ? t->lineno - 1 : 1;
      col = (int)(t->end - 1 - ls);
    }
    if (m) {
      return tok_error(t, m->first_line, m->first_col,
                       m->triple ? "unterminated triple-quoted f-string literal (detected at "
                                   "line %d)"
                                 : "unterminated f-string literal (detected at line %d)",
                       t->lineno > 1 ? t->lineno - 1 : 1);
    }
    if (t->level > 0) {
      int l = t->level - 1;
      tok_error(t, t->parenline[l], t->parencol[l], "'%c' was never closed", t->parenstack[l]);
      t->eof_unclosed = true;
      return false;
    }
    if (t->line_has_tokens) { /* only if the input lacks the final newline */
      t->line_has_tokens = false;
      set_tok(t, tok, T_NEWLINE, start, line, col);
      return true;
    }
    if (t->indent > 0) {
      t->indent--;
      set_tok(t, tok, T_DEDENT, start, line, col);
      return true;
    }
    set_tok(t, tok, T_ENDMARKER, start, line, col);
    t->done = true;
    return true;
  }

  char c = *t->cur;
  if (c == '\n') {
    t->cur++;
    bool blank = !t->line_has_tokens;
    if (t->level > 0 || blank) {
      newline_at(t, start);
      if (t->level == 0) t->atbol = true;
      goto again;
    }
    set_tok(t, tok, T_NEWLINE, start, line, col);
    newline_at(t, start);
    t->atbol = true;
    t->line_has_tokens = false;
    return true;
  }
  if (c == '\\') {
    if (t->cur[1] == '\n') {
      t->cur += 2;
      newline_at(t, t->cur - 1);
      if (t->cur >= t->end)
        return tok_error(t, t->lineno, 0, "unexpected EOF while parsing");
      goto again;
    }
    return tok_error(t, line, col + 1, "unexpected character after line continuation character");
  }
  t->line_has_tokens = true;

  /* names and string prefixes */
  if (is_id_start((unsigned char)c)) {
    while (is_id_char((unsigned char)*t->cur)) t->cur++;
    char q = *t->cur;
    bool is_f = false, is_raw = false;
    if ((q == '"' || q == '\'') &&
        string_prefix_kind(start, (size_t)(t->cur - start), &is_f, &is_raw)) {
      if (!is_f) {
        if (!scan_string(t, line, col)) return false;
        set_tok(t, tok, T_STRING, start, line, col);
        return true;
      }
      bool triple = t->cur[1] == q && t->cur[2] == q;
      t->cur += triple ? 3 : 1;
      set_tok(t, tok, T_FSTRING_START, start, line, col);
      if (t->nfmodes >= PY_MAX_FMODE) return tok_error(t, line, col, "too many nested f-strings");
      py_fmode *f = &t->fmodes[t->nfmodes++];
      memset(f, 0, sizeof *f);
      f->kind = FM_LIT;
      f->quote = q;
      f->triple = triple;
      f->raw = is_raw;
      f->first_line = line;
      f->first_col = col;
      return true;
    }
    bool ascii = true;
    for (const char *p = start; p < t->cur; p++)
      if ((unsigned char)*p >= 0x80) ascii = false;
    if (!ascii) return emit_unicode_name(t, tok, start, line, col);
    return emit_name(t, tok, start, line, col);
  }
  if (c == '"' || c == '\'') {
    if (!scan_string(t, line, col)) return false;
    set_tok(t, tok, T_STRING, start, line, col);
    return true;
  }
  if (is_digit(c) || (c == '.' && is_digit(t->cur[1]))) {
    if (!scan_number(t)) return false;
    set_tok(t, tok, T_NUMBER, start, line, col);
    return true;
  }
  /* operators */
  int type = op3(t->cur);
  int n = 3;
  if (type < 0) type = op2(t->cur), n = 2;
  if (type < 0) type = op1(c), n = 1;
  if (type < 0) {
    if (c == '$' || c == '?' || c == '`') return tok_error(t, line, col, "invalid syntax");
    if ((unsigned char)c < 0x80)
      return tok_error(t, line, col, "invalid non-printable character U+%04X", (unsigned)c);
    return tok_error(t, line, col, "invalid character '%c' (U+%04X)", c, (unsigned)c);
  }
  if (m && t->level == m->level) {
    /* inside a replacement field, at its own bracket level */
    if (c == ':' && type != T_COLON) type = T_COLON, n = 1; /* f"{x:=10}": a spec "=10" */
    if (type == T_COLON) {
      t->cur += 1;
      set_tok(t, tok, T_COLON, start, line, col);
      m->kind = FM_SPEC;
      m->after_field = false;
      return true;
    }
    if (type == T_RBRACE) {
      if (!close_bracket(t, '}', line, col)) return false;
      t->cur += 1;
      set_tok(t, tok, T_RBRACE, start, line, col);
      t->nfmodes--;
      py_fmode *below = top_mode(t);
      if (below && below->kind == FM_SPEC) below->after_field = true;
      return true;
    }
  }
  t->cur += n;
  if (type == T_LPAR || type == T_LSQB || type == T_LBRACE) {
    if (!open_bracket(t, c, line, col)) return false;
  } else if (type == T_RPAR || type == T_RSQB || type == T_RBRACE) {
    if (m && t->level <= m->level && c != '}') {
      /* ')' closing the '{' of a replacement field */
      return tok_error(t, line, col,
                       "f-string: closing parenthesis '%c' does not match opening parenthesis "
                       "'{'",
                       c);
    }
    if (!close_bracket(t, c, line, col)) return false;
  }
  set_tok(t, tok, type, start, line, col);
  return true;
}
