/* io/wav_op.c — the decode_wav op (TF's DecodeWav) over io/wav.c's reader: the contents (a string scalar or
 * uint8 bytes) to float32 audio [samples, channels] and the int32 sample rate. */
#include "image_io.h"
#include "../core/infer_rank.h"
#include "tide/wav.h"

/* decode_wav(contents) -> audio float32 [samples, channels], sample_rate int32 []; n = desired_channels,
 * m = desired_samples (-1: the file's). */
tide_status tide_infer_decode_wav(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (!tide_image_contents_ok(in[0]))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: contents must be a scalar string tensor, a Lua string or the bytes "
                     "as a 1-D uint8 tensor, got a %d-D %s tensor", def->name, in[0]->ndim, tide_dtype_name(in[0]->dt));
  if (a->n < -1 || a->n > 65535)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: desired_channels must be -1 (the file's) or a count up to 65535, got %lld",
                     def->name, (long long)a->n);
  if (a->m < -1 || a->m > 2147483647)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: desired_samples must be -1 (the file's) or a count, got %lld", def->name,
                     (long long)a->m);
  int64_t dims[2] = {a->m >= 0 ? a->m : -1, a->n >= 0 ? a->n : -1};
  tide_tensor_set_contiguous_layout(out[0], TIDE_FLOAT32, 2, dims);
  tide_tensor_set_contiguous_layout(out[1], TIDE_INT32, 0, NULL);
  return TIDE_OK;
}

/* any rank of bytes stands for one file: the outputs stay [samples, channels] and a scalar rate */
const tide_rank_rule tide_infer_decode_wav_rank = {NULL, NULL, tide_infer_decode_wav};

tide_status tide_cpu_decode_wav(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_image_bytes b;
  tide_status st = tide_image_bytes_of(def, in[0], &b);
  if (st) return st;
  tide_wav_info info;
  st = tide_wav_header(def->name, b.data, b.size, &info);
  if (st == TIDE_OK) {
    int64_t samples = a->m >= 0 ? a->m : info.sample_count, channels = a->n >= 0 ? a->n : info.channels;
    int64_t dims[2] = {samples, channels};
    if (samples * channels > ((int64_t)1 << 31))
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: the audio is too large: %lld samples of %lld channels", def->name,
                     (long long)samples, (long long)channels);
    else if (tide_tensor_init(out[0], TIDE_FLOAT32, 2, dims) != TIDE_OK ||
             tide_tensor_init(out[1], TIDE_INT32, 0, NULL) != TIDE_OK)
      st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %lld samples of %lld channels", def->name,
                     (long long)samples, (long long)channels);
    else {
      tide_wav_samples(b.data, &info, samples, channels, (float *)out[0]->data);
      *(int32_t *)out[1]->data = (int32_t)info.sample_rate;
    }
  }
  free(b.owned);
  return st;
}
