/* io/webp.c — WebP files through libwebp (stills: WebPDecodeRGB(A)Into) and libwebpdemux (animations:
 * WebPAnimDecoder, each frame the composited RGBA canvas), as TF's DecodeWebP; sizes checked from the
 * header before decoding. The op that maps this onto tensors is io/webp_op.c. */
#include "tide/webp.h"

#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>

static const char *vp8_status(VP8StatusCode s) {
  switch (s) {
  case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
  case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
  case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
  case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
  case VP8_STATUS_SUSPENDED: return "suspended";
  case VP8_STATUS_USER_ABORT: return "aborted";
  case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data (truncated?)";
  default: return "unknown status";
  }
}

tide_status tide_webp_info_of(const char *op, const uint8_t *data, size_t size, int64_t max_bytes,
                              tide_webp_info *info) {
  if (size < 12 || memcmp(data, "RIFF", 4) != 0 || memcmp(data + 8, "WEBP", 4) != 0)
    return tide_set_error(TIDE_ERR_VALUE, "%s: not a WebP image (%lld bytes that do not start with \"RIFF....WEBP\")",
                          op, (long long)size);
  WebPBitstreamFeatures f;
  VP8StatusCode s = WebPGetFeatures(data, size, &f);
  if (s != VP8_STATUS_OK) return tide_set_error(TIDE_ERR_VALUE, "%s: invalid WebP data: %s", op, vp8_status(s));
  info->animated = f.has_animation != 0;
  info->height = f.height, info->width = f.width, info->frames = 1;
  info->channels = f.has_alpha || f.has_animation ? 4 : 3;
  if (info->animated) {
    WebPData wd = {data, size};
    WebPDemuxer *demux = WebPDemux(&wd);
    if (!demux) return tide_set_error(TIDE_ERR_VALUE, "%s: invalid WebP data: a bad animation container", op);
    info->frames = WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT);
    info->width = WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH), info->height = WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
    WebPDemuxDelete(demux);
    if (info->frames < 1) return tide_set_error(TIDE_ERR_VALUE, "%s: invalid WebP data: an animation of no frame", op);
  }
  if (info->height < 1 || info->width < 1)
    return tide_set_error(TIDE_ERR_VALUE, "%s: invalid WebP data: %lldx%lld pixels", op, (long long)info->height,
                          (long long)info->width);
  if (info->frames * info->height * info->width * info->channels > max_bytes)
    return tide_set_error(TIDE_ERR_VALUE, "%s: the WebP image is too large: %lld frames of %lldx%lld pixels", op,
                          (long long)info->frames, (long long)info->height, (long long)info->width);
  return TIDE_OK;
}

tide_status tide_webp_pixels(const char *op, const uint8_t *data, size_t size, const tide_webp_info *info,
                             uint8_t *out) {
  const size_t frame = (size_t)(info->height * info->width * info->channels);
  const int stride = (int)(info->width * info->channels);
  if (!info->animated) {
    uint8_t *r = info->channels == 4 ? WebPDecodeRGBAInto(data, size, out, frame, stride)
                                     : WebPDecodeRGBInto(data, size, out, frame, stride);
    if (!r) return tide_set_error(TIDE_ERR_VALUE, "%s: invalid WebP data: the image does not decode", op);
    return TIDE_OK;
  }
  WebPAnimDecoderOptions opts;
  if (!WebPAnimDecoderOptionsInit(&opts)) return tide_set_error(TIDE_ERR_VALUE, "%s: libwebp version mismatch", op);
  opts.color_mode = MODE_RGBA;
  opts.use_threads = 0;
  WebPData wd = {data, size};
  WebPAnimDecoder *dec = WebPAnimDecoderNew(&wd, &opts);
  if (!dec) return tide_set_error(TIDE_ERR_VALUE, "%s: invalid WebP data: the animation does not decode", op);
  WebPAnimInfo ai;
  tide_status st = TIDE_OK;
  if (!WebPAnimDecoderGetInfo(dec, &ai) || (int64_t)ai.canvas_width != info->width ||
      (int64_t)ai.canvas_height != info->height || (int64_t)ai.frame_count != info->frames)
    st = tide_set_error(TIDE_ERR_VALUE, "%s: invalid WebP data: the animation's header is inconsistent", op);
  for (int64_t k = 0; st == TIDE_OK && k < info->frames; k++) {
    uint8_t *buf = NULL;
    int timestamp = 0;
    if (!WebPAnimDecoderHasMoreFrames(dec) || !WebPAnimDecoderGetNext(dec, &buf, &timestamp) || !buf)
      st = tide_set_error(TIDE_ERR_VALUE, "%s: invalid WebP data: frame %lld of the animation does not decode", op,
                          (long long)k);
    else
      memcpy(out + k * frame, buf, frame);
  }
  WebPAnimDecoderDelete(dec);
  return st;
}
