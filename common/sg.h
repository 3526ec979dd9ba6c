// SPDX-License-Identifier: Apache-2.0
/*
 * sg.h — the public API of common/, the library every other folder builds on.
 *
 * What lives here:
 *   - status codes and the error object (sg_error) that carries a message and a
 *     source location; every fallible function in stagd returns an sg_code and fills
 *     an sg_error the caller owns;
 *   - memory: checked malloc wrappers and arenas (one per request or compilation
 *     unit, freed in one go);
 *   - strings: a growable byte buffer (sg_buf) and an interning table;
 *   - containers: a typed growable vector (SG_VEC) and a u64-keyed hash map;
 *   - logging to stderr with levels and request ids.
 *
 * Prefix: sg_. Nothing here knows about Python, graphs, devices or transports.
 */
#ifndef STAGD_COMMON_SG_H
#define STAGD_COMMON_SG_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define SG_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SG_PRINTF(fmt, args)
#endif

/* ---------------------------------------------------------------- status codes */

/* The numbers are gRPC's status codes, so transports map them one to one. */
typedef enum sg_code {
  SG_OK = 0,
  SG_CANCELLED = 1,
  SG_UNKNOWN = 2,
  SG_INVALID_ARGUMENT = 3,
  SG_DEADLINE_EXCEEDED = 4,
  SG_NOT_FOUND = 5,
  SG_ALREADY_EXISTS = 6,
  SG_PERMISSION_DENIED = 7,
  SG_RESOURCE_EXHAUSTED = 8,
  SG_FAILED_PRECONDITION = 9,
  SG_ABORTED = 10,
  SG_OUT_OF_RANGE = 11,
  SG_UNIMPLEMENTED = 12,
  SG_INTERNAL = 13,
  SG_UNAVAILABLE = 14,
  SG_DATA_LOSS = 15,
  SG_UNAUTHENTICATED = 16,
} sg_code;

/* "INVALID_ARGUMENT" etc.; "UNKNOWN_CODE" for numbers outside the enum. */
const char *sg_code_name(sg_code code);

/* ----------------------------------------------------------------------- errors */

/* Why an error happened, for clients that catch errors by kind (NumPy's IndexError,
 * ValueError) instead of reading the message: set where the error is made (sg_error_set_reason,
 * through the family helpers of kernels/kn_errors.c), kept by sg_error_prefix and sg_error_move, reset by
 * sg_error_set. Its name (sg_reason_name) is the wire form: the `stagd-reason` gRPC
 * trailing metadata, `reason` in LSP error data and stagctl's JSON (docs/api.md). */
typedef enum sg_reason {
  SG_REASON_NONE,
  SG_REASON_INDEX_OUT_OF_BOUNDS, /* an index or axis outside a tensor or tuple */
  SG_REASON_SHAPE_MISMATCH,      /* shapes that do not broadcast */
  SG_REASON_ASSERTION,           /* a staged program's own `assert` failed */
  SG_REASON_UNSUPPORTED,         /* Python outside the subset the daemon stages (docs/pyfront.md) */
  SG_REASON_SPECULATION,         /* a speculative graph's assumption (`assume`) did not hold */
  SG_REASON_COUNT
} sg_reason;

/* "index_out_of_bounds" etc.; "none" for SG_REASON_NONE and numbers outside the enum. */
const char *sg_reason_name(sg_reason reason);
/* The reason named `name`; false (and *out untouched) for a name that is none of them. */
bool sg_reason_parse(const char *name, sg_reason *out);

/* An error with an optional location. line/col are 1-based; 0 means "unknown".
 * file may be NULL. The strings are owned by the error (sg_error_clear frees them). */
typedef struct sg_error {
  sg_code code;
  char *message;
  char *file;
  int line;
  int col;
  sg_reason reason;
} sg_error;

#define SG_ERROR_INIT {SG_OK, NULL, NULL, 0, 0, SG_REASON_NONE}

/* Fills err (replacing what it held) and returns code, so callers can write
 * `return sg_error_set(err, SG_INVALID_ARGUMENT, ...)`. err may be NULL. */
sg_code sg_error_set(sg_error *err, sg_code code, const char *fmt, ...) SG_PRINTF(3, 4);
sg_code sg_error_setv(sg_error *err, sg_code code, const char *fmt, va_list ap);
/* Same, with a reason: for the family helpers (kernels/kn_errors.c) that own each
 * family's wording. */
sg_code sg_error_set_reason(sg_error *err, sg_reason reason, sg_code code, const char *fmt, ...)
    SG_PRINTF(4, 5);
/* Same, with a location. */
sg_code sg_error_set_at(sg_error *err, sg_code code, const char *file, int line, int col,
                        const char *fmt, ...) SG_PRINTF(6, 7);
void sg_error_clear(sg_error *err);
/* Sets err's code and puts "PREFIX: " before its message (location and reason kept). */
sg_code sg_error_prefix(sg_error *err, sg_code code, const char *fmt, ...) SG_PRINTF(3, 4);
/* Moves src into dst (dst's old contents are freed; src becomes empty). */
void sg_error_move(sg_error *dst, sg_error *src);
/* "FILE:LINE:COL: error: MESSAGE" (parts that are unknown are left out) into a
 * malloc'd string the caller frees. */
char *sg_error_format(const sg_error *err);

/* ----------------------------------------------------------------------- memory */

/* malloc/calloc/realloc that never return NULL: running out of host memory is not a
 * recoverable condition for the daemon (limits are enforced before work starts). */
void *sg_xmalloc(size_t size);
void *sg_xcalloc(size_t n, size_t size);
void *sg_xrealloc(void *ptr, size_t size);
/* A zeroed buffer for bulk data (tensors). Blocks of 4 MiB and more are advised to use
 * transparent huge pages: one fault per 2 MiB instead of one per 4 KiB (20x less time
 * filling a fresh 64 MiB tensor on a VM; NumPy does the same for its large arrays). */
void *sg_xcalloc_bulk(size_t bytes);
/* The same without the zero fill (a kernel that writes every element). */
void *sg_xmalloc_bulk(size_t bytes);
/* The huge-page advice alone, for a bulk buffer allocated elsewhere (kernels/pool.c). */
void sg_advise_bulk(void *p, size_t bytes);
char *sg_xstrdup(const char *s);
char *sg_xstrndup(const char *s, size_t n);
char *sg_xasprintf(const char *fmt, ...) SG_PRINTF(1, 2);

/* Process-wide malloc settings for programs that execute graphs (the daemon, stagctl
 * --local, tools, benchmarks): freed tensor buffers stay in the heap for reuse instead
 * of going back to the kernel (glibc otherwise maps buffers of 128 KiB+ afresh and trims
 * the heap, so every intermediate costs page faults and zeroing). Call once, first. */
void sg_memory_tune_for_reuse(void);

/* A bump allocator made of linked blocks. Allocation is O(1); everything is freed at
 * once by sg_arena_reset / sg_arena_free. Not thread-safe: one arena per request. */
typedef struct sg_arena_block sg_arena_block;
typedef struct sg_arena_defer sg_arena_defer;
typedef struct sg_arena {
  sg_arena_block *head;   /* current block, newest first */
  sg_arena_defer *defers; /* sg_arena_on_free callbacks, newest first */
  size_t block_size;      /* default size of new blocks */
  size_t bytes_allocated; /* sum of the sizes handed out (statistics) */
} sg_arena;

void sg_arena_init(sg_arena *a, size_t block_size); /* 0 → a sensible default */
void *sg_arena_alloc(sg_arena *a, size_t size);      /* 16-byte aligned, uninitialised */
void *sg_arena_calloc(sg_arena *a, size_t n, size_t size);
char *sg_arena_strdup(sg_arena *a, const char *s);
char *sg_arena_strndup(sg_arena *a, const char *s, size_t n);
/* fn(arg) runs when the arena is reset or freed (newest first): a reply that points
 * into a tensor's storage keeps the tensor until the reply has been encoded. */
void sg_arena_on_free(sg_arena *a, void (*fn)(void *), void *arg);
void sg_arena_reset(sg_arena *a); /* frees all but one block, keeps the arena usable */
void sg_arena_free(sg_arena *a);

/* ------------------------------------------------------------- growable buffer */

/* A byte buffer that always keeps a NUL after its contents, so data is a C string. */
typedef struct sg_buf {
  char *data;
  size_t len;
  size_t cap;
} sg_buf;

#define SG_BUF_INIT {NULL, 0, 0}

void sg_buf_reserve(sg_buf *b, size_t extra);
void sg_buf_append(sg_buf *b, const void *data, size_t len);
void sg_buf_puts(sg_buf *b, const char *s);
void sg_buf_putc(sg_buf *b, char c);
void sg_buf_printf(sg_buf *b, const char *fmt, ...) SG_PRINTF(2, 3);
void sg_buf_vprintf(sg_buf *b, const char *fmt, va_list ap);
/* Appends s as the contents of a JSON string (quotes included), escaping as needed. */
void sg_buf_put_json_string(sg_buf *b, const char *s, size_t len);
/* utf8.c: true when s[0..n) is strict UTF-8 (no overlongs, surrogates or code points
 * above U+10FFFF, as Python decodes); else false and *bad (when not NULL) is the
 * offset of the first byte of the first invalid sequence. */
bool sg_utf8_valid(const char *s, size_t n, size_t *bad);
void sg_buf_clear(sg_buf *b); /* len = 0, keeps capacity */
/* Shortest round-trip floats (fmt_double.c): the fewest significant digits that read
 * back as the same double, in one of two spellings.
 *   python: repr(float) exactly as CPython prints it ("100.0", "1e+16", "1e-05", "inf",
 *           "nan", "-0.0"); add_dot0 false drops the ".0" of an integral value (the
 *           parts of a complex literal: "1j").
 *   g:      C's %g at the shortest precision, then ".0" when neither '.' nor 'e' is in
 *           it, so it reads back as a float ("1e+02", "1.18e+04", "0.1", "inf", "nan"):
 *           the S-expression, JSON-value and dump spelling of graph/. */
void sg_buf_put_double_python(sg_buf *b, double d, bool add_dot0);
void sg_buf_put_double_g(sg_buf *b, double d);
/* The shortest digits of a finite d: digits[0..n) without trailing zeros ("0" for
 * zero), the decimal exponent of the first, the sign; returns n (1..17). */
int sg_double_digits(double d, char digits[24], int *exp10, bool *neg);
void sg_buf_free(sg_buf *b);
/* Hands the data to the caller (never NULL) and leaves b empty. */
char *sg_buf_detach(sg_buf *b, size_t *len);
/* A whole file ("-": standard input) as a malloc'd NUL-terminated string the caller
 * frees; NULL with errno set when it cannot be opened or read. */
char *sg_read_file(const char *path, size_t *len);

/* ---------------------------------------------------------------------- vectors */

/* A typed vector: `SG_VEC(int) v = {0}; sg_vec_push(&v, 3); ... sg_vec_free(&v);` */
#define SG_VEC(T) struct { T *data; size_t len, cap; }
void sg_vec_grow_(void **data, size_t *cap, size_t need, size_t elem_size);
#define sg_vec_reserve(v, n)                                                              \
  ((v)->len + (n) > (v)->cap                                                              \
       ? sg_vec_grow_((void **)&(v)->data, &(v)->cap, (v)->len + (n), sizeof(*(v)->data)) \
       : (void)0)
#define sg_vec_push(v, x) (sg_vec_reserve((v), 1), (v)->data[(v)->len++] = (x))
#define sg_vec_pop(v) ((v)->data[--(v)->len])
#define sg_vec_last(v) ((v)->data[(v)->len - 1])
#define sg_vec_free(v) (free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)

/* ---------------------------------------------------------------------- hashing */

uint64_t sg_hash_bytes(const void *data, size_t len, uint64_t seed);
static inline uint64_t sg_hash_u64(uint64_t x) {
  /* splitmix64 finaliser: a bijection with good avalanche */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/* -------------------------------------------------------------------- hash map */

/* Open-addressing map from a u64 key to a pointer. Pointers (interned strings,
 * nodes) are keys by casting to uintptr_t. No key is reserved. */
typedef struct sg_map {
  uint64_t *keys;
  void **values;
  uint8_t *used;
  size_t cap; /* power of two, or 0 */
  size_t len;
} sg_map;

#define SG_MAP_INIT {NULL, NULL, NULL, 0, 0}

void sg_map_put(sg_map *m, uint64_t key, void *value);
/* Returns true and sets *value when key is present. value may be NULL. */
bool sg_map_get(const sg_map *m, uint64_t key, void **value);
bool sg_map_remove(sg_map *m, uint64_t key);
void sg_map_clear(sg_map *m);
void sg_map_free(sg_map *m);
/* Iteration: for (size_t i = 0; sg_map_next(m, &i, &k, &v);) — no changes meanwhile. */
bool sg_map_next(const sg_map *m, size_t *iter, uint64_t *key, void **value);

/* ---------------------------------------------------------------- interning */

/* Equal strings intern to the same pointer, so they compare and hash as pointers.
 * Interned strings live as long as the table and are NUL-terminated. */
typedef struct sg_intern {
  sg_arena arena;
  const char **slots; /* open addressing, NULL = empty */
  uint32_t *lens;
  size_t cap;
  size_t len;
} sg_intern;

void sg_intern_init(sg_intern *t);
const char *sg_intern_n(sg_intern *t, const char *s, size_t len);
const char *sg_intern_str(sg_intern *t, const char *s);
/* The interned copy of s if the table has one, else NULL (nothing is added). */
const char *sg_intern_find(const sg_intern *t, const char *s, size_t len);
void sg_intern_free(sg_intern *t);

/* ---------------------------------------------------------------------- logging */

typedef enum sg_log_level {
  SG_LOG_DEBUG = 0,
  SG_LOG_INFO = 1,
  SG_LOG_WARN = 2,
  SG_LOG_ERROR = 3,
  SG_LOG_OFF = 4,
} sg_log_level;

void sg_log_set_level(sg_log_level level);
sg_log_level sg_log_get_level(void);
/* Parses "debug", "info", "warn"/"warning", "error", "off". */
bool sg_log_parse_level(const char *name, sg_log_level *out);
/* How lines look: text for people, or one JSON object per line for log collectors
 * (docs/daemon.md "Logs"). */
typedef enum sg_log_format { SG_LOG_TEXT = 0, SG_LOG_JSON = 1 } sg_log_format;
void sg_log_set_format(sg_log_format format);
/* Parses "text", "json". */
bool sg_log_parse_format(const char *name, sg_log_format *out);
/* One line on stderr: "2026-11-22T12:00:00.123Z INFO [req 42] message", or as JSON
 * {"time":..., "level":"info", "req":42, "message":...}. req_id 0 means "not tied to a
 * request". Thread-safe. */
void sg_log(sg_log_level level, uint64_t req_id, const char *fmt, ...) SG_PRINTF(3, 4);
/* What a line about one request carries besides its message: in text, "METHOD STATUS
 * D.DDD ms" before the message; in JSON, fields method, status, session, duration_ms. */
typedef struct sg_log_request {
  const char *method;   /* NULL: none */
  const char *status;   /* "OK", "INVALID_ARGUMENT", ...; NULL: none */
  const char *session;  /* the client's session, NULL: none (JSON only) */
  uint64_t duration_ns;
} sg_log_request;
void sg_log_req(sg_log_level level, uint64_t req_id, const sg_log_request *r, const char *fmt, ...)
    SG_PRINTF(4, 5);

#define SG_DEBUG(req, ...) sg_log(SG_LOG_DEBUG, (req), __VA_ARGS__)
#define SG_INFO(req, ...) sg_log(SG_LOG_INFO, (req), __VA_ARGS__)
#define SG_WARN(req, ...) sg_log(SG_LOG_WARN, (req), __VA_ARGS__)
#define SG_ERROR(req, ...) sg_log(SG_LOG_ERROR, (req), __VA_ARGS__)

/* ------------------------------------------------------------------------ time */

uint64_t sg_now_ns(void);    /* monotonic clock */
uint64_t sg_wall_ms(void);   /* wall clock, ms since the epoch */

/* ------------------------------------------------------------------- watches */

/* What a request's work watches while it runs (watch.c): its deadline, its cancel
 * flag and its budget of tensor bytes. A thread has at most one current watch; loops
 * that can run long (converter, staging, inference, optimizer, executors, device
 * waits) poll it at their back-edges and between ops. */
/* A budget several requests share (one client session's, server/session_memory.c):
 * the tensor bytes its running requests hold now, and their bound. */
typedef struct sg_share {
  atomic_uint_fast64_t live; /* the sum of its watches' live_bytes */
  uint64_t max;              /* 0 = none */
  const char *flag;          /* the option that sets max, for errors */
} sg_share;

typedef struct sg_watch {
  uint64_t deadline_ns; /* sg_now_ns() clock; 0 = none */
  atomic_bool *cancel;  /* set by the transport when the client gives up; NULL = none */
  uint64_t max_bytes;   /* budget for the tensors the work holds at once; 0 = none */
  uint64_t live_bytes;  /* charged and not yet refunded */
  uint64_t peak_bytes;
  uint64_t serial;      /* set by sg_watch_enter: which request a charge belongs to */
  /* the session budget its charges also count against (NULL: none; a watch entered
   * inside one with a share inherits it), and the bytes the session held elsewhere
   * (its handles) when the request began: share_base + share->live ≤ share->max */
  sg_share *share;
  uint64_t share_base;
} sg_watch;
/* Makes w the calling thread's current watch; returns the one to restore. */
sg_watch *sg_watch_enter(sg_watch *w);
void sg_watch_leave(sg_watch *prev);
sg_watch *sg_watch_current(void);
/* SG_CANCELLED or SG_DEADLINE_EXCEEDED ("... while DOING") when w says stop; SG_OK
 * for NULL. The one place both conditions are decided. */
sg_code sg_watch_check(const sg_watch *w, const char *doing, sg_error *err);
/* sg_watch_check on the current watch. */
sg_code sg_watch_poll(const char *doing, sg_error *err);
/* The same as a yes/no, for loops that cannot return an error themselves. */
bool sg_watch_stopped(void);
/* Tensor bytes: charge returns the token to refund with (0: nothing charged). */
uint64_t sg_watch_charge(size_t bytes);
void sg_watch_refund(uint64_t token, size_t bytes);
/* Whether `bytes` more fit in the current watch's budget and its share's (true
 * without one). */
bool sg_watch_fits(size_t bytes);
/* SG_RESOURCE_EXHAUSTED naming max-request-bytes, or the share's flag, when `more`
 * bytes do not fit. */
sg_code sg_watch_check_memory(size_t more, sg_error *err);

#endif /* STAGD_COMMON_SG_H */
