-- bindings/tide/binding.lua — the seam between the C engine and Lua: declares
-- the C API (from the generated tide.cdef), loads libtide, defines the tensor
-- metatype, raises C errors as Lua errors at the user's line, and paces the
-- collector by the bytes C has allocated (LuaJIT cannot see them).
local ffi = require "ffi"

-- One instance per Lua state, even when package.loaded is cleared (busted
-- does that between spec files): the C declarations and the metatype can be
-- made only once, and every copy of the library must share them.
local REGISTRY_KEY = "tide.binding"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

ffi.cdef(require "tide.cdef")

local M = {}
registry[REGISTRY_KEY] = M

---------------------------------------------------------------------------
-- Loading the library
---------------------------------------------------------------------------

local function this_dir()
  local src = debug.getinfo(1, "S").source
  return src:sub(1, 1) == "@" and src:sub(2):match("^(.*)/[^/]*$") or "."
end

-- The folder of the generated tide.cdef module on package.path, or nil.
local function cdef_dir()
  local path = package.searchpath("tide.cdef", package.path)
  return path and path:match("^(.*)/[^/]*$")
end

-- Inside the tide program (or any host linked with libtide) the symbols are
-- already global; elsewhere find the library next to the Lua files.
local function load_library()
  if pcall(function() return ffi.C.tide_version end) then return ffi.C end
  local tried = {}
  local function try(path)
    if not path then return nil end
    tried[#tried + 1] = path
    local ok, lib = pcall(ffi.load, path)
    return ok and lib or nil
  end
  local host = package.loaded["tide.host"]
  local cdir = cdef_dir()
  local lib = try(os.getenv("TIDE_LIB")) or try(host and host.lib)
    or try(cdir and cdir .. "/../../libtide.so")                -- build/lua/tide -> build
    or try(cdir and cdir .. "/../../../../lib/libtide.so")      -- share/tide/lua/tide -> lib
    or try("tide")
  if not lib then
    error("tide: cannot find libtide.so (tried " .. table.concat(tried, ", ") ..
      "); build it with `make` or set TIDE_LIB", 0)
  end
  return lib
end

local C = load_library()
M.C = C
M.ffi = ffi

---------------------------------------------------------------------------
-- Errors: raised at the first frame outside tide's own Lua files
---------------------------------------------------------------------------

local internal_prefixes = { "@" .. this_dir() .. "/" }

-- Lets the standard library register its folder as internal too.
function M.add_internal_dir(dir)
  internal_prefixes[#internal_prefixes + 1] = "@" .. dir .. "/"
end

-- True when a chunk's source is one of tide's own files.
-- True for chunks loaded from tide's own folders.
local function is_internal(source)
  for i = 1, #internal_prefixes do
    local p = internal_prefixes[i]
    if source:sub(1, #p) == p then return true end
  end
  return false
end

M.is_internal = is_internal

-- The error() level of the nearest caller outside tide (counted from the
-- function that calls user_level's caller).
local function user_level()
  local level = 3
  while true do
    local info = debug.getinfo(level, "S")
    if not info then return 1 end
    if info.what ~= "C" and not is_internal(info.source) then return level - 1 end
    level = level + 1
  end
end

-- Raise `msg` as a Lua error located at the user's line.
function M.error(msg)
  error(msg, user_level())
end

-- Raise the C engine's last error.
function M.raise()
  error(ffi.string(C.tide_last_error()), user_level())
end

-- In a sandboxed VM (tide/vm.h), what reaches past the VM is refused unless
-- its host allows it: settings of the whole process (one tenant would
-- reconfigure every VM and the host's own runs) and the profiler (which
-- records every thread of the process). `what` names the function.
local vm_host = package.loaded["tide.host"]
function M.check_process_wide(what)
  if vm_host and vm_host.allow_process_settings == false then
    error(what .. ": changes a setting of the whole process (every VM and the host's own runs), which this " ..
      "sandbox does not allow (its host can, with TIDE_VM_ALLOW_PROCESS_SETTINGS)", user_level())
  end
end
function M.profiler_allowed() return not (vm_host and vm_host.allow_profiler == false) end
function M.check_profiler(what)
  if not M.profiler_allowed() then
    error(what .. ": the profiler records every thread of the process (other VMs' and the host's), which this " ..
      "sandbox does not allow (its host can, with TIDE_VM_ALLOW_PROFILER)", user_level())
  end
end

-- Raise the file policy's refusal of `path` (tide_file_check; `write` to
-- make or change it): for readers that take a missing file as an answer
-- (nothing there), so that a path outside a sandbox's folder is an error
-- saying so rather than "nothing there".
function M.check_file(path, write)
  if C.tide_file_check(path, write and true or false) ~= 0 then M.raise() end
end

-- io.open for tide's own Lua readers and writers (and the sandbox's io.open,
-- vm/sandbox.c), opened as the C ones open files: tide_file_open checks the
-- file policy, opens the resolved path with no symbolic link allowed in it
-- and takes only a regular file (or, to write, a device such as /dev/null),
-- so a FIFO named by a hostile path is refused instead of blocking the open
-- for ever. Lua's io then opens that very file through /proc/self/fd: the
-- policy judges the file that is opened, never a path a link was swapped
-- into between a check and an open. Returns what io.open returns (nil, a
-- message and an errno on failure); `refused` is set with a policy's refusal.
local io_open = io.open
pcall(ffi.cdef, "int close(int fd);")
pcall(ffi.cdef, "char *strerror(int errnum);")
-- open(2) flags (Linux's generic values, x86-64's and arm64's alike) of an io.open mode.
local O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND = 1, 2, 64, 512, 1024
local function open_flags(mode)
  local kind, plus = mode:sub(1, 1), mode:find("+", 2, true) ~= nil
  local rw = plus and O_RDWR or kind == "r" and 0 or O_WRONLY
  if kind == "w" then return rw + O_CREAT + O_TRUNC end
  if kind == "a" then return rw + O_CREAT + O_APPEND end
  return rw
end
function M.open_file(path, mode)
  mode = mode or "r"
  if type(path) == "number" then path = tostring(path) end -- as io.open takes it
  if type(path) ~= "string" then return io_open(path, mode) end -- io.open's own argument error
  if type(mode) ~= "string" or not mode:find("^[rwa][+b]*$") then
    -- fopen's extensions ("x", "e", "ccs=") would reach the path unjudged: refused
    return nil, "bad argument #2 to 'open' (invalid mode " .. tostring(mode) .. ")", nil, true
  end
  local write = mode:find("[wa+]") ~= nil
  if C.tide_file_check(path, write) ~= 0 then return nil, ffi.string(C.tide_last_error()), nil, true end
  local fd = C.tide_file_open(path, open_flags(mode), 438) -- 0666, less the umask
  if fd < 0 then -- refused: tide's own reason (policy, link swapped in, FIFO), not the system's
    local errno = ffi.errno()
    local why = ffi.string(C.tide_file_why())
    return nil, path .. ": " .. why, errno, why ~= ffi.string(C.strerror(errno))
  end
  local f, err, code = io_open("/proc/self/fd/" .. fd, mode)
  C.close(fd)
  if not f and code == 2 and C.tide_file_check("/", false) == 0 then
    -- no /proc mounted, and no policy confines this thread (it allows "/"): nothing to judge, open by name
    return io_open(path, mode)
  end
  if not f then return nil, path .. ": " .. tostring(err), code end
  return f
end

-- os.remove and os.rename for a sandbox (vm/sandbox.c), acting on the
-- folder that was judged: the parent folder is opened as tide opens files
-- (policy, no link swapped in), then the last name is removed or renamed in
-- it (unlinkat, renameat: a link there is removed or moved itself, never
-- followed). Return what os.remove and os.rename return; `refused` as open_file.
pcall(ffi.cdef, [[
int unlinkat(int dirfd, const char *path, int flags);
int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);
]])
local O_DIRECTORY = ffi.arch == "arm64" and 16384 or 65536
local AT_REMOVEDIR, EISDIR = 512, 21
-- The parent folder of `path`, opened; and the last name. nil, message, errno, refused on failure.
local function open_parent(path, write)
  if type(path) == "number" then path = tostring(path) end
  if C.tide_file_check(path, write) ~= 0 then return nil, ffi.string(C.tide_last_error()), nil, true end
  local dir, name = path:match("^(.*)/([^/]+)/*$")
  if not dir then dir, name = ".", path:match("^([^/]+)/*$") end
  if dir == "" then dir = "/" end
  if not name or name == "." or name == ".." then return nil, path .. ": Invalid argument", 22 end
  local fd = C.tide_file_open(dir, O_DIRECTORY, 0)
  if fd < 0 then
    local errno = ffi.errno()
    local why = ffi.string(C.tide_file_why())
    return nil, path .. ": " .. why, errno, why ~= ffi.string(C.strerror(errno))
  end
  return fd, name
end
local function sys_failed(path)
  local errno = ffi.errno()
  return nil, path .. ": " .. ffi.string(C.strerror(errno)), errno
end
function M.remove_file(path)
  local fd, name, code, refused = open_parent(path, true)
  if not fd then return nil, name, code, refused end
  local rc = C.unlinkat(fd, name, 0)
  if rc ~= 0 and ffi.errno() == EISDIR then rc = C.unlinkat(fd, name, AT_REMOVEDIR) end -- os.remove takes empty folders
  local ok, err, errno = true, nil, nil
  if rc ~= 0 then ok, err, errno = sys_failed(path) end
  C.close(fd)
  return ok, err, errno
end
function M.rename_file(from, to)
  local fa, na, ca, ra = open_parent(from, true)
  if not fa then return nil, na, ca, ra end
  local fb, nb, cb, rb = open_parent(to, true)
  if not fb then
    C.close(fa)
    return nil, nb, cb, rb
  end
  local ok, err, errno = true, nil, nil
  if C.renameat(fa, na, fb, nb) ~= 0 then ok, err, errno = sys_failed(from) end
  C.close(fa)
  C.close(fb)
  return ok, err, errno
end

---------------------------------------------------------------------------
-- Memory: finalizers for heap tensors and a collector paced by C bytes
---------------------------------------------------------------------------

local stats = C.tide_memory_stats_get()
-- When C bytes allocated since the last collection pass `step`, collect.
-- A collection costs time in proportion to the Lua heap (it never scans C
-- memory: ~290 us for the 1.6 MB that `require "tide"` loads), so the step
-- is a multiple of the Lua heap, and at least MIN_STEP. A small step reuses
-- freed temporaries while they are still in the caches but collects often;
-- a large one writes every result to memory long out of the caches. On a
-- 2-core Xeon (2 MB of L2 a core), eager `a + b` on 10,000 floats took 4.1
-- us at 4 MB, 2.6-2.8 at 16, 2.4-2.7 at 32, 2.5-2.6 at 64 and 3.9 at 128
-- (1e5 floats: 40, 25, 21, 23 us; 1e6: 387, 285, 250, 246 us).
local MIN_STEP = 32 * 1024 * 1024
local HEAP_FACTOR = 4
-- A VM with a memory cap (tide/vm.h) asks for steps of at most cap/8, so
-- garbage tensors do not fill its cap before a collection.
local host = package.loaded["tide.host"]
local MAX_STEP = host and host.max_gc_step or math.huge
local step = math.min(MIN_STEP, MAX_STEP)
local owners = {}        -- token -> Lua object kept alive for a zero-copy tensor
local next_token = 1

-- Let go of the owners whose wrapped storages C has released.
local function drain_tokens()
  while true do
    local tok = tonumber(C.tide_released_token_pop())
    if tok < 0 then break end
    owners[tok] = nil
  end
end

-- After a collection: count from zero again, size the next step, drop owners.
local held_at_collect = 0 -- C bytes live after the last collection (finish_handed's measure)
local function collected()
  C.tide_memory_mark_collected()
  held_at_collect = tonumber(stats.current)
  step = math.min(math.max(MIN_STEP, HEAP_FACTOR * 1024 * collectgarbage("count")), MAX_STEP)
  drain_tokens()
end

-- A full collection, so finalizers give dead tensors' memory back to C.
function M.collect()
  collectgarbage("collect")
  collected()
end

-- The paced collection: the collector's cycle run to its end. When one is
-- under way (LuaJIT's own pacing started it) this finishes it, where
-- "collect" would first finish it and then run a whole new one: a quarter
-- less time per `a + b` on 10,000 floats at a 4 MB step. What died after
-- the cycle marked its objects goes at the next one.
local function pace()
  collectgarbage("step", 1048576) -- KB: more than any heap, so the cycle ends
  collected()
end

local release = C.tide_tensor_release

-- After a failed op: in a VM with a memory cap whose limit the op hit, run
-- a full collection (garbage tensors may be what fills the cap, and LuaJIT
-- has no emergency collection) and say true: the op may be tried again once.
local MEMORY = C.TIDE_ERR_MEMORY
function M.collect_for_retry()
  if MAX_STEP == math.huge or C.tide_last_status() ~= MEMORY then return false end
  M.collect()
  return true
end

-- Give a tensor that owns a storage its finalizer, and collect if C memory
-- has run ahead. Inline (small) tensors never come here.
function M.track(t)
  ffi.gc(t, release)
  if stats.since_collect > step then pace() end
  return t
end

-- A tensor C just filled in: tracked (finalizer, collector pacing) when it
-- holds a storage; inline ones need nothing; symbolic ones (a trace is
-- recording) are handed to M.on_symbolic, which notes where they were made.
local SYMBOLIC = C.TIDE_TENSOR_SYMBOLIC
M.on_symbolic = function() end
function M.finish(t)
  if t.storage ~= nil then
    M.track(t)
  elseif bit.band(t.flags, SYMBOLIC) ~= 0 then
    M.on_symbolic(t)
  end
  return t
end

-- A tensor a producer thread made and the caller waited for (a data
-- pipeline's element): tracked as finish tracks it, but paced by the C
-- memory held since the last collection rather than by the bytes allocated:
-- a pipeline's threads allocate and free their intermediates themselves
-- (a mapped element, then the batch it is copied into), which the collector
-- cannot give back, yet they counted twice over a batch's own bytes. So a
-- Fashion-MNIST epoch ran 12 collections (3-10 ms each) inside the
-- iterator's next, a third of the time a training loop measured as waiting
-- for input; held bytes past twice the step run about 3.
function M.finish_handed(t)
  if t.storage ~= nil then
    ffi.gc(t, release)
    if stats.current - held_at_collect > 2 * step then pace() end
  elseif bit.band(t.flags, SYMBOLIC) ~= 0 then
    M.on_symbolic(t)
  end
  return t
end

-- Keep `owner` alive until C drops the storage wrapping its memory.
function M.hold_owner(owner)
  drain_tokens()
  local tok = next_token
  next_token = next_token + 1
  owners[tok] = owner
  return ffi.cast("void *", tok)
end

M.memory_stats = stats

-- A C handle closed exactly once, by h.close() or by the collector (close_c,
-- a C function taking the handle): h.p is the handle while open, nil after.
-- Within one collection (and at lua_close) finalizers run in no set order,
-- so an owner's __gc may call h.close() after the handle's own finalizer
-- closed it: both go through h, and the second does nothing. h.take()
-- hands the handle over instead (to be ended another way), nil when closed.
function M.owned(ptr, close_c)
  local h = { p = ptr }
  local holder = ffi.gc(ptr, function(p)
    if h.p ~= nil then h.p = nil; close_c(p) end
  end)
  function h.take()
    local p = h.p
    if p == nil then return nil end
    h.p = nil
    ffi.gc(holder, nil)
    return p
  end
  function h.close()
    local p = h.take()
    if p ~= nil then return close_c(p) end
  end
  return h
end

-- Use `t` here so it stays alive up to this point. A pointer taken from a
-- tensor (t.data) does not keep the tensor alive: code that reads through
-- one calls this after its last read. (A guard on a field load, which the
-- JIT can neither drop nor hoist past the reads.)
function M.keep_alive(t)
  if t.nelem < 0 then error("tide: corrupt tensor header", 2) end
end

---------------------------------------------------------------------------
-- The tensor metatype
---------------------------------------------------------------------------

-- Filled by the standard library: methods (x:sum()), properties (x.shape),
-- and the implementations the operators forward to.
M.methods = {}
M.properties = {}
M.impl = {}

local methods, properties, impl = M.methods, M.properties, M.impl

-- x.dims[i] and x.strides[i] (0-based). Lua's view of the header makes the
-- arrays opaque (tide/tensor.h): reads come through here, bounds-checked,
-- as Lua numbers; writes are refused, since kernels trust the header.
local MAX_DIMS = C.TIDE_MAX_DIMS
local dims_ptr = ffi.typeof("const int64_t *")
local cast = ffi.cast
ffi.metatype("tide_ffi_dims", {
  __index = function(d, i)
    if type(i) ~= "number" or not (i >= 0 and i < MAX_DIMS) or i % 1 ~= 0 then
      M.error(string.format("tensor dims and strides are indexed by an integer in [0, %d), got %s", MAX_DIMS,
        tostring(i)))
    end
    return tonumber(cast(dims_ptr, d)[i])
  end,
  __newindex = function()
    M.error("a tensor's dims and strides are read-only (the engine trusts them); make a new tensor with " ..
      "reshape, transpose or slice")
  end,
})

local mt = {
  __index = function(t, k)
    local m = methods[k]
    if m ~= nil then return m end
    local p = properties[k]
    if p ~= nil then return p(t) end
    if type(k) == "number" then return impl.index(t, k) end
    M.error("tensor has no method or property '" .. tostring(k) .. "'")
  end,
  __newindex = function(t, k, v)
    if type(k) == "number" then return impl.setindex(t, k, v) end
    M.error("cannot set '" .. tostring(k) .. "' on a tensor (tensors have no writable fields)")
  end,
  __add = function(a, b) return impl.add(a, b) end,
  __sub = function(a, b) return impl.sub(a, b) end,
  __mul = function(a, b) return impl.mul(a, b) end,
  __div = function(a, b) return impl.div(a, b) end,
  __mod = function(a, b) return impl.mod(a, b) end,
  __pow = function(a, b) return impl.pow(a, b) end,
  __unm = function(a) return impl.neg(a) end,
  __eq = function(a, b) return impl.eq(a, b) end,
  __lt = function(a, b) return impl.lt(a, b) end,
  __le = function(a, b) return impl.le(a, b) end,
  __len = function(t) return impl.len(t) end,
  __tostring = function(t) return impl.tostring(t) end,
  __concat = function(a, b) return tostring(a) .. tostring(b) end,
}

M.Tensor = ffi.metatype("tide_tensor", mt)
-- True when x is a tide tensor.
M.istensor = function(x) return ffi.istype(M.Tensor, x) end

return M
