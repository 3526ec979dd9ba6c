// SPDX-License-Identifier: Apache-2.0
/*
 * convert.h — the public API of the converter (AutoGraph §7.2 passes, Snek style):
 * Python source in, the module of docs/runtime.md out, with a source map (converted
 * line → original line/column) and located diagnostics for what cannot be converted.
 * See docs/converter.md.
 *
 * Prefix: py_conv_ / py_convert.
 */
#ifndef STAGD_CONVERT_CONVERT_H
#define STAGD_CONVERT_CONVERT_H

#include "py.h"

typedef enum py_conv_style {
  PY_STYLE_AUTOGRAPH = 0,
  PY_STYLE_SNEK = 1,
} py_conv_style;

typedef enum py_diag_severity {
  PY_DIAG_ERROR = 1,
  PY_DIAG_WARNING = 2,
  PY_DIAG_INFO = 3,
} py_diag_severity;

/* One diagnostic. Lines 1-based, columns 1-based (UTF-8 bytes). */
typedef struct py_diag {
  py_diag_severity severity;
  const char *code;    /* "reserved-name", "unsupported-construct", "unknown-function" */
  const char *message; /* what and why */
  const char *hint;    /* how to fix or work around it */
  int line, col, end_line, end_col;
} py_diag;

typedef struct py_srcmap_entry {
  int converted_line; /* 1-based line of the converted module */
  int line, col;      /* original line (1-based) and column (1-based) */
} py_srcmap_entry;

/* Everything one conversion produces; strings live in `arena`. */
typedef struct py_conv_result {
  sg_buf code;
  py_diag *diags;
  int ndiags;
  py_srcmap_entry *map;
  int nmap;
  int nconverted; /* functions converted */
  sg_arena arena;
} py_conv_result;

/* Converts src. `function` (NULL or "" = every function) names one function to
 * convert: "f" or "Class.method". On a syntax error returns SG_INVALID_ARGUMENT with err
 * filled exactly as py_parse fills it (nothing in out to free in that case besides
 * py_conv_result_free, which is always safe). Never fails on valid Python: what it
 * cannot convert is left as is and reported in out->diags. */
sg_code py_convert(const char *src, size_t len, const char *filename, py_conv_style style,
                   const char *function, py_conv_result *out, sg_error *err);
void py_conv_result_free(py_conv_result *r);

#endif
