/* io/load_cap.c — the cap on what a model reader computes while it loads: a memory account
 * charged for every tensor storage made between begin and end, refused past the cap before any byte is mapped. */
#include "load_cap.h"

#include <stdio.h>
#include <string.h>

int64_t load_cap_limit(int64_t model_bytes) {
  if (model_bytes < 0) model_bytes = 0;
  int64_t k = model_bytes > INT64_MAX / LOAD_CAP_FACTOR ? INT64_MAX : model_bytes * LOAD_CAP_FACTOR;
  return k > LOAD_CAP_FLOOR ? k : LOAD_CAP_FLOOR;
}

tide_status load_cap_begin(load_cap *c, int64_t model_bytes) {
  c->model_bytes = model_bytes;
  c->limit = load_cap_limit(model_bytes);
  c->acc = tide_memory_account_new_nested(c->limit);
  if (!c->acc) return tide_set_error(TIDE_ERR_MEMORY, "out of memory: cannot make the load cap's account");
  c->prev = tide_memory_account_swap(c->acc);
  return TIDE_OK;
}

void load_cap_end(load_cap *c) {
  if (!c->acc) return;
  tide_memory_account_swap(c->prev);
  tide_memory_account_release(c->acc);
  c->acc = NULL;
}

tide_status load_cap_explain(const load_cap *c, tide_status st) {
  if (st != TIDE_ERR_MEMORY) return st;
  char mark[64], last[1200];
  snprintf(mark, sizeof mark, "memory limit of %lld bytes reached", (long long)c->limit);
  snprintf(last, sizeof last, "%s", tide_last_error());
  if (!strstr(last, mark)) return st; /* the caller's own cap, or the machine's memory */
  return tide_set_error(st, "%s (the tensors tide computes while it loads a model are capped at max(%lld MiB, %d x the "
                   "%lld bytes of its files) = %lld bytes; see docs/saved_model.md, \"Load cap\")", last,
                   (long long)(LOAD_CAP_FLOOR >> 20), LOAD_CAP_FACTOR, (long long)c->model_bytes, (long long)c->limit);
}
