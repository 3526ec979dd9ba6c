// SPDX-License-Identifier: Apache-2.0
/*
 * test_convert_tool.c — a command-line driver of py_convert for tests and the
 * semantic-preservation harnesses: `test_convert_tool FILE [autograph|snek] [FUNCTION]`
 * prints the converted module on stdout and the diagnostics on stderr
 * (FILE:LINE:COL: severity: message [code]); exit 1 on a syntax error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE [autograph|snek] [FUNCTION]\n", argv[0]);
    return 2;
  }
  size_t len;
  char *src = sg_read_file(argv[1], &len);
  if (!src) {
    perror(argv[1]);
    return 2;
  }
  py_conv_style style = argc > 2 && !strcmp(argv[2], "snek") ? PY_STYLE_SNEK : PY_STYLE_AUTOGRAPH;
  py_conv_result r;
  sg_error err = SG_ERROR_INIT;
  int rc = 0;
  if (py_convert(src, len, argv[1], style, argc > 3 ? argv[3] : NULL, &r, &err) != SG_OK) {
    fprintf(stderr, "%s:%d:%d: error: %s\n", err.file ? err.file : argv[1], err.line, err.col, err.message);
    rc = 1;
  } else {
    fwrite(r.code.data ? r.code.data : "", 1, r.code.len, stdout);
    for (int i = 0; i < r.ndiags; i++)
      fprintf(stderr, "%s:%d:%d: %s: %s [%s]\n", argv[1], r.diags[i].line, r.diags[i].col,
              r.diags[i].severity == PY_DIAG_ERROR ? "error" : "warning", r.diags[i].message, r.diags[i].code);
  }
  py_conv_result_free(&r);
  sg_error_clear(&err);
  free(src);
  return rc;
}
