// SPDX-License-Identifier: Apache-2.0
/*
 * stagctl.c — the stagd command line's entry point: global options (the
 * ctl_global_opts rows of commands.c), then one command from the command table,
 * whose arguments cli.c parses. `--help`, `--version`, `COMMAND --help` and `--`
 * behave as in git or kubectl; diagnostics go to stderr (diag.c); exit 0 on success,
 * 1 on bad input, 2 on usage, connection or internal errors.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The value of global option `name` at argv[*i] (`--name V` or `--name=V`): NULL
 * when argv[*i] is not that option; *missing when it lacks its value. */
static const char *global_value(int argc, char **argv, int *i, const char *name, bool *missing) {
  const char *a = argv[*i] + 2;
  size_t n = strlen(name);
  if (strncmp(a, name, n)) return NULL;
  if (a[n] == '=') return a + n + 1;
  if (a[n]) return NULL;
  if (*i + 1 >= argc) {
    *missing = true;
    return NULL;
  }
  return argv[++*i];
}

typedef struct globals {
  const char *addr, *addr_from, *timeout, *color, *token_file;
  bool help, version;
} globals;

/* Parses the global options; returns the index of the command word, or -(exit
 * status + 1) after a usage error. */
static int parse_globals(ctl_ctx *c, globals *g, int argc, char **argv) {
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i], *v;
    bool missing = false;
    if (!strcmp(a, "--")) return i + 1;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) g->help = true;
    else if (!strcmp(a, "--version")) g->version = true;
    else if (!strcmp(a, "--local")) c->rpc.local = true;
    else if (!strcmp(a, "--json-errors")) c->json_errors = true;
    else if ((v = global_value(argc, argv, &i, "addr", &missing))) g->addr = v, g->addr_from = "--addr";
    else if ((v = global_value(argc, argv, &i, "timeout", &missing))) g->timeout = v;
    else if ((v = global_value(argc, argv, &i, "tls-ca", &missing))) c->rpc.tls_ca = v;
    else if ((v = global_value(argc, argv, &i, "tls-cert", &missing))) c->rpc.tls_cert = v;
    else if ((v = global_value(argc, argv, &i, "tls-key", &missing))) c->rpc.tls_key = v;
    else if ((v = global_value(argc, argv, &i, "token-file", &missing))) g->token_file = v;
    else if ((v = global_value(argc, argv, &i, "color", &missing))) g->color = v;
    else if (missing) return -1 - ctl_usage_error(NULL, "option '%s' needs a value", a);
    else if (a[1]) {
      const char *eq = strchr(a, '=');
      return -1 - ctl_usage_error(NULL, "unknown option '%.*s'", eq ? (int)(eq - a) : (int)strlen(a), a);
    } else {
      break; /* "-": not an option */
    }
  }
  return i;
}

/* The bearer token: the first non-empty line of --token-file, else $STAGD_TOKEN
 * (trimmed); false after a usage error. */
static bool read_token(ctl_ctx *c, const globals *g) {
  const char *env = getenv("STAGD_TOKEN");
  char buf[4096];
  const char *t = env && *env ? env : NULL;
  if (g->token_file) {
    FILE *f = fopen(g->token_file, "r");
    if (!f) {
      ctl_usage_error(NULL, "--token-file %s: %s", g->token_file, strerror(errno));
      return false;
    }
    t = NULL;
    while (!t && fgets(buf, sizeof buf, f)) {
      char *p = buf, *e = buf + strlen(buf);
      while (e > p && isspace((unsigned char)e[-1])) *--e = '\0';
      while (isspace((unsigned char)*p)) p++;
      if (*p) t = p;
    }
    fclose(f);
    if (!t) {
      ctl_usage_error(NULL, "--token-file %s holds no token", g->token_file);
      return false;
    }
  }
  if (t) {
    while (isspace((unsigned char)*t)) t++;
    size_t n = strlen(t);
    while (n && isspace((unsigned char)t[n - 1])) n--;
    c->rpc.token = n ? sg_xstrndup(t, n) : NULL;
  }
  return true;
}

/* Applies --color, --timeout and the address; false after a usage error. */
static bool apply_globals(ctl_ctx *c, const globals *g) {
  ctl_color_mode mode = CTL_COLOR_AUTO;
  if (g->color) {
    if (!strcmp(g->color, "always")) mode = CTL_COLOR_ALWAYS;
    else if (!strcmp(g->color, "never")) mode = CTL_COLOR_NEVER;
    else if (strcmp(g->color, "auto")) {
      ctl_color_init(CTL_COLOR_AUTO);
      ctl_usage_error(NULL, "--color expects auto, always or never, got '%s'", g->color);
      return false;
    }
  }
  ctl_color_init(mode);
  if (g->timeout) {
    char *end;
    c->rpc.timeout_s = strtod(g->timeout, &end);
    if (!*g->timeout || *end || !(c->rpc.timeout_s > 0 && c->rpc.timeout_s < 1e9)) {
      ctl_usage_error(NULL, "--timeout expects a positive number of seconds, got '%s'", g->timeout);
      return false;
    }
  }
  if (!c->rpc.tls_cert != !c->rpc.tls_key) {
    ctl_usage_error(NULL, "--tls-cert and --tls-key go together (this client's certificate and its key)");
    return false;
  }
  const char *env_addr = getenv("STAGD_ADDR");
  c->rpc.addr = g->addr ? g->addr : env_addr && *env_addr ? env_addr : SV_DEFAULT_ADDR;
  const char *from = g->addr ? g->addr_from : env_addr && *env_addr ? "$STAGD_ADDR" : NULL;
  char why[256];
  if (from && !c->rpc.local && !ctl_addr_valid(c->rpc.addr, why, sizeof why)) {
    ctl_usage_error(NULL, "%s '%s' %s", from, c->rpc.addr, why);
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  sg_memory_tune_for_reuse();
  ctl_ctx c;
  memset(&c, 0, sizeof c);
  sg_log_set_level(SG_LOG_WARN);
  globals g = {0};
  int i = parse_globals(&c, &g, argc, argv);
  if (i < 0) return -i - 1;
  if (!apply_globals(&c, &g)) return CTL_EXIT_USAGE;
  if (g.help) {
    ctl_print_help(stdout);
    return CTL_EXIT_OK;
  }
  if (g.version) {
    ctl_print_version(stdout);
    return CTL_EXIT_OK;
  }
  if (i >= argc) {
    ctl_print_help(stderr);
    return CTL_EXIT_USAGE;
  }
  const ctl_cmd *cmd = ctl_command_find(argv[i]);
  if (!cmd) {
    const char *near = ctl_command_suggest(argv[i]);
    if (near) return ctl_usage_error(NULL, "unknown command '%s' (did you mean '%s'?)", argv[i], near);
    return ctl_usage_error(NULL, "unknown command '%s'", argv[i]);
  }
  int rc = ctl_parse_command(&c, cmd, argc - i - 1, argv + i + 1);
  if (rc >= 0) return rc;
  if (cmd->offline) return cmd->run(&c);
  if (!read_token(&c, &g)) return CTL_EXIT_USAGE;
  sv_config_init(&c.rpc.cfg);
  sg_arena_init(&c.arena, 0);
  if (ctl_rpc_open(&c.rpc, &c.err) != SG_OK) {
    rc = ctl_report(&c);
  } else {
    rc = cmd->run(&c);
    ctl_rpc_close(&c.rpc);
  }
  free(c.rpc.token);
  fflush(stdout);
  sg_arena_free(&c.arena);
  sg_error_clear(&c.err);
  sv_config_free(&c.rpc.cfg);
  return rc;
}
