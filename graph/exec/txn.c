// SPDX-License-Identifier: Apache-2.0
/*
 * txn.c — all-or-nothing Variable updates (JANUS §4.3, "deferred state update";
 * docs/graph.md "Variables: all or nothing").
 *
 * Every request that runs a graph or an eager op does so inside a transaction. The
 * variable kernels never touch a cell's storage: gr_var_read gives the request's own
 * view of a cell (its last write, else the cell's value when the request first read
 * it, remembered), gr_var_write records the new value in the request's log. When the
 * request has run — results read back included — gr_txn_end publishes the log:
 *
 *   - under one process-wide commit lock, every cell the request read is checked to
 *     still hold the value the request saw (identity of the value object, which the
 *     log keeps alive, so an address is never reused meanwhile);
 *   - if all do, every written cell gets its new value; if one does not, nothing is
 *     published and the caller runs the request again (GR_TXN_RETRY).
 *
 * An error, a failed assertion, a deadline or a cancellation ends the request before
 * the commit, so every Variable is left exactly as it was. Each commit is one step for
 * every other request: staged calls see all of a commit or none of it (their reads are
 * validated), and a single Variable is never torn (each store holds the cell's lock).
 * Concurrent assign_add (and assign_sub) calls lose nothing: the loser of a race runs again on the new
 * value. After GR_TXN_OPTIMISTIC failed attempts a request runs holding the commit lock
 * from its start (nothing can conflict with it), so every request ends.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "gr_exec.h"

enum { GR_TXN_OPTIMISTIC = 4 };

typedef struct txn_entry {
  gr_obj *cell; /* retained */
  gr_val seen;  /* the cell's value when first read (retained); valid when `read` */
  gr_val view;  /* the request's view: its last write (retained); valid when `written` */
  bool read, written;
} txn_entry;

struct gr_txn {
  txn_entry *e;
  int n, cap;
  sg_map index; /* cell address -> entry index + 1 */
  bool serial;  /* holds commit_lock from begin to end */
};

static pthread_mutex_t commit_lock = PTHREAD_MUTEX_INITIALIZER;

/* Waits for the commit lock until the request's deadline (0: none). */
static sg_code lock_commit(uint64_t deadline_ns, sg_error *err) {
  if (!deadline_ns) {
    pthread_mutex_lock(&commit_lock);
    return SG_OK;
  }
  uint64_t now = sg_now_ns();
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t left = deadline_ns > now ? deadline_ns - now : 0;
  uint64_t ns = (uint64_t)ts.tv_nsec + left % 1000000000u;
  ts.tv_sec += (time_t)(left / 1000000000u + ns / 1000000000u);
  ts.tv_nsec = (long)(ns % 1000000000u);
  int rc = pthread_mutex_timedlock(&commit_lock, &ts);
  if (rc == ETIMEDOUT)
    return sg_error_set(err, SG_DEADLINE_EXCEEDED,
                        "deadline exceeded waiting to update variables (another call held them); "
                        "no variable was changed");
  return SG_OK;
}

sg_code gr_txn_begin(gr_ctx *ctx, int attempt, sg_error *err) {
  gr_txn *t = sg_xcalloc(1, sizeof *t);
  if (attempt >= GR_TXN_OPTIMISTIC) {
    sg_code rc = lock_commit(ctx->deadline_ns, err);
    if (rc) {
      free(t);
      return rc;
    }
    t->serial = true;
  }
  ctx->txn = t;
  return SG_OK;
}

static txn_entry *find(gr_txn *t, gr_obj *cell) {
  void *v;
  return sg_map_get(&t->index, (uint64_t)(uintptr_t)cell, &v) ? &t->e[(uintptr_t)v - 1] : NULL;
}

static txn_entry *add(gr_txn *t, gr_obj *cell) {
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 8;
    t->e = sg_xrealloc(t->e, sizeof *t->e * (size_t)t->cap);
  }
  txn_entry *e = &t->e[t->n++];
  *e = (txn_entry){.cell = cell};
  gv_retain((gr_val){.tag = GV_VAR, .u.o = cell});
  sg_map_put(&t->index, (uint64_t)(uintptr_t)cell, (void *)(uintptr_t)t->n);
  return e;
}

gr_val gr_var_read(gr_ctx *ctx, gr_obj *cell) {
  gr_txn *t = ctx->txn;
  if (!t) return gv_var_get(cell);
  txn_entry *e = find(t, cell);
  if (!e) e = add(t, cell);
  if (e->written) return gv_retain(e->view);
  if (!e->read) {
    e->seen = gv_var_get(cell);
    e->read = true;
  }
  return gv_retain(e->seen);
}

void gr_var_write(gr_ctx *ctx, gr_obj *cell, gr_val nv) {
  gr_txn *t = ctx->txn;
  if (!t) { /* no request (a test's bare context): a plain store */
    gv_var_set(cell, nv);
    return;
  }
  txn_entry *e = find(t, cell);
  if (!e) e = add(t, cell);
  if (e->written) gv_release(e->view);
  e->view = nv;
  e->written = true;
}

/* The same value object (or the same immediate), not merely an equal one. */
static bool same(const gr_val *a, const gr_val *b) {
  if (a->tag != b->tag) return false;
  if (a->tag == GV_BOOL) return a->u.b == b->u.b;
  if (a->tag == GV_NONE) return true;
  return a->u.i == b->u.i;
}

/* Validates and publishes; false on a conflict (nothing published). Caller holds
 * commit_lock. */
static bool publish(gr_txn *t) {
  bool reads = false;
  for (int i = 0; i < t->n; i++) reads |= t->e[i].read;
  for (int i = 0; reads && i < t->n; i++) {
    txn_entry *e = &t->e[i];
    if (!e->read) continue;
    gv_var_lock(e->cell);
    bool ok = same(&e->cell->items[0], &e->seen);
    gv_var_unlock(e->cell);
    if (!ok) return false;
  }
  for (int i = 0; i < t->n; i++)
    if (t->e[i].written) gv_var_set(t->e[i].cell, gv_retain(t->e[i].view));
  return true;
}

static bool needs_commit(const gr_txn *t) {
  int written = 0;
  for (int i = 0; i < t->n; i++) written += t->e[i].written;
  /* one cell read and not written: a single read is consistent by itself */
  return written || t->n > 1;
}

sg_code gr_txn_run(gr_ctx *ctx, gr_txn_attempt attempt, void *arg, gr_val *res, sg_error *err) {
  for (int n = 0;; n++) {
    sg_code rc = gr_txn_begin(ctx, n, err);
    if (rc) return rc;
    sg_code ran = attempt(ctx, arg, res, err);
    rc = gr_txn_end(ctx, ran, err);
    if (rc && !ran) { /* not committed: the attempt's result is not the request's */
      gv_release(*res);
      *res = gv_none();
    }
    if (rc != (sg_code)GR_TXN_RETRY) return rc;
  }
}

sg_code gr_txn_end(gr_ctx *ctx, sg_code rc, sg_error *err) {
  gr_txn *t = ctx->txn;
  ctx->txn = NULL;
  if (!t) return rc;
  if (rc == SG_OK && needs_commit(t)) {
    if (!t->serial && (rc = lock_commit(ctx->deadline_ns, err)) == SG_OK) t->serial = true;
    if (rc == SG_OK && !publish(t)) rc = (sg_code)GR_TXN_RETRY;
  }
  if (t->serial) pthread_mutex_unlock(&commit_lock);
  for (int i = 0; i < t->n; i++) {
    if (t->e[i].read) gv_release(t->e[i].seen);
    if (t->e[i].written) gv_release(t->e[i].view);
    gr_val cell = {.tag = GV_VAR, .u.o = t->e[i].cell};
    gv_release(cell);
  }
  free(t->e);
  sg_map_free(&t->index);
  free(t);
  return rc;
}

/* Whether storing v in cell would make a cycle: v reaches cell through tuples, records,
 * closures or other cells (their values as this request sees them). A cycle could
 * never be printed, compared or freed. Explicit stack; each object visited once. */
static bool reaches_cell(gr_ctx *ctx, const gr_val *v, const gr_obj *cell) {
  SG_VEC(gr_val) todo = {0};
  sg_map seen = SG_MAP_INIT;
  bool found = false;
  sg_vec_push(&todo, gv_retain(*v));
  while (todo.len && !found) {
    gr_val x = todo.data[--todo.len];
    bool obj = x.tag == GV_TUPLE || x.tag == GV_RECORD || x.tag == GV_CLOSURE || x.tag == GV_VAR;
    if (obj && !sg_map_get(&seen, (uintptr_t)x.u.o, NULL)) {
      sg_map_put(&seen, (uintptr_t)x.u.o, NULL);
      if (x.tag == GV_VAR) {
        if (x.u.o == cell) found = true;
        else sg_vec_push(&todo, gr_var_read(ctx, x.u.o));
      } else {
        for (int i = 0; i < x.u.o->n; i++) sg_vec_push(&todo, gv_retain(x.u.o->items[i]));
      }
    }
    gv_release(x);
  }
  while (todo.len) gv_release(todo.data[--todo.len]);
  sg_vec_free(&todo);
  sg_map_free(&seen);
  return found;
}

sg_code gr_var_refuse_cycle(gr_ctx *ctx, const gr_val *v, const gr_obj *cell, sg_error *err) {
  if (!reaches_cell(ctx, v, cell)) return SG_OK;
  return sg_error_set(err, SG_INVALID_ARGUMENT,
                      "assign: the value holds this variable itself (a variable cannot contain itself)");
}
