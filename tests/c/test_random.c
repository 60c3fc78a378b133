/* tests/c/test_random.c — Philox4x32-10 against Random123's known-answer
 * vectors, the counter budget of each random op, and thread-count independence. */
#include "tide/tide.h"
#include "check.h"

#include <string.h>

/* One Random123 kat_vectors line: counter words 0-3, key words 0-1, expected words 0-3. */
static void kat(const uint32_t ctr[4], const uint32_t key[2], const uint32_t want[4]) {
  uint32_t out[4];
  tide_philox4x32((uint64_t)key[1] << 32 | key[0], (uint64_t)ctr[1] << 32 | ctr[0],
                  (uint64_t)ctr[3] << 32 | ctr[2], out);
  for (int i = 0; i < 4; i++) CHECK(out[i] == want[i]);
}

/* Run random op `op` over n float32 values with the given key and counter into t. */
static int draw(int op, int dt, int64_t n, uint64_t key, uint64_t counter, tide_tensor *t) {
  tide_attrs a;
  memset(&a, 0, sizeof a);
  a.ints[0] = n;
  a.nints = 1;
  a.dtype = dt;
  a.scalars[0] = op == TIDE_OP_RANDOM_UNIFORM ? -3 : 0;
  a.scalars[1] = op == TIDE_OP_RANDOM_UNIFORM ? 5 : 1;
  a.rng_key = key;
  a.rng_counter = counter;
  memset(t, 0, sizeof *t);
  return tide_op_run(op, &a, 0, NULL, 1, &t);
}

int main(void) {
  {
    const uint32_t c[4] = {0, 0, 0, 0}, k[2] = {0, 0};
    const uint32_t w[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
    kat(c, k, w);
  }
  {
    const uint32_t c[4] = {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, k[2] = {0xffffffff, 0xffffffff};
    const uint32_t w[4] = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
    kat(c, k, w);
  }
  {
    const uint32_t c[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, k[2] = {0xa4093822, 0x299f31d0};
    const uint32_t w[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
    kat(c, k, w);
  }

  /* Counter budgets, as documented in random.h. */
  CHECK(tide_random_counters(TIDE_OP_RANDOM_UNIFORM, TIDE_FLOAT32, 0) == 0);
  CHECK(tide_random_counters(TIDE_OP_RANDOM_UNIFORM, TIDE_FLOAT32, 9) == 3);
  CHECK(tide_random_counters(TIDE_OP_RANDOM_UNIFORM, TIDE_FLOAT16, 4) == 1);
  CHECK(tide_random_counters(TIDE_OP_RANDOM_UNIFORM, TIDE_FLOAT64, 9) == 5);
  CHECK(tide_random_counters(TIDE_OP_RANDOM_UNIFORM, TIDE_INT32, 3) == 2);
  CHECK(tide_random_counters(TIDE_OP_RANDOM_NORMAL, TIDE_FLOAT32, 5) == 2);
  CHECK(tide_random_counters(TIDE_OP_TRUNCATED_NORMAL, TIDE_FLOAT64, 5) == 3);
  CHECK(tide_random_counters(TIDE_OP_RANDOM_SHUFFLE, TIDE_INT8, 5) == 3);

  /* Element i depends only on (key, counter + i / 4): a draw that starts one
   * block later is the same stream shifted by four values. */
  tide_tensor a, b;
  CHECK(draw(TIDE_OP_RANDOM_UNIFORM, TIDE_FLOAT32, 64, 42, 7, &a) == TIDE_OK);
  CHECK(draw(TIDE_OP_RANDOM_UNIFORM, TIDE_FLOAT32, 60, 42, 8, &b) == TIDE_OK);
  CHECK(memcmp((float *)a.data + 4, b.data, 60 * sizeof(float)) == 0);
  int in_range = 1;
  for (int i = 0; i < 64; i++) in_range &= ((float *)a.data)[i] >= -3 && ((float *)a.data)[i] < 5;
  CHECK(in_range);
  tide_tensor_release(&a);
  tide_tensor_release(&b);

  /* The same numbers whatever the thread count (large enough to go parallel). */
  const int ops[3] = {TIDE_OP_RANDOM_UNIFORM, TIDE_OP_RANDOM_NORMAL, TIDE_OP_TRUNCATED_NORMAL};
  for (int o = 0; o < 3; o++) {
    int64_t n = 300001;
    CHECK(tide_set_num_threads(1) == TIDE_OK);
    CHECK(draw(ops[o], TIDE_FLOAT64, n, 9, 1000, &a) == TIDE_OK);
    CHECK(tide_set_num_threads(4) == TIDE_OK);
    CHECK(draw(ops[o], TIDE_FLOAT64, n, 9, 1000, &b) == TIDE_OK);
    CHECK(memcmp(a.data, b.data, (size_t)n * sizeof(double)) == 0);
    tide_tensor_release(&a);
    tide_tensor_release(&b);
  }

  /* Op-seed streams: keyed by (global seed, op seed), counters follow on, set_seed restarts them. */
  {
    uint64_t k1, c1, k2, c2, k3, c3;
    tide_random_set_seed(7);
    CHECK(tide_random_reserve_op(5, 3, &k1, &c1) == TIDE_OK);
    CHECK(tide_random_reserve_op(5, 2, &k2, &c2) == TIDE_OK);
    CHECK(tide_random_reserve_op(6, 1, &k3, &c3) == TIDE_OK);
    CHECK(k1 == tide_random_derive_key(7, 5) && k2 == k1 && c1 == 0 && c2 == 3);
    CHECK(k3 == tide_random_derive_key(7, 6) && c3 == 0);
    tide_random_set_seed(7);
    CHECK(tide_random_reserve_op(5, 3, &k2, &c2) == TIDE_OK);
    CHECK(k2 == k1 && c2 == 0);
    /* an eager op with TIDE_ATTR_OP_SEED draws from that stream: twice differs, after set_seed repeats */
    tide_tensor x, y, z, *px = &x, *py = &y, *pz = &z;
    tide_attrs at;
    memset(&at, 0, sizeof at);
    at.ints[0] = 8, at.nints = 1, at.dtype = TIDE_FLOAT32, at.scalars[1] = 1;
    at.flags = TIDE_ATTR_OP_SEED, at.rng_key = 9;
    memset(&x, 0, sizeof x), memset(&y, 0, sizeof y), memset(&z, 0, sizeof z);
    tide_random_set_seed(3);
    CHECK(tide_op_run(TIDE_OP_RANDOM_UNIFORM, &at, 0, NULL, 1, &px) == TIDE_OK);
    CHECK(tide_op_run(TIDE_OP_RANDOM_UNIFORM, &at, 0, NULL, 1, &py) == TIDE_OK);
    tide_random_set_seed(3);
    CHECK(tide_op_run(TIDE_OP_RANDOM_UNIFORM, &at, 0, NULL, 1, &pz) == TIDE_OK);
    CHECK(memcmp(x.data, y.data, 8 * sizeof(float)) != 0);
    CHECK(memcmp(x.data, z.data, 8 * sizeof(float)) == 0);
    tide_tensor_release(&x);
    tide_tensor_release(&y);
    tide_tensor_release(&z);
  }
  return CHECK_SUMMARY("random");
}
