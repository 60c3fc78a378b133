/* tide/files.h — the file system as tide's file functions see it: finding
 * files by pattern (tf.io.matching_files, behind Dataset.list_files), and
 * file policies, which confine what tide reads and writes for a host's
 * scripts (a sandboxed tide_vm) to one folder, or to nothing. */
#ifndef TIDE_FILES_H
#define TIDE_FILES_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The paths matching any of the `n` glob patterns (`*`, `?`, `[...]`, in any
 * path component; a leading dot matched like any other character, as TF
 * does; "." and ".." never), as a new 1-D string tensor in the blank header
 * `out`: every pattern's matches together, sorted bytewise, a path that two
 * patterns match listed twice (tf.io.matching_files' rules). No match gives
 * an empty tensor; a folder that cannot be read while matching is an error
 * naming the pattern. */
TIDE_API tide_status tide_match_files(int64_t n, const char *const *patterns, tide_tensor *out);

/* ---- file policies ----
 * While a policy is this thread's current one, every file or folder that
 * tide's functions open, make, rename or remove on this thread (TFRecords,
 * CSV, IDX, .npy, safetensors, SavedModels and checkpoints, summaries,
 * profiler traces, text lines, matching_files' folders) must lie under the
 * policy's root once symbolic links are followed, or the call fails with
 * TIDE_ERR_IO ("file access refused: ..."). A symbolic link counts where it
 * points, whether that exists or not (a dangling link planted inside the
 * root, pointing out, is refused), and tide's own opens (tide_file_open)
 * refuse a link swapped into the path after the check. A pipeline thread
 * takes the policy that was current where it was started. What a host does
 * itself (fopen, its own code) is not tide's and not checked. */
typedef struct tide_file_policy tide_file_policy;

/* A policy allowing what lies under the folder `root` (which must exist),
 * or no files at all when root is NULL; one reference. NULL on failure
 * (tide_last_error() says why). */
TIDE_API tide_file_policy *tide_file_policy_new(const char *root);
/* Drop a reference; the policy goes with the last (pipeline threads hold one). */
TIDE_API void tide_file_policy_release(tide_file_policy *p);
/* Make `p` (NULL: none, everything allowed) this thread's current policy;
 * returns the previous one. */
TIDE_API tide_file_policy *tide_file_policy_swap(tide_file_policy *p);
/* TIDE_OK when this thread's policy allows touching `path` (`write`: to
 * write, make or remove it; for the message), else TIDE_ERR_IO with a
 * message naming the path and what is allowed. */
TIDE_API tide_status tide_file_check(const char *path, bool write);

/* ---- opening files ----
 * The one open(2) behind tide's readers and writers: under this thread's
 * policy (checked first by the caller with tide_file_check), the path is
 * resolved again and opened with no symbolic link allowed in it, so a link
 * put in its place since the check is refused, never followed. Always
 * close-on-exec. Without O_DIRECTORY the file must be a regular one (a
 * writer may also open a character device such as /dev/null): a FIFO, a
 * socket, a device or a folder is refused before anything could block on it
 * (opened with O_NONBLOCK, checked with fstat, then made blocking again
 * unless `flags` asked for O_NONBLOCK). Returns the descriptor, or -1 with
 * errno set and tide_file_why() saying why ("it is a FIFO, not a regular
 * file", or strerror's text); no tide error is set, so each caller words its own. */
TIDE_API int tide_file_open(const char *path, int flags, int mode);
/* Why this thread's last failed tide_file_open failed (valid until its next call). */
TIDE_API const char *tide_file_why(void);
/* For opens tide cannot make itself (Lua's io.open): TIDE_OK when the policy
 * allows `path` (tide_file_check) and it is missing, a regular file or (to
 * write) a character device; else TIDE_ERR_IO naming the path and what it is. */
TIDE_API tide_status tide_file_probe(const char *path, bool write);

#ifdef __cplusplus
}
#endif
#endif
