// SPDX-License-Identifier: Apache-2.0
/*
 * metrics.c — the daemon's metrics in the Prometheus text exposition format (0.0.4),
 * rendered fresh for each scrape from the counters the service keeps anyway: requests
 * by method and status code, latency histograms, requests in flight, sessions, tensor
 * handles and their bytes per device, the graph cache, the Vulkan executor's traffic,
 * CPU fallbacks, exported models and the process's memory and CPU time. Every name
 * starts with stagd_; docs/daemon.md "Metrics" lists them.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "eager.h"
#include "gr.h"
#include "metrics.h"

/* STAGD_VERSION and STAGD_BUILD come from the build (CMakeLists.txt, server/). */
const double sv_latency_bounds[SV_LATENCY_BUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                      0.1,    0.25,  0.5,    1,     2.5,  5,     10};

void sv_method_metrics_observe(sv_method_metrics *m, sg_code rc, uint64_t ns) {
  int code = (int)rc >= 0 && (int)rc < SV_CODES ? (int)rc : SG_UNKNOWN;
  atomic_fetch_add(&m->codes[code], 1);
  atomic_fetch_add(&m->total_ns, ns);
  double s = ns / 1e9;
  int b = 0;
  while (b < SV_LATENCY_BUCKETS && s > sv_latency_bounds[b]) b++;
  atomic_fetch_add(&m->buckets[b], 1);
}

static void family(sg_buf *out, const char *name, const char *type, const char *help) {
  sg_buf_printf(out, "# HELP stagd_%s %s\n# TYPE stagd_%s %s\n", name, help, name, type);
}

static void sample(sg_buf *out, const char *name, const char *labels, double v) {
  sg_buf_printf(out, "stagd_%s%s%s%s %.17g\n", name, labels ? "{" : "", labels ? labels : "",
                labels ? "}" : "", v);
}

static void one(sg_buf *out, const char *name, const char *type, const char *help, double v) {
  family(out, name, type, help);
  sample(out, name, NULL, v);
}

static void requests(sv_service *sv, sg_buf *out) {
  size_t n = sv_method_count();
  char labels[160];
  family(out, "requests_total", "counter", "Requests finished, by method and gRPC status code.");
  for (size_t i = 0; i < n; i++) {
    const sv_method_metrics *m = sv_service_method_metrics(sv, i);
    for (int c = 0; c < SV_CODES; c++) {
      uint64_t v = atomic_load(&m->codes[c]);
      if (!v && c != SG_OK) continue; /* every method's OK series exists from the start */
      snprintf(labels, sizeof labels, "method=\"%s\",code=\"%s\"", sv_method_at(i)->name,
               sg_code_name((sg_code)c));
      sample(out, "requests_total", labels, (double)v);
    }
  }
  family(out, "request_duration_seconds", "histogram",
         "Time from a request's decoding to its reply, by method.");
  for (size_t i = 0; i < n; i++) {
    const sv_method_metrics *m = sv_service_method_metrics(sv, i);
    const char *name = sv_method_at(i)->name;
    uint64_t cum = 0;
    for (int b = 0; b <= SV_LATENCY_BUCKETS; b++) {
      cum += atomic_load(&m->buckets[b]);
      if (b < SV_LATENCY_BUCKETS)
        snprintf(labels, sizeof labels, "method=\"%s\",le=\"%g\"", name, sv_latency_bounds[b]);
      else
        snprintf(labels, sizeof labels, "method=\"%s\",le=\"+Inf\"", name);
      sample(out, "request_duration_seconds_bucket", labels, (double)cum);
    }
    snprintf(labels, sizeof labels, "method=\"%s\"", name);
    sample(out, "request_duration_seconds_sum", labels, atomic_load(&m->total_ns) / 1e9);
    sample(out, "request_duration_seconds_count", labels, (double)cum);
  }
}

static void handles(sv_service *sv, sg_buf *out) {
  sv_handles *h = sv_service_handles(sv);
  int live = 0;
  uint64_t expired = 0;
  sv_handles_session_count(h, NULL, &live, &expired);
  one(out, "sessions", "gauge", "Client sessions holding or renewing tensor handles.", live);
  one(out, "session_handles_expired_total", "counter",
      "Handles released because their session's lease ran out (the client went away).", (double)expired);
  char dev[64], labels[96];
  uint64_t count, bytes;
  family(out, "handles", "gauge", "Live tensor handles, by device.");
  for (int i = 0; sv_handles_device_stats(h, i, dev, sizeof dev, &count, &bytes); i++) {
    snprintf(labels, sizeof labels, "device=\"%s\"", dev);
    sample(out, "handles", labels, (double)count);
  }
  family(out, "handle_bytes", "gauge", "Tensor bytes held by live handles, by device.");
  for (int i = 0; sv_handles_device_stats(h, i, dev, sizeof dev, &count, &bytes); i++) {
    snprintf(labels, sizeof labels, "device=\"%s\"", dev);
    sample(out, "handle_bytes", labels, (double)bytes);
  }
}

static void devices(sg_buf *out) {
  gr_device_stats d;
  gr_device_stats_get(&d);
  one(out, "vulkan_requests_total", "counter", "Executions that ran on a Vulkan device.", (double)d.requests);
  one(out, "vulkan_submissions_total", "counter", "Vulkan command buffers submitted.", (double)d.submits);
  one(out, "vulkan_dispatches_total", "counter", "Vulkan compute kernels dispatched.", (double)d.dispatches);
  one(out, "vulkan_uploads_total", "counter", "Host-to-device tensor copies.", (double)d.uploads);
  one(out, "vulkan_downloads_total", "counter", "Device-to-host tensor copies.", (double)d.downloads);
  one(out, "vulkan_upload_bytes_total", "counter", "Bytes copied from host to device.", (double)d.upload_bytes);
  one(out, "vulkan_download_bytes_total", "counter", "Bytes copied from device to host.",
      (double)d.download_bytes);
  one(out, "vulkan_resident_bytes", "gauge", "Device memory held by resident tensors.", (double)d.resident_bytes);
  one(out, "cpu_fallbacks_total", "counter",
      "Primitives of Vulkan executions that ran on the CPU (no Vulkan kernel for them).",
      (double)d.cpu_fallbacks);
  one(out, "fused_chains_total", "counter",
      "Chains of elementwise ops run on the CPU as one pass (one kernel, no intermediate tensors).",
      (double)d.cpu_fused);
  one(out, "fused_in_place_total", "counter",
      "Of those, chains that wrote their output over a temporary read for the last time (a matmul's "
      "result: its epilogue), allocating no tensor.",
      (double)d.cpu_fused_in_place);
  one(out, "vulkan_fused_chains_total", "counter",
      "Chains of elementwise ops run on a Vulkan device as one generated kernel.", (double)d.vulkan_fused);
  one(out, "vulkan_epilogues_total", "counter",
      "Of those, chains run in a float32 matmul's or reduction's kernel as its epilogue (no kernel of their own).",
      (double)d.vulkan_epilogues);
}

/* Resident set size and CPU seconds of this process, from /proc/self. */
static void process(sg_buf *out, uint64_t started_ms) {
  long page = sysconf(_SC_PAGESIZE);
  unsigned long long size = 0, rss = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%llu %llu", &size, &rss) != 2) rss = 0;
    fclose(f);
  }
  one(out, "process_resident_memory_bytes", "gauge", "Resident memory of the stagd process.",
      (double)rss * (double)page);
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  one(out, "process_cpu_seconds_total", "counter", "CPU time the stagd process used (user and system).",
      ts.tv_sec + ts.tv_nsec / 1e9);
  one(out, "process_start_time_seconds", "gauge", "When the daemon started, in seconds since the epoch.",
      started_ms / 1e3);
}

void sv_metrics_render(sv_service *sv, sg_buf *out) {
  sv_service_gauges g;
  sv_service_gauges_get(sv, &g);
  family(out, "build_info", "gauge", "The daemon's version and build (always 1).");
  sample(out, "build_info", "version=\"" STAGD_VERSION "\",build=\"" STAGD_BUILD "\"", 1);
  requests(sv, out);
  one(out, "requests_in_flight", "gauge", "Requests being handled now.", (double)g.in_flight);
  handles(sv, out);
  one(out, "graph_cache_programs", "gauge", "Staged programs in the graph cache.", (double)g.graphs_cached);
  one(out, "graph_cache_hits_total", "counter",
      "Stage, Execute, Grad and DumpGraph calls that found their program cached.", (double)g.graph_hits);
  one(out, "graph_cache_misses_total", "counter",
      "Stage calls that staged a new program, and lookups of programs not cached.", (double)g.graph_misses);
  devices(out);
  one(out, "models", "gauge", "Exported models served from --models.", (double)g.models);
  one(out, "model_versions", "gauge", "Versions of exported models loaded from --models.",
      (double)g.model_versions);
  one(out, "model_loads_total", "counter", "Model versions loaded since start.", (double)g.model_loads);
  one(out, "model_load_errors_total", "counter", "Model versions that failed to load (logged).",
      (double)g.model_load_errors);
  process(out, g.started_ms);
}
