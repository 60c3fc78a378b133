/* cpu/bpe.c — bpe_tokenize (keras_hub's BytePairTokenizer, GPT-2's byte-level BPE): keras_hub's pre-split with
 * PCRE2, bytes mapped to unicode, merges by rank with a per-call cache; and bpe_bytes_decode, the map undone. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "lookup_hash.h"
#include "strings_util.h"
#include "../core/utf8.h"

#include <pcre2.h>
#include <pthread.h>

/* keras_hub's pre-split (byte_pair_tokenizer.py, TF workflow), written for RE2 there: \s is RE2's ASCII
 * [\t\n\f\r ] (PCRE2's would add \v), $ the end of the text only. "६" (a digit, so \p{N}) marks a space that
 * starts a word, as GPT-2's lookahead `\s+(?!\S)` would; the marks are split out and dropped. MARK_AT_END keeps
 * keras_hub's missing brackets (a space then the four special spaces in a row). */
#define WS "\\t\\n\\f\\r "
#define SPECIAL "\\x{a0}\\x{2009}\\x{202f}\\x{3000}"
#define MARK "\xe0\xa5\xac" /* ६ U+096C */
static const char *const PATTERNS[3] = {
    "( )([^" WS SPECIAL "])",
    "([" WS "]" SPECIAL ")$",
    "'s|'t|'re|'ve|'m|'ll|'d|[" WS SPECIAL "]+[\\n\\r\\t\\f" MARK SPECIAL "]| ?\\p{L}+| ?[\\p{N}]+"
    "| ?[^" WS "\\p{L}\\p{N}" SPECIAL "]+",
};
enum { P_MARK_BEFORE_WORD, P_MARK_AT_END, P_SPLIT, N_PATTERNS };

/* Each pattern compiled once for the process (compiled code is shared by threads): `valid` for valid UTF-8 (no
 * check per match), `any` where invalid bytes match nothing, as in RE2. Both JIT-compiled where PCRE2 can. */
static pcre2_code *code_valid[N_PATTERNS], *code_any[N_PATTERNS];
static bool compiled_ok;
static pthread_once_t compiled_once = PTHREAD_ONCE_INIT;

static void compile_patterns(void) {
  for (int i = 0; i < N_PATTERNS; i++) {
    int err;
    PCRE2_SIZE off;
    code_valid[i] = pcre2_compile((PCRE2_SPTR)PATTERNS[i], PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_DOLLAR_ENDONLY,
                                  &err, &off, NULL);
    code_any[i] = pcre2_compile((PCRE2_SPTR)PATTERNS[i], PCRE2_ZERO_TERMINATED,
                                PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY, &err, &off, NULL);
    if (!code_valid[i] || !code_any[i]) return;
    pcre2_jit_compile(code_valid[i], PCRE2_JIT_COMPLETE);
    pcre2_jit_compile(code_any[i], PCRE2_JIT_COMPLETE);
  }
  compiled_ok = true;
}

/* GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others for U+0100 on; as UTF-8 (1-2 bytes). */
typedef struct byte_map {
  char ch[256][2];
  uint8_t len[256];
} byte_map;

static void byte_map_init(byte_map *m) {
  int n = 0;
  for (int b = 0; b < 256; b++) {
    bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    int cp = printable ? b : 256 + n++;
    if (cp < 0x80) m->ch[b][0] = (char)cp, m->len[b] = 1;
    else m->ch[b][0] = (char)(0xC0 | (cp >> 6)), m->ch[b][1] = (char)(0x80 | (cp & 0x3F)), m->len[b] = 2;
  }
}

/* The vocabulary index of bytes b[0..n) through lookup_table's slots, or -1. */
typedef struct vocab_ref {
  const tide_tensor *v;
  const int64_t *slots;
  uint64_t mask;
} vocab_ref;

static int64_t vocab_find(const vocab_ref *r, const char *b, int64_t n) {
  for (uint64_t s = tide_lookup_hash_bytes(b, n) & r->mask, p = 0; p <= r->mask; s = (s + 1) & r->mask, p++) {
    int64_t j = r->slots[s], jl;
    if (j < 0 || j >= r->v->dims[0]) return -1;
    const char *t = tide_str_at(r->v, j, &jl);
    if (jl == n && memcmp(t, b, (size_t)n) == 0) return j;
  }
  return -1;
}

/* A word's pieces, as spans of an arena, each with its vocabulary id (-1 when not in it). */
typedef struct piece {
  int64_t off, len, id;
} piece;

typedef struct pieces {
  piece *p;
  int64_t n, cap;
} pieces;

static bool pieces_add(pieces *v, piece x) {
  if (v->n == v->cap) {
    int64_t cap = v->cap ? 2 * v->cap : 256;
    piece *q = realloc(v->p, (size_t)cap * sizeof *q);
    if (!q) return false;
    v->p = q, v->cap = cap;
  }
  v->p[v->n++] = x;
  return true;
}

/* The per-call cache (keras_hub keeps one too): word bytes -> a run of pieces in `cached`, whose bytes live in
 * `arena`. Open addressing over a power-of-two table that doubles at half full. */
typedef struct cache_slot {
  int64_t key_off, key_len, first, count; /* key_len < 0: empty */
  uint64_t hash;
} cache_slot;

typedef struct bpe_ctx {
  const tide_op_def *def;
  byte_map map;
  vocab_ref vocab, merges;
  const tide_tensor *unsplittable;
  tide_strbuf arena, key, mapped, text, tmp;
  pieces cached;
  cache_slot *slots;
  uint64_t cap, used;
  pcre2_match_data *md;
  int64_t *spans; /* the current word's parts as [start, end) pairs of `mapped` */
  int64_t spans_cap;
} bpe_ctx;

static bool cache_grow(bpe_ctx *c) {
  uint64_t cap = c->cap ? 2 * c->cap : 1024;
  cache_slot *s = malloc(cap * sizeof *s);
  if (!s) return false;
  for (uint64_t i = 0; i < cap; i++) s[i].key_len = -1;
  for (uint64_t i = 0; i < c->cap; i++) {
    if (c->slots[i].key_len < 0) continue;
    uint64_t j = c->slots[i].hash & (cap - 1);
    while (s[j].key_len >= 0) j = (j + 1) & (cap - 1);
    s[j] = c->slots[i];
  }
  free(c->slots);
  c->slots = s, c->cap = cap;
  return true;
}

/* The cache slot of word w[0..n): its own when found, else the empty one where it goes. */
static cache_slot *cache_slot_of(bpe_ctx *c, const char *w, int64_t n, uint64_t h) {
  for (uint64_t j = h & (c->cap - 1);; j = (j + 1) & (c->cap - 1)) {
    cache_slot *s = &c->slots[j];
    if (s->key_len < 0) return s;
    if (s->hash == h && s->key_len == n && memcmp(c->arena.p + s->key_off, w, (size_t)n) == 0) return s;
  }
}

/* The rank of merging parts a and b (spans of `mapped`): the merge rule "a b"'s index, or -1. */
static int64_t pair_rank(bpe_ctx *c, const int64_t *a, const int64_t *b) {
  c->key.n = 0;
  const char *m = c->mapped.p;
  if (!tide_strbuf_add(&c->key, m + a[0], a[1] - a[0]) || !tide_strbuf_add(&c->key, " ", 1) ||
      !tide_strbuf_add(&c->key, m + b[0], b[1] - b[0]))
    return -2;
  return vocab_find(&c->merges, c->key.p, c->key.n);
}

static bool same_span(const char *m, const int64_t *x, const int64_t *y) {
  return x[1] - x[0] == y[1] - y[0] && memcmp(m + x[0], m + y[0], (size_t)(x[1] - x[0])) == 0;
}

/* The pieces of one word (w[0..n), raw bytes) appended to the cache, and its slot. An unsplittable token is one
 * piece, unmapped; another word is mapped byte by byte, then GPT-2's loop: the adjacent pair of lowest rank is
 * merged everywhere (left to right), until no pair has a rank. */
static cache_slot *bpe_word(bpe_ctx *c, const char *w, int64_t n) {
  if (2 * (c->used + 1) > c->cap && !cache_grow(c)) return NULL;
  uint64_t h = tide_lookup_hash_bytes(w, n);
  cache_slot *s = cache_slot_of(c, w, n, h);
  if (s->key_len >= 0) return s;
  int64_t key_off = c->arena.n;
  if (!tide_strbuf_add(&c->arena, w, n)) return NULL;
  bool special = false;
  for (int64_t i = 0; i < c->unsplittable->dims[0] && !special; i++) {
    int64_t tl;
    const char *t = tide_str_at(c->unsplittable, i, &tl);
    special = tl == n && memcmp(t, w, (size_t)n) == 0;
  }
  int64_t first = c->cached.n;
  if (special) {
    if (!pieces_add(&c->cached, (piece){key_off, n, vocab_find(&c->vocab, w, n)})) return NULL;
  } else {
    c->mapped.n = 0;
    if (n > c->spans_cap) {
      int64_t *q = realloc(c->spans, (size_t)n * 2 * sizeof *q);
      if (!q) return NULL;
      c->spans = q, c->spans_cap = n;
    }
    int64_t k = n, *sp = c->spans;
    for (int64_t i = 0; i < n; i++) {
      unsigned char b = (unsigned char)w[i];
      sp[2 * i] = c->mapped.n;
      if (!tide_strbuf_add(&c->mapped, c->map.ch[b], c->map.len[b])) return NULL;
      sp[2 * i + 1] = c->mapped.n;
    }
    while (k > 1) {
      int64_t best = -1, best_rank = -1;
      for (int64_t i = 0; i + 1 < k; i++) {
        int64_t r = pair_rank(c, sp + 2 * i, sp + 2 * i + 2);
        if (r == -2) return NULL;
        if (r >= 0 && (best_rank < 0 || r < best_rank)) best = i, best_rank = r;
      }
      if (best < 0) break;
      int64_t a[2] = {sp[2 * best], sp[2 * best + 1]}, b[2] = {sp[2 * best + 2], sp[2 * best + 3]};
      int64_t out = 0;
      for (int64_t i = 0; i < k;) {
        if (i + 1 < k && same_span(c->mapped.p, sp + 2 * i, a) && same_span(c->mapped.p, sp + 2 * i + 2, b)) {
          sp[2 * out] = sp[2 * i], sp[2 * out + 1] = sp[2 * i + 3];
          i += 2;
        } else {
          sp[2 * out] = sp[2 * i], sp[2 * out + 1] = sp[2 * i + 1];
          i += 1;
        }
        out++;
      }
      k = out;
    }
    /* the spans point into `mapped`, which the next word reuses: copy the pieces' bytes to the arena */
    int64_t base = c->arena.n;
    if (!tide_strbuf_add(&c->arena, c->mapped.p, c->mapped.n)) return NULL;
    for (int64_t i = 0; i < k; i++) {
      int64_t off = base + sp[2 * i], len = sp[2 * i + 1] - sp[2 * i];
      if (!pieces_add(&c->cached, (piece){off, len, vocab_find(&c->vocab, c->arena.p + off, len)})) return NULL;
    }
  }
  *s = (cache_slot){.key_off = key_off, .key_len = n, .first = first, .count = c->cached.n - first, .hash = h};
  c->used++;
  return s;
}

/* Appends the pieces of word w[0..n) to out (their cache entries). */
static bool emit_word(bpe_ctx *c, const char *w, int64_t n, pieces *out) {
  if (n == 0) return true;
  cache_slot *s = bpe_word(c, w, n);
  if (!s) return false;
  for (int64_t i = 0; i < s->count; i++)
    if (!pieces_add(out, c->cached.p[s->first + i])) return false;
  return true;
}

/* The next match of pattern pi in s[p..n) into c->md: > 0, or PCRE2_ERROR_NOMATCH, or another error (< 0). */
static int next_match(bpe_ctx *c, int pi, bool valid, const char *s, int64_t n, int64_t p) {
  if (valid)
    return pcre2_match(code_valid[pi], (PCRE2_SPTR)s, (size_t)n, (size_t)p, PCRE2_NO_UTF_CHECK, c->md, NULL);
  return pcre2_match(code_any[pi], (PCRE2_SPTR)s, (size_t)n, (size_t)p, 0, c->md, NULL);
}

/* s[0..n) with every match of pattern pi replaced (RE2's GlobalReplace; the patterns never match empty) by
 * `before` then the groups 1.. in order then `after`, into out. */
static int replace_all(bpe_ctx *c, int pi, const char *s, int64_t n, const char *before, const char *after,
                       tide_strbuf *out) {
  bool valid = tide_utf8_invalid_at((const unsigned char *)s, (size_t)n) == (size_t)n;
  out->n = 0;
  int64_t p = 0;
  for (;;) {
    int rc = next_match(c, pi, valid, s, n, p);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) return rc;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);
    if (!tide_strbuf_add(out, s + p, (int64_t)ov[0] - p) || !tide_strbuf_add(out, before, (int64_t)strlen(before)))
      return PCRE2_ERROR_NOMEMORY;
    for (int g = 1; g < rc; g++)
      if (ov[2 * g] != PCRE2_UNSET && !tide_strbuf_add(out, s + ov[2 * g], (int64_t)(ov[2 * g + 1] - ov[2 * g])))
        return PCRE2_ERROR_NOMEMORY;
    if (!tide_strbuf_add(out, after, (int64_t)strlen(after))) return PCRE2_ERROR_NOMEMORY;
    p = (int64_t)ov[1];
    if (p >= n) break;
  }
  return tide_strbuf_add(out, s + p, n - p) ? 0 : PCRE2_ERROR_NOMEMORY;
}

/* The length of the last UTF-8 character of s[0..n) (a stray byte counts alone). */
static int64_t last_char(const char *s, int64_t n) {
  int64_t i = n - 1;
  while (i > 0 && n - i < 4 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
  return n - i;
}

/* keras_hub's second pass: a trailing space or mark ([ \t\r\f\v६ special spaces]$) is cut off a piece. */
static bool is_trailing(const char *t, int64_t n) {
  static const char *const set[] = {" ", "\t", "\r", "\f", "\v", MARK, "\xc2\xa0", "\xe2\x80\x89", "\xe2\x80\xaf",
                                    "\xe3\x80\x80"};
  for (size_t i = 0; i < sizeof set / sizeof *set; i++)
    if ((int64_t)strlen(set[i]) == n && memcmp(set[i], t, (size_t)n) == 0) return true;
  return false;
}

/* One piece of the first split: the second pass, then the BPE of what is left (a lone mark is dropped). */
static bool emit_piece(bpe_ctx *c, const char *p, int64_t n, pieces *out) {
  int64_t last = last_char(p, n);
  bool mark = last == 3 && memcmp(p + n - 3, MARK, 3) == 0;
  if (last < n && is_trailing(p + n - last, last)) {
    if (!emit_word(c, p, n - last, out)) return false;
    return mark || emit_word(c, p + n - last, last, out);
  }
  if (mark && last == n) return true;
  return emit_word(c, p, n, out);
}

/* Splits s[0..n) (no unsplittable token in it) with SPLIT: each match and the text between are pieces. */
static int split_words(bpe_ctx *c, const char *s, int64_t n, pieces *out) {
  bool valid = tide_utf8_invalid_at((const unsigned char *)s, (size_t)n) == (size_t)n;
  int64_t p = 0;
  while (p < n) {
    int rc = next_match(c, P_SPLIT, valid, s, n, p);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) return rc;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);
    if ((int64_t)ov[0] > p && !emit_piece(c, s + p, (int64_t)ov[0] - p, out)) return PCRE2_ERROR_NOMEMORY;
    if (!emit_piece(c, s + ov[0], (int64_t)(ov[1] - ov[0]), out)) return PCRE2_ERROR_NOMEMORY;
    p = (int64_t)ov[1];
  }
  if (p < n && !emit_piece(c, s + p, n - p, out)) return PCRE2_ERROR_NOMEMORY;
  return 0;
}

/* s[0..n) cut around the unsplittable tokens from the i-th on (each kept whole, one piece), the rest split. */
static int split_unsplittable(bpe_ctx *c, int64_t i, const char *s, int64_t n, pieces *out) {
  if (n == 0) return 0;
  if (i >= c->unsplittable->dims[0]) return split_words(c, s, n, out);
  int64_t tl;
  const char *t = tide_str_at(c->unsplittable, i, &tl);
  int64_t at = 0;
  for (const char *q; tl > 0 && (q = memmem(s + at, (size_t)(n - at), t, (size_t)tl)) != NULL;) {
    int64_t k = q - s;
    int rc = split_unsplittable(c, i + 1, s + at, k - at, out);
    if (rc) return rc;
    if (!emit_word(c, q, tl, out)) return PCRE2_ERROR_NOMEMORY;
    at = k + tl;
  }
  return split_unsplittable(c, i + 1, s + at, n - at, out);
}

/* One string's pieces appended to out. */
static int tokenize_one(bpe_ctx *c, bool prefix_space, const char *s, int64_t n, pieces *out) {
  tide_strbuf *in = &c->tmp;
  in->n = 0;
  if ((prefix_space && !tide_strbuf_add(in, " ", 1)) || !tide_strbuf_add(in, s, n)) return PCRE2_ERROR_NOMEMORY;
  int rc = replace_all(c, P_MARK_BEFORE_WORD, in->p, in->n, MARK, "", &c->text);
  if (!rc) rc = replace_all(c, P_MARK_AT_END, c->text.p, c->text.n, "", MARK, in);
  if (!rc) rc = split_unsplittable(c, 0, in->p, in->n, out);
  return rc;
}

/* The table must be lookup_table's from vocabulary v. */
static bool table_ok(const tide_tensor *v, const tide_tensor *t) {
  int64_t cap = t->dims[0];
  return cap > 0 && (cap & (cap - 1)) == 0 && cap >= 2 * v->dims[0] && t->strides[0] == 1;
}

/* bpe_tokenize(x 1-D, vocab (token of each id, "" for none), its table, merges ("a b", by rank), their table,
 * unsplittable tokens) -> int64 ids (or the string pieces: flags 2), int64 row_splits. flags 1: a space first. */
tide_status tide_cpu_bpe_tokenize(const tide_op_def *def, const tide_attrs *a, int n_in,
                                  const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  if (!table_ok(in[1], in[2]))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the vocabulary's table was not made by lookup_table from it", def->name);
  if (!table_ok(in[3], in[4]))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the merges' table was not made by lookup_table from them", def->name);
  pthread_once(&compiled_once, compile_patterns);
  if (!compiled_ok) return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: PCRE2 could not compile the pre-split patterns", def->name);
  bpe_ctx c = {.def = def,
               .vocab = {in[1], in[2]->data, (uint64_t)in[2]->dims[0] - 1},
               .merges = {in[3], in[4]->data, (uint64_t)in[4]->dims[0] - 1},
               .unsplittable = in[5]};
  byte_map_init(&c.map);
  c.md = pcre2_match_data_create(10, NULL);
  bool strings = a->flags & 2;
  pieces toks = {0};
  int64_t rows = x->dims[0];
  int64_t *ends = malloc((size_t)(rows + 1) * sizeof *ends);
  tide_status st = c.md && ends ? TIDE_OK : TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  for (int64_t r = 0; r < rows && !st; r++) {
    if (tide_interrupt_pending()) {
      tide_interrupt_clear();
      st = TIDE_FAIL(TIDE_ERR_INTERRUPTED, "%s: interrupted at string %lld", def->name, (long long)r);
      break;
    }
    int64_t len;
    const char *b = tide_str_at(x, r, &len);
    int rc = tokenize_one(&c, a->flags & 1, b, len, &toks);
    if (rc == PCRE2_ERROR_NOMEMORY) st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    else if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: splitting string %lld failed: %s", def->name, (long long)r,
                     (const char *)msg);
    }
    ends[r] = toks.n;
  }
  int64_t nsplits = rows + 1;
  if (!st) st = tide_tensor_init(out[0], strings ? TIDE_STRING : TIDE_INT64, 1, &toks.n);
  if (!st) st = tide_tensor_init(out[1], TIDE_INT64, 1, &nsplits);
  if (!st) {
    if (strings) {
      tide_strings_adopt(out[0]);
      for (int64_t i = 0; i < toks.n && !st; i++) st = tide_str_put(out[0], i, c.arena.p + toks.p[i].off, toks.p[i].len);
    } else {
      int64_t *ids = out[0]->data;
      for (int64_t i = 0; i < toks.n; i++) ids[i] = toks.p[i].id;
    }
    int64_t *rs = out[1]->data;
    rs[0] = 0;
    for (int64_t r = 0; r < rows; r++) rs[r + 1] = ends[r];
  }
  pcre2_match_data_free(c.md);
  free(c.arena.p), free(c.key.p), free(c.mapped.p), free(c.text.p), free(c.tmp.p);
  free(c.cached.p), free(c.slots), free(c.spans), free(toks.p), free(ends);
  return st;
}

/* bpe_bytes_decode(x) -> string, same shape: each character of GPT-2's byte map back to its byte; characters
 * outside the map give nothing (keras_hub's default ""). */
tide_status tide_cpu_bpe_bytes_decode(const tide_op_def *def, const tide_attrs *a, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  byte_map m;
  byte_map_init(&m);
  int16_t back[512]; /* code point (all below U+0200) -> byte */
  for (int i = 0; i < 512; i++) back[i] = -1;
  for (int b = 0; b < 256; b++) {
    int cp = m.len[b] == 1 ? (unsigned char)m.ch[b][0]
                           : (((unsigned char)m.ch[b][0] & 0x1F) << 6) | ((unsigned char)m.ch[b][1] & 0x3F);
    back[cp] = (int16_t)b;
  }
  tide_tensor *o = out[0];
  tide_strings_adopt(o);
  tide_strbuf res = {0};
  tide_status st = TIDE_OK;
  for (int64_t k = 0; k < o->nelem && !st; k++) {
    int64_t n;
    const unsigned char *s = (const unsigned char *)tide_str_at(in[0], k, &n);
    res.n = 0;
    for (int64_t i = 0; i < n;) {
      unsigned char c0 = s[i]; /* the character at i: its length from its first byte */
      int64_t cl = c0 < 0x80 ? 1 : c0 >= 0xF0 ? 4 : c0 >= 0xE0 ? 3 : c0 >= 0xC0 ? 2 : 1;
      if (i + cl > n) cl = n - i;
      int cp = -1;
      if (cl == 1 && c0 < 0x80) cp = c0;
      else if (cl == 2 && (s[i + 1] & 0xC0) == 0x80) cp = ((c0 & 0x1F) << 6) | (s[i + 1] & 0x3F);
      if (cp >= 0 && cp < 512 && back[cp] >= 0) {
        char byte = (char)back[cp];
        if (!tide_strbuf_add(&res, &byte, 1)) {
          st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
          break;
        }
      }
      i += cl;
    }
    if (!st) st = tide_str_put(o, k, res.p, res.n);
  }
  free(res.p);
  return st;
}
