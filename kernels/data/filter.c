/* data/filter.c — filter: the elements for which a traced predicate (a graph
 * giving one bool scalar) is true, run where the pass pulls (no Lua). */
#include "stage.h"

#include <stdio.h>

/* The description is the shared part alone: fn is the predicate. */
static const dstage_ops filter_stage;

tide_dataset *tide_dataset_filter(tide_dataset *in, tide_graph *g) {
  if (!g) {
    TIDE_FAIL(TIDE_ERR_VALUE, "filter: the graph is NULL");
    return NULL;
  }
  if (in && tide_graph_num_inputs(g) != in->ncomp) {
    TIDE_FAIL(TIDE_ERR_VALUE, "filter: the predicate takes %d tensors but an element has %d components",
              tide_graph_num_inputs(g), in->ncomp);
    return NULL;
  }
  if (tide_graph_num_outputs(g) != 1) {
    TIDE_FAIL(TIDE_ERR_VALUE, "filter: the predicate must return one bool scalar, it returns %d tensors",
              tide_graph_num_outputs(g));
    return NULL;
  }
  tide_dataset *ds = dstage_new_on(&filter_stage, in);
  if (ds) dstage_set_graph(ds, g);
  return ds;
}

typedef struct filter_node {
  dnode base;
  tide_dataset *ds;
  dnode *in;
  int64_t index; /* elements the input gave */
} filter_node;

/* Run the predicate on the element in out; *keep its answer. */
static tide_status judge(filter_node *f, tide_tensor *elem, int64_t index, bool *keep) {
  const tide_tensor *ins[TIDE_DATA_MAX_COMPONENTS];
  for (int k = 0; k < f->base.ncomp; k++) ins[k] = &elem[k];
  tide_tensor answer;
  memset(&answer, 0, sizeof answer);
  tide_tensor *outs[1] = {&answer};
  tide_status st = dgraph_run(f->ds, f->base.ncomp, ins, 1, outs);
  if (st) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tide_last_error());
    return TIDE_FAIL(st, "filter: the predicate failed on element %lld: %s", (long long)index, msg);
  }
  if (answer.dt != TIDE_BOOL || answer.nelem != 1) {
    char s[128];
    st = TIDE_FAIL(TIDE_ERR_VALUE, "filter: the predicate must return a bool scalar, got %s %s (element %lld)",
                   tide_dtype_name(answer.dt), TIDE_SHAPE_STR(s, &answer), (long long)index);
  } else {
    *keep = *(const bool *)answer.data;
  }
  tide_tensor_release(&answer);
  return st;
}

static tide_status filter_next(dnode *self, tide_tensor *out, int *end) {
  filter_node *f = (filter_node *)self;
  for (;;) {
    if (dpass_stopping(self->pass)) return dstopped();
    tide_status st = dnext(f->in, out, end);
    if (st || *end) return st;
    bool keep = false;
    st = judge(f, out, f->index++, &keep);
    if (!st && keep) return TIDE_OK;
    delem_release(out, self->ncomp);
    if (st) return st;
  }
}

static void filter_free(dnode *self) {
  filter_node *f = (filter_node *)self;
  f->in->ops->free(f->in);
  free(f);
}

static const dnode_ops filter_ops = {filter_next, filter_free, "filter"};

static dnode *filter_node_make(tide_dataset *ds, dpass *pass) {
  filter_node *f = calloc(1, sizeof *f);
  if (!f) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  f->base = (dnode){&filter_ops, ds->ncomp, pass};
  f->ds = ds;
  if (!(f->in = dnode_make(ds->input, pass))) {
    free(f);
    return NULL;
  }
  return &f->base;
}

static int64_t filter_cardinality(const tide_dataset *ds) {
  int64_t in = dstage_input_cardinality(ds);
  return in == TIDE_DATA_INFINITE ? in : TIDE_DATA_UNKNOWN;
}

static const dstage_ops filter_stage = {"filter", sizeof(tide_dataset), filter_node_make, filter_cardinality,
                                        dstage_copy_nothing, NULL, NULL, NULL};
