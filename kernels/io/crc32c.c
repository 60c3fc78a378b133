/* io/crc32c.c — CRC-32C: slicing-by-8 tables for any CPU, and the CPU's own
 * crc32c instructions chosen at run time where it has them (x86: SSE4.2, every
 * x86-64-v2; aarch64: the CRC32 extension, HWCAP_CRC32, every ARMv8.1-A and most 8.0). */
#include "crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#elif defined(__aarch64__)
#include <arm_acle.h>
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7) /* the kernel's arch/arm64 hwcap bit */
#endif
#define TIDE_CRC_HW 1
#endif
#if defined(__x86_64__)
#define TIDE_CRC_HW 1
#endif

/* The reflected Castagnoli polynomial. */
#define POLY 0x82f63b78u

/* table[k][b]: the CRC of byte b followed by k zero bytes (slicing-by-8). */
static uint32_t table[8][256];
static bool use_hardware;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t c = b;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (POLY & (0u - (c & 1u)));
    table[0][b] = c;
  }
  for (int k = 1; k < 8; k++)
    for (int b = 0; b < 256; b++) table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xff];
#if defined(__x86_64__)
  __builtin_cpu_init();
  use_hardware = __builtin_cpu_supports("sse4.2");
#elif defined(__aarch64__)
  use_hardware = (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

/* The raw (unconditioned) CRC register over data, by tables. */
static uint32_t raw_portable(uint32_t c, const uint8_t *p, size_t n) {
  while (n && ((uintptr_t)p & 7)) {
    c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
    n--;
  }
  while (n >= 8) {
    uint32_t lo, hi;
    memcpy(&lo, p, 4);
    memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    lo = __builtin_bswap32(lo);
    hi = __builtin_bswap32(hi);
#endif
    lo ^= c;
    c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
        table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^ table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
  return c;
}

#if defined(__x86_64__)
/* The raw CRC register by the crc32 instruction, 8 bytes a step. Compiled
 * for SSE4.2 whatever the build's baseline; called only when the CPU has it. */
__attribute__((target("sse4.2"))) static uint32_t raw_hardware(uint32_t c32, const uint8_t *p, size_t n) {
  while (n && ((uintptr_t)p & 7)) {
    c32 = _mm_crc32_u8(c32, *p++);
    n--;
  }
  uint64_t c = c32;
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  c32 = (uint32_t)c;
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}
#elif defined(__aarch64__)
/* The same by the CRC32CB/CRC32CX instructions (little-endian loads, as the
 * tables read bytes), compiled with +crc whatever the build's baseline (ARMv8.0
 * makes the extension optional); called only when the CPU has it. */
__attribute__((target("+crc"))) static uint32_t raw_hardware(uint32_t c, const uint8_t *p, size_t n) {
  while (n && ((uintptr_t)p & 7)) {
    c = __crc32cb(c, *p++);
    n--;
  }
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    c = __crc32cd(c, v);
    p += 8;
    n -= 8;
  }
  while (n--) c = __crc32cb(c, *p++);
  return c;
}
#endif

uint32_t tide_crc32c_extend_portable(uint32_t crc, const void *data, size_t n) {
  pthread_once(&once, init);
  return ~raw_portable(~crc, data, n);
}

uint32_t tide_crc32c_extend(uint32_t crc, const void *data, size_t n) {
  pthread_once(&once, init);
#if defined(TIDE_CRC_HW)
  if (use_hardware) return ~raw_hardware(~crc, data, n);
#endif
  return ~raw_portable(~crc, data, n);
}

bool tide_crc32c_hardware(void) {
  pthread_once(&once, init);
  return use_hardware;
}
