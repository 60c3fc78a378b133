/* io/h5_write.c — writing HDF5 files over libhdf5 as h5py does (its types,
 * groups sorted by name, the oldest file format): built in memory with the
 * core driver, then handed out as bytes or written atomically. */
#include "h5_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"

tide_h5 *tide_h5_create(const char *name) {
  h5_quiet();
  tide_h5 *f = calloc(1, sizeof *f);
  if (!f || !(f->name = strdup(name ? name : "(memory)"))) {
    free(f);
    return tide_set_error(TIDE_ERR_MEMORY, "hdf5: out of memory"), NULL;
  }
  f->writing = 1;
  /* The core driver without a backing store: nothing touches the disk; the
   * name only has to be unique among the files this process has open. */
  char inner[64];
  snprintf(inner, sizeof inner, "tide-h5-%llu", h5_next_id());
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || H5Pset_fapl_core(fapl, (size_t)1 << 20, 0) < 0 ||
      (f->file = H5Fcreate(inner, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0) {
    f->file = H5I_INVALID_HID;
    h5_fail(TIDE_ERR_IO, "hdf5: cannot make '%s' in memory", f->name);
    if (fapl >= 0) H5Pclose(fapl);
    tide_h5_close(f);
    return NULL;
  }
  H5Pclose(fapl);
  return f;
}

static tide_status check_writer(tide_h5 *f, const char *path, const char *what) {
  if (!f || !path) return tide_set_error(TIDE_ERR_VALUE, "hdf5: %s: NULL argument", what);
  if (!f->writing) return tide_set_error(TIDE_ERR_VALUE, "hdf5: %s: '%s' was opened for reading", what, f->name);
  h5_quiet();
  return TIDE_OK;
}

/* A link-creation list that makes missing parent groups. */
static hid_t parents_lcpl(void) {
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  if (lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) < 0) {
    H5Pclose(lcpl);
    return H5I_INVALID_HID;
  }
  return lcpl;
}

static bool is_root(const char *path) { return !*path || strcmp(path, "/") == 0; }

tide_status tide_h5_make_group(tide_h5 *f, const char *path) {
  tide_status st = check_writer(f, path, "make_group");
  if (st || is_root(path)) return st;
  htri_t there = H5Lexists(f->file, path, H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
  if (there > 0) {
    H5O_info_t oi;
    if (H5Oget_info_by_name2(f->file, path, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP)
      return h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': '%s' exists and is not a group", f->name, path);
    return TIDE_OK;
  }
  hid_t lcpl = parents_lcpl();
  hid_t g = lcpl >= 0 ? H5Gcreate2(f->file, path, lcpl, H5P_DEFAULT, H5P_DEFAULT) : H5I_INVALID_HID;
  if (lcpl >= 0) H5Pclose(lcpl);
  if (g < 0) return h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot make group '%s'", f->name, path);
  H5Gclose(g);
  return TIDE_OK;
}

tide_status tide_h5_set_attr(tide_h5 *f, const char *path, const char *name, const char *value) {
  tide_status st = check_writer(f, path, "set_attr");
  if (st) return st;
  if (!name || !*name || !value) return tide_set_error(TIDE_ERR_VALUE, "hdf5: set_attr: the name or value is missing");
  hid_t obj = H5Oopen(f->file, is_root(path) ? "/" : path, H5P_DEFAULT);
  if (obj < 0) return h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': no object '%s' to give attribute '%s'", f->name, path, name);
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t t = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
  if (t < 0 || space < 0 || H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0 ||
      (a = H5Acreate2(obj, name, t, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 || H5Awrite(a, t, &value) < 0)
    st = h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot write attribute '%s' of '%s'", f->name, name, path);
  if (a >= 0) H5Aclose(a);
  if (t >= 0) H5Tclose(t);
  if (space >= 0) H5Sclose(space);
  H5Oclose(obj);
  return st;
}

/* The file type (h5py's, little-endian) and memory type of a tide dtype. */
static bool types_of(int dtype, hid_t *file_t, hid_t *mem_t) {
  *file_t = *mem_t = H5I_INVALID_HID;
  switch (dtype) {
  case TIDE_FLOAT32: *file_t = H5Tcopy(H5T_IEEE_F32LE); *mem_t = H5Tcopy(H5T_NATIVE_FLOAT); break;
  case TIDE_FLOAT64: *file_t = H5Tcopy(H5T_IEEE_F64LE); *mem_t = H5Tcopy(H5T_NATIVE_DOUBLE); break;
  case TIDE_FLOAT16: *file_t = h5_half_type(); *mem_t = h5_half_type(); break;
  case TIDE_BFLOAT16: *file_t = H5Tcreate(H5T_OPAQUE, 2); *mem_t = H5Tcreate(H5T_OPAQUE, 2); break;
  case TIDE_INT8: *file_t = H5Tcopy(H5T_STD_I8LE); *mem_t = H5Tcopy(H5T_NATIVE_INT8); break;
  case TIDE_UINT8: *file_t = H5Tcopy(H5T_STD_U8LE); *mem_t = H5Tcopy(H5T_NATIVE_UINT8); break;
  case TIDE_INT32: *file_t = H5Tcopy(H5T_STD_I32LE); *mem_t = H5Tcopy(H5T_NATIVE_INT32); break;
  case TIDE_INT64: *file_t = H5Tcopy(H5T_STD_I64LE); *mem_t = H5Tcopy(H5T_NATIVE_INT64); break;
  case TIDE_BOOL: *file_t = h5_bool_type(); *mem_t = h5_bool_type(); break;
  default: return false;
  }
  if (*file_t < 0 || *mem_t < 0) {
    if (*file_t >= 0) H5Tclose(*file_t);
    if (*mem_t >= 0) H5Tclose(*mem_t);
    return false;
  }
  return true;
}

tide_status tide_h5_write(tide_h5 *f, const char *path, const tide_tensor *t) {
  tide_status st = check_writer(f, path, "write");
  if (st) return st;
  if (!t) return tide_set_error(TIDE_ERR_VALUE, "hdf5: write: the tensor is NULL");
  if (is_root(path)) return tide_set_error(TIDE_ERR_VALUE, "hdf5: write: a dataset needs a name, not the root");
  if (t->flags & TIDE_TENSOR_SYMBOLIC)
    return tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s': '%s' is a symbolic tensor (a value of a traced function)",
                          f->name, path);
  if (t->dev != TIDE_CPU)
    return tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s': '%s' is on a GPU; copy it to the CPU first", f->name, path);
  hid_t ft, mt;
  if (!types_of(t->dt, &ft, &mt))
    return tide_set_error(TIDE_ERR_DTYPE, "hdf5: '%s': '%s' is %s, which an HDF5 weights file cannot hold", f->name,
                          path, tide_dtype_name(t->dt));
  /* libhdf5 reads rows in order: a strided view goes through a packed copy */
  tide_tensor packed = { 0 };
  const tide_tensor *src = t;
  if (!tide_tensor_is_contiguous(t)) {
    st = tide_tensor_init_heap(&packed, t->dt, t->ndim, t->ndim ? t->dims : NULL);
    if (!st) st = tide_tensor_copy_into(&packed, t);
    src = &packed;
  }
  hsize_t dims[TIDE_MAX_DIMS];
  for (int k = 0; k < t->ndim; k++) dims[k] = (hsize_t)t->dims[k];
  hid_t space = H5I_INVALID_HID, lcpl = H5I_INVALID_HID, ds = H5I_INVALID_HID;
  if (!st) {
    space = t->ndim ? H5Screate_simple(t->ndim, dims, NULL) : H5Screate(H5S_SCALAR);
    lcpl = parents_lcpl();
    if (space < 0 || lcpl < 0 || (ds = H5Dcreate2(f->file, path, ft, space, lcpl, H5P_DEFAULT, H5P_DEFAULT)) < 0)
      st = h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot make dataset '%s'", f->name, path);
    else if (src->nelem > 0 && H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, src->data) < 0)
      st = h5_fail(TIDE_ERR_IO, "hdf5: '%s': cannot write dataset '%s'", f->name, path);
  }
  if (ds >= 0) H5Dclose(ds);
  if (lcpl >= 0) H5Pclose(lcpl);
  if (space >= 0) H5Sclose(space);
  H5Tclose(ft);
  H5Tclose(mt);
  tide_tensor_release(&packed);
  if (!st && t->dt == TIDE_BFLOAT16) st = tide_h5_set_attr(f, path, "dtype", "bfloat16");
  return st;
}

const void *tide_h5_image(tide_h5 *f, size_t *n) {
  if (n) *n = 0;
  if (!f || !n) return tide_set_error(TIDE_ERR_VALUE, "hdf5: image: NULL argument"), NULL;
  if (!f->writing) return tide_set_error(TIDE_ERR_VALUE, "hdf5: image: '%s' was opened for reading", f->name), NULL;
  h5_quiet();
  if (H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0)
    return h5_fail(TIDE_ERR_IO, "hdf5: '%s': cannot flush", f->name), NULL;
  ssize_t size = H5Fget_file_image(f->file, NULL, 0);
  if (size <= 0) return h5_fail(TIDE_ERR_IO, "hdf5: '%s': cannot take its bytes", f->name), NULL;
  unsigned char *buf = malloc((size_t)size);
  if (!buf) return tide_set_error(TIDE_ERR_MEMORY, "hdf5: out of memory taking the bytes of '%s'", f->name), NULL;
  if (H5Fget_file_image(f->file, buf, (size_t)size) != size) {
    free(buf);
    return h5_fail(TIDE_ERR_IO, "hdf5: '%s': cannot take its bytes", f->name), NULL;
  }
  free(f->out);
  f->out = buf;
  f->out_n = (size_t)size;
  *n = f->out_n;
  return f->out;
}

tide_status tide_h5_save(tide_h5 *f, const char *path) {
  if (!path) return tide_set_error(TIDE_ERR_VALUE, "hdf5: save: the path is NULL");
  size_t n = 0;
  const void *bytes = tide_h5_image(f, &n);
  if (!bytes) return tide_last_status();
  atomic_file a;
  tide_status st = atomic_file_begin(&a, path, "hdf5");
  if (st) return st;
  st = atomic_file_write(&a, bytes, n);
  if (st) {
    atomic_file_abort(&a);
    return st;
  }
  return atomic_file_commit(&a);
}
