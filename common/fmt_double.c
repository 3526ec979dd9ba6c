// SPDX-License-Identifier: Apache-2.0
/*
 * fmt_double.c — the one shortest-float printer (sg.h): finds the fewest significant
 * digits that read back as the same double, then spells them as Python's repr(float)
 * (convert/'s dumps of float literals) or as C's %g with a ".0" kept (graph/'s
 * S-expressions, JSON values and dumps).
 *
 * The search: round-tripping is monotone in the precision (more digits are never
 * further from d), so a binary search over 1..17 digits finds the same precision as
 * trying 1, 2, ... 17, in about four snprintf/strtod pairs instead of up to seventeen
 * (a float32 value widened to double usually needs 17).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sg.h"

int sg_double_digits(double d, char digits[24], int *exp10, bool *neg) {
  char tmp[40];
  int lo = 1, hi = 17; /* 17 significant digits always round-trip a double */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    snprintf(tmp, sizeof tmp, "%.*e", mid - 1, d);
    if (strtod(tmp, NULL) == d) hi = mid;
    else lo = mid + 1;
  }
  snprintf(tmp, sizeof tmp, "%.*e", lo - 1, d); /* [-]d[.ddd]e[+-]XX */
  const char *c = tmp;
  *neg = *c == '-';
  if (*neg) c++;
  int n = 0;
  for (; *c && *c != 'e'; c++)
    if (*c != '.') digits[n++] = *c;
  *exp10 = atoi(c + 1);
  while (n > 1 && digits[n - 1] == '0') n--;
  digits[n] = 0;
  return n;
}

/* digits[0..n) with the decimal point after `before` digits (before <= 0: "0.00ddd";
 * before >= n: zeros padded, no point). */
static void put_fixed(sg_buf *b, const char *digits, int n, int before) {
  if (before <= 0) {
    sg_buf_puts(b, "0.");
    for (int i = 0; i < -before; i++) sg_buf_putc(b, '0');
    sg_buf_append(b, digits, (size_t)n);
  } else if (n <= before) {
    sg_buf_append(b, digits, (size_t)n);
    for (int i = n; i < before; i++) sg_buf_putc(b, '0');
  } else {
    sg_buf_append(b, digits, (size_t)before);
    sg_buf_putc(b, '.');
    sg_buf_append(b, digits + before, (size_t)(n - before));
  }
}

static void put_exp(sg_buf *b, const char *digits, int n, int exp10) {
  sg_buf_putc(b, digits[0]);
  if (n > 1) {
    sg_buf_putc(b, '.');
    sg_buf_append(b, digits + 1, (size_t)n - 1);
  }
  sg_buf_printf(b, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
}

static bool special(sg_buf *b, double d) {
  if (isnan(d)) sg_buf_puts(b, "nan");
  else if (isinf(d)) sg_buf_puts(b, d < 0 ? "-inf" : "inf");
  else return false;
  return true;
}

void sg_buf_put_double_python(sg_buf *b, double d, bool add_dot0) {
  if (special(b, d)) return;
  char digits[24];
  int exp10;
  bool neg;
  int n = sg_double_digits(d, digits, &exp10, &neg);
  if (neg) sg_buf_putc(b, '-');
  if (exp10 < -4 || exp10 >= 16) { /* CPython's float_repr_style 'r' */
    put_exp(b, digits, n, exp10);
    return;
  }
  put_fixed(b, digits, n, exp10 + 1);
  if (add_dot0 && n <= exp10 + 1) sg_buf_puts(b, ".0");
}

void sg_buf_put_double_g(sg_buf *b, double d) {
  if (special(b, d)) return;
  char digits[24];
  int exp10;
  bool neg;
  int n = sg_double_digits(d, digits, &exp10, &neg);
  if (neg) sg_buf_putc(b, '-');
  if (exp10 < -4 || exp10 >= n) { /* %g at precision n */
    put_exp(b, digits, n, exp10);
    return;
  }
  put_fixed(b, digits, n, exp10 + 1);
  if (n <= exp10 + 1) sg_buf_puts(b, ".0"); /* an integral value keeps a float's '.0' */
}
