/* io/jxl_op.c — the decode_jxl op (TF's DecodeJXL) over io/jxl.c's reader: the contents (a string scalar or
 * uint8 bytes) to a uint8 tensor sized from the file's header. */
#include "image_io.h"
#include "../core/infer_rank.h"
#include "tide/jxl.h"

/* decode_jxl(contents) -> uint8 [H, W, C]; n = channels: 0 (the file's), 1, 3 or 4. */
tide_status tide_infer_decode_jxl(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status s = tide_image_check_decode(def, in[0], a->n, TIDE_IMAGE_CHANNELS(0, 1, 3, 4), "0, 1, 3 or 4");
  if (s != TIDE_OK) return s;
  tide_image_infer_hwc(out[0], TIDE_UINT8, a->n);
  return TIDE_OK;
}

const tide_rank_rule tide_infer_decode_jxl_rank = {NULL, NULL, NULL};

tide_status tide_cpu_decode_jxl(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_image_bytes b;
  tide_status st = tide_image_bytes_of(def, in[0], &b);
  if (st) return st;
  tide_jxl_info info;
  st = tide_jxl_info_of(def->name, b.data, b.size, TIDE_IMAGE_MAX_BYTES, &info);
  if (st == TIDE_OK && a->n && a->n != info.channels)
    st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: the number of channels asked for (%lld) does not match the file's (%d)",
                   def->name, (long long)a->n, info.channels);
  if (st == TIDE_OK) {
    int64_t dims[3] = {info.height, info.width, info.channels};
    if (tide_tensor_init(out[0], TIDE_UINT8, 3, dims) != TIDE_OK)
      st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a %lldx%lldx%d image", def->name, (long long)info.height,
                     (long long)info.width, info.channels);
    else
      st = tide_jxl_pixels(def->name, b.data, b.size, &info, out[0]->data);
  }
  free(b.owned);
  return st;
}
