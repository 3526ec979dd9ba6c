// SPDX-License-Identifier: Apache-2.0
/*
 * diag.c — how stagctl reports problems on stderr: compiler-style diagnostics
 * (`FILE:LINE:COL: error: MESSAGE`, then `  hint: ...`), `stagctl: error: ...` for
 * errors without a location, usage errors that point at the right --help, and with
 * --json-errors one JSON object per failure. On a terminal the location is bold,
 * `error` red, `warning` magenta and `hint` cyan, as gcc and clang color them; the
 * text is the same with or without colors. NO_COLOR (https://no-color.org) set to
 * anything but "" turns colors off unless --color=always asks for them.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static bool use_color;

void ctl_color_init(ctl_color_mode mode) {
  if (mode != CTL_COLOR_AUTO) {
    use_color = mode == CTL_COLOR_ALWAYS;
    return;
  }
  const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
  use_color = isatty(STDERR_FILENO) && !(no_color && *no_color) && !(term && !strcmp(term, "dumb"));
}

static const char *sgr(const char *code) { return use_color ? code : ""; }
#define BOLD "\033[1m"
#define RESET "\033[0m"

static const char *severity_color(const char *severity) {
  if (!strcmp(severity, "error")) return "\033[1;31m";
  if (!strcmp(severity, "warning")) return "\033[1;35m";
  return "\033[1;36m";
}

void ctl_diagnostic(const char *file, int line, int col, const char *severity, const char *message,
                    const char *hint) {
  if (file) {
    fprintf(stderr, "%s%s:", sgr(BOLD), file);
    if (line > 0) fprintf(stderr, "%d:", line);
    if (line > 0 && col > 0) fprintf(stderr, "%d:", col);
    fprintf(stderr, "%s ", sgr(RESET));
  } else {
    fprintf(stderr, "%sstagctl:%s ", sgr(BOLD), sgr(RESET));
  }
  fprintf(stderr, "%s%s:%s %s\n", sgr(severity_color(severity)), severity, sgr(RESET), message);
  if (hint && *hint) fprintf(stderr, "  %shint:%s %s\n", sgr(severity_color("hint")), sgr(RESET), hint);
}

int ctl_usage_error(const ctl_cmd *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = NULL;
  if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
  va_end(ap);
  char see[96];
  snprintf(see, sizeof see, "see stagctl %s%s--help", cmd ? cmd->name : "", cmd ? " " : "");
  ctl_diagnostic(NULL, 0, 0, "error", msg ? msg : fmt, see);
  free(msg);
  return CTL_EXIT_USAGE;
}

/* Bad input is the user's to fix (exit 1); everything else is exit 2. */
static int exit_code_for(sg_code code) {
  switch (code) {
    case SG_OK: return CTL_EXIT_OK;
    case SG_INVALID_ARGUMENT:
    case SG_NOT_FOUND:
    case SG_FAILED_PRECONDITION:
    case SG_OUT_OF_RANGE:
    case SG_ALREADY_EXISTS:
    case SG_RESOURCE_EXHAUSTED:
    case SG_DEADLINE_EXCEEDED:
    case SG_ABORTED: return CTL_EXIT_USER;
    default: return CTL_EXIT_USAGE;
  }
}

/* The error as one line of JSON for scripts: status, message, the location when known,
 * the reason (sg_reason_name) when it has one — the fields of the LSP error data — and
 * the hint when stagctl has one. */
static void report_json(const sg_error *e, const char *hint) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "status", sg_code_name(e->code));
  cJSON_AddStringToObject(j, "message", e->message ? e->message : "");
  if (e->file) cJSON_AddStringToObject(j, "file", e->file);
  if (e->line > 0) cJSON_AddNumberToObject(j, "line", e->line);
  if (e->col > 0) cJSON_AddNumberToObject(j, "column", e->col);
  if (e->reason) cJSON_AddStringToObject(j, "reason", sg_reason_name(e->reason));
  if (hint) cJSON_AddStringToObject(j, "hint", hint);
  char *s = cJSON_PrintUnformatted(j);
  fprintf(stderr, "%s\n", s);
  cJSON_free(s);
  cJSON_Delete(j);
}

int ctl_report(ctl_ctx *c) {
  const sg_error *e = &c->err;
  static char hint[512];
  if (!c->hint && e->code == SG_UNAVAILABLE && !c->rpc.local) {
    snprintf(hint, sizeof hint,
             "start a daemon with `stagd --listen %s`, point --addr or $STAGD_ADDR at a running one, or "
             "add --local to run the service in this process (no daemon)",
             c->rpc.addr);
    c->hint = hint;
  }
  if (c->json_errors) {
    report_json(e, c->hint);
  } else if (e->file || e->line) {
    ctl_diagnostic(e->file ? e->file : "<input>", e->line, e->col, "error", e->message ? e->message : "",
                   c->hint);
  } else {
    char *msg = NULL;
    if (asprintf(&msg, "%s (%s)", e->message ? e->message : "", sg_code_name(e->code)) < 0) msg = NULL;
    ctl_diagnostic(NULL, 0, 0, "error", msg ? msg : "", c->hint);
    free(msg);
  }
  return exit_code_for(e->code);
}
