// SPDX-License-Identifier: Apache-2.0
/*
 * completion.c — `stagctl completion bash|zsh`: shell completion scripts written from
 * the command table (commands.c), so they know every command, option and value list
 * the parser knows. The build also writes them next to the binary (stagctl.bash,
 * _stagctl) for packaging. Install (docs/stagctl.md):
 *   bash: source <(stagctl completion bash)       zsh: source <(stagctl completion zsh)
 *   or the files into bash-completion's / a zsh $fpath directory.
 */
#include <string.h>

#include "cli.h"

/* The command names, space-separated. */
static void command_words(FILE *out) {
  for (size_t i = 0; i < ctl_command_count; i++) fprintf(out, "%s%s", i ? " " : "", ctl_commands[i].name);
}

/* ------------------------------------------------------------------- bash */

/* `--a|--b|...`: the case pattern of the options that take a value. */
static void bash_valued_pattern(FILE *out, const ctl_opt *opts) {
  const char *sep = "";
  for (const ctl_opt *o = opts; o && o->name; o++)
    if (o->arg) {
      fprintf(out, "%s--%s", sep, o->name);
      sep = "|";
    }
}

static bool has_valued(const ctl_opt *opts) {
  for (const ctl_opt *o = opts; o && o->name; o++)
    if (o->arg) return true;
  return false;
}

/* `case "$prev" in --opt) ...;; esac` lines completing option values. */
static void bash_value_cases(FILE *out, const ctl_opt *opts, const char *indent) {
  for (const ctl_opt *o = opts; o && o->name; o++) {
    if (!o->arg) continue;
    if (o->complete == CTL_COMPLETE_WORDS)
      fprintf(out, "%s--%s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n", indent, o->name, o->words);
    else if (o->complete == CTL_COMPLETE_FILE)
      fprintf(out, "%s--%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", indent, o->name);
    else
      fprintf(out, "%s--%s) COMPREPLY=(); return ;;\n", indent, o->name);
  }
}

static void print_bash(FILE *out) {
  fprintf(out, "# bash completion for stagctl, written by `stagctl completion bash` from its command table.\n"
               "# Load with: source <(stagctl completion bash)\n"
               "_stagctl() {\n"
               "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
               "  local i cmd=\"\" operands_only=\"\"\n"
               "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
               "    case \"${COMP_WORDS[i]}\" in\n"
               "      ");
  bash_valued_pattern(out, ctl_global_opts);
  fprintf(out, ") ((i++)) ;;\n"
               "      -*) ;;\n"
               "      *) cmd=\"${COMP_WORDS[i]}\"; break ;;\n"
               "    esac\n"
               "  done\n"
               "  if [[ -z $cmd ]]; then\n"
               "    case \"$prev\" in\n");
  bash_value_cases(out, ctl_global_opts, "      ");
  fprintf(out, "    esac\n"
               "    if [[ $cur == -* ]]; then\n"
               "      COMPREPLY=($(compgen -W '");
  for (const ctl_opt *o = ctl_global_opts; o->name; o++) fprintf(out, "%s--%s", o == ctl_global_opts ? "" : " ", o->name);
  fprintf(out, "' -- \"$cur\"))\n"
               "    else\n"
               "      COMPREPLY=($(compgen -W '");
  command_words(out);
  fprintf(out, "' -- \"$cur\"))\n"
               "    fi\n"
               "    return\n"
               "  fi\n"
               "  for ((i++; i < COMP_CWORD; i++)); do [[ ${COMP_WORDS[i]} == -- ]] && operands_only=1; done\n"
               "  case \"$cmd\" in\n");
  for (size_t i = 0; i < ctl_command_count; i++) {
    const ctl_cmd *c = &ctl_commands[i];
    fprintf(out, "    %s)\n", c->name);
    if (has_valued(c->opts)) {
      fprintf(out, "      if [[ -z $operands_only ]]; then\n        case \"$prev\" in\n");
      bash_value_cases(out, c->opts, "          ");
      fprintf(out, "        esac\n      fi\n");
    }
    fprintf(out, "      if [[ -z $operands_only && $cur == -* ]]; then\n        COMPREPLY=($(compgen -W '");
    for (const ctl_opt *o = c->opts; o && o->name; o++) fprintf(out, "--%s ", o->name);
    fprintf(out, "--help' -- \"$cur\"))\n");
    if (c->max_operands > 0 && c->operand_complete == CTL_COMPLETE_FILE)
      fprintf(out, "      else\n        COMPREPLY=($(compgen -f -- \"$cur\"))\n");
    else if (c->max_operands > 0 && c->operand_complete == CTL_COMPLETE_WORDS)
      fprintf(out, "      else\n        COMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n", c->operand_words);
    else if (c->max_operands > 0 && c->operand_complete == CTL_COMPLETE_COMMAND) {
      fprintf(out, "      else\n        COMPREPLY=($(compgen -W '");
      command_words(out);
      fprintf(out, "' -- \"$cur\"))\n");
    }
    fprintf(out, "      fi ;;\n");
  }
  fprintf(out, "  esac\n"
               "}\n"
               "complete -o filenames -o bashdefault -F _stagctl stagctl\n");
}

/* -------------------------------------------------------------------- zsh */

/* Text inside a single-quoted word; in an _arguments spec (spec) [, ], : and \ are
 * special too. */
static void zsh_quoted(FILE *out, const char *s, bool spec) {
  for (; *s; s++) {
    if (*s == '\'') fputs("'\\''", out);
    else if (spec && (*s == '[' || *s == ']' || *s == ':' || *s == '\\')) fprintf(out, "\\%c", *s);
    else fputc(*s, out);
  }
}
static void zsh_text(FILE *out, const char *s) { zsh_quoted(out, s, true); }

/* `'--name=[help]:value:action'` specs, one per line. */
static void zsh_opt_specs(FILE *out, const ctl_opt *opts, const char *indent) {
  for (const ctl_opt *o = opts; o && o->name; o++) {
    fprintf(out, "%s'--%s%s[", indent, o->name, o->arg ? "=" : "");
    zsh_text(out, o->help);
    fprintf(out, "]");
    if (o->arg) {
      fprintf(out, ":");
      zsh_text(out, o->arg);
      if (o->complete == CTL_COMPLETE_FILE) fprintf(out, ":_files");
      else if (o->complete == CTL_COMPLETE_WORDS) fprintf(out, ":(%s)", o->words);
      else fprintf(out, ": ");
    }
    fprintf(out, "' \\\n");
  }
}

static void print_zsh(FILE *out) {
  fprintf(out, "#compdef stagctl\n"
               "# zsh completion for stagctl, written by `stagctl completion zsh` from its command table.\n"
               "# Load with: source <(stagctl completion zsh)   (after compinit), or put it in $fpath as _stagctl.\n"
               "_stagctl() {\n"
               "  local curcontext=\"$curcontext\" state line ret=1\n"
               "  typeset -A opt_args\n"
               "  _arguments -C \\\n");
  zsh_opt_specs(out, ctl_global_opts, "    ");
  fprintf(out, "    '1:command:->command' \\\n"
               "    '*::argument:->argument' && ret=0\n"
               "  case $state in\n"
               "    command)\n"
               "      local -a commands\n"
               "      commands=(\n");
  for (size_t i = 0; i < ctl_command_count; i++) {
    fprintf(out, "        '%s:", ctl_commands[i].name);
    zsh_quoted(out, ctl_commands[i].summary, false); /* _describe: only the name's colons matter */
    fprintf(out, "'\n");
  }
  fprintf(out, "      )\n"
               "      _describe -t commands 'stagctl command' commands && ret=0 ;;\n"
               "    argument)\n"
               "      curcontext=\"${curcontext%%:*:*}:stagctl-$line[1]:\"\n"
               "      case $line[1] in\n");
  for (size_t i = 0; i < ctl_command_count; i++) {
    const ctl_cmd *c = &ctl_commands[i];
    fprintf(out, "        %s)\n          _arguments \\\n", c->name);
    zsh_opt_specs(out, c->opts, "            ");
    fprintf(out, "            '(- *)--help[show the help of %s]'", c->name);
    if (c->max_operands > 0) {
      fprintf(out, " \\\n            '*:");
      zsh_text(out, c->operands);
      if (c->operand_complete == CTL_COMPLETE_FILE) fprintf(out, ":_files'");
      else if (c->operand_complete == CTL_COMPLETE_WORDS) fprintf(out, ":(%s)'", c->operand_words);
      else if (c->operand_complete == CTL_COMPLETE_COMMAND) {
        fprintf(out, ":(");
        command_words(out);
        fprintf(out, ")'");
      }
      else fprintf(out, ": '");
    }
    fprintf(out, " && ret=0 ;;\n");
  }
  fprintf(out, "      esac ;;\n"
               "  esac\n"
               "  return ret\n"
               "}\n"
               "if [[ $funcstack[1] == _stagctl ]]; then\n"
               "  _stagctl \"$@\"\n"
               "else\n"
               "  compdef _stagctl stagctl\n"
               "fi\n");
}

bool ctl_print_completion(FILE *out, const char *shell) {
  if (!strcmp(shell, "bash")) print_bash(out);
  else if (!strcmp(shell, "zsh")) print_zsh(out);
  else return false;
  return true;
}
