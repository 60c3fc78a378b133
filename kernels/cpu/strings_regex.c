/* cpu/strings_regex.c — regex_replace with PCRE2: TF's RE2 patterns (mostly
 * the same syntax), its rewrite (\0..\9 groups, \\ a backslash), and RE2's
 * rules for the first match or every one (no empty match right after a match).
 *
 * PCRE2 backtracks where RE2 runs in linear time, and one pcre2_match call
 * cannot be interrupted: each call gets a step limit (a pattern that needs
 * more on one element is refused, naming it), which bounds it to tens of
 * milliseconds, and an interrupt (a VM's time budget) is polled between calls. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "strings_util.h"

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

/* One element: its matches replaced into out (RE2's GlobalReplace / Replace).
 * Returns a PCRE2 error code (< 0) when matching failed, else 0. */
static int replace_one(const pcre2_code *re, pcre2_match_data *md, pcre2_match_context *mc, const char *s, int64_t n,
                       const char *rew, int64_t rlen, bool global, tide_strbuf *out, bool *oom) {
  int64_t p = 0, last_end = -1;
  while (p <= n) {
    if (tide_interrupt_pending()) return REPLACE_INTERRUPTED;
    int rc = pcre2_match(re, (PCRE2_SPTR)s, (PCRE2_SIZE)n, (PCRE2_SIZE)p, 0, md, mc);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) return rc;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
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

tide_status tide_cpu_regex_replace(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  int64_t plen, rlen;
  const char *pat = tide_string_at(in[1]->data, 0, &plen);
  const char *rew = tide_string_at(in[2]->data, 0, &rlen);
  int err;
  PCRE2_SIZE erroff;
  /* UTF mode as RE2's default; invalid UTF-8 in the input matches nothing (as in RE2) rather than failing. */
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, (PCRE2_SIZE)plen, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &erroff,
                                 NULL);
  if (!re) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: invalid pattern \"%.*s\" at offset %zu: %s", def->name, (int)plen, pat,
                     (size_t)erroff, (const char *)msg);
  }
  uint32_t groups = 0;
  pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &groups);
  int bad_group = -1;
  const char *why = check_rewrite(rew, rlen, groups, &bad_group);
  if (why) {
    pcre2_code_free(re);
    if (bad_group >= 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: invalid rewrite \"%.*s\": \\%d names a group the pattern does not have "
                       "(it has %u)", def->name, (int)rlen, rew, bad_group, (unsigned)groups);
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: invalid rewrite \"%.*s\": %s", def->name, (int)rlen, rew, why);
  }
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
  pcre2_match_context *mc = pcre2_match_context_create(NULL);
  if (mc) {
    pcre2_set_match_limit(mc, MATCH_LIMIT);
    pcre2_set_depth_limit(mc, DEPTH_LIMIT);
  }
  tide_status st = md && mc ? TIDE_OK : TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  tide_strings_adopt(o);
  tide_strbuf res = {0};
  for (int64_t k = 0; k < o->nelem && !st; k++) {
    int64_t len;
    const char *s = tide_str_at(in[0], k, &len);
    bool oom = false;
    res.n = 0;
    int rc = replace_one(re, md, mc, s, len, rew, rlen, a->n == 1, &res, &oom);
    if (oom) st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
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
  pcre2_match_context_free(mc);
  pcre2_match_data_free(md);
  pcre2_code_free(re);
  free(res.p);
  return st;
}
