/* data/combine.c — stages over several datasets: zip (elements side by
 * side, components concatenated, until the shortest ends) and concatenate
 * (one dataset's elements, then the next's). */
#include "stage.h"

/* The descriptions are the shared part alone: the inputs. */
static const dstage_ops zip_stage, concat_stage;

/* zip or concatenate over n datasets (held). */
static tide_dataset *multi(const dstage_ops *stage, int n, tide_dataset *const *inputs) {
  bool zip = stage == &zip_stage;
  const char *what = stage->name;
  if (n < 1 || !inputs) {
    TIDE_FAIL(TIDE_ERR_VALUE, "%s: expected at least one dataset, got %d", what, n);
    return NULL;
  }
  int ncomp = 0;
  for (int i = 0; i < n; i++) {
    if (!inputs[i]) {
      TIDE_FAIL(TIDE_ERR_VALUE, "%s: dataset %d is NULL", what, i);
      return NULL;
    }
    if (!zip && inputs[i]->ncomp != inputs[0]->ncomp) {
      TIDE_FAIL(TIDE_ERR_VALUE, "%s: the datasets' elements have different numbers of components (%d and %d)", what,
                inputs[0]->ncomp, inputs[i]->ncomp);
      return NULL;
    }
    ncomp = zip ? ncomp + inputs[i]->ncomp : inputs[0]->ncomp;
  }
  if (ncomp > TIDE_DATA_MAX_COMPONENTS) {
    TIDE_FAIL(TIDE_ERR_VALUE, "%s: an element would have %d components (at most %d)", what, ncomp,
              TIDE_DATA_MAX_COMPONENTS);
    return NULL;
  }
  tide_dataset *ds = dstage_new(stage, ncomp);
  if (ds && dstage_set_inputs(ds, n, inputs)) {
    tide_dataset_free(ds);
    return NULL;
  }
  return ds;
}

tide_dataset *tide_dataset_zip(int n, tide_dataset *const *inputs) { return multi(&zip_stage, n, inputs); }

tide_dataset *tide_dataset_concatenate(int n, tide_dataset *const *inputs) { return multi(&concat_stage, n, inputs); }

typedef struct multi_node {
  dnode base;
  tide_dataset *ds;
  dnode **in;  /* zip: one pass per input; concatenate: the current one at in[at] */
  int at;      /* concatenate: the input being read */
  int done;
} multi_node;

static tide_status zip_next(dnode *self, tide_tensor *out, int *end) {
  multi_node *m = (multi_node *)self;
  if (m->done) {
    *end = 1;
    return TIDE_OK;
  }
  int off = 0;
  for (int i = 0; i < m->ds->ninputs; i++) {
    dnode *in = m->in[i];
    tide_status st = dnext(in, out + off, end);
    if (st || *end) { /* TF: what the earlier inputs gave for this element is dropped */
      delem_release(out, off);
      if (*end) m->done = 1;
      return st;
    }
    off += in->ncomp;
  }
  return TIDE_OK;
}

static tide_status concat_next(dnode *self, tide_tensor *out, int *end) {
  multi_node *m = (multi_node *)self;
  for (;;) {
    if (m->at >= m->ds->ninputs) {
      *end = 1;
      return TIDE_OK;
    }
    if (!m->in[m->at] && !(m->in[m->at] = dnode_make(m->ds->inputs[m->at], self->pass))) return tide_last_status();
    dnode *in = m->in[m->at];
    tide_status st = dnext(in, out, end);
    if (st || !*end) return st;
    *end = 0;
    in->ops->free(in); /* its threads end with it */
    m->in[m->at++] = NULL;
  }
}

static void multi_free(dnode *self) {
  multi_node *m = (multi_node *)self;
  for (int i = 0; i < m->ds->ninputs; i++)
    if (m->in[i]) m->in[i]->ops->free(m->in[i]);
  free(m->in);
  free(m);
}

static const dnode_ops zip_ops = {zip_next, multi_free, "zip"};
static const dnode_ops concat_ops = {concat_next, multi_free, "concatenate"};

static dnode *multi_node_make(tide_dataset *ds, dpass *pass) {
  bool zip = ds->stage == &zip_stage;
  multi_node *m = calloc(1, sizeof *m);
  if (m) m->in = calloc((size_t)ds->ninputs, sizeof *m->in);
  if (!m || !m->in) {
    free(m);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  m->base = (dnode){zip ? &zip_ops : &concat_ops, ds->ncomp, pass};
  m->ds = ds;
  /* zip reads every input from the start; concatenate opens each in turn */
  for (int i = 0; zip && i < ds->ninputs; i++)
    if (!(m->in[i] = dnode_make(ds->inputs[i], pass))) {
      multi_free(&m->base);
      return NULL;
    }
  return &m->base;
}

/* TF: the shortest; unknown if any is; infinite if all are. */
static int64_t zip_cardinality(const tide_dataset *ds) {
  int64_t n = TIDE_DATA_INFINITE;
  for (int i = 0; i < ds->ninputs; i++) {
    int64_t c = tide_dataset_cardinality(ds->inputs[i]);
    if (c == TIDE_DATA_UNKNOWN) return c;
    if (c != TIDE_DATA_INFINITE && (n == TIDE_DATA_INFINITE || c < n)) n = c;
  }
  return n;
}

/* TF: infinite if any is, else unknown if any is, else the sum. */
static int64_t concat_cardinality(const tide_dataset *ds) {
  int64_t n = 0;
  bool unknown = false;
  for (int i = 0; i < ds->ninputs; i++) {
    int64_t c = tide_dataset_cardinality(ds->inputs[i]);
    if (c == TIDE_DATA_INFINITE) return c;
    if (c == TIDE_DATA_UNKNOWN) unknown = true;
    else n += c;
  }
  return unknown ? TIDE_DATA_UNKNOWN : n;
}

static const dstage_ops zip_stage = {"zip", sizeof(tide_dataset), multi_node_make, zip_cardinality,
                                     dstage_copy_nothing, NULL, NULL, NULL};
static const dstage_ops concat_stage = {"concatenate", sizeof(tide_dataset), multi_node_make, concat_cardinality,
                                        dstage_copy_nothing, NULL, NULL, NULL};
