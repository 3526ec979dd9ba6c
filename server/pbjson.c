// SPDX-License-Identifier: Apache-2.0
/*
 * pbjson.c — protobuf-c messages to and from JSON, following the proto3 JSON
 * mapping: lowerCamelCase names (the original snake_case name is accepted too),
 * enums by name, 64-bit integers as strings, bytes as base64, fields at their
 * default value left out. It walks the protobuf-c descriptors, so every message of
 * the API gets JSON for free: the LSP transport and stagctl use it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv.h"

/* ------------------------------------------------------------- allocator */

static void *arena_alloc(void *ctx, size_t size) { return sg_arena_alloc(ctx, size); }
static void arena_free(void *ctx, void *p) {}

ProtobufCAllocator sv_arena_allocator(sg_arena *arena) {
  ProtobufCAllocator a = {arena_alloc, arena_free, arena};
  return a;
}

/* ----------------------------------------------------------------- names */

static void camel_name(const char *snake, char *out, size_t cap) {
  size_t j = 0;
  bool up = false;
  for (const char *p = snake; *p && j + 1 < cap; p++) {
    if (*p == '_') {
      up = true;
      continue;
    }
    out[j++] = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 32) : *p;
    up = false;
  }
  out[j] = '\0';
}

/* ---------------------------------------------------------------- base64 */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *base64_encode(const uint8_t *d, size_t n) {
  sg_buf b = SG_BUF_INIT;
  sg_buf_reserve(&b, (n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
    char q[4] = {b64[v >> 18 & 63], b64[v >> 12 & 63], i + 1 < n ? b64[v >> 6 & 63] : '=',
                 i + 2 < n ? b64[v & 63] : '='};
    sg_buf_append(&b, q, 4);
  }
  return sg_buf_detach(&b, NULL);
}

static int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

/* Standard or URL-safe alphabet, padding optional. */
static bool base64_decode(const char *s, sg_arena *a, ProtobufCBinaryData *out) {
  size_t n = strlen(s);
  while (n && s[n - 1] == '=') n--;
  uint8_t *d = sg_arena_alloc(a, n * 3 / 4 + 3);
  size_t j = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    int v = b64_value(s[i]);
    if (v < 0) return false;
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      d[j++] = (uint8_t)(acc >> bits);
    }
  }
  if (bits >= 6) return false; /* a lone trailing character */
  out->data = d;
  out->len = j;
  return true;
}

/* ---------------------------------------------------------------- encode */

static cJSON *encode_scalar(const ProtobufCFieldDescriptor *f, const void *p) {
  char tmp[32];
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: return cJSON_CreateNumber(*(const int32_t *)p);
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32: return cJSON_CreateNumber(*(const uint32_t *)p);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
      snprintf(tmp, sizeof tmp, "%lld", (long long)*(const int64_t *)p);
      return cJSON_CreateString(tmp);
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
      snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)*(const uint64_t *)p);
      return cJSON_CreateString(tmp);
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE: {
      double v = f->type == PROTOBUF_C_TYPE_FLOAT ? *(const float *)p : *(const double *)p;
      if (isnan(v)) return cJSON_CreateString("NaN");
      if (isinf(v)) return cJSON_CreateString(v > 0 ? "Infinity" : "-Infinity");
      return cJSON_CreateNumber(v);
    }
    case PROTOBUF_C_TYPE_BOOL: return cJSON_CreateBool(*(const protobuf_c_boolean *)p);
    case PROTOBUF_C_TYPE_ENUM: {
      int v = *(const int *)p;
      const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
      return ev ? cJSON_CreateString(ev->name) : cJSON_CreateNumber(v);
    }
    case PROTOBUF_C_TYPE_STRING: {
      const char *s = *(char *const *)p;
      return cJSON_CreateString(s ? s : "");
    }
    case PROTOBUF_C_TYPE_BYTES: {
      const ProtobufCBinaryData *bd = p;
      char *s = base64_encode(bd->data, bd->len);
      cJSON *j = cJSON_CreateString(s);
      free(s);
      return j;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
      const ProtobufCMessage *m = *(ProtobufCMessage *const *)p;
      return m ? sv_pbjson_encode(m) : cJSON_CreateObject();
    }
  }
  return cJSON_CreateNull();
}

static size_t scalar_size(const ProtobufCFieldDescriptor *f) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT: return 4;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE: return 8;
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_ENUM: return sizeof(int);
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
  }
  return 0;
}

static bool is_default(const ProtobufCFieldDescriptor *f, const void *p) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
      const char *s = *(char *const *)p;
      return !s || !*s;
    }
    case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)p)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE: return *(ProtobufCMessage *const *)p == NULL;
    case PROTOBUF_C_TYPE_FLOAT: return *(const float *)p == 0 && !signbit(*(const float *)p);
    case PROTOBUF_C_TYPE_DOUBLE: return *(const double *)p == 0 && !signbit(*(const double *)p);
    default: {
      static const uint8_t zero[8];
      return memcmp(p, zero, scalar_size(f)) == 0;
    }
  }
}

cJSON *sv_pbjson_encode(const ProtobufCMessage *msg) {
  const ProtobufCMessageDescriptor *d = msg->descriptor;
  cJSON *obj = cJSON_CreateObject();
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    const char *base = (const char *)msg;
    const void *p = base + f->offset;
    char name[128];
    camel_name(f->name, name, sizeof name);
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = *(const size_t *)(base + f->quantifier_offset);
      if (!n) continue;
      const char *arr = *(char *const *)p;
      cJSON *ja = cJSON_AddArrayToObject(obj, name);
      for (size_t k = 0; k < n; k++) cJSON_AddItemToArray(ja, encode_scalar(f, arr + k * scalar_size(f)));
      continue;
    }
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      uint32_t which = *(const uint32_t *)(base + f->quantifier_offset);
      if (which != f->id) continue;
    } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
               f->type != PROTOBUF_C_TYPE_MESSAGE && f->type != PROTOBUF_C_TYPE_STRING) {
      if (!*(const protobuf_c_boolean *)(base + f->quantifier_offset)) continue;
    } else if (is_default(f, p)) {
      continue;
    }
    cJSON_AddItemToObject(obj, name, encode_scalar(f, p));
  }
  return obj;
}

/* ---------------------------------------------------------------- decode */

typedef struct dctx {
  sg_arena *arena;
  sg_error *err;
  char path[256]; /* field path for messages, e.g. "args[2].tensor.dtype" */
} dctx;

static sg_code type_error(dctx *c, const char *expected, const cJSON *j) {
  const char *got = cJSON_IsString(j) ? "a string" : cJSON_IsNumber(j) ? "a number"
                    : cJSON_IsBool(j) ? "a boolean" : cJSON_IsNull(j) ? "null"
                    : cJSON_IsArray(j) ? "an array" : "an object";
  return sg_error_set(c->err, SG_INVALID_ARGUMENT, "field '%s': expected %s, got %s", c->path, expected, got);
}

static bool number_of(const cJSON *j, double *out) {
  if (cJSON_IsNumber(j)) {
    *out = j->valuedouble;
    return true;
  }
  if (cJSON_IsString(j)) {
    const char *s = j->valuestring;
    if (!strcmp(s, "NaN")) *out = NAN;
    else if (!strcmp(s, "Infinity")) *out = INFINITY;
    else if (!strcmp(s, "-Infinity")) *out = -INFINITY;
    else {
      char *end;
      *out = strtod(s, &end);
      return *s && !*end;
    }
    return true;
  }
  return false;
}

/* Integers arrive as JSON numbers or decimal strings; they must be exact. */
static bool integer_of(const cJSON *j, bool is_signed, int bits, int64_t *sv, uint64_t *uv) {
  if (cJSON_IsString(j)) {
    const char *s = j->valuestring;
    char *end;
    if (!*s) return false;
    if (is_signed) {
      long long v = strtoll(s, &end, 10);
      if (*end) return false;
      *sv = v;
    } else {
      if (*s == '-') return false;
      unsigned long long v = strtoull(s, &end, 10);
      if (*end) return false;
      *uv = v;
    }
  } else if (cJSON_IsNumber(j)) {
    double d = j->valuedouble;
    if (d != floor(d) || fabs(d) > 9007199254740992.0) return false;
    if (is_signed) *sv = (int64_t)d;
    else {
      if (d < 0) return false;
      *uv = (uint64_t)d;
    }
  } else {
    return false;
  }
  if (bits == 32) {
    if (is_signed && (*sv < INT32_MIN || *sv > INT32_MAX)) return false;
    if (!is_signed && *uv > UINT32_MAX) return false;
  }
  return true;
}

static sg_code decode_message(const ProtobufCMessageDescriptor *desc, const cJSON *json, dctx *c,
                              ProtobufCMessage **out);

static sg_code decode_scalar(const ProtobufCFieldDescriptor *f, const cJSON *j, dctx *c, void *p) {
  int64_t sv = 0;
  uint64_t uv = 0;
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
      if (!integer_of(j, true, 32, &sv, &uv)) return type_error(c, "a 32-bit integer", j);
      *(int32_t *)p = (int32_t)sv;
      return SG_OK;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
      if (!integer_of(j, false, 32, &sv, &uv)) return type_error(c, "an unsigned 32-bit integer", j);
      *(uint32_t *)p = (uint32_t)uv;
      return SG_OK;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
      if (!integer_of(j, true, 64, &sv, &uv)) return type_error(c, "a 64-bit integer", j);
      *(int64_t *)p = sv;
      return SG_OK;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
      if (!integer_of(j, false, 64, &sv, &uv)) return type_error(c, "an unsigned 64-bit integer", j);
      *(uint64_t *)p = uv;
      return SG_OK;
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE: {
      double d;
      if (!number_of(j, &d)) return type_error(c, "a number", j);
      if (f->type == PROTOBUF_C_TYPE_FLOAT) *(float *)p = (float)d;
      else *(double *)p = d;
      return SG_OK;
    }
    case PROTOBUF_C_TYPE_BOOL:
      if (!cJSON_IsBool(j)) return type_error(c, "true or false", j);
      *(protobuf_c_boolean *)p = cJSON_IsTrue(j);
      return SG_OK;
    case PROTOBUF_C_TYPE_ENUM: {
      const ProtobufCEnumDescriptor *ed = f->descriptor;
      if (cJSON_IsString(j)) {
        const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(ed, j->valuestring);
        if (!ev) {
          sg_buf names = SG_BUF_INIT;
          for (unsigned k = 0; k < ed->n_values; k++)
            sg_buf_printf(&names, "%s%s", k ? ", " : "", ed->values[k].name);
          sg_error_set(c->err, SG_INVALID_ARGUMENT, "field '%s': '%s' is not a %s (one of %s)", c->path,
                       j->valuestring, ed->name, names.data);
          sg_buf_free(&names);
          return SG_INVALID_ARGUMENT;
        }
        *(int *)p = ev->value;
        return SG_OK;
      }
      if (!integer_of(j, true, 32, &sv, &uv)) return type_error(c, "an enum name", j);
      *(int *)p = (int)sv;
      return SG_OK;
    }
    case PROTOBUF_C_TYPE_STRING:
      if (!cJSON_IsString(j)) return type_error(c, "a string", j);
      *(char **)p = sg_arena_strdup(c->arena, j->valuestring);
      return SG_OK;
    case PROTOBUF_C_TYPE_BYTES:
      if (!cJSON_IsString(j) || !base64_decode(j->valuestring, c->arena, p))
        return type_error(c, "base64 text", j);
      return SG_OK;
    case PROTOBUF_C_TYPE_MESSAGE:
      if (!cJSON_IsObject(j) && !cJSON_IsNull(j)) return type_error(c, "an object", j);
      return decode_message(f->descriptor, cJSON_IsNull(j) ? NULL : j, c, (ProtobufCMessage **)p);
  }
  return sg_error_set(c->err, SG_INTERNAL, "unsupported field type");
}

static const ProtobufCFieldDescriptor *field_by_json_name(const ProtobufCMessageDescriptor *d, const char *key) {
  for (unsigned i = 0; i < d->n_fields; i++) {
    char name[128];
    camel_name(d->fields[i].name, name, sizeof name);
    if (!strcmp(name, key) || !strcmp(d->fields[i].name, key)) return &d->fields[i];
  }
  return NULL;
}

static sg_code decode_message(const ProtobufCMessageDescriptor *desc, const cJSON *json, dctx *c,
                              ProtobufCMessage **out) {
  ProtobufCMessage *m = sg_arena_alloc(c->arena, desc->sizeof_message);
  desc->message_init(m);
  *out = m;
  if (!json) return SG_OK;
  if (!cJSON_IsObject(json)) return type_error(c, "an object", json);
  size_t path_len = strlen(c->path);
  const cJSON *item;
  cJSON_ArrayForEach(item, json) {
    const ProtobufCFieldDescriptor *f = field_by_json_name(desc, item->string);
    snprintf(c->path + path_len, sizeof c->path - path_len, "%s%s", path_len ? "." : "", item->string);
    if (!f) {
      return sg_error_set(c->err, SG_INVALID_ARGUMENT, "unknown field '%s' in %s", c->path, desc->name);
    }
    char *base = (char *)m;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      if (cJSON_IsNull(item)) continue;
      if (!cJSON_IsArray(item)) return type_error(c, "an array", item);
      size_t n = (size_t)cJSON_GetArraySize(item), k = 0;
      char *arr = sg_arena_calloc(c->arena, n ? n : 1, scalar_size(f));
      const cJSON *e;
      size_t plen = strlen(c->path);
      cJSON_ArrayForEach(e, item) {
        snprintf(c->path + plen, sizeof c->path - plen, "[%zu]", k);
        sg_code rc = decode_scalar(f, e, c, arr + k * scalar_size(f));
        if (rc != SG_OK) return rc;
        k++;
      }
      *(size_t *)(base + f->quantifier_offset) = n;
      *(void **)(base + f->offset) = arr;
    } else {
      if (cJSON_IsNull(item) && f->type != PROTOBUF_C_TYPE_MESSAGE) continue; /* null = default */
      sg_code rc = decode_scalar(f, item, c, base + f->offset);
      if (rc != SG_OK) return rc;
      if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        *(uint32_t *)(base + f->quantifier_offset) = f->id;
      } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
                 f->type != PROTOBUF_C_TYPE_MESSAGE && f->type != PROTOBUF_C_TYPE_STRING) {
        *(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
      }
    }
    c->path[path_len] = '\0';
  }
  return SG_OK;
}

sg_code sv_pbjson_decode(const ProtobufCMessageDescriptor *desc, const cJSON *json, sg_arena *arena,
                         ProtobufCMessage **out, sg_error *err) {
  dctx c = {arena, err, ""};
  if (json && !cJSON_IsObject(json) && !cJSON_IsNull(json)) {
    *out = NULL;
    return sg_error_set(err, SG_INVALID_ARGUMENT, "params must be an object holding a %s", desc->name);
  }
  return decode_message(desc, cJSON_IsNull(json) ? NULL : json, &c, out);
}

/* --------------------------------------------------------- pretty printing */

static void pretty(sg_buf *b, const cJSON *j, int depth) {
  if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
    bool obj = cJSON_IsObject(j);
    const cJSON *e = j->child;
    if (!e) {
      sg_buf_puts(b, obj ? "{}" : "[]");
      return;
    }
    sg_buf_putc(b, obj ? '{' : '[');
    for (; e; e = e->next) {
      sg_buf_printf(b, "\n%*s", 2 * (depth + 1), "");
      if (obj) {
        sg_buf_put_json_string(b, e->string, strlen(e->string));
        sg_buf_puts(b, ": ");
      }
      pretty(b, e, depth + 1);
      if (e->next) sg_buf_putc(b, ',');
    }
    sg_buf_printf(b, "\n%*s%c", 2 * depth, "", obj ? '}' : ']');
    return;
  }
  char *s = cJSON_PrintUnformatted(j);
  sg_buf_puts(b, s);
  cJSON_free(s);
}

char *sv_json_pretty(const cJSON *j) {
  sg_buf b = SG_BUF_INIT;
  pretty(&b, j, 0);
  return sg_buf_detach(&b, NULL);
}
