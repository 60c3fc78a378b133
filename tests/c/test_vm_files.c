/* tests/c/test_vm_files.c — every file entry point of tide, table-driven,
 * under a sandboxed VM's files_root (issue 29): refused outside the folder
 * the host allowed, for reading and for writing (nothing made there), and
 * working inside it. A reader that skips the file policy (as safetensors
 * once could) or a writer that does fails its row.
 *
 * Each row is Lua run after `local tide = require 'tide'; local D = <folder>`:
 * a writer making its files in D, and a reader reading them back (and checking
 * what it read). The writers first make the fixtures outside with no sandbox;
 * then, in the sandbox, each writer aims at an empty folder outside (refused,
 * the folder stays empty) and each reader at the fixtures outside (refused);
 * then each writer and reader runs inside the allowed folder. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tide/vm.h"
#include "util.h"

/* A small Keras model, for the rows that save and load one. */
#define MODEL "local x = tide.Input{shape = {2}}\n" \
              "local m = tide.Model{inputs = x, outputs = tide.layers.Dense{1, kernel_initializer = 'ones'}(x)}\n"
/* Dataset elements counted: n = number of elements of dataset expression e. */
#define COUNT(e) "local n = 0\nfor _ in " e ":iter() do n = n + 1 end\n"

typedef struct {
  const char *name; /* the entry point(s), for failure messages */
  const char *write; /* makes its files under D; NULL when the row only reads */
  const char *read;  /* reads them back; NULL when the row only writes */
} entry;

static const entry ENTRIES[] = {
    {"npy", "tide.io.write_npy(D .. '/a.npy', tide.tensor({1, 2, 3}))",
     "assert(tide.io.read_npy(D .. '/a.npy'):sum():item() == 6)"},
    {"safetensors save_file/load_file",
     "tide.safetensors.save_file({a = tide.tensor({1, 2})}, D .. '/a.safetensors', {metadata = {k = 'v'}})",
     "assert(tide.safetensors.load_file(D .. '/a.safetensors').a:sum():item() == 3)"},
    {"safetensors safe_open", NULL,
     "local f = tide.safetensors.safe_open(D .. '/a.safetensors')\n"
     "assert(f:get_tensor('a'):sum():item() == 3); f:close()"},
    {"safetensors load_metadata", NULL, "assert(tide.safetensors.load_metadata(D .. '/a.safetensors').k == 'v')"},
    {"model save_weights/load_weights", MODEL "m:save_weights(D .. '/w.safetensors')",
     MODEL "m:load_weights(D .. '/w.safetensors')"},
    {"IDX (written with io)",
     "local f = assert(io.open(D .. '/a.idx', 'wb')); f:write('\\0\\0\\8\\1\\0\\0\\0\\3\\1\\2\\3'); f:close()",
     "assert(tide.io.read_idx(D .. '/a.idx'):sum():item() == 6)"},
    {"CSV (written with io), CsvDataset",
     "local f = assert(io.open(D .. '/a.csv', 'w')); f:write('1,2\\n3,4\\n'); f:close()",
     COUNT("tide.data.experimental.CsvDataset(D .. '/a.csv', {0, 0})") "assert(n == 2)"},
    {"TextLineDataset", NULL, COUNT("tide.data.TextLineDataset(D .. '/a.csv')") "assert(n == 2)"},
    {"CSVLogger", "tide.callbacks.CSVLogger(D .. '/log.csv'):on_train_begin()", NULL},
    {"TFRecordWriter, TFRecordDataset",
     "local w = tide.io.TFRecordWriter(D .. '/a.tfrecord'); w:write('hello'); w:close()",
     COUNT("tide.data.TFRecordDataset(D .. '/a.tfrecord')") "assert(n == 1)"},
    {"tf_record_iterator", NULL, "for r in tide.io.tf_record_iterator(D .. '/a.tfrecord') do assert(r == 'hello') end"},
    {"SavedModel save/load",
     "tide.saved_model.save(tide.trace(function(v) return v * 2 end, {input_signature = {tide.TensorSpec{2}}}), "
     "D .. '/sm')",
     "assert(tide.saved_model.load(D .. '/sm').functions.serving_default)"},
    {"Keras model save/load_model", MODEL "m:save(D .. '/km')",
     "assert(tide.models.load_model(D .. '/km', {compile = false}))"},
    {"Checkpoint write/restore", "tide.train.Checkpoint{v = tide.Variable(3)}:write(D .. '/ck')",
     "local v = tide.Variable(0)\n"
     "tide.train.Checkpoint{v = v}:restore(D .. '/ck'):assert_consumed()\nassert(v:item() == 3)"},
    {"Checkpoint save", "tide.train.Checkpoint{v = tide.Variable(5)}:save(D .. '/saved')", NULL},
    {"load_checkpoint, list_variables", NULL,
     "assert(tide.train.load_checkpoint(D .. '/ck'):get_tensor('v'):item() == 3)\n"
     "assert(#tide.train.list_variables(D .. '/ck') >= 1)"},
    {"CheckpointManager, latest_checkpoint",
     "tide.train.CheckpointManager(tide.train.Checkpoint{v = tide.Variable(4)}, D .. '/mgr', {max_to_keep = 1}):save()",
     "assert(tide.train.latest_checkpoint(D .. '/mgr') == D .. '/mgr/ckpt-1')\n"
     "local v = tide.Variable(0)\n"
     "local mgr = tide.train.CheckpointManager(tide.train.Checkpoint{v = v}, D .. '/mgr', {max_to_keep = 1})\n"
     "mgr:restore_or_initialize()\nassert(v:item() == 4)"},
    {"summaries (written, read as TFRecords)",
     "local w = tide.summary.create_file_writer(D .. '/logs')\n"
     "w:as_default(function() assert(tide.summary.scalar('loss', 0.5, {step = 0})) end)\nw:close()",
     COUNT("tide.data.TFRecordDataset(tide.io.matching_files(D .. '/logs/events*'))") "assert(n >= 2)"},
    {"profiler write_trace/read_trace",
     "tide.profiler.start(); tide.ones{2}:sum(); tide.profiler.stop()\n"
     "tide.profiler.write_trace(D .. '/t.json')",
     "assert(type(tide.profiler.read_trace(D .. '/t.json')) == 'table')"},
    {"profiler start(logdir)", "tide.profiler.start(D .. '/prof'); tide.ones{2}:sum(); tide.profiler.stop()", NULL},
    {"Dataset cache (written, then read)", COUNT("tide.data.Dataset.range(3):cache(D .. '/c')") "assert(n == 3)",
     COUNT("tide.data.Dataset.range(5):cache(D .. '/c')") "assert(n == 3) -- from the cache, not the source"},
    {"images (io, encode_png/decode_png)",
     "local f = assert(io.open(D .. '/a.png', 'wb'))\n"
     "f:write(tide.image.encode_png(tide.ones({2, 2, 3}, 'uint8'))); f:close()",
     "local f = assert(io.open(D .. '/a.png', 'rb'))\n"
     "assert(tide.image.decode_png(f:read('*a')):sum():item() == 12); f:close()"},
    {"read_file (a registry op, also on a pipeline's threads)",
     "local f = assert(io.open(D .. '/r.txt', 'wb')); f:write('hi'); f:close()",
     "assert(tide.io.read_file(D .. '/r.txt'):item() == 'hi')\n"
     COUNT("tide.data.Dataset.from_tensor_slices(tide.tensor({D .. '/r.txt'}, 'string')):map(tide.io.read_file)")
     "assert(n == 1)"},
    {"matching_files, list_files", NULL,
     "assert(tide.io.matching_files(D .. '/*.npy').shape[1] == 1)\n"
     COUNT("tide.data.Dataset.list_files(D .. '/*.csv')") "assert(n == 2)"},
};
enum { N_ENTRIES = sizeof ENTRIES / sizeof ENTRIES[0] };

/* Run `code` with D set to `dir`: the status, and the error in *err. */
static tide_vm_status run_in(tide_vm *vm, const char *dir, const char *code) {
  size_t n = strlen(dir) + strlen(code) + 64;
  char *chunk = malloc(n);
  snprintf(chunk, n, "local tide = require 'tide'\nlocal D = '%s'\n%s", dir, code);
  tide_vm_status st = tide_vm_dostring(vm, chunk, "=entry");
  free(chunk);
  return st;
}

static bool runs(tide_vm *vm, const char *what, const char *dir, const char *code) {
  tide_vm_status st = run_in(vm, dir, code);
  if (st != TIDE_VM_OK) fprintf(stderr, "%s in %s failed: %s\n", what, dir, tide_vm_last_error(vm));
  return st == TIDE_VM_OK;
}

static bool refused(tide_vm *vm, const char *what, const char *dir, const char *code) {
  tide_vm_status st = run_in(vm, dir, code);
  bool ok = st == TIDE_VM_ERR_RUN && contains(tide_vm_last_error(vm), "file access refused") &&
            contains(tide_vm_last_error(vm), "lies outside");
  if (!ok) fprintf(stderr, "%s in %s not refused as expected: %d %s\n", what, dir, (int)st, tide_vm_last_error(vm));
  return ok;
}

/* Entries of folder `dir` (less . and ..). */
static int entries_in(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}
static void remove_tree(const char *dir) { nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

static void test_entries(void) {
  char root[] = "/tmp/tide_test_vmfiles_root_XXXXXX", out[] = "/tmp/tide_test_vmfiles_out_XXXXXX",
       empty[] = "/tmp/tide_test_vmfiles_empty_XXXXXX";
  CHECK(mkdtemp(root) && mkdtemp(out) && mkdtemp(empty));

  /* the fixtures outside, made with no sandbox */
  tide_vm_options opts;
  memset(&opts, 0, sizeof opts);
  tide_vm *host = tide_vm_open(&opts);
  CHECK(host != NULL);
  if (!host) return;
  for (int i = 0; i < N_ENTRIES; i++)
    if (ENTRIES[i].write) CHECK(runs(host, ENTRIES[i].name, out, ENTRIES[i].write));
  for (int i = 0; i < N_ENTRIES; i++) /* the fixtures read back: a refusal below is not a broken row */
    if (ENTRIES[i].read) CHECK(runs(host, ENTRIES[i].name, out, ENTRIES[i].read));
  tide_vm_close(host);

  /* io for the rows that use Lua's io (under the same policy), the profiler for its rows */
  opts.sandbox = true;
  opts.allow = TIDE_VM_ALLOW_IO | TIDE_VM_ALLOW_PROFILER;
  opts.files_root = root;
  tide_vm *vm = tide_vm_open(&opts);
  CHECK(vm != NULL);
  if (vm) {
    for (int i = 0; i < N_ENTRIES; i++) {
      const entry *e = &ENTRIES[i];
      if (e->write) {
        CHECK(refused(vm, e->name, empty, e->write));
        CHECK(entries_in(empty) == 0); /* nothing made outside */
      }
      if (e->read) CHECK(refused(vm, e->name, out, e->read));
    }
    for (int i = 0; i < N_ENTRIES; i++)
      if (ENTRIES[i].write) CHECK(runs(vm, ENTRIES[i].name, root, ENTRIES[i].write));
    for (int i = 0; i < N_ENTRIES; i++)
      if (ENTRIES[i].read) CHECK(runs(vm, ENTRIES[i].name, root, ENTRIES[i].read));
    /* a path that climbs out of the allowed folder is outside too */
    char climb[128];
    snprintf(climb, sizeof climb, "%s/../%s", root, strrchr(out, '/') + 1);
    CHECK(refused(vm, "npy through ..", climb, ENTRIES[0].read));
    tide_vm_close(vm);
  }
  CHECK(entries_in(empty) == 0);
  remove_tree(root);
  remove_tree(out);
  remove_tree(empty);
}

int main(void) {
  test_entries();
  return CHECK_SUMMARY("vm_files");
}
