// SPDX-License-Identifier: Apache-2.0
/*
 * spv_module.c — the SPIR-V reader/writer of spv_module.h, and the table that says
 * which opcodes make a result id and which have a result type (the one fact a rewrite
 * needs about an instruction it does not otherwise understand).
 */
#include "spv_module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* core opcodes with neither result type nor result id */
static const uint16_t NO_RESULT[] = {
    0,   2,   3,   4,   5,   6,   8,   10,  14,  15,  16,  17,  39,  56,  62,  63,  64,
    71,  72,  74,  75,  99,  218, 219, 220, 221, 224, 225, 228, 246, 247, 249, 250, 251,
    252, 253, 254, 255, 256, 257, 260, 280, 281, 297, 298, 301, 302, 317, 319, 329, 330,
    331, 332, 4416, 4445, 4446, 4448, 4449, 4458, 5294, 5295, 5360, 5364, 5365, 5380,
    5632, 5633};
/* opcodes with a result id but no result type: types, labels, imports */
static const uint16_t RESULT_ONLY[] = {7,  11, 19, 20, 21, 22, 23, 24, 25, 26,   27,   28,
                                       29, 30, 31, 32, 33, 34, 35, 36, 37, 38,   73,   248,
                                       322, 327, 4456, 4472, 5341, 5358};
/* opcodes past the core range known to have a result type and id */
static const uint16_t EXT_RESULT_TYPE[] = {4421, 4422, 4428, 4429, 4430, 4431, 4432, 4450,
                                           4451, 4452, 4453, 4454, 4455, 4457, 4459, 4460,
                                           5359, 5361, 5362, 5381};

static bool in_list(const uint16_t *list, size_t n, uint32_t op) {
  for (size_t i = 0; i < n; i++)
    if (list[i] == op)
      return true;
  return false;
}

#define IN(list, op) in_list(list, sizeof list / sizeof *list, op)

bool spv_result_info(uint32_t op, bool *has_type, bool *has_result) {
  *has_type = *has_result = false;
  if (IN(NO_RESULT, op))
    return true;
  if (IN(RESULT_ONLY, op)) {
    *has_result = true;
    return true;
  }
  if (op < 400 || IN(EXT_RESULT_TYPE, op)) {
    *has_type = *has_result = true;
    return true;
  }
  return false;
}

void spv_free(spv_module *m) {
  for (size_t i = 0; i < m->n; i++)
    free(m->inst[i].w);
  free(m->inst);
  memset(m, 0, sizeof *m);
}

bool spv_insert(spv_module *m, size_t at, const uint32_t *words) {
  if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 256;
    spv_inst *p = realloc(m->inst, cap * sizeof *p);
    if (!p)
      return false;
    m->inst = p;
    m->cap = cap;
  }
  uint32_t nw = words[0] >> 16;
  uint32_t *w = malloc(nw * sizeof *w);
  if (!w)
    return false;
  memcpy(w, words, nw * sizeof *w);
  memmove(m->inst + at + 1, m->inst + at, (m->n - at) * sizeof *m->inst);
  m->inst[at] = (spv_inst){w, nw};
  m->n++;
  return true;
}

bool spv_read(spv_module *m, const uint32_t *words, size_t nwords, char *err, size_t errlen) {
  memset(m, 0, sizeof *m);
  if (nwords < 5 || words[0] != SPV_MAGIC) {
    snprintf(err, errlen, "not a little-endian SPIR-V module (%zu words, first 0x%08x)",
             nwords, nwords ? words[0] : 0u);
    return false;
  }
  memcpy(m->header, words, sizeof m->header);
  for (size_t at = 5; at < nwords;) {
    uint32_t nw = words[at] >> 16;
    if (nw == 0 || at + nw > nwords) {
      snprintf(err, errlen, "word %zu: instruction (opcode %u) of %u words runs past the end",
               at, words[at] & 0xffffu, nw);
      spv_free(m);
      return false;
    }
    if (!spv_insert(m, m->n, words + at)) {
      snprintf(err, errlen, "out of memory");
      spv_free(m);
      return false;
    }
    at += nw;
  }
  return true;
}

uint32_t *spv_write(const spv_module *m, size_t *nwords) {
  size_t n = 5;
  for (size_t i = 0; i < m->n; i++)
    n += m->inst[i].nwords;
  uint32_t *out = malloc(n * sizeof *out);
  if (!out)
    return NULL;
  memcpy(out, m->header, sizeof m->header);
  size_t at = 5;
  for (size_t i = 0; i < m->n; i++) {
    memcpy(out + at, m->inst[i].w, m->inst[i].nwords * sizeof *out);
    at += m->inst[i].nwords;
  }
  *nwords = n;
  return out;
}

bool spv_read_file(const char *path, spv_module *m, char *err, size_t errlen) {
  memset(m, 0, sizeof *m);
  FILE *f = fopen(path, "rb");
  long size = -1;
  if (f && fseek(f, 0, SEEK_END) == 0)
    size = ftell(f);
  if (!f || size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    snprintf(err, errlen, "%s: cannot read", path);
    if (f)
      fclose(f);
    return false;
  }
  if (size % 4) {
    snprintf(err, errlen, "%s: %ld bytes is not a whole number of words", path, size);
    fclose(f);
    return false;
  }
  size_t n = (size_t)size / 4;
  uint32_t *words = malloc(n ? n * sizeof *words : 1);
  bool got = words && fread(words, sizeof *words, n, f) == n;
  fclose(f);
  char msg[256];
  bool ok = got && spv_read(m, words, n, msg, sizeof msg);
  free(words);
  if (!ok)
    snprintf(err, errlen, "%s: %s", path, got ? msg : "cannot read");
  return ok;
}

bool spv_write_file(const char *path, const spv_module *m, char *err, size_t errlen) {
  size_t n;
  uint32_t *words = spv_write(m, &n);
  FILE *f = words ? fopen(path, "wb") : NULL;
  bool ok = f && fwrite(words, sizeof *words, n, f) == n;
  if (f && fclose(f) != 0)
    ok = false;
  free(words);
  if (!ok)
    snprintf(err, errlen, "%s: cannot write", path);
  return ok;
}
