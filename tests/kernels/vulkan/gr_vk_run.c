/*
 * gr_vk_run.c — runs one staged def on a chosen device, for the backend-parameterized
 * op conformance suite (tests/kernels/test_ops_numpy.py) and the Vulkan executor
 * tests:
 *   gr_vk_run run FILE [--device cpu|auto|vulkan[:N]] [--entry NAME] [--args JSON|@FILE]
 *             [--repeat N] [--stats]
 * --stats prints the Vulkan executor's counters (gr_vk_stats) as one JSON line
 * "vk_stats {...}" on stderr.
 * Prints the result JSON on stdout (printed output on stderr); diagnostics as
 * FILE:LINE:COL: error: MESSAGE (CODE) on stderr; exit 1 on bad input, 2 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_vulkan.h"
#include "gr.h"

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
  if (argc < 3 || strcmp(argv[1], "run") != 0) {
    fprintf(stderr, "usage: gr_vk_run run FILE [--device D] [--entry NAME] [--args JSON]\n");
    return 2;
  }
  const char *file = argv[2], *args = "[]";
  gr_stage_options so = {0};
  gr_exec_options xo = {0};
  long repeat = 1;
  bool stats = false;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc) xo.device = argv[++i];
    else if (!strcmp(argv[i], "--entry") && i + 1 < argc) so.entry = xo.entry = argv[++i];
    else if (!strcmp(argv[i], "--args") && i + 1 < argc) args = argv[++i];
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atol(argv[++i]);
    else if (!strcmp(argv[i], "--stats")) stats = true;
    else {
      fprintf(stderr, "gr_vk_run: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  size_t len;
  char *args_buf = NULL;
  if (args[0] == '@') {
    if (!(args_buf = sg_read_file(args + 1, &len))) {
      fprintf(stderr, "gr_vk_run: cannot read %s\n", args + 1);
      return 2;
    }
    args = args_buf;
  }
  char *src = sg_read_file(file, &len);
  if (!src) {
    fprintf(stderr, "gr_vk_run: cannot read %s\n", file);
    free(args_buf);
    return 2;
  }
  sg_error e = SG_ERROR_INIT;
  gr_program *p;
  int rc = 0;
  if (gr_stage(src, len, file, &so, &p, &e)) {
    free(src);
    free(args_buf);
    return fail(&e);
  }
  free(src);
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
  if (stats) {
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
  free(res);
  free(printed);
  gr_program_release(p);
  free(args_buf);
  return rc;
}
