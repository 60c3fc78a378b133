/* cpu/distorted_box.c — tf.image.sample_distorted_bounding_box and its stateless form:
 * TF's rejection sampler of a crop (sample_distorted_bounding_box_op.cc) reading one
 * stream of Philox words as TF's SimplePhilox does, so a seed pair gives TF's crop. */
#include "../core/internal.h"
#include "../core/registry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* TF's GenerateKey (as cpu/random.c's stateless draws). */
#define TF_SEED_KEY ((uint64_t)0x02461e29u << 32 | 0x3ec8f720u)

/* A stream of 32-bit words: Philox blocks (key, counter + i, hi), each used whole, in order. */
typedef struct words { uint64_t key, counter, hi; uint32_t buf[4]; int used; } words;

static uint32_t next_word(words *w) {
  if (w->used == 4) {
    tide_philox4x32(w->key, w->counter++, w->hi, w->buf);
    w->used = 0;
  }
  return w->buf[w->used++];
}

/* TF's RandFloat: the word's low 23 bits as a float in [0, 1). */
static float rand_float(words *w) { return (float)(next_word(w) & 0x7fffffu) * 0x1p-23f; }

/* TF's ExactUniformInt: an integer in [0, n), rejecting the words that would bias it. */
static uint32_t uniform(words *w, uint32_t n) {
  if (n == 0) return next_word(w) * n;
  if ((n & (n - 1)) == 0) return next_word(w) & (n - 1);
  uint32_t rem = (UINT32_MAX % n) + 1, r;
  do r = next_word(w); while (r < rem);
  return r % n;
}

typedef struct rect { int x0, y0, x1, y1; } rect;

static float area(rect r) { return (float)((r.x1 - r.x0) * (r.y1 - r.y0)); }

/* TF's SatisfiesOverlapConstraints: the crop covers at least `covered` of some box of a pixel or more. */
static bool covers(rect crop, float covered, const rect *boxes, int64_t n) {
  if (area(crop) < 1.0f) return false;
  for (int64_t i = 0; i < n; i++) {
    float a = area(boxes[i]);
    if (a < 1.0f) continue;
    rect in = {crop.x0 > boxes[i].x0 ? crop.x0 : boxes[i].x0, crop.y0 > boxes[i].y0 ? crop.y0 : boxes[i].y0,
               crop.x1 < boxes[i].x1 ? crop.x1 : boxes[i].x1, crop.y1 < boxes[i].y1 ? crop.y1 : boxes[i].y1};
    if (in.x0 > in.x1 || in.y0 > in.y1) in = (rect){0, 0, 0, 0};
    if (area(in) / a >= covered) return true;
  }
  return false;
}

/* TF's GenerateRandomCrop, its float arithmetic and rounding (lrintf) kept. */
static bool random_crop(int width, int height, float min_rel, float max_rel, float aspect, words *w, rect *out) {
  if (max_rel <= 0.0f || aspect <= 0.0f || width <= 0 || height <= 0 || min_rel > max_rel) return false;
  const float min_area = min_rel * (float)width * (float)height, max_area = max_rel * (float)width * (float)height;
  int h = (int)lrintf(sqrtf(min_area / aspect));
  int max_h = (int)lrintf(sqrtf(max_area / aspect));
  if (lrintf((float)max_h * aspect) > width) {
    const float eps = 0.0000001f;
    max_h = (int)((width + 0.5 - (double)eps) / (double)aspect);
    if (lrintf((float)max_h * aspect) > width) max_h -= 1;
  }
  if (max_h > height) max_h = height;
  if (h >= max_h) h = max_h;
  if (h < max_h) h += (int)uniform(w, (uint32_t)(max_h - h + 1));
  int wd = (int)lrintf((float)h * aspect);
  float a = (float)(wd * h);
  if (a < min_area) {
    h += 1;
    wd = (int)lrintf((float)h * aspect);
    a = (float)(wd * h);
  }
  if (a > max_area) {
    h -= 1;
    wd = (int)lrintf((float)h * aspect);
    a = (float)(wd * h);
  }
  if (a < min_area || a > max_area || wd > width || h > height || wd <= 0 || h <= 0) return false;
  int y = h < height ? (int)uniform(w, (uint32_t)(height - h)) : 0;
  int x = wd < width ? (int)uniform(w, (uint32_t)(width - wd)) : 0;
  *out = (rect){x, y, x + wd, y + h};
  return true;
}

static int64_t int_at(const tide_tensor *t, int64_t i) {
  const char *p = (const char *)t->data + i * t->strides[0] * (int64_t)tide_dtype_size_unchecked(t->dt);
  return t->dt == TIDE_INT32 ? *(const int32_t *)p : *(const int64_t *)p;
}

static void put(tide_tensor *t, int64_t i, int64_t v) {
  if (t->dt == TIDE_INT32) ((int32_t *)t->data)[i] = (int32_t)v;
  else ((int64_t *)t->data)[i] = v;
}

/* See ops.def: the crop of TF's sampler, or the whole image when no attempt succeeds. */
tide_status tide_cpu_distorted_box(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *size = in[0];
  int64_t height = int_at(size, 0), width = int_at(size, 1);
  if (height < 0 || height >= INT32_MAX || width < 0 || width >= INT32_MAX)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: image height and width must be in [0, 2^31 - 1), got %lld x %lld", def->name,
                     (long long)height, (long long)width);
  float covered = *(const float *)in[2]->data;
  if (!(covered >= 0))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: min_object_covered must be non-negative, got %g", def->name, covered);
  tide_tensor tb = {0};
  const tide_tensor *b;
  tide_status st = tide_contiguous_or_copy(def->name, in[1], &tb, &b);
  if (st) return st;
  int64_t nb = b->nelem / 4;
  rect *boxes = malloc((size_t)(nb + 1) * sizeof *boxes);
  if (!boxes) {
    tide_tensor_release(&tb);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  }
  const float *bd = b->data;
  for (int64_t i = 0; i < nb; i++) {
    for (int k = 0; k < 4; k++)
      if (!(bd[4 * i + k] >= 0.0f && bd[4 * i + k] <= 1.0f)) {
        st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: all bounding box coordinates must be in [0.0, 1.0], got %g", def->name,
                       bd[4 * i + k]);
        goto done;
      }
    boxes[i] = (rect){(int)(bd[4 * i + 1] * (float)width), (int)(bd[4 * i] * (float)height),
                      (int)(bd[4 * i + 3] * (float)width), (int)(bd[4 * i + 2] * (float)height)};
  }
  const rect image = {0, 0, (int)width, (int)height};
  if (nb == 0) {
    if (!a->m) {
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: no bounding boxes provided as input; pass use_image_if_no_bounding_boxes = "
                     "true to sample from the whole image", def->name);
      goto done;
    }
    boxes[nb++] = image;
  }
  words w = {a->rng_key, a->rng_counter, 0, {0}, 4};
  if (def->id == TIDE_OP_STATELESS_SAMPLE_DISTORTED_BOUNDING_BOX) {
    uint64_t s[2] = {(uint64_t)int_at(in[3], 0), (uint64_t)int_at(in[3], 1)};
    uint32_t mix[4];
    tide_philox4x32(TF_SEED_KEY, s[0], s[1], mix);
    w.key = (uint64_t)mix[1] << 32 | mix[0];
    w.counter = 0;
    w.hi = (uint64_t)mix[3] << 32 | mix[2];
  }
  const float min_area = (float)a->scalars[0], max_area = (float)a->scalars[1];
  const float min_aspect = (float)a->scalars[2], max_aspect = (float)a->scalars[3];
  rect crop = image;
  bool found = false;
  for (int64_t i = 0; i < a->n && !found; i++) {
    float aspect = rand_float(&w) * (max_aspect - min_aspect) + min_aspect;
    rect r;
    if (random_crop((int)width, (int)height, min_area, max_area, aspect, &w, &r) && covers(r, covered, boxes, nb)) {
      crop = r;
      found = true;
    }
  }
  put(out[0], 0, crop.y0), put(out[0], 1, crop.x0), put(out[0], 2, 0);
  put(out[1], 0, crop.y1 - crop.y0), put(out[1], 1, crop.x1 - crop.x0), put(out[1], 2, -1);
  float *bb = out[2]->data;
  bb[0] = (float)crop.y0 / (float)height, bb[1] = (float)crop.x0 / (float)width;
  bb[2] = (float)crop.y1 / (float)height, bb[3] = (float)crop.x1 / (float)width;
done:
  free(boxes);
  tide_tensor_release(&tb);
  return st;
}
