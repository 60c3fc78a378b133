/* io/h5_internal.h — what the HDF5 reader (h5_file.c) and writer
 * (h5_write.c) share: the handle, libhdf5's errors as tide's, h5py's types. */
#ifndef TIDE_IO_H5_INTERNAL_H
#define TIDE_IO_H5_INTERNAL_H

#include <hdf5.h>

#include "tide/h5.h"
#include "tide/tide.h"

typedef struct h5_entry h5_entry;

struct tide_h5 {
  hid_t file;             /* the open file (H5I_INVALID_HID once closed; never opened when isolated) */
  char *name;             /* what messages call it: the path, or the caller's name */
  size_t image_n;         /* a reader's file size (libhdf5's core driver holds the bytes) */
  char *tree;             /* tide_h5_tree's JSON (readers) */
  unsigned char *out;     /* tide_h5_image's bytes (writers) */
  size_t out_n;
  int writing;
  int isolated;           /* read by a reader process (h5_isolate.c): datasets come from entries */
  h5_entry *entries;
  int n_entries;
};

/* Silence libhdf5's printing of errors on this thread (its error stacks are
 * per thread) and, once per process, turn off its plugin loading: a hostile
 * file must not make it dlopen a filter library. */
void h5_quiet(void);
/* A number for a unique in-memory file name (libhdf5 refuses two open files
 * of one name). */
unsigned long long h5_next_id(void);
/* Fail with `status`: "<what>: <libhdf5's innermost message>", then clear
 * libhdf5's error stack. */
tide_status h5_fail(tide_status status, const char *what, ...) __attribute__((format(printf, 2, 3)));

/* Reading in this process (h5_file.c): a new handle for the n bytes at
 * data, walked; and one dataset of such a handle, its memory tide's
 * allocator's or, with `plain_malloc` (a forked child, where another
 * thread may have held the allocator's lock at the fork), malloc's. */
tide_h5 *h5_open_image_here(const char *name, const void *data, size_t n);
tide_status h5_read_here(tide_h5 *f, const char *path, tide_tensor *out, bool plain_malloc);
/* Reading in a reader process (h5_isolate.c): f (a new handle, freed on
 * failure) filled from a child that ran h5_open_image_here and read every
 * dataset; reads of it; what close frees. */
tide_h5 *h5_open_image_isolated(tide_h5 *f, const void *data, size_t n);
tide_status h5_read_isolated(tide_h5 *f, const char *path, tide_tensor *out);
void h5_free_isolated(tide_h5 *f);
/* 1: read in this process (fuzzing, or TIDE_H5_IN_PROCESS=1 for hosts that
 * forbid fork); 0: in a reader process; -1 (the default): the environment decides at first use. */
extern int h5_read_in_process;

/* h5py's types: IEEE half and bfloat16 (2-byte floats, little-endian); the
 * boolean enum (int8 FALSE = 0, TRUE = 1). New handles: H5Tclose them. */
hid_t h5_half_type(void);
hid_t h5_bfloat16_type(void);
hid_t h5_bool_type(void);

#endif
