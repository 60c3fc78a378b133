/* tide/records.h — TFRecord files: the framing (u64 LE length, masked
 * CRC-32C of the length, data, masked CRC-32C of the data), plain or GZIP/ZLIB. */
#ifndef TIDE_RECORDS_H
#define TIDE_RECORDS_H
#include "tide/export.h"
#include "tide/error.h"

/* ---- framing bytes, for writers that buffer on their own (event files) ---- */

/* The 12 bytes before a record of `len` bytes: the length (u64, little
 * endian) and its masked CRC-32C. */
TIDE_API void tide_record_header(uint64_t len, uint8_t out[12]);
/* The 4 bytes after data[0..len): its masked CRC-32C, little endian. */
TIDE_API void tide_record_footer(const void *data, size_t len, uint8_t out[4]);

/* ---- writer ---- */

typedef struct tide_record_writer tide_record_writer;

/* Create (or truncate) `path` and write records into it in place, as TF does;
 * compression is "" (or NULL), "GZIP" or "ZLIB". NULL with an error naming the
 * path when the file cannot be created or the compression is unknown. */
TIDE_API tide_record_writer *tide_record_writer_open(const char *path, const char *compression);
/* Append one record of data[0..len). */
TIDE_API tide_status tide_record_writer_write(tide_record_writer *w, const void *data, size_t len);
/* Push what was written so far to the file (a readable prefix, also for GZIP). */
TIDE_API tide_status tide_record_writer_flush(tide_record_writer *w);
/* Finish the file and free the writer (always freed; NULL is a no-op). */
TIDE_API tide_status tide_record_writer_close(tide_record_writer *w);

/* ---- reader ---- */

typedef struct tide_record_reader tide_record_reader;

/* Open `path` for reading records; compression as for the writer. NULL with
 * an error naming the path when it cannot be opened. */
TIDE_API tide_record_reader *tide_record_reader_open(const char *path, const char *compression);
/* Read records from data[0..n), which must outlive the reader; `name` stands
 * for the file in messages. */
TIDE_API tide_record_reader *tide_record_reader_open_memory(const void *data, size_t n, const char *name,
                                                            const char *compression);
/* The next record: 1 with *data, *len set (valid until the next call or
 * close), 0 at the end, -1 on a corrupt or truncated record or a read error,
 * with a message naming the file and the record's byte offset (in the
 * uncompressed stream); after -1 every call fails again the same way. */
TIDE_API int tide_record_reader_next(tide_record_reader *r, const uint8_t **data, size_t *len);
/* The byte offset (uncompressed) where the next record starts. */
TIDE_API uint64_t tide_record_reader_offset(const tide_record_reader *r);
/* Close the file and free the reader (NULL is a no-op). */
TIDE_API void tide_record_reader_close(tide_record_reader *r);

#endif
