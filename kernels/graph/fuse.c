/* graph/fuse.c — elementwise fusion: the pass that merges groups of
 * elementwise ops (one exit, one iteration space) into FUSED nodes, and the
 * runtime that walks the output in cache-sized blocks running the group's
 * small program per block with the registry's own typed loops. */
#include "passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "../core/parallel.h"
#include "../cpu/elementwise.h"

enum {
  FUSE_MAX_INSTR = 48,  /* ops in one fused node */
  FUSE_MAX_EXT = 16,    /* inputs of one fused node */
  FUSE_MAX_REGS = FUSE_MAX_EXT + FUSE_MAX_INSTR,
  /* Elements per block: a program's blocks stay in L1 (float32: 4 KiB
   * each). Measured on a 10-op chain over 10M float32: 1024 beat 512, 2048
   * and 4096 by 15-50%; prefetching the next block's inputs did not help. */
  FUSE_BLOCK = 1024,
  FUSE_STACK = 16384,   /* scratch bytes a small run takes from the stack */
  FUSE_NAME = 192
};

/* Outputs this large are written with streaming stores (past the caches,
 * without reading the lines first): they would not stay cached anyway, and
 * the saved read is a third of a one-input chain's memory traffic (the
 * chain bench ran 10-30% faster). */
#define FUSE_STREAM_BYTES ((int64_t)16 << 20)

/* How an instruction's loop reads its ctx. */
enum { CTX_NONE = 0, CTX_ATTRS, CTX_BINARY };

typedef struct finstr {
  tide_loop_fn fn;
  int op;               /* registry op */
  int node;             /* the node it came from (its origin names errors) */
  int ctx;              /* CTX_* */
  int nsrc, src[3];     /* registers read */
  tide_attrs attrs;     /* unary ops read theirs (alpha, approximate) */
} finstr;

/* A fused node's program. Registers 0..n_ext-1 are the node's inputs;
 * register n_ext + t is instruction t's result; the last one is the output.
 * One allocation (the graph frees it with free()). */
typedef struct fprog {
  int n_ext, n_instr, n_slots;
  bool costly;                 /* transcendental or integer-division work: threads pay sooner */
  int dt[FUSE_MAX_REGS];       /* dtype of each register (halves are held as float32) */
  int slot[FUSE_MAX_REGS];     /* scratch block of each register (inputs use theirs only when gathered) */
  char name[FUSE_NAME];        /* "fused[mul, add, tanh]" */
  finstr ins[];
} fprog;

/* The dtype a register holding dt computes in (halves: float32), and its size. */
static int compute_dt(int dt) { return tide_is_half(dt) ? TIDE_FLOAT32 : dt; }
static int64_t compute_size(int dt) { return (int64_t)tide_dtype_size_unchecked(compute_dt(dt)); }

const char *tide_graph_fused_name(const gnode *n) { return n->fused ? ((const fprog *)n->fused)->name : "fused"; }

/* ---- the pass ------------------------------------------------------------------------- */

/* The loop that runs node n inside a fused block (and how it reads its ctx),
 * or NULL when n cannot be fused. */
static tide_loop_fn node_loop(const tide_graph *g, const gnode *n, int *ctx) {
  if (n->kind != TIDE_NODE_OP || (n->flags & (NODE_DEAD | NODE_STATEFUL)) || n->n_out != 1) return NULL;
  const tide_op_def *def = &tide_op_defs[n->op];
  if (!(def->flags & TIDE_OPF_ELEMENTWISE) || n->n_in < 1 || n->n_in > 3) return NULL;
  int dt = gval_desc((tide_graph *)g, n->in[0])->dt, out_dt = n->out[0].dt;
  *ctx = CTX_NONE;
  if (def->cpu == tide_cpu_unary) {
    *ctx = CTX_ATTRS;
    return tide_unary_loop(n->op, compute_dt(dt));
  }
  if (def->cpu == tide_cpu_binary) {
    *ctx = CTX_BINARY;
    return tide_binary_loop(n->op, compute_dt(dt));
  }
  if (def->cpu == tide_cpu_cast) return tide_cast_loop(dt, out_dt);
  if (def->cpu == tide_cpu_copy) return tide_copy_loop((size_t)compute_size(dt));
  if (def->cpu == tide_cpu_where) return tide_where_loop((size_t)compute_size(out_dt));
  if (def->cpu == tide_cpu_clip) return tide_clip_loop(compute_dt(dt));
  return NULL;
}

/* Ops a few cycles an element (not transcendental, no integer division). */
static bool cheap_op(int op) {
  switch (op) {
  case TIDE_OP_NEG: case TIDE_OP_ABS: case TIDE_OP_SIGN: case TIDE_OP_SQUARE: case TIDE_OP_RELU:
  case TIDE_OP_ADD: case TIDE_OP_SUB: case TIDE_OP_MUL: case TIDE_OP_DIV: case TIDE_OP_MAXIMUM:
  case TIDE_OP_MINIMUM: case TIDE_OP_CAST: case TIDE_OP_COPY: case TIDE_OP_WHERE: case TIDE_OP_CLIP:
    return true;
  default:
    return tide_op_defs[op].out_rule == TIDE_OUT_BOOL; /* comparisons and logic */
  }
}

/* Same rank and dims (unknown dims match unknown ones): the member computes
 * in the root's iteration space without repeating work. */
static bool same_space(const tide_tensor *a, const tide_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

typedef struct group {
  int n, members[FUSE_MAX_INSTR];   /* node indices */
  int n_ext;
  gvalue ext[FUSE_MAX_EXT];
} group;

/* The group's external inputs, in order of first use; false when too many. */
static bool collect_ext(const tide_graph *g, group *gr, const int *owner, int root) {
  gr->n_ext = 0;
  for (int j = 0; j < gr->n; j++) {
    const gnode *m = &g->nodes[gr->members[j]];
    for (int k = 0; k < m->n_in; k++) {
      gvalue v = m->in[k];
      if (owner[v.node] == root) continue;
      bool seen = false;
      for (int e = 0; e < gr->n_ext && !seen; e++) seen = gr->ext[e].node == v.node && gr->ext[e].index == v.index;
      if (seen) continue;
      if (gr->n_ext == FUSE_MAX_EXT) return false;
      gr->ext[gr->n_ext++] = v;
    }
  }
  return true;
}

/* qsort order of node indices. */
static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Build the program of group gr (members sorted) rooted at its last member. */
static fprog *compile(const tide_graph *g, group *gr, const int *owner, int root) {
  fprog *pg = calloc(1, sizeof *pg + (size_t)gr->n * sizeof(finstr));
  if (!pg) return NULL;
  pg->n_ext = gr->n_ext;
  pg->n_instr = gr->n;
  for (int e = 0; e < gr->n_ext; e++) {
    pg->dt[e] = gval_desc((tide_graph *)g, gr->ext[e])->dt;
    pg->slot[e] = e;
  }
  int reg_of_member[FUSE_MAX_INSTR];
  int last_use[FUSE_MAX_REGS];
  for (int r = 0; r < FUSE_MAX_REGS; r++) last_use[r] = -1;
  size_t len = (size_t)snprintf(pg->name, sizeof pg->name, "fused[");
  for (int t = 0; t < gr->n; t++) {
    const gnode *m = &g->nodes[gr->members[t]];
    finstr *in = &pg->ins[t];
    reg_of_member[t] = gr->n_ext + t;
    in->fn = node_loop(g, m, &in->ctx);
    in->op = m->op;
    in->node = gr->members[t];
    in->attrs = m->attrs;
    in->nsrc = m->n_in;
    for (int k = 0; k < m->n_in; k++) {
      gvalue v = m->in[k];
      int reg = -1;
      if (owner[v.node] == root) {
        for (int u = 0; u < t && reg < 0; u++)
          if (gr->members[u] == v.node) reg = reg_of_member[u];
      } else {
        for (int e = 0; e < gr->n_ext && reg < 0; e++)
          if (gr->ext[e].node == v.node && gr->ext[e].index == v.index) reg = e;
      }
      in->src[k] = reg;
      last_use[reg] = t;
    }
    pg->dt[gr->n_ext + t] = m->out[0].dt;
    if (!cheap_op(m->op)) pg->costly = true;
    if (len < sizeof pg->name)
      len += (size_t)snprintf(pg->name + len, sizeof pg->name - len, "%s%s", t ? ", " : "", tide_op_name(m->op));
  }
  if (len + 2 >= sizeof pg->name) strcpy(pg->name + sizeof pg->name - 6, "...]");
  else strcat(pg->name, "]");
  /* Scratch blocks by liveness: a result takes a free block before its
   * inputs' blocks are freed, so no loop writes over what it reads. */
  bool busy[FUSE_MAX_REGS] = {false};
  int n_slots = gr->n_ext;
  for (int t = 0; t < gr->n; t++) {
    int reg = gr->n_ext + t, s = gr->n_ext;
    while (s < n_slots && busy[s]) s++;
    if (s == n_slots) n_slots++;
    busy[s] = true;
    pg->slot[reg] = s;
    for (int k = 0; k < pg->ins[t].nsrc; k++) {
      int src = pg->ins[t].src[k];
      if (src >= gr->n_ext && last_use[src] == t) busy[pg->slot[src]] = false;
    }
    if (last_use[reg] < 0) busy[s] = false; /* the output, or a result no one reads */
  }
  pg->n_slots = n_slots;
  return pg;
}

/* True when all uses of node p are by members of the group. */
static bool used_only_inside(const tide_graph *g, const group *gr, int p, const int *uses) {
  int inside = 0;
  for (int j = 0; j < gr->n; j++) {
    const gnode *m = &g->nodes[gr->members[j]];
    for (int k = 0; k < m->n_in; k++) inside += m->in[k].node == p;
  }
  return inside == uses[p];
}

/* Grow the group rooted at r (already its only member) as far as it goes. */
static void grow(const tide_graph *g, group *gr, int *owner, const int *uses, int r) {
  const tide_tensor *space = &g->nodes[r].out[0];
  bool changed = true;
  while (changed) {
    changed = false;
    for (int j = 0; j < gr->n && gr->n < FUSE_MAX_INSTR; j++) {
      const gnode *m = &g->nodes[gr->members[j]];
      for (int k = 0; k < m->n_in && gr->n < FUSE_MAX_INSTR; k++) {
        int p = m->in[k].node, ctx;
        if (owner[p] != -1 || !node_loop(g, &g->nodes[p], &ctx)) continue;
        if (!same_space(&g->nodes[p].out[0], space) || !used_only_inside(g, gr, p, uses)) continue;
        owner[p] = r;
        gr->members[gr->n++] = p;
        if (!collect_ext(g, gr, owner, r)) { /* too many inputs: take p back out */
          owner[p] = -1;
          gr->n--;
          continue;
        }
        changed = true;
      }
    }
  }
}

tide_status tide_graph_fuse(tide_graph *g) {
  int *uses = tide_graph_use_counts(g);
  int *owner = malloc(((size_t)g->nnodes + 1) * sizeof *owner); /* root of the node's group; -1 none, -2 alone */
  group *gr = malloc(sizeof *gr);
  if (!uses || !owner || !gr) {
    free(uses), free(owner), free(gr);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  }
  for (int i = 0; i < g->nnodes; i++) owner[i] = -1;
  tide_status st = TIDE_OK;
  /* From the end: a root is the last op of its group, and every member
   * comes before it, so the fused node takes the root's place in order. */
  for (int r = g->nnodes - 1; r >= 0 && !st; r--) {
    int ctx;
    if (owner[r] != -1 || !node_loop(g, &g->nodes[r], &ctx)) continue;
    owner[r] = r;
    gr->n = 1;
    gr->members[0] = r;
    if (!collect_ext(g, gr, owner, r)) {
      owner[r] = -2;
      continue;
    }
    grow(g, gr, owner, uses, r);
    if (gr->n < 2) {
      owner[r] = -2; /* one op runs as well through its own kernel */
      continue;
    }
    qsort(gr->members, (size_t)gr->n, sizeof gr->members[0], cmp_int);
    collect_ext(g, gr, owner, r);
    fprog *pg = compile(g, gr, owner, r);
    gvalue *ins = malloc((size_t)gr->n_ext * sizeof *ins);
    if (!pg || !ins) {
      free(pg), free(ins);
      st = TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
      break;
    }
    memcpy(ins, gr->ext, (size_t)gr->n_ext * sizeof *ins);
    gnode *n = &g->nodes[r];
    free(n->in);
    n->in = ins;
    n->n_in = gr->n_ext;
    n->kind = TIDE_NODE_FUSED;
    n->fused = pg;
    for (int j = 0; j < gr->n; j++)
      if (gr->members[j] != r) g->nodes[gr->members[j]].flags |= NODE_DEAD;
  }
  free(uses), free(owner), free(gr);
  return st;
}

/* ---- planning ------------------------------------------------------------------------- */

tide_status tide_graph_fused_plan(tide_graph *g, gnode *n, const tide_tensor *const *in, tide_tensor *const *out) {
  const fprog *pg = n->fused;
  if (!pg) return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph '%s': a fused node has no program", g->name);
  tide_tensor *regs = calloc((size_t)pg->n_instr, sizeof *regs);
  if (!regs) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  tide_status st = TIDE_OK;
  /* Each op's own inference, in order: the output's layout, and the same
   * shape and dtype errors the ops give unfused. */
  for (int t = 0; t < pg->n_instr && !st; t++) {
    const finstr *ins = &pg->ins[t];
    const tide_op_def *def = &tide_op_defs[ins->op];
    const tide_tensor *src[3];
    for (int k = 0; k < ins->nsrc; k++)
      src[k] = ins->src[k] < pg->n_ext ? in[ins->src[k]] : &regs[ins->src[k] - pg->n_ext];
    tide_tensor *o = &regs[t];
    st = tide_infer(def, &ins->attrs, ins->nsrc, src, 1, &o); /* an input may have an unknown rank */
    if (st && g->nodes[ins->node].origin) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", tide_last_error());
      st = TIDE_FAIL(st, "%s [%s (recorded at %s)]", msg, def->name, g->nodes[ins->node].origin);
    }
  }
  if (!st) *out[0] = regs[pg->n_instr - 1]; /* a layout without data: copying the header is safe */
  free(regs);
  return st;
}

/* ---- running ---------------------------------------------------------------------------- */

/* One input seen over the (coalesced) output space. */
typedef struct fop {
  const char *data;
  int64_t st[TIDE_MAX_DIMS];   /* bytes per step of each dim (0 where broadcast) */
  int dt;
  bool flat;                   /* element e lies at data + e * st[nd - 1] */
} fop;

typedef struct frun {
  const tide_graph *g;
  const fprog *pg;
  int nd;
  int64_t dims[TIDE_MAX_DIMS];
  int64_t total, block;
  size_t slot_bytes;
  char *out;
  int out_dt;
  int failed;                  /* scratch memory could not be had */
  bool stream;                 /* the output is written past the caches (it is larger than they are) */
  fop ext[FUSE_MAX_EXT];
  tide_binary_ctx bad[FUSE_MAX_INSTR];
} frun;

/* n elements of dtype dt from src (stride in bytes) into the compute-type block dst. */
static void load(int dt, int64_t n, const char *src, int64_t stride, char *dst) {
  if (tide_is_half(dt)) {
    tide_halves_to_float(dt, n, src, stride, (float *)dst);
    return;
  }
  int64_t es = (int64_t)tide_dtype_size_unchecked(dt), s[2] = {es, stride};
  char *p[2] = {dst, (char *)src};
  tide_copy_loop((size_t)es)(n, p, s, NULL);
}

/* Elements [e0, e0 + m) of input o (row-major over the output) into dst. */
static void gather(const frun *r, const fop *o, int64_t e0, int64_t m, char *dst) {
  int nd = r->nd;
  int64_t inner = r->dims[nd - 1], step = o->st[nd - 1];
  if (o->flat) {
    load(o->dt, m, o->data + e0 * step, step, dst);
    return;
  }
  int64_t coord[TIDE_MAX_DIMS], rem = e0;
  const char *at = o->data;
  for (int d = nd - 1; d >= 0; d--) {
    coord[d] = rem % r->dims[d];
    rem /= r->dims[d];
    at += coord[d] * o->st[d];
  }
  int64_t es = compute_size(o->dt), done = 0;
  while (done < m) {
    int64_t n = inner - coord[nd - 1];
    if (n > m - done) n = m - done;
    load(o->dt, n, at, step, dst + done * es);
    done += n;
    at += n * step;
    coord[nd - 1] += n;
    for (int d = nd - 1; d > 0 && coord[d] == r->dims[d]; d--) { /* carry */
      at -= coord[d] * o->st[d];
      coord[d] = 0;
      coord[d - 1]++;
      at += o->st[d - 1];
    }
  }
}

/* Round float32 values to a half type and back, as a half-typed op's result is stored. */
static void round_halves(int dt, int64_t n, float *x) {
  if (dt == TIDE_FLOAT16)
    for (int64_t i = 0; i < n; i++) x[i] = tide_half_to_float(tide_float_to_half(x[i]));
  else
    for (int64_t i = 0; i < n; i++) x[i] = tide_bfloat16_to_float(tide_float_to_bfloat16(x[i]));
}

/* Copy n bytes past the caches (dst is 64-byte aligned at block starts). */
static void stream_copy(char *dst, const char *src, size_t n) {
  size_t i = 0;
#if defined(__AVX__)
  if (((uintptr_t)dst & 31) == 0)
    for (; i + 32 <= n; i += 32) _mm256_stream_ps((float *)(dst + i), _mm256_loadu_ps((const float *)(src + i)));
#elif defined(__SSE2__)
  if (((uintptr_t)dst & 15) == 0)
    for (; i + 16 <= n; i += 16) _mm_stream_si128((__m128i *)(dst + i), _mm_loadu_si128((const __m128i *)(src + i)));
#endif
  memcpy(dst + i, src + i, n - i);
}

/* Run the program on output elements [e0, e0 + m). */
static void run_block(frun *r, int64_t e0, int64_t m, char *scratch) {
  const fprog *pg = r->pg;
  char *ptr[FUSE_MAX_REGS];
  int64_t str[FUSE_MAX_REGS];
  for (int k = 0; k < pg->n_ext; k++) {
    const fop *o = &r->ext[k];
    if (o->flat && !tide_is_half(o->dt)) {
      str[k] = o->st[r->nd - 1];
      ptr[k] = (char *)o->data + e0 * str[k];
    } else {
      ptr[k] = scratch + (size_t)pg->slot[k] * r->slot_bytes;
      str[k] = compute_size(o->dt);
      gather(r, o, e0, m, ptr[k]);
    }
  }
  int last = pg->n_instr - 1;
  for (int t = 0; t <= last; t++) {
    const finstr *in = &pg->ins[t];
    int reg = pg->n_ext + t, dt = pg->dt[reg];
    bool direct = t == last && !tide_is_half(dt) && !r->stream; /* the last op writes the output itself */
    char *p[4];
    int64_t s[4];
    p[0] = direct ? r->out + e0 * (int64_t)tide_dtype_size_unchecked(dt) : scratch + (size_t)pg->slot[reg] * r->slot_bytes;
    s[0] = compute_size(dt);
    for (int k = 0; k < in->nsrc; k++) {
      p[k + 1] = ptr[in->src[k]];
      s[k + 1] = str[in->src[k]];
    }
    void *ctx = in->ctx == CTX_ATTRS ? (void *)&in->attrs : in->ctx == CTX_BINARY ? (void *)&r->bad[t] : NULL;
    in->fn(m, p, s, ctx);
    ptr[reg] = p[0];
    str[reg] = s[0];
    if (tide_is_half(dt)) {
      if (t == last) tide_float_to_halves(dt, m, (const float *)p[0], r->out + e0 * 2, 2);
      else round_halves(dt, m, (float *)p[0]);
    } else if (t == last && !direct) {
      stream_copy(r->out + e0 * (int64_t)tide_dtype_size_unchecked(dt), p[0], (size_t)m * tide_dtype_size_unchecked(dt));
    }
  }
}

/* Blocks [b0, b1) of the output, on one thread's scratch blocks. */
static void run_blocks(void *arg, int64_t b0, int64_t b1) {
  frun *r = arg;
  size_t need = (size_t)r->pg->n_slots * r->slot_bytes;
  _Alignas(64) char local[FUSE_STACK];
  char *scratch = need <= sizeof local ? local : aligned_alloc(64, need);
  if (!scratch) {
    __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t b = b0; b < b1; b++) {
    int64_t e0 = b * r->block, m = r->total - e0 < r->block ? r->total - e0 : r->block;
    run_block(r, e0, m, scratch);
  }
  if (scratch != local) free(scratch);
#if defined(__SSE2__)
  if (r->stream) _mm_sfence();
#endif
}

/* Lay the inputs over the output's shape (broadcasting), then merge dims
 * every operand walks evenly, as the strided engine does. */
static tide_status lay_out(frun *r, const tide_tensor *o, int n_in, const tide_tensor *const *in) {
  int nd = o->ndim;
  int64_t ost[TIDE_MAX_DIMS], st[FUSE_MAX_EXT][TIDE_MAX_DIMS], dims[TIDE_MAX_DIMS];
  for (int d = 0; d < nd; d++) dims[d] = o->dims[d], ost[d] = o->strides[d] * (int64_t)tide_dtype_size_unchecked(o->dt);
  for (int k = 0; k < n_in; k++) {
    const tide_tensor *t = in[k];
    int off = nd - t->ndim;
    int64_t es = (int64_t)tide_dtype_size_unchecked(t->dt);
    for (int d = 0; d < nd; d++) {
      int id = d - off;
      if (off < 0 || (id >= 0 && t->dims[id] != dims[d] && t->dims[id] != 1)) {
        char so[128], si[128];
        return TIDE_FAIL(TIDE_ERR_SHAPE, "fused: cannot broadcast input %d of shape %s to %s", k + 1,
                         TIDE_SHAPE_STR(si, t), TIDE_SHAPE_STR(so, o));
      }
      st[k][d] = id < 0 || t->dims[id] == 1 ? 0 : t->strides[id] * es;
    }
    r->ext[k].data = t->data;
    r->ext[k].dt = t->dt;
  }
  int n = 0;
  for (int d = 0; d < nd; d++) {
    if (dims[d] == 1) continue;
    bool merge = n > 0 && ost[n - 1] == ost[d] * dims[d];
    for (int k = 0; k < n_in && merge; k++) merge = st[k][n - 1] == st[k][d] * dims[d];
    if (merge) {
      dims[n - 1] *= dims[d];
      ost[n - 1] = ost[d];
      for (int k = 0; k < n_in; k++) st[k][n - 1] = st[k][d];
      continue;
    }
    dims[n] = dims[d], ost[n] = ost[d];
    for (int k = 0; k < n_in; k++) st[k][n] = st[k][d];
    n++;
  }
  if (n == 0) { /* one element */
    dims[0] = 1;
    for (int k = 0; k < n_in; k++) st[k][0] = 0;
    n = 1;
  }
  r->nd = n;
  for (int d = 0; d < n; d++) r->dims[d] = dims[d];
  for (int k = 0; k < n_in; k++) {
    fop *f = &r->ext[k];
    f->flat = true;
    for (int d = 0; d < n; d++) {
      f->st[d] = st[k][d];
      if (d < n - 1 && st[k][d] != st[k][d + 1] * dims[d + 1]) f->flat = false;
    }
  }
  return TIDE_OK;
}

tide_status tide_graph_fused_run(tide_graph *g, gnode *n, const tide_tensor *const *in, tide_tensor *const *out) {
  const fprog *pg = n->fused;
  tide_tensor *o = out[0];
  if (o->nelem == 0) return TIDE_OK;
  frun r;
  r.g = g;
  r.pg = pg;
  r.total = o->nelem;
  r.out = o->data;
  r.out_dt = o->dt;
  r.failed = 0;
  r.stream = o->nelem * (int64_t)tide_dtype_size_unchecked(o->dt) >= FUSE_STREAM_BYTES;
  tide_status st = lay_out(&r, o, pg->n_ext, in);
  if (st) return st;
  r.block = r.total < FUSE_BLOCK ? r.total : FUSE_BLOCK;
  r.slot_bytes = ((size_t)r.block * 8 + 63) & ~(size_t)63;
  memset(r.bad, 0, (size_t)pg->n_instr * sizeof r.bad[0]);
  int64_t nblocks = (r.total + r.block - 1) / r.block;
  int64_t grain = pg->costly ? TIDE_GRAIN_COSTLY : TIDE_GRAIN_CHEAP / pg->n_instr;
  if (grain < TIDE_GRAIN_COSTLY) grain = TIDE_GRAIN_COSTLY;
  tide_parallel_for(nblocks, (grain + r.block - 1) / r.block, run_blocks, &r);
  if (r.failed) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for scratch blocks", pg->name);
  if (tide_interrupt_pending()) {
    tide_interrupt_clear();
    return TIDE_FAIL(TIDE_ERR_INTERRUPTED, "interrupted");
  }
  for (int t = 0; t < pg->n_instr; t++) {
    if (!r.bad[t].bad) continue;
    const finstr *ins = &pg->ins[t];
    const char *origin = g->nodes[ins->node].origin;
    st = tide_binary_check(tide_op_name(ins->op), r.bad[t].bad);
    if (origin) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", tide_last_error());
      st = TIDE_FAIL(st, "%s [%s (recorded at %s)]", msg, tide_op_name(ins->op), origin);
    }
    return st;
  }
  return TIDE_OK;
}
