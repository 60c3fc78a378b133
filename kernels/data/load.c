/* data/load.c — the load stage: a source reading the elements that ds.save (or a file cache) wrote in the
 * cache file format (data/cache_file.c), in C, so the stages above a loaded dataset run on C threads. */
#include "stage.h"
#include "tide/data_cache.h"

#include <stdlib.h>
#include <string.h>

typedef struct load_ds {
  tide_dataset base;
  char *path;
  int32_t *dtypes;
  int64_t card;
} load_ds;

static const dstage_ops load_stage;

tide_dataset *tide_dataset_load(const char *path, int ncomp, const int32_t *dtypes, int64_t cardinality) {
  if (!path || !*path || ncomp < 1 || ncomp > TIDE_DATA_MAX_COMPONENTS || !dtypes) {
    TIDE_FAIL(TIDE_ERR_VALUE, "load: a path and 1 to %d component dtypes are needed", TIDE_DATA_MAX_COMPONENTS);
    return NULL;
  }
  load_ds *l = (load_ds *)dstage_new(&load_stage, ncomp);
  if (!l) return NULL;
  l->card = cardinality;
  l->path = dstage_dup(path, strlen(path) + 1);
  l->dtypes = l->path ? dstage_dup(dtypes, (size_t)ncomp * sizeof *dtypes) : NULL;
  if (!l->dtypes) {
    tide_dataset_free(&l->base);
    return NULL;
  }
  return &l->base;
}

typedef struct load_node {
  dnode base;
  tide_cache_reader *reader;
  tide_tensor *ptrs[TIDE_DATA_MAX_COMPONENTS];
} load_node;

static tide_status load_next(dnode *self, tide_tensor *out, int *end) {
  load_node *l = (load_node *)self;
  for (int k = 0; k < self->ncomp; k++) l->ptrs[k] = &out[k];
  return tide_cache_reader_next(l->reader, self->ncomp, l->ptrs, end);
}

static void load_node_free(dnode *self) {
  load_node *l = (load_node *)self;
  tide_cache_reader_close(l->reader);
  free(l);
}

static const dnode_ops load_ops = {load_next, load_node_free, "load"};

/* The file is opened (and its header checked) when a pass starts. */
static dnode *load_node_make(tide_dataset *ds, dpass *pass) {
  const load_ds *d = (const load_ds *)ds;
  load_node *l = calloc(1, sizeof *l);
  if (!l) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  l->base = (dnode){&load_ops, ds->ncomp, pass};
  l->reader = tide_cache_reader_open(d->path, ds->ncomp, d->dtypes);
  if (!l->reader) {
    free(l);
    return NULL;
  }
  return &l->base;
}

static int64_t load_cardinality(const tide_dataset *ds) { return ((const load_ds *)ds)->card; }

static void load_free(tide_dataset *ds) {
  load_ds *l = (load_ds *)ds;
  free(l->path);
  free(l->dtypes);
}

/* A leaf: never copied for interleave's elements (param leaves make sources anew). */
static const dstage_ops load_stage = {"load", sizeof(load_ds), load_node_make, load_cardinality, NULL, load_free,
                                      NULL, NULL};
