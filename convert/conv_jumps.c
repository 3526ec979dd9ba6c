// SPDX-License-Identifier: Apache-2.0
/*
 * conv_jumps.c — the jump passes of AutoGraph §7.2: `break`, `continue` and `return`
 * become assignments to flags (break__N, continue__N, do_return__/retval__) and the
 * statements after a jump are guarded by `if not flag:`. Loops get the flags as extra
 * tests (a `while` test is rewritten in place, a `for` gets an extra_test recorded in
 * the context). Loop `else` clauses move after the loop, guarded by the break flag.
 * Returns anywhere (loops included) coalesce into one `return sg__.ret(...)` at the end.
 */
#include <string.h>

#include "conv_priv.h"

typedef enum jkind { J_BREAK, J_CONTINUE, J_RETURN } jkind;


static bool block_has_jump(const py_seq *b, jkind k);

/* Does statement s contain a jump of kind k that leaves s (breaks/continues of the
 * current loop level; returns of the current function)? */
static bool has_jump(const py_stmt *s, jkind k) {
  switch (s->kind) {
  case PY_K_Break: return k == J_BREAK;
  case PY_K_Continue: return k == J_CONTINUE;
  case PY_K_Return: return k == J_RETURN;
  case PY_K_FunctionDef:
  case PY_K_AsyncFunctionDef:
  case PY_K_ClassDef: return false;
  case PY_K_For:
  case PY_K_AsyncFor:
    return (k == J_RETURN && block_has_jump(s->v.For.body, k)) || block_has_jump(s->v.For.orelse, k);
  case PY_K_While:
    return (k == J_RETURN && block_has_jump(s->v.While.body, k)) || block_has_jump(s->v.While.orelse, k);
  case PY_K_If: return block_has_jump(s->v.If.body, k) || block_has_jump(s->v.If.orelse, k);
  case PY_K_With:
  case PY_K_AsyncWith: return block_has_jump(s->v.With.body, k);
  case PY_K_Match:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++)
      if (block_has_jump(((py_match_case *)s->v.Match.cases->a[i])->body, k)) return true;
    return false;
  case PY_K_Try:
  case PY_K_TryStar:
    if (block_has_jump(s->v.Try.body, k) || block_has_jump(s->v.Try.orelse, k) ||
        block_has_jump(s->v.Try.finalbody, k))
      return true;
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++)
      if (block_has_jump(((py_excepthandler *)s->v.Try.handlers->a[i])->v.ExceptHandler.body, k)) return true;
    return false;
  default: return false;
  }
}

static bool block_has_jump(const py_seq *b, jkind k) {
  for (int i = 0; i < PY_SEQ_LEN(b); i++)
    if (has_jump(b->a[i], k)) return true;
  return false;
}

typedef struct jp {
  cv *c;
  jkind k;
} jp;

static py_seq *j_block(jp *j, py_seq *body, const char *flag);
static void j_function(cv *c, py_stmt *fn, jkind k);

static py_expr *flag_name(cv *c, const char *flag, cv_loc at) { return cv_name(c, flag, PY_Load, at); }

/* not flag and (test) */
static py_expr *guarded_test(cv *c, const char *flag, py_expr *test, cv_loc at) {
  py_expr *v[2] = {cv_not(c, flag_name(c, flag, at), at), test};
  return py_new_BoolOp(c->A, PY_And, cv_seq_n(c, 2, (void **)v), at.l, at.c, at.el, at.ec);
}

/* `try: fin  except BaseException: flag = False; raise` — an exception raised by a
 * finally block, or by the `__exit__` of a `with` a jump leaves, cancels the jump in
 * flight (the flag is unset when the try starts: statements after a jump are guarded),
 * as Python discards a pending break / continue / return when its finally or
 * `__exit__` raises. */
static py_stmt *cancel_on_raise(cv *c, py_seq *fin, const char *flag, cv_loc at) {
  py_stmt *h[2] = {cv_assign_name(c, flag, cv_bool(c, false, at), at),
                   py_new_Raise(c->A, NULL, NULL, at.l, at.c, at.el, at.ec)};
  py_excepthandler *eh = py_new_ExceptHandler(c->A, cv_name(c, "BaseException", PY_Load, at), NULL,
                                              cv_seq_n(c, 2, (void **)h), at.l, at.c, at.el, at.ec);
  return py_new_Try(c->A, fin, cv_seq1(c, eh), NULL, NULL, at.l, at.c, at.el, at.ec);
}

/* Rewrites the children of compound statement s in place (flag: the flag of the
 * current level, NULL outside a loop for break/continue). Pushes s and possibly
 * statements after it into out. */
static void j_stmt(jp *j, py_stmt *s, const char *flag, cv_vec *out) {
  cv *c = j->c;
  cv_loc at = cv_loc_of_stmt(s);
  switch (s->kind) {
  case PY_K_FunctionDef:
    j_function(c, s, j->k);
    cv_push(c, out, s);
    return;
  case PY_K_If:
    s->v.If.body = j_block(j, s->v.If.body, flag);
    s->v.If.orelse = j_block(j, s->v.If.orelse, flag);
    cv_push(c, out, s);
    return;
  case PY_K_With: {
    bool jumps = flag && block_has_jump(s->v.With.body, j->k);
    s->v.With.body = j_block(j, s->v.With.body, flag);
    cv_push(c, out, jumps ? cancel_on_raise(c, cv_seq1(c, s), flag, at) : s);
    return;
  }
  case PY_K_Match:
    for (int i = 0; i < PY_SEQ_LEN(s->v.Match.cases); i++) {
      py_match_case *mc = s->v.Match.cases->a[i];
      mc->body = j_block(j, mc->body, flag);
    }
    cv_push(c, out, s);
    return;
  case PY_K_Try:
  case PY_K_TryStar: {
    bool body_jumps = flag && block_has_jump(s->v.Try.body, j->k);
    bool jumps = flag && has_jump(s, j->k);
    s->v.Try.body = j_block(j, s->v.Try.body, flag);
    for (int i = 0; i < PY_SEQ_LEN(s->v.Try.handlers); i++) {
      py_excepthandler *h = s->v.Try.handlers->a[i];
      h->v.ExceptHandler.body = j_block(j, h->v.ExceptHandler.body, flag);
    }
    if (s->v.Try.orelse) {
      py_seq *e = j_block(j, s->v.Try.orelse, flag);
      /* a jump out of the try body skips its else clause */
      s->v.Try.orelse = body_jumps ? cv_seq1(c, cv_if(c, cv_not(c, flag_name(c, flag, at), at), e, NULL, at)) : e;
    }
    s->v.Try.finalbody = j_block(j, s->v.Try.finalbody, flag);
    if (jumps && s->v.Try.finalbody) s->v.Try.finalbody = cv_seq1(c, cancel_on_raise(c, s->v.Try.finalbody, flag, at));
    cv_push(c, out, s);
    return;
  }
  case PY_K_For:
  case PY_K_While: {
    bool isfor = s->kind == PY_K_For;
    py_seq **body = isfor ? &s->v.For.body : &s->v.While.body;
    py_seq **orelse = isfor ? &s->v.For.orelse : &s->v.While.orelse;
    const char *own = NULL;
    if (j->k == J_RETURN) {
      bool jumps = block_has_jump(*body, J_RETURN);
      *body = j_block(j, *body, flag);
      if (jumps) {
        if (isfor) cv_add_extra_test(c, s, cv_not(c, flag_name(c, flag, at), at));
        else s->v.While.test = guarded_test(c, flag, s->v.While.test, at);
      }
      cv_push(c, out, s);
      return;
    }
    if (block_has_jump(*body, j->k)) {
      own = cv_fresh(c, j->k == J_BREAK ? "break" : "continue", ++c->counter);
      if (j->k == J_BREAK) {
        cv_push(c, out, cv_assign_name(c, own, cv_bool(c, false, at), at));
        if (isfor) cv_add_extra_test(c, s, cv_not(c, flag_name(c, own, at), at));
        else s->v.While.test = guarded_test(c, own, s->v.While.test, at);
        *body = j_block(j, *body, own);
      } else {
        cv_vec nb = {0};
        cv_push(c, &nb, cv_assign_name(c, own, cv_bool(c, false, at), at));
        cv_push_seq(c, &nb, j_block(j, *body, own));
        *body = cv_seq(c, &nb);
      }
    } else {
      *body = j_block(j, *body, NULL);
    }
    py_seq *e = *orelse;
    *orelse = NULL;
    cv_push(c, out, s);
    if (e) {
      /* the else clause belongs to the enclosing level */
      e = j_block(j, e, flag);
      if (own && j->k == J_BREAK) cv_push(c, out, cv_if(c, cv_not(c, flag_name(c, own, at), at), e, NULL, at));
      else cv_push_seq(c, out, e);
    }
    return;
  }
  default: cv_push(c, out, s); return;
  }
}

/* Statements after one that may jump run only while the flag is unset. The guards are
 * flat — one `if not flag:` per run of statements up to and including the next
 * statement that may jump — rather than nested, so a long chain of early returns does
 * not nest one level deeper per return (Python allows 100 indentation levels); the
 * flag is never reset within the block, so this is equivalent to nesting. */
static void close_guard(jp *j, cv_vec *out, cv_vec *guard, const char *flag, cv_loc at) {
  cv *c = j->c;
  if (guard->n) cv_push(c, out, cv_if(c, cv_not(c, flag_name(c, flag, at), at), cv_seq(c, guard), NULL, at));
  *guard = (cv_vec){0};
}

static py_seq *j_block(jp *j, py_seq *body, const char *flag) {
  cv *c = j->c;
  if (!body) return NULL;
  cv_vec out = {0}, guard = {0};
  bool guarding = false;
  cv_loc gat = {0, 0, 0, 0};
  for (int i = 0; i < body->n; i++) {
    py_stmt *s = body->a[i];
    cv_loc at = cv_loc_of_stmt(s);
    cv_vec *dst = guarding ? &guard : &out;
    if (guarding && guard.n == 0) gat = at;
    bool jump_here = (s->kind == PY_K_Break && j->k == J_BREAK) || (s->kind == PY_K_Continue && j->k == J_CONTINUE) ||
                     (s->kind == PY_K_Return && j->k == J_RETURN);
    if (jump_here && flag) {
      if (j->k == J_RETURN) {
        py_expr *v = s->v.Return.value ? s->v.Return.value : cv_none(c, at);
        cv_push(c, dst, cv_assign_name(c, "retval__", v, at));
      }
      cv_push(c, dst, cv_assign_name(c, flag, cv_bool(c, true, at), at));
      /* What follows is unreachable but stays, guarded like anything after a jump:
       * the names it binds are still the function's locals (dropping `x = 1` there
       * would turn a later read of x into a global lookup, NameError for
       * UnboundLocalError). */
      if (i + 1 < body->n) {
        if (guarding) close_guard(j, &out, &guard, flag, gat);
        guarding = true;
      }
      continue;
    }
    bool may_jump = flag && has_jump(s, j->k);
    j_stmt(j, s, flag, dst);
    if (may_jump && i + 1 < body->n) {
      if (guarding) close_guard(j, &out, &guard, flag, gat);
      guarding = true;
    }
  }
  if (guarding) close_guard(j, &out, &guard, flag, gat);
  if (out.n == 0) return cv_seq1(c, cv_pass(c, cv_loc_of_stmt(body->a[0])));
  return cv_seq(c, &out);
}

/* Index of the first statement after the docstring. */
static int body_start(const py_seq *body) {
  if (PY_SEQ_LEN(body) && ((py_stmt *)body->a[0])->kind == PY_K_Expr) {
    const py_expr *e = ((py_stmt *)body->a[0])->v.Expr.value;
    if (e->kind == PY_K_Constant && e->v.Constant.value.kind == PY_CONST_STR) return 1;
  }
  return 0;
}

static void j_function(cv *c, py_stmt *fn, jkind k) {
  jp j = {c, k};
  py_seq *body = fn->v.FunctionDef.body;
  if (k != J_RETURN) {
    fn->v.FunctionDef.body = j_block(&j, body, NULL);
    return;
  }
  /* returns: nothing to do when the only return is the last top-level statement */
  int n = PY_SEQ_LEN(body);
  bool needed = false;
  for (int i = 0; i < n; i++) {
    const py_stmt *s = body->a[i];
    if (s->kind == PY_K_Return ? i != n - 1 : has_jump(s, J_RETURN)) needed = true;
  }
  if (!needed) {
    /* still convert the nested functions */
    fn->v.FunctionDef.body = j_block(&j, body, NULL);
    return;
  }
  cv_loc at = cv_loc_of_stmt(fn);
  int start = body_start(body);
  cv_vec out = {0};
  for (int i = 0; i < start; i++) cv_push(c, &out, body->a[i]);
  cv_loc at0 = cv_loc_of_stmt(body->a[start < n ? start : 0]);
  cv_push(c, &out, cv_assign_name(c, "do_return__", cv_bool(c, false, at0), at0));
  cv_push(c, &out, cv_assign_name(c, "retval__", cv_none(c, at0), at0));
  if (start < n) cv_push_seq(c, &out, j_block(&j, cv_seq_n(c, n - start, &body->a[start]), "do_return__"));
  cv_loc end = {at.el, at.c, at.el, at.ec};
  cv_push(c, &out,
          cv_return(c, cv_call_sg(c, "ret", end, 2, cv_name(c, "retval__", PY_Load, end), cv_name(c, "do_return__", PY_Load, end)),
                    end));
  fn->v.FunctionDef.body = cv_seq(c, &out);
}

void cv_pass_break(cv *c, py_stmt *fn) { j_function(c, fn, J_BREAK); }
void cv_pass_continue(cv *c, py_stmt *fn) { j_function(c, fn, J_CONTINUE); }
void cv_pass_return(cv *c, py_stmt *fn) { j_function(c, fn, J_RETURN); }
