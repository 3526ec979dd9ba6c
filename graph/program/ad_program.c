// SPDX-License-Identifier: Apache-2.0
/*
 * ad_program.c — gr_grad_program (gr.h): the Grad RPC's back end. A staged
 * program's sexpr dump re-stages to the same graphs, so the gradient program is that
 * dump plus one wrapper def, (def grad_NAME (p...) ((grad NAME i...) p...)), staged
 * with the wrapper as entry; graph/ad does the differentiation while staging.
 * A program staged from Python is differentiated from its source instead (pyfront
 * builds the same wrapper), so the gradient's dumps and errors point at the .py file.
 */
#include <string.h>

#include "program_int.h"

sg_code gr_grad_program(gr_program *p, const char *entry, const int32_t *wrt, size_t nwrt,
                        bool no_optimize, gr_program **out, sg_error *err) {
  *out = NULL;
  if (!entry || !*entry) entry = gr_program_entry(p);
  const char *py, *py_entry, *py_file;
  size_t py_len;
  if (gr_program_python_source(p, &py, &py_len, &py_entry, &py_file)) {
    gr_stage_options so = {.no_optimize = no_optimize, .entry = entry};
    static const int32_t all = 0;
    return gr_stage_python_grad(py, py_len, py_file, &so, nwrt ? wrt : &all, nwrt, out, err);
  }
  char fname[64];
  snprintf(fname, sizeof fname, "<graph %s>", gr_program_id(p));
  char *src = gr_program_dump(p, GR_DUMP_SEXPR);
  sg_arena arena;
  sg_intern strings;
  sg_arena_init(&arena, 0);
  sg_intern_init(&strings);
  sg_buf b = SG_BUF_INIT;
  sx **forms;
  int nforms;
  sg_code rc = sx_read(src, strlen(src), fname, &arena, &strings, &forms, &nforms, err);
  const sx *def = NULL;
  for (int i = 0; !rc && i < nforms; i++) {
    const sx *f = forms[i];
    if (f->kind == SX_LIST && f->u.list.n == 4 && f->u.list.items[1]->kind == SX_SYM &&
        !strcmp(f->u.list.items[1]->u.sym, entry))
      def = f;
  }
  if (!rc && !def)
    rc = sg_error_set(err, SG_INVALID_ARGUMENT, "grad: graph %s has no def named '%s'",
                      gr_program_id(p), entry);
  if (rc) goto done;
  const sx *ps = def->u.list.items[2];
  int np = ps->kind == SX_LIST ? ps->u.list.n : 0;
  for (size_t i = 0; i < nwrt; i++)
    if (wrt[i] < 0 || wrt[i] >= np) {
      rc = sg_error_set_at(err, SG_INVALID_ARGUMENT, fname, def->line, def->col,
                           "grad: wrt index %d out of range: '%s' has %d parameter(s)",
                           (int)wrt[i], entry, np);
      goto done;
    }
  if (np == 0) {
    rc = sg_error_set_at(err, SG_INVALID_ARGUMENT, fname, def->line, def->col,
                         "grad: '%s' has no parameters to differentiate with respect to", entry);
    goto done;
  }
  /* a wrapper name no def uses */
  char wname[300];
  for (int k = 0;; k++) {
    if (k) snprintf(wname, sizeof wname, "grad_%.200s_%d", entry, k);
    else snprintf(wname, sizeof wname, "grad_%.200s", entry);
    bool used = false;
    for (int i = 0; i < nforms; i++)
      if (forms[i]->kind == SX_LIST && forms[i]->u.list.n > 1 &&
          forms[i]->u.list.items[1]->kind == SX_SYM &&
          !strcmp(forms[i]->u.list.items[1]->u.sym, wname))
        used = true;
    if (!used) break;
  }
  sg_buf_puts(&b, src);
  sg_buf_printf(&b, "\n(def %s (", wname);
  for (int i = 0; i < np; i++) sg_buf_printf(&b, "%sa%d", i ? " " : "", i);
  sg_buf_printf(&b, ") ((grad %s", entry);
  if (nwrt == 0)
    for (int i = 0; i < np; i++) sg_buf_printf(&b, " %d", i);
  for (size_t i = 0; i < nwrt; i++) sg_buf_printf(&b, " %d", (int)wrt[i]);
  sg_buf_puts(&b, ")");
  for (int i = 0; i < np; i++) sg_buf_printf(&b, " a%d", i);
  sg_buf_puts(&b, "))\n");
  gr_stage_options so = {.no_optimize = no_optimize, .entry = wname};
  rc = gr_stage(b.data, b.len, fname, &so, out, err);
done:
  sg_buf_free(&b);
  sg_intern_free(&strings);
  sg_arena_free(&arena);
  free(src);
  return rc;
}
