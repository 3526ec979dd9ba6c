// SPDX-License-Identifier: Apache-2.0
/*
 * pyast_tool.c — a small driver for convert/, used by the conformance harness and
 * the benchmark until `stagctl parse` exists.
 *
 *   pyast_tool dump|dump-attrs|unparse|json FILE
 *       prints the result on stdout; a syntax error goes to stderr as
 *       FILE:LINE:COL: error: MESSAGE and the exit status is 1.
 *   pyast_tool batch OUTDIR < LIST
 *       for each path in LIST (one per line), numbered N from 0, writes
 *       OUTDIR/N.dump, OUTDIR/N.attrs, OUTDIR/N.unparse — or OUTDIR/N.err
 *       ("LINE COL MESSAGE") on a syntax error.
 *   pyast_tool time FILE...
 *       parses + dumps every file, prints "BYTES SECONDS FAILURES" (benchmark helper);
 *   pyast_tool time-parse FILE...   the same, parse only;
 *   pyast_tool mem FILE
 *       parses FILE, prints "BYTES PEAK_RSS_GROWTH_BYTES ARENA_BYTES".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "py.h"

static int write_file(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  fwrite(data, 1, len, f);
  fclose(f);
  return 0;
}

static int batch(const char *outdir) {
  char line[4096];
  int idx = 0;
  while (fgets(line, sizeof line, stdin)) {
    size_t l = strlen(line);
    while (l && (line[l - 1] == '\n' || line[l - 1] == '\r')) line[--l] = 0;
    if (!l) continue;
    size_t len;
    char *src = sg_read_file(line, &len);
    char path[4200];
    if (!src) {
      snprintf(path, sizeof path, "%s/%d.err", outdir, idx);
      write_file(path, "0 0 cannot read file", 20);
      idx++;
      continue;
    }
    py_ctx ctx;
    py_ctx_init(&ctx);
    sg_error err = SG_ERROR_INIT;
    py_mod *m = py_parse(&ctx, src, len, line, &err);
    if (!m) {
      char *msg = sg_xasprintf("%d %d %s", err.line, err.col, err.message);
      snprintf(path, sizeof path, "%s/%d.err", outdir, idx);
      write_file(path, msg, strlen(msg));
      free(msg);
    } else {
      sg_buf b = SG_BUF_INIT;
      py_dump_module(m, false, &b);
      snprintf(path, sizeof path, "%s/%d.dump", outdir, idx);
      write_file(path, b.data, b.len);
      sg_buf_clear(&b);
      py_dump_module(m, true, &b);
      snprintf(path, sizeof path, "%s/%d.attrs", outdir, idx);
      write_file(path, b.data, b.len);
      sg_buf_clear(&b);
      py_unparse_module(m, &b);
      snprintf(path, sizeof path, "%s/%d.unparse", outdir, idx);
      write_file(path, b.data ? b.data : "", b.len);
      sg_buf_free(&b);
    }
    sg_error_clear(&err);
    py_ctx_free(&ctx);
    free(src);
    idx++;
  }
  return 0;
}

static long max_rss_bytes(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss * 1024L;
}

static int memory(const char *path) {
  size_t len;
  char *src = sg_read_file(path, &len);
  if (!src) return 2;
  long before = max_rss_bytes();
  py_ctx ctx;
  py_ctx_init(&ctx);
  sg_error err = SG_ERROR_INIT;
  py_mod *m = py_parse(&ctx, src, len, path, &err);
  long after = max_rss_bytes();
  if (!m) {
    char *msg = sg_error_format(&err);
    fprintf(stderr, "%s\n", msg);
    free(msg);
  }
  printf("%zu %ld %zu\n", len, after - before, ctx.arena.bytes_allocated);
  sg_error_clear(&err);
  py_ctx_free(&ctx);
  free(src);
  return m ? 0 : 1;
}

static int timing_parse(int argc, char **argv) {
  size_t total = 0;
  int fails = 0;
  char **srcs = sg_xcalloc((size_t)argc, sizeof *srcs);
  size_t *lens = sg_xcalloc((size_t)argc, sizeof *lens);
  for (int i = 0; i < argc; i++) srcs[i] = sg_read_file(argv[i], &lens[i]);
  uint64_t t0 = sg_now_ns();
  for (int i = 0; i < argc; i++) {
    if (!srcs[i]) continue;
    py_ctx ctx;
    py_ctx_init(&ctx);
    sg_error err = SG_ERROR_INIT;
    if (!py_parse(&ctx, srcs[i], lens[i], argv[i], &err)) fails++;
    total += lens[i];
    sg_error_clear(&err);
    py_ctx_free(&ctx);
  }
  uint64_t t1 = sg_now_ns();
  printf("%zu %.6f %d\n", total, (double)(t1 - t0) / 1e9, fails);
  for (int i = 0; i < argc; i++) free(srcs[i]);
  free(srcs);
  free(lens);
  return 0;
}

static int timing(int argc, char **argv) {
  size_t total = 0;
  int fails = 0;
  char **srcs = sg_xcalloc((size_t)argc, sizeof *srcs);
  size_t *lens = sg_xcalloc((size_t)argc, sizeof *lens);
  for (int i = 0; i < argc; i++) srcs[i] = sg_read_file(argv[i], &lens[i]);
  sg_buf b = SG_BUF_INIT;
  uint64_t t0 = sg_now_ns();
  for (int i = 0; i < argc; i++) {
    if (!srcs[i]) continue;
    sg_error err = SG_ERROR_INIT;
    sg_buf_clear(&b);
    if (py_parse_dump(srcs[i], lens[i], argv[i], false, &b, &err) != SG_OK) fails++;
    total += lens[i];
    sg_error_clear(&err);
  }
  uint64_t t1 = sg_now_ns();
  printf("%zu %.6f %d\n", total, (double)(t1 - t0) / 1e9, fails);
  sg_buf_free(&b);
  for (int i = 0; i < argc; i++) free(srcs[i]);
  free(srcs);
  free(lens);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "batch") == 0) return batch(argv[2]);
  if (argc >= 2 && strcmp(argv[1], "time") == 0) return timing(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "time-parse") == 0) return timing_parse(argc - 2, argv + 2);
  if (argc == 3 && strcmp(argv[1], "mem") == 0) return memory(argv[2]);
  if (argc != 3) {
    fprintf(stderr, "usage: pyast_tool dump|dump-attrs|unparse|json FILE\n"
                    "       pyast_tool batch OUTDIR < LIST\n       pyast_tool time FILE...\n");
    return 2;
  }
  size_t len;
  char *src = sg_read_file(argv[2], &len);
  if (!src) {
    fprintf(stderr, "%s: cannot read\n", argv[2]);
    return 2;
  }
  sg_buf out = SG_BUF_INIT;
  sg_error err = SG_ERROR_INIT;
  sg_code rc;
  const char *mode = argv[1];
  if (!strcmp(mode, "dump")) rc = py_parse_dump(src, len, argv[2], false, &out, &err);
  else if (!strcmp(mode, "dump-attrs")) rc = py_parse_dump(src, len, argv[2], true, &out, &err);
  else if (!strcmp(mode, "unparse")) rc = py_unparse_source(src, len, argv[2], &out, &err);
  else if (!strcmp(mode, "json")) rc = py_parse_json(src, len, argv[2], false, &out, &err);
  else if (!strcmp(mode, "json-attrs")) rc = py_parse_json(src, len, argv[2], true, &out, &err);
  else {
    fprintf(stderr, "unknown mode %s\n", mode);
    free(src);
    return 2;
  }
  int status = 0;
  if (rc == SG_OK) {
    fwrite(out.data ? out.data : "", 1, out.len, stdout);
    if (strcmp(mode, "unparse") != 0) putchar('\n');
  } else {
    char *m = sg_error_format(&err);
    fprintf(stderr, "%s\n", m);
    free(m);
    status = 1;
  }
  sg_buf_free(&out);
  sg_error_clear(&err);
  free(src);
  return status;
}
