/* tests/c/test_dtype.c — dtypes through the public C API: names, codes and sizes,
 * and the float16 / bfloat16 conversions (rounding, subnormals, NaN, infinity). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util.h"

/* ---- dtypes ------------------------------------------------------------------- */

static void test_dtypes(void) {
  static const struct { int dt; const char *name; size_t size; bool is_float, is_int; } table[] = {
    {TIDE_FLOAT32, "float32", 4, true, false},  {TIDE_FLOAT64, "float64", 8, true, false},
    {TIDE_FLOAT16, "float16", 2, true, false},  {TIDE_BFLOAT16, "bfloat16", 2, true, false},
    {TIDE_INT8, "int8", 1, false, true},        {TIDE_UINT8, "uint8", 1, false, true},
    {TIDE_INT32, "int32", 4, false, true},      {TIDE_INT64, "int64", 8, false, true},
    {TIDE_BOOL, "bool", 1, false, false},       {TIDE_STRING, "string", 8, false, false},
  };
  CHECK(sizeof table / sizeof table[0] == TIDE_NUM_DTYPES);
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    CHECK(strcmp(tide_dtype_name(table[i].dt), table[i].name) == 0);
    CHECK(tide_dtype_size(table[i].dt) == table[i].size);
    CHECK(tide_dtype_from_name(table[i].name) == table[i].dt);
    CHECK(tide_dtype_is_float(table[i].dt) == table[i].is_float);
    CHECK(tide_dtype_is_int(table[i].dt) == table[i].is_int);
  }
  /* Invalid codes and names. */
  CHECK(strcmp(tide_dtype_name(-1), "?") == 0);
  CHECK(strcmp(tide_dtype_name(TIDE_NUM_DTYPES), "?") == 0);
  CHECK(tide_dtype_size(-1) == 0 && tide_dtype_size(TIDE_NUM_DTYPES) == 0);
  CHECK(!tide_dtype_is_float(-1) && !tide_dtype_is_int(TIDE_NUM_DTYPES));
  CHECK(tide_dtype_from_name("float33") == -1);
  CHECK(tide_dtype_from_name("") == -1);
  CHECK(tide_dtype_from_name(NULL) == -1);
  CHECK(tide_dtype_from_name("Float32") == -1); /* names are exact */
  /* Aliases from numpy, torch and C. */
  CHECK(tide_dtype_from_name("float") == TIDE_FLOAT32);
  CHECK(tide_dtype_from_name("single") == TIDE_FLOAT32);
  CHECK(tide_dtype_from_name("double") == TIDE_FLOAT64);
  CHECK(tide_dtype_from_name("half") == TIDE_FLOAT16);
  CHECK(tide_dtype_from_name("int") == TIDE_INT32);
  CHECK(tide_dtype_from_name("int32_t") == TIDE_INT32);
  CHECK(tide_dtype_from_name("long") == TIDE_INT64);
  CHECK(tide_dtype_from_name("int64_t") == TIDE_INT64);
  /* The dtype sets agree with the class queries. */
  for (int dt = 0; dt < TIDE_NUM_DTYPES; dt++) {
    CHECK(((TIDE_DTS_FLOAT >> dt) & 1) == tide_dtype_is_float(dt));
    CHECK(((TIDE_DTS_INT >> dt) & 1) == tide_dtype_is_int(dt));
  }
}

/* ---- float16 -------------------------------------------------------------------- */

static bool half_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

static void test_half(void) {
  /* Every half value (but NaNs) survives half -> float -> half exactly. */
  int bad = 0;
  for (uint32_t h = 0; h <= 0xffffu; h++) {
    if (half_is_nan((uint16_t)h)) continue;
    if (tide_float_to_half(tide_half_to_float((uint16_t)h)) != h) bad++;
  }
  CHECK(bad == 0);
  /* Known encodings. */
  CHECK(tide_float_to_half(1.0f) == 0x3c00);
  CHECK(tide_float_to_half(-2.0f) == 0xc000);
  CHECK(tide_float_to_half(0.5f) == 0x3800);
  CHECK(tide_float_to_half(65504.0f) == 0x7bff);            /* the largest half */
  CHECK(tide_float_to_half(0.0f) == 0x0000);
  CHECK(tide_float_to_half(-0.0f) == 0x8000);
  CHECK(tide_float_to_half(ldexpf(1, -14)) == 0x0400);     /* smallest normal */
  CHECK(tide_float_to_half(ldexpf(1, -24)) == 0x0001);     /* smallest subnormal */
  CHECK(tide_half_to_float(0x3c00) == 1.0f);
  CHECK(tide_half_to_float(0x7bff) == 65504.0f);
  CHECK(tide_half_to_float(0x0001) == ldexpf(1, -24));
  CHECK(tide_half_to_float(0x03ff) == 1023 * ldexpf(1, -24)); /* largest subnormal */
  CHECK(tide_half_to_float(0x8001) == -ldexpf(1, -24));
  CHECK(float_to_bits(tide_half_to_float(0x8000)) == 0x80000000u); /* -0 keeps its sign */
  /* Round to nearest, ties to even. */
  CHECK(tide_float_to_half(1.0f + ldexpf(1, -11)) == 0x3c00);            /* tie -> even (down) */
  CHECK(tide_float_to_half(1.0f + 3 * ldexpf(1, -11)) == 0x3c02);        /* tie -> even (up) */
  CHECK(tide_float_to_half(1.0f + ldexpf(1, -11) + ldexpf(1, -20)) == 0x3c01); /* above the tie */
  CHECK(tide_float_to_half(1.0f + ldexpf(1, -11) - ldexpf(1, -20)) == 0x3c00); /* below the tie */
  CHECK(tide_float_to_half(-(1.0f + 3 * ldexpf(1, -11))) == 0xbc02);
  /* Subnormal results round the same way. */
  CHECK(tide_float_to_half(ldexpf(1, -25)) == 0x0000);                  /* half an ulp: tie -> 0 */
  CHECK(tide_float_to_half(3 * ldexpf(1, -25)) == 0x0002);              /* 1.5 ulp: tie -> 2 */
  CHECK(tide_float_to_half(ldexpf(1, -25) * 1.001f) == 0x0001);
  CHECK(tide_float_to_half(ldexpf(1, -26)) == 0x0000);
  CHECK(tide_float_to_half(-ldexpf(1, -26)) == 0x8000);                 /* underflow keeps the sign */
  CHECK(tide_float_to_half(1023.5f * ldexpf(1, -24)) == 0x0400);        /* tie into the normals */
  CHECK(tide_float_to_half(FLT_MIN) == 0x0000);
  /* Overflow goes to infinity; the largest values that round down do not. */
  CHECK(tide_float_to_half(65519.0f) == 0x7bff);
  CHECK(tide_float_to_half(65520.0f) == 0x7c00);                        /* tie -> even = inf */
  CHECK(tide_float_to_half(1e10f) == 0x7c00);
  CHECK(tide_float_to_half(-1e10f) == 0xfc00);
  CHECK(tide_float_to_half(FLT_MAX) == 0x7c00);
  CHECK(tide_float_to_half(INFINITY) == 0x7c00);
  CHECK(tide_float_to_half(-INFINITY) == 0xfc00);
  CHECK(isinf(tide_half_to_float(0x7c00)) && tide_half_to_float(0x7c00) > 0);
  CHECK(isinf(tide_half_to_float(0xfc00)) && tide_half_to_float(0xfc00) < 0);
  /* NaN stays NaN both ways, even a float NaN whose payload lives only in the low bits. */
  CHECK(half_is_nan(tide_float_to_half(NAN)));
  CHECK(half_is_nan(tide_float_to_half(bits_to_float(0x7f800001u))));
  CHECK(half_is_nan(tide_float_to_half(bits_to_float(0xff800001u))));
  CHECK((tide_float_to_half(bits_to_float(0xffc00000u)) & 0x8000) != 0);
  CHECK(isnan(tide_half_to_float(0x7e00)));
  CHECK(isnan(tide_half_to_float(0x7c01)));
  CHECK(isnan(tide_half_to_float(0xfe00)));
}

/* ---- bfloat16 -------------------------------------------------------------------- */

static bool bf16_is_nan(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

static void test_bfloat16(void) {
  int bad = 0;
  for (uint32_t b = 0; b <= 0xffffu; b++) {
    if (bf16_is_nan((uint16_t)b)) continue;
    if (tide_float_to_bfloat16(tide_bfloat16_to_float((uint16_t)b)) != b) bad++;
  }
  CHECK(bad == 0);
  CHECK(tide_float_to_bfloat16(1.0f) == 0x3f80);
  CHECK(tide_float_to_bfloat16(-2.0f) == 0xc000);
  CHECK(tide_float_to_bfloat16(0.0f) == 0x0000);
  CHECK(tide_float_to_bfloat16(-0.0f) == 0x8000);
  CHECK(tide_bfloat16_to_float(0x3f80) == 1.0f);
  CHECK(tide_bfloat16_to_float(0x4049) == 3.140625f);
  /* Round to nearest even. */
  CHECK(tide_float_to_bfloat16(1.0f + ldexpf(1, -8)) == 0x3f80);                 /* tie -> even (down) */
  CHECK(tide_float_to_bfloat16(1.0f + 3 * ldexpf(1, -8)) == 0x3f82);             /* tie -> even (up) */
  CHECK(tide_float_to_bfloat16(1.0f + ldexpf(1, -8) + ldexpf(1, -20)) == 0x3f81);
  CHECK(tide_float_to_bfloat16(3.14159265f) == 0x4049);
  /* Overflow: FLT_MAX rounds up into infinity; just below the tie it does not. */
  CHECK(tide_float_to_bfloat16(FLT_MAX) == 0x7f80);
  CHECK(tide_float_to_bfloat16(bits_to_float(0x7f7f8000u)) == 0x7f80);
  CHECK(tide_float_to_bfloat16(bits_to_float(0x7f7f7fffu)) == 0x7f7f);
  CHECK(tide_float_to_bfloat16(-FLT_MAX) == 0xff80);
  CHECK(tide_float_to_bfloat16(INFINITY) == 0x7f80);
  CHECK(tide_float_to_bfloat16(-INFINITY) == 0xff80);
  /* Subnormals: bfloat16 has float32's exponent range. */
  CHECK(tide_float_to_bfloat16(bits_to_float(0x00010000u)) == 0x0001);
  CHECK(tide_bfloat16_to_float(0x0001) == ldexpf(1, -133));
  CHECK(tide_float_to_bfloat16(bits_to_float(0x00008000u)) == 0x0000);      /* tie -> even (0) */
  CHECK(tide_float_to_bfloat16(bits_to_float(0x00018000u)) == 0x0002);      /* tie -> even (2) */
  CHECK(tide_float_to_bfloat16(bits_to_float(0x007fffffu)) == 0x0080);      /* into the normals */
  /* NaN: never rounded into infinity, sign kept. */
  CHECK(bf16_is_nan(tide_float_to_bfloat16(NAN)));
  CHECK(bf16_is_nan(tide_float_to_bfloat16(bits_to_float(0x7f800001u))));
  CHECK(bf16_is_nan(tide_float_to_bfloat16(bits_to_float(0x7fffffffu))));
  CHECK((tide_float_to_bfloat16(bits_to_float(0xff800001u)) & 0x8000) != 0);
  CHECK(isnan(tide_bfloat16_to_float(0x7fc0)));
  CHECK(isnan(tide_bfloat16_to_float(0x7f81)));
}

/* ---- reading elements as host numbers ------------------------------------------ */

static uint64_t double_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

static void test_read_number(void) {
  const uint64_t canon = UINT64_C(0x7ff8000000000000);
  /* NaNs of every sign, quiet and signalling, with payloads: one canonical NaN. */
  static const uint32_t f32_nans[] = {0xffec0001u, 0xffffffffu, 0x7fffffffu, 0x7f800001u, 0xff800001u,
                                      0x7fc00000u, 0xffc00000u, 0x7fa5a5a5u};
  for (size_t k = 0; k < sizeof f32_nans / sizeof f32_nans[0]; k++) {
    float f;
    memcpy(&f, &f32_nans[k], 4);
    CHECK(double_bits(tide_read_number(&f, TIDE_FLOAT32, 0)) == canon);
  }
  static const uint64_t f64_nans[] = {UINT64_C(0xfff8000000000001), UINT64_C(0xffffffffffffffff),
                                      UINT64_C(0xfffd800020000000), UINT64_C(0x7ff0000000000001),
                                      UINT64_C(0xfff0000000000001), UINT64_C(0x7fffffffffffffff),
                                      UINT64_C(0xfff8000000000000)};
  for (size_t k = 0; k < sizeof f64_nans / sizeof f64_nans[0]; k++) {
    double d;
    memcpy(&d, &f64_nans[k], 8);
    CHECK(double_bits(tide_read_number(&d, TIDE_FLOAT64, 0)) == canon);
  }
  static const uint16_t half_nans[] = {0x7c01, 0xfc01, 0x7fff, 0xffff, 0x7e00, 0xfe00, 0x7d55};
  for (size_t k = 0; k < sizeof half_nans / sizeof half_nans[0]; k++)
    CHECK(double_bits(tide_read_number(&half_nans[k], TIDE_FLOAT16, 0)) == canon);
  static const uint16_t bf16_nans[] = {0x7f81, 0xff81, 0x7fff, 0xffff, 0x7fc0, 0xffc0, 0xffec};
  for (size_t k = 0; k < sizeof bf16_nans / sizeof bf16_nans[0]; k++)
    CHECK(double_bits(tide_read_number(&bf16_nans[k], TIDE_BFLOAT16, 0)) == canon);
  /* Ordinary values come through exactly, at an offset. */
  const float f[3] = {1.5f, -INFINITY, -0.0f};
  CHECK(tide_read_number(f, TIDE_FLOAT32, 0) == 1.5);
  CHECK(tide_read_number(f, TIDE_FLOAT32, 1) == -INFINITY);
  CHECK(double_bits(tide_read_number(f, TIDE_FLOAT32, 2)) == UINT64_C(0x8000000000000000));
  const double d[2] = {0.1, -DBL_MAX};
  CHECK(tide_read_number(d, TIDE_FLOAT64, 0) == 0.1 && tide_read_number(d, TIDE_FLOAT64, 1) == -DBL_MAX);
  const uint16_t h = 0x3e00, b = 0xc049;
  CHECK(tide_read_number(&h, TIDE_FLOAT16, 0) == 1.5);
  CHECK(tide_read_number(&b, TIDE_BFLOAT16, 0) == -3.140625);
  const int8_t i8 = -128;
  const uint8_t u8 = 255;
  const int32_t i32 = INT32_MIN;
  const int64_t i64 = INT64_C(1) << 53;
  CHECK(tide_read_number(&i8, TIDE_INT8, 0) == -128 && tide_read_number(&u8, TIDE_UINT8, 0) == 255);
  CHECK(tide_read_number(&i32, TIDE_INT32, 0) == INT32_MIN);
  CHECK(tide_read_number(&i64, TIDE_INT64, 0) == 9007199254740992.0);
  /* Bool: any nonzero byte is true. */
  const uint8_t bools[4] = {0, 1, 2, 255};
  CHECK(tide_read_number(bools, TIDE_BOOL, 0) == 0 && tide_read_number(bools, TIDE_BOOL, 1) == 1);
  CHECK(tide_read_number(bools, TIDE_BOOL, 2) == 1 && tide_read_number(bools, TIDE_BOOL, 3) == 1);
  CHECK(tide_read_number(bools, -1, 0) == 0 && tide_read_number(bools, TIDE_NUM_DTYPES, 0) == 0);
}

int main(void) {
  test_dtypes();
  test_half();
  test_bfloat16();
  test_read_number();
  /* Everything made here was given back. */
  CHECK(tide_memory_stats_get()->current == 0);
  return CHECK_SUMMARY("dtype");
}
