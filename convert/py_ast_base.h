// SPDX-License-Identifier: Apache-2.0
/*
 * py_ast_base.h — the hand-written pieces the generated AST (py_ast_gen.h) builds on:
 * sequences, constant values and the dumper state. Included by py_ast_gen.h; users
 * include py.h.
 */
#ifndef STAGD_CONVERT_PY_AST_BASE_H
#define STAGD_CONVERT_PY_AST_BASE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "sg.h"

/* A sequence of nodes (or identifiers, or enum values cast through intptr_t),
 * arena-allocated. An empty sequence may be NULL. */
typedef struct py_seq {
  int n;
  void *a[];
} py_seq;
#define PY_SEQ_LEN(s) ((s) ? (s)->n : 0)

/* A Python constant as ast.Constant holds it. */
typedef enum py_const_kind {
  PY_CONST_NONE,
  PY_CONST_TRUE,
  PY_CONST_FALSE,
  PY_CONST_ELLIPSIS,
  PY_CONST_INT,     /* s: decimal digits, no sign, no leading zeros */
  PY_CONST_FLOAT,   /* d */
  PY_CONST_COMPLEX, /* d: the imaginary part (literals are purely imaginary) */
  PY_CONST_STR,     /* s/len: UTF-8; lone surrogates encoded as 3-byte sequences */
  PY_CONST_BYTES,   /* s/len: raw bytes */
} py_const_kind;

typedef struct py_constant {
  py_const_kind kind;
  size_t len;
  const char *s;
  double d;
} py_constant;

/* State of one dump: text (ast.dump) or JSON, with or without location attributes. */
typedef struct py_dumper {
  sg_buf *out;
  bool attrs;
  bool json;
  bool first; /* no field written yet in the current node */
} py_dumper;

#endif
