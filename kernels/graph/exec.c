/* graph/exec.c — running a finalized graph: a plan per set of input shapes
 * (every value's resolved layout, the steps to run and what each releases,
 * the memory plan's arena), then one pass over the steps calling registry
 * kernels, with nothing allocated per run but the results that leave it. */
#include "plan.h"
#include "passes.h"
#include "tide/fused.h"
#include "tide/profiler.h"
#include "../core/views.h"
#include "../core/parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PLANS = 16 }; /* plans kept per graph (each may hold an arena) */

/* Free a plan and let go of its arena. */
static void free_plan(gplan *p) {
  if (!p) return;
  free(p->key_ndim);
  free(p->key_dt);
  free(p->key_dims);
  free(p->base);
  free(p->layout);
  free(p->hdr);
  free(p->cur);
  free(p->mode);
  free(p->last_use);
  free(p->offset);
  free(p->steps);
  free(p->views);
  free(p->borrowed);
  free(p->ins);
  free(p->outs);
  free(p->args);
  free(p->rels);
  free(p->dyn);
  free(p->end);
  free(p->late);
  if (p->arena) tide_storage_release(p->arena);
  free(p);
}

void tide_graph_drop_plans(tide_graph *g) {
  for (gplan *p = g->plans, *next; p; p = next) {
    next = p->next;
    free_plan(p);
  }
  g->plans = NULL;
}

/* True when p was made for these argument (and capture) dtypes and shapes. */
static bool plan_matches(const gplan *p, int n_key, const tide_tensor *const *key) {
  for (int k = 0; k < n_key; k++) {
    if (p->key_ndim[k] != key[k]->ndim || p->key_dt[k] != key[k]->dt) return false;
    const int64_t *d = &p->key_dims[k * TIDE_MAX_DIMS];
    for (int i = 0; i < key[k]->ndim; i++)
      if (d[i] != key[k]->dims[i]) return false;
  }
  return true;
}

/* Name a node in messages: its op and where it was recorded. */
static const char *node_label(const gnode *n, char *buf, size_t size) {
  const char *what = n->kind == TIDE_NODE_OP ? tide_op_name(n->op) : "node";
  if (n->origin) snprintf(buf, size, "%s (recorded at %s)", what, n->origin);
  else snprintf(buf, size, "%s", what);
  return buf;
}

/* Suffix the current error with the node that failed (fused nodes name
 * their failing op themselves). */
static tide_status fail_at(const gnode *n, tide_status st) {
  if (!n->origin || n->kind == TIDE_NODE_FUSED) return st;
  char label[256], msg[1024];
  snprintf(msg, sizeof msg, "%s", tide_last_error());
  return TIDE_FAIL(st, "%s [%s]", msg, node_label(n, label, sizeof label));
}

/* Resolve every live node's output layouts for these argument and capture
 * layouts (key: arguments first, then captures). A node with an input whose
 * dims are known only at run time (control flow whose result shape depends
 * on the data, or a subgraph planned for unknown dims) is late: its outputs
 * are inferred again when it runs, and never live in the arena. */
static tide_status resolve_layouts(tide_graph *g, gplan *p, const tide_tensor *const *key) {
  for (int i = 0; i < g->nnodes; i++) {
    gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    tide_tensor *h = &p->layout[p->base[i]];
    const tide_tensor **ins = p->ins;
    tide_tensor **outs = p->outs;
    bool late = false;
    for (int k = 0; k < n->n_in; k++) {
      /* a constant's value (not just its layout): a shape input's values are then known */
      const gnode *src = &g->nodes[n->in[k].node];
      ins[k] = src->kind == TIDE_NODE_CONST ? &src->value : &p->layout[p->base[n->in[k].node] + n->in[k].index];
      if (tide_dims_any_unknown(ins[k]->ndim, ins[k]->dims)) late = true;
    }
    for (int k = 0; k < n->n_out; k++) {
      outs[k] = &p->layout[p->base[i] + k];
      memset(outs[k], 0, sizeof *outs[k]);
    }
    tide_status st = TIDE_OK;
    switch (n->kind) {
    case TIDE_NODE_INPUT: {
      const tide_tensor *x = key[n->input_index];
      tide_tensor_set_contiguous_layout(h, x->dt, x->ndim, x->dims);
      break;
    }
    case TIDE_NODE_CAPTURE: {
      int k = 0;
      while (k < g->n_captures && g->captures[k] != i) k++;
      if (k == g->n_captures) return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph '%s': an unlisted capture", g->name);
      const tide_tensor *x = key[g->n_inputs + k];
      tide_tensor_set_contiguous_layout(h, x->dt, x->ndim, x->dims);
      break;
    }
    case TIDE_NODE_CONST: tide_tensor_set_contiguous_layout(h, n->value.dt, n->value.ndim, n->value.dims); break;
    case TIDE_NODE_VARIABLE: tide_tensor_set_contiguous_layout(h, n->handle->dt, n->handle->ndim, n->handle->dims); break;
    case TIDE_NODE_OP: {
      const tide_op_def *def = &tide_op_defs[n->op];
      st = tide_infer(def, &n->attrs, n->n_in, ins, n->n_out, outs);
      if (st && late) { /* some inference cannot take unknown dims: keep the traced ones */
        tide_clear_error();
        for (int k = 0; k < n->n_out; k++) {
          memset(outs[k], 0, sizeof *outs[k]);
          tide_tensor_set_contiguous_layout(outs[k], n->out[k].dt, n->out[k].ndim, n->out[k].dims);
        }
        st = TIDE_OK;
      }
      break;
    }
    case TIDE_NODE_FUSED: st = tide_graph_fused_plan(g, n, ins, outs); break;
    case TIDE_NODE_COND:
    case TIDE_NODE_WHILE: st = tide_graph_control_plan(g, n, ins, outs); break;
    case TIDE_NODE_ASSIGN:
    case TIDE_NODE_PRINT:
    case TIDE_NODE_EFFECT: break;
    default: return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "graph '%s': node kind %d cannot run yet", g->name, n->kind);
    }
    if (st) return fail_at(n, st);
    for (int k = 0; k < n->n_out; k++)
      p->late[p->base[i] + k] = late || tide_dims_any_unknown(p->layout[p->base[i] + k].ndim, p->layout[p->base[i] + k].dims);
  }
  return TIDE_OK;
}

/* How each live node's values get their headers, before memory planning. */
static void choose_modes(tide_graph *g, gplan *p) {
  for (int i = 0; i < g->nnodes; i++) {
    gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    for (int k = 0; k < n->n_out; k++) {
      int v = p->base[i] + k;
      p->cur[v] = &p->hdr[v];
      switch (n->kind) {
      case TIDE_NODE_INPUT:
      case TIDE_NODE_CAPTURE: p->mode[v] = VAL_FIXED; break; /* cur set at each run */
      case TIDE_NODE_CONST:
        p->mode[v] = VAL_FIXED;
        p->cur[v] = &n->value;
        break;
      case TIDE_NODE_OP:
        /* Views share their input; a TIDE_OPF_DATA_SHAPE kernel allocates its
         * outputs once it knows their size (their dims are -1 here: late). */
        if (tide_op_defs[n->op].flags & (TIDE_OPF_VIEW | TIDE_OPF_DATA_SHAPE)) {
          p->mode[v] = VAL_FILLED;
          break;
        }
        /* fall through */
      case TIDE_NODE_FUSED:
        p->mode[v] = VAL_ALLOC;
        /* (String values never: their buffers own references and release them when they go.) */
        if (!p->late[v] && p->layout[v].dt != TIDE_STRING &&
            p->layout[v].nelem * (int64_t)tide_dtype_size_unchecked(p->layout[v].dt) <= TIDE_INLINE_BYTES) {
          /* Small results live in their header, made ready once. */
          p->hdr[v] = p->layout[v];
          p->hdr[v].data = p->hdr[v].inline_data.bytes;
          p->hdr[v].flags = TIDE_TENSOR_INLINE;
          p->hdr[v].dev = TIDE_CPU;
          p->mode[v] = VAL_FIXED;
        }
        break;
      default: p->mode[v] = VAL_FILLED; break; /* variable reads, control flow */
      }
    }
  }
}

/* The steps, what each releases, and the lists of values a run may hold. */
static tide_status make_steps(tide_graph *g, gplan *p) {
  int nsteps = 0, nargs = 0;
  for (int i = 0; i < g->nnodes; i++) {
    gnode *n = &g->nodes[i];
    if ((n->flags & NODE_DEAD) || n->kind == TIDE_NODE_INPUT || n->kind == TIDE_NODE_CONST ||
        n->kind == TIDE_NODE_CAPTURE)
      continue;
    nsteps++;
    nargs += n->n_in;
  }
  p->steps = calloc((size_t)nsteps + 1, sizeof *p->steps);
  p->args = calloc((size_t)nargs + 1, sizeof *p->args);
  p->rels = calloc((size_t)p->nvals + 1, sizeof *p->rels);
  p->dyn = calloc((size_t)p->nvals + 1, sizeof *p->dyn);
  p->end = calloc((size_t)p->nvals + 1, sizeof *p->end);
  if (!p->steps || !p->args || !p->rels || !p->dyn || !p->end) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  int a = 0, r = 0;
  for (int i = 0; i < g->nnodes; i++) {
    gnode *n = &g->nodes[i];
    if ((n->flags & NODE_DEAD) || n->kind == TIDE_NODE_INPUT || n->kind == TIDE_NODE_CONST ||
        n->kind == TIDE_NODE_CAPTURE)
      continue;
    gstep *s = &p->steps[p->nsteps++];
    s->n = n;
    s->node = i;
    s->arg = a;
    s->val = p->base[i];
    s->late = n->n_out > 0 && p->late[s->val];
    s->view = -1;
    s->leaves = n->n_out > 0;
    for (int k = 0; k < n->n_out; k++) s->leaves = s->leaves && p->last_use[s->val + k] >= g->nnodes;
    for (int k = 0; k < n->n_in; k++) p->args[a++] = p->base[n->in[k].node] + n->in[k].index;
    /* Inputs this node reads last (each once), and its results no one reads. */
    s->rel = r;
    for (int k = 0; k < n->n_in; k++) {
      int v = p->args[s->arg + k];
      if (p->mode[v] == VAL_FIXED || p->last_use[v] != i) continue;
      bool seen = false;
      for (int j = s->rel; j < r && !seen; j++) seen = p->rels[j] == v;
      if (!seen) p->rels[r++] = v;
    }
    for (int k = 0; k < n->n_out; k++) {
      int v = s->val + k;
      if (p->mode[v] != VAL_FIXED && p->last_use[v] < 0) p->rels[r++] = v;
    }
    s->nrel = r - s->rel;
  }
  for (int v = 0; v < p->nvals; v++) {
    if (p->mode[v] == VAL_FIXED) continue;
    p->dyn[p->n_dyn++] = v;
    if (p->last_use[v] >= g->nnodes) p->end[p->n_end++] = v;
  }
  return TIDE_OK;
}

/* Resolve the view steps that can be: a slice of any source, a reshape,
 * expand_dims or squeeze of a contiguous one, whose source's dims and
 * strides are known here (a node's result: its layout; a resolved view: its
 * own; an argument: contiguous, checked when it runs). */
static tide_status plan_views(gplan *p) {
  int *view_of = NULL; /* value -> its view entry, or -1 */
  for (int i = 0; i < p->nsteps; i++) {
    const gstep *s = &p->steps[i];
    const gnode *n = s->n;
    if (n->kind != TIDE_NODE_OP || n->n_in != 1 || n->n_out != 1 || s->late) continue;
    int op = n->op;
    if (op != TIDE_OP_SLICE && op != TIDE_OP_RESHAPE && op != TIDE_OP_EXPAND_DIMS && op != TIDE_OP_SQUEEZE) continue;
    if (!p->views) {
      p->views = calloc((size_t)p->nsteps, sizeof *p->views);
      view_of = malloc(((size_t)p->nvals + 1) * sizeof *view_of);
      if (!p->views || !view_of) {
        free(view_of);
        return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
      }
      for (int v = 0; v < p->nvals; v++) view_of[v] = -1;
    }
    int src = p->args[s->arg];
    tide_tensor x = p->layout[src];
    if (view_of[src] >= 0) {
      const gview *sv = &p->views[view_of[src]];
      x.ndim = sv->ndim;
      for (int d = 0; d < sv->ndim; d++) x.dims[d] = sv->dims[d], x.strides[d] = sv->strides[d];
    }
    gview *v = &p->views[p->nviews];
    const tide_tensor *o = &p->layout[s->val];
    if (op == TIDE_OP_SLICE) {
      tide_view_plan sp;
      if (tide_plan_slice(&tide_op_defs[TIDE_OP_SLICE], &n->attrs, &x, &sp) != TIDE_OK) {
        tide_clear_error(); /* it fails again, named, when it runs */
        continue;
      }
      v->ndim = sp.ndim;
      for (int d = 0; d < sp.ndim; d++) v->dims[d] = sp.dims[d], v->strides[d] = sp.strides[d];
      v->offset = sp.offset * (int64_t)tide_dtype_size_unchecked(x.dt);
    } else {
      if (!tide_tensor_is_contiguous(&x) || o->ndim > TIDE_MAX_DIMS) continue;
      v->ndim = o->ndim;
      for (int d = 0; d < o->ndim; d++) v->dims[d] = o->dims[d], v->strides[d] = o->strides[d];
      v->offset = 0;
    }
    v->nelem = o->nelem;
    v->borrow = p->mode[src] == VAL_FIXED;
    v->src_ndim = x.ndim;
    for (int d = 0; d < x.ndim; d++) v->src_dims[d] = x.dims[d], v->src_strides[d] = x.strides[d];
    view_of[s->val] = p->nviews;
    p->steps[i].view = p->nviews++;
  }
  free(view_of);
  return TIDE_OK;
}

/* Plan lists are shared by every thread that runs a graph: a short spin
 * lock guards finding, adding and dropping plans (never running them). */
static int plans_lock;
static void lock_plans(void) {
  while (__atomic_exchange_n(&plans_lock, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(&plans_lock, __ATOMIC_RELAXED)) {
      tide_spin_pause();
    }
}
static void unlock_plans(void) { __atomic_store_n(&plans_lock, 0, __ATOMIC_RELEASE); }

static tide_status make_plan_untimed(tide_graph *g, int n_key, const tide_tensor *const *key, gplan **out);

/* Make the plan for these argument and capture layouts (not cached); the
 * profiler sees it as a "plan" event of the compile category. */
static tide_status make_plan(tide_graph *g, int n_key, const tide_tensor *const *key, gplan **out) {
  if (TIDE_LIKELY(!(tide_hooks_now() & TIDE_HOOK_PROFILE))) return make_plan_untimed(g, n_key, key, out);
  int64_t t0 = tide_prof_now();
  tide_status st = make_plan_untimed(g, n_key, key, out);
  tide_profiler_add_compile("plan", g->name, t0, tide_prof_now());
  return st;
}

static tide_status make_plan_untimed(tide_graph *g, int n_key, const tide_tensor *const *key, gplan **out) {
  gplan *p = calloc(1, sizeof *p);
  if (!p) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  p->backend = &tide_cpu_backend;
  p->n_key = n_key;
  p->key_ndim = calloc((size_t)n_key + 1, sizeof *p->key_ndim);
  p->key_dt = calloc((size_t)n_key + 1, sizeof *p->key_dt);
  p->key_dims = calloc((size_t)(n_key + 1) * TIDE_MAX_DIMS, sizeof *p->key_dims);
  p->base = calloc((size_t)g->nnodes + 1, sizeof *p->base);
  int most_in = 0, most_out = 0;
  if (p->base)
    for (int i = 0; i < g->nnodes; i++) {
      p->base[i] = p->nvals;
      p->nvals += g->nodes[i].n_out;
      if (g->nodes[i].n_in > most_in) most_in = g->nodes[i].n_in;
      if (g->nodes[i].n_out > most_out) most_out = g->nodes[i].n_out;
    }
  p->ins = calloc((size_t)most_in + 1, sizeof *p->ins);
  p->outs = calloc((size_t)most_out + 1, sizeof *p->outs);
  size_t nv = (size_t)p->nvals + 1;
  p->hdr = calloc(nv, sizeof *p->hdr);
  p->layout = calloc(nv, sizeof *p->layout);
  p->cur = calloc(nv, sizeof *p->cur);
  p->mode = calloc(nv, sizeof *p->mode);
  p->last_use = calloc(nv, sizeof *p->last_use);
  p->offset = calloc(nv, sizeof *p->offset);
  p->late = calloc(nv, sizeof *p->late);
  tide_status st = TIDE_OK;
  if (!p->key_ndim || !p->key_dt || !p->key_dims || !p->base || !p->hdr || !p->layout || !p->cur || !p->mode ||
      !p->last_use || !p->offset || !p->late || !p->ins || !p->outs)
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  for (int k = 0; k < n_key && !st; k++) {
    p->key_ndim[k] = key[k]->ndim;
    p->key_dt[k] = key[k]->dt;
    for (int d = 0; d < key[k]->ndim; d++) p->key_dims[k * TIDE_MAX_DIMS + d] = key[k]->dims[d];
  }
  if (!st) st = resolve_layouts(g, p, key);
  if (!st) {
    for (int v = 0; v < p->nvals; v++) p->last_use[v] = -1, p->offset[v] = -1;
    for (int i = 0; i < g->nnodes; i++) {
      gnode *n = &g->nodes[i];
      if (n->flags & NODE_DEAD) continue;
      for (int k = 0; k < n->n_in; k++) p->last_use[p->base[n->in[k].node] + n->in[k].index] = i;
    }
    for (int k = 0; k < g->n_outputs; k++) p->last_use[p->base[g->outputs[k].node] + g->outputs[k].index] = g->nnodes;
    choose_modes(g, p);
    if (g->passes & TIDE_PASS_PLAN) st = tide_plan_memory(g, p);
  }
  if (!st) st = make_steps(g, p);
  if (!st) st = plan_views(p);
  if (!st && !(p->borrowed = calloc((size_t)p->nvals + 1, 1))) st = TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  if (st) {
    free_plan(p);
    return st;
  }
  g->planned_bytes = p->arena_bytes;
  *out = p;
  return TIDE_OK;
}

/* Add p to g's plans (newest first), keeping the newest MAX_PLANS: a graph
 * called with ever new shapes would otherwise hold every arena it made. */
static void cache_plan(tide_graph *g, gplan *p) {
  lock_plans();
  p->next = g->plans;
  g->plans = p;
  int count = 0;
  for (gplan **at = &g->plans; *at;) {
    gplan *q = *at;
    if (++count > MAX_PLANS && !__atomic_load_n(&q->busy, __ATOMIC_ACQUIRE)) {
      *at = q->next;
      free_plan(q);
    } else {
      at = &q->next;
    }
  }
  unlock_plans();
}

/* Plan a graph whose argument shapes are all known at finalize, so its
 * planned bytes are known before it runs (no arena is made yet). */
tide_status tide_graph_preplan(tide_graph *g) {
  if (g->n_captures > 0) return TIDE_OK;
  for (int k = 0; k < g->n_inputs; k++)
    if (tide_dims_any_unknown(g->nodes[g->inputs[k]].out[0].ndim, g->nodes[g->inputs[k]].out[0].dims))
      return TIDE_OK; /* a dim or the rank */
  const tide_tensor *stack[GRAPH_STACK_VALUES];
  const tide_tensor **key = graph_scratch(stack, GRAPH_STACK_VALUES, g->n_inputs, sizeof *key);
  if (!key) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  for (int k = 0; k < g->n_inputs; k++) key[k] = &g->nodes[g->inputs[k]].out[0];
  gplan *p;
  if (make_plan(g, g->n_inputs, key, &p) != TIDE_OK) tide_clear_error(); /* it fails again, named, at run time */
  else cache_plan(g, p);
  graph_scratch_free(key, stack);
  return TIDE_OK;
}

/* Give the plan its arena (once) and point the arena values' headers into it. */
static tide_status bind_arena(gplan *p) {
  tide_storage *a = tide_storage_new((size_t)p->arena_bytes);
  if (!a) return tide_last_status();
  p->arena = a;
  for (int v = 0; v < p->nvals; v++) {
    if (p->offset[v] < 0) continue;
    p->hdr[v] = p->layout[v];
    p->hdr[v].data = (char *)a->data + p->offset[v];
    p->hdr[v].storage = a; /* the plan holds the one reference; views of it take their own */
    p->hdr[v].flags = 0;
    p->hdr[v].dev = TIDE_CPU;
  }
  return TIDE_OK;
}

tide_status tide_graph_print_node(const gnode *n, const tide_tensor *const *vals); /* graph/print.c */

/* Give the outputs of step s their headers: fixed ones are ready; others
 * start from the layout, with new data unless the node fills them. A late
 * step's layouts are inferred now, from its inputs (ins). */
static tide_status prepare_outputs(tide_graph *g, gplan *p, const gstep *s, bool alloc, const tide_tensor *const *ins,
                                   tide_tensor **outs) {
  gnode *n = s->n;
  for (int k = 0; k < n->n_out; k++) {
    outs[k] = &p->hdr[s->val + k];
    if (p->mode[s->val + k] == VAL_FIXED) continue;
    if (s->late && n->kind != TIDE_NODE_COND && n->kind != TIDE_NODE_WHILE) memset(outs[k], 0, sizeof *outs[k]);
    else *outs[k] = p->layout[s->val + k]; /* a layout header holds no data: copying it is safe */
  }
  if (s->late && n->kind == TIDE_NODE_OP) {
    const tide_op_def *def = &tide_op_defs[n->op];
    tide_status st = tide_infer(def, &n->attrs, n->n_in, ins, n->n_out, outs);
    if (st) return st;
  } else if (s->late && n->kind == TIDE_NODE_FUSED) {
    tide_status st = tide_graph_fused_plan(g, n, ins, outs);
    if (st) return st;
  }
  for (int k = 0; k < n->n_out; k++) {
    int v = s->val + k;
    if (alloc && p->mode[v] == VAL_ALLOC) {
      tide_status st = tide_tensor_alloc_data(&p->hdr[v]);
      if (st) return st;
    }
  }
  return TIDE_OK;
}

/* Make `out` view v of src, when src has the dims and strides v was planned
 * for (else false: the op's kernel makes it). A borrowing view takes no
 * reference: its source outlives the run, and release_value knows. */
static bool view_fast(const gview *v, const tide_tensor *src, tide_tensor *out, uint8_t *borrowed) {
  if (!src->storage || (src->flags & TIDE_TENSOR_INLINE) || src->ndim != v->src_ndim) return false;
  for (int d = 0; d < v->src_ndim; d++)
    if (src->dims[d] != v->src_dims[d] || (src->dims[d] != 1 && src->strides[d] != v->src_strides[d])) return false;
  if (!v->borrow) tide_storage_retain(src->storage);
  *borrowed = v->borrow;
  memcpy(out->dims, v->dims, sizeof out->dims);
  memcpy(out->strides, v->strides, sizeof out->strides);
  out->ndim = v->ndim;
  out->nelem = v->nelem;
  out->dt = src->dt;
  out->dev = src->dev;
  out->flags = 0;
  out->storage = src->storage;
  out->data = (char *)src->data + (v->nelem > 0 ? v->offset : 0);
  return true;
}

/* Let go of value v's data: drop its reference, or only forget a borrowed one. */
static inline void release_value(gplan *p, int v) {
  if (TIDE_UNLIKELY(p->borrowed[v])) {
    p->borrowed[v] = 0;
    p->hdr[v].storage = NULL;
    p->hdr[v].data = NULL;
    p->hdr[v].nelem = 0;
    return;
  }
  tide_tensor_release(&p->hdr[v]);
}

/* One step (inlined into both of run_steps' copies). */
static inline __attribute__((always_inline)) tide_status run_step(tide_graph *g, gplan *p, const gstep *s) {
  gnode *n = s->n;
  tide_tensor **cur = p->cur;
  const int *args = &p->args[s->arg];
  const tide_tensor **ins = p->ins;
  tide_tensor **outs = p->outs;
  for (int k = 0; k < n->n_in; k++) ins[k] = cur[args[k]];
  tide_status st;
  if (s->view >= 0 && view_fast(&p->views[s->view], ins[0], &p->hdr[s->val], &p->borrowed[s->val])) return TIDE_OK;
  switch (n->kind) {
  case TIDE_NODE_OP: {
    const tide_op_def *def = &tide_op_defs[n->op];
    if ((st = prepare_outputs(g, p, s, true, ins, outs)) != TIDE_OK) return st;
    const tide_attrs *a = &n->attrs;
    tide_attrs drawn;
    if ((n->flags & NODE_STATEFUL) && (def->flags & TIDE_OPF_STATEFUL)) { /* not an effect (assert) */
      drawn = n->attrs; /* new counters each run, from the op seed's stream or the global one */
      if ((st = tide_random_draw_counters(n->op, outs[0], &drawn)) != TIDE_OK) return st;
      a = &drawn;
    }
    st = p->backend->kernels[n->op](def, a, n->n_in, ins, n->n_out, outs);
    if (!st) tide_strings_settle(n->n_out, outs); /* new string buffers take their references */
    return st;
  }
  case TIDE_NODE_FUSED:
    if ((st = prepare_outputs(g, p, s, true, ins, outs)) != TIDE_OK) return st;
    return tide_graph_fused_run(g, n, ins, outs, s->leaves ? TIDE_FUSED_RESULTS_LEAVE : 0);
  case TIDE_NODE_VARIABLE: return tide_tensor_share(&p->hdr[s->val], n->handle);
  case TIDE_NODE_ASSIGN: {
    if (n->assign_mode == TIDE_ASSIGN_SET) return tide_tensor_assign(n->handle, ins[0]);
    tide_tensor sum;
    memset(&sum, 0, sizeof sum);
    st = tide_op_binary(n->assign_mode == TIDE_ASSIGN_ADD ? TIDE_OP_ADD : TIDE_OP_SUB, &sum, n->handle, ins[0]);
    if (!st) st = tide_tensor_assign(n->handle, &sum);
    tide_tensor_release(&sum);
    return st;
  }
  case TIDE_NODE_COND:
  case TIDE_NODE_WHILE:
    /* Control nodes fill their outputs themselves (as shares of their subgraphs' results). */
    if ((st = prepare_outputs(g, p, s, false, ins, outs)) != TIDE_OK) return st;
    return tide_graph_control_run(g, n, ins, outs);
  case TIDE_NODE_PRINT: return tide_graph_print_node(n, ins);
  case TIDE_NODE_EFFECT: return n->effect->run(n->effect_ctx, n->n_in, (const tide_tensor *const *)ins);
  default: return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "graph '%s': node kind %d cannot run yet", g->name, n->kind);
  }
}

/* A node's name in the profile and in numerics errors. */
static const char *node_name(const gnode *n) {
  return n->kind == TIDE_NODE_OP      ? tide_op_name(n->op)
         : n->kind == TIDE_NODE_FUSED ? tide_graph_fused_name(n)
         : n->kind == TIDE_NODE_COND  ? "cond"
         : n->kind == TIDE_NODE_WHILE ? "while_loop"
         : n->kind == TIDE_NODE_PRINT ? "print"
         : n->kind == TIDE_NODE_ASSIGN ? "assign" : "read_variable";
}

/* After step s ran (from t0, status st) while the profiler records or
 * numerics are checked (hooks): the node's event, and the scan of an op's
 * or fused node's results. */
static __attribute__((noinline, cold)) tide_status step_hooked(gplan *p, const gstep *s, uint32_t hooks, int64_t t0,
                                                               tide_status st) {
  const gnode *n = s->n;
  const char *name = node_name(n);
  if (hooks & TIDE_HOOK_PROFILE) tide_prof_record(TIDE_PROF_NODE, name, n->origin, t0, tide_prof_now());
  if (!st && (hooks & TIDE_HOOK_NUMERICS) && (n->kind == TIDE_NODE_OP || n->kind == TIDE_NODE_FUSED)) {
    for (int k = 0; k < n->n_out; k++) p->outs[k] = p->cur[s->val + k];
    st = tide_numerics_check(name, n->n_in, p->ins, n->n_out, p->outs);
  }
  return st;
}

/* Run p's steps, stopping at the first failure. Made twice (run_plan):
 * with hooks 0 the compiler drops every hook test from the loop, so a run
 * with the profiler and check numerics off pays nothing per step for them. */
static inline __attribute__((always_inline)) tide_status run_steps(tide_graph *g, gplan *p, uint32_t hooks) {
  tide_status st = TIDE_OK;
  for (int i = 0; i < p->nsteps; i++) {
    const gstep *s = &p->steps[i];
    int64_t ts = 0;
    const char *label = NULL;
    if (hooks & TIDE_HOOK_PROFILE) { /* the pool's workers name their chunks by the node */
      ts = tide_prof_now();
      label = tide_prof_label;
      tide_prof_label = node_name(s->n);
    }
    st = run_step(g, p, s);
    if (hooks & TIDE_HOOK_PROFILE) tide_prof_label = label;
    if (hooks) st = step_hooked(p, s, hooks, ts, st);
    if (TIDE_UNLIKELY(tide_interrupt_pending()) && !st) { /* Ctrl-C: stop between nodes */
      tide_interrupt_clear();
      st = TIDE_FAIL(TIDE_ERR_INTERRUPTED, "interrupted");
    }
    if (TIDE_UNLIKELY(st)) return fail_at(s->n, st);
    for (int j = 0; j < s->nrel; j++) release_value(p, p->rels[s->rel + j]);
  }
  return st;
}

/* run_steps with hooks set, out of line: run_plan stays small enough to be
 * inlined into its caller as before. */
static __attribute__((noinline, cold)) tide_status run_steps_hooked(tide_graph *g, gplan *p, uint32_t hooks) {
  return run_steps(g, p, hooks);
}

/* Run plan p (its headers are this call's alone). */
static tide_status run_plan(tide_graph *g, gplan *p, int n_in, const tide_tensor *const *in, int n_caps,
                            const tide_tensor *const *caps, int n_out, tide_tensor *const *out) {
  if (p->arena_bytes > 0 && !p->arena) {
    tide_status st = bind_arena(p);
    if (st) return st;
  }
  tide_tensor **cur = p->cur;
  for (int k = 0; k < n_in; k++) cur[p->base[g->inputs[k]]] = (tide_tensor *)in[k];
  for (int k = 0; k < n_caps; k++) cur[p->base[g->captures[k]]] = (tide_tensor *)caps[k];
  /* read once a run: a profiler or check started mid-run takes the next one */
  const uint32_t hooks = tide_hooks_now() & (TIDE_HOOK_PROFILE | TIDE_HOOK_NUMERICS);
  int64_t t0 = hooks & TIDE_HOOK_PROFILE ? tide_prof_now() : 0;
  tide_status st = TIDE_UNLIKELY(hooks) ? run_steps_hooked(g, p, hooks) : run_steps(g, p, 0);
  if (TIDE_UNLIKELY(st)) {
    for (int j = 0; j < p->n_dyn; j++) release_value(p, p->dyn[j]); /* releasing twice is safe */
    return st;
  }
  for (int k = 0; k < n_out; k++) tide_tensor_share(out[k], cur[p->base[g->outputs[k].node] + g->outputs[k].index]);
  for (int j = 0; j < p->n_end; j++) release_value(p, p->end[j]);
  if (TIDE_UNLIKELY(hooks & TIDE_HOOK_PROFILE)) tide_prof_record(TIDE_PROF_GRAPH, NULL, g->name, t0, tide_prof_now());
  return TIDE_OK;
}

/* Check the run's arguments and captures against the graph's. */
static tide_status check_args(tide_graph *g, int n_in, const tide_tensor *const *in, int n_caps,
                              const tide_tensor *const *caps, int n_out) {
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "graph run: NULL graph");
  if (!g->finalized) return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s' must be finalized before it runs", g->name);
  if (n_in != g->n_inputs)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s' takes %d input(s), got %d", g->name, g->n_inputs, n_in);
  if (n_caps != g->n_captures)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s' captures %d value(s) of an enclosing graph, got %d", g->name,
                     g->n_captures, n_caps);
  if (n_out != g->n_outputs)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s' gives %d output(s), asked for %d", g->name, g->n_outputs, n_out);
  for (int k = 0; k < n_in + n_caps; k++) {
    const tide_tensor *x = k < n_in ? in[k] : caps[k - n_in];
    const tide_tensor *d = k < n_in ? &g->nodes[g->inputs[k]].out[0] : &g->nodes[g->captures[k - n_in]].out[0];
    const char *what = k < n_in ? "input" : "capture";
    int which = k < n_in ? k + 1 : k - n_in + 1;
    char sx[128], sd[128];
    if (!x || (x->flags & TIDE_TENSOR_SYMBOLIC))
      return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s': %s %d must be an eager tensor", g->name, what, which);
    bool ok = x->dt == d->dt && (x->ndim == d->ndim || d->ndim < 0); /* an unknown rank takes any */
    for (int i = 0; ok && i < d->ndim; i++) ok = d->dims[i] < 0 || d->dims[i] == x->dims[i];
    if (!ok)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "graph '%s': %s %d is %s %s but the graph takes %s %s", g->name, what, which,
                       tide_dtype_name(x->dt), TIDE_SHAPE_STR(sx, x), tide_dtype_name(d->dt), TIDE_SHAPE_STR(sd, d));
  }
  return TIDE_OK;
}

tide_status tide_graph_exec(tide_graph *g, int n_in, const tide_tensor *const *in, int n_caps,
                            const tide_tensor *const *caps, int n_out, tide_tensor *const *out) {
  tide_status st = check_args(g, n_in, in, n_caps, caps, n_out);
  if (st) return st;
  int n_key = n_in + n_caps;
  const tide_tensor *keybuf[GRAPH_STACK_VALUES], **key = keybuf;
  if (n_caps > 0) {
    if (!(key = graph_scratch(keybuf, GRAPH_STACK_VALUES, n_key, sizeof *key)))
      return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
    for (int k = 0; k < n_key; k++) key[k] = k < n_in ? in[k] : caps[k - n_in];
  } else {
    key = (const tide_tensor **)in;
  }
  /* A free plan for these shapes, moved to the front (calls repeat shapes).
   * Runs of one graph on several threads at once (an input pipeline's map
   * workers) each need headers and an arena of their own: when every plan
   * for these shapes is busy, this run makes another, and it is kept (up to
   * MAX_PLANS), so each thread soon has its own and plans no more. */
  lock_plans();
  gplan *p = g->plans, **link = &g->plans;
  /* Acquire: pairs with the release that ended the plan's last run on
   * another thread, so that run's writes to its headers happen before ours. */
  while (p && (__atomic_load_n(&p->busy, __ATOMIC_ACQUIRE) || !plan_matches(p, n_key, key)))
    link = &p->next, p = p->next;
  if (p) {
    __atomic_store_n(&p->busy, 1, __ATOMIC_RELAXED);
    *link = p->next;
    p->next = g->plans;
    g->plans = p;
  }
  unlock_plans();
  if (!p) {
    st = make_plan(g, n_key, key, &p);
    if (!st) {
      p->busy = 1;
      cache_plan(g, p);
    }
  }
  if (key != keybuf && key != (const tide_tensor **)in) free(key);
  if (st) return st;
  tide_clear_error();
  st = run_plan(g, p, n_in, in, n_caps, caps, n_out, out);
  __atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
  return st;
}

tide_status tide_graph_run(tide_graph *g, int n_in, const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  if (g && g->n_captures > 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s' captures values of an enclosing graph; it runs inside that graph",
                     g->name);
  if (tide_interrupt_pending()) tide_interrupt_clear(); /* a stale request (as an eager op drops it) */
  for (int i = 0; i < n_in; i++) /* the executor runs CPU kernels on host memory */
    if (in && in[i] && in[i]->dev != TIDE_CPU)
      return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "graph '%s': input %d is on a GPU; traced graphs run on the CPU only "
                       "for now (move it with :cpu())", g ? g->name : "?", i + 1);
  return tide_graph_exec(g, n_in, in, 0, NULL, n_out, out);
}

tide_status tide_graph_run_captured(tide_graph *g, int n_in, const tide_tensor *const *in, int n_caps,
                                    const tide_tensor *const *caps, int n_out, tide_tensor *const *out) {
  if (tide_interrupt_pending()) tide_interrupt_clear(); /* as tide_graph_run */
  for (int i = 0; i < n_in + n_caps; i++) {
    const tide_tensor *x = i < n_in ? (in ? in[i] : NULL) : (caps ? caps[i - n_in] : NULL);
    if (x && x->dev != TIDE_CPU)
      return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "graph '%s': %s %d is on a GPU; traced graphs run on the CPU only for now "
                       "(move it with :cpu())", g ? g->name : "?", i < n_in ? "input" : "capture",
                       i < n_in ? i + 1 : i - n_in + 1);
  }
  return tide_graph_exec(g, n_in, in, n_caps, caps, n_out, out);
}

/* For graph/control.c: the layouts of g's outputs for inputs of these
 * layouts (a dim may be -1: values that depend on it come out unknown),
 * from g's cached plan for them. Does not run anything. */
tide_status tide_graph_plan_outputs(tide_graph *g, int n_in, const tide_tensor *const *in, tide_tensor *const *out) {
  if (!g->finalized) return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph '%s' must be finalized before it is planned", g->name);
  if (n_in != g->n_inputs || g->n_captures > 0)
    return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph '%s' takes %d input(s) and no captures, got %d", g->name, g->n_inputs,
                     n_in);
  lock_plans();
  gplan *p = g->plans;
  while (p && !plan_matches(p, n_in, in)) p = p->next;
  if (p) /* the layouts never change once planned: reading them while another run holds p is safe */
    for (int k = 0; k < g->n_outputs; k++) *out[k] = p->layout[p->base[g->outputs[k].node] + g->outputs[k].index];
  unlock_plans();
  if (p) return TIDE_OK;
  tide_status st = make_plan(g, n_in, in, &p);
  if (st) return st;
  for (int k = 0; k < g->n_outputs; k++) *out[k] = p->layout[p->base[g->outputs[k].node] + g->outputs[k].index];
  cache_plan(g, p);
  return TIDE_OK;
}
