/* io/wav.c — the WAV reader under decode_wav: TF's wav_io (DecodeLin16WaveAsFloatVector) step by step, each
 * read checked against the bytes, so a file TF refuses is refused here with TF's words. */
#include "tide/wav.h"

#include <string.h>

#define SHORT "Data too short when trying to read string"

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* The n bytes at *off, or NULL when fewer are left (TF's "data too short"); *off moves past them. */
static const uint8_t *take(const uint8_t *data, size_t size, uint64_t *off, size_t n) {
  if (*off > size || size - *off < n) return NULL;
  const uint8_t *p = data + *off;
  *off += n;
  return p;
}

static tide_status expect_text(const char *op, const uint8_t *data, size_t size, uint64_t *off, const char *want) {
  const uint8_t *p = take(data, size, off, 4);
  if (!p) return tide_set_error(TIDE_ERR_VALUE, "%s: %s", op, SHORT);
  if (memcmp(p, want, 4) != 0)
    return tide_set_error(TIDE_ERR_VALUE, "%s: Header mismatch: Expected %s but found %.4s", op, want, (const char *)p);
  return TIDE_OK;
}

tide_status tide_wav_header(const char *op, const uint8_t *data, size_t size, tide_wav_info *info) {
  uint64_t off = 0;
  const uint8_t *p;
  tide_status st;
  memset(info, 0, sizeof *info);
  if ((st = expect_text(op, data, size, &off, "RIFF"))) return st;
  if (!take(data, size, &off, 4)) return tide_set_error(TIDE_ERR_VALUE, "%s: %s", op, SHORT); /* RIFF size: unused, as TF */
  if ((st = expect_text(op, data, size, &off, "WAVE"))) return st;
  if ((st = expect_text(op, data, size, &off, "fmt "))) return st;
  if (!(p = take(data, size, &off, 4))) return tide_set_error(TIDE_ERR_VALUE, "%s: %s", op, SHORT);
  uint32_t fmt_size = le32(p);
  if (fmt_size != 16 && fmt_size != 18)
    return tide_set_error(TIDE_ERR_VALUE, "%s: Bad format chunk size for WAV: Expected 16 or 18, but got%u", op, fmt_size);
  if (!(p = take(data, size, &off, 16))) return tide_set_error(TIDE_ERR_VALUE, "%s: %s", op, SHORT);
  uint16_t format = le16(p), channels = le16(p + 2), block = le16(p + 12), bits = le16(p + 14);
  uint32_t rate = le32(p + 4), byte_rate = le32(p + 8);
  if (format != 1)
    return tide_set_error(TIDE_ERR_VALUE, "%s: Bad audio format for WAV: Expected 1 (PCM), but got%u", op, format);
  if (channels < 1)
    return tide_set_error(TIDE_ERR_VALUE, "%s: Bad number of channels for WAV: Expected at least 1, but got %u", op, channels);
  if (bits != 16) return tide_set_error(TIDE_ERR_VALUE, "%s: Can only read 16-bit WAV files, but received %u", op, bits);
  uint32_t want_block = (uint32_t)bits * channels / 8;
  if (block != want_block)
    return tide_set_error(TIDE_ERR_VALUE, "%s: Bad bytes per sample in WAV header: Expected %u but got %u", op, want_block, block);
  uint64_t want_rate = (uint64_t)block * rate;
  if (byte_rate != want_rate)
    return tide_set_error(TIDE_ERR_VALUE, "%s: Bad bytes per second in WAV header: Expected %llu but got %u (sample_rate=%u, "
                     "bytes_per_sample=%u)", op, (unsigned long long)want_rate, byte_rate, rate, block);
  if (fmt_size == 18) off += 2; /* the extension's size field, skipped unread as TF does */
  int found = 0;
  while (off < size) {
    const uint8_t *id = take(data, size, &off, 4);
    if (!id) return tide_set_error(TIDE_ERR_VALUE, "%s: %s", op, SHORT);
    if (!(p = take(data, size, &off, 4))) return tide_set_error(TIDE_ERR_VALUE, "%s: %s", op, SHORT);
    uint32_t chunk = le32(p);
    if (chunk > 2147483647u)
      return tide_set_error(TIDE_ERR_VALUE, "%s: WAV data chunk '%.4s' is too large: %u bytes, but the limit is 2147483647",
                       op, (const char *)id, chunk);
    if (memcmp(id, "data", 4) == 0) {
      if (found) return tide_set_error(TIDE_ERR_VALUE, "%s: More than one data chunk found in WAV", op);
      found = 1;
      uint64_t frames = chunk / block, bytes = frames * channels * 2;
      if (off > size || size - off < bytes) return tide_set_error(TIDE_ERR_VALUE, "%s: %s", op, SHORT);
      info->sample_count = (int64_t)frames;
      info->data_offset = (int64_t)off;
      off += bytes; /* TF reads the whole frames only: a trailing odd byte starts the next chunk's header */
    } else {
      off += chunk; /* past the end: the walk stops there, as TF's */
    }
  }
  if (!found) return tide_set_error(TIDE_ERR_VALUE, "%s: No data chunk found in WAV", op);
  info->channels = channels;
  info->sample_rate = rate;
  return TIDE_OK;
}

void tide_wav_samples(const uint8_t *data, const tide_wav_info *info, int64_t samples, int64_t channels, float *out) {
  const uint8_t *src = data + info->data_offset;
  for (int64_t s = 0; s < samples; s++) {
    for (int64_t c = 0; c < channels; c++) {
      float v = 0.0f;
      if (s < info->sample_count) {
        int64_t from = c < info->channels ? c : info->channels - 1;
        const uint8_t *q = src + 2 * (s * info->channels + from);
        v = (float)(int16_t)le16(q) / 32768.0f;
      }
      out[s * channels + c] = v;
    }
  }
}
