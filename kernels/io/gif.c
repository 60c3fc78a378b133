/* io/gif.c — GIF files through giflib's record API, as TF's gif_io.cc decodes them (canvas of the largest
 * frame, frames composited in order, transparency from each frame's graphics control block), with sizes
 * checked before anything is allocated; the op that maps this onto tensors is io/gif_op.c. */
#include "tide/gif.h"

#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>

typedef struct gif_frame {
  int left, top, width, height, transparent; /* transparent: an index, or -1 */
  GifColorType colors[256];
  int ncolors; /* 0: none (neither a local nor a global map) */
  uint8_t *indices; /* width * height, rows top to bottom */
} gif_frame;

struct tide_gif {
  gif_frame *frames;
  int64_t n, cap, height, width;
};

typedef struct gif_source {
  const uint8_t *data;
  size_t size, pos;
} gif_source;

/* giflib's reader: at most n of the remaining bytes (a short read is how giflib sees a truncated file). */
static int gif_input(GifFileType *g, GifByteType *buf, int n) {
  gif_source *s = g->UserData;
  size_t left = s->size - s->pos;
  size_t k = n < 0 ? 0 : (size_t)n < left ? (size_t)n : left;
  memcpy(buf, s->data + s->pos, k);
  s->pos += k;
  return (int)k;
}

static const char *gif_error(int code) {
  const char *m = GifErrorString(code);
  return m ? m : "unknown giflib error";
}

void tide_gif_free(tide_gif *gif) {
  if (!gif) return;
  for (int64_t i = 0; i < gif->n; i++) free(gif->frames[i].indices);
  free(gif->frames);
  free(gif);
}

/* The frame giflib just described (g->Image), its indices read and de-interlaced. */
static tide_status read_frame(const char *op, GifFileType *g, gif_frame *f, int transparent, int64_t *budget) {
  GifImageDesc *d = &g->Image;
  f->left = d->Left, f->top = d->Top, f->width = d->Width, f->height = d->Height, f->transparent = transparent;
  f->indices = NULL;
  if (d->Width <= 0 || d->Height <= 0)
    return tide_set_error(TIDE_ERR_VALUE, "%s: invalid GIF data: a frame of %dx%d pixels", op, d->Width, d->Height);
  int64_t n = (int64_t)d->Width * d->Height;
  if (n > *budget)
    return tide_set_error(TIDE_ERR_VALUE, "%s: the GIF is too large: a frame of %dx%d pixels passes the limit of "
                          "the decoded size", op, d->Width, d->Height);
  *budget -= n;
  ColorMapObject *map = d->ColorMap ? d->ColorMap : g->SColorMap;
  f->ncolors = 0;
  if (map && map->Colors && map->ColorCount > 0) {
    f->ncolors = map->ColorCount > 256 ? 256 : map->ColorCount;
    memcpy(f->colors, map->Colors, (size_t)f->ncolors * sizeof(GifColorType));
  }
  if (!(f->indices = malloc((size_t)n)))
    return tide_set_error(TIDE_ERR_MEMORY, "%s: out of memory for a %dx%d GIF frame", op, d->Width, d->Height);
  static const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
  int passes = d->Interlace ? 4 : 1;
  for (int p = 0; p < passes; p++) {
    for (int y = d->Interlace ? start[p] : 0; y < d->Height; y += d->Interlace ? step[p] : 1) {
      if (DGifGetLine(g, f->indices + (int64_t)y * d->Width, d->Width) == GIF_ERROR)
        return tide_set_error(TIDE_ERR_VALUE, "%s: invalid GIF data: %s", op, gif_error(g->Error));
    }
  }
  return TIDE_OK;
}

/* Append a frame slot, growing the list. */
static gif_frame *new_frame(const char *op, tide_gif *gif, tide_status *st) {
  if (gif->n == gif->cap) {
    int64_t cap = gif->cap ? gif->cap * 2 : 4;
    gif_frame *f = realloc(gif->frames, (size_t)cap * sizeof(gif_frame));
    if (!f) {
      *st = tide_set_error(TIDE_ERR_MEMORY, "%s: out of memory for the GIF's frames", op);
      return NULL;
    }
    gif->frames = f, gif->cap = cap;
  }
  gif_frame *f = &gif->frames[gif->n++];
  f->indices = NULL;
  return f;
}

tide_status tide_gif_read(const char *op, const uint8_t *data, size_t size, int64_t max_bytes, tide_gif **out,
                          int64_t *frames, int64_t *height, int64_t *width) {
  *out = NULL;
  if (size < 6 || memcmp(data, "GIF", 3) != 0)
    return tide_set_error(TIDE_ERR_VALUE, "%s: not a GIF image (%lld bytes that do not start with \"GIF\")", op,
                          (long long)size);
  gif_source src = {data, size, 0};
  int code = 0;
  GifFileType *g = DGifOpen(&src, gif_input, &code);
  if (!g) return tide_set_error(TIDE_ERR_VALUE, "%s: invalid GIF data: %s", op, gif_error(code));
  tide_gif *gif = calloc(1, sizeof(tide_gif));
  tide_status st = gif ? TIDE_OK : tide_set_error(TIDE_ERR_MEMORY, "%s: out of memory", op);
  int64_t budget = max_bytes;
  int transparent = NO_TRANSPARENT_COLOR, have_gcb = 0;
  GifRecordType type = UNDEFINED_RECORD_TYPE;
  while (st == TIDE_OK && type != TERMINATE_RECORD_TYPE) {
    if (DGifGetRecordType(g, &type) == GIF_ERROR) {
      st = tide_set_error(TIDE_ERR_VALUE, "%s: invalid GIF data: %s", op, gif_error(g->Error));
      break;
    }
    if (type == IMAGE_DESC_RECORD_TYPE) {
      if (DGifGetImageDesc(g) == GIF_ERROR) {
        st = tide_set_error(TIDE_ERR_VALUE, "%s: invalid GIF data: %s", op, gif_error(g->Error));
        break;
      }
      budget -= (int64_t)sizeof(gif_frame); /* (many tiny frames count too) */
      gif_frame *f = budget < 0 ? NULL : new_frame(op, gif, &st);
      if (!f && st == TIDE_OK)
        st = tide_set_error(TIDE_ERR_VALUE, "%s: the GIF is too large: %lld frames pass the limit of the decoded "
                            "size", op, (long long)gif->n);
      if (f) st = read_frame(op, g, f, transparent, &budget);
      transparent = NO_TRANSPARENT_COLOR, have_gcb = 0; /* a control block applies to the image after it */
    } else if (type == EXTENSION_RECORD_TYPE) {
      int ext = 0;
      GifByteType *block = NULL;
      if (DGifGetExtension(g, &ext, &block) == GIF_ERROR) {
        st = tide_set_error(TIDE_ERR_VALUE, "%s: invalid GIF data: %s", op, gif_error(g->Error));
        break;
      }
      if (ext == GRAPHICS_EXT_FUNC_CODE && block && !have_gcb) { /* the first one counts (giflib's saved GCB) */
        GraphicsControlBlock gcb;
        if (DGifExtensionToGCB(block[0], block + 1, &gcb) == GIF_OK) transparent = gcb.TransparentColor, have_gcb = 1;
      }
      while (block) {
        if (DGifGetExtensionNext(g, &block) == GIF_ERROR) {
          st = tide_set_error(TIDE_ERR_VALUE, "%s: invalid GIF data: %s", op, gif_error(g->Error));
          break;
        }
      }
    }
  }
  DGifCloseFile(g, &code);
  if (st == TIDE_OK && gif->n == 0) st = tide_set_error(TIDE_ERR_VALUE, "%s: the GIF file contains no image", op);
  if (st == TIDE_OK) {
    for (int64_t i = 0; i < gif->n; i++) {
      if (gif->frames[i].height > gif->height) gif->height = gif->frames[i].height;
      if (gif->frames[i].width > gif->width) gif->width = gif->frames[i].width;
    }
    if (gif->n * gif->height * gif->width * 3 > max_bytes)
      st = tide_set_error(TIDE_ERR_VALUE, "%s: the GIF is too large: %lld frames of %lldx%lld pixels", op,
                          (long long)gif->n, (long long)gif->height, (long long)gif->width);
  }
  if (st != TIDE_OK) {
    tide_gif_free(gif);
    return st;
  }
  *out = gif, *frames = gif->n, *height = gif->height, *width = gif->width;
  return TIDE_OK;
}

tide_status tide_gif_pixels(const char *op, const tide_gif *gif, uint8_t *out) {
  const int64_t w = gif->width, h = gif->height, frame_bytes = w * h * 3;
  for (int64_t k = 0; k < gif->n; k++) {
    const gif_frame *f = &gif->frames[k];
    uint8_t *dst = out + k * frame_bytes;
    if (k == 0) memset(dst, 0, (size_t)frame_bytes);
    else memcpy(dst, dst - frame_bytes, (size_t)frame_bytes);
    if (f->ncolors == 0) return tide_set_error(TIDE_ERR_VALUE, "%s: invalid GIF data: missing color map", op);
    int64_t x0 = f->left > 0 ? f->left : 0, y0 = f->top > 0 ? f->top : 0;
    int64_t x1 = (int64_t)f->left + f->width, y1 = (int64_t)f->top + f->height;
    if (x1 > w) x1 = w;
    if (y1 > h) y1 = h;
    for (int64_t y = y0; y < y1; y++) {
      const uint8_t *row = f->indices + (y - f->top) * f->width;
      uint8_t *p = dst + y * w * 3;
      for (int64_t x = x0; x < x1; x++) {
        int c = row[x - f->left];
        if (c == f->transparent) continue; /* (the frame below, or black for the first) */
        if (c >= f->ncolors)
          return tide_set_error(TIDE_ERR_VALUE, "%s: invalid GIF data: found color index %d outside of the color map's "
                                "%d colors", op, c, f->ncolors);
        p[x * 3 + 0] = f->colors[c].Red, p[x * 3 + 1] = f->colors[c].Green, p[x * 3 + 2] = f->colors[c].Blue;
      }
    }
  }
  return TIDE_OK;
}
