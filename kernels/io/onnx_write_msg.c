/* io/onnx_write_msg.c — the ONNX writer's messages: an arena they all live in, value
 * names kept unique, nodes with their attributes, and initializers from tide tensors. */
#include "onnx_write.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the arena: blocks freed together when the export ends ---------------------- */

struct ox_block {
  ox_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

enum { OX_BLOCK = 64 * 1024 };

void *ox_alloc(onnx_export *x, size_t n) {
  if (x->oom) return NULL;
  n = (n + 15) & ~(size_t)15;
  ox_block *b = x->arena;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > OX_BLOCK ? n : OX_BLOCK;
    ox_block *nb = malloc(sizeof *nb + cap);
    if (!nb) {
      x->oom = true;
      return NULL;
    }
    nb->used = 0, nb->cap = cap;
    /* A large block goes behind the current one, which keeps its room. */
    if (b && n > OX_BLOCK) {
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      x->arena = nb;
    }
    b = nb;
  }
  void *p = b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

void ox_arena_free(onnx_export *x) {
  for (ox_block *b = x->arena, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  x->arena = NULL;
  free(x->nodes);
  free(x->inits);
  free(x->names);
}

char *ox_strdup(onnx_export *x, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = ox_alloc(x, n);
  if (p) memcpy(p, s, n);
  return p;
}

tide_status ox_status(onnx_export *x) {
  if (x->err) return x->err;
  return x->oom ? (x->err = TIDE_FAIL(TIDE_ERR_MEMORY, "onnx.export: out of memory")) : TIDE_OK;
}

tide_status ox_fail(onnx_export *x, const char *fmt, ...) {
  char what[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (x->err) return x->err;
  return x->err = TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "onnx.export: %s (recorded at %s): %s", x->op ? x->op : "?",
                            x->origin ? x->origin : "?", what);
}

/* ---- names ------------------------------------------------------------------------- */

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool names_grow(onnx_export *x) {
  size_t cap = x->names_cap ? 2 * x->names_cap : 256;
  const char **t = calloc(cap, sizeof *t);
  if (!t) return x->oom = true, false;
  for (size_t i = 0; i < x->names_cap; i++) {
    const char *s = x->names[i];
    if (!s) continue;
    size_t k = name_hash(s) & (cap - 1);
    while (t[k]) k = (k + 1) & (cap - 1);
    t[k] = s;
  }
  free(x->names);
  x->names = t, x->names_cap = cap;
  return true;
}

bool ox_take_name(onnx_export *x, const char *name) {
  if (x->oom) return true;
  if (2 * (x->names_used + 1) > x->names_cap && !names_grow(x)) return true;
  size_t k = name_hash(name) & (x->names_cap - 1);
  for (; x->names[k]; k = (k + 1) & (x->names_cap - 1))
    if (strcmp(x->names[k], name) == 0) return false;
  const char *copy = ox_strdup(x, name);
  if (!copy) return true;
  x->names[k] = copy;
  x->names_used++;
  return true;
}

const char *ox_fresh(onnx_export *x, const char *hint) {
  char buf[160];
  for (;;) {
    snprintf(buf, sizeof buf, "%s_%u", hint, x->counter++);
    if (x->oom || x->err) return "";
    if (ox_take_name(x, buf)) break;
  }
  char *p = ox_strdup(x, buf);
  return p ? p : "";
}

/* ---- nodes and attributes ------------------------------------------------------------ */

static bool push_ptr(onnx_export *x, void ***arr, size_t *n, size_t *cap, void *p) {
  if (!p) return false;
  if (*n == *cap) {
    size_t c = *cap ? 2 * *cap : 64;
    void **grown = realloc(*arr, c * sizeof *grown);
    if (!grown) return x->oom = true, false;
    *arr = grown, *cap = c;
  }
  (*arr)[(*n)++] = p;
  return true;
}

static char **strings(onnx_export *x, int n, const char *const *s) {
  char **a = ox_alloc(x, (size_t)(n > 0 ? n : 1) * sizeof *a);
  for (int i = 0; a && i < n; i++)
    if (!(a[i] = ox_strdup(x, s[i] ? s[i] : ""))) return NULL;
  return a;
}

Onnx__NodeProto *ox_node(onnx_export *x, const char *op_type, int n_in, const char *const *in, int n_out,
                         const char *const *out) {
  Onnx__NodeProto *n = ox_alloc(x, sizeof *n);
  if (!n) return NULL;
  onnx__node_proto__init(n);
  n->op_type = ox_strdup(x, op_type);
  n->input = strings(x, n_in, in);
  n->output = strings(x, n_out, out);
  n->n_input = (size_t)n_in, n->n_output = (size_t)n_out;
  char name[160];
  snprintf(name, sizeof name, "%s_%zu", op_type, x->n_nodes);
  n->name = ox_strdup(x, name);
  if (!n->op_type || !n->input || !n->output || !n->name) return NULL;
  if (!push_ptr(x, (void ***)&x->nodes, &x->n_nodes, &x->cap_nodes, n)) return NULL;
  return n;
}

static Onnx__AttributeProto *attr(onnx_export *x, Onnx__NodeProto *n, const char *key,
                                  Onnx__AttributeProto__AttributeType type) {
  if (!n) return NULL;
  Onnx__AttributeProto *a = ox_alloc(x, sizeof *a);
  Onnx__AttributeProto **list = ox_alloc(x, (n->n_attribute + 1) * sizeof *list);
  if (!a || !list) return NULL;
  onnx__attribute_proto__init(a);
  if (!(a->name = ox_strdup(x, key))) return NULL;
  a->has_type = 1, a->type = type;
  if (n->n_attribute) memcpy(list, n->attribute, n->n_attribute * sizeof *list);
  list[n->n_attribute++] = a;
  n->attribute = list;
  return a;
}

void ox_attr_i(onnx_export *x, Onnx__NodeProto *n, const char *key, int64_t v) {
  Onnx__AttributeProto *a = attr(x, n, key, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  if (a) a->has_i = 1, a->i = v;
}

void ox_attr_f(onnx_export *x, Onnx__NodeProto *n, const char *key, float v) {
  Onnx__AttributeProto *a = attr(x, n, key, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  if (a) a->has_f = 1, a->f = v;
}

void ox_attr_s(onnx_export *x, Onnx__NodeProto *n, const char *key, const char *v) {
  Onnx__AttributeProto *a = attr(x, n, key, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  char *s = a ? ox_strdup(x, v) : NULL;
  if (s) a->has_s = 1, a->s.data = (uint8_t *)s, a->s.len = strlen(v);
}

void ox_attr_ints(onnx_export *x, Onnx__NodeProto *n, const char *key, int count, const int64_t *v) {
  Onnx__AttributeProto *a = attr(x, n, key, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  int64_t *copy = a ? ox_alloc(x, (size_t)(count > 0 ? count : 1) * sizeof *copy) : NULL;
  if (!copy) return;
  if (count > 0) memcpy(copy, v, (size_t)count * sizeof *copy);
  a->ints = copy, a->n_ints = (size_t)count;
}

const char *ox_op1(onnx_export *x, const char *op_type, const char *a, const char *out) {
  if (!out) out = ox_fresh(x, op_type);
  const char *in[1] = {a};
  ox_node(x, op_type, 1, in, 1, &out);
  return out;
}

const char *ox_op2(onnx_export *x, const char *op_type, const char *a, const char *b, const char *out) {
  if (!out) out = ox_fresh(x, op_type);
  const char *in[2] = {a, b};
  ox_node(x, op_type, 2, in, 1, &out);
  return out;
}

/* ---- tensors ------------------------------------------------------------------------- */

int ox_dtype(int dt) {
  switch (dt) {
  case TIDE_FLOAT32: return ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  case TIDE_FLOAT64: return ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
  case TIDE_FLOAT16: return ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
  case TIDE_BFLOAT16: return ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
  case TIDE_INT8: return ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
  case TIDE_UINT8: return ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
  case TIDE_INT32: return ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
  case TIDE_INT64: return ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
  case TIDE_BOOL: return ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
  default: return 0;
  }
}

/* A TensorProto of dtype dt and dims whose raw data (little-endian, as tide keeps
 * it) is `bytes` bytes copied from `data`. */
static const char *add_init(onnx_export *x, const char *name, int dt, int ndim, const int64_t *dims, const void *data,
                            size_t bytes) {
  if (!name) name = ox_fresh(x, "const");
  Onnx__TensorProto *t = ox_alloc(x, sizeof *t);
  if (!t) return "";
  onnx__tensor_proto__init(t);
  t->name = ox_strdup(x, name);
  t->has_data_type = 1, t->data_type = ox_dtype(dt);
  t->dims = ox_alloc(x, (size_t)(ndim > 0 ? ndim : 1) * sizeof *t->dims);
  if (t->dims && ndim > 0) memcpy(t->dims, dims, (size_t)ndim * sizeof *t->dims);
  t->n_dims = (size_t)ndim;
  t->has_raw_data = 1;
  t->raw_data.len = bytes;
  t->raw_data.data = ox_alloc(x, bytes ? bytes : 1);
  if (t->raw_data.data && bytes) memcpy(t->raw_data.data, data, bytes);
  if (!t->name || !t->dims || !t->raw_data.data) return "";
  push_ptr(x, (void ***)&x->inits, &x->n_inits, &x->cap_inits, t);
  return t->name;
}

const char *ox_init_tensor(onnx_export *x, const tide_tensor *t, const char *name) {
  if (x->oom || x->err) return "";
  if (!ox_dtype(t->dt)) {
    ox_fail(x, "a constant of dtype %s has no ONNX form tide writes", tide_dtype_name(t->dt));
    return "";
  }
  const tide_tensor *src = t;
  tide_tensor tmp;
  memset(&tmp, 0, sizeof tmp);
  if (!tide_tensor_is_contiguous(t) || t->dev != TIDE_CPU) {
    if (tide_tensor_init(&tmp, t->dt, t->ndim, t->dims) || tide_tensor_copy_into(&tmp, t)) {
      tide_tensor_release(&tmp);
      if (!x->err) x->err = tide_last_status() ? tide_last_status() : TIDE_ERR_INTERNAL;
      return "";
    }
    src = &tmp;
  }
  const char *r = add_init(x, name, t->dt, t->ndim, t->dims, src->data, (size_t)t->nelem * tide_dtype_size(t->dt));
  if (src == &tmp) tide_tensor_release(&tmp);
  return r;
}

const char *ox_init_ints(onnx_export *x, int n, const int64_t *v) {
  int64_t dims[1] = {n};
  return add_init(x, NULL, TIDE_INT64, 1, dims, v, (size_t)n * sizeof *v);
}

const char *ox_init_floats(onnx_export *x, int n, const float *v) {
  int64_t dims[1] = {n};
  return add_init(x, NULL, TIDE_FLOAT32, 1, dims, v, (size_t)n * sizeof *v);
}

const char *ox_init_scalar(onnx_export *x, int dt, double v) { return ox_init_number(x, dt, 0, v); }

const char *ox_init_number(onnx_export *x, int dt, int ndim, double v) {
  unsigned char b[8];
  switch (dt) {
  case TIDE_FLOAT32: { float f = (float)v; memcpy(b, &f, 4); break; }
  case TIDE_FLOAT64: memcpy(b, &v, 8); break;
  case TIDE_FLOAT16: { uint16_t h = tide_float_to_half((float)v); memcpy(b, &h, 2); break; }
  case TIDE_BFLOAT16: { uint16_t h = tide_float_to_bfloat16((float)v); memcpy(b, &h, 2); break; }
  case TIDE_INT8: { int8_t i = (int8_t)v; memcpy(b, &i, 1); break; }
  case TIDE_UINT8: { uint8_t i = (uint8_t)v; memcpy(b, &i, 1); break; }
  case TIDE_INT32: { int32_t i = (int32_t)v; memcpy(b, &i, 4); break; }
  case TIDE_INT64: { int64_t i = (int64_t)v; memcpy(b, &i, 8); break; }
  case TIDE_BOOL: b[0] = v != 0; break;
  default: ox_fail(x, "a number of dtype %s has no ONNX form tide writes", tide_dtype_name(dt)); return "";
  }
  int64_t ones[TIDE_MAX_DIMS];
  for (int d = 0; d < TIDE_MAX_DIMS; d++) ones[d] = 1;
  return add_init(x, NULL, dt, ndim < 0 ? 0 : ndim > TIDE_MAX_DIMS ? TIDE_MAX_DIMS : ndim, ones, b, tide_dtype_size(dt));
}

void ox_attr_scalar(onnx_export *x, Onnx__NodeProto *n, const char *key, int dt, double v) {
  size_t before = x->n_inits;
  const char *name = ox_init_scalar(x, dt, v);
  if (!*name || x->n_inits != before + 1) return;
  /* Taken back from the initializers into the attribute, as a 1-element tensor. */
  Onnx__TensorProto *t = x->inits[--x->n_inits];
  t->dims = ox_alloc(x, sizeof *t->dims);
  if (!t->dims) return;
  t->dims[0] = 1, t->n_dims = 1;
  Onnx__AttributeProto *a = attr(x, n, key, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  if (a) a->t = t;
}
