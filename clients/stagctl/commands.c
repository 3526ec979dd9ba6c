// SPDX-License-Identifier: Apache-2.0
/*
 * commands.c — stagctl's commands and the one table that describes them (at the
 * end). Each command builds one request message, calls the service (in-process with
 * --local, else over gRPC) and prints the reply: JSON for admin commands, the plain
 * text a command promises otherwise (ARCHITECTURE.md "Command line"). Options,
 * operands, help and completions all come from the table rows; a command reads its
 * options with ctl_opt_value().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "health.pb-c.h"
#include "stagd.pb-c.h"

/* ---------------------------------------------------------------- helpers */

/* Prints j (two-space indent) and frees it. */
static int print_cjson(cJSON *j) {
  char *s = sv_json_pretty(j);
  printf("%s\n", s);
  free(s);
  cJSON_Delete(j);
  return CTL_EXIT_OK;
}

static int print_json(const ProtobufCMessage *reply) { return print_cjson(sv_pbjson_encode(reply)); }

static ProtobufCMessage *new_request(ctl_ctx *c, const char *method) {
  const sv_method *m = sv_method_by_name(method);
  ProtobufCMessage *req = sg_arena_alloc(&c->arena, m->input->sizeof_message);
  m->input->message_init(req);
  return req;
}

/* Reads a whole file ("-": standard input) into the arena (NUL-terminated). */
static char *read_file(ctl_ctx *c, const char *path, size_t *len) {
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

static sg_code call(ctl_ctx *c, const char *method, const ProtobufCMessage *req, ProtobufCMessage **reply) {
  return ctl_rpc_invoke(&c->rpc, sv_method_by_name(method), req, &c->arena, reply, &c->err);
}

static const char *operand(ctl_ctx *c, int i) { return i < c->n_operands ? c->operands[i] : NULL; }

/* --------------------------------------------------------------- commands */

static int call_and_print(ctl_ctx *c, const char *method) {
  ProtobufCMessage *reply;
  if (call(c, method, new_request(c, method), &reply) != SG_OK) return ctl_report(c);
  return print_json(reply);
}

static int cmd_version(ctl_ctx *c) { return call_and_print(c, "Version"); }
static int cmd_devices(ctl_ctx *c) { return call_and_print(c, "ListDevices"); }
static int cmd_stats(ctl_ctx *c) { return call_and_print(c, "Stats"); }

static int cmd_health(ctl_ctx *c) {
  Grpc__Health__V1__HealthCheckRequest *req = (void *)new_request(c, "Health.Check");
  if (operand(c, 0)) req->service = (char *)operand(c, 0);
  ProtobufCMessage *reply;
  if (call(c, "Health.Check", &req->base, &reply) != SG_OK) return ctl_report(c);
  print_json(reply);
  return ((Grpc__Health__V1__HealthCheckResponse *)reply)->status ==
                 GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
             ? CTL_EXIT_OK
             : CTL_EXIT_USAGE;
}

static int cmd_ping(ctl_ctx *c) {
  const char *delay = ctl_opt_value(c, "delay-ms");
  Stagd__V1__PingRequest *req = (void *)new_request(c, "Ping");
  if (operand(c, 0)) req->payload = (char *)operand(c, 0);
  if (delay) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(delay, &end, 10);
    if (!*delay || *end || *delay == '-' || errno || v > UINT32_MAX)
      return ctl_usage_error(c->cmd, "ping: --delay-ms expects a whole number of milliseconds, got '%s'", delay);
    req->delay_ms = (uint32_t)v;
  }
  uint64_t t0 = sg_now_ns();
  ProtobufCMessage *reply;
  if (call(c, "Ping", &req->base, &reply) != SG_OK) return ctl_report(c);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "payload", ((Stagd__V1__PingReply *)reply)->payload);
  cJSON_AddNumberToObject(j, "roundTripMs", (double)((sg_now_ns() - t0) / 1000) / 1e3);
  return print_cjson(j);
}

/* A ParseRequest holding FILE's text; NULL (c->err set) when it cannot be read. */
static Stagd__V1__ParseRequest *parse_request(ctl_ctx *c, const char *path) {
  size_t len;
  char *src = read_file(c, path, &len);
  if (!src) return NULL;
  Stagd__V1__ParseRequest *req = (void *)new_request(c, "Parse");
  req->source = src;
  req->filename = (char *)path;
  return req;
}

/* FILE.py is Python source, staged in the daemon (docs/pyfront.md); anything else is
 * S-expressions. */
static bool is_python(const char *path) {
  size_t n = strlen(path);
  return n > 3 && !strcmp(path + n - 3, ".py");
}

/* A StageRequest holding FILE's text; NULL (c->err set) when it cannot be read. */
static Stagd__V1__StageRequest *stage_request(ctl_ctx *c, const char *path, const char *entry) {
  size_t len;
  char *src = read_file(c, path, &len);
  if (!src) return NULL;
  Stagd__V1__StageRequest *req = (void *)new_request(c, "Stage");
  req->sexpr = src;
  req->filename = (char *)path;
  if (is_python(path)) req->language = STAGD__V1__SOURCE_LANGUAGE__SOURCE_LANGUAGE_PYTHON;
  if (entry) req->entry = (char *)entry;
  return req;
}

static int cmd_parse(ctl_ctx *c) {
  bool json = ctl_opt_value(c, "json") != NULL;
  Stagd__V1__ParseRequest *req = parse_request(c, operand(c, 0));
  if (!req) return ctl_report(c);
  req->include_attributes = ctl_opt_value(c, "attributes") != NULL;
  req->want_json = json;
  ProtobufCMessage *reply;
  if (call(c, "Parse", &req->base, &reply) != SG_OK) return ctl_report(c);
  Stagd__V1__ParseReply *r = (void *)reply;
  printf("%s\n", json ? r->json : r->dump);
  return CTL_EXIT_OK;
}

static int cmd_unparse(ctl_ctx *c) {
  Stagd__V1__ParseRequest *req = parse_request(c, operand(c, 0));
  if (!req) return ctl_report(c);
  req->want_unparse = true;
  ProtobufCMessage *reply;
  if (call(c, "Parse", &req->base, &reply) != SG_OK) return ctl_report(c);
  fputs(((Stagd__V1__ParseReply *)reply)->unparsed, stdout);
  return CTL_EXIT_OK;
}

#define DUMP_FORMATS "sexpr text dot json"

/* The --dump option's format (default text); false after a usage error. */
static bool dump_format(ctl_ctx *c, Stagd__V1__DumpFormat *out) {
  static const struct { const char *name; Stagd__V1__DumpFormat f; } table[] = {
      {"sexpr", STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_SEXPR}, {"text", STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_TEXT},
      {"dot", STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_DOT},     {"json", STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_JSON},
  };
  const char *s = ctl_opt_value(c, "dump");
  if (!s) s = "text";
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(s, table[i].name)) {
      *out = table[i].f;
      return true;
    }
  ctl_usage_error(c->cmd, "%s: --dump expects sexpr, text, dot or json, got '%s'", c->cmd->name, s);
  return false;
}

static int cmd_stage(ctl_ctx *c) {
  Stagd__V1__DumpFormat fmt;
  if (!dump_format(c, &fmt)) return CTL_EXIT_USAGE;
  Stagd__V1__StageRequest *req = stage_request(c, operand(c, 0), ctl_opt_value(c, "entry"));
  if (!req) return ctl_report(c);
  req->no_optimize = ctl_opt_value(c, "no-optimize") != NULL;
  req->n_dumps = 1;
  req->dumps = sg_arena_alloc(&c->arena, sizeof *req->dumps);
  req->dumps[0] = fmt;
  ProtobufCMessage *reply;
  if (call(c, "Stage", &req->base, &reply) != SG_OK) return ctl_report(c);
  Stagd__V1__StageReply *r = (void *)reply;
  for (size_t i = 0; i < r->n_dumps; i++) fputs(r->dumps[i]->text, stdout);
  return CTL_EXIT_OK;
}

/* Stages FILE and returns the graph id (NULL after reporting into c->err). */
static const char *stage_file(ctl_ctx *c, const char *path, const char *entry) {
  Stagd__V1__StageRequest *req = stage_request(c, path, entry);
  if (!req) return NULL;
  ProtobufCMessage *reply;
  if (call(c, "Stage", &req->base, &reply) != SG_OK) return NULL;
  return ((Stagd__V1__StageReply *)reply)->graph_id;
}

/* Executes graph id (entry: a def of it, or NULL) on the JSON arguments and prints the
 * result; what `print` nodes printed goes to stderr. */
static int execute(ctl_ctx *c, const char *id, const char *entry, const char *args, const char *device) {
  Stagd__V1__ExecuteRequest *req = (void *)new_request(c, "Execute");
  req->graph_id = (char *)id;
  if (entry) req->entry = (char *)entry;
  req->args_json = (char *)(args ? args : "[]");
  if (device) req->device = (char *)device;
  ProtobufCMessage *reply;
  if (call(c, "Execute", &req->base, &reply) != SG_OK) return ctl_report(c);
  Stagd__V1__ExecuteReply *r = (void *)reply;
  fputs(r->output, stderr); /* what graph `print` nodes printed */
  printf("%s\n", r->result_json);
  return CTL_EXIT_OK;
}

static int cmd_run(ctl_ctx *c) {
  const char *entry = ctl_opt_value(c, "entry"), *args = ctl_opt_value(c, "args");
  if (args && ctl_check_json_numbers(args, "--args", &c->err, &c->hint) != SG_OK) return ctl_report(c);
  const char *id = stage_file(c, operand(c, 0), entry);
  if (!id) return ctl_report(c);
  return execute(c, id, entry, args, ctl_opt_value(c, "device"));
}

/* run-model NAME: an exported model the daemon serves from --models DIR (docs/deploy.md
 * "Models"); the result as one JSON value. */
static int cmd_run_model(ctl_ctx *c) {
  const char *version = ctl_opt_value(c, "version"), *args = ctl_opt_value(c, "args");
  const char *device = ctl_opt_value(c, "device");
  if (args && ctl_check_json_numbers(args, "--args", &c->err, &c->hint) != SG_OK) return ctl_report(c);
  Stagd__V1__RunModelRequest *req = (void *)new_request(c, "RunModel");
  req->name = (char *)operand(c, 0);
  if (version) {
    char *end;
    errno = 0;
    long long v = strtoll(version, &end, 10);
    if (!*version || *end || errno || v < 1)
      return ctl_usage_error(c->cmd, "run-model: --version expects a positive whole number, got '%s'", version);
    req->version = v;
  }
  req->args_json = (char *)(args ? args : "[]");
  if (device) req->device = (char *)device;
  ProtobufCMessage *reply;
  if (call(c, "RunModel", &req->base, &reply) != SG_OK) return ctl_report(c);
  Stagd__V1__ExecuteReply *r = (void *)reply;
  fputs(r->output, stderr);
  printf("%s\n", r->result_json);
  return CTL_EXIT_OK;
}

/* models [NAME]: ListModels as JSON. */
static int cmd_models(ctl_ctx *c) {
  Stagd__V1__ListModelsRequest *req = (void *)new_request(c, "ListModels");
  if (operand(c, 0)) req->name = (char *)operand(c, 0);
  ProtobufCMessage *reply;
  if (call(c, "ListModels", &req->base, &reply) != SG_OK) return ctl_report(c);
  return print_json(reply);
}

static int cmd_grad(ctl_ctx *c) {
  const char *entry = ctl_opt_value(c, "entry"), *wrt = ctl_opt_value(c, "wrt");
  const char *args = ctl_opt_value(c, "args"), *device = ctl_opt_value(c, "device");
  if (!entry) return ctl_usage_error(c->cmd, "grad: --entry NAME is required (the function to differentiate)");
  if (device && !args) return ctl_usage_error(c->cmd, "grad: --device runs the gradient: give --args too");
  if (args && ctl_check_json_numbers(args, "--args", &c->err, &c->hint) != SG_OK) return ctl_report(c);
  Stagd__V1__DumpFormat fmt;
  if (!dump_format(c, &fmt)) return CTL_EXIT_USAGE;
  int32_t wrt_index = 0;
  if (wrt) {
    char *end;
    errno = 0;
    long v = strtol(wrt, &end, 10);
    if (!*wrt || *end || errno || v < 0 || v > INT32_MAX)
      return ctl_usage_error(c->cmd, "grad: --wrt expects a parameter index (0, 1, ...), got '%s'", wrt);
    wrt_index = (int32_t)v;
  }
  const char *id = stage_file(c, operand(c, 0), entry);
  if (!id) return ctl_report(c);
  Stagd__V1__GradRequest *req = (void *)new_request(c, "Grad");
  req->graph_id = (char *)id;
  req->entry = (char *)entry;
  if (wrt) {
    req->n_wrt = 1;
    req->wrt = sg_arena_alloc(&c->arena, sizeof *req->wrt);
    req->wrt[0] = wrt_index;
  }
  req->dump = fmt;
  ProtobufCMessage *reply;
  if (call(c, "Grad", &req->base, &reply) != SG_OK) return ctl_report(c);
  if (args) return execute(c, ((Stagd__V1__GradReply *)reply)->graph_id, NULL, args, device);
  fputs(((Stagd__V1__GradReply *)reply)->dump, stdout);
  return CTL_EXIT_OK;
}

static int cmd_convert(ctl_ctx *c) {
  const char *style = ctl_opt_value(c, "style"), *function = ctl_opt_value(c, "function");
  Stagd__V1__Style st = STAGD__V1__STYLE__STYLE_AUTOGRAPH;
  if (!style || !strcmp(style, "autograph")) st = STAGD__V1__STYLE__STYLE_AUTOGRAPH;
  else if (!strcmp(style, "snek")) st = STAGD__V1__STYLE__STYLE_SNEK;
  else return ctl_usage_error(c->cmd, "convert: --style expects autograph or snek, got '%s'", style);
  const char *path = operand(c, 0);
  size_t len;
  char *src = read_file(c, path, &len);
  if (!src) return ctl_report(c);
  Stagd__V1__ConvertRequest *req = (void *)new_request(c, "Convert");
  req->source = src;
  req->filename = (char *)path;
  req->style = st;
  if (function) req->function = (char *)function;
  ProtobufCMessage *reply;
  if (call(c, "Convert", &req->base, &reply) != SG_OK) return ctl_report(c);
  const Stagd__V1__ConvertReply *cr = (const Stagd__V1__ConvertReply *)reply;
  fputs(cr->code, stdout);
  /* diagnostics on stderr, compiler style; an error-severity one fails the command */
  int rc = CTL_EXIT_OK;
  for (size_t i = 0; i < cr->n_diagnostics; i++) {
    const Stagd__V1__Diagnostic *d = cr->diagnostics[i];
    bool is_err = d->severity == STAGD__V1__DIAGNOSTIC__SEVERITY__SEVERITY_ERROR;
    const Stagd__V1__Location *l = d->location;
    char *msg = NULL;
    if (asprintf(&msg, "%s [%s]", d->message, d->code) < 0) msg = NULL;
    ctl_diagnostic(l ? l->file : path, l ? l->line : 0, l ? l->column : 0, is_err ? "error" : "warning",
                   msg ? msg : d->message, d->hint);
    free(msg);
    if (is_err) rc = CTL_EXIT_USER;
  }
  return rc;
}

static int cmd_completion(ctl_ctx *c) {
  if (!ctl_print_completion(stdout, operand(c, 0)))
    return ctl_usage_error(c->cmd, "completion: expected bash or zsh, got '%s'", operand(c, 0));
  return CTL_EXIT_OK;
}

static int cmd_help(ctl_ctx *c) {
  if (!operand(c, 0)) {
    ctl_print_help(stdout);
    return CTL_EXIT_OK;
  }
  const ctl_cmd *cmd = ctl_command_find(operand(c, 0));
  if (!cmd) return ctl_usage_error(NULL, "help: unknown command '%s'", operand(c, 0));
  ctl_print_command_help(stdout, cmd);
  return CTL_EXIT_OK;
}

/* ------------------------------------------------------------------ table */

#define ENTRY_OPT(help) {"entry", "NAME", help, CTL_COMPLETE_NONE, NULL}
#define DUMP_OPT {"dump", "FMT", "the dump format: sexpr, text (default), dot or json", CTL_COMPLETE_WORDS, DUMP_FORMATS}

static const ctl_opt parse_opts[] = {
    {"attributes", NULL, "include line and column attributes (ast.dump(include_attributes=True))", 0, NULL},
    {"json", NULL, "print the AST as JSON instead", 0, NULL},
    {0}};
static const ctl_opt convert_opts[] = {
    {"style", "STYLE", "autograph (default) or snek", CTL_COMPLETE_WORDS, "autograph snek"},
    {"function", "NAME", "convert only this function (f or Class.method)", 0, NULL},
    {0}};
static const ctl_opt stage_opts[] = {
    DUMP_OPT,
    {"no-optimize", NULL, "dump the graph before the optimizer runs", 0, NULL},
    ENTRY_OPT("the function to stage (default: the file's last definition)"),
    {0}};
static const ctl_opt run_opts[] = {
    ENTRY_OPT("the function to run (default: the file's last definition)"),
    {"args", "JSON", "the arguments: a JSON array, one element per parameter (docs/api.md)", 0, NULL},
    {"device", "DEV", "cpu or vulkan[:N] (default: the daemon's)", CTL_COMPLETE_WORDS, "cpu vulkan"},
    {0}};
static const ctl_opt grad_opts[] = {
    ENTRY_OPT("the function to differentiate (required)"),
    {"wrt", "I", "the parameter to differentiate with respect to (default 0)", 0, NULL},
    DUMP_OPT,
    {"args", "JSON", "run the gradient on these arguments and print its value instead of the graph", 0, NULL},
    {"device", "DEV", "with --args: cpu or vulkan[:N] (default: the daemon's)", CTL_COMPLETE_WORDS, "cpu vulkan"},
    {0}};
static const ctl_opt run_model_opts[] = {
    {"version", "V", "the model version (default: the highest the daemon loaded)", 0, NULL},
    {"args", "JSON", "the arguments: a JSON array, one element per input of the model", 0, NULL},
    {"device", "DEV", "cpu or vulkan[:N] (default: the daemon's)", CTL_COMPLETE_WORDS, "cpu vulkan"},
    {0}};
static const ctl_opt ping_opts[] = {
    {"delay-ms", "N", "ask the daemon to wait N milliseconds before answering", 0, NULL},
    {0}};

const ctl_opt ctl_global_opts[] = {
    {"addr", "ADDR", "the daemon: host:port, [IPv6]:port or unix:PATH (default: $STAGD_ADDR, else " SV_DEFAULT_ADDR ")",
     0, NULL},
    {"local", NULL, "run the service in this process; no daemon", 0, NULL},
    {"tls-ca", "FILE", "connect over TLS, trusting the daemon's certificate if this PEM CA signed it", CTL_COMPLETE_FILE, NULL},
    {"tls-cert", "FILE", "with --tls-ca: this client's PEM certificate (a daemon with --tls-client-ca)", CTL_COMPLETE_FILE, NULL},
    {"tls-key", "FILE", "the PEM private key of --tls-cert", CTL_COMPLETE_FILE, NULL},
    {"token-file", "FILE", "send the first line of FILE as the bearer token (default: $STAGD_TOKEN)", CTL_COMPLETE_FILE, NULL},
    {"timeout", "SECONDS", "give up after SECONDS (default: none)", 0, NULL},
    {"json-errors", NULL, "report a failure as one JSON object on stderr (status, message, file, line, column, reason)",
     0, NULL},
    {"color", "WHEN", "color diagnostics: auto (default: on a terminal, unless NO_COLOR is set), always or never",
     CTL_COMPLETE_WORDS, "auto always never"},
    {"version", NULL, "print stagctl's version and exit", 0, NULL},
    {"help", NULL, "print this help and exit", 0, NULL},
    {0}};

#define SHOWS_FILE "FILE may be - for standard input."

const ctl_cmd ctl_commands[] = {
    {"parse", cmd_parse, "FILE", 1, 1, CTL_COMPLETE_FILE, NULL, "print CPython 3.12's ast.dump of FILE",
     "Prints exactly what ast.dump(ast.parse(source)) prints under CPython 3.12. " SHOWS_FILE, parse_opts, false},
    {"unparse", cmd_unparse, "FILE", 1, 1, CTL_COMPLETE_FILE, NULL, "print source whose AST equals FILE's",
     SHOWS_FILE, NULL, false},
    {"convert", cmd_convert, "FILE", 1, 1, CTL_COMPLETE_FILE, NULL, "print the converted module of FILE",
     "The converter's diagnostics go to stderr; an error among them exits 1. " SHOWS_FILE, convert_opts, false},
    {"stage", cmd_stage, "FILE.sexp|FILE.py", 1, 1, CTL_COMPLETE_FILE, NULL,
     "stage an S-expression or Python file and dump the graph",
     "A .py file is Python source that the daemon stages itself (docs/pyfront.md); --entry\n"
     "names its function. " SHOWS_FILE,
     stage_opts, false},
    {"run", cmd_run, "FILE.sexp|FILE.py", 1, 1, CTL_COMPLETE_FILE, NULL, "stage and run a function; print its result as JSON",
     "What graph `print` nodes print goes to stderr. A number in --args that no float64 holds\n"
     "(1e400) or an integer beyond int64 is an error at its position; write \"Infinity\" for an\n"
     "infinite value. " SHOWS_FILE,
     run_opts, false},
    {"grad", cmd_grad, "FILE.sexp|FILE.py", 1, 1, CTL_COMPLETE_FILE, NULL,
     "dump the gradient graph of a function, or with --args print the gradient's value", SHOWS_FILE, grad_opts,
     false},
    {"run-model", cmd_run_model, "NAME", 1, 1, 0, NULL, "run an exported model the daemon serves; print its result as JSON",
     "The daemon serves DIR/NAME/VERSION/ with --models DIR (docs/deploy.md \"Models\"); the\n"
     "arguments are checked against the model's signature.",
     run_model_opts, false},
    {"models", cmd_models, "[NAME]", 0, 1, 0, NULL, "list the exported models the daemon serves, as JSON", NULL, NULL,
     false},
    {"devices", cmd_devices, "", 0, 0, 0, NULL, "list the daemon's devices as JSON", NULL, NULL, false},
    {"health", cmd_health, "[SERVICE]", 0, 1, 0, NULL, "health check as JSON (exit 2 unless SERVING)", NULL, NULL,
     false},
    {"version", cmd_version, "", 0, 0, 0, NULL, "the daemon's version as JSON (stagctl --version: this program's)",
     NULL, NULL, false},
    {"stats", cmd_stats, "", 0, 0, 0, NULL, "request statistics as JSON", NULL, NULL, false},
    {"ping", cmd_ping, "[PAYLOAD]", 0, 1, 0, NULL, "round trip to the daemon, as JSON", NULL, ping_opts, false},
    {"completion", cmd_completion, "SHELL", 1, 1, CTL_COMPLETE_WORDS, "bash zsh",
     "print the completion script for bash or zsh",
     "Load it with: source <(stagctl completion bash)   or, in zsh after compinit,\n"
     "source <(stagctl completion zsh). Both are written from the command table.",
     NULL, true},
    {"help", cmd_help, "[COMMAND]", 0, 1, CTL_COMPLETE_COMMAND, NULL, "show the help of stagctl or of one command", NULL, NULL, true},
};
const size_t ctl_command_count = sizeof ctl_commands / sizeof ctl_commands[0];
