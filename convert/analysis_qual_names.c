// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_qual_names.c — symbols: simple names and qualified names (a.b.c, a[0],
 * a['k'], a[-1], a[i]) numbered densely per analysis. A symbol's text is interned, so
 * the text → symbol map is keyed by pointer.
 */
#include <string.h>

#include "analysis_priv.h"

py_sym an_sym_intern(py_an *an, py_qn_kind kind, const char *text, const char *name,
                     py_sym parent, py_sym index_sym, const py_expr *index) {
  const char *t = sg_intern_str(&an->ctx->names, text);
  void *v;
  if (sg_map_get(&an->sym_by_text, (uint64_t)(uintptr_t)t, &v)) return (py_sym)((intptr_t)v - 1);
  py_sym_info info;
  info.kind = kind;
  info.text = t;
  info.name = name ? sg_intern_str(&an->ctx->names, name) : NULL;
  info.parent = parent;
  info.root = parent == PY_SYM_NONE ? (py_sym)an->syms.len : an->syms.data[parent].root;
  info.index_sym = index_sym;
  info.index = index;
  py_sym s = (py_sym)an->syms.len;
  sg_vec_push(&an->syms, info);
  sg_map_put(&an->sym_by_text, (uint64_t)(uintptr_t)t, (void *)(intptr_t)(s + 1));
  return s;
}

py_sym py_an_sym(py_an *an, const char *name) {
  /* fast path: AST identifiers are already interned in ctx->names, and the map is
   * keyed by interned pointers */
  void *v;
  if (sg_map_get(&an->sym_by_text, (uint64_t)(uintptr_t)name, &v)) return (py_sym)((intptr_t)v - 1);
  return an_sym_intern(an, PY_QN_NAME, name, name, PY_SYM_NONE, PY_SYM_NONE, NULL);
}

/* The text of a subscript index that makes a qualified name, or false. */
static bool index_text(py_an *an, const py_expr *e, sg_buf *out, py_sym *index_sym) {
  *index_sym = PY_SYM_NONE;
  if (e->kind == PY_K_Name) {
    *index_sym = py_an_sym(an, e->v.Name.id);
    sg_buf_puts(out, e->v.Name.id);
    return true;
  }
  bool neg = false;
  if (e->kind == PY_K_UnaryOp && e->v.UnaryOp.op == PY_USub &&
      e->v.UnaryOp.operand->kind == PY_K_Constant) {
    neg = true;
    e = e->v.UnaryOp.operand;
  }
  if (e->kind != PY_K_Constant) return false;
  const py_constant *c = &e->v.Constant.value;
  if (c->kind == PY_CONST_INT) {
    if (neg) sg_buf_putc(out, '-');
    sg_buf_append(out, c->s, c->len);
    return true;
  }
  if (c->kind == PY_CONST_STR && !neg) {
    py_repr_str(out, c->s, c->len);
    return true;
  }
  return false;
}

py_sym py_an_qn(py_an *an, const py_expr *e) {
  if (!e) return PY_SYM_NONE;
  switch (e->kind) {
  case PY_K_Name:
    return py_an_sym(an, e->v.Name.id);
  case PY_K_Attribute: {
    py_sym p = py_an_qn(an, e->v.Attribute.value);
    if (p == PY_SYM_NONE) return PY_SYM_NONE;
    sg_buf b = SG_BUF_INIT;
    sg_buf_puts(&b, an->syms.data[p].text);
    sg_buf_putc(&b, '.');
    sg_buf_puts(&b, e->v.Attribute.attr);
    py_sym s = an_sym_intern(an, PY_QN_ATTR, b.data, e->v.Attribute.attr, p, PY_SYM_NONE, NULL);
    sg_buf_free(&b);
    return s;
  }
  case PY_K_Subscript: {
    py_sym p = py_an_qn(an, e->v.Subscript.value);
    if (p == PY_SYM_NONE) return PY_SYM_NONE;
    sg_buf b = SG_BUF_INIT;
    sg_buf_puts(&b, an->syms.data[p].text);
    sg_buf_putc(&b, '[');
    py_sym is;
    py_sym s = PY_SYM_NONE;
    if (index_text(an, e->v.Subscript.slice, &b, &is)) {
      sg_buf_putc(&b, ']');
      s = an_sym_intern(an, PY_QN_SUBSCRIPT, b.data, NULL, p, is, e->v.Subscript.slice);
    }
    sg_buf_free(&b);
    return s;
  }
  default:
    return PY_SYM_NONE;
  }
}

const py_sym_info *py_an_sym_info(const py_an *an, py_sym s) {
  if (s < 0 || (size_t)s >= an->syms.len) return NULL;
  return &an->syms.data[s];
}

const char *py_an_sym_text(const py_an *an, py_sym s) {
  if (s < 0 || (size_t)s >= an->syms.len) return "?";
  return an->syms.data[s].text;
}

int py_an_sym_count(const py_an *an) { return (int)an->syms.len; }
