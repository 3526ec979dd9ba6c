/* test_arena.c — arenas: alignment, large allocations, reset and reuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(allocations_are_aligned_and_distinct),
      cmocka_unit_test(large_allocations_get_their_own_block),
      cmocka_unit_test(strdup_and_calloc),
      cmocka_unit_test(reset_reuses_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
