// SPDX-License-Identifier: Apache-2.0
/* test_map.c — sg_map against a reference model under random puts/removes, and
 * SG_VEC growth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "sg.h"

enum { KEYS = 512 };

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void matches_reference_model(void **state) {
  sg_map m = SG_MAP_INIT;
  void *model[KEYS];
  bool present[KEYS];
  memset(present, 0, sizeof present);
  for (int step = 0; step < 200000; step++) {
    uint64_t k = next_rand() % KEYS;
    /* keys that collide in the low bits exercise probing and backward shift */
    uint64_t key = k * 1024;
    switch (next_rand() % 3) {
      case 0:
      case 1: {
        void *v = (void *)(uintptr_t)(next_rand() | 1);
        sg_map_put(&m, key, v);
        model[k] = v;
        present[k] = true;
        break;
      }
      case 2:
        assert_int_equal(sg_map_remove(&m, key), present[k]);
        present[k] = false;
        break;
    }
    if (step % 1000 == 0) {
      size_t count = 0;
      for (int i = 0; i < KEYS; i++) {
        void *v = NULL;
        bool got = sg_map_get(&m, (uint64_t)i * 1024, &v);
        assert_int_equal(got, present[i]);
        if (got) {
          assert_ptr_equal(v, model[i]);
          count++;
        }
      }
      assert_int_equal(count, m.len);
    }
  }
  /* iteration visits every entry once */
  size_t it = 0, seen = 0;
  uint64_t key;
  void *val;
  while (sg_map_next(&m, &it, &key, &val)) {
    assert_true(present[key / 1024]);
    assert_ptr_equal(val, model[key / 1024]);
    seen++;
  }
  assert_int_equal(seen, m.len);
  sg_map_clear(&m);
  assert_false(sg_map_get(&m, 0, NULL));
  sg_map_free(&m);
}

static void empty_map_lookups(void **state) {
  sg_map m = SG_MAP_INIT;
  assert_false(sg_map_get(&m, 42, NULL));
  assert_false(sg_map_remove(&m, 42));
  size_t it = 0;
  assert_false(sg_map_next(&m, &it, NULL, NULL));
  sg_map_free(&m);
}

static void vectors_grow(void **state) {
  SG_VEC(int) v = {0};
  for (int i = 0; i < 10000; i++) sg_vec_push(&v, i * 3);
  assert_int_equal(v.len, 10000);
  for (int i = 0; i < 10000; i++) assert_int_equal(v.data[i], i * 3);
  assert_int_equal(sg_vec_last(&v), 9999 * 3);
  assert_int_equal(sg_vec_pop(&v), 9999 * 3);
  assert_int_equal(v.len, 9999);
  sg_vec_free(&v);
  assert_null(v.data);
}

static void hashing_is_deterministic_and_spreads(void **state) {
  assert_int_equal(sg_hash_bytes("abc", 3, 0), sg_hash_bytes("abc", 3, 0));
  assert_int_not_equal(sg_hash_bytes("abc", 3, 0), sg_hash_bytes("abd", 3, 0));
  assert_int_not_equal(sg_hash_bytes("abc", 3, 0), sg_hash_bytes("abc", 3, 1));
  assert_int_not_equal(sg_hash_bytes("", 0, 0), sg_hash_bytes("\0", 1, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_reference_model),
      cmocka_unit_test(empty_map_lookups),
      cmocka_unit_test(vectors_grow),
      cmocka_unit_test(hashing_is_deterministic_and_spreads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
