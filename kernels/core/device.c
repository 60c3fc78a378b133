/* core/device.c — devices: loading the CUDA backend (libtide_cuda.so) on first
 * use, each device's backend table, device names, storage on a GPU, copies
 * between devices, and running an op whose inputs sit on a GPU. */
#include "backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading the backend ------------------------------------------------------
 * Loaded once, the first time anything asks about GPUs: a program that never
 * does pays nothing, and a machine without the library, the driver or a GPU
 * gets "no GPU" with the reason, never a crash. */

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool tf32_on; /* kept here too, so the setting holds when the backend loads later */
static tide_cuda_backend backend;
static const tide_cuda_backend *loaded; /* &backend once it loaded, else NULL */
static int visible;                     /* GPUs the backend sees */
static char why_none[512];              /* why visible is 0 */

static const tide_cuda_host host = {tide_reduce_axes, tide_matmul_dims};

/* libtide_cuda.so beside libtide.so, unless TIDE_CUDA_LIBRARY names another
 * (tests point it at a missing file to see the fallback). */
static void backend_path(char *buf, size_t size) {
  const char *env = getenv("TIDE_CUDA_LIBRARY");
  if (env && *env) {
    snprintf(buf, size, "%s", env);
    return;
  }
  Dl_info info;
  if (dladdr((void *)&tide_cuda_device_count, &info) && info.dli_fname) {
    snprintf(buf, size, "%s", info.dli_fname);
    char *slash = strrchr(buf, '/');
    if (slash) {
      snprintf(slash + 1, size - (size_t)(slash + 1 - buf), "libtide_cuda.so");
      return;
    }
  }
  snprintf(buf, size, "libtide_cuda.so");
}

static void load_backend(void) {
  char path[4096];
  backend_path(path, sizeof path);
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why_none, sizeof why_none, "the CUDA backend did not load (%.400s)", e ? e : path);
    return;
  }
  tide_cuda_backend_init_fn init = (tide_cuda_backend_init_fn)(uintptr_t)dlsym(lib, TIDE_CUDA_BACKEND_INIT);
  memset(&backend, 0, sizeof backend);
  if (!init) {
    snprintf(why_none, sizeof why_none, "%.400s has no %s", path, TIDE_CUDA_BACKEND_INIT);
    return; /* the library stays mapped: unloading CUDA libraries is not safe */
  }
  /* The backend must not leave its own error behind for the caller's next check. */
  tide_status st = init(&host, &backend);
  if (st || backend.abi != TIDE_CUDA_BACKEND_ABI || backend.size != sizeof backend || !backend.device_count) {
    snprintf(why_none, sizeof why_none, "%.300s refused to start (%.180s)", path,
             st ? tide_last_error() : "built for another version of libtide");
    tide_clear_error();
    return;
  }
  char why[sizeof why_none] = "";
  visible = backend.device_count(why, sizeof why);
  if (visible <= 0) {
    visible = 0;
    snprintf(why_none, sizeof why_none, "%s", why[0] ? why : "the CUDA driver reports no GPU");
  }
  if (visible > TIDE_MAX_CUDA_DEVICES) visible = TIDE_MAX_CUDA_DEVICES;
  /* The view ops are device independent (header arithmetic; core/views.c
   * copies through the backend's COPY kernel where a view cannot be taken). */
  static const int view_ops[] = {TIDE_OP_RESHAPE, TIDE_OP_TRANSPOSE, TIDE_OP_SLICE, TIDE_OP_BROADCAST_TO,
                                 TIDE_OP_SQUEEZE, TIDE_OP_EXPAND_DIMS};
  for (size_t i = 0; i < sizeof view_ops / sizeof view_ops[0]; i++)
    if (!backend.base.kernels[view_ops[i]] && backend.base.kernels[TIDE_OP_COPY])
      backend.base.kernels[view_ops[i]] = tide_cpu_backend.kernels[view_ops[i]];
  if (backend.set_tf32) backend.set_tf32(tf32_on); /* a setting made before the load */
  loaded = &backend; /* loaded even without a GPU: its memory settings still answer */
}

const tide_cuda_backend *tide_cuda_backend_get(void) {
  pthread_once(&load_once, load_backend);
  return loaded;
}

int tide_cuda_device_count(void) {
  tide_cuda_backend_get();
  return visible;
}

const char *tide_cuda_unavailable_reason(void) {
  tide_cuda_backend_get();
  return visible ? "" : why_none;
}

tide_status tide_cuda_library_versions(int64_t out[5]) {
  const tide_cuda_backend *be = tide_cuda_backend_get();
  if (!be || !be->versions)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "cuda library versions: %s", why_none[0] ? why_none : "no CUDA backend");
  be->versions(out);
  return TIDE_OK;
}

/* ---- the backend tables ---------------------------------------------------------- */

const tide_backend *tide_backend_for(int dev) {
  if (dev == TIDE_CPU) return &tide_cpu_backend;
  const tide_cuda_backend *be = dev >= TIDE_CUDA ? tide_cuda_backend_get() : NULL;
  return be ? &be->base : NULL;
}

bool tide_op_has_kernel(int dev, int op) {
  const tide_backend *be = tide_backend_for(dev);
  return be && op >= 0 && op < TIDE_NUM_OPS && be->kernels[op] != NULL;
}

bool tide_op_has_cuda_kernel(int op) { return tide_op_has_kernel(TIDE_CUDA, op); }

int tide_backend_missing_primitives(int dev, int *ops, int max) {
  const tide_backend *be = tide_backend_for(dev);
  char dn[32];
  if (!be)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "backend of %s: %s", tide_device_name(dev, dn, sizeof dn),
                     dev >= TIDE_CUDA && why_none[0] ? why_none : "no such device"), -1;
  int n = 0;
  for (int op = 0; op < TIDE_NUM_OPS; op++) {
    if (!(tide_op_defs[op].flags & TIDE_OPF_PRIMITIVE) || be->kernels[op]) continue;
    if (ops && n < max) ops[n] = op;
    n++;
  }
  return n;
}

/* ---- device names ------------------------------------------------------------ */

/* The error for a GPU that is not there: names it and says why. */
static tide_status no_gpu(const char *name, int k) {
  int n = tide_cuda_device_count();
  if (n == 0)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "no CUDA device visible: \"%s\" needs a GPU, and %s (set "
                     "CUDA_VISIBLE_DEVICES, or use \"cpu\")", name, why_none);
  return TIDE_FAIL(TIDE_ERR_VALUE, "device \"%s\": GPU %d is not visible (%d GPU%s visible, cuda:0 to cuda:%d)",
                   name, k, n, n == 1 ? "" : "s", n - 1);
}

tide_status tide_device_parse(const char *name, int *dev) {
  if (!name || !dev) return TIDE_FAIL(TIDE_ERR_VALUE, "device: a name is due (\"cpu\" or \"cuda:0\")");
  /* TF's forms too: "/cpu:0", "/gpu:1", "/device:GPU:0", "/physical_device:GPU:0",
   * "/job:localhost/replica:0/task:0/device:CPU:0" */
  const char *s = name, *d = strstr(name, "device:");
  if (d) s = d + 7;
  else if (*s == '/') s++;
  if (strcasecmp(s, "cpu") == 0 || strcasecmp(s, "cpu:0") == 0) {
    *dev = TIDE_CPU;
    return TIDE_OK;
  }
  long k = 0;
  const char *rest = NULL;
  if (strncasecmp(s, "cuda", 4) == 0) rest = s + 4;
  else if (strncasecmp(s, "gpu", 3) == 0) rest = s + 3;
  if (!rest || (*rest && *rest != ':'))
    return TIDE_FAIL(TIDE_ERR_VALUE, "device \"%s\": not a device name (\"cpu\", \"cuda\", \"cuda:K\", \"gpu:K\")",
                     name);
  if (*rest == ':') {
    char *end;
    k = strtol(rest + 1, &end, 10);
    if (end == rest + 1 || *end || k < 0 || k >= TIDE_MAX_CUDA_DEVICES)
      return TIDE_FAIL(TIDE_ERR_VALUE, "device \"%s\": the GPU number must be 0 to %d", name,
                       TIDE_MAX_CUDA_DEVICES - 1);
  }
  if (k >= tide_cuda_device_count()) return no_gpu(name, (int)k);
  *dev = TIDE_CUDA + (int)k;
  return TIDE_OK;
}

const char *tide_device_name(int dev, char *buf, size_t size) {
  if (dev == TIDE_CPU) snprintf(buf, size, "cpu");
  else if (dev >= TIDE_CUDA) snprintf(buf, size, "cuda:%d", tide_cuda_ordinal(dev));
  else snprintf(buf, size, "device %d", dev);
  return buf;
}

/* The backend for GPU dev code `dev`, or NULL with an error naming `what`. */
static const tide_cuda_backend *gpu(int k, const char *what) {
  const tide_cuda_backend *be = tide_cuda_backend_get();
  if (k < 0 || k >= visible) {
    char name[32];
    snprintf(name, sizeof name, "cuda:%d", k);
    tide_status st = no_gpu(name, k);
    char msg[1024]; /* the message is formatted into the buffer it reads from otherwise */
    snprintf(msg, sizeof msg, "%s", tide_last_error());
    TIDE_FAIL(st, "%s: %s", what, msg);
    return NULL;
  }
  return be;
}

tide_status tide_cuda_device_info(int k, char *name, size_t size, int64_t *total_bytes) {
  const tide_cuda_backend *be = gpu(k, "device_info");
  return be ? be->device_info(k, name, size, total_bytes) : tide_last_status();
}

/* ---- memory settings ------------------------------------------------------------ */

tide_status tide_cuda_set_memory_growth(int k, bool grow) {
  const tide_cuda_backend *be = gpu(k, "set_memory_growth");
  return be ? be->set_memory_growth(k, grow) : tide_last_status();
}

tide_status tide_cuda_set_memory_limit(int k, int64_t bytes) {
  if (bytes < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "set_memory_limit: bytes must be >= 0, got %lld", (long long)bytes);
  const tide_cuda_backend *be = gpu(k, "set_memory_limit");
  return be ? be->set_memory_limit(k, bytes) : tide_last_status();
}

tide_status tide_cuda_memory_info(int k, int64_t *current, int64_t *peak) {
  const tide_cuda_backend *be = gpu(k, "memory_info");
  return be ? be->memory_info(k, current, peak) : tide_last_status();
}

bool tide_cuda_device_used(int k) {
  const tide_cuda_backend *be = tide_cuda_backend_get();
  return be && k >= 0 && k < visible && be->device_used(k);
}

void tide_cuda_enable_tf32(bool on) {
  tf32_on = on;
  const tide_cuda_backend *be = tide_cuda_backend_get();
  if (be && be->set_tf32) be->set_tf32(on);
}

bool tide_cuda_tf32_enabled(void) { return tf32_on; }

tide_status tide_cuda_synchronize(int k) {
  const tide_cuda_backend *be = gpu(k, "synchronize");
  return be ? be->synchronize(k) : tide_last_status();
}

/* ---- storage on a GPU ------------------------------------------------------------- */

/* Wrapped-storage release: the block goes back to its GPU's cache. ctx packs
 * the byte count over the ordinal (6 bits: TIDE_MAX_CUDA_DEVICES), so the
 * allocator's counts need no table of blocks. */
static void *pack_block(int k, size_t nbytes) { return (void *)(uintptr_t)((uint64_t)nbytes << 6 | (uint64_t)k); }
static void gpu_free(void *ctx, void *data) {
  uint64_t v = (uint64_t)(uintptr_t)ctx;
  backend.base.free((int)(v & 63), data, (size_t)(v >> 6));
}

tide_status tide_device_alloc_data(tide_tensor *t, int dev) {
  int k = tide_cuda_ordinal(dev);
  const tide_cuda_backend *be = gpu(k, "allocate");
  if (!be) return tide_last_status();
  size_t nbytes = (size_t)t->nelem * tide_dtype_size_unchecked(t->dt);
  tide_storage *s = calloc(1, sizeof *s);
  if (!s) return TIDE_FAIL(TIDE_ERR_MEMORY, "out of host memory for a storage header");
  void *p = NULL;
  tide_status st = be->base.alloc(k, nbytes ? nbytes : 1, &p); /* the error gives requested and in-use bytes */
  if (st) {
    free(s);
    return st;
  }
  tide_memory_note_device_alloc(nbytes);
  s->refs = 1;
  s->data = p;
  s->nbytes = nbytes;
  s->free_fn = gpu_free;
  s->free_ctx = pack_block(k, nbytes ? nbytes : 1);
  s->free_ptr = p;
  s->device = dev;
  t->storage = s;
  t->data = p;
  t->dev = dev;
  t->flags = 0;
  return TIDE_OK;
}

/* ---- copies between devices ------------------------------------------------------ */

tide_status tide_device_contiguous(tide_tensor *dst, const tide_tensor *src) {
  if (tide_tensor_is_contiguous(src)) return tide_tensor_share(dst, src);
  return tide_op_unary(TIDE_OP_COPY, dst, src); /* COPY writes a fresh contiguous tensor */
}

tide_status tide_tensor_to_device(tide_tensor *dst, const tide_tensor *src, int dev) {
  if (!dst || !src) return TIDE_FAIL(TIDE_ERR_VALUE, "to: a tensor is due");
  if (src->flags & TIDE_TENSOR_SYMBOLIC)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "to: a traced tensor cannot change device (traced graphs run where "
                     "their inputs are)");
  if (dev != TIDE_CPU && dev < TIDE_CUDA) return TIDE_FAIL(TIDE_ERR_VALUE, "to: unknown device code %d", dev);
  if (src->dev == dev) return tide_tensor_share(dst, src);
  if (src->dt == TIDE_STRING) return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "to: string tensors stay on the CPU");
  if (dev != TIDE_CPU && !gpu(tide_cuda_ordinal(dev), "to")) return tide_last_status();
  tide_tensor from;
  memset(&from, 0, sizeof from);
  tide_status st = tide_device_contiguous(&from, src);
  if (st) return st;
  memset(dst, 0, sizeof *dst);
  tide_tensor_set_contiguous_layout(dst, src->dt, src->ndim, src->dims);
  size_t nbytes = (size_t)src->nelem * tide_dtype_size_unchecked(src->dt);
  if (dev == TIDE_CPU) {
    st = tide_tensor_init(dst, src->dt, src->ndim, src->dims);
    if (!st && nbytes) st = backend.base.memcpy(tide_cuda_ordinal(from.dev), TIDE_COPY_D2H, dst->data, from.data, nbytes);
  } else if (from.dev == TIDE_CPU) {
    st = tide_device_alloc_data(dst, dev);
    if (!st && nbytes) st = backend.base.memcpy(tide_cuda_ordinal(dev), TIDE_COPY_H2D, dst->data, from.data, nbytes);
  } else { /* GPU to GPU: through the host (peer copies are a later step) */
    tide_tensor staged;
    memset(&staged, 0, sizeof staged);
    st = tide_tensor_to_device(&staged, &from, TIDE_CPU);
    if (!st) st = tide_tensor_to_device(dst, &staged, dev);
    tide_tensor_release(&staged);
  }
  tide_tensor_release(&from);
  if (st) tide_tensor_release(dst);
  return st;
}

/* ---- running an op on a GPU --------------------------------------------------------- */

/* The error for input i, not on dev: names two inputs on different devices,
 * or, when the inputs agree, the device a placed call asked for. */
static __attribute__((cold)) tide_status mixed_devices(const tide_op_def *def, int dev, int n_in,
                                                       const tide_tensor *const *in, int i) {
  char da[32], db[32];
  for (int j = 0; j < n_in; j++)
    if (in[j]->dev != in[i]->dev) {
      int a = j < i ? j : i, b = j < i ? i : j;
      tide_device_name(in[a]->dev, da, sizeof da);
      tide_device_name(in[b]->dev, db, sizeof db);
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: input %d is on %s but input %d is on %s (inputs must share a device: "
                       "move one with :to(\"%s\") or :to(\"%s\"))", def->name, a + 1, da, b + 1, db, da, db);
    }
  tide_device_name(dev, da, sizeof da);
  tide_device_name(in[i]->dev, db, sizeof db);
  return TIDE_FAIL(TIDE_ERR_VALUE, "%s: input %d is on %s but the op runs on %s (move it with :to(\"%s\"))",
                   def->name, i + 1, db, da, da);
}

/* Run def on dev, every input there already. */
static tide_status run_on(int dev, const tide_op_def *def, const tide_attrs *attrs, int n_in,
                          const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  char dn[32];
  const tide_backend *be = dev >= TIDE_CUDA ? tide_backend_for(dev) : NULL;
  tide_kernel_fn kernel = be ? be->kernels[def->id] : NULL;
  if (!kernel)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: no CUDA kernel for this op yet (its input is on %s): move the "
                     "inputs to the CPU with :cpu()", def->name, tide_device_name(dev, dn, sizeof dn));
  tide_status st = def->infer(def, attrs, n_in, in, n_out, out);
  if (st) return st;
  bool allocates = !(def->flags & (TIDE_OPF_VIEW | TIDE_OPF_DATA_SHAPE));
  for (int i = 0; i < n_out && allocates; i++) {
    if (out[i]->nelem < 0) {
      st = TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result shape has too many elements", def->name);
    } else {
      st = tide_device_alloc_data(out[i], dev);
      if (st) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tide_last_error());
        TIDE_FAIL(st, "%s: %s", def->name, msg);
      }
    }
    if (st) {
      for (int j = 0; j < i; j++) tide_tensor_release(out[j]);
      return st;
    }
  }
  tide_attrs drawn;
  if ((def->flags & TIDE_OPF_STATEFUL) && (attrs->flags & (TIDE_ATTR_OP_SEED | TIDE_ATTR_RNG_AT_RUN))) {
    drawn = *attrs;
    if ((st = tide_random_draw_counters(def->id, out[0], &drawn)) != TIDE_OK) goto fail;
    attrs = &drawn;
  }
  st = kernel(def, attrs, n_in, in, n_out, out);
  if (!st) return TIDE_OK;
fail:
  for (int i = 0; i < n_out; i++) tide_tensor_release(out[i]);
  return st;
}

/* 0-d CPU tensors (the Lua numbers an op met: `g * 2`) go along with inputs
 * on a GPU, copied up, as PyTorch lets CPU scalars join CUDA ops; any other
 * input on another device is an error naming both. */
enum { MAX_SCALARS = 4, MAX_INPUTS_WITH_SCALARS = 16 };

tide_status tide_device_op_run(int dev, const tide_op_def *def, const tide_attrs *attrs, int n_in,
                               const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  const tide_tensor *moved[MAX_INPUTS_WITH_SCALARS];
  tide_tensor up[MAX_SCALARS];
  const tide_tensor *const *use = in;
  int n_up = 0;
  tide_status st = TIDE_OK;
  for (int i = 0; i < n_in && !st; i++) {
    if (in[i]->dev == dev) continue;
    bool scalar = in[i]->dev == TIDE_CPU && in[i]->ndim == 0 && dev >= TIDE_CUDA;
    if (!scalar || n_in > MAX_INPUTS_WITH_SCALARS || n_up == MAX_SCALARS) {
      st = mixed_devices(def, dev, n_in, in, i);
      break;
    }
    if (use == in) {
      for (int j = 0; j < n_in; j++) moved[j] = in[j];
      use = moved;
    }
    memset(&up[n_up], 0, sizeof up[n_up]);
    st = tide_tensor_to_device(&up[n_up], in[i], dev);
    if (!st) moved[i] = &up[n_up++];
  }
  if (!st) st = run_on(dev, def, attrs, n_in, use, n_out, out);
  for (int k = 0; k < n_up; k++) tide_tensor_release(&up[k]); /* stream-ordered: after the kernel read them */
  return st;
}

tide_status tide_op_run_device(int dev, int op, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  if (dev == TIDE_CPU) {
    for (int i = 0; i < n_in; i++)
      if (in && in[i] && in[i]->dev != TIDE_CPU) {
        char dn[32];
        return TIDE_FAIL(TIDE_ERR_VALUE, "%s: input %d is on %s but the op runs on cpu (move it with :cpu())",
                         tide_op_name(op) ? tide_op_name(op) : "op", i + 1, tide_device_name(in[i]->dev, dn, sizeof dn));
      }
    return tide_op_run(op, attrs, n_in, in, n_out, out);
  }
  tide_status st = tide_op_infer(op, attrs, n_in, in, n_out, out); /* every check of a call, on blank outputs */
  if (st) return st;
  if (!gpu(tide_cuda_ordinal(dev), tide_op_name(op))) return tide_last_status();
  for (int i = 0; i < n_in; i++)
    if (in[i]->flags & TIDE_TENSOR_SYMBOLIC)
      return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: placing a traced op on a GPU is not supported yet", tide_op_name(op));
  return tide_device_op_run(dev, &tide_op_defs[op], attrs ? attrs : &tide_default_attrs, n_in, in, n_out, out);
}
