// SPDX-License-Identifier: Apache-2.0
/*
 * intern.c — string interning. Equal byte strings map to one pointer, stored in the
 * table's arena, so names can be compared and used as map keys by address.
 */
#include <stdlib.h>
#include <string.h>

#include "sg.h"

void sg_intern_init(sg_intern *t) {
  sg_arena_init(&t->arena, 0);
  t->slots = NULL;
  t->lens = NULL;
  t->cap = 0;
  t->len = 0;
}

static void intern_grow(sg_intern *t) {
  size_t cap = t->cap ? t->cap * 2 : 64;
  const char **slots = sg_xcalloc(cap, sizeof *slots);
  uint32_t *lens = sg_xcalloc(cap, sizeof *lens);
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->slots[i]) continue;
    size_t j = sg_hash_bytes(t->slots[i], t->lens[i], 0) & (cap - 1);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = t->slots[i];
    lens[j] = t->lens[i];
  }
  free(t->slots);
  free(t->lens);
  t->slots = slots;
  t->lens = lens;
  t->cap = cap;
}

/* The slot holding s, or the empty slot where it belongs (t->cap > 0). */
static size_t intern_slot(const sg_intern *t, const char *s, size_t len) {
  size_t j = sg_hash_bytes(s, len, 0) & (t->cap - 1);
  while (t->slots[j] && !(t->lens[j] == len && memcmp(t->slots[j], s, len) == 0)) j = (j + 1) & (t->cap - 1);
  return j;
}

const char *sg_intern_find(const sg_intern *t, const char *s, size_t len) {
  return t->cap ? t->slots[intern_slot(t, s, len)] : NULL;
}

const char *sg_intern_n(sg_intern *t, const char *s, size_t len) {
  if ((t->len + 1) * 2 > t->cap) intern_grow(t);
  size_t j = intern_slot(t, s, len);
  if (t->slots[j]) return t->slots[j];
  const char *copy = sg_arena_strndup(&t->arena, s, len);
  t->slots[j] = copy;
  t->lens[j] = (uint32_t)len;
  t->len++;
  return copy;
}

const char *sg_intern_str(sg_intern *t, const char *s) { return sg_intern_n(t, s, strlen(s)); }

void sg_intern_free(sg_intern *t) {
  free(t->slots);
  free(t->lens);
  sg_arena_free(&t->arena);
  t->slots = NULL;
  t->lens = NULL;
  t->cap = t->len = 0;
}
