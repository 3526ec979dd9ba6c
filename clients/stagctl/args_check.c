// SPDX-License-Identifier: Apache-2.0
/*
 * args_check.c — stagctl's own look at the numbers of a JSON argument (`--args`)
 * before it leaves: a JSON number that no float64 holds (1e400) would otherwise
 * become infinity, and an integer beyond int64 would be clamped — silently wrong
 * values. Both are errors located at the number (line and column in the JSON text);
 * infinities have a documented spelling, the strings "Infinity" and "-Infinity"
 * (docs/api.md "JSON"). Numbers that round to zero (1e-400) are 0.0, as in Python.
 * Everything else about the JSON is the daemon's to check.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

sg_code ctl_check_json_numbers(const char *json, const char *what, sg_error *err, const char **hint) {
  int line = 1, col = 1;
  const char *p = json;
  while (*p) {
    if (*p == '"') { /* a string: skip it, escapes included */
      for (p++, col++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1]) p++, col++;
        if (((unsigned char)*p & 0xc0) != 0x80) col++;
      }
      if (*p) p++, col++;
      continue;
    }
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
      const char *start = p;
      bool integer = true;
      if (*p == '-') p++;
      while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' ||
             ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E'))) {
        if (*p == '.' || *p == 'e' || *p == 'E') integer = false;
        p++;
      }
      int len = (int)(p - start);
      errno = 0;
      if (integer) {
        (void)strtoll(start, NULL, 10);
        if (errno == ERANGE) {
          *hint = "a JSON integer is an int64; write it with a fraction or an exponent (1e20) for a float64";
          return sg_error_set_at(err, SG_INVALID_ARGUMENT, what, line, col,
                                 "the integer %.*s does not fit an int64 (-9223372036854775808 to "
                                 "9223372036854775807)", len, start);
        }
      } else {
        double v = strtod(start, NULL);
        if (errno == ERANGE && isinf(v)) {
          *hint = "write the string \"Infinity\" or \"-Infinity\" for an infinite value";
          return sg_error_set_at(err, SG_INVALID_ARGUMENT, what, line, col,
                                 "the number %.*s is out of float64's range (largest magnitude "
                                 "1.7976931348623157e+308)", len, start);
        }
      }
      col += len;
      continue;
    }
    if (*p == '\n') line++, col = 1;
    else if (((unsigned char)*p & 0xc0) != 0x80) col++;
    p++;
  }
  return SG_OK;
}
