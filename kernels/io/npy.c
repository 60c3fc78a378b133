/* io/npy.c — NumPy .npy files: the magic, version and header dict
 * ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }) parsed and
 * checked before allocating, then the data read straight into a tensor; and
 * the writer numpy.save's layout (version 1.0, header padded to 64 bytes). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_bytes.h"
#include "tide/npy.h"
#include "atomic_file.h"
#include "../core/internal.h"

/* A header longer than this is no numpy header (numpy itself refuses more than 10000 bytes by default). */
enum { MAX_HEADER = 1 << 20, MAGIC_LEN = 6 };
static const char MAGIC[MAGIC_LEN] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* ---- the header dict ---------------------------------------------------------- */

typedef struct header_parser {
  const char *s, *end;
  const char *path;
} header_parser;

static void skip_space(header_parser *p) {
  while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

static bool take(header_parser *p, char c) {
  skip_space(p);
  if (p->s < p->end && *p->s == c) {
    p->s++;
    return true;
  }
  return false;
}

static tide_status bad_header(const header_parser *p, const char *what) {
  return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' has a bad header: %s", p->path, what);
}

/* A quoted Python string without escapes (numpy's keys and descrs have none) into out. */
static bool take_string(header_parser *p, char *out, size_t size) {
  skip_space(p);
  if (p->s >= p->end || (*p->s != '\'' && *p->s != '"')) return false;
  char q = *p->s++;
  size_t n = 0;
  while (p->s < p->end && *p->s != q) {
    if (*p->s == '\\' || n + 1 >= size) return false;
    out[n++] = *p->s++;
  }
  if (p->s >= p->end) return false;
  p->s++;
  out[n] = '\0';
  return true;
}

static bool take_word(header_parser *p, const char *word) {
  skip_space(p);
  size_t n = strlen(word);
  if ((size_t)(p->end - p->s) >= n && memcmp(p->s, word, n) == 0) {
    p->s += n;
    return true;
  }
  return false;
}

/* The shape tuple: "()", "(5,)", "(2, 3)", Python 2's "(2L, 3L)"; dims >= 0. */
static tide_status take_shape(header_parser *p, int *ndim, int64_t *dims) {
  if (!take(p, '(')) return bad_header(p, "'shape' is not a tuple");
  *ndim = 0;
  for (;;) {
    if (take(p, ')')) return TIDE_OK;
    skip_space(p);
    if (p->s >= p->end || *p->s < '0' || *p->s > '9') return bad_header(p, "'shape' holds something other than whole numbers >= 0");
    int64_t v = 0;
    while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
      if (v > (INT64_MAX - 9) / 10) return bad_header(p, "a dim of 'shape' is too large");
      v = v * 10 + (*p->s++ - '0');
    }
    if (p->s < p->end && *p->s == 'L') p->s++;
    if (*ndim >= TIDE_MAX_DIMS)
      return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' has more than %d dims, the most a tide tensor has", p->path,
                       TIDE_MAX_DIMS);
    dims[(*ndim)++] = v;
    if (take(p, ',')) continue;
    if (take(p, ')')) return TIDE_OK;
    return bad_header(p, "'shape' is not a tuple of numbers");
  }
}

typedef struct npy_header {
  char descr[32];
  bool fortran;
  int ndim;
  int64_t dims[TIDE_MAX_DIMS];
} npy_header;

/* The dict with exactly the keys descr, fortran_order and shape, in any order. */
static tide_status parse_dict(header_parser *p, npy_header *h) {
  bool seen_descr = false, seen_fortran = false, seen_shape = false;
  if (!take(p, '{')) return bad_header(p, "it is not a Python dict");
  for (;;) {
    if (take(p, '}')) break;
    char key[32];
    if (!take_string(p, key, sizeof key)) return bad_header(p, "a key is not a short quoted string");
    if (!take(p, ':')) return bad_header(p, "a key is not followed by ':'");
    if (strcmp(key, "descr") == 0 && !seen_descr) {
      skip_space(p);
      if (p->s < p->end && *p->s == '[')
        return TIDE_FAIL(TIDE_ERR_DTYPE, "read_npy: '%s' holds a structured array (its descr is a list); tide reads "
                         "arrays of one dtype", p->path);
      if (!take_string(p, h->descr, sizeof h->descr)) return bad_header(p, "'descr' is not a short quoted string");
      seen_descr = true;
    } else if (strcmp(key, "fortran_order") == 0 && !seen_fortran) {
      if (take_word(p, "True")) h->fortran = true;
      else if (take_word(p, "False")) h->fortran = false;
      else return bad_header(p, "'fortran_order' is not True or False");
      seen_fortran = true;
    } else if (strcmp(key, "shape") == 0 && !seen_shape) {
      tide_status st = take_shape(p, &h->ndim, h->dims);
      if (st) return st;
      seen_shape = true;
    } else {
      return bad_header(p, "it has a key other than 'descr', 'fortran_order' and 'shape', or one twice");
    }
    if (take(p, '}')) break;
    if (!take(p, ',')) return bad_header(p, "the dict's entries are not separated by ','");
  }
  skip_space(p);
  if (p->s != p->end) return bad_header(p, "something follows the dict");
  if (!seen_descr || !seen_fortran || !seen_shape)
    return bad_header(p, "it lacks one of 'descr', 'fortran_order' and 'shape'");
  return TIDE_OK;
}

/* The tide dtype of a descr ("<f4", "|b1", ">i8"), and whether its bytes
 * need swapping; -1 (error set) for a dtype tide lacks. */
static int dtype_of(const char *path, const char *descr, bool *swap) {
  static const struct { const char *code; int dtype; } map[] = {
      {"f2", TIDE_FLOAT16}, {"f4", TIDE_FLOAT32}, {"f8", TIDE_FLOAT64}, {"i1", TIDE_INT8}, {"u1", TIDE_UINT8},
      {"i4", TIDE_INT32},   {"i8", TIDE_INT64},   {"b1", TIDE_BOOL},
  };
  char order = descr[0];
  const char *code = descr + 1;
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    order = '=';
    code = descr;
  }
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
    if (strcmp(code, map[i].code) != 0) continue;
    size_t size = tide_dtype_size(map[i].dtype);
    bool little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    *swap = size > 1 && ((order == '<' && !little) || (order == '>' && little));
    return map[i].dtype;
  }
  tide_set_error(TIDE_ERR_DTYPE,
                 "read_npy: '%s' holds dtype '%s', which tide does not have (it reads float16/32/64 'f2' 'f4' 'f8', "
                 "int8 'i1', uint8 'u1', int32 'i4', int64 'i8', bool 'b1' and strings 'S' 'U'); convert it in numpy with astype",
                 path, descr);
  return -1;
}

/* A string descr: "|S5" (bytes, 5 a element) or "<U3" / ">U3" (UTF-32, 3
 * code points an element). True with *kind 'S' or 'U', *chars and *big set. */
static bool string_descr(const char *descr, char *kind, int64_t *chars, bool *big) {
  const char *p = descr;
  char order = '=';
  if (*p == '<' || *p == '>' || *p == '|' || *p == '=') order = *p++;
  if (*p != 'S' && *p != 'U') return false;
  *kind = *p++;
  if (*p < '0' || *p > '9') return false;
  int64_t n = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (n > (1 << 30)) return false;
    n = n * 10 + (*p - '0');
  }
  if (*p) return false;
  *chars = n;
  *big = order == '>' || (order == '=' && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
  return true;
}

/* One UTF-32 element (chars code units at p) as UTF-8 in out (room for
 * 4 * chars bytes), trailing NULs dropped as numpy drops them; the byte
 * count, or -1 for a code point that is no Unicode scalar value. */
static int64_t utf32_to_utf8(const unsigned char *p, int64_t chars, bool big, char *out) {
  int64_t end = chars;
  uint32_t cp[1];
  while (end > 0) { /* numpy's str drops trailing NULs */
    const unsigned char *q = p + (end - 1) * 4;
    cp[0] = big ? (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]
                : (uint32_t)q[3] << 24 | (uint32_t)q[2] << 16 | (uint32_t)q[1] << 8 | q[0];
    if (cp[0] != 0) break;
    end--;
  }
  int64_t n = 0;
  for (int64_t i = 0; i < end; i++, p += 4) {
    uint32_t c = big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                     : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return -1;
    if (c < 0x80) out[n++] = (char)c;
    else if (c < 0x800) {
      out[n++] = (char)(0xC0 | c >> 6);
      out[n++] = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out[n++] = (char)(0xE0 | c >> 12);
      out[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
      out[n++] = (char)(0x80 | (c & 0x3F));
    } else {
      out[n++] = (char)(0xF0 | c >> 18);
      out[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
      out[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
      out[n++] = (char)(0x80 | (c & 0x3F));
    }
  }
  return n;
}

/* ---- reading ------------------------------------------------------------------ */

/* Swap each element's bytes in place (big-endian data on a little-endian machine). */
static void swap_bytes(unsigned char *p, int64_t count, size_t size) {
  for (int64_t i = 0; i < count; i++, p += size)
    for (size_t a = 0, b = size - 1; a < b; a++, b--) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* Fortran-order elements (first index fastest) of src into C order in dst. */
static void from_fortran(unsigned char *dst, const unsigned char *src, int ndim, const int64_t *dims, int64_t count,
                         size_t size) {
  int64_t idx[TIDE_MAX_DIMS] = {0}, fstride[TIDE_MAX_DIMS];
  int64_t s = 1;
  for (int d = 0; d < ndim; d++) {
    fstride[d] = s;
    s *= dims[d];
  }
  for (int64_t i = 0; i < count; i++) {
    int64_t off = 0;
    for (int d = 0; d < ndim; d++) off += idx[d] * fstride[d];
    memcpy(dst + (size_t)i * size, src + (size_t)off * size, size);
    for (int d = ndim - 1; d >= 0; d--) { /* the next C-order index */
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

static void from_fortran(unsigned char *dst, const unsigned char *src, int ndim, const int64_t *dims, int64_t count,
                         size_t size);

/* The data of a string array (itemsize bytes an element, at `at`) into the
 * blank header out as a string tensor: S elements as their bytes, U as UTF-8. */
static tide_status read_strings(int fd, const char *path, const npy_header *h, char kind, int64_t chars, bool big,
                                int64_t count, int64_t data_bytes, off_t at, tide_tensor *out) {
  size_t itemsize = (size_t)(kind == 'U' ? chars * 4 : chars);
  unsigned char *raw = malloc(data_bytes ? (size_t)data_bytes : 1), *ordered = NULL;
  char *utf8 = kind == 'U' ? malloc((size_t)chars * 4 + 1) : NULL;
  tide_status st = TIDE_OK;
  if (!raw || (kind == 'U' && !utf8)) st = TIDE_FAIL(TIDE_ERR_MEMORY, "read_npy: out of memory reading '%s'", path);
  if (!st && data_bytes && file_pread_all(fd, raw, (size_t)data_bytes, at) != 0) {
    int err = errno;
    st = TIDE_FAIL(TIDE_ERR_IO, "read_npy: cannot read the data of '%s': %s", path,
                   err ? strerror(err) : "the file ended early (it changed while read)");
  }
  if (!st && h->fortran && h->ndim > 1 && count > 0 && itemsize > 0) {
    if (!(ordered = malloc((size_t)data_bytes))) st = TIDE_FAIL(TIDE_ERR_MEMORY, "read_npy: out of memory reading '%s'", path);
    else from_fortran(ordered, raw, h->ndim, h->dims, count, itemsize);
  }
  if (!st) st = tide_tensor_init_heap(out, TIDE_STRING, h->ndim, h->ndim ? h->dims : NULL);
  const unsigned char *elems = ordered ? ordered : raw;
  for (int64_t i = 0; !st && i < count; i++) {
    const unsigned char *e = elems + (size_t)i * itemsize;
    if (kind == 'S') {
      int64_t len = chars;
      while (len > 0 && e[len - 1] == 0) len--; /* numpy's bytes drop trailing NULs */
      st = tide_string_set(out, i, (const char *)e, len);
    } else {
      int64_t len = utf32_to_utf8(e, chars, big, utf8);
      if (len < 0)
        st = TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' holds a code point that is not Unicode in element %lld", path,
                       (long long)i);
      else
        st = tide_string_set(out, i, utf8, len);
    }
    if (st) tide_tensor_release(out);
  }
  free(raw);
  free(ordered);
  free(utf8);
  return st;
}

static tide_status read_fd(int fd, const char *path, tide_tensor *out) {
  struct stat sb;
  if (fstat(fd, &sb) != 0) return TIDE_FAIL(TIDE_ERR_IO, "read_npy: cannot read '%s': %s", path, strerror(errno));
  if (!S_ISREG(sb.st_mode)) return TIDE_FAIL(TIDE_ERR_IO, "read_npy: '%s' is not a regular file", path);
  int64_t file_bytes = (int64_t)sb.st_size;
  unsigned char pre[12];
  if (file_bytes < 10 || file_pread_all(fd, pre, 10, 0) != 0 || memcmp(pre, MAGIC, MAGIC_LEN) != 0) {
    const char *kind; /* what it is instead, if tide knows */
    int k = tide_file_kind(path, &kind);
    if (k != TIDE_FILE_UNKNOWN && k != TIDE_FILE_NPY)
      return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' is not a .npy file: it is %s", path, kind);
    return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' is not a .npy file (it does not start with \\x93NUMPY)", path);
  }
  int major = pre[6];
  int64_t hlen, start;
  if (major == 1) {
    hlen = pre[8] | (pre[9] << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (file_bytes < 12 || file_pread_all(fd, pre + 10, 2, 10) != 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' is truncated in its header", path);
    hlen = (int64_t)pre[8] | ((int64_t)pre[9] << 8) | ((int64_t)pre[10] << 16) | ((int64_t)pre[11] << 24);
    start = 12;
  } else {
    return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' is .npy format version %d.%d; tide reads versions 1 to 3", path,
                     major, pre[7]);
  }
  if (hlen > MAX_HEADER)
    return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' claims a header of %lld bytes (at most %d)", path,
                     (long long)hlen, MAX_HEADER);
  if (start + hlen > file_bytes)
    return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' is truncated in its header (%lld bytes, the header says %lld)",
                     path, (long long)file_bytes, (long long)(start + hlen));
  char *text = malloc((size_t)hlen + 1);
  if (!text) return TIDE_FAIL(TIDE_ERR_MEMORY, "read_npy: out of memory reading the header of '%s'", path);
  if (hlen && file_pread_all(fd, text, (size_t)hlen, start) != 0) {
    free(text);
    return TIDE_FAIL(TIDE_ERR_IO, "read_npy: cannot read the header of '%s'", path);
  }
  text[hlen] = '\0';
  if (memchr(text, '\0', (size_t)hlen)) {
    free(text);
    return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' has a bad header: it holds a NUL byte", path);
  }
  npy_header h = {0};
  header_parser p = {text, text + hlen, path};
  tide_status st = parse_dict(&p, &h);
  free(text);
  if (st) return st;
  bool swap = false, big = false;
  char kind;
  int64_t chars = 0;
  bool strings = string_descr(h.descr, &kind, &chars, &big);
  int dt = strings ? TIDE_STRING : dtype_of(path, h.descr, &swap);
  if (dt < 0) return tide_last_status();
  size_t size = strings ? (size_t)(kind == 'U' ? chars * 4 : chars) : tide_dtype_size(dt);
  if (size == 0) size = 1; /* "S0": no bytes an element; the overflow check below still needs a divisor */
  int64_t count = 1;
  for (int d = 0; d < h.ndim; d++) {
    if (h.dims[d] > 0 && count > INT64_MAX / (int64_t)size / h.dims[d])
      return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' has a shape whose size overflows", path);
    count *= h.dims[d];
  }
  int64_t data_bytes = strings ? count * (kind == 'U' ? chars * 4 : chars) : count * (int64_t)size;
  int64_t have = file_bytes - start - hlen;
  if (have != data_bytes)
    return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' holds %lld bytes of data but its header (dtype %s, %lld elements) "
                     "says %lld: the file is %s", path, (long long)have, h.descr, (long long)count,
                     (long long)data_bytes, have < data_bytes ? "truncated" : "longer than its array");
  if (strings && chars == 0 && count > 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: '%s' holds %lld strings of width 0", path, (long long)count);
  if (strings) return read_strings(fd, path, &h, kind, chars, big, count, data_bytes, (off_t)(start + hlen), out);
  bool reorder = h.fortran && h.ndim > 1 && count > 0;
  st = tide_tensor_init_heap(out, dt, h.ndim, h.ndim ? h.dims : NULL);
  if (st) return st;
  unsigned char *raw = out->data;
  if (reorder && !(raw = malloc((size_t)data_bytes))) {
    tide_tensor_release(out);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "read_npy: out of memory reading '%s'", path);
  }
  if (data_bytes && file_pread_all(fd, raw, (size_t)data_bytes, (off_t)(start + hlen)) != 0) {
    int err = errno;
    if (reorder) free(raw);
    tide_tensor_release(out);
    return TIDE_FAIL(TIDE_ERR_IO, "read_npy: cannot read the data of '%s': %s", path,
                     err ? strerror(err) : "the file ended early (it changed while read)");
  }
  if (swap) swap_bytes(raw, count, size);
  if (reorder) {
    from_fortran(out->data, raw, h.ndim, h.dims, count, size);
    free(raw);
  }
  if (dt == TIDE_BOOL) {
    unsigned char *b = out->data;
    for (int64_t i = 0; i < count; i++) b[i] = b[i] != 0;
  }
  return TIDE_OK;
}

tide_status tide_npy_read(const char *path, tide_tensor *out) {
  if (!path) return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: the path is NULL");
  if (!out) return TIDE_FAIL(TIDE_ERR_VALUE, "read_npy: the output tensor is NULL");
  tide_status checked = tide_file_check(path, false);
  if (checked) return checked;
  int fd = tide_file_open(path, O_RDONLY, 0); /* a regular file: a FIFO or a device is refused, never waited on */
  if (fd < 0) return TIDE_FAIL(TIDE_ERR_IO, "read_npy: cannot open '%s': %s", path, tide_file_why());
  tide_status st = read_fd(fd, path, out);
  close(fd);
  return st;
}

/* ---- writing ------------------------------------------------------------------ */

static const char *descr_of(int dt) {
  switch (dt) {
  case TIDE_FLOAT16: return "<f2";
  case TIDE_FLOAT32: return "<f4";
  case TIDE_FLOAT64: return "<f8";
  case TIDE_INT8: return "|i1";
  case TIDE_UINT8: return "|u1";
  case TIDE_INT32: return "<i4";
  case TIDE_INT64: return "<i8";
  case TIDE_BOOL: return "|b1";
  default: return NULL;
  }
}

/* Element data as numpy.save writes them: bools as 0 and 1; strings as
 * `width` bytes each, NUL-padded ("S" items). */
static tide_status write_data(atomic_file *a, const tide_tensor *src, int64_t width) {
  tide_status st = TIDE_OK;
  if (src->dt == TIDE_STRING) {
    char *item = malloc(width ? (size_t)width : 1);
    if (!item) return TIDE_FAIL(TIDE_ERR_MEMORY, "write_npy: out of memory");
    for (int64_t i = 0; i < src->nelem && !st; i++) {
      int64_t len;
      const char *bytes = tide_string_at(src->data, i, &len);
      memcpy(item, bytes, (size_t)len);
      memset(item + len, 0, (size_t)(width - len));
      st = atomic_file_write(a, item, (size_t)width);
    }
    free(item);
    return st;
  }
  size_t bytes = (size_t)src->nelem * tide_dtype_size(src->dt);
  if (src->dt != TIDE_BOOL) return bytes ? atomic_file_write(a, src->data, bytes) : TIDE_OK;
  unsigned char chunk[4096]; /* 0 and 1, whatever nonzero byte the memory holds */
  const unsigned char *p = src->data;
  for (size_t k = 0; k < bytes && !st; k += sizeof chunk) {
    size_t m = bytes - k < sizeof chunk ? bytes - k : sizeof chunk;
    for (size_t j = 0; j < m; j++) chunk[j] = p[k + j] != 0;
    st = atomic_file_write(a, chunk, m);
  }
  return st;
}

tide_status tide_npy_write(const char *path, const tide_tensor *t) {
  if (!path) return TIDE_FAIL(TIDE_ERR_VALUE, "write_npy: the path is NULL");
  if (!t) return TIDE_FAIL(TIDE_ERR_VALUE, "write_npy: the tensor is NULL");
  if (t->flags & TIDE_TENSOR_SYMBOLIC)
    return TIDE_FAIL(TIDE_ERR_VALUE, "write_npy: the tensor is symbolic (a value inside tide.trace): it has no data yet");
  if (t->dev != TIDE_CPU) return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "write_npy: the tensor is not on the CPU");
  const char *descr = descr_of(t->dt);
  if (!descr && t->dt != TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "write_npy: numpy has no %s dtype%s", tide_dtype_name(t->dt),
                     t->dt == TIDE_BFLOAT16 ? " (cast to float32 first)" : "");
  if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "write_npy: writing on a big-endian machine is not supported");

  tide_tensor copy;
  const tide_tensor *src;
  tide_status cst = tide_contiguous_or_copy("write_npy", t, &copy, &src);
  if (cst) {
    tide_tensor_release(&copy);
    return cst;
  }
  /* Strings are written as bytes ("S"): numpy's width is the longest, at least 1. */
  char string_descr_text[32];
  int64_t width = 1;
  if (src->dt == TIDE_STRING) {
    for (int64_t i = 0; i < src->nelem; i++) {
      int64_t len;
      tide_string_at(src->data, i, &len);
      if (len > width) width = len;
    }
    snprintf(string_descr_text, sizeof string_descr_text, "|S%lld", (long long)width);
    descr = string_descr_text;
  }

  char shape[TIDE_MAX_DIMS * 22 + 4];
  size_t n = 0;
  shape[n++] = '(';
  for (int d = 0; d < src->ndim; d++)
    n += (size_t)snprintf(shape + n, sizeof shape - n, d ? ", %lld" : "%lld", (long long)src->dims[d]);
  if (src->ndim == 1) shape[n++] = ',';
  shape[n++] = ')';
  shape[n] = '\0';
  char header[512];
  int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
  /* numpy pads with spaces so that the data start at a multiple of 64, and ends the header with '\n' */
  size_t total = 10 + (size_t)len + 1;
  size_t padded = (total + 63) / 64 * 64;
  memset(header + len, ' ', padded - total);
  header[padded - 11] = '\n';
  size_t hlen = padded - 10;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};

  atomic_file a;
  tide_status st = atomic_file_begin(&a, path, "write_npy");
  if (!st) {
    st = atomic_file_write(&a, pre, sizeof pre);
    if (!st) st = atomic_file_write(&a, header, hlen);
    if (!st) st = write_data(&a, src, width);
    st = st ? (atomic_file_abort(&a), st) : atomic_file_commit(&a);
  }
  tide_tensor_release(&copy);
  return st;
}
