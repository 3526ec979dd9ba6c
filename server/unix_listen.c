// SPDX-License-Identifier: Apache-2.0
/*
 * unix_listen.c — claiming a unix socket path for a transport: a socket left behind
 * by a crashed daemon is removed, one another process answers on is an error, and a
 * new socket is created mode 0600 (only the daemon's user may connect:
 * docs/security.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "transport.h"

sg_code sv_unix_path_claim(const char *path, sg_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) return SG_OK;
  if (!S_ISSOCK(st.st_mode))
    return sg_error_set(err, SG_INVALID_ARGUMENT, "unix:%s exists and is not a socket", path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return SG_OK;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
  int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
  int e = errno;
  close(fd);
  if (rc == 0) return sg_error_set(err, SG_UNAVAILABLE, "unix:%s: another process is already serving there", path);
  if (e == ECONNREFUSED) unlink(path);
  return SG_OK;
}

int sv_unix_listen(const char *path, sg_error *err) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof sa.sun_path) {
    sg_error_set(err, SG_INVALID_ARGUMENT, "unix:%s: the path is longer than a unix socket's %zu bytes", path,
                 sizeof sa.sun_path - 1);
    return -1;
  }
  if (sv_unix_path_claim(path, err) != SG_OK) return -1;
  memcpy(sa.sun_path, path, strlen(path) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    sg_error_set(err, SG_UNAVAILABLE, "unix:%s: socket: %s", path, strerror(errno));
    return -1;
  }
  mode_t old_mask = umask(0177); /* never a moment with a wider mode */
  int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
  int e = errno;
  umask(old_mask);
  if (rc == 0 && listen(fd, 128) != 0) {
    e = errno;
    rc = -1;
    unlink(path);
  }
  if (rc != 0) {
    close(fd);
    sg_error_set(err, SG_UNAVAILABLE, "cannot listen on unix:%s: %s", path, strerror(e));
    return -1;
  }
  chmod(path, 0600);
  return fd;
}
