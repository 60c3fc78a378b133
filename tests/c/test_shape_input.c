/* tests/c/test_shape_input.c — shapes as tensors with their values: the
 * shape and size ops, and ops that read their shape from an input tensor. */
#include "check.h"
#include "util.h"

/* Run op on inputs in (count n) into the blank out; gives the status. */
static tide_status run(int op, const tide_attrs *a, int n, const tide_tensor *const *in, tide_tensor *out) {
  *out = blank();
  return tide_op_run(op, a, n, in, 1, &out);
}

static void test_shape_and_size(void) {
  tide_tensor x, s;
  int64_t dims[3] = {2, 0, 5};
  iota_f32(&x, 3, dims, false);
  const tide_tensor *in[1] = {&x};
  tide_attrs a = {.dtype = TIDE_INT64};
  CHECK(run(TIDE_OP_SHAPE, &a, 1, in, &s) == TIDE_OK);
  CHECK(s.dt == TIDE_INT64 && s.ndim == 1 && s.dims[0] == 3);
  CHECK(((int64_t *)s.data)[0] == 2 && ((int64_t *)s.data)[1] == 0 && ((int64_t *)s.data)[2] == 5);
  tide_tensor_release(&s);
  a.dtype = TIDE_INT32;
  CHECK(run(TIDE_OP_SIZE, &a, 1, in, &s) == TIDE_OK);
  CHECK(s.dt == TIDE_INT32 && s.ndim == 0 && ((int32_t *)s.data)[0] == 0);
  tide_tensor_release(&s);
  tide_tensor_release(&x);
}

static void test_fill_from_tensor(void) {
  tide_tensor shp, o;
  int64_t n = 2;
  from_i32(&shp, 1, &n, (const int32_t[]){3, 4});
  const tide_tensor *in[1] = {&shp};
  tide_attrs a = {.dtype = TIDE_FLOAT32, .scalars = {1.5}};
  CHECK(run(TIDE_OP_FILL, &a, 1, in, &o) == TIDE_OK);
  CHECK(o.ndim == 2 && o.dims[0] == 3 && o.dims[1] == 4 && ((float *)o.data)[11] == 1.5f);
  tide_tensor_release(&o);
  /* a negative value: the op and the values, as numbers */
  ((int32_t *)shp.data)[1] = -4;
  CHECK(run(TIDE_OP_FILL, &a, 1, in, &o) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "fill: the shape tensor holds a negative dimension: [3, -4] (-4 at 1)"));
  /* reshape reads -1 as "the rest" */
  tide_tensor x;
  int64_t xd[1] = {12};
  iota_f32(&x, 1, xd, true);
  const tide_tensor *rin[2] = {&x, &shp};
  ((int32_t *)shp.data)[1] = -1;
  CHECK(run(TIDE_OP_RESHAPE, NULL, 2, rin, &o) == TIDE_OK);
  CHECK(o.ndim == 2 && o.dims[0] == 3 && o.dims[1] == 4 && o.data == x.data); /* a view */
  tide_tensor_release(&o);
  tide_tensor_release(&x);
  tide_tensor_release(&shp);
}

/* attrs ints of the shape's length are what a trace knew of its values: a
 * run keeps them (a dim of -1 takes any value) or fails, naming both. */
static void test_fill_known_dims(void) {
  tide_tensor shp, o;
  int64_t n = 2;
  from_i32(&shp, 1, &n, (const int32_t[]){3, 4});
  const tide_tensor *in[1] = {&shp};
  tide_attrs a = {.dtype = TIDE_FLOAT64, .scalars = {2}, .nints = 2, .ints = {-1, 4}};
  CHECK(run(TIDE_OP_FILL, &a, 1, in, &o) == TIDE_OK);
  CHECK(o.ndim == 2 && o.dims[0] == 3 && o.dims[1] == 4 && ((double *)o.data)[11] == 2);
  tide_tensor_release(&o);
  a.ints[1] = 5;
  CHECK(run(TIDE_OP_FILL, &a, 1, in, &o) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "fill: the shape tensor holds 4 at 1 where the traced graph has 5"));
  /* ints of another length are not about the shape input: ignored, as before */
  a.nints = 1;
  CHECK(run(TIDE_OP_FILL, &a, 1, in, &o) == TIDE_OK);
  CHECK(o.ndim == 2 && o.dims[1] == 4);
  tide_tensor_release(&o);
  tide_tensor_release(&shp);
}

int main(void) {
  test_shape_and_size();
  test_fill_from_tensor();
  test_fill_known_dims();
  return CHECK_SUMMARY("shape_input");
}
