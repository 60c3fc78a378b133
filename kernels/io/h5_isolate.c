/* io/h5_isolate.c — reading an HDF5 file in a child process. libhdf5 (1.10
 * in Debian 12) trusts a file's metadata in places: fuzzing made it crash
 * on corrupt files (a SEGV in its global heap reader, a stack smash). A
 * crash in the child is a clean error in the caller's process, never its
 * end. The child opens and walks the file with h5_file.c's code, reads
 * every dataset, streams the tree and the tensors back over a pipe and
 * exits; the parent checks every length it is sent (a child libhdf5 was
 * subverted in is not trusted either) and serves tide_h5_read from what it
 * received. h5_open_image_here (in this process) stays for fuzzing and for
 * TIDE_H5_IN_PROCESS=1, for hosts whose own sandbox forbids fork. */
#include "h5_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The stream, in the host's byte order: "TH5\1", u32 status, then either
 * u32 length + message (the open failed) or u64 length + tree JSON and
 * records, each u8 kind (REC_TENSOR / REC_ERROR / REC_END), u32 length +
 * dataset path, then i32 dtype, i32 ndim, i64 dims[ndim], u64 bytes + data,
 * or i32 status, u32 length + message. */
enum { REC_END = 0, REC_TENSOR = 1, REC_ERROR = 2 };
static const char MAGIC[4] = { 'T', 'H', '5', 1 };
enum { MAX_MESSAGE = 1024, MAX_PATH = 4096 + 2 };
/* The child's silence after which it counts as hung (a huge compressed
 * dataset inflates well within this). */
static const int IDLE_MS = 120000;

struct h5_entry {
  char *path;
  tide_status status; /* TIDE_OK: a tensor; else the read's failure */
  char *message;
  int dtype, ndim;
  int64_t dims[TIDE_MAX_DIMS];
  void *data;
  size_t bytes;
};

/* ---- the child -------------------------------------------------------------- */

typedef struct out_stream {
  int fd;
  unsigned char buf[1 << 16];
  size_t used;
} out_stream;

static void out_flush(out_stream *o) {
  size_t at = 0;
  while (at < o->used) {
    ssize_t k = write(o->fd, o->buf + at, o->used - at);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) _exit(3); /* the parent went away */
    at += (size_t)k;
  }
  o->used = 0;
}

static void out_bytes(out_stream *o, const void *p, size_t n) {
  const unsigned char *s = p;
  while (n) {
    if (o->used == sizeof o->buf) out_flush(o);
    size_t k = sizeof o->buf - o->used;
    if (k > n) k = n;
    memcpy(o->buf + o->used, s, k);
    o->used += k;
    s += k;
    n -= k;
  }
}

static void out_u32(out_stream *o, uint32_t v) { out_bytes(o, &v, sizeof v); }
static void out_i32(out_stream *o, int32_t v) { out_bytes(o, &v, sizeof v); }
static void out_u64(out_stream *o, uint64_t v) { out_bytes(o, &v, sizeof v); }

static void out_text(out_stream *o, const char *s, size_t cap) {
  size_t n = strnlen(s, cap);
  out_u32(o, (uint32_t)n);
  out_bytes(o, s, n);
}

/* Open, walk and read everything; write it to fd; never returns. */
static void child_main(int fd, const char *name, const void *data, size_t n) {
  signal(SIGPIPE, SIG_IGN);
  /* The specs' way to check what a crash inside libhdf5 becomes (no file at
   * hand crashes Debian's current libhdf5 on demand). */
  const char *fault = getenv("TIDE_H5_READER_FAULT");
  if (fault && strcmp(fault, "segv") == 0) raise(SIGSEGV);
  if (fault && strcmp(fault, "garbage") == 0) {
    static const char junk[] = "TH5\1\0\0\0\0\377\377\377\377\377\377\377\377";
    if (write(fd, junk, sizeof junk - 1) < 0) _exit(3);
    _exit(0);
  }
  out_stream *o = malloc(sizeof *o);
  if (!o) _exit(4);
  o->fd = fd;
  o->used = 0;
  out_bytes(o, MAGIC, sizeof MAGIC);
  tide_h5 *f = h5_open_image_here(name, data, n);
  if (!f) {
    out_u32(o, (uint32_t)(tide_last_status() ? tide_last_status() : TIDE_ERR_VALUE));
    out_text(o, tide_last_error(), MAX_MESSAGE);
    out_flush(o);
    _exit(0);
  }
  out_u32(o, TIDE_OK);
  size_t tree_n = strlen(f->tree);
  out_u64(o, tree_n);
  out_bytes(o, f->tree, tree_n);
  cJSON *list = cJSON_Parse(f->tree);
  if (!list) _exit(5);
  const cJSON *node;
  cJSON_ArrayForEach(node, list) {
    const cJSON *kind = cJSON_GetObjectItem(node, "kind"), *path = cJSON_GetObjectItem(node, "path");
    if (!cJSON_IsString(kind) || !cJSON_IsString(path) || strcmp(kind->valuestring, "dataset") != 0) continue;
    tide_tensor t;
    memset(&t, 0, sizeof t);
    tide_clear_error();
    tide_status st = h5_read_here(f, path->valuestring, &t, true);
    if (st) {
      unsigned char k = REC_ERROR;
      out_bytes(o, &k, 1);
      out_text(o, path->valuestring, MAX_PATH);
      out_i32(o, (int32_t)st);
      out_text(o, tide_last_error(), MAX_MESSAGE);
      continue;
    }
    unsigned char k = REC_TENSOR;
    out_bytes(o, &k, 1);
    out_text(o, path->valuestring, MAX_PATH);
    out_i32(o, t.dt);
    out_i32(o, t.ndim);
    for (int d = 0; d < t.ndim; d++) out_bytes(o, &t.dims[d], sizeof t.dims[d]);
    uint64_t bytes = (uint64_t)t.nelem * tide_dtype_size(t.dt);
    out_u64(o, bytes);
    out_bytes(o, t.data, (size_t)bytes);
    tide_tensor_release(&t);
  }
  unsigned char end = REC_END;
  out_bytes(o, &end, 1);
  out_flush(o);
  _exit(0);
}

/* ---- the parent ------------------------------------------------------------- */

typedef struct in_stream {
  int fd;
  const char *name;
  bool failed; /* the stream broke off or lied; the child is killed */
} in_stream;

static bool in_bytes(in_stream *in, void *p, size_t n) {
  unsigned char *d = p;
  while (n && !in->failed) {
    struct pollfd pfd = { in->fd, POLLIN, 0 };
    int r = poll(&pfd, 1, IDLE_MS);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      in->failed = true;
      break;
    }
    ssize_t k = read(in->fd, d, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      in->failed = true;
      break;
    }
    d += k;
    n -= (size_t)k;
  }
  return !in->failed;
}

static bool in_u32(in_stream *in, uint32_t *v) { return in_bytes(in, v, sizeof *v); }
static bool in_i32(in_stream *in, int32_t *v) { return in_bytes(in, v, sizeof *v); }
static bool in_u64(in_stream *in, uint64_t *v) { return in_bytes(in, v, sizeof *v); }

/* A string of at most cap bytes, NUL-terminated; NULL when the stream failed. */
static char *in_text(in_stream *in, size_t cap) {
  uint32_t n;
  if (!in_u32(in, &n)) return NULL;
  if (n > cap) {
    in->failed = true;
    return NULL;
  }
  char *s = malloc((size_t)n + 1);
  if (!s) {
    in->failed = true;
    return NULL;
  }
  if (!in_bytes(in, s, n)) {
    free(s);
    return NULL;
  }
  s[n] = '\0';
  return s;
}

static void free_entries(tide_h5 *f) {
  for (int i = 0; i < f->n_entries; i++) {
    free(f->entries[i].path);
    free(f->entries[i].message);
    free(f->entries[i].data);
  }
  free(f->entries);
  f->entries = NULL;
  f->n_entries = 0;
}

static bool add_entry(tide_h5 *f, int *cap, h5_entry *e) {
  if (f->n_entries == *cap) {
    int c = *cap ? *cap * 2 : 16;
    h5_entry *v = realloc(f->entries, (size_t)c * sizeof *v);
    if (!v) return false;
    f->entries = v;
    *cap = c;
  }
  f->entries[f->n_entries++] = *e;
  return true;
}

/* Read one record into f; false at the end or on a failure (in->failed). */
static bool read_record(in_stream *in, tide_h5 *f, int *cap, uint64_t *budget) {
  unsigned char kind;
  if (!in_bytes(in, &kind, 1) || kind == REC_END) return false;
  h5_entry e;
  memset(&e, 0, sizeof e);
  if ((kind != REC_TENSOR && kind != REC_ERROR) || !(e.path = in_text(in, MAX_PATH))) {
    in->failed = true;
    return false;
  }
  bool ok = false;
  if (kind == REC_ERROR) {
    int32_t st;
    ok = in_i32(in, &st) && st > 0 && st <= TIDE_ERR_INTERNAL && (e.message = in_text(in, MAX_MESSAGE)) != NULL;
    e.status = (tide_status)st;
  } else {
    int32_t dt, nd;
    uint64_t bytes, count = 1;
    ok = in_i32(in, &dt) && in_i32(in, &nd) && nd >= 0 && nd <= TIDE_MAX_DIMS && tide_dtype_size(dt) > 0;
    for (int d = 0; ok && d < nd; d++)
      ok = in_bytes(in, &e.dims[d], sizeof e.dims[d]) && e.dims[d] >= 0 &&
           !__builtin_mul_overflow(count, (uint64_t)e.dims[d], &count);
    ok = ok && in_u64(in, &bytes) && count <= UINT64_MAX / tide_dtype_size(dt) &&
         bytes == count * tide_dtype_size(dt) && bytes <= *budget;
    if (ok) {
      e.dtype = dt;
      e.ndim = nd;
      e.bytes = (size_t)bytes;
      *budget -= bytes;
      e.data = malloc(bytes ? bytes : 1);
      ok = e.data && in_bytes(in, e.data, bytes);
    }
  }
  if (!ok || !add_entry(f, cap, &e)) {
    free(e.path);
    free(e.message);
    free(e.data);
    in->failed = true;
    return false;
  }
  return true;
}

/* Wait for the child; a description of how it ended when that was not a
 * clean exit (nor the SIGKILL the parent sent it, `killed`). */
static const char *reap(pid_t pid, bool killed, char *buf, size_t n) {
  int status = 0;
  pid_t r;
  do r = waitpid(pid, &status, 0);
  while (r < 0 && errno == EINTR);
  if (r < 0) return NULL; /* a host that ignores SIGCHLD: the stream alone decides */
  if (WIFSIGNALED(status)) {
    if (killed && WTERMSIG(status) == SIGKILL) return NULL;
    snprintf(buf, n, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    return buf;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    snprintf(buf, n, "exit status %d", WEXITSTATUS(status));
    return buf;
  }
  return NULL;
}

tide_h5 *h5_open_image_isolated(tide_h5 *f, const void *data, size_t n) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    tide_set_error(TIDE_ERR_IO, "hdf5: cannot start the reader process for '%s': %s", f->name, strerror(errno));
    tide_h5_close(f);
    return NULL;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    child_main(fds[1], f->name, data, n);
  }
  close(fds[1]);
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    tide_set_error(TIDE_ERR_IO, "hdf5: cannot start the reader process for '%s': %s (TIDE_H5_IN_PROCESS=1 reads "
                   "in this process instead)", f->name, strerror(e));
    tide_h5_close(f);
    return NULL;
  }
  in_stream in = { fds[0], f->name, false };
  char magic[4];
  uint32_t st = 0;
  tide_status result = TIDE_OK;
  char *message = NULL;
  /* What the child may send: every dataset's bytes within the bomb rules, and never more than this. */
  uint64_t budget = (uint64_t)n * 64 + ((uint64_t)1 << 30);
  if (in_bytes(&in, magic, 4) && memcmp(magic, MAGIC, 4) == 0 && in_u32(&in, &st)) {
    if (st != TIDE_OK) {
      message = in_text(&in, MAX_MESSAGE);
      result = st <= TIDE_ERR_INTERNAL ? (tide_status)st : TIDE_ERR_VALUE;
    } else {
      uint64_t tree_n;
      if (in_u64(&in, &tree_n) && tree_n <= (uint64_t)n * 16 + ((uint64_t)1 << 20) && (f->tree = malloc(tree_n + 1)) &&
          in_bytes(&in, f->tree, tree_n)) {
        f->tree[tree_n] = '\0';
        int cap = 0;
        while (read_record(&in, f, &cap, &budget)) {
        }
      } else {
        in.failed = true;
      }
    }
  } else {
    in.failed = true;
  }
  if (in.failed) kill(pid, SIGKILL);
  close(fds[0]);
  char how[96];
  const char *died = reap(pid, in.failed, how, sizeof how);
  if (died || in.failed || (result && !message)) {
    if (died)
      tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s' is not a readable HDF5 file: libhdf5 failed on it with %s (it ran "
                     "in a reader process, so only that process ended)", f->name, how);
    else
      tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s' is not a readable HDF5 file: its reader process sent a broken "
                     "answer or hung", f->name);
    free(message);
    tide_h5_close(f);
    return NULL;
  }
  if (result) {
    tide_set_error(result, "%s", message);
    free(message);
    tide_h5_close(f);
    return NULL;
  }
  f->isolated = 1;
  return f;
}

/* The dataset at path ("/a/b" or "a/b"), as the reader process sent it. */
tide_status h5_read_isolated(tide_h5 *f, const char *path, tide_tensor *out) {
  const char *p = path;
  while (*p == '/') p++;
  for (int i = 0; i < f->n_entries; i++) {
    const h5_entry *e = &f->entries[i];
    if (strcmp(e->path, p) != 0) continue;
    if (e->status) return tide_set_error(e->status, "%s", e->message);
    tide_status st = tide_tensor_init_heap(out, e->dtype, e->ndim, e->ndim ? e->dims : NULL);
    if (st) return st;
    if (e->bytes) memcpy((void *)out->data, e->data, e->bytes);
    return TIDE_OK;
  }
  return tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s' has no dataset '%s'", f->name, path);
}

void h5_free_isolated(tide_h5 *f) { free_entries(f); }
