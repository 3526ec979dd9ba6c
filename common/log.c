// SPDX-License-Identifier: Apache-2.0
/*
 * log.c — leveled logging to stderr (as text, or one JSON object per line) and clocks.
 * Each line is written with a single fwrite under the stream lock, so lines from
 * different threads never interleave.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sg.h"

static _Atomic int g_level = SG_LOG_INFO;
static _Atomic int g_format = SG_LOG_TEXT;

void sg_log_set_level(sg_log_level level) { atomic_store(&g_level, (int)level); }
sg_log_level sg_log_get_level(void) { return (sg_log_level)atomic_load(&g_level); }

bool sg_log_parse_level(const char *name, sg_log_level *out) {
  static const struct { const char *name; sg_log_level level; } table[] = {
      {"debug", SG_LOG_DEBUG}, {"info", SG_LOG_INFO},   {"warn", SG_LOG_WARN},
      {"warning", SG_LOG_WARN}, {"error", SG_LOG_ERROR}, {"off", SG_LOG_OFF},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (strcasecmp(name, table[i].name) == 0) {
      *out = table[i].level;
      return true;
    }
  }
  return false;
}

void sg_log_set_format(sg_log_format format) { atomic_store(&g_format, (int)format); }

bool sg_log_parse_format(const char *name, sg_log_format *out) {
  if (!strcmp(name, "text")) *out = SG_LOG_TEXT;
  else if (!strcmp(name, "json")) *out = SG_LOG_JSON;
  else return false;
  return true;
}

/* s as a JSON string: quotes, backslashes and control characters escaped; other bytes
 * as they are (the daemon's messages are UTF-8). */
static void json_string(sg_buf *b, const char *s) {
  sg_buf_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      sg_buf_putc(b, '\\');
      sg_buf_putc(b, (char)*p);
    } else if (*p == '\n') {
      sg_buf_puts(b, "\\n");
    } else if (*p == '\t') {
      sg_buf_puts(b, "\\t");
    } else if (*p < 0x20 || *p == 0x7f) {
      sg_buf_printf(b, "\\u%04x", *p);
    } else {
      sg_buf_putc(b, (char)*p);
    }
  }
  sg_buf_putc(b, '"');
}

static void vlog(sg_log_level level, uint64_t req_id, const sg_log_request *r, const char *fmt,
                 va_list ap) {
  if ((int)level < atomic_load(&g_level)) return;
  static const char *const names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
  static const char *const json_names[] = {"debug", "info", "warn", "error"};
  int li = level < SG_LOG_OFF ? (int)level : SG_LOG_ERROR;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char stamp[64];
  strftime(stamp, 32, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(stamp + strlen(stamp), 32, ".%03ldZ", ts.tv_nsec / 1000000L);

  sg_buf msg = SG_BUF_INIT;
  sg_buf_vprintf(&msg, fmt, ap);
  sg_buf b = SG_BUF_INIT;
  if (atomic_load(&g_format) == SG_LOG_JSON) {
    sg_buf_printf(&b, "{\"time\":\"%s\",\"level\":\"%s\"", stamp, json_names[li]);
    if (req_id) sg_buf_printf(&b, ",\"req\":%llu", (unsigned long long)req_id);
    if (r && r->method) sg_buf_puts(&b, ",\"method\":"), json_string(&b, r->method);
    if (r && r->status) sg_buf_puts(&b, ",\"status\":"), json_string(&b, r->status);
    if (r && r->session) sg_buf_puts(&b, ",\"session\":"), json_string(&b, r->session);
    if (r && r->method) sg_buf_printf(&b, ",\"duration_ms\":%.3f", r->duration_ns / 1e6);
    sg_buf_puts(&b, ",\"message\":");
    json_string(&b, msg.data ? msg.data : "");
    sg_buf_putc(&b, '}');
  } else {
    sg_buf_printf(&b, "%s %-5s ", stamp, names[li]);
    if (req_id) sg_buf_printf(&b, "[req %llu] ", (unsigned long long)req_id);
    if (r && r->method)
      sg_buf_printf(&b, "%s %s %.3f ms%s", r->method, r->status ? r->status : "",
                    r->duration_ns / 1e6, msg.len ? ": " : "");
    if (msg.len) sg_buf_puts(&b, msg.data);
  }
  sg_buf_putc(&b, '\n');
  flockfile(stderr);
  fwrite(b.data, 1, b.len, stderr);
  fflush(stderr);
  funlockfile(stderr);
  sg_buf_free(&b);
  sg_buf_free(&msg);
}

void sg_log(sg_log_level level, uint64_t req_id, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(level, req_id, NULL, fmt, ap);
  va_end(ap);
}

void sg_log_req(sg_log_level level, uint64_t req_id, const sg_log_request *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(level, req_id, r, fmt, ap);
  va_end(ap);
}

uint64_t sg_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t sg_wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000ULL + (uint64_t)ts.tv_nsec / 1000000ULL;
}
