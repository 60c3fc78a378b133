/* tests/c/test_file_policy.c — file policies (tide/files.h): what lies under
 * the root passes once symbolic links are followed, anything else (a link
 * out, "..", a missing tail climbing out) is refused with a message naming
 * the path, no root refuses everything, policies are per thread, and the
 * library's file functions (a TFRecord writer, matching_files) obey them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "tide/tide.h"
#include "util.h"

static char root[64], outside[64];

static bool allowed(const char *path) { return tide_file_check(path, false) == TIDE_OK; }

static bool refused(const char *path, const char *expect) {
  bool ok = tide_file_check(path, true) == TIDE_ERR_IO && contains(tide_last_error(), expect);
  if (!ok) fprintf(stderr, "not refused as expected: %s -> %s\n", path, tide_last_error());
  return ok;
}

static void *check_on_other_thread(void *arg) {
  (void)arg;
  return (void *)(intptr_t)allowed(outside); /* no policy here: allowed */
}

static void test_root(void) {
  char path[256], link[256];
  tide_file_policy *p = tide_file_policy_new(root);
  CHECK(p != NULL);
  CHECK(tide_file_policy_swap(p) == NULL);
  CHECK(allowed(root));
  snprintf(path, sizeof path, "%s/a.txt", root);
  CHECK(allowed(path));
  snprintf(path, sizeof path, "%s/new/deeper/file.bin", root); /* not there yet: to be written */
  CHECK(allowed(path));
  snprintf(path, sizeof path, "%s/./sub/../a.txt", root);
  CHECK(allowed(path));
  CHECK(refused(outside, "it lies outside"));
  CHECK(refused("/etc/passwd", "'/etc/passwd'"));
  snprintf(path, sizeof path, "%s/../%s", root, strrchr(outside, '/') + 1); /* ".." out through folders that exist */
  CHECK(refused(path, "lies outside"));
  snprintf(path, sizeof path, "%s/missing/../../x", root); /* ".." after a folder that does not exist */
  CHECK(refused(path, "climbs out of a folder that does not exist"));
  snprintf(path, sizeof path, "%sx/file", root); /* a sibling whose name starts with the root's */
  CHECK(refused(path, "lies outside"));
  snprintf(link, sizeof link, "%s/out", root); /* a link inside pointing out */
  CHECK(symlink(outside, link) == 0);
  snprintf(path, sizeof path, "%s/out/file", root);
  CHECK(refused(path, "lies outside"));
  CHECK(refused(link, "lies outside"));
  /* relative paths resolve against the working folder */
  char cwd[512];
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  CHECK(chdir(root) == 0);
  CHECK(allowed("a.txt") && allowed("./new.txt"));
  CHECK(refused("../x", "lies outside"));
  CHECK(chdir(cwd) == 0);
  /* per thread: another thread has none */
  pthread_t t;
  void *r = NULL;
  CHECK(pthread_create(&t, NULL, check_on_other_thread, NULL) == 0);
  pthread_join(t, &r);
  CHECK(r == (void *)1);
  /* the library's file functions obey it */
  snprintf(path, sizeof path, "%s/w.tfrecord", outside);
  CHECK(tide_record_writer_open(path, "") == NULL && contains(tide_last_error(), "file access refused"));
  snprintf(path, sizeof path, "%s/w.tfrecord", root);
  tide_record_writer *w = tide_record_writer_open(path, "");
  CHECK(w != NULL);
  if (w) CHECK(tide_record_writer_close(w) == TIDE_OK);
  unlink(path);
  char pattern[256];
  snprintf(pattern, sizeof pattern, "%s/*", outside);
  const char *pats[1] = {pattern};
  tide_tensor m = blank();
  CHECK(tide_match_files(1, pats, &m) == TIDE_ERR_IO && contains(tide_last_error(), "lies outside"));
  snprintf(pattern, sizeof pattern, "%s/*.txt", root);
  CHECK(tide_match_files(1, pats, &m) == TIDE_OK && m.nelem == 1);
  tide_tensor_release(&m);
  /* a wildcard before ".." (issue 29, item 3): every folder the match reads
   * and every path it tests or finds lie under the root, not only the folder
   * before the first wildcard: a folder outside is not listed (refused), a
   * path outside that is only tested counts as missing */
  const char *out_name = strrchr(outside, '/') + 1;
  const char *escapes[] = {"%s/s*/../../%s/*", "%s/s*/../../%s/known.txt", "%s/s?b/../../%s/k*", "%s/[s]ub/../../%s/*",
                           "%s/*/../../%s/*"};
  for (size_t i = 0; i < sizeof escapes / sizeof escapes[0]; i++) {
    snprintf(pattern, sizeof pattern, escapes[i], root, out_name);
    m = blank();
    tide_status st = tide_match_files(1, pats, &m);
    bool held = st == TIDE_ERR_IO ? contains(tide_last_error(), "lies outside") : st == TIDE_OK && m.nelem == 0;
    CHECK(held);
    if (!held) fprintf(stderr, "matched outside: %s -> %lld paths\n", pattern, st ? 0LL : (long long)m.nelem);
    if (st == TIDE_OK) tide_tensor_release(&m);
  }
  snprintf(pattern, sizeof pattern, "%s/s*/../*.txt", root); /* ".." that stays inside: allowed */
  m = blank();
  CHECK(tide_match_files(1, pats, &m) == TIDE_OK && m.nelem == 1);
  tide_tensor_release(&m);
  CHECK(tide_file_policy_swap(NULL) == p);
  CHECK(allowed(outside)); /* none current: everything */
  tide_file_policy_release(p);
  unlink(link);
}

/* A dangling symbolic link planted inside the root is judged by where it
 * points, which is where a writer following it would create the file
 * (issue 29, item 2): refused when that is outside, in every form (absolute,
 * relative, a chain, a folder on the way), and tide's writers create nothing
 * there; a dangling link pointing inside is followed as before. */
static void test_dangling_links(void) {
  char link[256], target[256], path[512];
  tide_file_policy *p = tide_file_policy_new(root);
  CHECK(p != NULL);
  tide_file_policy_swap(p);
  snprintf(target, sizeof target, "%s/created.tfrecord", outside);
  snprintf(link, sizeof link, "%s/dangle.tfrecord", root);
  CHECK(symlink(target, link) == 0);
  CHECK(refused(link, "lies outside"));
  CHECK(tide_record_writer_open(link, "") == NULL && contains(tide_last_error(), "file access refused"));
  CHECK(access(target, F_OK) != 0); /* nothing created outside */
  char rel[256], rel_target[256];
  snprintf(rel, sizeof rel, "%s/rel.tfrecord", root);
  snprintf(rel_target, sizeof rel_target, "../%s/rel.tfrecord", strrchr(outside, '/') + 1);
  CHECK(symlink(rel_target, rel) == 0);
  CHECK(refused(rel, "lies outside"));
  char chain[256];
  snprintf(chain, sizeof chain, "%s/chain.tfrecord", root); /* a link to the dangling link */
  CHECK(symlink(link, chain) == 0);
  CHECK(refused(chain, "lies outside"));
  char dir[256];
  snprintf(dir, sizeof dir, "%s/newdir", root); /* a dangling link as a folder of the path */
  snprintf(target, sizeof target, "%s/newdir", outside);
  CHECK(symlink(target, dir) == 0);
  snprintf(path, sizeof path, "%s/x.tfrecord", dir);
  CHECK(refused(path, "lies outside"));
  char loop[256];
  snprintf(loop, sizeof loop, "%s/loop", root); /* a link to itself: refused, not followed for ever */
  CHECK(symlink(loop, loop) == 0);
  CHECK(refused(loop, "too many symbolic links"));
  /* inside: the writer follows it and creates the file it names */
  char in_link[256], in_target[256];
  snprintf(in_target, sizeof in_target, "%s/made.tfrecord", root);
  snprintf(in_link, sizeof in_link, "%s/inside.tfrecord", root);
  CHECK(symlink("made.tfrecord", in_link) == 0);
  CHECK(allowed(in_link));
  tide_record_writer *w = tide_record_writer_open(in_link, "");
  CHECK(w != NULL);
  if (w) CHECK(tide_record_writer_close(w) == TIDE_OK);
  CHECK(access(in_target, F_OK) == 0);
  tide_file_policy_swap(NULL);
  tide_file_policy_release(p);
  const char *made[] = {link, rel, chain, dir, loop, in_link, in_target};
  for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) CHECK(unlink(made[i]) == 0);
}

static void test_no_root(void) {
  tide_file_policy *p = tide_file_policy_new(NULL);
  CHECK(p != NULL);
  tide_file_policy_swap(p);
  CHECK(refused(root, "allows its scripts no files"));
  CHECK(refused("relative.txt", "allows its scripts no files"));
  CHECK(tide_file_check(NULL, false) == TIDE_ERR_IO);
  tide_file_policy_swap(NULL);
  tide_file_policy_release(p);
  CHECK(tide_file_policy_new("/no/such/folder/anywhere") == NULL && contains(tide_last_error(), "cannot be resolved"));
  tide_file_policy_release(NULL); /* allowed */
}

int main(void) {
  strcpy(root, "/tmp/tide_policy_root_XXXXXX");
  strcpy(outside, "/tmp/tide_policy_out_XXXXXX");
  CHECK(mkdtemp(root) != NULL && mkdtemp(outside) != NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/sub", root);
  CHECK(mkdir(path, 0755) == 0);
  snprintf(path, sizeof path, "%s/a.txt", root);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  char known[256];
  snprintf(known, sizeof known, "%s/known.txt", outside); /* a file outside the root a glob must not find */
  f = fopen(known, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  test_root();
  test_dangling_links();
  test_no_root();
  unlink(path);
  snprintf(path, sizeof path, "%s/sub", root);
  rmdir(path);
  rmdir(root);
  unlink(known);
  rmdir(outside);
  return CHECK_SUMMARY("file_policy");
}
