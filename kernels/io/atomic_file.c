/* io/atomic_file.c — atomic replacement of files (temporary file, fsync, rename,
 * fsync of the folder), mkdir -p and the wall clock: what checkpoints rely on. */
#include "atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { BUFFER_BYTES = 1 << 20 };

/* The folder part of path ("." when none), newly allocated. */
static char *folder_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  return strndup(path, (size_t)(slash - path));
}

static unsigned long long tmp_counter;

tide_status atomic_file_begin(atomic_file *a, const char *path, const char *who) {
  memset(a, 0, sizeof *a);
  a->fd = -1;
  a->who = who;
  if (!path || !*path) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the file path is empty", who);
  size_t n = strlen(path);
  if (path[n - 1] == '/') return TIDE_FAIL(TIDE_ERR_VALUE, "%s: '%s' names a folder, not a file", who, path);
  tide_status st = tide_file_check(path, true);
  if (st) return st;
  a->path = strdup(path);
  a->tmp = malloc(n + 64);
  a->buf = malloc(BUFFER_BYTES);
  if (!a->path || !a->tmp || !a->buf) {
    atomic_file_abort(a);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory while writing '%s'", who, path);
  }
  a->cap = BUFFER_BYTES;
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path + 1) : 0;
  /* A hidden name in the same folder (so rename stays on one file system),
   * unique per process, call and time; O_EXCL makes a clash a retry. */
  for (int attempt = 0; attempt < 100; attempt++) {
    unsigned long long k = __atomic_add_fetch(&tmp_counter, 1, __ATOMIC_RELAXED);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(a->tmp, n + 64, "%.*s.%s.tmp-%ld-%llu-%lx", (int)dir_len, path, path + dir_len, (long)getpid(), k,
             (unsigned long)ts.tv_nsec);
    a->fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (a->fd >= 0 || errno != EEXIST) break;
  }
  if (a->fd < 0) {
    int e = errno;
    free(a->tmp);
    a->tmp = NULL; /* nothing was created */
    atomic_file_abort(a);
    return TIDE_FAIL(TIDE_ERR_IO, "%s: cannot write '%s': %s", who, path, strerror(e));
  }
  return TIDE_OK;
}

/* The <pid> of a temporary name's tail "<pid>-<n>-<hex>" (all of it, nothing
 * after), or -1 when the tail is not one. */
static long tmp_owner(const char *tail) {
  char *end;
  errno = 0;
  long pid = strtol(tail, &end, 10);
  if (errno || end == tail || *end != '-' || pid <= 0) return -1;
  const char *p = end + 1;
  if (*p < '0' || *p > '9') return -1;
  strtoull(p, &end, 10);
  if (errno || *end != '-') return -1;
  p = end + 1;
  if (!*p) return -1;
  for (; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return -1;
  return pid;
}

tide_status tide_remove_stale_temporaries(const char *dir, const char *prefix, const char *suffix, int *removed) {
  if (removed) *removed = 0;
  if (!dir || !*dir || !prefix || !*prefix)
    return TIDE_FAIL(TIDE_ERR_VALUE, "removing stale temporary files: a folder and a name prefix are needed");
  tide_status st = tide_file_check(dir, true);
  if (st) return st;
  DIR *d = opendir(dir);
  if (!d) {
    if (errno == ENOENT) return TIDE_OK;
    return TIDE_FAIL(TIDE_ERR_IO, "removing stale temporary files: cannot read the folder '%s': %s", dir,
                     strerror(errno));
  }
  size_t np = strlen(prefix), ns = suffix ? strlen(suffix) : 0;
  long self = (long)getpid();
  int count = 0;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    const char *name = ent->d_name;
    if (name[0] != '.') continue;
    /* the last ".tmp-": a name may hold the word itself */
    const char *mark = NULL;
    for (const char *p = strstr(name, ".tmp-"); p; p = strstr(p + 1, ".tmp-")) mark = p;
    if (!mark) continue;
    size_t base_len = (size_t)(mark - name) - 1; /* between the leading '.' and ".tmp-" */
    const char *base = name + 1;
    if (suffix ? (base_len < np + ns || memcmp(base, prefix, np) != 0 ||
                  memcmp(base + base_len - ns, suffix, ns) != 0)
               : (base_len != np || memcmp(base, prefix, np) != 0))
      continue;
    long pid = tmp_owner(mark + 5);
    if (pid < 0 || pid == self) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge (EPERM) */
    size_t nd = strlen(dir), nn = strlen(name);
    char *full = malloc(nd + nn + 2);
    if (!full) {
      closedir(d);
      return TIDE_FAIL(TIDE_ERR_MEMORY, "removing stale temporary files: out of memory");
    }
    snprintf(full, nd + nn + 2, "%s/%s", dir, name);
    struct stat st;
    if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) && unlink(full) == 0) count++;
    free(full);
  }
  closedir(d);
  if (removed) *removed = count;
  return TIDE_OK;
}

/* write(2) all of it, across short writes and signals. */
static int write_all(int fd, const unsigned char *p, size_t n) {
  while (n > 0) {
    size_t chunk = n > (1u << 30) ? (1u << 30) : n;
    ssize_t w = write(fd, p, chunk);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

enum { WRITEBACK_STEP = 8 << 20 };

/* Start writing back each 8 MiB to disk as soon as it is written, without
 * waiting (Linux's sync_file_range), so the fsync at the end finds most of
 * the file already on its way: the disk works while tide still writes. */
static void start_writeback(atomic_file *a) {
#ifdef SYNC_FILE_RANGE_WRITE
  if (a->written - a->synced < WRITEBACK_STEP) return;
  sync_file_range(a->fd, (off_t)a->synced, (off_t)(a->written - a->synced), SYNC_FILE_RANGE_WRITE);
  a->synced = a->written;
#else
  (void)a;
#endif
}

static tide_status io_failure(atomic_file *a, const char *what) {
  return TIDE_FAIL(TIDE_ERR_IO, "%s: cannot write '%s': %s failed: %s", a->who, a->path, what, strerror(errno));
}

static tide_status flush(atomic_file *a) {
  if (a->used == 0) return TIDE_OK;
  if (write_all(a->fd, a->buf, a->used) != 0) return io_failure(a, "write");
  a->written += a->used;
  a->used = 0;
  start_writeback(a);
  return TIDE_OK;
}

tide_status atomic_file_write(atomic_file *a, const void *data, size_t n) {
  const unsigned char *p = data;
  if (a->used + n <= a->cap) {
    if (n) memcpy(a->buf + a->used, p, n);
    a->used += n;
    return TIDE_OK;
  }
  tide_status st = flush(a);
  if (st) return st;
  if (n >= a->cap) {
    if (write_all(a->fd, p, n) != 0) return io_failure(a, "write");
    a->written += n;
    start_writeback(a);
    return TIDE_OK;
  }
  memcpy(a->buf, p, n);
  a->used = n;
  return TIDE_OK;
}

static void free_parts(atomic_file *a) {
  free(a->path);
  free(a->tmp);
  free(a->buf);
  a->path = a->tmp = NULL;
  a->buf = NULL;
}

void atomic_file_abort(atomic_file *a) {
  if (a->fd >= 0) close(a->fd);
  a->fd = -1;
  if (a->tmp) unlink(a->tmp);
  free_parts(a);
}

tide_status atomic_file_commit(atomic_file *a) {
  tide_status st = flush(a);
  if (!st && fsync(a->fd) != 0) st = io_failure(a, "fsync");
  if (!st) {
    int fd = a->fd;
    a->fd = -1;
    if (close(fd) != 0) st = io_failure(a, "close");
  }
  if (!st && rename(a->tmp, a->path) != 0) st = io_failure(a, "rename");
  if (st) {
    atomic_file_abort(a);
    return st;
  }
  /* The rename is durable once the folder's entry is: fsync the folder. A
   * file system that cannot fsync a folder (EINVAL) has nothing to make durable. */
  char *dir = folder_of(a->path);
  int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (dfd >= 0) {
    if (fsync(dfd) != 0 && errno != EINVAL && errno != EROFS) st = io_failure(a, "fsync of the folder");
    close(dfd);
  }
  free(dir);
  free_parts(a);
  return st;
}

tide_status tide_write_file_atomic(const char *path, const void *data, size_t nbytes) {
  atomic_file a;
  tide_status st = atomic_file_begin(&a, path, "write_file_atomic");
  if (st) return st;
  st = atomic_file_write(&a, data, nbytes);
  if (st) {
    atomic_file_abort(&a);
    return st;
  }
  return atomic_file_commit(&a);
}

tide_status tide_make_dirs(const char *path) {
  if (!path || !*path) return TIDE_FAIL(TIDE_ERR_VALUE, "make_dirs: the path is empty");
  tide_status checked = tide_file_check(path, true);
  if (checked) return checked;
  char *p = strdup(path);
  if (!p) return TIDE_FAIL(TIDE_ERR_MEMORY, "make_dirs: out of memory");
  tide_status st = TIDE_OK;
  for (char *s = p + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        st = TIDE_FAIL(TIDE_ERR_IO, "make_dirs: cannot make the folder '%s': %s", p, strerror(errno));
        break;
      }
      *s = c;
      if (c == '\0') break;
    }
  }
  struct stat sb;
  if (!st && (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode)))
    st = TIDE_FAIL(TIDE_ERR_IO, "make_dirs: '%s' exists and is not a folder", p);
  free(p);
  return st;
}

double tide_wall_clock_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
