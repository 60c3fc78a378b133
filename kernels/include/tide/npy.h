/* tide/npy.h — NumPy's .npy files (format versions 1.0, 2.0 and 3.0): one
 * array, read with every header field checked before any memory is allocated, and written atomically. */
#ifndef TIDE_NPY_H
#define TIDE_NPY_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read the .npy file at `path` into the blank header `out` (a new contiguous
 * tensor). Dtypes: float16/32/64, int8, uint8, int32, int64 and bool, either
 * byte order; strings: bytes ("S", trailing NULs dropped as numpy drops
 * them) and UTF-32 ("U", made UTF-8); C or Fortran order (Fortran data are
 * reordered). A file that is not .npy, a header that does not parse, a dtype
 * tide lacks (int16, complex, structured, object...), more than
 * TIDE_MAX_DIMS dims, a code point that is not Unicode, or data shorter or
 * longer than the shape says: an error naming the file and the fault. */
TIDE_API tide_status tide_npy_read(const char *path, tide_tensor *out);
/* Write tensor t (any layout, CPU, not symbolic) to `path` as a version 1.0
 * .npy file in C order, little-endian, as numpy.save does; atomically (a
 * temporary file renamed into place). String tensors are written as bytes
 * ("S" as wide as the longest; an element's trailing NULs do not come back).
 * bfloat16 has no .npy dtype: an error saying so. */
TIDE_API tide_status tide_npy_write(const char *path, const tide_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
