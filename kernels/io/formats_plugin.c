/* io/formats_plugin.c — libtide_formats.so's entry point: hands libtide the
 * HDF5 and zip functions of h5_file.c, h5_write.c and zip_file.c (see
 * formats_plugin.h for why they live in a plugin). */
#include "formats_plugin.h"

#include <string.h>

__attribute__((visibility("default"))) int tide_formats_plugin_init(tide_formats_api *api);

int tide_formats_plugin_init(tide_formats_api *api) {
  memset(api, 0, sizeof *api);
  api->abi = TIDE_FORMATS_ABI;
  api->size = sizeof *api;
#define FILL(kind, ret, name, params, args, fail) api->name = name;
  TIDE_FORMATS_FUNCTIONS(FILL)
#undef FILL
  return 0;
}
