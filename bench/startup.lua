-- bench/startup.lua — start-up to the first op: `tide -e` running one tensor
-- op, against `python3 -c "import torch"` and importing tensorflow; each the
-- median wall time of RUNS spawns (posix_spawn + waitpid, output to /dev/null).
--   build/tide bench/startup.lua [RUNS]   (PEERS_PYTHON: the python with tensorflow)
-- Prints `name: value ms` lines and `name_vs_tide: ratio x` (above 1: tide starts faster).
local ffi = require "ffi"
local C = require("tide.binding").C

ffi.cdef [[
typedef struct { char opaque[80]; } tide_bench_file_actions;
int tide_bench_fa_init(tide_bench_file_actions *fa) __asm__("posix_spawn_file_actions_init");
int tide_bench_fa_open(tide_bench_file_actions *fa, int fd, const char *path, int flags, unsigned mode)
  __asm__("posix_spawn_file_actions_addopen");
int tide_bench_spawn(int *pid, const char *path, const tide_bench_file_actions *fa, const void *attr,
  char *const argv[], char *const envp[]) __asm__("posix_spawnp");
int tide_bench_waitpid(int pid, int *status, int options) __asm__("waitpid");
extern char **tide_bench_environ __asm__("environ");
]]

local RUNS = tonumber(arg[1]) or 21
local tide_path = require("tide.host").lib:match("^(.*)/[^/]*$") .. "/tide"
-- bench/run.sh passes the venv's python (bench/venv.sh); none: no TensorFlow line
local peer_python = os.getenv("PEERS_PYTHON")
if peer_python == "" then peer_python = nil end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- Wall seconds of one run of argv, or nil and a message when it failed.
local fa = ffi.new("tide_bench_file_actions")
C.tide_bench_fa_init(fa)
for fd = 1, 2 do C.tide_bench_fa_open(fa, fd, "/dev/null", 1 --[[O_WRONLY]], 0) end
local function run_once(argv)
  local cargv = ffi.new("char *[?]", #argv + 1)
  local keep = {}
  for i, a in ipairs(argv) do
    keep[i] = ffi.new("char[?]", #a + 1, a)
    cargv[i - 1] = keep[i]
  end
  local pid, status = ffi.new("int[1]"), ffi.new("int[1]")
  local t0 = C.tide_monotonic_seconds()
  if ffi.C.tide_bench_spawn(pid, argv[1], fa, nil, cargv, ffi.C.tide_bench_environ) ~= 0 then return nil, "cannot start " .. argv[1] end
  ffi.C.tide_bench_waitpid(pid[0], status, 0)
  local dt = C.tide_monotonic_seconds() - t0
  if status[0] ~= 0 then return nil, argv[1] .. " failed (status " .. status[0] .. ")" end
  return dt
end

local function median_ms(argv)
  local t = {}
  run_once(argv) -- warm the page cache
  for i = 1, RUNS do
    local dt, err = run_once(argv)
    if not dt then return nil, err end
    t[i] = dt * 1e3
  end
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

local cases = {
  { "startup_tide_first_op", { tide_path, "-e", 'local tide = require "tide"; local x = tide.tensor{1} + 1' } },
  { "startup_tide_bare", { tide_path, "-e", "" } },
  { "startup_torch_import", { "/usr/bin/python3", "-c", "import torch" }, "torch" },
}
if peer_python then cases[#cases + 1] = { "startup_tf_import", { peer_python, "-c", "import tensorflow" }, "tf" } end
local tide_ms
for _, c in ipairs(cases) do
  if c[2][1]:sub(1, 1) == "/" and not exists(c[2][1]) then
    print("# " .. c[1] .. ": " .. c[2][1] .. " is missing")
  else
    local ms, err = median_ms(c[2])
    if not ms then
      print("# " .. c[1] .. ": " .. err)
    else
      print(string.format("%s: %.1f ms", c[1], ms))
      if c[1] == "startup_tide_first_op" then tide_ms = ms end
      if c[3] and tide_ms then print(string.format("startup_%s_vs_tide: %.1f x", c[3], ms / tide_ms)) end
    end
  end
end
