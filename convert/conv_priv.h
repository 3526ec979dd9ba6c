// SPDX-License-Identifier: Apache-2.0
/*
 * conv_priv.h — private state shared by the converter files (conv_*.c): the
 * conversion context, AST builders for generated code, a growable statement list,
 * the expression rewriter, and the pass entry points (in AutoGraph §7.2 order).
 */
#ifndef STAGD_CONVERT_CONV_PRIV_H
#define STAGD_CONVERT_CONV_PRIV_H

#include "analysis.h"
#include "convert.h"

/* Location copied onto generated nodes (the original construct's). */
typedef struct cv_loc {
  int l, c, el, ec;
} cv_loc;

/* Extra loop test a jump pass attached to a `for` (the control-flow pass turns it
 * into extra_test__N). */
typedef struct cv_extra {
  const py_stmt *loop;
  py_expr *test;
} cv_extra;

typedef struct cv {
  py_ctx *ctx;
  sg_arena *A;
  py_conv_style style;
  py_mod *mod;
  py_an *an; /* the analysis of the current tree (NULL when none) */
  int counter;
  cv_extra *extra;
  int nextra, capextra;
  cv_extra *loopopts; /* loop → its set_loop_options dict (the directives pass) */
  int nloopopts, caploopopts;
  const char *src; /* the original source, for descriptions (if_exp) */
  size_t srclen;
  const size_t *line_starts; /* byte offset of each line */
  int nlines;
} cv;

/* A growable list of statements / expressions (arena-backed). */
typedef struct cv_vec {
  void **a;
  int n, cap;
} cv_vec;
void cv_push(cv *c, cv_vec *v, void *x);
void cv_push_seq(cv *c, cv_vec *v, const py_seq *s);
py_seq *cv_seq(cv *c, const cv_vec *v);
py_seq *cv_seq1(cv *c, void *x);
py_seq *cv_seq_n(cv *c, int n, void **items);

/* Builders; every identifier is interned in ctx->names. */
const char *cv_intern(cv *c, const char *s);
const char *cv_fresh(cv *c, const char *base, int n); /* "base__N" */
cv_loc cv_loc_of_stmt(const py_stmt *s);
cv_loc cv_loc_of_expr(const py_expr *e);
py_expr *cv_name(cv *c, const char *id, py_expr_context ctx, cv_loc at);
py_expr *cv_sg(cv *c, const char *fn, cv_loc at); /* sg__.fn */
py_expr *cv_call(cv *c, py_expr *func, py_seq *args, py_seq *kws, cv_loc at);
py_expr *cv_call_sg(cv *c, const char *fn, cv_loc at, int nargs, ...);
py_expr *cv_str(cv *c, const char *s, cv_loc at);
py_expr *cv_int(cv *c, int v, cv_loc at);
py_expr *cv_bool(cv *c, bool v, cv_loc at);
py_expr *cv_none(cv *c, cv_loc at);
py_expr *cv_not(cv *c, py_expr *e, cv_loc at);
py_expr *cv_lambda(cv *c, py_expr *body, cv_loc at);
py_expr *cv_tuple(cv *c, py_seq *elts, py_expr_context ctx, cv_loc at);
py_stmt *cv_assign(cv *c, py_expr *target, py_expr *value, cv_loc at);
py_stmt *cv_assign_name(cv *c, const char *name, py_expr *value, cv_loc at);
py_stmt *cv_expr_stmt(cv *c, py_expr *e, cv_loc at);
py_stmt *cv_if(cv *c, py_expr *test, py_seq *body, py_seq *orelse, cv_loc at);
py_stmt *cv_pass(cv *c, cv_loc at);
py_stmt *cv_return(cv *c, py_expr *e, cv_loc at);
/* def name(params...): body  (params: interned names, may be 0) */
py_stmt *cv_def(cv *c, const char *name, int nparams, const char *const *params, py_seq *body, cv_loc at);
/* nonlocal / global declaration of names (n > 0). */
py_stmt *cv_decl(cv *c, bool global, int n, const char *const *names, cv_loc at);

/* Does the expression contain a walrus, yield or await (which must not move into a
 * lambda)? */
bool cv_expr_unsafe_in_lambda(const py_expr *e);
/* Whether the assert pass moves the message of s (an `assert c, m`) into a lambda. */
bool cv_assert_msg_to_lambda(const py_stmt *s);
/* Whether the ternary / logical passes move the operands of e (an IfExp / BoolOp)
 * into lambdas, and whether node contains such an expression. */
bool cv_operands_to_lambdas(const py_expr *e);
bool cv_has_lambda_operands(const void *node);
/* Does the tree under node contain a node of kind k (not looking into nested
 * function / lambda / class scopes when `scoped`)? */
bool cv_contains(const void *node, py_kind k, bool scoped);

/* Expression rewriting: post-order over every expression slot reachable from a
 * statement list (bodies of nested defs included, class bodies not). fn returns the
 * replacement (or e itself). `stmt` is the enclosing statement. */
typedef py_expr *(*cv_expr_fn)(cv *c, py_expr *e, const py_stmt *stmt, void *ud);
void cv_rewrite_exprs_block(cv *c, py_seq *body, cv_expr_fn fn, void *ud);
void cv_rewrite_expr_slot(cv *c, py_expr **slot, const py_stmt *stmt, cv_expr_fn fn, void *ud);
/* Statement rewriting: fn maps one statement to a list (pushes into out); used by the
 * list/slice/assert passes. Recurses into bodies (nested defs too, not classes). */
typedef void (*cv_stmt_fn)(cv *c, py_stmt *s, cv_vec *out, void *ud);
py_seq *cv_rewrite_stmts(cv *c, py_seq *body, cv_stmt_fn fn, void *ud);

/* The extra test attached to a loop (NULL if none); set / and-combine one. */
py_expr *cv_extra_test(cv *c, const py_stmt *loop);
/* The options dict the directives pass took from a loop's set_loop_options (or NULL). */
py_expr *cv_loop_options(cv *c, const py_stmt *loop);
void cv_set_loop_options(cv *c, const py_stmt *loop, py_expr *dict);
void cv_add_extra_test(cv *c, const py_stmt *loop, py_expr *test);

/* ---------------------------------------------------------------- passes */
/* Each takes a function definition (FunctionDef) and rewrites its body in place. */
void cv_pass_match(cv *c, py_stmt *fn); /* value-pattern matches → if chains (first) */
void cv_pass_directives(cv *c, py_stmt *fn);
void cv_pass_break(cv *c, py_stmt *fn);
void cv_pass_continue(cv *c, py_stmt *fn);
void cv_pass_return(cv *c, py_stmt *fn);
void cv_pass_assert(cv *c, py_stmt *fn);
void cv_pass_lists(cv *c, py_stmt *fn); /* needs c->an */
/* Slices, builtins and call trees: three node rewrites applied in that order in one
 * post-order walk (the same result as three walks; needs c->an). */
void cv_pass_slices_builtins_calls(cv *c, py_stmt *fn);
void cv_pass_control_flow(cv *c, py_stmt *fn); /* needs c->an; style-dependent */
/* Ternary then logical expressions, one walk. */
void cv_pass_ternary_logical(cv *c, py_stmt *fn);
void cv_pass_wrapper(cv *c, py_stmt *fn);
/* The plain path: fn's body becomes `if not sg__.staging: <orig's body>` + the converted
 * body (orig: the same def, unconverted, from a second parse). */
void cv_dual_body(cv *c, py_stmt *fn, const py_stmt *orig);
bool cv_is_plain_path(const py_stmt *s); /* `if not sg__.staging:` */

/* Is `name` declared in the scope as a local (or parameter)? */
bool cv_is_local(cv *c, const py_scope *sc, const char *name);

/* ---------------------------------------------------------------- output */
typedef struct cv_emit {
  sg_arena *A;
  sg_buf *out;
  const char *base; /* leading whitespace of every line (a method's original indentation) */
  int line; /* current output line (1-based) of the next line written */
  py_srcmap_entry *map;
  int nmap, capmap;
  /* the full-line comments of the function being written, in line order, and how many
   * are written: each goes before the first statement that starts after it */
  struct cv_comment *comments;
  int ncomments, icomment;
} cv_emit;

typedef struct cv_comment {
  int line;         /* original line (1-based) */
  const char *text; /* from '#' to the end of the line, without the line break */
  int len;
} cv_comment;

/* The full-line comments of source lines [first, last] (lines inside a string literal
 * that look like comments may be among them: writing them is harmless). */
void cv_find_comments(cv_emit *em, const char *src, const size_t *line_starts, int nlines, size_t len, int first,
                      int last);
/* Writes the comments left before original line `before` (INT_MAX: all) at indent. */
void cv_emit_comments(cv_emit *em, int before, int indent);
/* Writes statement s at the given indentation (spaces), one source-map entry per line
 * that starts a statement. */
void cv_emit_stmt(cv_emit *em, const py_stmt *s, int indent);
void cv_emit_line(cv_emit *em, const char *text, int orig_line, int orig_col);

#endif
