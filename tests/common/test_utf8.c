// SPDX-License-Identifier: Apache-2.0
/*
 * test_utf8.c — sg_utf8_valid (common/utf8.c): strict UTF-8 as Python decodes it, and
 * the offset of the first bad sequence (the position D8 errors name).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sg.h"

static void check(const char *s, size_t n, bool ok, size_t at) {
  size_t bad = 12345;
  assert_int_equal(sg_utf8_valid(s, n, &bad), ok);
  assert_int_equal(bad, at);
}

static void valid_text(void **state) {
  (void)state;
  check("", 0, true, 0);
  check("ascii", 5, true, 5);
  check("h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80", 15, true, 15); /* é ✓ 😀 */
  check("a\0b", 3, true, 3);                                           /* U+0000 is UTF-8 */
  check("\xef\xbf\xbf\xf4\x8f\xbf\xbf", 7, true, 7);                   /* U+FFFF, U+10FFFF */
  assert_true(sg_utf8_valid("x", 1, NULL));
}

static void invalid_text(void **state) {
  (void)state;
  check("a\xff", 2, false, 1);
  check("ab\xc3", 3, false, 2);              /* truncated */
  check("\xc0\xaf", 2, false, 0);            /* overlong '/' */
  check("\xe0\x80\xaf", 3, false, 0);        /* overlong, 3 bytes */
  check("\xf0\x80\x80\xaf", 4, false, 0);    /* overlong, 4 bytes */
  check("ok\xed\xa0\x80", 5, false, 2);      /* a surrogate */
  check("\xf4\x90\x80\x80", 4, false, 0);    /* above U+10FFFF */
  check("\xe2\x9c", 2, false, 0);            /* truncated 3-byte */
  check("\xe2\x28\xa1", 3, false, 0);        /* bad continuation */
  check("\x80", 1, false, 0);                /* lone continuation */
  check("\xf5\x80\x80\x80", 4, false, 0);
  assert_false(sg_utf8_valid("\xff", 1, NULL));
}

/* ASCII is checked eight bytes at a time: a bad byte, or a valid multi-byte character,
 * at every offset of runs of every length around that word size. */
static void long_ascii_runs(void **state) {
  (void)state;
  char buf[48];
  for (size_t n = 1; n <= 40; n++)
    for (size_t k = 0; k < n; k++) {
      memset(buf, 'a', n);
      buf[k] = (char)0xff;
      check(buf, n, false, k);
      buf[k] = (char)0x80; /* a lone continuation byte */
      check(buf, n, false, k);
      if (k + 2 <= n) {
        memcpy(buf + k, "\xc3\xa9", 2); /* é */
        check(buf, n, true, n);
        buf[k + 1] = 'a'; /* cut short */
        check(buf, n, false, k);
      }
    }
  memset(buf, 'a', sizeof buf);
  check(buf, sizeof buf, true, sizeof buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(valid_text),
      cmocka_unit_test(invalid_text),
      cmocka_unit_test(long_ascii_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
