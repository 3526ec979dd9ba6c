// SPDX-License-Identifier: Apache-2.0
/*
 * help.c — `stagctl --help`, `stagctl COMMAND --help` and `stagctl --version`, all
 * written from the command table (commands.c), so they never disagree with the
 * parser.
 */
#include <string.h>

#include "cli.h"

#ifndef STAGD_VERSION
#define STAGD_VERSION "0.0.0"
#endif

void ctl_print_version(FILE *out) { fprintf(out, "stagctl %s (API stagd.v1)\n", STAGD_VERSION); }

/* `--name ARG` padded to a column, then the help text. */
static void print_opts(FILE *out, const ctl_opt *opts) {
  for (const ctl_opt *o = opts; o && o->name; o++) {
    char head[64];
    snprintf(head, sizeof head, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    fprintf(out, "  %-22s %s\n", head, o->help);
  }
}

/* `run FILE.sexp [--entry NAME] [--args JSON] ...` */
static void print_synopsis(FILE *out, const ctl_cmd *cmd) {
  fprintf(out, "%s", cmd->name);
  if (*cmd->operands) fprintf(out, " %s", cmd->operands);
  for (const ctl_opt *o = cmd->opts; o && o->name; o++)
    fprintf(out, " [--%s%s%s]", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

void ctl_print_help(FILE *out) {
  fprintf(out, "usage: stagctl [OPTIONS] COMMAND [ARGS]\n\n"
               "The stagd command line: talks gRPC to a daemon, or runs the service in-process with\n"
               "--local.\n\noptions:\n");
  print_opts(out, ctl_global_opts);
  fprintf(out, "\ncommands:\n");
  for (size_t i = 0; i < ctl_command_count; i++)
    fprintf(out, "  %-12s %s\n", ctl_commands[i].name, ctl_commands[i].summary);
  fprintf(out, "\n`stagctl COMMAND --help` describes a command and its options.\n"
               "Diagnostics go to stderr as FILE:LINE:COL: error: MESSAGE, colored on a terminal\n"
               "unless NO_COLOR is set (--color to choose).\n"
               "Exit status: 0 success, 1 bad input, 2 usage, connection or internal error.\n"
               "The default address is $STAGD_ADDR, else %s.\n",
          SV_DEFAULT_ADDR);
}

void ctl_print_command_help(FILE *out, const ctl_cmd *cmd) {
  fprintf(out, "usage: stagctl [OPTIONS] ");
  print_synopsis(out, cmd);
  fprintf(out, "\n\n%s.\n", cmd->summary);
  if (cmd->details) fprintf(out, "\n%s\n", cmd->details);
  if (cmd->opts && cmd->opts[0].name) {
    fprintf(out, "\noptions:\n");
    print_opts(out, cmd->opts);
  }
  fprintf(out, "  %-22s %s\n", "--help", "show this help");
  fprintf(out, "\n`--` ends the options: what follows is an operand even if it starts with '-'.\n"
               "`stagctl --help` lists the global options (--addr, --local, ...).\n");
}
