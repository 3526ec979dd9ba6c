// SPDX-License-Identifier: Apache-2.0
/*
 * npz.c — reads the checkpoint format (a NumPy .npz archive: a zip of .npy files, as
 * stagd.Checkpoint and stagd.export write it) into tensors, for exported models.
 * The zip container is libzip's (stored or deflated members); an .npy member is the
 * magic "\x93NUMPY", a version, a header length, a Python-literal dict with 'descr',
 * 'fortran_order' and 'shape', then the raw little-endian data (format spec:
 * numpy.lib.format). Only what stagd's tensors hold is accepted: bool, int32, int64,
 * float16, float32, float64 in C order; anything else is a located error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "npz.h"

static sg_code bad(sg_error *err, const char *path, const char *member, const char *what) {
  return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: %s: %s", path, member, what);
}

/* The value text after 'key': in an .npy header dict, or NULL. */
static const char *header_value(const char *h, const char *key) {
  char quoted[32];
  snprintf(quoted, sizeof quoted, "'%s'", key);
  const char *k = strstr(h, quoted);
  if (!k) return NULL;
  k += strlen(quoted);
  while (*k == ' ') k++;
  if (*k != ':') return NULL;
  k++;
  while (*k == ' ') k++;
  return k;
}

static bool parse_descr(const char *v, kn_dtype *dt) {
  static const struct { const char *descr; kn_dtype dt; } table[] = {
      {"'|b1'", KN_BOOL},    {"'<i4'", KN_INT32},   {"'<i8'", KN_INT64},
      {"'<f2'", KN_FLOAT16}, {"'<f4'", KN_FLOAT32}, {"'<f8'", KN_FLOAT64},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strncmp(v, table[i].descr, strlen(table[i].descr))) {
      *dt = table[i].dt;
      return true;
    }
  return false;
}

/* "(2, 3)", "(4,)", "()" → ndim, shape; false when malformed or too many dimensions. */
static bool parse_shape(const char *v, int *ndim, int64_t *shape) {
  if (*v++ != '(') return false;
  *ndim = 0;
  for (;;) {
    while (*v == ' ') v++;
    if (*v == ')') return true;
    char *end;
    long long d = strtoll(v, &end, 10);
    if (end == v || d < 0 || *ndim == KN_MAX_DIMS) return false;
    shape[(*ndim)++] = d;
    v = end;
    while (*v == ' ') v++;
    if (*v == ',') v++;
    else if (*v != ')') return false;
  }
}

/* One .npy member's bytes → a tensor. */
static sg_code parse_npy(const uint8_t *p, size_t n, const char *path, const char *member, kn_tensor **out,
                         sg_error *err) {
  if (n < 10 || memcmp(p, "\x93NUMPY", 6) != 0) return bad(err, path, member, "not an .npy array");
  size_t hlen, off;
  if (p[6] == 1) {
    hlen = (size_t)p[8] | (size_t)p[9] << 8;
    off = 10;
  } else if ((p[6] == 2 || p[6] == 3) && n >= 12) {
    hlen = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
    off = 12;
  } else {
    return bad(err, path, member, "an .npy format version stagd does not read");
  }
  if (hlen > n - off || hlen > 65536) return bad(err, path, member, "truncated .npy header");
  char *h = sg_xstrndup((const char *)p + off, hlen);
  const char *descr = header_value(h, "descr"), *order = header_value(h, "fortran_order"),
             *shp = header_value(h, "shape");
  kn_dtype dt = KN_FLOAT32;
  int ndim = 0;
  int64_t shape[KN_MAX_DIMS];
  sg_code rc = SG_OK;
  if (!descr || !order || !shp) rc = bad(err, path, member, "an .npy header without descr, fortran_order and shape");
  else if (!parse_descr(descr, &dt))
    rc = bad(err, path, member, "dtype is not one of bool, int32, int64, float16, float32, float64 (little-endian)");
  else if (strncmp(order, "False", 5) != 0) rc = bad(err, path, member, "Fortran-ordered arrays are not read (save C order)");
  else if (!parse_shape(shp, &ndim, shape)) rc = bad(err, path, member, "malformed shape, or more than 8 dimensions");
  free(h);
  if (rc) return rc;
  if (kn_check_shape(ndim, shape, err) != SG_OK) return err->code;
  int64_t elems = 1; /* within KN_MAX_ELEMENTS: kn_check_shape */
  for (int i = 0; i < ndim; i++) elems *= shape[i];
  size_t bytes = (size_t)elems * kn_dtype_size(dt);
  if (bytes != n - off - hlen) /* checked before allocating what the header claims */
    return bad(err, path, member, "data size does not match the header's dtype and shape");
  kn_tensor *t = kn_tensor_empty(dt, ndim, shape); /* every byte copied below */
  if (!t) return kn_alloc_error(err);
  memcpy(t->data, p + off + hlen, bytes);
  *out = t;
  return SG_OK;
}

sg_code sv_npz_read(const char *path, sv_npz *out, sg_error *err) {
  memset(out, 0, sizeof *out);
  int zerr = 0;
  zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
  if (!z) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, zerr);
    sg_code rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s: cannot read the archive: %s", path, zip_error_strerror(&ze));
    zip_error_fini(&ze);
    return rc;
  }
  zip_int64_t count = zip_get_num_entries(z, 0);
  sg_code rc = SG_OK;
  out->names = sg_xcalloc((size_t)(count > 0 ? count : 1), sizeof *out->names);
  out->tensors = sg_xcalloc((size_t)(count > 0 ? count : 1), sizeof *out->tensors);
  for (zip_int64_t i = 0; i < count && !rc; i++) {
    zip_stat_t st;
    if (zip_stat_index(z, (zip_uint64_t)i, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) || !st.name) {
      rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s: member %lld: unreadable", path, (long long)i);
      break;
    }
    size_t nlen = strlen(st.name);
    if (nlen < 5 || strcmp(st.name + nlen - 4, ".npy") != 0) {
      rc = bad(err, path, st.name, "a member that is not an .npy array");
      break;
    }
    if (st.size > ((zip_uint64_t)1 << 40)) {
      rc = bad(err, path, st.name, "larger than stagd reads");
      break;
    }
    uint8_t *buf = malloc(st.size ? st.size : 1);
    zip_file_t *f = buf ? zip_fopen_index(z, (zip_uint64_t)i, 0) : NULL;
    zip_int64_t got = f ? zip_fread(f, buf, st.size) : -1;
    if (f) zip_fclose(f);
    if (got < 0 || (zip_uint64_t)got != st.size) {
      rc = bad(err, path, st.name, "cannot read its data (corrupt archive?)");
    } else {
      rc = parse_npy(buf, st.size, path, st.name, &out->tensors[out->n], err);
      if (!rc) out->names[out->n++] = sg_xstrndup(st.name, nlen - 4);
    }
    free(buf);
  }
  zip_close(z);
  if (rc) sv_npz_free(out);
  return rc;
}

kn_tensor *sv_npz_find(const sv_npz *z, const char *name) {
  for (size_t i = 0; i < z->n; i++)
    if (!strcmp(z->names[i], name)) return z->tensors[i];
  return NULL;
}

void sv_npz_free(sv_npz *z) {
  for (size_t i = 0; i < z->n; i++) {
    free(z->names[i]);
    kn_tensor_release(z->tensors[i]);
  }
  free(z->names);
  free(z->tensors);
  memset(z, 0, sizeof *z);
}
