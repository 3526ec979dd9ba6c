// SPDX-License-Identifier: Apache-2.0
/*
 * ad_test_util.h — helpers shared by the AD tests (test_ad*.c): the numbers of a JSON
 * result, and running a program optimized and not (both must agree).
 */
#ifndef STAGD_TESTS_GRAPH_AD_TEST_UTIL_H
#define STAGD_TESTS_GRAPH_AD_TEST_UTIL_H

#include <math.h>

#include "graph_test_util.h"

/* The numbers of a JSON result: scalars, or the "data" of (0-d) tensors, in order. */
static inline int nums(const char *json, double *out, int max) {
  int n = 0;
  bool tensors = strstr(json, "\"data\":[") != NULL;
  const char *p = json;
  while (*p && n < max) {
    if (tensors) {
      p = strstr(p, "\"data\":[");
      if (!p) break;
      p += 8;
    }
    while (*p && *p != ']' && n < max) {
      if ((*p >= '0' && *p <= '9') || *p == '-') {
        char *end;
        out[n++] = strtod(p, &end);
        p = end;
      } else if (!tensors && *p == '"') {
        p = strchr(p + 1, '"');
        p = p ? p + 1 : "";
      } else p++;
    }
    if (!tensors) break;
  }
  return n;
}

static inline double run_num(const char *src, const char *args) {
  char *r = run_ok(src, args, false);
  double v = 0, v2 = 0;
  assert_int_equal(nums(r, &v, 1), 1);
  char *r2 = run_ok(src, args, true);
  assert_int_equal(nums(r2, &v2, 1), 1);
  assert_true(fabs(v2 - v) <= 1e-12 * (1 + fabs(v)));
  free(r);
  free(r2);
  return v;
}

#endif /* STAGD_TESTS_GRAPH_AD_TEST_UTIL_H */
