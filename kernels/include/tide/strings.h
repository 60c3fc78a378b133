/* tide/strings.h — the elements of TIDE_STRING tensors: immutable, refcounted
 * byte strings (any bytes, NUL included), and reading and writing them. */
#ifndef TIDE_STRINGS_H
#define TIDE_STRINGS_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One string: opaque. A string tensor's element is a `tide_string *` (NULL
 * is the empty string); the bytes never change once made, so copies of a
 * tensor share them and count references (atomically: graphs run on
 * several threads). Each string's bytes are followed by a NUL that is not
 * part of its length, so C code may read a string without a NUL inside as
 * a C string. */
typedef struct tide_string tide_string;

/* A new string holding a copy of `len` bytes (refs = 1); NULL with an error
 * set when out of memory or len < 0. `bytes` may be NULL when len is 0. */
TIDE_API tide_string *tide_string_new(const char *bytes, int64_t len);
/* Take or drop a reference (NULL is ignored). */
TIDE_API void tide_string_retain(tide_string *s);
TIDE_API void tide_string_release(tide_string *s);
/* The bytes of s and their count; "" and 0 for NULL. */
TIDE_API const char *tide_string_bytes(const tide_string *s, int64_t *len);

/* Strings alive in the process (made and not yet freed): what tests count
 * to prove that ops and graphs neither leak nor free twice. */
TIDE_API int64_t tide_string_live_count(void);

/* Element `i` (counted in elements from `data`, a string tensor's t->data)
 * as bytes and length: the way a host reads string tensors. The pointer is
 * valid while the tensor lives. */
TIDE_API const char *tide_string_at(const void *data, int64_t i, int64_t *len);
/* Set element `i` (counted in elements from t->data) of the string tensor t
 * to a copy of `len` bytes, dropping what it held. t must own its storage's
 * elements (a tensor made by tide_tensor_init or an op). Not for tensors
 * other threads read at the same time. */
TIDE_API tide_status tide_string_set(tide_tensor *t, int64_t i, const char *bytes, int64_t len);

#ifdef __cplusplus
}
#endif
#endif
