/* tide/error.h — status codes and the thread-local error message.
 * Every fallible tide_* function returns a tide_status (0 = ok) or NULL, and
 * leaves a message naming the op, shapes and dtypes for tide_last_error(). */
#ifndef TIDE_ERROR_H
#define TIDE_ERROR_H
#include "tide/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tide_status {
  TIDE_OK = 0,
  TIDE_ERR_SHAPE,        /* incompatible or invalid shapes */
  TIDE_ERR_DTYPE,        /* dtype not supported by the op, or mixed dtypes */
  TIDE_ERR_VALUE,        /* a bad argument value (axis, size, attribute) */
  TIDE_ERR_INDEX,        /* an index out of range */
  TIDE_ERR_MEMORY,       /* allocation failed */
  TIDE_ERR_IO,           /* a file could not be read or written */
  TIDE_ERR_UNSUPPORTED,  /* valid request this build cannot do (device, op) */
  TIDE_ERR_INTERRUPTED,  /* stopped by tide_request_interrupt() (Ctrl-C) */
  TIDE_ERR_INTERNAL      /* a bug in tide */
} tide_status;

/* The message of the last failure on this thread ("" when none). */
TIDE_API const char *tide_last_error(void);
/* The status of the last failure on this thread (TIDE_OK when none). */
TIDE_API tide_status tide_last_status(void);
/* Forget the last failure on this thread. */
TIDE_API void tide_clear_error(void);
/* Record a failure (printf-style message) and return `status`, for C extensions. */
TIDE_API tide_status tide_set_error(tide_status status, const char *fmt, ...);

#ifdef __cplusplus
}
#endif
#endif
