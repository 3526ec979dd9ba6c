/*
 * values.c — stagd.v1.Value (protobuf) → the JSON value encoding of ARCHITECTURE.md
 * ("JSON values"), so Execute accepts arguments in either encoding and the graph
 * library reads one. Tensors become {"dtype","shape","data"} with flat data decoded
 * from the little-endian bytes; the byte count must match dtype and shape.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stagd.pb-c.h"
#include "sv.h"

static const struct {
  Stagd__V1__DType dtype;
  const char *name;
  size_t size;
} dtypes[] = {
    {STAGD__V1__DTYPE__DTYPE_BOOL, "bool", 1},       {STAGD__V1__DTYPE__DTYPE_INT32, "int32", 4},
    {STAGD__V1__DTYPE__DTYPE_INT64, "int64", 8},     {STAGD__V1__DTYPE__DTYPE_FLOAT16, "float16", 2},
    {STAGD__V1__DTYPE__DTYPE_FLOAT32, "float32", 4}, {STAGD__V1__DTYPE__DTYPE_FLOAT64, "float64", 8},
};

static void put_double(sg_buf *b, double v) {
  if (isnan(v)) sg_buf_puts(b, "\"nan\"");
  else if (isinf(v)) sg_buf_puts(b, v > 0 ? "\"inf\"" : "\"-inf\"");
  else {
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.17g", v);
    sg_buf_puts(b, tmp);
    if (!strpbrk(tmp, ".eE")) sg_buf_puts(b, ".0"); /* stays a float */
  }
}

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

static sg_code tensor_json(const Stagd__V1__Tensor *t, const char *path, sg_buf *b, sg_error *err) {
  size_t k = 0;
  while (k < sizeof dtypes / sizeof dtypes[0] && dtypes[k].dtype != t->dtype) k++;
  if (k == sizeof dtypes / sizeof dtypes[0])
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: tensor has no dtype", path);
  uint64_t n = 1;
  for (size_t i = 0; i < t->n_shape; i++) {
    if (t->shape[i] < 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: negative dimension %lld", path, (long long)t->shape[i]);
    if (t->shape[i] && n > UINT64_MAX / (uint64_t)t->shape[i])
      return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: shape too large", path);
    n *= (uint64_t)t->shape[i];
  }
  if (t->data.len != n * dtypes[k].size)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: %s tensor of %llu elements needs %llu bytes, got %zu", path,
                        dtypes[k].name, (unsigned long long)n, (unsigned long long)(n * dtypes[k].size), t->data.len);
  sg_buf_printf(b, "{\"dtype\":\"%s\",\"shape\":[", dtypes[k].name);
  for (size_t i = 0; i < t->n_shape; i++) sg_buf_printf(b, "%s%lld", i ? "," : "", (long long)t->shape[i]);
  sg_buf_puts(b, "],\"data\":[");
  const uint8_t *p = t->data.data;
  for (uint64_t i = 0; i < n; i++, p += dtypes[k].size) {
    if (i) sg_buf_putc(b, ',');
    switch (t->dtype) {
      case STAGD__V1__DTYPE__DTYPE_BOOL: sg_buf_puts(b, *p ? "true" : "false"); break;
      case STAGD__V1__DTYPE__DTYPE_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        sg_buf_printf(b, "%d", v);
        break;
      }
      case STAGD__V1__DTYPE__DTYPE_INT64: {
        int64_t v;
        memcpy(&v, p, 8);
        sg_buf_printf(b, "%lld", (long long)v);
        break;
      }
      case STAGD__V1__DTYPE__DTYPE_FLOAT16: {
        uint16_t v;
        memcpy(&v, p, 2);
        put_double(b, half_to_double(v));
        break;
      }
      case STAGD__V1__DTYPE__DTYPE_FLOAT32: {
        float v;
        memcpy(&v, p, 4);
        put_double(b, v);
        break;
      }
      default: {
        double v;
        memcpy(&v, p, 8);
        put_double(b, v);
      }
    }
  }
  sg_buf_puts(b, "]}");
  return SG_OK;
}

static sg_code value_json(const Stagd__V1__Value *v, const char *path, int depth, sg_buf *b, sg_error *err) {
  if (depth > 256) return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: values nest too deeply", path);
  char sub[256];
  switch (v->kind_case) {
    case STAGD__V1__VALUE__KIND_NONE: sg_buf_puts(b, "null"); return SG_OK;
    case STAGD__V1__VALUE__KIND_BOOL_VALUE: sg_buf_puts(b, v->bool_value ? "true" : "false"); return SG_OK;
    case STAGD__V1__VALUE__KIND_INT_VALUE: sg_buf_printf(b, "%lld", (long long)v->int_value); return SG_OK;
    case STAGD__V1__VALUE__KIND_FLOAT_VALUE: put_double(b, v->float_value); return SG_OK;
    case STAGD__V1__VALUE__KIND_TENSOR: return tensor_json(v->tensor, path, b, err);
    case STAGD__V1__VALUE__KIND_TUPLE:
      sg_buf_puts(b, "{\"tuple\":[");
      for (size_t i = 0; i < v->tuple->n_items; i++) {
        if (i) sg_buf_putc(b, ',');
        snprintf(sub, sizeof sub, "%s.tuple[%zu]", path, i);
        sg_code rc = value_json(v->tuple->items[i], sub, depth + 1, b, err);
        if (rc != SG_OK) return rc;
      }
      sg_buf_puts(b, "]}");
      return SG_OK;
    case STAGD__V1__VALUE__KIND_RECORD:
      sg_buf_puts(b, "{\"record\":{");
      for (size_t i = 0; i < v->record->n_fields; i++) {
        const Stagd__V1__Field *f = v->record->fields[i];
        if (i) sg_buf_putc(b, ',');
        sg_buf_put_json_string(b, f->name, strlen(f->name));
        sg_buf_putc(b, ':');
        snprintf(sub, sizeof sub, "%s.%s", path, f->name);
        if (!f->value) return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: field without a value", sub);
        sg_code rc = value_json(f->value, sub, depth + 1, b, err);
        if (rc != SG_OK) return rc;
      }
      sg_buf_puts(b, "}}");
      return SG_OK;
    case STAGD__V1__VALUE__KIND_STRING_VALUE:
      return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: strings are not graph values", path);
    case STAGD__V1__VALUE__KIND_HANDLE:
      return sg_error_set(err, SG_UNIMPLEMENTED, "%s: device-resident tensor handles (the eager client) are not implemented yet", path);
    default: return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: empty Value", path);
  }
}

sg_code sv_values_to_json(const void *const *values, size_t n, sg_buf *out, sg_error *err) {
  sg_buf_putc(out, '[');
  for (size_t i = 0; i < n; i++) {
    char path[32];
    snprintf(path, sizeof path, "args[%zu]", i);
    if (i) sg_buf_putc(out, ',');
    sg_code rc = value_json(values[i], path, 0, out, err);
    if (rc != SG_OK) return rc;
  }
  sg_buf_putc(out, ']');
  return SG_OK;
}
