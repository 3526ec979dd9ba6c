// SPDX-License-Identifier: Apache-2.0
/* test_error.c — sg_error: set, locations, formatting, move, reasons; code and reason
 * names; log levels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "sg.h"

static void format_with_and_without_location(void **state) {
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(sg_error_set_at(&e, SG_INVALID_ARGUMENT, "f.py", 3, 7, "bad %s", "thing"),
                   SG_INVALID_ARGUMENT);
  char *s = sg_error_format(&e);
  assert_string_equal(s, "f.py:3:7: error: bad thing");
  free(s);
  sg_error_set(&e, SG_INTERNAL, "plain");
  assert_null(e.file);
  s = sg_error_format(&e);
  assert_string_equal(s, "error: plain");
  free(s);
  sg_error_set_at(&e, SG_INTERNAL, NULL, 2, 0, "line only");
  s = sg_error_format(&e);
  assert_string_equal(s, "2: error: line only");
  free(s);
  sg_error_clear(&e);
  assert_int_equal(e.code, SG_OK);
  assert_null(e.message);
}

static void move_transfers_ownership(void **state) {
  sg_error a = SG_ERROR_INIT, b = SG_ERROR_INIT;
  sg_error_set_at(&a, SG_NOT_FOUND, "x", 1, 1, "missing");
  sg_error_set(&b, SG_INTERNAL, "old");
  sg_error_move(&b, &a);
  assert_int_equal(b.code, SG_NOT_FOUND);
  assert_string_equal(b.message, "missing");
  assert_null(a.message);
  sg_error_clear(&b);
  /* NULL error pointers are allowed and still return the code */
  assert_int_equal(sg_error_set(NULL, SG_ABORTED, "ignored"), SG_ABORTED);
}

static void prefix_keeps_message_and_location(void **state) {
  (void)state;
  sg_error err = SG_ERROR_INIT;
  sg_error_set_at(&err, SG_INVALID_ARGUMENT, "f.sexp", 3, 7, "bad shape");
  assert_int_equal(sg_error_prefix(&err, SG_NOT_FOUND, "op '%s'", "add"), SG_NOT_FOUND);
  assert_int_equal(err.code, SG_NOT_FOUND);
  assert_string_equal(err.message, "op 'add': bad shape");
  assert_string_equal(err.file, "f.sexp");
  assert_int_equal(err.line, 3);
  sg_error_clear(&err);
}

/* A reason is set with the error, kept while the error is prefixed, located or moved,
 * and reset by the next sg_error_set (a new error). */
static void reasons_follow_the_error(void **state) {
  sg_error e = SG_ERROR_INIT, f = SG_ERROR_INIT;
  assert_int_equal(e.reason, SG_REASON_NONE);
  assert_int_equal(sg_error_set_reason(&e, SG_REASON_SHAPE_MISMATCH, SG_INVALID_ARGUMENT, "shapes %s",
                                       "(2) and (3)"),
                   SG_INVALID_ARGUMENT);
  assert_string_equal(e.message, "shapes (2) and (3)");
  assert_int_equal(e.reason, SG_REASON_SHAPE_MISMATCH);
  sg_error_prefix(&e, SG_INVALID_ARGUMENT, "op '%s'", "add");
  assert_int_equal(e.reason, SG_REASON_SHAPE_MISMATCH);
  sg_error_move(&f, &e);
  assert_int_equal(f.reason, SG_REASON_SHAPE_MISMATCH);
  assert_int_equal(e.reason, SG_REASON_NONE);
  sg_error_set(&f, SG_INVALID_ARGUMENT, "another error");
  assert_int_equal(f.reason, SG_REASON_NONE);
  sg_error_set_reason(&f, SG_REASON_ASSERTION, SG_FAILED_PRECONDITION, "assertion failed");
  sg_error_set_at(&f, SG_INVALID_ARGUMENT, "f.py", 1, 2, "located");
  assert_int_equal(f.reason, SG_REASON_NONE);
  sg_error_set_reason(&f, SG_REASON_INDEX_OUT_OF_BOUNDS, SG_INVALID_ARGUMENT, "x");
  sg_error_clear(&f);
  assert_int_equal(f.reason, SG_REASON_NONE);
  assert_int_equal(sg_error_set_reason(NULL, SG_REASON_ASSERTION, SG_ABORTED, "ignored"), SG_ABORTED);
}

/* The names are the wire form (gRPC metadata stagd-reason, LSP data, stagctl). */
static void reason_names_round_trip(void **state) {
  const char *want[] = {"none", "index_out_of_bounds", "shape_mismatch", "assertion", "unsupported",
                        "speculation"};
  assert_int_equal(sizeof want / sizeof *want, SG_REASON_COUNT);
  for (int r = 0; r < SG_REASON_COUNT; r++) {
    assert_string_equal(sg_reason_name((sg_reason)r), want[r]);
    sg_reason got = SG_REASON_COUNT;
    assert_true(sg_reason_parse(want[r], &got));
    assert_int_equal(got, r);
  }
  assert_string_equal(sg_reason_name((sg_reason)99), "none");
  sg_reason keep = SG_REASON_SHAPE_MISMATCH;
  assert_false(sg_reason_parse("Shape_Mismatch", &keep));
  assert_false(sg_reason_parse(NULL, &keep));
  assert_int_equal(keep, SG_REASON_SHAPE_MISMATCH);
}

static void code_names_match_grpc(void **state) {
  assert_string_equal(sg_code_name(SG_OK), "OK");
  assert_string_equal(sg_code_name(SG_UNIMPLEMENTED), "UNIMPLEMENTED");
  assert_int_equal(SG_UNIMPLEMENTED, 12);
  assert_int_equal(SG_UNAVAILABLE, 14);
  assert_string_equal(sg_code_name((sg_code)99), "UNKNOWN_CODE");
}

static void log_levels_parse(void **state) {
  sg_log_level l;
  assert_true(sg_log_parse_level("DEBUG", &l));
  assert_int_equal(l, SG_LOG_DEBUG);
  assert_true(sg_log_parse_level("warning", &l));
  assert_int_equal(l, SG_LOG_WARN);
  assert_false(sg_log_parse_level("loud", &l));
  sg_log_set_level(SG_LOG_ERROR);
  assert_int_equal(sg_log_get_level(), SG_LOG_ERROR);
  sg_log(SG_LOG_INFO, 1, "not printed");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(format_with_and_without_location),
      cmocka_unit_test(move_transfers_ownership),
      cmocka_unit_test(prefix_keeps_message_and_location),
      cmocka_unit_test(reasons_follow_the_error),
      cmocka_unit_test(reason_names_round_trip),
      cmocka_unit_test(code_names_match_grpc),
      cmocka_unit_test(log_levels_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
