/* io/formats_plugin.c — libtide_formats.so's entry point: hands libtide the
 * HDF5 and zip functions of h5_file.c, h5_write.c and zip_file.c (see
 * formats_plugin.h for why they live in a plugin), the HDF5 ones behind one lock. */
#include "formats_plugin.h"

#include <pthread.h>
#include <string.h>

__attribute__((visibility("default"))) int tide_formats_plugin_init(tide_formats_api *api);

/* Debian's libhdf5 is the serial, not thread-safe, build; and h5_isolate.c
 * forks its reader process while no other thread is inside libhdf5. */
static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;

#define LOCKED_VALUE(ret, name, params, args)  \
  static ret locked_##name params {            \
    pthread_mutex_lock(&h5_lock);              \
    ret r = name args;                         \
    pthread_mutex_unlock(&h5_lock);            \
    return r;                                  \
  }
#define LOCKED_VOID(ret, name, params, args) \
  static void locked_##name params {         \
    pthread_mutex_lock(&h5_lock);            \
    name args;                               \
    pthread_mutex_unlock(&h5_lock);          \
  }
#define LOCKED(kind, ret, name, params, args, fail) LOCKED_##kind(ret, name, params, args)
TIDE_FORMATS_H5_FUNCTIONS(LOCKED)

int tide_formats_plugin_init(tide_formats_api *api) {
  memset(api, 0, sizeof *api);
  api->abi = TIDE_FORMATS_ABI;
  api->size = sizeof *api;
#define FILL_LOCKED(kind, ret, name, params, args, fail) api->name = locked_##name;
#define FILL(kind, ret, name, params, args, fail) api->name = name;
  TIDE_FORMATS_H5_FUNCTIONS(FILL_LOCKED)
  TIDE_FORMATS_ZIP_FUNCTIONS(FILL)
#undef FILL
#undef FILL_LOCKED
  return 0;
}
