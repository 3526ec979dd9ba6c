// SPDX-License-Identifier: Apache-2.0
/*
 * parser_stmt.c — statements of Python 3.12, one function per grammar rule: the
 * file, blocks, simple statements (assignments, imports, del, global, ...) and
 * compound statements (def, class, if, for, while, with, try, match via
 * parser_pattern.c, type aliases).
 */
#include "parser.h"

#include <stdio.h>
#include <string.h>

#define A p->arena

static py_stmt *statement(py_parser *p, py_vec *out);

/* ------------------------------------------------------------------ simple statements */

static bool is_augassign(int t, int *op) {
  switch (t) {
  case T_PLUSEQUAL: *op = PY_Add; return true;
  case T_MINEQUAL: *op = PY_Sub; return true;
  case T_STAREQUAL: *op = PY_Mult; return true;
  case T_ATEQUAL: *op = PY_MatMult; return true;
  case T_SLASHEQUAL: *op = PY_Div; return true;
  case T_PERCENTEQUAL: *op = PY_Mod; return true;
  case T_AMPEREQUAL: *op = PY_BitAnd; return true;
  case T_VBAREQUAL: *op = PY_BitOr; return true;
  case T_CIRCUMFLEXEQUAL: *op = PY_BitXor; return true;
  case T_LEFTSHIFTEQUAL: *op = PY_LShift; return true;
  case T_RIGHTSHIFTEQUAL: *op = PY_RShift; return true;
  case T_DOUBLESTAREQUAL: *op = PY_Pow; return true;
  case T_DOUBLESLASHEQUAL: *op = PY_FloorDiv; return true;
  default: return false;
  }
}

/* Expressions CPython's invalid_named_expression rule reports as "cannot assign to
 * X here. Maybe you meant '==' instead of '='?" when they stand before a '='. */
static bool is_bitwise_or_kind(const py_expr *e) {
  switch (e->kind) {
  case PY_K_BinOp: case PY_K_Call: case PY_K_Await: case PY_K_Dict: case PY_K_Set:
  case PY_K_ListComp: case PY_K_SetComp: case PY_K_DictComp: case PY_K_NamedExpr:
  case PY_K_JoinedStr:
    return true;
  case PY_K_UnaryOp: return e->v.UnaryOp.op != PY_Not;
  case PY_K_Constant: {
    py_const_kind k = e->v.Constant.value.kind;
    return k != PY_CONST_NONE && k != PY_CONST_TRUE && k != PY_CONST_FALSE;
  }
  default: return false;
  }
}

/* annotated_rhs -> yield_expr | star_expressions */
static py_expr *annotated_rhs(py_parser *p) {
  if (py_p_check(p, T_YIELD)) return py_p_yield_expr(p);
  return py_p_star_expressions(p);
}

/* assignment | star_expressions (an expression statement)
 * assignment -> NAME ':' expression ['=' annotated_rhs]
 *             | target ':' expression ['=' annotated_rhs]
 *             | (star_targets '=')+ (yield_expr | star_expressions)
 *             | single_target augassign (yield_expr | star_expressions) */
static py_stmt *expr_stmt(py_parser *p) {
  py_pos s = py_p_start(p);
  bool paren = py_p_check(p, T_LPAR);
  py_expr *e = annotated_rhs(p);
  if (!e) return NULL;
  int op;
  py_tok *t = py_p_peek(p);
  if (t->type == T_COLON) {
    py_p_next(p);
    if (e->kind != PY_K_Name && e->kind != PY_K_Attribute && e->kind != PY_K_Subscript) {
      if (e->kind == PY_K_Tuple)
        return py_p_error_node(p, e, "only single target (not tuple) can be annotated");
      if (e->kind == PY_K_List)
        return py_p_error_node(p, e, "only single target (not list) can be annotated");
      return py_p_error_node(p, e, "illegal target for annotation");
    }
    py_p_set_context(p, e, PY_Store);
    py_expr *ann = py_p_expression(p);
    if (!ann) return NULL;
    py_expr *v = NULL;
    if (py_p_accept(p, T_EQUAL)) {
      v = annotated_rhs(p);
      if (!v) return NULL;
    }
    int simple = e->kind == PY_K_Name && !paren;
    return py_new_AnnAssign(A, e, ann, v, simple, LOC(s));
  }
  if (t->type == T_EQUAL) {
    py_vec targets = {0};
    while (py_p_accept(p, T_EQUAL)) {
      if (e->kind == PY_K_Yield || e->kind == PY_K_YieldFrom) {
        py_p_error_node(p, e, "assignment to yield expression not possible");
        sg_vec_free(&targets);
        return NULL;
      }
      if (targets.len == 0 && is_bitwise_or_kind(e)) {
        py_expr *rhs = annotated_rhs(p);
        if (rhs && !py_p_check(p, T_EQUAL) && !py_p_check(p, T_COLONEQUAL)) {
          p->failed = false;
          py_p_error_node(p, e, "cannot assign to %s here. Maybe you meant '==' instead of '='?",
                          py_p_expr_name(e));
          sg_vec_free(&targets);
          return NULL;
        }
        if (!p->tok_failed) p->failed = false;
      }
      if (!py_p_set_context(p, e, PY_Store)) {
        sg_vec_free(&targets);
        return NULL;
      }
      sg_vec_push(&targets, e);
      e = annotated_rhs(p);
      if (!e) {
        sg_vec_free(&targets);
        return NULL;
      }
    }
    py_seq *ts = py_p_seq(p, &targets);
    return py_new_Assign(A, ts, e, NULL, LOC(s));
  }
  if (is_augassign(t->type, &op)) {
    if (e->kind != PY_K_Name && e->kind != PY_K_Attribute && e->kind != PY_K_Subscript)
      return py_p_error_node(p, e, "'%s' is an illegal expression for augmented assignment",
                             e->kind == PY_K_Tuple ? "tuple" : e->kind == PY_K_List ? "list"
                                                                                    : "expression");
    py_p_set_context(p, e, PY_Store);
    py_p_next(p);
    py_expr *v = annotated_rhs(p);
    if (!v) return NULL;
    return py_new_AugAssign(A, e, op, v, LOC(s));
  }
  return py_new_Expr(A, e, LOC(s));
}

/* dotted_name -> NAME ('.' NAME)* */
static const char *dotted_name(py_parser *p) {
  py_tok *t = py_p_peek(p);
  if (t->type != T_NAME) return py_p_syntax_error(p);
  py_p_next(p);
  if (!py_p_check(p, T_DOT)) return t->name;
  sg_buf b = SG_BUF_INIT;
  sg_buf_puts(&b, t->name);
  while (py_p_check(p, T_DOT) && py_p_peek_at(p, 1)->type == T_NAME) {
    py_p_next(p);
    sg_buf_putc(&b, '.');
    sg_buf_puts(&b, py_p_next(p)->name);
  }
  const char *r = sg_intern_n(p->names, b.data, b.len);
  sg_buf_free(&b);
  return r;
}

/* import_name -> 'import' dotted_as_name (',' dotted_as_name)* */
static py_stmt *import_name(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  py_vec v = {0};
  do {
    py_pos as = py_p_start(p);
    const char *n = dotted_name(p);
    if (!n) goto fail;
    const char *asname = NULL;
    if (py_p_accept(p, T_AS)) {
      py_tok *t = py_p_peek(p);
      if (t->type != T_NAME) {
        py_p_syntax_error(p);
        goto fail;
      }
      py_p_next(p);
      asname = t->name;
    }
    sg_vec_push(&v, py_new_alias(A, n, asname, LOC(as)));
  } while (py_p_accept(p, T_COMMA));
  return py_new_Import(A, py_p_seq(p, &v), LOC(s));
fail:
  sg_vec_free(&v);
  return NULL;
}

/* import_from -> 'from' ('.' | '...')* dotted_name 'import' import_from_targets
 *              | 'from' ('.' | '...')+ 'import' import_from_targets */
static py_stmt *import_from(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  int level = 0;
  for (;;) {
    if (py_p_accept(p, T_DOT)) level++;
    else if (py_p_accept(p, T_ELLIPSIS)) level += 3;
    else break;
  }
  const char *module = NULL;
  if (!py_p_check(p, T_IMPORT)) {
    module = dotted_name(p);
    if (!module) return NULL;
  }
  if (!py_p_expect(p, T_IMPORT)) return NULL;
  py_vec v = {0};
  if (py_p_check(p, T_STAR)) {
    py_tok *t = py_p_next(p);
    sg_vec_push(&v, py_new_alias(A, sg_intern_str(p->names, "*"), NULL, t->lineno, t->col,
                                 t->end_lineno, t->end_col));
    return py_new_ImportFrom(A, module, py_p_seq(p, &v), level, LOC(s));
  }
  bool paren = py_p_accept(p, T_LPAR);
  do {
    if (paren && py_p_check(p, T_RPAR) && v.len) break;
    if (!paren && v.len && py_p_check(p, T_NEWLINE)) {
      py_p_error_tok(p, py_p_peek(p), "trailing comma not allowed without surrounding parentheses");
      goto fail;
    }
    py_pos as = py_p_start(p);
    py_tok *t = py_p_peek(p);
    if (t->type != T_NAME) {
      py_p_syntax_error(p);
      goto fail;
    }
    py_p_next(p);
    const char *asname = NULL;
    if (py_p_accept(p, T_AS)) {
      py_tok *a = py_p_peek(p);
      if (a->type != T_NAME) {
        py_p_syntax_error(p);
        goto fail;
      }
      py_p_next(p);
      asname = a->name;
    }
    sg_vec_push(&v, py_new_alias(A, t->name, asname, LOC(as)));
  } while (py_p_accept(p, T_COMMA));
  if (paren && !py_p_expect(p, T_RPAR)) goto fail;
  return py_new_ImportFrom(A, module, py_p_seq(p, &v), level, LOC(s));
fail:
  sg_vec_free(&v);
  return NULL;
}

/* global_stmt -> 'global' NAME (',' NAME)*   (nonlocal_stmt alike) */
static py_stmt *names_stmt(py_parser *p, bool global) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  py_vec v = {0};
  do {
    py_tok *t = py_p_peek(p);
    if (t->type != T_NAME) {
      sg_vec_free(&v);
      return py_p_syntax_error(p);
    }
    py_p_next(p);
    sg_vec_push(&v, (void *)t->name);
  } while (py_p_accept(p, T_COMMA));
  py_seq *n = py_p_seq(p, &v);
  return global ? py_new_Global(A, n, LOC(s)) : py_new_Nonlocal(A, n, LOC(s));
}

/* del_stmt -> 'del' del_target (',' del_target)* [','] */
static py_stmt *del_stmt(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  py_vec v = {0};
  do {
    if (py_p_check(p, T_NEWLINE) || py_p_check(p, T_SEMI)) break;
    py_expr *e = py_p_star_target(p);
    if (!e || !py_p_set_context(p, e, PY_Del)) {
      sg_vec_free(&v);
      return NULL;
    }
    sg_vec_push(&v, e);
  } while (py_p_accept(p, T_COMMA));
  if (v.len == 0) return py_p_syntax_error(p);
  return py_new_Delete(A, py_p_seq(p, &v), LOC(s));
}

/* type_alias -> "type" NAME [type_params] '=' expression */
static py_stmt *type_alias(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  py_tok *n = py_p_next(p);
  py_expr *name = py_new_Name(A, n->name, PY_Store, n->lineno, n->col, n->end_lineno, n->end_col);
  py_seq *tps = NULL;
  if (py_p_check(p, T_LSQB)) {
    tps = py_p_type_params(p);
    if (!tps) return NULL;
  }
  if (!py_p_expect(p, T_EQUAL)) return NULL;
  py_expr *v = py_p_expression(p);
  if (!v) return NULL;
  return py_new_TypeAlias(A, name, tps, v, LOC(s));
}

/* simple_stmt -> assignment | type_alias | star_expressions | return_stmt | import_stmt
 *              | raise_stmt | 'pass' | del_stmt | yield_stmt | assert_stmt | 'break'
 *              | 'continue' | global_stmt | nonlocal_stmt */
static py_stmt *simple_stmt(py_parser *p) {
  py_pos s = py_p_start(p);
  py_tok *t = py_p_peek(p);
  switch (t->type) {
  case T_PASS: py_p_next(p); return py_new_Pass(A, LOC(s));
  case T_BREAK: py_p_next(p); return py_new_Break(A, LOC(s));
  case T_CONTINUE: py_p_next(p); return py_new_Continue(A, LOC(s));
  case T_RETURN: {
    py_p_next(p);
    py_expr *v = NULL;
    if (!py_p_check(p, T_NEWLINE) && !py_p_check(p, T_SEMI)) {
      v = py_p_star_expressions(p);
      if (!v) return NULL;
    }
    return py_new_Return(A, v, LOC(s));
  }
  case T_RAISE: {
    py_p_next(p);
    py_expr *exc = NULL, *cause = NULL;
    if (!py_p_check(p, T_NEWLINE) && !py_p_check(p, T_SEMI)) {
      exc = py_p_expression(p);
      if (!exc) return NULL;
      if (py_p_accept(p, T_FROM)) {
        cause = py_p_expression(p);
        if (!cause) return NULL;
      }
    }
    return py_new_Raise(A, exc, cause, LOC(s));
  }
  case T_ASSERT: {
    py_p_next(p);
    py_expr *test = py_p_expression(p), *msg = NULL;
    if (!test) return NULL;
    if (py_p_accept(p, T_COMMA)) {
      msg = py_p_expression(p);
      if (!msg) return NULL;
    }
    return py_new_Assert(A, test, msg, LOC(s));
  }
  case T_IMPORT: return import_name(p);
  case T_FROM: return import_from(p);
  case T_GLOBAL: return names_stmt(p, true);
  case T_NONLOCAL: return names_stmt(p, false);
  case T_DEL: return del_stmt(p);
  case T_NAME:
    if ((!strcmp(t->name, "print") || !strcmp(t->name, "exec"))) {
      int n1 = py_p_peek_at(p, 1)->type;
      if (n1 == T_NAME || n1 == T_NUMBER || n1 == T_STRING || n1 == T_FSTRING_START)
        return py_p_error_tok(p, t, "Missing parentheses in call to '%s'. Did you mean %s(...)?",
                              t->name, t->name);
    }
    if (t->name == p->kw_type && py_p_peek_at(p, 1)->type == T_NAME) {
      int n2 = py_p_peek_at(p, 2)->type;
      if (n2 == T_EQUAL || n2 == T_LSQB) return type_alias(p);
    }
    return expr_stmt(p);
  default: return expr_stmt(p);
  }
}

/* simple_stmts -> simple_stmt (';' simple_stmt)* [';'] NEWLINE */
static bool simple_stmts(py_parser *p, py_vec *out) {
  for (;;) {
    py_stmt *st = simple_stmt(p);
    if (!st) return false;
    sg_vec_push(out, st);
    if (!py_p_accept(p, T_SEMI)) break;
    if (py_p_check(p, T_NEWLINE)) break;
  }
  if (!py_p_check(p, T_NEWLINE)) {
    py_p_syntax_error(p);
    return false;
  }
  py_p_next(p);
  return true;
}

/* ------------------------------------------------------------------ blocks */

/* block -> NEWLINE INDENT statements DEDENT | simple_stmts */
py_seq *py_p_block(py_parser *p) {
  py_vec v = {0};
  if (!py_p_enter(p)) return NULL;
  if (py_p_check(p, T_NEWLINE)) {
    py_p_next(p);
    if (!py_p_check(p, T_INDENT)) {
      py_tok *t = py_p_peek(p);
      /* CPython: "expected an indented block after ... on line N" (set by caller) */
      py_p_error_tok(p, t, "expected an indented block");
      goto fail;
    }
    py_p_next(p);
    while (!py_p_check(p, T_DEDENT)) {
      if (p->failed || py_p_check(p, T_ENDMARKER)) {
        py_p_syntax_error(p);
        goto fail;
      }
      if (!statement(p, &v)) goto fail;
    }
    py_p_next(p);
  } else {
    if (!simple_stmts(p, &v)) goto fail;
  }
  py_p_leave(p);
  return py_p_seq(p, &v);
fail:
  py_p_leave(p);
  sg_vec_free(&v);
  return NULL;
}

/* ':' block, with CPython's message when the block is missing */
static py_seq *colon_block(py_parser *p, const char *what, int line) {
  if (!py_p_check(p, T_COLON)) {
    if (!p->failed) py_p_error_tok(p, py_p_peek(p), "expected ':'");
    return NULL;
  }
  py_p_next(p);
  if (py_p_check(p, T_NEWLINE) && py_p_peek_at(p, 1)->type != T_INDENT) {
    py_tok *t = py_p_peek_at(p, 1);
    if (!p->tok_failed)
      return py_p_error_at(p, t->lineno, t->col, 0, 0,
                           "expected an indented block after %s on line %d", what, line);
  }
  return py_p_block(p);
}

/* ------------------------------------------------------------------ compound statements */

/* decorators -> ('@' named_expression NEWLINE)+ ; then function_def | class_def */
static py_seq *decorators(py_parser *p) {
  py_vec v = {0};
  while (py_p_accept(p, T_AT)) {
    py_expr *e = py_p_named_expression(p);
    if (!e || !py_p_expect(p, T_NEWLINE)) {
      sg_vec_free(&v);
      return NULL;
    }
    sg_vec_push(&v, e);
  }
  return py_p_seq(p, &v);
}

/* function_def_raw -> ['async'] 'def' NAME [type_params] '(' [params] ')' ['->' expression]
 *                     ':' block */
static py_stmt *function_def(py_parser *p, py_seq *decos) {
  py_pos s = py_p_start(p);
  bool is_async = py_p_accept(p, T_ASYNC);
  int line = py_p_peek(p)->lineno;
  if (!py_p_expect(p, T_DEF)) return NULL;
  py_tok *n = py_p_peek(p);
  if (n->type != T_NAME) return py_p_syntax_error(p);
  py_p_next(p);
  py_seq *tps = NULL;
  if (py_p_check(p, T_LSQB) && py_p_peek_at(p, 1)->type == T_RSQB)
    return py_p_error_tok(p, py_p_peek(p), "expected '('");
  if (py_p_check(p, T_LSQB)) {
    tps = py_p_type_params(p);
    if (!tps) return NULL;
  }
  if (!py_p_check(p, T_LPAR)) {
    if (!p->failed) py_p_error_tok(p, py_p_peek(p), "expected '('");
    return NULL;
  }
  py_p_next(p);
  py_arguments *args = py_p_params(p, false);
  if (!args || !py_p_expect(p, T_RPAR)) return NULL;
  py_expr *ret = NULL;
  if (py_p_check(p, T_RARROW)) {
    py_tok *arrow = py_p_peek(p);
    /* `-> :` — CPython's forced ':' (&&':') fails at the arrow: "expected ':'" there */
    int after = py_p_peek_at(p, 1)->type;
    if (after == T_COLON || after == T_NEWLINE) return py_p_error_tok(p, arrow, "expected ':'");
    py_p_next(p);
    ret = py_p_expression(p);
    if (!ret) return NULL;
  }
  py_seq *body = colon_block(p, "function definition", line);
  if (!body) return NULL;
  if (is_async)
    return py_new_AsyncFunctionDef(A, n->name, args, body, decos, ret, NULL, tps, LOC(s));
  return py_new_FunctionDef(A, n->name, args, body, decos, ret, NULL, tps, LOC(s));
}

/* class_def_raw -> 'class' NAME [type_params] ['(' [arguments] ')'] ':' block */
static py_stmt *class_def(py_parser *p, py_seq *decos) {
  py_pos s = py_p_start(p);
  int line = s.line;
  py_p_next(p);
  py_tok *n = py_p_peek(p);
  if (n->type != T_NAME) return py_p_syntax_error(p);
  py_p_next(p);
  py_seq *tps = NULL;
  if (py_p_check(p, T_LSQB)) {
    tps = py_p_type_params(p);
    if (!tps) return NULL;
  }
  py_seq *bases = NULL, *kws = NULL;
  if (py_p_accept(p, T_LPAR)) {
    p->no_genexp = true;
    bool ok = py_p_call_args(p, &bases, &kws);
    p->no_genexp = false;
    if (!ok) return NULL;
  }
  py_seq *body = colon_block(p, "class definition", line);
  if (!body) return NULL;
  return py_new_ClassDef(A, n->name, bases, kws, body, decos, tps, LOC(s));
}

/* if_stmt -> 'if' named_expression ':' block (elif_stmt | [else_block]) */
static py_stmt *if_stmt(py_parser *p) {
  py_pos s = py_p_start(p);
  bool elif = py_p_check(p, T_ELIF);
  py_p_next(p);
  py_expr *test = py_p_named_expression(p);
  if (!test) return NULL;
  py_seq *body = colon_block(p, elif ? "'elif' statement" : "'if' statement", s.line);
  if (!body) return NULL;
  py_seq *orelse = NULL;
  if (py_p_check(p, T_ELIF)) {
    py_stmt *e = if_stmt(p);
    if (!e) return NULL;
    orelse = py_p_seq1(p, e);
  } else if (py_p_check(p, T_ELSE)) {
    int line = py_p_peek(p)->lineno;
    py_p_next(p);
    orelse = colon_block(p, "'else' statement", line);
    if (!orelse) return NULL;
  }
  return py_new_If(A, test, body, orelse, LOC(s));
}

/* while_stmt -> 'while' named_expression ':' block [else_block] */
static py_stmt *while_stmt(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  py_expr *test = py_p_named_expression(p);
  if (!test) return NULL;
  py_seq *body = colon_block(p, "'while' statement", s.line);
  if (!body) return NULL;
  py_seq *orelse = NULL;
  if (py_p_check(p, T_ELSE)) {
    int line = py_p_peek(p)->lineno;
    py_p_next(p);
    orelse = colon_block(p, "'else' statement", line);
    if (!orelse) return NULL;
  }
  return py_new_While(A, test, body, orelse, LOC(s));
}

/* for_stmt -> ['async'] 'for' star_targets 'in' star_expressions ':' block [else_block] */
static py_stmt *for_stmt(py_parser *p) {
  py_pos s = py_p_start(p);
  bool is_async = py_p_accept(p, T_ASYNC);
  int line = py_p_peek(p)->lineno;
  py_p_next(p);
  py_expr *target = py_p_star_targets(p);
  if (!target || !py_p_expect(p, T_IN)) return NULL;
  py_expr *iter = py_p_star_expressions(p);
  if (!iter) return NULL;
  py_seq *body = colon_block(p, "'for' statement", line);
  if (!body) return NULL;
  py_seq *orelse = NULL;
  if (py_p_check(p, T_ELSE)) {
    int eline = py_p_peek(p)->lineno;
    py_p_next(p);
    orelse = colon_block(p, "'else' statement", eline);
    if (!orelse) return NULL;
  }
  if (is_async) return py_new_AsyncFor(A, target, iter, body, orelse, NULL, LOC(s));
  return py_new_For(A, target, iter, body, orelse, NULL, LOC(s));
}

/* with_item -> expression ['as' star_target &(',' | ')' | ':')] */
static py_withitem *with_item(py_parser *p) {
  py_expr *e = py_p_expression(p);
  if (!e) return NULL;
  py_expr *vars = NULL;
  if (py_p_accept(p, T_AS)) {
    vars = py_p_star_target(p);
    if (!vars) return NULL;
    int t = py_p_peek(p)->type;
    if (t != T_COMMA && t != T_RPAR && t != T_COLON) return py_p_syntax_error(p);
    if (!py_p_set_context(p, vars, PY_Store)) return NULL;
  }
  return py_new_withitem(A, e, vars);
}

/* with_stmt -> ['async'] 'with' '(' with_item (',' with_item)* [','] ')' ':' block
 *            | ['async'] 'with' with_item (',' with_item)* ':' block */
static py_stmt *with_stmt(py_parser *p) {
  py_pos s = py_p_start(p);
  bool is_async = py_p_accept(p, T_ASYNC);
  int line = py_p_peek(p)->lineno;
  py_p_next(p);
  py_vec v = {0};
  bool done = false;
  if (py_p_check(p, T_LPAR)) {
    /* try the parenthesised form; fall back to an expression starting with '(' */
    size_t mark = p->pos;
    py_p_next(p);
    bool ok = true;
    while (ok && !py_p_check(p, T_RPAR)) {
      py_withitem *w = with_item(p);
      if (!w) {
        ok = false;
        break;
      }
      sg_vec_push(&v, w);
      if (!py_p_accept(p, T_COMMA)) break;
    }
    if (ok && v.len && py_p_accept(p, T_RPAR) && py_p_check(p, T_COLON)) {
      done = true;
    } else if (!p->tok_failed) {
      p->failed = false;
      p->msg = NULL;
      p->pos = mark;
      v.len = 0;
    }
  }
  if (!done) {
    do {
      py_withitem *w = with_item(p);
      if (!w) goto fail;
      sg_vec_push(&v, w);
    } while (py_p_accept(p, T_COMMA));
  }
  py_seq *items = py_p_seq(p, &v);
  py_seq *body = colon_block(p, "'with' statement", line);
  if (!body) return NULL;
  if (is_async) return py_new_AsyncWith(A, items, body, NULL, LOC(s));
  return py_new_With(A, items, body, NULL, LOC(s));
fail:
  sg_vec_free(&v);
  return NULL;
}

/* except_block -> 'except' ['*'] [expression ['as' NAME]] ':' block */
static py_excepthandler *except_block(py_parser *p, int *star) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  int is_star = py_p_accept(p, T_STAR) ? 1 : 0;
  if (*star < 0) *star = is_star;
  else if (*star != is_star) {
    py_p_error_at(p, s.line, s.col, 0, 0,
                  "cannot have both 'except' and 'except*' on the same 'try'");
    return NULL;
  }
  py_expr *type = NULL;
  const char *name = NULL;
  if (!py_p_check(p, T_COLON)) {
    type = py_p_expression(p);
    if (!type) return NULL;
    if (py_p_check(p, T_COMMA)) {
      py_p_error_node(p, type, "multiple exception types must be parenthesized");
      return NULL;
    }
    if (py_p_accept(p, T_AS)) {
      py_tok *n = py_p_peek(p);
      if (n->type != T_NAME) return py_p_syntax_error(p);
      py_p_next(p);
      name = n->name;
    }
  } else if (is_star) {
    return py_p_error_tok(p, py_p_peek(p), "expected one or more exception types");
  }
  py_seq *body = colon_block(p, is_star ? "'except*' statement" : "'except' statement", s.line);
  if (!body) return NULL;
  return py_new_ExceptHandler(A, type, name, body, LOC(s));
}

/* try_stmt -> 'try' ':' block (except_block+ [else_block] [finally_block] | finally_block) */
static py_stmt *try_stmt(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  py_seq *body = colon_block(p, "'try' statement", s.line);
  if (!body) return NULL;
  py_vec hs = {0};
  int star = -1;
  while (py_p_check(p, T_EXCEPT)) {
    py_excepthandler *h = except_block(p, &star);
    if (!h) {
      sg_vec_free(&hs);
      return NULL;
    }
    sg_vec_push(&hs, h);
  }
  py_seq *handlers = py_p_seq(p, &hs);
  py_seq *orelse = NULL, *fin = NULL;
  if (handlers && py_p_check(p, T_ELSE)) {
    int line = py_p_peek(p)->lineno;
    py_p_next(p);
    orelse = colon_block(p, "'else' statement", line);
    if (!orelse) return NULL;
  }
  if (py_p_check(p, T_FINALLY)) {
    int line = py_p_peek(p)->lineno;
    py_p_next(p);
    fin = colon_block(p, "'finally' statement", line);
    if (!fin) return NULL;
  }
  if (!handlers && !fin)
    return py_p_error_tok(p, py_p_peek(p), "expected 'except' or 'finally' block");
  if (star == 1) return py_new_TryStar(A, body, handlers, orelse, fin, LOC(s));
  return py_new_Try(A, body, handlers, orelse, fin, LOC(s));
}

/* compound_stmt -> function_def | if_stmt | class_def | with_stmt | for_stmt | try_stmt
 *                | while_stmt | match_stmt */
static py_stmt *compound_stmt(py_parser *p) {
  py_tok *t = py_p_peek(p);
  switch (t->type) {
  case T_AT: {
    py_seq *d = decorators(p);
    if (!d) return NULL;
    if (py_p_check(p, T_CLASS)) return class_def(p, d);
    if (py_p_check(p, T_DEF) || (py_p_check(p, T_ASYNC) && py_p_peek_at(p, 1)->type == T_DEF))
      return function_def(p, d);
    return py_p_syntax_error(p);
  }
  case T_DEF: return function_def(p, NULL);
  case T_CLASS: return class_def(p, NULL);
  case T_IF: return if_stmt(p);
  case T_WHILE: return while_stmt(p);
  case T_FOR: return for_stmt(p);
  case T_WITH: return with_stmt(p);
  case T_TRY: return try_stmt(p);
  case T_ASYNC: {
    int n = py_p_peek_at(p, 1)->type;
    if (n == T_DEF) return function_def(p, NULL);
    if (n == T_FOR) return for_stmt(p);
    if (n == T_WITH) return with_stmt(p);
    return py_p_syntax_error(p);
  }
  default: return NULL;
  }
}

static bool is_compound_start(py_parser *p) {
  switch (py_p_peek(p)->type) {
  case T_AT: case T_DEF: case T_CLASS: case T_IF: case T_WHILE: case T_FOR: case T_WITH:
  case T_TRY: case T_ASYNC:
    return true;
  default: return false;
  }
}

/* statement -> compound_stmt | simple_stmts */
static py_stmt *statement(py_parser *p, py_vec *out) {
  py_tok *t = py_p_peek(p);
  if (p->failed) return NULL;
  if (t->type == T_INDENT)
    return py_p_error_at(p, t->lineno, t->col - 1, 0, 0, "unexpected indent");
  if (is_compound_start(p)) {
    py_stmt *st = compound_stmt(p);
    if (st) sg_vec_push(out, st);
    return st;
  }
  if (t->type == T_NAME && t->name == p->kw_match) {
    size_t mark = p->pos;
    py_stmt *st = py_p_match_stmt(p);
    if (st) {
      sg_vec_push(out, st);
      return st;
    }
    if (p->failed) return NULL;
    p->pos = mark;
  }
  if (!simple_stmts(p, out)) return NULL;
  return sg_vec_last(out);
}

/* file -> [statements] ENDMARKER */
py_mod *py_p_file(py_parser *p) {
  py_vec v = {0};
  while (!py_p_check(p, T_ENDMARKER)) {
    if (p->failed) break;
    if (py_p_check(p, T_NEWLINE)) { /* a line with only a ';'-less NEWLINE cannot occur */
      py_p_next(p);
      continue;
    }
    if (!statement(p, &v)) break;
    py_p_compact(p);
  }
  if (p->failed) {
    sg_vec_free(&v);
    return NULL;
  }
  return py_new_Module(A, py_p_seq(p, &v), NULL);
}
