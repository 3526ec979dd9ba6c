// SPDX-License-Identifier: Apache-2.0
/*
 * test_analysis_tool.c — a driver for test_analysis_symtable.py: parses and analyses
 * each file named on the command line and prints its scope tree, one scope a line:
 *
 *   == PATH
 *   ID|PARENT|KIND|NAME|LINE|locals|params|globals|nonlocals|free|read

 * (ID numbers the scopes of the file, PARENT is the ID of the lexical parent, -1 for
 * the module)
 *
 * where the last six fields are comma-separated simple names (free: names used in the
 * scope or nested ones that resolve outside it; read: names the scope itself reads). A file that does not parse prints
 * `!! PATH`. With `--dump FILE` it prints every analysis dump of one file instead.
 * With `--defs FILE...` it prints, for every load of a local variable of a function,
 * whether it is definitely bound there (reaching definitions):
 *
 *   == PATH
 *   LINE:COL NAME 1|0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

static void put_names(py_an *an, py_symset s, sg_buf *out) {
  bool first = true;
  for (int i = 0; i < s.n; i++) {
    const py_sym_info *in = py_an_sym_info(an, s.a[i]);
    if (in->kind != PY_QN_NAME) continue;
    if (!first) sg_buf_putc(out, ',');
    sg_buf_puts(out, in->text);
    first = false;
  }
}

typedef struct walk {
  py_an *an;
  sg_buf *out;
  sg_map ids; /* scope → id + 1 */
  int next;
} walk;

static void scope_line(walk *w, const py_scope *s) {
  py_an *an = w->an;
  sg_buf *out = w->out;
  void *pid = NULL;
  sg_map_put(&w->ids, (uint64_t)(uintptr_t)s, (void *)(intptr_t)(++w->next));
  if (s->parent) sg_map_get(&w->ids, (uint64_t)(uintptr_t)s->parent, &pid);
  const char *kind = "function", *name = "";
  int line = 0;
  const py_stmt *st = s->node;
  const py_expr *e = s->node;
  switch (s->kind) {
  case PY_SCOPE_MODULE: kind = "module"; name = "top"; break;
  case PY_SCOPE_FUNCTION: name = st->v.FunctionDef.name; line = st->lineno; break;
  case PY_SCOPE_CLASS: kind = "class"; name = st->v.ClassDef.name; line = st->lineno; break;
  case PY_SCOPE_LAMBDA: name = "lambda"; line = e->lineno; break;
  case PY_SCOPE_COMPREHENSION:
    kind = "comprehension";
    name = e->kind == PY_K_ListComp  ? "listcomp"
           : e->kind == PY_K_SetComp ? "setcomp"
           : e->kind == PY_K_DictComp ? "dictcomp"
                                      : "genexpr";
    line = e->lineno;
    break;
  }
  sg_buf_printf(out, "%d|%d|%s|%s|%d|", w->next - 1, (int)(intptr_t)pid - 1, kind, name, line);
  put_names(an, s->locals, out);
  sg_buf_putc(out, '|');
  put_names(an, s->params, out);
  sg_buf_putc(out, '|');
  put_names(an, s->globals, out);
  sg_buf_putc(out, '|');
  put_names(an, s->nonlocals, out);
  sg_buf_putc(out, '|');
  put_names(an, s->free, out);
  sg_buf_putc(out, '|');
  put_names(an, s->read, out);
  sg_buf_putc(out, '\n');
}

/* --defs: every Name load of a function's local. */
static bool visit_defs(void *node, py_kind kind, void *ctx) {
  walk *w = ctx;
  if (kind == PY_K_Name) {
    const py_expr *e = node;
    const py_scope *s = py_an_scope_of(w->an, e);
    if (e->v.Name.ctx == PY_Load && s && s->kind == PY_SCOPE_FUNCTION &&
        py_symset_has(s->locals, py_an_sym(w->an, e->v.Name.id))) {
      const py_cfg_node *const *defs;
      bool undef = false;
      int n = py_an_reaching_defs(w->an, e, &defs, &undef);
      if (n || undef)
        sg_buf_printf(w->out, "%d:%d %s %d\n", e->lineno, e->col_offset, e->v.Name.id, !undef);
    }
  }
  return py_visit_children(node, visit_defs, ctx);
}

/* Every scope-opening node of the tree; a parent is always met before its children. */
static bool visit(void *node, py_kind kind, void *ctx) {
  walk *w = ctx;
  const py_scope *s = py_an_scope(w->an, node);
  if (s) scope_line(w, s);
  (void)kind;
  return py_visit_children(node, visit, ctx);
}

int main(int argc, char **argv) {
  bool dump = argc == 3 && !strcmp(argv[1], "--dump");
  bool defs = argc >= 2 && !strcmp(argv[1], "--defs");
  sg_buf out = SG_BUF_INIT;
  for (int i = dump || defs ? 2 : 1; i < argc; i++) {
    size_t len = 0;
    char *src = sg_read_file(argv[i], &len);
    py_ctx ctx;
    py_ctx_init(&ctx);
    sg_error err = SG_ERROR_INIT;
    py_mod *mod = src ? py_parse(&ctx, src, len, argv[i], &err) : NULL;
    if (!mod) {
      sg_buf_printf(&out, "!! %s\n", argv[i]);
    } else {
      py_an *an = py_an_new(&ctx);
      py_an_module(an, mod);
      if (dump) {
        sg_buf_puts(&out, "== scopes\n");
        py_an_dump_scopes(an, &out);
        sg_buf_puts(&out, "== activity\n");
        py_an_dump_activity(an, &out);
        sg_buf_puts(&out, "== defined\n");
        py_an_dump_defined(an, &out);
        sg_buf_puts(&out, "== liveness\n");
        py_an_dump_liveness(an, &out);
        sg_buf_puts(&out, "== live values\n");
        py_an_dump_live_values(an, &out);
      } else {
        sg_buf_printf(&out, "== %s\n", argv[i]);
        walk w = {an, &out, SG_MAP_INIT, 0};
        if (defs) visit_defs(mod, mod->kind, &w);
        else visit(mod, mod->kind, &w);
        sg_map_free(&w.ids);
      }
      py_an_free(an);
    }
    sg_error_clear(&err);
    py_ctx_free(&ctx);
    free(src);
    fwrite(out.data ? out.data : "", 1, out.len, stdout);
    sg_buf_clear(&out);
  }
  sg_buf_free(&out);
  return 0;
}
