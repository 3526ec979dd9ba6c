/*
 * log.c — leveled logging to stderr and clocks. Each line is written with a single
 * fwrite under the stream lock, so lines from different threads never interleave.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sg.h"

static _Atomic int g_level = SG_LOG_INFO;

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

void sg_log(sg_log_level level, uint64_t req_id, const char *fmt, ...) {
  if ((int)level < atomic_load(&g_level)) return;
  static const char *const names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);

  sg_buf b = SG_BUF_INIT;
  sg_buf_printf(&b, "%s.%03ldZ %-5s ", stamp, ts.tv_nsec / 1000000L,
                names[level < SG_LOG_OFF ? level : SG_LOG_ERROR]);
  if (req_id) sg_buf_printf(&b, "[req %llu] ", (unsigned long long)req_id);
  va_list ap;
  va_start(ap, fmt);
  sg_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  sg_buf_putc(&b, '\n');
  flockfile(stderr);
  fwrite(b.data, 1, b.len, stderr);
  fflush(stderr);
  funlockfile(stderr);
  sg_buf_free(&b);
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
