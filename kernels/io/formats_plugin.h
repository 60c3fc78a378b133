/* io/formats_plugin.h — the seam between libtide and libtide_formats.so, the
 * HDF5 (h5_file.c, h5_write.c) and zip (zip_file.c) readers and writers.
 *
 * Why a plugin: libhdf5 and libzip pull in about forty libraries (curl,
 * OpenSSL, Kerberos, LDAP, GnuTLS ...) whose loading and constructors took
 * over half of libtide's start-up; most programs never open a .keras or
 * .weights.h5 file. libtide keeps the public tide_h5_* and tide_zip_*
 * functions (tide/h5.h, tide/zip.h) as trampolines (formats_load.c) that load
 * the plugin on first use, beside libtide.so, and call through the table
 * below. The plugin exports nothing but TIDE_FORMATS_INIT (formats_plugin.map),
 * so its own tide_h5_* never interpose libtide's. */
#ifndef TIDE_IO_FORMATS_PLUGIN_H
#define TIDE_IO_FORMATS_PLUGIN_H

#include "tide/tide.h"

/* Every public function the plugin implements:
 * X(kind, return type, name, parameters, arguments, value on failure)
 * kind VALUE returns the last field when the plugin cannot be loaded; VOID returns nothing.
 * The HDF5 ones run one at a time (formats_plugin.c): Debian's libhdf5 is not
 * built thread-safe, and a reader process is forked with no other thread inside it. */
#define TIDE_FORMATS_FUNCTIONS(X) TIDE_FORMATS_H5_FUNCTIONS(X) TIDE_FORMATS_ZIP_FUNCTIONS(X)
#define TIDE_FORMATS_H5_FUNCTIONS(X)                                                                           \
  X(VALUE, tide_h5 *, tide_h5_open, (const char *path), (path), NULL)                                          \
  X(VALUE, tide_h5 *, tide_h5_open_memory, (const void *data, size_t n, const char *name), (data, n, name),    \
    NULL)                                                                                                      \
  X(VOID, void, tide_h5_close, (tide_h5 * f), (f), )                                                           \
  X(VALUE, const char *, tide_h5_tree, (const tide_h5 *f), (f), NULL)                                          \
  X(VALUE, tide_status, tide_h5_read, (tide_h5 * f, const char *path, tide_tensor *out), (f, path, out),       \
    tide_last_status())                                                                                        \
  X(VALUE, tide_h5 *, tide_h5_create, (const char *name), (name), NULL)                                        \
  X(VALUE, tide_status, tide_h5_make_group, (tide_h5 * f, const char *path), (f, path), tide_last_status())    \
  X(VALUE, tide_status, tide_h5_set_attr, (tide_h5 * f, const char *path, const char *name, const char *value), \
    (f, path, name, value), tide_last_status())                                                                \
  X(VALUE, tide_status, tide_h5_write, (tide_h5 * f, const char *path, const tide_tensor *t), (f, path, t),    \
    tide_last_status())                                                                                        \
  X(VALUE, const void *, tide_h5_image, (tide_h5 * f, size_t *n), (f, n), NULL)                                \
  X(VALUE, tide_status, tide_h5_save, (tide_h5 * f, const char *path), (f, path), tide_last_status())
#define TIDE_FORMATS_ZIP_FUNCTIONS(X)                                                                          \
  X(VALUE, tide_zip *, tide_zip_open, (const char *path), (path), NULL)                                        \
  X(VALUE, tide_zip *, tide_zip_open_memory, (const void *data, size_t n, const char *name), (data, n, name),  \
    NULL)                                                                                                      \
  X(VOID, void, tide_zip_close, (tide_zip * z), (z), )                                                         \
  X(VALUE, int64_t, tide_zip_count, (const tide_zip *z), (z), -1)                                              \
  X(VALUE, const char *, tide_zip_name, (const tide_zip *z, int64_t i), (z, i), NULL)                          \
  X(VALUE, int64_t, tide_zip_size, (const tide_zip *z, int64_t i), (z, i), -1)                                 \
  X(VALUE, int64_t, tide_zip_find, (const tide_zip *z, const char *name), (z, name), -1)                       \
  X(VALUE, const void *, tide_zip_read, (tide_zip * z, int64_t i, size_t *n), (z, i, n), NULL)                 \
  X(VALUE, tide_zip_writer *, tide_zip_writer_new, (void), (), NULL)                                           \
  X(VALUE, tide_status, tide_zip_writer_add, (tide_zip_writer * w, const char *name, const void *data, size_t n), \
    (w, name, data, n), tide_last_status())                                                                    \
  X(VALUE, tide_status, tide_zip_writer_save, (tide_zip_writer * w, const char *path), (w, path),              \
    tide_last_status())                                                                                        \
  X(VOID, void, tide_zip_writer_free, (tide_zip_writer * w), (w), )

/* Bump when the table or a signature changes: a stale plugin is refused. */
#define TIDE_FORMATS_ABI 2

#define TIDE_FORMATS_POINTER(kind, ret, name, params, args, fail) ret(*name) params;
typedef struct tide_formats_api {
  int abi;
  size_t size; /* sizeof(tide_formats_api) as the plugin was built */
  TIDE_FORMATS_FUNCTIONS(TIDE_FORMATS_POINTER)
} tide_formats_api;
#undef TIDE_FORMATS_POINTER

/* The plugin's one exported function: fill *api; 0 on success. */
#define TIDE_FORMATS_INIT "tide_formats_plugin_init"
typedef int (*tide_formats_init_fn)(tide_formats_api *api);

#endif
