/* core/infer_image.c — shape and dtype inference of tide.image's box ops:
 * non_max_suppression (and its overlaps form), combined_non_max_suppression, draw_bounding_boxes. */
#include "infer_rank.h"

enum { NMS_PAD = 1, NMS_TILED = 2 }; /* non_max_suppression's mode bits (ops.def) */

/* t must be float32 (the box ops' one dtype; tide.image casts others). */
static tide_status check_f32(const tide_op_def *def, const tide_tensor *t, const char *what) {
  if (t->dt == TIDE_FLOAT32) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s must be float32, got %s (use :cast(\"float32\"))", def->name, what,
                   tide_dtype_name(t->dt));
}

/* Known dims a and b differ (an unknown dim agrees with anything). */
static bool differ(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }

/* non_max_suppression / _overlaps(boxes or overlaps, scores) -> selected int32
 * [M] (M = n when padded, else known when the kernel runs), their scores
 * float32 [M], the count selected int32 []; with NMS_TILED a batch: [B, n], [B, n], [B]. */
tide_status tide_infer_nms(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                           int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *b = in[0], *s = in[1];
  bool overlaps = def->id == TIDE_OP_NON_MAX_SUPPRESSION_OVERLAPS;
  bool batched = !overlaps && (a->m & NMS_TILED);
  const char *what = overlaps ? "overlaps" : "boxes";
  tide_status st = check_f32(def, b, what);
  if (!st) st = check_f32(def, s, "scores");
  if (st) return st;
  char sb[128], ss[128];
  int rank = batched ? 3 : 2;
  if (b->ndim != rank)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %s must be %d-D%s, got shape %s", def->name, what, rank,
                     overlaps ? " [num_boxes, num_boxes]" : batched ? " [batch, num_boxes, 4]" : " [num_boxes, 4]",
                     TIDE_SHAPE_STR(sb, b));
  if (overlaps ? differ(b->dims[0], b->dims[1]) : differ(b->dims[rank - 1], 4))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %s %s", def->name, overlaps ? "overlaps must be square, got shape"
                     : "boxes must have 4 columns, got shape", TIDE_SHAPE_STR(sb, b));
  if (s->ndim != rank - 1 || differ(s->dims[rank - 2], b->dims[rank - 2]) || (batched && differ(s->dims[0], b->dims[0])))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: scores %s do not fit %s %s (one score per box)", def->name,
                     TIDE_SHAPE_STR(ss, s), what, TIDE_SHAPE_STR(sb, b));
  if (a->n < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: max_output_size must be non-negative, got %lld", def->name, (long long)a->n);
  if (!overlaps && !(a->scalars[0] >= 0 && a->scalars[0] <= 1))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: iou_threshold must be in [0, 1], got %g", def->name, a->scalars[0]);
  if (!(a->scalars[2] >= 0))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: soft_nms_sigma must be >= 0, got %g", def->name, a->scalars[2]);
  int64_t m = (a->m & (NMS_PAD | NMS_TILED)) ? a->n : -1, dims[2] = {batched ? b->dims[0] : m, m};
  int r = batched ? 2 : 1;
  tide_tensor_set_contiguous_layout(out[0], TIDE_INT32, r, batched ? dims : &m);
  tide_tensor_set_contiguous_layout(out[1], TIDE_FLOAT32, r, batched ? dims : &m);
  tide_tensor_set_contiguous_layout(out[2], TIDE_INT32, batched ? 1 : 0, dims);
  return TIDE_OK;
}

/* combined_non_max_suppression(boxes [B, N, q, 4], scores [B, N, K]) ->
 * boxes [B, T, 4], scores [B, T], classes [B, T], valid int32 [B]; T =
 * max_total_size, or with pad_per_class min(max_output_size_per_class * K, max_total_size). */
tide_status tide_infer_combined_nms(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                    int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *b = in[0], *s = in[1];
  tide_status st = check_f32(def, b, "boxes");
  if (!st) st = check_f32(def, s, "scores");
  if (st) return st;
  char sb[128], ss[128];
  if (b->ndim != 4)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: boxes must be 4-D [batch, num_boxes, q, 4], got shape %s", def->name,
                     TIDE_SHAPE_STR(sb, b));
  if (s->ndim != 3)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: scores must be 3-D [batch, num_boxes, num_classes], got shape %s", def->name,
                     TIDE_SHAPE_STR(ss, s));
  if (differ(b->dims[3], 4))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the fourth dimension of boxes must be 4, got shape %s", def->name,
                     TIDE_SHAPE_STR(sb, b));
  if (differ(b->dims[0], s->dims[0]) || differ(b->dims[1], s->dims[1]))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: boxes %s and scores %s must agree in batch and num_boxes", def->name,
                     TIDE_SHAPE_STR(sb, b), TIDE_SHAPE_STR(ss, s));
  if (b->dims[2] >= 0 && b->dims[2] != 1 && differ(b->dims[2], s->dims[2]))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the third dimension of boxes must be either 1 or num_classes, got boxes %s "
                     "and scores %s", def->name, TIDE_SHAPE_STR(sb, b), TIDE_SHAPE_STR(ss, s));
  if (a->n <= 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: max_output_size_per_class must be positive, got %lld", def->name,
                     (long long)a->n);
  if (a->m <= 0) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: max_total_size must be > 0, got %lld", def->name, (long long)a->m);
  if (!(a->scalars[0] >= 0 && a->scalars[0] <= 1))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: iou_threshold must be in [0, 1], got %g", def->name, a->scalars[0]);
  int64_t t = a->m;
  if (a->nints >= 1 && a->ints[0]) { /* pad_per_class */
    int64_t k = s->dims[2];
    if (k < 0) t = -1;
    else if (a->n <= a->m / (k > 0 ? k : 1)) t = a->n * k < a->m ? a->n * k : a->m;
  }
  int64_t d3[3] = {b->dims[0], t, 4};
  tide_tensor_set_contiguous_layout(out[0], TIDE_FLOAT32, 3, d3);
  tide_tensor_set_contiguous_layout(out[1], TIDE_FLOAT32, 2, d3);
  tide_tensor_set_contiguous_layout(out[2], TIDE_FLOAT32, 2, d3);
  tide_tensor_set_contiguous_layout(out[3], TIDE_INT32, 1, d3);
  return TIDE_OK;
}

/* draw_bounding_boxes(images [B, H, W, C], boxes [B, nb, 4], colors [nc, >= C]) -> images' shape and dtype. */
tide_status tide_infer_draw_boxes(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *b = in[1], *c = in[2];
  tide_status st = x->dt == TIDE_FLOAT32 || x->dt == TIDE_FLOAT16
                      ? TIDE_OK
                      : TIDE_FAIL(TIDE_ERR_DTYPE, "%s: images must be float32 or float16, got %s (convert them with "
                                  "tide.image.convert_image_dtype)", def->name, tide_dtype_name(x->dt));
  if (!st) st = check_f32(def, b, "boxes");
  if (!st) st = check_f32(def, c, "colors");
  if (st) return st;
  char sx[128], sb[128], sc[128];
  if (x->ndim != 4)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the rank of the images should be 4 [batch, height, width, depth], got "
                     "shape %s", def->name, TIDE_SHAPE_STR(sx, x));
  int64_t depth = x->dims[3];
  if (depth >= 0 && depth != 1 && depth != 3 && depth != 4)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA), got shape %s",
                     def->name, TIDE_SHAPE_STR(sx, x));
  if (b->ndim != 3 || differ(b->dims[2], 4))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: boxes must be 3-D [batch, num_bounding_boxes, 4], got shape %s", def->name,
                     TIDE_SHAPE_STR(sb, b));
  if (differ(b->dims[0], x->dims[0]))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the batch sizes should be the same: images %s, boxes %s", def->name,
                     TIDE_SHAPE_STR(sx, x), TIDE_SHAPE_STR(sb, b));
  if (c->ndim != 2 || (c->dims[1] >= 0 && depth >= 0 && c->dims[1] < depth) || c->dims[0] == 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: colors must be a non-empty 2-D matrix with equal or more channels than the "
                     "images %s, got shape %s", def->name, TIDE_SHAPE_STR(sx, x), TIDE_SHAPE_STR(sc, c));
  tide_tensor_set_contiguous_layout(out[0], x->dt, 4, x->dims);
  return TIDE_OK;
}

/* (stateless_)sample_distorted_bounding_box(image_size [3], boxes [B, N, 4],
 * min_object_covered [][, seed [2]]) -> begin [3], size [3] of image_size's
 * dtype, bboxes float32 [1, 1, 4]; the attributes checked as TF's constructor does. */
tide_status tide_infer_distorted_box(const tide_op_def *def, const tide_attrs *a, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  const tide_tensor *size = in[0], *b = in[1], *cover = in[2];
  char s[128];
  if (size->dt != TIDE_INT32 && size->dt != TIDE_INT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: image_size must be int32 or int64, got %s", def->name, tide_dtype_name(size->dt));
  if (size->ndim != 1 || differ(size->dims[0], 3))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: image_size must be [height, width, channels], got shape %s", def->name,
                     TIDE_SHAPE_STR(s, size));
  tide_status st = check_f32(def, b, "bounding_boxes");
  if (!st) st = check_f32(def, cover, "min_object_covered");
  if (st) return st;
  if (b->ndim != 3 || differ(b->dims[2], 4))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: bounding_boxes must be 3-D [batch, num_boxes, 4], got shape %s", def->name,
                     TIDE_SHAPE_STR(s, b));
  if (cover->ndim != 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: min_object_covered must be 0-D, got shape %s", def->name,
                     TIDE_SHAPE_STR(s, cover));
  if (def->id == TIDE_OP_STATELESS_SAMPLE_DISTORTED_BOUNDING_BOX) {
    const tide_tensor *seed = in[3];
    if ((seed->dt != TIDE_INT32 && seed->dt != TIDE_INT64) || seed->ndim != 1 || differ(seed->dims[0], 2))
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: seed must be an int32 or int64 tensor of shape [2], got %s %s", def->name,
                       tide_dtype_name(seed->dt), TIDE_SHAPE_STR(s, seed));
  }
  TIDE_UNUSED(n_in);
  if (a->n <= 0) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: max_attempts must be positive, got %lld", def->name, (long long)a->n);
  const double *r = a->scalars; /* area_range, then aspect_ratio_range */
  if (!(r[0] > 0 && r[1] > 0 && r[0] <= 1 && r[1] <= 1))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: area_range must lie in (0, 1], got [%g, %g]", def->name, r[0], r[1]);
  if (!(r[2] > 0 && r[3] > 0))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: aspect_ratio_range must be positive, got [%g, %g]", def->name, r[2], r[3]);
  int64_t three = 3, box[3] = {1, 1, 4};
  tide_tensor_set_contiguous_layout(out[0], size->dt, 1, &three);
  tide_tensor_set_contiguous_layout(out[1], size->dt, 1, &three);
  tide_tensor_set_contiguous_layout(out[2], TIDE_FLOAT32, 3, box);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* The ranks the inputs have (the mode says whether non_max_suppression is batched). */
static int nms_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  int base = (def->id == TIDE_OP_NON_MAX_SUPPRESSION && (a->m & NMS_TILED)) ? 3 : 2;
  return i == 0 ? base : base - 1;
}
static int combined_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 0 ? 4 : 3;
}
static int draw_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 0 ? 4 : i == 1 ? 3 : 2;
}
static int distorted_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 1 ? 3 : i == 2 ? 0 : 1;
}
/* Each input has one valid rank, so the stand-ins' output shapes hold. */
const tide_rank_rule tide_infer_nms_rank = {nms_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_combined_nms_rank = {combined_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_draw_boxes_rank = {draw_rank, tide_rank_keeps, NULL};
const tide_rank_rule tide_infer_distorted_box_rank = {distorted_rank, tide_rank_keeps, NULL};
