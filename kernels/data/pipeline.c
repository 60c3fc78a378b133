/* data/pipeline.c — iterators over datasets (a pass: its nodes, its stop),
 * and the pipeline's wait, hand-off and thread helpers (pipeline.h). */
#include "stage.h"
#include "autotune.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>
#include <sched.h>
#include "../core/parallel.h"

#include <signal.h>

static int live_threads; /* atomic */

/* ---- iterators --------------------------------------------------------------- */

struct tide_data_iterator {
  dpass pass;
  dnode *top;
  tide_dataset *ds;
  int64_t index; /* elements handed out */
};

tide_data_iterator *tide_dataset_iterate(tide_dataset *ds) {
  if (!ds) {
    TIDE_FAIL(TIDE_ERR_VALUE, "data: iterate over a NULL dataset");
    return NULL;
  }
  tide_data_iterator *it = calloc(1, sizeof *it);
  if (!it) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  /* The pass's threads (started while it is current: here or in next) run
   * under a token of its own, which freeing the iterator raises. */
  if (!(it->pass.intr = tide_interrupt_new(tide_interrupt_current()))) {
    free(it);
    return NULL;
  }
  pthread_mutex_init(&it->pass.mu, NULL);
  tide_interrupt *prev = tide_interrupt_swap(it->pass.intr);
  it->top = dnode_make(ds, &it->pass);
  tide_interrupt_swap(prev);
  if (!it->top) {
    pthread_mutex_destroy(&it->pass.mu);
    tide_interrupt_release(it->pass.intr);
    free(it);
    return NULL;
  }
  __atomic_add_fetch(&ds->refs, 1, __ATOMIC_RELAXED);
  it->ds = ds;
  return it;
}

tide_status tide_data_iterator_next(tide_data_iterator *it, int n, tide_tensor *const *out, int *end) {
  if (!it || !out || !end) return TIDE_FAIL(TIDE_ERR_VALUE, "data: next needs an iterator, headers and an end flag");
  if (n != it->top->ncomp)
    return TIDE_FAIL(TIDE_ERR_VALUE, "data: an element has %d components, asked for %d", it->top->ncomp, n);
  tide_tensor elem[TIDE_DATA_MAX_COMPONENTS];
  memset(elem, 0, sizeof(tide_tensor) * (size_t)n);
  *end = 0;
  tide_clear_error();
  dtune_consumer_enter(&it->pass, dtune_now());
  tide_interrupt *prev = tide_interrupt_swap(it->pass.intr);
  tide_status st = dnext(it->top, elem, end);
  tide_interrupt_swap(prev);
  it->pass.cons_exit = dtune_now();
  if (st || *end) return st;
  for (int k = 0; k < n; k++) {
    tide_tensor_release(out[k]);
    delem_move(out[k], &elem[k], 1);
  }
  it->index++;
  return TIDE_OK;
}

tide_status dnext_profiled(dnode *n, tide_tensor *out, int *end) {
  int64_t t0 = tide_prof_now();
  tide_status st = n->ops->next(n, out, end);
  tide_prof_record(TIDE_PROF_DATA, n->ops->name, *end ? "end" : NULL, t0, tide_prof_now());
  return st;
}

void tide_data_iterator_free(tide_data_iterator *it) {
  if (!it) return;
  /* Stop first, everywhere: a thread blocked deep in the tree wakes and
   * returns, one running a map's graph stops at its next step (the token);
   * then each node joins its threads as the tree is freed. */
  tide_interrupt_raise(it->pass.intr);
  dpass_stop(&it->pass);
  it->top->ops->free(it->top);
  tide_interrupt_release(it->pass.intr);
  pthread_mutex_destroy(&it->pass.mu);
  tide_dataset_free(it->ds);
  free(it);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void dwait(pthread_cond_t *cv, pthread_mutex_t *mu, const unsigned *seq, const dpass *pass) {
  unsigned before = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
  pthread_mutex_unlock(mu);
  int64_t t0 = now_ns();
  for (int k = 0;; k++) {
    if (__atomic_load_n(seq, __ATOMIC_ACQUIRE) != before || dpass_stopping(pass)) break;
    if ((k & 15) == 15) {
      if (now_ns() - t0 > DSPIN_NS) break;
      sched_yield(); /* a runnable pipeline or kernel thread on this core goes first */
    }
    tide_spin_pause();
  }
  pthread_mutex_lock(mu);
  /* a signal or a stop while spinning: the caller looks again. After this
   * check a signaller needs mu, which pthread_cond_wait gives up atomically,
   * so no wake-up is lost. (The stop flag is set before its broadcast.) */
  if (__atomic_load_n(seq, __ATOMIC_ACQUIRE) != before || dpass_stopping(pass)) return;
  pthread_cond_wait(cv, mu);
}

void dpass_stop(dpass *pass) {
  __atomic_store_n(&pass->stop, 1, __ATOMIC_RELEASE);
  pthread_mutex_lock(&pass->mu);
  for (dwaiter *w = pass->waiters; w; w = w->next) {
    pthread_mutex_lock(w->mu);
    pthread_cond_broadcast(w->cv);
    pthread_mutex_unlock(w->mu);
  }
  pthread_mutex_unlock(&pass->mu);
}

void dpass_watch(dpass *pass, dwaiter *w, pthread_mutex_t *mu, pthread_cond_t *cv) {
  w->mu = mu, w->cv = cv;
  pthread_mutex_lock(&pass->mu);
  w->next = pass->waiters;
  pass->waiters = w;
  pthread_mutex_unlock(&pass->mu);
}

void dpass_unwatch(dpass *pass, dwaiter *w) {
  pthread_mutex_lock(&pass->mu);
  for (dwaiter **at = &pass->waiters; *at; at = &(*at)->next)
    if (*at == w) {
      *at = w->next;
      break;
    }
  pthread_mutex_unlock(&pass->mu);
}

/* ---- threads ----------------------------------------------------------------- */

/* The cores, TF's CPU budget: a tuned map starts workers up to this many as
 * its tuner (autotune.c) activates them, within what the consumer leaves. */
int tide_data_autotune_parallelism(void) { return tide_parallel_threads(); }

int tide_data_live_threads(void) { return __atomic_load_n(&live_threads, __ATOMIC_RELAXED); }

/* A pipeline thread runs under the file policy, the memory account, the
 * interrupt token and the random state of the thread that started it (a
 * VM's shuffles draw from its own seed): a sandboxed VM's scripts
 * reach files through pipelines too, the tensors a capped VM's pipeline
 * makes count against its limit (a map that makes too much fails at its
 * element, as it would on the VM's own thread), and its pass (or the VM's
 * budget) stops it. */
typedef struct {
  void *(*fn)(void *);
  void *arg;
  tide_file_policy *policy;
  tide_memory_account *account;
  tide_interrupt *intr;
  tide_random_state *random;
} thread_start;

static void *thread_main(void *p) {
  thread_start s = *(thread_start *)p;
  free(p);
  tide_file_policy_swap(s.policy);
  tide_memory_account_swap(s.account);
  tide_interrupt_swap(s.intr);
  tide_random_state_swap(s.random);
  void *r = s.fn(s.arg);
  tide_random_state_swap(NULL);
  tide_interrupt_swap(NULL);
  tide_memory_account_swap(NULL);
  tide_file_policy_swap(NULL);
  if (s.account) tide_memory_account_release(s.account);
  tide_file_policy_release(s.policy);
  tide_interrupt_release(s.intr);
  tide_random_state_release(s.random);
  return r;
}

/* Pipeline threads block every asynchronous signal, as the pool's workers
 * do (core/threads.c): a signal meant for the Lua VM's thread never lands here. */
int dthread_start(pthread_t *t, void *(*fn)(void *), void *arg) {
  thread_start *s = malloc(sizeof *s);
  if (!s) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: cannot start a pipeline thread (out of memory)");
    return ENOMEM;
  }
  *s = (thread_start){fn, arg, tide_file_policy_current(), tide_memory_account_current(), tide_interrupt_current(),
                      tide_random_state_current()};
  tide_file_policy_retain(s->policy);
  tide_random_state_retain(s->random);
  tide_interrupt_retain(s->intr);
  if (s->account) tide_memory_account_retain(s->account);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(t, NULL, thread_main, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc == 0) __atomic_add_fetch(&live_threads, 1, __ATOMIC_RELAXED);
  else {
    if (s->account) tide_memory_account_release(s->account);
    tide_file_policy_release(s->policy);
    tide_interrupt_release(s->intr);
    tide_random_state_release(s->random);
    free(s);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: cannot start a pipeline thread (error %d)", rc);
  }
  return rc;
}

void dthread_join(pthread_t t) {
  pthread_join(t, NULL);
  __atomic_sub_fetch(&live_threads, 1, __ATOMIC_RELAXED);
}

/* A pipeline thread: its kernels run inline (never on the shared pool), and
 * it runs at a lower priority (nice + 5) than the program's threads: when
 * it wakes on the core of the thread that consumes its elements, Linux then
 * does not let it preempt that thread (training waiting for its own
 * elements' production), but moves it to an idle core or runs it in the
 * gaps. The niceness is the thread's own (Linux schedules threads apart). */
void dthread_enter(void) {
  tide_parallel_run_inline(1);
  errno = 0;
  int cur = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
  if (errno == 0 && cur < 19) (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), cur + 5 > 19 ? 19 : cur + 5);
}
