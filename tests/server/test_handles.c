// SPDX-License-Identifier: Apache-2.0
/* test_handles.c — the tensor handle store (server/handles.c) and the eager path under
 * it (graph/program/eager.c): ids, lookups after release, per-device limits, variables shared
 * by reference, and gr_eager_op's errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handles.h"
#include "kn.h"

static gr_value *vec(int n, float v) {
  int64_t shape[1] = {n};
  kn_tensor *t = kn_tensor_new(KN_FLOAT32, 1, shape);
  for (int i = 0; i < n; i++) ((float *)t->data)[i] = v;
  return gr_value_tensor(t);
}

static const sv_owner ALICE = {"alice", 0}, BOB = {"bob", 0}, CAROL = {"carol", 0}, NOBODY = {"nobody", 0};

static void put_get_release(void **state) {
  (void)state;
  sv_handles *h = sv_handles_new(1 << 20, 100, 1 << 20);
  sg_error err = SG_ERROR_INIT;
  char a[64], b[64];
  assert_int_equal(sv_handles_put(h, "cpu", NULL, vec(4, 1.0f), a, sizeof a, &err), SG_OK);
  assert_int_equal(sv_handles_put(h, "vulkan:0", NULL, vec(2, 2.0f), b, sizeof b, &err), SG_OK);
  assert_true(strncmp(a, "cpu#", 4) == 0 && strncmp(b, "vulkan:0#", 9) == 0);
  assert_string_not_equal(a + 4, b + 9); /* ids are never reused, across devices too */
  const char *dev = NULL;
  gr_value *v = sv_handles_get(h, NULL, b, &dev, &err);
  assert_non_null(v);
  assert_string_equal(dev, "vulkan:0");
  assert_int_equal(gr_value_tensor_of(v)->size, 2);
  uint64_t n, bytes;
  sv_handles_stats(h, &n, &bytes);
  assert_int_equal(n, 2);
  assert_int_equal(bytes, 24);
  assert_true(sv_handles_release(h, NULL, b));
  assert_false(sv_handles_release(h, NULL, b)); /* twice: nothing */
  /* the request that looked it up still holds it */
  assert_int_equal(((float *)gr_value_tensor_of(v)->data)[1], 2.0f);
  gr_value_release(v);
  assert_null(sv_handles_get(h, NULL, b, NULL, &err));
  assert_int_equal(err.code, SG_NOT_FOUND);
  assert_non_null(strstr(err.message, "was released"));
  char wrong[80];
  snprintf(wrong, sizeof wrong, "vulkan:0#%s", strchr(a, '#') + 1); /* a's number, other device */
  assert_null(sv_handles_get(h, NULL, wrong, NULL, &err));
  assert_null(sv_handles_get(h, NULL, "garbage", NULL, &err));
  assert_non_null(strstr(err.message, "not a tensor handle id"));
  sg_error_clear(&err);
  sv_handles_free(h); /* frees what is still live (LeakSanitizer checks) */
}

/* Client-chosen ids (EagerBatch results): exactly DEVICE# and 32 lowercase hex digits,
 * the first 16 not all zero; one wrong byte anywhere is refused, and a lookup with it
 * finds nothing. */
static void client_chosen_ids(void **state) {
  (void)state;
  sv_handles *h = sv_handles_new(1 << 20, 1000, 1 << 20);
  sg_error err = SG_ERROR_INIT;
  const char *good = "cpu#0123456789abcdef0fedcba987654321";
  assert_int_equal(sv_handles_put_as(h, "cpu", NULL, vec(2, 1.0f), good, &err), SG_OK);
  gr_value *v = sv_handles_get(h, NULL, good, NULL, &err);
  assert_non_null(v);
  gr_value_release(v);
  const char bad_bytes[] = {'g', 'A', 'F', '#', ' ', '/', ':', '`', (char)0x80, (char)0xff};
  char id[48];
  for (size_t k = 4; k < strlen(good); k++)
    for (size_t b = 0; b < sizeof bad_bytes; b++) {
      strcpy(id, good);
      id[k] = bad_bytes[b];
      assert_null(sv_handles_get(h, NULL, id, NULL, &err));
      assert_int_equal(err.code, SG_NOT_FOUND);
      sg_error_clear(&err);
      assert_int_equal(sv_handles_put_as(h, "cpu", NULL, vec(1, 0.0f), id, &err), SG_INVALID_ARGUMENT);
      assert_non_null(strstr(err.message, "not DEVICE#HEX"));
      sg_error_clear(&err);
    }
  const char *refused[] = {"cpu#0000000000000000ffffffffffffffff", "cpu#0123456789abcdef0fedcba98765432",
                           "cpu#0123456789abcdef0fedcba9876543210", "vulkan:0#0123456789abcdef0fedcba987654322",
                           "cpu0123456789abcdef0fedcba9876543210", "cpu#"};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    assert_int_equal(sv_handles_put_as(h, "cpu", NULL, vec(1, 0.0f), refused[i], &err), SG_INVALID_ARGUMENT);
    sg_error_clear(&err);
  }
  assert_int_equal(sv_handles_put_as(h, "cpu", NULL, vec(1, 0.0f), good, &err), SG_ALREADY_EXISTS);
  sg_error_clear(&err);
  uint64_t n, bytes;
  sv_handles_stats(h, &n, &bytes);
  assert_int_equal(n, 1); /* nothing refused was stored */
  sv_handles_free(h);
}

static void limits(void **state) {
  (void)state;
  sv_handles *h = sv_handles_new(64, 3, 1 << 20);
  sg_error err = SG_ERROR_INIT;
  char id[64];
  assert_int_equal(sv_handles_put(h, "cpu", NULL, vec(10, 0), id, sizeof id, &err), SG_OK); /* 40 B */
  assert_int_equal(sv_handles_put(h, "cpu", NULL, vec(10, 0), id, sizeof id, &err), SG_RESOURCE_EXHAUSTED);
  assert_non_null(strstr(err.message, "--max-handle-bytes"));
  sg_error_clear(&err);
  /* the check Put makes before taking device memory: same limits, nothing stored */
  assert_int_equal(sv_handles_check_room(h, "cpu", NULL, 24, &err), SG_OK);
  assert_int_equal(sv_handles_check_room(h, "cpu", NULL, 25, &err), SG_RESOURCE_EXHAUSTED);
  assert_non_null(strstr(err.message, "a 25-byte tensor on cpu would exceed the handle memory limit of 64"));
  sg_error_clear(&err);
  assert_int_equal(sv_handles_check_room(h, "vulkan:0", NULL, 64, &err), SG_OK);
  /* per device: another device has its own budget */
  assert_int_equal(sv_handles_put(h, "vulkan:0", NULL, vec(10, 0), id, sizeof id, &err), SG_OK);
  assert_int_equal(sv_handles_put(h, "cpu", NULL, vec(1, 0), id, sizeof id, &err), SG_OK);
  assert_int_equal(sv_handles_put(h, "cpu", NULL, vec(1, 0), id, sizeof id, &err), SG_OK);
  assert_int_equal(sv_handles_put(h, "cpu", NULL, vec(1, 0), id, sizeof id, &err), SG_RESOURCE_EXHAUSTED);
  assert_non_null(strstr(err.message, "--max-handles"));
  sg_error_clear(&err);
  sv_handles_free(h);
}

/* Sessions: handles made under a session go when it ends or its lease runs out; a
 * renewal keeps them; handles without a session never expire. */
static void sessions(void **state) {
  (void)state;
  sv_handles *h = sv_handles_new(1 << 20, 100, 1 << 20);
  sg_error err = SG_ERROR_INIT;
  char a[64], b[64], c[64], d[64];
  const uint64_t ms = 1000000;
  uint64_t t0 = sg_now_ns();
  assert_int_equal(sv_handles_put(h, "cpu", &ALICE, vec(4, 1.0f), a, sizeof a, &err), SG_OK);
  assert_int_equal(sv_handles_put(h, "vulkan:0", &ALICE, vec(2, 1.0f), b, sizeof b, &err), SG_OK);
  assert_int_equal(sv_handles_put(h, "cpu", &BOB, vec(1, 1.0f), c, sizeof c, &err), SG_OK);
  assert_int_equal(sv_handles_put(h, "cpu", NULL, vec(1, 1.0f), d, sizeof d, &err), SG_OK);
  int live = 0;
  uint64_t expired = 7;
  assert_int_equal(sv_handles_session_count(h, &ALICE, &live, &expired), 2);
  assert_int_equal(live, 2);
  assert_int_equal(expired, 0);
  /* within the lease nothing goes; bob renews, alice does not */
  int ended = -1;
  assert_int_equal(sv_handles_expire(h, t0 + 500 * ms, 1000 * ms, &ended), 0);
  assert_int_equal(ended, 0);
  sv_handles_touch(h, &BOB, t0 + 900 * ms);
  uint64_t now = sg_now_ns() + 1500 * ms;
  assert_int_equal(sv_handles_expire(h, now, 1000 * ms, &ended), 2);
  assert_int_equal(ended, 1);
  gr_value *v = sv_handles_get(h, &ALICE, a, NULL, &err);
  assert_null(v);
  assert_int_equal(err.code, SG_NOT_FOUND);
  sg_error_clear(&err);
  uint64_t count, bytes;
  sv_handles_stats(h, &count, &bytes);
  assert_int_equal(count, 2); /* bob's and the session-less one */
  assert_int_equal(bytes, 8);
  assert_int_equal(sv_handles_session_count(h, &ALICE, &live, &expired), 0);
  assert_int_equal(live, 1);
  assert_int_equal(expired, 2);
  /* ending a session releases at once; the session-less handle stays for ever */
  assert_int_equal(sv_handles_end_session(h, &BOB), 1);
  assert_int_equal(sv_handles_end_session(h, &NOBODY), 0);
  assert_int_equal(sv_handles_expire(h, now + 100000 * ms, 1000 * ms, &ended), 0);
  v = sv_handles_get(h, NULL, d, NULL, &err);
  assert_non_null(v);
  gr_value_release(v);
  /* a freed slot is reused by the next session */
  assert_int_equal(sv_handles_put(h, "cpu", &CAROL, vec(1, 1.0f), a, sizeof a, &err), SG_OK);
  assert_int_equal(sv_handles_session_count(h, &CAROL, &live, NULL), 1);
  assert_int_equal(live, 1);
  /* names: letters, digits, - and _ */
  assert_true(sv_session_name_ok("a-B_9", &err));
  assert_false(sv_session_name_ok("", &err));
  assert_false(sv_session_name_ok("with space", &err));
  assert_non_null(strstr(err.message, "stagd-session"));
  sg_error_clear(&err);
  sv_handles_free(h);
}

static void eager_ops_and_variables(void **state) {
  (void)state;
  sg_error err = SG_ERROR_INIT;
  gr_value *x = vec(3, 2.0f), *out = NULL;
  gr_value *args[2] = {x, gr_value_float(0.5)};
  assert_int_equal(gr_eager_op("mul", args, 2, "cpu", &out, &err), SG_OK);
  const kn_tensor *t = gr_value_tensor_of(out);
  assert_int_equal(t->dtype, KN_FLOAT32); /* a Python scalar does not widen float32 */
  assert_true(((float *)t->data)[2] == 1.0f);
  gr_value_release(out);
  gr_value_release(args[1]);
  /* a variable: assign_add updates the one cell every holder shares */
  gr_value *var;
  assert_int_equal(gr_eager_op("variable", &x, 1, NULL, &var, &err), SG_OK);
  assert_int_equal(gr_value_kind_of(var), GR_VALUE_VARIABLE);
  gr_value *upd[2] = {var, vec(3, 1.0f)};
  assert_int_equal(gr_eager_op("assign_add", upd, 2, NULL, &out, &err), SG_OK);
  gr_value_release(out);
  gr_value *cur = gr_value_variable_get(var);
  assert_true(((float *)gr_value_tensor_of(cur)->data)[0] == 3.0f);
  assert_true(((float *)gr_value_tensor_of(x)->data)[0] == 2.0f); /* the initial value is untouched */
  gr_value_release(cur);
  gr_value_release(upd[1]);
  gr_value_release(var);
  /* errors name the op */
  assert_int_equal(gr_eager_op("frobnicate", &x, 1, NULL, &out, &err), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "unknown op 'frobnicate'"));
  assert_int_equal(gr_eager_op("while", &x, 1, NULL, &out, &err), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "cannot run eagerly"));
  assert_int_equal(gr_eager_op("exp", args, 2, NULL, &out, &err), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "takes 1 argument"));
  gr_value *m[2] = {x, vec(2, 1.0f)};
  assert_int_equal(gr_eager_op("+", m, 2, NULL, &out, &err), SG_INVALID_ARGUMENT);
  assert_null(out);
  gr_value_release(m[1]);
  assert_null(gr_value_str("not-a-dtype"));
  sg_error_clear(&err);
  gr_value_release(x);
}

/* Ownership (docs/security.md): 128-bit ids; another session, the same name under
 * another token, or the wrong device part get nothing; only the owner releases or ends;
 * per-session budgets; a grant shares a Variable with one named session. */
static void ownership(void **state) {
  (void)state;
  sv_handles *h = sv_handles_new(1 << 20, 100, 64);
  sg_error err = SG_ERROR_INIT;
  const sv_owner mallory = {"alice", 42}; /* alice's name, another token */
  char a[SV_HANDLE_ID_MAX], b[SV_HANDLE_ID_MAX], wrong[SV_HANDLE_ID_MAX + 8];
  assert_int_equal(sv_handles_put(h, "cpu", &ALICE, vec(4, 1.0f), a, sizeof a, &err), SG_OK);
  assert_int_equal(strlen(a), 4 + 32);
  assert_int_equal(sv_handles_put(h, "cpu", &ALICE, vec(4, 1.0f), b, sizeof b, &err), SG_OK);
  assert_string_not_equal(a, b);
  const sv_owner *others[] = {&BOB, &mallory, NULL};
  for (int i = 0; i < 3; i++) {
    assert_null(sv_handles_get(h, others[i], a, NULL, &err));
    assert_int_equal(err.code, SG_NOT_FOUND);
    assert_false(sv_handles_release(h, others[i], a));
  }
  assert_int_equal(sv_handles_end_session(h, &mallory), 0);
  snprintf(wrong, sizeof wrong, "vulkan:7#%s", strchr(a, '#') + 1);
  assert_false(sv_handles_release(h, &ALICE, wrong));
  gr_value *v = sv_handles_get(h, &ALICE, a, NULL, &err);
  assert_non_null(v);
  gr_value_release(v);
  /* 32 of 64 session bytes held: 48 more is over alice's budget, not bob's */
  assert_int_equal(sv_handles_put(h, "cpu", &ALICE, vec(12, 0), wrong, sizeof wrong, &err), SG_RESOURCE_EXHAUSTED);
  assert_non_null(strstr(err.message, "--max-session-handle-bytes"));
  assert_int_equal(sv_handles_check_room(h, "cpu", &ALICE, 48, &err), SG_RESOURCE_EXHAUSTED);
  assert_int_equal(sv_handles_check_room(h, "cpu", &BOB, 48, &err), SG_OK);
  /* grants: a Variable only, only by its owner, to a valid name */
  assert_int_equal(sv_handles_grant(h, &ALICE, a, "bob", &err), SG_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "not a Variable"));
  gr_value *x = vec(2, 3.0f), *var;
  assert_int_equal(gr_eager_op("variable", &x, 1, NULL, &var, &err), SG_OK);
  gr_value_release(x);
  char vid[SV_HANDLE_ID_MAX];
  assert_true(sv_handles_release(h, &ALICE, b));
  assert_int_equal(sv_handles_put(h, "cpu", &ALICE, var, vid, sizeof vid, &err), SG_OK);
  assert_int_equal(sv_handles_grant(h, &BOB, vid, "bob", &err), SG_NOT_FOUND);
  assert_int_equal(sv_handles_grant(h, &ALICE, vid, "no spaces", &err), SG_INVALID_ARGUMENT);
  assert_null(sv_handles_get(h, &BOB, vid, NULL, &err));
  assert_int_equal(sv_handles_grant(h, &ALICE, vid, "bob", &err), SG_OK);
  v = sv_handles_get(h, &BOB, vid, NULL, &err);
  assert_non_null(v);
  gr_value_release(v);
  assert_null(sv_handles_get(h, &CAROL, vid, NULL, &err));
  assert_false(sv_handles_release(h, &BOB, vid)); /* a grantee uses, never releases */
  assert_int_equal(sv_handles_end_session(h, &ALICE), 2);
  assert_null(sv_handles_get(h, &BOB, vid, NULL, &err));
  sg_error_clear(&err);
  sv_handles_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(put_get_release),
      cmocka_unit_test(client_chosen_ids),
      cmocka_unit_test(limits),
      cmocka_unit_test(sessions),
      cmocka_unit_test(ownership),
      cmocka_unit_test(eager_ops_and_variables),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
