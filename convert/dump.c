// SPDX-License-Identifier: Apache-2.0
/*
 * dump.c — the output side of the AST: the helpers behind the generated dumper
 * (py_ast_gen.c), in two flavours: CPython's ast.dump() text, byte for byte (which
 * needs Python's repr() of str, bytes, int, float and complex), and the JSON form of
 * docs/parser.md. Also the one-call entry points py_parse_dump / py_parse_json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_priv.h"
#include "py.h"
#include "unicode_data.h"

/* ------------------------------------------------------------------ repr */

/* Decodes one (generalised, surrogates allowed) UTF-8 sequence. */
static uint32_t utf8_decode(const unsigned char *s, const unsigned char *e, size_t *n) {
  unsigned c = s[0];
  if (c < 0x80 || s + 1 >= e + (c < 0x80)) {
    *n = 1;
    return c;
  }
  if (c < 0xe0 && s + 2 <= e) {
    *n = 2;
    return ((c & 0x1fu) << 6) | (s[1] & 0x3fu);
  }
  if (c < 0xf0 && s + 3 <= e) {
    *n = 3;
    return ((c & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
  }
  if (s + 4 <= e) {
    *n = 4;
    return ((c & 0x07u) << 18) | ((s[1] & 0x3fu) << 12) | ((s[2] & 0x3fu) << 6) | (s[3] & 0x3fu);
  }
  *n = 1;
  return c;
}

void py_repr_str(sg_buf *out, const char *str, size_t len) {
  const unsigned char *s = (const unsigned char *)str, *e = s + len;
  bool sq = memchr(str, '\'', len) != NULL, dq = memchr(str, '"', len) != NULL;
  char q = (sq && !dq) ? '"' : '\'';
  sg_buf_putc(out, q);
  while (s < e) {
    size_t n;
    uint32_t cp = utf8_decode(s, e, &n);
    if (cp == (uint32_t)q || cp == '\\') {
      sg_buf_putc(out, '\\');
      sg_buf_putc(out, (char)cp);
    } else if (cp == '\t') {
      sg_buf_puts(out, "\\t");
    } else if (cp == '\n') {
      sg_buf_puts(out, "\\n");
    } else if (cp == '\r') {
      sg_buf_puts(out, "\\r");
    } else if (cp < 0x20 || cp == 0x7f) {
      sg_buf_printf(out, "\\x%02x", cp);
    } else if (cp < 0x7f) {
      sg_buf_putc(out, (char)cp);
    } else if (py_unicode_printable(cp) && !(cp >= 0xd800 && cp <= 0xdfff)) {
      sg_buf_append(out, s, n);
    } else if (cp <= 0xff) {
      sg_buf_printf(out, "\\x%02x", cp);
    } else if (cp <= 0xffff) {
      sg_buf_printf(out, "\\u%04x", cp);
    } else {
      sg_buf_printf(out, "\\U%08x", cp);
    }
    s += n;
  }
  sg_buf_putc(out, q);
}

static void repr_bytes(sg_buf *out, const char *str, size_t len) {
  bool sq = memchr(str, '\'', len) != NULL, dq = memchr(str, '"', len) != NULL;
  char q = (sq && !dq) ? '"' : '\'';
  sg_buf_putc(out, 'b');
  sg_buf_putc(out, q);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)str[i];
    if (c == (unsigned char)q || c == '\\') {
      sg_buf_putc(out, '\\');
      sg_buf_putc(out, (char)c);
    } else if (c == '\t') sg_buf_puts(out, "\\t");
    else if (c == '\n') sg_buf_puts(out, "\\n");
    else if (c == '\r') sg_buf_puts(out, "\\r");
    else if (c < 0x20 || c >= 0x7f) sg_buf_printf(out, "\\x%02x", c);
    else sg_buf_putc(out, (char)c);
  }
  sg_buf_putc(out, q);
}

/* A JSON string; lone surrogates (possible in Python str) become \\uXXXX escapes so the
 * output stays valid UTF-8. */
static void json_str(sg_buf *out, const char *str, size_t len) {
  const unsigned char *s = (const unsigned char *)str, *e = s + len;
  bool plain = true;
  for (const unsigned char *c = s; c + 2 < e; c++)
    if (*c == 0xed && c[1] >= 0xa0) plain = false;
  if (plain) {
    sg_buf_put_json_string(out, str, len);
    return;
  }
  sg_buf_putc(out, '"');
  while (s < e) {
    size_t n;
    uint32_t cp = utf8_decode(s, e, &n);
    if (cp >= 0xd800 && cp <= 0xdfff) {
      sg_buf_printf(out, "\\u%04x", cp);
    } else if (cp < 0x80) {
      sg_buf tmp = SG_BUF_INIT;
      sg_buf_put_json_string(&tmp, (const char *)s, 1);
      sg_buf_append(out, tmp.data + 1, tmp.len - 2);
      sg_buf_free(&tmp);
    } else {
      sg_buf_append(out, s, n);
    }
    s += n;
  }
  sg_buf_putc(out, '"');
}

/* ------------------------------------------------------------------ dumper helpers */

static void sep(py_dumper *d) {
  if (!d->first) sg_buf_puts(d->out, d->json ? "," : ", ");
  d->first = false;
}

void py_dump_node_begin(py_dumper *d, const char *name) {
  if (d->json) {
    sg_buf_puts(d->out, "{\"_type\":\"");
    sg_buf_puts(d->out, name);
    sg_buf_putc(d->out, '"');
    d->first = false;
  } else {
    sg_buf_puts(d->out, name);
    sg_buf_putc(d->out, '(');
    d->first = true;
  }
}

void py_dump_node_end(py_dumper *d) {
  sg_buf_putc(d->out, d->json ? '}' : ')');
  d->first = false;
}

void py_dump_field(py_dumper *d, const char *name) {
  sep(d);
  if (d->json) {
    sg_buf_putc(d->out, '"');
    sg_buf_puts(d->out, name);
    sg_buf_puts(d->out, "\":");
  } else {
    sg_buf_puts(d->out, name);
    sg_buf_putc(d->out, '=');
  }
}

void py_dump_absent(py_dumper *d, const char *name) {
  if (!d->json) return; /* ast.dump leaves out optional fields that are None */
  py_dump_field(d, name);
  sg_buf_puts(d->out, "null");
}

void py_dump_list_begin(py_dumper *d) { sg_buf_putc(d->out, '['); }
void py_dump_list_sep(py_dumper *d, int i) {
  if (i) sg_buf_puts(d->out, d->json ? "," : ", ");
}
void py_dump_list_end(py_dumper *d) {
  sg_buf_putc(d->out, ']');
  d->first = false;
}

void py_dump_none(py_dumper *d) { sg_buf_puts(d->out, d->json ? "null" : "None"); }

void py_dump_simple(py_dumper *d, const char *name) {
  if (d->json) sg_buf_printf(d->out, "{\"_type\":\"%s\"}", name);
  else sg_buf_printf(d->out, "%s()", name);
}

void py_dump_str(py_dumper *d, const char *s) {
  if (d->json) sg_buf_put_json_string(d->out, s, strlen(s));
  else py_repr_str(d->out, s, strlen(s));
}

void py_dump_int(py_dumper *d, int v) { sg_buf_printf(d->out, "%d", v); }

void py_dump_constant(py_dumper *d, const py_constant *c) {
  sg_buf *o = d->out;
  switch (c->kind) {
  case PY_CONST_NONE: sg_buf_puts(o, d->json ? "null" : "None"); return;
  case PY_CONST_TRUE: sg_buf_puts(o, d->json ? "true" : "True"); return;
  case PY_CONST_FALSE: sg_buf_puts(o, d->json ? "false" : "False"); return;
  case PY_CONST_ELLIPSIS: sg_buf_puts(o, d->json ? "{\"ellipsis\":true}" : "Ellipsis"); return;
  case PY_CONST_INT: sg_buf_append(o, c->s, c->len); return;
  case PY_CONST_FLOAT:
    if (d->json && !isfinite(c->d)) {
      sg_buf_puts(o, "{\"float\":\"");
      sg_buf_put_double_python(o, c->d, true);
      sg_buf_puts(o, "\"}");
      return;
    }
    sg_buf_put_double_python(o, c->d, true);
    return;
  case PY_CONST_COMPLEX:
    if (d->json) sg_buf_puts(o, "{\"imag\":\"");
    sg_buf_put_double_python(o, c->d, false); /* a complex part: "1j" */
    sg_buf_puts(o, d->json ? "\"}" : "j");
    return;
  case PY_CONST_STR:
    if (d->json) json_str(o, c->s, c->len);
    else py_repr_str(o, c->s, c->len);
    return;
  case PY_CONST_BYTES:
    if (d->json) {
      sg_buf_puts(o, "{\"bytes\":");
      sg_buf t = SG_BUF_INIT;
      repr_bytes(&t, c->s, c->len);
      sg_buf_put_json_string(o, t.data, t.len);
      sg_buf_free(&t);
      sg_buf_putc(o, '}');
    } else {
      repr_bytes(o, c->s, c->len);
    }
    return;
  }
}

/* ------------------------------------------------------------------ entry points */

void py_dump_module(const py_mod *mod, bool attrs, sg_buf *out) {
  py_dumper d = {out, attrs, false, true};
  py_dump_mod(&d, mod);
}

void py_dump_expression(const py_expr *e, bool attrs, sg_buf *out) {
  py_dumper d = {out, attrs, false, true};
  py_dump_expr(&d, e);
}

void py_json_module(const py_mod *mod, bool attrs, sg_buf *out) {
  py_dumper d = {out, attrs, true, true};
  py_dump_mod(&d, mod);
}

static sg_code parse_and(const char *src, size_t len, const char *filename, bool attrs,
                         sg_buf *out, sg_error *err, int what) {
  py_ctx ctx;
  py_ctx_init(&ctx);
  py_mod *m = py_parse(&ctx, src, len, filename, err);
  sg_code rc = SG_INVALID_ARGUMENT;
  if (m) {
    if (what == 0) py_dump_module(m, attrs, out);
    else if (what == 1) py_json_module(m, attrs, out);
    else py_unparse_module(m, out);
    rc = SG_OK;
  }
  py_ctx_free(&ctx);
  return rc;
}

sg_code py_parse_dump(const char *src, size_t len, const char *filename, bool attrs, sg_buf *out,
                      sg_error *err) {
  return parse_and(src, len, filename, attrs, out, err, 0);
}

sg_code py_parse_json(const char *src, size_t len, const char *filename, bool attrs, sg_buf *out,
                      sg_error *err) {
  return parse_and(src, len, filename, attrs, out, err, 1);
}

sg_code py_unparse_source(const char *src, size_t len, const char *filename, sg_buf *out,
                          sg_error *err) {
  return parse_and(src, len, filename, false, out, err, 2);
}
