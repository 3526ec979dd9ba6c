// SPDX-License-Identifier: Apache-2.0
/* test_pbjson.c — protobuf-c ↔ JSON: the proto3 JSON mapping both ways (names,
 * int64 as strings, enums, bytes, oneofs, nesting, repeated fields) and the errors
 * for JSON that does not fit the message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stagd.pb-c.h"
#include "sv.h"

static char *encode(const ProtobufCMessage *m) {
  cJSON *j = sv_pbjson_encode(m);
  char *s = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return s;
}

static sg_code decode(const ProtobufCMessageDescriptor *d, const char *text, sg_arena *a, ProtobufCMessage **out,
                      sg_error *err) {
  cJSON *j = cJSON_Parse(text);
  assert_non_null(j);
  sg_code rc = sv_pbjson_decode(d, j, a, out, err);
  cJSON_Delete(j);
  return rc;
}

static void encodes_proto3_mapping(void **state) {
  Stagd__V1__StatsReply r = STAGD__V1__STATS_REPLY__INIT;
  r.uptime_ms = 12345678901234ULL;
  r.requests_total = 0; /* default: left out */
  Stagd__V1__MethodStats ms = STAGD__V1__METHOD_STATS__INIT;
  ms.method = "Version";
  ms.calls = 2;
  Stagd__V1__MethodStats *arr[] = {&ms};
  r.n_methods = 1;
  r.methods = arr;
  char *s = encode(&r.base);
  assert_string_equal(s, "{\"uptimeMs\":\"12345678901234\",\"methods\":[{\"method\":\"Version\",\"calls\":\"2\"}]}");
  cJSON_free(s);
}

static void round_trips_values(void **state) {
  sg_arena a;
  sg_arena_init(&a, 0);
  sg_error err = SG_ERROR_INIT;
  const char *text =
      "{\"graphId\":\"g1\",\"entry\":\"f\",\"device\":\"cpu\",\"args\":["
      "{\"intValue\":\"-9007199254740993\"},"
      "{\"floatValue\":\"NaN\"},"
      "{\"none\":true},"
      "{\"tensor\":{\"dtype\":\"DTYPE_FLOAT32\",\"shape\":[\"2\",\"1\"],\"data\":\"AACAPwAAAEA=\"}},"
      "{\"tuple\":{\"items\":[{\"boolValue\":false},{\"stringValue\":\"é\\n\"}]}}]}";
  ProtobufCMessage *m;
  assert_int_equal(decode(&stagd__v1__execute_request__descriptor, text, &a, &m, &err), SG_OK);
  Stagd__V1__ExecuteRequest *q = (void *)m;
  assert_string_equal(q->graph_id, "g1");
  assert_int_equal(q->n_args, 5);
  assert_int_equal(q->args[0]->kind_case, STAGD__V1__VALUE__KIND_INT_VALUE);
  assert_true(q->args[0]->int_value == -9007199254740993LL); /* exact beyond 2^53 */
  assert_true(isnan(q->args[1]->float_value));
  assert_int_equal(q->args[2]->kind_case, STAGD__V1__VALUE__KIND_NONE);
  Stagd__V1__Tensor *t = q->args[3]->tensor;
  assert_int_equal(t->dtype, STAGD__V1__DTYPE__DTYPE_FLOAT32);
  assert_int_equal(t->n_shape, 2);
  assert_int_equal(t->shape[0], 2);
  assert_int_equal(t->data.len, 8);
  float f[2];
  memcpy(f, t->data.data, 8);
  assert_true(f[0] == 1.0f && f[1] == 2.0f);
  /* a oneof member at its default value is still present */
  assert_int_equal(q->args[4]->tuple->items[0]->kind_case, STAGD__V1__VALUE__KIND_BOOL_VALUE);
  assert_string_equal(q->args[4]->tuple->items[1]->string_value, "é\n");

  /* encode → decode → encode is stable */
  char *once = encode(m);
  ProtobufCMessage *m2;
  assert_int_equal(decode(&stagd__v1__execute_request__descriptor, once, &a, &m2, &err), SG_OK);
  char *twice = encode(m2);
  assert_string_equal(once, twice);
  assert_non_null(strstr(once, "\"boolValue\":false"));
  assert_non_null(strstr(once, "\"data\":\"AACAPwAAAEA=\""));
  cJSON_free(once);
  cJSON_free(twice);
  sg_arena_free(&a);
}

static void accepts_original_names_and_enum_numbers(void **state) {
  sg_arena a;
  sg_arena_init(&a, 0);
  sg_error err = SG_ERROR_INIT;
  ProtobufCMessage *m;
  assert_int_equal(decode(&stagd__v1__convert_request__descriptor, "{\"source\":\"x\",\"style\":2,\"function\":\"f\"}",
                          &a, &m, &err),
                   SG_OK);
  assert_int_equal(((Stagd__V1__ConvertRequest *)m)->style, STAGD__V1__STYLE__STYLE_SNEK);
  assert_int_equal(decode(&stagd__v1__ping_request__descriptor, "{\"delay_ms\":7}", &a, &m, &err), SG_OK);
  assert_int_equal(((Stagd__V1__PingRequest *)m)->delay_ms, 7);
  assert_int_equal(sv_pbjson_decode(&stagd__v1__ping_request__descriptor, NULL, &a, &m, &err), SG_OK);
  assert_int_equal(((Stagd__V1__PingRequest *)m)->delay_ms, 0);
  sg_arena_free(&a);
}

static void rejects_what_does_not_fit(void **state) {
  sg_arena a;
  sg_arena_init(&a, 0);
  sg_error err = SG_ERROR_INIT;
  ProtobufCMessage *m;
  struct {
    const ProtobufCMessageDescriptor *d;
    const char *json;
    const char *needle;
  } cases[] = {
      {&stagd__v1__ping_request__descriptor, "{\"delayMs\":\"soon\"}", "field 'delayMs'"},
      {&stagd__v1__ping_request__descriptor, "{\"delayMs\":-1}", "unsigned 32-bit"},
      {&stagd__v1__ping_request__descriptor, "{\"delayMs\":4294967296}", "unsigned 32-bit"},
      {&stagd__v1__ping_request__descriptor, "{\"delayMs\":1.5}", "integer"},
      {&stagd__v1__ping_request__descriptor, "{\"colour\":1}", "unknown field 'colour' in stagd.v1.PingRequest"},
      {&stagd__v1__convert_request__descriptor, "{\"style\":\"FANCY\"}", "STYLE_SNEK"},
      {&stagd__v1__stage_request__descriptor, "{\"dumps\":\"DUMP_FORMAT_DOT\"}", "expected an array"},
      {&stagd__v1__execute_request__descriptor, "{\"args\":[{\"tensor\":{\"shape\":[\"x\"]}}]}",
       "args[0].tensor.shape[0]"},
      {&stagd__v1__execute_request__descriptor, "{\"args\":[{\"tensor\":{\"data\":\"***\"}}]}", "base64"},
      {&stagd__v1__ping_request__descriptor, "[1,2]", "params must be an object"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(decode(cases[i].d, cases[i].json, &a, &m, &err), SG_INVALID_ARGUMENT);
    if (!strstr(err.message, cases[i].needle)) fail_msg("case %zu: '%s' lacks '%s'", i, err.message, cases[i].needle);
  }
  sg_error_clear(&err);
  sg_arena_free(&a);
}

static void pretty_printing(void **state) {
  cJSON *j = cJSON_Parse("{\"a\":[1,{\"b\":\"x\"}],\"c\":{},\"d\":[]}");
  char *s = sv_json_pretty(j);
  assert_string_equal(s, "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"x\"\n    }\n  ],\n  \"c\": {},\n  \"d\": []\n}");
  free(s);
  cJSON_Delete(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_proto3_mapping),
      cmocka_unit_test(round_trips_values),
      cmocka_unit_test(accepts_original_names_and_enum_numbers),
      cmocka_unit_test(rejects_what_does_not_fit),
      cmocka_unit_test(pretty_printing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
