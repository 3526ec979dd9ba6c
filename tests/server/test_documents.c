// SPDX-License-Identifier: Apache-2.0
/* test_documents.c — the LSP document store: open/close, full and incremental
 * changes, UTF-16 and UTF-8 positions (astral characters, CRLF), clamping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "documents.h"

static sg_code change(sv_doc *doc, const char *json, bool utf16) {
  cJSON *j = cJSON_Parse(json);
  assert_non_null(j);
  sg_error err = SG_ERROR_INIT;
  sg_code rc = sv_doc_apply_change(doc, j, utf16, &err);
  cJSON_Delete(j);
  sg_error_clear(&err);
  return rc;
}

static void open_get_close(void **state) {
  sv_docs d;
  sv_docs_init(&d);
  char uri[64];
  for (int i = 0; i < 100; i++) {
    snprintf(uri, sizeof uri, "file:///f%d.py", i);
    sv_docs_open(&d, uri, "python", i, "x = 1\n", 6);
  }
  assert_int_equal(d.count, 100);
  sv_doc *doc = sv_docs_get(&d, "file:///f42.py");
  assert_non_null(doc);
  assert_int_equal(doc->version, 42);
  assert_string_equal(doc->language_id, "python");
  assert_true(sv_docs_close(&d, "file:///f42.py"));
  assert_null(sv_docs_get(&d, "file:///f42.py"));
  assert_false(sv_docs_close(&d, "file:///f42.py"));
  assert_non_null(sv_docs_get(&d, "file:///f43.py"));
  /* reopening replaces */
  sv_docs_open(&d, "file:///f1.py", "python", 9, "y", 1);
  assert_string_equal(sv_docs_get(&d, "file:///f1.py")->text.data, "y");
  assert_int_equal(d.count, 99);
  sv_docs_free(&d);
}

static void offsets_utf16_and_utf8(void **state) {
  /* "a😀b" — the emoji is 4 UTF-8 bytes and 2 UTF-16 units; "é" is 2 bytes, 1 unit */
  const char *t = "a\xF0\x9F\x98\x80" "b\r\né!\nlast";
  size_t n = strlen(t);
  assert_int_equal(sv_doc_offset(t, n, 0, 0, true), 0);
  assert_int_equal(sv_doc_offset(t, n, 0, 1, true), 1);
  assert_int_equal(sv_doc_offset(t, n, 0, 3, true), 5); /* after the emoji */
  assert_int_equal(sv_doc_offset(t, n, 0, 2, true), 1); /* inside the pair: before it */
  assert_int_equal(sv_doc_offset(t, n, 0, 4, true), 6); /* before \r\n */
  assert_int_equal(sv_doc_offset(t, n, 0, 99, true), 6); /* clamped to the line end */
  assert_int_equal(sv_doc_offset(t, n, 1, 1, true), 10); /* after é */
  assert_int_equal(sv_doc_offset(t, n, 1, 2, false), 10); /* same in UTF-8 bytes */
  assert_int_equal(sv_doc_offset(t, n, 0, 5, false), 5);
  assert_int_equal(sv_doc_offset(t, n, 2, 2, true), 14);
  assert_int_equal(sv_doc_offset(t, n, 7, 0, true), n); /* past the last line */
}

static void incremental_and_full_changes(void **state) {
  sv_docs d;
  sv_docs_init(&d);
  sv_doc *doc = sv_docs_open(&d, "u", "python", 1, "def f():\n    return 1\n", 22);
  /* replace "1" with "x + 1" */
  assert_int_equal(change(doc, "{\"range\":{\"start\":{\"line\":1,\"character\":11},\"end\":{\"line\":1,\"character\":12}},"
                               "\"text\":\"x + 1\"}", true),
                   SG_OK);
  assert_string_equal(doc->text.data, "def f():\n    return x + 1\n");
  /* insert a line at the top, multi-line deletion */
  assert_int_equal(change(doc, "{\"range\":{\"start\":{\"line\":0,\"character\":0},\"end\":{\"line\":0,\"character\":0}},"
                               "\"text\":\"import os\\n\"}", true),
                   SG_OK);
  assert_int_equal(change(doc, "{\"range\":{\"start\":{\"line\":0,\"character\":9},\"end\":{\"line\":2,\"character\":4}},"
                               "\"text\":\"\"}", true),
                   SG_OK);
  assert_string_equal(doc->text.data, "import osreturn x + 1\n");
  /* full replacement */
  assert_int_equal(change(doc, "{\"text\":\"pass\\n\"}", true), SG_OK);
  assert_string_equal(doc->text.data, "pass\n");
  /* errors */
  assert_int_equal(change(doc, "{\"range\":{\"start\":{\"line\":0,\"character\":3},\"end\":{\"line\":0,\"character\":1}},"
                               "\"text\":\"\"}", true),
                   SG_INVALID_ARGUMENT);
  assert_int_equal(change(doc, "{\"range\":{}, \"text\":\"\"}", true), SG_INVALID_ARGUMENT);
  assert_int_equal(change(doc, "{\"range\":null}", true), SG_INVALID_ARGUMENT);
  assert_string_equal(doc->text.data, "pass\n"); /* unchanged by the failures */
  sv_docs_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(open_get_close),
      cmocka_unit_test(offsets_utf16_and_utf8),
      cmocka_unit_test(incremental_and_full_changes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
