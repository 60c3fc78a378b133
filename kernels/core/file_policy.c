/* core/file_policy.c — file policies (tide/files.h): the folder a host lets
 * tide's file functions touch while its scripts run, checked after symbolic
 * links are resolved, per thread like memory accounts; and tide_file_open,
 * the one open every reader and writer uses (the policy, no link swapped in,
 * no FIFO or device to block on). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tide/files.h"
#include "internal.h"

struct tide_file_policy {
  int64_t refs; /* atomic */
  char *root;   /* resolved, no trailing '/'; NULL: no files at all */
};

static __thread tide_file_policy *current_policy;

/* Path buffers: a resolution may hold a link's target and what follows it. */
enum { MAX_LINKS = 40, WORK = 2 * PATH_MAX };

/* `path` made absolute with every symbolic link resolved, one component at
 * a time: a link is followed to what it names whether that exists or not
 * (a dangling link planted inside the root is judged by where it points,
 * which is where a writer following it would create the file). Components
 * past the first that does not exist are appended as written; a ".." among
 * them is refused (it cannot be resolved without the folders it names). */
static tide_status resolve(const char *path, char out[PATH_MAX]) {
  char todo[WORK], next[WORK], link[PATH_MAX];
  size_t plen = strlen(path);
  if (path[0] == '/') {
    if (plen >= sizeof todo) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: the path is too long");
    memcpy(todo, path, plen + 1);
  } else {
    if (!getcwd(todo, PATH_MAX)) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: cannot read the working folder");
    size_t n = strlen(todo);
    if (n + 1 + plen >= sizeof todo) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: the path is too long");
    todo[n] = '/';
    memcpy(todo + n + 1, path, plen + 1);
  }
  strcpy(out, "/");
  size_t done = 1; /* strlen(out); out has no symbolic link in it */
  bool missing = false;
  int links = 0;
  const char *t = todo;
  for (;;) {
    while (*t == '/') t++;
    size_t len = strcspn(t, "/");
    if (len == 0) break;
    const char *c = t;
    t += len;
    if (len == 1 && c[0] == '.') continue;
    if (len == 2 && c[0] == '.' && c[1] == '.') {
      if (missing)
        return TIDE_FAIL(TIDE_ERR_IO, "file access refused: '%s' climbs out of a folder that does not exist", path);
      while (done > 1 && out[done - 1] != '/') done--; /* out has no links: ".." is its parent */
      if (done > 1) done--;
      out[done] = '\0';
      continue;
    }
    if (done + 1 + len >= PATH_MAX) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: the path is too long");
    size_t at = done;
    if (done > 1) out[done++] = '/';
    memcpy(out + done, c, len);
    done += len;
    out[done] = '\0';
    if (missing) continue;
    struct stat st;
    if (lstat(out, &st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR)
        return TIDE_FAIL(TIDE_ERR_IO, "file access refused: cannot resolve '%s': %s", path, strerror(errno));
      missing = true; /* the rest is to be made: taken as written */
      continue;
    }
    if (!S_ISLNK(st.st_mode)) continue;
    if (++links > MAX_LINKS)
      return TIDE_FAIL(TIDE_ERR_IO, "file access refused: cannot resolve '%s': too many symbolic links", path);
    ssize_t n = readlink(out, link, sizeof link - 1);
    if (n < 0) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: cannot resolve '%s': %s", path, strerror(errno));
    link[n] = '\0';
    /* the link's target, then what followed the link */
    size_t rest = strlen(t);
    if ((size_t)n + 1 + rest >= sizeof next) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: the path is too long");
    memcpy(next, link, (size_t)n);
    next[n] = '/';
    memcpy(next + n + 1, t, rest + 1);
    memcpy(todo, next, (size_t)n + 1 + rest + 1);
    t = todo;
    /* an absolute target starts over; a relative one from the link's folder */
    done = link[0] == '/' ? 1 : (at > 1 ? at : 1);
    out[done] = '\0';
  }
  return TIDE_OK;
}

/* True when the resolved path lies under the policy's root. */
static bool inside(const tide_file_policy *p, const char *resolved) {
  size_t n = strlen(p->root);
  return strcmp(p->root, "/") == 0 ||
         (strncmp(resolved, p->root, n) == 0 && (resolved[n] == '\0' || resolved[n] == '/'));
}

tide_file_policy *tide_file_policy_new(const char *root) {
  tide_file_policy *p = calloc(1, sizeof *p);
  if (!p) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory: cannot make a file policy");
    return NULL;
  }
  p->refs = 1;
  if (root) {
    char resolved[PATH_MAX];
    if (!realpath(root, resolved)) {
      TIDE_FAIL(TIDE_ERR_IO, "file policy: the root folder '%s' cannot be resolved: %s", root, strerror(errno));
      free(p);
      return NULL;
    }
    size_t n = strlen(resolved);
    if (n > 1 && resolved[n - 1] == '/') resolved[--n] = '\0';
    if (!(p->root = strdup(resolved))) {
      TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory: cannot make a file policy");
      free(p);
      return NULL;
    }
  }
  return p;
}

void tide_file_policy_retain(tide_file_policy *p) {
  if (p) __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
}

void tide_file_policy_release(tide_file_policy *p) {
  if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    free(p->root);
    free(p);
  }
}

tide_file_policy *tide_file_policy_swap(tide_file_policy *p) {
  tide_file_policy *prev = current_policy;
  current_policy = p;
  return prev;
}

tide_file_policy *tide_file_policy_current(void) { return current_policy; }

tide_status tide_file_check(const char *path, bool write) {
  const tide_file_policy *p = current_policy;
  if (!p) return TIDE_OK;
  const char *verb = write ? "write" : "read";
  if (!path) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: no path given");
  if (!p->root)
    return TIDE_FAIL(TIDE_ERR_IO, "file access refused: cannot %s '%s': this host allows its scripts no files", verb, path);
  char resolved[PATH_MAX];
  tide_status st = resolve(path, resolved);
  if (st) return st;
  if (!inside(p, resolved))
    return TIDE_FAIL(TIDE_ERR_IO, "file access refused: cannot %s '%s': it lies outside '%s', the folder this host "
                     "allows its scripts", verb, path, p->root);
  return TIDE_OK;
}

/* ---- opening ------------------------------------------------------------------ */

/* Why this thread's last tide_file_open failed. */
static __thread const char *open_why;
static __thread char open_why_buf[160];

const char *tide_file_why(void) { return open_why ? open_why : "unknown error"; }

/* Fail an open: errno `err`, the reason (NULL: strerror(err)). */
static int open_failed(int err, const char *why) {
  if (why) {
    snprintf(open_why_buf, sizeof open_why_buf, "%s", why);
    open_why = open_why_buf;
  } else {
    open_why = strerror(err);
  }
  errno = err;
  return -1;
}

/* What a file of mode `m` is, for messages. */
static const char *kind_of(mode_t m) {
  return S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : "not a regular file";
}

/* open(2) of a resolved path that no symbolic link may enter any more: a
 * link swapped in since the check is refused (ELOOP), not followed. */
static int open_no_links(const char *resolved, int flags, int mode) {
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = (uint64_t)flags;
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? (uint64_t)mode : 0;
  how.resolve = RESOLVE_NO_SYMLINKS;
  long fd = syscall(SYS_openat2, AT_FDCWD, resolved, &how, sizeof how);
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return (int)fd;
  return open(resolved, flags | O_NOFOLLOW, mode); /* no openat2 (old kernel, seccomp): the last component at least */
}

int tide_file_open(const char *path, int flags, int mode) {
  open_why = NULL;
  if (!path) return open_failed(EINVAL, "no path given");
  bool folder = (flags & O_DIRECTORY) != 0;
  bool reading = (flags & O_ACCMODE) == O_RDONLY && !folder;
  /* O_NONBLOCK: opening a FIFO must not wait for its other end; fstat refuses it next. */
  int f = flags | O_CLOEXEC | (folder ? 0 : O_NONBLOCK);
  const tide_file_policy *p = current_policy;
  int fd;
  if (p && (!p->root || strcmp(p->root, "/") != 0)) {
    char resolved[PATH_MAX];
    if (!p->root || resolve(path, resolved) != TIDE_OK || !inside(p, resolved))
      return open_failed(EACCES, "file access refused by this host's file policy");
    fd = open_no_links(resolved, f, mode);
  } else {
    fd = open(path, f, mode);
  }
  if (fd < 0) {
    int e = errno;
    struct stat sb;
    /* A FIFO opened to write with no reader fails ENXIO (O_NONBLOCK) before fstat could name it. */
    if (e == ENXIO && !folder && stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode))
      return open_failed(e, "it is a FIFO, not a regular file");
    return open_failed(e, e == ELOOP && p ? "a symbolic link appeared in its path while it was opened" : NULL);
  }
  if (folder) return fd;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return open_failed(e, NULL);
  }
  /* Readers take regular files only; writers also a character device (/dev/null), never what would block. */
  if (!S_ISREG(st.st_mode) && (reading || !S_ISCHR(st.st_mode))) {
    close(fd);
    char why[64];
    snprintf(why, sizeof why, "it is %s, not a regular file", kind_of(st.st_mode));
    return open_failed(S_ISDIR(st.st_mode) ? EISDIR : EINVAL, why);
  }
  if (!(flags & O_NONBLOCK)) {
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  }
  return fd;
}

tide_status tide_file_probe(const char *path, bool write) {
  tide_status st = tide_file_check(path, write);
  if (st) return st;
  struct stat sb;
  if (stat(path, &sb) != 0) return TIDE_OK; /* missing (to be made) or unreadable: the open says why */
  if (S_ISREG(sb.st_mode) || (write && S_ISCHR(sb.st_mode))) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_IO, "cannot %s '%s': it is %s, not a regular file", write ? "write" : "read", path,
                   kind_of(sb.st_mode));
}

FILE *tide_file_fopen(const char *path, const char *mode) {
  int flags = mode[0] == 'r' ? O_RDONLY : mode[0] == 'a' ? O_WRONLY | O_CREAT | O_APPEND : O_WRONLY | O_CREAT | O_TRUNC;
  int fd = tide_file_open(path, flags, 0666);
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, mode);
  if (!f) {
    int e = errno;
    close(fd);
    open_failed(e, NULL);
  }
  return f;
}
