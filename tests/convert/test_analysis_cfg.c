// SPDX-License-Identifier: Apache-2.0
/*
 * test_analysis_cfg.c — control-flow graphs (analysis_cfg.c): the exact nodes and
 * edges for loops with else and break, try/except/else, try/finally routing of
 * continue / return, match, `while True`, and the AST ↔ CFG links (stmt_next/prev).
 */
#include "test_analysis_util.h"

static void expect_cfg(const char *src, const char *fn, const char *want) {
  fx *f = fx_new(src);
  const py_stmt *def = NULL;
  for (int i = 0; i < PY_SEQ_LEN(f->mod->v.Module.body); i++) {
    const py_stmt *s = f->mod->v.Module.body->a[i];
    if (s->kind == PY_K_FunctionDef && !strcmp(s->v.FunctionDef.name, fn)) def = s;
  }
  assert_non_null(def);
  sg_buf out = SG_BUF_INIT;
  py_an_dump_cfg(f->an, py_an_cfg(f->an, def), &out);
  if (strcmp(out.data, want)) fprintf(stderr, "got:\n%s", out.data);
  assert_string_equal(out.data, want);
  sg_buf_free(&out);
  fx_free(f);
}

static void test_while_else_break(void **state) {
  (void)state;
  expect_cfg("def f(n):\n"
             "    i = 0\n"
             "    while i < n:\n"
             "        if i == 5:\n"
             "            break\n"
             "        i += 1\n"
             "    else:\n"
             "        i = -1\n"
             "    return i\n",
             "f",
             "cfg function f\n"
             "  0 entry -> 2\n"
             "  1 exit ->\n"
             "  2 L2 Assign -> 3\n"
             "  3 L3 While -> 4 7\n"
             "  4 L4 If -> 5 6\n"
             "  5 L5 Break -> 8\n"
             "  6 L6 AugAssign -> 3\n"
             "  7 L8 Assign -> 8\n"
             "  8 L9 Return -> 1\n");
}

static void test_try_finally_routes_jumps(void **state) {
  (void)state;
  /* continue and return both pass through the finally block, which then resumes
   * them (edge to the loop head, edge to exit); no normal fall-through remains */
  expect_cfg("def f(xs):\n"
             "    for x in xs:\n"
             "        try:\n"
             "            if x:\n"
             "                continue\n"
             "            return x\n"
             "        finally:\n"
             "            print(x)\n"
             "    return None\n",
             "f",
             "cfg function f\n"
             "  0 entry -> 2\n"
             "  1 exit ->\n"
             "  2 L2 For -> 3 8\n"
             "  3 L3 Try -> 4 7\n"
             "  4 L4 If -> 5 6 7\n"
             "  5 L5 Continue -> 7\n"
             "  6 L6 Return -> 7\n"
             "  7 L8 Expr -> 1 2\n"
             "  8 L9 Return -> 1\n");
}

static void test_try_except_else(void **state) {
  (void)state;
  expect_cfg("def f():\n"
             "    try:\n"
             "        a = g()\n"
             "    except ValueError:\n"
             "        a = 1\n"
             "    except:\n"
             "        raise\n"
             "    else:\n"
             "        b = 2\n"
             "    return a\n",
             "f",
             "cfg function f\n"
             "  0 entry -> 2\n"
             "  1 exit ->\n"
             "  2 L2 Try -> 3 4 6\n"
             "  3 L3 Assign -> 4 6 8\n"
             "  4 L4 except -> 5\n"
             "  5 L5 Assign -> 9\n"
             "  6 L6 except -> 7\n"
             "  7 L7 Raise -> 1\n"
             "  8 L9 Assign -> 9\n"
             "  9 L10 Return -> 1\n");
}

static void test_raise_inside_try_reaches_handler_and_outside(void **state) {
  (void)state;
  /* a handler that does not catch everything lets the raise continue outwards */
  expect_cfg("def f(x):\n"
             "    try:\n"
             "        raise E\n"
             "    except KeyError:\n"
             "        pass\n",
             "f",
             "cfg function f\n"
             "  0 entry -> 2\n"
             "  1 exit ->\n"
             "  2 L2 Try -> 3 4\n"
             "  3 L3 Raise -> 1 4\n"
             "  4 L4 except -> 5\n"
             "  5 L5 Pass -> 1\n");
}

static void test_match_cases(void **state) {
  (void)state;
  expect_cfg("def f(p):\n"
             "    match p:\n"
             "        case 0:\n"
             "            r = 1\n"
             "        case [x, y] if x:\n"
             "            r = x\n"
             "        case _:\n"
             "            r = 0\n"
             "    return r\n",
             "f",
             "cfg function f\n"
             "  0 entry -> 2\n"
             "  1 exit ->\n"
             "  2 L2 Match -> 3 5 7\n"
             "  3 L3 case -> 4\n"
             "  4 L4 Assign -> 9\n"
             "  5 L5 case -> 6\n"
             "  6 L6 Assign -> 9\n"
             "  7 L7 case -> 8\n"
             "  8 L8 Assign -> 9\n"
             "  9 L9 Return -> 1\n");
}

static void test_while_true_with(void **state) {
  (void)state;
  /* `while True` has no exit edge from its head: only the break leaves it; an
   * exception in the with body may be suppressed by __exit__, so the with head and
   * body also lead to what follows the with (here the loop head) */
  expect_cfg("def f(p):\n"
             "    while True:\n"
             "        with open(p) as fh:\n"
             "            if fh: break\n"
             "    return 1\n",
             "f",
             "cfg function f\n"
             "  0 entry -> 2\n"
             "  1 exit ->\n"
             "  2 L2 While -> 3\n"
             "  3 L3 With -> 2 4\n"
             "  4 L4 If -> 2 5\n"
             "  5 L4 Break -> 6\n"
             "  6 L5 Return -> 1\n");
}

static void test_nested_loops_continue_outer_after_inner(void **state) {
  (void)state;
  expect_cfg("def f(a):\n"
             "    for i in a:\n"
             "        for j in i:\n"
             "            if j:\n"
             "                continue\n"
             "            break\n"
             "        else:\n"
             "            continue\n"
             "        pass\n",
             "f",
             "cfg function f\n"
             "  0 entry -> 2\n"
             "  1 exit ->\n"
             "  2 L2 For -> 1 3\n"
             "  3 L3 For -> 4 7\n"
             "  4 L4 If -> 5 6\n"
             "  5 L5 Continue -> 3\n"
             "  6 L6 Break -> 8\n"
             "  7 L8 Continue -> 2\n"
             "  8 L9 Pass -> 2\n");
}

static void test_links_between_ast_and_cfg(void **state) {
  (void)state;
  fx *f = fx_new("def f(n):\n"
                 "    i = 0\n"
                 "    while i < n:\n"
                 "        if i == 5:\n"
                 "            break\n"
                 "        i += 1\n"
                 "    return i\n");
  const py_stmt *loop = fx_stmt(f, 3, PY_K_While);
  const py_cfg_node *head = py_an_cfg_node(f->an, loop);
  assert_non_null(head);
  assert_ptr_equal(head->ast, loop);
  assert_int_equal(head->kind, PY_CFG_STMT);
  const py_cfg *g = py_an_cfg_of(f->an, loop);
  assert_ptr_equal(g, py_an_cfg(f->an, f->mod->v.Module.body->a[0]));
  assert_ptr_equal(g->nodes[head->index], head);
  assert_int_equal(g->entry->kind, PY_CFG_ENTRY);
  assert_int_equal(g->exit->kind, PY_CFG_EXIT);
  assert_int_equal(g->scope->kind, PY_SCOPE_FUNCTION);

  /* what follows the loop: the return, reached from the head and from the break */
  const py_cfg_node *const *next;
  assert_int_equal(py_an_stmt_next(f->an, loop, &next), 1);
  assert_ptr_equal(next[0]->ast, fx_stmt(f, 7, PY_K_Return));
  /* what leads into the loop head: the assignment before it and the back edge */
  const py_cfg_node *const *prev;
  assert_int_equal(py_an_stmt_prev(f->an, loop, &prev), 2);
  assert_ptr_equal(prev[0]->ast, fx_stmt(f, 2, PY_K_Assign));
  assert_ptr_equal(prev[1]->ast, fx_stmt(f, 6, PY_K_AugAssign));
  /* the if inside: followed by the augassign (false branch); break leaves the loop */
  assert_int_equal(py_an_stmt_next(f->an, fx_stmt(f, 4, PY_K_If), &next), 1);
  assert_ptr_equal(next[0]->ast, fx_stmt(f, 6, PY_K_AugAssign));
  /* a return completes nothing */
  assert_int_equal(py_an_stmt_next(f->an, fx_stmt(f, 7, PY_K_Return), &next), 0);
  /* the module and the function each own a CFG; a loop owns none */
  assert_non_null(py_an_cfg(f->an, f->mod));
  assert_null(py_an_cfg(f->an, loop));
  fx_free(f);
}

static void test_module_and_class_cfgs(void **state) {
  (void)state;
  fx *f = fx_new("import os\n"
                 "class C:\n"
                 "    x = 1\n"
                 "    def m(self):\n"
                 "        return self\n"
                 "y = C()\n");
  sg_buf out = SG_BUF_INIT;
  py_an_dump_cfg(f->an, py_an_cfg(f->an, f->mod), &out);
  py_an_dump_cfg(f->an, py_an_cfg(f->an, fx_stmt(f, 2, PY_K_ClassDef)), &out);
  assert_string_equal(out.data,
                      "cfg module\n"
                      "  0 entry -> 2\n"
                      "  1 exit ->\n"
                      "  2 L1 Import -> 3\n"
                      "  3 L2 ClassDef -> 4\n"
                      "  4 L6 Assign -> 1\n"
                      "cfg class C\n"
                      "  0 entry -> 2\n"
                      "  1 exit ->\n"
                      "  2 L3 Assign -> 3\n"
                      "  3 L4 FunctionDef -> 1\n");
  sg_buf_free(&out);
  fx_free(f);
}

/* Everything the parser accepts must analyse without crashing, including what only
 * CPython's compiler rejects (break outside a loop, return at module level, nonlocal
 * at module level) and every statement kind. */
static void test_every_construct_and_compiler_errors(void **state) {
  (void)state;
  fx *f = fx_new("break\n"
                 "continue\n"
                 "return 1\n"
                 "nonlocal q\n"
                 "global g\n"
                 "type Alias[T] = list[T]\n"
                 "@dec(1)\n"
                 "class K[T](Base, metaclass=M):\n"
                 "    a: int = 1\n"
                 "    def m[U](self, /, p: U = 2, *args, k, **kw) -> U:\n"
                 "        return super().m(p)\n"
                 "async def co(xs):\n"
                 "    async with ctx() as (a, *b):\n"
                 "        async for x in xs:\n"
                 "            await x\n"
                 "            yield x\n"
                 "    try:\n"
                 "        pass\n"
                 "    except* ValueError as eg:\n"
                 "        raise\n"
                 "    finally:\n"
                 "        del a, b[0], xs.attr\n"
                 "    match xs:\n"
                 "        case {'k': [1, *rest], **kw} | Point(x=0, y=_) if rest: pass\n"
                 "        case str() | None: pass\n"
                 "    assert xs, f'{xs!r:>{10}}'\n"
                 "    lam = lambda *a, **k: (yield)\n"
                 "    return {k: v for k, v in xs if (w := k)} | {*xs} | {x for x in xs}\n");
  sg_buf out = SG_BUF_INIT;
  py_an_dump_scopes(f->an, &out);
  py_an_dump_activity(f->an, &out);
  py_an_dump_defined(f->an, &out);
  py_an_dump_liveness(f->an, &out);
  py_an_dump_live_values(f->an, &out);
  py_an_dump_cfg(f->an, py_an_cfg(f->an, f->mod), &out);
  py_an_dump_cfg(f->an, py_an_cfg(f->an, fx_stmt(f, 12, PY_K_AsyncFunctionDef)), &out);
  /* break / continue / return outside a function: straight to exit */
  assert_has_line(out.data, "  2 L1 Break -> 1");
  assert_has_line(out.data, "  3 L2 Continue -> 1");
  assert_has_line(out.data, "  4 L3 Return -> 1");
  /* async for / with get head nodes like their sync forms */
  assert_non_null(py_an_cfg_node(f->an, fx_stmt(f, 13, PY_K_AsyncWith)));
  assert_non_null(py_an_cfg_node(f->an, fx_stmt(f, 14, PY_K_AsyncFor)));
  assert_set(f, py_an_activity(f->an, fx_stmt(f, 13, PY_K_AsyncWith)).modified, "{a, b, x}");
  assert_set(f, py_an_activity(f->an, fx_stmt(f, 22, PY_K_Delete)).deleted, "{a, b[0], xs.attr}");
  py_activity m = py_an_activity(f->an, fx_stmt(f, 23, PY_K_Match));
  assert_set(f, py_symset_names(f->an, m.modified), "{kw, rest}");
  sg_buf_free(&out);
  fx_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_while_else_break),
      cmocka_unit_test(test_try_finally_routes_jumps),
      cmocka_unit_test(test_try_except_else),
      cmocka_unit_test(test_raise_inside_try_reaches_handler_and_outside),
      cmocka_unit_test(test_match_cases),
      cmocka_unit_test(test_while_true_with),
      cmocka_unit_test(test_nested_loops_continue_outer_after_inner),
      cmocka_unit_test(test_links_between_ast_and_cfg),
      cmocka_unit_test(test_module_and_class_cfgs),
      cmocka_unit_test(test_every_construct_and_compiler_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
