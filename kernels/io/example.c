/* io/example.c — tf.train.Example: parsing serialized Examples against
 * FixedLen/VarLen feature specs with TF's checks, and building new ones. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tide/records.h"
#include "tide/strings.h"
#include "tide_proto/example.pb-c.h"
#include "../core/internal.h"

/* TF's names of the value types, as its messages spell them. */
static const char *type_name(int t) { return t == TIDE_FEATURE_INT64 ? "int64" : t == TIDE_FEATURE_FLOAT ? "float" : "string"; }

static int kind_type(Tensorflow__Feature__KindCase k) {
  switch (k) {
  case TENSORFLOW__FEATURE__KIND_INT64_LIST: return TIDE_FEATURE_INT64;
  case TENSORFLOW__FEATURE__KIND_FLOAT_LIST: return TIDE_FEATURE_FLOAT;
  case TENSORFLOW__FEATURE__KIND_BYTES_LIST: return TIDE_FEATURE_BYTES;
  default: return -1;
  }
}

/* The number of values a feature holds (its kind is set). */
static size_t feature_len(const Tensorflow__Feature *f) {
  switch (f->kind_case) {
  case TENSORFLOW__FEATURE__KIND_INT64_LIST: return f->int64_list ? f->int64_list->n_value : 0;
  case TENSORFLOW__FEATURE__KIND_FLOAT_LIST: return f->float_list ? f->float_list->n_value : 0;
  case TENSORFLOW__FEATURE__KIND_BYTES_LIST: return f->bytes_list ? f->bytes_list->n_value : 0;
  default: return 0;
  }
}

/* "[2, 3]" */
static void shape_text(const tide_feature_spec *s, char *out, size_t n) {
  size_t at = (size_t)snprintf(out, n, "[");
  for (int d = 0; d < s->ndim && at < n; d++) at += (size_t)snprintf(out + at, n - at, d ? ", %" PRId64 : "%" PRId64, s->dims[d]);
  if (at < n) snprintf(out + at, n - at, "]");
}

static int64_t num_elements(const tide_feature_spec *s) {
  int64_t k = 1;
  for (int d = 0; d < s->ndim; d++) k *= s->dims[d];
  return k;
}

/* A batch's unpacked Examples live in an arena freed at once with it: the
 * hundreds of small allocations protobuf-c makes per batch (an entry per
 * feature, its key, its value list) cost more in malloc and free than the
 * decoding (batches of 128 records: malloc and free took about 40% of the
 * time, made worse by the whole batch being alive at once). */
typedef struct arena_block {
  struct arena_block *next;
  size_t used, cap;
  max_align_t data[]; /* aligned for any field protobuf-c stores */
} arena_block;

enum { ARENA_FIRST = 16 << 10, ARENA_MAX_STEP = 1 << 20 };

static void *arena_alloc(void *ctx, size_t size) {
  arena_block **head = ctx;
  size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  arena_block *b = *head;
  if (!b || b->cap - b->used < size) {
    size_t cap = b ? (b->cap < ARENA_MAX_STEP ? 2 * b->cap : b->cap) : ARENA_FIRST;
    if (cap < size) cap = size;
    arena_block *grown = malloc(sizeof *grown + cap);
    if (!grown) return NULL;
    grown->next = b;
    grown->used = 0;
    grown->cap = cap;
    *head = b = grown;
  }
  void *p = (char *)b->data + b->used;
  b->used += size;
  return p;
}

static void arena_free(void *ctx, void *p) { (void)ctx, (void)p; } /* all at once, in arena_release */

static void arena_release(arena_block *b) {
  while (b) {
    arena_block *next = b->next;
    free(b);
    b = next;
  }
}

struct tide_example_batch {
  arena_block *arena;            /* the unpacked Examples' memory */
  ProtobufCAllocator allocator;  /* arena_alloc over `arena` */
  int64_t n;
  int nspecs;
  tide_feature_spec *specs;      /* copies of the caller's (pointers stay the caller's) */
  int64_t *elements;             /* [nspecs]: FixedLen sizes */
  Tensorflow__Example **examples; /* [n] */
  const Tensorflow__Feature **found; /* [nspecs * n]: the feature (kind set) or NULL */
  int64_t *offsets;              /* [nspecs * (n + 1)]: value offsets of each example */
};

void tide_example_batch_free(tide_example_batch *b) {
  if (!b) return;
  arena_release(b->arena); /* every unpacked Example with it */
  free(b->examples);
  free(b->found);
  free(b->offsets);
  free(b->elements);
  free(b->specs);
  free(b);
}

/* The last feature called `name` in ex whose kind is set (TF: a later
 * duplicate wins; a Feature with no kind counts as absent), or NULL. */
static const Tensorflow__Feature *lookup(const Tensorflow__Example *ex, const char *name, size_t name_len) {
  if (!ex->features) return NULL;
  const Tensorflow__Features *fs = ex->features;
  for (size_t j = fs->n_feature; j-- > 0;) {
    const Tensorflow__Features__FeatureEntry *e = fs->feature[j];
    if (e->key.len == name_len && (name_len == 0 || memcmp(e->key.data, name, name_len) == 0))
      return e->value && kind_type(e->value->kind_case) >= 0 ? e->value : NULL;
  }
  return NULL;
}

/* "Key: a, Index: 3." or "Key: a." */
static void key_text(char *out, size_t n, const char *name, bool batch, int64_t k) {
  if (batch) snprintf(out, n, "Key: %s, Index: %" PRId64 ".", name, k);
  else snprintf(out, n, "Key: %s.", name);
}

tide_example_batch *tide_example_parse(int64_t n, const uint8_t *const *data, const size_t *lens, int nspecs,
                                       const tide_feature_spec *specs, bool batch) {
  if (n < 0 || nspecs < 0 || (n > 0 && (!data || !lens)) || (nspecs > 0 && !specs)) {
    TIDE_FAIL(TIDE_ERR_VALUE, "parse_example: bad arguments (n %" PRId64 ", %d features)", n, nspecs);
    return NULL;
  }
  for (int i = 0; i < nspecs; i++) {
    const tide_feature_spec *s = &specs[i];
    if (!s->name || s->type < 0 || s->type > 2 || (!s->var_len && (s->ndim < 0 || (s->ndim > 0 && !s->dims)))) {
      TIDE_FAIL(TIDE_ERR_VALUE, "parse_example: feature %d has a bad spec", i);
      return NULL;
    }
    for (int d = 0; !s->var_len && d < s->ndim; d++)
      if (s->dims[d] < 0) {
        TIDE_FAIL(TIDE_ERR_VALUE, "parse_example: feature %s: a FixedLenFeature needs a fully defined shape", s->name);
        return NULL;
      }
  }
  tide_example_batch *b = calloc(1, sizeof *b);
  if (!b) goto oom;
  b->allocator = (ProtobufCAllocator){arena_alloc, arena_free, &b->arena};
  b->n = n;
  b->nspecs = nspecs;
  size_t ns = (size_t)nspecs, nn = (size_t)n;
  if (!(b->specs = calloc(ns ? ns : 1, sizeof *b->specs)) || !(b->elements = calloc(ns ? ns : 1, sizeof *b->elements)) ||
      !(b->examples = calloc(nn ? nn : 1, sizeof *b->examples)) ||
      !(b->found = calloc(ns && nn ? ns * nn : 1, sizeof *b->found)) ||
      !(b->offsets = calloc(ns * (nn + 1), sizeof *b->offsets)))
    goto oom;
  if (ns) memcpy(b->specs, specs, ns * sizeof *specs);
  for (int i = 0; i < nspecs; i++) b->elements[i] = specs[i].var_len ? 0 : num_elements(&specs[i]);

  for (int64_t k = 0; k < n; k++) {
    if (lens[k] && !data[k]) {
      TIDE_FAIL(TIDE_ERR_VALUE, "parse_example: serialized example %" PRId64 " is NULL", k);
      goto fail;
    }
    static const uint8_t empty[1];
    b->examples[k] = tensorflow__example__unpack(&b->allocator, lens[k], lens[k] ? data[k] : empty);
    if (!b->examples[k]) {
      if (batch)
        TIDE_FAIL(TIDE_ERR_VALUE, "parse_example: Could not parse example input (index %" PRId64 ", %zu bytes): not a "
                  "serialized tf.train.Example", k, lens[k]);
      else
        TIDE_FAIL(TIDE_ERR_VALUE, "parse_single_example: Could not parse example input (%zu bytes): not a serialized "
                  "tf.train.Example", lens[k]);
      goto fail;
    }
  }

  const char *op = batch ? "parse_example" : "parse_single_example";
  for (int i = 0; i < nspecs; i++) {
    const tide_feature_spec *s = &specs[i];
    size_t name_len = strlen(s->name);
    int64_t *off = b->offsets + (size_t)i * (nn + 1);
    char key[300], shape[200];
    for (int64_t k = 0; k < n; k++) {
      const Tensorflow__Feature *f = lookup(b->examples[k], s->name, name_len);
      b->found[(size_t)i * nn + (size_t)k] = f;
      int64_t count;
      if (!f) {
        if (!s->var_len && !s->has_default) {
          if (batch)
            TIDE_FAIL(TIDE_ERR_VALUE, "%s: Name: <unknown>, Feature: %s (data type: %s) is required but could not be found "
                      "(example %" PRId64 ")", op, s->name, type_name(s->type), k);
          else
            TIDE_FAIL(TIDE_ERR_VALUE, "%s: Feature: %s (data type: %s) is required but could not be found", op, s->name,
                      type_name(s->type));
          goto fail;
        }
        count = b->elements[i];
      } else {
        int t = kind_type(f->kind_case);
        key_text(key, sizeof key, s->name, batch, k);
        if (t != s->type) {
          if (s->var_len)
            TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s  Data types don't match. Expected type: %s, Actual type: %s", op, key,
                      type_name(s->type), type_name(t));
          else
            TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s  Data types don't match. Data type: %s but expected type: %s", op, key,
                      type_name(t), type_name(s->type));
          goto fail;
        }
        count = (int64_t)feature_len(f);
        if (!s->var_len && count != b->elements[i]) {
          shape_text(s, shape, sizeof shape);
          TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %s  Number of %s values != expected.  Values size: %" PRId64
                    " but output shape: %s", op, key, type_name(s->type), count, shape);
          goto fail;
        }
      }
      off[k + 1] = off[k] + count;
    }
  }
  return b;
oom:
  TIDE_FAIL(TIDE_ERR_MEMORY, "parse_example: out of memory for %" PRId64 " examples", n);
fail:
  tide_example_batch_free(b);
  return NULL;
}

static bool valid_feature(const tide_example_batch *b, int i) { return b && i >= 0 && i < b->nspecs; }

int64_t tide_example_batch_count(const tide_example_batch *b, int i) {
  if (!valid_feature(b, i)) return 0;
  return b->offsets[(size_t)i * ((size_t)b->n + 1) + (size_t)b->n];
}

tide_status tide_example_batch_values(const tide_example_batch *b, int i, void *out) {
  if (!valid_feature(b, i)) return TIDE_FAIL(TIDE_ERR_INDEX, "parse_example: no feature %d", i);
  const tide_feature_spec *s = &b->specs[i];
  if (s->type == TIDE_FEATURE_BYTES)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "parse_example: feature %s holds bytes, not numbers", s->name);
  size_t width = s->type == TIDE_FEATURE_INT64 ? 8 : 4;
  size_t nn = (size_t)b->n;
  const int64_t *off = b->offsets + (size_t)i * (nn + 1);
  for (size_t k = 0; k < nn; k++) {
    const Tensorflow__Feature *f = b->found[(size_t)i * nn + k];
    size_t count = (size_t)(off[k + 1] - off[k]);
    const void *src = !f ? s->default_values
                      : s->type == TIDE_FEATURE_INT64 ? (const void *)f->int64_list->value
                                                      : (const void *)f->float_list->value;
    if (count && !src) return TIDE_FAIL(TIDE_ERR_VALUE, "parse_example: feature %s has no default values", s->name);
    if (count) memcpy((char *)out + (size_t)off[k] * width, src, count * width);
  }
  return TIDE_OK;
}

int64_t tide_example_batch_var_indices(const tide_example_batch *b, int i, int64_t *out) {
  if (!valid_feature(b, i)) return 0;
  size_t nn = (size_t)b->n;
  const int64_t *off = b->offsets + (size_t)i * (nn + 1);
  int64_t longest = 0;
  for (size_t k = 0; k < nn; k++) {
    int64_t count = off[k + 1] - off[k];
    if (count > longest) longest = count;
    for (int64_t j = 0; j < count; j++) {
      out[2 * (off[k] + j)] = (int64_t)k;
      out[2 * (off[k] + j) + 1] = j;
    }
  }
  return longest;
}

const uint8_t *tide_example_batch_bytes(const tide_example_batch *b, int i, int64_t k, size_t *len) {
  *len = 0;
  if (!valid_feature(b, i) || k < 0 || k >= tide_example_batch_count(b, i)) return NULL;
  size_t nn = (size_t)b->n;
  const int64_t *off = b->offsets + (size_t)i * (nn + 1);
  /* the example holding value k: binary search over the offsets */
  size_t lo = 0, hi = nn; /* off[lo] <= k < off[hi] */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (off[mid] <= k) lo = mid;
    else hi = mid;
  }
  const Tensorflow__Feature *f = b->found[(size_t)i * nn + lo];
  if (!f || f->kind_case != TENSORFLOW__FEATURE__KIND_BYTES_LIST) return NULL;
  const ProtobufCBinaryData *v = &f->bytes_list->value[k - off[lo]];
  *len = v->len;
  static const uint8_t nothing[1];
  return v->len ? v->data : nothing;
}

tide_status tide_example_batch_strings(const tide_example_batch *b, int i, tide_tensor *out, const tide_tensor *defaults) {
  if (!valid_feature(b, i)) return TIDE_FAIL(TIDE_ERR_INDEX, "parse_example: no feature %d", i);
  const tide_feature_spec *s = &b->specs[i];
  if (s->type != TIDE_FEATURE_BYTES)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "parse_example: feature %s holds %s values, not bytes", s->name, type_name(s->type));
  int64_t count = tide_example_batch_count(b, i);
  if (!out || out->dt != TIDE_STRING || out->nelem != count)
    return TIDE_FAIL(TIDE_ERR_VALUE, "parse_example: feature %s: the output must be a string tensor of %" PRId64
                     " elements", s->name, count);
  int64_t size = b->elements[i];
  size_t nn = (size_t)b->n;
  const int64_t *off = b->offsets + (size_t)i * (nn + 1);
  for (size_t k = 0; k < nn; k++) {
    const Tensorflow__Feature *f = b->found[(size_t)i * nn + k];
    for (int64_t j = 0; j < off[k + 1] - off[k]; j++) {
      const char *bytes;
      int64_t len;
      if (f) {
        const ProtobufCBinaryData *v = &f->bytes_list->value[j];
        bytes = (const char *)v->data;
        len = (int64_t)v->len;
      } else {
        if (!defaults || defaults->dt != TIDE_STRING || defaults->nelem != size)
          return TIDE_FAIL(TIDE_ERR_VALUE, "parse_example: feature %s has no default of %" PRId64 " strings", s->name, size);
        bytes = tide_string_at(defaults->data, j, &len);
      }
      tide_status st = tide_string_set(out, off[k] + j, bytes, len);
      if (st) return st;
    }
  }
  return TIDE_OK;
}

/* ---- building ------------------------------------------------------------------------ */

struct tide_example_builder {
  size_t n, cap;
  Tensorflow__Features__FeatureEntry **entries;
  Tensorflow__Features features;
  Tensorflow__Example example;
};

static void free_entry(Tensorflow__Features__FeatureEntry *e) {
  if (!e) return;
  Tensorflow__Feature *f = e->value;
  if (f) {
    switch (f->kind_case) {
    case TENSORFLOW__FEATURE__KIND_INT64_LIST:
      if (f->int64_list) free(f->int64_list->value);
      free(f->int64_list);
      break;
    case TENSORFLOW__FEATURE__KIND_FLOAT_LIST:
      if (f->float_list) free(f->float_list->value);
      free(f->float_list);
      break;
    case TENSORFLOW__FEATURE__KIND_BYTES_LIST:
      if (f->bytes_list) {
        for (size_t k = 0; k < f->bytes_list->n_value; k++) free(f->bytes_list->value[k].data);
        free(f->bytes_list->value);
      }
      free(f->bytes_list);
      break;
    default: break;
    }
    free(f);
  }
  free(e->key.data);
  free(e);
}

tide_example_builder *tide_example_builder_new(void) {
  tide_example_builder *b = calloc(1, sizeof *b);
  if (!b) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "serialize_example: out of memory");
    return NULL;
  }
  tensorflow__features__init(&b->features);
  tensorflow__example__init(&b->example);
  b->example.features = &b->features;
  return b;
}

void tide_example_builder_free(tide_example_builder *b) {
  if (!b) return;
  for (size_t k = 0; k < b->n; k++) free_entry(b->entries[k]);
  free(b->entries);
  free(b);
}

/* A new entry for `name` holding an empty feature, placed into b (replacing
 * one of the same name); NULL when out of memory. */
static Tensorflow__Feature *new_entry(tide_example_builder *b, const char *name) {
  Tensorflow__Features__FeatureEntry *e = calloc(1, sizeof *e);
  Tensorflow__Feature *f = calloc(1, sizeof *f);
  size_t len = name ? strlen(name) : 0;
  uint8_t *key = malloc(len ? len : 1);
  if (!e || !f || !key) {
    free(e);
    free(f);
    free(key);
    return NULL;
  }
  tensorflow__features__feature_entry__init(e);
  tensorflow__feature__init(f);
  if (len) memcpy(key, name, len);
  e->key.data = key;
  e->key.len = len;
  e->value = f;
  for (size_t k = 0; k < b->n; k++)
    if (b->entries[k]->key.len == len && memcmp(b->entries[k]->key.data, key, len) == 0) {
      free_entry(b->entries[k]);
      b->entries[k] = e;
      return f;
    }
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 8;
    Tensorflow__Features__FeatureEntry **grown = realloc(b->entries, cap * sizeof *grown);
    if (!grown) {
      free_entry(e);
      return NULL;
    }
    b->entries = grown;
    b->cap = cap;
  }
  b->entries[b->n++] = e;
  b->features.feature = b->entries;
  b->features.n_feature = b->n;
  return f;
}

/* A copy of n items of `width` bytes (a valid pointer even for none). */
static void *copy_of(const void *v, size_t n, size_t width) {
  void *out = malloc(n ? n * width : 1);
  if (out && n) memcpy(out, v, n * width);
  return out;
}

static tide_status check_args(tide_example_builder *b, const char *name, const void *v, size_t n) {
  if (!b) return TIDE_FAIL(TIDE_ERR_VALUE, "serialize_example: the builder is NULL");
  if (!name) return TIDE_FAIL(TIDE_ERR_VALUE, "serialize_example: a feature name is NULL");
  if (n && !v) return TIDE_FAIL(TIDE_ERR_VALUE, "serialize_example: feature %s: values are NULL", name);
  return TIDE_OK;
}

tide_status tide_example_builder_add_int64(tide_example_builder *b, const char *name, const int64_t *v, size_t n) {
  tide_status s = check_args(b, name, v, n);
  if (s) return s;
  Tensorflow__Feature *f = new_entry(b, name);
  Tensorflow__Int64List *list = f ? malloc(sizeof *list) : NULL;
  int64_t *values = list ? copy_of(v, n, 8) : NULL;
  if (!values) {
    free(list);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "serialize_example: feature %s: out of memory", name);
  }
  tensorflow__int64_list__init(list);
  list->value = values;
  list->n_value = n;
  f->kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
  f->int64_list = list;
  return TIDE_OK;
}

tide_status tide_example_builder_add_float(tide_example_builder *b, const char *name, const float *v, size_t n) {
  tide_status s = check_args(b, name, v, n);
  if (s) return s;
  Tensorflow__Feature *f = new_entry(b, name);
  Tensorflow__FloatList *list = f ? malloc(sizeof *list) : NULL;
  float *values = list ? copy_of(v, n, 4) : NULL;
  if (!values) {
    free(list);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "serialize_example: feature %s: out of memory", name);
  }
  tensorflow__float_list__init(list);
  list->value = values;
  list->n_value = n;
  f->kind_case = TENSORFLOW__FEATURE__KIND_FLOAT_LIST;
  f->float_list = list;
  return TIDE_OK;
}

tide_status tide_example_builder_add_bytes(tide_example_builder *b, const char *name, const uint8_t *const *values,
                                           const size_t *lens, size_t n) {
  tide_status s = check_args(b, name, values, n);
  if (s) return s;
  if (n && !lens) return TIDE_FAIL(TIDE_ERR_VALUE, "serialize_example: feature %s: lengths are NULL", name);
  Tensorflow__Feature *f = new_entry(b, name);
  Tensorflow__BytesList *list = f ? malloc(sizeof *list) : NULL;
  ProtobufCBinaryData *items = list ? calloc(n ? n : 1, sizeof *items) : NULL;
  if (!items) {
    free(list);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "serialize_example: feature %s: out of memory", name);
  }
  tensorflow__bytes_list__init(list);
  list->value = items;
  list->n_value = n;
  f->kind_case = TENSORFLOW__FEATURE__KIND_BYTES_LIST;
  f->bytes_list = list; /* owned by the entry from here: free_entry frees partial copies */
  for (size_t k = 0; k < n; k++) {
    if (lens[k] && !values[k]) return TIDE_FAIL(TIDE_ERR_VALUE, "serialize_example: feature %s: value %zu is NULL", name, k);
    if (!(items[k].data = copy_of(values[k], lens[k], 1)))
      return TIDE_FAIL(TIDE_ERR_MEMORY, "serialize_example: feature %s: out of memory", name);
    items[k].len = lens[k];
  }
  return TIDE_OK;
}

size_t tide_example_builder_size(tide_example_builder *b) { return b ? tensorflow__example__get_packed_size(&b->example) : 0; }

size_t tide_example_builder_pack(tide_example_builder *b, uint8_t *out) {
  return b ? tensorflow__example__pack(&b->example, out) : 0;
}
