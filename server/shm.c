// SPDX-License-Identifier: Apache-2.0
/*
 * shm.c — the daemon's side of the local data path (shm.h; docs/security.md "The
 * shared-memory directory"). Files live in one private directory: clients write a Put's
 * payload as `p-…` and name it in the request; the daemon writes a Fetch result as
 * `f-<session tag>-<random>` and names it in the reply; whoever reads a file unlinks it.
 * A client may instead keep staging files `k-…` it reuses for every transfer (their pages
 * stay allocated: a fresh tmpfs page costs more than copying into it); the daemon reads
 * and writes those without removing them.
 * Names are checked (letters, digits, '-', '_'), files opened relative to the directory
 * with O_NOFOLLOW and checked with fstat, so a request can reach nothing outside it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shm.h"

struct sv_shm {
  char *dir;
  int dirfd;
  uint64_t budget; /* per session, in files not yet read */
};

const char *sv_shm_dir(const sv_shm *s) { return s->dir; }

/* Every entry of the directory for which drop() says yes is unlinked. */
static void sweep(sv_shm *s, bool (*drop)(const char *name, const struct stat *st, const void *ud), const void *ud) {
  int fd = dup(s->dirfd);
  if (fd < 0) return;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  rewinddir(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct stat st;
    if (fstatat(s->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (drop(e->d_name, &st, ud)) unlinkat(s->dirfd, e->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
  }
  closedir(d);
}

static bool drop_all(const char *name, const struct stat *st, const void *ud) {
  (void)name, (void)st, (void)ud;
  return true;
}

sv_shm *sv_shm_open(const char *dir, uint64_t session_budget, sg_error *err) {
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    sg_error_set(err, SG_UNAVAILABLE, "--shm-dir %s: cannot create it: %s (--no-shm turns the local data path off)",
                 dir, strerror(errno));
    return NULL;
  }
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
    sg_error_set(err, SG_PERMISSION_DENIED,
                 "--shm-dir %s: must be a directory (not a link) owned by this user with no access for others "
                 "(mode 0700)%s%s; --no-shm turns the local data path off",
                 dir, fd < 0 ? ": " : "", fd < 0 ? strerror(errno) : "");
    if (fd >= 0) close(fd);
    return NULL;
  }
  sv_shm *s = sg_xcalloc(1, sizeof *s);
  s->dir = sg_xstrdup(dir);
  s->dirfd = fd;
  s->budget = session_budget;
  sweep(s, drop_all, NULL); /* a crashed daemon's leftovers */
  return s;
}

void sv_shm_close(sv_shm *s) {
  if (!s) return;
  sweep(s, drop_all, NULL);
  close(s->dirfd);
  rmdir(s->dir);
  free(s->dir);
  free(s);
}

static bool name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n >= SV_SHM_NAME_MAX) return false;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
      return false;
  return true;
}

/* Fresh pages faulted in by one call rather than one trap per page while the kernel
 * copies into them (on a virtual machine the traps cost more than the copy). */
static void populate(void *p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t a = ((uintptr_t)p + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
  uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)(page - 1);
  if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE); /* a refusal costs nothing */
#else
  (void)p, (void)n;
#endif
}

/* Removes a named entry, an (empty) directory too: nothing a request names stays. */
static void remove_entry(sv_shm *s, const char *name) {
  if (unlinkat(s->dirfd, name, 0) != 0 && errno == EISDIR) unlinkat(s->dirfd, name, AT_REMOVEDIR);
}

void sv_shm_remove(sv_shm *s, const char *name) {
  if (name_ok(name)) remove_entry(s, name);
}

/* Opens `name` of the directory without following links, checked as a regular file of
 * this uid with one link; -1 with errno set otherwise (EINVAL: not such a file). */
static int open_plain(sv_shm *s, const char *name, int flags, struct stat *st) {
  int fd = openat(s->dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_uid != geteuid() || st->st_nlink != 1) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

static bool is_staging(const char *name) { return !strncmp(name, SV_SHM_KEEP_PREFIX, strlen(SV_SHM_KEEP_PREFIX)); }

sg_code sv_shm_take(sv_shm *s, const char *name, size_t n, bool keep, void *(*alloc)(void *ud), void *ud,
                    const char *path, sg_error *err) {
  if (keep && !is_staging(name))
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "%s: shm_keep names a client's staging file ('" SV_SHM_KEEP_PREFIX "…'), not '%.64s'", path,
                        name);
  if (!name_ok(name))
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "%s: shm name '%.64s' is not a file name of the shared-memory directory (letters, digits, "
                        "'-' and '_', at most %d)",
                        path, name, SV_SHM_NAME_MAX - 1);
  struct stat st;
  int fd = open_plain(s, name, O_RDONLY, &st);
  if (fd < 0) {
    int e = errno;
    remove_entry(s, name); /* a link, a socket, another file: nothing stays behind */
    if (e == EINVAL)
      return sg_error_set(err, SG_INVALID_ARGUMENT,
                          "%s: shm file '%s' is not a regular file of the daemon's user with one link", path, name);
    return sg_error_set(err, SG_INVALID_ARGUMENT, "%s: shm file '%s': %s", path, name,
                        e == ELOOP ? "a symbolic link, refused" : strerror(e));
  }
  sg_code rc = SG_OK;
  if (keep ? (uint64_t)st.st_size < (uint64_t)n : (uint64_t)st.st_size != (uint64_t)n) /* staging: its start */
    rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s: shm file '%s' holds %lld bytes, the tensor needs %zu", path,
                      name, (long long)st.st_size, n);
  void *dst = rc ? NULL : alloc(ud);
  if (!rc && !dst && n) /* the caller names the allocation that failed */
    rc = sg_error_set(err, SG_RESOURCE_EXHAUSTED, "%s: no memory for the tensor in shm file '%s'", path, name);
  if (!rc) populate(dst, n);
  for (size_t done = 0; !rc && done < n;) {
    ssize_t got = pread(fd, (char *)dst + done, n - done, (off_t)done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      rc = sg_error_set(err, SG_INVALID_ARGUMENT, "%s: shm file '%s' shrank while read (%zu of %zu bytes)", path,
                        name, done, n);
    else
      done += (size_t)got;
  }
  close(fd);
  if (!keep) remove_entry(s, name); /* a staging file is its client's */
  return rc;
}

/* Writes n bytes of src at the start of fd; false on a failed or short write. */
static bool write_all(int fd, const void *src, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t put = pwrite(fd, (const char *)src + done, n - done, (off_t)done);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    done += (size_t)put;
  }
  return true;
}

bool sv_shm_put_into(sv_shm *s, const char *name, const void *src, size_t n) {
  if (!name_ok(name) || !is_staging(name)) return false;
  struct stat st;
  int fd = open_plain(s, name, O_WRONLY, &st);
  if (fd < 0) return false;
  bool ok = ((uint64_t)st.st_size >= (uint64_t)n || ftruncate(fd, (off_t)n) == 0) && write_all(fd, src, n);
  close(fd);
  return ok;
}

/* The 16 hex digits that name a session's files (a hash: the session id is a secret). */
static void session_tag(const char *session, char out[17]) {
  uint64_t h = session ? sg_hash_bytes(session, strlen(session), 0x5a) : 0;
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

typedef struct tag_sum {
  char prefix[20];
  uint64_t bytes;
} tag_sum;

static bool add_size(const char *name, const struct stat *st, const void *ud) {
  tag_sum *t = (tag_sum *)ud;
  if (!strncmp(name, t->prefix, strlen(t->prefix))) t->bytes += (uint64_t)st->st_size;
  return false;
}

sg_code sv_shm_give(sv_shm *s, const char *session, const void *src, size_t n, char *name, sg_error *err) {
  tag_sum t = {.bytes = 0};
  char tag[17];
  session_tag(session, tag);
  snprintf(t.prefix, sizeof t.prefix, "f-%s-", tag);
  sweep(s, add_size, &t);
  if (t.bytes + n > s->budget)
    return sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                        "Fetch: %llu bytes of this session's results wait in the shared-memory directory unread; "
                        "%zu more would pass --max-session-handle-bytes (%llu)",
                        (unsigned long long)t.bytes, n, (unsigned long long)s->budget);
  uint64_t r[1];
  if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) r[0] = sg_now_ns() ^ (uint64_t)(uintptr_t)src;
  snprintf(name, SV_SHM_NAME_MAX, "%s%016llx", t.prefix, (unsigned long long)r[0]);
  int fd = openat(s->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return sg_error_set(err, SG_INTERNAL, "Fetch: cannot create %s/%s: %s", s->dir, name, strerror(errno));
  sg_code rc = SG_OK;
  errno = 0;
  if (!write_all(fd, src, n))
    rc = sg_error_set(err, SG_RESOURCE_EXHAUSTED, "Fetch: writing %zu bytes to %s: %s", n, s->dir,
                      errno ? strerror(errno) : "no space");
  close(fd);
  if (rc) unlinkat(s->dirfd, name, 0);
  return rc;
}

static bool has_prefix(const char *name, const struct stat *st, const void *ud) {
  (void)st;
  return !strncmp(name, ud, strlen(ud));
}

void sv_shm_end_session(sv_shm *s, const char *session) {
  if (!s || !session) return;
  char tag[17], prefix[20];
  session_tag(session, tag);
  snprintf(prefix, sizeof prefix, "f-%s-", tag);
  sweep(s, has_prefix, prefix);
}

static bool older(const char *name, const struct stat *st, const void *ud) {
  (void)name;
  const struct timespec *cut = ud;
  return st->st_mtim.tv_sec < cut->tv_sec || (st->st_mtim.tv_sec == cut->tv_sec && st->st_mtim.tv_nsec < cut->tv_nsec);
}

void sv_shm_sweep_older(sv_shm *s, uint64_t age_ms) {
  if (!s) return;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int64_t ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec - (int64_t)age_ms * 1000000LL;
  struct timespec cut = {ns / 1000000000LL, ns % 1000000000LL};
  sweep(s, older, &cut);
}
