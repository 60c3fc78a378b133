/* cpu/icu_load.c — loads ICU's common library (libicuuc.so.<major>, the version the headers name) on first use
 * and looks up the few functions the tokenizers call, by their versioned names (u_charType_72, ...). */
#include "icu_load.h"

#include "../core/registry.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unicode/uvernum.h>

#define ICU_STR2(x) #x
#define ICU_STR(x) ICU_STR2(x) /* the headers #define each name to its versioned one */
#define ICU_SONAME "libicuuc.so." ICU_STR(U_ICU_VERSION_MAJOR_NUM)

tide_icu tide_icu_fns;
#define icu tide_icu_fns
static bool icu_ok;
static char icu_err[256];
static pthread_once_t icu_once = PTHREAD_ONCE_INIT;

static void icu_load(void) {
  void *h = dlopen(ICU_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(icu_err, sizeof icu_err, "cannot load %s (Debian's libicu%d): %s", ICU_SONAME, U_ICU_VERSION_MAJOR_NUM,
             dlerror());
    return;
  }
  const char *missing = NULL;
#define ICU_SYM(field, name)                                 \
  do {                                                       \
    *(void **)&icu.field = dlsym(h, ICU_STR(name));          \
    if (!icu.field && !missing) missing = ICU_STR(name);     \
  } while (0)
  ICU_SYM(char_type, u_charType);
  ICU_SYM(ispunct, u_ispunct);
  ICU_SYM(nfd, unorm2_getNFDInstance);
  ICU_SYM(nfkc_casefold, unorm2_getNFKCCasefoldInstance);
  ICU_SYM(normalize, unorm2_normalize);
  ICU_SYM(from_utf8, u_strFromUTF8WithSub);
  ICU_SYM(to_utf8, u_strToUTF8WithSub);
  ICU_SYM(get_script, uscript_getScript);
#undef ICU_SYM
  if (missing) {
    snprintf(icu_err, sizeof icu_err, "%s has no %s", ICU_SONAME, missing);
    return; /* the handle stays open: harmless, and dlclose under other threads is not */
  }
  icu_ok = true;
}

const tide_icu *tide_icu_get(void) {
  pthread_once(&icu_once, icu_load);
  if (!icu_ok) {
    TIDE_FAIL(TIDE_ERR_VALUE, "%s", icu_err);
    return NULL;
  }
  return &icu;
}
