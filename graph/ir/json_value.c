// SPDX-License-Identifier: Apache-2.0
/*
 * json_value.c — JSON text ↔ executor values (ARCHITECTURE.md "JSON values").
 *
 * In:  int → int64 scalar, float → float64 scalar, bool, null → none, string →
 *      string (dtype names), rectangular nested list → tensor (float32 if any element
 *      is a float, else int64; all bools → bool), {"dtype","shape","data"} → tensor
 *      (data flat or nested), {"tuple":[...]}, {"record":{...}}. Values are exact
 *      or an INVALID_ARGUMENT naming the argument and the flat data index: integers
 *      outside int64 (or the dtype's range), strings/null in numeric data, numbers in
 *      bool data are errors; non-finite floats are "nan"/"inf"/"-inf" or the proto3
 *      spellings "NaN"/"Infinity"/"-Infinity" (docs/api.md "JSON values").
 * Out: the same encoding, tensors always as {"dtype","shape","data"} with flat data;
 *      non-finite floats as the strings "nan", "inf", "-inf".
 * A small recursive parser is used (not cJSON) because the int/float distinction of
 * the source text matters: 2 is an int64 scalar, 2.0 a float64 one.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include "gr_ir.h"

typedef enum { J_NULL, J_BOOL, J_INT, J_FLOAT, J_STR, J_ARR, J_OBJ } jkind;
typedef struct jv {
  jkind k;
  bool b;
  int64_t i;
  double f;
  char *s;
  int n;
  struct jv **items;
  char **keys;
} jv;

typedef struct jp {
  const char *p, *start;
  sg_arena *a;
  sg_error *err;
  int depth;
} jp;

static sg_code jerr(jp *P, const char *what) {
  return sg_error_set(P->err, SG_INVALID_ARGUMENT, "invalid JSON arguments at offset %d: expected %s",
                      (int)(P->p - P->start), what);
}

static void jws(jp *P) {
  while (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r') P->p++;
}

static sg_code jparse(jp *P, jv **out);

/* The 4 hex digits after "\\u" at P->p (which points at the 'u'); -1 if malformed. */
static long jhex4(const char *u) {
  long v = 0;
  for (int k = 1; k <= 4; k++) {
    char c = u[k];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

static void put_utf8(sg_buf *b, long cp) {
  if (cp < 0x80) {
    sg_buf_putc(b, (char)cp);
  } else if (cp < 0x800) {
    sg_buf_putc(b, (char)(0xc0 | (cp >> 6)));
    sg_buf_putc(b, (char)(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    sg_buf_putc(b, (char)(0xe0 | (cp >> 12)));
    sg_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
    sg_buf_putc(b, (char)(0x80 | (cp & 0x3f)));
  } else {
    sg_buf_putc(b, (char)(0xf0 | (cp >> 18)));
    sg_buf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3f)));
    sg_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
    sg_buf_putc(b, (char)(0x80 | (cp & 0x3f)));
  }
}

/* A "\\uXXXX" escape (with its low surrogate when XXXX is a high one) at P->p (the 'u')
 * appended to b as UTF-8; P->p is left on its last hex digit, or on the backslash
 * for an error. */
static sg_code junicode(jp *P, sg_buf *b) {
  const char *u = P->p;
  long cp = jhex4(u), lo = -1;
  if (cp >= 0xd800 && cp <= 0xdbff && u[5] == '\\' && u[6] == 'u') lo = jhex4(u + 6);
  P->p = u - 1; /* errors point at the escape */
  if (cp < 0) return jerr(P, "4 hex digits after \\u");
  if (cp >= 0xdc00 && cp <= 0xdfff) return jerr(P, "a high surrogate before this low one");
  if (cp >= 0xd800 && cp <= 0xdbff) {
    if (lo < 0xdc00 || lo > 0xdfff) return jerr(P, "a \\uXXXX low surrogate after the high one");
    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
  }
  if (cp == 0) return jerr(P, "a character other than \\u0000 (strings cannot hold NUL)");
  P->p = u + (cp >= 0x10000 ? 10 : 4);
  put_utf8(b, cp);
  return SG_OK;
}

/* A JSON string (RFC 8259: escapes decoded, raw control characters rejected). */
static sg_code jstring(jp *P, char **out) {
  P->p++;
  sg_buf b = SG_BUF_INIT;
  sg_code rc = SG_OK;
  while (!rc && *P->p != '"') {
    unsigned char c = (unsigned char)*P->p;
    if (!c) {
      rc = jerr(P, "'\"' to end the string");
    } else if (c < 0x20) {
      rc = jerr(P, "an escape (\\n, \\u00XX) instead of a raw control character in a string");
    } else if (c != '\\') {
      sg_buf_putc(&b, (char)c);
      P->p++;
    } else {
      char e = *++P->p;
      const char *simple = strchr("\"\\/bfnrt", e);
      if (e && simple) sg_buf_putc(&b, "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"]);
      else if (e == 'u') rc = junicode(P, &b);
      else {
        P->p--; /* point at the backslash */
        rc = jerr(P, "an escape \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX");
      }
      if (!rc) P->p++;
    }
  }
  if (!rc) {
    P->p++;
    *out = sg_arena_strdup(P->a, b.data ? b.data : "");
  }
  sg_buf_free(&b);
  return rc;
}

static sg_code jparse(jp *P, jv **out) {
  jws(P);
  if (++P->depth > 256) return jerr(P, "less deeply nested JSON (limit 256)");
  jv *v = sg_arena_calloc(P->a, 1, sizeof *v);
  *out = v;
  char c = *P->p;
  sg_code rc = SG_OK;
  if (c == '[' || c == '{') {
    bool obj = c == '{';
    v->k = obj ? J_OBJ : J_ARR;
    P->p++;
    SG_VEC(jv *) items = {0};
    SG_VEC(char *) keys = {0};
    jws(P);
    if (*P->p == (obj ? '}' : ']')) {
      P->p++;
    } else {
      for (;;) {
        jws(P);
        if (obj) {
          char *key;
          if (*P->p != '"') { rc = jerr(P, "a string key"); break; }
          if ((rc = jstring(P, &key))) break;
          jws(P);
          if (*P->p != ':') { rc = jerr(P, "':'"); break; }
          P->p++;
          sg_vec_push(&keys, key);
        }
        jv *item;
        if ((rc = jparse(P, &item))) break;
        sg_vec_push(&items, item);
        jws(P);
        if (*P->p == ',') { P->p++; continue; }
        if (*P->p == (obj ? '}' : ']')) { P->p++; break; }
        rc = jerr(P, obj ? "',' or '}'" : "',' or ']'");
        break;
      }
    }
    v->n = (int)items.len;
    v->items = sg_arena_alloc(P->a, sizeof(jv *) * (items.len + 1));
    if (items.len) memcpy(v->items, items.data, sizeof(jv *) * items.len);
    if (obj) {
      v->keys = sg_arena_alloc(P->a, sizeof(char *) * (keys.len + 1));
      if (keys.len) memcpy(v->keys, keys.data, sizeof(char *) * keys.len);
    }
    sg_vec_free(&items);
    sg_vec_free(&keys);
  } else if (c == '"') {
    v->k = J_STR;
    rc = jstring(P, &v->s);
  } else if (!strncmp(P->p, "true", 4) || !strncmp(P->p, "false", 5)) {
    v->k = J_BOOL;
    v->b = c == 't';
    P->p += v->b ? 4 : 5;
  } else if (!strncmp(P->p, "null", 4)) {
    v->k = J_NULL;
    P->p += 4;
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    const char *s = P->p;
    bool fl = false;
    while (*P->p && strchr("+-0123456789.eE", *P->p)) {
      if (strchr(".eE", *P->p)) fl = true;
      P->p++;
    }
    char *e;
    errno = 0;
    if (fl) {
      v->k = J_FLOAT;
      v->f = strtod(s, &e);
    } else {
      v->k = J_INT;
      v->i = strtoll(s, &e, 10);
    }
    if (e != P->p) {
      rc = jerr(P, "a number");
    } else if (!fl && errno == ERANGE) {
      /* never clamped: an integer the int64 range cannot hold is an error */
      P->p = s;
      rc = sg_error_set(P->err, SG_INVALID_ARGUMENT,
                        "invalid JSON arguments at offset %d: integer %.*s is out of the int64 range",
                        (int)(s - P->start), (int)(e - s) > 40 ? 40 : (int)(e - s), s);
    }
  } else {
    rc = jerr(P, "a JSON value");
  }
  P->depth--;
  return rc;
}

static const jv *jget(const jv *o, const char *key) {
  for (int i = 0; i < o->n; i++)
    if (!strcmp(o->keys[i], key)) return o->items[i];
  return NULL;
}

/* A non-finite float spelled as a string: ours ("nan", "inf", "-inf", what outputs use)
 * and the proto3 JSON mapping's ("NaN", "Infinity", "-Infinity", docs/api.md). */
static bool nonfinite_of(const char *s, double *out) {
  if (!strcmp(s, "nan") || !strcmp(s, "NaN")) *out = NAN;
  else if (!strcmp(s, "inf") || !strcmp(s, "Infinity")) *out = INFINITY;
  else if (!strcmp(s, "-inf") || !strcmp(s, "-Infinity")) *out = -INFINITY;
  else return false;
  return true;
}

/* Shape of a rectangular nested list (dims follow the first elements, then every
 * element is checked against them); false if ragged or not numbers. */
static bool validate(const jv *v, int d, int nd, const int64_t *shape, bool *anyfloat, bool *allbool) {
  if (d == nd) {
    if (v->k == J_FLOAT) *anyfloat = true;
    if (v->k != J_BOOL) *allbool = false;
    return v->k == J_INT || v->k == J_FLOAT || v->k == J_BOOL;
  }
  if (v->k != J_ARR || v->n != shape[d]) return false;
  for (int i = 0; i < v->n; i++)
    if (!validate(v->items[i], d + 1, nd, shape, anyfloat, allbool)) return false;
  return true;
}

static bool list_shape(const jv *v, int depth, int *ndim, int64_t *shape, bool *anyfloat, bool *allbool) {
  int nd = 0;
  for (const jv *c = v; c->k == J_ARR; c = c->items[0]) {
    if (nd >= KN_MAX_DIMS) return false;
    shape[nd++] = c->n;
    if (c->n == 0) break;
  }
  *ndim = nd;
  (void)depth;
  return validate(v, 0, nd, shape, anyfloat, allbool);
}

/* Stores one leaf of tensor data at flat index k exactly, or says why it cannot:
 * bool data takes true/false; integer data integers in the dtype's range; float data
 * numbers and the non-finite strings. Nothing is converted silently. */
static sg_code put_leaf(const jv *v, kn_tensor *t, int64_t k, bool list_form, sg_error *err) {
  kn_dtype dt = t->dtype;
  jv as_int;
  if (list_form && v->k == J_BOOL && dt != KN_BOOL) {
    /* a nested list mixes bools with numbers as NumPy does: True is 1 */
    as_int = (jv){.k = J_INT, .i = v->b};
    v = &as_int;
  }
  const char *got = v->k == J_STR ? "a string" : v->k == J_BOOL ? "a boolean" : v->k == J_NULL ? "null"
                    : v->k == J_FLOAT ? "a float" : v->k == J_INT ? "an integer" : "an object";
  if (dt == KN_BOOL) {
    if (v->k == J_BOOL) {
      kn_set_i64(t, k, v->b);
      return SG_OK;
    }
    return sg_error_set(err, SG_INVALID_ARGUMENT, "tensor data[%lld]: bool data takes true or false, got %s",
                        (long long)k, got);
  }
  if (kn_dtype_is_int(dt)) {
    if (v->k != J_INT)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "tensor data[%lld]: %s data takes integers, got %s",
                          (long long)k, kn_dtype_name(dt), got);
    if (dt == KN_INT32 && (v->i < INT32_MIN || v->i > INT32_MAX))
      return sg_error_set(err, SG_INVALID_ARGUMENT, "tensor data[%lld]: %lld is out of the int32 range",
                          (long long)k, (long long)v->i);
    kn_set_i64(t, k, v->i);
    return SG_OK;
  }
  double f;
  if (v->k == J_INT) f = (double)v->i;
  else if (v->k == J_FLOAT) f = v->f;
  else if (!(v->k == J_STR && nonfinite_of(v->s, &f)))
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "tensor data[%lld]: %s data takes numbers (non-finite ones as \"NaN\", \"Infinity\", "
                        "\"-Infinity\"), got %s%s%s%s",
                        (long long)k, kn_dtype_name(dt), got, v->k == J_STR ? " \"" : "",
                        v->k == J_STR ? v->s : "", v->k == J_STR ? "\"" : "");
  kn_set_f64(t, k, f);
  return SG_OK;
}

/* The leaves of v in row-major order into t (count_leaves(v) == t->size). */
static sg_code flatten(const jv *v, kn_tensor *t, int64_t *k, bool list_form, sg_error *err) {
  if (v->k == J_ARR) {
    for (int i = 0; i < v->n; i++)
      if (flatten(v->items[i], t, k, list_form, err)) return err->code;
    return SG_OK;
  }
  if (*k >= t->size) return SG_OK;
  return put_leaf(v, t, (*k)++, list_form, err);
}

static int64_t count_leaves(const jv *v) {
  if (v->k != J_ARR) return 1;
  int64_t n = 0;
  for (int i = 0; i < v->n; i++) n += count_leaves(v->items[i]);
  return n;
}

static sg_code to_value(const jv *v, gr_module *m, sg_arena *a, gr_val *out, sg_error *err) {
  switch (v->k) {
  case J_NULL: *out = gv_none(); return SG_OK;
  case J_BOOL: *out = gv_bool(v->b); return SG_OK;
  case J_INT: *out = gv_int(v->i); return SG_OK;
  case J_FLOAT: *out = gv_float(v->f); return SG_OK;
  case J_STR: {
    gr_val s = {.tag = GV_STR, .u.s = v->s};
    *out = s;
    return SG_OK;
  }
  case J_ARR: {
    int ndim = 0;
    int64_t shape[KN_MAX_DIMS];
    bool anyfloat = false, allbool = true;
    if (!list_shape(v, 0, &ndim, shape, &anyfloat, &allbool))
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "argument is not a rectangular nested list of numbers (use {\"tuple\":[...]} for tuples)");
    /* an empty list has no leaves: both flags keep their initial values */
    if (count_leaves(v) == 0 || v->n == 0) allbool = false;
    kn_dtype dt = allbool ? KN_BOOL : anyfloat ? KN_FLOAT32 : KN_INT64;
    kn_tensor *t = kn_tensor_new(dt, ndim, shape);
    if (!t) return kn_alloc_error(err);
    int64_t k = 0;
    if (flatten(v, t, &k, true, err)) {
      kn_tensor_release(t);
      return err->code;
    }
    *out = gv_tensor(t);
    return SG_OK;
  }
  case J_OBJ: {
    const jv *tu = jget(v, "tuple"), *rec = jget(v, "record"), *dt = jget(v, "dtype");
    if (tu && tu->k == J_ARR) {
      gr_val t = gv_tuple_new(tu->n);
      for (int i = 0; i < tu->n; i++)
        if (to_value(tu->items[i], m, a, &t.u.o->items[i], err)) {
          gv_release(t);
          return err->code;
        }
      *out = t;
      return SG_OK;
    }
    if (rec && rec->k == J_OBJ) {
      gr_val r = {.tag = GV_RECORD};
      r.u.o = gv_obj_new(rec->n);
      r.u.o->names = sg_xcalloc((size_t)rec->n + 1, sizeof(char *));
      for (int i = 0; i < rec->n; i++) {
        r.u.o->names[i] = rec->keys[i];
        if (to_value(rec->items[i], m, a, &r.u.o->items[i], err)) {
          gv_release(r);
          return err->code;
        }
      }
      *out = r;
      return SG_OK;
    }
    if (dt && dt->k == J_STR) {
      kn_dtype d;
      if (!kn_dtype_parse(dt->s, &d))
        return sg_error_set(err, SG_INVALID_ARGUMENT, "unknown dtype \"%s\" in tensor argument", dt->s);
      const jv *sh = jget(v, "shape"), *data = jget(v, "data");
      if (!sh || sh->k != J_ARR || sh->n > KN_MAX_DIMS || !data)
        return sg_error_set(err, SG_INVALID_ARGUMENT, "tensor argument needs \"shape\" (a list) and \"data\"");
      int64_t shape[KN_MAX_DIMS], size = 1;
      for (int i = 0; i < sh->n; i++) {
        if (sh->items[i]->k != J_INT || sh->items[i]->i < 0)
          return sg_error_set(err, SG_INVALID_ARGUMENT, "tensor shape must be non-negative integers");
        shape[i] = sh->items[i]->i;
        if (shape[i] && size > ((int64_t)1 << 32) / shape[i]) /* before the product can overflow */
          return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "tensor argument too large");
        size *= shape[i];
      }
      int64_t leaves = data->k == J_ARR ? count_leaves(data) : 1;
      if (leaves != size)
        return sg_error_set(err, SG_INVALID_ARGUMENT, "tensor data has %lld elements, shape needs %lld",
                            (long long)leaves, (long long)size);
      kn_tensor *t = kn_tensor_new(d, sh->n, shape);
      if (!t) return kn_alloc_error(err);
      int64_t k = 0;
      if (flatten(data, t, &k, false, err)) {
        kn_tensor_release(t);
        return err->code;
      }
      *out = gv_tensor(t);
      return SG_OK;
    }
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "JSON object argument must be {\"dtype\",\"shape\",\"data\"}, {\"tuple\":[...]} or {\"record\":{...}}");
  }
  }
  return SG_INTERNAL;
}

/* Parses a JSON array of arguments; names/strings live in `a` (the request arena). */
sg_code gr_json_args(const char *json, gr_module *m, sg_arena *a, gr_val **vals, int *n, sg_error *err) {
  *vals = NULL;
  *n = 0;
  if (!json || !*json) return SG_OK;
  jp P = {json, json, a, err, 0};
  jv *root;
  if (jparse(&P, &root)) return err->code;
  jws(&P);
  if (*P.p) return jerr(&P, "end of input after the argument array");
  if (root->k != J_ARR)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "arguments must be a JSON array, one element per parameter");
  gr_val *vs = sg_xcalloc((size_t)root->n + 1, sizeof(gr_val));
  for (int i = 0; i < root->n; i++)
    if (to_value(root->items[i], m, a, &vs[i], err)) {
      for (int k = 0; k < i; k++) gv_release(vs[k]);
      free(vs);
      char *msg = sg_xasprintf("argument %d: %s", i, err->message);
      sg_error_set(err, err->code, "%s", msg);
      free(msg);
      return err->code;
    }
  *vals = vs;
  *n = root->n;
  return SG_OK;
}

static void put_float(sg_buf *b, double f) {
  if (isnan(f)) sg_buf_puts(b, "\"nan\"");
  else if (isinf(f)) sg_buf_puts(b, f < 0 ? "\"-inf\"" : "\"inf\"");
  else sg_buf_put_double_g(b, f);
}

void gr_value_to_json(sg_buf *b, const gr_val *v) {
  switch (v->tag) {
  case GV_NONE: sg_buf_puts(b, "null"); break;
  case GV_BOOL: sg_buf_puts(b, v->u.b ? "true" : "false"); break;
  case GV_INT: sg_buf_printf(b, "%lld", (long long)v->u.i); break;
  case GV_FLOAT: put_float(b, v->u.f); break;
  case GV_STR: sg_buf_put_json_string(b, v->u.s, strlen(v->u.s)); break;
  case GV_TENSOR: {
    const kn_tensor *t = v->u.t;
    sg_buf_printf(b, "{\"dtype\":\"%s\",\"shape\":[", kn_dtype_name(t->dtype));
    for (int i = 0; i < t->ndim; i++) sg_buf_printf(b, i ? ",%lld" : "%lld", (long long)t->shape[i]);
    sg_buf_puts(b, "],\"data\":[");
    for (int64_t i = 0; i < t->size; i++) {
      if (i) sg_buf_putc(b, ',');
      if (t->dtype == KN_BOOL) sg_buf_puts(b, kn_get_i64(t, i) ? "true" : "false");
      else if (kn_dtype_is_float(t->dtype)) put_float(b, kn_get_f64(t, i));
      else sg_buf_printf(b, "%lld", (long long)kn_get_i64(t, i));
    }
    sg_buf_puts(b, "]}");
    break;
  }
  case GV_TUPLE:
    sg_buf_puts(b, "{\"tuple\":[");
    for (int i = 0; i < v->u.o->n; i++) {
      if (i) sg_buf_putc(b, ',');
      gr_value_to_json(b, &v->u.o->items[i]);
    }
    sg_buf_puts(b, "]}");
    break;
  case GV_RECORD:
    sg_buf_puts(b, "{\"record\":{");
    for (int i = 0; i < v->u.o->n; i++) {
      if (i) sg_buf_putc(b, ',');
      sg_buf_put_json_string(b, v->u.o->names[i], strlen(v->u.o->names[i]));
      sg_buf_putc(b, ':');
      gr_value_to_json(b, &v->u.o->items[i]);
    }
    sg_buf_puts(b, "}}");
    break;
  case GV_VAR:
  case GV_RESIDENT: {
    /* a variable's current value; a device-resident tensor's (cached) host copy */
    gr_val cur = v->tag == GV_VAR ? gv_var_get(v->u.o) : gv_retain(*v);
    sg_error e = SG_ERROR_INIT;
    if (gv_resident_to_host(&cur, &e)) sg_buf_puts(b, v->tag == GV_VAR ? "{\"variable\":null}" : "null");
    else if (v->tag == GV_VAR) sg_buf_puts(b, "{\"variable\":"), gr_value_to_json(b, &cur), sg_buf_putc(b, '}');
    else gr_value_to_json(b, &cur);
    sg_error_clear(&e);
    gv_release(cur);
    break;
  }
  case GV_GRAPH:
  case GV_CLOSURE: {
    gr_graph *g = v->tag == GV_GRAPH ? v->u.g : v->u.o->graph;
    sg_buf_puts(b, "{\"function\":");
    const char *name = g->name ? g->name : "lambda";
    sg_buf_put_json_string(b, name, strlen(name));
    sg_buf_putc(b, '}');
    break;
  }
  case GV_PRIM:
    sg_buf_puts(b, "{\"primitive\":");
    sg_buf_put_json_string(b, v->u.op->name, strlen(v->u.op->name));
    sg_buf_putc(b, '}');
    break;
  }
}
