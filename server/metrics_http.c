// SPDX-License-Identifier: Apache-2.0
/*
 * metrics_http.c — the --metrics-listen endpoint: GET /metrics answers the Prometheus
 * exposition (metrics.c). HTTP is libmicrohttpd's (Debian's libmicrohttpd12): its own
 * polling thread parses requests, so the daemon's loop and workers never see them.
 * Other paths are 404, other methods 405; a scrape holds no lock the service needs.
 *
 * Security (docs/security.md "Metrics"): with --auth-token-file a scrape must carry
 * `Authorization: Bearer TOKEN` with one of the daemon's tokens (the same check as
 * gRPC's), else 401 with `WWW-Authenticate: Bearer`; without tokens a non-loopback
 * address is refused at start unless --insecure.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "auth.h"
#include "metrics.h"
#include "transport.h"

struct sv_metrics_http {
  struct MHD_Daemon *mhd;
  sv_service *sv;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, char *body, size_t len,
                             const char *type) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (status == MHD_HTTP_UNAUTHORIZED) MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"stagd\"");
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  enum MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg) {
  char *body = sg_xstrdup(msg);
  return reply(c, status, body, strlen(body), "text/plain; charset=utf-8");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **req_cls) {
  sv_metrics_http *h = cls;
  (void)version;
  (void)upload_data;
  if (!*req_cls) { /* the headers: wait for the (empty) body before answering */
    *req_cls = h;
    return MHD_YES;
  }
  if (*upload_data_size) { /* a body on a GET: read and drop it */
    *upload_data_size = 0;
    return MHD_YES;
  }
  sv_auth *auth = sv_service_auth(h->sv);
  if (auth) { /* before anything else, the path included */
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    uint64_t principal;
    if (!v || !sv_auth_check_bearer(auth, v, strlen(v), &principal))
      return text(c, MHD_HTTP_UNAUTHORIZED,
                  "this daemon requires a bearer token: send 'Authorization: Bearer TOKEN' with a token "
                  "from its --auth-token-file (Prometheus: authorization.credentials_file)\n");
  }
  if (strcmp(url, "/metrics") != 0)
    return text(c, MHD_HTTP_NOT_FOUND, "stagd serves its metrics at /metrics\n");
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
    return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
  sg_buf b = SG_BUF_INIT;
  sv_metrics_render(h->sv, &b);
  size_t len = b.len;
  char *body = sg_buf_detach(&b, NULL);
  return reply(c, MHD_HTTP_OK, body, len, "text/plain; version=0.0.4; charset=utf-8");
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  msg[strcspn(msg, "\n")] = '\0';
  SG_WARN(0, "metrics endpoint: %s", msg);
}

/* host:port or [v6]:port → an address to bind; false with err set. */
static bool resolve(const char *addr, struct sockaddr_storage *out, socklen_t *len, sg_error *err) {
  const char *colon = strrchr(addr, ':');
  if (!colon || !colon[1]) {
    sg_error_set(err, SG_INVALID_ARGUMENT, "--metrics-listen expects host:port, got '%s'", addr);
    return false;
  }
  char host[256];
  size_t hn = (size_t)(colon - addr);
  if (hn >= sizeof host) hn = sizeof host - 1;
  memcpy(host, addr, hn);
  host[hn] = '\0';
  char *h = host;
  if (*h == '[' && hn >= 2 && h[hn - 1] == ']') {
    h[hn - 1] = '\0';
    h++;
  }
  for (const char *p = colon + 1; *p; p++)
    if (*p < '0' || *p > '9') {
      sg_error_set(err, SG_INVALID_ARGUMENT, "--metrics-listen: port '%s' is not a number", colon + 1);
      return false;
    }
  struct addrinfo hints = {0}, *res = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  int rc = getaddrinfo(*h ? h : NULL, colon + 1, &hints, &res);
  if (rc != 0 || !res) {
    sg_error_set(err, SG_INVALID_ARGUMENT, "--metrics-listen %s: %s", addr, gai_strerror(rc));
    return false;
  }
  memcpy(out, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return true;
}

sv_metrics_http *sv_metrics_http_start(sv_service *sv, const char *addr, sg_error *err) {
  struct sockaddr_storage sa;
  socklen_t salen;
  if (!resolve(addr, &sa, &salen, err)) return NULL;
  /* plain HTTP: tokens protect it, else loopback only */
  if (!sv_service_auth(sv) && !sv_service_config(sv)->insecure && !sv_addr_is_local(addr)) {
    sg_error_set(err, SG_INVALID_ARGUMENT,
                 "--metrics-listen %s is reachable from other machines: require tokens there with "
                 "--auth-token-file FILE, bind it to a loopback address, or pass --insecure to serve it "
                 "unprotected on a network you trust (docs/security.md)",
                 addr);
    return NULL;
  }
  sv_metrics_http *h = sg_xcalloc(1, sizeof *h);
  h->sv = sv;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
  if (sa.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
  /* the logger first, so every message of MHD's goes through it */
  h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
  if (!h->mhd) {
    free(h);
    sg_error_set(err, SG_UNAVAILABLE, "--metrics-listen %s: cannot listen there (address in use or not local?)",
                 addr);
    return NULL;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
  char host[INET6_ADDRSTRLEN] = "";
  if (sa.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, host, sizeof host);
  else
    inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, host, sizeof host);
  SG_INFO(0, "serving metrics on http://%s%s%s:%u/metrics", sa.ss_family == AF_INET6 ? "[" : "", host,
          sa.ss_family == AF_INET6 ? "]" : "", info ? (unsigned)info->port : 0u);
  return h;
}

void sv_metrics_http_stop(sv_metrics_http *h) {
  if (!h) return;
  MHD_stop_daemon(h->mhd);
  free(h);
}
