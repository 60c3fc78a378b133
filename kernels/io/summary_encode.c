/* io/summary_encode.c — the Summary.Value of each TensorBoard plugin as TF2
 * writes it (scalars, histograms, text, images, graphs), TF2's histogram bucketing, PNG. */
#include "summary_internal.h"

#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "tide_proto/config.pb-c.h"

/* ---- the parts every plugin shares ------------------------------------ */

/* A Summary.Value holding `tensor` under `tag`, with the metadata TF2's
 * plugins write: plugin_data { plugin_name } (every plugin's content, its
 * PluginData proto at version 0, serializes to nothing) and the description. */
typedef struct {
  Tensorflow__Summary__Value value;
  Tensorflow__SummaryMetadata metadata;
  Tensorflow__SummaryMetadata__PluginData plugin;
  Tensorflow__TensorProto tensor;
  Tensorflow__TensorShapeProto shape;
  Tensorflow__TensorShapeProto__Dim dims[TIDE_MAX_DIMS];
  Tensorflow__TensorShapeProto__Dim *dim_ptrs[TIDE_MAX_DIMS];
} value_parts;

static void value_init(value_parts *p, const char *tag, const char *plugin, const char *description,
                       Tensorflow__DataType dtype, int ndim, const int64_t *dims) {
  Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
  Tensorflow__SummaryMetadata m = TENSORFLOW__SUMMARY_METADATA__INIT;
  Tensorflow__SummaryMetadata__PluginData pd = TENSORFLOW__SUMMARY_METADATA__PLUGIN_DATA__INIT;
  Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
  Tensorflow__TensorShapeProto s = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
  p->value = v;
  p->metadata = m;
  p->plugin = pd;
  p->tensor = t;
  p->shape = s;
  p->plugin.plugin_name = (char *)plugin;
  p->metadata.plugin_data = &p->plugin;
  if (description && *description) p->metadata.summary_description = (char *)description;
  for (int i = 0; i < ndim; i++) {
    Tensorflow__TensorShapeProto__Dim d = TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
    d.size = dims[i];
    p->dims[i] = d;
    p->dim_ptrs[i] = &p->dims[i];
  }
  p->shape.n_dim = (size_t)ndim;
  p->shape.dim = p->dim_ptrs;
  p->tensor.dtype = dtype;
  p->tensor.tensor_shape = &p->shape;
  p->value.tag = (char *)tag;
  p->value.metadata = &p->metadata;
  p->value.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR;
  p->value.tensor = &p->tensor;
}

static tide_status check_common(tide_summary_writer *w, const char *tag, const char *what) {
  if (!w) return TIDE_FAIL(TIDE_ERR_VALUE, "summary.%s: no writer", what);
  if (!tag || !*tag) return TIDE_FAIL(TIDE_ERR_VALUE, "summary.%s: the name must be a non-empty string", what);
  return TIDE_OK;
}

/* ---- scalars ----------------------------------------------------------- */

tide_status tide_summary_write_scalar(tide_summary_writer *w, const char *tag, int64_t step, float value,
                                      const char *description) {
  tide_status s = check_common(w, tag, "scalar");
  if (s) return s;
  value_parts p;
  value_init(&p, tag, "scalars", description, TENSORFLOW__DATA_TYPE__DT_FLOAT, 0, NULL);
  /* TF's writer stores non-string tensors as tensor_content (little endian). */
  p.tensor.tensor_content.data = (uint8_t *)&value;
  p.tensor.tensor_content.len = sizeof value;
  return tide_summary_queue_value(w, step, &p.value);
}

/* ---- histograms ------------------------------------------------------- */

/* TF2's _buckets (tensorboard/plugins/histogram/summary_v2.py), step by step
 * so the doubles come out bit for bit the same: width = range / k, bucket
 * floor((x - min) / width) clamped to k - 1, edges min + i * (range / k) with
 * the last one max; a single distinct value fills the last bucket. */
tide_status tide_summary_histogram_buckets(const double *values, int64_t n, int buckets, double *out) {
  if (buckets < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "summary.histogram: buckets must be >= 0, got %d", buckets);
  int64_t k = buckets;
  memset(out, 0, sizeof(double) * 3 * (size_t)k);
  double lo = INFINITY, hi = -INFINITY;
  int64_t count = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = values[i];
    if (x != x) continue;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
    count++;
  }
  if (k == 0 || count == 0) return TIDE_OK;
  double range = hi - lo;
  if (range == 0) {
    for (int64_t b = 0; b < k; b++) { out[3 * b] = hi; out[3 * b + 1] = hi; }
    out[3 * (k - 1) + 2] = (double)count;
    return TIDE_OK;
  }
  double width = range / (double)k;
  for (int64_t i = 0; i < n; i++) {
    double x = values[i];
    if (x != x) continue;
    double f = floor((x - lo) / width);
    int64_t b = f >= (double)(k - 1) || f != f ? k - 1 : (int64_t)f; /* NaN: an infinite range */
    out[3 * b + 2] += 1.0;
  }
  for (int64_t b = 0; b < k; b++) {
    out[3 * b] = b == 0 ? lo : lo + width * (double)b;
    out[3 * b + 1] = b == k - 1 ? hi : lo + width * (double)(b + 1);
  }
  return TIDE_OK;
}

tide_status tide_summary_write_histogram(tide_summary_writer *w, const char *tag, int64_t step, const double *values,
                                         int64_t n, int buckets, const char *description) {
  tide_status s = check_common(w, tag, "histogram");
  if (s) return s;
  if (n < 0 || (n > 0 && !values)) return TIDE_FAIL(TIDE_ERR_VALUE, "summary.histogram '%s': no values", tag);
  if (buckets < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "summary.histogram '%s': buckets must be >= 0, got %d", tag, buckets);
  double *table = malloc(sizeof(double) * 3 * (size_t)(buckets > 0 ? buckets : 1));
  if (!table) return TIDE_FAIL(TIDE_ERR_MEMORY, "summary.histogram '%s': out of memory", tag);
  if ((s = tide_summary_histogram_buckets(values, n, buckets, table)) == TIDE_OK) {
    int64_t dims[2] = { buckets, 3 };
    value_parts p;
    value_init(&p, tag, "histograms", description, TENSORFLOW__DATA_TYPE__DT_DOUBLE, 2, dims);
    p.tensor.tensor_content.data = (uint8_t *)table;
    p.tensor.tensor_content.len = sizeof(double) * 3 * (size_t)buckets;
    s = tide_summary_queue_value(w, step, &p.value);
  }
  free(table);
  return s;
}

/* ---- text -------------------------------------------------------------- */

tide_status tide_summary_write_text(tide_summary_writer *w, const char *tag, int64_t step, int ndim,
                                    const int64_t *dims, const char *const *strings, const size_t *lens,
                                    const char *description) {
  tide_status s = check_common(w, tag, "text");
  if (s) return s;
  if (ndim < 0 || ndim > TIDE_MAX_DIMS) {
    return TIDE_FAIL(TIDE_ERR_SHAPE, "summary.text '%s': rank %d is not supported (at most %d)", tag, ndim,
                     TIDE_MAX_DIMS);
  }
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (dims[i] < 0 || (dims[i] > 0 && n > INT64_MAX / dims[i])) {
      return TIDE_FAIL(TIDE_ERR_SHAPE, "summary.text '%s': bad dimension %lld", tag, (long long)dims[i]);
    }
    n *= dims[i];
  }
  ProtobufCBinaryData *vals = malloc(sizeof *vals * (size_t)(n > 0 ? n : 1));
  if (!vals) return TIDE_FAIL(TIDE_ERR_MEMORY, "summary.text '%s': out of memory", tag);
  for (int64_t i = 0; i < n; i++) {
    vals[i].data = (uint8_t *)strings[i];
    vals[i].len = lens[i];
  }
  value_parts p;
  value_init(&p, tag, "text", description, TENSORFLOW__DATA_TYPE__DT_STRING, ndim, dims);
  /* Strings go to string_val (TF's writer: AsProtoField for DT_STRING). */
  p.tensor.n_string_val = (size_t)n;
  p.tensor.string_val = vals;
  s = tide_summary_queue_value(w, step, &p.value);
  free(vals);
  return s;
}

/* ---- images ------------------------------------------------------------- */

typedef struct {
  uint8_t *data;
  size_t len, cap;
  bool oom;
} png_buffer;

static void png_append(png_structp png, png_bytep bytes, png_size_t n) {
  png_buffer *b = png_get_io_ptr(png);
  if (b->oom) return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 1024;
    while (cap < b->len + n) cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d) { b->oom = true; return; }
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, bytes, n);
  b->len += n;
}
static void png_flush_nothing(png_structp png) { (void)png; }

static void png_error_longjmp(png_structp png, png_const_charp msg) {
  char *slot = png_get_error_ptr(png);
  snprintf(slot, 200, "%s", msg);
  png_longjmp(png, 1);
}
static void png_warning_ignore(png_structp png, png_const_charp msg) { (void)png; (void)msg; }

/* PNG bytes of one uint8 image, with TF's encoder settings
 * (tensorflow/core/lib/png/png_io.cc: default zlib level, memory level 9,
 * default filters). */
static tide_status encode_png(const uint8_t *pixels, int64_t h, int64_t wd, int64_t c, png_buffer *out,
                              const char *tag) {
  static const int color_types[5] = { 0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                      PNG_COLOR_TYPE_RGB_ALPHA };
  char err[200] = "";
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, err, png_error_longjmp, png_warning_ignore);
  if (!png) return TIDE_FAIL(TIDE_ERR_MEMORY, "summary.image '%s': out of memory", tag);
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, NULL);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "summary.image '%s': out of memory", tag);
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return TIDE_FAIL(TIDE_ERR_INTERNAL, "summary.image '%s': PNG encoding failed: %s", tag, err);
  }
  png_set_write_fn(png, out, png_append, png_flush_nothing);
  png_set_compression_level(png, -1);
  png_set_compression_mem_level(png, 9);
  png_set_IHDR(png, info, (png_uint_32)wd, (png_uint_32)h, 8, color_types[c], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  size_t row_bytes = (size_t)(wd * c);
  for (int64_t y = 0; y < h; y++) png_write_row(png, (png_const_bytep)(pixels + (size_t)y * row_bytes));
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  if (out->oom) return TIDE_FAIL(TIDE_ERR_MEMORY, "summary.image '%s': out of memory encoding PNG", tag);
  return TIDE_OK;
}

tide_status tide_summary_write_image(tide_summary_writer *w, const char *tag, int64_t step, const uint8_t *pixels,
                                     int64_t n, int64_t height, int64_t width, int64_t channels, int64_t max_outputs,
                                     const char *description) {
  tide_status s = check_common(w, tag, "image");
  if (s) return s;
  if (n < 0 || height < 0 || width < 0 || (n > 0 && height > 0 && width > 0 && !pixels)) {
    return TIDE_FAIL(TIDE_ERR_SHAPE, "summary.image '%s': bad image batch", tag);
  }
  if (channels < 1 || channels > 4) {
    return TIDE_FAIL(TIDE_ERR_SHAPE, "summary.image '%s': images need 1 to 4 channels, got %lld", tag,
                     (long long)channels);
  }
  if (height > 0x7fffffff || width > 0x7fffffff) {
    return TIDE_FAIL(TIDE_ERR_SHAPE, "summary.image '%s': an image of %lld x %lld is too large for PNG", tag,
                     (long long)height, (long long)width);
  }
  if (max_outputs < 0) {
    return TIDE_FAIL(TIDE_ERR_VALUE, "summary.image '%s': max_outputs must be >= 0, got %lld", tag,
                     (long long)max_outputs);
  }
  int64_t k = n < max_outputs ? n : max_outputs;
  if (k > 0 && (height == 0 || width == 0)) {
    return TIDE_FAIL(TIDE_ERR_SHAPE, "summary.image '%s': PNG cannot hold an empty image (%lld x %lld)", tag,
                     (long long)height, (long long)width);
  }
  /* [width, height, png 1, ..., png k] as decimal strings then bytes. */
  char wtxt[24], htxt[24];
  snprintf(wtxt, sizeof wtxt, "%lld", (long long)width);
  snprintf(htxt, sizeof htxt, "%lld", (long long)height);
  ProtobufCBinaryData *vals = calloc((size_t)k + 2, sizeof *vals);
  png_buffer *pngs = calloc((size_t)k + 1, sizeof *pngs);
  if (!vals || !pngs) {
    free(vals);
    free(pngs);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "summary.image '%s': out of memory", tag);
  }
  vals[0].data = (uint8_t *)wtxt;
  vals[0].len = strlen(wtxt);
  vals[1].data = (uint8_t *)htxt;
  vals[1].len = strlen(htxt);
  size_t image_bytes = (size_t)(height * width * channels);
  for (int64_t i = 0; i < k && s == TIDE_OK; i++) {
    s = encode_png(pixels + (size_t)i * image_bytes, height, width, channels, &pngs[i], tag);
    vals[i + 2].data = pngs[i].data;
    vals[i + 2].len = pngs[i].len;
  }
  if (s == TIDE_OK) {
    int64_t dims[1] = { k + 2 };
    value_parts p;
    value_init(&p, tag, "images", description, TENSORFLOW__DATA_TYPE__DT_STRING, 1, dims);
    p.tensor.n_string_val = (size_t)k + 2;
    p.tensor.string_val = vals;
    s = tide_summary_queue_value(w, step, &p.value);
  }
  for (int64_t i = 0; i < k; i++) free(pngs[i].data);
  free(pngs);
  free(vals);
  return s;
}

/* ---- graphs ------------------------------------------------------------- */

tide_status tide_summary_write_graph(tide_summary_writer *w, const char *tag, int64_t step, const uint8_t *graph_def,
                                     size_t len) {
  if (!w) return TIDE_FAIL(TIDE_ERR_VALUE, "summary.graph: no writer");
  if (!graph_def && len) return TIDE_FAIL(TIDE_ERR_VALUE, "summary.graph: no graph");
  if (tag && !*tag) return TIDE_FAIL(TIDE_ERR_VALUE, "summary.trace_export: the name must be a non-empty string");
  /* The run's graph: what TensorBoard's event_accumulator gives as Graph(). */
  Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;
  ev.step = step;
  ev.what_case = TENSORFLOW__EVENT__WHAT_GRAPH_DEF;
  ev.graph_def.data = (uint8_t *)graph_def;
  ev.graph_def.len = len;
  tide_status s = tide_summary_queue_event(w, &ev, tag ? tag : "graph");
  if (s || !tag) return s;
  /* trace_export's tagged graph (summary_ops_v2.run_metadata_graphs):
   * content "1", a string scalar holding RunMetadata{function_graphs{pre_optimization_graph}}. */
  Tensorflow__RunMetadata__FunctionGraphs fg = TENSORFLOW__RUN_METADATA__FUNCTION_GRAPHS__INIT;
  fg.pre_optimization_graph.data = (uint8_t *)graph_def;
  fg.pre_optimization_graph.len = len;
  Tensorflow__RunMetadata__FunctionGraphs *fgs[1] = { &fg };
  Tensorflow__RunMetadata rm = TENSORFLOW__RUN_METADATA__INIT;
  rm.n_function_graphs = 1;
  rm.function_graphs = fgs;
  size_t n = tensorflow__run_metadata__get_packed_size(&rm);
  uint8_t *packed = malloc(n ? n : 1);
  if (!packed) return TIDE_FAIL(TIDE_ERR_MEMORY, "summary.trace_export '%s': out of memory", tag);
  tensorflow__run_metadata__pack(&rm, packed);
  ProtobufCBinaryData val = { n, packed };
  value_parts p;
  value_init(&p, tag, "graph_run_metadata_graph", NULL, TENSORFLOW__DATA_TYPE__DT_STRING, 0, NULL);
  p.plugin.content.data = (uint8_t *)"1";
  p.plugin.content.len = 1;
  p.tensor.n_string_val = 1;
  p.tensor.string_val = &val;
  s = tide_summary_queue_value(w, step, &p.value);
  free(packed);
  return s;
}
