/* tide/records.h — record formats: TFRecord files (u64 LE length, masked
 * CRC-32C of the length, data, masked CRC-32C of the data; plain, GZIP or
 * ZLIB), tf.train.Example messages (parsed and built with protobuf-c), CSV. */
#ifndef TIDE_RECORDS_H
#define TIDE_RECORDS_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* ---- tf.train.Example ---- */

/* The value list a feature holds (tf.train.Feature's kind). */
typedef enum tide_feature_type {
  TIDE_FEATURE_INT64 = 0, /* int64_list */
  TIDE_FEATURE_FLOAT = 1, /* float_list (float32) */
  TIDE_FEATURE_BYTES = 2  /* bytes_list */
} tide_feature_type;

/* One feature to parse: FixedLenFeature (var_len 0; ndim/dims its shape, and
 * a default of num_elements values or none) or VarLenFeature (var_len 1). */
typedef struct tide_feature_spec {
  const char *name;
  int32_t type;    /* tide_feature_type */
  int32_t var_len; /* 1 = VarLenFeature */
  int32_t ndim;    /* FixedLen: the shape, for its size and for messages */
  const int64_t *dims;
  int32_t has_default; /* FixedLen: a missing feature takes the default, else it is an error */
  const void *default_values; /* FixedLen int64/float: num_elements values (bytes: see tide_example_batch_strings) */
} tide_feature_spec;

typedef struct tide_example_batch tide_example_batch;

/* Parse serialized Examples data[k][0..lens[k]), k < n, against specs[0..nspecs):
 * every check TF's ParseExample makes (a missing required feature, a value
 * list of the wrong type or size, bytes that are no Example), each an error
 * naming the feature (and, when `batch`, the example's index). The specs'
 * pointers (name, dims, default_values) must stay valid until the batch is freed. */
TIDE_API tide_example_batch *tide_example_parse(int64_t n, const uint8_t *const *data, const size_t *lens, int nspecs,
                                                const tide_feature_spec *specs, bool batch);
/* The number of values of feature i over the batch (FixedLen: n times its size). */
TIDE_API int64_t tide_example_batch_count(const tide_example_batch *b, int i);
/* Copy the values of numeric feature i, example by example, into out (int64_t
 * or float, count values); a FixedLen feature missing from an example gives its default. */
TIDE_API tide_status tide_example_batch_values(const tide_example_batch *b, int i, void *out);
/* VarLen feature i: its (example, position) pairs into out[2 * count]; returns
 * the longest list's length (the SparseTensor's second dense dim). */
TIDE_API int64_t tide_example_batch_var_indices(const tide_example_batch *b, int i, int64_t *out);
/* Value k of bytes feature i (k < count): its bytes and *len; NULL when the
 * example lacked the (FixedLen) feature and the caller's default applies. */
TIDE_API const uint8_t *tide_example_batch_bytes(const tide_example_batch *b, int i, int64_t k, size_t *len);
/* Bytes feature i into the string tensor out (count elements, contiguous, made
 * by tide_tensor_init): a FixedLen feature an example lacks takes `defaults`
 * (a contiguous string tensor of the feature's size). */
TIDE_API tide_status tide_example_batch_strings(const tide_example_batch *b, int i, tide_tensor *out,
                                                const tide_tensor *defaults);
/* Free a parsed batch (NULL is a no-op). */
TIDE_API void tide_example_batch_free(tide_example_batch *b);

/* Building a serialized Example, feature by feature. */
typedef struct tide_example_builder tide_example_builder;
/* A new, empty Example. */
TIDE_API tide_example_builder *tide_example_builder_new(void);
/* Add feature `name` (a later one of the same name replaces it) with n values. */
TIDE_API tide_status tide_example_builder_add_int64(tide_example_builder *b, const char *name, const int64_t *v, size_t n);
TIDE_API tide_status tide_example_builder_add_float(tide_example_builder *b, const char *name, const float *v, size_t n);
/* The same for n byte strings values[k][0..lens[k]). */
TIDE_API tide_status tide_example_builder_add_bytes(tide_example_builder *b, const char *name,
                                                    const uint8_t *const *values, const size_t *lens, size_t n);
/* The serialized size in bytes. */
TIDE_API size_t tide_example_builder_size(tide_example_builder *b);
/* Serialize into out (tide_example_builder_size bytes); returns the bytes written. */
TIDE_API size_t tide_example_builder_pack(tide_example_builder *b, uint8_t *out);
/* Free the builder (NULL is a no-op). */
TIDE_API void tide_example_builder_free(tide_example_builder *b);

/* ---- CSV (RFC 4180 with TF's CsvDataset rules) ---- */

typedef struct tide_csv_reader tide_csv_reader;

/* Open a CSV file: fields split at `delim`; with use_quote, a field opening
 * with '"' is quoted (delimiters and line breaks inside, "" for a quote).
 * Records end at LF, CRLF or a lone CR. NULL with an error naming the path. */
TIDE_API tide_csv_reader *tide_csv_open(const char *path, char delim, bool use_quote);
/* The same over data[0..n) (which must outlive the reader); `name` in messages. */
TIDE_API tide_csv_reader *tide_csv_open_memory(const void *data, size_t n, const char *name, char delim, bool use_quote);
/* Read the next record: 1 with its fields available, 0 at the end, -1 on bad
 * quoting (naming the file, the record and its line). */
TIDE_API int tide_csv_next(tide_csv_reader *r);
/* The fields of the record last read. */
TIDE_API int64_t tide_csv_num_fields(const tide_csv_reader *r);
/* Field j's bytes (NUL-terminated; quotes removed) and *len; NULL past the end. */
TIDE_API const char *tide_csv_field(const tide_csv_reader *r, int64_t j, size_t *len);
/* The 0-based number of the record last read (the header counts) and the line it began on (1-based). */
TIDE_API int64_t tide_csv_record_index(const tide_csv_reader *r);
TIDE_API int64_t tide_csv_record_line(const tide_csv_reader *r);
/* Close the file and free the reader (NULL is a no-op). */
TIDE_API void tide_csv_close(tide_csv_reader *r);

/* The typed values of the record last read, as CsvDataset makes them: column
 * c is field cols[c] (or field c when cols is NULL, and then the record must
 * have exactly ncols fields) parsed as dtypes[c] (int32, int64, float32,
 * float64 or string) into the blank header out[c] (a scalar the caller then
 * owns). An empty field, or one equal to na_value (when not NULL), takes
 * defaults[c] (a scalar of that dtype), or is an error when defaults[c] is
 * NULL. Errors name the file, the record, the line and the column. */
TIDE_API tide_status tide_csv_decode(const tide_csv_reader *r, int ncols, const int64_t *cols, const int32_t *dtypes,
                                     const tide_tensor *const *defaults, const char *na_value, tide_tensor *const *out);

/* CsvDataset's source (kernels/data/csv_source.c): the records of files[0..nfiles)
 * in order, each an element of ncols scalars as tide_csv_decode makes them
 * (cols may be NULL, or any column order; defaults[c] NULL = required); header skips each file's
 * first record. The arguments are copied. A tide_dataset (tide/data.h). */
TIDE_API struct tide_dataset *tide_dataset_csv(int nfiles, const char *const *files, int ncols, const int64_t *cols,
                                               const int32_t *dtypes, const tide_tensor *const *defaults,
                                               const char *na_value, char delim, bool use_quote, bool header);

/* An IDX file (MNIST's format; unsigned bytes), plain or gzipped, into the
 * blank header `out` as a uint8 tensor of its shape. A wrong magic number, a
 * short header, too few or too many bytes, corrupt gzip data and a header
 * claiming more than the file could hold are errors naming the file. */
TIDE_API tide_status tide_read_idx(const char *path, tide_tensor *out);

/* TFRecordDataset's and TextLineDataset's sources (kernels/data/file_sources.c):
 * the records (compression "", "GZIP" or "ZLIB") or the lines (without "\n" or
 * "\r\n"; "" or "GZIP") of files[0..nfiles) in order, each element one 0-d
 * string tensor. A corrupt record is an error naming the file and offset. */
TIDE_API struct tide_dataset *tide_dataset_tfrecord(int nfiles, const char *const *files, const char *compression);
TIDE_API struct tide_dataset *tide_dataset_text_lines(int nfiles, const char *const *files, const char *compression);

#ifdef __cplusplus
}
#endif
#endif
