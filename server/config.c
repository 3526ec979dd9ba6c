// SPDX-License-Identifier: Apache-2.0
/*
 * config.c — the daemon's configuration: one option table read from three sources.
 *
 * Precedence, lowest first: built-in defaults, the config file (--config FILE or
 * STAGD_CONFIG), STAGD_* environment variables, command-line flags. Every option has
 * one row below giving its flag, its environment variable, its file key (the flag
 * without dashes) and its help text, so the three sources can never disagree.
 * List options (--listen, --lsp-listen) are replaced, not merged, by a higher source.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sv.h"

#ifndef STAGD_VERSION
#define STAGD_VERSION "0.0.0"
#endif

typedef enum opt_kind { OPT_LIST, OPT_STRING, OPT_BOOL, OPT_UINT, OPT_INT, OPT_LEVEL, OPT_LOG_FORMAT } opt_kind;

typedef struct opt {
  const char *name; /* flag without "--"; also the config-file key */
  const char *env;  /* environment variable, or NULL */
  opt_kind kind;
  size_t offset;
  const char *arg;  /* argument name for --help */
  const char *help;
} opt;

#define OFF(f) offsetof(sv_config, f)
static const opt options[] = {
    {"listen", "STAGD_LISTEN", OPT_LIST, OFF(listen), "ADDR",
     "serve gRPC on ADDR: host:port or unix:PATH; repeatable (env: comma-separated); "
     "port 0 picks a free port; default " SV_DEFAULT_ADDR " (none with --lsp --stdio)"},
    {"lsp", NULL, OPT_BOOL, OFF(lsp), NULL, "serve the Language Server Protocol (with --stdio or --lsp-listen)"},
    {"stdio", NULL, OPT_BOOL, OFF(stdio), NULL, "with --lsp: speak LSP on stdin/stdout"},
    {"lsp-listen", "STAGD_LSP_LISTEN", OPT_LIST, OFF(lsp_listen), "ADDR",
     "serve LSP over TCP on host:port; repeatable"},
    {"device", "STAGD_DEVICE", OPT_STRING, OFF(device), "DEV",
     "default device: auto, cpu, vulkan or vulkan:N (default auto)"},
    {"workers", "STAGD_WORKERS", OPT_INT, OFF(workers), "N",
     "worker threads that run requests (default: CPU count, at least 2)"},
    {"log-level", "STAGD_LOG_LEVEL", OPT_LEVEL, OFF(log_level), "LEVEL",
     "debug, info, warn or error (default info); logs go to stderr"},
    {"log-format", "STAGD_LOG_FORMAT", OPT_LOG_FORMAT, OFF(log_format), "FMT",
     "text (for people) or json (one object per line: time, level, message, method, "
     "status, session, duration_ms; for log collectors) (default text)"},
    {"metrics-listen", "STAGD_METRICS_LISTEN", OPT_STRING, OFF(metrics_listen), "ADDR",
     "serve Prometheus metrics at http://ADDR/metrics (host:port; port 0 picks a free "
     "port); default: no metrics endpoint"},
    {"models", "STAGD_MODELS", OPT_STRING, OFF(models_dir), "DIR",
     "serve the exported models DIR/NAME/VERSION/ by name (RunModel, ListModels); new "
     "versions are picked up while serving"},
    {"models-poll-ms", "STAGD_MODELS_POLL_MS", OPT_UINT, OFF(models_poll_ms), "N",
     "how often --models DIR is scanned for new or removed versions; 0 = only at start "
     "(default 2000)"},
    {"max-message-bytes", "STAGD_MAX_MESSAGE_BYTES", OPT_UINT, OFF(max_message_bytes), "N",
     "largest request accepted, in bytes, on any transport (default 67108864)"},
    {"deadline-ms", "STAGD_DEADLINE_MS", OPT_UINT, OFF(deadline_ms), "N",
     "longest time one request may run; clients may ask for less; 0 = no limit (default 600000)"},
    {"shutdown-timeout-ms", "STAGD_SHUTDOWN_TIMEOUT_MS", OPT_UINT, OFF(shutdown_timeout_ms), "N",
     "on SIGINT/SIGTERM, how long in-flight requests may take before they are cancelled "
     "(default 10000)"},
    {"max-ping-delay-ms", "STAGD_MAX_PING_DELAY_MS", OPT_UINT, OFF(max_ping_delay_ms), "N",
     "upper bound of Ping's delay (default 10000)"},
    {"max-handle-bytes", "STAGD_MAX_HANDLE_BYTES", OPT_UINT, OFF(max_handle_bytes), "N",
     "tensor bytes the eager clients' handles may hold, per device (default 4294967296)"},
    {"max-request-bytes", "STAGD_MAX_REQUEST_BYTES", OPT_UINT, OFF(max_request_bytes), "N",
     "tensor bytes one request's program may hold at once (its intermediates); more is "
     "RESOURCE_EXHAUSTED naming this flag; 0 = no limit (default 4294967296)"},
    {"max-session-requests", "STAGD_MAX_SESSION_REQUESTS", OPT_UINT, OFF(max_session_requests), "N",
     "requests one client session (its stagd-session metadata under its token) may "
     "have running or queued at once; more are RESOURCE_EXHAUSTED naming this flag; health, "
     "ping, stats and version do not count; 0 = no limit (default 16)"},
    {"max-unnamed-requests", "STAGD_MAX_UNNAMED_REQUESTS", OPT_UINT, OFF(max_unnamed_requests), "N",
     "the same for calls without a stagd-session: counted per token, or per client address "
     "without tokens (many processes of one host, e.g. stagctl calls, share it); "
     "0 = no limit (default 256)"},
    {"max-handles", "STAGD_MAX_HANDLES", OPT_UINT, OFF(max_handles), "N",
     "live tensor handles per device (default 1000000)"},
    {"handle-lease-ms", "STAGD_HANDLE_LEASE_MS", OPT_UINT, OFF(handle_lease_ms), "N",
     "a client session's handles are released after N ms without a call from it (its "
     "process died); 0 = never (default 300000)"},
    {"max-session-handle-bytes", "STAGD_MAX_SESSION_HANDLE_BYTES", OPT_UINT, OFF(max_session_handle_bytes), "N",
     "tensor bytes the handles of one client session may hold, over all devices, so that one "
     "client cannot take the whole --max-handle-bytes (default 1073741824)"},
    {"max-session-bytes", "STAGD_MAX_SESSION_BYTES", OPT_UINT, OFF(max_session_bytes), "N",
     "tensor bytes one client session may hold at once: its handles and the tensors of all "
     "its running requests; more is RESOURCE_EXHAUSTED naming this flag; 0 = no limit "
     "(default 8589934592)"},
    {"tls-cert", "STAGD_TLS_CERT", OPT_STRING, OFF(tls_cert), "FILE",
     "serve gRPC and LSP TCP over TLS with this PEM certificate (chain); needs --tls-key"},
    {"tls-key", "STAGD_TLS_KEY", OPT_STRING, OFF(tls_key), "FILE", "the PEM private key of --tls-cert"},
    {"tls-client-ca", "STAGD_TLS_CLIENT_CA", OPT_STRING, OFF(tls_client_ca), "FILE",
     "mutual TLS: clients must present a certificate signed by a CA in this PEM file"},
    {"auth-token-file", "STAGD_AUTH_TOKEN_FILE", OPT_STRING, OFF(auth_token_file), "FILE",
     "require a bearer token from FILE (one per line; reread on SIGHUP): gRPC metadata "
     "'authorization: Bearer TOKEN', LSP TCP initializationOptions.token"},
    {"insecure", NULL, OPT_BOOL, OFF(insecure), NULL,
     "serve a non-loopback --listen/--lsp-listen address without TLS and tokens (anyone who "
     "can connect may use the daemon), or --metrics-listen without tokens; refused otherwise"},
    {"lsp-max-requests", "STAGD_LSP_MAX_REQUESTS", OPT_UINT, OFF(lsp_max_requests), "N",
     "requests one LSP connection may have sent and not yet had answered; one more is the "
     "JSON-RPC error -32803 'server busy'; 0 = no limit (default 64)"},
    {"lsp-allow-python", "STAGD_LSP_ALLOW_PYTHON", OPT_BOOL, OFF(lsp_allow_python), NULL,
     "let stagd/graph run the document's code in the Python helper for LSP TCP clients too "
     "(stdio clients always may: they are the daemon's own user)"},
    {"lsp-python", "STAGD_LSP_PYTHON", OPT_STRING, OFF(lsp_python), "PATH",
     "the interpreter of stagd/graph's Python helper (default $STAGD_PYTHON, else python3); "
     "TCP clients cannot choose it"},
    {"shm-dir", "STAGD_SHM_DIR", OPT_STRING, OFF(shm_dir), "DIR",
     "the local data path's private directory (created 0700): clients on the unix socket pass "
     "large tensors through files there (default: stagd-UID-HASH.shm in $XDG_RUNTIME_DIR, else "
     "/dev/shm, else the first unix --listen path + '.shm')"},
    {"no-frames", "STAGD_NO_FRAMES", OPT_BOOL, OFF(no_frames), NULL,
     "no framed transport: serve unix --listen sockets over gRPC only (default: also PATH.frames, the "
     "local clients' faster request path, docs/api.md)"},
    {"no-shm", "STAGD_NO_SHM", OPT_BOOL, OFF(no_shm), NULL,
     "turn the local data path off: tensor payloads travel only inside messages"},
    {"host-handles", "STAGD_HOST_HANDLES", OPT_BOOL, OFF(host_handles), NULL,
     "tensor handles on Vulkan devices hold host copies: every eager op uploads its inputs "
     "and downloads its result (the pre-residency behaviour, for comparisons; default false)"},
};
#undef OFF
enum { N_OPTIONS = sizeof options / sizeof options[0] };

static void list_clear(sv_strlist *l) {
  for (size_t i = 0; i < l->len; i++) free(l->items[i]);
  free(l->items);
  l->items = NULL;
  l->len = 0;
}

static void list_add(sv_strlist *l, const char *s, size_t n) {
  l->items = sg_xrealloc(l->items, (l->len + 1) * sizeof *l->items);
  l->items[l->len++] = sg_xstrndup(s, n);
}

void sv_config_init(sv_config *c) {
  memset(c, 0, sizeof *c);
  c->device = sg_xstrdup("auto");
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  c->workers = n < 2 ? 2 : (int)n;
  c->log_level = SG_LOG_INFO;
  c->max_message_bytes = 64u << 20;
  c->deadline_ms = 600000;
  c->shutdown_timeout_ms = 10000;
  c->max_ping_delay_ms = 10000;
  c->max_handle_bytes = 4ULL << 30;
  c->max_handles = 1000000;
  c->max_request_bytes = 4ULL << 30;
  c->max_session_requests = 16;
  c->max_unnamed_requests = 256;
  c->handle_lease_ms = 300000;
  c->max_session_handle_bytes = 1ULL << 30;
  c->max_session_bytes = 8ULL << 30;
  c->lsp_max_requests = 64;
  c->models_poll_ms = 2000;
}

void sv_config_free(sv_config *c) {
  list_clear(&c->listen);
  list_clear(&c->lsp_listen);
  free(c->device);
  free(c->config_file);
  free(c->metrics_listen);
  free(c->models_dir);
  free(c->tls_cert);
  free(c->tls_key);
  free(c->tls_client_ca);
  free(c->auth_token_file);
  free(c->lsp_python);
  free(c->shm_dir);
  memset(c, 0, sizeof *c);
}

static const opt *find_option(const char *name, size_t len) {
  for (size_t i = 0; i < N_OPTIONS; i++)
    if (strlen(options[i].name) == len && memcmp(options[i].name, name, len) == 0) return &options[i];
  return NULL;
}

/* Which list options a source has already replaced (so repeats append). */
typedef struct source_state {
  bool replaced[N_OPTIONS];
} source_state;

/* Sets option o from text value. `where` names the source in errors. */
static sg_code set_option(sv_config *c, const opt *o, const char *value, source_state *st,
                          const char *where, sg_error *err) {
  void *field = (char *)c + o->offset;
  switch (o->kind) {
    case OPT_LIST: {
      sv_strlist *l = field;
      size_t idx = (size_t)(o - options);
      if (!st->replaced[idx]) {
        list_clear(l);
        st->replaced[idx] = true;
      }
      /* comma-separated in env and file values; each piece is one address */
      const char *p = value;
      for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        while (n && isspace((unsigned char)*p)) p++, n--;
        while (n && isspace((unsigned char)p[n - 1])) n--;
        if (n == 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: empty address for %s", where, o->name);
        list_add(l, p, n);
        if (!comma) break;
        p = comma + 1;
      }
      if (l == &c->listen) c->listen_explicit = true;
      return SG_OK;
    }
    case OPT_STRING:
      free(*(char **)field);
      *(char **)field = sg_xstrdup(value);
      return SG_OK;
    case OPT_BOOL:
      if (!strcmp(value, "1") || !strcmp(value, "true") || !strcmp(value, "yes") || !strcmp(value, "on")) {
        *(bool *)field = true;
      } else if (!strcmp(value, "0") || !strcmp(value, "false") || !strcmp(value, "no") || !strcmp(value, "off")) {
        *(bool *)field = false;
      } else {
        return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: %s expects true or false, got '%s'", where, o->name, value);
      }
      return SG_OK;
    case OPT_UINT:
    case OPT_INT: {
      char *end;
      errno = 0;
      unsigned long long v = strtoull(value, &end, 10);
      if (!*value || *end || errno || value[0] == '-' ||
          (o->kind == OPT_INT && (v < 1 || v > 1024)))
        return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: %s expects %s, got '%s'", where, o->name,
                            o->kind == OPT_INT ? "a whole number from 1 to 1024" : "a whole number",
                            value);
      if (o->kind == OPT_INT) *(int *)field = (int)v;
      else *(uint64_t *)field = v;
      return SG_OK;
    }
    case OPT_LOG_FORMAT:
      if (!sg_log_parse_format(value, (sg_log_format *)field))
        return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: %s expects text or json, got '%s'", where,
                            o->name, value);
      return SG_OK;
    case OPT_LEVEL:
      if (!sg_log_parse_level(value, (sg_log_level *)field))
        return sg_error_set(err, SG_INVALID_ARGUMENT,
                            "%s: %s expects debug, info, warn or error, got '%s'", where, o->name, value);
      return SG_OK;
  }
  return sg_error_set(err, SG_INTERNAL, "bad option kind");
}

static sg_code load_file(sv_config *c, const char *path, sg_error *err) {
  FILE *f = fopen(path, "r");
  if (!f) return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: cannot open config file: %s", path, strerror(errno));
  source_state st = {{0}};
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int lineno = 0;
  sg_code rc = SG_OK;
  while (rc == SG_OK && (n = getline(&line, &cap, f)) >= 0) {
    lineno++;
    char *p = line, *e = line + n;
    while (e > p && isspace((unsigned char)e[-1])) *--e = '\0';
    while (isspace((unsigned char)*p)) p++;
    if (!*p || *p == '#') continue;
    char *eq = strchr(p, '=');
    char where[512];
    snprintf(where, sizeof where, "%s:%d", path, lineno);
    if (!eq) {
      rc = sg_error_set_at(err, SG_INVALID_ARGUMENT, path, lineno, 1,
                           "expected 'key = value', got '%s'", p);
      break;
    }
    char *k = p, *ke = eq;
    while (ke > k && isspace((unsigned char)ke[-1])) ke--;
    char *v = eq + 1;
    while (isspace((unsigned char)*v)) v++;
    const opt *o = find_option(k, (size_t)(ke - k));
    if (!o) {
      *ke = '\0';
      rc = sg_error_set_at(err, SG_INVALID_ARGUMENT, path, lineno, 1, "unknown option '%s'", k);
      break;
    }
    rc = set_option(c, o, v, &st, where, err);
    if (rc != SG_OK) {
      /* keep the message, add the location */
      char *msg = sg_xstrdup(err->message);
      const char *tail = strstr(msg, ": ");
      sg_error_set_at(err, rc, path, lineno, (int)(v - line) + 1, "%s", tail ? tail + 2 : msg);
      free(msg);
    }
  }
  free(line);
  fclose(f);
  return rc;
}

void sv_config_print_help(FILE *out) {
  fprintf(out,
          "usage: stagd [OPTION]...\n"
          "stagd " STAGD_VERSION " — converts Python into staged programs and runs them on GPUs.\n\n"
          "Serves the stagd.v1 API over gRPC and the Language Server Protocol.\n\n"
          "Options (each also readable from an environment variable and a config file):\n");
  for (size_t i = 0; i < N_OPTIONS; i++) {
    const opt *o = &options[i];
    char flag[64];
    snprintf(flag, sizeof flag, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    fprintf(out, "  %-26s %s", flag, o->help);
    if (o->env) fprintf(out, " [env %s]", o->env);
    fputc('\n', out);
  }
  fprintf(out,
          "  %-26s %s\n  %-26s %s\n  %-26s %s\n\n",
          "--config FILE", "read options from FILE: lines 'key = value' with the long option names, '#' comments [env STAGD_CONFIG]",
          "--help", "print this help and exit",
          "--version", "print the version and exit");
  fprintf(out,
          "Precedence: defaults < config file < environment < flags.\n"
          "Signals: SIGINT or SIGTERM stop accepting requests, let in-flight ones finish\n"
          "within --shutdown-timeout-ms, and exit 0.\n"
          "Examples:\n"
          "  stagd --listen 0.0.0.0:7420 --tls-cert c.pem --tls-key k.pem --auth-token-file tokens\n"
          "  stagd --lsp --stdio            # spawned by an editor\n");
}

bool sv_addr_is_local(const char *a) {
  if (!strncmp(a, "unix:", 5)) return true;
  const char *colon = strrchr(a, ':');
  size_t n = colon ? (size_t)(colon - a) : strlen(a);
  char host[256];
  if (n >= sizeof host) return false;
  memcpy(host, a, n);
  host[n] = '\0';
  if (!strcmp(host, "[::1]") || !strcmp(host, "::1") || !strcmp(host, "localhost")) return true;
  unsigned b[4];
  char tail;
  return sscanf(host, "%u.%u.%u.%u%c", &b[0], &b[1], &b[2], &b[3], &tail) == 4 && b[0] == 127 && b[1] < 256 &&
         b[2] < 256 && b[3] < 256;
}

/* A non-loopback address needs TLS and tokens, or the operator's explicit --insecure. */
static sg_code check_exposure(const sv_config *c, const sv_strlist *l, const char *flag, sg_error *err) {
  bool protected_ = c->tls_cert && c->auth_token_file;
  for (size_t i = 0; i < l->len && !protected_ && !c->insecure; i++)
    if (!sv_addr_is_local(l->items[i]))
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "%s %s is reachable from other machines: serve it with TLS and tokens "
                          "(--tls-cert FILE --tls-key FILE --auth-token-file FILE), or pass --insecure to "
                          "serve it unprotected on a network you trust (docs/security.md)",
                          flag, l->items[i]);
  return SG_OK;
}

/* auto | cpu | vulkan | vulkan:N — whether device N exists is checked when it is used. */
static bool valid_device(const char *d) {
  if (!strcmp(d, "auto") || !strcmp(d, "cpu") || !strcmp(d, "vulkan")) return true;
  if (strncmp(d, "vulkan:", 7) != 0 || !d[7]) return false;
  for (const char *p = d + 7; *p; p++)
    if (*p < '0' || *p > '9') return false;
  return strlen(d + 7) <= 4;
}

sg_code sv_config_load(sv_config *c, int argc, char **argv, bool *exit_now, int *exit_code,
                       sg_error *err) {
  *exit_now = false;
  *exit_code = 0;

  /* 1. The config file: --config on the command line wins over STAGD_CONFIG. */
  const char *file = getenv("STAGD_CONFIG");
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--config")) {
      if (i + 1 >= argc) return sg_error_set(err, SG_INVALID_ARGUMENT, "option '--config' needs a FILE");
      file = argv[++i];
    } else if (!strncmp(argv[i], "--config=", 9)) {
      file = argv[i] + 9;
    }
  }
  if (file && *file) {
    sg_code rc = load_file(c, file, err);
    if (rc != SG_OK) return rc;
    free(c->config_file);
    c->config_file = sg_xstrdup(file);
  }

  /* 2. Environment. */
  source_state env_state = {{0}};
  for (size_t i = 0; i < N_OPTIONS; i++) {
    const char *v = options[i].env ? getenv(options[i].env) : NULL;
    if (!v || !*v) continue;
    sg_code rc = set_option(c, &options[i], v, &env_state, options[i].env, err);
    if (rc != SG_OK) return rc;
  }

  /* 3. Flags: --name VALUE, --name=VALUE, --bool-flag. */
  source_state flag_state = {{0}};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      sv_config_print_help(stdout);
      *exit_now = true;
      return SG_OK;
    }
    if (!strcmp(a, "--version")) {
      printf("stagd %s\n", STAGD_VERSION);
      *exit_now = true;
      return SG_OK;
    }
    if (!strcmp(a, "--config")) {
      i++;
      continue;
    }
    if (!strncmp(a, "--config=", 9)) continue;
    if (strncmp(a, "--", 2) != 0)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "unexpected argument '%s' (see --help)", a);
    const char *name = a + 2;
    const char *eq = strchr(name, '=');
    size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
    const opt *o = find_option(name, nlen);
    if (!o) return sg_error_set(err, SG_INVALID_ARGUMENT, "unknown option '--%.*s' (see --help)", (int)nlen, name);
    const char *value;
    if (o->kind == OPT_BOOL) {
      value = eq ? eq + 1 : "true";
    } else if (eq) {
      value = eq + 1;
    } else {
      if (i + 1 >= argc) return sg_error_set(err, SG_INVALID_ARGUMENT, "option '--%s' needs a value", o->name);
      value = argv[++i];
    }
    char where[80];
    snprintf(where, sizeof where, "--%s", o->name);
    sg_code rc = set_option(c, o, value, &flag_state, where, err);
    if (rc != SG_OK) return rc;
  }

  /* Consistency. */
  if (c->stdio && !c->lsp)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "--stdio needs --lsp (stdio serves only the Language Server Protocol)");
  if (c->lsp && !c->stdio && c->lsp_listen.len == 0)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "--lsp needs --stdio or --lsp-listen ADDR");
  if (!valid_device(c->device))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "--device expects auto, cpu, vulkan or vulkan:N, got '%s'", c->device);
  if (c->metrics_listen && !*c->metrics_listen)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "--metrics-listen expects host:port, got an empty value");
  if (c->models_dir && !*c->models_dir)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "--models expects a directory, got an empty value");
  if (c->max_message_bytes < 64)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "--max-message-bytes must be at least 64");
  if (!c->tls_cert != !c->tls_key)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "--tls-cert and --tls-key go together (the certificate and its key)");
  if (c->tls_client_ca && !c->tls_cert)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)");
  sg_code rc;
  if ((rc = check_exposure(c, &c->listen, "--listen", err)) || (rc = check_exposure(c, &c->lsp_listen, "--lsp-listen", err)))
    return rc;
  /* gRPC on the default address unless the only job is LSP on stdio. */
  if (c->listen.len == 0 && !(c->lsp && c->stdio)) list_add(&c->listen, SV_DEFAULT_ADDR, strlen(SV_DEFAULT_ADDR));
  return SG_OK;
}
