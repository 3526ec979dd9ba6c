// SPDX-License-Identifier: Apache-2.0
/*
 * error.c — status-code and reason names and the sg_error object: a code, a message,
 * an optional source location (formatted the way compilers print diagnostics) and a
 * reason clients map to exception types.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sg.h"

const char *sg_code_name(sg_code code) {
  static const char *const names[] = {
      "OK",        "CANCELLED",          "UNKNOWN",       "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED", "NOT_FOUND",  "ALREADY_EXISTS", "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
      "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
  };
  if ((unsigned)code < sizeof names / sizeof names[0]) return names[code];
  return "UNKNOWN_CODE";
}

static const char *const reason_names[SG_REASON_COUNT] = {
    "none", "index_out_of_bounds", "shape_mismatch", "assertion", "unsupported",
    "speculation",
};

const char *sg_reason_name(sg_reason reason) {
  return (unsigned)reason < SG_REASON_COUNT ? reason_names[reason] : reason_names[SG_REASON_NONE];
}

bool sg_reason_parse(const char *name, sg_reason *out) {
  for (int r = 0; name && r < SG_REASON_COUNT; r++)
    if (!strcmp(name, reason_names[r])) {
      *out = (sg_reason)r;
      return true;
    }
  return false;
}

void sg_error_clear(sg_error *err) {
  if (!err) return;
  free(err->message);
  free(err->file);
  *err = (sg_error)SG_ERROR_INIT;
}

sg_code sg_error_setv(sg_error *err, sg_code code, const char *fmt, va_list ap) {
  if (!err) return code;
  sg_error_clear(err);
  sg_buf b = SG_BUF_INIT;
  sg_buf_vprintf(&b, fmt, ap);
  err->code = code;
  err->message = sg_buf_detach(&b, NULL);
  return code;
}

sg_code sg_error_set(sg_error *err, sg_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sg_error_setv(err, code, fmt, ap);
  va_end(ap);
  return code;
}

sg_code sg_error_set_reason(sg_error *err, sg_reason reason, sg_code code, const char *fmt, ...) {
  if (!err) return code;
  va_list ap;
  va_start(ap, fmt);
  sg_error_setv(err, code, fmt, ap);
  va_end(ap);
  err->reason = reason;
  return code;
}

sg_code sg_error_set_at(sg_error *err, sg_code code, const char *file, int line, int col,
                        const char *fmt, ...) {
  if (!err) return code;
  va_list ap;
  va_start(ap, fmt);
  sg_error_setv(err, code, fmt, ap);
  va_end(ap);
  err->file = file ? sg_xstrdup(file) : NULL;
  err->line = line;
  err->col = col;
  return code;
}

sg_code sg_error_prefix(sg_error *err, sg_code code, const char *fmt, ...) {
  if (!err) return code;
  sg_buf b = SG_BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  sg_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  sg_buf_printf(&b, ": %s", err->message ? err->message : sg_code_name(err->code));
  free(err->message);
  err->message = sg_buf_detach(&b, NULL);
  err->code = code;
  return code;
}

void sg_error_move(sg_error *dst, sg_error *src) {
  if (dst == src) return;
  sg_error_clear(dst);
  *dst = *src;
  *src = (sg_error)SG_ERROR_INIT;
}

char *sg_error_format(const sg_error *err) {
  sg_buf b = SG_BUF_INIT;
  if (err->file) sg_buf_printf(&b, "%s:", err->file);
  if (err->line > 0) {
    sg_buf_printf(&b, "%d:", err->line);
    if (err->col > 0) sg_buf_printf(&b, "%d:", err->col);
  }
  if (b.len) sg_buf_putc(&b, ' ');
  sg_buf_printf(&b, "error: %s", err->message ? err->message : sg_code_name(err->code));
  return sg_buf_detach(&b, NULL);
}
