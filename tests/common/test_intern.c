// SPDX-License-Identifier: Apache-2.0
/* test_intern.c — interning returns one pointer per distinct byte string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sg.h"

static void equal_strings_share_a_pointer(void **state) {
  sg_intern t;
  sg_intern_init(&t);
  char buf[32];
  const char *first[5000];
  for (int i = 0; i < 5000; i++) {
    snprintf(buf, sizeof buf, "name%d", i);
    first[i] = sg_intern_str(&t, buf);
    assert_string_equal(first[i], buf);
  }
  for (int i = 0; i < 5000; i++) {
    snprintf(buf, sizeof buf, "name%d", i);
    assert_ptr_equal(sg_intern_str(&t, buf), first[i]);
  }
  assert_int_equal(t.len, 5000);
  /* find looks up without adding */
  assert_ptr_equal(sg_intern_find(&t, "name42", 6), first[42]);
  assert_null(sg_intern_find(&t, "name5000", 8));
  assert_int_equal(t.len, 5000);
  sg_intern_free(&t);
  sg_intern_init(&t);
  assert_null(sg_intern_find(&t, "x", 1)); /* an empty table */
  sg_intern_free(&t);
}

static void lengths_and_embedded_nuls(void **state) {
  sg_intern t;
  sg_intern_init(&t);
  const char *a = sg_intern_n(&t, "ab\0c", 4);
  const char *b = sg_intern_n(&t, "ab", 2);
  const char *c = sg_intern_n(&t, "ab\0c", 4);
  const char *e = sg_intern_n(&t, "", 0);
  assert_ptr_not_equal(a, b);
  assert_ptr_equal(a, c);
  assert_string_equal(e, "");
  sg_intern_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(equal_strings_share_a_pointer),
      cmocka_unit_test(lengths_and_embedded_nuls),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
