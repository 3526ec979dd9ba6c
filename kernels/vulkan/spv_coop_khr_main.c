// SPDX-License-Identifier: Apache-2.0
/*
 * spv_coop_khr_main.c — the build-time tool around spv_coop_khr.c:
 *   spv_coop_khr IN.spv OUT.spv   rewrites an NV cooperative-matrix module to KHR
 *   spv_coop_khr --copy IN OUT    reads and writes back unchanged (reader/writer test)
 * Exits 1 with "spv_coop_khr: IN: message" on stderr when the rewrite is impossible,
 * which fails the build.
 */
#include "spv_coop_khr.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  bool copy = argc == 4 && !strcmp(argv[1], "--copy");
  if (argc != 3 && !copy) {
    fprintf(stderr, "usage: spv_coop_khr [--copy] IN.spv OUT.spv\n");
    return 2;
  }
  const char *in = argv[argc - 2], *out = argv[argc - 1];
  char err[512];
  spv_module m;
  bool ok = spv_read_file(in, &m, err, sizeof err) &&
            (copy || spv_coop_nv_to_khr(&m, err, sizeof err)) &&
            spv_write_file(out, &m, err, sizeof err);
  spv_free(&m);
  if (!ok) {
    fprintf(stderr, "spv_coop_khr: %s: %s\n", in, err);
    remove(out);
    return 1;
  }
  return 0;
}
