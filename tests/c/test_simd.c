/* tests/c/test_simd.c — the run-time instruction-set choice (kernels/cpu/simd.h):
 * every level this CPU runs gives the same bits as the baseline loops (float32
 * exp, tanh and sigmoid: within 2 ulp, as FMA rounds once where the baseline
 * rounds twice), the
 * cap's errors, and the baseline objects hold no AVX (so libtide runs on any
 * x86-64-v2 CPU). */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static const char *const levels[] = {"baseline", "avx2", "avx512"};
enum { NLEVELS = 3 };

/* ---- same results at every level ------------------------------------------------ */

enum { NLEN = 6 };
static const int64_t lengths[NLEN] = {1, 7, 33, 100, 1031, 70001}; /* tails, and parallel sizes */

/* Fill t (any numeric dtype) with values that reach NaN, infinities, negatives and zero for floats. */
static void fill(tide_tensor *t, unsigned seed) {
  srand(seed);
  for (int64_t i = 0; i < t->nelem; i++) {
    double v = (rand() % 2001 - 1000) / 37.0;
    if (i % 97 == 5) v = NAN;
    if (i % 89 == 3) v = i % 2 ? INFINITY : -INFINITY;
    if (i % 13 == 0) v = 0;
    switch (t->dt) {
    case TIDE_FLOAT32: ((float *)t->data)[i] = (float)v; break;
    case TIDE_FLOAT64: ((double *)t->data)[i] = v; break;
    case TIDE_INT32: ((int32_t *)t->data)[i] = isfinite(v) ? (int32_t)v + (i % 3 == 0) : 7; break;
    case TIDE_INT8: ((int8_t *)t->data)[i] = isfinite(v) ? (int8_t)((int)v % 100) : 3; break;
    case TIDE_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(rand() & 1); break;
    default: break;
    }
  }
}

/* Distance of two float32 values of one sign in units in the last place. */
static int64_t ulps_apart(float x, float y) {
  if (signbit(x) != signbit(y)) return x == y ? 0 : INT64_MAX; /* +0 and -0 */
  int32_t i, j;
  memcpy(&i, &x, 4), memcpy(&j, &y, 4);
  return llabs((long long)i - j);
}

/* Element i of a and b (same dtype) holds the same bits, or NaN in both (which
 * NaN an invalid operation gives depends on the order of its operands); float32
 * within max_ulp when that is above 0. */
static bool same_element(const tide_tensor *a, const tide_tensor *b, int64_t i, int max_ulp) {
  size_t es = tide_dtype_size(a->dt);
  const char *x = (const char *)a->data + i * (int64_t)es, *y = (const char *)b->data + i * (int64_t)es;
  if (memcmp(x, y, es) == 0) return true;
  if (a->dt == TIDE_FLOAT32 && max_ulp > 0 && !isnan(*(const float *)x) &&
      ulps_apart(*(const float *)x, *(const float *)y) <= max_ulp)
    return true;
  if (a->dt == TIDE_FLOAT32) return isnan(*(const float *)x) && isnan(*(const float *)y);
  if (a->dt == TIDE_FLOAT64) return isnan(*(const double *)x) && isnan(*(const double *)y);
  return false;
}

/* Run op at each level on the same inputs; the outputs must agree bit for bit
 * (or all fail alike), but for the float32 polynomial approximations
 * (vmath.h), which use FMA where the level has it. Returns the number of
 * levels that ran. */
static int same_at_every_level(int op, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  int max_ulp = op == TIDE_OP_EXP || op == TIDE_OP_TANH || op == TIDE_OP_SIGMOID ? 2 : 0;
  tide_tensor out[NLEVELS];
  tide_status st[NLEVELS];
  int ran = 0;
  for (int l = 0; l < NLEVELS; l++) {
    CHECK(tide_set_max_cpu_isa(levels[l]) == TIDE_OK);
    out[l] = blank();
    tide_tensor *o = &out[l];
    st[l] = tide_op_run(op, a, n_in, in, 1, &o);
    if (strcmp(tide_cpu_isa(), levels[l]) == 0) ran++;
  }
  for (int l = 1; l < NLEVELS; l++) {
    CHECK(st[l] == st[0]);
    if (st[l] || st[0]) continue;
    bool same = out[l].dt == out[0].dt && out[l].nelem == out[0].nelem;
    for (int64_t i = 0; same && i < out[0].nelem; i++) same = same_element(&out[l], &out[0], i, max_ulp);
    if (!same) fprintf(stderr, "  op %s differs at level %s\n", tide_op_name(op), levels[l]);
    CHECK(same);
  }
  for (int l = 0; l < NLEVELS; l++) tide_tensor_release(&out[l]);
  return ran;
}

static void test_levels_agree(void) {
  static const int binary_ops[] = {TIDE_OP_ADD, TIDE_OP_SUB, TIDE_OP_MUL, TIDE_OP_DIV, TIDE_OP_MAXIMUM,
                                   TIDE_OP_MINIMUM, TIDE_OP_POW, TIDE_OP_FLOORDIV, TIDE_OP_MOD,
                                   TIDE_OP_LESS, TIDE_OP_GREATER_EQUAL, TIDE_OP_EQUAL};
  static const int unary_ops[] = {TIDE_OP_NEG, TIDE_OP_ABS, TIDE_OP_SQUARE, TIDE_OP_RELU, TIDE_OP_EXP,
                                  TIDE_OP_LOG, TIDE_OP_SQRT, TIDE_OP_TANH, TIDE_OP_SIGMOID, TIDE_OP_FLOOR,
                                  TIDE_OP_ROUND, TIDE_OP_GELU, TIDE_OP_ISNAN};
  static const int reduce_ops[] = {TIDE_OP_SUM, TIDE_OP_MAX, TIDE_OP_MIN, TIDE_OP_PROD, TIDE_OP_MEAN};
  static const int dtypes[] = {TIDE_FLOAT32, TIDE_FLOAT64, TIDE_INT32, TIDE_INT8};
  int ran = 0;
  for (int li = 0; li < NLEN; li++) {
    for (int di = 0; di < 4; di++) {
      int dt = dtypes[di];
      bool isfloat = dt == TIDE_FLOAT32 || dt == TIDE_FLOAT64;
      int64_t n = lengths[li];
      tide_tensor a = blank(), b = blank(), s = blank();
      CHECK(tide_tensor_init(&a, dt, 1, &n) == TIDE_OK);
      CHECK(tide_tensor_init(&b, dt, 1, &n) == TIDE_OK);
      CHECK(tide_tensor_init(&s, dt, 0, NULL) == TIDE_OK);
      fill(&a, 1), fill(&b, 2), fill(&s, 3);
      for (size_t k = 0; k < sizeof binary_ops / sizeof *binary_ops; k++) {
        if (!isfloat && (binary_ops[k] == TIDE_OP_POW || binary_ops[k] == TIDE_OP_FLOORDIV ||
                         binary_ops[k] == TIDE_OP_MOD))
          continue; /* integer errors (division by zero) are checked elsewhere */
        const tide_tensor *ab[2] = {&a, &b}, *as[2] = {&a, &s};
        ran += same_at_every_level(binary_ops[k], NULL, 2, ab);
        ran += same_at_every_level(binary_ops[k], NULL, 2, as); /* a scalar operand */
      }
      for (size_t k = 0; k < sizeof unary_ops / sizeof *unary_ops; k++) {
        int op = unary_ops[k];
        if (!isfloat && op != TIDE_OP_NEG && op != TIDE_OP_ABS && op != TIDE_OP_SQUARE && op != TIDE_OP_RELU) continue;
        const tide_tensor *x[1] = {&a};
        ran += same_at_every_level(op, NULL, 1, x);
      }
      for (size_t k = 0; k < sizeof reduce_ops / sizeof *reduce_ops; k++) {
        const tide_tensor *x[1] = {&a};
        ran += same_at_every_level(reduce_ops[k], NULL, 1, x);
      }
      for (int to = 0; to < TIDE_NUM_DTYPES; to++) {
        tide_attrs c;
        memset(&c, 0, sizeof c);
        c.dtype = to;
        const tide_tensor *x[1] = {&a};
        ran += same_at_every_level(TIDE_OP_CAST, &c, 1, x);
      }
      /* clip_by_value with scalar bounds, and where on a bool condition */
      tide_tensor lo = blank(), hi = blank(), cond = blank();
      CHECK(tide_tensor_init(&lo, dt, 0, NULL) == TIDE_OK);
      CHECK(tide_tensor_init(&hi, dt, 0, NULL) == TIDE_OK);
      CHECK(tide_tensor_init(&cond, TIDE_BOOL, 1, &n) == TIDE_OK);
      fill(&cond, 4);
      if (dt == TIDE_FLOAT32) *(float *)lo.data = -3, *(float *)hi.data = 5;
      else if (dt == TIDE_FLOAT64) *(double *)lo.data = -3, *(double *)hi.data = 5;
      else if (dt == TIDE_INT32) *(int32_t *)lo.data = -3, *(int32_t *)hi.data = 5;
      else *(int8_t *)lo.data = -3, *(int8_t *)hi.data = 5;
      const tide_tensor *clip_in[3] = {&a, &lo, &hi}, *where_in[3] = {&cond, &a, &b};
      ran += same_at_every_level(TIDE_OP_CLIP, NULL, 3, clip_in);
      ran += same_at_every_level(TIDE_OP_WHERE, NULL, 3, where_in);
      tide_tensor_release(&lo), tide_tensor_release(&hi), tide_tensor_release(&cond);
      tide_tensor_release(&a), tide_tensor_release(&b), tide_tensor_release(&s);
    }
  }
  /* Reductions over an outer axis of a matrix take the column kernels. */
  int64_t dims[2] = {301, 67};
  tide_tensor m = blank();
  CHECK(tide_tensor_init(&m, TIDE_FLOAT32, 2, dims) == TIDE_OK);
  fill(&m, 5);
  for (size_t k = 0; k < sizeof reduce_ops / sizeof *reduce_ops; k++) {
    tide_attrs ax;
    memset(&ax, 0, sizeof ax);
    ax.nints = 1, ax.ints[0] = 0;
    const tide_tensor *x[1] = {&m};
    ran += same_at_every_level(reduce_ops[k], &ax, 1, x);
  }
  tide_tensor_release(&m);
  CHECK(ran > 0);
  CHECK(tide_set_max_cpu_isa("avx512") == TIDE_OK); /* back to the best level */
}

/* ---- the cap ------------------------------------------------------------------- */

static void test_cap(void) {
  CHECK(tide_set_max_cpu_isa("avx512") == TIDE_OK);
  const char *best = tide_cpu_isa();
  CHECK(strcmp(best, "baseline") == 0 || strcmp(best, "avx2") == 0 || strcmp(best, "avx512") == 0);
  CHECK(tide_set_max_cpu_isa("baseline") == TIDE_OK);
  CHECK(strcmp(tide_cpu_isa(), "baseline") == 0);
  CHECK(tide_set_max_cpu_isa("AVX2") == TIDE_OK); /* names ignore case */
  CHECK(strcmp(tide_cpu_isa(), "avx2") == 0 || strcmp(best, "baseline") == 0);
  CHECK(tide_set_max_cpu_isa("sse9") == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "unknown instruction set 'sse9'"));
  CHECK(contains(tide_last_error(), "baseline, avx2, avx512"));
  CHECK(tide_set_max_cpu_isa(NULL) == TIDE_ERR_VALUE);
  CHECK(tide_set_max_cpu_isa("avx512") == TIDE_OK);
  CHECK(strcmp(tide_cpu_isa(), best) == 0);
}

/* ---- no AVX in the baseline objects --------------------------------------------- */

/* True when one line of `objdump -d` output is an instruction a baseline
 * (x86-64-v2) CPU lacks: VEX/EVEX-encoded (AVX, AVX2, FMA, F16C, AVX-512:
 * their mnemonics start with 'v'), a ymm/zmm/mask register, or BMI1/BMI2/LZCNT/MOVBE. */
static bool needs_more_than_v2(const char *line) {
  const char *tab = strrchr(line, '\t'); /* "  addr:\tinsn operands"; labels have no tab */
  if (!tab) return false;
  const char *insn = tab + 1;
  static const char *const bmi[] = {"andn ", "bextr ", "blsi ", "blsmsk ", "blsr ", "bzhi ", "mulx ", "pdep ",
                                    "pext ", "rorx ", "sarx ", "shlx ", "shrx ", "tzcnt ", "lzcnt ", "movbe "};
  if (insn[0] == 'v' && strncmp(insn, "verr", 4) != 0 && strncmp(insn, "verw", 4) != 0) return true;
  if (strstr(insn, "%ymm") || strstr(insn, "%zmm") || strstr(insn, "{%k")) return true;
  for (size_t i = 0; i < sizeof bmi / sizeof *bmi; i++)
    if (strncmp(insn, bmi[i], strlen(bmi[i])) == 0) return true;
  return false;
}

/* Instructions beyond x86-64-v2 in object `path` (-1 when objdump fails). */
static long count_beyond_v2(const char *path) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "objdump -d --no-show-raw-insn '%s' 2>/dev/null", path);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  char line[1024];
  long n = 0, lines = 0;
  while (fgets(line, sizeof line, p)) {
    lines++;
    if (needs_more_than_v2(line)) {
      if (n < 3 && !strstr(path, ".avx")) fprintf(stderr, "  %s: %s", path, line);
      n++;
    }
  }
  return pclose(p) == 0 && lines > 0 ? n : -1;
}

typedef struct scan {
  long baseline_objects, baseline_bad, level_objects, level_with_avx, failed;
} scan;

/* Walk dir (recursively) for engine objects: *.avx2.o / *.avx512.o are level
 * variants; every other .o must be baseline. */
static void scan_dir(const char *dir, scan *s) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t len = strlen(e->d_name);
    if (e->d_type == DT_DIR) {
      scan_dir(path, s);
    } else if (len > 2 && strcmp(e->d_name + len - 2, ".o") == 0) {
      bool level = strstr(e->d_name, ".avx2.o") || strstr(e->d_name, ".avx512.o");
      long n = count_beyond_v2(path);
      if (n < 0) s->failed++;
      else if (level) s->level_objects++, s->level_with_avx += n > 0;
      else s->baseline_objects++, s->baseline_bad += n > 0;
    }
  }
  closedir(d);
}

static void test_baseline_objects(void) {
  /* This binary is <build>/tests/test_simd; the engine's objects are in <build>/obj/kernels. */
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  CHECK(n > 0);
  if (n <= 0) return;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash) *slash = '\0';
  slash = strrchr(exe, '/');
  if (slash) *slash = '\0';
  char objdir[4200];
  snprintf(objdir, sizeof objdir, "%s/obj/kernels", exe);
  scan s = {0};
  scan_dir(objdir, &s);
  CHECK(s.failed == 0);
  CHECK(s.baseline_objects >= 20);  /* the scan found the engine */
  CHECK(s.baseline_bad == 0);       /* runs on any x86-64-v2 CPU */
  /* The scanner recognizes AVX: the level variants are full of it. */
  CHECK(s.level_objects >= 2 && s.level_with_avx == s.level_objects);
  fprintf(stderr, "  scanned %ld baseline objects (%ld with newer instructions), %ld level objects\n",
          s.baseline_objects, s.baseline_bad, s.level_objects);
}

int main(void) {
  test_cap();
  test_levels_agree();
  /* The Makefile defines this when the library is built for its default
   * baseline (not `make OPT=-march=native`, whose objects may use anything). */
#ifdef TIDE_CHECK_BASELINE_OBJECTS
  test_baseline_objects();
#else
  fprintf(stderr, "  not a default portable x86-64 build: the baseline objects are not scanned\n");
#endif
  return CHECK_SUMMARY("simd");
}
