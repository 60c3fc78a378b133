/* cpu/onednn_load.c — loads oneDNN (libdnnl.so.2) on first use and looks up the functions tide calls,
 * and libgomp's omp_set_num_threads through libdnnl's dependencies (cpu/onednn_load.h says why). */
#define TIDE_ONEDNN_LOADER
#include "onednn_load.h"

#include <dnnl_version.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ONEDNN_SONAME "libdnnl.so." ONEDNN_STR(DNNL_VERSION_MAJOR)
#define ONEDNN_STR2(x) #x
#define ONEDNN_STR(x) ONEDNN_STR2(x)

/* libgomp reads OMP_WAIT_POLICY once, when it loads (inside the dlopen below). Its default lets each
 * OpenMP thread spin for a while after every parallel region; tide's own pool already owns the cores, so
 * the spinning only steals them from it and from other programs: ResNet50 at batch 1 (a convolution on
 * OpenMP's threads) took 1.0 s of CPU for 0.2 s passive, and 3-7 s of wall time on a busy machine for
 * 0.1-0.7 s. So tide asks for passive waiting unless the environment says otherwise. It is set when
 * libtide loads, while a program is normally still single-threaded: setenv races getenv in other
 * threads, which the first convolution's dlopen could not rule out. */
__attribute__((constructor)) static void onednn_passive_openmp(void) { setenv("OMP_WAIT_POLICY", "PASSIVE", 0); }

tide_onednn tide_onednn_fns;
static bool onednn_ok;
static char onednn_err[256];
static pthread_once_t onednn_once = PTHREAD_ONCE_INIT;

static void onednn_load(void) {
  void *h = dlopen(ONEDNN_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(onednn_err, sizeof onednn_err, "cannot load %s (Debian's libdnnl%d): %s", ONEDNN_SONAME,
             DNNL_VERSION_MAJOR, dlerror());
    return;
  }
  const char *missing = NULL;
#define ONEDNN_SYM(name)                                         \
  *(void **)&tide_onednn_fns.name = dlsym(h, #name);             \
  if (!tide_onednn_fns.name && !missing) missing = #name;
  TIDE_ONEDNN_FUNCTIONS(ONEDNN_SYM)
  ONEDNN_SYM(omp_set_num_threads)
#undef ONEDNN_SYM
  if (missing) { /* the handle stays open: harmless, and dlclose under other threads is not */
    snprintf(onednn_err, sizeof onednn_err, "%s (or the OpenMP it loads) has no %s", ONEDNN_SONAME, missing);
    return;
  }
  onednn_ok = true;
}

bool tide_onednn_available(void) {
  pthread_once(&onednn_once, onednn_load);
  return onednn_ok;
}

const char *tide_onednn_error(void) { return onednn_err; }
