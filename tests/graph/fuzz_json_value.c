// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_json_value.c — libFuzzer target for the JSON value reader and writer
 * (graph/ir/json_value.c: Execute's args_json and result_json).
 *
 * Property: any UTF-8 input is either refused with INVALID_ARGUMENT (or
 * RESOURCE_EXHAUSTED for a huge tensor) and a message, or read into values that print
 * as JSON which reads back into values that print identically (exact round trip).
 * Built with clang by tests/graph/CMakeLists.txt; ctest runs it for a bounded time,
 * scripts/fuzz_soak.sh for minutes (docs/daemon.md "Fuzzing").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "[v0,v1,...]" of the values, or false with the error. */
static bool read_print(const char *json, sg_buf *out, sg_error *err) {
  sg_arena a;
  sg_arena_init(&a, 0);
  gr_val *vs = NULL;
  int n = 0;
  sg_code rc = gr_json_args(json, NULL, &a, &vs, &n, err);
  if (rc == SG_OK) {
    sg_buf_putc(out, '[');
    for (int i = 0; i < n; i++) {
      if (i) sg_buf_putc(out, ',');
      gr_value_to_json(out, &vs[i]);
      gv_release(vs[i]);
    }
    sg_buf_putc(out, ']');
    free(vs);
  }
  sg_arena_free(&a);
  return rc == SG_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!sg_utf8_valid((const char *)data, size, NULL)) return 0; /* refused before (D8) */
  char *json = malloc(size + 1);
  memcpy(json, data, size);
  json[size] = '\0';
  sg_buf one = SG_BUF_INIT, two = SG_BUF_INIT;
  sg_error err = SG_ERROR_INIT;
  if (read_print(json, &one, &err)) {
    sg_buf_putc(&one, '\0');
    one.len--;
    sg_error err2 = SG_ERROR_INIT;
    if (!read_print(one.data, &two, &err2)) {
      fprintf(stderr, "printed values do not read back: %s\n--- printed:\n%s\n", err2.message, one.data);
      abort();
    }
    if (one.len != two.len || memcmp(one.data, two.data, one.len)) {
      fprintf(stderr, "round trip changed the values\n--- first:\n%s\n--- second:\n%.*s\n", one.data, (int)two.len,
              two.data);
      abort();
    }
    sg_error_clear(&err2);
  } else if (!err.message || (err.code != SG_INVALID_ARGUMENT && err.code != SG_RESOURCE_EXHAUSTED)) {
    fprintf(stderr, "refused without INVALID_ARGUMENT and a message: %s\n", sg_code_name(err.code));
    abort();
  }
  sg_error_clear(&err);
  sg_buf_free(&one);
  sg_buf_free(&two);
  free(json);
  return 0;
}
