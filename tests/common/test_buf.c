// SPDX-License-Identifier: Apache-2.0
/* test_buf.c — sg_buf: appends, printf growth, JSON escaping, detach. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sg.h"

static void appends_keep_nul(void **state) {
  sg_buf b = SG_BUF_INIT;
  sg_buf_puts(&b, "abc");
  sg_buf_putc(&b, 'd');
  sg_buf_append(&b, "ef\0gh", 5);
  assert_int_equal(b.len, 9);
  assert_memory_equal(b.data, "abcdef\0gh", 9);
  assert_int_equal(b.data[9], '\0');
  sg_buf_clear(&b);
  assert_int_equal(b.len, 0);
  assert_string_equal(b.data, "");
  sg_buf_free(&b);
}

static void printf_grows(void **state) {
  sg_buf b = SG_BUF_INIT;
  for (int i = 0; i < 1000; i++) sg_buf_printf(&b, "%d,", i);
  char *expect = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&expect, &n);
  for (int i = 0; i < 1000; i++) fprintf(f, "%d,", i);
  fclose(f);
  assert_string_equal(b.data, expect);
  free(expect);
  /* one long argument, longer than the first reservation */
  char big[5000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  sg_buf_clear(&b);
  sg_buf_printf(&b, "<%s>", big);
  assert_int_equal(b.len, sizeof big + 1);
  sg_buf_free(&b);
}

static void json_escaping(void **state) {
  sg_buf b = SG_BUF_INIT;
  const char s[] = "a\"b\\c\n\t\x01\x1f" "é";
  sg_buf_put_json_string(&b, s, sizeof s - 1);
  assert_string_equal(b.data, "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f" "é\"");
  sg_buf_free(&b);
}

static void detach_empty_gives_string(void **state) {
  sg_buf b = SG_BUF_INIT;
  size_t len = 99;
  char *s = sg_buf_detach(&b, &len);
  assert_non_null(s);
  assert_string_equal(s, "");
  assert_int_equal(len, 0);
  free(s);
  assert_null(b.data);
}

static void read_file_whole_and_missing(void **state) {
  (void)state;
  char path[] = "/tmp/sg_read_file_XXXXXX";
  FILE *f = fdopen(mkstemp(path), "wb");
  assert_non_null(f);
  for (int i = 0; i < 100000; i++) fputc('a' + i % 26, f); /* more than one chunk */
  fclose(f);
  size_t len = 0;
  char *s = sg_read_file(path, &len);
  assert_non_null(s);
  assert_int_equal(len, 100000);
  assert_int_equal(s[25], 'z');
  assert_int_equal(s[len], '\0');
  free(s);
  remove(path);
  errno = 0;
  assert_null(sg_read_file(path, &len));
  assert_int_equal(errno, ENOENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(appends_keep_nul),
      cmocka_unit_test(printf_grows),
      cmocka_unit_test(json_escaping),
      cmocka_unit_test(detach_empty_gives_string),
      cmocka_unit_test(read_file_whole_and_missing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
