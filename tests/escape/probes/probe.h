/* Shared by the escape probes: each probe tries one way out for real and
 * prints one line, "RESULT <token>", where token is the errno name of the
 * refusal, or OPEN when the way out worked (EMPTY: opened, but no bytes). */
#ifndef PX_PROBE_H
#define PX_PROBE_H
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline const char* px_errno_name(int e) {
  switch (e) {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ESRCH: return "ESRCH";
    case EACCES: return "EACCES";
    case EBUSY: return "EBUSY";
    case EEXIST: return "EEXIST";
    case EXDEV: return "EXDEV";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case EINVAL: return "EINVAL";
    case ENOTTY: return "ENOTTY";
    case EROFS: return "EROFS";
    case ENOSYS: return "ENOSYS";
    case ELOOP: return "ELOOP";
    case ENETUNREACH: return "ENETUNREACH";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case ECONNREFUSED: return "ECONNREFUSED";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EBADF: return "EBADF";
    case ENXIO: return "ENXIO";
    case ENODEV: return "ENODEV";
    case EFAULT: return "EFAULT";
    case EAGAIN: return "EAGAIN";
    default: return "E?";
  }
}

static inline int px_result(const char* token) {
  printf("RESULT %s\n", token);
  fflush(stdout);
  return 0;
}
/* mkdir -p of PATH's parent directories (errors ignored: the probe's own
 * operation reports what matters). */
#include <sys/stat.h>
static inline void px_make_parents(const char* path) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path);
  for (char* p = buf + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = 0;
    mkdir(buf, 0755);
    *p = '/';
  }
}
/* The outcome of a syscall that returned `rc`: OPEN when it worked. */
static inline int px_errno_result(long rc) { return px_result(rc >= 0 ? "OPEN" : px_errno_name(errno)); }
#endif
