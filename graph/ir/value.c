// SPDX-License-Identifier: Apache-2.0
/*
 * value.c — runtime values of the executor: immediate scalars (bool, int64, float64,
 * none, interned strings, primitives, closed graphs) and reference-counted heap
 * objects (tensors, tuples, records, closures, variables). Scalars follow Python
 * semantics; tensors follow NumPy.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include "gr_ir.h"

gr_obj *gv_obj_new(int n) {
  gr_obj *o = sg_xcalloc(1, sizeof(gr_obj) + sizeof(gr_val) * (size_t)n);
  atomic_init(&o->rc, 1);
  o->n = n;
  return o;
}

/* Variable cells are read and assigned by concurrent requests (the daemon's worker
 * threads): a small table of mutexes, picked by the cell's address, makes each read a
 * consistent snapshot and each assign/assign_add one atomic read-modify-write. */
enum { VAR_LOCKS = 64 };
static pthread_mutex_t var_locks[VAR_LOCKS];
static pthread_once_t var_locks_once = PTHREAD_ONCE_INIT;

static void var_locks_init(void) {
  for (int i = 0; i < VAR_LOCKS; i++) pthread_mutex_init(&var_locks[i], NULL);
}

static pthread_mutex_t *var_lock_of(const gr_obj *cell) {
  pthread_once(&var_locks_once, var_locks_init);
  return &var_locks[((uintptr_t)cell / sizeof(gr_obj)) % VAR_LOCKS];
}

void gv_var_lock(gr_obj *cell) { pthread_mutex_lock(var_lock_of(cell)); }
void gv_var_unlock(gr_obj *cell) { pthread_mutex_unlock(var_lock_of(cell)); }

gr_val gv_var_get(gr_obj *cell) {
  gv_var_lock(cell);
  gr_val v = gv_retain(cell->items[0]);
  gv_var_unlock(cell);
  return v;
}

/* Strings that arrive in a client's binary arguments (string values, record field
 * names) are interned here for the life of the process: a gr_val's string is never
 * owned, and a value may outlive its request (a variable cell a handle holds). The
 * table is bounded so a client cannot grow the daemon without end; dtype names are
 * static and take no room. */
enum { CLIENT_STRINGS_MAX = 65536, CLIENT_STRING_BYTES_MAX = 4 << 20 };
static pthread_mutex_t client_lock = PTHREAD_MUTEX_INITIALIZER;
static sg_intern client_strings;
static size_t client_bytes;

const char *gv_client_string(const char *s, sg_error *err) {
  kn_dtype dt;
  if (kn_dtype_parse(s, &dt)) return kn_dtype_name(dt);
  size_t len = strlen(s);
  pthread_mutex_lock(&client_lock);
  if (!client_strings.cap) sg_intern_init(&client_strings);
  size_t before = client_strings.len;
  const char *r = NULL;
  if (client_strings.len < CLIENT_STRINGS_MAX && client_bytes + len <= CLIENT_STRING_BYTES_MAX) {
    r = sg_intern_n(&client_strings, s, len);
    if (client_strings.len != before) client_bytes += len + 1;
  } else { /* full: only strings already held */
    r = sg_intern_find(&client_strings, s, len);
  }
  pthread_mutex_unlock(&client_lock);
  if (!r)
    sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                 "the table of argument strings and field names is full (at most %d strings of %d bytes "
                 "in all, kept for the life of the daemon): reuse names or restart the daemon",
                 CLIENT_STRINGS_MAX, CLIENT_STRING_BYTES_MAX);
  return r;
}

/* Closures may capture closures to any depth (a loop's backpropagators chain one per
 * iteration): the walk stops with an error past this many levels. */
enum { MAP_MAX_DEPTH = 10000 };

/* A value about to live in a variable cell may outlive the program or the request it
 * came from (a cell a handle holds is read by later requests, after the program that
 * made its strings was evicted from the cache or the request's arena was freed). Its
 * strings and record field names are re-pointed at the process-wide table above.
 * Functions point into their program's graphs: a cell that has escaped to a handle may
 * not hold one (a cell used only inside its request may, as Snek's boxed variables do).
 * Containers are copied, never changed in place (they may be shared). */
static bool needs_owning(const gr_val *v) {
  return v->tag == GV_STR || v->tag == GV_RECORD || v->tag == GV_GRAPH || v->tag == GV_CLOSURE ||
         v->tag == GV_VAR;
}

static sg_code function_in_cell(sg_error *err) {
  return sg_error_set(err, SG_INVALID_ARGUMENT,
                      "a variable that a handle holds cannot hold a function: it would outlive the "
                      "program that defines it (such variables hold tensors, numbers, strings, and tuples "
                      "and records of them)");
}

static sg_code escape(const gr_val *v, int depth, sg_error *err);

static sg_code own_strings(gr_val *v, bool escaping, int depth, sg_error *err) {
  if (v->tag == GV_STR) {
    const char *s = gv_client_string(v->u.s, err);
    if (!s) return err->code;
    v->u.s = s;
    return SG_OK;
  }
  if (v->tag == GV_GRAPH || v->tag == GV_CLOSURE) return escaping ? function_in_cell(err) : SG_OK;
  if (v->tag == GV_VAR) return escaping ? escape(v, depth + 1, err) : SG_OK;
  if (v->tag != GV_TUPLE && v->tag != GV_RECORD) return SG_OK;
  if (!gv_has_leaf(v, needs_owning, false)) return SG_OK;
  if (depth > MAP_MAX_DEPTH)
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "a value nested deeper than %d levels", MAP_MAX_DEPTH);
  gr_obj *o = v->u.o, *c = gv_obj_new(o->n);
  c->depth = o->depth;
  gr_val r = {.tag = v->tag, .u.o = c};
  if (o->names) c->names = sg_xcalloc((size_t)o->n + 1, sizeof *c->names);
  sg_code rc = SG_OK;
  for (int i = 0; i < o->n && !rc; i++) {
    if (o->names && !(c->names[i] = gv_client_string(o->names[i], err))) rc = err->code;
    c->items[i] = gv_retain(o->items[i]);
    if (!rc) rc = own_strings(&c->items[i], escaping, depth + 1, err);
  }
  for (int i = 0; o->names && i < o->n; i++) /* names an error left unset: never NULL */
    if (!c->names[i]) c->names[i] = "";
  if (rc) {
    gv_release(r);
    return rc;
  }
  gv_release(*v);
  *v = r;
  return SG_OK;
}

sg_code gv_own_strings(gr_val *v, bool escaping, sg_error *err) { return own_strings(v, escaping, 0, err); }

static sg_code escape(const gr_val *v, int depth, sg_error *err) {
  if (depth > MAP_MAX_DEPTH)
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "a value nested deeper than %d levels", MAP_MAX_DEPTH);
  if (v->tag == GV_GRAPH || v->tag == GV_CLOSURE) return function_in_cell(err);
  if (v->tag == GV_TUPLE || v->tag == GV_RECORD) {
    for (int i = 0; i < v->u.o->n; i++)
      if (escape(&v->u.o->items[i], depth + 1, err)) return err->code;
    return SG_OK;
  }
  if (v->tag != GV_VAR || atomic_exchange(&v->u.o->escaped, true)) return SG_OK; /* marked: done */
  gr_val cur = gv_var_get(v->u.o); /* not under the lock: cells may hold each other */
  sg_code rc = escape(&cur, depth + 1, err);
  gv_release(cur);
  if (rc) atomic_store(&v->u.o->escaped, false);
  return rc;
}

sg_code gv_escape(const gr_val *v, sg_error *err) { return escape(v, 0, err); }

gr_val gv_tuple_new(int n) {
  gr_val v = {.tag = GV_TUPLE};
  v.u.o = gv_obj_new(n);
  return v;
}

void gr_resident_release(gr_resident *r) {
  if (r && atomic_fetch_sub(&r->rc, 1) == 1) r->ops->resident_free(r);
}

sg_code gr_resident_host(gr_resident *r, kn_tensor **out, sg_error *err) {
  return r->ops->resident_host(r, out, err);
}

static bool is_resident(const gr_val *v) { return v->tag == GV_RESIDENT; }

static sg_code host_leaf(void *arg, gr_val *v, sg_error *err) {
  (void)arg;
  kn_tensor *t;
  sg_code rc = gr_resident_host(v->u.r, &t, err);
  if (rc) return rc;
  gr_resident_release(v->u.r);
  *v = gv_tensor(t);
  return SG_OK;
}

sg_code gv_resident_to_host(gr_val *v, sg_error *err) {
  return gv_map_leaves(v, is_resident, false, host_leaf, NULL, err);
}

sg_code gv_args_to_host(gr_val *dst, const gr_val *src, int n, bool *any, sg_error *err) {
  *any = false;
  for (int i = 0; i < n && !*any; i++) *any = gv_has_leaf(&src[i], is_resident, false);
  if (!*any) return SG_OK;
  sg_code rc = SG_OK;
  int i = 0;
  for (; i < n && !rc; i++) {
    dst[i] = gv_retain(src[i]);
    rc = gv_resident_to_host(&dst[i], err);
  }
  if (rc)
    for (int k = 0; k < i; k++) gv_release(dst[k]);
  return rc;
}

void gv_release_obj_(gr_val v) {
  if (v.tag == GV_TENSOR) {
    kn_tensor_release(v.u.t);
    return;
  }
  if (v.tag == GV_RESIDENT) {
    gr_resident_release(v.u.r);
    return;
  }
  if (v.tag == GV_DEVICE) {
    gr_dtensor_ops(v.u.d)->dtensor_release(v.u.d);
    return;
  }
  gr_obj *o = v.u.o;
  if (atomic_fetch_sub_explicit(&o->rc, 1, memory_order_acq_rel) != 1) return;
  for (int i = 0; i < o->n; i++) gv_release(o->items[i]);
  free(o->names);
  free(o);
}


static bool container(const gr_val *v, bool closures) {
  return v->tag == GV_TUPLE || v->tag == GV_RECORD || (closures && v->tag == GV_CLOSURE);
}

static bool has_leaf(const gr_val *v, gv_pick_fn pick, bool closures, int depth) {
  if (pick(v)) return true;
  if (!container(v, closures) || depth > MAP_MAX_DEPTH) return false;
  for (int i = 0; i < v->u.o->n; i++)
    if (has_leaf(&v->u.o->items[i], pick, closures, depth + 1)) return true;
  return false;
}

bool gv_has_leaf(const gr_val *v, gv_pick_fn pick, bool closures) { return has_leaf(v, pick, closures, 0); }

static sg_code map_leaves(gr_val *v, gv_pick_fn pick, bool closures, gv_leaf_fn f, void *arg, int depth,
                          sg_error *err) {
  if (pick(v)) return f(arg, v, err);
  if (!container(v, closures)) return SG_OK;
  if (depth > MAP_MAX_DEPTH)
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "a value nested deeper than %d levels", MAP_MAX_DEPTH);
  gr_obj *o = v->u.o, *c = NULL; /* the copy, made at the first item that changes */
  sg_code rc = SG_OK;
  for (int i = 0; i < o->n && !rc; i++) {
    gr_val it = gv_retain(o->items[i]);
    if ((rc = map_leaves(&it, pick, closures, f, arg, depth + 1, err))) {
      gv_release(it);
      break;
    }
    if (!c && (it.tag != o->items[i].tag || memcmp(&it.u, &o->items[i].u, sizeof it.u))) {
      c = gv_obj_new(o->n);
      c->depth = o->depth;
      c->graph = o->graph;
      if (o->names) {
        c->names = sg_xcalloc((size_t)o->n + 1, sizeof *c->names);
        memcpy(c->names, o->names, sizeof *c->names * (size_t)o->n);
      }
      for (int k = 0; k < i; k++) c->items[k] = gv_retain(o->items[k]);
    }
    if (c) c->items[i] = it;
    else gv_release(it);
  }
  if (!c) return rc;
  gr_val r = {.tag = v->tag, .u.o = c};
  if (rc) {
    gv_release(r);
    return rc;
  }
  gv_release(*v);
  *v = r;
  return SG_OK;
}

sg_code gv_map_leaves(gr_val *v, gv_pick_fn pick, bool closures, gv_leaf_fn f, void *arg, sg_error *err) {
  return map_leaves(v, pick, closures, f, arg, 0, err);
}

bool gv_truthy(const gr_val *v, bool *out) {
  switch (v->tag) {
  case GV_BOOL: *out = v->u.b; return true;
  case GV_INT: *out = v->u.i != 0; return true;
  case GV_FLOAT: *out = v->u.f != 0; return true;
  case GV_NONE: *out = false; return true;
  case GV_TENSOR:
    if (v->u.t->size != 1) return false;
    *out = kn_get_f64(v->u.t, 0) != 0;
    return true;
  default: return false;
  }
}

bool gv_equal(const gr_val *a, const gr_val *b) {
  if (a->tag != b->tag) return false;
  switch (a->tag) {
  case GV_NONE: return true;
  case GV_BOOL: return a->u.b == b->u.b;
  case GV_INT: return a->u.i == b->u.i;
  case GV_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0;
  case GV_STR: return a->u.s == b->u.s || strcmp(a->u.s, b->u.s) == 0; /* interned in different tables */
  case GV_PRIM: return a->u.op == b->u.op;
  case GV_GRAPH: return a->u.g == b->u.g;
  case GV_TENSOR:
    return a->u.t->dtype == b->u.t->dtype && kn_tensor_same_shape(a->u.t, b->u.t) &&
           memcmp(a->u.t->data, b->u.t->data, (size_t)a->u.t->size * kn_dtype_size(a->u.t->dtype)) == 0;
  case GV_TUPLE:
  case GV_RECORD:
    if (a->u.o->n != b->u.o->n) return false;
    for (int i = 0; i < a->u.o->n; i++) {
      if (a->tag == GV_RECORD && strcmp(a->u.o->names[i], b->u.o->names[i])) return false;
      if (!gv_equal(&a->u.o->items[i], &b->u.o->items[i])) return false;
    }
    return true;
  default: return a->u.o == b->u.o;
  }
}

uint64_t gv_hash(const gr_val *v) {
  uint64_t h = sg_hash_u64(v->tag + 1);
  switch (v->tag) {
  case GV_BOOL: return h ^ sg_hash_u64(v->u.b);
  case GV_INT: return h ^ sg_hash_u64((uint64_t)v->u.i);
  case GV_FLOAT: return h ^ sg_hash_bytes(&v->u.f, sizeof(double), 1);
  case GV_STR: return h ^ sg_hash_bytes(v->u.s, strlen(v->u.s), 0);
  case GV_PRIM: return h ^ sg_hash_u64((uintptr_t)v->u.op);
  case GV_GRAPH: return h ^ sg_hash_u64((uintptr_t)v->u.g);
  case GV_TENSOR:
    return h ^ sg_hash_bytes(v->u.t->data, (size_t)v->u.t->size * kn_dtype_size(v->u.t->dtype),
                             (uint64_t)v->u.t->dtype);
  case GV_TUPLE:
  case GV_RECORD:
    for (int i = 0; i < v->u.o->n; i++) h = sg_hash_u64(h ^ gv_hash(&v->u.o->items[i]));
    return h;
  default: return h ^ sg_hash_u64((uintptr_t)v->u.o);
  }
}

const char *gv_type_name(const gr_val *v) {
  static const char *const names[] = {"none",  "bool",   "int",      "float",
                                      "str",   "tensor", "tuple",    "record",
                                      "function", "closure", "primitive", "variable",
                                      "tensor", "tensor"};
  return names[v->tag];
}

bool gv_tensor_meta(const gr_val *v, kn_dtype *dt, int *ndim, const int64_t **shape) {
  if (v->tag == GV_TENSOR) {
    *dt = v->u.t->dtype, *ndim = v->u.t->ndim, *shape = v->u.t->shape;
    return true;
  }
  if (v->tag == GV_RESIDENT) {
    *dt = v->u.r->dtype, *ndim = v->u.r->ndim, *shape = v->u.r->shape;
    return true;
  }
  return false;
}

void gv_var_set(gr_obj *cell, gr_val nv) {
  gv_var_lock(cell);
  gr_val old = cell->items[0];
  cell->items[0] = nv;
  gv_var_unlock(cell);
  gv_release(old);
}

kn_tensor *gv_to_tensor(const gr_val *v, kn_dtype dt) {
  switch (v->tag) {
  case GV_TENSOR: return kn_tensor_retain(v->u.t);
  case GV_BOOL: return kn_tensor_scalar_i64(dt, v->u.b);
  case GV_INT: return kn_tensor_scalar_i64(dt, v->u.i);
  case GV_FLOAT: return kn_tensor_scalar_f64(dt, v->u.f);
  default: return NULL;
  }
}

static void print_tensor_data(sg_buf *b, const kn_tensor *t, int dim, int64_t *off, bool py) {
  if (dim == t->ndim) {
    if (kn_dtype_is_float(t->dtype)) {
      double f = kn_get_f64(t, *off);
      if (py && !isnan(f) && !isinf(f) && f == floor(f) && fabs(f) < 1e16)
        sg_buf_printf(b, "%.0f.", f);
      else
        sg_buf_put_double_g(b, f);
    } else if (t->dtype == KN_BOOL) {
      sg_buf_puts(b, kn_get_i64(t, *off) ? (py ? "True" : "true") : (py ? "False" : "false"));
    } else {
      sg_buf_printf(b, "%lld", (long long)kn_get_i64(t, *off));
    }
    (*off)++;
    return;
  }
  sg_buf_putc(b, '[');
  for (int64_t i = 0; i < t->shape[dim]; i++) {
    if (i) sg_buf_puts(b, py ? " " : ", ");
    print_tensor_data(b, t, dim + 1, off, py);
  }
  sg_buf_putc(b, ']');
}

static void print_val(sg_buf *b, const gr_val *v, bool py) {
  switch (v->tag) {
  case GV_NONE: sg_buf_puts(b, py ? "None" : "none"); break;
  case GV_BOOL: sg_buf_puts(b, v->u.b ? (py ? "True" : "true") : (py ? "False" : "false")); break;
  case GV_INT: sg_buf_printf(b, "%lld", (long long)v->u.i); break;
  case GV_FLOAT: sg_buf_put_double_g(b, v->u.f); break;
  case GV_STR:
    if (py) sg_buf_puts(b, v->u.s);
    else sx_print_string(b, v->u.s, strlen(v->u.s)); /* the sexpr dump reads it back */
    break;
  case GV_PRIM: sg_buf_puts(b, v->u.op->name); break;
  case GV_GRAPH: sg_buf_printf(b, "@%s", v->u.g->name ? v->u.g->name : "lambda"); break;
  case GV_CLOSURE: sg_buf_printf(b, "<closure @%s>", v->u.o->graph->name ? v->u.o->graph->name : "lambda"); break;
  case GV_VAR: sg_buf_puts(b, "<variable>"); break;
  case GV_DEVICE:
  case GV_RESIDENT: sg_buf_puts(b, "<device tensor>"); break;
  case GV_TENSOR: {
    int64_t off = 0;
    if (!py) {
      /* re-readable: (cast (reshape (tuple ...) (tuple dims)) dtype) is too long; the
       * sexpr dump uses this form, which lower.c accepts as a tensor literal */
      sg_buf_printf(b, "(tensor %s (", kn_dtype_name(v->u.t->dtype));
      for (int i = 0; i < v->u.t->ndim; i++) sg_buf_printf(b, i ? " %lld" : "%lld", (long long)v->u.t->shape[i]);
      sg_buf_puts(b, ")");
      for (int64_t i = 0; i < v->u.t->size; i++) {
        sg_buf_putc(b, ' ');
        if (kn_dtype_is_float(v->u.t->dtype)) sg_buf_put_double_g(b, kn_get_f64(v->u.t, i));
        else sg_buf_printf(b, "%lld", (long long)kn_get_i64(v->u.t, i));
      }
      sg_buf_putc(b, ')');
    } else {
      print_tensor_data(b, v->u.t, 0, &off, true);
    }
    break;
  }
  case GV_TUPLE:
    sg_buf_puts(b, py ? "(" : "(tuple");
    for (int i = 0; i < v->u.o->n; i++) {
      if (py && i) sg_buf_puts(b, ", ");
      if (!py) sg_buf_putc(b, ' ');
      print_val(b, &v->u.o->items[i], py);
    }
    if (py && v->u.o->n == 1) sg_buf_putc(b, ',');
    sg_buf_putc(b, ')');
    break;
  case GV_RECORD:
    sg_buf_puts(b, py ? "{" : "(record");
    for (int i = 0; i < v->u.o->n; i++) {
      if (py) sg_buf_printf(b, "%s%s: ", i ? ", " : "", v->u.o->names[i]);
      else sg_buf_printf(b, " (%s ", v->u.o->names[i]);
      print_val(b, &v->u.o->items[i], py);
      if (!py) sg_buf_putc(b, ')');
    }
    sg_buf_putc(b, py ? '}' : ')');
    break;
  }
}

void gv_print(sg_buf *b, const gr_val *v) { print_val(b, v, false); }
void gv_print_py(sg_buf *b, const gr_val *v) { print_val(b, v, true); }
