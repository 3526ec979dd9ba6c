// SPDX-License-Identifier: Apache-2.0
/*
 * test_analysis_activity.c — activity analysis (analysis_activity.c): the scope tree
 * with Python's rules (nested functions with nonlocal / global, comprehensions and
 * their first iterable, class bodies invisible to methods, lambdas) and the
 * read / modified / deleted sets of statements, blocks and expressions.
 */
#include "test_analysis_util.h"

static const char *dump_scopes(fx *f) {
  sg_buf_clear(&f->buf);
  py_an_dump_scopes(f->an, &f->buf);
  return f->buf.data;
}

static void test_nonlocal_and_global(void **state) {
  (void)state;
  fx *f = fx_new("counter = 0\n"
                 "def outer(a):\n"
                 "    total = 0\n"
                 "    def inner(b):\n"
                 "        nonlocal total\n"
                 "        global counter\n"
                 "        total += b\n"
                 "        counter += 1\n"
                 "        return a\n"
                 "    inner(1)\n"
                 "    return total\n");
  const char *d = dump_scopes(f);
  assert_has_line(d, "module: locals={counter, outer} free={} modified={counter, outer}");
  assert_has_line(d, "  function outer: params={a} locals={a, inner, total} free={} "
                     "read={inner, total} modified={a, inner, total}");
  assert_has_line(d, "    function inner: params={b} locals={b} globals={counter} "
                     "nonlocals={total} free={a, total} read={a, b, counter, total} "
                     "modified={b, counter, total}");
  /* the def statement reads what the closure captures, and binds the name */
  py_activity def = py_an_activity(f->an, fx_stmt(f, 4, PY_K_FunctionDef));
  assert_set(f, def.read, "{a, total}");
  assert_set(f, def.modified, "{inner}");
  const py_scope *inner = py_an_scope(f->an, fx_stmt(f, 4, PY_K_FunctionDef));
  assert_non_null(inner);
  assert_int_equal(inner->kind, PY_SCOPE_FUNCTION);
  assert_int_equal(inner->depth, 2);
  assert_ptr_equal(inner->parent, py_an_scope(f->an, fx_stmt(f, 2, PY_K_FunctionDef)));
  assert_ptr_equal(py_an_scope_of(f->an, fx_stmt(f, 7, PY_K_AugAssign)), inner);
  assert_set(f, py_an_scope(f->an, f->mod)->global_uses, "{counter}");
  fx_free(f);
}

static void test_comprehension_scopes(void **state) {
  (void)state;
  fx *f = fx_new("def g(xs, k):\n"
                 "    ys = [x * k for x in xs if x]\n"
                 "    zs = [[i * j for j in range(i)] for i in xs]\n"
                 "    w = [(last := v) for v in xs]\n"
                 "    return last\n");
  const char *d = dump_scopes(f);
  /* what g reads directly: the first iterables and `last` (the rest is read inside
   * the comprehensions); the walrus target is g's */
  assert_has_line(d, "  function g: params={k, xs} locals={k, last, w, xs, ys, zs} "
                     "free={range} read={last, xs} modified={k, last, w, xs, ys, zs}");
  assert_has_line(d, "    ListComp@2:9: locals={x} free={k} read={k, x} modified={x}");
  /* the inner comprehension's first iterable (range(i)) runs in the outer one */
  assert_has_line(d, "    ListComp@3:9: locals={i} free={range} read={i, range} modified={i}");
  assert_has_line(d, "      ListComp@3:10: locals={j} free={i} read={i, j} modified={j}");
  /* the walrus binds `last` in g (as if declared nonlocal in the comprehension, which
   * is how CPython compiles it), so the statement modifies it */
  assert_has_line(d, "    ListComp@4:8: locals={v} nonlocals={last} free={last} read={v} "
                     "modified={last, v}");
  py_activity w = py_an_activity(f->an, fx_stmt(f, 4, PY_K_Assign));
  assert_set(f, w.modified, "{last, w}");
  assert_set(f, w.read, "{xs}");
  py_activity ys = py_an_activity(f->an, fx_stmt(f, 2, PY_K_Assign));
  assert_set(f, ys.read, "{k, xs}");
  assert_set(f, ys.modified, "{ys}");
  fx_free(f);
}

static void test_walrus_at_module_level_comprehension(void **state) {
  (void)state;
  fx *f = fx_new("ys = [(y := x) for x in range(3)]\n");
  const char *d = dump_scopes(f);
  assert_has_line(d, "module: locals={y, ys} free={range} read={range} modified={y, ys}");
  assert_has_line(d, "  ListComp@1:5: locals={x} globals={y} free={} read={x} modified={x, y}");
  fx_free(f);
}

static void test_annotations(void **state) {
  (void)state;
  fx *f = fx_new("def f(a):\n"
                 "    x: int\n"
                 "    (y): int\n"
                 "    a.b: T = 1\n"
                 "    return x\n");
  /* `x: int` makes x local without binding it; `(y): int` does nothing */
  assert_set(f, py_an_scope(f->an, f->mod->v.Module.body->a[0])->locals, "{a, x}");
  assert_set(f, py_an_activity(f->an, fx_stmt(f, 2, PY_K_AnnAssign)).modified, "{}");
  py_activity a = py_an_activity(f->an, fx_stmt(f, 4, PY_K_AnnAssign));
  assert_set(f, a.modified, "{a.b}");
  assert_set(f, a.read, "{T, a}");
  /* x is local but never bound: possibly undefined at the return */
  assert_false(py_symset_has(py_an_maybe_defined_in(f->an, fx_stmt(f, 5, PY_K_Return)),
                             py_an_sym(f->an, "x")));
  fx_free(f);
}

static void test_class_scope_does_not_leak_into_methods(void **state) {
  (void)state;
  fx *f = fx_new("class A:\n"
                 "    x = 1\n"
                 "    y = [x for _ in range(3)]\n"
                 "    def m(self):\n"
                 "        return x\n");
  const char *d = dump_scopes(f);
  /* x in the method and in the comprehension is the global x, not A.x */
  assert_has_line(d, "module: locals={A} free={range, x} modified={A}");
  assert_has_line(d, "  class A: locals={m, x, y} free={range, x} read={range} "
                     "modified={m, x, y}");
  assert_has_line(d, "    ListComp@3:8: locals={_} free={x} read={x} modified={_}");
  assert_has_line(d, "    function m: params={self} locals={self} free={x} read={x} "
                     "modified={self}");
  fx_free(f);
}

static void test_lambda_scope(void **state) {
  (void)state;
  fx *f = fx_new("def f(c):\n"
                 "    g = lambda a, b=c: a + d\n"
                 "    return g\n");
  const char *d = dump_scopes(f);
  assert_has_line(d, "    lambda@2:8: params={a, b} locals={a, b} free={d} read={a, d} "
                     "modified={a, b}");
  /* defaults are evaluated where the lambda is; its free names are read there */
  py_activity a = py_an_activity(f->an, fx_stmt(f, 2, PY_K_Assign));
  assert_set(f, a.read, "{c, d}");
  assert_set(f, a.modified, "{g}");
  fx_free(f);
}

static void test_statement_activity(void **state) {
  (void)state;
  fx *f = fx_new("def g(xs):\n"
                 "    a.b = c\n"
                 "    a[0] += 1\n"
                 "    del q\n"
                 "    for i, (j, k) in z: pass\n"
                 "    with m as (p, r): pass\n"
                 "    import os.path\n"
                 "    from m import n as w\n"
                 "    x = (y := 3)\n"
                 "    class K(B): pass\n"
                 "    try:\n"
                 "        pass\n"
                 "    except E as e:\n"
                 "        pass\n"
                 "    match xs:\n"
                 "        case [h, *t] if h: pass\n"
                 "        case {'k': v, **rest}: pass\n");
  sg_buf_clear(&f->buf);
  py_an_dump_activity(f->an, &f->buf);
  const char *d = f->buf.data;
  assert_has_line(d, "  L2 Assign: read={a, c} modified={a.b}");
  assert_has_line(d, "  L3 AugAssign: read={a, a[0]} modified={a[0]}");
  assert_has_line(d, "  L4 Delete: read={} modified={q} deleted={q}");
  assert_has_line(d, "  L5 For: read={z} modified={i, j, k}");
  assert_has_line(d, "  L6 With: read={m} modified={p, r}");
  assert_has_line(d, "  L7 Import: read={} modified={os}");
  assert_has_line(d, "  L8 ImportFrom: read={} modified={w}");
  assert_has_line(d, "  L9 Assign: read={} modified={x, y}");
  assert_has_line(d, "  L10 ClassDef: read={B} modified={K}");
  assert_has_line(d, "  L11 Try: read={E} modified={e}");
  assert_has_line(d, "  L15 Match: read={h, xs} modified={h, rest, t, v}");
  fx_free(f);
}

static void test_compound_and_block_activity(void **state) {
  (void)state;
  fx *f = fx_new("def f(n):\n"
                 "    s = 0\n"
                 "    while s < n:\n"
                 "        if s % 2:\n"
                 "            t = s\n"
                 "        else:\n"
                 "            u = s\n"
                 "        s += 1\n"
                 "    return s\n");
  const py_stmt *loop = fx_stmt(f, 3, PY_K_While);
  py_activity a = py_an_activity(f->an, loop);
  assert_set(f, a.read, "{n, s}");
  assert_set(f, a.modified, "{s, t, u}");
  const py_stmt *branch = fx_stmt(f, 4, PY_K_If);
  assert_set(f, py_an_block_activity(f->an, branch->v.If.body).modified, "{t}");
  assert_set(f, py_an_block_activity(f->an, branch->v.If.orelse).modified, "{u}");
  py_activity test = py_an_expr_activity(f->an, loop->v.While.test, loop);
  assert_set(f, test.read, "{n, s}");
  assert_set(f, test.modified, "{}");
  /* the function's own scope */
  const py_scope *sc = py_an_scope_of(f->an, loop);
  assert_set(f, sc->locals, "{n, s, t, u}");
  assert_set(f, sc->params, "{n}");
  fx_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nonlocal_and_global),
      cmocka_unit_test(test_comprehension_scopes),
      cmocka_unit_test(test_walrus_at_module_level_comprehension),
      cmocka_unit_test(test_annotations),
      cmocka_unit_test(test_class_scope_does_not_leak_into_methods),
      cmocka_unit_test(test_lambda_scope),
      cmocka_unit_test(test_statement_activity),
      cmocka_unit_test(test_compound_and_block_activity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
