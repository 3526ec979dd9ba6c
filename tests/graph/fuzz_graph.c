// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_graph.c — libFuzzer target for the staged-program pipeline: the S-expression
 * reader, lowering, type inference, the optimizer, AD (`grad`), the dumps, the CPU
 * executor and the JSON value reader, through the entry points the daemon's Stage,
 * Execute, Grad and DumpGraph handlers call (gr_stage, gr_execute_json,
 * gr_grad_program, gr_program_dump).
 *
 * Input, mode 1 (anything not starting with "json\n"): S-expression source. Comment
 * lines that start with ";;" are directives for the fuzzer (the reader skips them):
 *   ;;args JSON     arguments for Execute (default: none)
 *   ;;entry NAME    the def to stage as entry
 *   ;;grad I ...    also stage the gradient of the entry w.r.t. parameters I (Grad)
 *   ;;noopt         stage without the optimizer
 * Mode 2 ("json\n" then text): the JSON value reader alone (gr_json_args).
 *
 * Properties (a violation aborts with a description):
 *   - no crash, leak, or undefined behaviour (ASan, LSan, UBSan);
 *   - every failure carries a non-empty message; a staging error that is
 *     INVALID_ARGUMENT carries this file name and a line/column inside the input;
 *   - every dump of a staged program (sexpr, text, dot, json) is non-empty, and the
 *     sexpr dump stages again to the same program id (docs/graph.md);
 *   - the optimizer keeps meaning: a program that runs gives the same result and
 *     printed text staged with and without it (ignored when the plain one fails);
 *   - JSON values round-trip: parse → print → parse → print gives the same text.
 * Limits keep runs short and small: tensors of at most 2^20 elements (KN_MAX_ELEMENTS
 * is overridden when this file is built, tests/graph/CMakeLists.txt), a 20,000-node
 * graph limit, a 200 ms deadline for each execution and a call depth of 200.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr.h"
#include "gr.h"
#include "gr_ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FILE "fuzz.sexp"
#define FUZZ_DEADLINE_NS 200000000ull

static void die(const char *what, const char *detail, const char *input) {
  fprintf(stderr, "fuzz_graph: %s\n--- detail:\n%s\n--- input:\n%s\n", what, detail ? detail : "(none)",
          input ? input : "");
  abort();
}

/* A failure must say why. */
static void check_message(const sg_error *e, const char *stage, const char *input) {
  if (!e->message || !*e->message) die("failure without a message", stage, input);
}

/* A staging error about the input points inside it: this file, 1 ≤ line ≤ lines. */
static void check_location(const sg_error *e, const char *src, size_t len) {
  if (e->code != SG_INVALID_ARGUMENT) return;
  int lines = 1;
  for (size_t i = 0; i < len; i++) lines += src[i] == '\n';
  char *msg = sg_error_format(e);
  if (!e->file || strcmp(e->file, FUZZ_FILE) || e->line < 1 || e->line > lines || e->col < 1)
    die("staging error without a location inside the input", msg, src);
  free(msg);
}

/* The value of directive `name` (";;name VALUE" at the start of a line), copied; NULL
 * when absent. */
static char *directive(const char *src, const char *name) {
  size_t nl = strlen(name);
  for (const char *p = src; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    if (strncmp(p, ";;", 2) || strncmp(p + 2, name, nl)) continue;
    const char *v = p + 2 + nl, *end = strchr(v, '\n');
    if (*v == ' ') v++;
    size_t n = end ? (size_t)(end - v) : strlen(v);
    char *s = malloc(n + 1);
    memcpy(s, v, n);
    s[n] = 0;
    return s;
  }
  return NULL;
}

/* Each dump is non-empty; the sexpr dump re-stages (with the same optimizer setting)
 * to the same id. */
static void check_dumps(gr_program *p, bool no_optimize, const char *input) {
  for (int f = GR_DUMP_SEXPR; f <= GR_DUMP_JSON; f++) {
    char *d = gr_program_dump(p, (gr_dump_format)f);
    if (!d || !*d) die("empty dump", NULL, input);
    if (f == GR_DUMP_SEXPR) {
      gr_stage_options so = {.no_optimize = no_optimize, .entry = gr_program_entry(p), .max_nodes = 20000};
      gr_program *q = NULL;
      sg_error e = SG_ERROR_INIT;
      if (gr_stage(d, strlen(d), "dump.sexp", &so, &q, &e)) {
        char *msg = sg_error_format(&e);
        sg_buf b = SG_BUF_INIT;
        sg_buf_printf(&b, "%s\n--- dump:\n%s", msg, d);
        die("the sexpr dump does not stage again", b.data, input);
      }
      if (strcmp(gr_program_id(p), gr_program_id(q))) {
        char *d2 = gr_program_dump(q, GR_DUMP_SEXPR);
        sg_buf b = SG_BUF_INIT;
        sg_buf_printf(&b, "%s\n--- restaged:\n%s", d, d2);
        die("re-staging the sexpr dump changed the program id", b.data, input);
      }
      gr_program_release(q);
    }
    free(d);
  }
}

/* Execute (like the daemon's Execute with args_json) with the fuzzing limits; on
 * success the result followed by the printed text (malloc'd), else NULL. */
static char *execute(gr_program *p, const char *args, const char *input) {
  gr_exec_options xo = {.deadline_ns = sg_now_ns() + FUZZ_DEADLINE_NS, .device = "cpu", .max_depth = 200};
  char *res = NULL, *printed = NULL, *out = NULL;
  sg_error e = SG_ERROR_INIT;
  if (gr_execute_json(p, &xo, args, &res, &printed, &e)) {
    check_message(&e, "execute", input);
  } else if (!res) {
    die("execution succeeded without a result", NULL, input);
  } else {
    out = sg_xasprintf("%s\n--- printed:\n%s", res, printed ? printed : "");
  }
  free(res);
  free(printed);
  sg_error_clear(&e);
  return out;
}

/* The optimizer keeps meaning: when the optimized program ran, the unoptimized one
 * gives the same result and printed text (or fails, e.g. at the deadline). */
static void check_unoptimized(const char *src, size_t len, const char *entry, const char *args,
                              const char *optimized) {
  gr_stage_options so = {.no_optimize = true, .entry = entry, .max_nodes = 20000};
  gr_program *p = NULL;
  sg_error e = SG_ERROR_INIT;
  if (gr_stage(src, len, FUZZ_FILE, &so, &p, &e)) {
    char *msg = sg_error_format(&e);
    die("stages with the optimizer but not without", msg, src);
  }
  char *plain = execute(p, args, src);
  if (plain && strcmp(plain, optimized)) {
    sg_buf b = SG_BUF_INIT;
    sg_buf_printf(&b, "optimized: %s\nunoptimized: %s", optimized, plain);
    die("the optimizer changed the result", b.data, src);
  }
  free(plain);
  gr_program_release(p);
}

static void fuzz_program(const char *src, size_t len) {
  char *args = directive(src, "args"), *entry = directive(src, "entry"),
       *grad = directive(src, "grad"), *noopt = directive(src, "noopt");
  gr_stage_options so = {.no_optimize = noopt != NULL, .entry = entry, .max_nodes = 20000};
  gr_program *p = NULL;
  sg_error e = SG_ERROR_INIT;
  if (gr_stage(src, len, FUZZ_FILE, &so, &p, &e)) {
    check_message(&e, "stage", src);
    /* an --entry that names no def has no place in the source to point at */
    if (!entry) check_location(&e, src, len);
  } else {
    check_dumps(p, so.no_optimize, src);
    char *res = execute(p, args, src);
    if (res && !so.no_optimize) check_unoptimized(src, len, entry, args, res);
    free(res);
    if (grad) {
      int32_t wrt[8];
      size_t nwrt = 0;
      for (char *s = grad, *end; nwrt < 8; s = end) {
        long v = strtol(s, &end, 10);
        if (end == s) break;
        wrt[nwrt++] = (int32_t)v;
      }
      gr_program *g = NULL;
      if (gr_grad_program(p, NULL, wrt, nwrt, so.no_optimize, &g, &e)) {
        check_message(&e, "grad", src);
      } else {
        check_dumps(g, so.no_optimize, src);
        free(execute(g, args, src));
        gr_program_release(g);
      }
    }
    gr_program_release(p);
  }
  sg_error_clear(&e);
  free(args);
  free(entry);
  free(grad);
  free(noopt);
}

/* Parses json as an argument array; on success its values printed as a JSON array. */
static sg_code json_round(const char *json, gr_module *m, sg_buf *out, sg_error *e) {
  sg_arena a;
  sg_arena_init(&a, 0);
  gr_val *vals = NULL;
  int n = 0;
  sg_code rc = gr_json_args(json, m, &a, &vals, &n, e);
  if (!rc) {
    sg_buf_putc(out, '[');
    for (int i = 0; i < n; i++) {
      if (i) sg_buf_putc(out, ',');
      gr_value_to_json(out, &vals[i]);
      gv_release(vals[i]);
    }
    sg_buf_putc(out, ']');
  }
  free(vals);
  sg_arena_free(&a);
  return rc;
}

static void fuzz_json(const char *json) {
  gr_module m;
  gr_module_init(&m, "fuzz.json");
  sg_buf once = SG_BUF_INIT, twice = SG_BUF_INIT;
  sg_error e = SG_ERROR_INIT;
  if (json_round(json, &m, &once, &e)) {
    check_message(&e, "json", json);
  } else {
    if (json_round(once.data, &m, &twice, &e)) {
      char *msg = sg_error_format(&e);
      sg_buf b = SG_BUF_INIT;
      sg_buf_printf(&b, "%s\n--- printed:\n%s", msg, once.data);
      die("printed JSON values do not parse again", b.data, json);
    }
    if (strcmp(once.data, twice.data)) {
      sg_buf b = SG_BUF_INIT;
      sg_buf_printf(&b, "%s\n--- printed again:\n%s", once.data, twice.data);
      die("JSON values do not round-trip", b.data, json);
    }
  }
  sg_error_clear(&e);
  sg_buf_free(&once);
  sg_buf_free(&twice);
  gr_module_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the pipeline reads NUL-terminated text: stop at the first NUL, as the daemon does */
  char *src = malloc(size + 1);
  memcpy(src, data, size);
  src[size] = 0;
  size_t len = strlen(src);
  if (!strncmp(src, "json\n", 5)) fuzz_json(src + 5);
  else fuzz_program(src, len);
  free(src);
  return 0;
}
