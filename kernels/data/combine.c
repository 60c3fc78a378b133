/* data/combine.c — stages over several datasets: zip (elements side by
 * side, components concatenated, until the shortest ends) and concatenate
 * (one dataset's elements, then the next's). */
#include "pipeline.h"

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

dnode *dnode_multi(tide_dataset *ds, dpass *pass) {
  multi_node *m = calloc(1, sizeof *m);
  if (m) m->in = calloc((size_t)ds->ninputs, sizeof *m->in);
  if (!m || !m->in) {
    free(m);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  m->base = (dnode){ds->kind == DS_ZIP ? &zip_ops : &concat_ops, ds->ncomp, pass};
  m->ds = ds;
  /* zip reads every input from the start; concatenate opens each in turn */
  for (int i = 0; ds->kind == DS_ZIP && i < ds->ninputs; i++)
    if (!(m->in[i] = dnode_make(ds->inputs[i], pass))) {
      multi_free(&m->base);
      return NULL;
    }
  return &m->base;
}
