/* io/crc32c.h — CRC-32C (Castagnoli), the checksum of TFRecord framing,
 * TensorBoard event files and LevelDB, and the TFRecord "mask" over it. */
#ifndef TIDE_IO_CRC32C_H
#define TIDE_IO_CRC32C_H

#include "tide/export.h"

/* The CRC-32C of data[0..n) continued from `crc`, the CRC-32C of what came
 * before (0 to start): tide_crc32c_extend(0, "123456789", 9) == 0xe3069283.
 * Uses the SSE4.2 crc32 instruction when the CPU has it, else tables. */
TIDE_API uint32_t tide_crc32c_extend(uint32_t crc, const void *data, size_t n);
/* The same by the portable tables only (for tests and non-x86 builds). */
TIDE_API uint32_t tide_crc32c_extend_portable(uint32_t crc, const void *data, size_t n);
/* True when tide_crc32c_extend uses the crc32 instruction. */
TIDE_API bool tide_crc32c_hardware(void);

/* TFRecord's masked CRC: rotate right by 15 and add a constant, so that a
 * CRC stored inside the data it covers does not checksum to a fixed value. */
static inline uint32_t tide_crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
/* The inverse of tide_crc32c_mask. */
static inline uint32_t tide_crc32c_unmask(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}
/* The masked CRC-32C of data[0..n), as TFRecord stores it. */
static inline uint32_t tide_crc32c_masked(const void *data, size_t n) {
  return tide_crc32c_mask(tide_crc32c_extend(0, data, n));
}

#endif
