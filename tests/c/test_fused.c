/* tests/c/test_fused.c — fused nodes: the backend-neutral description the
 * fusion pass builds (tide/fused.h) and its text, and the CPU backend's
 * results against the unfused ops (bit for bit, transcendental ops within a
 * few ulp) over special values, broadcasts, strides, tails and dtypes. */
#include "graph_util.h"
#include "tide/fused.h"

static tide_tensor *K1, *K2; /* constants the bodies capture */

/* Bits of two float32 tensors agree (any NaN matches any NaN; -0 is not +0). */
static bool same_bits(const tide_tensor *a, const tide_tensor *b) {
  if (a->dt != TIDE_FLOAT32 || b->dt != TIDE_FLOAT32 || a->nelem != b->nelem) return false;
  for (int64_t i = 0; i < a->nelem; i++) {
    float x = (float)at(a, i), y = (float)at(b, i);
    if ((isnan(x) && isnan(y)) || float_to_bits(x) == float_to_bits(y)) continue;
    fprintf(stderr, "  element %lld: %.9g vs %.9g\n", (long long)i, x, y);
    return false;
  }
  return true;
}

/* Distance in ulps of two finite floats of one sign, or 0 when equal (NaN = NaN). */
static double ulps(float x, float y) {
  if ((isnan(x) && isnan(y)) || x == y) return 0;
  if (isnan(x) || isnan(y) || isinf(x) || isinf(y) || (x < 0) != (y < 0)) return 1e30;
  return fabs((double)float_to_bits(x) - (double)float_to_bits(y));
}

/* Run the unfused and the fused graph of body on ins; every output's bits
 * agree (or, with max_ulp > 0, are within max_ulp). Returns the fused graph. */
static tide_graph *check_fused(body_fn body, int n_in, tide_tensor *const *ins, double max_ulp) {
  tide_graph *plain = build(body, n_in, ins, false, 0), *g = build(body, n_in, ins, false, TIDE_PASS_ALL);
  tide_tensor r0[8], r1[8];
  CHECK(run(plain, n_in, ins, r0) == TIDE_OK);
  CHECK(run(g, n_in, ins, r1) == TIDE_OK);
  for (int k = 0; k < tide_graph_num_outputs(g); k++) {
    if (r0[k].dt != TIDE_FLOAT32) {
      CHECK(same(&r0[k], &r1[k], 0));
    } else if (max_ulp > 0) {
      double worst = 0;
      for (int64_t i = 0; i < r0[k].nelem; i++) {
        double u = ulps((float)at(&r0[k], i), (float)at(&r1[k], i));
        if (u > worst) worst = u;
      }
      if (worst > max_ulp) fprintf(stderr, "  %g ulp apart (at most %g)\n", worst, max_ulp);
      CHECK(worst <= max_ulp);
    } else {
      CHECK(same_bits(&r0[k], &r1[k]));
    }
    tide_tensor_release(&r0[k]);
    tide_tensor_release(&r1[k]);
  }
  tide_graph_free(plain);
  return g;
}

/* ---- the description ------------------------------------------------------------------ */

/* y = x * 2, leaky_relu, gelu (approximate), > w, where, cast to int32; y is also an output. */
static int body_desc(tide_tensor *in, tide_tensor *out) {
  tide_tensor a, b, c, m, w, i;
  tide_tensor k = konst(K1);
  bin(TIDE_OP_MUL, &a, &in[0], &k);
  tide_attrs leaky = {0}, gelu = {0}, cast = {0}, none = {0};
  leaky.scalars[0] = 0.3;
  gelu.flags = TIDE_ATTR_APPROXIMATE;
  cast.dtype = TIDE_INT32;
  const tide_tensor *aa[1] = {&a};
  op_attrs(TIDE_OP_LEAKY_RELU, &leaky, 1, aa, &b);
  const tide_tensor *bb[1] = {&b};
  op_attrs(TIDE_OP_GELU, &gelu, 1, bb, &c);
  bin(TIDE_OP_GREATER, &m, &c, &in[1]);
  const tide_tensor *wi[3] = {&m, &c, &in[1]};
  op_attrs(TIDE_OP_WHERE, &none, 3, wi, &w);
  const tide_tensor *ww[1] = {&w};
  op_attrs(TIDE_OP_CAST, &cast, 1, ww, &i);
  out[0] = i, out[1] = a;
  return 2;
}

static void test_description(void) {
  K1 = scalar(TIDE_FLOAT32, 2);
  int64_t dx[2] = {4, 3}, dw[1] = {3};
  tide_tensor *ins[2] = {filled(TIDE_FLOAT32, 2, dx, -1, 0.3), filled(TIDE_FLOAT32, 1, dw, -0.5, 0.4)};
  tide_graph *g = check_fused(body_desc, 2, ins, 0);
  const tide_fused *f = tide_graph_fused(g, 0);
  CHECK(f != NULL && tide_graph_fused(g, 1) == NULL && tide_graph_fused(g, -1) == NULL);
  if (!f) return;
  CHECK(f->n_inputs == 2 && f->input_dt[0] == TIDE_FLOAT32 && f->input_dt[1] == TIDE_FLOAT32);
  CHECK(f->n_consts == 1 && f->consts[0].dt == TIDE_FLOAT32 && f->consts[0].ndim == 0 && f->consts[0].f == 2);
  CHECK(f->n_steps == 6);
  static const int ops[6] = {TIDE_OP_MUL, TIDE_OP_LEAKY_RELU, TIDE_OP_GELU, TIDE_OP_GREATER, TIDE_OP_WHERE,
                             TIDE_OP_CAST};
  for (int t = 0; t < 6; t++) CHECK(f->steps[t].op == ops[t]);
  const tide_fused_step *s = f->steps;
  CHECK(s[0].n_args == 2 && s[0].args[0].src == TIDE_FUSED_INPUT && s[0].args[0].index == 0 &&
        s[0].args[1].src == TIDE_FUSED_CONST && s[0].args[1].index == 0);
  CHECK(s[1].alpha == 0.3 && s[1].args[0].src == TIDE_FUSED_STEP && s[1].args[0].index == 0);
  CHECK(s[2].flags == TIDE_ATTR_APPROXIMATE && s[2].dt == TIDE_FLOAT32);
  CHECK(s[3].dt == TIDE_BOOL && s[3].arg_dt == TIDE_FLOAT32 && s[3].args[1].src == TIDE_FUSED_INPUT &&
        s[3].args[1].index == 1);
  CHECK(s[4].n_args == 3 && s[4].arg_dt == TIDE_FLOAT32 && s[4].args[0].src == TIDE_FUSED_STEP &&
        s[4].args[0].index == 3 && s[4].args[1].index == 2 && s[4].args[2].src == TIDE_FUSED_INPUT);
  CHECK(s[5].dt == TIDE_INT32 && s[5].arg_dt == TIDE_FLOAT32);
  CHECK(f->n_outputs == 2 && f->outputs[0] == 5 && f->outputs[1] == 0);
  /* The text shows the description, one step a line. */
  const char *text = tide_graph_text(g);
  CHECK(contains(text, "= fused[mul, leaky_relu, gelu, greater, where, cast](%0, %1) : int32[4, 3], float32[4, 3]"));
  CHECK(contains(text, "s0 = mul(%0, 2) : float32 -> %"));
  CHECK(contains(text, "s1 = leaky_relu(s0, alpha=0.3) : float32\n"));
  CHECK(contains(text, "s2 = gelu(s1, approximate) : float32\n"));
  CHECK(contains(text, "s3 = greater(s2, %1) : bool\n"));
  CHECK(contains(text, "s4 = where(s3, s2, %1) : float32\n"));
  CHECK(contains(text, "s5 = cast(s4) : int32 -> %"));
  CHECK(!contains(text, "const()")); /* the 2 lives in the description */
  tide_graph_free(g);
  free_all(3, (tide_tensor *[]){ins[0], ins[1], K1});
}

/* A one-element constant of rank 2 still broadcasts the result to rank 2. */
static int body_rank(tide_tensor *in, tide_tensor *out) {
  tide_tensor a, k = konst(K1);
  bin(TIDE_OP_ADD, &a, &in[0], &k);
  un(TIDE_OP_NEG, &out[0], &a);
  return 1;
}

static void test_const_rank(void) {
  int64_t one[2] = {1, 1}, d3 = 3;
  K1 = filled(TIDE_FLOAT32, 2, one, 0.5, 0);
  tide_tensor *x = filled(TIDE_FLOAT32, 1, &d3, 1, 1);
  tide_graph *g = check_fused(body_rank, 1, &x, 0);
  const tide_fused *f = tide_graph_fused(g, 0);
  CHECK(f && f->n_consts == 1 && f->consts[0].ndim == 2);
  CHECK(contains(tide_graph_text(g), "s0 = add(%0, [[0.5]]) : float32"));
  CHECK(contains(tide_graph_text(g), ": float32[1, 3]"));
  tide_tensor r;
  CHECK(run(g, 1, &x, &r) == TIDE_OK);
  CHECK(r.ndim == 2 && r.dims[0] == 1 && r.dims[1] == 3 && at(&r, 2) == -(at(x, 2) + 0.5));
  tide_tensor_release(&r);
  tide_graph_free(g);
  free_all(2, (tide_tensor *[]){K1, x});
}

/* ---- the float32 engine, bit for bit ----------------------------------------------------- */

/* Special values and ordinary ones: NaN, infinities, signed zeros, tiny and huge. */
static tide_tensor *specials(int64_t n, double scale) {
  tide_tensor *t = tide_tensor_new(TIDE_FLOAT32, 1, &n);
  float *p = t->data;
  static const float sp[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -1e-40f, 3e38f, -3e38f, 1.0f, -1.0f,
                             0.5f, -0.5f, 2.5f, -2.5f, 1.5f};
  for (int64_t i = 0; i < n; i++)
    p[i] = i < (int64_t)(sizeof sp / sizeof sp[0]) ? sp[i] : (float)(scale * sin((double)i * 0.37) * (1 + i % 7));
  return t;
}

/* Exact ops, with the running value on either side of each binary op. */
static int body_exact(tide_tensor *in, tide_tensor *out) {
  tide_tensor t[40];
  int n = 0;
  const tide_tensor *x = &in[0], *y = &in[1];
#define B(op, a, b) (bin(op, &t[n], a, b), &t[n++])
#define U(op, a) (un(op, &t[n], a), &t[n++])
  const tide_tensor *v = B(TIDE_OP_MUL, x, y);
  v = B(TIDE_OP_SUB, y, v);          /* the running value on the right: reversed form */
  v = B(TIDE_OP_MAXIMUM, y, v);
  v = B(TIDE_OP_MINIMUM, v, x);
  v = B(TIDE_OP_DIV, x, v);
  v = B(TIDE_OP_ADD, v, y);
  v = U(TIDE_OP_SIGN, v);
  v = B(TIDE_OP_MUL, v, x);
  v = U(TIDE_OP_RELU, v);
  v = B(TIDE_OP_FLOORDIV, y, v);
  v = B(TIDE_OP_MINIMUM, y, v);
  v = U(TIDE_OP_ABS, v);
  v = U(TIDE_OP_SQRT, v);
  v = U(TIDE_OP_NEG, v);
  v = U(TIDE_OP_ROUND, v);
  v = B(TIDE_OP_ADD, v, x);
  v = U(TIDE_OP_FLOOR, v);
  v = B(TIDE_OP_SUB, v, y);
  v = U(TIDE_OP_CEIL, v);
  v = U(TIDE_OP_SQUARE, v);
  v = U(TIDE_OP_RECIPROCAL, v);
  v = B(TIDE_OP_MAXIMUM, v, y);
  v = U(TIDE_OP_RSQRT, v);
  v = B(TIDE_OP_FLOORDIV, v, x);
  out[0] = t[n - 1];
  /* the registry's own loops, run on tiles inside the fused node */
  const tide_tensor *w = B(TIDE_OP_POW, y, x);
  w = B(TIDE_OP_MOD, w, y);
  w = U(TIDE_OP_LOG1P, w);
  w = B(TIDE_OP_MOD, x, w);
  w = U(TIDE_OP_ERF, w);
  out[1] = t[n - 1];
#undef B
#undef U
  return 2;
}

static void test_f32_exact(void) {
  int64_t n = 1000;
  tide_tensor *ins[2] = {specials(n, 3), specials(n, 0.7)};
  /* shift y against x so special values meet ordinary ones */
  float *y = ins[1]->data;
  for (int64_t i = 0; i < n / 2; i++) {
    float tmp = y[i];
    y[i] = y[n - 1 - i], y[n - 1 - i] = tmp;
  }
  tide_graph *g = check_fused(body_exact, 2, ins, 0);
  CHECK(contains(tide_graph_text(g), "fused[mul, sub, maximum, minimum, div"));
  tide_graph_free(g);
  free_all(2, ins);
}

/* Comparisons, logic, where from each side, clip, casts to and from bool, copy. */
static int body_select(tide_tensor *in, tide_tensor *out) {
  tide_tensor t[32];
  int n = 0;
  const tide_tensor *x = &in[0], *y = &in[1], *m = &in[2];
  tide_attrs none = {0}, to_bool = {0}, to_f32 = {0};
  to_bool.dtype = TIDE_BOOL, to_f32.dtype = TIDE_FLOAT32;
#define B(op, a, b) (bin(op, &t[n], a, b), &t[n++])
#define U(op, a) (un(op, &t[n], a), &t[n++])
#define OP(op, at, k, ...) (op_attrs(op, at, k, (const tide_tensor *[]){__VA_ARGS__}, &t[n]), &t[n++])
  const tide_tensor *lt = B(TIDE_OP_LESS, x, y);
  const tide_tensor *c = B(TIDE_OP_LOGICAL_XOR, m, lt);
  const tide_tensor *ge = B(TIDE_OP_GREATER_EQUAL, y, x);
  c = B(TIDE_OP_LOGICAL_AND, ge, c);
  const tide_tensor *eq = B(TIDE_OP_EQUAL, x, y);
  c = B(TIDE_OP_NOT_EQUAL, eq, c);
  const tide_tensor *nc = U(TIDE_OP_LOGICAL_NOT, c), *le = B(TIDE_OP_LESS_EQUAL, x, y);
  c = B(TIDE_OP_LOGICAL_OR, nc, le);
  c = B(TIDE_OP_EQUAL, m, c);
  const tide_tensor *v = OP(TIDE_OP_WHERE, &none, 3, c, x, y);   /* running value: the condition */
  v = OP(TIDE_OP_WHERE, &none, 3, m, v, y);                        /* x */
  v = OP(TIDE_OP_WHERE, &none, 3, lt, x, v);                       /* y */
  v = OP(TIDE_OP_CLIP, &none, 3, v, K1, K2);
  const tide_tensor *vb = OP(TIDE_OP_CAST, &to_bool, 1, v);
  const tide_tensor *vf = OP(TIDE_OP_CAST, &to_f32, 1, vb);
  v = B(TIDE_OP_ADD, vf, v);
  v = OP(TIDE_OP_COPY, &none, 1, v);
  const tide_tensor *nan = U(TIDE_OP_ISNAN, x);
  const tide_tensor *nanf = OP(TIDE_OP_CAST, &to_f32, 1, nan);
  v = B(TIDE_OP_MUL, v, nanf);
  const tide_tensor *fin = U(TIDE_OP_ISFINITE, v);
  out[0] = *v;
  out[1] = *fin; /* a bool output */
#undef B
#undef U
#undef OP
  return 2;
}

static void test_f32_select(void) {
  K1 = scalar(TIDE_FLOAT32, -1.5), K2 = scalar(TIDE_FLOAT32, 2.25);
  int64_t n = 777;
  tide_tensor *ins[3] = {specials(n, 3), specials(n, 2), tide_tensor_new(TIDE_BOOL, 1, &n)};
  float *y = ins[1]->data;
  for (int64_t i = 0; i < n; i += 3) y[i] = ((float *)ins[0]->data)[i]; /* ties */
  for (int64_t i = 0; i < n; i++) ((uint8_t *)ins[2]->data)[i] = (uint8_t)(i % 3 != 0);
  tide_graph *g = check_fused(body_select, 3, ins, 0);
  CHECK(tide_graph_num_nodes(g) == 4); /* three inputs, one fused node */
  tide_graph_free(g);
  free_all(5, (tide_tensor *[]){ins[0], ins[1], ins[2], K1, K2});
}

/* ---- broadcasts, strides, tails --------------------------------------------------------- */

/* x * row + col - s, squared, max with x: a row vector, a column vector, a scalar input. */
static int body_bcast(tide_tensor *in, tide_tensor *out) {
  tide_tensor a, b, c, d, e;
  bin(TIDE_OP_MUL, &a, &in[0], &in[1]);
  bin(TIDE_OP_ADD, &b, &a, &in[2]);
  bin(TIDE_OP_SUB, &c, &b, &in[3]);
  un(TIDE_OP_SQUARE, &d, &c);
  bin(TIDE_OP_MAXIMUM, &e, &in[0], &d);
  out[0] = e;
  return 1;
}

static void test_f32_shapes(void) {
  static const int64_t rows[] = {1, 3, 7, 100, 301};
  static const int64_t cols[] = {1, 5, 127, 129, 2049};
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++) {
      int64_t dx[2] = {rows[i], cols[j]}, dr[1] = {cols[j]}, dc[2] = {rows[i], 1};
      tide_tensor *ins[4] = {filled(TIDE_FLOAT32, 2, dx, -2, 0.05), filled(TIDE_FLOAT32, 1, dr, 0.5, 0.01),
                             filled(TIDE_FLOAT32, 2, dc, -1, 0.3), scalar(TIDE_FLOAT32, 0.25)};
      tide_graph_free(check_fused(body_bcast, 4, ins, 0));
      /* x transposed (strided), the same graph shape */
      int64_t dt[2] = {cols[j], rows[i]};
      tide_tensor *xt = filled(TIDE_FLOAT32, 2, dt, 1, -0.01), tr = blank();
      tide_attrs perm = {0};
      op_attrs(TIDE_OP_TRANSPOSE, &perm, 1, (const tide_tensor *[]){xt}, &tr);
      tide_tensor *strided[4] = {&tr, ins[1], ins[2], ins[3]};
      tide_graph_free(check_fused(body_bcast, 4, strided, 0));
      tide_tensor_release(&tr);
      free_all(5, (tide_tensor *[]){ins[0], ins[1], ins[2], ins[3], xt});
    }
  /* large: many blocks across threads; the streaming-store path of results
   * that leave the graph (2 MiB and up), and of any (16 MiB and up) */
  static const int64_t big[] = {300007, 600007, 4 * 1024 * 1024 + 5};
  for (int i = 0; i < 3; i++) {
    int64_t dx[1] = {big[i]}, one[1] = {1};
    tide_tensor *ins[4] = {filled(TIDE_FLOAT32, 1, dx, -2, 0.05), filled(TIDE_FLOAT32, 1, one, 0.5, 0),
                           filled(TIDE_FLOAT32, 1, dx, 1, 0.01), scalar(TIDE_FLOAT32, 0.25)};
    tide_graph_free(check_fused(body_bcast, 4, ins, 0));
    free_all(4, ins);
  }
}

/* ---- transcendental ops: within a few ulp --------------------------------------------------- */

static int body_exp(tide_tensor *in, tide_tensor *out) {
  tide_tensor a;
  bin(TIDE_OP_MUL, &a, &in[0], &in[1]);
  un(TIDE_OP_EXP, &out[0], &a);
  return 1;
}
static int body_tanh(tide_tensor *in, tide_tensor *out) {
  tide_tensor a;
  bin(TIDE_OP_MUL, &a, &in[0], &in[1]);
  un(TIDE_OP_TANH, &out[0], &a);
  return 1;
}
static int body_sigmoid(tide_tensor *in, tide_tensor *out) {
  tide_tensor a;
  bin(TIDE_OP_MUL, &a, &in[0], &in[1]);
  un(TIDE_OP_SIGMOID, &out[0], &a);
  return 1;
}

static void test_transcendental(void) {
  /* Every 1021st float32 bit pattern in [-105, 105] (exp's range and past it,
   * where tanh and sigmoid saturate), and special values. */
  int64_t n = 0, cap = 1 << 22;
  tide_tensor *x = tide_tensor_new(TIDE_FLOAT32, 1, &cap);
  float *p = x->data;
  for (uint32_t sign = 0; sign < 2; sign++)
    for (uint32_t b = 0; b < 0x42D20000u && n < cap - 16; b += 1021) p[n++] = bits_to_float(b | sign << 31);
  static const float sp[] = {NAN, INFINITY, -INFINITY, 88.72f, 88.73f, -87.4f, -103.9f, -104.1f, 0.625f, -0.625f};
  for (int i = 0; i < 10; i++) p[n++] = sp[i];
  x->dims[0] = x->nelem = n;
  tide_tensor *one = scalar(TIDE_FLOAT32, 1);
  tide_tensor *ins[2] = {x, one};
  tide_graph_free(check_fused(body_exp, 2, ins, 2));
  tide_graph_free(check_fused(body_tanh, 2, ins, 3));
  tide_graph_free(check_fused(body_sigmoid, 2, ins, 3));
  free_all(2, ins);
}

int main(void) {
  test_description();
  test_const_rank();
  test_f32_exact();
  test_f32_select();
  test_f32_shapes();
  test_transcendental();
  return CHECK_SUMMARY("fused");
}
