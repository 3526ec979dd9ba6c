// SPDX-License-Identifier: Apache-2.0
/*
 * tokenizer.h — private interface of the Python 3.12 tokenizer (tokenizer.c), used
 * by the parser. Tokens point into the (UTF-8, NUL-terminated) source buffer; line
 * and column are CPython's: 1-based lines, 0-based UTF-8 byte columns.
 *
 * f-strings follow PEP 701: FSTRING_START, then FSTRING_MIDDLE literal pieces and
 * '{' expression tokens '}' replacement fields, then FSTRING_END. The tokenizer keeps
 * a small stack of f-string modes to know when a '}' or ':' belongs to the f-string.
 */
#ifndef STAGD_CONVERT_TOKENIZER_H
#define STAGD_CONVERT_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include "sg.h"

typedef enum py_toktype {
  T_ENDMARKER, T_NAME, T_NUMBER, T_STRING, T_NEWLINE, T_INDENT, T_DEDENT,
  T_FSTRING_START, T_FSTRING_MIDDLE, T_FSTRING_END,
  /* operators */
  T_LPAR, T_RPAR, T_LSQB, T_RSQB, T_LBRACE, T_RBRACE, T_COLON, T_COMMA, T_SEMI,
  T_PLUS, T_MINUS, T_STAR, T_SLASH, T_VBAR, T_AMPER, T_LESS, T_GREATER, T_EQUAL,
  T_DOT, T_PERCENT, T_EQEQUAL, T_NOTEQUAL, T_LESSEQUAL, T_GREATEREQUAL, T_TILDE,
  T_CIRCUMFLEX, T_LEFTSHIFT, T_RIGHTSHIFT, T_DOUBLESTAR, T_PLUSEQUAL, T_MINEQUAL,
  T_STAREQUAL, T_SLASHEQUAL, T_PERCENTEQUAL, T_AMPEREQUAL, T_VBAREQUAL,
  T_CIRCUMFLEXEQUAL, T_LEFTSHIFTEQUAL, T_RIGHTSHIFTEQUAL, T_DOUBLESTAREQUAL,
  T_DOUBLESLASH, T_DOUBLESLASHEQUAL, T_AT, T_ATEQUAL, T_RARROW, T_ELLIPSIS,
  T_COLONEQUAL, T_EXCLAMATION,
  /* keywords (soft keywords match/case/type/_ stay T_NAME) */
  T_KW_FIRST,
  T_FALSE = T_KW_FIRST, T_NONE, T_TRUE, T_AND, T_AS, T_ASSERT, T_ASYNC, T_AWAIT,
  T_BREAK, T_CLASS, T_CONTINUE, T_DEF, T_DEL, T_ELIF, T_ELSE, T_EXCEPT, T_FINALLY,
  T_FOR, T_FROM, T_GLOBAL, T_IF, T_IMPORT, T_IN, T_IS, T_LAMBDA, T_NONLOCAL, T_NOT,
  T_OR, T_PASS, T_RAISE, T_RETURN, T_TRY, T_WHILE, T_WITH, T_YIELD,
  T_COUNT
} py_toktype;

typedef struct py_tok {
  int type;
  const char *start, *end; /* source span */
  int lineno, col, end_lineno, end_col;
  const char *name;        /* T_NAME / keywords: interned spelling */
} py_tok;

#define PY_MAX_PAREN 200   /* CPython's MAXLEVEL: "too many nested parentheses" */
#define PY_MAX_INDENT 100  /* CPython's MAXINDENT: "too many levels of indentation" */
#define PY_MAX_FMODE 150

typedef struct py_fmode {
  int kind;         /* FM_LIT, FM_EXPR, FM_SPEC */
  char quote;
  bool triple, raw;
  int level;        /* paren level of the replacement field ('{' included) */
  bool after_field; /* FM_SPEC: a nested field just closed */
  int first_line;   /* where the f-string started (for errors) */
  int first_col;
} py_fmode;

typedef struct py_tokenizer {
  const char *src, *cur, *end; /* src is NUL-terminated at end */
  const char *line_start;
  int lineno;
  sg_intern *names;
  /* indentation */
  int indstack[PY_MAX_INDENT + 1], altindstack[PY_MAX_INDENT + 1];
  int indent;        /* top of indstack */
  int pending;       /* >0: INDENTs to emit; <0: DEDENTs to emit */
  bool atbol;        /* at the beginning of a line */
  bool line_has_tokens;
  bool cont_line;    /* the current line follows a backslash continuation */
  bool done;
  /* brackets */
  int level;
  char parenstack[PY_MAX_PAREN + 1];
  int parenline[PY_MAX_PAREN + 1], parencol[PY_MAX_PAREN + 1];
  /* f-strings */
  py_fmode fmodes[PY_MAX_FMODE];
  int nfmodes;
  /* error */
  bool failed;
  bool eof_unclosed;   /* the error is "'(' was never closed" at the end of input */
  const char *errmsg;  /* static or interned */
  char errbuf[256];
  int errline, errcol; /* errcol 0-based; -1 = CPython gives no column */
  int errend_line, errend_col;
} py_tokenizer;

void py_tok_init(py_tokenizer *t, const char *src, size_t len, sg_intern *names);
/* Produces the next token; returns false (and sets t->failed / t->errmsg) on error. */
bool py_tok_next(py_tokenizer *t, py_tok *tok);
const char *py_tok_type_name(int type);

#endif
