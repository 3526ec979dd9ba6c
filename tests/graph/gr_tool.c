// SPDX-License-Identifier: Apache-2.0
/*
 * gr_tool.c — a small driver for graph/ used by the tests and benchmarks until
 * stagctl is wired:
 *   gr_tool stage FILE [--dump sexpr|text|dot|json] [--no-optimize] [--entry NAME]
 *   gr_tool run FILE [--entry NAME] [--args JSON|@FILE] [--deadline-ms N] [--no-optimize]
 *               [--repeat N] [--device cpu|vulkan:N] [--stats]
 *               (prints the result; printed output, timings and --stats (the Vulkan
 *               executor's counters, a `vk_stats` line, and the CPU's fused chains, a
 *               `cpu_stats` line) go to stderr)
 *   gr_tool batch [run options]
 *               many `run`s in one process (one device initialisation for all): reads
 *               cases from stdin, each a header line `case SRC_BYTES ARGS_BYTES [ENTRY]`
 *               followed by exactly SRC_BYTES of source and ARGS_BYTES of JSON arguments
 *               (empty = []); writes one line per case, {"rc":N,"stdout":"...",
 *               "stderr":"..."}, holding exactly what `run -` would have exited with and
 *               printed. --stats counts that case only (the counters' difference).
 * Diagnostics: FILE:LINE:COL: error: MESSAGE (CODE) on stderr; exit 1 on bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_vulkan.h"
#include "gr.h"

typedef struct tool_opts {
  const char *dump, *args;
  gr_stage_options so;
  gr_exec_options xo;
  long repeat, deadline_ms;
  bool stats;
} tool_opts;

static void print_vk_stats(sg_buf *eb, const gr_vk_stats *st) {
  sg_buf_printf(eb,
                "vk_stats {\"requests\":%llu,\"dispatches\":%llu,\"submits\":%llu,\"uploads\":%llu,"
                "\"downloads\":%llu,\"buffers\":%llu,\"reused\":%llu,\"cpu_fallbacks\":%llu,"
                "\"fused\":%llu,\"epilogues\":%llu}\n",
                (unsigned long long)st->requests, (unsigned long long)st->dispatches,
                (unsigned long long)st->submits, (unsigned long long)st->uploads,
                (unsigned long long)st->downloads, (unsigned long long)st->buffers,
                (unsigned long long)st->reused, (unsigned long long)st->cpu_fallbacks,
                (unsigned long long)st->fused, (unsigned long long)st->epilogues);
}

/* The counters since `before` (one case of a batch sees only its own work). */
static gr_vk_stats stats_since(const gr_vk_stats *before) {
  gr_vk_stats st;
  gr_vk_stats_get(&st);
  st.requests -= before->requests;
  st.dispatches -= before->dispatches;
  st.submits -= before->submits;
  st.uploads -= before->uploads;
  st.downloads -= before->downloads;
  st.buffers -= before->buffers;
  st.reused -= before->reused;
  st.cpu_fallbacks -= before->cpu_fallbacks;
  st.fused -= before->fused;
  st.epilogues -= before->epilogues;
  return st;
}

static int fail(sg_buf *eb, sg_error *e) {
  char *s = sg_error_format(e);
  sg_buf_printf(eb, "%s (%s)\n", s, sg_code_name(e->code));
  free(s);
  int rc = e->code == SG_INVALID_ARGUMENT || e->code == SG_FAILED_PRECONDITION ||
                   e->code == SG_DEADLINE_EXCEEDED || e->code == SG_RESOURCE_EXHAUSTED ||
                   e->code == SG_UNIMPLEMENTED
               ? 1
               : 2;
  sg_error_clear(e);
  return rc;
}

/* One `stage`/`id`/`run` of src: what it prints goes to ob (stdout) and eb (stderr);
 * returns the exit status. */
static int run_case(const char *cmd, const char *file, const char *src, size_t len,
                    const tool_opts *o, sg_buf *ob, sg_buf *eb) {
  sg_error e = SG_ERROR_INIT;
  gr_exec_options xo = o->xo;
  if (o->deadline_ms >= 0) xo.deadline_ns = sg_now_ns() + (uint64_t)o->deadline_ms * 1000000ull;
  gr_vk_stats before;
  gr_vk_stats_get(&before);
  gr_device_stats cpu_before;
  gr_device_stats_get(&cpu_before);
  gr_program *p;
  if (gr_stage(src, len, file, &o->so, &p, &e)) return fail(eb, &e);
  int rc = 0;
  if (!strcmp(cmd, "stage")) {
    gr_dump_format fmt;
    if (!gr_dump_format_parse(o->dump, &fmt)) {
      sg_buf_printf(eb, "gr_tool: unknown dump format %s\n", o->dump);
      rc = 2;
    } else {
      char *d = gr_program_dump(p, fmt);
      sg_buf_puts(ob, d);
      free(d);
    }
  } else if (!strcmp(cmd, "id")) {
    sg_buf_printf(ob, "%s\n", gr_program_id(p));
  } else if (!strcmp(cmd, "run")) {
    char *res = NULL, *printed = NULL;
    uint64_t t0 = sg_now_ns();
    for (long r = 0; r < o->repeat && !rc; r++) {
      free(res);
      free(printed);
      res = printed = NULL;
      if (gr_execute_json(p, &xo, o->args, &res, &printed, &e)) rc = fail(eb, &e);
    }
    uint64_t t1 = sg_now_ns();
    if (!rc) {
      if (printed && *printed) sg_buf_puts(eb, printed);
      sg_buf_printf(ob, "%s\n", res);
      if (o->repeat > 1)
        sg_buf_printf(eb, "time_per_run_ns %.1f\n", (double)(t1 - t0) / (double)o->repeat);
    }
    if (o->stats) {
      gr_vk_stats st = stats_since(&before);
      print_vk_stats(eb, &st);
      gr_device_stats d;
      gr_device_stats_get(&d);
      sg_buf_printf(eb, "cpu_stats {\"fused\":%llu,\"in_place\":%llu}\n",
                    (unsigned long long)(d.cpu_fused - cpu_before.cpu_fused),
                    (unsigned long long)(d.cpu_fused_in_place - cpu_before.cpu_fused_in_place));
    }
    free(res);
    free(printed);
  } else {
    sg_buf_printf(eb, "gr_tool: unknown command %s\n", cmd);
    rc = 2;
  }
  gr_program_release(p);
  return rc;
}

/* Reads exactly n bytes of stdin into a new NUL-terminated string; NULL at a short read. */
static char *read_exact(size_t n) {
  char *s = sg_xmalloc(n + 1);
  if (fread(s, 1, n, stdin) != n) {
    free(s);
    return NULL;
  }
  s[n] = 0;
  return s;
}

/* gr_tool batch: the cases of stdin, one result line each (see the top of the file). */
static int run_batch(const tool_opts *defaults) {
  char line[1024];
  sg_buf ob = {0}, eb = {0}, out = {0};
  long ncase = 0;
  int rc = 0;
  while (fgets(line, sizeof line, stdin)) {
    ncase++;
    unsigned long long nsrc, nargs;
    char entry[512] = "";
    if (!strchr(line, '\n') ||
        sscanf(line, "case %llu %llu %511s", &nsrc, &nargs, entry) < 2) {
      line[strcspn(line, "\n")] = 0;
      fprintf(stderr, "gr_tool batch: case %ld: bad header '%.80s' (want 'case SRC_BYTES "
              "ARGS_BYTES [ENTRY]')\n", ncase, line);
      rc = 2;
      break;
    }
    char *src = read_exact((size_t)nsrc), *args = src ? read_exact((size_t)nargs) : NULL;
    if (!args) {
      fprintf(stderr, "gr_tool batch: case %ld: input ends inside the case\n", ncase);
      free(src);
      rc = 2;
      break;
    }
    tool_opts o = *defaults;
    if (*args) o.args = args;
    if (*entry) o.so.entry = o.xo.entry = entry;
    sg_buf_clear(&ob);
    sg_buf_clear(&eb);
    int crc = run_case("run", "-", src, (size_t)nsrc, &o, &ob, &eb);
    sg_buf_clear(&out);
    sg_buf_printf(&out, "{\"rc\":%d,\"stdout\":", crc);
    sg_buf_put_json_string(&out, ob.data ? ob.data : "", ob.len);
    sg_buf_puts(&out, ",\"stderr\":");
    sg_buf_put_json_string(&out, eb.data ? eb.data : "", eb.len);
    sg_buf_puts(&out, "}\n");
    fwrite(out.data, 1, out.len, stdout);
    fflush(stdout);
    free(src);
    free(args);
  }
  sg_buf_free(&ob);
  sg_buf_free(&eb);
  sg_buf_free(&out);
  return rc;
}

int main(int argc, char **argv) {
  sg_memory_tune_for_reuse();
  bool batch = argc >= 2 && !strcmp(argv[1], "batch");
  if (argc < 3 && !batch) {
    fprintf(stderr, "usage: gr_tool stage|run FILE [options] | gr_tool batch [options]\n");
    return 2;
  }
  const char *cmd = argv[1], *file = batch ? NULL : argv[2];
  tool_opts o = {.dump = "text", .args = "[]", .repeat = 1, .deadline_ms = -1};
  for (int i = batch ? 2 : 3; i < argc; i++) {
    if (!strcmp(argv[i], "--no-optimize")) o.so.no_optimize = true;
    else if (!strcmp(argv[i], "--dump") && i + 1 < argc) o.dump = argv[++i];
    else if (!strcmp(argv[i], "--entry") && i + 1 < argc) o.so.entry = o.xo.entry = argv[++i];
    else if (!strcmp(argv[i], "--args") && i + 1 < argc) o.args = argv[++i];
    else if (!strcmp(argv[i], "--deadline-ms") && i + 1 < argc) o.deadline_ms = atol(argv[++i]);
    else if (!strcmp(argv[i], "--max-nodes") && i + 1 < argc) o.so.max_nodes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--max-depth") && i + 1 < argc) o.xo.max_depth = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) o.repeat = atol(argv[++i]);
    else if (!strcmp(argv[i], "--device") && i + 1 < argc) o.xo.device = argv[++i];
    else if (!strcmp(argv[i], "--stats")) o.stats = true;
    else {
      fprintf(stderr, "gr_tool: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (batch) return run_batch(&o);
  size_t len;
  char *args_buf = NULL;
  if (o.args[0] == '@') { /* --args @FILE: large inputs */
    args_buf = sg_read_file(o.args + 1, &len);
    if (!args_buf) {
      fprintf(stderr, "gr_tool: cannot read %s\n", o.args + 1);
      return 2;
    }
    o.args = args_buf;
  }
  char *src = sg_read_file(file, &len);
  if (!src) {
    fprintf(stderr, "gr_tool: cannot read %s\n", file);
    free(args_buf);
    return 2;
  }
  sg_buf ob = {0}, eb = {0};
  int rc = run_case(cmd, file, src, len, &o, &ob, &eb);
  if (ob.len) fwrite(ob.data, 1, ob.len, stdout);
  if (eb.len) fwrite(eb.data, 1, eb.len, stderr);
  sg_buf_free(&ob);
  sg_buf_free(&eb);
  free(src);
  free(args_buf);
  return rc;
}
