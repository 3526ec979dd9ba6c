// SPDX-License-Identifier: Apache-2.0
/*
 * conv_match.c — lowers a `match` statement whose cases test values into an `if` chain
 * on a temporary holding the subject (runs first, so every later pass sees ifs): a
 * staged subject then stages as staged ifs (docs/converter.md "Passes"). Lowered
 * patterns: literals and dotted values (`subject == v`), None / True / False
 * (`subject is v`), or-patterns of those, each with or without a guard, and a final
 * wildcard `_` or capture `x` without a guard (`x = subject`). A match with any other
 * case (class, sequence, mapping, `as`, a guarded capture) stays as it is, since its
 * binding and structural rules have no if-chain equivalent.
 */
#include <stdint.h>

#include "conv_priv.h"

/* A refutable case pattern the lowering knows; *irrefutable for `_` / `x`. */
static bool value_pattern(const py_pattern *p) {
  if (p->kind == PY_K_MatchValue || p->kind == PY_K_MatchSingleton) return true;
  if (p->kind != PY_K_MatchOr) return false;
  for (int i = 0; i < PY_SEQ_LEN(p->v.MatchOr.patterns); i++)
    if (!value_pattern(p->v.MatchOr.patterns->a[i])) return false;
  return true;
}

static bool lowerable(const py_stmt *s) {
  int n = PY_SEQ_LEN(s->v.Match.cases);
  for (int i = 0; i < n; i++) {
    const py_match_case *mc = s->v.Match.cases->a[i];
    const py_pattern *p = mc->pattern;
    bool capture = p->kind == PY_K_MatchAs && p->v.MatchAs.pattern == NULL;
    if (capture ? (mc->guard || i != n - 1) : !value_pattern(p)) return false;
  }
  return n > 0;
}

static py_expr *compare(cv *c, const char *subj, py_cmpop op, py_expr *v, cv_loc at) {
  void *ops[1] = {(void *)(intptr_t)op};
  return py_new_Compare(c->A, cv_name(c, subj, PY_Load, at), cv_seq_n(c, 1, ops), cv_seq1(c, v), at.l, at.c,
                        at.el, at.ec);
}

static py_expr *test_of(cv *c, const py_pattern *p, const char *subj) {
  cv_loc at = {p->lineno, p->col_offset, p->end_lineno, p->end_col_offset};
  if (p->kind == PY_K_MatchValue) return compare(c, subj, PY_Eq, p->v.MatchValue.value, at);
  if (p->kind == PY_K_MatchSingleton)
    return compare(c, subj, PY_Is, py_new_Constant(c->A, p->v.MatchSingleton.value, NULL, at.l, at.c, at.el, at.ec),
                   at);
  cv_vec alts = {0};
  for (int i = 0; i < PY_SEQ_LEN(p->v.MatchOr.patterns); i++)
    cv_push(c, &alts, test_of(c, p->v.MatchOr.patterns->a[i], subj));
  return py_new_BoolOp(c->A, PY_Or, cv_seq(c, &alts), at.l, at.c, at.el, at.ec);
}

static void lower(cv *c, py_stmt *s, cv_vec *out, void *ud) {
  (void)ud;
  if (s->kind != PY_K_Match || !lowerable(s)) {
    cv_push(c, out, s);
    return;
  }
  cv_loc at = cv_loc_of_stmt(s);
  const char *subj = cv_fresh(c, "match", ++c->counter);
  cv_push(c, out, cv_assign_name(c, subj, s->v.Match.subject, at));
  py_seq *rest = NULL; /* built from the last case up */
  for (int i = PY_SEQ_LEN(s->v.Match.cases) - 1; i >= 0; i--) {
    py_match_case *mc = s->v.Match.cases->a[i];
    const py_pattern *p = mc->pattern;
    cv_loc pat = {p->lineno, p->col_offset, p->end_lineno, p->end_col_offset};
    if (p->kind == PY_K_MatchAs) { /* the final `_` / `x`: the else of the chain */
      cv_vec b = {0};
      if (p->v.MatchAs.name)
        cv_push(c, &b, cv_assign_name(c, p->v.MatchAs.name, cv_name(c, subj, PY_Load, pat), pat));
      cv_push_seq(c, &b, mc->body);
      rest = cv_seq(c, &b);
      continue;
    }
    py_expr *test = test_of(c, p, subj);
    if (mc->guard) {
      py_expr *both[2] = {test, mc->guard};
      test = py_new_BoolOp(c->A, PY_And, cv_seq_n(c, 2, (void **)both), pat.l, pat.c, pat.el, pat.ec);
    }
    rest = cv_seq1(c, cv_if(c, test, mc->body, rest, pat));
  }
  cv_push_seq(c, out, rest);
}

void cv_pass_match(cv *c, py_stmt *fn) {
  fn->v.FunctionDef.body = cv_rewrite_stmts(c, fn->v.FunctionDef.body, lower, NULL);
}
