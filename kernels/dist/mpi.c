/* dist/mpi.c — libtide_mpi.so: tide.distribute's collectives over Open MPI,
 * loaded by kernels/core/dist.c only in processes mpirun started.
 *
 * No collective may hang: each is started non-blocking (MPI_Iallreduce,
 * MPI_Ibcast, MPI_Ibarrier) and polled with MPI_Test against a deadline. A
 * worker that never arrives (stuck, or gone without mpirun noticing) makes
 * the others fail with a message naming the collective, the rank and the
 * seconds waited; after that the world is "broken" (MPI still owns the
 * request and its buffer), no more MPI calls are made, and exit ends the
 * job with MPI_Abort instead of an MPI_Finalize that could wait forever.
 *
 * No collective may meet a different one: MPI matches collectives by their
 * order alone, so a worker's barrier at exit met another's all-reduce (which
 * returned a sum counting a contribution never made). Each collective first
 * gathers every worker's description of it (agree below); they differ, and
 * every worker fails naming each one's, before any data moves. */
#include "../core/dist_backend.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* MPI's counts are int: big buffers go in pieces of at most this many elements. */
#define CHUNK ((int64_t)1 << 30)

/* Polling: MPI_Test back to back (yielding the core) for SPIN_S, so a
 * collective of a busy training step answers at once (a non-blocking
 * collective moves on only inside MPI_Test: a large all-reduce's rounds would
 * stall while we sleep); then sleeps that grow from PAUSE_MIN_NS to
 * PAUSE_MAX_NS, so a worker waiting minutes for a slow peer costs next to no
 * CPU and still sees the answer within a millisecond. */
#define SPIN_S 5e-3
#define PAUSE_MIN_NS 20000L
#define PAUSE_MAX_NS 1000000L

static double timeout_s = 300; /* kernels/core/dist.c sets the real value at init */
static int rank_ = -1, world_ = 0;
static int broken;             /* a collective failed or timed out */
static char broken_why[384];   /* ... and why */

/* The collective this worker waits in now, or NULL: for the SIGTERM note. */
static const char *volatile waiting_in;

/* When a worker dies (SIGKILL, a crash), mpirun ends the others with SIGTERM
 * at once, before any timeout: they would vanish without a word. Say on
 * stderr who is stopped, in which collective, and why; then die of SIGTERM
 * as before (the previous action restored and the signal raised again). */
static struct sigaction previous_term;
static char term_note[160];
static size_t term_note_len;

static void write_all(const char *s, size_t n) {
  while (n > 0) {
    ssize_t k = write(STDERR_FILENO, s, n);
    if (k <= 0) return;
    s += k;
    n -= (size_t)k;
  }
}

static void on_sigterm(int sig) {
  const char *in = waiting_in;
  write_all(term_note, term_note_len);
  if (in) {
    write_all(" while waiting in ", 18);
    write_all(in, strlen(in));
  }
  static const char tail[] =
    ": the job is being ended, most often because another worker ended (killed or failed: mpirun's message "
    "names it)\n";
  write_all(tail, sizeof tail - 1);
  sigaction(SIGTERM, &previous_term, NULL);
  raise(sig);
}

static void note_sigterm(void) {
  int n = snprintf(term_note, sizeof term_note, "tide: worker %d of %d stopped by mpirun (SIGTERM)", rank_, world_);
  term_note_len = n < 0 ? 0 : (size_t)n < sizeof term_note ? (size_t)n : sizeof term_note - 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigterm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, &previous_term);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(int code, const char *what, char *why, size_t why_size) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", code);
  snprintf(why, why_size, "%s failed on worker %d of %d: %s", what, rank_, world_, text);
  return TIDE_DIST_EFAIL;
}

/* Mark the world broken after a failure (message already in why). */
static int break_world(int code, const char *why) {
  broken = 1;
  snprintf(broken_why, sizeof broken_why, "%s", why);
  return code;
}

static int refuse_if_broken(const char *what, char *why, size_t why_size) {
  if (!broken) return 0;
  snprintf(why, why_size,
           "%s: not started on worker %d, because an earlier collective failed (%s); the job cannot go on, "
           "restart it (BackupAndRestore resumes from the last backup)", what, rank_, broken_why);
  return TIDE_DIST_EBROKEN;
}

/* Wait for `req` (collective `what`, started at `start`) to complete, or fail
 * when the deadline passes. */
static int wait_for(MPI_Request *req, const char *what, double start, char *why, size_t why_size) {
  double deadline = isinf(timeout_s) ? INFINITY : start + timeout_s;
  long pause_ns = PAUSE_MIN_NS;
  waiting_in = what;
  for (;;) {
    int done = 0;
    int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) waiting_in = NULL;
    if (rc != MPI_SUCCESS) return break_world(fail(rc, what, why, why_size), why);
    if (done) return 0;
    double t = now_s();
    if (t >= deadline) {
      waiting_in = NULL;
      snprintf(why, why_size,
               "%s timed out on worker %d of %d after %.1f s: another worker died or stopped answering (stuck, "
               "or not making the same collectives in the same order); the timeout is %g s "
               "(MultiWorkerMirroredStrategy{timeout=} or TIDE_DIST_TIMEOUT)",
               what, rank_, world_, t - start, timeout_s);
      return break_world(TIDE_DIST_ETIMEOUT, why);
    }
    if (t - start < SPIN_S) {
      sched_yield();
    } else {
      struct timespec ts = {0, pause_ns};
      nanosleep(&ts, NULL);
      if (pause_ns < PAUSE_MAX_NS) pause_ns = pause_ns * 2 > PAUSE_MAX_NS ? PAUSE_MAX_NS : pause_ns * 2;
    }
  }
}

/* What a collective is, as the workers compare it: {sequence number, kind, a, b}. */
enum { KIND_ALL_REDUCE = 1, KIND_BROADCAST, KIND_BARRIER, KIND_EXIT };
enum { DESC = 4 };
static int64_t sequence;        /* collectives this worker started */
static int64_t *gathered;       /* every worker's description, world_ * DESC (MPI's while a gather is broken) */

/* A description in words: "an all-reduce of 10 float32". */
static void describe(const int64_t *d, char *out, size_t size) {
  switch (d[1]) {
  case KIND_ALL_REDUCE:
    snprintf(out, size, "an all-reduce of %lld %s", (long long)d[2], d[3] == TIDE_DIST_F64 ? "float64" : "float32");
    break;
  case KIND_BROADCAST:
    snprintf(out, size, "a broadcast of %lld bytes from worker %lld", (long long)d[2], (long long)d[3]);
    break;
  case KIND_BARRIER: snprintf(out, size, "a barrier"); break;
  case KIND_EXIT: snprintf(out, size, "the barrier at exit (its script ended)"); break;
  default: snprintf(out, size, "an unknown collective (kind %lld)", (long long)d[1]); break;
  }
}

/* The workers' descriptions, when they differ: this worker's and up to 6 of
 * those that differ from it, as "worker 0: an all-reduce ...; worker 1: ...". */
static void describe_all(const int64_t *mine, char *out, size_t size) {
  size_t at = 0;
  int shown = 0, more = 0;
  for (int r = 0; r < world_ && at < size; r++) {
    const int64_t *d = gathered + (size_t)r * DESC;
    if (r != rank_ && memcmp(d, mine, DESC * sizeof *d) == 0) continue;
    if (shown == 7) {
      more++;
      continue;
    }
    char one[96];
    describe(d, one, sizeof one);
    int n = d[0] == mine[0] ? snprintf(out + at, size - at, "%sworker %d: %s", shown ? "; " : "", r, one)
                            : snprintf(out + at, size - at, "%sworker %d: %s (its collective #%lld)", shown ? "; " : "",
                                       r, one, (long long)d[0]);
    if (n < 0) break;
    at += (size_t)n;
    shown++;
  }
  if (more && at < size) snprintf(out + at, size - at, "; and %d more", more);
}

/* Before collective `what` (kind, a, b) moves data: every worker gathers
 * every worker's description of the collective it is in, within the
 * deadline from `start`; they must all be the same. */
static int agree(const char *what, int64_t kind, int64_t a, int64_t b, double start, char *why, size_t why_size) {
  if (!gathered && !(gathered = malloc((size_t)world_ * DESC * sizeof *gathered))) {
    snprintf(why, why_size, "%s: out of memory on worker %d", what, rank_);
    return break_world(TIDE_DIST_EFAIL, why);
  }
  static int64_t mine[DESC]; /* MPI's until the gather completes */
  mine[0] = ++sequence, mine[1] = kind, mine[2] = a, mine[3] = b;
  MPI_Request req;
  int rc = MPI_Iallgather(mine, DESC, MPI_INT64_T, gathered, DESC, MPI_INT64_T, MPI_COMM_WORLD, &req);
  if (rc != MPI_SUCCESS) return break_world(fail(rc, what, why, why_size), why);
  if ((rc = wait_for(&req, what, start, why, why_size))) return rc;
  for (int r = 0; r < world_; r++) {
    if (memcmp(gathered + (size_t)r * DESC, mine, sizeof mine) == 0) continue;
    char all[300];
    describe_all(mine, all, sizeof all);
    snprintf(why, why_size,
             "%s: collective #%lld differs across the workers (each must make the same collectives in the same "
             "order): %s", what, (long long)mine[0], all);
    return break_world(TIDE_DIST_EFAIL, why);
  }
  return 0;
}

static int mpi_init(int *rank, int *world, char *why, size_t why_size) {
  int provided = 0;
  /* Only the Lua thread calls MPI; tide's own worker threads never do. */
  int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
  if (rc != MPI_SUCCESS) return fail(rc, "MPI_Init_thread", why, why_size);
  /* Errors come back as statuses (tide errors) rather than aborting the job. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, rank)) != MPI_SUCCESS) return fail(rc, "MPI_Comm_rank", why, why_size);
  if ((rc = MPI_Comm_size(MPI_COMM_WORLD, world)) != MPI_SUCCESS) return fail(rc, "MPI_Comm_size", why, why_size);
  rank_ = *rank;
  world_ = *world;
  note_sigterm();
  return 0;
}

static void mpi_abort_job(int code) {
  fflush(stdout);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
}

static int mpi_finalize(char *why, size_t why_size) {
  int done = 0;
  MPI_Finalized(&done);
  if (done) return 0;
  if (broken) {
    fprintf(stderr, "tide: worker %d of %d ends the job (MPI_Abort): a collective failed earlier (%s)\n", rank_,
            world_, broken_why);
    mpi_abort_job(1);
  }
  /* MPI_Finalize waits for every process: meet first, within the timeout,
   * so that a stuck worker cannot hold the others at exit forever. */
  const char *what = "the barrier at exit (MPI_Ibarrier)";
  MPI_Request req;
  double start = now_s();
  int rc = agree(what, KIND_EXIT, 0, 0, start, why, why_size);
  if (!rc) {
    rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) rc = break_world(fail(rc, what, why, why_size), why);
    else rc = wait_for(&req, what, start, why, why_size);
  }
  if (rc) {
    fprintf(stderr, "tide: %s; ending the job (MPI_Abort)\n", why);
    mpi_abort_job(1);
  }
  rc = MPI_Finalize();
  return rc == MPI_SUCCESS ? 0 : fail(rc, "MPI_Finalize", why, why_size);
}

static int mpi_all_reduce_sum(void *data, int64_t count, int kind, char *why, size_t why_size) {
  const char *what = "all-reduce (MPI_Iallreduce)";
  int rc = refuse_if_broken(what, why, why_size);
  if (rc) return rc;
  MPI_Datatype type = kind == TIDE_DIST_F64 ? MPI_DOUBLE : MPI_FLOAT;
  size_t elem = kind == TIDE_DIST_F64 ? sizeof(double) : sizeof(float);
  double start = now_s(); /* one deadline for the agreement and all the pieces */
  if ((rc = agree(what, KIND_ALL_REDUCE, count, kind, start, why, why_size))) return rc;
  for (int64_t at = 0; at < count; at += CHUNK) {
    int n = (int)(count - at < CHUNK ? count - at : CHUNK);
    MPI_Request req;
    rc = MPI_Iallreduce(MPI_IN_PLACE, (char *)data + (size_t)at * elem, n, type, MPI_SUM, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) return break_world(fail(rc, what, why, why_size), why);
    if ((rc = wait_for(&req, what, start, why, why_size))) return rc;
  }
  return 0;
}

static int mpi_broadcast(void *data, int64_t bytes, int root, char *why, size_t why_size) {
  const char *what = "broadcast (MPI_Ibcast)";
  int rc = refuse_if_broken(what, why, why_size);
  if (rc) return rc;
  double start = now_s();
  if ((rc = agree(what, KIND_BROADCAST, bytes, root, start, why, why_size))) return rc;
  for (int64_t at = 0; at < bytes; at += CHUNK) {
    int n = (int)(bytes - at < CHUNK ? bytes - at : CHUNK);
    MPI_Request req;
    rc = MPI_Ibcast((char *)data + at, n, MPI_BYTE, root, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) return break_world(fail(rc, what, why, why_size), why);
    if ((rc = wait_for(&req, what, start, why, why_size))) return rc;
  }
  return 0;
}

static int mpi_barrier(char *why, size_t why_size) {
  const char *what = "barrier (MPI_Ibarrier)";
  int rc = refuse_if_broken(what, why, why_size);
  if (rc) return rc;
  double start = now_s();
  if ((rc = agree(what, KIND_BARRIER, 0, 0, start, why, why_size))) return rc;
  MPI_Request req;
  rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
  if (rc != MPI_SUCCESS) return break_world(fail(rc, what, why, why_size), why);
  return wait_for(&req, what, start, why, why_size);
}

static void mpi_set_timeout(double seconds) { timeout_s = seconds; }

/* Fill libtide's table (kernels/core/dist.c checks abi and size). */
EXPORT int tide_mpi_backend_init(tide_dist_backend *out) {
  out->abi = TIDE_DIST_BACKEND_ABI;
  out->size = sizeof *out;
  out->init = mpi_init;
  out->finalize = mpi_finalize;
  out->all_reduce_sum = mpi_all_reduce_sum;
  out->broadcast = mpi_broadcast;
  out->barrier = mpi_barrier;
  out->set_timeout = mpi_set_timeout;
  out->abort_job = mpi_abort_job;
  return 0;
}
