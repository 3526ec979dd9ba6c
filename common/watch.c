// SPDX-License-Identifier: Apache-2.0
/*
 * watch.c — what a request's work watches while it runs: its deadline, its cancel
 * flag (set by the transport on client cancel, disconnect or shutdown) and its budget
 * of tensor bytes.
 *
 * The daemon enters a watch around each handler (server/service.c); the executor
 * enters one around each run (graph/program). Long loops anywhere below — the
 * converter, staging, inference, the optimizer, the executors, waits on Vulkan fences
 * — poll the calling thread's current watch, so no signature has to carry the flag.
 * The one function that decides is sg_watch_check.
 *
 * Memory: tensors allocated while a watch with a budget is current are charged to it
 * (kernels/tensor.c) and refunded when released on the same thread while it is still
 * current; the executor checks the balance between instructions. A watch with a share
 * (a client session's budget over all its running requests) charges and refunds the
 * share by the same amounts, and takes what it still holds off the share when it is
 * left: results that outlive the request are then counted where they are kept (the
 * handle store), not as running intermediates.
 */
#include <stdio.h>

#include "sg.h"

static _Thread_local sg_watch *current;
static atomic_uint_fast64_t next_serial = 1;

sg_watch *sg_watch_enter(sg_watch *w) {
  sg_watch *prev = current;
  w->serial = atomic_fetch_add(&next_serial, 1);
  if (!w->share && prev && prev->share) {
    w->share = prev->share;
    w->share_base = prev->share_base;
  }
  current = w;
  return prev;
}

void sg_watch_leave(sg_watch *prev) {
  sg_watch *w = current;
  if (w && w->share && w->live_bytes) atomic_fetch_sub(&w->share->live, w->live_bytes);
  current = prev;
}

sg_watch *sg_watch_current(void) { return current; }

/* The one decision: SG_OK, SG_CANCELLED or SG_DEADLINE_EXCEEDED. */
static sg_code stop_code(const sg_watch *w) {
  if (!w) return SG_OK;
  if (w->cancel && atomic_load_explicit(w->cancel, memory_order_relaxed)) return SG_CANCELLED;
  if (w->deadline_ns && sg_now_ns() > w->deadline_ns) return SG_DEADLINE_EXCEEDED;
  return SG_OK;
}

sg_code sg_watch_check(const sg_watch *w, const char *doing, sg_error *err) {
  sg_code c = stop_code(w);
  if (c == SG_CANCELLED) return sg_error_set(err, c, "cancelled while %s", doing);
  if (c == SG_DEADLINE_EXCEEDED) return sg_error_set(err, c, "deadline exceeded while %s", doing);
  return SG_OK;
}

sg_code sg_watch_poll(const char *doing, sg_error *err) { return sg_watch_check(current, doing, err); }

bool sg_watch_stopped(void) { return stop_code(current) != SG_OK; }

uint64_t sg_watch_charge(size_t bytes) {
  sg_watch *w = current;
  if (!w || (!w->max_bytes && !w->share)) return 0;
  w->live_bytes += bytes;
  if (w->live_bytes > w->peak_bytes) w->peak_bytes = w->live_bytes;
  if (w->share) atomic_fetch_add_explicit(&w->share->live, bytes, memory_order_relaxed);
  return w->serial;
}

void sg_watch_refund(uint64_t serial, size_t bytes) {
  sg_watch *w = current;
  if (!serial || !w || w->serial != serial) return; /* charged to a request now over */
  size_t r = w->live_bytes < bytes ? w->live_bytes : bytes;
  w->live_bytes -= r;
  if (w->share) atomic_fetch_sub_explicit(&w->share->live, r, memory_order_relaxed);
}

static bool request_fits(const sg_watch *w, size_t bytes) {
  return !w->max_bytes || (bytes <= w->max_bytes && w->live_bytes <= w->max_bytes - bytes);
}

/* the session's handles, its running requests' tensors and `bytes` more */
static uint64_t share_total(const sg_watch *w, size_t bytes) {
  return w->share_base + atomic_load_explicit(&w->share->live, memory_order_relaxed) + bytes;
}

static bool share_fits(const sg_watch *w, size_t bytes) {
  return !w->share || !w->share->max || share_total(w, bytes) <= w->share->max;
}

bool sg_watch_fits(size_t bytes) {
  const sg_watch *w = current;
  return !w || (request_fits(w, bytes) && share_fits(w, bytes));
}

sg_code sg_watch_check_memory(size_t more, sg_error *err) {
  const sg_watch *w = current;
  if (!w) return SG_OK;
  if (!request_fits(w, more))
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                        "the request's tensors would take %llu bytes, over its budget of %llu bytes "
                        "(max-request-bytes)",
                        (unsigned long long)(w->live_bytes + more), (unsigned long long)w->max_bytes);
  if (!share_fits(w, more))
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                        "the client session's tensors (its handles and the tensors of its running "
                        "requests) would take %llu bytes, over its budget of %llu bytes (%s)",
                        (unsigned long long)share_total(w, more), (unsigned long long)w->share->max,
                        w->share->flag);
  return SG_OK;
}
