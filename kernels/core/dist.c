/* core/dist.c — the world of processes tide.distribute trains in: size 1
 * without MPI, or libtide_mpi.so (loaded at run time) under mpirun. */
#include "dist_backend.h"
#include "internal.h"
#include "tide/dist.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only the Lua thread joins, reduces and broadcasts: no lock. */
static int joined;       /* init ran (and succeeded) */
static int rank_, world_ = 1;
static tide_dist_backend backend;
static const tide_dist_backend *mpi; /* &backend under mpirun, else NULL */
/* Seconds a collective waits for the others before failing. TF's collectives
 * wait without limit (CommunicationOptions.timeout_seconds=None) and find dead
 * peers by a health check (every 30 s, 10 s to answer, 3 tries); tide has
 * no side channel, so the collective itself times out.
 * 5 minutes: longer than a worker may fairly lag (the chief writing a large
 * checkpoint, a first trace, a slow file system), short enough that a job
 * with a stuck worker frees its machines soon. */
#define DEFAULT_TIMEOUT_S 300.0
static double timeout_s = DEFAULT_TIMEOUT_S;
static pthread_t joiner;                 /* the thread that joined: MPI was started for it alone (FUNNELED) */
static int64_t calls;                    /* collectives handed to the backend */
static void *scratch;                    /* all_reduce_sum_packed's bucket buffer, grown on demand */
static size_t scratch_size;

/* Open MPI's launcher sets these in every process it starts. */
static int launched_by_mpirun(void) {
  const char *s = getenv("OMPI_COMM_WORLD_SIZE");
  return (s && *s) || getenv("PMIX_RANK") != NULL;
}

/* libtide_mpi.so beside libtide.so, unless TIDE_MPI_LIBRARY names another. */
static void backend_path(char *buf, size_t size) {
  const char *env = getenv("TIDE_MPI_LIBRARY");
  if (env && *env) {
    snprintf(buf, size, "%s", env);
    return;
  }
  Dl_info info;
  if (dladdr((void *)&tide_dist_init, &info) && info.dli_fname) {
    snprintf(buf, size, "%s", info.dli_fname);
    char *slash = strrchr(buf, '/');
    if (slash) {
      snprintf(slash + 1, size - (size_t)(slash + 1 - buf), "libtide_mpi.so");
      return;
    }
  }
  snprintf(buf, size, "libtide_mpi.so");
}

static void finalize_at_exit(void) {
  free(scratch);
  scratch = NULL;
  scratch_size = 0;
  char why[512];
  if (mpi && mpi->finalize(why, sizeof why)) fprintf(stderr, "tide: %s\n", why);
  mpi = NULL;
}

/* A timeout in seconds: positive, "inf" for none. */
static tide_status parse_timeout(const char *text, double *out) {
  char *end = NULL;
  double v = strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0))
    return TIDE_FAIL(TIDE_ERR_VALUE,
                     "tide.distribute: TIDE_DIST_TIMEOUT must be a positive number of seconds (or inf), got '%.60s'",
                     text);
  *out = v;
  return TIDE_OK;
}

tide_status tide_dist_init(void) {
  if (joined) return TIDE_OK;
  const char *env = getenv("TIDE_DIST_TIMEOUT");
  if (env && *env) {
    tide_status st = parse_timeout(env, &timeout_s);
    if (st) return st;
  }
  if (!launched_by_mpirun()) {
    joined = 1;
    return TIDE_OK;
  }
  char path[4096];
  backend_path(path, sizeof path);
  /* RTLD_GLOBAL: Open MPI's own plugins look up libmpi's symbols globally. */
  void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    const char *e = dlerror();
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED,
                     "tide.distribute: this process was started by mpirun but the MPI backend did not load (%.400s); "
                     "build tide with Open MPI installed (libopenmpi-dev) so that libtide_mpi.so is made",
                     e ? e : path);
  }
  tide_dist_backend_init_fn init = (tide_dist_backend_init_fn)(uintptr_t)dlsym(lib, TIDE_DIST_BACKEND_INIT);
  memset(&backend, 0, sizeof backend);
  if (!init || init(&backend) || backend.abi != TIDE_DIST_BACKEND_ABI || backend.size != sizeof backend)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "tide.distribute: %.400s is not an MPI backend for this libtide", path);
  char why[512] = "";
  int r = 0, w = 1;
  if (backend.init(&r, &w, why, sizeof why))
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "tide.distribute: MPI did not start: %s", why);
  rank_ = r;
  world_ = w;
  mpi = &backend;
  mpi->set_timeout(timeout_s);
  joiner = pthread_self();
  joined = 1;
  atexit(finalize_at_exit); /* mpirun counts a process that exits without MPI_Finalize as failed */
  return TIDE_OK;
}

int tide_dist_rank(void) { return rank_; }
int tide_dist_size(void) { return world_; }
int tide_dist_uses_mpi(void) { return mpi != NULL; }
int64_t tide_dist_collective_calls(void) { return calls; }

/* MPI was started with MPI_THREAD_FUNNELED: only the joining thread may call
 * it (a traced graph with a collective run on a pipeline thread may not). */
static tide_status check_thread(const char *what) {
  if (mpi && !pthread_equal(pthread_self(), joiner))
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: collectives run on the thread that joined the world (the Lua "
                     "thread), not on a pipeline or pool thread", what);
  return TIDE_OK;
}

tide_status tide_dist_set_timeout(double seconds) {
  if (!(seconds > 0))
    return TIDE_FAIL(TIDE_ERR_VALUE, "tide_dist_set_timeout: the timeout must be a positive number of seconds "
                     "(HUGE_VAL for none), got %g", seconds);
  timeout_s = seconds;
  if (mpi) mpi->set_timeout(seconds);
  return TIDE_OK;
}

double tide_dist_timeout(void) { return timeout_s; }

void tide_dist_abort(int code) {
  if (mpi) mpi->abort_job(code);
}

/* A failed collective as a tide error: a timeout or a broken world is not a
 * file error, but TIDE_ERR_IO is the code for "the outside world failed". */
static tide_status collective_failed(const char *what, const char *why) {
  return TIDE_FAIL(TIDE_ERR_IO, "%s: %s", what, why);
}

/* The checks every collective makes on its tensor. */
static tide_status check_tensor(const char *what, const tide_tensor *t) {
  if (!t) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the tensor is NULL", what);
  if (!joined) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: call tide_dist_init first", what);
  if (t->flags & TIDE_TENSOR_SYMBOLIC)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED,
                     "%s: the tensor is a value of a graph being traced; collectives run eagerly only "
                     "(call them outside tide.trace)", what);
  if (t->dev != TIDE_CPU) return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: the tensor is on a GPU; only CPU tensors are supported", what);
  if (!tide_tensor_is_contiguous(t)) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the tensor must be contiguous (not a view)", what);
  return TIDE_OK;
}

tide_status tide_dist_all_reduce_sum(tide_tensor *t) {
  const char *what = "tide_dist_all_reduce_sum";
  tide_status st = check_tensor(what, t);
  if (st) return st;
  if (t->dt != TIDE_FLOAT32 && t->dt != TIDE_FLOAT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: the tensor is %s; only float32 and float64 are summed", what, tide_dtype_name(t->dt));
  if (!mpi || t->nelem == 0) return TIDE_OK; /* a world of one: the sum is the value */
  if ((st = check_thread(what)) != TIDE_OK) return st;
  char why[512] = "";
  calls++;
  if (mpi->all_reduce_sum(t->data, t->nelem, t->dt == TIDE_FLOAT64 ? TIDE_DIST_F64 : TIDE_DIST_F32, why, sizeof why))
    return collective_failed(what, why);
  return TIDE_OK;
}

tide_status tide_dist_broadcast(tide_tensor *t, int root) {
  const char *what = "tide_dist_broadcast";
  tide_status st = check_tensor(what, t);
  if (st) return st;
  if (root < 0 || root >= world_)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: root %d is not a rank of this world of %d", what, root, world_);
  if (t->dt == TIDE_STRING) return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: string tensors cannot be broadcast", what);
  if (!mpi || t->nelem == 0) return TIDE_OK;
  if ((st = check_thread(what)) != TIDE_OK) return st;
  char why[512] = "";
  calls++;
  if (mpi->broadcast(t->data, t->nelem * (int64_t)tide_dtype_size(t->dt), root, why, sizeof why))
    return collective_failed(what, why);
  return TIDE_OK;
}

tide_status tide_dist_barrier(void) {
  if (!joined) return TIDE_FAIL(TIDE_ERR_VALUE, "tide_dist_barrier: call tide_dist_init first");
  if (!mpi) return TIDE_OK;
  tide_status st = check_thread("tide_dist_barrier");
  if (st) return st;
  char why[512] = "";
  calls++;
  if (mpi->barrier(why, sizeof why)) return collective_failed("tide_dist_barrier", why);
  return TIDE_OK;
}

/* Sum the bytes [0, used) of the scratch buffer (elements of `kind`) over the world: one collective. */
static tide_status reduce_scratch(const char *what, size_t used, int kind, size_t elem) {
  char why[512] = "";
  calls++;
  if (mpi->all_reduce_sum(scratch, (int64_t)(used / elem), kind, why, sizeof why))
    return collective_failed(what, why);
  return TIDE_OK;
}

/* The tensors of dtype dt laid end to end are one stream of bytes: copy its
 * bytes [lo, hi) into buf (pack) or back from it into the tensors. */
static void copy_range(int n, tide_tensor *const *out, int dt, size_t elem, size_t lo, size_t hi, char *buf,
                       bool pack) {
  size_t pos = 0; /* where tensor i starts in the stream */
  for (int i = 0; i < n && pos < hi; i++) {
    if (out[i]->dt != dt) continue;
    size_t bytes = (size_t)out[i]->nelem * elem;
    size_t a = lo > pos ? lo : pos, b = hi < pos + bytes ? hi : pos + bytes;
    if (a < b) {
      char *t = (char *)out[i]->data + (a - pos), *s = buf + (a - lo);
      if (pack) memcpy(s, t, b - a);
      else memcpy(t, s, b - a);
    }
    pos += bytes;
  }
}

tide_status tide_dist_all_reduce_sum_packed(int n, const tide_tensor *const *in, tide_tensor *const *out,
                                            int64_t bucket_bytes) {
  const char *what = "all_reduce_sum";
  if (n < 0 || (n > 0 && (!in || !out))) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: no tensors given", what);
  if (!joined) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: call tide_dist_init first", what);
  for (int i = 0; i < n; i++) {
    const tide_tensor *x = in[i], *o = out[i];
    if (!x || !o) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: tensor %d is NULL", what, i + 1);
    if (x->dt != TIDE_FLOAT32 && x->dt != TIDE_FLOAT64)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: tensor %d is %s; only float32 and float64 are summed", what, i + 1,
                       tide_dtype_name(x->dt));
    if (x->dev != TIDE_CPU || o->dev != TIDE_CPU)
      return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: tensor %d is on a GPU; only CPU tensors are supported", what, i + 1);
    if ((x->flags | o->flags) & TIDE_TENSOR_SYMBOLIC)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: tensor %d is a symbolic tensor (trace the op instead)", what, i + 1);
    if (o->dt != x->dt || o->nelem != x->nelem || !tide_tensor_is_contiguous(o) || (!o->data && o->nelem > 0))
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: result %d must be an allocated contiguous %s tensor of %lld elements",
                       what, i + 1, tide_dtype_name(x->dt), (long long)x->nelem);
  }
  /* Every result starts as its input (a strided input is gathered here). */
  for (int i = 0; i < n; i++) {
    tide_status st = tide_tensor_copy_into(out[i], in[i]);
    if (st) return st;
  }
  if (!mpi) return TIDE_OK; /* a world of one: the sum is the value */
  tide_status st = check_thread(what);
  if (st) return st;
  if (bucket_bytes <= 0) bucket_bytes = TIDE_DIST_BUCKET_BYTES;
  if (bucket_bytes < 8) bucket_bytes = 8; /* room for one float64 */
  /* One pass per dtype, in order: the results' bytes streamed through the
   * scratch bucket, each full bucket (and the last part) reduced at once. */
  static const int dts[2] = {TIDE_FLOAT32, TIDE_FLOAT64};
  for (int d = 0; d < 2; d++) {
    size_t elem = tide_dtype_size(dts[d]);
    size_t cap = (size_t)bucket_bytes / elem * elem, total = 0;
    for (int i = 0; i < n; i++)
      if (out[i]->dt == dts[d]) total += (size_t)out[i]->nelem * elem;
    if (total == 0) continue;
    size_t want = total < cap ? total : cap;
    if (want > scratch_size) {
      void *grown = realloc(scratch, want);
      if (!grown) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a bucket of %zu bytes", what, want);
      scratch = grown;
      scratch_size = want;
    }
    int kind = dts[d] == TIDE_FLOAT64 ? TIDE_DIST_F64 : TIDE_DIST_F32;
    for (size_t lo = 0; lo < total; lo += cap) {
      size_t hi = total - lo < cap ? total : lo + cap;
      copy_range(n, out, dts[d], elem, lo, hi, scratch, true);
      if ((st = reduce_scratch(what, hi - lo, kind, elem)) != TIDE_OK) return st;
      copy_range(n, out, dts[d], elem, lo, hi, scratch, false);
    }
  }
  return TIDE_OK;
}
