/* io/load_cap.h — the cap on the tensors a model reader computes while it loads (constants
 * folded from constants, ConstantOfShape/Range/Expand of known sizes): a hostile few-KB file must not map gigabytes. */
#ifndef TIDE_IO_LOAD_CAP_H
#define TIDE_IO_LOAD_CAP_H

#include <stdint.h>

#include "tide/tide.h"

/* The cap is max(LOAD_CAP_FLOOR, LOAD_CAP_FACTOR x the bytes of the model's files): a real
 * model computes at load at most a few copies of its weights (weights cast from float16,
 * dequantized from int8, transposed to NHWC), a bomb computes thousands of times its size. */
#define LOAD_CAP_FLOOR ((int64_t)64 << 20)
#define LOAD_CAP_FACTOR 8

typedef struct load_cap {
  tide_memory_account *acc, *prev;
  int64_t limit, model_bytes;
} load_cap;

/* The cap for a model whose files hold model_bytes. */
int64_t load_cap_limit(int64_t model_bytes);
/* From here on this thread's tensor storages are charged to the cap (nested in the
 * caller's own account, a VM's, which still counts them). */
tide_status load_cap_begin(load_cap *c, int64_t model_bytes);
/* Back to the caller's account; storages made under the cap keep it until freed. */
void load_cap_end(load_cap *c);
/* st unchanged, or, when st is the cap's refusal, the last error with the cap explained. */
tide_status load_cap_explain(const load_cap *c, tide_status st);

#endif
