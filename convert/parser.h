// SPDX-License-Identifier: Apache-2.0
/*
 * parser.h — private interface shared by the recursive-descent parser's files:
 * parser.c (token buffer, errors, entry point), parser_expr.c, parser_stmt.c,
 * parser_pattern.c and literals.c (strings, f-strings, numbers).
 *
 * The parser follows CPython 3.12's grammar (Grammar/python.gram) rule by rule, one
 * function per rule. Backtracking is by saving and restoring p->pos; tokens are kept
 * in p->toks and dropped between top-level statements. Every node's location is
 * taken from tokens the way CPython's EXTRA does: the first token of the rule and
 * the last non-whitespace token consumed.
 */
#ifndef STAGD_CONVERT_PARSER_H
#define STAGD_CONVERT_PARSER_H

#include "py.h"
#include "tokenizer.h"

#define PY_MAX_DEPTH 6000 /* recursion guard (Lua's enterlevel): deep nesting is an error */

typedef struct py_parser {
  py_tokenizer tz;
  sg_arena *arena;
  sg_intern *names;
  py_tok **blk;      /* tokens in blocks of PY_TOKBLK, so pointers stay valid */
  size_t nblk, blkcap;
  size_t first_blk;  /* absolute number of blk[0] (older blocks were dropped) */
  size_t ntoks;      /* absolute count of tokens produced */
  size_t pos;
  size_t fill_max;   /* furthest token fetched (CPython reports "invalid syntax" there) */
  int depth;
  bool no_genexp;    /* class C(x for x in y) is not allowed */
  bool failed;
  bool tok_failed;
  const char *msg;
  int err_line, err_col, err_end_line, err_end_col;
  const char *filename;
  /* interned soft keywords */
  const char *kw_match, *kw_case, *kw_type, *kw_underscore;
} py_parser;

typedef struct py_pos {
  int line, col;
} py_pos;

/* tokens */
#define PY_TOKBLK 512
#define PY_TOK(p, i) (&(p)->blk[(i) / PY_TOKBLK - (p)->first_blk][(i) % PY_TOKBLK])
py_tok *py_p_prev(py_parser *p);               /* the last consumed token */
void py_p_compact(py_parser *p);               /* drop tokens before the current one */
py_tok *py_p_peek(py_parser *p);
py_tok *py_p_peek_at(py_parser *p, size_t k); /* k-th token ahead (0 = current) */
py_tok *py_p_next(py_parser *p);               /* consume and return */
bool py_p_check(py_parser *p, int type);
bool py_p_accept(py_parser *p, int type);
bool py_p_expect(py_parser *p, int type);
bool py_p_is_soft(py_parser *p, const char *kw); /* current token is NAME kw */
py_pos py_p_start(py_parser *p);              /* start of the current token */
py_pos py_p_end(py_parser *p);                /* end of last non-whitespace token consumed */

/* errors */
void *py_p_error_at(py_parser *p, int line, int col, int end_line, int end_col,
                    const char *fmt, ...) SG_PRINTF(6, 7);
void *py_p_error_tok(py_parser *p, const py_tok *t, const char *fmt, ...) SG_PRINTF(3, 4);
void *py_p_error_node(py_parser *p, const py_expr *e, const char *fmt, ...) SG_PRINTF(3, 4);
void *py_p_syntax_error(py_parser *p); /* "invalid syntax" at the furthest token */
bool py_p_enter(py_parser *p);
void py_p_leave(py_parser *p);

/* sequences */
typedef SG_VEC(void *) py_vec;
py_seq *py_p_seq(py_parser *p, py_vec *v); /* copies into the arena, frees v */
py_seq *py_p_seq1(py_parser *p, void *x);

#define LOC(s) (s).line, (s).col, py_p_end(p).line, py_p_end(p).col

/* expressions (parser_expr.c) */
py_expr *py_p_expression(py_parser *p);
py_expr *py_p_expressions(py_parser *p);
py_expr *py_p_star_expressions(py_parser *p);
py_expr *py_p_star_named_expression(py_parser *p);
py_expr *py_p_named_expression(py_parser *p);
py_expr *py_p_yield_expr(py_parser *p);
py_expr *py_p_bitwise_or(py_parser *p);
py_expr *py_p_disjunction(py_parser *p);
py_expr *py_p_primary(py_parser *p);
py_expr *py_p_atom(py_parser *p);
py_expr *py_p_star_targets(py_parser *p);
py_expr *py_p_star_target(py_parser *p);
py_arguments *py_p_params(py_parser *p, bool lambda);
bool py_p_call_args(py_parser *p, py_seq **args, py_seq **keywords);
py_seq *py_p_for_if_clauses(py_parser *p);
const char *py_p_expr_name(const py_expr *e); /* "function call", "literal", ... */
bool py_p_set_context(py_parser *p, py_expr *e, py_expr_context ctx);
py_seq *py_p_type_params(py_parser *p);

/* statements (parser_stmt.c) */
py_mod *py_p_file(py_parser *p);
py_seq *py_p_block(py_parser *p);

/* patterns (parser_pattern.c) */
py_stmt *py_p_match_stmt(py_parser *p);

/* literals (literals.c) */
py_expr *py_p_strings(py_parser *p);
py_expr *py_p_number(py_parser *p, const py_tok *t);
py_expr *py_p_fstring(py_parser *p); /* one FSTRING_START ... FSTRING_END, as JoinedStr */

#endif
