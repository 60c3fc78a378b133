/* data/batch.h — what the batching stages share (batch.c, sparse_batch.c,
 * padded_batch.c): the node that gathers n elements, and the ways to stack them. */
#ifndef TIDE_DATA_BATCH_H
#define TIDE_DATA_BATCH_H

#include "stage.h"

/* How a batch's `count` pending elements (pending[i * ncomp + k]) become
 * its components out[0 .. ncomp); on failure out holds nothing. */
typedef tide_status (*dbatch_assembly)(const tide_dataset *ds, const tide_tensor *pending, int64_t count,
                                       tide_tensor *out);

/* The node of a batching stage over ds's input: n elements at a time (the
 * last batch smaller unless drop) made into one by assemble; `name` (a
 * static string) names it in profiles. NULL with the error set. */
dnode *dbatch_node(tide_dataset *ds, dpass *pass, const char *name, int64_t n, int drop, dbatch_assembly assemble);
/* A batching stage's cardinality over an input of `in` elements. */
int64_t dbatch_cardinality(int64_t in, int64_t n, int drop);

/* Stack component k of the `count` pending elements of nc components into
 * *out (batch.c); on failure *out holds nothing. */
tide_status dbatch_stack_component(int nc, const tide_tensor *pending, int64_t count, int k, tide_tensor *out);
/* Batch elements holding SparseTensors (sparse_batch.c): where roles[k] is
 * 1, components k .. k+2 are a triple batched by TF's rule; the others stack. */
tide_status dsparse_stack(const unsigned char *roles, int nc, const tide_tensor *pending, int64_t count,
                          tide_tensor *out);

#endif
