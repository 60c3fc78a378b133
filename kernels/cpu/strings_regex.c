/* cpu/strings_regex.c — regex_replace and regex_full_match with PCRE2: TF's RE2
 * patterns (mostly the same syntax), its rewrite (\0..\9 groups, \\ a backslash),
 * and RE2's rules for the first match or every one (no empty match right after a match).
 *
 * PCRE2 backtracks where RE2 runs in linear time, and one pcre2_match call
 * cannot be interrupted: each call gets a step limit (a pattern that needs
 * more on one element is refused, naming it), which bounds it to tens of
 * milliseconds, and an interrupt (a VM's time budget) is polled between calls. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "strings_util.h"
#include "../core/utf8.h"

#include <pcre2.h>

/* PCRE2's limits for one match: backtracking steps (its default is 10
 * million, up to a second or so of work) and nested backtracking depth. */
enum { MATCH_LIMIT = 1000000, DEPTH_LIMIT = 250000 };
/* replace_one's code for a match stopped by an interrupt. */
enum { REPLACE_INTERRUPTED = 1 };

/* Check TF's rewrite against a pattern of `groups` capture groups: NULL when
 * it is good, else why not (RE2 refuses these rewrites too). */
static const char *check_rewrite(const char *r, int64_t n, uint32_t groups, int *bad_group) {
  for (int64_t i = 0; i < n; i++) {
    if (r[i] != '\\') continue;
    if (i + 1 >= n) return "it ends in a lone backslash";
    char d = r[++i];
    if (d == '\\') continue;
    if (d < '0' || d > '9') return "a backslash must be followed by a digit or a backslash";
    if ((uint32_t)(d - '0') > groups) return *bad_group = d - '0', "it names a group the pattern does not have";
  }
  return NULL;
}

/* Append the rewrite with groups filled from ovector (unset groups are empty). */
static bool add_rewrite(tide_strbuf *out, const char *r, int64_t n, const char *s, const PCRE2_SIZE *ov) {
  for (int64_t i = 0; i < n; i++) {
    if (r[i] != '\\') {
      if (!tide_strbuf_add(out, r + i, 1)) return false;
      continue;
    }
    char d = r[++i]; /* check_rewrite made sure a digit or a backslash follows */
    if (d == '\\') {
      if (!tide_strbuf_add(out, "\\", 1)) return false;
      continue;
    }
    int g = d - '0';
    PCRE2_SIZE a = ov[2 * g], b = ov[2 * g + 1];
    if (a != PCRE2_UNSET && !tide_strbuf_add(out, s + a, (int64_t)(b - a))) return false;
  }
  return true;
}

/* Bytes of the UTF-8 character at s[i] (n bytes in all): 1 for a byte that
 * starts no complete, valid sequence (RE2 steps over those one at a time). */
static int64_t char_bytes(const unsigned char *s, int64_t i, int64_t n) {
  unsigned char c = s[i];
  int64_t k = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 1;
  if (i + k > n) return 1;
  for (int64_t j = 1; j < k; j++)
    if ((s[i + j] & 0xC0) != 0x80) return 1;
  return k;
}

/* The pattern compiled twice, since PCRE2_MATCH_INVALID_UTF makes every
 * interpreted pcre2_match call check the UTF-8 of the whole rest of the
 * subject (k matches in n bytes cost O(k n): 80,000 matches in one string
 * took seconds). An element that is valid UTF-8, checked once, is matched
 * with `valid` (UTF, no invalid-UTF support) and PCRE2_NO_UTF_CHECK, in one
 * pass. An element holding invalid UTF-8 (or a match that ends inside a
 * character, which \C can) goes to `any` (invalid UTF-8 matches nothing),
 * JIT-compiled where PCRE2 can: the JIT steps over invalid bytes as it goes,
 * with no check per call, and sees the element whole as RE2 does (an
 * anchor such as $ or \z holds only at its true end). The interpreter, where
 * the JIT is missing or its stack runs short, matches each valid stretch on
 * its own. */
typedef struct regex {
  const tide_op_def *def;
  const char *pat;
  int64_t plen;
  pcre2_code *valid, *any;
  pcre2_match_data *md;
  pcre2_match_context *mc;
  pcre2_jit_stack *jit_stack;
  uint32_t anchors; /* PCRE2_ANCHORED | PCRE2_ENDANCHORED for a full match, else 0 */
} regex;

/* pat compiled with these options into *code; false (and the error set) when it fails. */
static bool compile(const regex *r, uint32_t options, pcre2_code **code) {
  int err;
  PCRE2_SIZE erroff;
  *code = pcre2_compile((PCRE2_SPTR)r->pat, (PCRE2_SIZE)r->plen, options, &err, &erroff, NULL);
  if (*code) return true;
  PCRE2_UCHAR msg[256];
  pcre2_get_error_message(err, msg, sizeof msg);
  TIDE_FAIL(TIDE_ERR_VALUE, "%s: invalid pattern \"%.*s\" at offset %zu: %s", r->def->name, (int)r->plen, r->pat,
            (size_t)erroff, (const char *)msg);
  return false;
}

/* The invalid-UTF code, made when the first element that needs it comes. */
static bool prepare_any(regex *r) {
  if (r->any) return true;
  /* UTF mode as RE2's default; invalid UTF-8 in the input matches nothing (as in RE2) rather than failing. */
  if (!compile(r, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | r->anchors, &r->any)) return false;
  if (pcre2_jit_compile(r->any, PCRE2_JIT_COMPLETE) == 0) {
    /* PCRE2's default JIT stack is 32 KB; a bigger one (reserved, used as needed) spares most fallbacks */
    r->jit_stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, NULL);
    if (r->jit_stack) pcre2_jit_stack_assign(r->mc, NULL, r->jit_stack);
  }
  return true;
}

/* Sentinel of match_at: making the invalid-UTF code failed (the error is set). */
enum { MATCH_NO_CODE = PCRE2_ERROR_NOMATCH - 1000 };

/* The next match at or after byte p of s (n bytes) into r->md: PCRE2's count of
 * groups (> 0), PCRE2_ERROR_NOMATCH, another PCRE2 error (< 0) or MATCH_NO_CODE.
 * *valid_utf8 says s is valid UTF-8; it turns false when p falls inside a character. */
static int match_at(regex *r, bool *valid_utf8, const char *s, int64_t n, int64_t p) {
  if (*valid_utf8 && p < n && ((unsigned char)s[p] & 0xC0) == 0x80) *valid_utf8 = false;
  if (*valid_utf8)
    return pcre2_match(r->valid, (PCRE2_SPTR)s, (PCRE2_SIZE)n, (PCRE2_SIZE)p, PCRE2_NO_UTF_CHECK, r->md, r->mc);
  if (!prepare_any(r)) return MATCH_NO_CODE;
  int rc = pcre2_match(r->any, (PCRE2_SPTR)s, (PCRE2_SIZE)n, (PCRE2_SIZE)p, 0, r->md, r->mc);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
    rc = pcre2_match(r->any, (PCRE2_SPTR)s, (PCRE2_SIZE)n, (PCRE2_SIZE)p, PCRE2_NO_JIT, r->md, r->mc);
  return rc;
}

/* One element: its matches replaced into out (RE2's GlobalReplace / Replace).
 * Returns a PCRE2 error code (< 0), MATCH_NO_CODE when matching failed or
 * REPLACE_INTERRUPTED when an interrupt came, else 0. */
static int replace_one(regex *r, const char *s, int64_t n, const char *rew, int64_t rlen, bool global,
                       tide_strbuf *out, bool *oom) {
  bool valid_utf8 = tide_utf8_invalid_at((const unsigned char *)s, (size_t)n) == (size_t)n;
  int64_t p = 0, last_end = -1;
  while (p <= n) {
    if (tide_interrupt_pending()) return REPLACE_INTERRUPTED;
    int rc = match_at(r, &valid_utf8, s, n, p);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) return rc;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
    int64_t a = (int64_t)ov[0], b = (int64_t)ov[1];
    if (!tide_strbuf_add(out, s + p, a - p)) return *oom = true, 0;
    if (a == b && a == last_end) { /* an empty match where the last one ended: step over one character */
      if (p >= n) break;
      int64_t k = char_bytes((const unsigned char *)s, p, n);
      if (!tide_strbuf_add(out, s + p, k)) return *oom = true, 0;
      p += k;
      continue;
    }
    if (!add_rewrite(out, rew, rlen, s, ov)) return *oom = true, 0;
    p = last_end = b;
    if (!global) break;
  }
  if (p < n && !tide_strbuf_add(out, s + p, n - p)) *oom = true;
  return 0;
}

static void regex_free(regex *r) {
  pcre2_match_data_free(r->md);
  pcre2_match_context_free(r->mc);
  pcre2_jit_stack_free(r->jit_stack);
  pcre2_code_free(r->valid);
  pcre2_code_free(r->any);
}

/* Make r's match data and context (with the step limits) after r->valid compiled. */
static tide_status prepare_matching(regex *r) {
  r->md = pcre2_match_data_create_from_pattern(r->valid, NULL);
  r->mc = pcre2_match_context_create(NULL);
  if (r->mc) {
    pcre2_set_match_limit(r->mc, MATCH_LIMIT);
    pcre2_set_depth_limit(r->mc, DEPTH_LIMIT);
  }
  return r->md && r->mc ? TIDE_OK : TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", r->def->name);
}

tide_status tide_cpu_regex_replace(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  int64_t plen, rlen;
  const char *pat = tide_string_at(in[1]->data, 0, &plen);
  const char *rew = tide_string_at(in[2]->data, 0, &rlen);
  regex r = {.def = def, .pat = pat, .plen = plen};
  if (!compile(&r, PCRE2_UTF, &r.valid)) return tide_last_status();
  uint32_t groups = 0;
  pcre2_pattern_info(r.valid, PCRE2_INFO_CAPTURECOUNT, &groups);
  int bad_group = -1;
  const char *why = check_rewrite(rew, rlen, groups, &bad_group);
  if (why) {
    regex_free(&r);
    if (bad_group >= 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: invalid rewrite \"%.*s\": \\%d names a group the pattern does not have "
                       "(it has %u)", def->name, (int)rlen, rew, bad_group, (unsigned)groups);
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: invalid rewrite \"%.*s\": %s", def->name, (int)rlen, rew, why);
  }
  /* the match data fit either code: both have the same groups */
  tide_status st = prepare_matching(&r);
  tide_strings_adopt(o);
  tide_strbuf res = {0};
  for (int64_t k = 0; k < o->nelem && !st; k++) {
    int64_t len;
    const char *s = tide_str_at(in[0], k, &len);
    bool oom = false;
    res.n = 0;
    int rc = replace_one(&r, s, len, rew, rlen, a->n == 1, &res, &oom);
    if (oom) st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    else if (rc == MATCH_NO_CODE) st = tide_last_status();
    else if (rc == REPLACE_INTERRUPTED) {
      tide_interrupt_clear();
      st = TIDE_FAIL(TIDE_ERR_INTERRUPTED, "%s: interrupted at element %lld", def->name, (long long)k);
    } else if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT) {
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: matching element %lld failed: the pattern \"%.*s\" backtracks too much "
                     "(past the matcher's limit of %d steps, or its depth; TensorFlow's RE2 matches in linear "
                     "time): simplify the pattern (e.g. no nested repetition such as (a+)+)", def->name,
                     (long long)k, (int)plen, pat, MATCH_LIMIT);
    } else if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: matching element %lld failed: %s", def->name, (long long)k,
                     (const char *)msg);
    } else {
      st = tide_str_put(o, k, res.p, res.n);
    }
  }
  regex_free(&r);
  free(res.p);
  return st;
}

/* regex_full_match (x, pattern) -> bool: RE2::FullMatch, the pattern anchored at both ends. */
tide_status tide_cpu_regex_full_match(const tide_op_def *def, const tide_attrs *a, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  int64_t plen;
  const char *pat = tide_string_at(in[1]->data, 0, &plen);
  regex r = {.def = def, .pat = pat, .plen = plen, .anchors = PCRE2_ANCHORED | PCRE2_ENDANCHORED};
  if (!compile(&r, PCRE2_UTF | r.anchors, &r.valid)) return tide_last_status();
  tide_status st = prepare_matching(&r);
  bool *res = o->data;
  for (int64_t k = 0; k < o->nelem && !st; k++) {
    if (tide_interrupt_pending()) {
      tide_interrupt_clear();
      st = TIDE_FAIL(TIDE_ERR_INTERRUPTED, "%s: interrupted at element %lld", def->name, (long long)k);
      break;
    }
    int64_t len;
    const char *s = tide_str_at(in[0], k, &len);
    bool valid_utf8 = tide_utf8_invalid_at((const unsigned char *)s, (size_t)len) == (size_t)len;
    int rc = match_at(&r, &valid_utf8, s, len, 0);
    if (rc == MATCH_NO_CODE) st = tide_last_status();
    else if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT)
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: matching element %lld failed: the pattern \"%.*s\" backtracks too much "
                     "(past the matcher's limit of %d steps; TensorFlow's RE2 matches in linear time): simplify "
                     "the pattern", def->name, (long long)k, (int)plen, pat, MATCH_LIMIT);
    else if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: matching element %lld failed: %s", def->name, (long long)k,
                     (const char *)msg);
    } else res[k] = rc > 0;
  }
  regex_free(&r);
  return st;
}
