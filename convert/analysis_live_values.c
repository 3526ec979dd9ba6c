// SPDX-License-Identifier: Apache-2.0
/*
 * analysis_live_values.c — a small abstract interpretation of names (AutoGraph's
 * "type and value analysis", limited to what is decidable without running code):
 * a Name resolves, through Python's scope rules, either to a builtin (bound nowhere
 * on its resolution path), to one import (the only binding of the name in the scope
 * it resolves to), or to something unknown. Attribute chains over a module extend it.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis_priv.h"

/* Python 3.12's builtins module, less True/False/None (keywords) and the module's own
 * dunders; sorted for bsearch. */
static const char *const k_builtins[] = {
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException",
    "BaseExceptionGroup", "BlockingIOError", "BrokenPipeError", "BufferError",
    "BytesWarning", "ChildProcessError", "ConnectionAbortedError", "ConnectionError",
    "ConnectionRefusedError", "ConnectionResetError", "DeprecationWarning", "EOFError",
    "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception", "ExceptionGroup",
    "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
    "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
    "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
    "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "NotADirectoryError",
    "NotImplemented", "NotImplementedError", "OSError", "OverflowError",
    "PendingDeprecationWarning", "PermissionError", "ProcessLookupError", "RecursionError",
    "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning",
    "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError",
    "SystemExit", "TabError", "TimeoutError", "TypeError", "UnboundLocalError",
    "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError",
    "UnicodeWarning", "UserWarning", "ValueError", "Warning", "ZeroDivisionError",
    "__build_class__", "__debug__", "__import__", "abs", "aiter", "all", "anext", "any",
    "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr",
    "classmethod", "compile", "complex", "copyright", "credits", "delattr", "dict", "dir",
    "divmod", "enumerate", "eval", "exec", "exit", "filter", "float", "format", "frozenset",
    "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input", "int",
    "isinstance", "issubclass", "iter", "len", "license", "list", "locals", "map", "max",
    "memoryview", "min", "next", "object", "oct", "open", "ord", "pow", "print", "property",
    "quit", "range", "repr", "reversed", "round", "set", "setattr", "slice", "sorted",
    "staticmethod", "str", "sum", "super", "tuple", "type", "vars", "zip",
};

static int cmp_str(const void *k, const void *e) { return strcmp(k, *(const char *const *)e); }

bool py_an_builtin_name(const char *name) {
  return name && bsearch(name, k_builtins, sizeof k_builtins / sizeof *k_builtins,
                         sizeof *k_builtins, cmp_str) != NULL;
}

static py_live_value unknown(void) {
  py_live_value v = {PY_LV_UNKNOWN, NULL};
  return v;
}

static py_live_value from_binding(const py_an *an, const an_scope *s, py_sym x) {
  const an_binding *b = an_binding_get(an, s, x);
  if (b && b->count == 1 && b->lv.kind != PY_LV_UNKNOWN) return b->lv;
  return unknown();
}

static py_live_value resolve_name(py_an *an, const an_scope *use, const char *id) {
  py_sym x = py_an_sym(an, id);
  const an_scope *module = an->scopes.data[0];
  for (const an_scope *s = use; s; s = (const an_scope *)s->pub.parent) {
    if (s != use && s->pub.kind == PY_SCOPE_CLASS) continue; /* invisible from inside */
    if (py_symset_has(s->pub.globals, x)) {
      s = module;
      if (py_symset_has(s->pub.locals, x)) return from_binding(an, s, x);
      if (s->star_import) return unknown();
      break;
    }
    if (py_symset_has(s->pub.nonlocals, x)) continue;
    if (py_symset_has(s->pub.locals, x)) return from_binding(an, s, x);
    if (s->star_import) return unknown();
  }
  if (py_an_builtin_name(id)) {
    py_live_value v = {PY_LV_BUILTIN, sg_intern_str(&an->ctx->names, id)};
    return v;
  }
  return unknown();
}

py_live_value py_an_live_value(py_an *an, const py_expr *e) {
  if (!e) return unknown();
  if (e->kind == PY_K_Name) {
    const an_scope *s = an_get(&an->scope_of, e);
    if (!s || e->v.Name.ctx != PY_Load) return unknown();
    return resolve_name(an, s, e->v.Name.id);
  }
  if (e->kind == PY_K_Attribute) {
    py_live_value base = py_an_live_value(an, e->v.Attribute.value);
    if (base.kind != PY_LV_MODULE && base.kind != PY_LV_IMPORTED) return unknown();
    sg_buf b = SG_BUF_INIT;
    sg_buf_printf(&b, "%s.%s", base.what, e->v.Attribute.attr);
    py_live_value v = {PY_LV_IMPORTED, sg_intern_str(&an->ctx->names, b.data)};
    sg_buf_free(&b);
    return v;
  }
  return unknown();
}

bool py_an_is_builtin_call(py_an *an, const py_expr *call_or_func, const char *name) {
  const py_expr *f = call_or_func;
  if (f && f->kind == PY_K_Call) f = f->v.Call.func;
  if (!f || f->kind != PY_K_Name || strcmp(f->v.Name.id, name)) return false;
  return py_an_live_value(an, f).kind == PY_LV_BUILTIN;
}
