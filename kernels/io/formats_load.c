/* io/formats_load.c — libtide's tide_h5_* and tide_zip_*: each loads
 * libtide_formats.so on first use (beside libtide.so, or where
 * TIDE_FORMATS_LIBRARY says) and calls its function; see formats_plugin.h. */
#include "formats_plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static tide_formats_api api;
static int loaded;
static char why[768]; /* the load's failure, said again on every thread that asks */

static void plugin_path(char *buf, size_t size) {
  const char *env = getenv("TIDE_FORMATS_LIBRARY");
  if (env && *env) {
    snprintf(buf, size, "%s", env);
    return;
  }
  Dl_info info;
  if (dladdr((void *)&tide_h5_open, &info) && info.dli_fname) {
    snprintf(buf, size, "%s", info.dli_fname);
    char *slash = strrchr(buf, '/');
    if (slash) {
      snprintf(slash + 1, size - (size_t)(slash + 1 - buf), "libtide_formats.so");
      return;
    }
  }
  snprintf(buf, size, "libtide_formats.so");
}

static void load(void) {
  char path[4096];
  plugin_path(path, sizeof path);
  /* The plugin stays loaded for the process: handles it made may outlive any caller. */
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, sizeof why,
             "HDF5 and zip files (.keras, .weights.h5) need libtide_formats.so, which did not load: %.500s", e ? e : path);
    return;
  }
  tide_formats_init_fn init = (tide_formats_init_fn)(uintptr_t)dlsym(lib, TIDE_FORMATS_INIT);
  tide_formats_api got;
  if (!init || init(&got) || got.abi != TIDE_FORMATS_ABI || got.size != sizeof got) {
    snprintf(why, sizeof why, "%.600s is not the HDF5/zip plugin of this libtide (rebuild tide)", path);
    return;
  }
  api = got;
  loaded = 1;
}

/* True when the plugin is loaded; else sets this thread's error and returns false. */
static int formats_ready(void) {
  pthread_once(&once, load);
  if (loaded) return 1;
  tide_set_error(TIDE_ERR_UNSUPPORTED, "%s", why);
  return 0;
}

#define TRAMPOLINE_VALUE(ret, name, params, args, fail) \
  ret name params {                                     \
    if (!formats_ready()) return fail;                  \
    return api.name args;                               \
  }
#define TRAMPOLINE_VOID(ret, name, params, args, fail) \
  void name params {                                   \
    if (formats_ready()) api.name args;                \
  }
#define TRAMPOLINE(kind, ret, name, params, args, fail) TRAMPOLINE_##kind(ret, name, params, args, fail)
TIDE_FORMATS_FUNCTIONS(TRAMPOLINE)
