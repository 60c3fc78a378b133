/* tests/c/test_vm_host.c — tensors across the host boundary (tide/vm.h):
 * calling Lua functions with tensors from C (by name, dotted name, from the
 * stack), host functions for scripts (tensor and lua_CFunction), their errors.
 * Written against tide.h and vm.h only, as a host without Lua headers is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tide/vm.h"
#include "util.h"

/* A float32 vector wrapped around caller memory. */
static void wrap_floats(tide_tensor *t, float *data, int64_t n) {
  CHECK(tide_tensor_wrap(t, data, TIDE_FLOAT32, 1, &n, NULL, NULL, NULL) == TIDE_OK);
}

static void test_call_tensors(void) {
  tide_vm *vm = tide_vm_open(NULL);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "function affine(x, w) return x * w + 1, x:sum() end\n"
                             "function same(x) return x end\n"
                             "function number() return 2.5 end\n"
                             "function none() end\n"
                             "function text() return 'hello' end\n"
                             "function many() return 1, 2, 3 end\n"
                             "function fails(x) error('bad input of shape ' .. tostring(x.shape[1])) end\n"
                             "policy = { act = function(x) return x + 10 end }\n",
                         "=setup") == TIDE_VM_OK);
  float xs[3] = {1, 2, 3}, ws[3] = {2, 2, 2};
  tide_tensor x, w;
  wrap_floats(&x, xs, 3);
  wrap_floats(&w, ws, 3);
  const tide_tensor *in[2] = {&x, &w};
  tide_tensor out[4];
  int n = -1;

  CHECK(tide_vm_call_tensors(vm, "affine", 2, in, 4, out, &n) == TIDE_VM_OK);
  CHECK(n == 2);
  if (n == 2) {
    const float *y = out[0].data;
    CHECK(out[0].dt == TIDE_FLOAT32 && out[0].ndim == 1 && out[0].dims[0] == 3);
    CHECK(y[0] == 3 && y[1] == 5 && y[2] == 7);
    CHECK(out[1].ndim == 0 && *(const float *)out[1].data == 6);
    tide_tensor_release(&out[0]);
    tide_tensor_release(&out[1]);
  }
  /* Inputs are shared, not copied: the identity returns the caller's memory. */
  CHECK(tide_vm_call_tensors(vm, "same", 1, in, 1, out, &n) == TIDE_VM_OK && n == 1);
  if (n == 1) {
    CHECK(out[0].data == (void *)xs);
    tide_tensor_release(&out[0]);
  }
  /* A dotted name; a number result becomes a tensor; no results. */
  CHECK(tide_vm_call_tensors(vm, "policy.act", 1, in, 1, out, &n) == TIDE_VM_OK && n == 1);
  if (n == 1) {
    CHECK(((const float *)out[0].data)[2] == 13);
    tide_tensor_release(&out[0]);
  }
  CHECK(tide_vm_call_tensors(vm, "number", 0, NULL, 1, out, &n) == TIDE_VM_OK && n == 1);
  if (n == 1) {
    CHECK(out[0].dt == TIDE_FLOAT32 && *(const float *)out[0].data == 2.5f);
    tide_tensor_release(&out[0]);
  }
  CHECK(tide_vm_call_tensors(vm, "none", 0, NULL, 0, NULL, &n) == TIDE_VM_OK && n == 0);
  CHECK(tide_vm_call_tensors(vm, "none", 0, NULL, 0, NULL, NULL) == TIDE_VM_OK);

  /* Errors: the script's own (with traceback), and misuse. */
  CHECK(tide_vm_call_tensors(vm, "fails", 1, in, 1, out, &n) == TIDE_VM_ERR_RUN && n == 0);
  CHECK(contains(tide_vm_last_error(vm), "setup:8: bad input of shape 3"));
  CHECK(contains(tide_vm_last_error(vm), "stack traceback:"));
  CHECK(tide_vm_call_tensors(vm, "no_such", 0, NULL, 1, out, &n) == TIDE_VM_ERR_USAGE);
  CHECK(contains(tide_vm_last_error(vm), "no function 'no_such'"));
  CHECK(tide_vm_call_tensors(vm, "policy.nothing.deeper", 0, NULL, 1, out, &n) == TIDE_VM_ERR_USAGE);
  CHECK(tide_vm_call_tensors(vm, "text", 0, NULL, 1, out, &n) == TIDE_VM_ERR_USAGE);
  CHECK(contains(tide_vm_last_error(vm), "result 1 of 'text' is a string, not a tensor"));
  CHECK(tide_vm_call_tensors(vm, "many", 0, NULL, 2, out, &n) == TIDE_VM_ERR_USAGE && n == 0);
  CHECK(contains(tide_vm_last_error(vm), "3 values, more than max_out (2)"));
  CHECK(tide_vm_call_tensors(vm, "affine", 2, NULL, 2, out, &n) == TIDE_VM_ERR_USAGE);
  CHECK(tide_vm_call_tensors(vm, "affine", 2, in, 2, NULL, &n) == TIDE_VM_ERR_USAGE);
  const tide_tensor *null_in[1] = {NULL};
  CHECK(tide_vm_call_tensors(vm, "same", 1, null_in, 1, out, &n) == TIDE_VM_ERR_USAGE);
  CHECK(contains(tide_vm_last_error(vm), "input 0 is NULL"));
  CHECK(tide_vm_call_tensors(NULL, "same", 1, in, 1, out, &n) == TIDE_VM_ERR_USAGE);
  /* name NULL with nothing on the stack. */
  CHECK(tide_vm_call_tensors(vm, NULL, 1, in, 1, out, &n) == TIDE_VM_ERR_USAGE);

  /* The host's references outlive the VM. */
  CHECK(tide_vm_call_tensors(vm, "affine", 2, in, 2, out, &n) == TIDE_VM_OK && n == 2);
  tide_vm_close(vm);
  if (n == 2) {
    CHECK(((const float *)out[0].data)[1] == 5);
    tide_tensor_release(&out[0]);
    tide_tensor_release(&out[1]);
  }
  tide_tensor_release(&x);
  tide_tensor_release(&w);
}

/* A host function: the sum of its arguments' first elements, plus a copy of
 * the first argument scaled by the userdata. */
static int host_calls;
static int host_sum(void *userdata, int n_in, const tide_tensor *const *in, int max_out, tide_tensor *out) {
  host_calls++;
  float scale = *(const float *)userdata;
  if (n_in < 1) {
    tide_set_error(TIDE_ERR_VALUE, "host_sum: needs at least one tensor");
    return -1;
  }
  double total = 0;
  for (int i = 0; i < n_in; i++) {
    if (in[i]->dt != TIDE_FLOAT32 || in[i]->nelem < 1) {
      tide_set_error(TIDE_ERR_DTYPE, "host_sum: argument %d is not a non-empty float32 tensor", i + 1);
      return -1;
    }
    total += *(const float *)in[i]->data;
  }
  CHECK(max_out == TIDE_VM_HOST_MAX_OUT);
  if (tide_tensor_init(&out[0], TIDE_FLOAT64, 0, NULL)) return -1;
  *(double *)out[0].data = total;
  if (tide_tensor_init(&out[1], TIDE_FLOAT32, in[0]->ndim, in[0]->dims)) return -1;
  if (!tide_tensor_is_contiguous(in[0])) return 1;
  for (int64_t k = 0; k < in[0]->nelem; k++) ((float *)out[1].data)[k] = scale * ((const float *)in[0]->data)[k];
  return 2;
}

/* Returns more results than allowed, after filling some. */
static int host_too_many(void *userdata, int n_in, const tide_tensor *const *in, int max_out, tide_tensor *out) {
  (void)userdata, (void)n_in, (void)in;
  for (int i = 0; i < 2; i++) tide_tensor_init_heap(&out[i], TIDE_FLOAT32, 0, NULL);
  return max_out + 1;
}

/* Fails after making an output (which must not leak). */
static int host_fails(void *userdata, int n_in, const tide_tensor *const *in, int max_out, tide_tensor *out) {
  (void)userdata, (void)n_in, (void)in, (void)max_out;
  tide_tensor_init_heap(&out[0], TIDE_FLOAT32, 0, NULL);
  tide_set_error(TIDE_ERR_VALUE, "the host says no");
  return -1;
}

static int lua_fn_calls;
/* A lua_CFunction host function (declared without lua.h: it takes the state). */
static int lua_fn(struct lua_State *L) {
  (void)L;
  lua_fn_calls++;
  return 0;
}

static void test_host_functions(bool sandbox) {
  tide_vm_options opts;
  memset(&opts, 0, sizeof opts);
  opts.sandbox = sandbox;
  tide_vm *vm = tide_vm_open(&opts);
  CHECK(vm != NULL);
  if (!vm) return;
  float scale = 10;
  CHECK(tide_vm_register(vm, "host_sum", host_sum, &scale) == TIDE_VM_OK);
  CHECK(tide_vm_register(vm, "too_many", host_too_many, NULL) == TIDE_VM_OK);
  CHECK(tide_vm_register(vm, "host_fails", host_fails, NULL) == TIDE_VM_OK);
  CHECK(tide_vm_register_lua(vm, "lua_fn", lua_fn) == TIDE_VM_OK);
  host_calls = 0;
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "local total, scaled = host_sum(tide.tensor({1.5, 2}, 'float32'), tide.tensor({2.5}, 'float32'))\n"
                             "assert(total.dtype == 'float64' and total:item() == 4, tostring(total))\n"
                             "assert(scaled:totable()[2] == 20)\n"
                             "-- numbers become tensors (float32 for 2.5, as tide.tensor does)\n"
                             "assert(host_sum(2.5):item() == 2.5)\n"
                             "lua_fn()\n",
                         "=script") == TIDE_VM_OK);
  if (*tide_vm_last_error(vm)) fprintf(stderr, "%s\n", tide_vm_last_error(vm));
  CHECK(host_calls == 2);
  CHECK(lua_fn_calls >= 1);
  /* The host's error becomes a Lua error at the script's line, catchable. */
  CHECK(tide_vm_dostring(vm, "host_sum(require('tide').tensor{1, 2})", "=dtype") == TIDE_VM_ERR_RUN);
  CHECK(contains(tide_vm_last_error(vm), "host_sum: argument 1 is not a non-empty float32 tensor"));
  CHECK(contains(tide_vm_last_error(vm), "dtype:1:"));
  CHECK(tide_vm_dostring(vm, "local ok, err = pcall(host_fails); assert(not ok and err:find('the host says no'), err)",
                         NULL) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "too_many()", NULL) == TIDE_VM_ERR_RUN);
  CHECK(contains(tide_vm_last_error(vm), "more than 16"));
  /* Arguments that cannot be tensors are refused before C sees them. */
  host_calls = 0;
  CHECK(tide_vm_dostring(vm, "host_sum('text')", "=arg") == TIDE_VM_ERR_RUN);
  CHECK(contains(tide_vm_last_error(vm), "host_sum: argument 1 is a string, not a tensor or number"));
  CHECK(tide_vm_dostring(vm, "host_sum(nil)", NULL) == TIDE_VM_ERR_RUN);
  CHECK(tide_vm_dostring(vm, "host_sum(function() end)", NULL) == TIDE_VM_ERR_RUN);
  CHECK(host_calls == 0);
  /* Bad registrations. */
  CHECK(tide_vm_register(vm, "not a name", host_sum, NULL) == TIDE_VM_ERR_USAGE);
  CHECK(tide_vm_register(vm, "1abc", host_sum, NULL) == TIDE_VM_ERR_USAGE);
  CHECK(tide_vm_register(vm, NULL, host_sum, NULL) == TIDE_VM_ERR_USAGE);
  CHECK(tide_vm_register(vm, "fine", NULL, NULL) == TIDE_VM_ERR_USAGE);
  CHECK(tide_vm_register_lua(vm, "", lua_fn) == TIDE_VM_ERR_USAGE);
  CHECK(tide_vm_register(NULL, "x", host_sum, NULL) == TIDE_VM_ERR_USAGE);
  /* A script function calling the host, called by the host with tensors. */
  CHECK(tide_vm_dostring(vm, "function through(x) local s, y = host_sum(x); return y end", NULL) == TIDE_VM_OK);
  float xs[2] = {1, 4};
  tide_tensor x, out[1];
  wrap_floats(&x, xs, 2);
  const tide_tensor *in[1] = {&x};
  int n = 0;
  CHECK(tide_vm_call_tensors(vm, "through", 1, in, 1, out, &n) == TIDE_VM_OK && n == 1);
  if (n == 1) {
    CHECK(((const float *)out[0].data)[1] == 40);
    tide_tensor_release(&out[0]);
  }
  tide_tensor_release(&x);
  tide_vm_close(vm);
}

/* A host function that calls the script's `cb` back, which calls it again:
 * a host whose callback re-enters it without end (issue 29, item 9). */
typedef struct {
  tide_vm *vm;
  int deepest;
  int depth;
  char first_error[512]; /* the innermost failure: the refusal itself */
} reentry;

static int reenter(void *userdata, int n_in, const tide_tensor *const *in, int max_out, tide_tensor *out) {
  (void)n_in, (void)in;
  reentry *r = userdata;
  if (++r->depth > r->deepest) r->deepest = r->depth;
  int n = 0;
  tide_vm_status st = tide_vm_call_tensors(r->vm, "cb", 0, NULL, max_out, out, &n);
  r->depth--;
  if (st != TIDE_VM_OK) {
    if (!r->first_error[0]) snprintf(r->first_error, sizeof r->first_error, "%s", tide_vm_last_error(r->vm));
    tide_set_error(TIDE_ERR_VALUE, "%s", tide_vm_last_error(r->vm));
    return -1;
  }
  return n;
}

/* Nesting without end is a clear error, not a crash of the host; the VM is
 * usable afterwards, and nesting within the limit works. */
static void test_reentry_limit(void) {
  tide_vm *vm = tide_vm_open(NULL);
  CHECK(vm != NULL);
  if (!vm) return;
  reentry r = {vm, 0, 0, ""};
  CHECK(tide_vm_register(vm, "reenter", reenter, &r) == TIDE_VM_OK);
  CHECK(tide_vm_dostring(vm, "function cb() return reenter() end", NULL) == TIDE_VM_OK);
  tide_tensor out[1];
  int n = -1;
  CHECK(tide_vm_call_tensors(vm, "cb", 0, NULL, 1, out, &n) == TIDE_VM_ERR_RUN && n == 0);
  CHECK(contains(r.first_error, "calls nested too deep (200 levels)"));
  CHECK(r.deepest >= 50 && r.deepest <= 1000);
  CHECK(r.depth == 0);
  /* afterwards: usable, and nesting a few levels deep works */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "local left = 5\n"
                             "function cb() left = left - 1; if left == 0 then return tide.tensor(7) end return reenter() end",
                         NULL) == TIDE_VM_OK);
  CHECK(tide_vm_call_tensors(vm, "cb", 0, NULL, 1, out, &n) == TIDE_VM_OK && n == 1);
  if (n == 1) {
    CHECK(*(const int32_t *)out[0].data == 7);
    tide_tensor_release(&out[0]);
  }
  tide_vm_close(vm);
}

int main(void) {
  test_call_tensors();
  test_host_functions(false);
  test_host_functions(true);
  test_reentry_limit();
  return CHECK_SUMMARY("vm_host");
}
