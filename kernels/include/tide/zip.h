/* tide/zip.h — zip archives (Keras's .keras files) over libzip: reading with
 * every entry's size and method checked before it is inflated, and writing. */
#ifndef TIDE_ZIP_H
#define TIDE_ZIP_H
#include "tide/export.h"
#include "tide/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A zip archive open for reading, its bytes held in memory; opaque. */
typedef struct tide_zip tide_zip;

/* Open the archive at `path` (through the file policy; a regular file) and
 * check its directory (libzip's consistency checks): at most 65,536 entries,
 * names of 1 to 4,096 bytes and no two alike, each entry stored or deflated,
 * not encrypted, its size possible for its method and compressed bytes.
 * NULL with an error naming the file and the fault. */
TIDE_API tide_zip *tide_zip_open(const char *path);
/* The same over `n` bytes at `data` (copied); `name` names it in messages. */
TIDE_API tide_zip *tide_zip_open_memory(const void *data, size_t n, const char *name);
TIDE_API void tide_zip_close(tide_zip *z);
/* How many entries, entry i's name and (uncompressed) size, and the index of
 * the entry called `name` (-1 when none). */
TIDE_API int64_t tide_zip_count(const tide_zip *z);
TIDE_API const char *tide_zip_name(const tide_zip *z, int64_t i);
TIDE_API int64_t tide_zip_size(const tide_zip *z, int64_t i);
TIDE_API int64_t tide_zip_find(const tide_zip *z, const char *name);
/* Entry i's bytes (*n of them, checked against its CRC), owned by z until the
 * next read or close; NULL on failure. */
TIDE_API const void *tide_zip_read(tide_zip *z, int64_t i, size_t *n);

/* An archive being made in memory; opaque. */
typedef struct tide_zip_writer tide_zip_writer;
TIDE_API tide_zip_writer *tide_zip_writer_new(void);
/* Add `n` bytes (copied) as the entry `name`, stored uncompressed as Keras does. */
TIDE_API tide_status tide_zip_writer_add(tide_zip_writer *w, const char *name, const void *data, size_t n);
/* Finish the archive and write it to `path` atomically (temporary file,
 * fsync, rename). The writer takes no more entries afterwards. */
TIDE_API tide_status tide_zip_writer_save(tide_zip_writer *w, const char *path);
TIDE_API void tide_zip_writer_free(tide_zip_writer *w);

#ifdef __cplusplus
}
#endif
#endif
