/* tests/c/test_ops.c — the op registry and tide_op_run through the public C API:
 * the error message, queries, call checks, threads, integer division, half ops. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util.h"

/* ---- errors ----------------------------------------------------------------------- */

static void test_errors(void) {
  tide_clear_error();
  CHECK(tide_last_status() == TIDE_OK);
  CHECK(strcmp(tide_last_error(), "") == 0);
  CHECK(tide_set_error(TIDE_ERR_VALUE, "myop: bad value %d", 42) == TIDE_ERR_VALUE);
  CHECK(tide_last_status() == TIDE_ERR_VALUE);
  CHECK(strcmp(tide_last_error(), "myop: bad value 42") == 0);
  /* A very long message is cut, not overflowed. */
  char big[4096];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  tide_set_error(TIDE_ERR_INTERNAL, "%s", big);
  CHECK(strlen(tide_last_error()) > 100 && strlen(tide_last_error()) < sizeof big);
  tide_clear_error();
  CHECK(tide_last_status() == TIDE_OK && tide_last_error()[0] == '\0');
}

/* ---- the op registry ----------------------------------------------------------------------- */

static void test_registry(void) {
  int unique = 1;
  for (int op = 0; op < TIDE_NUM_OPS; op++) {
    const char *name = tide_op_name(op);
    CHECK(name != NULL && name[0] != '\0');
    if (!name) continue;
    CHECK(tide_op_lookup(name) == op);
    for (int other = op + 1; other < TIDE_NUM_OPS; other++)
      if (tide_op_name(other) && strcmp(name, tide_op_name(other)) == 0) unique = 0;
    CHECK(tide_op_num_outputs(op) >= 1 || tide_op_num_outputs(op) == -1); /* -1: one per input */
    CHECK(tide_op_num_inputs(op) >= -1);
    CHECK(tide_op_dtypes(op) != 0 && (tide_op_dtypes(op) & ~(uint32_t)TIDE_DTS_ANY) == 0);
    /* Elementwise ops take inputs and are never views. */
    if (tide_op_flags(op) & TIDE_OPF_ELEMENTWISE) {
      CHECK(tide_op_num_inputs(op) >= 1);
      CHECK(!(tide_op_flags(op) & TIDE_OPF_VIEW));
    }
  }
  CHECK(unique);
  CHECK(tide_op_lookup("no_such_op") == -1);
  CHECK(tide_op_lookup("") == -1);
  CHECK(tide_op_lookup(NULL) == -1);
  CHECK(tide_op_lookup("ADD") == -1); /* names are lower case, exact */
  CHECK(tide_op_name(-1) == NULL && tide_op_name(TIDE_NUM_OPS) == NULL);
  CHECK(tide_op_num_inputs(-1) == 0 && tide_op_num_outputs(TIDE_NUM_OPS) == 0);
  CHECK(tide_op_flags(-1) == 0 && tide_op_dtypes(TIDE_NUM_OPS) == 0);
  /* Arity of a few known rows. */
  CHECK(tide_op_lookup("add") == TIDE_OP_ADD);
  CHECK(tide_op_num_inputs(TIDE_OP_ADD) == 2 && tide_op_num_outputs(TIDE_OP_ADD) == 1);
  CHECK(tide_op_num_inputs(TIDE_OP_NEG) == 1);
  CHECK(tide_op_num_inputs(TIDE_OP_WHERE) == 3);
  CHECK(tide_op_num_inputs(TIDE_OP_CONCAT) == -1);
  CHECK(tide_op_num_inputs(TIDE_OP_FILL) == 0);
  CHECK(tide_op_num_outputs(TIDE_OP_TOP_K) == 2);
  CHECK(tide_op_flags(TIDE_OP_ADD) & TIDE_OPF_ELEMENTWISE);
  CHECK(tide_op_flags(TIDE_OP_TRANSPOSE) & TIDE_OPF_VIEW);
  CHECK(tide_op_flags(TIDE_OP_RANDOM_UNIFORM) & TIDE_OPF_STATEFUL);
  CHECK(tide_op_dtypes(TIDE_OP_EXP) == TIDE_DTS_FLOAT);
  CHECK(tide_op_dtypes(TIDE_OP_LOGICAL_AND) == TIDE_DTS_BOOL);
}

/* ---- tide_op_run errors -------------------------------------------------------------------- */

static void test_op_errors(void) {
  int64_t d2[] = {2}, d3[] = {3};
  tide_tensor f2, f3, out = blank();
  iota_f32(&f2, 1, d2, false);
  iota_f32(&f3, 1, d3, false);
  int32_t iv[2] = {1, 2};
  tide_tensor i2;
  from_i32(&i2, 1, d2, iv);

  /* A NULL input. */
  const tide_tensor *with_null[2] = {&f2, NULL};
  tide_tensor *outs[1] = {&out};
  CHECK(tide_op_run(TIDE_OP_ADD, NULL, 2, with_null, 1, outs) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "add") && contains(tide_last_error(), "NULL"));
  CHECK(out.data == NULL);
  CHECK(tide_op_binary(TIDE_OP_MUL, &out, NULL, &f2) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "mul"));
  CHECK(tide_op_unary(TIDE_OP_NEG, &out, NULL) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "neg"));
  /* A NULL output. */
  tide_tensor *null_out[1] = {NULL};
  const tide_tensor *pair[2] = {&f2, &f2};
  CHECK(tide_op_run(TIDE_OP_ADD, NULL, 2, pair, 1, null_out) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "add"));

  /* Wrong arity, in and out. */
  const tide_tensor *one[1] = {&f2};
  CHECK(tide_op_run(TIDE_OP_ADD, NULL, 1, one, 1, outs) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "add") && contains(tide_last_error(), "2 input"));
  const tide_tensor *three[3] = {&f2, &f2, &f2};
  CHECK(tide_op_run(TIDE_OP_NEG, NULL, 3, three, 1, outs) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "neg"));
  tide_tensor out2 = blank();
  tide_tensor *two_outs[2] = {&out, &out2};
  CHECK(tide_op_run(TIDE_OP_ADD, NULL, 2, pair, 2, two_outs) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "add") && contains(tide_last_error(), "output"));
  CHECK(tide_op_run(TIDE_OP_CONCAT, NULL, 0, NULL, 1, outs) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "concat"));

  /* Mixed dtypes name the op and both dtypes. */
  CHECK(tide_op_binary(TIDE_OP_ADD, &out, &f2, &i2) == TIDE_ERR_DTYPE);
  CHECK(contains(tide_last_error(), "add"));
  CHECK(contains(tide_last_error(), "float32") && contains(tide_last_error(), "int32"));
  CHECK(out.data == NULL);
  /* A dtype the op does not take. */
  CHECK(tide_op_unary(TIDE_OP_EXP, &out, &i2) == TIDE_ERR_DTYPE);
  CHECK(contains(tide_last_error(), "exp") && contains(tide_last_error(), "int32"));
  /* Shapes that do not broadcast. */
  CHECK(tide_op_binary(TIDE_OP_SUB, &out, &f2, &f3) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "sub") && contains(tide_last_error(), "[2]") && contains(tide_last_error(), "[3]"));
  /* Unknown op codes. */
  CHECK(tide_op_binary(TIDE_NUM_OPS, &out, &f2, &f2) != TIDE_OK);
  CHECK(contains(tide_last_error(), "unknown op"));
  CHECK(tide_op_run(-7, NULL, 2, pair, 1, outs) != TIDE_OK);
  CHECK(contains(tide_last_error(), "-7"));
  /* A released input. */
  tide_tensor gone;
  iota_f32(&gone, 1, d3, true);
  tide_tensor_release(&gone);
  gone.nelem = 3; /* a header that still claims elements but has no data */
  CHECK(tide_op_unary(TIDE_OP_NEG, &out, &gone) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "neg"));
  CHECK(out.data == NULL);

  /* And after all that, the op works. */
  CHECK(tide_op_binary(TIDE_OP_ADD, &out, &f2, &f2) == TIDE_OK);
  CHECK(((float *)out.data)[1] == 2.0f);
  tide_tensor_release(&out);
  tide_tensor_release(&f2);
  tide_tensor_release(&f3);
  tide_tensor_release(&i2);
  /* An op ignores the attributes its row does not name: a huge scalars[0] given
   * to an integer neg is not converted to the element type (that is UB in C). */
  {
    int64_t d3i[] = {3};
    int32_t v3[3] = {1, -2, 3};
    tide_tensor x, y = blank();
    from_i32(&x, 1, d3i, v3);
    tide_attrs at;
    memset(&at, 0, sizeof at);
    at.scalars[0] = 1e300;
    const tide_tensor *xin = &x;
    tide_tensor *yout = &y;
    CHECK(tide_op_run(TIDE_OP_NEG, &at, 1, &xin, 1, &yout) == TIDE_OK);
    CHECK(((int32_t *)y.data)[0] == -1 && ((int32_t *)y.data)[1] == 2);
    tide_tensor_release(&y);
    tide_tensor_release(&x);
  }

  /* attrs.nints outside [0, TIDE_MAX_INTS] is refused before any op reads
   * ints[] (squeeze would read past the array; reshape would make rank -1). */
  {
    int64_t d4[] = {4};
    tide_tensor x, y = blank();
    iota_f32(&x, 1, d4, true);
    const tide_tensor *xin = &x;
    tide_tensor *yout = &y;
    tide_attrs at;
    memset(&at, 0, sizeof at);
    at.nints = TIDE_MAX_INTS + 1;
    CHECK(tide_op_run(TIDE_OP_SQUEEZE, &at, 1, &xin, 1, &yout) == TIDE_ERR_VALUE);
    CHECK(contains(tide_last_error(), "squeeze: attrs.nints is 25 (valid: 0 to 24)"));
    at.nints = -1;
    CHECK(tide_op_run(TIDE_OP_RESHAPE, &at, 1, &xin, 1, &yout) == TIDE_ERR_VALUE);
    CHECK(tide_op_infer(TIDE_OP_RESHAPE, &at, 1, &xin, 1, &yout) == TIDE_ERR_VALUE);
    CHECK(contains(tide_last_error(), "reshape: attrs.nints is -1"));
    CHECK(y.data == NULL);
    tide_tensor_release(&x);
  }

  /* An output whose element count overflows is an error naming the op and the
   * shape, from tide_op_infer too (broadcast_to makes a view, so nothing else
   * would notice). */
  {
    int64_t d1[] = {100};
    tide_tensor x, y = blank();
    iota_f32(&x, 1, d1, true);
    tide_attrs at;
    memset(&at, 0, sizeof at);
    at.ints[0] = at.ints[1] = (int64_t)1 << 31, at.ints[2] = 4, at.ints[3] = 100;
    at.nints = 4;
    const tide_tensor *xin = &x;
    tide_tensor *yout = &y;
    CHECK(tide_op_infer(TIDE_OP_BROADCAST_TO, &at, 1, &xin, 1, &yout) == TIDE_ERR_SHAPE);
    CHECK(contains(tide_last_error(), "broadcast_to: the result shape [2147483648, 2147483648, 4, 100] has too many elements"));
    CHECK(tide_op_run(TIDE_OP_BROADCAST_TO, &at, 1, &xin, 1, &yout) == TIDE_ERR_SHAPE);
    CHECK(y.data == NULL && y.storage == NULL);
    /* An output the allocator cannot give is an error naming the op and the shape. */
    at.ints[0] = (int64_t)1 << 60, at.nints = 1, at.dtype = TIDE_FLOAT32;
    CHECK(tide_op_run(TIDE_OP_FILL, &at, 0, NULL, 1, &yout) == TIDE_ERR_MEMORY);
    CHECK(contains(tide_last_error(), "fill: out of memory for the result of shape [1152921504606846976] (float32)"));
    CHECK(y.data == NULL && y.storage == NULL);
    at.ints[0] = (int64_t)1 << 61, at.nints = 1; /* fits int64 as a count, not as float32 bytes */
    CHECK(tide_op_run(TIDE_OP_FILL, &at, 0, NULL, 1, &yout) == TIDE_ERR_SHAPE);
    CHECK(contains(tide_last_error(), "fill: "));
    tide_tensor_release(&x);
  }
}

/* ---- threads: a large elementwise op agrees with a plain loop ------------------------------------ */

static void test_threads(void) {
  const int saved = tide_get_num_threads();
  CHECK(saved >= 1);
  CHECK(tide_set_num_threads(0) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "set_num_threads"));
  CHECK(tide_set_num_threads(-3) == TIDE_ERR_VALUE);
  CHECK(tide_get_num_threads() == saved);

  enum { N = 1 << 20 };
  int64_t dn[] = {N}, dm[] = {1024, 1024};
  tide_tensor a = blank(), b = blank();
  CHECK(tide_tensor_init(&a, TIDE_FLOAT32, 1, dn) == TIDE_OK);
  CHECK(tide_tensor_init(&b, TIDE_FLOAT32, 1, dn) == TIDE_OK);
  float *pa = a.data, *pb = b.data;
  for (int i = 0; i < N; i++) {
    pa[i] = (float)(i % 1000) * 0.25f - 100.0f;
    pb[i] = (float)((i * 7) % 13) + 0.5f;
  }
  /* The transposed view of a as 1024x1024 exercises the strided path. */
  tide_tensor a2 = blank(), at = blank();
  int64_t st[] = {1, 1024}, sc[] = {1024, 1};
  CHECK(tide_tensor_view(&a2, &a, 2, dm, sc, 0) == TIDE_OK);
  CHECK(tide_tensor_view(&at, &a, 2, dm, st, 0) == TIDE_OK);

  static const int counts[] = {1, 2, 4};
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    CHECK(tide_set_num_threads(counts[k]) == TIDE_OK);
    CHECK(tide_get_num_threads() == counts[k]);
    tide_tensor sum = blank(), prod = blank(), tsum = blank(), ex = blank();
    CHECK(tide_op_binary(TIDE_OP_ADD, &sum, &a, &b) == TIDE_OK);
    CHECK(tide_op_binary(TIDE_OP_MUL, &prod, &a, &b) == TIDE_OK);
    CHECK(tide_op_binary(TIDE_OP_ADD, &tsum, &at, &a2) == TIDE_OK);
    CHECK(tide_op_unary(TIDE_OP_EXP, &ex, &b) == TIDE_OK);
    int bad_sum = 0, bad_prod = 0, bad_t = 0, bad_exp = 0;
    for (int i = 0; i < N && sum.data && prod.data; i++) {
      if (((float *)sum.data)[i] != pa[i] + pb[i]) bad_sum++;
      if (((float *)prod.data)[i] != pa[i] * pb[i]) bad_prod++;
      float e = expf(pb[i]), got = ((float *)ex.data)[i];
      if (fabsf(got - e) > 1e-6f * e) bad_exp++;
    }
    for (int i = 0; i < 1024 && tsum.data; i++)
      for (int j = 0; j < 1024; j++)
        if (((float *)tsum.data)[i * 1024 + j] != pa[j * 1024 + i] + pa[i * 1024 + j]) bad_t++;
    CHECK(bad_sum == 0 && bad_prod == 0 && bad_t == 0 && bad_exp == 0);
    CHECK(tsum.dims[0] == 1024 && tsum.dims[1] == 1024);
    tide_tensor_release(&sum);
    tide_tensor_release(&prod);
    tide_tensor_release(&tsum);
    tide_tensor_release(&ex);
  }

  /* Integer division by zero is an error even when one thread of many meets it. */
  tide_tensor ia = blank(), ib = blank(), q = blank();
  CHECK(tide_tensor_init(&ia, TIDE_INT32, 1, dn) == TIDE_OK);
  CHECK(tide_tensor_init(&ib, TIDE_INT32, 1, dn) == TIDE_OK);
  for (int i = 0; i < N; i++) ((int32_t *)ia.data)[i] = i - N / 2, ((int32_t *)ib.data)[i] = 1 + i % 5;
  CHECK(tide_set_num_threads(2) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_FLOORDIV, &q, &ia, &ib) == TIDE_OK);
  int bad_q = 0;
  for (int i = 0; i < N && q.data; i++) {
    int32_t x = i - N / 2, y = 1 + i % 5, e = x / y;
    if (x % y != 0 && x < 0) e--; /* floor, as TF's floordiv */
    if (((int32_t *)q.data)[i] != e) bad_q++;
  }
  CHECK(bad_q == 0);
  tide_tensor_release(&q);
  ((int32_t *)ib.data)[N - 3] = 0;
  CHECK(tide_op_binary(TIDE_OP_FLOORDIV, &q, &ia, &ib) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "floordiv") && contains(tide_last_error(), "division by zero"));
  CHECK(q.data == NULL);
  CHECK(tide_op_binary(TIDE_OP_MOD, &q, &ia, &ib) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "mod") && contains(tide_last_error(), "division by zero"));

  CHECK(tide_set_num_threads(saved) == TIDE_OK);
  tide_tensor *all[] = {&a, &b, &a2, &at, &ia, &ib};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tide_tensor_release(all[i]);
}

/* Small integer division: errors for floordiv and mod (TF on CPU), while div
 * is TF's truediv, which goes through floats and gives infinities. */
static void test_integer_division(void) {
  int64_t d3[] = {3};
  int32_t xv[3] = {7, -7, 0}, yv[3] = {2, 2, 0};
  tide_tensor x, y, out = blank();
  from_i32(&x, 1, d3, xv);
  from_i32(&y, 1, d3, yv);
  CHECK(tide_op_binary(TIDE_OP_FLOORDIV, &out, &x, &y) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "floordiv: integer division by zero"));
  CHECK(tide_op_binary(TIDE_OP_MOD, &out, &x, &y) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "mod"));
  ((int32_t *)y.data)[2] = 3;
  CHECK(tide_op_binary(TIDE_OP_FLOORDIV, &out, &x, &y) == TIDE_OK);
  CHECK(((int32_t *)out.data)[0] == 3 && ((int32_t *)out.data)[1] == -4 && ((int32_t *)out.data)[2] == 0);
  tide_tensor_release(&out);
  CHECK(tide_op_binary(TIDE_OP_MOD, &out, &x, &y) == TIDE_OK);
  CHECK(((int32_t *)out.data)[0] == 1 && ((int32_t *)out.data)[1] == 1);
  tide_tensor_release(&out);
  ((int32_t *)y.data)[0] = 0;
  CHECK(tide_op_binary(TIDE_OP_DIV, &out, &x, &y) == TIDE_OK);
  CHECK(out.dt == TIDE_FLOAT64);
  CHECK(isinf(((double *)out.data)[0]) && ((double *)out.data)[0] > 0);
  CHECK(((double *)out.data)[1] == -3.5);
  tide_tensor_release(&out);
  tide_tensor_release(&x);
  tide_tensor_release(&y);

  /* int64 and int8 too. */
  tide_tensor a = blank(), b = blank();
  CHECK(tide_tensor_init(&a, TIDE_INT64, 1, d3) == TIDE_OK);
  CHECK(tide_tensor_init(&b, TIDE_INT64, 1, d3) == TIDE_OK);
  for (int i = 0; i < 3; i++) ((int64_t *)a.data)[i] = 10, ((int64_t *)b.data)[i] = i;
  CHECK(tide_op_binary(TIDE_OP_FLOORDIV, &out, &a, &b) == TIDE_ERR_VALUE);
  tide_tensor_release(&a);
  tide_tensor_release(&b);
  CHECK(tide_tensor_init(&a, TIDE_INT8, 1, d3) == TIDE_OK);
  CHECK(tide_tensor_init(&b, TIDE_INT8, 1, d3) == TIDE_OK);
  memset(a.data, 5, 3);
  memset(b.data, 0, 3);
  CHECK(tide_op_binary(TIDE_OP_MOD, &out, &a, &b) == TIDE_ERR_VALUE);
  tide_tensor_release(&a);
  tide_tensor_release(&b);

  /* uint8 by 255: (T)-1 is 255 there, not minus one. */
  CHECK(tide_tensor_init(&a, TIDE_UINT8, 1, d3) == TIDE_OK);
  CHECK(tide_tensor_init(&b, TIDE_UINT8, 1, d3) == TIDE_OK);
  uint8_t *ua = a.data, *ub = b.data;
  ua[0] = 200, ua[1] = 254, ua[2] = 255;
  memset(ub, 255, 3);
  CHECK(tide_op_binary(TIDE_OP_FLOORDIV, &out, &a, &b) == TIDE_OK);
  CHECK(((uint8_t *)out.data)[0] == 0 && ((uint8_t *)out.data)[1] == 0 && ((uint8_t *)out.data)[2] == 1);
  tide_tensor_release(&out);
  CHECK(tide_op_binary(TIDE_OP_MOD, &out, &a, &b) == TIDE_OK);
  CHECK(((uint8_t *)out.data)[0] == 200 && ((uint8_t *)out.data)[1] == 254 && ((uint8_t *)out.data)[2] == 0);
  tide_tensor_release(&out);
  tide_tensor_release(&a);
  tide_tensor_release(&b);
  /* int8: the most negative value by -1 wraps instead of trapping. */
  CHECK(tide_tensor_init(&a, TIDE_INT8, 1, d3) == TIDE_OK);
  CHECK(tide_tensor_init(&b, TIDE_INT8, 1, d3) == TIDE_OK);
  int8_t *sa = a.data, *sb = b.data;
  sa[0] = -128, sa[1] = 7, sa[2] = -7;
  memset(sb, 0xff, 3); /* -1 */
  CHECK(tide_op_binary(TIDE_OP_FLOORDIV, &out, &a, &b) == TIDE_OK);
  CHECK(((int8_t *)out.data)[0] == -128 && ((int8_t *)out.data)[1] == -7 && ((int8_t *)out.data)[2] == 7);
  tide_tensor_release(&out);
  tide_tensor_release(&a);
  tide_tensor_release(&b);
}

/* A float16 op computes through float32 and rounds once. */
static void test_half_op(void) {
  int64_t d3[] = {3};
  tide_tensor a = blank(), b = blank(), out = blank();
  CHECK(tide_tensor_init(&a, TIDE_FLOAT16, 1, d3) == TIDE_OK);
  CHECK(tide_tensor_init(&b, TIDE_FLOAT16, 1, d3) == TIDE_OK);
  uint16_t *pa = a.data, *pb = b.data;
  pa[0] = tide_float_to_half(1.0f), pb[0] = tide_float_to_half(ldexpf(1, -11)); /* 1 + half an ulp */
  pa[1] = tide_float_to_half(60000.0f), pb[1] = tide_float_to_half(10000.0f);   /* overflows */
  pa[2] = tide_float_to_half(1.5f), pb[2] = tide_float_to_half(-0.25f);
  CHECK(tide_op_binary(TIDE_OP_ADD, &out, &a, &b) == TIDE_OK);
  CHECK(out.dt == TIDE_FLOAT16);
  const uint16_t *po = out.data;
  CHECK(po[0] == 0x3c00); /* ties to even */
  CHECK(po[1] == 0x7c00); /* inf */
  CHECK(tide_half_to_float(po[2]) == 1.25f);
  tide_tensor_release(&out);
  tide_tensor_release(&a);
  tide_tensor_release(&b);
}

int main(void) {
  test_errors();
  test_registry();
  test_op_errors();
  test_threads();
  test_integer_division();
  test_half_op();
  /* Everything made here was given back. */
  CHECK(tide_memory_stats_get()->current == 0);
  return CHECK_SUMMARY("ops");
}
