/* core/file_policy.c — file policies (tide/files.h): the folder a host lets
 * tide's file functions touch while its scripts run, checked after symbolic
 * links are resolved, per thread like memory accounts. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tide/files.h"
#include "internal.h"

struct tide_file_policy {
  int64_t refs; /* atomic */
  char *root;   /* resolved, no trailing '/'; NULL: no files at all */
};

static __thread tide_file_policy *current_policy;

/* `path` made absolute with every symbolic link in its existing part
 * resolved (realpath), its missing tail appended as written: a tail with
 * ".." is refused (it cannot be resolved without the folders it names). */
static tide_status resolve(const char *path, char out[PATH_MAX]) {
  char abs[PATH_MAX];
  if (path[0] == '/') {
    if (strlen(path) >= sizeof abs) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: the path is too long");
    strcpy(abs, path);
  } else {
    if (!getcwd(abs, sizeof abs)) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: cannot read the working folder");
    size_t n = strlen(abs);
    if (n + 1 + strlen(path) >= sizeof abs) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: the path is too long");
    abs[n] = '/';
    strcpy(abs + n + 1, path);
  }
  /* the longest prefix that exists, resolved; the rest kept */
  size_t cut = strlen(abs);
  for (;;) {
    char saved = abs[cut];
    abs[cut] = '\0';
    char *ok = realpath(cut ? abs : "/", out);
    abs[cut] = saved;
    if (ok) break;
    if (errno != ENOENT && errno != ENOTDIR)
      return TIDE_FAIL(TIDE_ERR_IO, "file access refused: cannot resolve '%s': %s", path, strerror(errno));
    while (cut > 0 && abs[cut - 1] == '/') cut--; /* drop the last component */
    while (cut > 0 && abs[cut - 1] != '/') cut--;
    while (cut > 0 && abs[cut - 1] == '/') cut--;
  }
  for (const char *t = abs + cut; *t;) {
    while (*t == '/') t++;
    size_t len = strcspn(t, "/");
    if (len == 0) break;
    if (len == 2 && t[0] == '.' && t[1] == '.')
      return TIDE_FAIL(TIDE_ERR_IO, "file access refused: '%s' climbs out of a folder that does not exist", path);
    if (!(len == 1 && t[0] == '.')) {
      size_t n = strlen(out);
      if (n + 1 + len >= PATH_MAX) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: the path is too long");
      if (!(n == 1 && out[0] == '/')) out[n++] = '/';
      memcpy(out + n, t, len);
      out[n + len] = '\0';
    }
    t += len;
  }
  return TIDE_OK;
}

tide_file_policy *tide_file_policy_new(const char *root) {
  tide_file_policy *p = calloc(1, sizeof *p);
  if (!p) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory: cannot make a file policy");
    return NULL;
  }
  p->refs = 1;
  if (root) {
    char resolved[PATH_MAX];
    if (!realpath(root, resolved)) {
      TIDE_FAIL(TIDE_ERR_IO, "file policy: the root folder '%s' cannot be resolved: %s", root, strerror(errno));
      free(p);
      return NULL;
    }
    size_t n = strlen(resolved);
    if (n > 1 && resolved[n - 1] == '/') resolved[--n] = '\0';
    if (!(p->root = strdup(resolved))) {
      TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory: cannot make a file policy");
      free(p);
      return NULL;
    }
  }
  return p;
}

void tide_file_policy_retain(tide_file_policy *p) {
  if (p) __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
}

void tide_file_policy_release(tide_file_policy *p) {
  if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    free(p->root);
    free(p);
  }
}

tide_file_policy *tide_file_policy_swap(tide_file_policy *p) {
  tide_file_policy *prev = current_policy;
  current_policy = p;
  return prev;
}

tide_file_policy *tide_file_policy_current(void) { return current_policy; }

tide_status tide_file_check(const char *path, bool write) {
  const tide_file_policy *p = current_policy;
  if (!p) return TIDE_OK;
  const char *verb = write ? "write" : "read";
  if (!path) return TIDE_FAIL(TIDE_ERR_IO, "file access refused: no path given");
  if (!p->root)
    return TIDE_FAIL(TIDE_ERR_IO, "file access refused: cannot %s '%s': this host allows its scripts no files", verb, path);
  char resolved[PATH_MAX];
  tide_status st = resolve(path, resolved);
  if (st) return st;
  size_t n = strlen(p->root);
  bool inside = strcmp(p->root, "/") == 0 ||
                (strncmp(resolved, p->root, n) == 0 && (resolved[n] == '\0' || resolved[n] == '/'));
  if (!inside)
    return TIDE_FAIL(TIDE_ERR_IO, "file access refused: cannot %s '%s': it lies outside '%s', the folder this host "
                     "allows its scripts", verb, path, p->root);
  return TIDE_OK;
}
