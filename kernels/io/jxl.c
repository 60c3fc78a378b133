/* io/jxl.c — JPEG XL files through libjxl's decoder (one thread, no parallel runner): the basic info first,
 * checked against the size limit, then the first frame as uint8, as TF's DecodeJxl. The op that maps this
 * onto tensors is io/jxl_op.c. */
#include "tide/jxl.h"

#include <jxl/decode.h>

/* A decoder fed the whole file, listening for `events`; NULL when libjxl cannot make one. */
static JxlDecoder *open_decoder(const uint8_t *data, size_t size, int events) {
  JxlDecoder *dec = JxlDecoderCreate(NULL);
  if (!dec) return NULL;
  if (JxlDecoderSubscribeEvents(dec, events) != JXL_DEC_SUCCESS || JxlDecoderSetInput(dec, data, size) !=
      JXL_DEC_SUCCESS) {
    JxlDecoderDestroy(dec);
    return NULL;
  }
  JxlDecoderCloseInput(dec);
  return dec;
}

tide_status tide_jxl_info_of(const char *op, const uint8_t *data, size_t size, int64_t max_bytes,
                             tide_jxl_info *info) {
  JxlSignature sig = JxlSignatureCheck(data, size);
  if (sig != JXL_SIG_CODESTREAM && sig != JXL_SIG_CONTAINER)
    return tide_set_error(TIDE_ERR_VALUE, "%s: not a JPEG XL image (%lld bytes that start with neither a JPEG XL "
                          "codestream's nor its container's signature)", op, (long long)size);
  JxlDecoder *dec = open_decoder(data, size, JXL_DEC_BASIC_INFO);
  if (!dec) return tide_set_error(TIDE_ERR_MEMORY, "%s: libjxl could not make a decoder", op);
  JxlBasicInfo bi;
  JxlDecoderStatus s = JxlDecoderProcessInput(dec);
  tide_status st = TIDE_OK;
  if (s != JXL_DEC_BASIC_INFO || JxlDecoderGetBasicInfo(dec, &bi) != JXL_DEC_SUCCESS)
    st = tide_set_error(TIDE_ERR_VALUE, "%s: invalid JPEG XL data: %s", op,
                        s == JXL_DEC_NEED_MORE_INPUT ? "the header is truncated" : "the header does not decode");
  JxlDecoderDestroy(dec);
  if (st) return st;
  int64_t w = bi.xsize, h = bi.ysize;
  if (bi.orientation >= JXL_ORIENT_TRANSPOSE) w = bi.ysize, h = bi.xsize; /* (output is oriented) */
  info->height = h, info->width = w;
  info->channels = (int)bi.num_color_channels + (bi.alpha_bits > 0 ? 1 : 0);
  if (h < 1 || w < 1 || info->channels < 1 || info->channels > 4)
    return tide_set_error(TIDE_ERR_VALUE, "%s: invalid JPEG XL data: %lldx%lld pixels of %d channels", op,
                          (long long)h, (long long)w, info->channels);
  if (h * w * info->channels > max_bytes)
    return tide_set_error(TIDE_ERR_VALUE, "%s: the JPEG XL image is too large: %lldx%lld pixels of %d channels", op,
                          (long long)h, (long long)w, info->channels);
  return TIDE_OK;
}

tide_status tide_jxl_pixels(const char *op, const uint8_t *data, size_t size, const tide_jxl_info *info,
                            uint8_t *out) {
  JxlDecoder *dec = open_decoder(data, size, JXL_DEC_FULL_IMAGE);
  if (!dec) return tide_set_error(TIDE_ERR_MEMORY, "%s: libjxl could not make a decoder", op);
  JxlPixelFormat format = {(uint32_t)info->channels, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
  const size_t want = (size_t)(info->height * info->width * info->channels);
  tide_status st = TIDE_OK;
  for (;;) {
    JxlDecoderStatus s = JxlDecoderProcessInput(dec);
    if (s == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
      size_t n = 0;
      if (JxlDecoderImageOutBufferSize(dec, &format, &n) != JXL_DEC_SUCCESS || n != want) {
        st = tide_set_error(TIDE_ERR_VALUE, "%s: invalid JPEG XL data: the frame's size does not match the header's "
                            "%lldx%lldx%d", op, (long long)info->height, (long long)info->width, info->channels);
        break;
      }
      if (JxlDecoderSetImageOutBuffer(dec, &format, out, want) != JXL_DEC_SUCCESS) {
        st = tide_set_error(TIDE_ERR_VALUE, "%s: libjxl refused the output buffer", op);
        break;
      }
    } else if (s == JXL_DEC_FULL_IMAGE) {
      break; /* the first frame (TF's DecodeJxl gives one image) */
    } else {
      st = tide_set_error(TIDE_ERR_VALUE, "%s: invalid JPEG XL data: %s", op,
                          s == JXL_DEC_NEED_MORE_INPUT ? "the codestream is truncated"
                          : s == JXL_DEC_SUCCESS ? "no image in the file" : "the codestream does not decode");
      break;
    }
  }
  JxlDecoderDestroy(dec);
  return st;
}
