/* tests/c/test_vm_limits.c — a VM's limits (tide/vm.h): the memory cap on the
 * Lua heap and on tensor storage, and the instruction and time budgets per
 * call, each returning an error to the host and leaving the VM usable. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include <unistd.h>

#include "check.h"
#include "tide/vm.h"
#include "util.h"

enum { CAP = 64 << 20 };

static tide_vm *open_capped(size_t cap) {
  tide_vm_options opts;
  memset(&opts, 0, sizeof opts);
  opts.memory_limit = cap;
  return tide_vm_open(&opts);
}

/* A table growing past the cap: the allocation fails with a Lua error, the
 * host gets TIDE_VM_ERR_MEMORY, and dropping the data makes room again. */
static void test_lua_heap_cap(void) {
  tide_vm *vm = open_capped(CAP);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'", NULL) == TIDE_VM_OK);
  int64_t base = tide_vm_memory_used(vm);
  CHECK(base > 0 && base < CAP);

  CHECK(tide_vm_dostring(vm, "big = {} for i = 1, 1e8 do big[i] = i end", "=grow") == TIDE_VM_ERR_MEMORY);
  CHECK(contains(tide_vm_last_error(vm), "memory limit of 67108864 bytes reached"));
  CHECK(tide_vm_memory_used(vm) <= CAP);
  /* The data is still referenced: more of it does not fit ... */
  CHECK(tide_vm_dostring(vm, "local t = {} for i = 1, 4e6 do t[i] = i end", NULL) == TIDE_VM_ERR_MEMORY);
  /* ... until the script drops it. */
  CHECK(tide_vm_dostring(vm, "big = nil collectgarbage()", NULL) == TIDE_VM_OK);
  CHECK(tide_vm_memory_used(vm) < base + (8 << 20));
  CHECK(tide_vm_dostring(vm, "local t = {} for i = 1, 2e6 do t[i] = i end", NULL) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'; assert((tide.tensor{1} + 1):item() == 2)", NULL) ==
        TIDE_VM_OK);

  /* A string too big for the cap, caught by the script itself. */
  CHECK(tide_vm_dostring(vm, "local ok, err = pcall(string.rep, 'x', 1e9)\n"
                             "assert(not ok and err:find('not enough memory'), err)",
                         NULL) == TIDE_VM_OK);
  tide_vm_close(vm);
}

/* Tensor storage counts against the same cap. */
static void test_tensor_cap(void) {
  tide_vm *vm = open_capped(CAP);
  CHECK(vm != NULL);
  if (!vm) return;
  /* One tensor bigger than the cap: refused before any memory is taken. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'; huge = tide.zeros{1e9}", "=huge") == TIDE_VM_ERR_MEMORY);
  CHECK(contains(tide_vm_last_error(vm), "memory limit of 67108864 bytes reached"));
  CHECK(contains(tide_vm_last_error(vm), "tensor of 4000000000 bytes"));
  CHECK(contains(tide_vm_last_error(vm), "huge:1:"));
  CHECK(tide_vm_memory_used(vm) < CAP);

  /* Many tensors kept alive: the cap stops them; dropped, they make room. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'; keep = {}\n"
                             "for i = 1, 100 do keep[i] = tide.zeros{2e6} end",
                         NULL) == TIDE_VM_ERR_MEMORY);
  CHECK(tide_vm_dostring(vm, "assert(#keep >= 5 and #keep < 16, #keep)", NULL) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "keep = nil", NULL) == TIDE_VM_OK);
  /* Garbage tensors (8 MB each, 800 MB in all) are collected in time. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "for i = 1, 100 do local x = tide.zeros{2e6} + 1 end",
                         NULL) == TIDE_VM_OK);
  /* The script sees the error and may go on. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "local ok, err = pcall(tide.ones, {1e9})\n"
                             "assert(not ok and err:find('memory limit of'), err)",
                         NULL) == TIDE_VM_OK);

  /* A result the host holds counts until the host releases it. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "function make() return tide.zeros{4e6} end",
                         NULL) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "collectgarbage()", NULL) == TIDE_VM_OK);
  int64_t before = tide_vm_memory_used(vm);
  tide_tensor out[1];
  int n = 0;
  CHECK(tide_vm_call_tensors(vm, "make", 0, NULL, 1, out, &n) == TIDE_VM_OK && n == 1);
  CHECK(tide_vm_dostring(vm, "collectgarbage()", NULL) == TIDE_VM_OK);
  CHECK(tide_vm_memory_used(vm) >= before + 16000000);
  if (n == 1) tide_tensor_release(&out[0]);
  CHECK(tide_vm_memory_used(vm) < before + 1000000);

  /* A traced function's intermediates count too. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "local f = tide.trace(function(x) return (x + 1) * 2 end)\n"
                             "local ok, err = pcall(f, tide.zeros{1e7})\n"
                             "assert(not ok and err:find('memory limit of'), err)",
                         NULL) == TIDE_VM_OK);
  tide_vm_close(vm);

  /* Outside a capped VM's calls nothing is charged: the same tensor in an
   * uncapped VM works. */
  vm = tide_vm_open(NULL);
  CHECK(vm && tide_vm_dostring(vm, "local tide = require 'tide'; local x = tide.zeros{2e7}", NULL) == TIDE_VM_OK);
  tide_vm_close(vm);
}

/* String tensors' elements count against the cap too (issue 29, item 6):
 * their bytes live in refcounted strings, not in the tensor's storage. */
static void test_string_cap(void) {
  enum { SMALL_CAP = 32 << 20 };
  tide_vm *vm = open_capped(SMALL_CAP);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "s = tide.tensor{string.rep('a', 4e6)}\n"
                             "keep = {}\n"
                             "for i = 1, 20 do keep[i] = tide.strings.upper(s) end",
                         "=strings") == TIDE_VM_ERR_MEMORY);
  CHECK(contains(tide_vm_last_error(vm), "memory limit of 33554432 bytes reached"));
  CHECK(tide_vm_memory_used(vm) <= SMALL_CAP);
  CHECK(tide_vm_dostring(vm, "assert(#keep >= 3 and #keep < 8, #keep)", NULL) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "keep = nil; collectgarbage()", NULL) == TIDE_VM_OK);
  int64_t before = tide_vm_memory_used(vm);
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "keep = { tide.strings.upper(s), tide.strings.upper(s), tide.strings.upper(s) }",
                         NULL) == TIDE_VM_OK);
  CHECK(tide_vm_memory_used(vm) >= before + 11000000); /* what the VM holds (3 x 4 MB) is what it says */
  CHECK(tide_vm_dostring(vm, "keep = nil; collectgarbage()", NULL) == TIDE_VM_OK);
  CHECK(tide_vm_memory_used(vm) < before + 1000000);
  /* made on a pipeline thread: charged there too */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "local ds = tide.data.Dataset.from_tensors(s):repeat_(20):map(tide.strings.upper)"
                             ":prefetch(1)\n"
                             "keep = {}\n"
                             "local ok, err = pcall(function() for x in ds:iter() do keep[#keep + 1] = x end end)\n"
                             "assert(not ok and err:find('memory limit of'), err)\n"
                             "keep = nil",
                         NULL) == TIDE_VM_OK);
  tide_vm_close(vm);
}

/* Kernels' scratch buffers count against the cap (issue 29): each of these
 * ops holds small tensors but asks for a temporary far past the 64 MB cap
 * (a 170 MB im2col patch buffer for a float64 convolution, 72 MB of sort
 * keys, 64 MB of unique's tables); they are refused with the cap's error,
 * naming what asked, and the VM goes on. Before, they ran uncharged. */
static void test_scratch_cap(void) {
  tide_vm *vm = open_capped(CAP);
  CHECK(vm != NULL);
  if (!vm) return;
  static const struct {
    const char *code, *what;
  } cases[] = {
      {"tide.nn.conv2d(tide.zeros({1, 128, 128, 16}, 'float64'), tide.zeros({9, 9, 16, 1}, 'float64'))",
       "a patch buffer (conv2d's scratch) of 169869312 bytes"},
      {"tide.sort(tide.zeros{3e6})", "the keys of a line (sort's scratch) of 72000000 bytes"},
      {"tide.unique(tide.zeros({4e6}, 'int32'))", "(unique's scratch) of 32000008 bytes"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char code[512];
    snprintf(code, sizeof code, "local tide = require 'tide'; local r = %s", cases[i].code);
    CHECK(tide_vm_dostring(vm, code, "=scratch") == TIDE_VM_ERR_MEMORY);
    CHECK(contains(tide_vm_last_error(vm), "memory limit of 67108864 bytes reached"));
    CHECK(contains(tide_vm_last_error(vm), cases[i].what));
    if (!contains(tide_vm_last_error(vm), cases[i].what)) fprintf(stderr, "scratch %zu: %s\n", i, tide_vm_last_error(vm));
    CHECK(tide_vm_dostring(vm, "collectgarbage()", NULL) == TIDE_VM_OK);
    CHECK(tide_vm_memory_used(vm) < CAP / 2); /* given back: nothing stays charged */
  }
  /* Within the cap the same ops run, their scratch charged while they do. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "local y = tide.nn.conv2d(tide.ones({1, 16, 16, 4}, 'float64'), tide.ones({3, 3, 4, 1}, 'float64'))\n"
                             "assert(y:totable()[1][8][8][1] == 36)\n"
                             "assert(tide.sort(tide.tensor{3, 1, 2}):totable()[1] == 1)\n"
                             "assert(tide.unique(tide.tensor{3, 1, 3}):totable()[2] == 1)",
                         "=fits") == TIDE_VM_OK);
  tide_vm_close(vm);
}

/* A model load inside a capped VM is charged to the load's own cap and to
 * the VM's around it (io/load_cap.c). When the VM's refuses (a 48 MiB folded
 * constant: within the 64 MiB load cap, past the VM's 40 MiB), the message
 * names the VM's limit, not the load cap's. */
static void test_load_inside_cap(void) {
  enum { LOAD_VM_CAP = 40 << 20 };
  tide_vm *vm = open_capped(LOAD_VM_CAP);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'; m = tide.onnx.load('tests/fixtures/onnx/const48.onnx')",
                         "=load") == TIDE_VM_ERR_MEMORY);
  const char *err = tide_vm_last_error(vm);
  CHECK(contains(err, "memory limit of 41943040 bytes reached: a tensor of 50331648 bytes"));
  CHECK(!contains(err, "67108864") && !contains(err, "capped at max(64 MiB"));
  if (!contains(err, "41943040")) fprintf(stderr, "load: %s\n", err);
  tide_vm_close(vm);
  /* An uncapped VM loads it: only the load cap applies, and 48 MiB is within it. */
  vm = open_capped(0);
  CHECK(vm && tide_vm_dostring(vm, "local tide = require 'tide'; local m = tide.onnx.load('tests/fixtures/onnx/const48.onnx')",
                               "=load") == TIDE_VM_OK);
  if (vm && *tide_vm_last_error(vm)) fprintf(stderr, "load uncapped: %s\n", tide_vm_last_error(vm));
  tide_vm_close(vm);
}

/* A pipeline's threads charge the VM that started them: a map running on a
 * prefetch thread or a parallel map's workers cannot make past the cap what
 * the VM's own thread could not, and the error comes to the iteration. */
static void test_pipeline_threads_charge_the_vm(void) {
  tide_vm *vm = open_capped(CAP);
  CHECK(vm != NULL);
  if (!vm) return;
  const char *script = "local tide = require 'tide'\n"
                       "local ds = tide.data.Dataset.range(4):map(function(i)\n"
                       "  return tide.tile(tide.reshape(tide.cast(i, 'float32'), {1}), {2e7}) end, {parallel = %s}):prefetch(2)\n"
                       "local ok, err = pcall(function() for x in ds:iter() do x = nil end end)\n"
                       "assert(not ok and err:find('memory limit of 67108864 bytes reached'), err)\n"
                       "assert(err:find('failed on element 0'), err)";
  char code[1024];
  const char *settings[] = {"1", "2", "tide.data.AUTOTUNE"};
  for (int i = 0; i < 3; i++) {
    snprintf(code, sizeof code, script, settings[i]);
    int rc = tide_vm_dostring(vm, code, "=pipeline");
    CHECK(rc == TIDE_VM_OK);
    if (rc != TIDE_VM_OK) fprintf(stderr, "parallel=%s: %s\n", settings[i], tide_vm_last_error(vm));
  }
  /* Under the cap the same pipeline runs, and what it made is given back. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "local n = 0\n"
                             "for x in tide.data.Dataset.range(8):map(function(i)\n"
                             "    return tide.tile(tide.reshape(tide.cast(i, 'float32'), {1}), {1e6}) end, {parallel = 2}):prefetch(2):iter() do\n"
                             "  n = n + 1 end\n"
                             "assert(n == 8, n); collectgarbage(); collectgarbage()",
                         NULL) == TIDE_VM_OK);
  CHECK(tide_vm_memory_used(vm) < CAP);
  tide_vm_close(vm);
}

static tide_vm *open_budget(uint64_t instructions, uint32_t ms) {
  tide_vm_options opts;
  memset(&opts, 0, sizeof opts);
  opts.instruction_limit = instructions;
  opts.time_limit_ms = ms;
  return tide_vm_open(&opts);
}

/* The instruction budget stops a runaway loop; the next call has its own. */
static void test_instruction_budget(void) {
  tide_vm *vm = open_budget(1000000, 0);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(tide_vm_dostring(vm, "assert(not jit.status())", NULL) == TIDE_VM_OK); /* interpreted: hooks run */
  CHECK(tide_vm_dostring(vm, "jit.on()", "=on") == TIDE_VM_ERR_RUN);
  CHECK(contains(tide_vm_last_error(vm), "on:1: the JIT stays off in a VM with a budget"));
  CHECK(tide_vm_dostring(vm, "assert(not jit.status())", NULL) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "while true do end", "=spin") == TIDE_VM_ERR_BUDGET);
  CHECK(contains(tide_vm_last_error(vm), "instruction budget of 1000000 exceeded"));
  CHECK(contains(tide_vm_last_error(vm), "spin:1:"));
  /* Each call starts afresh: 10 calls of ~200,000 instructions all pass. */
  CHECK(tide_vm_dostring(vm, "function work() local s = 0 for i = 1, 50000 do s = s + i end return s end", NULL) ==
        TIDE_VM_OK);
  for (int i = 0; i < 10; i++) CHECK(tide_vm_dostring(vm, "work()", NULL) == TIDE_VM_OK);
  /* A script that catches the error is stopped at its next instruction. */
  CHECK(tide_vm_dostring(vm, "while true do pcall(function() while true do end end) end", NULL) ==
        TIDE_VM_ERR_BUDGET);
  CHECK(tide_vm_dostring(vm, "coroutine.wrap(function() while true do end end)()", NULL) == TIDE_VM_ERR_BUDGET);
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'; assert((tide.tensor{2} * 3):item() == 6)", NULL) ==
        TIDE_VM_OK);
  tide_vm_close(vm);
}

/* Seconds tide_vm_dostring(vm, code) took, and its status. */
static double timed(tide_vm *vm, const char *code, tide_vm_status *status) {
  double t0 = tide_monotonic_seconds();
  *status = tide_vm_dostring(vm, code, "=timed");
  return tide_monotonic_seconds() - t0;
}

/* The time budget stops Lua loops (a JIT would have compiled them into traces
 * no hook sees), loops of tide ops, and a long op running in C. */
static void test_time_budget(void) {
  tide_vm *vm = open_budget(0, 100);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(tide_vm_dostring(vm, "tide = require 'tide'", NULL) == TIDE_VM_OK);
  static const char *const runaways[] = {
      "while true do end",
      "local x = 0 while true do x = x + 1 end",
      "while true do pcall(function() while true do end end) end",
      "local x = tide.zeros{100} while true do x = x + 1 end",
      /* One traced while_loop: the whole loop runs in C, in the graph executor. */
      "local f = tide.trace(function(i) return tide.while_loop(function(i) return i:ge(0) end,\n"
      "                                                      function(i) return i + 1 end, {i}) end)\n"
      "f(tide.tensor(0))",
  };
  for (size_t k = 0; k < sizeof runaways / sizeof runaways[0]; k++) {
    tide_vm_status status;
    double s = timed(vm, runaways[k], &status);
    CHECK(status == TIDE_VM_ERR_BUDGET);
    CHECK(contains(tide_vm_last_error(vm), "time budget of 100 ms exceeded"));
    CHECK(s >= 0.099 && s < 1.0); /* the budget, plus a wide margin for a loaded machine */
    if (status != TIDE_VM_ERR_BUDGET || s >= 1.0) fprintf(stderr, "runaway %zu: %.3f s: %s\n", k, s,
                                                          tide_vm_last_error(vm));
  }
  /* Afterwards: usable, and the next op is not interrupted by a stale request. */
  tide_vm_status status;
  timed(vm, "local x = tide.zeros{1000} + 1; assert(x:sum():item() == 1000)", &status);
  CHECK(status == TIDE_VM_OK);
  /* The budget is per call: five calls of 30 ms each (150 ms in all) pass. */
  CHECK(tide_vm_dostring(vm, "local C = require('tide.binding').C\n"
                             "function nap(s) local t0 = C.tide_monotonic_seconds()\n"
                             "  while C.tide_monotonic_seconds() - t0 < s do end end",
                         NULL) == TIDE_VM_OK);
  for (int i = 0; i < 5; i++) CHECK(tide_vm_dostring(vm, "nap(0.03)", NULL) == TIDE_VM_OK);
  tide_vm_close(vm);
}

/* tide_vm_set_budget: a long load under a large budget, then frames under
 * a small one; the kinds of budget a VM has cannot change. */
static void test_set_budget(void) {
  tide_vm *vm = open_budget(0, 20);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(tide_vm_dostring(vm, "local C = require('tide.binding').C\n"
                             "function nap(s) local t0 = C.tide_monotonic_seconds()\n"
                             "  while C.tide_monotonic_seconds() - t0 < s do end end",
                         NULL) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "nap(0.1)", "=load") == TIDE_VM_ERR_BUDGET); /* 100 ms: past 20 */
  CHECK(contains(tide_vm_last_error(vm), "time budget of 20 ms exceeded"));
  CHECK(tide_vm_set_budget(vm, 0, 2000) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "nap(0.1)", "=load") == TIDE_VM_OK);
  CHECK(tide_vm_set_budget(vm, 0, 30) == TIDE_VM_OK);
  tide_vm_status status;
  double s = timed(vm, "while true do end", &status);
  CHECK(status == TIDE_VM_ERR_BUDGET);
  CHECK(contains(tide_vm_last_error(vm), "time budget of 30 ms exceeded"));
  CHECK(s >= 0.029 && s < 1.0);
  if (s < 0.029 || s >= 1.0) fprintf(stderr, "set_budget: a 30 ms budget stopped a loop after %.3f s\n", s);
  /* The kinds stay: no time budget taken away, no instruction budget added. */
  CHECK(tide_vm_set_budget(vm, 0, 0) == TIDE_VM_ERR_USAGE);
  CHECK(contains(tide_vm_last_error(vm), "opened with no instruction budget and a time budget"));
  CHECK(tide_vm_set_budget(vm, 1000000, 30) == TIDE_VM_ERR_USAGE);
  CHECK(timed(vm, "while true do end", &status) < 1.0 && status == TIDE_VM_ERR_BUDGET);
  CHECK(contains(tide_vm_last_error(vm), "time budget of 30 ms exceeded")); /* unchanged */
  CHECK(tide_vm_set_budget(NULL, 0, 30) == TIDE_VM_ERR_USAGE);
  tide_vm_close(vm);

  vm = open_budget(1000000, 0);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(tide_vm_set_budget(vm, 1000000, 5) == TIDE_VM_ERR_USAGE); /* no watchdog to time it */
  CHECK(tide_vm_set_budget(vm, 50000000, 0) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "local s = 0 for i = 1, 2000000 do s = s + i end", NULL) == TIDE_VM_OK);
  CHECK(tide_vm_set_budget(vm, 1000000, 0) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "local s = 0 for i = 1, 2000000 do s = s + i end", NULL) == TIDE_VM_ERR_BUDGET);
  CHECK(contains(tide_vm_last_error(vm), "instruction budget of 1000000 exceeded"));
  tide_vm_close(vm);

  vm = tide_vm_open(NULL); /* no budgets at all */
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(tide_vm_set_budget(vm, 0, 20) == TIDE_VM_ERR_USAGE);
  CHECK(tide_vm_set_budget(vm, 0, 0) == TIDE_VM_OK);
  tide_vm_close(vm);
}

/* A bystander on another thread: a VM with no limits running a traced
 * function (its graph polls interrupts between steps) until told to stop. */
typedef struct {
  tide_vm *vm;
  int runs, failures;
  char error[512];
  int stop; /* atomic */
} bystander;

static void *bystander_main(void *arg) {
  bystander *b = arg;
  while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
    if (tide_vm_dostring(b->vm, "local s = f(x):sum():item(); assert(s > 0)", "=bystander") != TIDE_VM_OK) {
      if (!b->failures++) snprintf(b->error, sizeof b->error, "%s", tide_vm_last_error(b->vm));
    }
    b->runs++;
  }
  return NULL;
}

/* A spent time budget stops its own VM's kernels and nobody else's (issue
 * 29, item 7): while a budgeted VM's long op overruns, another VM's runs on
 * another thread never fail "interrupted". */
static void test_budget_interrupts_only_its_vm(void) {
  bystander b;
  memset(&b, 0, sizeof b);
  b.vm = tide_vm_open(NULL);
  CHECK(b.vm != NULL);
  if (!b.vm) return;
  CHECK(tide_vm_dostring(b.vm, "local tide = require 'tide'\n"
                               "x = tide.ones{20000}\n"
                               "f = tide.trace(function(a) for i = 1, 40 do a = a * 1.0001 + 1 end return a end)\n"
                               "assert(f(x):sum():item() > 0)",
                         NULL) == TIDE_VM_OK);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, bystander_main, &b) == 0);
  tide_vm *vm = open_budget(0, 20);
  CHECK(vm != NULL);
  for (int i = 0; vm && i < 3; i++) {
    /* one op that runs far past the budget (a matmul polls only when it ends) */
    tide_vm_status st = tide_vm_dostring(vm, "local tide = require 'tide'\n"
                                             "local a = tide.ones{1500, 1500}\n"
                                             "while true do a = tide.matmul(a, a) * 0 end",
                                         "=overrun");
    CHECK(st == TIDE_VM_ERR_BUDGET);
  }
  __atomic_store_n(&b.stop, 1, __ATOMIC_RELEASE);
  pthread_join(t, NULL);
  CHECK(b.runs > 0);
  CHECK(b.failures == 0);
  if (b.failures) fprintf(stderr, "the bystander failed %d of %d runs: %s\n", b.failures, b.runs, b.error);
  tide_vm_close(vm);
  tide_vm_close(b.vm);
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "FAIL tests/c/test_vm_limits.c: hung: a call or tide_vm_close did not return\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(1);
  _exit(1);
}

/* Run a test whose regression would be a hang under an alarm: a hang fails
 * the program (with a FAIL line) instead of stalling the suite. */
static void with_alarm(void (*test)(void), unsigned seconds) {
  signal(SIGALRM, on_alarm);
  alarm(seconds);
  test();
  alarm(0);
  signal(SIGALRM, SIG_DFL);
}

/* A pipeline whose map loops for ever (a traced while_loop, run in C on the
 * pipeline's threads): the time budget stops the call that waits for it, and
 * closing the VM, or dropping the iterator, stops and joins its threads in
 * bounded time (issue 29, item 10). An alarm turns a hang into a failure. */
static void test_pipelines_stop(void) {
  /* the datasets, as expressions over `spin`; the interleaves' loops run in their inner datasets' passes */
  static const char *const stages[] = {
      "D.range(4):map(spin, {num_parallel_calls = 2}):prefetch(1)", "D.range(4):map(spin, {}):prefetch(1)",
      "D.range(4):map(spin, {num_parallel_calls = 2})", "D.range(4):map(spin, {num_parallel_calls = 2}):prefetch(2)",
      "D.range(2):interleave(function(x) return D.range(4):map(spin) end, {cycle_length = 2, num_parallel_calls = 2})",
      "D.range(2):interleave(function(x) return D.range(4):map(spin, {num_parallel_calls = 2}) end, "
      "{cycle_length = 2, num_parallel_calls = 2})",
      "D.range(2):interleave(function(x) return D.range(4):map(spin, {num_parallel_calls = 2}) end, {cycle_length = 2})",
      "D.range(2):interleave(function(x) return D.range(4):map(spin):prefetch(1) end, {cycle_length = 2})"};
  for (int close_first = 0; close_first < 2; close_first++) {
    for (size_t k = 0; k < sizeof stages / sizeof stages[0]; k++) {
      tide_vm *vm = open_budget(0, 100);
      CHECK(vm != NULL);
      if (!vm) continue;
      char code[1024];
      snprintf(code, sizeof code,
               "local tide = require 'tide'\n"
               "local function spin(x)\n"
               "  return tide.while_loop(function(i) return i:ge(0) end, function(i) return i + 1 end, {x})\n"
               "end\n"
               "local D = tide.data.Dataset\n"
               "it = (%s):iter()\n"
               "it()", stages[k]);
      tide_vm_status status;
      double s = timed(vm, code, &status);
      CHECK(status == TIDE_VM_ERR_BUDGET && s < 5.0);
      if (status != TIDE_VM_ERR_BUDGET) fprintf(stderr, "stage %zu: %d %s\n", k, (int)status, tide_vm_last_error(vm));
      if (!close_first) { /* the script drops its iterator in a later call: collected, its threads joined */
        s = timed(vm, "it = nil; collectgarbage(); collectgarbage()", &status);
        CHECK(status == TIDE_VM_OK && s < 5.0);
        if (status != TIDE_VM_OK) fprintf(stderr, "drop %zu: %.2f s: %s\n", k, s, tide_vm_last_error(vm));
      }
      double t0 = tide_monotonic_seconds();
      tide_vm_close(vm);
      CHECK(tide_monotonic_seconds() - t0 < 5.0);
    }
  }
}

/* An interleave's inner dataset that ends while its parallel map still works
 * on an element that loops for ever (take(1) after the map): ending the
 * inner stops that work through the inner pass's own interrupt token, as
 * dropping an iterator does, so the consumer's call returns at once. Before
 * inner passes had a token, freeing the inner joined a thread that never
 * returned, and only the VM's time budget (3 s here) ended the call. */
static void test_interleave_inner_end_stops_its_work(void) {
  tide_vm *vm = open_budget(0, 3000);
  CHECK(vm != NULL);
  if (!vm) return;
  tide_vm_status status;
  double s = timed(vm,
                   "local tide = require 'tide'\n"
                   "local D = tide.data.Dataset\n"
                   "local function spin(x) -- element 0 returns, the others loop for ever\n"
                   "  return tide.while_loop(function(i) return i:ge(1) end, function(i) return i + 1 end, {x})\n"
                   "end\n"
                   "local ds = D.range(2):interleave(function(x)\n"
                   "  return D.range(4):map(spin, {num_parallel_calls = 2}):take(1)\n"
                   "end, {cycle_length = 1})\n"
                   "local n = 0\n"
                   "for _ in ds:iter() do n = n + 1 end\n"
                   "assert(n == 2, n)",
                   &status);
  CHECK(status == TIDE_VM_OK && s < 2.5);
  if (status != TIDE_VM_OK) fprintf(stderr, "inner end: %.2f s: %s\n", s, tide_vm_last_error(vm));
  tide_vm_close(vm);
}

/* The results of a battery of pattern calls, serialized by the script into
 * the global `out` (the same script in two VMs). */
static const char pattern_battery[] =
    "local cases = {\n"
    "  {'hello world', 'o w'}, {'hello world', 'l+'}, {'hello', '^h(.-)o$'}, {'a.b', '.', 1, true},\n"
    "  {'  x = 12, y=3 ', '(%w+)%s*=%s*(%d+)'}, {'THE (quick) fox', '%((%a+)%)'}, {'f(a(b)c)d', '%b()'},\n"
    "  {'THE (quick) fox', '%f[%a]%a+'}, {'abc', '()b()'}, {'abcabc', '(a)(b)c%1%2'}, {'x', ''}, {'', 'a*'},\n"
    "  {'hello', 'l', -2}, {'hello', 'l', 10}, {'hello', 'l', -10}, {'a+b', '+', 1, true}, {'\\0z\\0', '%z'},\n"
    "  {'key = value', '^(%w+)%s*=%s*(%w+)$'}, {'[x]', '[%[%]]'}, {'a-b', '[a-c]+'}, {'A1_b', '[^%w_]'},\n"
    "  {'tab\\there', '%c'}, {'x.y', '%.'}, {'caf\\195\\169', '[\\128-\\255]+'}, {'aXb', '%u'}, {'aXb', '%U+'},\n"
    "  {'0x1F', '%x+$'}, {'a,b,,c', '([^,]*)'}, {'abc', 'b?c'}, {'aaa', 'a-b'}, {'aaab', 'a-b'}, {'$a$', 'a$'},\n"
    "  {'a$b', '$b'}, {'a^b', 'a^b'},\n"
    "}\n"
    "local function show(...) local t = { select('#', ...) }\n"
    "  for i = 1, select('#', ...) do t[#t + 1] = tostring((select(i, ...))) end return table.concat(t, ',') end\n"
    "local r = {}\n"
    "for _, c in ipairs(cases) do\n"
    "  r[#r + 1] = show(string.find(c[1], c[2], c[3], c[4]))\n"
    "  r[#r + 1] = show(string.match(c[1], c[2], c[3]))\n"
    "  r[#r + 1] = show(c[1]:gsub(c[2], '<%0>'))\n"
    "  r[#r + 1] = show(c[1]:gsub(c[2], function(x) x = tostring(x) return #x > 1 and x:upper() or nil end, 2))\n"
    "  r[#r + 1] = show(c[1]:gsub(c[2], { a = 'A', l = 'L' }))\n"
    "  local g = {} for a, b in c[1]:gmatch(c[2]) do g[#g + 1] = show(a, b) if #g > 20 then break end end\n"
    "  r[#r + 1] = table.concat(g, ';')\n"
    "end\n"
    "for _, bad in ipairs { '%', '[a', '(()', '%b', '%f', '%1', '(%1)', ')' } do\n"
    "  local ok, err = pcall(string.find, 'abc', bad)\n"
    "  r[#r + 1] = tostring(ok) .. ':' .. tostring(err):gsub('^.-:%d+: ', '')\n"
    "end\n"
    "r[#r + 1] = tostring(select(2, pcall(string.gsub, 'abc', 'b', true)))\n"
    "r[#r + 1] = tostring(select(2, pcall(string.gsub, 'abc', 'b', function() return {} end)))\n"
    "out = table.concat(r, '\\n')\n";

/* A Lua pattern that backtracks for ever is stopped by the budget (issue 29,
 * item 8): LuaJIT's matcher runs in one C call no hook can stop, so a VM with
 * a budget has a matcher counting its steps, with LuaJIT's results. */
static void test_pattern_budget(void) {
  static const char *const catastrophic[] = {
      "string.find(string.rep('a', 60), string.rep('a*', 30) .. 'b')",
      "local s = string.rep('a', 60); s:match(string.rep('a*', 30) .. 'b')",
      "for _ in string.gmatch(string.rep('a', 60), string.rep('a*', 30) .. 'b') do end",
      "string.gsub(string.rep('a', 60), string.rep('a-', 30) .. 'b', 'x')",
      "pcall(string.find, string.rep('a', 60), string.rep('a*', 30) .. 'b'); error('went on after the budget')",
  };
  tide_vm *vm = open_budget(0, 100);
  CHECK(vm != NULL);
  for (size_t k = 0; vm && k < sizeof catastrophic / sizeof catastrophic[0]; k++) {
    tide_vm_status status;
    double s = timed(vm, catastrophic[k], &status);
    CHECK(status == TIDE_VM_ERR_BUDGET && s < 2.0);
    CHECK(contains(tide_vm_last_error(vm), "time budget of 100 ms exceeded"));
    if (status != TIDE_VM_ERR_BUDGET) fprintf(stderr, "pattern %zu: %d %s\n", k, (int)status, tide_vm_last_error(vm));
  }
  if (vm) tide_vm_close(vm);
  /* the instruction budget counts its steps too; in a sandbox as well */
  tide_vm_options opts;
  memset(&opts, 0, sizeof opts);
  opts.instruction_limit = 10000000;
  opts.sandbox = true;
  vm = tide_vm_open(&opts);
  CHECK(vm != NULL);
  if (vm) {
    tide_vm_status status;
    double s = timed(vm, catastrophic[0], &status);
    CHECK(status == TIDE_VM_ERR_BUDGET && s < 5.0);
    CHECK(contains(tide_vm_last_error(vm), "instruction budget of 10000000 exceeded"));
    CHECK(contains(tide_vm_last_error(vm), "timed:1:"));
    tide_vm_close(vm);
  }
  /* the same results and messages as LuaJIT's own matcher */
  tide_vm *plain = tide_vm_open(NULL);
  vm = open_budget(100000000, 10000);
  CHECK(plain && vm);
  if (plain && vm) {
    CHECK(tide_vm_dostring(plain, pattern_battery, "=battery") == TIDE_VM_OK);
    CHECK(tide_vm_dostring(vm, pattern_battery, "=battery") == TIDE_VM_OK);
    if (*tide_vm_last_error(vm)) fprintf(stderr, "%s\n", tide_vm_last_error(vm));
    lua_State *a = tide_vm_lua_state(plain), *b = tide_vm_lua_state(vm);
    lua_getglobal(a, "out");
    lua_getglobal(b, "out");
    const char *ra = lua_tostring(a, -1), *rb = lua_tostring(b, -1);
    CHECK(ra && rb && strlen(ra) > 1000 && strcmp(ra, rb) == 0);
    if (ra && rb && strcmp(ra, rb) != 0) fprintf(stderr, "LuaJIT's:\n%s\n--- the budgeted VM's:\n%s\n", ra, rb);
    lua_pop(a, 1);
    lua_pop(b, 1);
  }
  tide_vm_close(plain);
  tide_vm_close(vm);
}

/* regex_replace backtracking in PCRE2 under a budget (issue 29, item 8): each
 * match has a step limit (refused with a clear error), and the budget's
 * interrupt stops the op between matches and elements. */
static void test_regex_budget(void) {
  tide_vm *vm = open_budget(0, 100);
  CHECK(vm != NULL);
  if (!vm) return;
  tide_vm_status status;
  double s = timed(vm, "local tide = require 'tide'\n"
                       "local t = {} for i = 1, 200 do t[i] = string.rep('a', 24) .. '!' end\n"
                       "local x = tide.tensor(t)\n"
                       "local y = tide.strings.regex_replace(x, '(a|aa)+$', 'x')",
                   &status);
  CHECK(status == TIDE_VM_ERR_BUDGET && s < 1.5);
  if (status != TIDE_VM_ERR_BUDGET || s >= 1.5) fprintf(stderr, "regex: %.2f s: %s\n", s, tide_vm_last_error(vm));
  tide_vm_close(vm);
  /* one catastrophic match: the match limit, named in a clear error (no VM needed) */
  vm = tide_vm_open(NULL);
  CHECK(vm != NULL);
  if (!vm) return;
  s = timed(vm, "local tide = require 'tide'\n"
                "tide.strings.regex_replace(tide.tensor{string.rep('a', 40) .. '!'}, '^(a+)+$', 'x')",
            &status);
  CHECK(status == TIDE_VM_ERR_RUN && s < 2.0);
  CHECK(contains(tide_vm_last_error(vm),
                 "regex_replace: matching element 0 failed: the pattern \"^(a+)+$\" backtracks too much"));
  tide_vm_close(vm);
}

int main(void) {
  test_lua_heap_cap();
  test_tensor_cap();
  test_string_cap();
  test_scratch_cap();
  test_load_inside_cap();
  test_pipeline_threads_charge_the_vm();
  test_instruction_budget();
  test_time_budget();
  test_set_budget();
  test_budget_interrupts_only_its_vm();
  with_alarm(test_pipelines_stop, 120);
  with_alarm(test_interleave_inner_end_stops_its_work, 60);
  with_alarm(test_pattern_budget, 120);
  with_alarm(test_regex_budget, 120);
  return CHECK_SUMMARY("vm_limits");
}
