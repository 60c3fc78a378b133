/* io/tensor_file.c — a small safetensors codec for the SavedModel's tensor
 * files: u64 LE header length, JSON header (dtype, shape, data_offsets), data. */
#include "tensor_file.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tide/dtype.h"

enum { TFILE_MAX_HEADER = 100 << 20 };

static const char *const ST_NAMES[TIDE_NUM_DTYPES] = {"F32", "F64", "F16", "BF16", "I8", "U8", "I32", "I64", "BOOL"};

static int dtype_from_st(const char *s) {
  for (int i = 0; i < TIDE_NUM_DTYPES; i++)
    if (ST_NAMES[i] && !strcmp(s, ST_NAMES[i])) return i; /* strings have no safetensors dtype */
  return -1;
}

static tide_status write_all(int fd, const void *p, size_t n, const char *path) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return tide_set_error(TIDE_ERR_IO, "saved model: cannot write %s: %s", path, strerror(errno));
    c += w;
    n -= (size_t)w;
  }
  return TIDE_OK;
}

tide_status tfile_write(const char *path, int n, const char *const *names, const tide_tensor *const *tensors) {
  cJSON *h = cJSON_CreateObject();
  if (!h) return tide_set_error(TIDE_ERR_MEMORY, "saved model: out of memory");
  cJSON *meta = cJSON_AddObjectToObject(h, "__metadata__");
  if (meta) cJSON_AddStringToObject(meta, "format", "pt");
  uint64_t off = 0;
  for (int i = 0; i < n; i++) {
    const tide_tensor *t = tensors[i];
    if (t->dt < 0 || t->dt >= TIDE_NUM_DTYPES || !ST_NAMES[t->dt] || t->ndim < 0) {
      cJSON_Delete(h);
      return tide_set_error(TIDE_ERR_VALUE, "saved model: tensor '%s' (%s) cannot be written: safetensors has no such "
                            "dtype", names[i], tide_dtype_name(t->dt));
    }
    cJSON *e = cJSON_AddObjectToObject(h, names[i]);
    if (!e) break;
    cJSON_AddStringToObject(e, "dtype", ST_NAMES[t->dt]);
    cJSON *shape = cJSON_AddArrayToObject(e, "shape");
    for (int d = 0; shape && d < t->ndim; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->dims[d]));
    uint64_t bytes = (uint64_t)t->nelem * tide_dtype_size(t->dt);
    cJSON *offs = cJSON_AddArrayToObject(e, "data_offsets");
    if (offs) {
      cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
      cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(off + bytes)));
    }
    off += bytes;
  }
  char *text = cJSON_PrintUnformatted(h);
  cJSON_Delete(h);
  if (!text) return tide_set_error(TIDE_ERR_MEMORY, "saved model: out of memory");
  size_t len = strlen(text), padded = (len + 7) & ~(size_t)7;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    free(text);
    return tide_set_error(TIDE_ERR_IO, "saved model: cannot create %s: %s", path, strerror(errno));
  }
  uint8_t lenbuf[8];
  for (int i = 0; i < 8; i++) lenbuf[i] = (uint8_t)((uint64_t)padded >> (8 * i));
  tide_status st = write_all(fd, lenbuf, 8, path);
  if (!st) st = write_all(fd, text, len, path);
  for (size_t i = len; !st && i < padded; i++) st = write_all(fd, " ", 1, path);
  free(text);
  for (int i = 0; !st && i < n; i++) {
    const tide_tensor *t = tensors[i];
    size_t bytes = (size_t)t->nelem * tide_dtype_size(t->dt);
    if (bytes == 0) continue;
    if (tide_tensor_is_contiguous(t)) {
      st = write_all(fd, t->data, bytes, path);
    } else {
      tide_tensor c;
      memset(&c, 0, sizeof c);
      st = tide_tensor_init(&c, t->dt, t->ndim, t->dims);
      if (!st) st = tide_tensor_copy_into(&c, t);
      if (!st) st = write_all(fd, c.data, bytes, path);
      tide_tensor_release(&c);
    }
  }
  if (!st && fsync(fd) != 0) st = tide_set_error(TIDE_ERR_IO, "saved model: cannot sync %s: %s", path, strerror(errno));
  if (close(fd) != 0 && !st) st = tide_set_error(TIDE_ERR_IO, "saved model: cannot close %s: %s", path, strerror(errno));
  return st;
}

void tfile_free(tfile *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->e[i].name);
    tide_tensor_release(&f->e[i].t);
  }
  free(f->e);
  memset(f, 0, sizeof *f);
}

const tide_tensor *tfile_find(const tfile *f, const char *name) {
  for (int i = 0; i < f->n; i++)
    if (!strcmp(f->e[i].name, name)) return &f->e[i].t;
  return NULL;
}

typedef struct span {
  uint64_t a, b;
  int entry;
} span;

static int span_cmp(const void *x, const void *y) {
  const span *p = x, *q = y;
  return p->a < q->a ? -1 : p->a > q->a ? 1 : (p->b < q->b ? -1 : p->b > q->b);
}

static bool get_u64(const cJSON *x, uint64_t *v) {
  if (!cJSON_IsNumber(x)) return false;
  double d = x->valuedouble;
  if (!(d >= 0 && d <= 9007199254740992.0) || d != floor(d)) return false;
  *v = (uint64_t)d;
  return true;
}

tide_status tfile_parse(const uint8_t *buf, size_t len, const char *what, tfile *out) {
  memset(out, 0, sizeof *out);
  if (len < 8) return tide_set_error(TIDE_ERR_VALUE, "saved model %s: %zu bytes, too short for a safetensors file", what, len);
  uint64_t hl = 0;
  for (int i = 0; i < 8; i++) hl |= (uint64_t)buf[i] << (8 * i);
  if (hl > len - 8 || hl > TFILE_MAX_HEADER)
    return tide_set_error(TIDE_ERR_VALUE, "saved model %s: header length %llu runs past the end of the file (%zu bytes)",
                          what, (unsigned long long)hl, len);
  const uint8_t *data = buf + 8 + hl;
  uint64_t data_len = len - 8 - hl;
  cJSON *h = cJSON_ParseWithLength((const char *)buf + 8, (size_t)hl);
  if (!cJSON_IsObject(h)) {
    cJSON_Delete(h);
    return tide_set_error(TIDE_ERR_VALUE, "saved model %s: the header is not a JSON object", what);
  }
  int count = cJSON_GetArraySize(h);
  out->e = calloc((size_t)count + 1, sizeof *out->e);
  span *spans = calloc((size_t)count + 1, sizeof *spans);
  tide_status st = (!out->e || !spans) ? tide_set_error(TIDE_ERR_MEMORY, "saved model: out of memory") : TIDE_OK;
  int ns = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, h) {
    if (st) break;
    if (e->string && !strcmp(e->string, "__metadata__")) continue;
    const char *name = e->string ? e->string : "";
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    int dtype = cJSON_IsString(dt) ? dtype_from_st(dt->valuestring) : -1;
    if (dtype < 0) {
      st = tide_set_error(TIDE_ERR_VALUE, "saved model %s: tensor '%s' has an unknown dtype %s", what, name,
                          cJSON_IsString(dt) ? dt->valuestring : "(missing)");
      break;
    }
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > TIDE_MAX_DIMS) {
      st = tide_set_error(TIDE_ERR_VALUE, "saved model %s: tensor '%s' has no shape of at most %d dims", what, name,
                          TIDE_MAX_DIMS);
      break;
    }
    int64_t dims[TIDE_MAX_DIMS];
    int nd = 0;
    uint64_t nelem = 1;
    const cJSON *x;
    bool ok = true;
    cJSON_ArrayForEach(x, shape) {
      uint64_t v;
      if (!get_u64(x, &v) || v > (UINT64_C(1) << 48)) ok = false;
      else {
        dims[nd++] = (int64_t)v;
        if (v && nelem > (UINT64_C(1) << 60) / v) ok = false;
        else nelem *= v;
      }
    }
    uint64_t a, b;
    if (!ok) {
      st = tide_set_error(TIDE_ERR_VALUE, "saved model %s: tensor '%s' has an absurd shape", what, name);
      break;
    }
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 || !get_u64(cJSON_GetArrayItem(offs, 0), &a) ||
        !get_u64(cJSON_GetArrayItem(offs, 1), &b) || a > b || b > data_len) {
      st = tide_set_error(TIDE_ERR_VALUE,
                          "saved model %s: tensor '%s' has data_offsets out of range (the data is %llu bytes)", what,
                          name, (unsigned long long)data_len);
      break;
    }
    if (b - a != nelem * tide_dtype_size(dtype)) {
      st = tide_set_error(TIDE_ERR_VALUE, "saved model %s: tensor '%s' holds %llu bytes, its shape needs %llu", what,
                          name, (unsigned long long)(b - a), (unsigned long long)(nelem * tide_dtype_size(dtype)));
      break;
    }
    tfile_entry *en = &out->e[out->n];
    en->name = strdup(name);
    if (!en->name) {
      st = tide_set_error(TIDE_ERR_MEMORY, "saved model: out of memory");
      break;
    }
    out->n++;
    st = tide_tensor_init_heap(&en->t, dtype, nd, dims);
    if (st) break;
    if (b > a) memcpy((void *)en->t.data, data + a, (size_t)(b - a));
    spans[ns++] = (span){a, b, out->n - 1};
  }
  cJSON_Delete(h);
  if (!st) {
    qsort(spans, (size_t)ns, sizeof *spans, span_cmp);
    for (int i = 1; i < ns && !st; i++)
      if (spans[i].a < spans[i - 1].b && spans[i].a < spans[i].b)
        st = tide_set_error(TIDE_ERR_VALUE, "saved model %s: tensors '%s' and '%s' overlap", what,
                            out->e[spans[i - 1].entry].name, out->e[spans[i].entry].name);
  }
  for (int i = 0; !st && i < out->n; i++)
    for (int k = 0; k < i && !st; k++)
      if (!strcmp(out->e[i].name, out->e[k].name))
        st = tide_set_error(TIDE_ERR_VALUE, "saved model %s: tensor '%s' appears twice", what, out->e[i].name);
  free(spans);
  if (st) tfile_free(out);
  return st;
}

tide_status tfile_read(const char *path, tfile *out) {
  memset(out, 0, sizeof *out);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tide_set_error(TIDE_ERR_IO, "saved model: cannot open %s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return tide_set_error(TIDE_ERR_IO, "saved model: %s is not a regular file", path);
  }
  size_t len = (size_t)sb.st_size;
  uint8_t *buf = malloc(len + 1);
  if (!buf) {
    close(fd);
    return tide_set_error(TIDE_ERR_MEMORY, "saved model: out of memory reading %s (%zu bytes)", path, len);
  }
  size_t got = 0;
  while (got < len) {
    ssize_t r = read(fd, buf + got, len - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  tide_status st = tfile_parse(buf, got, path, out);
  free(buf);
  return st;
}
