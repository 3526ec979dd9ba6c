// SPDX-License-Identifier: Apache-2.0
/*
 * map.c — hashing, vector growth and sg_map, an open-addressing (linear probing)
 * map from u64 keys to pointers with backward-shift deletion, so there are no
 * tombstones and lookups stay short after many removals.
 */
#include <stdlib.h>
#include <string.h>

#include "sg.h"

uint64_t sg_hash_bytes(const void *data, size_t len, uint64_t seed) {
  /* FNV-1a over 8-byte words then bytes, finished with splitmix64: fast, and good
   * enough for hash tables (content addressing uses its own digest). */
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  while (len >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    p += 8;
    len -= 8;
  }
  while (len--) h = (h ^ *p++) * 0x100000001b3ULL;
  return sg_hash_u64(h);
}

void sg_vec_grow_(void **data, size_t *cap, size_t need, size_t elem_size) {
  size_t c = *cap ? *cap : 8;
  while (c < need) c *= 2;
  *data = sg_xrealloc(*data, c * elem_size);
  *cap = c;
}

static size_t slot_of(const sg_map *m, uint64_t key) {
  return (size_t)sg_hash_u64(key) & (m->cap - 1);
}

static void map_resize(sg_map *m, size_t cap) {
  sg_map old = *m;
  m->keys = sg_xmalloc(cap * sizeof *m->keys);
  m->values = sg_xmalloc(cap * sizeof *m->values);
  m->used = sg_xcalloc(cap, 1);
  m->cap = cap;
  m->len = 0;
  for (size_t i = 0; i < old.cap; i++)
    if (old.used[i]) sg_map_put(m, old.keys[i], old.values[i]);
  free(old.keys);
  free(old.values);
  free(old.used);
}

void sg_map_put(sg_map *m, uint64_t key, void *value) {
  if ((m->len + 1) * 4 > m->cap * 3) map_resize(m, m->cap ? m->cap * 2 : 16);
  size_t i = slot_of(m, key);
  while (m->used[i]) {
    if (m->keys[i] == key) {
      m->values[i] = value;
      return;
    }
    i = (i + 1) & (m->cap - 1);
  }
  m->used[i] = 1;
  m->keys[i] = key;
  m->values[i] = value;
  m->len++;
}

static bool find(const sg_map *m, uint64_t key, size_t *slot) {
  if (!m->cap) return false;
  size_t i = slot_of(m, key);
  while (m->used[i]) {
    if (m->keys[i] == key) {
      *slot = i;
      return true;
    }
    i = (i + 1) & (m->cap - 1);
  }
  return false;
}

bool sg_map_get(const sg_map *m, uint64_t key, void **value) {
  size_t i;
  if (!find(m, key, &i)) return false;
  if (value) *value = m->values[i];
  return true;
}

bool sg_map_remove(sg_map *m, uint64_t key) {
  size_t i;
  if (!find(m, key, &i)) return false;
  /* Backward-shift: move later entries of the probe run into the hole when their
   * home slot does not lie strictly between the hole and them. */
  size_t mask = m->cap - 1, j = i;
  for (;;) {
    m->used[i] = 0;
    for (;;) {
      j = (j + 1) & mask;
      if (!m->used[j]) {
        m->len--;
        return true;
      }
      size_t home = slot_of(m, m->keys[j]);
      bool between = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!between) break;
    }
    m->keys[i] = m->keys[j];
    m->values[i] = m->values[j];
    m->used[i] = 1;
    i = j;
  }
}

void sg_map_clear(sg_map *m) {
  if (m->cap) memset(m->used, 0, m->cap);
  m->len = 0;
}

void sg_map_free(sg_map *m) {
  free(m->keys);
  free(m->values);
  free(m->used);
  *m = (sg_map)SG_MAP_INIT;
}

bool sg_map_next(const sg_map *m, size_t *iter, uint64_t *key, void **value) {
  for (size_t i = *iter; i < m->cap; i++) {
    if (m->used[i]) {
      if (key) *key = m->keys[i];
      if (value) *value = m->values[i];
      *iter = i + 1;
      return true;
    }
  }
  *iter = m->cap;
  return false;
}
