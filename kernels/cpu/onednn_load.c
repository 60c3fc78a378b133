/* cpu/onednn_load.c — loads oneDNN (libdnnl.so.2) on first use and looks up the functions tide calls,
 * and libgomp's omp_set_num_threads through libdnnl's dependencies (cpu/onednn_load.h says why). */
#define TIDE_ONEDNN_LOADER
#include "onednn_load.h"

#include <dnnl_version.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define ONEDNN_SONAME "libdnnl.so." ONEDNN_STR(DNNL_VERSION_MAJOR)
#define ONEDNN_STR2(x) #x
#define ONEDNN_STR(x) ONEDNN_STR2(x)

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
