/* cpu/lookup_hash.h — the hashes of lookup_table and lookup_find (cpu/lookup.c) and the WordPiece/BPE
 * vocabularies: FNV-1a over bytes with a final mix, and splitmix64's finaliser for int64 keys. */
#ifndef TIDE_CPU_LOOKUP_HASH_H
#define TIDE_CPU_LOOKUP_HASH_H
#include <stdint.h>

/* splitmix64's finaliser: consecutive ints spread over every slot bit. */
static inline uint64_t tide_lookup_mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static inline uint64_t tide_lookup_hash_int(int64_t k) { return tide_lookup_mix((uint64_t)k); }

/* FNV-1a, eight bytes a step where they fit (the tokens of a vocabulary are short), then mixed so the low bits,
 * which pick the slot, depend on every byte. */
static inline uint64_t tide_lookup_hash_bytes(const char *b, int64_t n) {
  uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)n;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    __builtin_memcpy(&w, b + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
  }
  for (; i < n; i++) h = (h ^ (unsigned char)b[i]) * 0x100000001b3ULL;
  return tide_lookup_mix(h);
}
#endif
