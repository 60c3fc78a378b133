/* graph/build_index.c — the hash indexes that keep graph building linear:
 * constants by identity (or by value when small and inline), variable reads
 * and the last node assigning each variable, and captures by outer value. */
#include "graph_internal.h"

#include "../core/internal.h"

#include <stdlib.h>
#include <string.h>

/* Fold v into hash h. */
static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/* ---- an open-addressing multimap: 64-bit key -> node index ---------------- */

/* The home slot of key (high bits folded in: keys are products). */
static uint32_t home(const gmap *m, uint64_t key) { return (uint32_t)(key ^ (key >> 32)) & (m->cap - 1); }

/* The slot after s. */
static uint32_t next_slot(const gmap *m, uint32_t s) { return (s + 1) & (m->cap - 1); }

/* Grow m to hold one more entry at a load of at most one half. */
static tide_status gmap_reserve(gmap *m) {
  if (2 * (m->used + 1) <= m->cap) return TIDE_OK;
  uint32_t cap = m->cap ? 2 * m->cap : 64;
  gmap grown = {calloc(cap, sizeof *grown.keys), malloc(cap * sizeof *grown.vals), cap, 0};
  if (!grown.keys || !grown.vals) {
    free(grown.keys);
    free(grown.vals);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  }
  for (uint32_t s = 0; s < cap; s++) grown.vals[s] = -1;
  for (uint32_t s = 0; s < m->cap; s++) {
    if (m->vals[s] < 0) continue;
    uint32_t t = home(&grown, m->keys[s]);
    while (grown.vals[t] >= 0) t = next_slot(&grown, t);
    grown.keys[t] = m->keys[s];
    grown.vals[t] = m->vals[s];
    grown.used++;
  }
  free(m->keys);
  free(m->vals);
  *m = grown;
  return TIDE_OK;
}

/* Add key -> val (a key may hold several values). */
static tide_status gmap_add(gmap *m, uint64_t key, int val) {
  tide_status st = gmap_reserve(m);
  if (st) return st;
  uint32_t s = home(m, key);
  while (m->vals[s] >= 0) s = next_slot(m, s);
  m->keys[s] = key;
  m->vals[s] = val;
  m->used++;
  return TIDE_OK;
}

/* The slot of the first value of key, or -1. */
static int64_t gmap_first(const gmap *m, uint64_t key) {
  if (!m->cap) return -1;
  for (uint32_t s = home(m, key); m->vals[s] >= 0; s = next_slot(m, s))
    if (m->keys[s] == key) return s;
  return -1;
}

/* The slot of the next value of key after slot `from`, or -1. */
static int64_t gmap_next(const gmap *m, uint64_t key, int64_t from) {
  for (uint32_t s = next_slot(m, (uint32_t)from); m->vals[s] >= 0; s = next_slot(m, s))
    if (m->keys[s] == key) return s;
  return -1;
}

/* Make val the one value of key. */
static tide_status gmap_set(gmap *m, uint64_t key, int val) {
  int64_t s = gmap_first(m, key);
  if (s >= 0) {
    m->vals[s] = val;
    return TIDE_OK;
  }
  return gmap_add(m, key, val);
}

static void gmap_free(gmap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

void tide_graph_index_free(tide_graph *g) {
  gmap_free(&g->index.consts);
  gmap_free(&g->index.reads);
  gmap_free(&g->index.assigns);
  gmap_free(&g->index.captures);
}

/* ---- constants ------------------------------------------------------------- */

/* A small inline constant is found by its values (Lua numbers in a traced
 * loop make one each); other constants by identity: the same view of the
 * same storage. */
static bool by_value(const tide_tensor *t) {
  return (t->flags & TIDE_TENSOR_INLINE) && tide_tensor_is_contiguous(t) && t->nelem >= 0;
}

static size_t nbytes(const tide_tensor *t) { return (size_t)t->nelem * tide_dtype_size_unchecked(t->dt); }

static uint64_t const_key(const tide_tensor *t) {
  uint64_t h = mix(mix(0x7469646563ull, (uint64_t)t->dt), (uint64_t)t->ndim);
  for (int d = 0; d < t->ndim; d++) h = mix(h, (uint64_t)t->dims[d]);
  if (by_value(t)) {
    const unsigned char *b = t->data;
    size_t n = nbytes(t);
    for (size_t i = 0; i < n; i++) h = mix(h, b[i]);
    return mix(h, 1);
  }
  h = mix(mix(h, (uint64_t)(uintptr_t)t->data), (uint64_t)(uintptr_t)t->storage);
  for (int d = 0; d < t->ndim; d++) h = mix(h, (uint64_t)t->strides[d]);
  return h;
}

/* True when constant node value `a` stands for the eager tensor t. */
static bool same_const(const tide_tensor *a, const tide_tensor *t) {
  if (a->dt != t->dt || a->ndim != t->ndim) return false;
  for (int d = 0; d < t->ndim; d++)
    if (a->dims[d] != t->dims[d]) return false;
  if (by_value(t)) return by_value(a) && memcmp(a->data, t->data, nbytes(t)) == 0;
  if (a->data != t->data || a->storage != t->storage) return false;
  for (int d = 0; d < t->ndim; d++)
    if (a->strides[d] != t->strides[d]) return false;
  return true;
}

int tide_graph_find_const(const tide_graph *g, const tide_tensor *t) {
  uint64_t key = const_key(t);
  for (int64_t s = gmap_first(&g->index.consts, key); s >= 0; s = gmap_next(&g->index.consts, key, s)) {
    int node = g->index.consts.vals[s];
    const gnode *n = &g->nodes[node];
    if (n->kind == TIDE_NODE_CONST && same_const(&n->value, t)) return node;
  }
  return -1;
}

tide_status tide_graph_note_const(tide_graph *g, int node) {
  return gmap_add(&g->index.consts, const_key(&g->nodes[node].value), node);
}

/* ---- variables --------------------------------------------------------------- */

static uint64_t ptr_key(const void *p) { return mix(0x76617269ull, (uint64_t)(uintptr_t)p); }

int tide_graph_find_read(const tide_graph *g, const tide_tensor *handle) {
  uint64_t key = ptr_key(handle);
  int64_t r = gmap_first(&g->index.reads, key);
  if (r < 0) return -1;
  int node = g->index.reads.vals[r];
  if (g->nodes[node].kind != TIDE_NODE_VARIABLE || g->nodes[node].handle != handle) return -1;
  int64_t a = gmap_first(&g->index.assigns, key);
  /* a read made before the variable's last assignment would not see it */
  if (a >= 0 && g->index.assigns.vals[a] > node) return -1;
  return node;
}

tide_status tide_graph_note_read(tide_graph *g, int node) {
  return gmap_set(&g->index.reads, ptr_key(g->nodes[node].handle), node);
}

/* Note node as the last to assign each variable that sub's nodes (and
 * their subgraphs) assign. */
static tide_status note_sub_assigns(tide_graph *g, int node, const tide_graph *sub) {
  for (int i = 0; sub && i < sub->nnodes; i++) {
    const gnode *n = &sub->nodes[i];
    tide_status st = TIDE_OK;
    if (n->kind == TIDE_NODE_ASSIGN) st = gmap_set(&g->index.assigns, ptr_key(n->handle), node);
    for (int k = 0; !st && k < 2; k++) st = note_sub_assigns(g, node, n->sub[k]);
    if (st) return st;
  }
  return TIDE_OK;
}

tide_status tide_graph_note_assigns(tide_graph *g, int node) {
  const gnode *n = &g->nodes[node];
  if (n->kind == TIDE_NODE_ASSIGN) return gmap_set(&g->index.assigns, ptr_key(n->handle), node);
  tide_status st = note_sub_assigns(g, node, n->sub[0]);
  return st ? st : note_sub_assigns(g, node, n->sub[1]);
}

/* ---- captures ---------------------------------------------------------------- */

static uint64_t value_key(gvalue v) { return mix(mix(0x63617074ull, (uint64_t)(uint32_t)v.node), (uint64_t)v.index); }

int tide_graph_find_capture(const tide_graph *g, gvalue outer) {
  uint64_t key = value_key(outer);
  for (int64_t s = gmap_first(&g->index.captures, key); s >= 0; s = gmap_next(&g->index.captures, key, s)) {
    int node = g->index.captures.vals[s];
    const gnode *n = &g->nodes[node];
    if (n->kind == TIDE_NODE_CAPTURE && n->capture.node == outer.node && n->capture.index == outer.index) return node;
  }
  return -1;
}

tide_status tide_graph_note_capture(tide_graph *g, int node) {
  return gmap_add(&g->index.captures, value_key(g->nodes[node].capture), node);
}
