// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_parser.c — libFuzzer target for the tokenizer, parser, dumper and unparser.
 *
 * Property: any input either fails with an error (no crash, no leak), or parses; a
 * parsed input unparses to source that parses again to the same AST (the dump
 * without attributes is equal). Built with clang -fsanitize=fuzzer,address,undefined
 * by tests/convert/CMakeLists.txt when clang is available; ctest runs it for a
 * bounded time on the corpus in fuzz_corpus/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "py.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sg_buf d1 = SG_BUF_INIT, j = SG_BUF_INIT, u = SG_BUF_INIT, d2 = SG_BUF_INIT;
  sg_error err = SG_ERROR_INIT;
  py_ctx ctx;
  py_ctx_init(&ctx);
  py_mod *m = py_parse(&ctx, (const char *)data, size, "fuzz.py", &err);
  if (m) {
    py_dump_module(m, false, &d1);
    py_dump_module(m, true, &j);
    py_json_module(m, true, &j);
    py_unparse_module(m, &u);
    sg_error err2 = SG_ERROR_INIT;
    if (py_parse_dump(u.data ? u.data : "", u.len, "unparsed.py", false, &d2, &err2) != SG_OK) {
      fprintf(stderr, "unparse output does not parse: %s (line %d col %d)\n--- unparsed:\n%s\n",
              err2.message, err2.line, err2.col, u.data ? u.data : "");
      abort();
    }
    if (d1.len != d2.len || memcmp(d1.data, d2.data, d1.len) != 0) {
      fprintf(stderr, "round trip changed the AST\n--- before:\n%s\n--- after:\n%s\n", d1.data,
              d2.data);
      abort();
    }
    sg_error_clear(&err2);
  } else if (!err.message) {
    abort(); /* a failure must always say why */
  }
  sg_error_clear(&err);
  py_ctx_free(&ctx);
  sg_buf_free(&d1);
  sg_buf_free(&j);
  sg_buf_free(&u);
  sg_buf_free(&d2);
  return 0;
}
