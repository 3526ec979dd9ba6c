// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_convert.c — libFuzzer target for the whole converter, from source text.
 *
 * Property: any input either fails with an error message (a syntax error, located as
 * CPython locates it), or converts in both styles (AutoGraph, Snek) to a module that
 * parses again. The input is plain Python source, so the parser's corpus
 * (fuzz_corpus/) seeds it. Built with clang by tests/convert/CMakeLists.txt; ctest runs
 * it for a bounded time, scripts/fuzz_soak.sh for minutes (docs/daemon.md "Fuzzing").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "py.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void convert_one(const uint8_t *data, size_t size, py_conv_style style) {
  py_conv_result r;
  sg_error err = SG_ERROR_INIT;
  sg_code rc = py_convert((const char *)data, size, "fuzz.py", style, NULL, &r, &err);
  if (rc == SG_OK) {
    py_ctx ctx;
    py_ctx_init(&ctx);
    sg_error e2 = SG_ERROR_INIT;
    if (!py_parse(&ctx, r.code.data ? r.code.data : "", r.code.len, "out.py", &e2)) {
      fprintf(stderr, "converted code does not parse: %s (line %d col %d)\n--- converted:\n%.*s\n", e2.message,
              e2.line, e2.col, (int)r.code.len, r.code.data ? r.code.data : "");
      abort();
    }
    sg_error_clear(&e2);
    py_ctx_free(&ctx);
  } else if (!err.message) {
    /* located as CPython locates it: a NUL byte, for one, has no line there either */
    fprintf(stderr, "a conversion failed without saying why\n");
    abort();
  }
  sg_error_clear(&err);
  py_conv_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  convert_one(data, size, PY_STYLE_AUTOGRAPH);
  convert_one(data, size, PY_STYLE_SNEK);
  return 0;
}
