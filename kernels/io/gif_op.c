/* io/gif_op.c — the decode_gif op (TF's DecodeGif) over io/gif.c's reader: the contents (a string scalar or
 * uint8 bytes) to a uint8 [frames, H, W, 3] tensor sized from the file. */
#include "image_io.h"
#include "../core/infer_rank.h"
#include "tide/gif.h"

/* decode_gif(contents) -> uint8 [frames, H, W, 3]. */
tide_status tide_infer_decode_gif(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (!tide_image_contents_ok(in[0]))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: contents must be a scalar string tensor, a Lua string or the bytes "
                     "as a 1-D uint8 tensor, got a %d-D %s tensor", def->name, in[0]->ndim, tide_dtype_name(in[0]->dt));
  int64_t dims[4] = {-1, -1, -1, 3};
  tide_tensor_set_contiguous_layout(out[0], TIDE_UINT8, 4, dims);
  return TIDE_OK;
}

const tide_rank_rule tide_infer_decode_gif_rank = {NULL, NULL, NULL};

tide_status tide_cpu_decode_gif(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_image_bytes b;
  tide_status st = tide_image_bytes_of(def, in[0], &b);
  if (st) return st;
  tide_gif *gif = NULL;
  int64_t frames = 0, h = 0, w = 0;
  st = tide_gif_read(def->name, b.data, b.size, TIDE_IMAGE_MAX_BYTES, &gif, &frames, &h, &w);
  if (st == TIDE_OK) {
    int64_t dims[4] = {frames, h, w, 3};
    if (tide_tensor_init(out[0], TIDE_UINT8, 4, dims) != TIDE_OK)
      st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %lld frames of %lldx%lld", def->name, (long long)frames,
                     (long long)h, (long long)w);
    else
      st = tide_gif_pixels(def->name, gif, out[0]->data);
  }
  tide_gif_free(gif);
  free(b.owned);
  return st;
}
