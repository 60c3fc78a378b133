/* tide/data_cache.h — the input pipeline's cache stage (tf.data's cache()):
 * a dataset that keeps its first complete pass in memory or in a file, and the
 * cache file's writer and reader, which the Lua engine's cache stage uses too.
 *
 * The file is a TFRecord file (u64 length, masked CRC-32C of the length,
 * data, masked CRC-32C of the data) of: a header record
 * "tide.data.cache 1\n<n>\n" then one line per component, "<dtype name>\n";
 * one record per element holding, per component, u32 rank, rank x i64 dims,
 * then the values (raw little-endian bytes; for strings, per string a u64
 * length and its bytes); and an end record "tide.data.cache end <count>".
 * It is written to a temporary file beside `path`, fsynced, renamed into
 * place and the folder fsynced, only after a complete pass; while a pass
 * writes, `path`.lock names the writing process. */
#ifndef TIDE_DATA_CACHE_H
#define TIDE_DATA_CACHE_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tide_dataset;

/* in's elements, its first complete pass kept: in memory (path NULL or "")
 * or in the file `path`. ncomp/dtypes are the element's components' dtypes
 * (the file's header). A pass decides at its first element: a complete
 * memory cache or an existing file is read (the input never runs); else the
 * pass runs the input and writes. A pass that ends early keeps nothing (and
 * counts in tide_data_cache_partial_passes); one whose input fails keeps
 * nothing. A second pass writing the same file while one writes is an error
 * (TF's AlreadyExists); two writing memory passes each run, the first to end
 * fills the cache. A corrupt file is an error naming the file and offset. */
TIDE_API struct tide_dataset *tide_dataset_cache(struct tide_dataset *in, const char *path, int ncomp,
                                                 const int32_t *dtypes);
/* A source of the elements in the cache file `path` (ds.save's data.cache): ncomp/dtypes must match its
 * header (checked when a pass opens it); cardinality is what the host knows of the count (ds.save records
 * it), or TIDE_DATA_UNKNOWN. */
TIDE_API struct tide_dataset *tide_dataset_load(const char *path, int ncomp, const int32_t *dtypes,
                                                int64_t cardinality);
/* Cache passes that stopped before their end and so were discarded, in this
 * process (a host warns when it grows: TF's "did not fully read" warning). */
TIDE_API int64_t tide_data_cache_partial_passes(void);

/* ---- the cache file ---- */

typedef struct tide_cache_writer tide_cache_writer;
/* Take path's lock (an error when a live process holds it), remove stale
 * temporaries of dead processes, start the temporary file and write the header. */
TIDE_API tide_cache_writer *tide_cache_writer_open(const char *path, int ncomp, const int32_t *dtypes);
/* Append one element (n components of the header's dtypes). */
TIDE_API tide_status tide_cache_writer_write(tide_cache_writer *w, int n, const tide_tensor *const *elem);
/* Write the end record, fsync, rename into place, fsync the folder, unlock
 * and free w (freed on failure too, leaving no file). */
TIDE_API tide_status tide_cache_writer_finish(tide_cache_writer *w);
/* Remove the temporary file, unlock, free w (NULL is a no-op). */
TIDE_API void tide_cache_writer_abort(tide_cache_writer *w);

typedef struct tide_cache_reader tide_cache_reader;
/* Open a cache file and check its header against ncomp/dtypes. */
TIDE_API tide_cache_reader *tide_cache_reader_open(const char *path, int ncomp, const int32_t *dtypes);
/* The next element into n blank headers, or *end = 1 after the end record.
 * A bad record, a missing end record or a wrong count is an error naming the
 * file and the byte offset; after one, every call fails. */
TIDE_API tide_status tide_cache_reader_next(tide_cache_reader *r, int n, tide_tensor *const *out, int *end);
/* Close the file and free r (NULL is a no-op). */
TIDE_API void tide_cache_reader_close(tide_cache_reader *r);

#ifdef __cplusplus
}
#endif
#endif
