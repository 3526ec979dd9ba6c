// SPDX-License-Identifier: Apache-2.0
/*
 * test_txn.c — all-or-nothing Variable updates (graph/exec/txn.c; docs/graph.md
 * "Variables: all or nothing"): a request that fails (error, failed assertion,
 * deadline) leaves every variable as it was; a request sees its own writes; a
 * conflicting commit is refused and nothing of it published; concurrent requests never
 * see half of another's updates and lose no increment. Runs on the CPU, and on
 * vulkan:0 when given as the first argument.
 */
#include <pthread.h>

#include "graph_test_util.h"
#include "gr_exec.h"
#include "program_int.h" /* gr_value: a boxed gr_val */

static const char *device;

/* Two variables a = 10.0 and b = 20.0 (a tuple of cells). */
static gr_value *two_variables(void) {
  sg_error e = SG_ERROR_INIT;
  gr_program *p;
  const char *src = "(def f () (tuple (variable 10.0) (variable 20.0)))";
  assert_int_equal(gr_stage(src, strlen(src), "v.sexp", NULL, &p, &e), SG_OK);
  gr_value *vars = NULL;
  char *printed = NULL;
  gr_exec_options xo = {.device = device};
  assert_int_equal(gr_execute_values(p, &xo, NULL, 0, &vars, &printed, &e), SG_OK);
  free(printed);
  gr_program_release(p);
  return vars;
}

static double value_of(gr_value *vars, int i) {
  gr_value *cell = gr_value_tuple_item(vars, i), *cur = gr_value_variable_get(cell);
  char *json = gr_value_to_json_text(cur);
  double d = strtod(json, NULL);
  free(json);
  gr_value_release(cur);
  gr_value_release(cell);
  return d;
}

/* Runs src's entry on the two cells; returns its code and its error's message. */
static sg_code run_on(gr_value *vars, const char *src, uint64_t deadline_ns, char **result, sg_error *e) {
  gr_program *p;
  sg_code rc = gr_stage(src, strlen(src), "u.sexp", NULL, &p, e);
  if (rc) fprintf(stderr, "staging %s: %s\n", src, e->message);
  assert_int_equal(rc, SG_OK);
  gr_value *args[2] = {gr_value_tuple_item(vars, 0), gr_value_tuple_item(vars, 1)}, *res = NULL;
  char *printed = NULL;
  gr_exec_options xo = {.device = device, .deadline_ns = deadline_ns};
  rc = gr_execute_values(p, &xo, args, 2, &res, &printed, e);
  if (result) *result = rc ? NULL : gr_value_to_json_text(res);
  if (res) gr_value_release(res);
  free(printed);
  gr_value_release(args[0]);
  gr_value_release(args[1]);
  gr_program_release(p);
  return rc;
}

/* Updates then a failure: an index out of range, a failed assert, a deadline in a loop
 * that keeps assigning, a shape error on the second update. Nothing is published. */
static void a_failed_call_changes_nothing(void **state) {
  (void)state;
  gr_value *vars = two_variables();
  sg_error e = SG_ERROR_INIT;
  const char *fails[] = {
      "(def g (a b) (begin (assign_add a 1.0) (assign_add b 1.0) (getitem (ones (tuple 3)) (cast (read b) \"int64\"))))",
      "(def g (a b) (begin (assign a 0.0) (assign_add b 5.0) (assert (< (read b) 0.0) \"b negative\")))",
      "(def g (a b) (begin (assign_add a 1.0) (assign_add b 1.0) (assign a (getitem (ones (tuple 2)) (cast (read b) \"int64\")))))",
  };
  for (size_t i = 0; i < sizeof fails / sizeof *fails; i++) {
    assert_int_not_equal(run_on(vars, fails[i], 0, NULL, &e), SG_OK);
    sg_error_clear(&e);
    assert_true(value_of(vars, 0) == 10.0 && value_of(vars, 1) == 20.0);
  }
  const char *loops = "(def g (a b) (while (lambda (i) true) "
                      "(lambda (i) (begin (assign_add a 1.0) (assign b (read a)) (tuple (+ i 1)))) (tuple 0)))";
  assert_int_equal(run_on(vars, loops, sg_now_ns() + 100000000u, NULL, &e), SG_DEADLINE_EXCEEDED);
  sg_error_clear(&e);
  assert_true(value_of(vars, 0) == 10.0 && value_of(vars, 1) == 20.0);
  /* and the same updates without the failure are all published */
  char *r = NULL;
  assert_int_equal(run_on(vars, "(def g (a b) (begin (assign_add a 1.0) (assign_add b 1.0) (read a)))", 0, &r, &e),
                   SG_OK);
  assert_string_equal(r, "11.0");
  free(r);
  assert_true(value_of(vars, 0) == 11.0 && value_of(vars, 1) == 21.0);
  gr_value_release(vars);
}

/* Inside a call, reads see the call's own writes, in order. */
static void a_call_sees_its_own_writes(void **state) {
  (void)state;
  gr_value *vars = two_variables();
  sg_error e = SG_ERROR_INIT;
  char *r = NULL;
  const char *src = "(def g (a b) (begin (assign a 1.0) (assign_add a 2.0) (assign b (* (read a) 2.0))"
                    " (tuple (read a) (read b))))";
  assert_int_equal(run_on(vars, src, 0, &r, &e), SG_OK);
  assert_string_equal(r, "{\"tuple\":[3.0,6.0]}");
  free(r);
  assert_true(value_of(vars, 0) == 3.0 && value_of(vars, 1) == 6.0);
  gr_value_release(vars);
}

/* The transaction API itself: a request whose read cell changed before its commit is
 * refused (GR_TXN_RETRY) and publishes nothing; a blind write never conflicts. */
static void a_stale_read_is_refused_at_commit(void **state) {
  (void)state;
  gr_value *vars = two_variables();
  gr_value *a = gr_value_tuple_item(vars, 0), *b = gr_value_tuple_item(vars, 1);
  gr_obj *ca = a->v.u.o, *cb = b->v.u.o;
  sg_error e = SG_ERROR_INIT;
  gr_ctx one = {0}, two = {0};
  assert_int_equal(gr_txn_begin(&one, 0, &e), SG_OK);
  assert_int_equal(gr_txn_begin(&two, 0, &e), SG_OK);
  gr_val seen = gr_var_read(&one, ca); /* one reads a, then writes b */
  gv_release(seen);
  gr_var_write(&one, cb, gv_float(-1.0));
  gr_var_write(&two, ca, gv_float(99.0)); /* two writes a blindly and commits first */
  assert_int_equal(gr_txn_end(&two, SG_OK, &e), SG_OK);
  assert_int_equal(gr_txn_end(&one, SG_OK, &e), (sg_code)GR_TXN_RETRY);
  assert_true(value_of(vars, 0) == 99.0 && value_of(vars, 1) == 20.0);
  /* a failed request publishes nothing, whatever it wrote */
  assert_int_equal(gr_txn_begin(&one, 0, &e), SG_OK);
  gr_var_write(&one, cb, gv_float(-2.0));
  assert_int_equal(gr_txn_end(&one, SG_INVALID_ARGUMENT, &e), SG_INVALID_ARGUMENT);
  assert_true(value_of(vars, 1) == 20.0);
  gr_value_release(a);
  gr_value_release(b);
  gr_value_release(vars);
}

/* Writers move one unit from b to a; readers check a + b. Each call is one step for
 * the others (no reader sees half a move), and no increment is lost. */
enum { THREADS = 4, CALLS = 150 };
static gr_value *shared_vars;
static gr_program *mover, *summer;
static atomic_int torn;

static void *worker(void *arg) {
  bool writes = (intptr_t)arg % 2 == 0;
  gr_value *args[2] = {gr_value_tuple_item(shared_vars, 0), gr_value_tuple_item(shared_vars, 1)};
  gr_exec_options xo = {.device = device};
  for (int i = 0; i < CALLS; i++) {
    sg_error e = SG_ERROR_INIT;
    gr_value *res = NULL;
    char *printed = NULL;
    sg_code rc = gr_execute_values(writes ? mover : summer, &xo, args, 2, &res, &printed, &e);
    if (rc) {
      fprintf(stderr, "worker: %s\n", e.message);
      atomic_fetch_add(&torn, 1000);
    } else if (!writes) {
      char *json = gr_value_to_json_text(res);
      if (strtod(json, NULL) != 30.0) atomic_fetch_add(&torn, 1);
      free(json);
    }
    sg_error_clear(&e);
    free(printed);
    if (res) gr_value_release(res);
  }
  gr_value_release(args[0]);
  gr_value_release(args[1]);
  return NULL;
}

static void concurrent_calls_see_whole_commits(void **state) {
  (void)state;
  shared_vars = two_variables();
  sg_error e = SG_ERROR_INIT;
  const char *m = "(def g (a b) (begin (assign_add a 1.0) (assign_add b -1.0) (read a)))";
  const char *s = "(def g (a b) (+ (read a) (read b)))";
  assert_int_equal(gr_stage(m, strlen(m), "m.sexp", NULL, &mover, &e), SG_OK);
  assert_int_equal(gr_stage(s, strlen(s), "s.sexp", NULL, &summer, &e), SG_OK);
  pthread_t th[THREADS];
  for (intptr_t i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  assert_int_equal(atomic_load(&torn), 0);
  double moved = (double)(THREADS / 2 * CALLS);
  assert_true(value_of(shared_vars, 0) == 10.0 + moved && value_of(shared_vars, 1) == 20.0 - moved);
  gr_program_release(mover);
  gr_program_release(summer);
  gr_value_release(shared_vars);
}

/* A variable that would hold itself — directly, in a tuple, or through another cell
 * (the second assign in the same request sees the first) — is refused: the cycle could
 * never be printed or freed (fuzz_graph found `(assign v v)` overflowing the stack). */
static void a_variable_cannot_contain_itself(void **state) {
  (void)state;
  const char *srcs[] = {
      "(def f (x) (let v (variable 1.0) (begin (assign v v) x)))",
      "(def f (x) (let v (variable 1.0) (begin (assign v (tuple 1 v)) x)))",
      "(def f (x) (let a (variable 1.0) (let b (variable 2.0) (begin (assign b (tuple a)) (assign a b) x))))",
  };
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
    gr_stage_options so = {0};
    gr_exec_options xo = {.device = device};
    char *res = NULL, *printed = NULL;
    sg_error e = SG_ERROR_INIT;
    sg_code rc = gr_run_source(srcs[i], strlen(srcs[i]), "cycle.sexp", &so, &xo, "[1.5]", &res, &printed, &e);
    assert_int_equal(rc, SG_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "cannot contain itself"));
    assert_null(res);
    free(printed);
    sg_error_clear(&e);
  }
  /* a cell holding another (no cycle) is still fine */
  const char *ok = "(def f (x) (let a (variable 1.0) (let b (variable 2.0) (begin (assign b (tuple a)) x))))";
  gr_stage_options so = {0};
  gr_exec_options xo = {.device = device};
  char *res = NULL, *printed = NULL;
  sg_error e = SG_ERROR_INIT;
  assert_int_equal(gr_run_source(ok, strlen(ok), "ok.sexp", &so, &xo, "[1.5]", &res, &printed, &e), SG_OK);
  assert_string_equal(res, "1.5");
  free(res);
  free(printed);
}

int main(int argc, char **argv) {
  device = argc > 1 ? argv[1] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_failed_call_changes_nothing),
      cmocka_unit_test(a_call_sees_its_own_writes),
      cmocka_unit_test(a_stale_read_is_refused_at_commit),
      cmocka_unit_test(concurrent_calls_see_whole_commits),
      cmocka_unit_test(a_variable_cannot_contain_itself),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
