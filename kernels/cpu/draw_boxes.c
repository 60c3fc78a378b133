/* cpu/draw_boxes.c — tf.image.draw_bounding_boxes (TF's DrawBoundingBoxesV2): each box's
 * one-pixel outline drawn over a copy of the images, later boxes over earlier ones. */
#include "iter.h"
#include "../core/registry.h"

#include <string.h>

/* Store colour value v as element i of a float32 or float16 image. */
static inline void put(void *p, int dt, int64_t i, float v) {
  if (dt == TIDE_FLOAT32) ((float *)p)[i] = v;
  else ((uint16_t *)p)[i] = tide_float_to_half(v);
}

/* A box corner's pixel: v * (size - 1) in float, truncated toward zero as
 * TF's int64 conversion does; values past any pixel index are clamped (no
 * undefined conversion), NaN is -1 (with the clamp, never drawn). */
static inline int64_t corner(float v, int64_t size) {
  float f = v * (float)(size - 1);
  if (!(f == f)) return -1;
  if (f > 4e18f) return (int64_t)4e18;
  if (f < -4e18f) return -(int64_t)4e18;
  return (int64_t)f;
}

/* draw_bounding_boxes(images [B, H, W, C], boxes [B, nb, 4], colors [nc, >= C]):
 * box j's rows and columns are its normalized corners times (H - 1) and
 * (W - 1), truncated toward zero as TF's int64 conversion does; an inverted
 * box, or one wholly outside, is not drawn; edges outside are left out. */
tide_status tide_cpu_draw_boxes(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  tide_tensor tb = {0}, tc = {0};
  const tide_tensor *b, *c;
  tide_status st = tide_copy_strided(def->name, o, in[0]);
  if (!st) st = tide_contiguous_or_copy(def->name, in[1], &tb, &b);
  if (!st) st = tide_contiguous_or_copy(def->name, in[2], &tc, &c);
  if (st) goto done;
  int64_t batch = o->dims[0], h = o->dims[1], w = o->dims[2], depth = o->dims[3];
  int64_t nb = b->dims[1], ncolors = c->dims[0], ccols = c->dims[1];
  const float *boxes = b->data, *colors = c->data;
  for (int64_t e = 0; e < batch; e++) {
    for (int64_t j = 0; j < nb; j++) {
      const float *box = boxes + (e * nb + j) * 4;
      const float *color = colors + (j % ncolors) * ccols;
      int64_t r0 = corner(box[0], h), r1 = corner(box[2], h), c0 = corner(box[1], w), c1 = corner(box[3], w);
      if (r0 > r1 || c0 > c1) continue;                       /* inverted */
      if (r0 >= h || r1 < 0 || c0 >= w || c1 < 0) continue;   /* wholly outside */
      int64_t r0c = r0 > 0 ? r0 : 0, r1c = r1 < h - 1 ? r1 : h - 1;
      int64_t c0c = c0 > 0 ? c0 : 0, c1c = c1 < w - 1 ? c1 : w - 1;
      int64_t base = e * h * w * depth;
      for (int pass = 0; pass < 2; pass++) { /* the top and bottom rows */
        int64_t r = pass ? r1 : r0;
        if (pass ? r1 >= h : r0 < 0) continue;
        for (int64_t x = c0c; x <= c1c; x++)
          for (int64_t k = 0; k < depth; k++) put(o->data, o->dt, base + (r * w + x) * depth + k, color[k]);
      }
      for (int pass = 0; pass < 2; pass++) { /* the left and right columns */
        int64_t x = pass ? c1 : c0;
        if (pass ? c1 >= w : c0 < 0) continue;
        for (int64_t r = r0c; r <= r1c; r++)
          for (int64_t k = 0; k < depth; k++) put(o->data, o->dt, base + (r * w + x) * depth + k, color[k]);
      }
    }
  }
done:
  tide_tensor_release(&tb), tide_tensor_release(&tc);
  return st;
}
