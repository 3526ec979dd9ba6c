// SPDX-License-Identifier: Apache-2.0
/*
 * py.h — the public API of convert/: stagd's Python 3.12 front end.
 *
 *   source ─► py_parse ─► py_mod (arena-allocated AST, exactly CPython 3.12's `ast`
 *   node kinds and fields, generated from python.asdl) ─► py_dump / py_unparse / the
 *   converter passes.
 *
 * Locations are CPython's: 1-based lines, 0-based UTF-8 byte columns. Syntax errors
 * carry CPython's message; err->line / err->col are CPython's lineno / offset
 * (offset 1-based).
 *
 * Prefix: py_.
 */
#ifndef STAGD_CONVERT_PY_H
#define STAGD_CONVERT_PY_H

#include "sg.h"
#include "py_ast_gen.h"

/* ------------------------------------------------------------ one-call helpers */

/* Parse src (len bytes, need not be NUL-terminated) and append CPython 3.12's
 * ast.dump(ast.parse(src), include_attributes=attrs) to out. On a syntax error return
 * SG_INVALID_ARGUMENT with err->message CPython's message, err->file = filename,
 * err->line/err->col = CPython's lineno/offset (1-based). */
sg_code py_parse_dump(const char *src, size_t len, const char *filename, bool attrs, sg_buf *out,
                      sg_error *err);
/* Parse then unparse: append source text whose AST equals the input's. */
sg_code py_unparse_source(const char *src, size_t len, const char *filename, sg_buf *out,
                          sg_error *err);
/* Parse and append the JSON form of the AST (schema documented in docs/parser.md). */
sg_code py_parse_json(const char *src, size_t len, const char *filename, bool attrs, sg_buf *out,
                      sg_error *err);

/* ------------------------------------------------------------ lower-level API */

/* Everything a parse produces lives in ctx: the AST nodes in ctx->arena, identifiers
 * interned in ctx->names (equal names are equal pointers). */
typedef struct py_ctx {
  sg_arena arena;
  sg_intern names;
} py_ctx;

void py_ctx_init(py_ctx *ctx);
void py_ctx_free(py_ctx *ctx);

/* Parses a module (like ast.parse(src, mode='exec')). Returns NULL on a syntax error
 * (err filled as for py_parse_dump). The tree lives until py_ctx_free. */
py_mod *py_parse(py_ctx *ctx, const char *src, size_t len, const char *filename, sg_error *err);

/* Appends ast.dump(node, include_attributes=attrs) of a module / expression. */
void py_dump_module(const py_mod *mod, bool attrs, sg_buf *out);
void py_dump_expression(const py_expr *e, bool attrs, sg_buf *out);
/* Appends the JSON form (docs/parser.md). */
void py_json_module(const py_mod *mod, bool attrs, sg_buf *out);

/* Appends Python source for mod (ast.unparse-like; parses back to an equal AST). */
void py_unparse_module(const py_mod *mod, sg_buf *out);
void py_unparse_expr(const py_expr *e, sg_buf *out);

/* Python's repr() of a str constant given as UTF-8 (surrogates allowed). */
void py_repr_str(sg_buf *out, const char *s, size_t len);

#endif
