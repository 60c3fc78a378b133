/* cpu/nms.c — non-max suppression as TF computes it: the greedy NonMaxSuppressionV5
 * (hard or soft, on boxes or an overlaps matrix), the tiled non_max_suppression_padded
 * (its greedy fixpoint, with its IOU and rules), and CombinedNonMaxSuppression. */
#include "../core/internal.h"
#include "../core/registry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NMS_PAD = 1, NMS_TILED = 2 }; /* the mode bits (ops.def) */

static inline float fmin2(float a, float b) { return a < b ? a : b; }
static inline float fmax2(float a, float b) { return a > b ? a : b; }

/* TF's IOU (non_max_suppression_op.cc): corners in either order, 0 when
 * either box has no area. */
static float iou_tf(const float *bi, const float *bj) {
  float ymin_i = fmin2(bi[0], bi[2]), xmin_i = fmin2(bi[1], bi[3]);
  float ymax_i = fmax2(bi[0], bi[2]), xmax_i = fmax2(bi[1], bi[3]);
  float ymin_j = fmin2(bj[0], bj[2]), xmin_j = fmin2(bj[1], bj[3]);
  float ymax_j = fmax2(bj[0], bj[2]), xmax_j = fmax2(bj[1], bj[3]);
  float area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
  float area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
  if (area_i <= 0 || area_j <= 0) return 0;
  float iy0 = fmax2(ymin_i, ymin_j), ix0 = fmax2(xmin_i, xmin_j);
  float iy1 = fmin2(ymax_i, ymax_j), ix1 = fmin2(xmax_i, xmax_j);
  float inter = fmax2(iy1 - iy0, 0) * fmax2(ix1 - ix0, 0);
  return inter / (area_i + area_j - inter);
}

/* The tiled form's _bbox_overlap: a (the earlier box) against b, with its epsilon. */
static float iou_tiled(const float *a, const float *b) {
  float ix0 = fmax2(a[1], b[1]), ix1 = fmin2(a[3], b[3]);
  float iy0 = fmax2(a[0], b[0]), iy1 = fmin2(a[2], b[2]);
  float inter = fmax2(ix1 - ix0, 0) * fmax2(iy1 - iy0, 0);
  float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
  float uni = area_a + area_b - inter + 1e-8f;
  return inter / uni;
}

/* ---- a max-heap of candidates: higher score first, then lower index (TF's order) ---- */

typedef struct cand { int idx, begin; float score; } cand;

static bool before(const cand *a, const cand *b) {
  return a->score > b->score || (a->score == b->score && a->idx < b->idx);
}

static void heap_push(cand *h, int *n, cand c) {
  int i = (*n)++;
  while (i > 0) {
    int p = (i - 1) / 2;
    if (!before(&c, &h[p])) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = c;
}

static cand heap_pop(cand *h, int *n) {
  cand top = h[0], last = h[--*n];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    const cand *best = &last;
    if (l < *n && before(&h[l], best)) m = l, best = &h[l];
    if (r < *n && before(&h[r], best)) m = r;
    if (m == i) break;
    h[i] = h[m];
    i = m;
  }
  if (*n > 0) h[i] = last;
  return top;
}

/* The similarity of candidate i and selected box j: IOU of boxes, or an overlaps entry. */
typedef struct sim_src { const float *data; int64_t n; bool overlaps; } sim_src;

static inline float similarity(const sim_src *s, int i, int j) {
  return s->overlaps ? s->data[(int64_t)i * s->n + j] : iou_tf(s->data + 4 * (int64_t)i, s->data + 4 * (int64_t)j);
}

/* TF's DoNonMaxSuppressionOp: up to max_out boxes into sel/sel_scores, their count returned. */
static int64_t greedy(const sim_src *s, const float *scores, int64_t n, int64_t max_out, float thr, float score_thr,
                      float sigma, cand *heap, int *sel, float *sel_scores) {
  int hn = 0;
  for (int64_t i = 0; i < n; i++)
    if (scores[i] > score_thr) heap_push(heap, &hn, (cand){(int)i, 0, scores[i]});
  bool soft = sigma > 0;
  float scale = soft ? -0.5f / sigma : 0.0f;
  int64_t count = 0;
  while (count < max_out && hn > 0) {
    cand c = heap_pop(heap, &hn);
    float original = c.score;
    bool hard = false;
    for (int64_t j = count - 1; j >= c.begin; j--) {
      float sim = similarity(s, c.idx, sel[j]);
      float weight = expf(scale * sim * sim);
      c.score *= (soft || sim <= thr) ? weight : 0.0f;
      if (!soft && sim > thr) {
        hard = true;
        break;
      }
      if (c.score <= score_thr) break;
    }
    c.begin = (int)count;
    if (hard) continue;
    if (c.score == original) {
      sel[count] = c.idx;
      sel_scores[count++] = c.score;
    } else if (c.score > score_thr) {
      heap_push(heap, &hn, c);
    }
  }
  return count;
}

/* The boxes' order by score, descending, ties by index (TF's argsort). */
static void by_score_order(const float *scores, int64_t n, int *order) {
  for (int64_t i = 0; i < n; i++) order[i] = (int)i;
  for (int64_t i = 1; i < n; i++) { /* an insertion sort: stable, and n is a few thousand at most in practice */
    int v = order[i];
    int64_t j = i - 1;
    while (j >= 0 && (scores[order[j]] < scores[v] || (scores[order[j]] == scores[v] && order[j] > v))) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = v;
  }
}

static inline bool positive(const float *b) { return b[0] > 0 || b[1] > 0 || b[2] > 0 || b[3] > 0; }

/* The scratch of the tiled form: the sorted boxes padded to whole tiles, and a tile's IOU matrices. */
typedef struct tiled_work { float *boxes, *iou, *next; bool *can, *keep; } tiled_work;

/* TF's non_max_suppression_padded_v2 on one batch entry, step by step (its
 * comparisons decide the edge cases, iou_threshold 0 among them): boxes (the
 * masked, canonical ones, n x 4) in score order `order`, in tiles of `tile`;
 * each tile is first cut by every box kept in the tiles before it (IOU >=
 * threshold), then by itself (TF's iterated self-suppression); a box is
 * selected when kept and some coordinate is positive. Returns the count selected. */
static int64_t tiled(const float *boxes, const int *order, int64_t n, int64_t max_out, float thr, int64_t tile,
                     tiled_work *w, int *sel) {
  int64_t total = n > max_out ? n : max_out, tiles = (total + tile - 1) / tile, padded = tiles * tile;
  float *wb = w->boxes;
  for (int64_t p = 0; p < padded; p++)
    for (int d = 0; d < 4; d++) wb[4 * p + d] = p < n ? boxes[4 * (int64_t)order[p] + d] : 0.0f;
  int64_t out_size = 0;
  for (int64_t t = 0; t < tiles && out_size < max_out; t++) {
    float *cur = wb + 4 * t * tile;
    for (int64_t u = 0; u < t; u++) { /* cross-suppression by the tiles before */
      const float *prev = wb + 4 * u * tile;
      for (int64_t j = 0; j < tile; j++) {
        bool keep = true;
        for (int64_t i = 0; i < tile && keep; i++) keep = iou_tiled(prev + 4 * i, cur + 4 * j) < thr;
        if (!keep) memset(cur + 4 * j, 0, 4 * sizeof(float));
      }
    }
    float *m = w->iou, *m2 = w->next;
    double sum = 0;
    for (int64_t i = 0; i < tile; i++)
      for (int64_t j = 0; j < tile; j++) {
        float v = j > i ? iou_tiled(cur + 4 * i, cur + 4 * j) : 0.0f;
        m[i * tile + j] = (j > i && v >= thr) ? v : 0.0f;
        sum += m[i * tile + j];
      }
    for (;;) { /* _self_suppression until the IOU sum changes by thr or less */
      for (int64_t i = 0; i < tile; i++) {
        float mx = 0;
        for (int64_t k = 0; k < tile; k++) mx = fmax2(mx, m[k * tile + i]);
        w->can[i] = mx < thr;
      }
      for (int64_t j = 0; j < tile; j++) {
        float mx = 0;
        for (int64_t i = 0; i < tile; i++) mx = fmax2(mx, w->can[i] ? m[i * tile + j] : 0.0f);
        w->keep[j] = mx < thr;
      }
      double sum2 = 0;
      for (int64_t i = 0; i < tile; i++)
        for (int64_t j = 0; j < tile; j++) sum2 += m2[i * tile + j] = w->keep[i] ? m[i * tile + j] : 0.0f;
      bool again = sum - sum2 > thr;
      float *tmp = m;
      m = m2, m2 = tmp, sum = sum2;
      if (!again) break;
    }
    for (int64_t j = 0; j < tile; j++) {
      double col = 0;
      for (int64_t i = 0; i < tile; i++) col += m[i * tile + j];
      if (col > 0) memset(cur + 4 * j, 0, 4 * sizeof(float));
      else if (positive(cur + 4 * j)) out_size++;
    }
  }
  int64_t count = 0;
  for (int64_t p = 0; p < n && count < max_out; p++)
    if (positive(wb + 4 * p)) sel[count++] = order[p];
  return out_size < max_out ? out_size : max_out;
}

/* non_max_suppression / _overlaps: see ops.def. */
tide_status tide_cpu_nms(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                         int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  bool overlaps = def->id == TIDE_OP_NON_MAX_SUPPRESSION_OVERLAPS;
  bool batched = !overlaps && (a->m & NMS_TILED), pad = batched || (a->m & NMS_PAD);
  tide_tensor tb = {0}, ts = {0};
  const tide_tensor *b, *s;
  int *sel = NULL;
  float *sel_scores = NULL, *boxes = NULL;
  void *work = NULL;
  tide_status st = tide_contiguous_or_copy(def->name, in[0], &tb, &b);
  if (!st) st = tide_contiguous_or_copy(def->name, in[1], &ts, &s);
  if (st) goto done;
  int64_t nb = batched ? b->dims[0] : 1, n = b->dims[batched ? 1 : 0], max_out = a->n;
  if (n > INT32_MAX / 8) {
    st = TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %lld boxes are too many", def->name, (long long)n);
    goto done;
  }
  int64_t cap = max_out < n ? max_out : n; /* at most one selection per box */
  sel = malloc((size_t)(cap + 1) * sizeof *sel);
  sel_scores = malloc((size_t)(cap + 1) * sizeof *sel_scores);
  work = malloc((size_t)(n + 1) * (batched ? sizeof(int) : sizeof(cand)));
  if (batched) boxes = malloc((size_t)(5 * n + 1) * sizeof *boxes); /* the boxes, then the masked scores */
  if (!sel || !sel_scores || !work || (batched && !boxes)) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    goto done;
  }
  int64_t m = pad ? max_out : 0, dims[2] = {nb, m};
  float thr = (float)a->scalars[0], score_thr = (float)a->scalars[1];
  if (!pad) { /* one entry, sized by what it selects */
    sim_src src = {b->data, n, overlaps};
    m = greedy(&src, s->data, n, max_out, thr, score_thr, (float)a->scalars[2], work, sel, sel_scores);
  }
  if ((st = tide_tensor_init(out[0], TIDE_INT32, batched ? 2 : 1, batched ? dims : &m)) != TIDE_OK) goto done;
  if ((st = tide_tensor_init(out[1], TIDE_FLOAT32, batched ? 2 : 1, batched ? dims : &m)) != TIDE_OK) goto done;
  if ((st = tide_tensor_init(out[2], TIDE_INT32, batched ? 1 : 0, dims)) != TIDE_OK) goto done;
  int32_t *oi = out[0]->data, *ov = out[2]->data;
  float *os = out[1]->data;
  if (out[0]->nelem) memset(oi, 0, (size_t)out[0]->nelem * sizeof *oi);
  if (out[1]->nelem) memset(os, 0, (size_t)out[1]->nelem * sizeof *os);
  if (!batched) {
    int64_t k = m;
    if (pad) {
      sim_src src = {b->data, n, overlaps};
      k = greedy(&src, s->data, n, max_out, thr, score_thr, (float)a->scalars[2], work, sel, sel_scores);
    }
    for (int64_t i = 0; i < k; i++) oi[i] = sel[i], os[i] = sel_scores[i];
    ov[0] = (int32_t)k;
    goto done;
  }
  /* the tiled form: TF orders the corners by the first box of the batch, for every box */
  int64_t tile = a->nints >= 1 && a->ints[0] > 0 ? a->ints[0] : 512;
  int64_t total = n > max_out ? n : max_out, padded = (total + tile - 1) / tile * tile;
  tiled_work tw = {malloc((size_t)(4 * padded + 1) * sizeof(float)), malloc((size_t)(tile * tile) * sizeof(float)),
                   malloc((size_t)(tile * tile) * sizeof(float)), malloc((size_t)tile), malloc((size_t)tile)};
  if (!tw.boxes || !tw.iou || !tw.next || !tw.can || !tw.keep) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    goto tiled_done;
  }
  const float *all = b->data, *first = all;
  bool filter = !(isinf(score_thr) && score_thr < 0);
  bool first_on = nb > 0 && n > 0 && (!filter || ((const float *)s->data)[0] > score_thr); /* else it was zeroed */
  bool swap_y = first_on && !(first[0] <= first[2]), swap_x = first_on && !(first[1] <= first[3]);
  float *masked = boxes + 4 * n; /* the scores past the threshold, 0 where they fail it */
  for (int64_t e = 0; e < nb; e++) {
    const float *src = all + 4 * n * e, *sc = (const float *)s->data + n * e;
    for (int64_t i = 0; i < n; i++) {
      bool on = !filter || sc[i] > score_thr;
      masked[i] = on ? sc[i] : 0.0f;
      const float *p = src + 4 * i;
      float y0 = on ? p[0] : 0, x0 = on ? p[1] : 0, y1 = on ? p[2] : 0, x1 = on ? p[3] : 0;
      boxes[4 * i] = swap_y ? y1 : y0, boxes[4 * i + 2] = swap_y ? y0 : y1;
      boxes[4 * i + 1] = swap_x ? x1 : x0, boxes[4 * i + 3] = swap_x ? x0 : x1;
    }
    int *order = work;
    by_score_order(masked, n, order);
    int64_t k = tiled(boxes, order, n, max_out, thr, tile, &tw, sel);
    for (int64_t i = 0; i < k; i++) oi[e * m + i] = sel[i], os[e * m + i] = masked[sel[i]];
    ov[e] = (int32_t)k;
  }
tiled_done:
  free(tw.boxes), free(tw.iou), free(tw.next), free(tw.can), free(tw.keep);
done:
  free(sel), free(sel_scores), free(work), free(boxes);
  tide_tensor_release(&tb), tide_tensor_release(&ts);
  return st;
}

/* ---- combined_non_max_suppression --------------------------------------------------- */

typedef struct hit { float score; int cls, order; const float *box; } hit;

static int by_score(const void *pa, const void *pb) {
  const hit *a = pa, *b = pb;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order; /* TF's sort is not stable: ties in selection order */
}

static inline float clip01(float v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

/* combined_non_max_suppression: see ops.def. Per batch entry and class, the
 * greedy hard form (TF's IOU) over that class's boxes and scores; the
 * selections of every class by score, the first T of them. */
tide_status tide_cpu_combined_nms(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor tb = {0}, ts = {0};
  const tide_tensor *b, *s;
  float *cls_boxes = NULL, *cls_scores = NULL, *sel_scores = NULL;
  int *sel = NULL;
  cand *heap = NULL;
  hit *hits = NULL;
  tide_status st = tide_contiguous_or_copy(def->name, in[0], &tb, &b);
  if (!st) st = tide_contiguous_or_copy(def->name, in[1], &ts, &s);
  if (st) goto done;
  int64_t nb = b->dims[0], n = b->dims[1], q = b->dims[2], k = s->dims[2];
  int64_t per_class = a->n < n ? a->n : n, t = out[1]->dims[1];
  bool clip = a->nints < 2 || a->ints[1];
  float thr = (float)a->scalars[0], score_thr = (float)a->scalars[1];
  if (n > INT32_MAX / 8 || k > INT32_MAX / 8 || (per_class > 0 && k > INT32_MAX / per_class)) {
    st = TIDE_FAIL(TIDE_ERR_SHAPE, "%s: %lld boxes of %lld classes are too many", def->name, (long long)n, (long long)k);
    goto done;
  }
  cls_boxes = malloc((size_t)(4 * n + 1) * sizeof *cls_boxes);
  cls_scores = malloc((size_t)(n + 1) * sizeof *cls_scores);
  sel = malloc((size_t)(per_class + 1) * sizeof *sel);
  sel_scores = malloc((size_t)(per_class + 1) * sizeof *sel_scores);
  heap = malloc((size_t)(n + 1) * sizeof *heap);
  hits = malloc((size_t)(per_class * k + 1) * sizeof *hits);
  if (!cls_boxes || !cls_scores || !sel || !sel_scores || !heap || !hits) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    goto done;
  }
  float *ob = out[0]->data, *os = out[1]->data, *oc = out[2]->data;
  int32_t *ov = out[3]->data;
  memset(ob, 0, (size_t)out[0]->nelem * sizeof *ob);
  memset(os, 0, (size_t)out[1]->nelem * sizeof *os);
  memset(oc, 0, (size_t)out[2]->nelem * sizeof *oc);
  const float *all_boxes = b->data, *all_scores = s->data;
  for (int64_t e = 0; e < nb; e++) {
    const float *eb = all_boxes + e * n * q * 4, *es = all_scores + e * n * k;
    int64_t nh = 0;
    for (int64_t c = 0; c < k; c++) {
      for (int64_t i = 0; i < n; i++) {
        memcpy(cls_boxes + 4 * i, eb + (i * q + (q > 1 ? c : 0)) * 4, 4 * sizeof(float));
        cls_scores[i] = es[i * k + c];
      }
      sim_src src = {cls_boxes, n, false};
      int64_t got = greedy(&src, cls_scores, n, per_class, thr, score_thr, 0.0f, heap, sel, sel_scores);
      for (int64_t j = 0; j < got; j++)
        hits[nh] = (hit){sel_scores[j], (int)c, (int)nh, eb + ((int64_t)sel[j] * q + (q > 1 ? c : 0)) * 4}, nh++;
    }
    qsort(hits, (size_t)nh, sizeof *hits, by_score);
    int64_t keep = nh < t ? nh : t;
    for (int64_t j = 0; j < keep; j++) {
      for (int d = 0; d < 4; d++) ob[(e * t + j) * 4 + d] = clip ? clip01(hits[j].box[d]) : hits[j].box[d];
      os[e * t + j] = hits[j].score;
      oc[e * t + j] = (float)hits[j].cls;
    }
    ov[e] = (int32_t)keep;
  }
done:
  free(cls_boxes), free(cls_scores), free(sel), free(sel_scores), free(heap), free(hits);
  tide_tensor_release(&tb), tide_tensor_release(&ts);
  return st;
}
