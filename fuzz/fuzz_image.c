/* fuzz/fuzz_image.c — libFuzzer target for the image decoders (decode_png,
 * decode_jpeg, and decode_image, which picks one by the bytes' signature): any
 * bytes, as PNG with every channels choice (8-bit and 16-bit samples), as JPEG
 * with every channels, ratio and DCT choice and as any format, decode to
 * [H, W, C] with C as asked and H*W*C values within the size limit, or fail
 * with a message; never a crash, an overread or a huge allocation.
 *
 * Each op's inference and kernel are called as tide_op_run calls them, from the
 * decoder sources compiled in below (instrumented: coverage guides the fuzzer
 * into every format decode_image reaches, and ASan sees their reads); the
 * engine internals they use come from engine_shims.c. libpng, libjpeg-turbo,
 * giflib, libwebp and libjxl stay uninstrumented system libraries.
 * fuzz-sources: kernels/io/png.c kernels/io/jpeg.c kernels/io/decode_image_op.c kernels/io/bmp.c kernels/io/bmp_op.c kernels/io/gif.c kernels/io/webp.c kernels/io/webp_op.c kernels/io/jxl.c kernels/io/jxl_op.c fuzz/engine_shims.c
 * fuzz-libs: libpng libjpeg libwebpdemux libwebp libjxl -lgif */
#include "tide/tide.h"
#include "../kernels/io/image_io.h"

#include <string.h>

/* One decode, through the op's inference then its kernel (as tide_op_run runs them); the result checked against
 * what was asked. */
static void decode(const char *name, tide_infer_fn infer, tide_kernel_fn kernel, const tide_tensor *in, int channels,
                   int ratio, int dct, int dtype) {
  const tide_op_def def = {.name = name, .n_in = 1, .n_out = 1};
  tide_attrs a;
  memset(&a, 0, sizeof a);
  a.n = channels, a.m = ratio, a.axis = dct, a.dtype = dtype;
  tide_tensor out;
  memset(&out, 0, sizeof out);
  tide_tensor *outs[1] = {&out};
  const tide_tensor *ins[1] = {in};
  if (infer(&def, &a, 1, ins, 1, outs) != TIDE_OK) __builtin_trap(); /* every option asked here is valid */
  memset(&out, 0, sizeof out); /* the kernel gets a blank header it fills */
  if (kernel(&def, &a, 1, ins, 1, outs) != TIDE_OK) {
    if (!tide_last_error()[0]) __builtin_trap(); /* every refusal says why */
    tide_tensor_release(&out);                    /* as the dispatcher does after a failed kernel */
    return;
  }
  if (out.ndim != 3 || out.dt != dtype || (channels && out.dims[2] != channels)) __builtin_trap();
  if (out.dims[0] < 1 || out.dims[1] < 1 || out.dims[2] < 1 || out.dims[2] > 4) __builtin_trap();
  if (out.nelem != out.dims[0] * out.dims[1] * out.dims[2]) __builtin_trap();
  if (out.nelem * (int64_t)tide_dtype_size(dtype) > TIDE_IMAGE_MAX_BYTES) __builtin_trap();
  uint64_t sum = 0; /* every value read: a short buffer shows under ASan */
  const uint8_t *p = out.data;
  for (int64_t k = 0; k < out.nelem * (int64_t)tide_dtype_size(dtype); k++) sum += p[k];
  if (dtype == TIDE_INT32)
    for (int64_t k = 0; k < out.nelem; k++)
      if (((const int32_t *)out.data)[k] < 0 || ((const int32_t *)out.data)[k] > 65535) __builtin_trap();
  (void)sum;
  tide_tensor_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  /* the bytes as a 1-D uint8 tensor, in a buffer of exactly their size (ASan sees any overread) */
  tide_tensor in;
  memset(&in, 0, sizeof in);
  int64_t dims[1] = {(int64_t)size};
  if (tide_tensor_init_heap(&in, TIDE_UINT8, 1, dims) != TIDE_OK) return 0;
  memcpy((void *)in.data, data, size);
  /* the last byte picks the options (decoders ignore trailing bytes, so a mutation there keeps the image) */
  static const int png_channels[4] = {0, 1, 3, 4}, jpeg_channels[3] = {0, 1, 3}, ratios[4] = {1, 2, 4, 8};
  unsigned pick = data[size - 1];
  decode("decode_png", tide_infer_decode_png, tide_cpu_decode_png, &in, png_channels[pick & 3], 0, 0,
         pick & 4 ? TIDE_INT32 : TIDE_UINT8);
  decode("decode_jpeg", tide_infer_decode_jpeg, tide_cpu_decode_jpeg, &in, jpeg_channels[(pick >> 3) % 3],
         ratios[(pick >> 5) & 3], (pick >> 7) & 1, TIDE_UINT8);
  decode("decode_image", tide_infer_decode_image, tide_cpu_decode_image, &in, png_channels[(pick >> 2) & 3], 0, 0,
         TIDE_UINT8);
  tide_tensor_release(&in);
  return 0;
}
