// SPDX-License-Identifier: Apache-2.0
/*
 * cli.h — stagctl's one command table and what reads it. Every command and option is
 * a row (name, operands, options with their help and how their values complete);
 * the parser (cli.c), the top-level and per-command --help (help.c) and the bash/zsh
 * completion scripts (completion.c) are all generated from the rows, so a new option
 * is one line in commands.c. Diagnostics (diag.c) print errors compiler style,
 * colored on a terminal unless NO_COLOR says otherwise.
 */
#ifndef STAGD_STAGCTL_CLI_H
#define STAGD_STAGCTL_CLI_H

#include <stdio.h>

#include "rpc.h"

/* Exit status (ARCHITECTURE.md "Command line"): bad input is the user's to fix. */
enum { CTL_EXIT_OK = 0, CTL_EXIT_USER = 1, CTL_EXIT_USAGE = 2 };

/* How a value or operand completes in a shell: free text, a file name, one of a
 * space-separated list of words, or a command name. */
typedef enum { CTL_COMPLETE_NONE, CTL_COMPLETE_FILE, CTL_COMPLETE_WORDS, CTL_COMPLETE_COMMAND } ctl_complete;

typedef struct ctl_opt {
  const char *name;     /* without the leading "--" */
  const char *arg;      /* the value's name in help ("NAME"); NULL: a flag */
  const char *help;     /* one line */
  ctl_complete complete;
  const char *words;    /* CTL_COMPLETE_WORDS: "sexpr text dot json" */
} ctl_opt;

enum { CTL_MAX_OPTS = 16, CTL_MAX_OPERANDS = 4 };

typedef struct ctl_ctx ctl_ctx;

typedef struct ctl_cmd {
  const char *name;
  int (*run)(ctl_ctx *c);
  const char *operands;   /* their synopsis: "FILE.sexp", "[SERVICE]", "" */
  int min_operands, max_operands;
  ctl_complete operand_complete;
  const char *operand_words;
  const char *summary;    /* one line, for the command list */
  const char *details;    /* the rest of `COMMAND --help`, or NULL */
  const ctl_opt *opts;    /* ended by a {0} row; NULL: none */
  bool offline;           /* runs without the service (completion, help) */
} ctl_cmd;

struct ctl_ctx {
  ctl_rpc rpc;
  sg_arena arena;
  sg_error err;
  const char *hint;         /* printed under the error, when set */
  bool json_errors;         /* --json-errors */
  const ctl_cmd *cmd;
  const char *values[CTL_MAX_OPTS]; /* per cmd->opts row: its value, "" for a flag, NULL if absent */
  const char *operands[CTL_MAX_OPERANDS];
  int n_operands;
};

extern const ctl_cmd ctl_commands[];
extern const size_t ctl_command_count;
extern const ctl_opt ctl_global_opts[];

const ctl_cmd *ctl_command_find(const char *name);
/* The closest command name to a misspelt one (edit distance at most 2), or NULL. */
const char *ctl_command_suggest(const char *name);
/* The value of the running command's option `name` (a row of its table). */
const char *ctl_opt_value(const ctl_ctx *c, const char *name);

/* cli.c: fills c->values / c->operands from the command's arguments; --help there
 * prints the command's help. Returns -1 to go on, else the exit status. */
int ctl_parse_command(ctl_ctx *c, const ctl_cmd *cmd, int argc, char **argv);

/* help.c */
void ctl_print_help(FILE *out);
void ctl_print_command_help(FILE *out, const ctl_cmd *cmd);
void ctl_print_version(FILE *out);

/* completion.c: the completion script for shell "bash" or "zsh"; false if unknown. */
bool ctl_print_completion(FILE *out, const char *shell);

/* diag.c */
typedef enum { CTL_COLOR_AUTO, CTL_COLOR_ALWAYS, CTL_COLOR_NEVER } ctl_color_mode;
/* Decides whether stderr gets colors: always / never, or auto: a terminal, NO_COLOR
 * unset or empty, TERM not "dumb". */
void ctl_color_init(ctl_color_mode mode);
/* `stagctl: error: MESSAGE (see stagctl [CMD] --help)`; returns CTL_EXIT_USAGE. cmd may be NULL. */
int ctl_usage_error(const ctl_cmd *cmd, const char *fmt, ...) SG_PRINTF(2, 3);
/* Prints c->err (and c->hint) as a diagnostic or, with --json-errors, as one JSON
 * line; returns the exit status for its code. */
int ctl_report(ctl_ctx *c);
/* One compiler-style diagnostic: FILE:LINE:COL: SEVERITY: MESSAGE (file NULL: no
 * location), then `  hint: HINT` when hint is not empty. */
void ctl_diagnostic(const char *file, int line, int col, const char *severity, const char *message,
                    const char *hint);

/* args_check.c: rejects numbers of a JSON text that no float64 / int64 holds (1e400,
 * 99999999999999999999) at their line and column, with `what` (e.g. "--args") as the
 * file. Returns SG_OK, or SG_INVALID_ARGUMENT with err and *hint set. */
sg_code ctl_check_json_numbers(const char *json, const char *what, sg_error *err, const char **hint);

#endif
