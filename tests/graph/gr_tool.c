/*
 * gr_tool.c — a small driver for graph/ used by the tests and benchmarks until
 * stagctl is wired:
 *   gr_tool stage FILE [--dump sexpr|text|dot|json] [--no-optimize] [--entry NAME]
 *   gr_tool run FILE [--entry NAME] [--args JSON|@FILE] [--deadline-ms N] [--no-optimize]
 *               [--repeat N] [--device cpu|vulkan:N] [--stats]
 *               (prints the result; printed output, timings and --stats (the Vulkan
 *               executor's counters) go to stderr)
 * Diagnostics: FILE:LINE:COL: error: MESSAGE (CODE) on stderr; exit 1 on bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_vulkan.h"
#include "gr.h"

static void print_vk_stats(void) {
  gr_vk_stats st;
  gr_vk_stats_get(&st);
  fprintf(stderr,
          "vk_stats {\"requests\":%llu,\"dispatches\":%llu,\"submits\":%llu,\"uploads\":%llu,"
          "\"downloads\":%llu,\"buffers\":%llu,\"reused\":%llu,\"cpu_fallbacks\":%llu}\n",
          (unsigned long long)st.requests, (unsigned long long)st.dispatches,
          (unsigned long long)st.submits, (unsigned long long)st.uploads,
          (unsigned long long)st.downloads, (unsigned long long)st.buffers,
          (unsigned long long)st.reused, (unsigned long long)st.cpu_fallbacks);
}

static int fail(sg_error *e) {
  char *s = sg_error_format(e);
  fprintf(stderr, "%s (%s)\n", s, sg_code_name(e->code));
  free(s);
  int rc = e->code == SG_INVALID_ARGUMENT || e->code == SG_FAILED_PRECONDITION ||
                   e->code == SG_DEADLINE_EXCEEDED || e->code == SG_RESOURCE_EXHAUSTED ||
                   e->code == SG_UNIMPLEMENTED
               ? 1
               : 2;
  sg_error_clear(e);
  return rc;
}

int main(int argc, char **argv) {
  sg_memory_tune_for_reuse();
  if (argc < 3) {
    fprintf(stderr, "usage: gr_tool stage|run FILE [options]\n");
    return 2;
  }
  const char *cmd = argv[1], *file = argv[2], *dump = "text", *args = "[]";
  gr_stage_options so = {0};
  gr_exec_options xo = {0};
  long repeat = 1;
  bool stats = false;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--no-optimize")) so.no_optimize = true;
    else if (!strcmp(argv[i], "--dump") && i + 1 < argc) dump = argv[++i];
    else if (!strcmp(argv[i], "--entry") && i + 1 < argc) so.entry = xo.entry = argv[++i];
    else if (!strcmp(argv[i], "--args") && i + 1 < argc) args = argv[++i];
    else if (!strcmp(argv[i], "--deadline-ms") && i + 1 < argc)
      xo.deadline_ns = sg_now_ns() + (uint64_t)atol(argv[++i]) * 1000000ull;
    else if (!strcmp(argv[i], "--max-nodes") && i + 1 < argc) so.max_nodes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--max-depth") && i + 1 < argc) xo.max_depth = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atol(argv[++i]);
    else if (!strcmp(argv[i], "--device") && i + 1 < argc) xo.device = argv[++i];
    else if (!strcmp(argv[i], "--stats")) stats = true;
    else {
      fprintf(stderr, "gr_tool: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  size_t len;
  char *args_buf = NULL;
  if (args[0] == '@') { /* --args @FILE: large inputs */
    args_buf = sg_read_file(args + 1, &len);
    if (!args_buf) {
      fprintf(stderr, "gr_tool: cannot read %s\n", args + 1);
      return 2;
    }
    args = args_buf;
  }
  char *src = sg_read_file(file, &len);
  if (!src) {
    fprintf(stderr, "gr_tool: cannot read %s\n", file);
    return 2;
  }
  sg_error e = SG_ERROR_INIT;
  gr_program *p;
  if (gr_stage(src, len, file, &so, &p, &e)) {
    free(src);
    return fail(&e);
  }
  free(src);
  int rc = 0;
  if (!strcmp(cmd, "stage")) {
    gr_dump_format fmt;
    if (!gr_dump_format_parse(dump, &fmt)) {
      fprintf(stderr, "gr_tool: unknown dump format %s\n", dump);
      rc = 2;
    } else {
      char *d = gr_program_dump(p, fmt);
      fputs(d, stdout);
      free(d);
    }
  } else if (!strcmp(cmd, "id")) {
    printf("%s\n", gr_program_id(p));
  } else if (!strcmp(cmd, "run")) {
    char *res = NULL, *printed = NULL;
    uint64_t t0 = sg_now_ns();
    for (long r = 0; r < repeat && !rc; r++) {
      free(res);
      free(printed);
      res = printed = NULL;
      if (gr_execute_json(p, &xo, args, &res, &printed, &e)) rc = fail(&e);
    }
    uint64_t t1 = sg_now_ns();
    if (!rc) {
      if (printed && *printed) fputs(printed, stderr);
      printf("%s\n", res);
      if (repeat > 1) fprintf(stderr, "time_per_run_ns %.1f\n", (double)(t1 - t0) / (double)repeat);
    }
    if (stats) print_vk_stats();
    free(res);
    free(printed);
  } else {
    fprintf(stderr, "gr_tool: unknown command %s\n", cmd);
    rc = 2;
  }
  gr_program_release(p);
  free(args_buf);
  return rc;
}
