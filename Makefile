# tide — one entry point: make, make test, make bench, make demo, make install.
# `make SANITIZE=1 ...` builds with AddressSanitizer + UBSan into build-asan/.

PREFIX ?= /usr/local
CC ?= cc
# The instruction set the library is built for. The default runs on any
# x86-64-v2 CPU (SSE4.2, POPCNT: every x86-64 CPU since 2009); `make
# OPT=-march=native` builds for this machine only (and may die with SIGILL
# on an older one). The hot loops are chosen at run time anyway (below).
# Objects do not record the flags they were built with: `make clean` after
# changing OPT.
ARCH := $(shell uname -m)
OPT_DEFAULT := $(if $(filter x86_64,$(ARCH)),-march=x86-64-v2,)
OPT ?= $(OPT_DEFAULT)
OPTLEVEL := -O3

ifeq ($(SANITIZE),1)
BUILD ?= build-asan
SAN := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=undefined,float-cast-overflow -fno-omit-frame-pointer
OPTLEVEL := -O1
# libtide dlopens oneDNN at its first use (cpu/onednn_load.c); the sanitizer build links it instead, so it loads
# at start-up: GCC 12's LeakSanitizer crashes scanning the dynamic TLS of a library dlopened with libgomp's
# threads running ("Tracer caught signal 11", tests/c/test_signals.c). The dlopen then finds it loaded.
SAN_LIBS := -Wl,--no-as-needed -ldnnl
else
BUILD ?= build
SAN :=
SAN_LIBS :=
endif

# Before compiling anything, say in one line what is missing and how to get it
# (else a fresh machine stops on a system cblas.h's `blasint`). Skipped for
# the goals that install it first (deps; test, demo and bench run deps, then
# make again, which checks), for clean, and for the aarch64 goals (their own
# sub-make checks the sysroot with the cross compiler).
ifeq ($(filter deps test demo bench clean cross-aarch64 test-aarch64,$(MAKECMDGOALS)),)
DEPS_MISSING := $(shell tools/check_build_deps.sh $(CC))
ifneq ($(DEPS_MISSING),)
$(error $(DEPS_MISSING))
endif
endif

# Recursive (=) so that pkg-config runs after tools/deps.sh has installed it.
LUAJIT_CFLAGS = $(shell pkg-config --cflags luajit)
LUAJIT_LIBS = $(shell pkg-config --libs luajit)
BLAS_CFLAGS = $(shell pkg-config --cflags openblas)
BLAS_LIBS = $(shell pkg-config --libs openblas)
# LAPACK (the decompositions of kernels/cpu/linalg_*.c) is OpenBLAS's own: its
# Fortran entry points, declared by liblapacke-dev's lapack.h. Linking
# liblapacke would load a second LAPACK (liblapack.so.3, libtmglib) at every
# start-up; see kernels/cpu/linalg_lapack.h.
LAPACK_LIBS =
# File formats (kernels/io): JSON, protocol buffers, zlib, PNG, JPEG; in the
# plugin: HDF5 (Debian's serial libhdf5, whose folder pkg-config names), zip
# (libzip), GIF (giflib), WebP (libwebp) and JPEG XL (libjxl).
# ICU (the tokenizers, tide.strings.unicode_script) is not linked: it is opened
# on first use, so start-up loads no ICU.
HDF5_CFLAGS = $(shell pkg-config --cflags hdf5)
HDF5_LIBS = $(shell pkg-config --libs hdf5)
IO_LIBS = -lcjson -lprotobuf-c -lz -lpng -ljpeg -lpcre2-8
FORMATS_LIBS = $(HDF5_LIBS) -lzip -lcjson -lgif -lwebpdemux -lwebp -ljxl

CFLAGS_BASE := -std=c11 -g -Wall -Wextra -fwrapv -fPIC -pthread -fvisibility=hidden \
  -D_GNU_SOURCE -Ikernels/include $(SAN)
# The engine never reads errno or the floating-point exception flags after
# math, so GCC may vectorize loops with conditional float work (selects, as
# in kernels/cpu/vmath.h) and sqrt; neither flag changes any result.
MATHFLAGS := -fno-math-errno -fno-trapping-math
CFLAGS_ENGINE = $(CFLAGS_BASE) $(OPTLEVEL) $(OPT) $(MATHFLAGS) $(BLAS_CFLAGS) $(HDF5_CFLAGS) -I$(BUILD)/gen
CFLAGS_HOST = $(CFLAGS_BASE) -O2 $(LUAJIT_CFLAGS)
LDFLAGS_SAN := $(SAN)
RPATH := -Wl,-rpath,'$$ORIGIN' -Wl,-rpath,'$$ORIGIN/../lib'

# Run-time instruction-set dispatch (kernels/cpu/simd.h tells the whole story).
# Each file of SIMD_SRC is compiled once per level of SIMD_LEVELS, with that
# level's -march and -DTIDE_SIMD_LEVEL=<level>, so TIDE_SIMD(name) gives each
# copy of its entry points its own name; the baseline copy also gets
# -DTIDE_SIMD_ONCE and holds the code that must exist once (op kernels, the
# wrappers that call through tide_simd). To give a file's hot loops AVX2 and
# AVX-512 variants: add it here and its entry points to kernels/cpu/simd.def.
SIMD_SRC := kernels/cpu/binary.c kernels/cpu/unary.c kernels/cpu/ternary.c kernels/cpu/cast.c kernels/cpu/reduce.c \
  kernels/cpu/fused_f32.c kernels/cpu/pool.c kernels/cpu/softmax.c
ifeq ($(ARCH),x86_64)
SIMD_LEVELS := avx2 avx512
else
SIMD_LEVELS :=
CFLAGS_SIMD_ONLY := -DTIDE_SIMD_BASELINE_ONLY
endif
SIMD_FLAGS_avx2 := -march=x86-64-v3
SIMD_FLAGS_avx512 := -march=x86-64-v4

# Protocol buffer schemas (TF's Example, Event, GraphDef, ...: the subset tide
# reads and writes), a leaf that graph and io both use: kernels/proto/*.proto,
# compiled by protoc-c into $(BUILD)/gen/tide_proto/ (included as
# "tide_proto/x.pb-c.h"), one object each under $(BUILD)/obj/kernels/proto/.
PROTO_SRC := $(wildcard kernels/proto/*.proto)
PROTO_GEN := $(BUILD)/gen/tide_proto
PROTO_C := $(PROTO_SRC:kernels/proto/%.proto=$(PROTO_GEN)/%.pb-c.c)
PROTO_H := $(PROTO_C:.c=.h)
PROTO_OBJ := $(PROTO_SRC:kernels/proto/%.proto=$(BUILD)/obj/kernels/proto/%.pb-c.o)
.SECONDARY: $(PROTO_C) $(PROTO_H)

# HDF5 and zip (.keras, .weights.h5) live in libtide_formats.so, which libtide
# loads on first use (kernels/io/formats_plugin.h: libhdf5 and libzip bring
# some forty libraries a start-up would otherwise pay for). It takes its own
# copy of the two file helpers it shares with libtide's readers.
FORMATS_SRC := kernels/io/h5_file.c kernels/io/h5_isolate.c kernels/io/h5_write.c kernels/io/zip_file.c kernels/io/formats_plugin.c \
  kernels/io/gif.c kernels/io/webp.c kernels/io/jxl.c
FORMATS_OBJ := $(FORMATS_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/kernels/io/file_bytes.o $(BUILD)/obj/kernels/io/atomic_file.o
FORMATS_LIB := $(BUILD)/libtide_formats.so
ENGINE_SRC := $(filter-out $(FORMATS_SRC),$(wildcard kernels/core/*.c kernels/cpu/*.c kernels/graph/*.c kernels/io/*.c kernels/data/*.c kernels/model/*.c))
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/obj/%.o) $(PROTO_OBJ) \
  $(foreach l,$(SIMD_LEVELS),$(SIMD_SRC:%.c=$(BUILD)/obj/%.$(l).o))
VM_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard vm/*.c))
# The program on top: cli -> repl -> vm -> kernels; libtidevm has no REPL (nor readline).
PROGRAM_OBJ := $(BUILD)/obj/cli/main.o $(BUILD)/obj/repl/repl.o
HEADERS := $(wildcard kernels/include/tide/*.h kernels/include/tide/*.def kernels/core/*.h kernels/core/*.def kernels/cpu/*.h kernels/cpu/*.def kernels/graph/*.h \
  kernels/io/*.h kernels/data/*.h)
HOST_HEADERS := $(wildcard vm/*.h repl/*.h)
CTEST_SRC := $(wildcard tests/c/test_*.c)
CTEST_BIN := $(CTEST_SRC:tests/c/%.c=$(BUILD)/tests/%)

# The CUDA backend: kernels/cuda/*.cu (nvcc: sm_90 code plus compute_90 PTX that
# newer GPUs compile at load) and kernels/cuda/*.c (CC, with CUDA's headers)
# link with cuBLAS(Lt), cuDNN, NVRTC and NCCL into libtide_cuda.so, which libtide
# dlopens the first time a program asks for GPUs (kernels/core/device.c).
# Built when nvcc is found; `make CUDA=0` skips it.
CUDA_HOME ?= /usr/local/cuda
NVCC := $(CUDA_HOME)/bin/nvcc
ifneq ($(CUDA),0)
CUDA_LIB := $(if $(wildcard $(NVCC)),$(BUILD)/libtide_cuda.so,)
endif
CUDA_CU_OBJ := $(patsubst %.cu,$(BUILD)/obj/%.cu.o,$(wildcard kernels/cuda/*.cu))
CUDA_C_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard kernels/cuda/*.c))
CUDA_HEADERS := $(wildcard kernels/cuda/*.h kernels/cuda/*.cuh)
NVCCFLAGS := -std=c++17 -O3 --expt-relaxed-constexpr -diag-suppress 186 -lineinfo -Ikernels/include \
  -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 -Xcompiler -fPIC,-fvisibility=hidden
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -lcudart -lcublasLt -lcublas -lcudnn -lnvrtc -lnccl -Wl,-rpath,$(CUDA_HOME)/lib64

# tide.distribute's MPI backend: kernels/dist/*.c, built with mpicc into
# libtide_mpi.so, which libtide dlopens only in a process mpirun started
# (kernels/core/dist.c), so libtide itself never needs MPI. Built when mpicc
# is found (Open MPI: tools/deps.sh); `make MPI=0` skips it.
MPICC ?= mpicc
ifneq ($(MPI),0)
MPI_LIB := $(if $(shell command -v $(MPICC) 2>/dev/null),$(BUILD)/libtide_mpi.so,)
endif

LIB := $(BUILD)/libtide.so
VMLIB := $(BUILD)/libtidevm.so
PROGRAM := $(BUILD)/tide
CDEF := $(BUILD)/lua/tide/cdef.lua
EXAMPLES := $(BUILD)/examples/sandboxed_script $(BUILD)/examples/game_loop $(BUILD)/examples/cartpole_game \
  $(BUILD)/examples/cartpole_script

# tide's Lua compiled to bytecode, build/lj/<the source's path>, named inside
# by the source's real path: vm/bytecode.c loads it instead of parsing the
# source when it matches (start-up to the first op: 91 M -> 32 M instructions).
LUA_SRC := $(shell find stdlib bindings -name '*.lua')
LUA_BC := $(patsubst %,$(BUILD)/lj/%,$(LUA_SRC))

.PHONY: all deps test test-run demo bench install clean ctests
all: $(LIB) $(FORMATS_LIB) $(VMLIB) $(PROGRAM) $(CDEF) $(EXAMPLES) $(CUDA_LIB) $(MPI_LIB) $(LUA_BC)

$(BUILD)/lj/%.lua: %.lua
	@mkdir -p $(dir $@)
	@luajit -bg $(realpath $<) $@

deps:
	@tools/deps.sh

$(BUILD)/obj/kernels/%.o: kernels/%.c $(HEADERS) | $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ENGINE) $(if $(filter $<,$(SIMD_SRC)),-DTIDE_SIMD_LEVEL=baseline -DTIDE_SIMD_ONCE,) \
	  $(CFLAGS_SIMD_ONLY) -c $< -o $@

# kernels/model's own header (kept out of HEADERS: editing it rebuilds only model/).
$(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard kernels/model/*.c)): $(wildcard kernels/model/*.h)

$(PROTO_GEN)/%.pb-c.c $(PROTO_GEN)/%.pb-c.h: kernels/proto/%.proto
	@mkdir -p $(PROTO_GEN)
	protoc-c --proto_path=kernels/proto --c_out=$(PROTO_GEN) $<

# Generated code: its own warnings are protoc-c's business, not ours.
$(BUILD)/obj/kernels/proto/%.pb-c.o: $(PROTO_GEN)/%.pb-c.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ENGINE) -w -c $< -o $@

# The other levels of SIMD_SRC: the level's -march comes after OPT, so it wins.
define simd_level_rule
$$(SIMD_SRC:%.c=$$(BUILD)/obj/%.$(1).o): $$(BUILD)/obj/%.$(1).o: %.c $$(HEADERS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_ENGINE) $$(SIMD_FLAGS_$(1)) -DTIDE_SIMD_LEVEL=$(1) -c $$< -o $$@
endef
$(foreach l,$(SIMD_LEVELS),$(eval $(call simd_level_rule,$(l))))

# Explicit targets (a pattern rule without a recipe adds no prerequisites to another pattern rule's targets).
$(VM_OBJ) $(PROGRAM_OBJ): $(HEADERS) $(HOST_HEADERS)
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_HOST) -c $< -o $@

$(LIB): $(ENGINE_OBJ)
	$(CC) -shared -o $@ $^ $(LAPACK_LIBS) $(BLAS_LIBS) $(IO_LIBS) -ldl -lm -pthread $(LDFLAGS_SAN) $(SAN_LIBS)

$(FORMATS_LIB): $(FORMATS_OBJ) $(LIB) kernels/io/formats_plugin.map
	$(CC) -shared -o $@ $(FORMATS_OBJ) -Wl,--version-script=kernels/io/formats_plugin.map -Wl,-z,defs \
	  -L$(BUILD) -ltide $(FORMATS_LIBS) -pthread $(RPATH) $(LDFLAGS_SAN)

$(CUDA_C_OBJ): CFLAGS_ENGINE += -I$(CUDA_HOME)/include
$(CUDA_C_OBJ): $(CUDA_HEADERS)
# The .cu files see only the public headers, launch.h (plain C types) and
# what core shares with them: the formulas (elementwise.def, formulas.h) and Philox (philox.h).
CUDA_SHARED := kernels/core/hd.h kernels/core/formulas.h kernels/core/elementwise.def kernels/core/philox.h
$(BUILD)/obj/kernels/cuda/%.cu.o: kernels/cuda/%.cu $(CUDA_HEADERS) $(CUDA_SHARED) $(wildcard kernels/include/tide/*.h kernels/include/tide/*.def)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/libtide_cuda.so: $(CUDA_CU_OBJ) $(CUDA_C_OBJ) $(LIB)
	$(CC) -shared -o $@ $(CUDA_CU_OBJ) $(CUDA_C_OBJ) -L$(BUILD) -ltide $(CUDA_LIBS) -lstdc++ -lm -pthread $(RPATH) $(LDFLAGS_SAN)

$(BUILD)/libtide_mpi.so: $(wildcard kernels/dist/*.c) kernels/core/dist_backend.h
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS_BASE) -O2 -shared -o $@ $(wildcard kernels/dist/*.c) $(LDFLAGS_SAN)

$(VMLIB): $(VM_OBJ) $(LIB)
	$(CC) -shared -o $@ $(VM_OBJ) -L$(BUILD) -ltide $(LUAJIT_LIBS) -ldl -lm -pthread $(RPATH) $(LDFLAGS_SAN)

$(PROGRAM): $(PROGRAM_OBJ) $(VMLIB) $(LIB)
	$(CC) -o $@ $(PROGRAM_OBJ) -L$(BUILD) -ltidevm -ltide $(LUAJIT_LIBS) -lreadline -lm $(RPATH) $(LDFLAGS_SAN)

$(CDEF): $(HEADERS) bindings/gen_cdef.sh
	@mkdir -p $(dir $@)
	bindings/gen_cdef.sh $(CC) $@

# The embedding API's tests (tests/c/test_vm.c, test_vm_*.c) link libtidevm and LuaJIT.
VM_TESTS := $(patsubst tests/c/%.c,$(BUILD)/tests/%,$(wildcard tests/c/test_vm.c tests/c/test_vm_*.c))
$(VM_TESTS): $(BUILD)/tests/%: tests/c/%.c tests/c/check.h tests/c/util.h $(VMLIB) $(CDEF)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(LUAJIT_CFLAGS) -O1 -o $@ $< -L$(BUILD) -ltidevm -ltide $(LUAJIT_LIBS) -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS_SAN)

# examples/embed/sandboxed_script.c, a host of tide/vm.h, built like a host program would be.
$(BUILD)/examples/sandboxed_script: examples/embed/sandboxed_script.c $(VMLIB) $(CDEF) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(LUAJIT_CFLAGS) -O2 -o $@ $< -L$(BUILD) -ltidevm -ltide $(LUAJIT_LIBS) -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS_SAN)

# examples/embed/game_loop.c, a host of tide/model.h, against the in-tree
# libtide (tests/sh/test_install.sh builds it against an install with pkg-config).
$(BUILD)/examples/game_loop: examples/embed/game_loop.c $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O2 -o $@ $< -L$(BUILD) -ltide -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS_SAN)

# examples/embed/cartpole_game.c: CartPole's physics in C, a DQN policy (examples/dqn) called each frame.
$(BUILD)/examples/cartpole_game: examples/embed/cartpole_game.c examples/embed/cartpole.h examples/embed/cartpole_play.h $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O2 -o $@ $< -L$(BUILD) -ltide -lm -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS_SAN)

# examples/embed/cartpole_script.c: the same game asking a sandboxed policy script (tide/vm.h) each frame.
$(BUILD)/examples/cartpole_script: examples/embed/cartpole_script.c examples/embed/cartpole.h examples/embed/cartpole_play.h $(VMLIB) $(CDEF) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(LUAJIT_CFLAGS) -O2 -o $@ $< -L$(BUILD) -ltidevm -ltide $(LUAJIT_LIBS) -lm -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS_SAN)

# tide_model_run's latency (bench/run.sh, section embed): a host program linked
# to libtide. Not built with SANITIZE=1: it counts malloc calls by replacing malloc
# (bench/malloc_count.c).
$(BUILD)/bench/embed_model: bench/embed_model.c bench/malloc_count.c bench/malloc_count.h bench/machine_line.c bench/machine_line.h $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O2 -o $@ bench/embed_model.c bench/malloc_count.c bench/machine_line.c -L$(BUILD) -ltide -lm -Wl,-rpath,'$$ORIGIN/..'

# issue 28's model-file speeds (bench/run.sh, section model_files): SavedModel and ONNX through tide_model_run.
$(BUILD)/bench/model_files: bench/model_files.c bench/machine_line.c bench/machine_line.h $(LIB) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O2 -o $@ bench/model_files.c bench/machine_line.c -L$(BUILD) -ltide -lm -Wl,-rpath,'$$ORIGIN/..'

# tests/c/test_simd.c scans the objects for instructions beyond the baseline
# when the build is the default portable one.
CTEST_DEFS := $(if $(and $(filter x86_64,$(ARCH)),$(filter "$(OPT_DEFAULT)","$(OPT)")),-DTIDE_CHECK_BASELINE_OBJECTS,)

$(BUILD)/tests/%: tests/c/%.c tests/c/check.h tests/c/util.h tests/c/graph_util.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(CTEST_DEFS) -O1 -o $@ $< -L$(BUILD) -ltide -lm $(RPATH) -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS_SAN)

ctests: $(CTEST_BIN)

# make test: install what is missing, build, run every C test, busted spec file
# and docs example, and end with one line "N passed, N failed".
# make test SPEC=tests/spec/ops/math_spec.lua (files or folders): those specs only.
test: deps
	@$(MAKE) --no-print-directory all ctests
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) CUDA=$(CUDA) tests/run.sh $(SPEC)

demo: deps
	@$(MAKE) --no-print-directory all
	$(PROGRAM) examples/tour.lua
	$(PROGRAM) examples/fashion_mnist_mlp.lua

bench: deps
	@tools/deps.sh bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/embed_model $(BUILD)/bench/model_files
	@BUILD=$(BUILD) bench/run.sh

# make install PREFIX=/usr/local DESTDIR=: the program, libtide and libtidevm,
# the headers, the Lua library (PREFIX/share/tide/lua, where libtidevm looks
# beside PREFIX/lib) and tide.pc (tools/tide_pc.sh).
TIDE_VERSION = $(shell sed -n 's/.*tide_version(void) { return "\(.*\)"; }.*/\1/p' kernels/core/runtime.c)
install: all
	@case '$(PREFIX)' in /*) ;; *) echo "make install: PREFIX must be an absolute path, got '$(PREFIX)'" >&2; exit 1;; esac
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/tide \
	  $(DESTDIR)$(PREFIX)/share/tide/lua/tide
	install -m 755 $(PROGRAM) $(DESTDIR)$(PREFIX)/bin/tide
	install -m 755 $(LIB) $(FORMATS_LIB) $(VMLIB) $(CUDA_LIB) $(MPI_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 kernels/include/tide/*.h kernels/include/tide/*.def $(DESTDIR)$(PREFIX)/include/tide/
	cd stdlib && find tide -name '*.lua' -exec install -D -m 644 {} $(DESTDIR)$(PREFIX)/share/tide/lua/{} \;
	cd bindings && find tide -name '*.lua' -exec install -D -m 644 {} $(DESTDIR)$(PREFIX)/share/tide/lua/{} \;
	install -m 644 $(CDEF) $(DESTDIR)$(PREFIX)/share/tide/lua/tide/cdef.lua
	tools/tide_pc.sh '$(PREFIX)' '$(TIDE_VERSION)' '$(LAPACK_LIBS) $(BLAS_LIBS) $(IO_LIBS) -lm -pthread' > $(BUILD)/tide.pc
	install -D -m 644 $(BUILD)/tide.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/tide.pc

clean:
	rm -rf build build-asan

# make fuzz: each libFuzzer target fuzz/fuzz_<name>.c for FUZZ_SECONDS (default 60);
# fails on any crash (fuzz/run.sh tells the rest).
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz: all
	@BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh

# make cross-aarch64: tide cross-built for aarch64 into build-aarch64/ (an arm64 sysroot, no arm64 packages
# installed); make test-aarch64: that build's C tests and then SPEC (default tests/spec) under qemu-aarch64-static.
# tools/cross_aarch64.sh tells the rest (docs/building.md).
.PHONY: cross-aarch64 test-aarch64
cross-aarch64:
	@tools/cross_aarch64.sh setup
	@tools/cross_aarch64.sh build
test-aarch64: cross-aarch64
	@tools/cross_aarch64.sh ctests
	@tools/cross_aarch64.sh specs $(SPEC)

# make interop: live round trips with Python's libraries (INTEROP_PYTHON, a venv
# with tensorflow-cpu, tensorboard and safetensors); not part of make test.
INTEROP_PYTHON ?= /work/venv-tf/bin/python
.PHONY: interop
interop: all
	@BUILD=$(BUILD) PYTHON=$(INTEROP_PYTHON) tests/interop/run.sh
