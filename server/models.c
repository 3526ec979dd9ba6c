// SPDX-License-Identifier: Apache-2.0
/*
 * models.c — exported models served by name (--models DIR; docs/deploy.md "Models").
 *
 * DIR/NAME/VERSION/ (VERSION a positive integer, TF Serving's layout) is what
 * stagd.export writes: manifest.json (format, stagd version, content hash),
 * program.sexpr (the staged program), signature.json (entry, inputs, captures) and
 * variables.npz (the captured Variables' and tensors' values, checkpoint format).
 * Loading checks the content hash, stages the program and reads the values; a version
 * that fails is logged once (again only when its manifest changes) and skipped.
 * A thread rescans DIR every poll interval: new versions load, removed ones unload.
 *
 * RunModel runs a version's entry on the request's arguments followed by the model's
 * values. Those are uploaded once per device and shared; each call gets fresh variable
 * cells around them, so calls are independent and safe to run concurrently (a model
 * that assigns to its variables sees the exported values on every call).
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "eager.h"
#include "models.h"
#include "npz.h"

#ifndef STAGD_VERSION
#define STAGD_VERSION "0.0.0"
#endif

enum { MAX_DEVICE_CACHES = 8 };

typedef struct model_input {
  char *name;
  bool scalar;            /* a Python number: dtype "int" or "float" */
  char *dtype;            /* tensor: kn dtype name */
  bool any_shape;         /* tensor: no shape declared */
  int ndim;
  int64_t shape[KN_MAX_DIMS]; /* -1: any size */
} model_input;

typedef struct model_capture {
  char *name;
  bool variable;
  gr_value *host; /* the exported value (a host tensor) */
} model_capture;

typedef struct device_values {
  char device[32];
  gr_value **values; /* one per capture, placed on the device */
} device_values;

typedef struct model_version {
  atomic_int rc;
  char *name, *path, *entry, *stagd_version, *content_hash;
  int64_t version;
  gr_program *program;
  model_input *inputs;
  int n_inputs;
  model_capture *caps;
  int n_caps;
  uint64_t cap_bytes;
  pthread_mutex_t lock; /* devs */
  device_values devs[MAX_DEVICE_CACHES];
  int ndevs;
} model_version;

typedef struct failed_version {
  char *path;
  int64_t mtime_ns, size; /* of its manifest when it failed */
} failed_version;

struct sv_models {
  char *dir;
  uint64_t poll_ms;
  pthread_mutex_t lock; /* versions, failed, counters */
  SG_VEC(model_version *) versions;
  SG_VEC(failed_version) failed;
  uint64_t loads, load_errors;
  pthread_t thread;
  bool thread_started, stop;
  pthread_cond_t wake;
};

/* ------------------------------------------------------------ versions */

static void version_release(model_version *v) {
  if (!v || atomic_fetch_sub(&v->rc, 1) != 1) return;
  for (int i = 0; i < v->n_inputs; i++) {
    free(v->inputs[i].name);
    free(v->inputs[i].dtype);
  }
  free(v->inputs);
  for (int d = 0; d < v->ndevs; d++) {
    for (int i = 0; i < v->n_caps; i++) gr_value_release(v->devs[d].values[i]);
    free(v->devs[d].values);
  }
  for (int i = 0; i < v->n_caps; i++) {
    free(v->caps[i].name);
    gr_value_release(v->caps[i].host);
  }
  free(v->caps);
  if (v->program) gr_program_release(v->program);
  pthread_mutex_destroy(&v->lock);
  free(v->name);
  free(v->path);
  free(v->entry);
  free(v->stagd_version);
  free(v->content_hash);
  free(v);
}

/* The whole file at path (NUL-terminated; *len its size). */
static sg_code read_file(const char *path, char **out, size_t *len, sg_error *err) {
  *out = sg_read_file(path, len);
  if (!*out) return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: cannot read: %s", path, strerror(errno));
  return SG_OK;
}

static void sha256_hex(const void *data, size_t len, char hex[65]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
  for (unsigned i = 0; i < n && i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  hex[64] = '\0';
}

/* The content hash stagd.export writes: sha256 of "FILE SHA256\n" for the three
 * files in this order (clients/python/stagd/export.py computes the same). */
static const char *const model_files[] = {"program.sexpr", "signature.json", "variables.npz"};

static sg_code content_hash(const char *dir, char **program, size_t *program_len, char **signature,
                            char out[72], sg_error *err) {
  sg_buf lines = SG_BUF_INIT;
  sg_code rc = SG_OK;
  for (size_t i = 0; i < 3 && !rc; i++) {
    char *path = sg_xasprintf("%s/%s", dir, model_files[i]), *data = NULL;
    size_t len = 0;
    rc = read_file(path, &data, &len, err);
    free(path);
    if (rc) break;
    char hex[65];
    sha256_hex(data, len, hex);
    sg_buf_printf(&lines, "%s %s\n", model_files[i], hex);
    if (i == 0) *program = data, *program_len = len;
    else if (i == 1) *signature = data;
    else free(data);
  }
  if (!rc) {
    char hex[65];
    sha256_hex(lines.data, lines.len, hex);
    snprintf(out, 72, "sha256:%s", hex);
  }
  sg_buf_free(&lines);
  return rc;
}

static const char *json_str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* signature.json "shape": null (any) or a list of sizes and nulls (any size). */
static bool parse_spec_shape(const cJSON *shape, model_input *in) {
  if (!shape || cJSON_IsNull(shape)) {
    in->any_shape = true;
    return true;
  }
  if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > KN_MAX_DIMS) return false;
  const cJSON *d;
  cJSON_ArrayForEach(d, shape) {
    if (cJSON_IsNull(d)) in->shape[in->ndim++] = -1;
    else if (cJSON_IsNumber(d) && d->valuedouble >= 0 && d->valuedouble == (double)(int64_t)d->valuedouble)
      in->shape[in->ndim++] = (int64_t)d->valuedouble;
    else return false;
  }
  return true;
}

static sg_code parse_signature(model_version *v, const char *sig_path, const char *text, cJSON **captures_out,
                               sg_error *err) {
  cJSON *sig = cJSON_Parse(text);
  if (!cJSON_IsObject(sig)) {
    cJSON_Delete(sig);
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: not a JSON object", sig_path);
  }
  const char *entry = json_str(sig, "entry");
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(sig, "inputs");
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive(sig, "captures");
  sg_code rc = SG_OK;
  if (!entry || !*entry || !cJSON_IsArray(inputs) || !cJSON_IsArray(caps)) {
    rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s: needs \"entry\", \"inputs\" and \"captures\"", sig_path);
  } else {
    v->entry = sg_xstrdup(entry);
    v->inputs = sg_xcalloc((size_t)cJSON_GetArraySize(inputs) + 1, sizeof *v->inputs);
    const cJSON *in;
    cJSON_ArrayForEach(in, inputs) {
      model_input *mi = &v->inputs[v->n_inputs];
      const char *name = json_str(in, "name"), *kind = json_str(in, "kind"), *dtype = json_str(in, "dtype");
      kn_dtype dt = KN_FLOAT32;
      bool scalar = kind && !strcmp(kind, "scalar"), tensor = kind && !strcmp(kind, "tensor");
      if (!name || !dtype || !(scalar || tensor) ||
          (scalar && strcmp(dtype, "int") != 0 && strcmp(dtype, "float") != 0) ||
          (tensor && !kn_dtype_parse(dtype, &dt)) ||
          (tensor && !parse_spec_shape(cJSON_GetObjectItemCaseSensitive(in, "shape"), mi))) {
        rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s: input %d is not {name, kind tensor|scalar, dtype, shape}",
                          sig_path, v->n_inputs);
        break;
      }
      mi->name = sg_xstrdup(name);
      mi->scalar = scalar;
      mi->dtype = sg_xstrdup(tensor ? kn_dtype_name(dt) : dtype);
      v->n_inputs++;
    }
  }
  if (!rc) *captures_out = cJSON_DetachItemFromObjectCaseSensitive(sig, "captures");
  cJSON_Delete(sig);
  return rc;
}

/* Whether tensor t has the dtype and shape capture c of signature.json declares. */
static bool capture_matches(const cJSON *c, const kn_tensor *t) {
  const char *dtype = json_str(c, "dtype");
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(c, "shape");
  if (!dtype || strcmp(dtype, kn_dtype_name(t->dtype)) != 0 || !cJSON_IsArray(shape) ||
      cJSON_GetArraySize(shape) != t->ndim)
    return false;
  for (int i = 0; i < t->ndim; i++) {
    const cJSON *d = cJSON_GetArrayItem(shape, i);
    if (!cJSON_IsNumber(d) || d->valuedouble != (double)t->shape[i]) return false;
  }
  return true;
}

/* The captures' values from variables.npz, checked against signature.json. */
static sg_code load_captures(model_version *v, const cJSON *caps, const char *npz_path, sg_error *err) {
  sv_npz z;
  sg_code rc = sv_npz_read(npz_path, &z, err);
  if (rc) return rc;
  v->caps = sg_xcalloc((size_t)cJSON_GetArraySize(caps) + 1, sizeof *v->caps);
  const cJSON *c;
  cJSON_ArrayForEach(c, caps) {
    const char *name = json_str(c, "name"), *kind = json_str(c, "kind");
    if (!name || !kind || (strcmp(kind, "variable") != 0 && strcmp(kind, "tensor") != 0)) {
      rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s/signature.json: capture %d is not {name, kind variable|tensor}",
                        v->path, v->n_caps);
      break;
    }
    kn_tensor *t = sv_npz_find(&z, name);
    if (!t) {
      rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s: no array '%s' (signature.json names it)", npz_path, name);
      break;
    }
    if (!capture_matches(c, t)) {
      sg_buf want = SG_BUF_INIT, got = SG_BUF_INIT;
      const cJSON *d;
      cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(c, "shape"))
          sg_buf_printf(&want, "%s%g", want.len ? "," : "", cJSON_IsNumber(d) ? d->valuedouble : -1.0);
      for (int i = 0; i < t->ndim; i++) sg_buf_printf(&got, "%s%lld", i ? "," : "", (long long)t->shape[i]);
      const char *wd = json_str(c, "dtype");
      rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s: array '%s' must be %s [%s] as signature.json says, got %s [%s]",
                        npz_path, name, wd ? wd : "?", want.data ? want.data : "", kn_dtype_name(t->dtype),
                        got.data ? got.data : "");
      sg_buf_free(&want);
      sg_buf_free(&got);
      break;
    }
    model_capture *mc = &v->caps[v->n_caps++];
    mc->name = sg_xstrdup(name);
    mc->variable = !strcmp(kind, "variable");
    mc->host = gr_value_tensor(kn_tensor_retain(t));
    v->cap_bytes += (uint64_t)t->size * kn_dtype_size(t->dtype);
  }
  sv_npz_free(&z);
  return rc;
}

/* Loads DIR/NAME/VERSION; NULL with err set on failure. */
static model_version *load_version(const char *path, const char *name, int64_t version, sg_error *err) {
  model_version *v = sg_xcalloc(1, sizeof *v);
  atomic_init(&v->rc, 1);
  pthread_mutex_init(&v->lock, NULL);
  v->name = sg_xstrdup(name);
  v->path = sg_xstrdup(path);
  v->version = version;
  char *manifest_path = sg_xasprintf("%s/manifest.json", path), *manifest_text = NULL;
  char *program = NULL, *signature = NULL, hash[72];
  size_t len = 0, program_len = 0;
  cJSON *manifest = NULL, *caps = NULL;
  sg_code rc = read_file(manifest_path, &manifest_text, &len, err);
  if (!rc) {
    manifest = cJSON_Parse(manifest_text);
    const cJSON *fv = cJSON_GetObjectItemCaseSensitive(manifest, "format_version");
    const char *format = json_str(manifest, "format"), *want = json_str(manifest, "content_hash");
    if (!cJSON_IsObject(manifest) || !format || strcmp(format, "stagd-model") != 0 || !want)
      rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s: not a stagd model manifest (format \"stagd-model\", content_hash)",
                        manifest_path);
    else if (!cJSON_IsNumber(fv) || fv->valuedouble != 1)
      rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s: format_version %g; this stagd (%s) reads version 1",
                        manifest_path, cJSON_IsNumber(fv) ? fv->valuedouble : 0.0, STAGD_VERSION);
    else if (!(rc = content_hash(path, &program, &program_len, &signature, hash, err)) && strcmp(hash, want) != 0)
      rc = sg_error_set(err, SG_INVALID_ARGUMENT,
                        "%s: content hash %s does not match the files' (%s): changed or damaged after export",
                        manifest_path, want, hash);
    if (!rc) {
      v->content_hash = sg_xstrdup(want);
      const char *sv = json_str(manifest, "stagd_version");
      v->stagd_version = sg_xstrdup(sv ? sv : "");
    }
  }
  char *sig_path = sg_xasprintf("%s/signature.json", path);
  if (!rc) rc = parse_signature(v, sig_path, signature, &caps, err);
  if (!rc) {
    char *npz = sg_xasprintf("%s/variables.npz", path);
    rc = load_captures(v, caps, npz, err);
    free(npz);
  }
  if (!rc) {
    char *file = sg_xasprintf("%s/program.sexpr", path);
    gr_stage_options so = {.entry = v->entry};
    rc = gr_stage(program, program_len, file, &so, &v->program, err);
    free(file);
  }
  free(sig_path);
  cJSON_Delete(caps);
  cJSON_Delete(manifest);
  free(manifest_text);
  free(manifest_path);
  free(program);
  free(signature);
  if (rc) {
    version_release(v);
    return NULL;
  }
  return v;
}

/* The model's values placed on `device` (uploaded on first use there), borrowed: they
 * live as long as v. NULL with err set when the upload fails. */
static gr_value **device_values_get(model_version *v, const char *device, sg_error *err) {
  pthread_mutex_lock(&v->lock);
  gr_value **vals = NULL;
  for (int d = 0; d < v->ndevs && !vals; d++)
    if (!strcmp(v->devs[d].device, device)) vals = v->devs[d].values;
  if (!vals) {
    vals = sg_xcalloc((size_t)v->n_caps + 1, sizeof *vals);
    sg_code rc = SG_OK;
    for (int i = 0; i < v->n_caps && !rc; i++) rc = gr_value_to_device(v->caps[i].host, device, &vals[i], err);
    if (rc || v->ndevs == MAX_DEVICE_CACHES || strlen(device) >= sizeof v->devs[0].device) {
      for (int i = 0; i < v->n_caps; i++)
        if (vals[i]) gr_value_release(vals[i]);
      free(vals);
      vals = NULL;
      if (!rc) sg_error_set(err, SG_RESOURCE_EXHAUSTED, "model %s: values already placed on %d devices", v->name,
                            MAX_DEVICE_CACHES);
    } else {
      snprintf(v->devs[v->ndevs].device, sizeof v->devs[0].device, "%s", device);
      v->devs[v->ndevs++].values = vals;
    }
  }
  pthread_mutex_unlock(&v->lock);
  return vals;
}

/* ------------------------------------------------------------ scanning */

static bool parse_version(const char *s, int64_t *out) {
  if (!*s || strlen(s) > 18) return false;
  int64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + (*p - '0');
  }
  *out = v;
  return v > 0;
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A model name: what a directory may be called and a client may type. */
static bool valid_name(const char *s) {
  if (!*s || strlen(s) > 128 || *s == '.') return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
          *p == '-' || *p == '.'))
      return false;
  return true;
}

typedef struct found_version {
  char *name, *path;
  int64_t version, mtime_ns, size;
} found_version;

typedef SG_VEC(found_version) found_list;

static void scan_dir(const char *dir, found_list *out) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!valid_name(e->d_name)) continue;
    char *mdir = sg_xasprintf("%s/%s", dir, e->d_name);
    DIR *vd = is_dir(mdir) ? opendir(mdir) : NULL;
    struct dirent *ve;
    while (vd && (ve = readdir(vd))) {
      int64_t ver;
      if (!parse_version(ve->d_name, &ver)) continue;
      char *vpath = sg_xasprintf("%s/%s", mdir, ve->d_name);
      char *manifest = sg_xasprintf("%s/manifest.json", vpath);
      struct stat st;
      if (is_dir(vpath) && stat(manifest, &st) == 0) { /* no manifest yet: not ready */
        found_version f = {sg_xstrdup(e->d_name), vpath, ver,
                           (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, (int64_t)st.st_size};
        sg_vec_push(&*out, f);
        vpath = NULL;
      }
      free(vpath);
      free(manifest);
    }
    if (vd) closedir(vd);
    free(mdir);
  }
  closedir(d);
}

static int by_name_then_version_desc(const void *a, const void *b) {
  const model_version *x = *(model_version *const *)a, *y = *(model_version *const *)b;
  int c = strcmp(x->name, y->name);
  if (c) return c;
  return x->version < y->version ? 1 : x->version > y->version ? -1 : 0;
}

void sv_models_rescan(sv_models *m) {
  found_list found = {0};
  scan_dir(m->dir, &found);
  /* unload what is gone */
  pthread_mutex_lock(&m->lock);
  for (size_t i = 0; i < m->versions.len;) {
    model_version *v = m->versions.data[i];
    bool present = false;
    for (size_t k = 0; k < found.len && !present; k++) present = !strcmp(found.data[k].path, v->path);
    if (present) {
      i++;
      continue;
    }
    SG_INFO(0, "model %s version %lld removed (%s is gone)", v->name, (long long)v->version, v->path);
    /* keep the order (by name, highest version first): lookups and counts rely on it */
    memmove(&m->versions.data[i], &m->versions.data[i + 1], (m->versions.len - i - 1) * sizeof *m->versions.data);
    m->versions.len--;
    version_release(v);
  }
  pthread_mutex_unlock(&m->lock);
  /* load what is new (outside the lock: staging a big model takes time) */
  bool changed = false;
  for (size_t k = 0; k < found.len; k++) {
    found_version *f = &found.data[k];
    bool known = false;
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->versions.len && !known; i++) known = !strcmp(m->versions.data[i]->path, f->path);
    for (size_t i = 0; i < m->failed.len && !known; i++)
      known = !strcmp(m->failed.data[i].path, f->path) && m->failed.data[i].mtime_ns == f->mtime_ns &&
              m->failed.data[i].size == f->size;
    pthread_mutex_unlock(&m->lock);
    if (known) continue;
    sg_error err = SG_ERROR_INIT;
    uint64_t t0 = sg_now_ns();
    model_version *v = load_version(f->path, f->name, f->version, &err);
    pthread_mutex_lock(&m->lock);
    for (size_t i = m->failed.len; i-- > 0;) /* a new manifest: forget the old failure */
      if (!strcmp(m->failed.data[i].path, f->path)) {
        free(m->failed.data[i].path);
        m->failed.data[i] = m->failed.data[--m->failed.len];
      }
    if (v) {
      sg_vec_push(&m->versions, v);
      m->loads++;
      changed = true;
      SG_INFO(0, "model %s version %lld loaded from %s (%d inputs, %d values, %llu bytes; %.1f ms)", v->name,
              (long long)v->version, v->path, v->n_inputs, v->n_caps, (unsigned long long)v->cap_bytes,
              (sg_now_ns() - t0) / 1e6);
    } else {
      failed_version fv = {sg_xstrdup(f->path), f->mtime_ns, f->size};
      sg_vec_push(&m->failed, fv);
      m->load_errors++;
      char *msg = sg_error_format(&err);
      SG_ERROR(0, "model %s version %lld not loaded: %s", f->name, (long long)f->version, msg);
      free(msg);
    }
    pthread_mutex_unlock(&m->lock);
    sg_error_clear(&err);
  }
  if (changed) {
    pthread_mutex_lock(&m->lock);
    qsort(m->versions.data, m->versions.len, sizeof *m->versions.data, by_name_then_version_desc);
    pthread_mutex_unlock(&m->lock);
  }
  for (size_t k = 0; k < found.len; k++) {
    free(found.data[k].name);
    free(found.data[k].path);
  }
  sg_vec_free(&found);
}

static void *poll_thread(void *arg) {
  sv_models *m = arg;
  pthread_mutex_lock(&m->lock);
  while (!m->stop) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + (m->poll_ms % 1000) * 1000000ULL;
    until.tv_sec += (time_t)(m->poll_ms / 1000 + ns / 1000000000ULL);
    until.tv_nsec = (long)(ns % 1000000000ULL);
    pthread_cond_timedwait(&m->wake, &m->lock, &until);
    if (m->stop) break;
    pthread_mutex_unlock(&m->lock);
    sv_models_rescan(m);
    pthread_mutex_lock(&m->lock);
  }
  pthread_mutex_unlock(&m->lock);
  return NULL;
}

sv_models *sv_models_open(const char *dir, uint64_t poll_ms, sg_error *err) {
  if (!is_dir(dir)) {
    sg_error_set(err, SG_INVALID_ARGUMENT, "--models %s: not a directory (it holds NAME/VERSION/ folders)", dir);
    return NULL;
  }
  sv_models *m = sg_xcalloc(1, sizeof *m);
  m->dir = sg_xstrdup(dir);
  m->poll_ms = poll_ms;
  pthread_mutex_init(&m->lock, NULL);
  pthread_cond_init(&m->wake, NULL);
  sv_models_rescan(m);
  SG_INFO(0, "serving %zu model version(s) from %s%s", m->versions.len, dir,
          poll_ms ? "" : " (not rescanned: --models-poll-ms 0)");
  if (poll_ms) m->thread_started = pthread_create(&m->thread, NULL, poll_thread, m) == 0;
  return m;
}

void sv_models_close(sv_models *m) {
  if (!m) return;
  pthread_mutex_lock(&m->lock);
  m->stop = true;
  pthread_cond_signal(&m->wake);
  pthread_mutex_unlock(&m->lock);
  if (m->thread_started) pthread_join(m->thread, NULL);
  for (size_t i = 0; i < m->versions.len; i++) version_release(m->versions.data[i]);
  sg_vec_free(&m->versions);
  for (size_t i = 0; i < m->failed.len; i++) free(m->failed.data[i].path);
  sg_vec_free(&m->failed);
  pthread_cond_destroy(&m->wake);
  pthread_mutex_destroy(&m->lock);
  free(m->dir);
  free(m);
}

void sv_models_counts(sv_models *m, uint64_t *models, uint64_t *versions, uint64_t *loads, uint64_t *errors) {
  *models = *versions = *loads = *errors = 0;
  if (!m) return;
  pthread_mutex_lock(&m->lock);
  *versions = m->versions.len;
  for (size_t i = 0; i < m->versions.len; i++)
    if (i == 0 || strcmp(m->versions.data[i]->name, m->versions.data[i - 1]->name) != 0) ++*models;
  *loads = m->loads;
  *errors = m->load_errors;
  pthread_mutex_unlock(&m->lock);
}

/* The version asked for (0: the highest), retained; NOT_FOUND naming what there is. */
static model_version *find_version(sv_models *m, const char *name, int64_t version, sg_error *err) {
  if (!m) {
    sg_error_set(err, SG_NOT_FOUND, "no model named '%s': this daemon serves no models (start it with --models DIR)",
                 name);
    return NULL;
  }
  model_version *found = NULL;
  sg_buf have = SG_BUF_INIT;
  pthread_mutex_lock(&m->lock);
  for (size_t i = 0; i < m->versions.len && !found; i++) { /* highest version first */
    model_version *v = m->versions.data[i];
    if (strcmp(v->name, name) != 0) continue;
    if (version == 0 || v->version == version) found = v;
    else sg_buf_printf(&have, "%s%lld", have.len ? ", " : "", (long long)v->version);
  }
  if (found) atomic_fetch_add(&found->rc, 1);
  else if (have.len)
    sg_error_set(err, SG_NOT_FOUND, "model '%s' has no version %lld (loaded: %s)", name, (long long)version, have.data);
  else {
    for (size_t i = 0; i < m->versions.len; i++)
      if (i == 0 || strcmp(m->versions.data[i]->name, m->versions.data[i - 1]->name) != 0)
        sg_buf_printf(&have, "%s%s", have.len ? ", " : "", m->versions.data[i]->name);
    sg_error_set(err, SG_NOT_FOUND, "no model named '%s' in %s (loaded: %s)", name, m->dir,
                 have.len ? have.data : "none");
  }
  pthread_mutex_unlock(&m->lock);
  sg_buf_free(&have);
  return found;
}

/* ------------------------------------------------------------ handlers */

static const char *spec_text(const model_input *in, char *buf, size_t cap) {
  if (in->scalar) return in->dtype;
  size_t n = (size_t)snprintf(buf, cap, "%s", in->dtype);
  if (in->any_shape) return buf;
  n += (size_t)snprintf(buf + n, cap - n, " [");
  for (int d = 0; d < in->ndim && n < cap; d++)
    n += in->shape[d] < 0 ? (size_t)snprintf(buf + n, cap - n, "%s?", d ? "," : "")
                          : (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "," : "", (long long)in->shape[d]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

/* Argument i (a boxed value) against its input spec. */
static sg_code check_arg(const model_version *v, int i, const gr_value *a, sg_error *err) {
  const model_input *in = &v->inputs[i];
  char want[160];
  gr_value_kind k = gr_value_kind_of(a);
  if (in->scalar) {
    if (k == GR_VALUE_INT || (k == GR_VALUE_FLOAT && !strcmp(in->dtype, "float"))) return SG_OK;
    char *got = gr_value_describe(a);
    sg_error_set(err, SG_INVALID_ARGUMENT, "model %s version %lld: argument %d (%s) must be a%s %s scalar, got %s",
                 v->name, (long long)v->version, i, in->name, strcmp(in->dtype, "int") ? "" : "n", in->dtype, got);
    free(got);
    return SG_INVALID_ARGUMENT;
  }
  int dt, nd;
  const int64_t *shape;
  bool ok = gr_value_tensor_meta(a, &dt, &nd, &shape) && !strcmp(kn_dtype_name((kn_dtype)dt), in->dtype) &&
            (in->any_shape || nd == in->ndim);
  for (int d = 0; ok && !in->any_shape && d < in->ndim; d++) ok = in->shape[d] < 0 || in->shape[d] == shape[d];
  if (ok) return SG_OK;
  char *got = gr_value_describe(a);
  sg_error_set(err, SG_INVALID_ARGUMENT, "model %s version %lld: argument %d (%s) must be %s, got %s", v->name,
               (long long)v->version, i, in->name, spec_text(in, want, sizeof want), got);
  free(got);
  return SG_INVALID_ARGUMENT;
}

/* The request's arguments as boxed values (from args or args_json), checked against
 * the signature; *out has room for the model's values after them. */
static sg_code request_args(sv_service *sv, const sv_call *call, const model_version *v, const Stagd__V1__RunModelRequest *q,
                            gr_value ***out, int *n, sg_error *err) {
  gr_value **args = NULL;
  int got = 0;
  sg_code rc = SG_OK;
  if (q->n_args && *q->args_json)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "give the arguments either as args or as args_json, not both");
  if (*q->args_json) {
    rc = gr_values_from_json(v->program, q->args_json, &args, &got, err);
    if (rc) return rc;
  } else {
    args = sg_xcalloc(q->n_args + 1, sizeof *args);
    for (; got < (int)q->n_args; got++) {
      char path[32];
      snprintf(path, sizeof path, "args[%d]", got);
      if ((rc = sv_value_to_gr(sv_service_handles(sv), call, q->args[got], path, &args[got], err))) break;
    }
  }
  if (!rc && got != v->n_inputs)
    rc = sg_error_set(err, SG_INVALID_ARGUMENT, "model %s version %lld takes %d argument%s, got %d", v->name,
                      (long long)v->version, v->n_inputs, v->n_inputs == 1 ? "" : "s", got);
  for (int i = 0; !rc && i < got; i++) rc = check_arg(v, i, args[i], err);
  if (rc) {
    for (int i = 0; i < got; i++) gr_value_release(args[i]);
    free(args);
    return rc;
  }
  *out = sg_xrealloc(args, sizeof *args * (size_t)(got + v->n_caps + 1));
  *n = got;
  return SG_OK;
}

sg_code sv_h_run_model(sv_service *sv, sv_call *call, const ProtobufCMessage *req_, ProtobufCMessage *reply_,
                       sg_error *err) {
  const Stagd__V1__RunModelRequest *q = (const void *)req_;
  Stagd__V1__ExecuteReply *r = (void *)reply_;
  if (!*q->name) return sg_error_set(err, SG_INVALID_ARGUMENT, "RunModel: no model name");
  if (q->version < 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "RunModel: version must be positive (0: the highest)");
  if (q->return_handles && *q->args_json)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "return_handles takes its arguments as args (Value messages), not args_json");
  const char *device = *q->device ? q->device : sv_service_config(sv)->device;
  sg_code rc = sv_check_device(device, err);
  if (rc) return rc;
  model_version *v = find_version(sv_service_models(sv), q->name, q->version, err);
  if (!v) return SG_NOT_FOUND;
  gr_value **args = NULL;
  int n = 0;
  rc = request_args(sv, call, v, q, &args, &n, err);
  gr_value **placed = rc ? NULL : device_values_get(v, device, err);
  if (!rc && !placed) rc = err->code;
  int total = n;
  for (int i = 0; !rc && i < v->n_caps; i++) { /* fresh cells around the shared values */
    gr_value *cap = NULL;
    if (v->caps[i].variable) rc = gr_eager_op("variable", &placed[i], 1, device, &cap, err);
    else cap = gr_value_retain(placed[i]);
    if (cap) args[total++] = cap;
  }
  if (!rc) {
    Stagd__V1__ExecuteRequest eq = STAGD__V1__EXECUTE_REQUEST__INIT;
    eq.entry = v->entry;
    eq.device = (char *)device;
    eq.return_handles = q->return_handles;
    eq.no_result_json = q->no_result_json;
    rc = sv_execute(sv, call, &eq, r, v->program, args, total, err);
  }
  for (int i = 0; i < total; i++) gr_value_release(args[i]);
  free(args);
  if (!rc) {
    r->model = sg_arena_strdup(call->arena, v->name);
    r->model_version = v->version;
  }
  version_release(v);
  return rc;
}

static Stagd__V1__ModelVersion *version_message(sv_call *call, const model_version *v) {
  Stagd__V1__ModelVersion *mv = sg_arena_alloc(call->arena, sizeof *mv);
  stagd__v1__model_version__init(mv);
  mv->version = v->version;
  mv->entry = sg_arena_strdup(call->arena, v->entry);
  mv->n_inputs = (size_t)v->n_inputs;
  mv->inputs = sg_arena_calloc(call->arena, mv->n_inputs + 1, sizeof *mv->inputs);
  for (int i = 0; i < v->n_inputs; i++) {
    const model_input *in = &v->inputs[i];
    Stagd__V1__TensorSpec *ts = sg_arena_alloc(call->arena, sizeof *ts);
    stagd__v1__tensor_spec__init(ts);
    ts->name = sg_arena_strdup(call->arena, in->name);
    ts->kind = in->scalar ? "scalar" : "tensor";
    ts->dtype = sg_arena_strdup(call->arena, in->dtype);
    ts->any_shape = !in->scalar && in->any_shape;
    ts->n_shape = in->scalar || in->any_shape ? 0 : (size_t)in->ndim;
    ts->shape = sg_arena_calloc(call->arena, ts->n_shape + 1, sizeof *ts->shape);
    for (size_t d = 0; d < ts->n_shape; d++) ts->shape[d] = in->shape[d];
    mv->inputs[i] = ts;
  }
  mv->variables = (uint32_t)v->n_caps;
  mv->variable_bytes = v->cap_bytes;
  mv->stagd_version = sg_arena_strdup(call->arena, v->stagd_version);
  mv->content_hash = sg_arena_strdup(call->arena, v->content_hash);
  mv->path = sg_arena_strdup(call->arena, v->path);
  mv->graph_id = sg_arena_strdup(call->arena, gr_program_id(v->program));
  return mv;
}

sg_code sv_h_list_models(sv_service *sv, sv_call *call, const ProtobufCMessage *req_, ProtobufCMessage *reply_,
                         sg_error *err) {
  const Stagd__V1__ListModelsRequest *q = (const void *)req_;
  Stagd__V1__ListModelsReply *r = (void *)reply_;
  sv_models *m = sv_service_models(sv);
  if (!m) {
    if (*q->name)
      return sg_error_set(err, SG_NOT_FOUND, "no model named '%s': this daemon serves no models (start it with --models DIR)",
                          q->name);
    return SG_OK;
  }
  r->models_dir = sg_arena_strdup(call->arena, m->dir);
  pthread_mutex_lock(&m->lock);
  r->models = sg_arena_calloc(call->arena, m->versions.len + 1, sizeof *r->models);
  Stagd__V1__Model *cur = NULL;
  for (size_t i = 0; i < m->versions.len; i++) {
    const model_version *v = m->versions.data[i];
    if (*q->name && strcmp(q->name, v->name) != 0) continue;
    if (!cur || strcmp(cur->name, v->name) != 0) {
      cur = sg_arena_alloc(call->arena, sizeof *cur);
      stagd__v1__model__init(cur);
      cur->name = sg_arena_strdup(call->arena, v->name);
      cur->versions = sg_arena_calloc(call->arena, m->versions.len + 1, sizeof *cur->versions);
      r->models[r->n_models++] = cur;
    }
    cur->versions[cur->n_versions++] = version_message(call, v);
  }
  pthread_mutex_unlock(&m->lock);
  if (*q->name && !r->n_models)
    return sg_error_set(err, SG_NOT_FOUND, "no model named '%s' in %s", q->name, m->dir);
  return SG_OK;
}
