/* cpu/wordpiece.c — wordpiece_tokenize (keras_hub's WordPieceTokenizer, BERT's): each string pre-tokenized as
 * keras_hub does (NFD and drop Mn, split on whitespace/punctuation/CJK and special tokens, NFKC case folding; ICU),
 * then greedy longest-match-first WordPiece over a hashed vocabulary (lookup_table's slots), ids in ragged rows. */
#include "icu_load.h"
#include "lookup_hash.h"
#include "strings_util.h"

/* ICU, loaded on first use (icu_load.c): tide_cpu_wordpiece_tokenize calls tide_icu_get before any helper runs */
#define I (&tide_icu_fns)

enum { WP_LOWERCASE = 1, WP_STRIP_ACCENTS = 2, WP_SPLIT = 4, WP_SPLIT_CJK = 8 };

typedef struct ids {
  int64_t *p, n, cap;
} ids;

static bool ids_add(ids *v, int64_t x) {
  if (v->n == v->cap) {
    int64_t cap = v->cap ? 2 * v->cap : 256;
    int64_t *q = realloc(v->p, (size_t)cap * sizeof *q);
    if (!q) return false;
    v->p = q, v->cap = cap;
  }
  v->p[v->n++] = x;
  return true;
}

/* A vocabulary, its slots, and what a word is matched with. */
typedef struct wp_ctx {
  const tide_tensor *vocab;
  const int64_t *slots;
  uint64_t mask;
  const char *suffix;
  int64_t suffix_len, unk, max_bytes;
  tide_strbuf key; /* suffix + piece, for pieces after the first */
} wp_ctx;

/* The vocabulary index of bytes b[0..n), or -1. */
static int64_t vocab_find(const wp_ctx *c, const char *b, int64_t n) {
  for (uint64_t s = tide_lookup_hash_bytes(b, n) & c->mask, p = 0; p <= c->mask; s = (s + 1) & c->mask, p++) {
    int64_t j = c->slots[s], jl;
    if (j < 0 || j >= c->vocab->dims[0]) return -1;
    const char *t = tide_str_at(c->vocab, j, &jl);
    if (jl == n && memcmp(t, b, (size_t)n) == 0) return j;
  }
  return -1;
}

/* WordPiece of one word (UTF-8 bytes w[0..n)): the longest vocabulary piece from each position, later pieces with
 * the suffix indicator; a word longer than max_bytes, or one that cannot be covered, is the unknown token. */
static bool wordpiece(wp_ctx *c, const char *w, int64_t n, ids *out) {
  if (n == 0) return true;
  int64_t mark = out->n;
  if (n > c->max_bytes) return ids_add(out, c->unk);
  for (int64_t start = 0; start < n;) {
    int64_t found = -1, end = n;
    for (; end > start; end--) {
      if (end < n && ((unsigned char)w[end] & 0xC0) == 0x80) continue; /* not a character boundary */
      int64_t j;
      if (start == 0) {
        j = vocab_find(c, w, end);
      } else {
        c->key.n = 0;
        if (!tide_strbuf_add(&c->key, c->suffix, c->suffix_len) || !tide_strbuf_add(&c->key, w + start, end - start))
          return false;
        j = vocab_find(c, c->key.p, c->key.n);
      }
      if (j >= 0) {
        found = j;
        break;
      }
    }
    if (found < 0) {
      out->n = mark;
      return ids_add(out, c->unk);
    }
    if (!ids_add(out, found)) return false;
    start = end;
  }
  return true;
}

/* keras_hub's classes: whitespace (RE2's \s, \p{Cc}, \p{Cf}) is dropped; punctuation (non-alphanumeric ASCII,
 * \p{P}) and CJK ideographs are words of their own. */
static bool is_space(UChar32 ch) {
  if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\f' || ch == '\r') return true;
  int8_t t = I->char_type(ch);
  return t == U_CONTROL_CHAR || t == U_FORMAT_CHAR;
}
static bool is_punct(UChar32 ch) {
  if ((ch >= '!' && ch <= '/') || (ch >= ':' && ch <= '@') || (ch >= '[' && ch <= '`') || (ch >= '{' && ch <= '~'))
    return true;
  return I->ispunct(ch);
}
static bool is_cjk(UChar32 ch) {
  return (ch >= 0x4E00 && ch <= 0x9FFF) || (ch >= 0x3400 && ch <= 0x4DBF) || (ch >= 0x20000 && ch <= 0x2A6DF) ||
         (ch >= 0x2A700 && ch <= 0x2B73F) || (ch >= 0x2B740 && ch <= 0x2B81F) || (ch >= 0x2B820 && ch <= 0x2CEAF) ||
         (ch >= 0xF900 && ch <= 0xFAFF) || (ch >= 0x2F800 && ch <= 0x2FA1F);
}

/* Growable UTF-16 buffers for ICU. */
typedef struct u16 {
  UChar *p;
  int32_t n, cap;
} u16;
static bool u16_reserve(u16 *b, int64_t cap) {
  if (cap > INT32_MAX / 2) return false;
  if (cap <= b->cap) return true;
  UChar *q = realloc(b->p, (size_t)cap * sizeof *q);
  if (!q) return false;
  b->p = q, b->cap = (int32_t)cap;
  return true;
}

/* Normalize b->p[0..n) with norm into tmp, then swap them. */
static bool normalize(const UNormalizer2 *norm, u16 *b, u16 *tmp) {
  for (int tries = 0; tries < 2; tries++) {
    UErrorCode e = U_ZERO_ERROR;
    int32_t n = I->normalize(norm, b->p, b->n, tmp->p, tmp->cap, &e);
    if (e == U_BUFFER_OVERFLOW_ERROR) {
      if (!u16_reserve(tmp, (int64_t)n + 1)) return false;
      continue;
    }
    if (U_FAILURE(e)) return false;
    u16 t = *b;
    *b = *tmp, *tmp = t;
    b->n = n;
    return true;
  }
  return false;
}

typedef struct wp_bufs {
  u16 text, tmp, word;
  tide_strbuf utf8;
  u16 *special; /* the special tokens in UTF-16, n_special of them */
  int64_t n_special;
} wp_bufs;

/* The length (UTF-16 units) of the first special token that t[0..n) starts with, or 0: keras_hub puts them first
 * in its split pattern's alternation, so at one position a special token wins, the first listed first. */
static int32_t special_at(const wp_bufs *bf, const UChar *t, int32_t n) {
  for (int64_t i = 0; i < bf->n_special; i++) {
    const u16 *sp = &bf->special[i];
    if (sp->n > 0 && sp->n <= n && memcmp(sp->p, t, (size_t)sp->n * sizeof *t) == 0) return sp->n;
  }
  return 0;
}

/* One word (UTF-16 w[0..n)) case-folded when asked, back to UTF-8, then WordPiece. */
static bool emit_word(wp_ctx *c, wp_bufs *bf, const UNormalizer2 *fold, const UChar *w, int32_t n, ids *out) {
  if (n == 0) return true;
  const UChar *src = w;
  int32_t len = n;
  if (fold) {
    if (!u16_reserve(&bf->word, n + 1)) return false;
    memcpy(bf->word.p, w, (size_t)n * sizeof *w);
    bf->word.n = n;
    if (!normalize(fold, &bf->word, &bf->tmp)) return false;
    src = bf->word.p, len = bf->word.n;
  }
  int32_t need = 0;
  UErrorCode e = U_ZERO_ERROR;
  I->to_utf8(NULL, 0, &need, src, len, 0xFFFD, NULL, &e);
  if (need + 1 > bf->utf8.cap) {
    char *q = realloc(bf->utf8.p, (size_t)need + 1);
    if (!q) return false;
    bf->utf8.p = q, bf->utf8.cap = need + 1;
  }
  e = U_ZERO_ERROR;
  I->to_utf8(bf->utf8.p, (int32_t)bf->utf8.cap, &need, src, len, 0xFFFD, NULL, &e);
  if (U_FAILURE(e)) return false;
  return wordpiece(c, bf->utf8.p, need, out);
}

/* One string: to UTF-16 (invalid bytes become U+FFFD), NFD without Mn, split, words out. */
static bool tokenize_one(wp_ctx *c, wp_bufs *bf, uint32_t flags, const char *b, int64_t n, ids *out) {
  if (n > INT32_MAX / 4) return false;
  const UNormalizer2 *nfd = NULL, *fold = NULL;
  UErrorCode e = U_ZERO_ERROR;
  if (flags & WP_STRIP_ACCENTS) nfd = I->nfd(&e);
  if (flags & WP_LOWERCASE) fold = I->nfkc_casefold(&e);
  if (U_FAILURE(e)) return false;
  if (!u16_reserve(&bf->text, n + 1) || !u16_reserve(&bf->tmp, n + 1)) return false;
  int32_t len = 0;
  e = U_ZERO_ERROR;
  I->from_utf8(bf->text.p, bf->text.cap, &len, b, (int32_t)n, 0xFFFD, NULL, &e);
  if (U_FAILURE(e)) return false;
  bf->text.n = len;
  if (nfd) {
    if (!normalize(nfd, &bf->text, &bf->tmp)) return false;
    int32_t k = 0; /* drop the non-spacing marks */
    for (int32_t i = 0; i < bf->text.n;) {
      int32_t at = i;
      UChar32 ch;
      U16_NEXT(bf->text.p, i, bf->text.n, ch);
      if (I->char_type(ch) == U_NON_SPACING_MARK) continue;
      while (at < i) bf->text.p[k++] = bf->text.p[at++];
    }
    bf->text.n = k;
  }
  const UChar *t = bf->text.p;
  int32_t tn = bf->text.n;
  if (!(flags & WP_SPLIT)) return emit_word(c, bf, fold, t, tn, out);
  int32_t word = 0;
  for (int32_t i = 0; i < tn;) {
    int32_t at = i, sl = special_at(bf, t + at, tn - at);
    if (sl > 0) { /* a special token: a word of its own, never case-folded */
      if (!emit_word(c, bf, fold, t + word, at - word, out) || !emit_word(c, bf, NULL, t + at, sl, out)) return false;
      i = word = at + sl;
      continue;
    }
    UChar32 ch;
    U16_NEXT(t, i, tn, ch);
    bool space = is_space(ch), alone = !space && (is_punct(ch) || ((flags & WP_SPLIT_CJK) && is_cjk(ch)));
    if (!space && !alone) continue;
    if (!emit_word(c, bf, fold, t + word, at - word, out)) return false;
    if (alone && !emit_word(c, bf, fold, t + at, i - at, out)) return false;
    word = i;
  }
  return emit_word(c, bf, fold, t + word, tn - word, out);
}

/* The special tokens (string vector sp) to UTF-16 in bf. */
static bool special_tokens(wp_bufs *bf, const tide_tensor *sp) {
  bf->n_special = sp->dims[0];
  if (bf->n_special == 0) return true;
  bf->special = calloc((size_t)bf->n_special, sizeof *bf->special);
  if (!bf->special) return false;
  for (int64_t i = 0; i < bf->n_special; i++) {
    int64_t n;
    const char *b = tide_str_at(sp, i, &n);
    if (n > INT32_MAX / 4 || !u16_reserve(&bf->special[i], n + 1)) return false;
    UErrorCode e = U_ZERO_ERROR;
    int32_t len = 0;
    I->from_utf8(bf->special[i].p, bf->special[i].cap, &len, b, (int32_t)n, 0xFFFD, NULL, &e);
    if (U_FAILURE(e)) return false;
    bf->special[i].n = len;
  }
  return true;
}

/* wordpiece_tokenize(x 1-D, vocab, table, suffix 0-d, special tokens 1-D) -> int64 ids, int64 row_splits. flags:
 * 1 lowercase, 2 strip accents, 4 split, 8 split on CJK; n = max bytes a word; m = the unknown token's index.
 * The special tokens split the text (with flags 4) as words of their own, never case-folded. */
tide_status tide_cpu_wordpiece_tokenize(const tide_op_def *def, const tide_attrs *a, int n_in,
                                        const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *v = in[1], *t = in[2];
  if (!tide_icu_get()) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s", def->name, tide_last_error());
  int64_t cap = t->dims[0];
  if (cap <= 0 || (cap & (cap - 1)) != 0 || cap < 2 * v->dims[0] || t->strides[0] != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the table was not made by lookup_table from this vocabulary", def->name);
  if (a->m < 0 || a->m >= v->dims[0])
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the unknown token's index %lld is outside the vocabulary of %lld", def->name,
                     (long long)a->m, (long long)v->dims[0]);
  wp_ctx c = {.vocab = v, .slots = t->data, .mask = (uint64_t)cap - 1, .unk = a->m, .max_bytes = a->n};
  c.suffix = tide_string_at(in[3]->data, 0, &c.suffix_len);
  wp_bufs bf = {0};
  ids vals = {0};
  int64_t rows = x->dims[0];
  int64_t *ends = malloc((size_t)(rows + 1) * sizeof *ends);
  bool ok = ends != NULL && special_tokens(&bf, in[4]);
  for (int64_t r = 0; r < rows && ok; r++) {
    int64_t len;
    const char *b = tide_str_at(x, r, &len);
    ok = tokenize_one(&c, &bf, a->flags, b, len, &vals);
    ends[r] = vals.n;
  }
  free(bf.text.p), free(bf.tmp.p), free(bf.word.p), free(bf.utf8.p), free(c.key.p);
  for (int64_t i = 0; bf.special && i < bf.n_special; i++) free(bf.special[i].p);
  free(bf.special);
  tide_status st = ok ? TIDE_OK : TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory (or a string past 512 MB)", def->name);
  int64_t nsplits = rows + 1;
  if (!st) st = tide_tensor_init(out[0], TIDE_INT64, 1, &vals.n);
  if (!st) st = tide_tensor_init(out[1], TIDE_INT64, 1, &nsplits);
  if (!st) {
    if (vals.n) memcpy(out[0]->data, vals.p, (size_t)vals.n * sizeof *vals.p);
    int64_t *rs = out[1]->data;
    rs[0] = 0;
    for (int64_t r = 0; r < rows; r++) rs[r + 1] = ends[r];
  }
  free(vals.p);
  free(ends);
  return st;
}
