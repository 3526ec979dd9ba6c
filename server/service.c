// SPDX-License-Identifier: Apache-2.0
/*
 * service.c — the one place requests are handled.
 *
 * The method table below lists every method of the API once: its name, gRPC path,
 * LSP method, request and reply descriptors, and handler. Transports look methods
 * up here and call sv_service_invoke*; they hold no logic of their own. Handlers
 * allocate replies from the call's arena, so nothing is freed piecemeal.
 *
 * sv_service_invoke is where deadlines, cancellation, draining, statistics and
 * request logging happen, for every transport alike.
 */
#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "auth.h"
#include "gr.h"
#include "health.pb-c.h"
#include "convert.h"
#include "py.h"
#ifdef STAGD_HAVE_VULKAN
#include "kn_vulkan.h"
#endif
#include "stagd.pb-c.h"
#include "sv.h"
#include "eager.h"
#include "metrics.h"
#include "models.h"
#include "shm.h"
#include "transport.h"

#ifndef STAGD_VERSION
#define STAGD_VERSION "0.0.0"
#endif
#ifndef STAGD_BUILD
#define STAGD_BUILD "unknown"
#endif

typedef struct method_stats {
  _Atomic uint64_t calls, errors, total_ns;
  sv_method_metrics m; /* by status code and latency (metrics.c) */
} method_stats;

struct sv_service {
  const sv_config *cfg;
  uint64_t started_ms;
  _Atomic uint64_t next_id;
  _Atomic uint64_t in_flight;
  _Atomic uint64_t requests_total;
  _Atomic uint64_t errors_total;
  atomic_bool draining;
  method_stats *stats; /* one per method-table row */
  gr_cache *graphs;    /* staged programs by content-addressed id */
  _Atomic uint64_t graph_hits, graph_misses;
  sv_handles *handles; /* device-resident tensors of eager clients (handles.c) */
  sv_models *models;   /* --models DIR (models.c), or NULL */
  sv_auth *auth;       /* --auth-token-file (auth.c), or NULL */
  sv_admission *admission; /* requests per client session (admission.c) */
  _Atomic(sv_shm *) shm;   /* the local data path (shm.c), or NULL; set once serving */
  sv_session_memory *session_memory; /* --max-session-bytes (session_memory.c) */
};

enum { GRAPH_CACHE_CAPACITY = 1024 };

/* ---------------------------------------------------------------- helpers */

#define REPLY(type, var) type *var = (type *)reply_
#define REQUEST(type, var) const type *var = (const type *)req_

static void *arena_array(sv_call *call, size_t n, size_t size) {
  return sg_arena_calloc(call->arena, n ? n : 1, size);
}

/* ---------------------------------------------------------------- handlers */

static sg_code h_version(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                         ProtobufCMessage *reply_, sg_error *err) {
  REPLY(Stagd__V1__VersionReply, r);
  r->version = STAGD_VERSION;
  r->api = "stagd.v1";
  r->build = STAGD_BUILD;
  r->grpc_version = (char *)grpc_version_string();
  r->uv_version = (char *)uv_version_string();
  static const char *const features[] = {"grpc",  "lsp",     "health",    "ping",     "stats",
                                         "parse", "unparse", "stage",     "execute",  "dump-graph",
                                         "devices:cpu", "eager", "handles", "models"
#ifdef STAGD_HAVE_VULKAN
                                         ,
                                         "devices:vulkan"
#endif
  };
  r->n_features = sizeof features / sizeof features[0];
  r->features = (char **)features;
  r->max_message_bytes = sv->cfg->max_message_bytes;
  if (call->shm) r->shm_dir = (char *)sv_shm_dir(call->shm);
  r->shm_staging = call->shm != NULL;
  r->eager_first = true;
  r->eager_calls = true;
  size_t np = 0;
  while (gr_primitive_name(np)) np++;
  r->primitives = arena_array(call, np, sizeof *r->primitives);
  for (size_t i = 0; i < np; i++) r->primitives[i] = (char *)gr_primitive_name(i);
  r->n_primitives = np;
  return SG_OK;
}

static void cpu_model(char *out, size_t cap) {
  snprintf(out, cap, "CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "model name", 10)) {
      char *colon = strchr(line, ':');
      if (colon) {
        colon++;
        while (*colon == ' ') colon++;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(out, cap, "%s", colon);
      }
      break;
    }
  }
  fclose(f);
}

static sg_code h_list_devices(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                              ProtobufCMessage *reply_, sg_error *err) {
  REPLY(Stagd__V1__ListDevicesReply, r);
  Stagd__V1__Device *d = sg_arena_alloc(call->arena, sizeof *d);
  stagd__v1__device__init(d);
  char model[256];
  cpu_model(model, sizeof model);
  d->name = "cpu";
  d->backend = "cpu";
  d->description = sg_arena_strdup(call->arena, model);
  d->type = "cpu";
  d->driver = "stagd cpu backend";
  d->compute_units = (uint32_t)sv->cfg->workers;
  d->is_default = true;
  Stagd__V1__MemoryHeap *heap = sg_arena_alloc(call->arena, sizeof *heap);
  stagd__v1__memory_heap__init(heap);
  heap->size_bytes = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
  heap->device_local = true;
  d->n_heaps = 1;
  d->heaps = arena_array(call, 1, sizeof *d->heaps);
  d->heaps[0] = heap;
  r->n_devices = 1;
#ifdef STAGD_HAVE_VULKAN
  kn_vk_device_info *vk = NULL;
  size_t n_vk = 0;
  sg_error vk_err = SG_ERROR_INIT;
  if (kn_vk_enumerate(&vk, &n_vk, &vk_err) != SG_OK) n_vk = 0; /* no loader or driver: the CPU only */
  sg_error_clear(&vk_err);
  int chosen = -1;
  if (kn_vk_choose_device(sv->cfg->device, &chosen, &vk_err) != SG_OK) chosen = -1;
  sg_error_clear(&vk_err);
  d->is_default = chosen < 0;
  /* the choices the daemon's environment forces (a bad value is reported when executing) */
  kn_vk_matmul_variant forced;
  kn_vk_coop_flavour coop_forced;
  if (kn_vk_matmul_env_variant(&forced, &vk_err) != SG_OK) forced = KN_VK_MATMUL_AUTO;
  sg_error_clear(&vk_err);
  if (kn_vk_coop_env_flavour(&coop_forced, &vk_err) != SG_OK) coop_forced = KN_VK_COOP_AUTO;
  sg_error_clear(&vk_err);
  r->devices = arena_array(call, 1 + n_vk, sizeof *r->devices);
  for (size_t i = 0; i < n_vk; i++) {
    const kn_vk_device_info *v = &vk[i];
    Stagd__V1__Device *g = sg_arena_alloc(call->arena, sizeof *g);
    stagd__v1__device__init(g);
    char name[32];
    snprintf(name, sizeof name, "vulkan:%d", v->index);
    g->name = sg_arena_strdup(call->arena, name);
    g->backend = "vulkan";
    g->description = sg_arena_strdup(call->arena, v->name);
    g->type = (char *)kn_vk_device_type_name(v->type);
    g->vendor = sg_arena_strdup(call->arena, v->vendor_name ? v->vendor_name : "");
    g->driver = sg_arena_strdup(call->arena, v->driver_info[0] ? v->driver_info : v->driver_name);
    g->subgroup_size = v->subgroup_size;
    g->is_default = chosen == v->index;
    g->cooperative_matrix = v->cooperative_matrix;
    g->float16 = v->float16;
    g->matmul_variants = arena_array(call, KN_VK_MATMUL_NVARIANTS, sizeof *g->matmul_variants);
    for (int mv = KN_VK_MATMUL_TILED; mv < KN_VK_MATMUL_NVARIANTS; mv++)
      if (kn_vk_matmul_variant_offered(v, (kn_vk_matmul_variant)mv))
        g->matmul_variants[g->n_matmul_variants++] =
            (char *)kn_vk_matmul_variant_name((kn_vk_matmul_variant)mv);
    kn_vk_matmul_plan mp = kn_vk_matmul_choice(NULL, KN_VK_F32, v, forced);
    g->matmul_kernel = (char *)(mp.kernel ? mp.kernel : "");
    g->matmul_reason = (char *)(mp.reason ? mp.reason : "");
    const char *coop_kernel = NULL, *coop_reason = NULL;
    kn_vk_coop_choice(v, coop_forced, &coop_kernel, &coop_reason);
    g->coop_kernel = (char *)(coop_kernel ? coop_kernel : "");
    g->coop_reason = (char *)(coop_reason ? coop_reason : "");
    g->n_heaps = (size_t)v->heap_count;
    g->heaps = arena_array(call, g->n_heaps, sizeof *g->heaps);
    for (int h = 0; h < v->heap_count; h++) {
      Stagd__V1__MemoryHeap *mh = sg_arena_alloc(call->arena, sizeof *mh);
      stagd__v1__memory_heap__init(mh);
      mh->size_bytes = v->heap_size[h];
      mh->device_local = v->heap_device_local[h];
      g->heaps[h] = mh;
    }
    r->devices[r->n_devices++] = g;
  }
  free(vk);
#else
  r->devices = arena_array(call, 1, sizeof *r->devices);
#endif
  r->devices[0] = d;
  return SG_OK;
}

static sg_code h_stats(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                       ProtobufCMessage *reply_, sg_error *err) {
  REPLY(Stagd__V1__StatsReply, r);
  r->uptime_ms = sg_wall_ms() - sv->started_ms;
  r->requests_total = atomic_load(&sv->requests_total);
  r->requests_in_flight = atomic_load(&sv->in_flight);
  r->errors_total = atomic_load(&sv->errors_total);
  int live_sessions = 0;
  sv_handles_session_count(sv->handles, NULL, &live_sessions, &r->handles_expired);
  r->live_sessions = (uint64_t)live_sessions;
  uint64_t bytes;
  sv_handles_stats(sv->handles, &r->live_handles, &bytes);
  size_t n = sv_method_count();
  r->methods = arena_array(call, n, sizeof *r->methods);
  for (size_t i = 0; i < n; i++) {
    uint64_t calls = atomic_load(&sv->stats[i].calls);
    if (!calls) continue;
    Stagd__V1__MethodStats *ms = sg_arena_alloc(call->arena, sizeof *ms);
    stagd__v1__method_stats__init(ms);
    ms->method = (char *)sv_method_at(i)->name;
    ms->calls = calls;
    ms->errors = atomic_load(&sv->stats[i].errors);
    ms->total_ns = atomic_load(&sv->stats[i].total_ns);
    r->methods[r->n_methods++] = ms;
  }
  gr_device_stats ds;
  gr_device_stats_get(&ds);
  r->device_uploads = ds.uploads;
  r->device_downloads = ds.downloads;
  r->device_upload_bytes = ds.upload_bytes;
  r->device_download_bytes = ds.download_bytes;
  r->resident_bytes = ds.resident_bytes;
  r->resident_buffers = ds.resident_buffers;
  return SG_OK;
}

static sg_code h_ping(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                      ProtobufCMessage *reply_, sg_error *err) {
  REQUEST(Stagd__V1__PingRequest, q);
  REPLY(Stagd__V1__PingReply, r);
  if (q->delay_ms > sv->cfg->max_ping_delay_ms)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "Ping delay_ms %u exceeds the limit of %llu ms (max-ping-delay-ms)",
                        q->delay_ms, (unsigned long long)sv->cfg->max_ping_delay_ms);
  uint64_t until = sg_now_ns() + (uint64_t)q->delay_ms * 1000000ULL;
  for (;;) {
    uint64_t now = sg_now_ns();
    if (now >= until) break;
    if (sg_watch_poll("waiting out Ping's delay_ms", err)) return err->code; /* the call's watch */
    uint64_t step = until - now;
    if (step > 5000000ULL) step = 5000000ULL;
    struct timespec ts = {0, (long)step};
    nanosleep(&ts, NULL);
  }
  r->payload = q->payload;
  return SG_OK;
}

static sg_code h_health(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                        ProtobufCMessage *reply_, sg_error *err) {
  REQUEST(Grpc__Health__V1__HealthCheckRequest, q);
  REPLY(Grpc__Health__V1__HealthCheckResponse, r);
  if (*q->service && strcmp(q->service, "stagd.v1.Stagd") != 0)
    return sg_error_set(err, SG_NOT_FOUND, "unknown service '%s' (this server has 'stagd.v1.Stagd')", q->service);
  r->status = atomic_load(&sv->draining) ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING
                                         : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
  return SG_OK;
}

/* Moves a buffer's text into the call's arena. */
static char *arena_text(sv_call *call, sg_buf *b) {
  char *s = sg_arena_strndup(call->arena, b->data ? b->data : "", b->len);
  sg_buf_clear(b);
  return s;
}

static sg_code h_parse(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                       ProtobufCMessage *reply_, sg_error *err) {
  REQUEST(Stagd__V1__ParseRequest, q);
  REPLY(Stagd__V1__ParseReply, r);
  const char *file = *q->filename ? q->filename : "<unknown>";
  py_ctx ctx;
  py_ctx_init(&ctx);
  py_mod *mod = py_parse(&ctx, q->source, strlen(q->source), file, err);
  if (!mod) {
    py_ctx_free(&ctx);
    return err && err->code ? err->code : SG_INVALID_ARGUMENT;
  }
  sg_buf b = SG_BUF_INIT;
  py_dump_module(mod, q->include_attributes, &b);
  r->dump = arena_text(call, &b);
  if (q->want_json) {
    py_json_module(mod, q->include_attributes, &b);
    r->json = arena_text(call, &b);
  }
  if (q->want_unparse) {
    py_unparse_module(mod, &b);
    r->unparsed = arena_text(call, &b);
  }
  sg_buf_free(&b);
  py_ctx_free(&ctx);
  return SG_OK;
}

static sg_code h_convert(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                         ProtobufCMessage *reply_, sg_error *err) {
  (void)sv;
  REQUEST(Stagd__V1__ConvertRequest, q);
  REPLY(Stagd__V1__ConvertReply, r);
  const char *file = *q->filename ? q->filename : "<unknown>";
  py_conv_style style = q->style == STAGD__V1__STYLE__STYLE_SNEK ? PY_STYLE_SNEK : PY_STYLE_AUTOGRAPH;
  py_conv_result res;
  sg_code rc = py_convert(q->source, strlen(q->source), file, style, q->function, &res, err);
  if (rc != SG_OK) {
    py_conv_result_free(&res);
    return rc;
  }
  r->code = arena_text(call, &res.code);
  r->n_source_map = (size_t)res.nmap;
  r->source_map = arena_array(call, r->n_source_map, sizeof *r->source_map);
  for (int i = 0; i < res.nmap; i++) {
    Stagd__V1__SourceMapEntry *e = sg_arena_alloc(call->arena, sizeof *e);
    Stagd__V1__Location *l = sg_arena_alloc(call->arena, sizeof *l);
    *e = (Stagd__V1__SourceMapEntry)STAGD__V1__SOURCE_MAP_ENTRY__INIT;
    *l = (Stagd__V1__Location)STAGD__V1__LOCATION__INIT;
    l->file = sg_arena_strdup(call->arena, file);
    l->line = res.map[i].line;
    l->column = res.map[i].col;
    e->converted_line = res.map[i].converted_line;
    e->original = l;
    r->source_map[i] = e;
  }
  r->n_diagnostics = (size_t)res.ndiags;
  r->diagnostics = arena_array(call, r->n_diagnostics, sizeof *r->diagnostics);
  for (int i = 0; i < res.ndiags; i++) {
    const py_diag *pd = &res.diags[i];
    Stagd__V1__Diagnostic *d = sg_arena_alloc(call->arena, sizeof *d);
    Stagd__V1__Location *l = sg_arena_alloc(call->arena, sizeof *l);
    *d = (Stagd__V1__Diagnostic)STAGD__V1__DIAGNOSTIC__INIT;
    *l = (Stagd__V1__Location)STAGD__V1__LOCATION__INIT;
    l->file = sg_arena_strdup(call->arena, file);
    l->line = pd->line;
    l->column = pd->col;
    l->end_line = pd->end_line;
    l->end_column = pd->end_col;
    d->severity = pd->severity == PY_DIAG_ERROR     ? STAGD__V1__DIAGNOSTIC__SEVERITY__SEVERITY_ERROR
                  : pd->severity == PY_DIAG_WARNING ? STAGD__V1__DIAGNOSTIC__SEVERITY__SEVERITY_WARNING
                                                    : STAGD__V1__DIAGNOSTIC__SEVERITY__SEVERITY_INFO;
    d->message = sg_arena_strdup(call->arena, pd->message);
    d->hint = sg_arena_strdup(call->arena, pd->hint);
    d->code = sg_arena_strdup(call->arena, pd->code);
    d->location = l;
    r->diagnostics[i] = d;
  }
  py_conv_result_free(&res);
  return SG_OK;
}

static gr_dump_format dump_format(Stagd__V1__DumpFormat f) {
  switch (f) {
    case STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_SEXPR: return GR_DUMP_SEXPR;
    case STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_DOT: return GR_DUMP_DOT;
    case STAGD__V1__DUMP_FORMAT__DUMP_FORMAT_JSON: return GR_DUMP_JSON;
    default: return GR_DUMP_TEXT;
  }
}

static char *program_dump(sv_call *call, gr_program *p, Stagd__V1__DumpFormat f) {
  char *text = gr_program_dump(p, dump_format(f));
  char *copy = sg_arena_strdup(call->arena, text ? text : "");
  free(text);
  return copy;
}

/* The staged program with this id, retained; NOT_FOUND otherwise. */
static gr_program *find_program(sv_service *sv, const char *id, sg_error *err) {
  gr_program *p = gr_cache_get(sv->graphs, id);
  atomic_fetch_add(p ? &sv->graph_hits : &sv->graph_misses, 1);
  if (!p)
    sg_error_set(err, SG_NOT_FOUND, "no staged graph with id '%s' (Stage it first; the daemon keeps the %d most recent)",
                 id, GRAPH_CACHE_CAPACITY);
  return p;
}

/* Stages `text` and keeps the program in the graph cache; *out: the cached twin when the
 * same program was staged before (new reference). */
static sg_code stage_cached(sv_service *sv, const char *text, bool python, const char *file,
                            const gr_stage_options *opts, gr_program **out, sg_error *err) {
  gr_program *staged;
  sg_code rc = python ? gr_stage_python(text, strlen(text), file, opts, &staged, err)
                      : gr_stage(text, strlen(text), file, opts, &staged, err);
  if (rc != SG_OK) return rc;
  *out = gr_cache_put(sv->graphs, staged);
  atomic_fetch_add(*out == staged ? &sv->graph_misses : &sv->graph_hits, 1);
  gr_program_release(staged);
  return SG_OK;
}

gr_program *sv_program_or_stage(sv_service *sv, const char *id, const char *sexpr, const char *entry,
                                const char *file, sg_error *err) {
  if (*id && !*sexpr) return find_program(sv, id, err);
  gr_program *p = *id ? gr_cache_get(sv->graphs, id) : NULL;
  if (p) {
    atomic_fetch_add(&sv->graph_hits, 1);
    return p;
  }
  if (!*sexpr) {
    sg_error_set(err, SG_INVALID_ARGUMENT, "a call needs a graph_id or the program's sexpr");
    return NULL;
  }
  gr_stage_options opts = {.entry = *entry ? entry : NULL};
  if (stage_cached(sv, sexpr, false, file, &opts, &p, err)) return NULL;
  if (*id && strcmp(gr_program_id(p), id)) {
    sg_error_set(err, SG_INVALID_ARGUMENT, "the call's sexpr stages as graph '%s', not its graph_id '%s'",
                 gr_program_id(p), id);
    gr_program_release(p);
    return NULL;
  }
  return p;
}

static sg_code h_stage(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                       ProtobufCMessage *reply_, sg_error *err) {
  REQUEST(Stagd__V1__StageRequest, q);
  REPLY(Stagd__V1__StageReply, r);
  gr_stage_options opts = {.no_optimize = q->no_optimize, .entry = *q->entry ? q->entry : NULL};
  const char *text = *q->sexpr ? q->sexpr : q->source;
  bool python = q->language == STAGD__V1__SOURCE_LANGUAGE__SOURCE_LANGUAGE_PYTHON;
  if (!python && q->n_static_names)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "static_names is for Python sources (language PYTHON)");
  opts.static_names = (const char *const *)q->static_names;
  opts.nstatic = (int)q->n_static_names;
  opts.static_args_json = *q->static_args_json ? q->static_args_json : NULL;
  const char *file = *q->filename ? q->filename : python ? "<python>" : "<sexpr>";
  gr_program *p;
  sg_code rc = stage_cached(sv, text, python, file, &opts, &p, err);
  if (rc != SG_OK) return rc;
  r->graph_id = sg_arena_strdup(call->arena, gr_program_id(p));
  r->n_dumps = q->n_dumps;
  r->dumps = arena_array(call, q->n_dumps, sizeof *r->dumps);
  for (size_t i = 0; i < q->n_dumps; i++) {
    Stagd__V1__GraphDump *d = sg_arena_alloc(call->arena, sizeof *d);
    stagd__v1__graph_dump__init(d);
    d->format = q->dumps[i];
    d->text = program_dump(call, p, q->dumps[i]);
    r->dumps[i] = d;
  }
  gr_program_release(p);
  return SG_OK;
}

sg_code sv_run_program(sv_service *sv, sv_call *call, gr_program *p, const char *entry,
                       Stagd__V1__Value *const *argv, size_t n_args, gr_value *const *extra, int n_extra,
                       const char *device, bool keep_on_device, bool *result_tensors, gr_value **res,
                       char **printed, sg_error *err) {
  *res = NULL;
  *printed = NULL;
  sg_code rc = SG_OK;
  size_t total = n_args + (size_t)n_extra;
  gr_value **args = sg_xcalloc(total ? total : 1, sizeof *args);
  size_t got = 0;
  for (; got < n_args && !rc; got++) {
    char path[32];
    snprintf(path, sizeof path, "args[%zu]", got);
    rc = sv_value_to_gr(sv->handles, call, argv[got], path, &args[got], err);
    if (rc) break;
  }
  for (int i = 0; !rc && i < n_extra; i++) args[n_args + (size_t)i] = extra[i]; /* borrowed */
  if (!rc) {
    gr_exec_options opts = {entry, call->deadline_ns, device, 0, keep_on_device && !sv->cfg->host_handles,
                            call->cancelled, sv->cfg->max_request_bytes, result_tensors};
    rc = gr_execute_values(p, &opts, args, (int)total, res, printed, err);
  }
  for (size_t i = 0; i < got; i++) gr_value_release(args[i]);
  free(args);
  return rc;
}

/* Execute with boxed values: handles as arguments (variables by reference), and the
 * result left in the daemon as handles when asked (eager.c does the conversions). */
static sg_code execute_values(sv_service *sv, sv_call *call, const Stagd__V1__ExecuteRequest *q,
                              Stagd__V1__ExecuteReply *r, gr_program *p, const char *device,
                              gr_value *const *extra, int n_extra, sg_error *err) {
  gr_value *res = NULL;
  char *printed = NULL;
  /* return_handles on a Vulkan device: tensor results stay there (resident) */
  bool tensors = false;
  sg_code rc = sv_run_program(sv, call, p, *q->entry ? q->entry : NULL, q->args, q->n_args, extra, n_extra, device,
                              q->return_handles, &tensors, &res, &printed, err);
  r->result_tensors = tensors;
  if (!rc) {
    r->output = sg_arena_strdup(call->arena, printed ? printed : "");
    const char *where = !strcmp(device, "auto") ? "cpu" : device;
    rc = sv_value_from_gr(sv->handles, call, res, where, q->return_handles, &r->result, err);
    if (!rc && !q->return_handles && !q->no_result_json) {
      char *json = gr_value_to_json_text(res);
      r->result_json = sg_arena_strdup(call->arena, json);
      free(json);
    }
  }
  free(printed);
  gr_value_release(res);
  return rc;
}

/* Value arguments (records, strings and handles too) run as values: tensors are copied
 * once, not printed as JSON text and parsed back (2.5 µs a number); the reply then
 * carries `result` as well as `result_json`. args_json takes the JSON path. */
static bool values_path(const Stagd__V1__ExecuteRequest *q, int n_extra) {
  return q->return_handles || q->n_args > 0 || (n_extra > 0 && !*q->args_json);
}

/* The checks of an Execute request made before its program is looked up. */
static sg_code execute_precheck(sv_service *sv, const Stagd__V1__ExecuteRequest *q, int n_extra, sg_error *err) {
  if (q->n_args && *q->args_json)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "give the arguments either as args or as args_json, not both");
  if (q->return_handles && *q->args_json)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "return_handles takes its arguments as args (Value messages), not args_json");
  /* cpu | auto | vulkan[:N]: resolved by the graph executor (graph/vulkan/exec_vulkan.c) */
  if (values_path(q, n_extra)) return sv_check_device(*q->device ? q->device : sv->cfg->device, err);
  return SG_OK;
}

sg_code sv_execute(sv_service *sv, sv_call *call, const Stagd__V1__ExecuteRequest *q, Stagd__V1__ExecuteReply *r,
                   gr_program *p, gr_value *const *extra, int n_extra, sg_error *err) {
  sg_code rc = execute_precheck(sv, q, n_extra, err);
  if (rc) return rc;
  const char *device = *q->device ? q->device : sv->cfg->device;
  if (values_path(q, n_extra)) return execute_values(sv, call, q, r, p, device, extra, n_extra, err);
  gr_exec_options opts = {*q->entry ? q->entry : NULL, call->deadline_ns, device, 0, false, call->cancelled,
                          sv->cfg->max_request_bytes, NULL};
  char *result = NULL, *printed = NULL;
  rc = gr_execute_json_with(p, &opts, *q->args_json ? q->args_json : "[]", extra, n_extra, &result,
                                    &printed, err);
  if (rc == SG_OK) {
    r->result_json = sg_arena_strdup(call->arena, result ? result : "null");
    r->output = sg_arena_strdup(call->arena, printed ? printed : "");
  }
  free(result);
  free(printed);
  return rc;
}

static sg_code execute_graph(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                             ProtobufCMessage *reply_, sg_error *err) {
  REQUEST(Stagd__V1__ExecuteRequest, q);
  REPLY(Stagd__V1__ExecuteReply, r);
  sg_code rc = execute_precheck(sv, q, 0, err);
  if (rc) return rc;
  gr_program *p = find_program(sv, q->graph_id, err);
  if (!p) return SG_NOT_FOUND;
  rc = sv_execute(sv, call, q, r, p, NULL, 0, err);
  gr_program_release(p);
  return rc;
}

static sg_code h_execute(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                         ProtobufCMessage *reply_, sg_error *err) {
  REQUEST(Stagd__V1__ExecuteRequest, q);
  REPLY(Stagd__V1__ExecuteReply, r);
  return sv_with_eager_first(sv, call, q->eager_first, &r->eager_first, &r->failed, execute_graph, req_, reply_,
                             err);
}

/* Grad: stages the gradient of a staged def (graph/program/ad_program.c) as a new graph. */
static sg_code h_grad(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                      ProtobufCMessage *reply_, sg_error *err) {
  REQUEST(Stagd__V1__GradRequest, q);
  REPLY(Stagd__V1__GradReply, r);
  gr_program *p = find_program(sv, q->graph_id, err);
  if (!p) return SG_NOT_FOUND;
  gr_program *staged;
  sg_code rc = gr_grad_program(p, *q->entry ? q->entry : NULL, q->wrt, q->n_wrt, q->no_optimize,
                               &staged, err);
  gr_program_release(p);
  if (rc != SG_OK) return rc;
  gr_program *g = gr_cache_put(sv->graphs, staged);
  gr_program_release(staged);
  r->graph_id = sg_arena_strdup(call->arena, gr_program_id(g));
  r->dump = program_dump(call, g, q->dump);
  gr_program_release(g);
  return SG_OK;
}

static sg_code h_dump_graph(sv_service *sv, sv_call *call, const ProtobufCMessage *req_,
                            ProtobufCMessage *reply_, sg_error *err) {
  REQUEST(Stagd__V1__DumpGraphRequest, q);
  REPLY(Stagd__V1__DumpGraphReply, r);
  gr_program *p = find_program(sv, q->graph_id, err);
  if (!p) return SG_NOT_FOUND;
  r->text = program_dump(call, p, q->format);
  gr_program_release(p);
  return SG_OK;
}

/* ----------------------------------------------------------- method table */

#define STAGD_METHOD(Name, lsp, snake, handler)                                             \
  {#Name, "/stagd.v1.Stagd/" #Name, "stagd/" lsp, &stagd__v1__##snake##_request__descriptor, \
   &stagd__v1__##snake##_reply__descriptor, handler}

static const sv_method methods[] = {
    STAGD_METHOD(Parse, "parse", parse, h_parse),
    STAGD_METHOD(Convert, "convert", convert, h_convert),
    STAGD_METHOD(Stage, "stage", stage, h_stage),
    STAGD_METHOD(Execute, "execute", execute, h_execute),
    STAGD_METHOD(Grad, "grad", grad, h_grad),
    STAGD_METHOD(DumpGraph, "dumpGraph", dump_graph, h_dump_graph),
    STAGD_METHOD(ListDevices, "listDevices", list_devices, h_list_devices),
    STAGD_METHOD(Version, "version", version, h_version),
    STAGD_METHOD(Stats, "stats", stats, h_stats),
    STAGD_METHOD(Ping, "ping", ping, h_ping),
    STAGD_METHOD(Put, "put", put, sv_h_put),
    STAGD_METHOD(EagerOp, "eagerOp", eager_op, sv_h_eager_op),
    STAGD_METHOD(EagerBatch, "eagerBatch", eager_batch, sv_h_eager_batch),
    STAGD_METHOD(Fetch, "fetch", fetch, sv_h_fetch),
    STAGD_METHOD(Release, "release", release, sv_h_release),
    STAGD_METHOD(Session, "session", session, sv_h_session),
    {"RunModel", "/stagd.v1.Stagd/RunModel", "stagd/runModel", &stagd__v1__run_model_request__descriptor,
     &stagd__v1__execute_reply__descriptor, sv_h_run_model},
    STAGD_METHOD(ListModels, "listModels", list_models, sv_h_list_models),
    {"Health.Check", "/grpc.health.v1.Health/Check", "stagd/health",
     &grpc__health__v1__health_check_request__descriptor,
     &grpc__health__v1__health_check_response__descriptor, h_health},
};
#undef STAGD_METHOD

size_t sv_method_count(void) { return sizeof methods / sizeof methods[0]; }
const sv_method *sv_method_at(size_t i) { return i < sv_method_count() ? &methods[i] : NULL; }

const sv_method *sv_method_by_grpc_path(const char *path, size_t len) {
  for (size_t i = 0; i < sv_method_count(); i++)
    if (strlen(methods[i].grpc_path) == len && !memcmp(methods[i].grpc_path, path, len)) return &methods[i];
  return NULL;
}

const sv_method *sv_method_by_lsp_name(const char *name) {
  for (size_t i = 0; i < sv_method_count(); i++)
    if (!strcmp(methods[i].lsp_name, name)) return &methods[i];
  return NULL;
}

const sv_method *sv_method_by_name(const char *name) {
  for (size_t i = 0; i < sv_method_count(); i++)
    if (!strcmp(methods[i].name, name)) return &methods[i];
  return NULL;
}

/* ------------------------------------------------------------- lifecycle */

/* The path of the first unix:PATH of --listen, or NULL. */
static const char *first_unix_socket(const sv_config *cfg) {
  for (size_t i = 0; i < cfg->listen.len; i++)
    if (!strncmp(cfg->listen.items[i], "unix:", 5)) return cfg->listen.items[i] + 5;
  return NULL;
}

/* The default directory: in memory (tmpfs: $XDG_RUNTIME_DIR, else /dev/shm) under a name
 * made of the user and the socket's path, else next to the socket. A file system on disk
 * works too, but its dirty-page throttling can stall a large Put for half a second. A
 * candidate that cannot be used (someone else made that name) is skipped with a warning. */
static sv_shm *open_default_shm(const sv_config *cfg, const char *sock, sg_error *err) {
  char name[80];
  snprintf(name, sizeof name, "stagd-%u-%016llx.shm", (unsigned)geteuid(),
           (unsigned long long)sg_hash_bytes(sock, strlen(sock), 0x5a));
  const char *run = getenv("XDG_RUNTIME_DIR");
  char *candidates[3] = {run && *run == '/' ? sg_xasprintf("%s/%s", run, name) : NULL,
                         access("/dev/shm", W_OK | X_OK) == 0 ? sg_xasprintf("/dev/shm/%s", name) : NULL,
                         sg_xasprintf("%s.shm", sock)};
  sv_shm *s = NULL;
  for (int i = 0; i < 3; i++) {
    if (!candidates[i] || s) continue;
    sg_error_clear(err);
    s = sv_shm_open(candidates[i], cfg->max_session_handle_bytes, err);
    if (!s && i < 2) SG_WARN(0, "local data path: %s; trying the next place", err->message);
  }
  for (int i = 0; i < 3; i++) free(candidates[i]);
  return s;
}

sg_code sv_service_start_shm(sv_service *sv, sg_error *err) {
  const sv_config *cfg = sv->cfg;
  const char *sock = first_unix_socket(cfg);
  if (cfg->no_shm || atomic_load(&sv->shm) || !(cfg->shm_dir || sock)) return SG_OK;
  sv_shm *s = cfg->shm_dir ? sv_shm_open(cfg->shm_dir, cfg->max_session_handle_bytes, err)
                           : open_default_shm(cfg, sock, err);
  if (!s) return err->code;
  SG_INFO(0, "local data path: %s", sv_shm_dir(s));
  atomic_store(&sv->shm, s);
  return SG_OK;
}

sv_service *sv_service_create(const sv_config *cfg, sg_error *err) {
  /* An explicitly named device must exist; `auto` falls back to the CPU. */
#ifdef STAGD_HAVE_VULKAN
  /* Devices start on first use: `auto` and `cpu` touch no Vulkan here (the executor
   * resolves `auto` on the first request that runs, graph/vulkan); a named device is
   * checked now, so a daemon configured with a device it cannot have fails at start. */
  if (strcmp(cfg->device, "auto") != 0 && strcmp(cfg->device, "cpu") != 0) {
    int vk_index;
    if (kn_vk_choose_device(cfg->device, &vk_index, err) != SG_OK) return NULL;
    if (vk_index >= 0) SG_INFO(0, "default device: vulkan:%d", vk_index);
  }
#else
  if (strcmp(cfg->device, "auto") != 0 && strcmp(cfg->device, "cpu") != 0) {
    sg_error_set(err, SG_UNAVAILABLE, "--device %s: this stagd was built without Vulkan", cfg->device);
    return NULL;
  }
#endif
  sv_service *sv = sg_xcalloc(1, sizeof *sv);
  sv->cfg = cfg;
  sv->started_ms = sg_wall_ms();
  atomic_store(&sv->next_id, 1);
  sv->stats = sg_xcalloc(sv_method_count(), sizeof *sv->stats);
  sv->graphs = gr_cache_new(GRAPH_CACHE_CAPACITY);
  sv->handles = sv_handles_new(cfg->max_handle_bytes, cfg->max_handles, cfg->max_session_handle_bytes);
  sv->admission = sv_admission_new(cfg->max_session_requests, cfg->max_unnamed_requests);
  sv->session_memory = sv_session_memory_new(cfg->max_session_bytes);
  if ((cfg->auth_token_file && !(sv->auth = sv_auth_load(cfg->auth_token_file, err))) ||
      (cfg->models_dir && !(sv->models = sv_models_open(cfg->models_dir, cfg->models_poll_ms, err)))) {
    sv_service_destroy(sv);
    return NULL;
  }
  return sv;
}

void sv_service_destroy(sv_service *sv) {
  if (!sv) return;
  sv_models_close(sv->models);
  free(sv->stats);
  gr_cache_free(sv->graphs);
  sv_handles_free(sv->handles);
  sv_auth_free(sv->auth);
  sv_admission_free(sv->admission);
  sv_shm_close(atomic_load(&sv->shm));
  sv_session_memory_free(sv->session_memory);
  free(sv);
}

sv_auth *sv_service_auth(sv_service *sv) { return sv->auth; }

const sv_config *sv_service_config(const sv_service *sv) { return sv->cfg; }

const sv_method_metrics *sv_service_method_metrics(sv_service *sv, size_t i) { return &sv->stats[i].m; }

void sv_service_gauges_get(sv_service *sv, sv_service_gauges *out) {
  memset(out, 0, sizeof *out);
  out->in_flight = atomic_load(&sv->in_flight);
  out->graphs_cached = gr_cache_size(sv->graphs);
  out->graph_hits = atomic_load(&sv->graph_hits);
  out->graph_misses = atomic_load(&sv->graph_misses);
  out->started_ms = sv->started_ms;
  sv_models_counts(sv->models, &out->models, &out->model_versions, &out->model_loads, &out->model_load_errors);
}

sv_models *sv_service_models(sv_service *sv) { return sv->models; }
sv_handles *sv_service_handles(sv_service *sv) { return sv->handles; }
sv_admission *sv_service_admission(sv_service *sv) { return sv->admission; }
sv_shm *sv_service_shm(sv_service *sv) { return atomic_load(&sv->shm); }
uint64_t sv_service_next_id(sv_service *sv) { return atomic_fetch_add(&sv->next_id, 1); }
void sv_service_set_draining(sv_service *sv) { atomic_store(&sv->draining, true); }

/* --------------------------------------------------------------- invoking */

void sv_service_expire_sessions(sv_service *sv) {
  uint64_t lease = sv->cfg->handle_lease_ms;
  if (!lease) return;
  sv_shm_sweep_older(atomic_load(&sv->shm), lease); /* files of clients that died between a call and its read */
  int sessions = 0;
  uint64_t n = sv_handles_expire(sv->handles, sg_now_ns(), lease * 1000000ULL, &sessions);
  if (sessions)
    SG_INFO(0, "%d client session(s) not renewed for %llu ms (client gone): %llu handles released", sessions,
            (unsigned long long)lease, (unsigned long long)n);
}

sg_code sv_service_invoke(sv_service *sv, const sv_method *m, sv_call *call,
                          const ProtobufCMessage *req, ProtobufCMessage **reply, sg_error *err) {
  uint64_t t0 = sg_now_ns();
  ProtobufCMessage *r = sg_arena_alloc(call->arena, m->output->sizeof_message);
  m->output->message_init(r);
  *reply = r;
  if (sv->cfg->deadline_ms) {
    uint64_t cap = t0 + sv->cfg->deadline_ms * 1000000ULL;
    if (!call->deadline_ns || call->deadline_ns > cap) call->deadline_ns = cap;
  }
  call->shm = call->local ? atomic_load(&sv->shm) : NULL;
  atomic_fetch_add(&sv->in_flight, 1);
  atomic_fetch_add(&sv->requests_total, 1);
  sg_code rc;
  if (call->session && !sv_session_name_ok(call->session, err)) {
    rc = err->code;
  } else if (call->deadline_ns && t0 >= call->deadline_ns) {
    rc = sg_error_set(err, SG_DEADLINE_EXCEEDED, "deadline exceeded before %s started", m->name);
  } else if (call->cancelled && atomic_load(call->cancelled)) {
    rc = sg_error_set(err, SG_CANCELLED, "%s cancelled by the client before it started", m->name);
  } else {
    sv_owner who = sv_call_owner(call);
    sv_handles_touch(sv->handles, &who, t0);
    /* the converter, staging and the executors below poll it (common/watch.c) */
    sg_watch w = {.deadline_ns = call->deadline_ns, .cancel = call->cancelled};
    /* and charge the session's budget (--max-session-bytes), its handles' bytes first */
    if ((w.share = sv_session_memory_enter(sv->session_memory, &who)))
      w.share_base = sv_handles_session_bytes(sv->handles, &who);
    sg_watch *prev = sg_watch_enter(&w);
    rc = m->handler(sv, call, req, r, err);
    sg_watch_leave(prev);
    sv_session_memory_leave(sv->session_memory, w.share);
    if (rc != SG_OK && (!err || !err->message)) sg_error_set(err, rc, "%s failed", m->name);
  }
  uint64_t dt = sg_now_ns() - t0;
  method_stats *st = &sv->stats[m - methods];
  atomic_fetch_add(&st->calls, 1);
  atomic_fetch_add(&st->total_ns, dt);
  sv_method_metrics_observe(&st->m, rc, dt);
  if (rc != SG_OK) {
    atomic_fetch_add(&st->errors, 1);
    atomic_fetch_add(&sv->errors_total, 1);
    char *msg = err ? sg_error_format(err) : NULL;
    sg_log_request lr = {m->name, sg_code_name(rc), call->session, dt};
    sg_log_req(SG_LOG_INFO, call->id, &lr, "%s", msg ? msg : "");
    free(msg);
  } else {
    sg_log_request lr = {m->name, "OK", call->session, dt};
    sg_log_req(SG_LOG_DEBUG, call->id, &lr, "%s", "");
  }
  atomic_fetch_sub(&sv->in_flight, 1);
  return rc;
}

sg_code sv_service_invoke_bytes(sv_service *sv, const sv_method *m, sv_call *call,
                                const uint8_t *data, size_t len, sg_buf *out, sg_error *err) {
  if (len > sv->cfg->max_message_bytes)
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED, "request of %zu bytes exceeds the limit of %llu bytes (max-message-bytes)",
                        len, (unsigned long long)sv->cfg->max_message_bytes);
  char why[256];
  if (!sv_wire_check(m->input, data, len, why, sizeof why))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "request to %s: %s", m->name, why);
  ProtobufCAllocator alloc = sv_arena_allocator(call->arena);
  ProtobufCMessage *req = protobuf_c_message_unpack(m->input, &alloc, len, data);
  if (!req)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "request to %s is not a valid %s protobuf message (%zu bytes)",
                        m->name, m->input->name, len);
  ProtobufCMessage *reply;
  sg_code rc = sv_service_invoke(sv, m, call, req, &reply, err);
  if (rc != SG_OK) return rc;
  size_t n = protobuf_c_message_get_packed_size(reply);
  sg_buf_reserve(out, n);
  out->len += protobuf_c_message_pack(reply, (uint8_t *)out->data + out->len);
  out->data[out->len] = '\0';
  return SG_OK;
}

sg_code sv_service_invoke_json(sv_service *sv, const sv_method *m, sv_call *call,
                               const cJSON *params, cJSON **reply_json, sg_error *err) {
  *reply_json = NULL;
  ProtobufCMessage *req;
  sg_code rc = sv_pbjson_decode(m->input, params, call->arena, &req, err);
  if (rc != SG_OK) return rc;
  ProtobufCMessage *reply;
  rc = sv_service_invoke(sv, m, call, req, &reply, err);
  if (rc != SG_OK) return rc;
  *reply_json = sv_pbjson_encode(reply);
  return SG_OK;
}

char *sv_error_details(const sg_error *err) {
  sg_buf b = SG_BUF_INIT;
  if (err->file) sg_buf_printf(&b, "%s:", err->file);
  if (err->line > 0) sg_buf_printf(&b, "%d:", err->line);
  if (err->line > 0 && err->col > 0) sg_buf_printf(&b, "%d:", err->col);
  if (b.len) sg_buf_putc(&b, ' ');
  sg_buf_puts(&b, err->message ? err->message : sg_code_name(err->code));
  return sg_buf_detach(&b, NULL);
}
