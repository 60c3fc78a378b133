/* tests/c/test_tensor.c — tensor headers through the public C API: init (inline
 * or heap), promote, share, release, wrapped memory, views, contiguity, copy_into. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util.h"

/* ---- tensors: init, promote, share, release ------------------------------------------- */

static void test_tensor_init(void) {
  const tide_memory_stats *s = tide_memory_stats_get();
  int64_t cur0 = s->current;

  /* 6 float32 = 24 bytes: inline, no storage, data inside the header. */
  int64_t small[] = {2, 3};
  tide_tensor t = blank();
  CHECK(tide_tensor_init(&t, TIDE_FLOAT32, 2, small) == TIDE_OK);
  CHECK((t.flags & TIDE_TENSOR_INLINE) != 0);
  CHECK(t.storage == NULL);
  CHECK(t.data == (void *)t.inline_data.bytes);
  CHECK(t.ndim == 2 && t.dims[0] == 2 && t.dims[1] == 3 && t.nelem == 6);
  CHECK(t.strides[0] == 3 && t.strides[1] == 1);
  CHECK(t.dt == TIDE_FLOAT32 && t.dev == TIDE_CPU);
  CHECK(tide_tensor_is_contiguous(&t));
  CHECK(tide_tensor_storage_refs(&t) == 0 && tide_tensor_storage_bytes(&t) == 0);
  CHECK(s->current == cur0); /* nothing allocated */
  tide_tensor_release(&t);

  /* Exactly TIDE_INLINE_BYTES is still inline; one element more is not. */
  int64_t edge[] = {TIDE_INLINE_BYTES / 4};
  t = blank();
  CHECK(tide_tensor_init(&t, TIDE_FLOAT32, 1, edge) == TIDE_OK);
  CHECK((t.flags & TIDE_TENSOR_INLINE) != 0);
  tide_tensor_release(&t);
  int64_t over[] = {TIDE_INLINE_BYTES / 4 + 1};
  t = blank();
  CHECK(tide_tensor_init(&t, TIDE_FLOAT32, 1, over) == TIDE_OK);
  CHECK((t.flags & TIDE_TENSOR_INLINE) == 0);
  CHECK(t.storage != NULL);
  CHECK(tide_tensor_storage_refs(&t) == 1);
  CHECK(tide_tensor_storage_bytes(&t) == (TIDE_INLINE_BYTES / 4 + 1) * 4);
  CHECK(s->current > cur0);
  tide_tensor_release(&t);
  CHECK(s->current == cur0);

  /* A scalar (ndim 0, dims NULL) has one element. */
  t = blank();
  CHECK(tide_tensor_init(&t, TIDE_FLOAT64, 0, NULL) == TIDE_OK);
  CHECK(t.nelem == 1 && t.ndim == 0 && (t.flags & TIDE_TENSOR_INLINE));
  *(double *)t.data = 2.5;
  tide_tensor_release(&t);

  /* Zero-size tensors are fine. */
  int64_t empty[] = {0, 5};
  t = blank();
  CHECK(tide_tensor_init(&t, TIDE_INT32, 2, empty) == TIDE_OK);
  CHECK(t.nelem == 0);
  CHECK(tide_tensor_is_contiguous(&t));
  tide_tensor_release(&t);

  /* init_heap never goes inline. */
  t = blank();
  CHECK(tide_tensor_init_heap(&t, TIDE_FLOAT32, 2, small) == TIDE_OK);
  CHECK((t.flags & TIDE_TENSOR_INLINE) == 0 && t.storage != NULL);
  CHECK(tide_tensor_storage_bytes(&t) == 24);
  tide_tensor_release(&t);

  /* Bad requests return a status and a message; nothing is allocated. */
  t = blank();
  CHECK(tide_tensor_init(&t, 99, 1, small) == TIDE_ERR_DTYPE);
  CHECK(contains(tide_last_error(), "dtype"));
  CHECK(tide_tensor_init(&t, -1, 1, small) == TIDE_ERR_DTYPE);
  int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(tide_tensor_init(&t, TIDE_FLOAT32, 9, nine) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "rank"));
  CHECK(tide_tensor_init(&t, TIDE_FLOAT32, -1, small) == TIDE_ERR_SHAPE);
  int64_t negative[] = {2, -3};
  CHECK(tide_tensor_init(&t, TIDE_FLOAT32, 2, negative) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "negative"));
  int64_t huge[] = {INT64_MAX / 2, 4};
  CHECK(tide_tensor_init(&t, TIDE_FLOAT32, 2, huge) == TIDE_ERR_SHAPE);
  int64_t too_many_bytes[] = {INT64_MAX / 4};
  CHECK(tide_tensor_init(&t, TIDE_FLOAT64, 1, too_many_bytes) == TIDE_ERR_SHAPE);
  CHECK(s->current == cur0);
}

static void test_promote_share_release(void) {
  const tide_memory_stats *s = tide_memory_stats_get();
  int64_t cur0 = s->current;
  int64_t dims[] = {4};

  /* promote: inline data moves to a storage, values kept. */
  tide_tensor t;
  iota_f32(&t, 1, dims, false);
  CHECK((t.flags & TIDE_TENSOR_INLINE) != 0);
  CHECK(tide_tensor_promote(&t) == TIDE_OK);
  CHECK((t.flags & TIDE_TENSOR_INLINE) == 0 && t.storage != NULL);
  CHECK(t.data != (void *)t.inline_data.bytes);
  CHECK(tide_tensor_storage_refs(&t) == 1);
  CHECK(((float *)t.data)[3] == 3.0f);
  void *data = t.data;
  CHECK(tide_tensor_promote(&t) == TIDE_OK); /* already a storage: unchanged */
  CHECK(t.data == data);

  /* share: another reference to the same storage. */
  tide_tensor u = blank();
  CHECK(tide_tensor_share(&u, &t) == TIDE_OK);
  CHECK(u.data == t.data && u.storage == t.storage);
  CHECK(tide_tensor_storage_refs(&t) == 2);
  ((float *)u.data)[0] = 42.0f;
  CHECK(((float *)t.data)[0] == 42.0f); /* one buffer */
  CHECK(tide_tensor_share(&t, &t) == TIDE_OK); /* sharing with itself changes nothing */
  CHECK(tide_tensor_storage_refs(&t) == 2);
  tide_tensor_release(&t);
  CHECK(t.data == NULL && t.storage == NULL && t.nelem == 0);
  CHECK(tide_tensor_storage_refs(&u) == 1);
  CHECK(((float *)u.data)[0] == 42.0f); /* still alive through u */
  tide_tensor_release(&t);               /* twice is safe */
  tide_tensor_release(NULL);             /* and NULL too */
  tide_tensor_release(&u);
  tide_tensor_release(&u);
  CHECK(s->current == cur0);

  /* Sharing an inline tensor copies the bytes into the new header. */
  tide_tensor a, b = blank();
  iota_f32(&a, 1, dims, false);
  CHECK(tide_tensor_share(&b, &a) == TIDE_OK);
  CHECK((b.flags & TIDE_TENSOR_INLINE) != 0);
  CHECK(b.data == (void *)b.inline_data.bytes); /* points into itself, not into a */
  CHECK(((float *)b.data)[2] == 2.0f);
  ((float *)b.data)[2] = -1.0f;
  CHECK(((float *)a.data)[2] == 2.0f);
  tide_tensor_release(&a);
  tide_tensor_release(&b);

  /* tide_tensor_new / tide_tensor_free: heap headers for C users. */
  int64_t d2[] = {2, 2};
  tide_tensor *h = tide_tensor_new(TIDE_INT64, 2, d2);
  CHECK(h != NULL);
  if (h) {
    CHECK(h->storage != NULL && h->nelem == 4 && h->dt == TIDE_INT64);
    ((int64_t *)h->data)[3] = 7;
    CHECK(s->current > cur0);
  }
  tide_tensor_free(h);
  tide_tensor_free(NULL);
  CHECK(s->current == cur0);
  CHECK(tide_tensor_new(TIDE_NUM_DTYPES, 2, d2) == NULL);
  CHECK(tide_last_status() == TIDE_ERR_DTYPE);
}

/* ---- wrapped memory ----------------------------------------------------------------- */

static int free_calls;
static void *free_ctx_seen, *free_data_seen;

static void count_free(void *ctx, void *data) {
  free_calls++;
  free_ctx_seen = ctx;
  free_data_seen = data;
}

static void test_wrap(void) {
  float buffer[6] = {0, 1, 2, 3, 4, 5};
  int64_t dims[] = {2, 3};
  int ctx_value = 0;
  free_calls = 0;

  tide_tensor w = blank();
  CHECK(tide_tensor_wrap(&w, buffer, TIDE_FLOAT32, 2, dims, NULL, count_free, &ctx_value) == TIDE_OK);
  CHECK(w.data == buffer && w.storage != NULL && (w.flags & TIDE_TENSOR_INLINE) == 0);
  CHECK(w.strides[0] == 3 && w.strides[1] == 1);
  CHECK(at2(&w, 1, 2) == 5.0f);

  /* A view and a shared reference keep the memory alive; free_fn runs once, after the last. */
  int64_t vd[] = {3}, vs[] = {1};
  tide_tensor v = blank(), s = blank();
  CHECK(tide_tensor_view(&v, &w, 1, vd, vs, 3) == TIDE_OK); /* row 1 */
  CHECK(((float *)v.data)[0] == 3.0f);
  CHECK(tide_tensor_share(&s, &w) == TIDE_OK);
  CHECK(tide_tensor_storage_refs(&w) == 3);
  tide_tensor_release(&w);
  CHECK(free_calls == 0);
  tide_tensor_release(&s);
  CHECK(free_calls == 0);
  CHECK(((float *)v.data)[2] == 5.0f);
  tide_tensor_release(&v);
  CHECK(free_calls == 1);
  CHECK(free_ctx_seen == &ctx_value && free_data_seen == buffer);
  tide_tensor_release(&v);
  CHECK(free_calls == 1);

  /* free_fn may be NULL. */
  w = blank();
  CHECK(tide_tensor_wrap(&w, buffer, TIDE_FLOAT32, 2, dims, NULL, NULL, NULL) == TIDE_OK);
  tide_tensor_release(&w);

  /* Strided wrap (a transposed 3x2 view of the 2x3 buffer); views are checked against it. */
  int64_t tdims[] = {3, 2}, tstrides[] = {1, 3};
  w = blank();
  CHECK(tide_tensor_wrap(&w, buffer, TIDE_FLOAT32, 2, tdims, tstrides, count_free, NULL) == TIDE_OK);
  CHECK(!tide_tensor_is_contiguous(&w));
  CHECK(at2(&w, 2, 1) == 5.0f && at2(&w, 0, 1) == 3.0f);
  int64_t all[] = {6}, one[] = {1};
  v = blank();
  CHECK(tide_tensor_view(&v, &w, 1, all, one, 0) == TIDE_OK);
  tide_tensor_release(&v);
  CHECK(tide_tensor_view(&v, &w, 1, all, one, 1) == TIDE_ERR_INDEX);
  tide_tensor_release(&w);
  CHECK(free_calls == 2);

  /* Reversed (negative) strides: data points at the first element, the storage spans all. */
  int64_t rd[] = {6}, rs[] = {-1};
  w = blank();
  CHECK(tide_tensor_wrap(&w, buffer + 5, TIDE_FLOAT32, 1, rd, rs, NULL, NULL) == TIDE_OK);
  CHECK(((float *)w.data)[0] == 5.0f);
  v = blank();
  CHECK(tide_tensor_view(&v, &w, 1, all, one, -5) == TIDE_OK); /* forwards over the buffer */
  CHECK(((float *)v.data)[0] == 0.0f && ((float *)v.data)[5] == 5.0f);
  tide_tensor_release(&v);
  CHECK(tide_tensor_view(&v, &w, 1, all, one, -6) == TIDE_ERR_INDEX);
  tide_tensor_release(&w);

  /* Bad wraps. */
  w = blank();
  CHECK(tide_tensor_wrap(&w, NULL, TIDE_FLOAT32, 2, dims, NULL, NULL, NULL) != TIDE_OK);
  CHECK(contains(tide_last_error(), "NULL"));
  CHECK(tide_tensor_wrap(&w, buffer, 42, 2, dims, NULL, NULL, NULL) == TIDE_ERR_DTYPE);
  int64_t neg[] = {-1};
  CHECK(tide_tensor_wrap(&w, buffer, TIDE_FLOAT32, 1, neg, NULL, NULL, NULL) == TIDE_ERR_SHAPE);
  int64_t zero[] = {0};
  CHECK(tide_tensor_wrap(&w, NULL, TIDE_FLOAT32, 1, zero, NULL, NULL, NULL) == TIDE_OK); /* empty: no data needed */
  tide_tensor_release(&w);
  /* Strides whose reach overflows int64 (or its bytes) are refused, never wrapped
   * into a small extent that later views would be checked against. */
  int64_t two[] = {2, 2}, huge_strides[] = {(int64_t)1 << 62, 1}, byte_wrap[] = {(int64_t)1 << 61, 1};
  w = blank();
  CHECK(tide_tensor_wrap(&w, buffer, TIDE_FLOAT32, 2, two, huge_strides, NULL, NULL) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "wrap: the strides reach"));
  CHECK(tide_tensor_wrap(&w, buffer, TIDE_FLOAT32, 2, two, byte_wrap, NULL, NULL) == TIDE_ERR_SHAPE);
  int64_t three[] = {3, 3}, mixed[] = {INT64_MAX / 2, INT64_MIN / 2};
  CHECK(tide_tensor_wrap(&w, buffer, TIDE_FLOAT32, 2, three, mixed, NULL, NULL) == TIDE_ERR_SHAPE);
  CHECK(w.storage == NULL);
}

/* Wrapped bool memory is used as it is: every reader takes a nonzero byte as true. */
static void test_wrap_bool_bytes(void) {
  uint8_t bytes[4] = {0, 2, 255, 1};
  int64_t dims[] = {4};
  tide_tensor w = blank();
  CHECK(tide_tensor_wrap(&w, bytes, TIDE_BOOL, 1, dims, NULL, NULL, NULL) == TIDE_OK);
  const tide_tensor *in[] = {&w};
  /* casts give 1 for true, in every target dtype */
  static const int targets[] = {TIDE_INT32, TIDE_UINT8, TIDE_FLOAT32, TIDE_FLOAT64, TIDE_INT64, TIDE_BOOL,
                                TIDE_FLOAT16};
  for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
    tide_attrs a;
    memset(&a, 0, sizeof a);
    a.dtype = targets[k];
    tide_tensor c = blank();
    tide_tensor *out[] = {&c};
    CHECK(tide_op_run(TIDE_OP_CAST, &a, 1, in, 1, out) == TIDE_OK);
    for (int64_t i = 0; i < 4; i++) CHECK(tide_read_number(c.data, c.dt, i) == (i == 0 ? 0 : 1));
    tide_tensor_release(&c);
  }
  /* all and any, logical_not, equal against a true tensor */
  tide_tensor r = blank();
  tide_tensor *out[] = {&r};
  CHECK(tide_op_run(TIDE_OP_ANY, NULL, 1, in, 1, out) == TIDE_OK);
  CHECK(*(const uint8_t *)r.data == 1);
  tide_tensor_release(&r);
  CHECK(tide_op_run(TIDE_OP_ALL, NULL, 1, in, 1, out) == TIDE_OK);
  CHECK(*(const uint8_t *)r.data == 0);
  tide_tensor_release(&r);
  CHECK(tide_op_run(TIDE_OP_LOGICAL_NOT, NULL, 1, in, 1, out) == TIDE_OK);
  CHECK(memcmp(r.data, (const uint8_t[]){1, 0, 0, 0}, 4) == 0);
  tide_tensor_release(&r);
  uint8_t ones[4] = {1, 1, 1, 1};
  tide_tensor t = blank();
  CHECK(tide_tensor_wrap(&t, ones, TIDE_BOOL, 1, dims, NULL, NULL, NULL) == TIDE_OK);
  const tide_tensor *pair[] = {&w, &t};
  CHECK(tide_op_run(TIDE_OP_EQUAL, NULL, 2, pair, 1, out) == TIDE_OK);
  CHECK(memcmp(r.data, (const uint8_t[]){0, 1, 1, 1}, 4) == 0);
  tide_tensor_release(&r);
  tide_tensor_release(&t);
  tide_tensor_release(&w);
}

static void test_release_tokens(void) {
  while (tide_released_token_pop() >= 0) {
  } /* start empty */
  CHECK(tide_released_token_pop() == -1);
  float buffer[4] = {1, 2, 3, 4};
  int64_t dims[] = {4};
  tide_tensor a = blank(), b = blank(), v = blank();
  CHECK(tide_tensor_wrap(&a, buffer, TIDE_FLOAT32, 1, dims, NULL, tide_release_token, (void *)(intptr_t)7) == TIDE_OK);
  CHECK(tide_tensor_wrap(&b, buffer, TIDE_FLOAT32, 1, dims, NULL, tide_release_token, (void *)(intptr_t)9) == TIDE_OK);
  int64_t vd[] = {2}, vs[] = {1};
  CHECK(tide_tensor_view(&v, &a, 1, vd, vs, 2) == TIDE_OK);
  tide_tensor_release(&a);
  CHECK(tide_released_token_pop() == -1); /* the view still holds a's storage */
  tide_tensor_release(&b);
  CHECK(tide_released_token_pop() == 9);
  CHECK(tide_released_token_pop() == -1);
  tide_tensor_release(&v);
  CHECK(tide_released_token_pop() == 7);
  CHECK(tide_released_token_pop() == -1);
  /* Many tokens queue up (the queue grows) and all come back. */
  int64_t sum = 0;
  for (int i = 1; i <= 500; i++) {
    tide_tensor t = blank();
    CHECK(tide_tensor_wrap(&t, buffer, TIDE_FLOAT32, 1, dims, NULL, tide_release_token, (void *)(intptr_t)i) == TIDE_OK);
    tide_tensor_release(&t);
  }
  int n = 0;
  for (int64_t tok; (tok = tide_released_token_pop()) >= 0; n++) sum += tok;
  CHECK(n == 500 && sum == 500 * 501 / 2);
}

/* ---- views ---------------------------------------------------------------------------- */

static void test_views(void) {
  int64_t dims[] = {4, 4};
  tide_tensor base;
  iota_f32(&base, 2, dims, true); /* 16 floats, 0..15 */
  tide_tensor v = blank();

  int64_t d2[] = {2, 2}, s2[] = {4, 1};
  CHECK(tide_tensor_view(&v, &base, 2, d2, s2, 5) == TIDE_OK); /* rows 1-2, cols 1-2 */
  CHECK(at2(&v, 0, 0) == 5.0f && at2(&v, 1, 1) == 10.0f);
  CHECK(v.nelem == 4 && v.storage == base.storage && tide_tensor_storage_refs(&base) == 2);
  CHECK(!tide_tensor_is_contiguous(&v));
  /* A view of a view is checked against the storage, not against the view. */
  tide_tensor vv = blank();
  int64_t d1[] = {16}, s1[] = {1};
  CHECK(tide_tensor_view(&vv, &v, 1, d1, s1, -5) == TIDE_OK);
  CHECK(((float *)vv.data)[15] == 15.0f);
  tide_tensor_release(&vv);
  CHECK(tide_tensor_view(&vv, &v, 1, d1, s1, -4) == TIDE_ERR_INDEX);
  tide_tensor_release(&v);

  /* Transposed, reversed, broadcast (stride 0), the last element alone. */
  int64_t d4[] = {4, 4}, st[] = {1, 4};
  CHECK(tide_tensor_view(&v, &base, 2, d4, st, 0) == TIDE_OK);
  CHECK(at2(&v, 1, 2) == 9.0f && !tide_tensor_is_contiguous(&v));
  tide_tensor_release(&v);
  int64_t rd[] = {4}, rs[] = {-1};
  CHECK(tide_tensor_view(&v, &base, 1, rd, rs, 3) == TIDE_OK);
  CHECK(((float *)v.data)[0] == 3.0f && ((float *)v.data)[-3] == 0.0f);
  tide_tensor_release(&v);
  int64_t bd[] = {3, 4}, bs[] = {0, 1};
  CHECK(tide_tensor_view(&v, &base, 2, bd, bs, 12) == TIDE_OK);
  CHECK(at2(&v, 2, 3) == 15.0f && !tide_tensor_is_contiguous(&v));
  tide_tensor_release(&v);
  int64_t one[] = {1};
  CHECK(tide_tensor_view(&v, &base, 1, one, s1, 15) == TIDE_OK);
  CHECK(((float *)v.data)[0] == 15.0f && tide_tensor_is_contiguous(&v));
  tide_tensor_release(&v);

  /* Reaching outside the storage is an error (TIDE_ERR_INDEX), never a crash. */
  CHECK(tide_tensor_view(&v, &base, 1, one, s1, 16) == TIDE_ERR_INDEX);
  CHECK(contains(tide_last_error(), "outside"));
  CHECK(tide_tensor_view(&v, &base, 1, one, s1, -1) == TIDE_ERR_INDEX);
  CHECK(tide_tensor_view(&v, &base, 2, d2, s2, 11) == TIDE_ERR_INDEX);   /* last row runs over */
  int64_t big_stride[] = {5, 1};
  CHECK(tide_tensor_view(&v, &base, 2, d4, big_stride, 0) == TIDE_ERR_INDEX);
  CHECK(tide_tensor_view(&v, &base, 1, rd, rs, 2) == TIDE_ERR_INDEX);    /* reversed, runs before 0 */
  int64_t d17[] = {17};
  CHECK(tide_tensor_view(&v, &base, 1, d17, s1, 0) == TIDE_ERR_INDEX);
  CHECK(tide_tensor_view(&v, &base, 1, one, s1, INT64_MAX / 8) == TIDE_ERR_INDEX);
  int64_t neg[] = {-2};
  CHECK(tide_tensor_view(&v, &base, 1, neg, s1, 0) == TIDE_ERR_SHAPE);
  int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, nines[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(tide_tensor_view(&v, &base, 9, nine, nines, 0) == TIDE_ERR_SHAPE);
  /* Sizes and reaches that overflow int64 are errors, never wrapped numbers. */
  int64_t huge_dims[] = {(int64_t)1 << 31, (int64_t)1 << 31, 4}, zero_strides[] = {0, 0, 0};
  CHECK(tide_tensor_view(&v, &base, 3, huge_dims, zero_strides, 0) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "too many elements"));
  int64_t two[] = {2}, far[] = {INT64_MAX / 2};
  CHECK(tide_tensor_view(&v, &base, 1, two, far, 0) == TIDE_ERR_INDEX);
  int64_t wrap[] = {(int64_t)1 << 62};
  CHECK(tide_tensor_view(&v, &base, 1, two, wrap, 0) == TIDE_ERR_INDEX); /* 2^62 elements * 4 bytes wraps to 0 */
  CHECK(tide_tensor_view(&v, &base, 1, one, s1, INT64_MAX) == TIDE_ERR_INDEX);
  CHECK(tide_tensor_view(&v, &base, 1, one, s1, INT64_MIN) == TIDE_ERR_INDEX);
  CHECK(tide_tensor_storage_refs(&base) == 1); /* failed views took no reference */
  /* An empty view reaches nothing. */
  int64_t zero[] = {0};
  CHECK(tide_tensor_view(&v, &base, 1, zero, s1, 0) == TIDE_OK);
  CHECK(v.nelem == 0);
  tide_tensor_release(&v);

  /* An inline or released source is refused. */
  int64_t small[] = {2};
  tide_tensor in;
  iota_f32(&in, 1, small, false);
  CHECK(tide_tensor_view(&v, &in, 1, small, s1, 0) != TIDE_OK);
  CHECK(contains(tide_last_error(), "promote"));
  CHECK(tide_tensor_promote(&in) == TIDE_OK);
  CHECK(tide_tensor_view(&v, &in, 1, small, s1, 0) == TIDE_OK);
  tide_tensor_release(&v);
  tide_tensor_release(&in);
  CHECK(tide_tensor_view(&v, &in, 1, small, s1, 0) != TIDE_OK);
  tide_tensor_release(&base);
}

static void test_is_contiguous(void) {
  tide_tensor t = blank();
  int64_t d[] = {2, 1, 3};
  t.ndim = 3;
  t.dims[0] = 2, t.dims[1] = 1, t.dims[2] = 3;
  t.strides[0] = 3, t.strides[1] = 99, t.strides[2] = 1; /* a size-1 dim's stride does not matter */
  t.nelem = 6;
  CHECK(tide_tensor_is_contiguous(&t));
  t.strides[0] = 4; /* a gap between rows */
  CHECK(!tide_tensor_is_contiguous(&t));
  t.dims[0] = 0, t.nelem = 0; /* empty: trivially contiguous */
  CHECK(tide_tensor_is_contiguous(&t));
  t.ndim = 0, t.nelem = 1; /* scalar */
  CHECK(tide_tensor_is_contiguous(&t));
  (void)d;
}

/* ---- copy_into -------------------------------------------------------------------------- */

static void test_copy_into(void) {
  int64_t d23[] = {2, 3}, d3[] = {3}, d21[] = {2, 1};
  tide_tensor dst = blank();
  CHECK(tide_tensor_init(&dst, TIDE_FLOAT32, 2, d23) == TIDE_OK);

  /* Broadcasting a row, a column and a scalar into [2, 3]. */
  tide_tensor row;
  iota_f32(&row, 1, d3, false); /* 0 1 2 */
  CHECK(tide_tensor_copy_into(&dst, &row) == TIDE_OK);
  CHECK(at2(&dst, 0, 2) == 2.0f && at2(&dst, 1, 0) == 0.0f && at2(&dst, 1, 2) == 2.0f);
  tide_tensor col;
  iota_f32(&col, 2, d21, false); /* 0 ; 1 */
  CHECK(tide_tensor_copy_into(&dst, &col) == TIDE_OK);
  CHECK(at2(&dst, 0, 2) == 0.0f && at2(&dst, 1, 0) == 1.0f && at2(&dst, 1, 2) == 1.0f);
  tide_tensor scalar = blank();
  CHECK(tide_tensor_init(&scalar, TIDE_FLOAT32, 0, NULL) == TIDE_OK);
  *(float *)scalar.data = 7.5f;
  CHECK(tide_tensor_copy_into(&dst, &scalar) == TIDE_OK);
  for (int i = 0; i < 6; i++) CHECK(((float *)dst.data)[i] == 7.5f);

  /* Shapes that do not broadcast, and dtypes that differ, are errors that say so. */
  int64_t d4[] = {4};
  tide_tensor four;
  iota_f32(&four, 1, d4, false);
  CHECK(tide_tensor_copy_into(&dst, &four) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "[2, 3]") && contains(tide_last_error(), "[4]"));
  int32_t iv[3] = {1, 2, 3};
  tide_tensor ints;
  from_i32(&ints, 1, d3, iv);
  CHECK(tide_tensor_copy_into(&dst, &ints) == TIDE_ERR_DTYPE);
  CHECK(contains(tide_last_error(), "float32") && contains(tide_last_error(), "int32"));
  CHECK(tide_tensor_copy_into(NULL, &ints) != TIDE_OK);
  CHECK(tide_tensor_copy_into(&dst, NULL) != TIDE_OK);
  /* A broadcast (stride 0) destination is refused: threads would race on its elements. */
  tide_tensor bview = blank();
  int64_t bdims[] = {2, 3}, bstr[] = {0, 1};
  float bbuf[3] = {0, 0, 0};
  CHECK(tide_tensor_wrap(&bview, bbuf, TIDE_FLOAT32, 2, bdims, bstr, NULL, NULL) == TIDE_OK);
  CHECK(tide_tensor_copy_into(&bview, &ints) == TIDE_ERR_DTYPE);
  tide_tensor fl;
  iota_f32(&fl, 2, bdims, false);
  CHECK(tide_tensor_copy_into(&bview, &fl) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "dimension 0 repeats its elements"));
  tide_tensor_release(&fl);
  tide_tensor_release(&bview);
  CHECK(bbuf[0] == 0 && bbuf[2] == 0);
  CHECK(at2(&dst, 0, 0) == 7.5f); /* untouched by the failures */
  /* The destination does not broadcast back into the source's shape. */
  tide_tensor small = blank();
  CHECK(tide_tensor_init(&small, TIDE_FLOAT32, 1, d3) == TIDE_OK);
  CHECK(tide_tensor_copy_into(&small, &dst) == TIDE_ERR_SHAPE);
  tide_tensor_release(&small);

  /* A strided destination: write a 3x3 through a transposed view. */
  int64_t d33[] = {3, 3}, tst[] = {1, 3};
  tide_tensor m, target, tv = blank();
  iota_f32(&m, 2, d33, true);
  iota_f32(&target, 2, d33, true);
  memset(target.data, 0, 9 * sizeof(float));
  CHECK(tide_tensor_view(&tv, &target, 2, d33, tst, 0) == TIDE_OK);
  CHECK(tide_tensor_copy_into(&tv, &m) == TIDE_OK);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) CHECK(at2(&target, i, j) == (float)(j * 3 + i));
  tide_tensor_release(&tv);

  /* Overlapping source and destination (one storage, shifted by 2): the
   * result is as if the source had been copied out first. */
  int64_t d10[] = {10}, d8[] = {8}, s1[] = {1};
  tide_tensor buf, from = blank(), to = blank();
  iota_f32(&buf, 1, d10, true);
  CHECK(tide_tensor_view(&from, &buf, 1, d8, s1, 0) == TIDE_OK);
  CHECK(tide_tensor_view(&to, &buf, 1, d8, s1, 2) == TIDE_OK);
  CHECK(tide_tensor_copy_into(&to, &from) == TIDE_OK);
  static const float shifted_right[10] = {0, 1, 0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(memcmp(buf.data, shifted_right, sizeof shifted_right) == 0);
  for (int i = 0; i < 10; i++) ((float *)buf.data)[i] = (float)i;
  CHECK(tide_tensor_copy_into(&from, &to) == TIDE_OK); /* the other direction */
  static const float shifted_left[10] = {2, 3, 4, 5, 6, 7, 8, 9, 8, 9};
  CHECK(memcmp(buf.data, shifted_left, sizeof shifted_left) == 0);
  /* A reversed copy onto itself. */
  tide_tensor rev = blank();
  int64_t rs[] = {-1};
  for (int i = 0; i < 10; i++) ((float *)buf.data)[i] = (float)i;
  CHECK(tide_tensor_view(&rev, &buf, 1, d10, rs, 9) == TIDE_OK);
  CHECK(tide_tensor_copy_into(&buf, &rev) == TIDE_OK);
  for (int i = 0; i < 10; i++) CHECK(((float *)buf.data)[i] == (float)(9 - i));
  /* A transpose of a square matrix onto itself. */
  tide_tensor mt = blank();
  CHECK(tide_tensor_view(&mt, &m, 2, d33, tst, 0) == TIDE_OK);
  CHECK(tide_tensor_copy_into(&m, &mt) == TIDE_OK);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) CHECK(at2(&m, i, j) == (float)(j * 3 + i));

  tide_tensor *all[] = {&dst, &row, &col, &scalar, &four, &ints, &m, &target, &buf, &from, &to, &rev, &mt};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tide_tensor_release(all[i]);
}

/* ---- the header's layout, which Lua's read-only view must match ------------------------ */

/* The same numbers as tests/spec/binding/header_spec.lua checks on the FFI view
 * (tide/tensor.h declares the two views; a change to one must change both). */
static void test_layout(void) {
  CHECK(offsetof(tide_tensor, data) == 0);
  CHECK(offsetof(tide_tensor, storage) == 8);
  CHECK(offsetof(tide_tensor, dims) == 16);
  CHECK(offsetof(tide_tensor, strides) == 80);
  CHECK(offsetof(tide_tensor, nelem) == 144);
  CHECK(offsetof(tide_tensor, ndim) == 152);
  CHECK(offsetof(tide_tensor, dt) == 156);
  CHECK(offsetof(tide_tensor, dev) == 160);
  CHECK(offsetof(tide_tensor, flags) == 164);
  CHECK(offsetof(tide_tensor, inline_data) == 168);
  CHECK(sizeof(tide_tensor) == 200);
  CHECK(_Alignof(tide_tensor) == 8);
  CHECK(sizeof(((tide_tensor *)0)->inline_data) == TIDE_INLINE_BYTES);
  CHECK(sizeof(((tide_tensor *)0)->dims) == 64);
}

int main(void) {
  test_layout();
  test_tensor_init();
  test_promote_share_release();
  test_wrap();
  test_wrap_bool_bytes();
  test_release_tokens();
  test_views();
  test_is_contiguous();
  test_copy_into();
  /* Everything made here was given back. */
  CHECK(tide_memory_stats_get()->current == 0);
  return CHECK_SUMMARY("tensor");
}
