// SPDX-License-Identifier: Apache-2.0
/*
 * metrics.h — private to server/: what the Prometheus endpoint (--metrics-listen)
 * reads and how it serves it (docs/daemon.md "Metrics").
 *
 *   service.c       counts every request in an sv_method_metrics (by status code, and
 *                   a latency histogram) and reports its gauges (sv_service_gauges)
 *   metrics.c       renders everything in the Prometheus text format (version 0.0.4)
 *   metrics_http.c  serves GET /metrics through libmicrohttpd on its own thread
 */
#ifndef STAGD_SERVER_METRICS_H
#define STAGD_SERVER_METRICS_H

#include <stdatomic.h>

#include "sv.h"

/* Upper bounds (seconds) of the latency histogram's buckets; +Inf comes after. */
enum { SV_LATENCY_BUCKETS = 14, SV_CODES = SG_UNAVAILABLE + 1 };
extern const double sv_latency_bounds[SV_LATENCY_BUCKETS];

/* One method's counts since start; updated with atomics from any worker. */
typedef struct sv_method_metrics {
  _Atomic uint64_t codes[SV_CODES];                /* requests finished, by sg_code */
  _Atomic uint64_t buckets[SV_LATENCY_BUCKETS + 1]; /* not cumulative; the last is +Inf */
  _Atomic uint64_t total_ns;
} sv_method_metrics;

void sv_method_metrics_observe(sv_method_metrics *m, sg_code rc, uint64_t ns);

/* The service's state now (service.c fills it). */
typedef struct sv_service_gauges {
  uint64_t in_flight;
  uint64_t graphs_cached, graph_hits, graph_misses;
  uint64_t started_ms;
  uint64_t models, model_versions; /* loaded from --models */
  uint64_t model_loads, model_load_errors;
} sv_service_gauges;
void sv_service_gauges_get(sv_service *sv, sv_service_gauges *out);
/* The metrics of method-table row i. */
const sv_method_metrics *sv_service_method_metrics(sv_service *sv, size_t i);

/* The whole exposition, every metric prefixed stagd_, appended to out. */
void sv_metrics_render(sv_service *sv, sg_buf *out);

typedef struct sv_metrics_http sv_metrics_http;
/* Serves GET /metrics on addr (host:port; port 0 picks one, logged as "serving metrics
 * on http://HOST:PORT/metrics"). NULL with err set when it cannot listen. */
sv_metrics_http *sv_metrics_http_start(sv_service *sv, const char *addr, sg_error *err);
/* Stops listening and joins the server's thread; NULL is ignored. */
void sv_metrics_http_stop(sv_metrics_http *h);

#endif /* STAGD_SERVER_METRICS_H */
