// SPDX-License-Identifier: Apache-2.0
/*
 * test_convert.c — cmocka unit tests of the converter passes (convert/conv*.c): for
 * each pass, the structural shape of the output (what it must and must not contain),
 * that every output parses again, the module shape of docs/runtime.md, the source map,
 * and the diagnostics for what cannot be converted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "convert.h"

/* Converts src; asserts success and that the output parses. Returns the result (the
 * caller frees it with py_conv_result_free). */
static py_conv_result conv_raw(const char *src, py_conv_style style, const char *fn) {
  py_conv_result r;
  sg_error err = SG_ERROR_INIT;
  sg_code rc = py_convert(src, strlen(src), "t.py", style, fn, &r, &err);
  if (rc != SG_OK) fprintf(stderr, "convert failed: %s\n", err.message ? err.message : "?");
  assert_int_equal(rc, SG_OK);
  sg_buf_putc(&r.code, '\0');
  r.code.len--;
  py_ctx ctx;
  py_ctx_init(&ctx);
  py_mod *m = py_parse(&ctx, r.code.data, r.code.len, "out.py", &err);
  if (!m) fprintf(stderr, "output does not parse: %s at %d:%d\n%s\n", err.message, err.line, err.col, r.code.data);
  assert_non_null(m);
  py_ctx_free(&ctx);
  sg_error_clear(&err);
  return r;
}

/* Removes the plain paths (`if not sg__.staging:` and the original statements under it,
 * conv_dual.c) from r's code, and unwraps a converted body held in its own function
 * (`def NAME__staged(...):` with its leading global / nonlocal lines, dedented, and the
 * `return NAME__staged(...)` after it): the structural checks below are about converted
 * bodies; test_plain_path checks the plain paths. */
static void strip_plain(py_conv_result *r) {
  char *s = r->code.data, *w = s;
  const char *p = s;
  int skip = -1;  /* indentation of the `if` being skipped, or -1 */
  int inner = -1; /* indentation of the `def NAME__staged` being unwrapped, or -1 */
  bool head = false; /* just after that def: its declarations are dropped */
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p + 1) : strlen(p);
    int ind = 0;
    while (p[ind] == ' ' || p[ind] == '\t') ind++;
    bool blank = p[ind] == '\n' || p[ind] == '\0';
    if (skip >= 0 && (blank || ind > skip)) {
      p += n;
      continue;
    }
    skip = -1;
    if (!strncmp(p + ind, "if not sg__.staging:\n", 21)) {
      skip = ind;
      p += n;
      continue;
    }
    const char *eol = p + n;
    const char *tw = strstr(p, "__staged(");
    if (inner < 0 && !strncmp(p + ind, "def ", 4) && tw && tw < eol) {
      inner = ind;
      head = true;
      p += n;
      continue;
    }
    if (inner >= 0 && !blank && ind <= inner) {
      if (!strncmp(p + ind, "return ", 7) && tw && tw < eol) {
        inner = -1;
        p += n;
        continue;
      }
      inner = -1;
    }
    if (inner >= 0 && head && (!strncmp(p + ind, "global ", 7) || !strncmp(p + ind, "nonlocal ", 9))) {
      p += n;
      continue;
    }
    head = false;
    if (inner >= 0 && !blank && ind >= inner + 4) { /* the 4 spaces after the def's indentation */
      memmove(w, p, (size_t)inner);
      memmove(w + inner, p + inner + 4, n - (size_t)inner - 4);
      w += n - 4;
    } else {
      memmove(w, p, n);
      w += n;
    }
    p += n;
  }
  *w = '\0';
  r->code.len = (size_t)(w - s);
}

static py_conv_result conv(const char *src, py_conv_style style, const char *fn) {
  py_conv_result r = conv_raw(src, style, fn);
  strip_plain(&r);
  return r;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

#define HAS(r, s) \
  do { \
    if (!strstr((r).code.data, s)) fprintf(stderr, "missing '%s' in:\n%s\n", s, (r).code.data); \
    assert_non_null(strstr((r).code.data, s)); \
  } while (0)
#define LACKS(r, s) \
  do { \
    if (strstr((r).code.data, s)) fprintf(stderr, "unexpected '%s' in:\n%s\n", s, (r).code.data); \
    assert_null(strstr((r).code.data, s)); \
  } while (0)

static void test_plain_path(void **state) {
  (void)state;
  const char *src = "G = 0\n"
                    "def f(x):\n"
                    "    \"\"\"doc\"\"\"\n"
                    "    # a comment\n"
                    "    for i in range(x):\n"
                    "        global G\n"
                    "        G += i\n"
                    "    def g(y):\n"
                    "        return y if y else -y\n"
                    "    return g(x)\n";
  py_conv_result r = conv_raw(src, PY_STYLE_AUTOGRAPH, NULL);
  /* docstring, the hoisted declaration, then the plain path: the original statements */
  HAS(r, "def f(x):\n    'doc'\n    global G\n    if not sg__.staging:\n"
         "        for i in range(x):\n            G += i\n");
  /* the nested def is its converted twin in both copies, with a plain path of its own */
  assert_int_equal(count(r.code.data, "def g(y):\n"), 2);
  assert_int_equal(count(r.code.data, "if not sg__.staging:\n"), 3);
  assert_int_equal(count(r.code.data, "return y if y else -y\n"), 2);
  HAS(r, "sg__.if_exp(y, lambda: y, lambda: -y");
  /* the original statements end with a return; the comment stays with the converted body */
  HAS(r, "        return g(x)\n    # a comment\n");
  assert_int_equal(count(r.code.data, "# a comment"), 1);
  /* f's (hoisted: once), loop_body__1's (generated, and the original moved there),
   * set_state__1's */
  assert_int_equal(count(r.code.data, "global G"), 4);
  /* a converted body that makes closures is a function of its own (its variables are no
   * cells of the function the plain path runs in), unless the user's body defines
   * functions itself (f: their __qualname__ would change) */
  HAS(r, "            def g__staged(y):\n                return sg__.if_exp(y, lambda: y");
  HAS(r, "            return g__staged(y)\n");
  LACKS(r, "f__staged");
  LACKS(r, "        G += i\n        return None"); /* falls through to `return g(x)` */
  py_conv_result_free(&r);
  r = conv_raw("def h(x, /, y, *a, k=1, **kw):\n    for i in a:\n        x += i\n    return x\n",
               PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "    if not sg__.staging:\n        for i in a:\n");
  HAS(r, "    def h__staged(x, /, y, *a, k, **kw):\n");
  HAS(r, "    return h__staged(x, y, *a, k=k, **kw)\n");
  py_conv_result_free(&r);
  /* a body that can fall off its end returns None before the converted body starts */
  r = conv_raw("def h(x):\n    print(x)\n", PY_STYLE_SNEK, NULL);
  HAS(r, "    if not sg__.staging:\n        print(x)\n        return None\n");
  py_conv_result_free(&r);
}

static void test_module_shape(void **state) {
  (void)state;
  const char *src = "# keep me\nimport os  # and me\n\n\ndef f(x):\n    return x + 1\n\nY = [1,   2]\n";
  py_conv_result r = conv(src, PY_STYLE_AUTOGRAPH, NULL);
  assert_int_equal(strncmp(r.code.data, "# Converted by stagd", 20), 0);
  HAS(r, "\nimport stagd.runtime as sg__\nsg__.require_api(2)\nsg__source_map__ = sg__.SourceMap('t.py', {");
  HAS(r, "# keep me\nimport os  # and me\n\n\n@sg__.converted(sg__source_map__)\ndef f(x):\n");
  HAS(r, "\nY = [1,   2]\n"); /* untouched formatting */
  assert_int_equal(r.nconverted, 1);
  py_conv_result_free(&r);
}

static void test_lone_cr_line_ends(void **state) {
  /* a lone \r ends a line as in Python: the function's lines are the ones replaced, and
   * the lines after it are kept (fuzz_convert found them swallowed) */
  (void)state;
  const char *src = "@dec\r@d2()\ndef f():\r    g()\nh(c @\n  10)\nY = 1\r";
  py_conv_result r = conv(src, PY_STYLE_AUTOGRAPH, NULL); /* conv() checks that it parses */
  HAS(r, "@dec\n@d2()\n@sg__.converted(sg__source_map__)\ndef f():\n");
  HAS(r, "\nh(c @\n  10)\nY = 1\r\n");
  py_conv_result_free(&r);
}

static void test_bom_dropped(void **state) {
  /* a BOM stays out of the converted module (after the header it is invalid) */
  (void)state;
  const char *src = "\xef\xbb\xbfx = 1\ndef f():\n    pass\n";
  py_conv_result r = conv(src, PY_STYLE_AUTOGRAPH, NULL); /* conv() checks that it parses */
  assert_null(memmem(r.code.data, r.code.len, "\xef\xbb\xbf", 3));
  HAS(r, "\nx = 1\n@sg__.converted(sg__source_map__)\ndef f():\n");
  py_conv_result_free(&r);
}

static void test_coding_declaration_stays_first(void **state) {
  /* the header goes after an encoding declaration, which must stay on line 1 or 2 */
  (void)state;
  const char *src = "#!/usr/bin/env python\n# -*- coding: latin-1 -*-\ndef f():\n    return 'e'\n";
  py_conv_result r = conv(src, PY_STYLE_AUTOGRAPH, NULL); /* conv() checks that it parses */
  assert_int_equal(strncmp(r.code.data, "#!/usr/bin/env python\n# -*- coding: latin-1 -*-\n# Converted by", 62), 0);
  assert_int_equal(r.nconverted, 1);
  py_conv_result_free(&r);
}

static void test_non_utf8_text_is_refused(void **state) {
  /* converted functions are written in UTF-8 and copied lines keep the declared
   * encoding: a latin-1 module's 'é' came back as 'Ã©' (a different string, silently),
   * and other codecs gave modules that did not parse (fuzz_convert). Such a module is
   * an error diagnostic at the declaration, left unconverted. */
  (void)state;
  const char *srcs[] = {"# -*- coding: latin-1 -*-\ndef f():\n    return '\xe9'\n",
                        "#!/usr/bin/env python\n# vim: set fileencoding=cp1251 :\n# \xc1\ndef f():\n    pass\n"};
  for (int i = 0; i < 2; i++) {
    py_conv_result r = conv_raw(srcs[i], PY_STYLE_AUTOGRAPH, NULL);
    assert_int_equal(r.nconverted, 0);
    assert_string_equal(r.code.data, srcs[i]);
    assert_int_equal(r.ndiags, 1);
    assert_int_equal(r.diags[0].severity, PY_DIAG_ERROR);
    assert_int_equal(r.diags[0].line, i + 1);
    assert_non_null(strstr(r.diags[0].message, "UTF-8"));
    py_conv_result_free(&r);
  }
}

static void test_no_functions_pass_through(void **state) {
  (void)state;
  const char *src = "x = 1  # c\nclass A:\n    pass\n";
  py_conv_result r = conv(src, PY_STYLE_AUTOGRAPH, NULL);
  assert_string_equal(r.code.data, src);
  assert_int_equal(r.nconverted, 0);
  py_conv_result_free(&r);
}

static void test_future_import_stays_first(void **state) {
  (void)state;
  const char *src = "\"\"\"doc\"\"\"\nfrom __future__ import annotations\ndef f(x):\n    return x\n";
  py_conv_result r = conv(src, PY_STYLE_AUTOGRAPH, NULL);
  assert_int_equal(strncmp(r.code.data, "\"\"\"doc\"\"\"\nfrom __future__ import annotations\n# Converted", 55), 0);
  py_conv_result_free(&r);
}

static void test_break(void **state) {
  (void)state;
  py_conv_result r = conv("def f(n):\n    for i in n:\n        if i:\n            break\n        g(i)\n    else:\n"
                          "        h()\n    return 1\n",
                          PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "break__1 = False");
  HAS(r, "break__1 = True");
  HAS(r, "def extra_test__");
  HAS(r, "sg__.not_(break__1)");
  LACKS(r, "        break\n");
  LACKS(r, "else:");
  py_conv_result_free(&r);
}

static void test_continue(void **state) {
  (void)state;
  py_conv_result r = conv("def f(n):\n    s = 0\n    while n:\n        n -= 1\n        if n % 2:\n            continue\n"
                          "        s += n\n    return s\n",
                          PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "continue__1 = False");
  HAS(r, "continue__1 = True");
  HAS(r, "sg__.not_(continue__1)");
  LACKS(r, " continue\n");
  HAS(r, "sg__.while_stmt(loop_test__");
  py_conv_result_free(&r);
}

static void test_return_single_exit(void **state) {
  (void)state;
  py_conv_result r = conv("def f(xs):\n    for x in xs:\n        if x > 3:\n            return x\n    if xs:\n"
                          "        return 0\n    return -1\n",
                          PY_STYLE_AUTOGRAPH, NULL);
  /* one exit: only `return sg__.ret(...)` plus the get_state helpers' returns */
  int rets = count(r.code.data, "return ") - count(r.code.data, "return (") - count(r.code.data, "return sg__.not_");
  assert_int_equal(rets, 1);
  HAS(r, "return sg__.ret(retval__, do_return__)");
  HAS(r, "retval__ = x\n");
  HAS(r, "do_return__ = True");
  py_conv_result_free(&r);
}

static void test_flat_guards(void **state) {
  (void)state;
  /* 120 early returns: nested guards would pass Python's 100 indentation levels */
  sg_buf src = SG_BUF_INIT;
  sg_buf_puts(&src, "def f(x):\n");
  for (int i = 0; i < 120; i++) sg_buf_printf(&src, "    if x == %d:\n        return %d\n", i, i);
  sg_buf_puts(&src, "    return -1\n");
  sg_buf_putc(&src, '\0');
  py_conv_result r = conv(src.data, PY_STYLE_AUTOGRAPH, NULL);
  int maxind = 0;
  for (const char *p = r.code.data; *p;) {
    int n = 0;
    while (p[n] == ' ') n++;
    if (n > maxind) maxind = n;
    const char *e = strchr(p, '\n');
    p = e ? e + 1 : p + strlen(p);
  }
  assert_true(maxind <= 4 * 4);
  assert_int_equal(count(r.code.data, "if_stmt(sg__.not_(do_return__)"), 120);
  py_conv_result_free(&r);
  sg_buf_free(&src);
}

static void test_tail_return_kept(void **state) {
  (void)state;
  py_conv_result r = conv("def f(x):\n    y = x * 2\n    return y\n", PY_STYLE_AUTOGRAPH, NULL);
  LACKS(r, "do_return__");
  HAS(r, "    return y\n");
  py_conv_result_free(&r);
}

/* item assignment with NumPy basic-indexing keys, plain and augmented */
static void test_set_item_keys(void **state) {
  (void)state;
  py_conv_result r = conv("def f(x, i, v):\n    x[1:i, 0] = v\n    x[..., ::2] = v\n    x[:, i] += v\n"
                          "    x[None, -1] *= 2\n    x[g(i)] = v\n    return x\n",
                          PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "x = sg__.set_item(x, (sg__.slice_(1, i, None), 0), v)");
  HAS(r, "x = sg__.set_item(x, (..., sg__.slice_(None, None, 2)), v)");
  HAS(r, "x = sg__.set_item(x, (sg__.slice_(None, None, None), i), sg__.aug_item('Add', "
         "sg__.get_item(x, (sg__.slice_(None, None, None), i)), v))");
  HAS(r, "x = sg__.set_item(x, (None, -1), sg__.aug_item('Mult', sg__.get_item(x, (None, -1)), 2))");
  HAS(r, "x = sg__.set_item(x, sg__.converted_call(g, (i,), {}), v)"); /* v quiet: no temporary */
  py_conv_result_free(&r);
}

/* item assignment with computed keys: Python's order (v, x, K; augmented x, K, get, v)
 * through temporaries only where it could be observed */
static void test_set_item_computed_keys(void **state) {
  (void)state;
  py_conv_result r = conv("def f(x, i, v, idx):\n    x[i + 1] = h(v)\n    x[g(i)] += v\n    x[:, i - 1] = v\n"
                          "    x[idx[i]] = v\n    x[i] = h(v)\n    if i:\n        y = x\n    y[i - 1] -= v\n"
                          "    x[(x := v)[0]] = 1\n    x[*idx, 1] = 2\n    z[i] = h(v)\n    x[i:-1] += h(v)\n"
                          "    x[0] = (x := h(v))\n    x[(v := i)] = v\n    x[i] = (i := v)\n    return x\n",
                          PY_STYLE_AUTOGRAPH, NULL);
  /* a computed key and a value that runs code: the value first */
  HAS(r, "value__1 = sg__.converted_call(h, (v,), {})\n    x = sg__.set_item(x, i + 1, value__1)\n");
  /* augmented: the key once, before the read */
  HAS(r, "key__2 = sg__.converted_call(g, (i,), {})\n"
         "    x = sg__.set_item(x, key__2, sg__.aug_item('Add', sg__.get_item(x, key__2), v))\n");
  /* a quiet value: no temporary, whatever the key */
  HAS(r, "x = sg__.set_item(x, (sg__.slice_(None, None, None), i - 1), v)");
  HAS(r, "x = sg__.set_item(x, sg__.get_item(idx, i), v)");
  /* a simple key on a bound target: the value's place does not matter */
  HAS(r, "x = sg__.set_item(x, i, sg__.converted_call(h, (v,), {}))");
  /* a possibly unbound target is read before the key */
  HAS(r, "obj__3 = sg__.ld(y)\n    key__3 = i - 1\n"
         "    y = sg__.set_item(obj__3, key__3, sg__.aug_item('Sub', sg__.get_item(obj__3, key__3), v))\n");
  /* the key rebinds x: Python's own statement */
  HAS(r, "x[(x := v)[0]] = 1");
  HAS(r, "x = sg__.set_item(x, (*idx, 1), 2)");
  /* z is not a local (a global): Python's own statement */
  HAS(r, "z[i] = sg__.converted_call(h, (v,), {})");
  /* a duplicable key is written out twice, no temporary */
  HAS(r, "x = sg__.set_item(x, sg__.slice_(i, -1, None), sg__.aug_item('Add', "
         "sg__.get_item(x, sg__.slice_(i, -1, None)), sg__.converted_call(h, (v,), {})))");
  /* the value rebinds x: it goes first, even with a quiet key */
  HAS(r, " = (x := sg__.converted_call(h, (v,), {}))\n    x = sg__.set_item(x, 0, value__");
  /* a name the key (the value) rebinds is not quiet: the value goes first */
  HAS(r, " = v\n    x = sg__.set_item(x, (v := i), value__");
  HAS(r, " = (i := v)\n    x = sg__.set_item(x, i, value__");
  LACKS(r, "key__4");
  LACKS(r, "obj__2");
  py_conv_result_free(&r);
}

static void test_assert_lists_slices(void **state) {
  (void)state;
  py_conv_result r = conv("def f(x, i):\n    l = []\n    l.append(x)\n    v = l.pop()\n    x[0] = v\n"
                          "    assert v, 'm'\n    assert x\n    return x[i], l\n",
                          PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "l = sg__.new_list([])");
  HAS(r, "l = sg__.list_append(l, x)");
  HAS(r, "(l, v) = sg__.list_pop(l, None)");
  HAS(r, "x = sg__.set_item(x, 0, v)");
  HAS(r, "sg__.assert_stmt(v, lambda: 'm')");
  HAS(r, "sg__.assert_stmt(x, lambda: None)");
  HAS(r, "sg__.get_item(x, i)");
  py_conv_result_free(&r);
}

static void test_builtins_and_calls(void **state) {
  (void)state;
  py_conv_result r = conv("def f(a, b, c, d):\n    print(len(a), sep='')\n    return g(a, *b, **d) + g(k=c)\n"
                          "def h():\n    return super().m() + locals()['x']\n",
                          PY_STYLE_AUTOGRAPH, "f");
  HAS(r, "sg__.print_(sg__.len_(a), sep='')");
  HAS(r, "sg__.converted_call(g, (a, *b), {**d})");
  HAS(r, "sg__.converted_call(g, (), {'k': c})");
  HAS(r, "def h():\n    return super().m()"); /* not selected: unchanged */
  py_conv_result_free(&r);
  /* a keyword next to **d could repeat: Python's TypeError must stay, so the call stays */
  r = conv("def f(c, d):\n    return g(k=c, **d)\n", PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "return g(k=c, **d)");
  py_conv_result_free(&r);
  /* a shadowed builtin is not the builtin */
  r = conv("len = 3\ndef f(a):\n    return len(a)\n", PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "sg__.converted_call(len, (a,), {})");
  LACKS(r, "sg__.len_");
  py_conv_result_free(&r);
}

static void test_control_flow_state(void **state) {
  (void)state;
  py_conv_result r = conv("def f(x):\n    y = 0\n    z = 1\n    if x > 0:\n        y = x\n        t = 5\n    else:\n"
                          "        y = -x\n    return y + z\n",
                          PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "def if_true__");
  HAS(r, "nonlocal");
  /* state = modified and live after: y (t is dead, z not modified) */
  HAS(r, "('y',), 1)");
  HAS(r, "sg__.if_stmt(x > 0, if_true__1, if_false__1, get_state__1, set_state__1,");
  py_conv_result_free(&r);
}

static void test_undefined_and_ld(void **state) {
  (void)state;
  py_conv_result r = conv("def f(c):\n    if c:\n        y = 1\n    return y\n", PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "y = sg__.Undefined('y')");
  HAS(r, "return sg__.ld(y)");
  py_conv_result_free(&r);
  /* del of a name bound to Undefined rebinds Undefined (ld first where it may be unbound) */
  r = conv("def f(c):\n    x = 1\n    while c:\n        del x, c\n", PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "x = sg__.Undefined('x')\n    x = 1");
  HAS(r, "sg__.ld(x)\n        x = sg__.Undefined('x')\n        del c");
  py_conv_result_free(&r);
  /* a name bound only after a break stays local: kept under the flag's guard */
  r = conv("def f(c):\n    while c:\n        break\n        n = 1\n    return n\n", PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "n = sg__.Undefined('n')");
  HAS(r, "return sg__.ld(n)");
  py_conv_result_free(&r);
  /* reads from list comprehensions (functions before 3.12) and from moved operands */
  r = conv("def f(c):\n    if c:\n        z = 1\n    return [q for q in c if q != z], c and z\n", PY_STYLE_AUTOGRAPH,
           NULL);
  HAS(r, "q != sg__.ld(z, comp=True)");
  HAS(r, "sg__.and_(lambda: c, lambda: sg__.ld(z))");
  py_conv_result_free(&r);
  /* a walrus in a lazy operand may not happen: the read after it is checked */
  r = conv("def f(a):\n    ok = a or (z := 1)\n    if ok:\n        return z\n", PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "retval__ = sg__.ld(z)");
  py_conv_result_free(&r);
}

static void test_ternary_logical(void **state) {
  (void)state;
  py_conv_result r = conv("def f(a, b, c):\n    return (a if c else b) and not (b or c)\n", PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "sg__.if_exp(c, lambda: a, lambda: b, 'a if c else b')");
  HAS(r, "sg__.and_(lambda: sg__.if_exp(");
  HAS(r, "sg__.not_(sg__.or_(lambda: b, lambda: c))");
  py_conv_result_free(&r);
  /* a walrus must not move into a lambda */
  r = conv("def f(a):\n    return (y := a) and y\n", PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "return (y := a) and y");
  py_conv_result_free(&r);
}

static void test_wrapper_after_user_decorators(void **state) {
  (void)state;
  py_conv_result r = conv("import functools\n@functools.lru_cache(None)\ndef f(x):\n    return x\n", PY_STYLE_AUTOGRAPH,
                          NULL);
  HAS(r, "@functools.lru_cache(None)\n@sg__.converted(sg__source_map__)\ndef f(x):");
  py_conv_result_free(&r);
}

static void test_methods_and_function_filter(void **state) {
  (void)state;
  const char *src = "class A:\n    def m(self, x):\n        if x:\n            x = 1\n        return x\n"
                    "    def n(self):\n        return 2\ndef g():\n    return 3\n";
  py_conv_result r = conv(src, PY_STYLE_AUTOGRAPH, "A.m");
  assert_int_equal(r.nconverted, 1);
  HAS(r, "    @sg__.converted(sg__source_map__)\n    def m(self, x):");
  HAS(r, "    def n(self):\n        return 2\ndef g():\n    return 3\n");
  py_conv_result_free(&r);
  r = conv(src, PY_STYLE_AUTOGRAPH, "nope");
  assert_int_equal(r.nconverted, 0);
  assert_int_equal(r.ndiags, 1);
  assert_string_equal(r.diags[0].code, "unknown-function");
  assert_int_equal(r.diags[0].severity, PY_DIAG_ERROR);
  py_conv_result_free(&r);
}

static void test_snek(void **state) {
  (void)state;
  py_conv_result r = conv("def f(x):\n    n = 0\n    while x > 0:\n        if x == 3:\n            return n\n"
                          "        x -= 1\n        n += 1\n    for i in range(2):\n        if i:\n            break\n    return -1\n",
                          PY_STYLE_SNEK, NULL);
  HAS(r, "def cond__");
  HAS(r, "sg__.while__(cond__");
  HAS(r, "def then__");
  HAS(r, "sg__.if__(x == 3, then__");
  /* n is rebound inside an extracted function: lifted into a var__ cell */
  HAS(r, "n = sg__.var__()");
  HAS(r, "sg__.assign__(n, 0)");
  HAS(r, "aug__");
  HAS(r, "sg__.return__(sg__.read__(n))");
  HAS(r, "sg__.break__()");
  HAS(r, "sg__.for__(sg__.range_(2), body__");
  HAS(r, "except sg__.NonLocalReturnValue as r__:\n        return r__.value");
  LACKS(r, "if_stmt");
  py_conv_result_free(&r);
}

static void test_diagnostics(void **state) {
  (void)state;
  const char *src = "def gen(n):\n    for i in range(n):\n        yield i\n"
                    "def bad(x):\n    y__ = x\n    return y__\n"
                    "def ok(x):\n    return x\n"
                    "class B(A):\n    def m(self):\n        return super().m()\n";
  py_conv_result r = conv(src, PY_STYLE_AUTOGRAPH, NULL);
  assert_int_equal(r.nconverted, 1);
  assert_int_equal(r.ndiags, 3);
  assert_string_equal(r.diags[0].code, "unsupported-construct");
  assert_int_equal(r.diags[0].line, 3);
  assert_int_equal(r.diags[0].col, 9);
  assert_int_equal(r.diags[0].severity, PY_DIAG_WARNING);
  assert_non_null(strstr(r.diags[0].message, "yield"));
  assert_true(strlen(r.diags[0].hint) > 0);
  assert_string_equal(r.diags[1].code, "reserved-name");
  assert_int_equal(r.diags[1].line, 5);
  assert_int_equal(r.diags[1].col, 5);
  assert_string_equal(r.diags[2].code, "unsupported-construct");
  assert_int_equal(r.diags[2].line, 11);
  /* unconverted functions are left exactly as written */
  HAS(r, "def gen(n):\n    for i in range(n):\n        yield i\n");
  HAS(r, "def bad(x):\n    y__ = x\n");
  py_conv_result_free(&r);
}

static void test_jump_out_of_finally_not_converted(void **state) {
  (void)state;
  const char *src = "def f():\n    try:\n        1 / 0\n    finally:\n        return 5\n"
                    "def g(xs):\n    for x in xs:\n        try:\n            pass\n        finally:\n"
                    "            for y in xs:\n                break\n    return 1\n";
  py_conv_result r = conv(src, PY_STYLE_AUTOGRAPH, NULL);
  assert_int_equal(r.nconverted, 1); /* g: its break stays inside the finally */
  assert_int_equal(r.ndiags, 1);
  assert_string_equal(r.diags[0].code, "unsupported-construct");
  assert_int_equal(r.diags[0].line, 5);
  assert_int_equal(r.diags[0].col, 9);
  HAS(r, "def f():\n    try:\n        1 / 0\n    finally:\n        return 5\n");
  py_conv_result_free(&r);
}

static void test_syntax_error_like_parser(void **state) {
  (void)state;
  const char *src = "def f(:\n    pass\n";
  py_conv_result r;
  sg_error e1 = SG_ERROR_INIT, e2 = SG_ERROR_INIT;
  assert_int_equal(py_convert(src, strlen(src), "bad.py", PY_STYLE_AUTOGRAPH, NULL, &r, &e1), SG_INVALID_ARGUMENT);
  py_conv_result_free(&r);
  py_ctx ctx;
  py_ctx_init(&ctx);
  assert_null(py_parse(&ctx, src, strlen(src), "bad.py", &e2));
  py_ctx_free(&ctx);
  assert_string_equal(e1.message, e2.message);
  assert_int_equal(e1.line, e2.line);
  assert_int_equal(e1.col, e2.col);
  assert_string_equal(e1.file, "bad.py");
  sg_error_clear(&e1);
  sg_error_clear(&e2);
}

static void test_source_map(void **state) {
  (void)state;
  const char *src = "A = 1\ndef f(x):\n    if x:\n        x = 2\n    return x\nB = 2\n";
  py_conv_result r = conv_raw(src, PY_STYLE_AUTOGRAPH, NULL); /* the lines as written */
  assert_true(r.nmap > 0);
  int prev = 0;
  bool saw_if = false;
  for (int i = 0; i < r.nmap; i++) {
    assert_true(r.map[i].converted_line > prev);
    prev = r.map[i].converted_line;
    assert_true(r.map[i].line >= 1 && r.map[i].line <= 6);
    if (r.map[i].line == 3 && r.map[i].col == 5) saw_if = true;
  }
  assert_true(saw_if);
  /* the verbatim line `B = 2` maps to itself */
  int nlines = 0, bline = 0;
  for (const char *p = r.code.data; *p; p++)
    if (*p == '\n') {
      nlines++;
      if (!strncmp(p + 1, "B = 2", 5)) bline = nlines + 1;
    }
  bool found = false;
  for (int i = 0; i < r.nmap; i++)
    if (r.map[i].converted_line == bline) found = r.map[i].line == 6;
  assert_true(found);
  py_conv_result_free(&r);
}

static void test_tab_indented_method(void **state) {
  (void)state;
  py_conv_result r = conv("class A:\n\tdef m(self, x):\n\t\tif x:\n\t\t\treturn 1\n\t\treturn 2\n\ty = 1\n",
                          PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "\n\t@sg__.converted(sg__source_map__)\n\tdef m(self, x):\n\t    do_return__ = False\n");
  HAS(r, "\n\ty = 1\n");
  py_conv_result_free(&r);
}

static void test_undefined_reads(void **state) {
  (void)state;
  /* read in a helper before the function binds it: Undefined + ld */
  py_conv_result r = conv("def f(x):\n    if x:\n        print(z)\n    z = x\n    return z\n", PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "z = sg__.Undefined('z')");
  HAS(r, "sg__.print_(sg__.ld(z))");
  HAS(r, "    return z\n"); /* definitely defined there */
  py_conv_result_free(&r);
  /* read from a nested function: Python raises NameError there, hence free=True */
  r = conv("def f(flag):\n    if flag:\n        v = 1\n    def inner():\n        return v\n    return inner()\n",
           PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "return sg__.ld(v, free=True)");
  py_conv_result_free(&r);
}

static void test_annotations_and_walrus_loop(void **state) {
  (void)state;
  py_conv_result r = conv("def f(xs):\n    i = 0\n    while (n := len(xs)) > i:\n        k: int = i\n        i += 1\n"
                          "    return n, k\n",
                          PY_STYLE_AUTOGRAPH, NULL);
  HAS(r, "k = i\n"); /* an annotated name cannot be nonlocal */
  LACKS(r, "k: int");
  HAS(r, "def loop_test__1():\n        nonlocal n\n");
  py_conv_result_free(&r);
}

static void test_directives(void **state) {
  (void)state;
  const char *src = "import stagd\n"
                    "def f(x, n):\n"
                    "    l = []\n"
                    "    stagd.set_element_type(l, 'float64', (2,))\n"
                    "    stagd.set_element_type(G, 'float64')\n"
                    "    while x > 0:\n"
                    "        stagd.set_loop_options(maximum_iterations=5, parallel_iterations=n)\n"
                    "        x = x - 1\n"
                    "        stagd.set_loop_options(swap_memory=True)\n"
                    "    for i in range(n):\n"
                    "        set_loop_options(maximum_iterations=2)\n"
                    "    for j in range(n):\n"
                    "        if j:\n"
                    "            stagd.set_loop_options(maximum_iterations=9)\n"
                    "        stagd.set_loop_options(*a)\n"
                    "    return l\n";
  py_conv_result r = conv(src, PY_STYLE_AUTOGRAPH, NULL);
  /* loop options leave the body and become the loop's opts, in order */
  HAS(r, "('x',), {'maximum_iterations': 5, 'parallel_iterations': n, 'swap_memory': True})");
  HAS(r, "{'maximum_iterations': 2})");
  /* only keyword-only calls directly in the loop body are directives */
  HAS(r, "sg__.converted_call(stagd.set_loop_options, (), {'maximum_iterations': 9})");
  HAS(r, "sg__.converted_call(stagd.set_loop_options, (*a,), {})");
  assert_int_equal(count(r.code.data, "set_loop_options"), 2);
  /* set_element_type on a local rebinds it; on a global it stays a call */
  HAS(r, "l = sg__.set_element_type(l, 'float64', (2,))");
  HAS(r, "sg__.converted_call(stagd.set_element_type, (G, 'float64'), {})");
  py_conv_result_free(&r);
  /* Snek style: the options are dropped (sg__.while__ takes none) */
  r = conv(src, PY_STYLE_SNEK, NULL);
  LACKS(r, "maximum_iterations=5");
  LACKS(r, "'maximum_iterations': 5");
  HAS(r, "sg__.set_element_type(");
  py_conv_result_free(&r);
}

static void test_comments_kept(void **state) {
  (void)state;
  const char *src = "def f(x, n):\n"
                    "    \"\"\"Doc.\n"
                    "    # inside the docstring\n"
                    "    \"\"\"\n"
                    "    # start\n"
                    "    y = 0\n"
                    "    for j in range(n):\n"
                    "        # accumulate\n"
                    "        y = y + x * j  # at the end of a line: dropped\n"
                    "        if y > 10:\n"
                    "\t    # stop early\n"
                    "            break\n"
                    "    # the answer\n"
                    "    return y\n";
  for (int style = 0; style < 2; style++) {
    py_conv_result r = conv(src, style ? PY_STYLE_SNEK : PY_STYLE_AUTOGRAPH, NULL);
    HAS(r, "\n    # start\n");
    HAS(r, "# accumulate\n");
    HAS(r, "# stop early\n");
    HAS(r, "\n    # the answer\n    return ");
    LACKS(r, "dropped");
    assert_int_equal(count(r.code.data, "# inside the docstring"), 1); /* only the string's */
    /* each comment comes before the statement it was above */
    assert_non_null(strstr(r.code.data, "range_(n)"));
    assert_true(strstr(r.code.data, "# start") < strstr(r.code.data, "range_(n)"));
    assert_true(strstr(r.code.data, "# accumulate") < strstr(r.code.data, "x * j"));
    assert_true(strstr(r.code.data, "# stop early") > strstr(r.code.data, "x * j"));
    py_conv_result_free(&r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_module_shape),
      cmocka_unit_test(test_lone_cr_line_ends),
      cmocka_unit_test(test_bom_dropped),
      cmocka_unit_test(test_coding_declaration_stays_first),
      cmocka_unit_test(test_non_utf8_text_is_refused),
      cmocka_unit_test(test_no_functions_pass_through),
      cmocka_unit_test(test_future_import_stays_first),
      cmocka_unit_test(test_break),
      cmocka_unit_test(test_continue),
      cmocka_unit_test(test_return_single_exit),
      cmocka_unit_test(test_flat_guards),
      cmocka_unit_test(test_tail_return_kept),
      cmocka_unit_test(test_assert_lists_slices), cmocka_unit_test(test_set_item_keys),
      cmocka_unit_test(test_set_item_computed_keys),
      cmocka_unit_test(test_builtins_and_calls),
      cmocka_unit_test(test_control_flow_state),
      cmocka_unit_test(test_undefined_and_ld),
      cmocka_unit_test(test_ternary_logical),
      cmocka_unit_test(test_wrapper_after_user_decorators),
      cmocka_unit_test(test_methods_and_function_filter),
      cmocka_unit_test(test_snek),
      cmocka_unit_test(test_diagnostics),
      cmocka_unit_test(test_jump_out_of_finally_not_converted),
      cmocka_unit_test(test_syntax_error_like_parser),
      cmocka_unit_test(test_source_map),
      cmocka_unit_test(test_tab_indented_method),
      cmocka_unit_test(test_undefined_reads),
      cmocka_unit_test(test_annotations_and_walrus_loop),
      cmocka_unit_test(test_directives),
      cmocka_unit_test(test_comments_kept),
      cmocka_unit_test(test_plain_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
