// SPDX-License-Identifier: Apache-2.0
/*
 * program.c — the public API (gr.h): staging (read → lower → AD → infer → optimize →
 * infer → compile → id), execution with JSON values, dumps, and the thread-safe
 * program cache.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "program_int.h"

struct gr_program {
  atomic_int rc;
  gr_module mod;
  gr_graph *entry;
  char id[20];
  char *dumps[4]; /* built lazily under dump_lock */
  pthread_mutex_t dump_lock;
  sg_map checked_sigs; /* input signatures already inferred without error (under dump_lock) */
  /* staged from Python (gr_stage_python): the source, kept so that its gradient program
   * is staged from it too, located in the .py file (ad_program.c) */
  char *py_src;
  size_t py_len;
  char *py_entry;
};

const char *gr_primitive_name(size_t i) {
  int n;
  const gr_op *ops = gr_op_table(&n);
  for (int k = 0; k < n; k++) {
    if (i-- == 0) return ops[k].name;
    if (ops[k].alias && i-- == 0) return ops[k].alias;
  }
  return NULL;
}

bool gr_dump_format_parse(const char *name, gr_dump_format *out) {
  static const char *const names[] = {"sexpr", "text", "dot", "json"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(name, names[i])) {
      *out = (gr_dump_format)i;
      return true;
    }
  return false;
}

static void build_dump(gr_program *p, gr_dump_format fmt, sg_buf *b) {
  switch (fmt) {
  case GR_DUMP_SEXPR: gr_dump_sexpr(b, &p->mod, p->entry); break;
  case GR_DUMP_TEXT: gr_dump_text(b, &p->mod, p->entry); break;
  case GR_DUMP_DOT: gr_dump_dot(b, &p->mod, p->entry); break;
  case GR_DUMP_JSON: gr_dump_json(b, &p->mod, p->entry); break;
  }
}

static gr_program *program_new(const char *filename, const gr_stage_options *opts) {
  gr_program *p = sg_xcalloc(1, sizeof *p);
  atomic_init(&p->rc, 1);
  pthread_mutex_init(&p->dump_lock, NULL);
  gr_module_init(&p->mod, filename);
  if (opts->max_nodes > 0) p->mod.max_nodes = opts->max_nodes;
  return p;
}

/* What follows lowering, whatever the source language: AD, inference, optimization,
 * compilation, the id. Releases p on error. */
static sg_code stage_finish(gr_program *p, const gr_stage_options *opts, sg_code rc, gr_program **out,
                            sg_error *err) {
  /* between steps, the request's cancel flag and deadline (common/watch.c) */
  if (!rc) rc = sg_watch_poll("staging", err);
  if (!rc) rc = gr_ad_expand(&p->mod, err); /* (grad f i ...) → gradient graphs */
  if (!rc) {
    gr_compute_fvs(&p->mod);
    rc = gr_infer(&p->mod, p->entry, err);
    if (!rc) rc = sg_watch_poll("staging", err);
    if (!rc && !opts->no_optimize) {
      gr_pass_stats st = {0};
      gr_optimize(&p->mod, p->entry, gr_exec_fold, &st);
      rc = sg_watch_poll("optimizing", err);
      gr_compute_fvs(&p->mod);
      if (!rc) rc = gr_infer(&p->mod, p->entry, err);
    } else if (!rc) {
      gr_sweep(&p->mod, p->entry); /* no rewrite: only what nothing reaches goes */
      gr_compute_fvs(&p->mod);
    }
  }
  if (!rc) rc = gr_compile(&p->mod, p->entry, err);
  if (rc) {
    gr_program_release(p);
    return rc;
  }
  sg_buf b = SG_BUF_INIT;
  build_dump(p, GR_DUMP_SEXPR, &b);
  sg_buf_printf(&b, "\n;entry %s", p->entry->name);
  snprintf(p->id, sizeof p->id, "g%016llx", (unsigned long long)sg_hash_bytes(b.data, b.len, 0x5eed));
  sg_buf_free(&b);
  *out = p;
  return SG_OK;
}

sg_code gr_stage(const char *src, size_t len, const char *filename,
                 const gr_stage_options *opts, gr_program **out, sg_error *err) {
  gr_stage_options def = {0};
  if (!opts) opts = &def;
  *out = NULL;
  gr_program *p = program_new(filename, opts);
  sx **forms;
  int nforms;
  sg_code rc = sx_read(src, len, p->mod.file, &p->mod.arena, &p->mod.strings, &forms, &nforms, err);
  if (!rc) rc = gr_lower(&p->mod, forms, nforms, opts->entry, &p->entry, err);
  return stage_finish(p, opts, rc, out, err);
}

sg_code gr_stage_python_grad(const char *src, size_t len, const char *filename, const gr_stage_options *opts,
                             const int32_t *wrt, size_t nwrt, gr_program **out, sg_error *err) {
  gr_stage_options def = {0};
  if (!opts) opts = &def;
  *out = NULL;
  gr_program *p = program_new(filename, opts);
  gr_pyfront_options po = {.entry = opts->entry,
                           .static_names = opts->static_names,
                           .nstatic = opts->nstatic,
                           .static_args_json = opts->static_args_json,
                           .grad = wrt != NULL,
                           .wrt = wrt,
                           .nwrt = (int)nwrt};
  sg_code rc = gr_pyfront_lower(&p->mod, src, len, &po, &p->entry, err);
  if (!rc && !wrt && !opts->nstatic) { /* what a gradient program is staged from */
    p->py_src = sg_xmalloc(len + 1);
    memcpy(p->py_src, src, len);
    p->py_src[len] = 0;
    p->py_len = len;
    p->py_entry = sg_xstrdup(p->entry->name);
  }
  return stage_finish(p, opts, rc, out, err);
}

sg_code gr_stage_python(const char *src, size_t len, const char *filename, const gr_stage_options *opts,
                        gr_program **out, sg_error *err) {
  return gr_stage_python_grad(src, len, filename, opts, NULL, 0, out, err);
}

bool gr_program_python_source(const gr_program *p, const char **src, size_t *len, const char **entry,
                              const char **file) {
  if (!p->py_src) return false;
  *src = p->py_src;
  *len = p->py_len;
  *entry = p->py_entry;
  *file = p->mod.file;
  return true;
}

gr_program *gr_program_retain(gr_program *p) {
  atomic_fetch_add(&p->rc, 1);
  return p;
}

void gr_program_release(gr_program *p) {
  if (!p || atomic_fetch_sub(&p->rc, 1) != 1) return;
  for (int i = 0; i < 4; i++) free(p->dumps[i]);
  free(p->py_src);
  free(p->py_entry);
  sg_map_free(&p->checked_sigs);
  gr_module_free(&p->mod);
  pthread_mutex_destroy(&p->dump_lock);
  free(p);
}

const char *gr_program_id(const gr_program *p) { return p->id; }
const char *gr_program_entry(const gr_program *p) { return p->entry->name; }

char *gr_program_dump(const gr_program *p0, gr_dump_format fmt) {
  gr_program *p = (gr_program *)p0;
  pthread_mutex_lock(&p->dump_lock);
  if (!p->dumps[fmt]) {
    sg_buf b = SG_BUF_INIT;
    build_dump(p, fmt, &b);
    p->dumps[fmt] = sg_buf_detach(&b, NULL);
  }
  char *r = sg_xstrdup(p->dumps[fmt]);
  pthread_mutex_unlock(&p->dump_lock);
  return r;
}

/* Native stack left below `here` on this thread, minus a safety margin; the
 * executor turns deeper recursion into RESOURCE_EXHAUSTED instead of a crash. */
static size_t stack_budget(const char *here) {
  size_t budget = 6u << 20;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void *addr;
    size_t size;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0 && here > (const char *)addr) {
      size_t avail = (size_t)(here - (const char *)addr);
      size_t margin = 256u << 10;
      budget = avail > 2 * margin ? avail - margin : avail / 2;
      if (budget > (64u << 20)) budget = 64u << 20;
    }
    pthread_attr_destroy(&attr);
  }
  return budget;
}

static gr_graph *find_def(gr_program *p, const char *name) {
  for (size_t i = 0; i < p->mod.graphs.len; i++) {
    gr_graph *g = p->mod.graphs.data[i];
    if (!g->parent && !g->dead && g->code && g->name && !strcmp(g->name, name)) return g;
  }
  return NULL;
}

/* Checks args against g's declared input signature and infers g for it (once per
 * signature), then runs g. *res is owned by the caller on success. */
/* One run of g on args in ctx (a transaction open): on the request's device, the
 * result read back or kept resident. *res is set whatever rc says. */
typedef struct call_args {
  gr_graph *g;
  const gr_exec_options *opts;
  gr_val *args;
  int n;
  size_t printed_len; /* what ctx->printed held before the request */
} call_args;

static sg_code attempt_call(gr_ctx *ctx, void *arg, gr_val *res, sg_error *err) {
  call_args *c = arg;
  gr_val gv = {.tag = GV_GRAPH, .u.g = c->g};
  *res = gv_none();
  if (ctx->printed) ctx->printed->len = c->printed_len; /* an earlier attempt's prints go */
  sg_code rc = gr_vk_exec_begin(ctx, c->opts->device, err); /* cpu, auto or vulkan[:N] */
  /* device-resident arguments: borrowed on their device, host copies on the CPU */
  gr_val *host = NULL;
  bool copied = false;
  if (!rc && !ctx->backend && c->n) {
    host = sg_xmalloc(sizeof(gr_val) * (size_t)c->n);
    rc = gv_args_to_host(host, c->args, c->n, &copied, err);
  }
  if (!rc) rc = gr_check_deadline(ctx, err);
  if (!rc) rc = gr_call(ctx, gv, copied ? host : c->args, c->n, res, err);
  /* reads the result back (or keeps it resident), frees the request's device buffers */
  rc = gr_vk_exec_finish(ctx, res, rc, c->opts->keep_on_device, err);
  for (int i = 0; copied && i < c->n; i++) gv_release(host[i]);
  free(host);
  return rc;
}

static sg_code execute_core(gr_program *p, gr_graph *g, const gr_exec_options *opts, gr_val *args, int n,
                            gr_val *res, sg_buf *out_text, sg_error *err) {
  sg_code rc = SG_OK;
  if (n != g->nparams) {
    rc = sg_error_set_at(err, SG_INVALID_ARGUMENT, p->mod.file, g->line, g->col,
                         "@%s takes %d argument%s, got %d", g->name, g->nparams, g->nparams == 1 ? "" : "s", n);
  } else {
    /* check annotated parameter dtypes/shapes (the input signature) */
    for (int i = 0; i < n && !rc; i++) {
      gr_aval *ann = g->params[i]->aval;
      if (!ann || ann->kind != GA_TENSOR) continue;
      const gr_node *pn = g->params[i];
      kn_dtype tdt;
      int tnd;
      const int64_t *tshape;
      if (!gv_tensor_meta(&args[i], &tdt, &tnd, &tshape)) { /* host or device-resident */
        rc = gr_error_at(err, SG_INVALID_ARGUMENT, &p->mod, pn, "argument %d (%s): expected a %s tensor, got a %s",
                         i, pn->name, kn_dtype_name(ann->dtype), gv_type_name(&args[i]));
        break;
      }
      if (tdt != ann->dtype) {
        rc = gr_error_at(err, SG_INVALID_ARGUMENT, &p->mod, pn, "argument %d (%s): expected dtype %s, got %s", i,
                         pn->name, kn_dtype_name(ann->dtype), kn_dtype_name(tdt));
        break;
      }
      if (ann->ndim >= 0) {
        bool ok = ann->ndim == tnd;
        for (int d = 0; ok && d < tnd; d++) ok = ann->shape[d] < 0 || ann->shape[d] == tshape[d];
        if (!ok) rc = gr_error_at(err, SG_INVALID_ARGUMENT, &p->mod, pn,
                                  "argument %d (%s): shape does not match the declared shape", i, pn->name);
      }
    }
  }
  /* specialise inference to this input signature once (cached per program) */
  if (!rc) {
    uint64_t sig = sg_hash_u64(gr_signature_hash(args, n) ^ (uintptr_t)g);
    /* 1: checked; then, once a caller asks for result_tensors: 2 tensors, 3 not */
    void *seen = NULL;
    pthread_mutex_lock(&p->dump_lock);
    bool known = sg_map_get(&p->checked_sigs, sig, &seen);
    pthread_mutex_unlock(&p->dump_lock);
    uintptr_t was = known ? (uintptr_t)seen : 0, now = was;
    if (!known && !(rc = gr_infer_signature(&p->mod, g, args, n, err))) now = 1;
    if (now == 1 && opts->result_tensors) now = gr_infer_result_is_tensors(&p->mod, g, args, n) ? 2 : 3;
    if (opts->result_tensors) *opts->result_tensors = now == 2;
    if (now != was) {
      pthread_mutex_lock(&p->dump_lock);
      if (known || p->checked_sigs.len < 4096) sg_map_put(&p->checked_sigs, sig, (void *)now);
      pthread_mutex_unlock(&p->dump_lock);
    }
  }
  if (!rc) {
    char base;
    gr_ctx ctx = {.mod = &p->mod,
                  .deadline_ns = opts->deadline_ns,
                  .cancel = opts->cancel,
                  .max_depth = opts->max_depth > 0 ? opts->max_depth : 2000,
                  .stack_base = &base,
                  .max_stack = stack_budget(&base),
                  .printed = out_text};
    /* all or nothing: the variables' updates are published when the whole request has
     * run, result read back included; a conflict with another call runs it again */
    call_args c = {g, opts, args, n, out_text ? out_text->len : 0};
    /* device waits and kernels below poll the thread's watch */
    sg_watch w = {.deadline_ns = opts->deadline_ns, .cancel = opts->cancel, .max_bytes = opts->max_bytes};
    sg_watch *prev = sg_watch_enter(&w);
    rc = gr_txn_run(&ctx, attempt_call, &c, res, err);
    sg_watch_leave(prev);
  }
  return rc;
}

sg_code gr_execute_json(gr_program *p, const gr_exec_options *opts, const char *args_json,
                        char **result_json, char **printed, sg_error *err) {
  return gr_execute_json_with(p, opts, args_json, NULL, 0, result_json, printed, err);
}

sg_code gr_execute_json_with(gr_program *p, const gr_exec_options *opts, const char *args_json,
                             gr_value *const *extra, int n_extra, char **result_json, char **printed,
                             sg_error *err) {
  gr_exec_options def = {0};
  if (!opts) opts = &def;
  if (result_json) *result_json = NULL;
  if (printed) *printed = NULL;
  gr_graph *g = p->entry;
  if (opts->entry && !(g = find_def(p, opts->entry)))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "no def named '%s' in the program", opts->entry);
  sg_arena a;
  sg_arena_init(&a, 0);
  gr_val *args;
  int n;
  sg_code rc = gr_json_args(args_json, &p->mod, &a, &args, &n, err);
  if (rc) {
    sg_arena_free(&a);
    return rc;
  }
  if (n_extra > 0) { /* borrowed after the JSON ones, which stay owned here */
    args = sg_xrealloc(args, sizeof(gr_val) * (size_t)(n + n_extra));
    for (int i = 0; i < n_extra; i++) args[n + i] = extra[i]->v;
  }
  sg_buf out_text = SG_BUF_INIT;
  gr_val res;
  rc = execute_core(p, g, opts, args, n + n_extra, &res, &out_text, err);
  if (!rc) {
    sg_buf b = SG_BUF_INIT;
    gr_value_to_json(&b, &res);
    gv_release(res);
    if (result_json) *result_json = sg_buf_detach(&b, NULL);
    else sg_buf_free(&b);
  }
  if (!rc && printed) *printed = sg_buf_detach(&out_text, NULL);
  sg_buf_free(&out_text);
  for (int i = 0; i < n; i++) gv_release(args[i]);
  free(args);
  sg_arena_free(&a);
  return rc;
}

sg_code gr_values_from_json(gr_program *p, const char *args_json, gr_value ***out, int *n, sg_error *err) {
  *out = NULL;
  *n = 0;
  sg_arena a;
  sg_arena_init(&a, 0);
  gr_val *args;
  int got;
  sg_code rc = gr_json_args(args_json, &p->mod, &a, &args, &got, err);
  if (rc) {
    sg_arena_free(&a);
    return rc;
  }
  for (int i = 0; i < got && !rc; i++) rc = gv_own_strings(&args[i], false, err); /* outlive the arena */
  if (!rc) {
    *out = sg_xcalloc((size_t)got + 1, sizeof **out);
    for (int i = 0; i < got; i++) {
      gr_value *b = sg_xmalloc(sizeof *b);
      atomic_init(&b->rc, 1);
      b->v = args[i];
      (*out)[i] = b;
    }
    *n = got;
  } else {
    for (int i = 0; i < got; i++) gv_release(args[i]);
  }
  free(args);
  sg_arena_free(&a);
  return rc;
}

sg_code gr_execute_values(gr_program *p, const gr_exec_options *opts, gr_value *const *bargs, int n,
                          gr_value **result, char **printed, sg_error *err) {
  gr_exec_options def = {0};
  if (!opts) opts = &def;
  *result = NULL;
  if (printed) *printed = NULL;
  gr_graph *g = p->entry;
  if (opts->entry && !(g = find_def(p, opts->entry)))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "no def named '%s' in the program", opts->entry);
  gr_val *args = sg_xmalloc(sizeof(gr_val) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) args[i] = bargs[i]->v; /* borrowed, like every call's arguments */
  sg_buf out_text = SG_BUF_INIT;
  gr_val res;
  sg_code rc = execute_core(p, g, opts, args, n, &res, &out_text, err);
  free(args);
  if (!rc) {
    gr_value *b = sg_xmalloc(sizeof *b);
    atomic_init(&b->rc, 1);
    b->v = res;
    *result = b;
    if (printed) *printed = sg_buf_detach(&out_text, NULL);
  }
  sg_buf_free(&out_text);
  return rc;
}

sg_code gr_run_source(const char *src, size_t len, const char *filename,
                      const gr_stage_options *sopts, const gr_exec_options *xopts,
                      const char *args_json, char **result_json, char **printed,
                      sg_error *err) {
  gr_program *p;
  gr_stage_options so = sopts ? *sopts : (gr_stage_options){0};
  if (xopts && xopts->entry && !so.entry) so.entry = xopts->entry;
  sg_code rc = gr_stage(src, len, filename, &so, &p, err);
  if (rc) return rc;
  rc = gr_execute_json(p, xopts, args_json, result_json, printed, err);
  gr_program_release(p);
  return rc;
}

/* ------------------------------------------------------------------- cache */
struct gr_cache {
  pthread_mutex_t lock;
  size_t capacity;
  SG_VEC(gr_program *) items; /* most recently used last */
};

gr_cache *gr_cache_new(size_t capacity) {
  gr_cache *c = sg_xcalloc(1, sizeof *c);
  pthread_mutex_init(&c->lock, NULL);
  c->capacity = capacity ? capacity : 1024;
  return c;
}

void gr_cache_free(gr_cache *c) {
  if (!c) return;
  for (size_t i = 0; i < c->items.len; i++) gr_program_release(c->items.data[i]);
  sg_vec_free(&c->items);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

static ssize_t cache_find(gr_cache *c, const char *id) {
  for (size_t i = 0; i < c->items.len; i++)
    if (!strcmp(c->items.data[i]->id, id)) return (ssize_t)i;
  return -1;
}

static void touch(gr_cache *c, size_t i) {
  gr_program *p = c->items.data[i];
  memmove(&c->items.data[i], &c->items.data[i + 1], sizeof(gr_program *) * (c->items.len - i - 1));
  c->items.data[c->items.len - 1] = p;
}

gr_program *gr_cache_put(gr_cache *c, gr_program *p) {
  pthread_mutex_lock(&c->lock);
  ssize_t i = cache_find(c, p->id);
  gr_program *r;
  if (i >= 0) {
    touch(c, (size_t)i);
    r = gr_program_retain(sg_vec_last(&c->items));
  } else {
    if (c->items.len >= c->capacity) {
      gr_program_release(c->items.data[0]);
      memmove(&c->items.data[0], &c->items.data[1], sizeof(gr_program *) * (c->items.len - 1));
      c->items.len--;
    }
    sg_vec_push(&c->items, gr_program_retain(p));
    r = gr_program_retain(p);
  }
  pthread_mutex_unlock(&c->lock);
  return r;
}

gr_program *gr_cache_get(gr_cache *c, const char *id) {
  pthread_mutex_lock(&c->lock);
  ssize_t i = cache_find(c, id);
  gr_program *r = NULL;
  if (i >= 0) {
    touch(c, (size_t)i);
    r = gr_program_retain(sg_vec_last(&c->items));
  }
  pthread_mutex_unlock(&c->lock);
  return r;
}

size_t gr_cache_size(gr_cache *c) {
  pthread_mutex_lock(&c->lock);
  size_t n = c->items.len;
  pthread_mutex_unlock(&c->lock);
  return n;
}
