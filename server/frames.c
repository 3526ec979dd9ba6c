// SPDX-License-Identifier: Apache-2.0
/*
 * frames.c — the framed transport: the Stagd service's protobuf requests in
 * length-prefixed frames on a unix socket beside each unix --listen socket
 * (`PATH.frames`, mode 0600). A local client's call costs a write and a read on each
 * side instead of gRPC's HTTP/2 machinery (docs/api.md "The framed transport" has the
 * byte layout; docs/performance.md the figures).
 *
 * One thread runs an epoll loop: it accepts, reads, cuts frames and dispatches them
 * exactly as grpc.c does — bearer token (sv_auth_check), the admin lane on this thread
 * (sv_admin_lane), every other call through admission (sv_admission_enter) to the
 * worker pool. The worker that ran a call writes its reply itself (no hop back); what
 * the socket does not take at once waits in the connection's output queue, which this
 * thread flushes. Replies carry the request's id and may come out of order.
 *
 * Limits: a frame may be --max-message-bytes plus 64 KiB of header; a larger one is
 * answered RESOURCE_EXHAUSTED and its bytes skipped, so the connection goes on. A
 * malformed header is answered INVALID_ARGUMENT (with the frame's id). A connection
 * may have 256 requests in flight; past that, RESOURCE_EXHAUSTED. While 8 MiB of its
 * replies wait unread, no more of its requests are read (a client that never reads
 * cannot grow the daemon's memory). At most 1,024 connections.
 *
 * A connection whose peer closes (or shuts down its writing side) cancels its calls
 * in flight (sv_call.cancelled); their replies are dropped. Shutdown: stop accepting,
 * answer new frames UNAVAILABLE, let calls in flight finish and their replies go out,
 * then close; cancel_all (the shutdown timeout) cancels what still runs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "transport.h"

enum {
  FRAME_HEADER_SLACK = 64 * 1024,
  CONN_MAX_INFLIGHT = 256,
  CONN_OUT_HIGH = 8 * 1024 * 1024,
  MAX_CONNS = 1024,
  READ_CHUNK = 64 * 1024,
  /* u32 length, u32 id, u32 timeout_ms, u8 method length, u8 session length, u16 token length */
  REQ_FIXED = 4 + 4 + 4 + 1 + 1 + 2,
};

typedef enum fkind { K_WAKE, K_LISTENER, K_CONN } fkind;

typedef struct flistener {
  fkind kind;
  int fd;
  char *path; /* the socket file, unlinked at shutdown */
  char *peer; /* "unix:PATH": admission's bucket for calls without a session */
} flistener;

typedef struct fconn {
  fkind kind;
  struct sv_frames *f;
  int fd;
  const char *peer;
  /* the loop thread's alone */
  uint8_t *in;
  size_t in_len, in_cap;
  uint64_t skip;  /* bytes of an oversized frame still to discard */
  bool loop_done; /* removed from the loop (its reference dropped) */
  /* under mu */
  pthread_mutex_t mu;
  sg_buf out; /* reply bytes the socket has not taken yet, from out_off */
  size_t out_off;
  uint32_t armed; /* the epoll events asked for */
  atomic_bool gone; /* the peer went away, or cancel_all: the calls' `cancelled` */
  atomic_int refs;  /* the loop's, and one per call in flight */
  atomic_int inflight;
  struct fconn *prev, *next; /* f->conns, under f->mu */
} fconn;

typedef struct fcall {
  fconn *c;
  const sv_method *m;
  uint32_t id;
  uint64_t deadline_ns;
  uint64_t principal;
  char *session; /* NULL: none */
  uint8_t *frame; /* owns the bytes body points into */
  const uint8_t *body;
  size_t body_len;
  bool admin; /* on the admin lane: run on the loop thread */
  char *admitted;
} fcall;

struct sv_frames {
  sv_service *sv;
  sv_pool *pool;
  int ep;
  fkind wake_kind; /* the eventfd's epoll tag */
  int wake;
  flistener *listeners;
  size_t n_listeners;
  bool listeners_closed;
  uint64_t max_frame;
  pthread_t thread;
  bool thread_started;
  pthread_mutex_t mu; /* conns */
  fconn *conns;
  atomic_int n_conns;
  atomic_bool shutting_down;
  atomic_bool cancelling;
  void (*on_stopped)(void *);
  void *ud;
};

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static void wr32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static void wake_loop(sv_frames *f) {
  uint64_t one = 1;
  ssize_t r = write(f->wake, &one, sizeof one);
  (void)r; /* a full counter still wakes the loop */
}

/* ------------------------------------------------------------ connections */

/* The events a connection asks for: always the peer's hang-up; input unless its
 * unread replies passed CONN_OUT_HIGH; output while replies wait. Under c->mu. */
static void conn_arm(fconn *c) {
  size_t pending = c->out.len - c->out_off;
  uint32_t ev = EPOLLRDHUP | (pending < CONN_OUT_HIGH ? EPOLLIN : 0) | (pending ? EPOLLOUT : 0);
  if (ev == c->armed || c->loop_done) return;
  struct epoll_event e = {.events = ev, .data.ptr = c};
  if (epoll_ctl(c->f->ep, EPOLL_CTL_MOD, c->fd, &e) == 0) c->armed = ev;
}

static void conn_deref(fconn *c) {
  if (atomic_fetch_sub(&c->refs, 1) != 1) return;
  sv_frames *f = c->f;
  pthread_mutex_lock(&f->mu);
  if (c->prev) c->prev->next = c->next;
  else f->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  pthread_mutex_unlock(&f->mu);
  close(c->fd);
  free(c->in);
  sg_buf_free(&c->out);
  pthread_mutex_destroy(&c->mu);
  free(c);
  /* the wake first: once the count is 0 the loop may end and f be freed, so the count
   * is the last thing touched (a loop woken too early looks again within 50 ms) */
  if (atomic_load(&f->shutting_down)) wake_loop(f);
  atomic_fetch_sub(&f->n_conns, 1);
}

/* Loop thread: the connection leaves the loop; its calls in flight are cancelled and
 * it is freed when the last of them ends. */
static void conn_drop(fconn *c) {
  if (c->loop_done) return;
  atomic_store(&c->gone, true);
  pthread_mutex_lock(&c->mu);
  c->loop_done = true;
  epoll_ctl(c->f->ep, EPOLL_CTL_DEL, c->fd, NULL);
  pthread_mutex_unlock(&c->mu);
  conn_deref(c);
}

/* Writes as much of the queued output as the socket takes. Under c->mu. */
static void conn_flush_locked(fconn *c) {
  while (c->out_off < c->out.len) {
    ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c->out_off += (size_t)n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) atomic_store(&c->gone, true);
      break;
    }
  }
  if (c->out_off == c->out.len) {
    sg_buf_clear(&c->out);
    c->out_off = 0;
  } else if (c->out_off > (1u << 20) && c->out_off * 2 > c->out.len) {
    memmove(c->out.data, c->out.data + c->out_off, c->out.len - c->out_off);
    c->out.len -= c->out_off;
    c->out_off = 0;
  }
  conn_arm(c);
}

/* Sends one reply made of iov pieces: straight to the socket when nothing waits
 * before it, the rest queued for the loop to flush. Any thread. */
static void conn_send(fconn *c, struct iovec *iov, int n_iov) {
  pthread_mutex_lock(&c->mu);
  if (atomic_load(&c->gone) || c->loop_done) {
    pthread_mutex_unlock(&c->mu);
    return;
  }
  size_t sent = 0;
  if (c->out.len == c->out_off) {
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n_iov};
    ssize_t n;
    do n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      atomic_store(&c->gone, true); /* the loop sees the hang-up */
      pthread_mutex_unlock(&c->mu);
      return;
    }
    sent = n > 0 ? (size_t)n : 0;
  }
  for (int i = 0; i < n_iov; i++) {
    size_t len = iov[i].iov_len;
    if (sent >= len) {
      sent -= len;
      continue;
    }
    sg_buf_append(&c->out, (const uint8_t *)iov[i].iov_base + sent, len - sent);
    sent = 0;
  }
  conn_arm(c);
  pthread_mutex_unlock(&c->mu);
}

/* A reply frame: u32 length, u32 id, u8 status (gRPC's codes), u8 reason length,
 * reason, u32 details length, details, then the reply message's bytes. */
static void send_reply(fconn *c, uint32_t id, sg_code code, const sg_error *err, const uint8_t *body, size_t body_len) {
  if (body_len > UINT32_MAX - FRAME_HEADER_SLACK) { /* a length a frame cannot say: never a cut reply */
    sg_error big = SG_ERROR_INIT;
    sg_error_set(&big, SG_RESOURCE_EXHAUSTED,
                 "the reply is %zu bytes, more than a frame carries (4 GiB): fetch the tensor through the local data "
                 "path (shm) or over gRPC",
                 body_len);
    send_reply(c, id, big.code, &big, NULL, 0);
    sg_error_clear(&big);
    return;
  }
  char *details = code == SG_OK ? NULL : sv_error_details(err);
  const char *reason = code != SG_OK && err->reason ? sg_reason_name(err->reason) : "";
  size_t rlen = strlen(reason), dlen = details ? strlen(details) : 0;
  uint8_t head[4 + 4 + 1 + 1 + 255 + 4];
  size_t h = 0;
  h += 4; /* the length, below */
  wr32(head + h, id);
  h += 4;
  head[h++] = (uint8_t)code;
  head[h++] = (uint8_t)rlen;
  memcpy(head + h, reason, rlen);
  h += rlen;
  wr32(head + h, (uint32_t)dlen);
  h += 4;
  wr32(head, (uint32_t)(h - 4 + dlen + body_len));
  struct iovec iov[3] = {{head, h}, {details, dlen}, {(void *)body, body_len}};
  conn_send(c, iov, 3);
  free(details);
}

static void send_error(fconn *c, uint32_t id, sg_code code, const char *fmt, ...) SG_PRINTF(4, 5);
static void send_error(fconn *c, uint32_t id, sg_code code, const char *fmt, ...) {
  sg_error err = SG_ERROR_INIT;
  va_list ap;
  va_start(ap, fmt);
  sg_error_setv(&err, code, fmt, ap);
  va_end(ap);
  send_reply(c, id, code, &err, NULL, 0);
  sg_error_clear(&err);
}

/* ------------------------------------------------------------------ calls */

static void call_free(fcall *fc) {
  free(fc->frame);
  free(fc->session);
  free(fc);
}

/* On a worker (the admin lane's calls: on the loop thread): runs the call, writes its
 * reply. */
static void run_call(void *arg) {
  fcall *fc = arg;
  fconn *c = fc->c;
  sv_frames *f = c->f;
  sg_arena arena;
  sg_arena_init(&arena, 16 * 1024);
  sv_call call = {.id = sv_service_next_id(f->sv), .arena = &arena, .deadline_ns = fc->deadline_ns,
                  .cancelled = &c->gone, .session = fc->session, .principal = fc->principal, .local = true};
  sg_error err = SG_ERROR_INIT;
  sg_buf out = SG_BUF_INIT;
  sg_code rc = sv_service_invoke_bytes(f->sv, fc->m, &call, fc->body, fc->body_len, &out, &err);
  sv_admission_leave(sv_service_admission(f->sv), fc->admitted);
  send_reply(c, fc->id, rc, &err, (const uint8_t *)out.data, rc == SG_OK ? out.len : 0);
  sg_buf_free(&out);
  sg_error_clear(&err);
  sg_arena_free(&arena);
  call_free(fc);
  atomic_fetch_sub(&c->inflight, 1);
  if (atomic_load(&f->shutting_down)) wake_loop(f);
  conn_deref(c);
}

/* Whether s (len bytes) is printable ASCII, as gRPC metadata values are. */
static bool printable(const uint8_t *s, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (s[i] < 0x20 || s[i] > 0x7e) return false;
  return true;
}

/* A request frame: u32 length, u32 id, u32 timeout in ms (0: none), u8 method length,
 * method ("EagerBatch", "Health.Check"), u8 session length, session, u16 token length,
 * bearer token, then the request message's bytes. Reads fc->frame (n bytes) into fc —
 * the method, session, principal, deadline and body — and admits the call as grpc.c
 * does (token, connection limit, admission unless on the admin lane); an error (what
 * to answer) when it may not run. */
static sg_code frame_call(fconn *c, fcall *fc, size_t n, sg_error *err) {
  sv_frames *f = c->f;
  const uint8_t *frame = fc->frame;
  if (n < REQ_FIXED)
    return sg_error_set(err, SG_INVALID_ARGUMENT, "malformed frame: %zu bytes, shorter than a request header (%d)",
                        n, REQ_FIXED);
  uint32_t timeout_ms = rd32(frame + 8);
  size_t pos = 12;
  size_t mlen = frame[pos++];
  const uint8_t *mname = frame + pos;
  pos += mlen;
  size_t slen = pos < n ? frame[pos] : 0;
  pos += 1;
  const uint8_t *sname = frame + pos;
  pos += slen;
  size_t tlen = pos + 2 <= n ? rd16(frame + pos) : 0;
  pos += 2;
  const uint8_t *token = frame + pos;
  pos += tlen;
  if (pos > n)
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "malformed frame: its header (method %zu, session %zu, token %zu bytes) runs past its %zu bytes",
                        mlen, slen, tlen, n);
  char name[256];
  memcpy(name, mname, mlen);
  name[mlen] = 0;
  if (!printable(mname, mlen)) return sg_error_set(err, SG_UNIMPLEMENTED, "unknown method '(not ASCII)'");
  const sv_method *m = fc->m = sv_method_by_name(name);
  if (!m) return sg_error_set(err, SG_UNIMPLEMENTED, "unknown method '%s'", name);
  if (!printable(sname, slen))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: the session name is not printable ASCII", m->name);
  if (atomic_load(&f->shutting_down)) return sg_error_set(err, SG_UNAVAILABLE, "%s: the daemon is shutting down", m->name);
  sv_auth *auth = sv_service_auth(f->sv);
  if (auth && !(tlen && sv_auth_check(auth, (const char *)token, tlen, &fc->principal))) {
    SG_INFO(0, "%s: missing or unknown bearer token (framed transport)", m->name);
    return sg_error_set(err, SG_UNAUTHENTICATED,
                        "this daemon requires a bearer token: send a token from its --auth-token-file in the frame's "
                        "header (stagctl --token-file, stagd.connect(token=...))");
  }
  if (atomic_load(&c->inflight) >= CONN_MAX_INFLIGHT)
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                        "%s: %d requests are already in flight on this connection (the framed transport's limit); "
                        "wait for their replies",
                        m->name, CONN_MAX_INFLIGHT);
  fc->body = frame + pos;
  fc->body_len = n - pos;
  fc->deadline_ns = timeout_ms ? sg_now_ns() + (uint64_t)timeout_ms * 1000000u : 0;
  if (slen) {
    fc->session = sg_xmalloc(slen + 1);
    memcpy(fc->session, sname, slen);
    fc->session[slen] = 0;
  }
  fc->admin = sv_admin_lane(m, fc->body, fc->body_len);
  if (!fc->admin &&
      sv_admission_enter(sv_service_admission(f->sv), fc->principal, fc->session, c->peer, &fc->admitted, err) != SG_OK) {
    SG_INFO(0, "%s: %s", m->name, err->message);
    return err->code;
  }
  return SG_OK;
}

/* One frame (malloc'd, owned by its call from here on): answered at once when it may
 * not run; else run here (the admin lane) or on a worker. */
static void handle_frame(fconn *c, uint8_t *frame, size_t n) {
  fcall *fc = sg_xcalloc(1, sizeof *fc);
  fc->c = c;
  fc->frame = frame;
  fc->id = rd32(frame + 4);
  sg_error err = SG_ERROR_INIT;
  if (frame_call(c, fc, n, &err) != SG_OK) {
    send_reply(c, fc->id, err.code, &err, NULL, 0);
    sg_error_clear(&err);
    call_free(fc);
    return;
  }
  atomic_fetch_add(&c->inflight, 1);
  atomic_fetch_add(&c->refs, 1);
  if (fc->admin) run_call(fc);
  else sv_pool_submit(c->f->pool, run_call, fc);
}

/* Cuts the input into frames and handles each; keeps a partial frame for later. */
static void conn_frames(fconn *c) {
  sv_frames *f = c->f;
  size_t off = 0;
  while (!atomic_load(&c->gone)) {
    size_t avail = c->in_len - off;
    if (c->skip) {
      size_t d = avail < c->skip ? avail : (size_t)c->skip;
      off += d;
      c->skip -= d;
      if (c->skip) break;
      continue;
    }
    if (avail < 8) break;
    uint32_t len = rd32(c->in + off);
    uint32_t id = rd32(c->in + off + 4);
    if (len < 4) { /* no room for its own id: nothing after it can be trusted */
      send_error(c, id, SG_INVALID_ARGUMENT, "malformed frame: a length of %u", len);
      atomic_store(&c->gone, true);
      break;
    }
    if (len > f->max_frame) {
      send_error(c, id, SG_RESOURCE_EXHAUSTED,
                 "a frame of %u bytes is larger than this daemon's limit of %llu (--max-message-bytes and 64 KiB of "
                 "header); its bytes were skipped",
                 len, (unsigned long long)f->max_frame);
      off += 8;
      c->skip = len - 4;
      continue;
    }
    size_t total = 4 + (size_t)len;
    if (avail < total) {
      if (off == 0 && c->in_cap < total) {
        c->in = sg_xrealloc(c->in, total);
        c->in_cap = total;
      }
      break;
    }
    uint8_t *frame;
    if (off == 0 && total == c->in_len && total > READ_CHUNK) { /* a large frame alone: handed over, not copied */
      frame = c->in;
      c->in = NULL;
      c->in_cap = c->in_len = 0;
      handle_frame(c, frame, total);
      return;
    }
    frame = sg_xmalloc(total);
    memcpy(frame, c->in + off, total);
    off += total;
    handle_frame(c, frame, total);
  }
  if (off) {
    memmove(c->in, c->in + off, c->in_len - off);
    c->in_len -= off;
  }
}

static void conn_read(fconn *c) {
  if (c->in_cap - c->in_len < READ_CHUNK / 4) {
    size_t cap = c->in_cap < READ_CHUNK ? READ_CHUNK : c->in_cap * 2;
    c->in = sg_xrealloc(c->in, cap);
    c->in_cap = cap;
  }
  ssize_t n;
  do n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
  while (n < 0 && errno == EINTR);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
    conn_drop(c);
    return;
  }
  if (n < 0) return;
  c->in_len += (size_t)n;
  conn_frames(c);
  /* a small buffer again once a large frame has gone */
  if (c->in_len == 0 && c->in_cap > 4 * READ_CHUNK) {
    free(c->in);
    c->in = NULL;
    c->in_cap = 0;
  }
}

static void on_accept(sv_frames *f, flistener *l) {
  for (;;) {
    int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) SG_WARN(0, "%s: accept: %s", l->path, strerror(errno));
      return;
    }
    if (atomic_load(&f->n_conns) >= MAX_CONNS) {
      SG_WARN(0, "%s: %d connections already: closing a new one", l->path, MAX_CONNS);
      close(fd);
      continue;
    }
    fconn *c = sg_xcalloc(1, sizeof *c);
    c->kind = K_CONN;
    c->f = f;
    c->fd = fd;
    c->peer = l->peer;
    pthread_mutex_init(&c->mu, NULL);
    atomic_store(&c->refs, 1);
    c->armed = EPOLLIN | EPOLLRDHUP;
    struct epoll_event e = {.events = c->armed, .data.ptr = c};
    pthread_mutex_lock(&f->mu);
    c->next = f->conns;
    if (f->conns) f->conns->prev = c;
    f->conns = c;
    pthread_mutex_unlock(&f->mu);
    atomic_fetch_add(&f->n_conns, 1);
    if (epoll_ctl(f->ep, EPOLL_CTL_ADD, fd, &e) != 0) {
      c->loop_done = true;
      conn_deref(c);
    }
  }
}

/* ------------------------------------------------------------ the loop */

static void close_listeners(sv_frames *f) {
  if (f->listeners_closed) return;
  f->listeners_closed = true;
  for (size_t i = 0; i < f->n_listeners; i++) {
    if (f->listeners[i].fd < 0) continue;
    epoll_ctl(f->ep, EPOLL_CTL_DEL, f->listeners[i].fd, NULL);
    close(f->listeners[i].fd);
    f->listeners[i].fd = -1;
    unlink(f->listeners[i].path);
  }
}

/* While shutting down: connections with nothing in flight and nothing to send are
 * closed; after cancel_all, every connection. */
static void sweep(sv_frames *f) {
  bool all = atomic_load(&f->cancelling);
  pthread_mutex_lock(&f->mu);
  fconn *c = f->conns;
  size_t n = 0, cap = 16;
  fconn **idle = sg_xmalloc(cap * sizeof *idle);
  for (; c; c = c->next) {
    if (c->loop_done) continue;
    pthread_mutex_lock(&c->mu);
    bool quiet = c->out.len == c->out_off;
    pthread_mutex_unlock(&c->mu);
    if (all || atomic_load(&c->gone) || (quiet && atomic_load(&c->inflight) == 0)) {
      if (n == cap) idle = sg_xrealloc(idle, (cap *= 2) * sizeof *idle);
      idle[n++] = c;
    }
  }
  pthread_mutex_unlock(&f->mu);
  for (size_t i = 0; i < n; i++) conn_drop(idle[i]); /* (only this thread frees a loop-held connection) */
  free(idle);
}

static void *frames_main(void *arg) {
  sv_frames *f = arg;
  struct epoll_event evs[64];
  for (;;) {
    if (atomic_load(&f->shutting_down)) {
      close_listeners(f);
      sweep(f);
      if (atomic_load(&f->n_conns) == 0) break;
    }
    int n = epoll_wait(f->ep, evs, 64, atomic_load(&f->shutting_down) ? 50 : -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      SG_ERROR(0, "framed transport: epoll_wait: %s", strerror(errno));
      break;
    }
    for (int i = 0; i < n; i++) {
      fkind kind = *(fkind *)evs[i].data.ptr;
      uint32_t ev = evs[i].events;
      if (kind == K_WAKE) {
        uint64_t v;
        ssize_t r = read(f->wake, &v, sizeof v);
        (void)r;
      } else if (kind == K_LISTENER) {
        on_accept(f, evs[i].data.ptr);
      } else {
        fconn *c = evs[i].data.ptr;
        atomic_fetch_add(&c->refs, 1); /* alive until its events are handled, dropped or not */
        if (ev & EPOLLOUT) {
          pthread_mutex_lock(&c->mu);
          conn_flush_locked(c);
          pthread_mutex_unlock(&c->mu);
        }
        if (ev & EPOLLIN) conn_read(c);
        /* a hang-up: the peer is gone (after what it sent was read) */
        if (!c->loop_done && (ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR) || atomic_load(&c->gone))) conn_drop(c);
        conn_deref(c);
      }
    }
  }
  if (f->on_stopped) f->on_stopped(f->ud);
  return NULL;
}

sv_frames *sv_frames_listen(sv_service *sv, sv_pool *pool, const sv_strlist *addrs, void (*on_stopped)(void *), void *ud,
                            sg_error *err) {
  const sv_config *cfg = sv_service_config(sv);
  sv_frames *f = sg_xcalloc(1, sizeof *f);
  f->sv = sv;
  f->pool = pool;
  f->on_stopped = on_stopped;
  f->ud = ud;
  f->wake_kind = K_WAKE;
  f->max_frame = cfg->max_message_bytes + FRAME_HEADER_SLACK;
  if (f->max_frame > UINT32_MAX) f->max_frame = UINT32_MAX;
  pthread_mutex_init(&f->mu, NULL);
  f->ep = epoll_create1(EPOLL_CLOEXEC);
  f->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (f->ep < 0 || f->wake < 0) {
    sg_error_set(err, SG_INTERNAL, "framed transport: %s", strerror(errno));
    goto fail;
  }
  struct epoll_event we = {.events = EPOLLIN, .data.ptr = &f->wake_kind};
  epoll_ctl(f->ep, EPOLL_CTL_ADD, f->wake, &we);
  f->listeners = sg_xcalloc(addrs->len ? addrs->len : 1, sizeof *f->listeners);
  for (size_t i = 0; i < addrs->len; i++) {
    const char *a = addrs->items[i];
    if (strncmp(a, "unix:", 5) != 0) continue;
    /* first the gRPC socket: a daemon already serving there is named by its path */
    if (sv_unix_path_claim(a + 5, err) != SG_OK) goto fail;
    flistener *l = &f->listeners[f->n_listeners];
    l->kind = K_LISTENER;
    size_t plen = strlen(a + 5);
    l->path = sg_xmalloc(plen + sizeof ".frames");
    memcpy(l->path, a + 5, plen);
    memcpy(l->path + plen, ".frames", sizeof ".frames");
    l->peer = sg_xmalloc(plen + 6);
    memcpy(l->peer, a, plen + 6);
    l->fd = sv_unix_listen(l->path, err);
    f->n_listeners++;
    if (l->fd < 0) goto fail;
    struct epoll_event le = {.events = EPOLLIN, .data.ptr = l};
    epoll_ctl(f->ep, EPOLL_CTL_ADD, l->fd, &le);
    SG_INFO(0, "framed requests on unix:%s", l->path);
  }
  if (f->n_listeners == 0) { /* no unix socket: nothing to serve */
    sv_frames_destroy(f);
    return NULL;
  }
  return f;

fail:
  sv_frames_destroy(f);
  return NULL;
}

sg_code sv_frames_serve(sv_frames *f, sg_error *err) {
  if (pthread_create(&f->thread, NULL, frames_main, f) != 0)
    return sg_error_set(err, SG_INTERNAL, "cannot start the framed transport's thread");
  f->thread_started = true;
  return SG_OK;
}

void sv_frames_shutdown(sv_frames *f) {
  if (!f) return;
  atomic_store(&f->shutting_down, true);
  wake_loop(f);
}

void sv_frames_cancel_all(sv_frames *f) {
  if (!f) return;
  pthread_mutex_lock(&f->mu);
  for (fconn *c = f->conns; c; c = c->next) atomic_store(&c->gone, true);
  pthread_mutex_unlock(&f->mu);
  atomic_store(&f->cancelling, true);
  wake_loop(f);
}

void sv_frames_destroy(sv_frames *f) {
  if (!f) return;
  if (f->thread_started) {
    sv_frames_shutdown(f);
    pthread_join(f->thread, NULL);
  }
  close_listeners(f);
  for (size_t i = 0; i < f->n_listeners; i++) {
    free(f->listeners[i].path);
    free(f->listeners[i].peer);
  }
  free(f->listeners);
  if (f->ep >= 0) close(f->ep);
  if (f->wake >= 0) close(f->wake);
  pthread_mutex_destroy(&f->mu);
  free(f);
}
