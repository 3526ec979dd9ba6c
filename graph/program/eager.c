// SPDX-License-Identifier: Apache-2.0
/*
 * eager.c — boxed values (gr_value, gr.h) and the eager path: one primitive of the op
 * table run on boxed arguments, outside any graph. The daemon's tensor handles
 * (server/handles.c) hold gr_values; an eager op (server/service.c EagerOp) looks its
 * arguments up, calls gr_eager_op, and stores the result as a new handle.
 *
 * The CPU path calls the op's kernel straight through the op table, so its cost is the
 * kernel's plus a table lookup. On a Vulkan device the op runs through the Vulkan
 * executor's per-request context and its tensor results stay on the device as
 * resident tensors (exec_vulkan_resident.c): arguments that are resident already cost
 * no copy, so a chain of eager ops moves no data between host and device; each op
 * still pays one submission.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "program_int.h"

static gr_value *box(gr_val v) {
  gr_value *b = sg_xmalloc(sizeof *b);
  atomic_init(&b->rc, 1);
  b->v = v;
  return b;
}

gr_value *gr_value_none(void) { return box(gv_none()); }
gr_value *gr_value_bool(bool b) { return box(gv_bool(b)); }
gr_value *gr_value_int(int64_t i) { return box(gv_int(i)); }
gr_value *gr_value_float(double f) { return box(gv_float(f)); }
gr_value *gr_value_tensor(kn_tensor *t) { return box(gv_tensor(t)); }

gr_value *gr_value_str(const char *s) {
  /* strings reach primitives only as dtype names; the static name outlives the box */
  kn_dtype dt;
  if (!kn_dtype_parse(s, &dt)) return NULL;
  gr_val v = {.tag = GV_STR, .u.s = kn_dtype_name(dt)};
  return box(v);
}

gr_value *gr_value_string(const char *s, sg_error *err) {
  gr_val v = {.tag = GV_STR, .u.s = gv_client_string(s, err)};
  return v.u.s ? box(v) : NULL;
}

const char *gr_value_str_of(const gr_value *v) { return v->v.tag == GV_STR ? v->v.u.s : NULL; }

/* The nesting depth a tuple or record of these items has. */
static int items_depth(gr_value *const *items, int n) {
  int depth = 0;
  for (int i = 0; i < n; i++)
    if ((items[i]->v.tag == GV_TUPLE || items[i]->v.tag == GV_RECORD) && items[i]->v.u.o->depth > depth)
      depth = items[i]->v.u.o->depth;
  return depth + 1;
}

gr_value *gr_value_record(const char *const *names, gr_value **items, int n, sg_error *err) {
  gr_val r = {.tag = GV_RECORD};
  r.u.o = gv_obj_new(n);
  r.u.o->depth = items_depth(items, n);
  r.u.o->names = sg_xcalloc((size_t)n + 1, sizeof *r.u.o->names);
  for (int i = 0; i < n; i++) r.u.o->names[i] = ""; /* printable until set */
  sg_code rc = SG_OK;
  for (int i = 0; i < n; i++) {
    r.u.o->items[i] = gv_retain(items[i]->v);
    gr_value_release(items[i]);
    if (rc) continue; /* every item's reference is taken over, error or not */
    if (!*names[i]) rc = sg_error_set(err, SG_INVALID_ARGUMENT, "field %d has an empty name", i);
    for (int k = 0; !rc && k < i; k++)
      if (!strcmp(r.u.o->names[k], names[i]))
        rc = sg_error_set(err, SG_INVALID_ARGUMENT, "duplicate field '%s'", names[i]);
    if (!rc && !(r.u.o->names[i] = gv_client_string(names[i], err))) {
      r.u.o->names[i] = "";
      rc = err->code;
    }
  }
  if (rc) {
    gv_release(r);
    return NULL;
  }
  return box(r);
}

int gr_value_record_len(const gr_value *v) { return v->v.tag == GV_RECORD ? v->v.u.o->n : -1; }

gr_value *gr_value_record_field(const gr_value *v, int i, const char **name) {
  if (v->v.tag != GV_RECORD || i < 0 || i >= v->v.u.o->n) return NULL;
  *name = v->v.u.o->names[i];
  return box(gv_retain(v->v.u.o->items[i]));
}

gr_value *gr_value_tuple(gr_value **items, int n) {
  gr_val t = gv_tuple_new(n);
  t.u.o->depth = items_depth(items, n);
  for (int i = 0; i < n; i++) {
    t.u.o->items[i] = gv_retain(items[i]->v);
    gr_value_release(items[i]);
  }
  return box(t);
}

gr_value *gr_value_retain(gr_value *v) {
  atomic_fetch_add_explicit(&v->rc, 1, memory_order_relaxed);
  return v;
}

void gr_value_release(gr_value *v) {
  if (!v || atomic_fetch_sub(&v->rc, 1) != 1) return;
  gv_release(v->v);
  free(v);
}

gr_value_kind gr_value_kind_of(const gr_value *v) {
  switch (v->v.tag) {
  case GV_NONE: return GR_VALUE_NONE;
  case GV_BOOL: return GR_VALUE_BOOL;
  case GV_INT: return GR_VALUE_INT;
  case GV_FLOAT: return GR_VALUE_FLOAT;
  case GV_STR: return GR_VALUE_STR;
  case GV_TENSOR:
  case GV_RESIDENT: return GR_VALUE_TENSOR;
  case GV_TUPLE: return GR_VALUE_TUPLE;
  case GV_RECORD: return GR_VALUE_RECORD;
  case GV_VAR: return GR_VALUE_VARIABLE;
  default: return GR_VALUE_OTHER;
  }
}

kn_tensor *gr_value_tensor_of(const gr_value *v) { return v->v.tag == GV_TENSOR ? v->v.u.t : NULL; }

bool gr_value_scalar(const gr_value *v, bool *b, int64_t *i, double *f) {
  switch (v->v.tag) {
  case GV_BOOL: *b = v->v.u.b; return true;
  case GV_INT: *i = v->v.u.i; return true;
  case GV_FLOAT: *f = v->v.u.f; return true;
  default: return false;
  }
}

gr_value *gr_value_variable_get(const gr_value *v) {
  return v->v.tag == GV_VAR ? box(gv_var_get(v->v.u.o)) : NULL;
}

bool gr_value_tensor_meta(const gr_value *v, int *dtype, int *ndim, const int64_t **shape) {
  kn_dtype dt;
  if (!gv_tensor_meta(&v->v, &dt, ndim, shape)) return false;
  *dtype = (int)dt;
  return true;
}

sg_code gr_value_host_tensor(const gr_value *v, kn_tensor **out, sg_error *err) {
  *out = NULL;
  if (v->v.tag == GV_TENSOR) {
    *out = kn_tensor_retain(v->v.u.t);
    return SG_OK;
  }
  if (v->v.tag == GV_RESIDENT) return gr_resident_host(v->v.u.r, out, err);
  return sg_error_set(err, SG_INVALID_ARGUMENT, "a %s is not a tensor", gv_type_name(&v->v));
}

sg_code gr_value_to_device(gr_value *v, const char *device, gr_value **out, sg_error *err) {
  *out = NULL;
  gr_val c = gv_retain(v->v);
  if (c.tag == GV_TUPLE) { /* a copy: v may be shared */
    gr_val t = gv_tuple_new(c.u.o->n);
    t.u.o->depth = c.u.o->depth;
    for (int i = 0; i < c.u.o->n; i++) t.u.o->items[i] = gv_retain(c.u.o->items[i]);
    gv_release(c);
    c = t;
  }
  sg_code rc = gr_vk_resident_upload(&c, device, err);
  if (rc) {
    gv_release(c);
    return rc;
  }
  *out = box(c);
  return SG_OK;
}

void gr_device_stats_get(gr_device_stats *out) {
  gr_vk_stats st;
  gr_vk_stats_get(&st);
  memset(out, 0, sizeof *out);
  out->uploads = st.uploads;
  out->downloads = st.downloads;
  out->upload_bytes = st.upload_bytes;
  out->download_bytes = st.download_bytes;
  out->requests = st.requests;
  out->submits = st.submits;
  out->dispatches = st.dispatches;
  out->cpu_fallbacks = st.cpu_fallbacks;
  out->vulkan_fused = st.fused;
  out->vulkan_epilogues = st.epilogues;
  out->cpu_fused = gr_exec_fused_chains();
  out->cpu_fused_in_place = gr_exec_fused_in_place();
  gr_vk_resident_stats(&out->resident_bytes, &out->resident_buffers);
}

int gr_value_tuple_len(const gr_value *v) { return v->v.tag == GV_TUPLE ? v->v.u.o->n : -1; }

gr_value *gr_value_tuple_item(const gr_value *v, int i) {
  if (v->v.tag != GV_TUPLE || i < 0 || i >= v->v.u.o->n) return NULL;
  return box(gv_retain(v->v.u.o->items[i]));
}

static uint64_t val_bytes(const gr_val *v, int depth) {
  if (depth > GR_MAX_VALUE_DEPTH) return 0;
  switch (v->tag) {
  case GV_TENSOR: return (uint64_t)v->u.t->size * kn_dtype_size(v->u.t->dtype);
  case GV_RESIDENT: return gr_vk_resident_bytes(v->u.r); /* device bytes */
  case GV_TUPLE:
  case GV_RECORD: {
    uint64_t s = 0;
    for (int i = 0; i < v->u.o->n; i++) s += val_bytes(&v->u.o->items[i], depth + 1);
    return s;
  }
  case GV_VAR: {
    gr_val cur = gv_var_get(v->u.o);
    uint64_t s = val_bytes(&cur, depth + 1);
    gv_release(cur);
    return s;
  }
  default: return 0;
  }
}

uint64_t gr_value_bytes(const gr_value *v) { return val_bytes(&v->v, 0); }

sg_code gr_value_escape(const gr_value *v, sg_error *err) { return gv_escape(&v->v, err); }

char *gr_tensor_type_describe(int dtype, int ndim, const int64_t *shape) {
  sg_buf b = SG_BUF_INIT;
  sg_buf_printf(&b, "%s tensor of shape (", kn_dtype_name((kn_dtype)dtype));
  for (int i = 0; i < ndim; i++) sg_buf_printf(&b, "%s%lld", i ? ", " : "", (long long)shape[i]);
  sg_buf_puts(&b, ndim == 1 ? ",)" : ")");
  return sg_buf_detach(&b, NULL);
}

char *gr_value_describe(const gr_value *v) {
  kn_dtype dt;
  int nd;
  const int64_t *shape;
  if (gv_tensor_meta(&v->v, &dt, &nd, &shape)) return gr_tensor_type_describe((int)dt, nd, shape);
  return sg_xstrdup(gv_type_name(&v->v));
}

char *gr_value_to_json_text(const gr_value *v) {
  sg_buf b = SG_BUF_INIT;
  gr_value_to_json(&b, &v->v);
  return sg_buf_detach(&b, NULL);
}

enum { EAGER_MAX_ARGS = 64 };

/* One eager op, in a transaction (gr_txn_run): on its device, resident arguments read
 * through their (cached) host copies on the CPU. */
typedef struct op_args {
  const gr_op *op;
  gr_val av[EAGER_MAX_ARGS];
  int n;
  const char *device;
  bool keep_on_device;
} op_args;

static sg_code attempt_op(gr_ctx *ctx, void *arg, gr_val *res, sg_error *err) {
  op_args *a = arg;
  gr_val host[EAGER_MAX_ARGS];
  bool cpu = !a->device || !*a->device || !strcmp(a->device, "cpu"), copied = false;
  *res = gv_none();
  sg_code rc = cpu ? SG_OK : gr_vk_exec_begin(ctx, a->device, err);
  if (!rc && !ctx->backend) rc = gv_args_to_host(host, a->av, a->n, &copied, err);
  if (!rc) rc = gr_prim(ctx, a->op, copied ? host : a->av, a->n, res, err);
  if (!cpu) rc = gr_vk_exec_finish(ctx, res, rc, a->keep_on_device, err);
  for (int i = 0; copied && i < a->n; i++) gv_release(host[i]);
  return rc;
}

sg_code gr_eager_op(const char *name, gr_value *const *args, int n, const char *device,
                    gr_value **out, sg_error *err) {
  return gr_eager_op_keep(name, args, n, device, true, out, err);
}

sg_code gr_eager_op_keep(const char *name, gr_value *const *args, int n, const char *device,
                         bool keep_on_device, gr_value **out, sg_error *err) {
  *out = NULL;
  const gr_op *op = gr_op_lookup(name);
  if (!op) return sg_error_set(err, SG_INVALID_ARGUMENT, "unknown op '%s' (the ops are the rows of graph/ir/ops.c; docs/sexpr.md lists them)", name);
  if (op->flags & GR_OP_CALLS)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "op '%s' calls functions and cannot run eagerly; stage it (stagd.function)", name);
  if (n < op->min_args || (op->max_args >= 0 && n > op->max_args) || n > EAGER_MAX_ARGS) {
    if (op->max_args == op->min_args)
      return sg_error_set(err, SG_INVALID_ARGUMENT, "op '%s' takes %d argument%s, got %d", name, op->min_args,
                          op->min_args == 1 ? "" : "s", n);
    return sg_error_set(err, SG_INVALID_ARGUMENT, "op '%s' takes %d to %d arguments, got %d", name, op->min_args,
                        op->max_args < 0 ? EAGER_MAX_ARGS : op->max_args, n);
  }
  op_args a = {.op = op, .n = n, .device = device, .keep_on_device = keep_on_device};
  for (int i = 0; i < n; i++) a.av[i] = args[i]->v; /* borrowed: kernels never take ownership */
  char base;
  const sg_watch *w = sg_watch_current(); /* the request's (server/service.c) */
  gr_ctx ctx = {.max_depth = 2000, .stack_base = &base, .max_stack = 1u << 20,
                .deadline_ns = w ? w->deadline_ns : 0, .cancel = w ? w->cancel : NULL};
  gr_val res = gv_none();
  /* a variable op's update is published when the op has succeeded (graph/exec/txn.c) */
  sg_code rc = gr_txn_run(&ctx, attempt_op, &a, &res, err);
  if (rc) {
    if (err && err->message && strncmp(err->message, name, strlen(name)) != 0)
      sg_error_prefix(err, rc, "op '%s'", name);
    return rc;
  }
  *out = box(res);
  return SG_OK;
}

/* gr_execute_values lives in program.c, next to gr_execute_json. */
