// SPDX-License-Identifier: Apache-2.0
/*
 * test_fmt_double.c — the one shortest-float printer (common/fmt_double.c) against the
 * two printers it replaced, kept here as references: graph/'s (the plain search over
 * 1..17 digits with %g, then ".0") and convert/'s Python repr (the plain search with %e,
 * then CPython's 'r' layout). Random doubles, float32 values, integers, decimals and
 * subnormals, and spellings checked against CPython 3.12's repr by hand.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sg.h"

static void reference_g(char *out, double f) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(out, 40, "%.*g", prec, f);
    if (strtod(out, NULL) == f) break;
  }
  if (!strpbrk(out, ".eEn")) strcat(out, ".0");
}

static void reference_python(char *out, double d) {
  char buf[64], digits[32];
  int prec, nd = 0;
  for (prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
    if (strtod(buf, NULL) == d) break;
  }
  const char *c = buf;
  char *o = out;
  if (*c == '-') *o++ = '-', c++;
  for (; *c && *c != 'e'; c++)
    if (*c != '.') digits[nd++] = *c;
  int e = atoi(c + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  if (e >= -4 && e < 16) {
    if (e < 0) {
      o += sprintf(o, "0.");
      for (int i = 0; i < -e - 1; i++) *o++ = '0';
      memcpy(o, digits, (size_t)nd), o += nd;
    } else if (nd <= e + 1) {
      memcpy(o, digits, (size_t)nd), o += nd;
      for (int i = nd; i < e + 1; i++) *o++ = '0';
      o += sprintf(o, ".0");
    } else {
      memcpy(o, digits, (size_t)e + 1), o += e + 1;
      *o++ = '.';
      memcpy(o, digits + e + 1, (size_t)(nd - e - 1)), o += nd - e - 1;
    }
  } else {
    *o++ = digits[0];
    if (nd > 1) *o++ = '.', memcpy(o, digits + 1, (size_t)nd - 1), o += nd - 1;
    o += sprintf(o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
  }
  *o = 0;
}

static double draw(uint64_t *r, int i) {
  *r ^= *r << 13, *r ^= *r >> 7, *r ^= *r << 17;
  double f;
  float x;
  uint32_t u = (uint32_t)*r;
  switch (i % 6) {
  case 0: memcpy(&f, r, sizeof f); break;
  case 1: memcpy(&x, &u, sizeof x); f = x; break;
  case 2: f = (double)(int64_t)(*r % 2000001) - 1000000; break;
  case 3: f = (double)(*r % 100000) / 1000.0; break;
  case 4: f = ldexp((double)(*r % 1000), -(int)(*r % 1100)); break;
  default: f = pow(10.0, (double)(int)(*r % 40) - 20) * (double)(*r % 7 + 1); break;
  }
  return f;
}

static void matches_both_references(void **state) {
  (void)state;
  uint64_t r = 0x9E3779B97F4A7C15ull;
  sg_buf b = SG_BUF_INIT;
  char want[64];
  for (int i = 0; i < 60000; i++) {
    double f = draw(&r, i);
    if (isnan(f) || isinf(f)) continue;
    sg_buf_clear(&b);
    sg_buf_put_double_g(&b, f);
    reference_g(want, f);
    assert_string_equal(b.data, want);
    assert_true(strtod(b.data, NULL) == f);
    sg_buf_clear(&b);
    sg_buf_put_double_python(&b, f, true);
    reference_python(want, f);
    assert_string_equal(b.data, want);
    assert_true(strtod(b.data, NULL) == f);
  }
  sg_buf_free(&b);
}

static void spellings(void **state) {
  (void)state;
  static const struct {
    double d;
    const char *python, *g;
  } cases[] = {
      {0.0, "0.0", "0.0"},
      {-0.0, "-0.0", "-0.0"},
      {100.0, "100.0", "1e+02"},
      {1e16, "1e+16", "1e+16"},
      {1e15, "1000000000000000.0", "1e+15"},
      {9999999999999998.0, "9999999999999998.0", "9999999999999998.0"},
      {1e-5, "1e-05", "1e-05"},
      {0.0001, "0.0001", "0.0001"},
      {2.5e-5, "2.5e-05", "2.5e-05"},
      {123456789012345678.0, "1.2345678901234568e+17", "1.2345678901234568e+17"},
      {0.1, "0.1", "0.1"},
      {1.0 / 3, "0.3333333333333333", "0.3333333333333333"},
      {5e-324, "5e-324", "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308", "1.7976931348623157e+308"},
      {1e23, "1e+23", "1e+23"},
      {11800.0, "11800.0", "1.18e+04"},
      {12345.678, "12345.678", "12345.678"},
      {INFINITY, "inf", "inf"},
      {-INFINITY, "-inf", "-inf"},
      {NAN, "nan", "nan"},
  };
  sg_buf b = SG_BUF_INIT;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    sg_buf_clear(&b);
    sg_buf_put_double_python(&b, cases[i].d, true);
    assert_string_equal(b.data, cases[i].python);
    sg_buf_clear(&b);
    sg_buf_put_double_g(&b, cases[i].d);
    assert_string_equal(b.data, cases[i].g);
  }
  sg_buf_clear(&b); /* a complex literal's part: 2j, not 2.0j */
  sg_buf_put_double_python(&b, 2.0, false);
  assert_string_equal(b.data, "2");
  char digits[24];
  int e;
  bool neg;
  assert_int_equal(sg_double_digits(-1250.0, digits, &e, &neg), 3);
  assert_string_equal(digits, "125");
  assert_int_equal(e, 3);
  assert_true(neg);
  sg_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(matches_both_references), cmocka_unit_test(spellings)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
