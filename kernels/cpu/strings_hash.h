/* cpu/strings_hash.h — TF's string hashes, bit for bit: Fingerprint64
 * (farmhash's farmhashna::Hash64), SipHash-2-4, legacy Hash64, FingerprintCat64. */
#ifndef TIDE_CPU_STRINGS_HASH_H
#define TIDE_CPU_STRINGS_HASH_H

#include <stddef.h>
#include <stdint.h>

/* TF's Fingerprint64 (tsl/platform/fingerprint.h): farmhash::Fingerprint64. */
uint64_t strings_hash_fingerprint64(const char *s, size_t len);

/* TF's StrongKeyedHash (highwayhash's SipHash-2-4, key k0 k1). */
uint64_t strings_hash_siphash(uint64_t k0, uint64_t k1, const char *s, size_t len);

/* TF's legacy Hash64 (tsl/platform/hash.cc, seed 0xDECAFCAFFE). */
uint64_t strings_hash_legacy64(const char *s, size_t len);

/* TF's FingerprintCat64(fp1, fp2): combines two fingerprints (not commutative). */
uint64_t strings_hash_cat64(uint64_t fp1, uint64_t fp2);

#endif
