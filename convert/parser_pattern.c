// SPDX-License-Identifier: Apache-2.0
/*
 * parser_pattern.c — the `match` statement (PEP 634) and its patterns, one function
 * per grammar rule. `match` and `case` are soft keywords: match_stmt is tried first
 * and the caller backtracks to an expression statement when the header does not fit.
 */
#include "parser.h"

#include <string.h>

#define A p->arena

static py_pattern *pattern(py_parser *p);
static py_pattern *closed_pattern(py_parser *p);

/* signed_number -> NUMBER | '-' NUMBER */
static py_expr *signed_number(py_parser *p) {
  py_pos s = py_p_start(p);
  if (py_p_accept(p, T_MINUS)) {
    py_tok *t = py_p_peek(p);
    if (t->type != T_NUMBER) return py_p_syntax_error(p);
    py_p_next(p);
    py_expr *n = py_p_number(p, t);
    if (!n) return NULL;
    return py_new_UnaryOp(A, PY_USub, n, LOC(s));
  }
  py_tok *t = py_p_peek(p);
  if (t->type != T_NUMBER) return py_p_syntax_error(p);
  py_p_next(p);
  return py_p_number(p, t);
}

/* literal_expr (the value of a literal pattern or a mapping key):
 *   signed_number ['+' | '-' NUMBER] | strings | 'None' | 'True' | 'False' */
static py_expr *literal_number(py_parser *p) {
  py_pos s = py_p_start(p);
  py_expr *e = signed_number(p);
  if (!e) return NULL;
  if (py_p_check(p, T_PLUS) || py_p_check(p, T_MINUS)) {
    int op = py_p_next(p)->type == T_PLUS ? PY_Add : PY_Sub;
    py_tok *t = py_p_peek(p);
    if (t->type != T_NUMBER) return py_p_syntax_error(p);
    py_p_next(p);
    py_expr *im = py_p_number(p, t);
    if (!im) return NULL;
    if (im->v.Constant.value.kind != PY_CONST_COMPLEX)
      return py_p_error_node(p, im, "imaginary number required in complex literal");
    e = py_new_BinOp(A, e, op, im, LOC(s));
  }
  return e;
}

/* name_or_attr -> NAME ('.' NAME)* */
static py_expr *name_or_attr(py_parser *p) {
  py_pos s = py_p_start(p);
  py_tok *t = py_p_next(p);
  py_expr *e = py_new_Name(A, t->name, PY_Load, t->lineno, t->col, t->end_lineno, t->end_col);
  while (py_p_accept(p, T_DOT)) {
    py_tok *n = py_p_peek(p);
    if (n->type != T_NAME) return py_p_syntax_error(p);
    py_p_next(p);
    e = py_new_Attribute(A, e, n->name, PY_Load, LOC(s));
  }
  return e;
}

/* star_pattern -> '*' (capture_target | '_') */
static py_pattern *star_pattern(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  py_tok *n = py_p_peek(p);
  if (n->type != T_NAME) return py_p_syntax_error(p);
  py_p_next(p);
  return py_new_MatchStar(A, n->name == p->kw_underscore ? NULL : n->name, LOC(s));
}

/* maybe_star_pattern -> star_pattern | pattern */
static py_pattern *maybe_star_pattern(py_parser *p) {
  if (py_p_check(p, T_STAR)) return star_pattern(p);
  return pattern(p);
}

/* sequence_pattern -> '[' [maybe_sequence_pattern] ']' | '(' [open_sequence_pattern] ')'
 * group_pattern -> '(' pattern ')' */
static py_pattern *sequence_or_group(py_parser *p) {
  py_pos s = py_p_start(p);
  int close = py_p_next(p)->type == T_LSQB ? T_RSQB : T_RPAR;
  py_vec v = {0};
  bool comma = false;
  while (!py_p_check(p, close)) {
    py_pattern *x = maybe_star_pattern(p);
    if (!x) goto fail;
    sg_vec_push(&v, x);
    if (!py_p_accept(p, T_COMMA)) break;
    comma = true;
  }
  if (!py_p_expect(p, close)) goto fail;
  if (close == T_RPAR && v.len == 1 && !comma && ((py_pattern *)v.data[0])->kind != PY_K_MatchStar) {
    py_pattern *g = v.data[0];
    sg_vec_free(&v);
    return g;
  }
  return py_new_MatchSequence(A, py_p_seq(p, &v), LOC(s));
fail:
  sg_vec_free(&v);
  return NULL;
}

/* mapping_pattern -> '{' [key_value_pattern (',' ...)*] [',' '**' NAME] [','] '}'
 * key_value_pattern -> (literal_expr | attr) ':' pattern */
static py_pattern *mapping_pattern(py_parser *p) {
  py_pos s = py_p_start(p);
  py_p_next(p);
  py_vec keys = {0}, pats = {0};
  const char *rest = NULL;
  while (!py_p_check(p, T_RBRACE)) {
    if (py_p_accept(p, T_DOUBLESTAR)) {
      py_tok *n = py_p_peek(p);
      if (n->type != T_NAME) {
        py_p_syntax_error(p);
        goto fail;
      }
      py_p_next(p);
      rest = n->name;
      py_p_accept(p, T_COMMA);
      break;
    }
    py_expr *k;
    py_tok *t = py_p_peek(p);
    if (t->type == T_NAME) {
      k = name_or_attr(p);
      if (k && k->kind == PY_K_Name) {
        py_p_syntax_error(p);
        goto fail;
      }
    } else if (t->type == T_STRING || t->type == T_FSTRING_START) {
      k = py_p_strings(p);
    } else if (t->type == T_NONE || t->type == T_TRUE || t->type == T_FALSE) {
      k = py_p_atom(p);
    } else {
      k = literal_number(p);
    }
    if (!k || !py_p_expect(p, T_COLON)) goto fail;
    py_pattern *v = pattern(p);
    if (!v) goto fail;
    sg_vec_push(&keys, k);
    sg_vec_push(&pats, v);
    if (!py_p_accept(p, T_COMMA)) break;
  }
  if (!py_p_expect(p, T_RBRACE)) goto fail;
  {
    py_seq *ks = py_p_seq(p, &keys);
    return py_new_MatchMapping(A, ks, py_p_seq(p, &pats), rest, LOC(s));
  }
fail:
  sg_vec_free(&keys);
  sg_vec_free(&pats);
  return NULL;
}

/* class_pattern -> name_or_attr '(' [pattern (',' pattern)*] [NAME '=' pattern (',' ...)*]
 *                  [','] ')' */
static py_pattern *class_pattern(py_parser *p, py_expr *cls, py_pos s) {
  py_p_next(p);
  py_vec pats = {0}, kwnames = {0}, kwpats = {0};
  while (!py_p_check(p, T_RPAR)) {
    py_tok *t = py_p_peek(p);
    if (t->type == T_NAME && py_p_peek_at(p, 1)->type == T_EQUAL) {
      py_p_next(p);
      py_p_next(p);
      py_pattern *x = pattern(p);
      if (!x) goto fail;
      sg_vec_push(&kwnames, (void *)t->name);
      sg_vec_push(&kwpats, x);
    } else {
      py_pattern *x = pattern(p);
      if (!x) goto fail;
      if (kwnames.len) {
        py_p_error_at(p, x->lineno, x->col_offset, x->end_lineno, x->end_col_offset,
                      "positional patterns follow keyword patterns");
        goto fail;
      }
      sg_vec_push(&pats, x);
    }
    if (!py_p_accept(p, T_COMMA)) break;
  }
  if (!py_p_expect(p, T_RPAR)) goto fail;
  {
    py_seq *a = py_p_seq(p, &pats), *b = py_p_seq(p, &kwnames);
    return py_new_MatchClass(A, cls, a, b, py_p_seq(p, &kwpats), LOC(s));
  }
fail:
  sg_vec_free(&pats);
  sg_vec_free(&kwnames);
  sg_vec_free(&kwpats);
  return NULL;
}

/* closed_pattern -> literal_pattern | capture_pattern | wildcard_pattern | value_pattern
 *                 | group_pattern | sequence_pattern | mapping_pattern | class_pattern */
static py_pattern *closed_pattern(py_parser *p) {
  py_pos s = py_p_start(p);
  py_tok *t = py_p_peek(p);
  py_constant c = {0};
  switch (t->type) {
  case T_NONE: c.kind = PY_CONST_NONE; goto singleton;
  case T_TRUE: c.kind = PY_CONST_TRUE; goto singleton;
  case T_FALSE: c.kind = PY_CONST_FALSE; goto singleton;
  case T_NUMBER:
  case T_MINUS: {
    py_expr *e = literal_number(p);
    if (!e) return NULL;
    return py_new_MatchValue(A, e, LOC(s));
  }
  case T_STRING:
  case T_FSTRING_START: {
    py_expr *e = py_p_strings(p);
    if (!e) return NULL;
    if (e->kind == PY_K_JoinedStr)
      return py_p_error_node(p, e, "patterns may only match literals and attribute lookups");
    return py_new_MatchValue(A, e, LOC(s));
  }
  case T_LPAR:
  case T_LSQB: return sequence_or_group(p);
  case T_LBRACE: return mapping_pattern(p);
  case T_NAME: {
    py_expr *e = name_or_attr(p);
    if (!e) return NULL;
    if (py_p_check(p, T_LPAR)) return class_pattern(p, e, s);
    if (e->kind == PY_K_Attribute) return py_new_MatchValue(A, e, LOC(s));
    if (t->name == p->kw_underscore) return py_new_MatchAs(A, NULL, NULL, LOC(s));
    return py_new_MatchAs(A, NULL, t->name, LOC(s));
  }
  default: return py_p_syntax_error(p);
  }
singleton:
  py_p_next(p);
  return py_new_MatchSingleton(A, c, LOC(s));
}

/* or_pattern -> closed_pattern ('|' closed_pattern)* */
static py_pattern *or_pattern(py_parser *p) {
  py_pos s = py_p_start(p);
  if (!py_p_enter(p)) return NULL;
  py_pattern *a = closed_pattern(p);
  if (a && py_p_check(p, T_VBAR)) {
    py_vec v = {0};
    sg_vec_push(&v, a);
    while (py_p_accept(p, T_VBAR)) {
      py_pattern *b = closed_pattern(p);
      if (!b) {
        sg_vec_free(&v);
        a = NULL;
        break;
      }
      sg_vec_push(&v, b);
    }
    if (a) a = py_new_MatchOr(A, py_p_seq(p, &v), LOC(s));
  }
  py_p_leave(p);
  return a;
}

/* pattern -> or_pattern ['as' NAME] */
static py_pattern *pattern(py_parser *p) {
  py_pos s = py_p_start(p);
  py_pattern *a = or_pattern(p);
  if (a && py_p_accept(p, T_AS)) {
    py_tok *n = py_p_peek(p);
    if (n->type != T_NAME) return py_p_syntax_error(p);
    if (n->name == p->kw_underscore) return py_p_error_tok(p, n, "cannot use '_' as a target");
    py_p_next(p);
    a = py_new_MatchAs(A, a, n->name, LOC(s));
  }
  return a;
}

/* patterns -> open_sequence_pattern | pattern */
static py_pattern *patterns(py_parser *p) {
  py_pos s = py_p_start(p);
  py_pattern *a = maybe_star_pattern(p);
  if (!a) return NULL;
  if (!py_p_check(p, T_COMMA) && a->kind != PY_K_MatchStar) return a;
  py_vec v = {0};
  sg_vec_push(&v, a);
  while (py_p_accept(p, T_COMMA)) {
    if (py_p_check(p, T_COLON) || py_p_check(p, T_IF)) break;
    py_pattern *x = maybe_star_pattern(p);
    if (!x) {
      sg_vec_free(&v);
      return NULL;
    }
    sg_vec_push(&v, x);
  }
  return py_new_MatchSequence(A, py_p_seq(p, &v), LOC(s));
}

/* case_block -> "case" patterns ['if' named_expression] ':' block */
static py_match_case *case_block(py_parser *p) {
  int line = py_p_peek(p)->lineno;
  py_p_next(p);
  py_pattern *pat = patterns(p);
  if (!pat) return NULL;
  py_expr *guard = NULL;
  if (py_p_accept(p, T_IF)) {
    guard = py_p_named_expression(p);
    if (!guard) return NULL;
  }
  if (!py_p_check(p, T_COLON)) {
    if (py_p_check(p, T_NEWLINE)) py_p_error_tok(p, py_p_peek(p), "expected ':'");
    else py_p_syntax_error(p);
    return NULL;
  }
  py_p_next(p);
  if (py_p_check(p, T_NEWLINE) && py_p_peek_at(p, 1)->type != T_INDENT && !p->tok_failed) {
    py_tok *t = py_p_peek_at(p, 1);
    return py_p_error_at(p, t->lineno, t->col, 0, 0,
                         "expected an indented block after 'case' statement on line %d", line);
  }
  py_seq *body = py_p_block(p);
  if (!body) return NULL;
  return py_new_match_case(A, pat, guard, body);
}

/* match_stmt -> "match" subject_expr ':' NEWLINE INDENT case_block+ DEDENT
 * subject_expr -> star_named_expression ',' star_named_expressions? | named_expression
 * Returns NULL without an error when this is not a match statement. */
py_stmt *py_p_match_stmt(py_parser *p) {
  py_pos s = py_p_start(p);
  size_t mark = p->pos;
  py_p_next(p);
  py_expr *subject = NULL;
  {
    py_pos ss = py_p_start(p);
    int t = py_p_peek(p)->type;
    if (t == T_NEWLINE || t == T_COLON || t == T_EQUAL || t == T_DOT || t == T_ENDMARKER ||
        t == T_COMMA || t == T_RPAR || t == T_SEMI ||
        (t >= T_PLUSEQUAL && t <= T_DOUBLESLASHEQUAL) || t == T_ATEQUAL)
      goto not_match;
    subject = py_p_star_named_expression(p);
    if (subject && py_p_check(p, T_COMMA)) {
      py_vec v = {0};
      sg_vec_push(&v, subject);
      while (py_p_accept(p, T_COMMA)) {
        if (py_p_check(p, T_COLON)) break;
        py_expr *x = py_p_star_named_expression(p);
        if (!x) {
          subject = NULL;
          break;
        }
        sg_vec_push(&v, x);
      }
      if (subject) subject = py_new_Tuple(A, py_p_seq(p, &v), PY_Load, LOC(ss));
      else sg_vec_free(&v);
    } else if (subject && subject->kind == PY_K_Starred) {
      subject = NULL;
    }
  }
  if (!subject || !py_p_check(p, T_COLON)) goto not_match;
  py_p_next(p);
  if (!py_p_check(p, T_NEWLINE)) goto not_match;
  py_p_next(p);
  if (!py_p_check(p, T_INDENT)) {
    py_tok *t = py_p_peek(p);
    if (p->tok_failed) return NULL;
    return py_p_error_at(p, t->lineno, t->col, 0, 0,
                         "expected an indented block after 'match' statement on line %d", s.line);
  }
  py_p_next(p);
  py_vec cases = {0};
  while (py_p_is_soft(p, p->kw_case)) {
    py_match_case *c = case_block(p);
    if (!c) {
      sg_vec_free(&cases);
      return NULL;
    }
    sg_vec_push(&cases, c);
  }
  if (!cases.len || !py_p_expect(p, T_DEDENT)) {
    sg_vec_free(&cases);
    return py_p_syntax_error(p);
  }
  return py_new_Match(A, subject, py_p_seq(p, &cases), LOC(s));
not_match:
  if (!p->tok_failed) {
    p->failed = false;
    p->msg = NULL;
  }
  p->pos = mark;
  return NULL;
}
