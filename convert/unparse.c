// SPDX-License-Identifier: Apache-2.0
/*
 * unparse.c — AST back to Python source (like ast.unparse). The output parses back
 * to an AST equal to the input (locations aside); formatting is normalised and
 * comments are gone. Parentheses come from operator precedence, as in ast.unparse:
 * each expression is written with the precedence its context requires and wrapped in
 * parentheses when its own is lower. Nested f-strings alternate their quotes.
 */
#include <math.h>
#include <string.h>

#include "dump_priv.h"
#include "py.h"

enum {
  P_TUPLE = 0, P_YIELD, P_TEST, P_OR, P_AND, P_NOT, P_CMP, P_BOR, P_BXOR, P_BAND, P_SHIFT,
  P_ARITH, P_TERM, P_FACTOR, P_POWER, P_AWAIT, P_ATOM
};

typedef struct up {
  sg_buf *out;
  int indent;
  int fdepth; /* f-strings enclosing this output: quotes alternate with depth */
} up;

static void expr(up *u, const py_expr *e, int prec);
static void stmts(up *u, const py_seq *body);
static void pattern(up *u, const py_pattern *p);

static void put(up *u, const char *s) { sg_buf_puts(u->out, s); }

static void fill(up *u) {
  if (u->out->len) sg_buf_putc(u->out, '\n');
  for (int i = 0; i < u->indent; i++) sg_buf_puts(u->out, "    ");
}

/* ------------------------------------------------------------------ constants */

static void put_double(up *u, double d) {
  if (isinf(d)) {
    put(u, "1e309");
    return;
  }
  py_constant c = {PY_CONST_FLOAT, 0, NULL, d};
  py_dumper dd = {u->out, false, false, true};
  py_dump_constant(&dd, &c);
}

static void constant(up *u, const py_constant *c, const char *kind) {
  switch (c->kind) {
  case PY_CONST_NONE: put(u, "None"); return;
  case PY_CONST_TRUE: put(u, "True"); return;
  case PY_CONST_FALSE: put(u, "False"); return;
  case PY_CONST_ELLIPSIS: put(u, "..."); return;
  case PY_CONST_INT: sg_buf_append(u->out, c->s, c->len); return;
  case PY_CONST_FLOAT: put_double(u, c->d); return;
  case PY_CONST_COMPLEX:
    if (isinf(c->d)) {
      put(u, "1e309j");
      return;
    }
    put_double(u, c->d);
    put(u, "j");
    return;
  case PY_CONST_STR:
    if (kind) put(u, kind);
    py_repr_str(u->out, c->s, c->len);
    return;
  case PY_CONST_BYTES: {
    py_dumper dd = {u->out, false, false, true};
      py_dump_constant(&dd, c);
    return;
  }
  }
}

/* ------------------------------------------------------------------ f-strings */

static void fstring_body(up *u, const py_seq *values, char quote, bool spec);

/* Literal text of an f-string: escaped like repr, braces doubled; in a format spec,
 * where '{{' would open a field, braces are written as escapes. */
static void fstring_text(up *u, const py_constant *c, char quote, bool spec) {
  sg_buf r = SG_BUF_INIT;
  py_repr_str(&r, c->s, c->len);
  char q = r.data[0];
  for (size_t i = 1; i + 1 < r.len; i++) {
    char ch = r.data[i];
    if (spec && (ch == '{' || ch == '}')) {
      sg_buf_puts(u->out, ch == '{' ? "\\x7b" : "\\x7d");
      continue;
    }
    if (ch == '{' || ch == '}') sg_buf_putc(u->out, ch);
    if (ch == quote && q != quote) sg_buf_putc(u->out, '\\');
    sg_buf_putc(u->out, ch);
  }
  sg_buf_free(&r);
}

static void formatted_value(up *u, const py_expr *e, char quote) {
  sg_buf inner = SG_BUF_INIT;
  up iu = {&inner, 0, u->fdepth};
  expr(&iu, e->v.FormattedValue.value, P_TEST + 1);
  put(u, "{");
  if (inner.len && inner.data[0] == '{') put(u, " ");
  sg_buf_append(u->out, inner.data, inner.len);
  sg_buf_free(&inner);
  if (e->v.FormattedValue.conversion > 0) {
    sg_buf_putc(u->out, '!');
    sg_buf_putc(u->out, (char)e->v.FormattedValue.conversion);
  }
  if (e->v.FormattedValue.format_spec) {
    put(u, ":");
    const py_expr *spec = e->v.FormattedValue.format_spec;
    if (spec->kind == PY_K_JoinedStr) fstring_body(u, spec->v.JoinedStr.values, quote, true);
  }
  put(u, "}");
}

static void fstring_body(up *u, const py_seq *values, char quote, bool spec) {
  for (int i = 0; i < PY_SEQ_LEN(values); i++) {
    const py_expr *v = values->a[i];
    if (v->kind == PY_K_Constant) fstring_text(u, &v->v.Constant.value, quote, spec);
    else if (v->kind == PY_K_FormattedValue) formatted_value(u, v, quote);
  }
}

/* The quote alternates with nesting (f"{f'{x}'}") so that the output is also valid
 * before PEP 701 (Python 3.11), which converted code may run on. */
static void joined_str(up *u, const py_expr *e) {
  char quote = u->fdepth % 2 ? '\'' : '"';
  sg_buf_putc(u->out, 'f');
  sg_buf_putc(u->out, quote);
  u->fdepth++;
  fstring_body(u, e->v.JoinedStr.values, quote, false);
  u->fdepth--;
  sg_buf_putc(u->out, quote);
}

/* ------------------------------------------------------------------ expressions */

static void seq_exprs(up *u, const py_seq *s, int prec) {
  for (int i = 0; i < PY_SEQ_LEN(s); i++) {
    if (i) put(u, ", ");
    expr(u, s->a[i], prec);
  }
}

static const char *binop_str(py_operator op, int *prec) {
  switch (op) {
  case PY_Add: *prec = P_ARITH; return " + ";
  case PY_Sub: *prec = P_ARITH; return " - ";
  case PY_Mult: *prec = P_TERM; return " * ";
  case PY_MatMult: *prec = P_TERM; return " @ ";
  case PY_Div: *prec = P_TERM; return " / ";
  case PY_Mod: *prec = P_TERM; return " % ";
  case PY_FloorDiv: *prec = P_TERM; return " // ";
  case PY_Pow: *prec = P_POWER; return " ** ";
  case PY_LShift: *prec = P_SHIFT; return " << ";
  case PY_RShift: *prec = P_SHIFT; return " >> ";
  case PY_BitOr: *prec = P_BOR; return " | ";
  case PY_BitXor: *prec = P_BXOR; return " ^ ";
  case PY_BitAnd: *prec = P_BAND; return " & ";
  }
  *prec = P_ATOM;
  return " ? ";
}

static const char *cmpop_str(py_cmpop op) {
  switch (op) {
  case PY_Eq: return " == ";
  case PY_NotEq: return " != ";
  case PY_Lt: return " < ";
  case PY_LtE: return " <= ";
  case PY_Gt: return " > ";
  case PY_GtE: return " >= ";
  case PY_Is: return " is ";
  case PY_IsNot: return " is not ";
  case PY_In: return " in ";
  case PY_NotIn: return " not in ";
  }
  return " ? ";
}

static void arguments(up *u, const py_arguments *a, bool lambda) {
  bool first = true;
  int npos = PY_SEQ_LEN(a->posonlyargs) + PY_SEQ_LEN(a->args);
  int ndef = PY_SEQ_LEN(a->defaults);
  for (int i = 0; i < npos; i++) {
    const py_arg *x = i < PY_SEQ_LEN(a->posonlyargs) ? a->posonlyargs->a[i]
                                                     : a->args->a[i - PY_SEQ_LEN(a->posonlyargs)];
    if (!first) put(u, ", ");
    first = false;
    put(u, x->arg);
    if (x->annotation && !lambda) {
      put(u, ": ");
      expr(u, x->annotation, P_TEST);
    }
    int d = i - (npos - ndef);
    if (d >= 0) {
      put(u, "=");
      expr(u, a->defaults->a[d], P_TEST);
    }
    if (i + 1 == PY_SEQ_LEN(a->posonlyargs)) put(u, ", /");
  }
  if (a->vararg || PY_SEQ_LEN(a->kwonlyargs)) {
    if (!first) put(u, ", ");
    first = false;
    put(u, "*");
    if (a->vararg) {
      put(u, a->vararg->arg);
      if (a->vararg->annotation && !lambda) {
        put(u, ": ");
        expr(u, a->vararg->annotation, P_TEST);
      }
    }
  }
  for (int i = 0; i < PY_SEQ_LEN(a->kwonlyargs); i++) {
    const py_arg *x = a->kwonlyargs->a[i];
    put(u, ", ");
    put(u, x->arg);
    if (x->annotation && !lambda) {
      put(u, ": ");
      expr(u, x->annotation, P_TEST);
    }
    const py_expr *d = i < PY_SEQ_LEN(a->kw_defaults) ? a->kw_defaults->a[i] : NULL;
    if (d) {
      put(u, "=");
      expr(u, d, P_TEST);
    }
  }
  if (a->kwarg) {
    if (!first) put(u, ", ");
    put(u, "**");
    put(u, a->kwarg->arg);
    if (a->kwarg->annotation && !lambda) {
      put(u, ": ");
      expr(u, a->kwarg->annotation, P_TEST);
    }
  }
}

static void comprehensions(up *u, const py_seq *gens) {
  for (int i = 0; i < PY_SEQ_LEN(gens); i++) {
    const py_comprehension *c = gens->a[i];
    put(u, c->is_async ? " async for " : " for ");
    expr(u, c->target, P_TUPLE);
    put(u, " in ");
    expr(u, c->iter, P_TEST + 1);
    for (int j = 0; j < PY_SEQ_LEN(c->ifs); j++) {
      put(u, " if ");
      expr(u, c->ifs->a[j], P_TEST + 1);
    }
  }
}

static void call_args(up *u, const py_seq *args, const py_seq *kws) {
  bool first = true;
  for (int i = 0; i < PY_SEQ_LEN(args); i++) {
    if (!first) put(u, ", ");
    first = false;
    const py_expr *a = args->a[i];
    if (a->kind == PY_K_GeneratorExp && PY_SEQ_LEN(args) == 1 && !PY_SEQ_LEN(kws)) {
      expr(u, a, P_ATOM);
      continue;
    }
    expr(u, a, P_TEST);
  }
  for (int i = 0; i < PY_SEQ_LEN(kws); i++) {
    if (!first) put(u, ", ");
    first = false;
    const py_keyword *k = kws->a[i];
    if (k->arg) {
      put(u, k->arg);
      put(u, "=");
    } else {
      put(u, "**");
    }
    expr(u, k->value, P_TEST);
  }
}

static void slice_expr(up *u, const py_expr *e) {
  if (e->kind == PY_K_Slice) {
    if (e->v.Slice.lower) expr(u, e->v.Slice.lower, P_TEST);
    put(u, ":");
    if (e->v.Slice.upper) expr(u, e->v.Slice.upper, P_TEST);
    if (e->v.Slice.step) {
      put(u, ":");
      expr(u, e->v.Slice.step, P_TEST);
    }
    return;
  }
  expr(u, e, P_TEST);
}

static void type_params(up *u, const py_seq *tps) {
  if (!PY_SEQ_LEN(tps)) return;
  put(u, "[");
  for (int i = 0; i < tps->n; i++) {
    const py_type_param *t = tps->a[i];
    if (i) put(u, ", ");
    if (t->kind == PY_K_TypeVar) {
      put(u, t->v.TypeVar.name);
      if (t->v.TypeVar.bound) {
        put(u, ": ");
        expr(u, t->v.TypeVar.bound, P_TEST);
      }
    } else if (t->kind == PY_K_ParamSpec) {
      put(u, "**");
      put(u, t->v.ParamSpec.name);
    } else {
      put(u, "*");
      put(u, t->v.TypeVarTuple.name);
    }
  }
  put(u, "]");
}

static void expr(up *u, const py_expr *e, int prec) {
  int own;
  switch (e->kind) {
  case PY_K_BoolOp: {
    own = e->v.BoolOp.op == PY_And ? P_AND : P_OR;
    if (prec > own) put(u, "(");
    for (int i = 0; i < PY_SEQ_LEN(e->v.BoolOp.values); i++) {
      if (i) put(u, own == P_AND ? " and " : " or ");
      expr(u, e->v.BoolOp.values->a[i], own + 1);
    }
    if (prec > own) put(u, ")");
    return;
  }
  case PY_K_NamedExpr:
    put(u, "(");
    expr(u, e->v.NamedExpr.target, P_ATOM);
    put(u, " := ");
    expr(u, e->v.NamedExpr.value, P_TEST);
    put(u, ")");
    return;
  case PY_K_BinOp: {
    const char *op = binop_str(e->v.BinOp.op, &own);
    int lp = own, rp = own + 1;
    if (e->v.BinOp.op == PY_Pow) lp = own + 1, rp = own;
    if (prec > own) put(u, "(");
    expr(u, e->v.BinOp.left, lp);
    put(u, op);
    expr(u, e->v.BinOp.right, rp);
    if (prec > own) put(u, ")");
    return;
  }
  case PY_K_UnaryOp: {
    py_unaryop op = e->v.UnaryOp.op;
    own = op == PY_Not ? P_NOT : P_FACTOR;
    if (prec > own) put(u, "(");
    put(u, op == PY_Not ? "not " : op == PY_USub ? "-" : op == PY_UAdd ? "+" : "~");
    expr(u, e->v.UnaryOp.operand, own);
    if (prec > own) put(u, ")");
    return;
  }
  case PY_K_Lambda:
    if (prec > P_TEST) put(u, "(");
    put(u, "lambda");
    {
      sg_buf a = SG_BUF_INIT;
      up au = {&a, 0, u->fdepth};
      arguments(&au, e->v.Lambda.args, true);
      if (a.len) {
        put(u, " ");
        sg_buf_append(u->out, a.data, a.len);
      }
      sg_buf_free(&a);
    }
    put(u, ": ");
    expr(u, e->v.Lambda.body, P_TEST);
    if (prec > P_TEST) put(u, ")");
    return;
  case PY_K_IfExp:
    if (prec > P_TEST) put(u, "(");
    expr(u, e->v.IfExp.body, P_TEST + 1);
    put(u, " if ");
    expr(u, e->v.IfExp.test, P_TEST + 1);
    put(u, " else ");
    expr(u, e->v.IfExp.orelse, P_TEST);
    if (prec > P_TEST) put(u, ")");
    return;
  case PY_K_Dict:
    put(u, "{");
    for (int i = 0; i < PY_SEQ_LEN(e->v.Dict.values); i++) {
      if (i) put(u, ", ");
      const py_expr *k = e->v.Dict.keys->a[i];
      if (k) {
        expr(u, k, P_TEST);
        put(u, ": ");
        expr(u, e->v.Dict.values->a[i], P_TEST);
      } else {
        put(u, "**");
        expr(u, e->v.Dict.values->a[i], P_BOR);
      }
    }
    put(u, "}");
    return;
  case PY_K_Set:
    put(u, "{");
    seq_exprs(u, e->v.Set.elts, P_TEST);
    put(u, "}");
    return;
  case PY_K_ListComp:
    put(u, "[");
    expr(u, e->v.ListComp.elt, P_TEST);
    comprehensions(u, e->v.ListComp.generators);
    put(u, "]");
    return;
  case PY_K_SetComp:
    put(u, "{");
    expr(u, e->v.SetComp.elt, P_TEST);
    comprehensions(u, e->v.SetComp.generators);
    put(u, "}");
    return;
  case PY_K_DictComp:
    put(u, "{");
    expr(u, e->v.DictComp.key, P_TEST);
    put(u, ": ");
    expr(u, e->v.DictComp.value, P_TEST);
    comprehensions(u, e->v.DictComp.generators);
    put(u, "}");
    return;
  case PY_K_GeneratorExp:
    put(u, "(");
    expr(u, e->v.GeneratorExp.elt, P_TEST);
    comprehensions(u, e->v.GeneratorExp.generators);
    put(u, ")");
    return;
  case PY_K_Await:
    if (prec > P_AWAIT) put(u, "(");
    put(u, "await ");
    expr(u, e->v.Await.value, P_ATOM);
    if (prec > P_AWAIT) put(u, ")");
    return;
  case PY_K_Yield:
    if (prec > P_YIELD) put(u, "(");
    put(u, "yield");
    if (e->v.Yield.value) {
      put(u, " ");
      expr(u, e->v.Yield.value, P_TUPLE);
    }
    if (prec > P_YIELD) put(u, ")");
    return;
  case PY_K_YieldFrom:
    if (prec > P_YIELD) put(u, "(");
    put(u, "yield from ");
    expr(u, e->v.YieldFrom.value, P_TEST);
    if (prec > P_YIELD) put(u, ")");
    return;
  case PY_K_Compare:
    if (prec > P_CMP) put(u, "(");
    expr(u, e->v.Compare.left, P_CMP + 1);
    for (int i = 0; i < PY_SEQ_LEN(e->v.Compare.ops); i++) {
      put(u, cmpop_str((py_cmpop)(intptr_t)e->v.Compare.ops->a[i]));
      expr(u, e->v.Compare.comparators->a[i], P_CMP + 1);
    }
    if (prec > P_CMP) put(u, ")");
    return;
  case PY_K_Call:
    expr(u, e->v.Call.func, P_ATOM);
    put(u, "(");
    call_args(u, e->v.Call.args, e->v.Call.keywords);
    put(u, ")");
    return;
  case PY_K_FormattedValue: {
    put(u, "f\"");
    formatted_value(u, e, '"');
    put(u, "\"");
    return;
  }
  case PY_K_JoinedStr: joined_str(u, e); return;
  case PY_K_Constant: {
    const py_constant *c = &e->v.Constant.value;
    bool num = c->kind == PY_CONST_INT || c->kind == PY_CONST_FLOAT || c->kind == PY_CONST_COMPLEX;
    if (num && prec == P_ATOM + 1) {
      put(u, "(");
      constant(u, c, e->v.Constant.kind);
      put(u, ")");
      return;
    }
    constant(u, c, e->v.Constant.kind);
    return;
  }
  case PY_K_Attribute:
    expr(u, e->v.Attribute.value, P_ATOM + 1); /* +1: parenthesise numbers (1).real */
    put(u, ".");
    put(u, e->v.Attribute.attr);
    return;
  case PY_K_Subscript: {
    expr(u, e->v.Subscript.value, P_ATOM);
    put(u, "[");
    const py_expr *s = e->v.Subscript.slice;
    if (s->kind == PY_K_Tuple && PY_SEQ_LEN(s->v.Tuple.elts)) {
      for (int i = 0; i < s->v.Tuple.elts->n; i++) {
        if (i) put(u, ", ");
        slice_expr(u, s->v.Tuple.elts->a[i]);
      }
      if (s->v.Tuple.elts->n == 1) put(u, ",");
    } else {
      slice_expr(u, s);
    }
    put(u, "]");
    return;
  }
  case PY_K_Starred:
    put(u, "*");
    expr(u, e->v.Starred.value, P_BOR);
    return;
  case PY_K_Name: put(u, e->v.Name.id); return;
  case PY_K_List:
    put(u, "[");
    seq_exprs(u, e->v.List.elts, P_TEST);
    put(u, "]");
    return;
  case PY_K_Tuple: {
    int n = PY_SEQ_LEN(e->v.Tuple.elts);
    put(u, "(");
    seq_exprs(u, e->v.Tuple.elts, P_TEST);
    if (n == 1) put(u, ",");
    put(u, ")");
    return;
  }
  case PY_K_Slice: slice_expr(u, e); return;
  default: put(u, "?"); return;
  }
}

/* ------------------------------------------------------------------ patterns */

static void patterns(up *u, const py_seq *s) {
  for (int i = 0; i < PY_SEQ_LEN(s); i++) {
    if (i) put(u, ", ");
    pattern(u, s->a[i]);
  }
}

static void pattern(up *u, const py_pattern *p) {
  switch (p->kind) {
  case PY_K_MatchValue: expr(u, p->v.MatchValue.value, P_BOR); return;
  case PY_K_MatchSingleton: constant(u, &p->v.MatchSingleton.value, NULL); return;
  case PY_K_MatchSequence:
    put(u, "[");
    patterns(u, p->v.MatchSequence.patterns);
    put(u, "]");
    return;
  case PY_K_MatchMapping: {
    put(u, "{");
    int n = PY_SEQ_LEN(p->v.MatchMapping.keys);
    for (int i = 0; i < n; i++) {
      if (i) put(u, ", ");
      expr(u, p->v.MatchMapping.keys->a[i], P_BOR);
      put(u, ": ");
      pattern(u, p->v.MatchMapping.patterns->a[i]);
    }
    if (p->v.MatchMapping.rest) {
      if (n) put(u, ", ");
      put(u, "**");
      put(u, p->v.MatchMapping.rest);
    }
    put(u, "}");
    return;
  }
  case PY_K_MatchClass: {
    expr(u, p->v.MatchClass.cls, P_ATOM);
    put(u, "(");
    patterns(u, p->v.MatchClass.patterns);
    int np = PY_SEQ_LEN(p->v.MatchClass.patterns);
    for (int i = 0; i < PY_SEQ_LEN(p->v.MatchClass.kwd_attrs); i++) {
      if (i || np) put(u, ", ");
      put(u, p->v.MatchClass.kwd_attrs->a[i]);
      put(u, "=");
      pattern(u, p->v.MatchClass.kwd_patterns->a[i]);
    }
    put(u, ")");
    return;
  }
  case PY_K_MatchStar:
    put(u, "*");
    put(u, p->v.MatchStar.name ? p->v.MatchStar.name : "_");
    return;
  case PY_K_MatchAs:
    if (!p->v.MatchAs.pattern) {
      put(u, p->v.MatchAs.name ? p->v.MatchAs.name : "_");
      return;
    }
    put(u, "(");
    pattern(u, p->v.MatchAs.pattern);
    put(u, " as ");
    put(u, p->v.MatchAs.name);
    put(u, ")");
    return;
  case PY_K_MatchOr:
    put(u, "(");
    for (int i = 0; i < PY_SEQ_LEN(p->v.MatchOr.patterns); i++) {
      if (i) put(u, " | ");
      pattern(u, p->v.MatchOr.patterns->a[i]);
    }
    put(u, ")");
    return;
  default: put(u, "?"); return;
  }
}

/* ------------------------------------------------------------------ statements */

static void block(up *u, const py_seq *body) {
  put(u, ":");
  u->indent++;
  stmts(u, body);
  u->indent--;
}

static void decorators(up *u, const py_seq *d) {
  for (int i = 0; i < PY_SEQ_LEN(d); i++) {
    fill(u);
    put(u, "@");
    expr(u, d->a[i], P_TEST);
  }
}

static void handlers(up *u, const py_seq *hs, bool star) {
  for (int i = 0; i < PY_SEQ_LEN(hs); i++) {
    const py_excepthandler *h = hs->a[i];
    fill(u);
    put(u, star ? "except*" : "except");
    if (h->v.ExceptHandler.type) {
      put(u, " ");
      expr(u, h->v.ExceptHandler.type, P_TEST);
      if (h->v.ExceptHandler.name) {
        put(u, " as ");
        put(u, h->v.ExceptHandler.name);
      }
    }
    block(u, h->v.ExceptHandler.body);
  }
}

static void orelse(up *u, const py_seq *s) {
  if (!PY_SEQ_LEN(s)) return;
  fill(u);
  put(u, "else");
  block(u, s);
}

static void with_items(up *u, const py_seq *items) {
  for (int i = 0; i < PY_SEQ_LEN(items); i++) {
    const py_withitem *w = items->a[i];
    if (i) put(u, ", ");
    expr(u, w->context_expr, P_TEST + 1);
    if (w->optional_vars) {
      put(u, " as ");
      expr(u, w->optional_vars, P_TEST);
    }
  }
}

static void stmt(up *u, const py_stmt *s) {
  switch (s->kind) {
  case PY_K_FunctionDef:
  case PY_K_AsyncFunctionDef: {
    bool as = s->kind == PY_K_AsyncFunctionDef;
    decorators(u, s->v.FunctionDef.decorator_list);
    fill(u);
    put(u, as ? "async def " : "def ");
    put(u, s->v.FunctionDef.name);
    type_params(u, s->v.FunctionDef.type_params);
    put(u, "(");
    arguments(u, s->v.FunctionDef.args, false);
    put(u, ")");
    if (s->v.FunctionDef.returns) {
      put(u, " -> ");
      expr(u, s->v.FunctionDef.returns, P_TEST);
    }
    block(u, s->v.FunctionDef.body);
    return;
  }
  case PY_K_ClassDef:
    decorators(u, s->v.ClassDef.decorator_list);
    fill(u);
    put(u, "class ");
    put(u, s->v.ClassDef.name);
    type_params(u, s->v.ClassDef.type_params);
    if (PY_SEQ_LEN(s->v.ClassDef.bases) || PY_SEQ_LEN(s->v.ClassDef.keywords)) {
      put(u, "(");
      call_args(u, s->v.ClassDef.bases, s->v.ClassDef.keywords);
      put(u, ")");
    }
    block(u, s->v.ClassDef.body);
    return;
  case PY_K_Return:
    fill(u);
    put(u, "return");
    if (s->v.Return.value) {
      put(u, " ");
      expr(u, s->v.Return.value, P_TEST);
    }
    return;
  case PY_K_Delete:
    fill(u);
    put(u, "del ");
    seq_exprs(u, s->v.Delete.targets, P_TEST);
    return;
  case PY_K_Assign:
    fill(u);
    for (int i = 0; i < PY_SEQ_LEN(s->v.Assign.targets); i++) {
      expr(u, s->v.Assign.targets->a[i], P_TUPLE);
      put(u, " = ");
    }
    expr(u, s->v.Assign.value, P_TUPLE);
    return;
  case PY_K_TypeAlias:
    fill(u);
    put(u, "type ");
    expr(u, s->v.TypeAlias.name, P_ATOM);
    type_params(u, s->v.TypeAlias.type_params);
    put(u, " = ");
    expr(u, s->v.TypeAlias.value, P_TEST);
    return;
  case PY_K_AugAssign: {
    fill(u);
    expr(u, s->v.AugAssign.target, P_ATOM);
    int prec;
    const char *op = binop_str(s->v.AugAssign.op, &prec);
    sg_buf_append(u->out, op, strlen(op) - 1);
    put(u, "= ");
    expr(u, s->v.AugAssign.value, P_TUPLE);
    return;
  }
  case PY_K_AnnAssign:
    fill(u);
    if (!s->v.AnnAssign.simple && s->v.AnnAssign.target->kind == PY_K_Name) put(u, "(");
    expr(u, s->v.AnnAssign.target, P_ATOM);
    if (!s->v.AnnAssign.simple && s->v.AnnAssign.target->kind == PY_K_Name) put(u, ")");
    put(u, ": ");
    expr(u, s->v.AnnAssign.annotation, P_TEST);
    if (s->v.AnnAssign.value) {
      put(u, " = ");
      expr(u, s->v.AnnAssign.value, P_TUPLE);
    }
    return;
  case PY_K_For:
  case PY_K_AsyncFor:
    fill(u);
    put(u, s->kind == PY_K_AsyncFor ? "async for " : "for ");
    expr(u, s->v.For.target, P_TUPLE);
    put(u, " in ");
    expr(u, s->v.For.iter, P_TEST);
    block(u, s->v.For.body);
    orelse(u, s->v.For.orelse);
    return;
  case PY_K_While:
    fill(u);
    put(u, "while ");
    expr(u, s->v.While.test, P_TEST);
    block(u, s->v.While.body);
    orelse(u, s->v.While.orelse);
    return;
  case PY_K_If: {
    fill(u);
    put(u, "if ");
    expr(u, s->v.If.test, P_TEST);
    block(u, s->v.If.body);
    const py_seq *e = s->v.If.orelse;
    while (PY_SEQ_LEN(e) == 1 && ((py_stmt *)e->a[0])->kind == PY_K_If) {
      const py_stmt *el = e->a[0];
      fill(u);
      put(u, "elif ");
      expr(u, el->v.If.test, P_TEST);
      block(u, el->v.If.body);
      e = el->v.If.orelse;
    }
    orelse(u, e);
    return;
  }
  case PY_K_With:
  case PY_K_AsyncWith:
    fill(u);
    put(u, s->kind == PY_K_AsyncWith ? "async with " : "with ");
    with_items(u, s->v.With.items);
    block(u, s->v.With.body);
    return;
  case PY_K_Match:
    fill(u);
    put(u, "match ");
    expr(u, s->v.Match.subject, P_TEST);
    put(u, ":");
    u->indent++;
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++) {
      const py_match_case *c = s->v.Match.cases->a[i];
      fill(u);
      put(u, "case ");
      pattern(u, c->pattern);
      if (c->guard) {
        put(u, " if ");
        expr(u, c->guard, P_TEST);
      }
      block(u, c->body);
    }
    u->indent--;
    return;
  case PY_K_Raise:
    fill(u);
    put(u, "raise");
    if (s->v.Raise.exc) {
      put(u, " ");
      expr(u, s->v.Raise.exc, P_TEST);
      if (s->v.Raise.cause) {
        put(u, " from ");
        expr(u, s->v.Raise.cause, P_TEST);
      }
    }
    return;
  case PY_K_Try:
  case PY_K_TryStar:
    fill(u);
    put(u, "try");
    block(u, s->v.Try.body);
    handlers(u, s->v.Try.handlers, s->kind == PY_K_TryStar);
    orelse(u, s->v.Try.orelse);
    if (PY_SEQ_LEN(s->v.Try.finalbody)) {
      fill(u);
      put(u, "finally");
      block(u, s->v.Try.finalbody);
    }
    return;
  case PY_K_Assert:
    fill(u);
    put(u, "assert ");
    expr(u, s->v.Assert.test, P_TEST);
    if (s->v.Assert.msg) {
      put(u, ", ");
      expr(u, s->v.Assert.msg, P_TEST);
    }
    return;
  case PY_K_Import:
  case PY_K_ImportFrom: {
    fill(u);
    const py_seq *names = s->kind == PY_K_Import ? s->v.Import.names : s->v.ImportFrom.names;
    if (s->kind == PY_K_Import) {
      put(u, "import ");
    } else {
      put(u, "from ");
      for (int i = 0; i < s->v.ImportFrom.level; i++) put(u, ".");
      if (s->v.ImportFrom.module) put(u, s->v.ImportFrom.module);
      put(u, " import ");
    }
    for (int i = 0; i < PY_SEQ_LEN(names); i++) {
      const py_alias *a = names->a[i];
      if (i) put(u, ", ");
      put(u, a->name);
      if (a->asname) {
        put(u, " as ");
        put(u, a->asname);
      }
    }
    return;
  }
  case PY_K_Global:
  case PY_K_Nonlocal: {
    fill(u);
    put(u, s->kind == PY_K_Global ? "global " : "nonlocal ");
    const py_seq *n = s->kind == PY_K_Global ? s->v.Global.names : s->v.Nonlocal.names;
    for (int i = 0; i < PY_SEQ_LEN(n); i++) {
      if (i) put(u, ", ");
      put(u, n->a[i]);
    }
    return;
  }
  case PY_K_Expr:
    fill(u);
    expr(u, s->v.Expr.value, P_YIELD);
    return;
  case PY_K_Pass: fill(u); put(u, "pass"); return;
  case PY_K_Break: fill(u); put(u, "break"); return;
  case PY_K_Continue: fill(u); put(u, "continue"); return;
  default: fill(u); put(u, "?"); return;
  }
}

static void stmts(up *u, const py_seq *body) {
  for (int i = 0; i < PY_SEQ_LEN(body); i++) stmt(u, body->a[i]);
}

void py_unparse_module(const py_mod *mod, sg_buf *out) {
  up u = {out, 0, 0};
  size_t start = out->len;
  if (mod && mod->kind == PY_K_Module) stmts(&u, mod->v.Module.body);
  if (out->len > start) sg_buf_putc(out, '\n');
}

void py_unparse_expr(const py_expr *e, sg_buf *out) {
  up u = {out, 0, 0};
  expr(&u, e, P_TUPLE);
}
