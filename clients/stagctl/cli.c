// SPDX-License-Identifier: Apache-2.0
/*
 * cli.c — parses a command's arguments by its row of the command table (cli.h):
 * `--name value`, `--name=value`, `--flag`, `--` (everything after it is an operand,
 * so a file may be named `--x.sexp`), `-` as an operand (standard input), and
 * `--help` / `-h` for the command's own help. Also finds commands by name and
 * suggests one for a typo.
 */
#include <assert.h>
#include <string.h>

#include "cli.h"

const ctl_cmd *ctl_command_find(const char *name) {
  for (size_t i = 0; i < ctl_command_count; i++)
    if (!strcmp(ctl_commands[i].name, name)) return &ctl_commands[i];
  return NULL;
}

/* Levenshtein distance of two short strings (capped inputs: names are short). */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 31 || lb > 31) return 99;
  size_t d[32][32];
  for (size_t i = 0; i <= la; i++) d[i][0] = i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
      d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
  return d[la][lb];
}

const char *ctl_command_suggest(const char *name) {
  const char *best = NULL;
  size_t best_d = 3;
  for (size_t i = 0; i < ctl_command_count; i++) {
    size_t d = edit_distance(name, ctl_commands[i].name);
    if (d < best_d) {
      best_d = d;
      best = ctl_commands[i].name;
    }
  }
  return best;
}

const char *ctl_opt_value(const ctl_ctx *c, const char *name) {
  for (int i = 0; c->cmd->opts && c->cmd->opts[i].name; i++)
    if (!strcmp(c->cmd->opts[i].name, name)) return c->values[i];
  assert(!"ctl_opt_value: the command has no such option");
  return NULL;
}

static int find_opt(const ctl_cmd *cmd, const char *name, size_t len) {
  for (int i = 0; cmd->opts && cmd->opts[i].name; i++)
    if (strlen(cmd->opts[i].name) == len && !strncmp(cmd->opts[i].name, name, len)) return i;
  return -1;
}

int ctl_parse_command(ctl_ctx *c, const ctl_cmd *cmd, int argc, char **argv) {
  c->cmd = cmd;
  c->n_operands = 0;
  memset(c->values, 0, sizeof c->values);
  /* --help wins wherever it is (before a `--`), like git and kubectl */
  for (int i = 0; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      ctl_print_command_help(stdout, cmd);
      return CTL_EXIT_OK;
    }
  bool operands_only = false;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!operands_only && !strcmp(a, "--")) {
      operands_only = true;
    } else if (!operands_only && a[0] == '-' && a[1] == '-') {
      const char *eq = strchr(a, '=');
      size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
      int k = find_opt(cmd, a + 2, len);
      if (k < 0) return ctl_usage_error(cmd, "%s: unknown option '%.*s'", cmd->name, (int)len + 2, a);
      const ctl_opt *o = &cmd->opts[k];
      if (!o->arg) {
        if (eq) return ctl_usage_error(cmd, "%s: option '--%s' takes no value", cmd->name, o->name);
        c->values[k] = "";
      } else if (eq) {
        c->values[k] = eq + 1;
      } else if (i + 1 < argc) {
        c->values[k] = argv[++i];
      } else {
        return ctl_usage_error(cmd, "%s: option '--%s' needs a value (%s)", cmd->name, o->name, o->arg);
      }
    } else if (!operands_only && a[0] == '-' && a[1] != 0) {
      return ctl_usage_error(cmd, "%s: unknown option '%s'", cmd->name, a);
    } else {
      if (c->n_operands >= cmd->max_operands)
        return ctl_usage_error(cmd, "%s: unexpected argument '%s'", cmd->name, a);
      c->operands[c->n_operands++] = a;
    }
  }
  if (c->n_operands < cmd->min_operands)
    return ctl_usage_error(cmd, "%s: expected %s", cmd->name, cmd->operands);
  return -1;
}
