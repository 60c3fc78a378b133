/* io/match_files.c — tide_match_files: glob(3) over each pattern, the
 * matches of all patterns sorted together (tf.io.matching_files), under a
 * file policy with every folder read and every path found checked. */
#include <dirent.h>
#include <errno.h>
#include <glob.h> /* GLOB_PERIOD (GNU; the build defines _GNU_SOURCE): `*` matches a leading dot, as TF's matcher */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tide/files.h"
#include "tide/strings.h"
#include "../core/internal.h"

/* Under a file policy: the folder a pattern searches (the components before
 * the first one with a wildcard) must be allowed. */
static tide_status check_pattern(const char *pattern) {
  size_t wild = strcspn(pattern, "*?[");
  if (!pattern[wild]) return tide_file_check(pattern, false);
  char *dir = strndup(pattern, wild);
  if (!dir) return TIDE_FAIL(TIDE_ERR_MEMORY, "matching_files: out of memory");
  char *slash = strrchr(dir, '/');
  if (slash) slash[slash == dir ? 1 : 0] = '\0';
  tide_status st = tide_file_check(slash ? dir : ".", false);
  free(dir);
  return st;
}

/* Under a file policy glob reads folders and stats paths through these, so
 * that every folder a pattern lists lies under the root, and every path it
 * tests or finds: the folder before the first wildcard is not enough, since
 * a ".." after a wildcard ("root/s*" + "/../../etc/pass*") climbs out of it.
 * Listing a folder outside is refused: the first refusal is kept (its
 * message is tide's last error) and stops the match. A path outside that
 * glob only stats (an entry that is a link out, a literal last component)
 * is as missing, so that neither reveals anything about what lies outside. */
static __thread bool glob_refused;

static bool glob_allowed(const char *path) {
  if (glob_refused) return false;
  if (tide_file_check(path, false) == TIDE_OK) return true;
  glob_refused = true;
  errno = EACCES;
  return false;
}

static bool stat_allowed(const char *path) {
  if (glob_refused) return false;
  if (tide_file_check(path, false) == TIDE_OK) return true;
  errno = ENOENT;
  return false;
}

static void *checked_opendir(const char *path) { return glob_allowed(*path ? path : ".") ? opendir(path) : NULL; }
static struct dirent *checked_readdir(void *d) { return readdir(d); }
static void checked_closedir(void *d) { closedir(d); }
static int checked_stat(const char *path, struct stat *st) { return stat_allowed(path) ? stat(path, st) : -1; }
static int checked_lstat(const char *path, struct stat *st) { return stat_allowed(path) ? lstat(path, st) : -1; }

static int by_bytes(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "." or ".." as the last component: GLOB_PERIOD lets `*` match them too. */
static int is_dot_entry(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  return strcmp(base, ".") == 0 || strcmp(base, "..") == 0;
}

/* A folder that does not exist matches nothing (as TF); any other failure
 * to read one stops the match, which the caller reports. */
static int unreadable(const char *path, int err) {
  (void)path;
  return glob_refused || !(err == ENOENT || err == ENOTDIR);
}

tide_status tide_match_files(int64_t n, const char *const *patterns, tide_tensor *out) {
  if (!out || n < 0 || (n > 0 && !patterns))
    return TIDE_FAIL(TIDE_ERR_VALUE, "matching_files: patterns and an output tensor are required");
  glob_t *globs = calloc((size_t)(n > 0 ? n : 1), sizeof *globs);
  if (!globs) return TIDE_FAIL(TIDE_ERR_MEMORY, "matching_files: out of memory");
  tide_status st = TIDE_OK;
  int64_t done = 0, total = 0;
  bool policy = tide_file_policy_current() != NULL;
  for (; done < n; done++) {
    if (!patterns[done]) {
      st = TIDE_FAIL(TIDE_ERR_VALUE, "matching_files: pattern %lld is NULL", (long long)done);
      break;
    }
    if ((st = check_pattern(patterns[done]))) break;
    int flags = GLOB_PERIOD | GLOB_NOSORT;
    if (policy) {
      flags |= GLOB_ALTDIRFUNC;
      globs[done].gl_opendir = checked_opendir;
      globs[done].gl_readdir = checked_readdir;
      globs[done].gl_closedir = checked_closedir;
      globs[done].gl_stat = checked_stat;
      globs[done].gl_lstat = checked_lstat;
      glob_refused = false;
    }
    int rc = glob(patterns[done], flags, unreadable, &globs[done]);
    if (policy && !glob_refused) /* what it found: each path too (a literal tail is tested by stat, not listed) */
      for (size_t i = 0; rc == 0 && i < globs[done].gl_pathc; i++)
        if (!is_dot_entry(globs[done].gl_pathv[i])) glob_allowed(globs[done].gl_pathv[i]);
    if (policy && glob_refused) {
      st = TIDE_ERR_IO; /* tide_file_check's message, naming the path outside */
      if (rc == 0) done++; /* globfree it too */
      break;
    }
    if (rc == GLOB_NOMATCH) continue;
    if (rc != 0) {
      st = rc == GLOB_NOSPACE ? TIDE_FAIL(TIDE_ERR_MEMORY, "matching_files: out of memory matching '%s'", patterns[done])
                              : TIDE_FAIL(TIDE_ERR_IO, "matching_files: cannot read a folder while matching '%s'",
                                          patterns[done]);
      done++; /* globfree it too */
      break;
    }
    total += (int64_t)globs[done].gl_pathc;
  }
  char **paths = st ? NULL : malloc((size_t)(total > 0 ? total : 1) * sizeof *paths);
  if (!st && !paths) st = TIDE_FAIL(TIDE_ERR_MEMORY, "matching_files: out of memory");
  int64_t count = 0;
  if (!st) {
    for (int64_t p = 0; p < done; p++)
      for (size_t i = 0; i < globs[p].gl_pathc; i++)
        if (!is_dot_entry(globs[p].gl_pathv[i])) paths[count++] = globs[p].gl_pathv[i];
    qsort(paths, (size_t)count, sizeof *paths, by_bytes);
    st = tide_tensor_init(out, TIDE_STRING, 1, &count);
    if (!st) {
      for (int64_t i = 0; !st && i < count; i++) st = tide_string_set(out, i, paths[i], (int64_t)strlen(paths[i]));
      if (st) tide_tensor_release(out);
    }
  }
  free(paths);
  for (int64_t p = 0; p < done; p++) globfree(&globs[p]);
  free(globs);
  return st;
}
