// SPDX-License-Identifier: Apache-2.0
/*
 * spv_module.h — a minimal SPIR-V binary reader/writer for build-time rewrites
 * (spv_coop_khr.c). A module is its 5-word header and a list of instructions, each
 * kept as its own words (word 0 = word count << 16 | opcode), so a rewrite can replace,
 * drop or insert whole instructions; writing back an unchanged module gives the input
 * bytes. Little-endian modules only (what glslc writes).
 */
#ifndef SPV_MODULE_H
#define SPV_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPV_MAGIC 0x07230203u

typedef struct {
  uint32_t *w;   /* w[0] = nwords << 16 | opcode */
  uint32_t nwords;
} spv_inst;

typedef struct {
  uint32_t header[5]; /* magic, version, generator, bound, schema */
  spv_inst *inst;
  size_t n, cap;
} spv_module;

static inline uint32_t spv_op(const spv_inst *in) { return in->w[0] & 0xffffu; }

/* Parses `nwords` words; on error writes a message into err and returns false (m is
 * then empty). */
bool spv_read(spv_module *m, const uint32_t *words, size_t nwords, char *err, size_t errlen);
/* The module's words (malloc'd, *nwords set); NULL when out of memory. */
uint32_t *spv_write(const spv_module *m, size_t *nwords);
void spv_free(spv_module *m);
/* Inserts a copy of `words` (words[0] carries the count) before instruction `at`. */
bool spv_insert(spv_module *m, size_t at, const uint32_t *words);
/* Whether `op` makes a result id and has a result type; false for an opcode this
 * table does not know (the caller then cannot tell which word is the result). */
bool spv_result_info(uint32_t op, bool *has_type, bool *has_result);
/* Reads/writes a whole file of words; false with a message in err on failure. */
bool spv_read_file(const char *path, spv_module *m, char *err, size_t errlen);
bool spv_write_file(const char *path, const spv_module *m, char *err, size_t errlen);

#endif
