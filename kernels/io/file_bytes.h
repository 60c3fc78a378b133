/* io/file_bytes.h — a whole file read into memory through the file policy
 * (the readers of container formats, HDF5 and zip, parse bytes they hold),
 * and the positioned read every reader of a part of a file shares. */
#ifndef TIDE_IO_FILE_BYTES_H
#define TIDE_IO_FILE_BYTES_H

#include <stddef.h>
#include <stdint.h>

#include "tide/tide.h"

/* Read the regular file at `path` (allowed by this thread's file policy; not
 * a FIFO, device or folder; at most `max_bytes`) into a new buffer *out
 * (free it) of *n bytes. Errors start with `who` and name the file. */
tide_status file_bytes_read(const char *path, const char *who, size_t max_bytes, unsigned char **out, size_t *n);

/* pread all n bytes of fd at offset off (in chunks of at most 1 GiB, again
 * after EINTR): 0, or -1 with errno set (0 at an early end of file). */
int file_pread_all(int fd, void *buf, size_t n, uint64_t off);

#endif
