/* cpu/icu_load.h — ICU's common library for the tokenizers (wordpiece.c) and tf.strings.unicode_script
 * (strings_unicode.c), loaded on first use with dlopen so a tide that never needs it never maps it (libtide's
 * start-up loads no ICU); the functions they call, by pointer. */
#ifndef TIDE_CPU_ICU_LOAD_H
#define TIDE_CPU_ICU_LOAD_H
#include <stdbool.h>

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uscript.h>
#include <unicode/ustring.h>

typedef struct tide_icu {
  int8_t (*char_type)(UChar32 c);
  UBool (*ispunct)(UChar32 c);
  const UNormalizer2 *(*nfd)(UErrorCode *e);
  const UNormalizer2 *(*nfkc_casefold)(UErrorCode *e);
  int32_t (*normalize)(const UNormalizer2 *n, const UChar *src, int32_t len, UChar *dest, int32_t cap, UErrorCode *e);
  UChar *(*from_utf8)(UChar *dest, int32_t cap, int32_t *len, const char *src, int32_t srclen, UChar32 sub,
                      int32_t *nsubs, UErrorCode *e);
  char *(*to_utf8)(char *dest, int32_t cap, int32_t *len, const UChar *src, int32_t srclen, UChar32 sub,
                   int32_t *nsubs, UErrorCode *e);
  UScriptCode (*get_script)(UChar32 c, UErrorCode *e);
} tide_icu;

/* Filled once by tide_icu_get (pthread_once orders it before any caller's reads). */
extern tide_icu tide_icu_fns;
/* The functions, or NULL with an error set naming the library that could not be loaded. */
const tide_icu *tide_icu_get(void);
#endif
