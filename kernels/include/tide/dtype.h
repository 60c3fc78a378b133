/* tide/dtype.h — element types: codes, names, sizes, classes, and the
 * float16/bfloat16 conversions every kernel that touches half types uses. */
#ifndef TIDE_DTYPE_H
#define TIDE_DTYPE_H
#include "tide/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tide_dtype {
  TIDE_FLOAT32 = 0,
  TIDE_FLOAT64,
  TIDE_FLOAT16,
  TIDE_BFLOAT16,
  TIDE_INT8,
  TIDE_UINT8,
  TIDE_INT32,
  TIDE_INT64,
  TIDE_BOOL,           /* one byte: 0 is false, any other byte true; tide writes 1 */
  /* Byte strings (TF's tf.string): each element is one pointer (8 bytes) to
   * an immutable, refcounted tide_string (tide/strings.h), NULL being "".
   * Any bytes, NUL included. Ownership: a storage flagged as holding string
   * references releases each element when it goes; ops copy pointers and
   * take a reference per copy. String tensors always have a storage of
   * their own (never inline data), so Lua gives each a finalizer. */
  TIDE_STRING,
  TIDE_NUM_DTYPES
} tide_dtype;

/* Sets of dtypes, as bit masks (1 << dtype), for op signatures. */
enum {
  TIDE_DTS_FLOAT   = (1 << TIDE_FLOAT32) | (1 << TIDE_FLOAT64) | (1 << TIDE_FLOAT16) | (1 << TIDE_BFLOAT16),
  TIDE_DTS_INT     = (1 << TIDE_INT8) | (1 << TIDE_UINT8) | (1 << TIDE_INT32) | (1 << TIDE_INT64),
  TIDE_DTS_NUMERIC = TIDE_DTS_FLOAT | TIDE_DTS_INT,
  TIDE_DTS_BOOL    = (1 << TIDE_BOOL),
  TIDE_DTS_ALL     = TIDE_DTS_NUMERIC | TIDE_DTS_BOOL, /* not strings: no op takes them by accident */
  TIDE_DTS_STRING  = (1 << TIDE_STRING),
  TIDE_DTS_ANY     = TIDE_DTS_ALL | TIDE_DTS_STRING,   /* ops that move elements (shape ops), equality */
  /* float32 and float64 (TF's special functions that have no half kernels), and with float16 */
  TIDE_DTS_F32_F64 = (1 << TIDE_FLOAT32) | (1 << TIDE_FLOAT64),
  TIDE_DTS_F16_F32_F64 = TIDE_DTS_F32_F64 | (1 << TIDE_FLOAT16),
  TIDE_DTS_LAPACK  = TIDE_DTS_F32_F64 /* what LAPACK computes in: the decompositions */
};

/* "float32", "int64", "string", ...; "?" for an invalid code. */
TIDE_API const char *tide_dtype_name(int dtype);
/* The code for a name ("float32", also "float"/"double"/"half"), or -1. */
TIDE_API int tide_dtype_from_name(const char *name);
/* Bytes per element; 0 for an invalid code. */
TIDE_API size_t tide_dtype_size(int dtype);
TIDE_API bool tide_dtype_is_float(int dtype);
TIDE_API bool tide_dtype_is_int(int dtype);

/* IEEE half and bfloat16 bit patterns from and to float (round to nearest even). */
TIDE_API uint16_t tide_float_to_half(float f);
TIDE_API float tide_half_to_float(uint16_t h);
TIDE_API uint16_t tide_float_to_bfloat16(float f);
TIDE_API float tide_bfloat16_to_float(uint16_t b);

/* Element `i` (counted in elements from `data`) of a buffer of `dtype` as a
 * double: the one way a host reads tensor values. Every NaN comes back as the
 * one canonical quiet NaN (bits 0x7ff8000000000000): LuaJIT keeps its own
 * values in NaN payloads, so a NaN with other bits read into Lua would be a
 * forged string, table or nil. A bool byte gives 1 for any nonzero byte;
 * int64 rounds to the nearest double. 0 for strings and invalid dtypes. */
TIDE_API double tide_read_number(const void *data, int dtype, int64_t i);

#ifdef __cplusplus
}
#endif
#endif
