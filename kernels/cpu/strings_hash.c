/* cpu/strings_hash.c — TF's string hashes (strings_hash.h) and the op that
 * buckets strings with them: to_hash_bucket_fast, _strong and legacy to_hash_bucket.
 *
 * Written here rather than linked: Debian's libfarmhash exposes only a C++
 * API (namespace util), and TF's legacy Hash64 and FingerprintCat64 live in
 * no library. References: google/farmhash farmhash.cc (farmhashna::Hash64,
 * which farmhash::Fingerprint64 is), the SipHash paper (Aumasson, Bernstein)
 * as highwayhash's SipHashState computes it, tsl/platform/hash.cc (Hash64)
 * and tsl/platform/fingerprint.h (FingerprintCat64). tests/fixtures/strings/gen.py
 * checks every length from 0 to 130 bytes against TF 2.21. */
#include "strings_hash.h"
#include "strings_util.h"

static inline uint64_t fetch64(const char *p) {
  uint64_t v;
  memcpy(&v, p, 8); /* little-endian hosts only, as tide's other readers */
  return v;
}
static inline uint64_t fetch32(const char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t rotr(uint64_t v, int s) { return s == 0 ? v : (v >> s) | (v << (64 - s)); }
static inline uint64_t rotl(uint64_t v, int s) { return (v << s) | (v >> (64 - s)); }
static inline uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

/* ---- farmhashna::Hash64 ---------------------------------------------------- */

static const uint64_t K0 = 0xc3a5c85c97cb3127ULL, K1 = 0xb492b66fbe98f273ULL, K2 = 0x9ae16a3b2f90404fULL;

static inline uint64_t len16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

static uint64_t len0to16(const char *s, size_t len) {
  if (len >= 8) {
    uint64_t mul = K2 + len * 2, a = fetch64(s) + K2, b = fetch64(s + len - 8);
    uint64_t c = rotr(b, 37) * mul + a, d = (rotr(a, 25) + b) * mul;
    return len16(c, d, mul);
  }
  if (len >= 4) {
    uint64_t mul = K2 + len * 2, a = fetch32(s);
    return len16(len + (a << 3), fetch32(s + len - 4), mul);
  }
  if (len > 0) {
    uint8_t a = (uint8_t)s[0], b = (uint8_t)s[len >> 1], c = (uint8_t)s[len - 1];
    uint32_t y = (uint32_t)a + ((uint32_t)b << 8), z = (uint32_t)len + ((uint32_t)c << 2);
    return shift_mix((uint64_t)y * K2 ^ (uint64_t)z * K0) * K2;
  }
  return K2;
}

static uint64_t len17to32(const char *s, size_t len) {
  uint64_t mul = K2 + len * 2, a = fetch64(s) * K1, b = fetch64(s + 8);
  uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * K2;
  return len16(rotr(a + b, 43) + rotr(c, 30) + d, a + rotr(b + K2, 18) + c, mul);
}

static uint64_t len33to64(const char *s, size_t len) {
  uint64_t mul = K2 + len * 2, a = fetch64(s) * K2, b = fetch64(s + 8);
  uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * K2;
  uint64_t y = rotr(a + b, 43) + rotr(c, 30) + d;
  uint64_t z = len16(y, a + rotr(b + K2, 18) + c, mul);
  uint64_t e = fetch64(s + 16) * mul, f = fetch64(s + 24);
  uint64_t g = (y + fetch64(s + len - 32)) * mul, h = (z + fetch64(s + len - 24)) * mul;
  return len16(rotr(e + f, 43) + rotr(g, 30) + h, e + rotr(f + a, 18) + g, mul);
}

typedef struct {
  uint64_t first, second;
} pair64;

static inline pair64 weak32(const char *s, uint64_t a, uint64_t b) {
  uint64_t w = fetch64(s), x = fetch64(s + 8), y = fetch64(s + 16), z = fetch64(s + 24);
  a += w;
  b = rotr(b + a + z, 21);
  uint64_t c = a;
  a += x;
  a += y;
  b += rotr(a, 44);
  return (pair64){a + z, b + c};
}

uint64_t strings_hash_fingerprint64(const char *s, size_t len) {
  if (len <= 16) return len0to16(s, len);
  if (len <= 32) return len17to32(s, len);
  if (len <= 64) return len33to64(s, len);
  const uint64_t seed = 81;
  uint64_t x = seed, y = seed * K1 + 113, z = shift_mix(y * K2 + 113) * K2, t;
  pair64 v = {0, 0}, w = {0, 0};
  x = x * K2 + fetch64(s);
  const char *end = s + ((len - 1) / 64) * 64;
  const char *last64 = end + ((len - 1) & 63) - 63;
  do {
    x = rotr(x + y + v.first + fetch64(s + 8), 37) * K1;
    y = rotr(y + v.second + fetch64(s + 48), 42) * K1;
    x ^= w.second;
    y += v.first + fetch64(s + 40);
    z = rotr(z + w.first, 33) * K1;
    v = weak32(s, v.second * K1, x + w.first);
    w = weak32(s + 32, z + w.second, y + fetch64(s + 16));
    t = z, z = x, x = t;
    s += 64;
  } while (s != end);
  uint64_t mul = K1 + ((z & 0xff) << 1);
  s = last64;
  w.first += ((len - 1) & 63);
  v.first += w.first;
  w.first += v.first;
  x = rotr(x + y + v.first + fetch64(s + 8), 37) * mul;
  y = rotr(y + v.second + fetch64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + fetch64(s + 40);
  z = rotr(z + w.first, 33) * mul;
  v = weak32(s, v.second * mul, x + w.first);
  w = weak32(s + 32, z + w.second, y + fetch64(s + 16));
  t = z, z = x, x = t;
  return len16(len16(v.first, w.first, mul) + shift_mix(y) * K0 + z, len16(v.second, w.second, mul) + x, mul);
}

/* ---- SipHash-2-4 ------------------------------------------------------------ */

#define SIPROUND                                                                                                       \
  do {                                                                                                                 \
    v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);                                                          \
    v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;                                                                             \
    v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;                                                                             \
    v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);                                                          \
  } while (0)

uint64_t strings_hash_siphash(uint64_t k0, uint64_t k1, const char *s, size_t len) {
  uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
  uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
  size_t full = len & ~(size_t)7;
  for (size_t i = 0; i < full; i += 8) {
    uint64_t m = fetch64(s + i);
    v3 ^= m;
    SIPROUND;
    SIPROUND;
    v0 ^= m;
  }
  uint64_t b = (uint64_t)len << 56;
  for (size_t i = full; i < len; i++) b |= (uint64_t)(uint8_t)s[i] << (8 * (i - full));
  v3 ^= b;
  SIPROUND;
  SIPROUND;
  v0 ^= b;
  v2 ^= 0xff;
  SIPROUND;
  SIPROUND;
  SIPROUND;
  SIPROUND;
  return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- TF's legacy Hash64 (a MurmurHash64A variant) ------------------------------ */

uint64_t strings_hash_legacy64(const char *s, size_t n) {
  const uint64_t m = 0xc6a4a7935bd1e995ULL;
  const int r = 47;
  uint64_t h = 0xDECAFCAFFEULL ^ (n * m);
  while (n >= 8) {
    uint64_t k = fetch64(s);
    s += 8, n -= 8;
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  if (n > 0) { /* TF's switch falls through from case 7 down to case 1 */
    for (size_t i = n; i-- > 0;) h ^= (uint64_t)(uint8_t)s[i] << (8 * i);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

uint64_t strings_hash_cat64(uint64_t fp1, uint64_t fp2) {
  const uint64_t mul = 0xc6a4a7935bd1e995ULL;
  uint64_t r = fp1 ^ mul;
  r ^= shift_mix(fp2 * mul) * mul;
  r *= mul;
  r = shift_mix(r) * mul;
  return shift_mix(r);
}

/* ---- the op ------------------------------------------------------------------- */

/* string_to_hash_bucket: each string's hash modulo n buckets, as int64.
 * m = 0 Fingerprint64 (fast), 1 SipHash keyed by ints[0], ints[1] (strong), 2 legacy Hash64. */
tide_status tide_cpu_string_hash(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  int64_t *o = out[0]->data;
  uint64_t buckets = (uint64_t)a->n, k0 = (uint64_t)a->ints[0], k1 = (uint64_t)a->ints[1];
  for (int64_t k = 0; k < out[0]->nelem; k++) {
    int64_t len;
    const char *b = tide_str_at(x, k, &len);
    uint64_t hv = a->m == 1   ? strings_hash_siphash(k0, k1, b, (size_t)len)
                  : a->m == 2 ? strings_hash_legacy64(b, (size_t)len)
                              : strings_hash_fingerprint64(b, (size_t)len);
    o[k] = (int64_t)(hv % buckets);
  }
  return TIDE_OK;
}

/* The 8 little-endian bytes of v at o (TF's CopyToBuffer). */
static void put_le64(uint8_t *o, uint64_t v) {
  for (int i = 0; i < 8; i++) o[i] = (uint8_t)(v >> (8 * i));
}

/* fingerprint: TF's FingerprintOp (farmhash64). Row r of [d0, ...] is the row-major elements r * w .. r * w + w - 1
 * (w = elements per row). Numbers and bools: Fingerprint64 of the row's bytes. Strings: of the string itself when a
 * row holds one; else of the row's strings' fingerprints, 8 little-endian bytes each, in order. */
tide_status tide_cpu_fingerprint(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  uint8_t *o = out[0]->data;
  int64_t rows = x->dims[0];
  if (rows == 0) return TIDE_OK;
  int64_t w = x->nelem / rows;
  size_t esz = x->dt == TIDE_STRING ? 8 : tide_dtype_size(x->dt);
  uint8_t *buf = NULL;
  if (w > 0 && !(x->dt == TIDE_STRING && w == 1)) {
    buf = malloc((size_t)w * esz);
    if (!buf) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a row of %lld elements", def->name,
                               (long long)w);
  }
  for (int64_t r = 0; r < rows; r++) {
    uint64_t fp;
    if (x->dt == TIDE_STRING && w == 1) {
      int64_t len;
      const char *b = tide_str_at(x, r, &len);
      fp = strings_hash_fingerprint64(b, (size_t)len);
    } else {
      for (int64_t j = 0; j < w; j++) {
        int64_t k = r * w + j;
        if (x->dt == TIDE_STRING) {
          int64_t len;
          const char *b = tide_str_at(x, k, &len);
          put_le64(buf + j * 8, strings_hash_fingerprint64(b, (size_t)len));
        } else {
          memcpy(buf + (size_t)j * esz, (const char *)x->data + tide_str_offset(x, k) * (int64_t)esz, esz);
        }
      }
      fp = strings_hash_fingerprint64((const char *)buf, (size_t)w * esz);
    }
    put_le64(o + r * 8, fp);
  }
  free(buf);
  return TIDE_OK;
}
