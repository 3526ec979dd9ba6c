// SPDX-License-Identifier: Apache-2.0
/* test_arena.c — arenas: alignment, large allocations, reset and reuse, callbacks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "sg.h"

static void allocations_are_aligned_and_distinct(void **state) {
  sg_arena a;
  sg_arena_init(&a, 256);
  char *prev = NULL;
  for (int i = 1; i < 200; i++) {
    char *p = sg_arena_alloc(&a, (size_t)i);
    assert_int_equal((uintptr_t)p % 16, 0);
    memset(p, i & 0xff, (size_t)i); /* ASan catches overlap/overflow */
    assert_ptr_not_equal(p, prev);
    prev = p;
  }
  sg_arena_free(&a);
}

static void large_allocations_get_their_own_block(void **state) {
  sg_arena a;
  sg_arena_init(&a, 1024);
  char *small = sg_arena_alloc(&a, 16);
  char *big = sg_arena_alloc(&a, 100000);
  memset(big, 1, 100000);
  char *small2 = sg_arena_alloc(&a, 16);
  /* the second small allocation continues the first block */
  assert_ptr_equal(small2, small + 16);
  sg_arena_free(&a);
}

static void strdup_and_calloc(void **state) {
  sg_arena a;
  sg_arena_init(&a, 0);
  char *s = sg_arena_strdup(&a, "hello");
  assert_string_equal(s, "hello");
  char *t = sg_arena_strndup(&a, "hello world", 5);
  assert_string_equal(t, "hello");
  int *z = sg_arena_calloc(&a, 100, sizeof(int));
  for (int i = 0; i < 100; i++) assert_int_equal(z[i], 0);
  sg_arena_free(&a);
}

static void reset_reuses_memory(void **state) {
  sg_arena a;
  sg_arena_init(&a, 4096);
  void *first = sg_arena_alloc(&a, 64);
  for (int i = 0; i < 1000; i++) sg_arena_alloc(&a, 64);
  assert_true(a.bytes_allocated >= 1001 * 64);
  sg_arena_reset(&a);
  assert_int_equal(a.bytes_allocated, 0);
  void *again = sg_arena_alloc(&a, 64);
  assert_non_null(again);
  (void)first;
  sg_arena_free(&a);
  assert_null(a.head);
}

/* Bulk buffers are zeroed at every size, also when malloc hands back a dirty block (a
 * freed one of the same size; under the heap's thresholds it is reused as it is). */
static void bulk_buffers_are_zeroed(void **state) {
  (void)state;
  const size_t sizes[] = {0, 1, 4096, (4u << 20) - 1, 4u << 20, (6u << 20) + 123, 40u << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i] ? sizes[i] : 1;
    unsigned char *dirty = sg_xmalloc(n);
    memset(dirty, 0xA5, n);
    free(dirty);
    unsigned char *p = sg_xcalloc_bulk(sizes[i]);
    assert_non_null(p);
    for (size_t k = 0; k < n; k += 4093) assert_int_equal(p[k], 0);
    assert_int_equal(p[n - 1], 0);
    memset(p, 1, n); /* all of it is writable */
    free(p);
  }
}

/* sg_arena_on_free: callbacks run at reset and at free, newest first, once each. */
static char order[8];
static size_t n_order;
static void note(void *c) { order[n_order++] = *(const char *)c; }

static void callbacks_run_at_reset_and_free(void **state) {
  (void)state;
  static const char a = 'a', b = 'b', c = 'c';
  sg_arena ar;
  sg_arena_init(&ar, 256);
  n_order = 0;
  sg_arena_on_free(&ar, note, (void *)&a);
  sg_arena_on_free(&ar, note, (void *)&b);
  sg_arena_reset(&ar);
  assert_int_equal(n_order, 2);
  assert_memory_equal(order, "ba", 2);
  sg_arena_on_free(&ar, note, (void *)&c);
  sg_arena_free(&ar);
  sg_arena_free(&ar); /* a second free runs nothing again */
  assert_int_equal(n_order, 3);
  assert_int_equal(order[2], 'c');
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(allocations_are_aligned_and_distinct),
      cmocka_unit_test(large_allocations_get_their_own_block),
      cmocka_unit_test(strdup_and_calloc),
      cmocka_unit_test(reset_reuses_memory),
      cmocka_unit_test(bulk_buffers_are_zeroed),
      cmocka_unit_test(callbacks_run_at_reset_and_free),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
