/* io/sstable.h — TF's table files (tensorflow/core/lib/io/table, LevelDB's
 * format: the index of a TF checkpoint), checked and decoded whole from memory. */
#ifndef TIDE_IO_SSTABLE_H
#define TIDE_IO_SSTABLE_H

#include "tide/tide.h"

/* One key and its value. Keys are bytes (a NUL inside is possible) and are
 * followed by a NUL that is not part of them; values point into the image. */
typedef struct sstable_entry {
  const char *key;
  size_t key_len;
  const unsigned char *value;
  size_t value_len;
} sstable_entry;

/* A decoded table: its entries in key order (bytewise, strictly increasing). */
typedef struct sstable {
  sstable_entry *entries;
  size_t count;
  char *keys; /* every key, NUL-terminated, one after another */
} sstable;

/* The most key bytes a table may decode to. Keys share prefixes, so a small
 * hostile file could otherwise spell out gigabytes of keys; a checkpoint's
 * keys (variable paths) are a few megabytes even for the largest models. */
enum { SSTABLE_MAX_KEY_BYTES = 1 << 27 };

/* Decode the table image data[0..n) (the whole file): the footer and its
 * magic, the index block, and every data block it names (each block's
 * CRC-32C checked; blocks in file order, not overlapping; uncompressed, as
 * TF writes checkpoint indexes), their prefix-compressed keys (strictly
 * increasing across the table, within the index's separators) and restart
 * points. Values point into `data`, which must outlive *t. On a fault:
 * TIDE_ERR_IO "<who>: '<name>' is corrupt: ..." and *t left empty. */
tide_status sstable_parse(const unsigned char *data, size_t n, const char *who, const char *name, sstable *t);
/* A key for messages: printable bytes as they are, others as \xNN, cut
 * short to fit `size` (always terminated); returns buf. */
const char *sstable_show_key(const char *key, size_t len, char *buf, size_t size);
/* Free what sstable_parse made (the image is the caller's). */
void sstable_free(sstable *t);
/* The position of the entry whose key is key[0..len), or -1. */
int64_t sstable_find(const sstable *t, const char *key, size_t len);

/* The table magic (LevelDB's kTableMagicNumber), the last 8 bytes of a table. */
#define SSTABLE_MAGIC 0xdb4775248b80fb57ull
/* The footer's size: two block handles padded to 40 bytes, then the magic. */
enum { SSTABLE_FOOTER_BYTES = 48 };

#endif
