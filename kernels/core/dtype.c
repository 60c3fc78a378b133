/* core/dtype.c — the dtype table (names, sizes, classes), the IEEE half /
 * bfloat16 conversions (round to nearest even, NaN and infinity kept), and
 * reading one element as a host number (NaN canonical). */
#include "internal.h"

#include <string.h>

static const char *const dtype_names[TIDE_NUM_DTYPES] = {
  [TIDE_FLOAT32] = "float32", [TIDE_FLOAT64] = "float64", [TIDE_FLOAT16] = "float16", [TIDE_BFLOAT16] = "bfloat16",
  [TIDE_INT8] = "int8",       [TIDE_UINT8] = "uint8",     [TIDE_INT32] = "int32",     [TIDE_INT64] = "int64",
  [TIDE_BOOL] = "bool",       [TIDE_STRING] = "string",
};

/* Read by tide_dtype_size_unchecked (internal.h) and tide_dtype_size. */
const uint8_t tide_dtype_bytes[TIDE_NUM_DTYPES] = {
  [TIDE_FLOAT32] = 4, [TIDE_FLOAT64] = 8, [TIDE_FLOAT16] = 2, [TIDE_BFLOAT16] = 2, [TIDE_INT8] = 1,
  [TIDE_UINT8] = 1,   [TIDE_INT32] = 4,   [TIDE_INT64] = 8,   [TIDE_BOOL] = 1, [TIDE_STRING] = 8,
};

static bool valid(int dt) { return dt >= 0 && dt < TIDE_NUM_DTYPES; }

const char *tide_dtype_name(int dt) { return valid(dt) ? dtype_names[dt] : "?"; }

size_t tide_dtype_size(int dt) { return valid(dt) ? tide_dtype_bytes[dt] : 0; }

int tide_dtype_from_name(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < TIDE_NUM_DTYPES; i++)
    if (strcmp(name, dtype_names[i]) == 0) return i;
  /* Aliases people type from numpy, torch and C. */
  if (!strcmp(name, "float") || !strcmp(name, "single")) return TIDE_FLOAT32;
  if (!strcmp(name, "double")) return TIDE_FLOAT64;
  if (!strcmp(name, "half")) return TIDE_FLOAT16;
  if (!strcmp(name, "int") || !strcmp(name, "int32_t")) return TIDE_INT32;
  if (!strcmp(name, "long") || !strcmp(name, "int64_t")) return TIDE_INT64;
  return -1;
}

bool tide_dtype_is_float(int dt) { return valid(dt) && ((1u << dt) & TIDE_DTS_FLOAT); }

bool tide_dtype_is_int(int dt) { return valid(dt) && ((1u << dt) & TIDE_DTS_INT); }

/* The bit pattern of f. */
static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* The float with bit pattern u. */
static float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

uint16_t tide_float_to_half(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) /* inf or NaN (keep a quiet NaN) */
    return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) /* rounds to >= 65520: overflow to infinity */
    return (uint16_t)(sign | 0x7c00u);
  if (abs < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
    /* Adding 0.5 shifts the mantissa so that float rounding does ours. */
    float v = bits_float(abs) + 0.5f;
    return (uint16_t)(sign | (float_bits(v) - 0x3f000000u));
  }
  uint32_t mant_odd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mant_odd; /* rebias exponent (-112 << 23) and round to even */
  return (uint16_t)(sign | (abs >> 13));
}

float tide_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) { /* zero or subnormal: mant * 2^-24 */
    float v = (float)mant * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t tide_float_to_bfloat16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

float tide_bfloat16_to_float(uint16_t b) { return bits_float((uint32_t)b << 16); }

/* The canonical quiet NaN, built from its bits so that no compiler or libm
 * choice of NAN can bring a sign or payload along. */
static double canonical_nan(void) {
  uint64_t u = UINT64_C(0x7ff8000000000000);
  double d;
  memcpy(&d, &u, 8);
  return d;
}

/* v, with any NaN replaced by the canonical one. */
static inline double canonical(double v) { return v == v ? v : canonical_nan(); }

double tide_read_number(const void *data, int dt, int64_t i) {
  switch (dt) {
  case TIDE_FLOAT32: return canonical((double)((const float *)data)[i]);
  case TIDE_FLOAT64: return canonical(((const double *)data)[i]);
  case TIDE_FLOAT16: return canonical((double)tide_half_to_float(((const uint16_t *)data)[i]));
  case TIDE_BFLOAT16: return canonical((double)tide_bfloat16_to_float(((const uint16_t *)data)[i]));
  case TIDE_INT8: return ((const int8_t *)data)[i];
  case TIDE_UINT8: return ((const uint8_t *)data)[i];
  case TIDE_INT32: return ((const int32_t *)data)[i];
  case TIDE_INT64: return (double)((const int64_t *)data)[i];
  case TIDE_BOOL: return ((const uint8_t *)data)[i] != 0;
  default: return 0;
  }
}
