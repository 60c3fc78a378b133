/* graph/cse.c — common-subexpression elimination: ops with the same op,
 * attributes and inputs (and no side effects) merge into the first of them;
 * constants with the same dtype, shape and values merge too. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* Constants up to this size are compared by value; larger ones by identity
 * (the same captured tensor), so CSE never scans big buffers. */
enum { CONST_BY_VALUE_BYTES = 4096 };

/* Fold v into hash h. */
static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/* Hash n bytes eight at a time (the attribute struct alone is 312 bytes). */
static uint64_t mix_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

/* True when t is a contiguous constant small enough to compare by value. */
static bool by_value(const tide_tensor *t) {
  return tide_tensor_is_contiguous(t) && t->nelem * (int64_t)tide_dtype_size_unchecked(t->dt) <= CONST_BY_VALUE_BYTES;
}

/* Bytes of t's elements. */
static size_t nbytes(const tide_tensor *t) { return (size_t)t->nelem * tide_dtype_size_unchecked(t->dt); }

/* A hash that equal nodes (same_node) share. */
static uint64_t node_hash(const gnode *n) {
  uint64_t h = mix((uint64_t)n->kind, (uint64_t)n->op);
  if (n->kind == TIDE_NODE_CONST) {
    const tide_tensor *t = &n->value;
    h = mix(mix(h, (uint64_t)t->dt), (uint64_t)t->ndim);
    for (int d = 0; d < t->ndim; d++) h = mix(h, (uint64_t)t->dims[d]);
    return by_value(t) ? mix_bytes(h, t->data, nbytes(t)) : mix(h, (uint64_t)(uintptr_t)t->data);
  }
  for (int k = 0; k < n->n_in; k++) h = mix(mix(h, (uint64_t)n->in[k].node), (uint64_t)n->in[k].index);
  return mix_bytes(h, &n->attrs, sizeof n->attrs);
}

/* Constants with the same dtype, shape and values (large ones: the same tensor). */
static bool same_const(const tide_tensor *a, const tide_tensor *b) {
  if (a->dt != b->dt || a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->dims[d] != b->dims[d]) return false;
  if (by_value(a) && by_value(b)) return memcmp(a->data, b->data, nbytes(a)) == 0;
  if (a->data != b->data) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->strides[d] != b->strides[d]) return false;
  return true;
}

/* The attribute struct has no padding, so bytes compare fields exactly
 * (attrs come zeroed from Lua's ffi.new and from C initializers). */
static bool same_node(const gnode *a, const gnode *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == TIDE_NODE_CONST) return same_const(&a->value, &b->value);
  if (a->op != b->op || a->n_in != b->n_in || a->n_out != b->n_out) return false;
  for (int k = 0; k < a->n_in; k++)
    if (a->in[k].node != b->in[k].node || a->in[k].index != b->in[k].index) return false;
  return memcmp(&a->attrs, &b->attrs, sizeof a->attrs) == 0;
}

/* Nodes CSE may merge: constants, and ops without side effects. */
static bool mergeable(const gnode *n) {
  if (n->flags & (NODE_DEAD | NODE_STATEFUL)) return false;
  return n->kind == TIDE_NODE_CONST || n->kind == TIDE_NODE_OP;
}

tide_status tide_graph_cse(tide_graph *g) {
  size_t cap = 16;
  while (cap < 2 * (size_t)g->nnodes) cap *= 2;
  int *remap = malloc(((size_t)g->nnodes + 1) * sizeof *remap);
  int *table = malloc(cap * sizeof *table); /* node indices, -1 empty (open addressing) */
  if (!remap || !table) {
    free(remap);
    free(table);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  }
  for (int i = 0; i < g->nnodes; i++) remap[i] = i;
  for (size_t s = 0; s < cap; s++) table[s] = -1;
  for (int i = 0; i < g->nnodes; i++) {
    gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    /* Inputs come first, so theirs are already merged. */
    for (int k = 0; k < n->n_in; k++) n->in[k].node = remap[n->in[k].node];
    if (!mergeable(n)) continue;
    size_t s = (size_t)node_hash(n) & (cap - 1);
    while (table[s] >= 0 && !same_node(&g->nodes[table[s]], n)) s = (s + 1) & (cap - 1);
    if (table[s] < 0) {
      table[s] = i;
    } else {
      remap[i] = table[s];
      n->flags |= NODE_DEAD;
    }
  }
  /* Subgraphs captured values of g: they follow the merge too. */
  tide_graph_remap_uses(g, remap);
  free(remap);
  free(table);
  return TIDE_OK;
}
