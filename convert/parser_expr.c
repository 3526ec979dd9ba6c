// SPDX-License-Identifier: Apache-2.0
/*
 * parser_expr.c — expressions of Python 3.12, one function per grammar rule
 * (Grammar/python.gram names), from `expression` down to `atom`, plus call
 * arguments, slices, comprehensions, lambda/def parameters, assignment targets and
 * PEP 695 type parameters.
 */
#include "parser.h"

#include <string.h>

#define A p->arena

static bool star_named_expressions_tail(py_parser *p, py_vec *elts, int close);
static py_expr *lambdef(py_parser *p);
static py_expr *factor(py_parser *p);
static void *missing_comma(py_parser *p, const py_expr *e);

/* ------------------------------------------------------------------ targets */

const char *py_p_expr_name(const py_expr *e) {
  switch (e->kind) {
  case PY_K_Attribute: return "attribute";
  case PY_K_Subscript: return "subscript";
  case PY_K_Starred: return "starred";
  case PY_K_Name: return "name";
  case PY_K_List: return "list";
  case PY_K_Tuple: return "tuple";
  case PY_K_Lambda: return "lambda";
  case PY_K_Call: return "function call";
  case PY_K_BoolOp: case PY_K_BinOp: case PY_K_UnaryOp: return "expression";
  case PY_K_GeneratorExp: return "generator expression";
  case PY_K_Yield: case PY_K_YieldFrom: return "yield expression";
  case PY_K_Await: return "await expression";
  case PY_K_ListComp: return "list comprehension";
  case PY_K_SetComp: return "set comprehension";
  case PY_K_DictComp: return "dict comprehension";
  case PY_K_Dict: return "dict literal";
  case PY_K_Set: return "set display";
  case PY_K_JoinedStr: case PY_K_FormattedValue: return "f-string expression";
  case PY_K_Constant:
    switch (e->v.Constant.value.kind) {
    case PY_CONST_NONE: return "None";
    case PY_CONST_TRUE: return "True";
    case PY_CONST_FALSE: return "False";
    case PY_CONST_ELLIPSIS: return "ellipsis";
    default: return "literal";
    }
  case PY_K_Compare: return "comparison";
  case PY_K_IfExp: return "conditional expression";
  case PY_K_NamedExpr: return "named expression";
  default: return "expression";
  }
}

/* Turns a parsed expression into an assignment (Store) or del (Del) target. */
bool py_p_set_context(py_parser *p, py_expr *e, py_expr_context ctx) {
  switch (e->kind) {
  case PY_K_Name: e->v.Name.ctx = ctx; return true;
  case PY_K_Attribute: e->v.Attribute.ctx = ctx; return true;
  case PY_K_Subscript: e->v.Subscript.ctx = ctx; return true;
  case PY_K_Starred:
    if (ctx == PY_Del) break;
    e->v.Starred.ctx = ctx;
    return py_p_set_context(p, e->v.Starred.value, ctx);
  case PY_K_List:
  case PY_K_Tuple: {
    py_seq *elts = e->kind == PY_K_List ? e->v.List.elts : e->v.Tuple.elts;
    if (e->kind == PY_K_List) e->v.List.ctx = ctx;
    else e->v.Tuple.ctx = ctx;
    for (int i = 0; i < PY_SEQ_LEN(elts); i++)
      if (!py_p_set_context(p, elts->a[i], ctx)) return false;
    return true;
  }
  default: break;
  }
  if (ctx == PY_Del) py_p_error_node(p, e, "cannot delete %s", py_p_expr_name(e));
  else py_p_error_node(p, e, "cannot assign to %s", py_p_expr_name(e));
  return false;
}

/* star_target -> '*' star_target | target (a primary, or a starred/parenthesised atom) */
py_expr *py_p_star_target(py_parser *p) {
  py_pos s = py_p_start(p);
  if (py_p_accept(p, T_STAR)) {
    if (!py_p_enter(p)) return NULL;
    py_expr *e = py_p_star_target(p);
    py_p_leave(p);
    if (!e) return NULL;
    return py_new_Starred(A, e, PY_Store, LOC(s));
  }
  return py_p_bitwise_or(p);
}

/* star_targets -> star_target (',' star_target)* [','] */
py_expr *py_p_star_targets(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *e = py_p_star_target(p);
  if (!e) return NULL;
  if (py_p_check(p, T_COMMA)) {
    py_vec v = {0};
    sg_vec_push(&v, e);
    while (py_p_accept(p, T_COMMA)) {
      int t = py_p_peek(p)->type;
      if (t == T_IN || t == T_EQUAL || t == T_RPAR || t == T_RSQB || t == T_COLON) break;
      py_expr *x = py_p_star_target(p);
      if (!x) {
        sg_vec_free(&v);
        return NULL;
      }
      sg_vec_push(&v, x);
    }
    e = py_new_Tuple(A, py_p_seq(p, &v), PY_Store, LOC(s));
  }
  if (!py_p_set_context(p, e, PY_Store)) return NULL;
  return e;
}

/* ------------------------------------------------------------------ expressions */

/* expressions -> expression (',' expression)* [','] */
py_expr *py_p_expressions(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *e = py_p_expression(p);
  if (!e || !py_p_check(p, T_COMMA)) return e;
  py_vec v = {0};
  sg_vec_push(&v, e);
  while (py_p_accept(p, T_COMMA)) {
    int t = py_p_peek(p)->type;
    if (t == T_NEWLINE || t == T_RPAR || t == T_COLON || t == T_EQUAL || t == T_SEMI) break;
    py_expr *x = py_p_expression(p);
    if (!x) {
      sg_vec_free(&v);
      return NULL;
    }
    sg_vec_push(&v, x);
  }
  return py_new_Tuple(A, py_p_seq(p, &v), PY_Load, LOC(s));
}

/* expression -> disjunction ['if' disjunction 'else' expression] | lambdef */
py_expr *py_p_expression(py_parser *p) {
  if (py_p_check(p, T_LAMBDA)) return lambdef(p);
  if (!py_p_enter(p)) return NULL;
  py_pos s = py_p_start(p);
  py_expr *a = py_p_disjunction(p);
  if (a && py_p_check(p, T_IF)) {
    py_p_next(p);
    py_expr *b = py_p_disjunction(p);
    if (!b) goto fail;
    if (!py_p_check(p, T_ELSE)) {
      py_p_error_at(p, a->lineno, a->col_offset, b->end_lineno, b->end_col_offset,
                    "expected 'else' after 'if' expression");
      goto fail;
    }
    py_p_next(p);
    py_expr *c = py_p_expression(p);
    if (!c) goto fail;
    a = py_new_IfExp(A, b, a, c, LOC(s));
  }
  py_p_leave(p);
  return a;
fail:
  py_p_leave(p);
  return NULL;
}

/* yield_expr -> 'yield' 'from' expression | 'yield' [star_expressions] */
py_expr *py_p_yield_expr(py_parser *p) {
  py_pos s = py_p_start(p);
  if (!py_p_expect(p, T_YIELD)) return NULL;
  if (py_p_accept(p, T_FROM)) {
    py_expr *e = py_p_expression(p);
    if (!e) return NULL;
    return py_new_YieldFrom(A, e, LOC(s));
  }
  int t = py_p_peek(p)->type;
  py_expr *v = NULL;
  if (t != T_NEWLINE && t != T_RPAR && t != T_RSQB && t != T_RBRACE && t != T_SEMI &&
      t != T_EQUAL && t != T_COLON && t != T_ENDMARKER) {
    v = py_p_star_expressions(p);
    if (!v) return NULL;
  }
  return py_new_Yield(A, v, LOC(s));
}

/* star_expression -> '*' bitwise_or | expression */
static py_expr *star_expression(py_parser *p) {
  py_pos s = py_p_start(p);
  if (py_p_accept(p, T_STAR)) {
    py_expr *e = py_p_bitwise_or(p);
    if (!e) return NULL;
    return py_new_Starred(A, e, PY_Load, LOC(s));
  }
  return py_p_expression(p);
}

static bool ends_star_list(int t) {
  return t == T_NEWLINE || t == T_RPAR || t == T_RSQB || t == T_RBRACE || t == T_COLON ||
         t == T_EQUAL || t == T_SEMI || t == T_ENDMARKER || (t >= T_PLUSEQUAL && t <= T_DOUBLESLASHEQUAL) ||
         t == T_ATEQUAL || t == T_IN;
}

/* star_expressions -> star_expression (',' star_expression)* [','] */
py_expr *py_p_star_expressions(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *e = star_expression(p);
  if (!e || !py_p_check(p, T_COMMA)) return e;
  py_vec v = {0};
  sg_vec_push(&v, e);
  while (py_p_accept(p, T_COMMA)) {
    if (ends_star_list(py_p_peek(p)->type)) break;
    py_expr *x = star_expression(p);
    if (!x) {
      sg_vec_free(&v);
      return NULL;
    }
    sg_vec_push(&v, x);
  }
  return py_new_Tuple(A, py_p_seq(p, &v), PY_Load, LOC(s));
}

/* named_expression -> NAME ':=' expression | expression !':=' */
py_expr *py_p_named_expression(py_parser *p) {
  py_pos s = py_p_start(p);
  if (py_p_check(p, T_NAME) && py_p_peek_at(p, 1)->type == T_COLONEQUAL) {
    py_tok *n = py_p_next(p);
    py_expr *target = py_new_Name(A, n->name, PY_Store, n->lineno, n->col, n->end_lineno,
                                  n->end_col);
    py_p_next(p);
    py_expr *v = py_p_expression(p);
    if (!v) return NULL;
    return py_new_NamedExpr(A, target, v, LOC(s));
  }
  py_expr *e = py_p_expression(p);
  if (e && py_p_check(p, T_COLONEQUAL))
    return py_p_error_node(p, e, "cannot use assignment expressions with %s", py_p_expr_name(e));
  return e;
}

/* star_named_expression -> '*' bitwise_or | named_expression */
py_expr *py_p_star_named_expression(py_parser *p) {
  py_pos s = py_p_start(p);
  if (py_p_accept(p, T_STAR)) {
    py_expr *e = py_p_bitwise_or(p);
    if (!e) return NULL;
    return py_new_Starred(A, e, PY_Load, LOC(s));
  }
  return py_p_named_expression(p);
}

/* disjunction -> conjunction ('or' conjunction)* */
static py_expr *conjunction(py_parser *p);
py_expr *py_p_disjunction(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *a = conjunction(p);
  if (!a || !py_p_check(p, T_OR)) return a;
  py_vec v = {0};
  sg_vec_push(&v, a);
  while (py_p_accept(p, T_OR)) {
    py_expr *b = conjunction(p);
    if (!b) {
      sg_vec_free(&v);
      return NULL;
    }
    sg_vec_push(&v, b);
  }
  return py_new_BoolOp(A, PY_Or, py_p_seq(p, &v), LOC(s));
}

/* conjunction -> inversion ('and' inversion)* */
static py_expr *inversion(py_parser *p);
static py_expr *conjunction(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *a = inversion(p);
  if (!a || !py_p_check(p, T_AND)) return a;
  py_vec v = {0};
  sg_vec_push(&v, a);
  while (py_p_accept(p, T_AND)) {
    py_expr *b = inversion(p);
    if (!b) {
      sg_vec_free(&v);
      return NULL;
    }
    sg_vec_push(&v, b);
  }
  return py_new_BoolOp(A, PY_And, py_p_seq(p, &v), LOC(s));
}

/* inversion -> 'not' inversion | comparison */
static py_expr *comparison(py_parser *p);
static py_expr *inversion(py_parser *p) {
  py_pos s = py_p_start(p);
  if (py_p_accept(p, T_NOT)) {
    if (!py_p_enter(p)) return NULL;
    py_expr *e = inversion(p);
    py_p_leave(p);
    if (!e) return NULL;
    return py_new_UnaryOp(A, PY_Not, e, LOC(s));
  }
  return comparison(p);
}

/* comparison -> bitwise_or (compare_op bitwise_or)* */
static int compare_op(py_parser *p) {
  int t = py_p_peek(p)->type;
  switch (t) {
  case T_EQEQUAL: return PY_Eq;
  case T_NOTEQUAL: return py_p_peek(p)->start[0] == '<' ? 0 : PY_NotEq;
  case T_LESS: return PY_Lt;
  case T_LESSEQUAL: return PY_LtE;
  case T_GREATER: return PY_Gt;
  case T_GREATEREQUAL: return PY_GtE;
  case T_IN: return PY_In;
  case T_IS: return py_p_peek_at(p, 1)->type == T_NOT ? PY_IsNot : PY_Is;
  case T_NOT: return py_p_peek_at(p, 1)->type == T_IN ? PY_NotIn : 0;
  default: return 0;
  }
}

static py_expr *comparison(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *a = py_p_bitwise_or(p);
  if (!a) return NULL;
  int op = compare_op(p);
  if (!op) return a;
  py_vec ops = {0}, cmps = {0};
  while ((op = compare_op(p)) != 0) {
    py_p_next(p);
    if (op == PY_IsNot || op == PY_NotIn) py_p_next(p);
    py_expr *b = py_p_bitwise_or(p);
    if (!b) {
      sg_vec_free(&ops);
      sg_vec_free(&cmps);
      return NULL;
    }
    sg_vec_push(&ops, (void *)(intptr_t)op);
    sg_vec_push(&cmps, b);
  }
  py_seq *so = py_p_seq(p, &ops);
  return py_new_Compare(A, a, so, py_p_seq(p, &cmps), LOC(s));
}

typedef py_expr *(*rule_fn)(py_parser *);

static py_expr *left_assoc(py_parser *p, rule_fn sub, int (*opmap)(int)) {
  py_pos s = py_p_start(p);
  py_expr *a = sub(p);
  while (a) {
    int op = opmap(py_p_peek(p)->type);
    if (!op) break;
    py_p_next(p);
    py_expr *b = sub(p);
    if (!b) return NULL;
    a = py_new_BinOp(A, a, op, b, LOC(s));
  }
  return a;
}

static int op_term(int t) {
  switch (t) {
  case T_STAR: return PY_Mult;
  case T_SLASH: return PY_Div;
  case T_DOUBLESLASH: return PY_FloorDiv;
  case T_PERCENT: return PY_Mod;
  case T_AT: return PY_MatMult;
  default: return 0;
  }
}
static int op_sum(int t) { return t == T_PLUS ? PY_Add : t == T_MINUS ? PY_Sub : 0; }
static int op_shift(int t) {
  return t == T_LEFTSHIFT ? PY_LShift : t == T_RIGHTSHIFT ? PY_RShift : 0;
}
static int op_and(int t) { return t == T_AMPER ? PY_BitAnd : 0; }
static int op_xor(int t) { return t == T_CIRCUMFLEX ? PY_BitXor : 0; }
static int op_or(int t) { return t == T_VBAR ? PY_BitOr : 0; }

/* term -> factor (('*' | '/' | '//' | '%' | '@') factor)* */
static py_expr *term(py_parser *p) { return left_assoc(p, factor, op_term); }
/* sum -> term (('+' | '-') term)* */
static py_expr *sum(py_parser *p) { return left_assoc(p, term, op_sum); }
/* shift_expr -> sum (('<<' | '>>') sum)* */
static py_expr *shift_expr(py_parser *p) { return left_assoc(p, sum, op_shift); }
/* bitwise_and -> shift_expr ('&' shift_expr)* */
static py_expr *bitwise_and(py_parser *p) { return left_assoc(p, shift_expr, op_and); }
/* bitwise_xor -> bitwise_and ('^' bitwise_and)* */
static py_expr *bitwise_xor(py_parser *p) { return left_assoc(p, bitwise_and, op_xor); }
/* bitwise_or -> bitwise_xor ('|' bitwise_xor)* */
py_expr *py_p_bitwise_or(py_parser *p) { return left_assoc(p, bitwise_xor, op_or); }

/* power -> await_primary ['**' factor] */
static py_expr *power(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *a;
  if (py_p_accept(p, T_AWAIT)) {
    py_expr *e = py_p_primary(p);
    if (!e) return NULL;
    a = py_new_Await(A, e, LOC(s));
  } else {
    a = py_p_primary(p);
  }
  if (a && py_p_accept(p, T_DOUBLESTAR)) {
    py_expr *b = factor(p);
    if (!b) return NULL;
    a = py_new_BinOp(A, a, PY_Pow, b, LOC(s));
  }
  return a;
}

/* factor -> ('+' | '-' | '~') factor | power */
static py_expr *factor(py_parser *p) {
  py_pos s = py_p_start(p);
  int t = py_p_peek(p)->type;
  int op = t == T_PLUS ? PY_UAdd : t == T_MINUS ? PY_USub : t == T_TILDE ? PY_Invert : 0;
  if (!op) return power(p);
  py_p_next(p);
  if (!py_p_enter(p)) return NULL;
  py_expr *e = factor(p);
  py_p_leave(p);
  if (!e) return NULL;
  return py_new_UnaryOp(A, op, e, LOC(s));
}

/* ------------------------------------------------------------------ primary */

/* slice -> [expression] ':' [expression] [':' [expression]] | named_expression */
static py_expr *slice(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *lo = NULL, *hi = NULL, *st = NULL;
  if (!py_p_check(p, T_COLON)) {
    lo = py_p_named_expression(p);
    if (!lo) return NULL;
    if (!py_p_check(p, T_COLON)) return lo;
    if (lo->kind == PY_K_NamedExpr) return py_p_syntax_error(p);
  }
  py_p_next(p);
  int t = py_p_peek(p)->type;
  if (t != T_COLON && t != T_COMMA && t != T_RSQB) {
    hi = py_p_expression(p);
    if (!hi) return NULL;
  }
  if (py_p_accept(p, T_COLON)) {
    t = py_p_peek(p)->type;
    if (t != T_COMMA && t != T_RSQB) {
      st = py_p_expression(p);
      if (!st) return NULL;
    }
  }
  return py_new_Slice(A, lo, hi, st, LOC(s));
}

/* slices -> slice !',' | (slice | starred_expression) (',' ...)* [','] */
static py_expr *slices(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *e;
  if (py_p_check(p, T_STAR)) {
    e = py_p_star_named_expression(p);
  } else {
    e = slice(p);
  }
  if (!e) return NULL;
  if (!py_p_check(p, T_COMMA)) {
    if (e->kind == PY_K_Starred) return py_new_Tuple(A, py_p_seq1(p, e), PY_Load, LOC(s));
    return e;
  }
  py_vec v = {0};
  sg_vec_push(&v, e);
  while (py_p_accept(p, T_COMMA)) {
    if (py_p_check(p, T_RSQB)) break;
    py_expr *x = py_p_check(p, T_STAR) ? py_p_star_named_expression(p) : slice(p);
    if (!x) {
      sg_vec_free(&v);
      return NULL;
    }
    sg_vec_push(&v, x);
  }
  return py_new_Tuple(A, py_p_seq(p, &v), PY_Load, LOC(s));
}

/* primary -> primary '.' NAME | primary genexp | primary '(' [arguments] ')'
 *          | primary '[' slices ']' | atom */
py_expr *py_p_primary(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *a = py_p_atom(p);
  while (a) {
    int t = py_p_peek(p)->type;
    if (t == T_DOT) {
      py_p_next(p);
      py_tok *n = py_p_peek(p);
      if (n->type != T_NAME) return py_p_syntax_error(p);
      py_p_next(p);
      a = py_new_Attribute(A, a, n->name, PY_Load, LOC(s));
    } else if (t == T_LPAR) {
      py_p_next(p);
      py_seq *args = NULL, *kws = NULL;
      if (!py_p_call_args(p, &args, &kws)) return NULL;
      a = py_new_Call(A, a, args, kws, LOC(s));
    } else if (t == T_LSQB) {
      py_p_next(p);
      py_expr *sl = slices(p);
      if (!sl || !py_p_expect(p, T_RSQB)) return NULL;
      a = py_new_Subscript(A, a, sl, PY_Load, LOC(s));
    } else {
      break;
    }
  }
  return a;
}

/* arguments -> args [','] &')'   (the '(' is already consumed; consumes the ')')
 * args -> (starred_expression | named_expression | NAME '=' expression
 *          | '**' expression) (',' ...)* */
bool py_p_call_args(py_parser *p, py_seq **args, py_seq **keywords) {
  py_tok *lpar = py_p_prev(p);
  py_pos open = {lpar->lineno, lpar->col};
  py_vec av = {0}, kv = {0};
  bool seen_kw = false, seen_dstar = false;
  while (!py_p_check(p, T_RPAR)) {
    py_pos s = py_p_start(p);
    py_tok *t = py_p_peek(p);
    if (t->type == T_STAR) {
      py_p_next(p);
      py_expr *e = py_p_expression(p);
      if (!e) goto fail;
      if (seen_dstar) {
        py_p_error_at(p, s.line, s.col, 0, 0,
                      "iterable argument unpacking follows keyword argument unpacking");
        goto fail;
      }
      sg_vec_push(&av, py_new_Starred(A, e, PY_Load, LOC(s)));
    } else if (t->type == T_DOUBLESTAR) {
      py_p_next(p);
      py_expr *e = py_p_expression(p);
      if (!e) goto fail;
      sg_vec_push(&kv, py_new_keyword(A, NULL, e, LOC(s)));
      seen_dstar = true;
    } else if (t->type == T_NAME && py_p_peek_at(p, 1)->type == T_EQUAL) {
      py_p_next(p);
      py_p_next(p);
      py_expr *e = py_p_expression(p);
      if (!e) goto fail;
      sg_vec_push(&kv, py_new_keyword(A, t->name, e, LOC(s)));
      seen_kw = true;
    } else {
      py_expr *e = py_p_named_expression(p);
      if (!e) goto fail;
      if (py_p_check(p, T_FOR) || py_p_check(p, T_ASYNC)) {
        if (p->no_genexp) {
          py_p_error_tok(p, py_p_peek(p), "invalid syntax");
          goto fail;
        }
        if (e->kind == PY_K_Starred) {
          py_p_error_node(p, e, "iterable unpacking cannot be used in comprehension");
          goto fail;
        }
        py_seq *gens = py_p_for_if_clauses(p);
        if (!gens) goto fail;
        bool alone = av.len == 0 && kv.len == 0 && py_p_check(p, T_RPAR);
        if (!alone) {
          if (py_p_check(p, T_COMMA) && py_p_peek_at(p, 1)->type == T_RPAR && av.len == 0 &&
              kv.len == 0) {
            /* f(x for x in y,) is not allowed either */
          }
          py_p_error_at(p, e->lineno, e->col_offset, 0, 0,
                        "Generator expression must be parenthesized");
          goto fail;
        }
        py_p_next(p); /* ')' */
        e = py_new_GeneratorExp(A, e, gens, open.line, open.col, py_p_end(p).line,
                                py_p_end(p).col);
        sg_vec_push(&av, e);
        *args = py_p_seq(p, &av);
        *keywords = py_p_seq(p, &kv);
        return true;
      }
      if (py_p_check(p, T_EQUAL)) {
        py_p_error_at(p, e->lineno, e->col_offset, e->end_lineno, e->end_col_offset,
                      "expression cannot contain assignment, perhaps you meant \"==\"?");
        goto fail;
      }
      if (seen_dstar || seen_kw) {
        py_p_error_at(p, e->end_lineno, e->end_col_offset, 0, 0,
                      seen_dstar ? "positional argument follows keyword argument unpacking"
                                 : "positional argument follows keyword argument");
        goto fail;
      }
      sg_vec_push(&av, e);
      if (!py_p_check(p, T_COMMA) && !py_p_check(p, T_RPAR)) {
        missing_comma(p, e);
        if (p->failed) goto fail;
      }
    }
    if (!py_p_accept(p, T_COMMA)) break;
  }
  if (!py_p_expect(p, T_RPAR)) goto fail;
  *args = py_p_seq(p, &av);
  *keywords = py_p_seq(p, &kv);
  return true;
fail:
  sg_vec_free(&av);
  sg_vec_free(&kv);
  return false;
}

/* for_if_clauses -> (['async'] 'for' star_targets 'in' disjunction ('if' disjunction)*)+ */
py_seq *py_p_for_if_clauses(py_parser *p) {
  py_vec v = {0};
  while (py_p_check(p, T_FOR) || (py_p_check(p, T_ASYNC) && py_p_peek_at(p, 1)->type == T_FOR)) {
    int is_async = py_p_accept(p, T_ASYNC) ? 1 : 0;
    py_p_next(p);
    py_expr *target = py_p_star_targets(p);
    if (!target) goto fail;
    if (!py_p_expect(p, T_IN)) goto fail;
    py_expr *iter = py_p_disjunction(p);
    if (!iter) goto fail;
    py_vec ifs = {0};
    while (py_p_accept(p, T_IF)) {
      py_expr *c = py_p_disjunction(p);
      if (!c) {
        sg_vec_free(&ifs);
        goto fail;
      }
      sg_vec_push(&ifs, c);
    }
    sg_vec_push(&v, py_new_comprehension(A, target, iter, py_p_seq(p, &ifs), is_async));
  }
  return py_p_seq(p, &v);
fail:
  sg_vec_free(&v);
  return NULL;
}

/* ------------------------------------------------------------------ atoms */

/* CPython's invalid_expression: two expressions in a row inside brackets. */
static void *missing_comma(py_parser *p, const py_expr *e) {
  if (p->failed || p->tz.level == 0) return NULL;
  py_tok *t = py_p_peek(p);
  switch (t->type) {
  case T_NAME:
  case T_NUMBER:
  case T_STRING:
  case T_FSTRING_START:
  case T_LBRACE:
  case T_NONE:
  case T_TRUE:
  case T_FALSE:
  case T_LAMBDA:
  case T_NOT:
  case T_TILDE:
  case T_AWAIT:
    if (e->kind == PY_K_Name && (t->type == T_STRING || t->type == T_FSTRING_START)) return NULL;
    if (t->type == T_NAME && (t->name == p->kw_match || t->name == p->kw_case)) return NULL;
    return py_p_error_node(p, e, "invalid syntax. Perhaps you forgot a comma?");
  default: return NULL;
  }
}

static bool comprehension_start(py_parser *p, const py_expr *e) {
  if (!py_p_check(p, T_FOR) && !(py_p_check(p, T_ASYNC) && py_p_peek_at(p, 1)->type == T_FOR))
    return false;
  if (e->kind == PY_K_Starred) {
    py_p_error_node(p, e, "iterable unpacking cannot be used in comprehension");
    return false;
  }
  return true;
}

/* Collects elements after the first, up to and including the closing bracket. */
static bool star_named_expressions_tail(py_parser *p, py_vec *elts, int close) {
  while (py_p_accept(p, T_COMMA)) {
    if (py_p_check(p, close)) break;
    py_expr *x = py_p_star_named_expression(p);
    if (!x) return false;
    sg_vec_push(elts, x);
  }
  if (!py_p_check(p, close) && elts->len) missing_comma(p, sg_vec_last(elts));
  return py_p_expect(p, close);
}

/* '(' group | tuple | genexp ')' */
static py_expr *paren_atom(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  if (py_p_accept(p, T_RPAR)) return py_new_Tuple(A, NULL, PY_Load, LOC(s));
  if (py_p_check(p, T_YIELD)) {
    py_expr *y = py_p_yield_expr(p);
    if (!y || !py_p_expect(p, T_RPAR)) return NULL;
    return y;
  }
  py_expr *e = py_p_star_named_expression(p);
  if (!e) return NULL;
  if (comprehension_start(p, e)) {
    py_seq *g = py_p_for_if_clauses(p);
    if (!g || !py_p_expect(p, T_RPAR)) return NULL;
    return py_new_GeneratorExp(A, e, g, LOC(s));
  }
  if (py_p_check(p, T_COMMA)) {
    py_vec v = {0};
    sg_vec_push(&v, e);
    if (!star_named_expressions_tail(p, &v, T_RPAR)) {
      sg_vec_free(&v);
      return NULL;
    }
    return py_new_Tuple(A, py_p_seq(p, &v), PY_Load, LOC(s));
  }
  if (p->failed) return NULL;
  if (!py_p_check(p, T_RPAR)) missing_comma(p, e);
  if (!py_p_expect(p, T_RPAR)) return NULL;
  if (e->kind == PY_K_Starred) return py_p_error_node(p, e, "cannot use starred expression here");
  return e;
}

/* '[' list | listcomp ']' */
static py_expr *list_atom(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  if (py_p_accept(p, T_RSQB)) return py_new_List(A, NULL, PY_Load, LOC(s));
  py_expr *e = py_p_star_named_expression(p);
  if (!e) return NULL;
  if (comprehension_start(p, e)) {
    py_seq *g = py_p_for_if_clauses(p);
    if (!g || !py_p_expect(p, T_RSQB)) return NULL;
    return py_new_ListComp(A, e, g, LOC(s));
  }
  py_vec v = {0};
  sg_vec_push(&v, e);
  if (!star_named_expressions_tail(p, &v, T_RSQB)) {
    sg_vec_free(&v);
    return NULL;
  }
  return py_new_List(A, py_p_seq(p, &v), PY_Load, LOC(s));
}

/* '{' dict | set | dictcomp | setcomp '}' */
static py_expr *brace_atom(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  if (py_p_accept(p, T_RBRACE)) return py_new_Dict(A, NULL, NULL, LOC(s));
  py_vec keys = {0}, vals = {0};
  if (py_p_check(p, T_DOUBLESTAR)) goto dict;
  bool plain = !py_p_check(p, T_STAR) &&
               !(py_p_check(p, T_NAME) && py_p_peek_at(p, 1)->type == T_COLONEQUAL);
  py_expr *e = plain ? py_p_expression(p) : py_p_star_named_expression(p);
  if (!e) return NULL;
  if (plain && py_p_check(p, T_COLONEQUAL))
    return py_p_error_node(p, e, "cannot use assignment expressions with %s", py_p_expr_name(e));
  if (py_p_check(p, T_COLON) && plain) {
    py_p_next(p);
    py_expr *v = py_p_expression(p);
    if (!v) return NULL;
    if (py_p_check(p, T_FOR) || py_p_check(p, T_ASYNC)) {
      py_seq *g = py_p_for_if_clauses(p);
      if (!g || !py_p_expect(p, T_RBRACE)) return NULL;
      return py_new_DictComp(A, e, v, g, LOC(s));
    }
    sg_vec_push(&keys, e);
    sg_vec_push(&vals, v);
    if (!py_p_accept(p, T_COMMA)) goto dict_end;
    goto dict;
  }
  if (comprehension_start(p, e)) {
    py_seq *g = py_p_for_if_clauses(p);
    if (!g || !py_p_expect(p, T_RBRACE)) return NULL;
    return py_new_SetComp(A, e, g, LOC(s));
  }
  {
    py_vec v = {0};
    sg_vec_push(&v, e);
    if (!star_named_expressions_tail(p, &v, T_RBRACE)) {
      sg_vec_free(&v);
      return NULL;
    }
    return py_new_Set(A, py_p_seq(p, &v), LOC(s));
  }
dict:
  while (!py_p_check(p, T_RBRACE)) {
    if (py_p_accept(p, T_DOUBLESTAR)) {
      py_expr *v = py_p_bitwise_or(p);
      if (!v) goto fail;
      sg_vec_push(&keys, NULL);
      sg_vec_push(&vals, v);
    } else {
      py_expr *k = py_p_expression(p);
      if (!k) goto fail;
      if (!py_p_check(p, T_COLON)) {
        if (py_p_check(p, T_COMMA) || py_p_check(p, T_RBRACE))
          py_p_error_node(p, k, "':' expected after dictionary key");
        else
          py_p_syntax_error(p);
        goto fail;
      }
      py_p_next(p);
      py_expr *v = py_p_expression(p);
      if (!v) goto fail;
      sg_vec_push(&keys, k);
      sg_vec_push(&vals, v);
    }
    if (!py_p_accept(p, T_COMMA)) break;
  }
dict_end:
  if (!py_p_expect(p, T_RBRACE)) goto fail;
  {
    py_seq *ks = py_p_seq(p, &keys);
    return py_new_Dict(A, ks, py_p_seq(p, &vals), LOC(s));
  }
fail:
  sg_vec_free(&keys);
  sg_vec_free(&vals);
  return NULL;
}

/* atom -> NAME | 'True' | 'False' | 'None' | strings | NUMBER | tuple | group | genexp
 *       | list | listcomp | dict | set | dictcomp | setcomp | '...' */
py_expr *py_p_atom(py_parser *p) {
  py_tok *t = py_p_peek(p);
  py_constant c = {0};
  switch (t->type) {
  case T_NAME:
    py_p_next(p);
    return py_new_Name(A, t->name, PY_Load, t->lineno, t->col, t->end_lineno, t->end_col);
  case T_TRUE: c.kind = PY_CONST_TRUE; break;
  case T_FALSE: c.kind = PY_CONST_FALSE; break;
  case T_NONE: c.kind = PY_CONST_NONE; break;
  case T_ELLIPSIS: c.kind = PY_CONST_ELLIPSIS; break;
  case T_NUMBER:
    py_p_next(p);
    return py_p_number(p, t);
  case T_STRING:
  case T_FSTRING_START: return py_p_strings(p);
  case T_LPAR: return paren_atom(p);
  case T_LSQB: return list_atom(p);
  case T_LBRACE: return brace_atom(p);
  default: return py_p_syntax_error(p);
  }
  py_p_next(p);
  return py_new_Constant(A, c, NULL, t->lineno, t->col, t->end_lineno, t->end_col);
}

/* ------------------------------------------------------------------ parameters */

/* lambdef -> 'lambda' [lambda_params] ':' expression */
static py_expr *lambdef(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  py_arguments *args = py_p_params(p, true);
  if (!args || !py_p_expect(p, T_COLON)) return NULL;
  if (!py_p_enter(p)) return NULL;
  py_expr *body = py_p_expression(p);
  py_p_leave(p);
  if (!body) return NULL;
  return py_new_Lambda(A, args, body, LOC(s));
}

/* param -> NAME [':' expression]   (star_annotation for *args: '*' bitwise_or) */
static py_arg *param(py_parser *p, bool lambda, bool star) {
  py_pos s = py_p_start(p);
  py_tok *n = py_p_peek(p);
  if (n->type != T_NAME) return py_p_syntax_error(p);
  py_p_next(p);
  py_expr *ann = NULL;
  if (!lambda && py_p_accept(p, T_COLON)) {
    if (star && py_p_check(p, T_STAR)) {
      py_pos ss = py_p_start(p);
      py_p_next(p);
      py_expr *e = py_p_bitwise_or(p);
      if (!e) return NULL;
      ann = py_new_Starred(A, e, PY_Load, LOC(ss));
    } else {
      ann = py_p_expression(p);
      if (!ann) return NULL;
    }
  }
  return py_new_arg(A, n->name, ann, NULL, LOC(s));
}

/* parameters -> a comma-separated mix of plain, '/', '*' [param], '**' param, with
 * defaults; lambda_params the same without annotations. Stops at ')' or ':'. */
py_arguments *py_p_params(py_parser *p, bool lambda) {
  int close = lambda ? T_COLON : T_RPAR;
  py_vec posonly = {0}, args = {0}, defaults = {0}, kwonly = {0}, kwdefaults = {0};
  py_arg *vararg = NULL, *kwarg = NULL;
  bool seen_star = false, seen_slash = false;
  while (!py_p_check(p, close)) {
    py_tok *t = py_p_peek(p);
    if (kwarg) {
      py_p_error_tok(p, t, "arguments cannot follow var-keyword argument");
      goto fail;
    }
    if (t->type == T_SLASH) {
      if (seen_slash) {
        py_p_error_tok(p, t, "/ may appear only once");
        goto fail;
      }
      if (seen_star) {
        py_p_error_tok(p, t, "/ must be ahead of *");
        goto fail;
      }
      if (args.len == 0) {
        py_p_error_tok(p, t, "at least one argument must precede /");
        goto fail;
      }
      py_p_next(p);
      seen_slash = true;
      for (size_t i = 0; i < args.len; i++) sg_vec_push(&posonly, args.data[i]);
      args.len = 0;
    } else if (t->type == T_STAR) {
      if (seen_star) {
        py_p_error_tok(p, t, "* argument may appear only once");
        goto fail;
      }
      py_p_next(p);
      seen_star = true;
      if (!py_p_check(p, T_COMMA) && !py_p_check(p, close)) {
        vararg = param(p, lambda, true);
        if (!vararg) goto fail;
        if (py_p_check(p, T_EQUAL)) {
          py_p_error_tok(p, py_p_peek(p), "var-positional argument cannot have default value");
          goto fail;
        }
      } else if (py_p_check(p, close) ||
                 (py_p_check(p, T_COMMA) && (py_p_peek_at(p, 1)->type == close ||
                                             py_p_peek_at(p, 1)->type == T_DOUBLESTAR))) {
        py_p_error_tok(p, t, "named arguments must follow bare *");
        goto fail;
      }
    } else if (t->type == T_DOUBLESTAR) {
      py_p_next(p);
      kwarg = param(p, lambda, false);
      if (!kwarg) goto fail;
      if (py_p_check(p, T_EQUAL)) {
        py_p_error_tok(p, py_p_peek(p), "var-keyword argument cannot have default value");
        goto fail;
      }
    } else {
      py_arg *a = param(p, lambda, false);
      if (!a) goto fail;
      py_expr *def = NULL;
      if (py_p_accept(p, T_EQUAL)) {
        def = py_p_expression(p);
        if (!def) goto fail;
      }
      if (seen_star) {
        sg_vec_push(&kwonly, a);
        sg_vec_push(&kwdefaults, def);
      } else {
        if (def) {
          sg_vec_push(&defaults, def);
        } else if (defaults.len) {
          py_p_error_at(p, a->lineno, a->col_offset, a->end_lineno, a->end_col_offset,
                        "parameter without a default follows parameter with a default");
          goto fail;
        }
        sg_vec_push(&args, a);
      }
    }
    if (!py_p_accept(p, T_COMMA)) break;
  }
  if (!py_p_check(p, close)) {
    py_p_syntax_error(p);
    goto fail;
  }
  {
    py_seq *s1 = py_p_seq(p, &posonly), *s2 = py_p_seq(p, &args), *s3 = py_p_seq(p, &kwonly);
    py_seq *s4 = py_p_seq(p, &kwdefaults), *s5 = py_p_seq(p, &defaults);
    return py_new_arguments(A, s1, s2, vararg, s3, s4, kwarg, s5);
  }
fail:
  sg_vec_free(&posonly);
  sg_vec_free(&args);
  sg_vec_free(&defaults);
  sg_vec_free(&kwonly);
  sg_vec_free(&kwdefaults);
  return NULL;
}

/* type_params -> '[' type_param (',' type_param)* [','] ']'
 * type_param -> NAME [':' expression] | '*' NAME | '**' NAME */
py_seq *py_p_type_params(py_parser *p) {
  py_vec v = {0};
  py_p_next(p); /* '[' */
  while (!py_p_check(p, T_RSQB)) {
    py_pos s = py_p_start(p);
    int kind = py_p_accept(p, T_STAR) ? 1 : py_p_accept(p, T_DOUBLESTAR) ? 2 : 0;
    py_tok *n = py_p_peek(p);
    if (n->type != T_NAME) {
      py_p_syntax_error(p);
      goto fail;
    }
    py_p_next(p);
    py_type_param *tp;
    if (kind == 1) {
      tp = py_new_TypeVarTuple(A, n->name, LOC(s));
    } else if (kind == 2) {
      tp = py_new_ParamSpec(A, n->name, LOC(s));
    } else {
      py_expr *bound = NULL;
      if (py_p_accept(p, T_COLON)) {
        bound = py_p_expression(p);
        if (!bound) goto fail;
      }
      tp = py_new_TypeVar(A, n->name, bound, LOC(s));
    }
    sg_vec_push(&v, tp);
    if (!py_p_accept(p, T_COMMA)) break;
  }
  if (!py_p_expect(p, T_RSQB)) goto fail;
  if (v.len == 0) {
    py_p_syntax_error(p);
    goto fail;
  }
  return py_p_seq(p, &v);
fail:
  sg_vec_free(&v);
  return NULL;
}
