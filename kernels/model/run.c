/* model/run.c — a tide_run: a signature's inputs bound over the caller's
 * buffers, one call of its graph, and its outputs viewed in place. */
#include "model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"

struct tide_run {
  const tide_signature *sig;
  tide_tensor *in;            /* n_in headers wrapping the caller's buffers (empty until bound) */
  const tide_tensor **in_ptrs;
  tide_tensor *res;           /* n_out results of the last run, as the graph gave them */
  tide_tensor **res_ptrs;
  tide_tensor *flat;          /* n_out contiguous copies, made only for results that are strided views */
  bool ran;                   /* res holds the results of a successful run */
};

tide_array tide_array_make(void *data, int dtype, int ndim, const int64_t *dims) {
  tide_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = dtype;
  a.ndim = ndim;
  for (int d = 0; d < ndim && d < TIDE_MAX_DIMS && dims; d++) a.dims[d] = dims[d];
  return a;
}

tide_run *tide_run_new(const tide_signature *s, tide_model_error *err) {
  if (!s) {
    tide_model_fail(err, TIDE_ERR_VALUE, false, "tide_run_new: the signature is NULL");
    return NULL;
  }
  tide_run *r = calloc(1, sizeof *r);
  if (r) {
    r->sig = s;
    r->in = calloc((size_t)s->n_in + 1, sizeof *r->in);
    r->in_ptrs = calloc((size_t)s->n_in + 1, sizeof *r->in_ptrs);
    r->res = calloc((size_t)s->n_out + 1, sizeof *r->res);
    r->res_ptrs = calloc((size_t)s->n_out + 1, sizeof *r->res_ptrs);
    r->flat = calloc((size_t)s->n_out + 1, sizeof *r->flat);
  }
  if (!r || !r->in || !r->in_ptrs || !r->res || !r->res_ptrs || !r->flat) {
    tide_run_free(r);
    tide_model_fail(err, TIDE_ERR_MEMORY, false, "tide_run_new '%s': out of memory", s->name);
    return NULL;
  }
  for (int i = 0; i < s->n_in; i++) r->in_ptrs[i] = &r->in[i];
  for (int i = 0; i < s->n_out; i++) r->res_ptrs[i] = &r->res[i];
  tide_model_ok(err);
  return r;
}

/* Let go of the last run's results. */
static void drop_results(tide_run *r) {
  for (int i = 0; i < r->sig->n_out; i++) {
    tide_tensor_release(&r->res[i]);
    tide_tensor_release(&r->flat[i]);
  }
  r->ran = false;
}

void tide_run_free(tide_run *r) {
  if (!r) return;
  if (r->sig && r->res && r->flat) drop_results(r);
  for (int i = 0; r->sig && r->in && i < r->sig->n_in; i++) tide_tensor_release(&r->in[i]);
  free(r->in);
  free(r->in_ptrs);
  free(r->res);
  free(r->res_ptrs);
  free(r->flat);
  free(r);
}

/* "float32 [1, 784]" for messages. */
static const char *describe(char *buf, size_t size, int dtype, int ndim, const int64_t *dims) {
  const char *dn = dtype >= 0 && dtype < TIDE_NUM_DTYPES ? tide_dtype_name(dtype) : "?";
  int n = snprintf(buf, size, "%s ", dn);
  if (ndim == TIDE_UNKNOWN_RANK) {
    snprintf(buf + n, size - (size_t)n, "(any rank)");
    return buf;
  }
  n += snprintf(buf + n, size - (size_t)n, "[");
  for (int d = 0; d < ndim && (size_t)n < size; d++)
    n += snprintf(buf + n, size - (size_t)n, dims[d] < 0 ? "%sNone" : "%s%lld", d ? ", " : "", (long long)dims[d]);
  if ((size_t)n < size) snprintf(buf + n, size - (size_t)n, "]");
  return buf;
}

tide_status tide_run_set_input(tide_run *r, int i, const tide_array *a, tide_model_error *err) {
  if (!r) return tide_model_fail(err, TIDE_ERR_VALUE, false, "tide_run_set_input: the run is NULL");
  const tide_signature *s = r->sig;
  if (i < 0 || i >= s->n_in)
    return tide_model_fail(err, TIDE_ERR_INDEX, false, "signature '%s': no input %d (it takes %d)", s->name, i,
                           s->n_in);
  const tide_tensor_spec *sp = &s->in[i];
  if (!a) return tide_model_fail(err, TIDE_ERR_VALUE, false, "signature '%s': input '%s' given a NULL array", s->name,
                                 sp->name);
  char got[160], want[160];
  if (a->ndim < 0 || a->ndim > TIDE_MAX_DIMS)
    return tide_model_fail(err, TIDE_ERR_SHAPE, false, "signature '%s': input '%s' given rank %d (at most %d)",
                           s->name, sp->name, (int)a->ndim, (int)TIDE_MAX_DIMS);
  if (a->dtype != sp->dtype)
    return tide_model_fail(err, TIDE_ERR_DTYPE, false, "signature '%s': input '%s' is %s, given %s", s->name, sp->name,
                           describe(want, sizeof want, sp->dtype, sp->ndim, sp->dims),
                           describe(got, sizeof got, a->dtype, a->ndim, a->dims));
  bool fits = sp->ndim == TIDE_UNKNOWN_RANK || sp->ndim == a->ndim;
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) {
    if (a->dims[d] < 0) fits = false;
    else if (fits && sp->ndim != TIDE_UNKNOWN_RANK && sp->dims[d] >= 0 && sp->dims[d] != a->dims[d]) fits = false;
    else n *= a->dims[d];
  }
  if (!fits)
    return tide_model_fail(err, TIDE_ERR_SHAPE, false, "signature '%s': input '%s' is %s, given %s", s->name, sp->name,
                           describe(want, sizeof want, sp->dtype, sp->ndim, sp->dims),
                           describe(got, sizeof got, a->dtype, a->ndim, a->dims));
  if (!a->data && n > 0)
    return tide_model_fail(err, TIDE_ERR_VALUE, false, "signature '%s': input '%s' given NULL data", s->name, sp->name);
  tide_tensor *t = &r->in[i];
  tide_storage *st0 = t->storage;
  if (st0 && __atomic_load_n(&st0->refs, __ATOMIC_ACQUIRE) == 1 && t->dt == a->dtype) {
    /* Rebind the wrap this run alone holds: nothing is allocated per call. */
    size_t nbytes = (size_t)n * tide_dtype_size_unchecked(a->dtype);
    tide_tensor_set_contiguous_layout(t, a->dtype, a->ndim, a->dims);
    st0->data = a->data;
    st0->free_ptr = a->data;
    st0->nbytes = nbytes;
    t->data = a->data;
    tide_model_ok(err);
    return TIDE_OK;
  }
  tide_tensor_release(t); /* a result of the last run may still share the old wrap */
  tide_status st = tide_tensor_wrap(t, a->data, a->dtype, a->ndim, a->dims, NULL, NULL, NULL);
  if (st) return tide_model_fail(err, st, true, "signature '%s': input '%s'", s->name, sp->name);
  tide_model_ok(err);
  return TIDE_OK;
}

tide_status tide_model_run(tide_run *r, tide_model_error *err) {
  if (!r) return tide_model_fail(err, TIDE_ERR_VALUE, false, "tide_model_run: the run is NULL");
  const tide_signature *s = r->sig;
  for (int i = 0; i < s->n_in; i++)
    if (!r->in[i].storage)
      return tide_model_fail(err, TIDE_ERR_VALUE, false, "signature '%s': input %d ('%s') is not bound "
                             "(tide_run_set_input)", s->name, i, s->in[i].name);
  drop_results(r);
  if (s->serialize) pthread_mutex_lock((pthread_mutex_t *)&s->lock);
  tide_status st = tide_graph_run(s->graph, s->n_in, r->in_ptrs, s->n_out, r->res_ptrs);
  if (s->serialize) pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
  if (st) {
    for (int i = 0; i < s->n_out; i++) tide_tensor_release(&r->res[i]);
    return tide_model_fail(err, st, true, "signature '%s'", s->name);
  }
  /* Results that are strided views (a slice, a transpose the graph gives as
   * it is) are copied once into a contiguous tensor, so every output reads
   * as a plain row-major array. */
  for (int i = 0; i < s->n_out; i++) {
    const tide_tensor *use; /* r->res[i], or r->flat[i] made from it */
    st = tide_contiguous_or_copy("run", &r->res[i], &r->flat[i], &use);
    if (st) {
      drop_results(r);
      return tide_model_fail(err, st, true, "signature '%s': output %d", s->name, i);
    }
  }
  r->ran = true;
  tide_model_ok(err);
  return TIDE_OK;
}

tide_status tide_run_output(const tide_run *r, int i, tide_array *out) {
  if (!r || !out) return tide_set_error(TIDE_ERR_VALUE, "tide_run_output: %s is NULL", r ? "out" : "the run");
  if (i < 0 || i >= r->sig->n_out)
    return tide_set_error(TIDE_ERR_INDEX, "signature '%s': no output %d (it gives %d)", r->sig->name, i,
                          r->sig->n_out);
  if (!r->ran)
    return tide_set_error(TIDE_ERR_VALUE, "signature '%s': output %d asked for before a successful tide_model_run",
                          r->sig->name, i);
  const tide_tensor *x = r->flat[i].data ? &r->flat[i] : &r->res[i];
  *out = tide_array_make(x->data, x->dt, x->ndim, x->dims);
  return TIDE_OK;
}
