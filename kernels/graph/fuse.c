/* graph/fuse.c — elementwise fusion: the pass that merges groups of
 * elementwise ops of one iteration space into FUSED nodes, each holding a
 * backend-neutral description of its ops (tide/fused.h), and the planning,
 * running (through the fused runner of the device's backend) and text of those nodes. */
#include "passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/backend.h"
#include "tide/fused.h"

enum { FUSE_NAME = 192 };

/* What a FUSED node's `fused` points to: one block (freed with free()),
 * holding the description and the CPU backend's program for it. */
typedef struct gfused {
  tide_fused desc;
  char name[FUSE_NAME];        /* "fused[mul, add, tanh]" */
  size_t prog_off;             /* the program: at (char *)this + prog_off */
  const tide_fused_runner *runner; /* the runner that prepared it (the CPU's) */
} gfused;

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

const char *tide_graph_fused_name(const gnode *n) { return n->fused ? ((const gfused *)n->fused)->name : "fused"; }

const tide_fused *tide_graph_fused_desc(const gnode *n) { return n->fused ? &((const gfused *)n->fused)->desc : NULL; }

const tide_fused *tide_graph_fused(const tide_graph *g, int k) {
  if (!g || !g->finalized || k < 0) return NULL;
  for (int i = 0; i < g->nnodes; i++) {
    const gnode *n = &g->nodes[i];
    if (n->kind == TIDE_NODE_FUSED && !(n->flags & NODE_DEAD) && k-- == 0) return tide_graph_fused_desc(n);
  }
  return NULL;
}

/* ---- the pass ------------------------------------------------------------------------- */

/* True when node n can be a step of a fused node. */
static bool fusible(const tide_graph *g, const gnode *n) {
  if (n->kind != TIDE_NODE_OP || (n->flags & (NODE_DEAD | NODE_STATEFUL)) || n->n_out != 1) return false;
  const tide_op_def *def = &tide_op_defs[n->op];
  if (!(def->flags & TIDE_OPF_ELEMENTWISE) || n->n_in < 1 || n->n_in > TIDE_FUSED_MAX_ARGS) return false;
  /* Strings stay out: fused loops compute numbers, and string buffers count references. */
  if (n->out[0].dt == TIDE_STRING) return false;
  for (int k = 0; k < n->n_in; k++)
    if (gval_desc((tide_graph *)g, n->in[k])->dt == TIDE_STRING) return false;
  return true;
}

/* True when value v is a one-element constant the description can hold. */
static bool scalar_const(const tide_graph *g, gvalue v) {
  const gnode *n = &g->nodes[v.node];
  return n->kind == TIDE_NODE_CONST && !(n->flags & NODE_DEAD) && n->value.nelem == 1 && n->value.data != NULL;
}

/* Same rank and dims (unknown dims match unknown ones): the member computes
 * in the root's iteration space without repeating work. */
static bool same_space(const tide_tensor *a, const tide_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

/* The users of each node's values (live nodes that read them), as lists. */
typedef struct users {
  int *start;                  /* node i's users: list[start[i] .. start[i + 1]) */
  int *list;
  char *outside;               /* 1: a graph output or a subgraph capture reads it too */
  char *captured;              /* 1: a subgraph capture reads it */
} users;

static void users_free(users *u) { free(u->start), free(u->list), free(u->outside), free(u->captured); }

static tide_status users_make(const tide_graph *g, users *u) {
  int n = g->nnodes, total = 0;
  u->start = calloc((size_t)n + 2, sizeof *u->start);
  u->outside = calloc((size_t)n + 1, 1);
  u->captured = calloc((size_t)n + 1, 1);
  for (int i = 0; i < n && u->start; i++)
    if (!(g->nodes[i].flags & NODE_DEAD)) total += g->nodes[i].n_in;
  u->list = malloc(((size_t)total + 1) * sizeof *u->list);
  if (!u->start || !u->outside || !u->captured || !u->list) {
    users_free(u);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  }
  for (int i = 0; i < n; i++) {
    const gnode *m = &g->nodes[i];
    if (m->flags & NODE_DEAD) continue;
    for (int k = 0; k < m->n_in; k++) u->start[m->in[k].node + 1]++;
  }
  for (int i = 0; i < n; i++) u->start[i + 1] += u->start[i];
  int *fill = malloc(((size_t)n + 1) * sizeof *fill);
  if (!fill) {
    users_free(u);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  }
  memcpy(fill, u->start, (size_t)n * sizeof *fill);
  for (int i = 0; i < n; i++) {
    const gnode *m = &g->nodes[i];
    if (m->flags & NODE_DEAD) continue;
    for (int k = 0; k < m->n_in; k++) u->list[fill[m->in[k].node]++] = i;
  }
  free(fill);
  for (int k = 0; k < g->n_outputs; k++) u->outside[g->outputs[k].node] = 1;
  tide_graph_mark_captured(g, u->captured);
  for (int i = 0; i < n; i++) u->outside[i] |= u->captured[i];
  return TIDE_OK;
}

typedef struct group {
  int n, members[TIDE_FUSED_MAX_STEPS];        /* node indices */
  int n_in;
  gvalue in[TIDE_FUSED_MAX_INPUTS];            /* tensor inputs, in order of first use */
  int n_const, const_node[TIDE_FUSED_MAX_CONSTS];
  int n_extra, extra[TIDE_FUSED_MAX_OUTPUTS];  /* members other than the root read outside the group */
} group;

static bool member(const int *owner, int root, int node) { return owner[node] == root; }

/* True when a member's value is read outside the group (by a later node, a
 * graph output or a capture). */
static bool escapes(const users *u, const int *owner, int root, int p) {
  if (u->outside[p]) return true;
  for (int j = u->start[p]; j < u->start[p + 1]; j++)
    if (!member(owner, root, u->list[j])) return true;
  return false;
}

/* The group's inputs, constants and extra outputs; false when over the limits. */
static bool collect(const tide_graph *g, group *gr, const users *u, const int *owner, int root) {
  gr->n_in = gr->n_const = gr->n_extra = 0;
  for (int j = 0; j < gr->n; j++) {
    int mi = gr->members[j];
    const gnode *m = &g->nodes[mi];
    if (mi != root && escapes(u, owner, root, mi)) {
      /* An extra output is written in the root's shape. Inside the group a
       * member may be computed broadcast to that shape, but a value read
       * outside must have its own: with an unknown (-1) dim, equal
       * descriptions do not prove equal shapes at run time ([1, 3] and
       * [4, 3] are both [-1, 3] while tracing), so such a member stays out. */
      if (tide_dims_any_unknown(m->out[0].ndim, m->out[0].dims)) return false;
      if (gr->n_extra == TIDE_FUSED_MAX_OUTPUTS - 1) return false;
      gr->extra[gr->n_extra++] = mi;
    }
    for (int k = 0; k < m->n_in; k++) {
      gvalue v = m->in[k];
      if (member(owner, root, v.node)) continue;
      bool seen = false;
      if (scalar_const(g, v)) {
        for (int c = 0; c < gr->n_const && !seen; c++) seen = gr->const_node[c] == v.node;
        if (seen) continue;
        if (gr->n_const == TIDE_FUSED_MAX_CONSTS) return false;
        gr->const_node[gr->n_const++] = v.node;
        continue;
      }
      for (int e = 0; e < gr->n_in && !seen; e++) seen = gr->in[e].node == v.node && gr->in[e].index == v.index;
      if (seen) continue;
      if (gr->n_in == TIDE_FUSED_MAX_INPUTS) return false;
      gr->in[gr->n_in++] = v;
    }
  }
  return true;
}

/* True when producer p may join the group rooted at r: every node that
 * reads p outside the group comes after r (so the fused node, placed at r,
 * still runs first), and no subgraph captures it. */
static bool may_join(const tide_graph *g, const users *u, const int *owner, int r, int p) {
  const gnode *n = &g->nodes[p];
  if (owner[p] != -1 || !fusible(g, n) || !same_space(&n->out[0], &g->nodes[r].out[0]) || u->captured[p]) return false;
  for (int j = u->start[p]; j < u->start[p + 1]; j++) {
    int user = u->list[j];
    if (!member(owner, r, user) && user < r) return false;
  }
  return true;
}

/* Grow the group rooted at r (already its only member) as far as it goes. */
static void grow(const tide_graph *g, group *gr, const users *u, int *owner, int r) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (int j = 0; j < gr->n && gr->n < TIDE_FUSED_MAX_STEPS; j++) {
      const gnode *m = &g->nodes[gr->members[j]];
      for (int k = 0; k < m->n_in && gr->n < TIDE_FUSED_MAX_STEPS; k++) {
        int p = m->in[k].node;
        if (!may_join(g, u, owner, r, p)) continue;
        owner[p] = r;
        gr->members[gr->n++] = p;
        if (!collect(g, gr, u, owner, r)) { /* too many inputs or outputs: take p back out */
          owner[p] = -1;
          gr->n--;
          collect(g, gr, u, owner, r);
          continue;
        }
        changed = true;
      }
    }
  }
}

/* qsort order of node indices. */
static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The description of group gr (members sorted; the root last) and its name. */
static void describe(const tide_graph *g, const group *gr, const int *owner, int root, gfused *gf) {
  tide_fused *f = &gf->desc;
  memset(f, 0, sizeof *f);
  f->n_inputs = gr->n_in;
  f->n_consts = gr->n_const;
  f->n_steps = gr->n;
  for (int e = 0; e < gr->n_in; e++) f->input_dt[e] = gval_desc((tide_graph *)g, gr->in[e])->dt;
  for (int c = 0; c < gr->n_const; c++) {
    const tide_tensor *v = &g->nodes[gr->const_node[c]].value;
    tide_fused_const *k = &f->consts[c];
    k->dt = v->dt;
    k->ndim = v->ndim;
    switch (v->dt) {
    case TIDE_FLOAT32: k->f = *(const float *)v->data; break;
    case TIDE_FLOAT64: k->f = *(const double *)v->data; break;
    case TIDE_FLOAT16: k->f = tide_half_to_float(*(const uint16_t *)v->data); break;
    case TIDE_BFLOAT16: k->f = tide_bfloat16_to_float(*(const uint16_t *)v->data); break;
    case TIDE_INT8: k->i = *(const int8_t *)v->data; break;
    case TIDE_UINT8: case TIDE_BOOL: k->i = *(const uint8_t *)v->data; break;
    case TIDE_INT32: k->i = *(const int32_t *)v->data; break;
    default: k->i = *(const int64_t *)v->data; break;
    }
    if (tide_dtype_is_int(v->dt) || v->dt == TIDE_BOOL) k->f = (double)k->i;
  }
  size_t len = (size_t)snprintf(gf->name, sizeof gf->name, "fused[");
  for (int t = 0; t < gr->n; t++) {
    const gnode *m = &g->nodes[gr->members[t]];
    tide_fused_step *s = &f->steps[t];
    s->op = m->op;
    s->dt = m->out[0].dt;
    s->arg_dt = gval_desc((tide_graph *)g, m->in[m->op == TIDE_OP_WHERE ? 1 : 0])->dt;
    s->n_args = m->n_in;
    s->flags = m->attrs.flags & TIDE_ATTR_APPROXIMATE;
    s->alpha = m->attrs.scalars[0];
    s->tag = gr->members[t];
    for (int k = 0; k < m->n_in; k++) {
      gvalue v = m->in[k];
      tide_fused_arg *a = &s->args[k];
      if (member(owner, root, v.node)) {
        a->src = TIDE_FUSED_STEP;
        for (int u = 0; u < t; u++)
          if (gr->members[u] == v.node) a->index = (int16_t)u;
      } else if (scalar_const(g, v)) {
        a->src = TIDE_FUSED_CONST;
        for (int c = 0; c < gr->n_const; c++)
          if (gr->const_node[c] == v.node) a->index = (int16_t)c;
      } else {
        a->src = TIDE_FUSED_INPUT;
        for (int e = 0; e < gr->n_in; e++)
          if (gr->in[e].node == v.node && gr->in[e].index == v.index) a->index = (int16_t)e;
      }
    }
    if (len < sizeof gf->name)
      len += (size_t)snprintf(gf->name + len, sizeof gf->name - len, "%s%s", t ? ", " : "", tide_op_name(m->op));
  }
  if (len + 2 >= sizeof gf->name) strcpy(gf->name + sizeof gf->name - 6, "...]");
  else strcat(gf->name, "]");
  /* Output 0 is the root's value (its node keeps its place and index);
   * values read outside follow in member order. */
  f->n_outputs = 1 + gr->n_extra;
  f->outputs[0] = gr->n - 1;
  for (int e = 0; e < gr->n_extra; e++)
    for (int t = 0; t < gr->n; t++)
      if (gr->members[t] == gr->extra[e]) f->outputs[1 + e] = t;
}

/* Point every read of (from, 0) by a node after `after`, and the graph's
 * outputs, at value `to`. */
static void redirect(tide_graph *g, int after, int from, gvalue to) {
  for (int i = after + 1; i < g->nnodes; i++) {
    gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k].node == from) n->in[k] = to;
  }
  for (int k = 0; k < g->n_outputs; k++)
    if (g->outputs[k].node == from) g->outputs[k] = to;
}

/* Make node r the fused node of group gr. */
static tide_status rewrite(tide_graph *g, group *gr, const int *owner, int r) {
  const tide_fused_runner *be = tide_cpu_backend.fused; /* the program a run on the CPU uses */
  gfused probe;
  describe(g, gr, owner, r, &probe);
  size_t off = align64(sizeof(gfused)), bytes = be->program_bytes(&probe.desc);
  gfused *gf = aligned_alloc(64, align64(off + bytes));
  gvalue *ins = malloc(((size_t)gr->n_in + 1) * sizeof *ins);
  tide_tensor *outs = calloc((size_t)probe.desc.n_outputs, sizeof *outs);
  if (!gf || !ins || !outs) {
    free(gf), free(ins), free(outs);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  }
  memcpy(gf, &probe, sizeof probe);
  gf->prog_off = off;
  gf->runner = be;
  tide_status st = be->prepare(&gf->desc, (char *)gf + off);
  if (st) {
    free(gf), free(ins), free(outs);
    return st;
  }
  memcpy(ins, gr->in, (size_t)gr->n_in * sizeof *ins);
  gnode *n = &g->nodes[r];
  outs[0] = n->out[0];
  for (int e = 0; e < gr->n_extra; e++) outs[1 + e] = g->nodes[gr->extra[e]].out[0];
  free(n->in);
  free(n->out);
  n->in = ins;
  n->n_in = gr->n_in;
  n->out = outs;
  n->n_out = gf->desc.n_outputs;
  n->kind = TIDE_NODE_FUSED;
  n->fused = gf;
  for (int e = 0; e < gr->n_extra; e++) redirect(g, r, gr->extra[e], (gvalue){r, 1 + e});
  for (int j = 0; j < gr->n; j++)
    if (gr->members[j] != r) g->nodes[gr->members[j]].flags |= NODE_DEAD;
  return TIDE_OK;
}

tide_status tide_graph_fuse(tide_graph *g) {
  users u;
  tide_status st = users_make(g, &u);
  if (st) return st;
  int *owner = malloc(((size_t)g->nnodes + 1) * sizeof *owner); /* root of the node's group; -1 none, -2 alone */
  group *gr = malloc(sizeof *gr);
  if (!owner || !gr) {
    users_free(&u), free(owner), free(gr);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  }
  for (int i = 0; i < g->nnodes; i++) owner[i] = -1;
  /* From the end: a root is the last op of its group, and every member
   * comes before it, so the fused node takes the root's place in order. */
  for (int r = g->nnodes - 1; r >= 0 && !st; r--) {
    if (owner[r] != -1 || !fusible(g, &g->nodes[r])) continue;
    owner[r] = r;
    gr->n = 1;
    gr->members[0] = r;
    if (!collect(g, gr, &u, owner, r)) {
      owner[r] = -2;
      continue;
    }
    grow(g, gr, &u, owner, r);
    if (gr->n < 2) {
      owner[r] = -2; /* one op runs as well through its own kernel */
      continue;
    }
    qsort(gr->members, (size_t)gr->n, sizeof gr->members[0], cmp_int);
    collect(g, gr, &u, owner, r);
    st = rewrite(g, gr, owner, r);
  }
  users_free(&u), free(owner), free(gr);
  return st;
}

/* ---- planning ------------------------------------------------------------------------- */

tide_status tide_graph_fused_plan(tide_graph *g, gnode *n, const tide_tensor *const *in, tide_tensor *const *out) {
  const gfused *gf = n->fused;
  if (!gf) return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph '%s': a fused node has no description", g->name);
  const tide_fused *f = &gf->desc;
  tide_tensor *regs = calloc((size_t)f->n_steps + (size_t)f->n_consts, sizeof *regs);
  if (!regs) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  tide_tensor *consts = regs + f->n_steps;
  for (int c = 0; c < f->n_consts; c++) {
    int64_t ones[TIDE_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    tide_tensor_set_contiguous_layout(&consts[c], f->consts[c].dt, f->consts[c].ndim, ones);
  }
  tide_status st = TIDE_OK;
  /* Each op's own inference, in order: the outputs' layouts, and the same
   * shape and dtype errors the ops give unfused. */
  for (int t = 0; t < f->n_steps && !st; t++) {
    const tide_fused_step *s = &f->steps[t];
    const tide_op_def *def = &tide_op_defs[s->op];
    const tide_tensor *src[TIDE_FUSED_MAX_ARGS];
    for (int j = 0; j < s->n_args; j++) {
      tide_fused_arg a = s->args[j];
      src[j] = a.src == TIDE_FUSED_INPUT ? in[a.index] : a.src == TIDE_FUSED_CONST ? &consts[a.index] : &regs[a.index];
    }
    tide_attrs attrs;
    tide_fused_step_attrs(s, &attrs);
    tide_tensor *o = &regs[t];
    st = tide_infer(def, &attrs, s->n_args, src, 1, &o); /* an input may have an unknown rank */
    if (st && g->nodes[s->tag].origin) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", tide_last_error());
      st = TIDE_FAIL(st, "%s [%s (recorded at %s)]", msg, def->name, g->nodes[s->tag].origin);
    }
  }
  if (!st)
    for (int o = 0; o < f->n_outputs; o++) *out[o] = regs[f->outputs[o]]; /* layouts without data: copying is safe */
  free(regs);
  return st;
}

/* ---- running ---------------------------------------------------------------------------- */

tide_status tide_graph_fused_run(tide_graph *g, gnode *n, const tide_tensor *const *in, tide_tensor *const *out,
                                 unsigned hints) {
  const gfused *gf = n->fused;
  const tide_backend *dev = tide_backend_for(out[0]->dev);
  const tide_fused_runner *be = dev ? dev->fused : NULL;
  /* A program is its runner's own: another device's runner would prepare its own from the description. */
  if (!be || be != gf->runner) return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: no backend runs fused nodes on this device", gf->name);
  int failed = -1;
  tide_status st = be->run(&gf->desc, (const char *)gf + gf->prog_off, in, out, hints, &failed);
  if (!st) return st;
  const gnode *at = failed >= 0 ? &g->nodes[gf->desc.steps[failed].tag] : n;
  if (!at->origin) return st;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tide_last_error());
  return TIDE_FAIL(st, "%s [%s (recorded at %s)]", msg, failed >= 0 ? tide_op_name(at->op) : gf->name, at->origin);
}

/* ---- text ------------------------------------------------------------------------------- */

/* An operand of step t as text: "%3" (a node input), "s2" (an earlier
 * step), or a constant's value ("0.5", "[[2]]" for rank 2, "true"). */
static void arg_text(const tide_graph *g, const gnode *n, tide_fused_arg a, char *buf, size_t size) {
  const tide_fused *f = &((const gfused *)n->fused)->desc;
  if (a.src == TIDE_FUSED_STEP) {
    snprintf(buf, size, "s%d", a.index);
    return;
  }
  if (a.src == TIDE_FUSED_INPUT) {
    gvalue v = n->in[a.index];
    snprintf(buf, size, g->nodes[v.node].n_out > 1 ? "%%%d:%d" : "%%%d", v.node, v.index);
    return;
  }
  const tide_fused_const *k = &f->consts[a.index];
  char num[64];
  if (k->dt == TIDE_BOOL) snprintf(num, sizeof num, "%s", k->i ? "true" : "false");
  else if (tide_dtype_is_int(k->dt)) snprintf(num, sizeof num, "%lld", (long long)k->i);
  else snprintf(num, sizeof num, "%.*g", k->dt == TIDE_FLOAT64 ? 17 : 9, k->f);
  snprintf(buf, size, "%.*s%s%.*s", k->ndim, "[[[[[[[[", num, k->ndim, "]]]]]]]]");
}

int tide_graph_fused_step_text(const tide_graph *g, const gnode *n, int t, char *buf, size_t size) {
  const tide_fused *f = tide_graph_fused_desc(n);
  if (!f || t < 0 || t >= f->n_steps) return 0;
  const tide_fused_step *s = &f->steps[t];
  int len = snprintf(buf, size, "s%d = %s(", t, tide_op_name(s->op));
  for (int j = 0; j < s->n_args && len < (int)size; j++) {
    char arg[96];
    arg_text(g, n, s->args[j], arg, sizeof arg);
    len += snprintf(buf + len, size - (size_t)len, "%s%s", j ? ", " : "", arg);
  }
  if (len < (int)size && s->op == TIDE_OP_LEAKY_RELU) len += snprintf(buf + len, size - (size_t)len, ", alpha=%g", s->alpha);
  if (len < (int)size && (s->flags & TIDE_ATTR_APPROXIMATE))
    len += snprintf(buf + len, size - (size_t)len, ", approximate");
  if (len < (int)size) len += snprintf(buf + len, size - (size_t)len, ") : %s", tide_dtype_name(s->dt));
  for (int o = 0; o < f->n_outputs && len < (int)size; o++)
    if (f->outputs[o] == t)
      len += snprintf(buf + len, size - (size_t)len, n->n_out > 1 ? " -> %%%d:%d" : " -> %%%d", (int)(n - g->nodes), o);
  return f->n_steps;
}
