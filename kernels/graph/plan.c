/* graph/plan.c — memory planning: intermediates that never leave a run get
 * offsets in one arena by liveness (best-fit reuse of freed ranges, 64-byte
 * aligned); views keep the buffer they look into alive as long as they live. */
#include "plan.h"
#include "passes.h"

#include <stdlib.h>
#include <string.h>

enum { ARENA_ALIGN = 64 };

/* Free ranges of the arena, sorted by offset. */
typedef struct freelist {
  int n, cap;
  int64_t *off, *size;
  int64_t top;               /* the arena's size so far */
} freelist;

/* Room for one more free range; false when out of memory. */
static bool fl_reserve(freelist *f) {
  if (f->n < f->cap) return true;
  int cap = f->cap ? 2 * f->cap : 16;
  int64_t *off = realloc(f->off, (size_t)cap * sizeof *off);
  if (off) f->off = off;
  int64_t *size = off ? realloc(f->size, (size_t)cap * sizeof *size) : NULL;
  if (size) f->size = size;
  if (!off || !size) return false;
  f->cap = cap;
  return true;
}

/* The offset of a new block of `size` bytes: the smallest free range that
 * holds it, else the end of the arena (growing a free range that ends there). */
static int64_t fl_alloc(freelist *f, int64_t size) {
  int best = -1;
  for (int i = 0; i < f->n; i++)
    if (f->size[i] >= size && (best < 0 || f->size[i] < f->size[best])) best = i;
  if (best >= 0) {
    int64_t at = f->off[best];
    f->off[best] += size;
    f->size[best] -= size;
    if (f->size[best] == 0) {
      memmove(&f->off[best], &f->off[best + 1], (size_t)(f->n - best - 1) * sizeof *f->off);
      memmove(&f->size[best], &f->size[best + 1], (size_t)(f->n - best - 1) * sizeof *f->size);
      f->n--;
    }
    return at;
  }
  if (f->n > 0 && f->off[f->n - 1] + f->size[f->n - 1] == f->top) {
    int64_t at = f->off[f->n - 1];
    f->top = at + size;
    f->n--;
    return at;
  }
  int64_t at = f->top;
  f->top += size;
  return at;
}

/* Give [off, off + size) back, merging it with free neighbours. */
static bool fl_free(freelist *f, int64_t off, int64_t size) {
  int i = 0;
  while (i < f->n && f->off[i] < off) i++;
  bool left = i > 0 && f->off[i - 1] + f->size[i - 1] == off;
  bool right = i < f->n && off + size == f->off[i];
  if (left && right) {
    f->size[i - 1] += size + f->size[i];
    memmove(&f->off[i], &f->off[i + 1], (size_t)(f->n - i - 1) * sizeof *f->off);
    memmove(&f->size[i], &f->size[i + 1], (size_t)(f->n - i - 1) * sizeof *f->size);
    f->n--;
  } else if (left) {
    f->size[i - 1] += size;
  } else if (right) {
    f->off[i] = off;
    f->size[i] += size;
  } else {
    if (!fl_reserve(f)) return false;
    memmove(&f->off[i + 1], &f->off[i], (size_t)(f->n - i) * sizeof *f->off);
    memmove(&f->size[i + 1], &f->size[i], (size_t)(f->n - i) * sizeof *f->size);
    f->off[i] = off;
    f->size[i] = size;
    f->n++;
  }
  return true;
}

/* Arena bytes a value takes (64-byte aligned). */
static int64_t value_bytes(const tide_tensor *t) {
  int64_t n = t->nelem * (int64_t)tide_dtype_size_unchecked(t->dt);
  return (n + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
}

tide_status tide_plan_memory(const tide_graph *g, gplan *p) {
  int nv = p->nvals, nn = g->nnodes;
  int *root = malloc(((size_t)nv + 1) * sizeof *root);   /* the buffer a value lives in */
  int *end = malloc(((size_t)nv + 1) * sizeof *end);     /* the last node that needs a root's buffer */
  char *escapes = calloc((size_t)nv + 1, 1);             /* a root some reference outlives the run through */
  char *captured = calloc((size_t)nn + 1, 1);
  freelist f = {0};
  if (!root || !end || !escapes || !captured) {
    free(root), free(end), free(escapes), free(captured);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  }
  tide_graph_mark_captured(g, captured);
  for (int i = 0; i < nn; i++) {
    const gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    for (int k = 0; k < n->n_out; k++) {
      int v = p->base[i] + k;
      root[v] = v;
      /* A view's buffer is its input's (reshape may copy, but may not). */
      if (n->kind == TIDE_NODE_OP && (tide_op_defs[n->op].flags & TIDE_OPF_VIEW) && k == 0 && n->n_in > 0)
        root[v] = root[p->base[n->in[0].node] + n->in[0].index];
      end[v] = i;
    }
  }
  for (int i = 0; i < nn; i++) {
    const gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    for (int k = 0; k < n->n_out; k++) {
      int v = p->base[i] + k, r = root[v], last = p->last_use[v];
      if (last >= nn || captured[i]) escapes[r] = 1; /* a graph output, or read by a subgraph */
      else if (last > end[r]) end[r] = last;
    }
    /* Control flow may hand its inputs on as its outputs. */
    if (n->kind == TIDE_NODE_COND || n->kind == TIDE_NODE_WHILE)
      for (int k = 0; k < n->n_in; k++) escapes[root[p->base[n->in[k].node] + n->in[k].index]] = 1;
  }
  /* Walk the nodes in run order: a node's results take their ranges before
   * the buffers whose last reader it is give theirs back, so no kernel
   * writes over its own inputs. */
  int *order = malloc(((size_t)nv + 1) * sizeof *order); /* arena roots by the node that ends them */
  int *count = calloc((size_t)nn + 2, sizeof *count);
  tide_status st = TIDE_OK;
  if (!order || !count) st = TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  for (int v = 0; v < nv && !st; v++) {
    /* String values keep buffers of their own: an arena slot is reused between runs without releasing
     * what it held, and their elements are references to release. */
    bool planned = p->mode[v] == VAL_ALLOC && root[v] == v && !escapes[v] && !p->late[v] && p->layout[v].dt != TIDE_STRING;
    p->offset[v] = planned ? 0 : -1;
    if (planned) count[end[v] + 1]++;
  }
  for (int i = 0; i < nn && !st; i++) count[i + 1] += count[i];
  for (int v = 0; v < nv && !st; v++)
    if (p->offset[v] >= 0) order[count[end[v]]++] = v;
  /* count[i] now marks the end of node i's roots in `order`; they start at count[i - 1]. */
  int next = 0;
  for (int i = 0; i < nn && !st; i++) {
    const gnode *n = &g->nodes[i];
    if (!(n->flags & NODE_DEAD))
      for (int k = 0; k < n->n_out; k++) {
        int v = p->base[i] + k;
        if (p->offset[v] >= 0) p->offset[v] = fl_alloc(&f, value_bytes(&p->layout[v]));
      }
    for (; next < count[i] && !st; next++) {
      int v = order[next];
      if (!fl_free(&f, p->offset[v], value_bytes(&p->layout[v]))) st = TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
    }
  }
  if (!st) {
    p->arena_bytes = f.top;
    for (int v = 0; v < nv; v++)
      if (p->offset[v] >= 0) p->mode[v] = VAL_FIXED;
  }
  free(order), free(count), free(f.off), free(f.size);
  free(root), free(end), free(escapes), free(captured);
  return st;
}
