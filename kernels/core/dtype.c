/* core/dtype.c — the dtype table (names, sizes, classes), the IEEE half /
 * bfloat16 conversions (half.h's, round to nearest even, NaN and infinity kept), and
 * reading one element as a host number (NaN canonical). */
#include "internal.h"
#include "half.h"

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

uint16_t tide_float_to_half(float f) { return half_from_float(f); }

float tide_half_to_float(uint16_t h) { return half_to_float(h); }

uint16_t tide_float_to_bfloat16(float f) { return bfloat16_from_float(f); }

float tide_bfloat16_to_float(uint16_t b) { return bfloat16_to_float(b); }

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
