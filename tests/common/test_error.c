/* test_error.c — sg_error: set, locations, formatting, move; code names; log levels. */
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
      cmocka_unit_test(code_names_match_grpc),
      cmocka_unit_test(log_levels_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
