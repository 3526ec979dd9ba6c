// SPDX-License-Identifier: Apache-2.0
/*
 * stagctl.c — the stagd command line. Each command builds one request message,
 * calls the service (in-process with --local, else over gRPC) and prints the reply:
 * JSON for admin commands, the plain text a command promises otherwise
 * (ARCHITECTURE.md "Command line"). Diagnostics go to stderr as
 * FILE:LINE:COL: error: MESSAGE (with --json-errors as one JSON object, reason
 * included); exit 0 on success, 1 on bad input, 2 on usage, connection or internal
 * errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health.pb-c.h"
#include "rpc.h"
#include "stagd.pb-c.h"

enum { EXIT_USER = 1, EXIT_USAGE = 2 };

typedef struct ctx {
  ctl_rpc rpc;
  sg_arena arena;
  sg_error err;
  int argc;
  char **argv;      /* the command's own arguments, after its name */
  bool json_errors; /* --json-errors: report() prints one JSON object */
} ctx;

/* ---------------------------------------------------------------- helpers */

static int usage_error(const char *fmt, ...) SG_PRINTF(1, 2);
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("stagctl: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs(" (see stagctl --help)\n", stderr);
  va_end(ap);
  return EXIT_USAGE;
}

/* Bad input is the user's to fix (exit 1); everything else is exit 2. */
static int exit_code_for(sg_code code) {
  switch (code) {
    case SG_OK: return 0;
    case SG_INVALID_ARGUMENT:
    case SG_NOT_FOUND:
    case SG_FAILED_PRECONDITION:
    case SG_OUT_OF_RANGE:
    case SG_ALREADY_EXISTS:
    case SG_RESOURCE_EXHAUSTED:
    case SG_DEADLINE_EXCEEDED:
    case SG_ABORTED: return EXIT_USER;
    default: return EXIT_USAGE;
  }
}

/* The error as one line of JSON for scripts: status, message, the location when known
 * and the reason (sg_reason_name) when it has one — the fields of the LSP error data. */
static void report_json(const sg_error *e) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "status", sg_code_name(e->code));
  cJSON_AddStringToObject(j, "message", e->message ? e->message : "");
  if (e->file) cJSON_AddStringToObject(j, "file", e->file);
  if (e->line > 0) cJSON_AddNumberToObject(j, "line", e->line);
  if (e->col > 0) cJSON_AddNumberToObject(j, "column", e->col);
  if (e->reason) cJSON_AddStringToObject(j, "reason", sg_reason_name(e->reason));
  char *s = cJSON_PrintUnformatted(j);
  fprintf(stderr, "%s\n", s);
  cJSON_free(s);
  cJSON_Delete(j);
}

static int report(ctx *c) {
  if (c->json_errors) {
    report_json(&c->err);
    return exit_code_for(c->err.code);
  }
  char *msg = sg_error_format(&c->err);
  if (c->err.file || c->err.line) fprintf(stderr, "%s\n", msg);
  else fprintf(stderr, "stagctl: %s (%s)\n", msg, sg_code_name(c->err.code));
  free(msg);
  return exit_code_for(c->err.code);
}

static int print_json(const ProtobufCMessage *reply) {
  cJSON *j = sv_pbjson_encode(reply);
  char *s = sv_json_pretty(j);
  printf("%s\n", s);
  free(s);
  cJSON_Delete(j);
  return 0;
}

static ProtobufCMessage *new_request(ctx *c, const sv_method *m) {
  ProtobufCMessage *req = sg_arena_alloc(&c->arena, m->input->sizeof_message);
  m->input->message_init(req);
  return req;
}

/* Reads a whole file into the arena (NUL-terminated). */
static char *read_file(ctx *c, const char *path, size_t *len) {
  char *data = sg_read_file(path, len);
  if (!data) {
    sg_error_set_at(&c->err, SG_INVALID_ARGUMENT, path, 0, 0, "cannot read: %s", strerror(errno));
    return NULL;
  }
  char *out = sg_arena_alloc(&c->arena, *len + 1);
  memcpy(out, data, *len + 1);
  free(data);
  return out;
}

static sg_code call(ctx *c, const char *method, const ProtobufCMessage *req, ProtobufCMessage **reply) {
  return ctl_rpc_invoke(&c->rpc, sv_method_by_name(method), req, &c->arena, reply, &c->err);
}

/* Options of a command: `--name value` / `--name=value` / `--flag`, plus
 * positionals. Returns false (after printing) on an unknown option. */
typedef struct cmd_opt {
  const char *name;
  bool takes_value;
  const char **value; /* set to the value, or to "" for a flag */
} cmd_opt;

static bool parse_cmd_args(ctx *c, const char *cmd, cmd_opt *opts, const char **pos, int max_pos, int *n_pos) {
  *n_pos = 0;
  for (int i = 0; i < c->argc; i++) {
    const char *a = c->argv[i];
    if (a[0] == '-' && a[1] == '-') {
      const char *eq = strchr(a, '=');
      size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
      cmd_opt *o = NULL;
      for (cmd_opt *p = opts; p && p->name; p++)
        if (strlen(p->name) == len && !strncmp(p->name, a + 2, len)) o = p;
      if (!o) {
        usage_error("%s: unknown option '%.*s'", cmd, (int)len + 2, a);
        return false;
      }
      if (!o->takes_value) {
        *o->value = "";
      } else if (eq) {
        *o->value = eq + 1;
      } else if (i + 1 < c->argc) {
        *o->value = c->argv[++i];
      } else {
        usage_error("%s: option '--%s' needs a value", cmd, o->name);
        return false;
      }
    } else {
      if (*n_pos >= max_pos) {
        usage_error("%s: unexpected argument '%s'", cmd, a);
        return false;
      }
      pos[(*n_pos)++] = a;
    }
  }
  return true;
}

/* --------------------------------------------------------------- commands */

static int cmd_simple(ctx *c, const char *method) {
  int n_pos;
  if (!parse_cmd_args(c, method, NULL, NULL, 0, &n_pos)) return EXIT_USAGE;
  const sv_method *m = sv_method_by_name(method);
  ProtobufCMessage *reply;
  if (call(c, method, new_request(c, m), &reply) != SG_OK) return report(c);
  return print_json(reply);
}

static int cmd_version(ctx *c) { return cmd_simple(c, "Version"); }
static int cmd_devices(ctx *c) { return cmd_simple(c, "ListDevices"); }
static int cmd_stats(ctx *c) { return cmd_simple(c, "Stats"); }

static int cmd_health(ctx *c) {
  const char *pos[1];
  int n_pos;
  if (!parse_cmd_args(c, "health", NULL, pos, 1, &n_pos)) return EXIT_USAGE;
  Grpc__Health__V1__HealthCheckRequest *req = (void *)new_request(c, sv_method_by_name("Health.Check"));
  if (n_pos) req->service = (char *)pos[0];
  ProtobufCMessage *reply;
  if (call(c, "Health.Check", &req->base, &reply) != SG_OK) return report(c);
  print_json(reply);
  return ((Grpc__Health__V1__HealthCheckResponse *)reply)->status ==
                 GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
             ? 0
             : EXIT_USAGE;
}

static int cmd_ping(ctx *c) {
  const char *delay = NULL, *pos[1];
  cmd_opt opts[] = {{"delay-ms", true, &delay}, {0}};
  int n_pos;
  if (!parse_cmd_args(c, "ping", opts, pos, 1, &n_pos)) return EXIT_USAGE;
  Stagd__V1__PingRequest *req = (void *)new_request(c, sv_method_by_name("Ping"));
  if (n_pos) req->payload = (char *)pos[0];
  if (delay) {
    char *end;
    unsigned long v = strtoul(delay, &end, 10);
    if (!*delay || *end || v > UINT32_MAX) return usage_error("ping: --delay-ms expects a whole number");
    req->delay_ms = (uint32_t)v;
  }
  uint64_t t0 = sg_now_ns();
  ProtobufCMessage *reply;
  if (call(c, "Ping", &req->base, &reply) != SG_OK) return report(c);
  printf("{\"payload\": \"%s\", \"roundTripMs\": %.3f}\n", ((Stagd__V1__PingReply *)reply)->payload,
         (sg_now_ns() - t0) / 1e6);
  return 0;
}

/* A ParseRequest holding FILE's text; NULL (c->err set) when it cannot be read. */
static Stagd__V1__ParseRequest *parse_request(ctx *c, const char *path) {
  size_t len;
  char *src = read_file(c, path, &len);
  if (!src) return NULL;
  Stagd__V1__ParseRequest *req = (void *)new_request(c, sv_method_by_name("Parse"));
  req->source = src;
  req->filename = (char *)path;
  return req;
}

/* A StageRequest holding FILE's text; NULL (c->err set) when it cannot be read. */
static Stagd__V1__StageRequest *stage_request(ctx *c, const char *path, const char *entry) {
  size_t len;
  char *src = read_file(c, path, &len);
  if (!src) return NULL;
  Stagd__V1__StageRequest *req = (void *)new_request(c, sv_method_by_name("Stage"));
  req->sexpr = src;
  req->filename = (char *)path;
  if (entry) req->entry = (char *)entry;
  return req;
}

/* parse FILE [--attributes] [--json] */
static int cmd_parse(ctx *c) {
  const char *attrs = NULL, *json = NULL, *pos[1];
  cmd_opt opts[] = {{"attributes", false, &attrs}, {"json", false, &json}, {0}};
  int n_pos;
  if (!parse_cmd_args(c, "parse", opts, pos, 1, &n_pos)) return EXIT_USAGE;
  if (n_pos != 1) return usage_error("parse: expected FILE");
  Stagd__V1__ParseRequest *req = parse_request(c, pos[0]);
  if (!req) return report(c);
  req->include_attributes = attrs != NULL;
  req->want_json = json != NULL;
  ProtobufCMessage *reply;
  if (call(c, "Parse", &req->base, &reply) != SG_OK) return report(c);
  Stagd__V1__ParseReply *r = (void *)reply;
  printf("%s\n", json ? r->json : r->dump);
  return 0;
}

/* unparse FILE */
static int cmd_unparse(ctx *c) {
  const char *pos[1];
  int n_pos;
  if (!parse_cmd_args(c, "unparse", NULL, pos, 1, &n_pos)) return EXIT_USAGE;
  if (n_pos != 1) return usage_error("unparse: expected FILE");
  Stagd__V1__ParseRequest *req = parse_request(c, pos[0]);
  if (!req) return report(c);
  req->want_unparse = true;
  ProtobufCMessage *reply;
  if (call(c, "Parse", &req->base, &reply) != SG_OK) return report(c);
  fputs(((Stagd__V1__ParseReply *)reply)->unparsed, stdout);
  return 0;
}

static int parse_dump_format(const char *s, Stagd__V1__DumpFormat *out) {
  static const struct { const char *name; Stagd__V1__DumpFormat f; } table[] = {
      {"sexpr", STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_SEXPR}, {"text", STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_TEXT},
      {"dot", STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_DOT},     {"json", STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_JSON},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(s, table[i].name)) {
      *out = table[i].f;
      return 0;
    }
  return usage_error("--dump expects sexpr, text, dot or json, got '%s'", s);
}

/* stage FILE.sexp [--dump FMT] [--no-optimize] [--entry NAME] */
static int cmd_stage(ctx *c) {
  const char *dump = "text", *noopt = NULL, *entry = NULL, *pos[1];
  cmd_opt opts[] = {{"dump", true, &dump}, {"no-optimize", false, &noopt}, {"entry", true, &entry}, {0}};
  int n_pos;
  if (!parse_cmd_args(c, "stage", opts, pos, 1, &n_pos)) return EXIT_USAGE;
  if (n_pos != 1) return usage_error("stage: expected FILE.sexp");
  Stagd__V1__DumpFormat fmt = STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_TEXT;
  if (parse_dump_format(dump, &fmt)) return EXIT_USAGE;
  Stagd__V1__StageRequest *req = stage_request(c, pos[0], entry);
  if (!req) return report(c);
  req->no_optimize = noopt != NULL;
  req->n_dumps = 1;
  req->dumps = sg_arena_alloc(&c->arena, sizeof *req->dumps);
  req->dumps[0] = fmt;
  ProtobufCMessage *reply;
  if (call(c, "Stage", &req->base, &reply) != SG_OK) return report(c);
  Stagd__V1__StageReply *r = (void *)reply;
  for (size_t i = 0; i < r->n_dumps; i++) fputs(r->dumps[i]->text, stdout);
  return 0;
}

/* Stages FILE and returns the graph id (NULL after reporting into c->err). */
static const char *stage_file(ctx *c, const char *path, const char *entry) {
  Stagd__V1__StageRequest *req = stage_request(c, path, entry);
  if (!req) return NULL;
  ProtobufCMessage *reply;
  if (call(c, "Stage", &req->base, &reply) != SG_OK) return NULL;
  return ((Stagd__V1__StageReply *)reply)->graph_id;
}

/* run FILE.sexp [--entry NAME] [--args JSON] [--device DEV] */
static int cmd_run(ctx *c) {
  const char *entry = NULL, *args = NULL, *device = NULL, *pos[1];
  cmd_opt opts[] = {{"entry", true, &entry}, {"args", true, &args}, {"device", true, &device}, {0}};
  int n_pos;
  if (!parse_cmd_args(c, "run", opts, pos, 1, &n_pos)) return EXIT_USAGE;
  if (n_pos != 1) return usage_error("run: expected FILE.sexp");
  const char *id = stage_file(c, pos[0], entry);
  if (!id) return report(c);
  Stagd__V1__ExecuteRequest *req = (void *)new_request(c, sv_method_by_name("Execute"));
  req->graph_id = (char *)id;
  if (entry) req->entry = (char *)entry;
  req->args_json = (char *)(args ? args : "[]");
  if (device) req->device = (char *)device;
  ProtobufCMessage *reply;
  if (call(c, "Execute", &req->base, &reply) != SG_OK) return report(c);
  Stagd__V1__ExecuteReply *r = (void *)reply;
  fputs(r->output, stderr); /* what graph `print` nodes printed */
  printf("%s\n", r->result_json);
  return 0;
}

/* run-model NAME [--version V] [--args JSON] [--device DEV]: an exported model the
 * daemon serves from --models DIR (docs/deploy.md "Models"). */
static int cmd_run_model(ctx *c) {
  const char *version = NULL, *args = NULL, *device = NULL, *pos[1];
  cmd_opt opts[] = {{"version", true, &version}, {"args", true, &args}, {"device", true, &device}, {0}};
  int n_pos;
  if (!parse_cmd_args(c, "run-model", opts, pos, 1, &n_pos)) return EXIT_USAGE;
  if (n_pos != 1) return usage_error("run-model: expected NAME");
  Stagd__V1__RunModelRequest *req = (void *)new_request(c, sv_method_by_name("RunModel"));
  req->name = (char *)pos[0];
  if (version) {
    char *end;
    errno = 0;
    long long v = strtoll(version, &end, 10);
    if (!*version || *end || errno || v < 1) return usage_error("run-model: --version expects a positive whole number");
    req->version = v;
  }
  req->args_json = (char *)(args ? args : "[]");
  if (device) req->device = (char *)device;
  ProtobufCMessage *reply;
  if (call(c, "RunModel", &req->base, &reply) != SG_OK) return report(c);
  Stagd__V1__ExecuteReply *r = (void *)reply;
  fputs(r->output, stderr);
  printf("%s\n", r->result_json);
  return 0;
}

/* models [NAME]: ListModels as JSON. */
static int cmd_models(ctx *c) {
  const char *pos[1];
  int n_pos;
  if (!parse_cmd_args(c, "models", NULL, pos, 1, &n_pos)) return EXIT_USAGE;
  Stagd__V1__ListModelsRequest *req = (void *)new_request(c, sv_method_by_name("ListModels"));
  if (n_pos == 1) req->name = (char *)pos[0];
  ProtobufCMessage *reply;
  if (call(c, "ListModels", &req->base, &reply) != SG_OK) return report(c);
  return print_json(reply);
}

/* grad FILE.sexp --entry NAME [--wrt I] [--dump FMT] */
static int cmd_grad(ctx *c) {
  const char *entry = NULL, *wrt = NULL, *dump = "text", *pos[1];
  cmd_opt opts[] = {{"entry", true, &entry}, {"wrt", true, &wrt}, {"dump", true, &dump}, {0}};
  int n_pos;
  if (!parse_cmd_args(c, "grad", opts, pos, 1, &n_pos)) return EXIT_USAGE;
  if (n_pos != 1 || !entry) return usage_error("grad: expected FILE.sexp --entry NAME");
  Stagd__V1__DumpFormat fmt = STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_TEXT;
  if (parse_dump_format(dump, &fmt)) return EXIT_USAGE;
  int32_t wrt_index = 0;
  if (wrt) {
    char *end;
    long v = strtol(wrt, &end, 10);
    if (!*wrt || *end || v < 0 || v > INT32_MAX) return usage_error("grad: --wrt expects a parameter index");
    wrt_index = (int32_t)v;
  }
  const char *id = stage_file(c, pos[0], entry);
  if (!id) return report(c);
  Stagd__V1__GradRequest *req = (void *)new_request(c, sv_method_by_name("Grad"));
  req->graph_id = (char *)id;
  req->entry = (char *)entry;
  if (wrt) {
    req->n_wrt = 1;
    req->wrt = sg_arena_alloc(&c->arena, sizeof *req->wrt);
    req->wrt[0] = wrt_index;
  }
  req->dump = fmt;
  ProtobufCMessage *reply;
  if (call(c, "Grad", &req->base, &reply) != SG_OK) return report(c);
  fputs(((Stagd__V1__GradReply *)reply)->dump, stdout);
  return 0;
}

/* convert FILE [--style autograph|snek] [--function NAME] */
static int cmd_convert(ctx *c) {
  const char *style = "autograph", *function = NULL, *pos[1];
  cmd_opt opts[] = {{"style", true, &style}, {"function", true, &function}, {0}};
  int n_pos;
  if (!parse_cmd_args(c, "convert", opts, pos, 1, &n_pos)) return EXIT_USAGE;
  if (n_pos != 1) return usage_error("convert: expected FILE");
  Stagd__V1__Style st;
  if (!strcmp(style, "autograph")) st = STAGD__V1__STYLE__STYLE_AUTOGRAPH;
  else if (!strcmp(style, "snek")) st = STAGD__V1__STYLE__STYLE_SNEK;
  else return usage_error("convert: --style expects autograph or snek, got '%s'", style);
  size_t len;
  char *src = read_file(c, pos[0], &len);
  if (!src) return report(c);
  Stagd__V1__ConvertRequest *req = (void *)new_request(c, sv_method_by_name("Convert"));
  req->source = src;
  req->filename = (char *)pos[0];
  req->style = st;
  if (function) req->function = (char *)function;
  ProtobufCMessage *reply;
  if (call(c, "Convert", &req->base, &reply) != SG_OK) return report(c);
  const Stagd__V1__ConvertReply *cr = (const Stagd__V1__ConvertReply *)reply;
  fputs(cr->code, stdout);
  /* diagnostics on stderr, compiler style; an error-severity one fails the command */
  int rc = 0;
  for (size_t i = 0; i < cr->n_diagnostics; i++) {
    const Stagd__V1__Diagnostic *d = cr->diagnostics[i];
    bool is_err = d->severity == STAGD__V1__DIAGNOSTIC__SEVERITY__SEVERITY_ERROR;
    const Stagd__V1__Location *l = d->location;
    fprintf(stderr, "%s:%d:%d: %s: %s [%s]\n", l ? l->file : pos[0], l ? l->line : 0, l ? l->column : 0,
            is_err ? "error" : "warning", d->message, d->code);
    if (*d->hint) fprintf(stderr, "  hint: %s\n", d->hint);
    if (is_err) rc = 1;
  }
  return rc;
}

/* ------------------------------------------------------------------ main */

typedef struct command {
  const char *name;
  int (*run)(ctx *c);
  const char *usage;
} command;

static const command commands[] = {
    {"parse", cmd_parse, "parse FILE [--attributes] [--json]   CPython 3.12 ast.dump of FILE"},
    {"unparse", cmd_unparse, "unparse FILE                        source whose AST equals FILE's"},
    {"convert", cmd_convert, "convert FILE [--style autograph|snek] [--function NAME]"},
    {"stage", cmd_stage, "stage FILE.sexp [--dump sexpr|text|dot|json] [--no-optimize] [--entry NAME]"},
    {"run", cmd_run, "run FILE.sexp [--entry NAME] [--args JSON] [--device cpu|vulkan[:N]]"},
    {"grad", cmd_grad, "grad FILE.sexp --entry NAME [--wrt I] [--dump FMT]"},
    {"run-model", cmd_run_model, "run-model NAME [--version V] [--args JSON] [--device DEV]  an exported model (--models)"},
    {"models", cmd_models, "models [NAME]                       exported models served, as JSON"},
    {"devices", cmd_devices, "devices                             devices, as JSON"},
    {"health", cmd_health, "health [SERVICE]                    health check, as JSON (exit 2 unless SERVING)"},
    {"version", cmd_version, "version                             version, as JSON"},
    {"stats", cmd_stats, "stats                               request statistics, as JSON"},
    {"ping", cmd_ping, "ping [PAYLOAD] [--delay-ms N]       round trip, as JSON"},
};

static void print_help(FILE *out) {
  fprintf(out,
          "usage: stagctl [--addr ADDR | --local] [--timeout SECONDS] [--json-errors] COMMAND [ARGS]\n\n"
          "  --addr ADDR     the daemon: host:port or unix:PATH (default: $STAGD_ADDR, else %s)\n"
          "  --local         run the service in this process; no daemon\n"
          "  --timeout S     give up after S seconds (default: none)\n"
          "  --json-errors   report a failed call as one JSON object on stderr: status, message,\n"
          "                  file/line/column, reason\n\n"
          "commands:\n",
          SV_DEFAULT_ADDR);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) fprintf(out, "  %s\n", commands[i].usage);
  fprintf(out,
          "\nDiagnostics go to stderr as FILE:LINE:COL: error: MESSAGE.\n"
          "Exit status: 0 success, 1 bad input, 2 usage, connection or internal error.\n");
}

int main(int argc, char **argv) {
  sg_memory_tune_for_reuse();
  ctx c;
  memset(&c, 0, sizeof c);
  sv_config_init(&c.rpc.cfg);
  sg_log_set_level(SG_LOG_WARN);
  const char *env_addr = getenv("STAGD_ADDR");
  c.rpc.addr = env_addr && *env_addr ? env_addr : SV_DEFAULT_ADDR;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      print_help(stdout);
      sv_config_free(&c.rpc.cfg);
      return 0;
    } else if (!strcmp(a, "--local")) {
      c.rpc.local = true;
    } else if (!strcmp(a, "--json-errors")) {
      c.json_errors = true;
    } else if (!strcmp(a, "--addr") && i + 1 < argc) {
      c.rpc.addr = argv[++i];
    } else if (!strncmp(a, "--addr=", 7)) {
      c.rpc.addr = a + 7;
    } else if (!strcmp(a, "--timeout") && i + 1 < argc) {
      char *end;
      c.rpc.timeout_s = strtod(argv[++i], &end);
      if (*end || c.rpc.timeout_s <= 0) {
        sv_config_free(&c.rpc.cfg);
        return usage_error("--timeout expects a positive number of seconds");
      }
    } else {
      sv_config_free(&c.rpc.cfg);
      return usage_error("unknown option '%s'", a);
    }
  }
  if (i >= argc) {
    print_help(stderr);
    sv_config_free(&c.rpc.cfg);
    return EXIT_USAGE;
  }
  const command *cmd = NULL;
  for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
    if (!strcmp(commands[k].name, argv[i])) cmd = &commands[k];
  if (!cmd) {
    sv_config_free(&c.rpc.cfg);
    return usage_error("unknown command '%s'", argv[i]);
  }
  c.argc = argc - i - 1;
  c.argv = argv + i + 1;
  sg_arena_init(&c.arena, 0);
  int rc;
  if (ctl_rpc_open(&c.rpc, &c.err) != SG_OK) {
    rc = report(&c);
  } else {
    rc = cmd->run(&c);
    ctl_rpc_close(&c.rpc);
  }
  fflush(stdout);
  sg_arena_free(&c.arena);
  sg_error_clear(&c.err);
  sv_config_free(&c.rpc.cfg);
  return rc;
}
