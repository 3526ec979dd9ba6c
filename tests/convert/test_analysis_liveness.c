// SPDX-License-Identifier: Apache-2.0
/*
 * test_analysis_liveness.c — live variables (analysis_liveness.c): loops (what the
 * body reads before writing it is live at the head, dead stores are not live),
 * if without else, closures, composites at exit, break paths.
 */
#include "test_analysis_util.h"

static void test_loop_liveness(void **state) {
  (void)state;
  fx *f = fx_new("def f(n):\n"
                 "    s = 0\n"
                 "    i = 0\n"
                 "    t = 5\n"
                 "    while i < n:\n"
                 "        t = i * 2\n"
                 "        s = s + t\n"
                 "        i += 1\n"
                 "    return s\n");
  const py_stmt *loop = fx_stmt(f, 5, PY_K_While);
  assert_set(f, py_an_live_in(f->an, loop), "{i, n, s}");
  assert_set(f, py_an_live_out(f->an, loop), "{s}");
  /* t = 5 is a dead store: t is not live after it */
  assert_set(f, py_an_live_out(f->an, fx_stmt(f, 4, PY_K_Assign)), "{i, n, s}");
  /* at the start of the body */
  assert_set(f, py_an_live_in(f->an, fx_stmt(f, 6, PY_K_Assign)), "{i, n, s}");
  assert_set(f, py_an_live_in(f->an, fx_stmt(f, 7, PY_K_Assign)), "{i, n, s, t}");
  sg_buf_clear(&f->buf);
  py_an_dump_liveness(f->an, &f->buf);
  assert_has_line(f->buf.data, "    L8 AugAssign: in={i, n, s} out={i, n, s}");
  assert_has_line(f->buf.data, "  L9 Return: in={s} out={}");
  fx_free(f);
}

static void test_if_without_else_keeps_value_live(void **state) {
  (void)state;
  fx *f = fx_new("def f(c, x):\n"
                 "    if c:\n"
                 "        x = 1\n"
                 "    return x\n");
  assert_set(f, py_an_live_in(f->an, fx_stmt(f, 2, PY_K_If)), "{c, x}");
  assert_set(f, py_an_live_out(f->an, fx_stmt(f, 2, PY_K_If)), "{x}");
  assert_set(f, py_an_live_in(f->an, fx_stmt(f, 3, PY_K_Assign)), "{}");
  fx_free(f);
}

static void test_break_and_else(void **state) {
  (void)state;
  fx *f = fx_new("def f(xs):\n"
                 "    r = None\n"
                 "    for x in xs:\n"
                 "        if x:\n"
                 "            r = x\n"
                 "            break\n"
                 "    else:\n"
                 "        return -1\n"
                 "    return r\n");
  const py_stmt *loop = fx_stmt(f, 3, PY_K_For);
  /* r is live at the loop head only because the break path reads it later */
  assert_set(f, py_an_live_in(f->an, loop), "{xs}");
  assert_set(f, py_an_live_out(f->an, loop), "{r}");
  assert_set(f, py_an_live_out(f->an, fx_stmt(f, 5, PY_K_Assign)), "{r}");
  fx_free(f);
}

static void test_closures_and_composites(void **state) {
  (void)state;
  fx *f = fx_new("def f(o):\n"
                 "    a = 1\n"
                 "    def g():\n"
                 "        return a\n"
                 "    o.x = 2\n"
                 "    return g\n");
  /* the closure reads a where it is defined */
  assert_true(py_symset_has(py_an_live_in(f->an, fx_stmt(f, 3, PY_K_FunctionDef)),
                            py_an_sym(f->an, "a")));
  /* mutations of objects stay visible after the function: o.x is live at exit */
  const py_stmt *st = fx_stmt(f, 5, PY_K_Assign);
  py_sym ox = py_an_qn(f->an, st->v.Assign.targets->a[0]);
  assert_true(py_symset_has(py_an_live_out(f->an, st), ox));
  assert_set(f, py_symset_names(f->an, py_an_live_out(f->an, st)), "{g}");
  fx_free(f);
}

static void test_for_target_unbound_when_iterator_is_empty(void **state) {
  (void)state;
  fx *f = fx_new("def f(xs):\n"
                 "    i = -1\n"
                 "    for i in xs:\n"
                 "        pass\n"
                 "    return i\n");
  /* if xs is empty, `return i` reads the -1: the first assignment is not dead */
  assert_set(f, py_an_live_out(f->an, fx_stmt(f, 2, PY_K_Assign)), "{i, xs}");
  assert_set(f, py_an_live_in(f->an, fx_stmt(f, 3, PY_K_For)), "{i, xs}");
  /* in the body i is live: the last iteration's value is returned */
  assert_set(f, py_an_live_in(f->an, fx_stmt(f, 4, PY_K_Pass)), "{i, xs}");
  fx_free(f);
}

static void test_control_flow_state(void **state) {
  (void)state;
  fx *f = fx_new("def f(n, o):\n"
                 "    s = 0\n"
                 "    i = 0\n"
                 "    while i < n:\n"
                 "        t = i * 2\n"
                 "        s = s + t\n"
                 "        o.count = s\n"
                 "        i += 1\n"
                 "    if s > 3:\n"
                 "        r = 1\n"
                 "        tmp = 2\n"
                 "    else:\n"
                 "        r = 2\n"
                 "    for k in range(n):\n"
                 "        last = k\n"
                 "    return r, last\n");
  /* t is recomputed before use in every iteration: not loop state; o.count is a
   * mutation the caller sees */
  py_cf_state w = py_an_cf_state(f->an, fx_stmt(f, 4, PY_K_While));
  assert_set(f, w.state, "{i, o.count, s}");
  assert_set(f, w.undefined, "{}");
  /* tmp is dead after the if; r is an output of both branches */
  py_cf_state b = py_an_cf_state(f->an, fx_stmt(f, 9, PY_K_If));
  assert_set(f, b.state, "{r}");
  assert_set(f, b.undefined, "{r}");
  /* last is read after the loop but unbound before it (and after an empty range) */
  py_cf_state l = py_an_cf_state(f->an, fx_stmt(f, 14, PY_K_For));
  assert_set(f, l.state, "{last}");
  assert_set(f, l.undefined, "{last}");
  /* not a control-flow statement */
  assert_set(f, py_an_cf_state(f->an, fx_stmt(f, 2, PY_K_Assign)).state, "{}");
  fx_free(f);
}

static void test_node_level_queries(void **state) {
  (void)state;
  fx *f = fx_new("def f(a):\n"
                 "    b = a\n"
                 "    return b\n");
  const py_cfg *g = py_an_cfg(f->an, f->mod->v.Module.body->a[0]);
  assert_set(f, py_an_node_live_out(f->an, g->entry), "{a}");
  assert_set(f, py_an_node_live_in(f->an, g->exit), "{}");
  const py_cfg_node *n = py_an_cfg_node(f->an, fx_stmt(f, 2, PY_K_Assign));
  assert_set(f, py_an_node_live_in(f->an, n), "{a}");
  assert_set(f, py_an_node_live_out(f->an, n), "{b}");
  fx_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loop_liveness),
      cmocka_unit_test(test_if_without_else_keeps_value_live),
      cmocka_unit_test(test_break_and_else),
      cmocka_unit_test(test_closures_and_composites),
      cmocka_unit_test(test_for_target_unbound_when_iterator_is_empty),
      cmocka_unit_test(test_control_flow_state),
      cmocka_unit_test(test_node_level_queries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
