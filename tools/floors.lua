-- tools/floors.lua — the floors of the Lua library (docs/architecture.md) and
-- the check that every require in stdlib/ and bindings/ points down a floor.
-- A module may require modules on lower floors, or on its own floor when no
-- cycle results; anything else is named with its file and line. Every
-- require counts, also one inside a function, and a module name the check
-- cannot read (require(name)) is refused: it could point anywhere.
--   build/tide tools/floors.lua     prints the breaches; exit status 1 if any
-- tests/spec/floors_spec.lua runs the same check under `make test`.

local M = {}

-- Bottom up. A module's floor is the first whose list names it; "x.*" names
-- every module below x.
M.FLOORS = {
  { name = "binding", modules = { "tide.cdef", "tide.binding" },
    what = "the FFI seam: C declarations, libtide, the tensor metatype, errors, GC pacing" },
  { name = "base", modules = { "tide.class", "tide.dtype", "tide.format", "tide.tensor_shape", "tide.json",
      "tide.varargs", "tide.file", "tide.nest" },
    what = "helpers on plain values: classes, dtypes, printing, shapes and tide.None, packing varargs, paths, nested structures" },
  { name = "values", modules = { "tide.convert", "tide.args" },
    what = "Lua values to tensors, and op arguments (both read Variables through a hook)" },
  { name = "dispatch", modules = { "tide.scope", "tide.dispatch", "tide.tape_recorder", "tide.trace_context", "tide.device" },
    what = "running a registry op from Lua (eager or traced), the tape recorder, the trace state, undoing state on every way out, devices" },
  { name = "ops", modules = { "tide.tensor", "tide.ops.*", "tide.random", "tide.image", "tide.image.*", "tide.audio" },
    what = "tensor methods, the ops, random, images, audio (tide.audio)" },
  { name = "autodiff", modules = { "tide.grad", "tide.grad.*", "tide.variable", "tide.tape" },
    what = "gradients of the ops, Variables, GradientTape" },
  { name = "weights files", modules = { "tide.safetensors" },
    what = "safetensors files (tide.safetensors), which models save their weights in" },
  { name = "tracing", modules = { "tide.tracing.*" },
    what = "tide.trace, concrete functions, control flow, TensorArray" },
  { name = "io", modules = { "tide.io", "tide.io.*", "tide.sparse_tensor", "tide.sparse.*" },
    what = "file formats (TFRecord, tf.train.Example, CSV, IDX) and tide.SparseTensor; below data, whose file datasets read them" },
  { name = "data", modules = { "tide.data", "tide.data.*", "tide.data.stages.*", "tide.datasets", "tide.datasets.*",
      "tide.utils", "tide.utils.*" },
    what = "the input pipeline (tide.data.Dataset over kernels/data; one module per stage in tide.data.stages.*), " ..
      "IDX files and the bundled data sets, tide.utils (keras.utils: datasets from folders); below models, whose " ..
      "fit takes datasets" },
  { name = "summary", modules = { "tide.summary", "tide.summary.*", "tide.profiler" },
    what = "TensorBoard event files: file writers, scalar/histogram/text/image summaries" },
  { name = "training", modules = { "tide.initializers", "tide.initializers.*", "tide.activations", "tide.activations.*",
      "tide.regularizers", "tide.regularizers.*", "tide.constraints", "tide.keras_mask", "tide.losses", "tide.losses.*", "tide.metrics", "tide.metrics.*",
      "tide.optimizers", "tide.optimizers.*", "tide.mixed_precision" },
    what = "what Keras builds with: initializers, activations, regularizers, constraints, losses, metrics, optimizers and schedules, dtype policies" },
  { name = "layers", modules = { "tide.layers", "tide.layers.*" },
    what = "the Layer base (weights, tracking, configs) and the Keras layers" },
  { name = "models", modules = { "tide.models", "tide.models.*", "tide.callbacks", "tide.callbacks.*",
      "tide.debugging", "tide.debugging.*", "tide.distribute", "tide.distribute.*" },
    what = "Sequential, functional and subclassed models, compile/fit/evaluate/predict, callbacks and the progress bar" },
  { name = "saving", modules = { "tide.saved_model", "tide.saved_model.*", "tide.train", "tide.train.*", "tide.saving",
      "tide.saving.*" },
    what = "SavedModel (tide.saved_model, whole Keras models), Keras 3's .keras and .weights.h5 files (tide.saving) and checkpoints (tide.train.Checkpoint, CheckpointManager)" },
  { name = "applications", modules = { "tide.applications", "tide.applications.*" },
    what = "keras.applications: the pretrained architectures (MobileNetV2, ResNet, VGG, EfficientNet) as functional models, " ..
      "loading Keras's weight files through tide.saving" },
  { name = "public", modules = { "tide", "tide.config" },
    what = "the public table and its settings" },
  { name = "repl", modules = { "tide.repl", "tide.repl.*" },
    what = "the REPL's Lua side (completion, printing results, help), loaded only by the tide program's REPL" },
  { name = "cli", modules = { "tide.cli", "tide.cli.*" },
    what = "the tide program's commands (export, run, summary), loaded only by cli/main.c" },
}

-- Modules that are not files under stdlib/ or bindings/: made at build time.
M.GENERATED = { ["tide.cdef"] = "bindings/gen_cdef.sh" }

-- Requires allowed against the rule, each with its reason:
-- { file = "stdlib/tide/x.lua", requires = "tide.y", reason = "..." }.
-- One that no longer matches a require is itself reported.
M.EXCEPTIONS = {}

---------------------------------------------------------------------------
-- Reading requires out of Lua source
---------------------------------------------------------------------------

-- The tokens of Lua source that matter here: names, strings (their value)
-- and punctuation, each with its line; comments and numbers are dropped.
local function tokens(src)
  local out, line, i, n = {}, 1, 1, #src
  local function add(kind, value) out[#out + 1] = { kind = kind, value = value, line = line } end
  -- The end of a long bracket opened at i ("[[", "[==["), or nil.
  local function long_bracket(at)
    local eq = src:match("^%[(=*)%[", at)
    if not eq then return nil end
    local close = "]" .. eq .. "]"
    local s = at + #eq + 2
    local e = src:find(close, s, true)
    local stop = e and e + #close - 1 or n
    return s, (e or n + 1) - 1, stop
  end
  local function count_lines(a, b)
    local _, k = src:sub(a, b):gsub("\n", "")
    line = line + k
  end
  while i <= n do
    local c = src:sub(i, i)
    if c == "\n" then
      line = line + 1
      i = i + 1
    elseif c:match("%s") then
      i = i + 1
    elseif src:sub(i, i + 1) == "--" then
      local s, _, stop = long_bracket(i + 2)
      if s then
        count_lines(i, stop)
        i = stop + 1
      else
        local e = src:find("\n", i, true)
        i = e or n + 1
      end
    elseif c == "[" and src:match("^%[=*%[", i) then
      local s, e, stop = long_bracket(i)
      add("string", src:sub(s, e))
      count_lines(i, stop)
      i = stop + 1
    elseif c == '"' or c == "'" then
      local j, buf = i + 1, {}
      while j <= n do
        local d = src:sub(j, j)
        if d == "\\" then
          local e = src:sub(j + 1, j + 1)
          if e == "\n" then line = line + 1 end
          buf[#buf + 1] = e
          j = j + 2
        elseif d == c or d == "\n" then
          break
        else
          buf[#buf + 1] = d
          j = j + 1
        end
      end
      add("string", table.concat(buf))
      i = j + 1
    elseif c:match("[%a_]") then
      local name = src:match("^[%w_]+", i)
      add("name", name)
      i = i + #name
    elseif c:match("%d") or (c == "." and src:sub(i + 1, i + 1):match("%d")) then
      local num = src:match("^[%w%.]+", i)
      i = i + #num
      while src:sub(i - 1, i - 1):match("[eEpP]") and src:sub(i, i):match("[+-]") do
        i = i + 1 + #(src:match("^[%w%.]*", i + 1))
      end
    else
      add("punct", c)
      i = i + 1
    end
  end
  return out
end
M.tokens = tokens

local function is(t, kind, value) return t ~= nil and t.kind == kind and (value == nil or t.value == value) end

-- The requires of one source: { module=, line= } each, and { computed=true,
-- line= } where the name is not a string literal. Forms read: require "m",
-- require("m"), pcall(require, "m"); `x.require`, `x:require` and a field
-- `{ require = f }` are other things.
function M.requires(src)
  local toks, out = tokens(src), {}
  for i, t in ipairs(toks) do
    if is(t, "name", "require") and not (is(toks[i - 1], "punct", ".") or is(toks[i - 1], "punct", ":")) then
      local nxt = toks[i + 1]
      if is(nxt, "punct", "=") and not is(toks[i + 2], "punct", "=") then
        -- `{ require = ... }` or `require = ...`: a name being given a value, not a call
      elseif is(nxt, "string") then
        out[#out + 1] = { module = nxt.value, line = t.line }
      elseif is(nxt, "punct", "(") and is(toks[i + 2], "string") and is(toks[i + 3], "punct", ")") then
        out[#out + 1] = { module = toks[i + 2].value, line = t.line }
      elseif is(nxt, "punct", ",") and is(toks[i - 1], "punct", "(") and is(toks[i - 2], "name", "pcall")
          and is(toks[i + 2], "string") then
        out[#out + 1] = { module = toks[i + 2].value, line = t.line }
      else
        out[#out + 1] = { computed = true, line = t.line }
      end
    end
  end
  return out
end

---------------------------------------------------------------------------
-- The check
---------------------------------------------------------------------------

-- "stdlib/tide/ops/math.lua" -> "tide.ops.math"; ".../init.lua" names its folder.
function M.module_name(path)
  local rel = path:gsub("^%./", ""):gsub("^stdlib/", ""):gsub("^bindings/", "")
  rel = rel:gsub("%.lua$", ""):gsub("/init$", "")
  return (rel:gsub("/", "."))
end

-- The floor index (1 = bottom) of a module name, or nil.
local function floor_of(floors, name)
  for i, f in ipairs(floors) do
    for _, pat in ipairs(f.modules) do
      if pat:sub(-2) == ".*" then
        local base = pat:sub(1, -3)
        if name:sub(1, #base + 1) == base .. "." then return i end
      elseif pat == name then
        return i
      end
    end
  end
  return nil
end
M.floor_of = floor_of

local function tide_module(name) return name == "tide" or name:sub(1, 5) == "tide." end

-- Check files ({ path=, source= } each) against floors and exceptions.
-- Returns the breaches, { file=, line=, message= } each, in file and line order.
function M.check(files, floors, exceptions, generated)
  floors = floors or M.FLOORS
  exceptions = exceptions or M.EXCEPTIONS
  generated = generated or M.GENERATED
  local breaches = {}
  local function breach(file, line, msg) breaches[#breaches + 1] = { file = file, line = line, message = msg } end
  local path_of, names = {}, {}
  for _, f in ipairs(files) do
    local name = M.module_name(f.path)
    path_of[name] = f.path
    names[#names + 1] = name
    if not floor_of(floors, name) then
      breach(f.path, 1, string.format("module %s is on no floor (add it to tools/floors.lua and " ..
        "docs/architecture.md)", name))
    end
  end
  local used_exception = {}
  local function excepted(file, target)
    for k, e in ipairs(exceptions) do
      if e.file == file and e.requires == target then
        used_exception[k] = true
        return true
      end
    end
    return false
  end
  local edges = {} -- module -> list of { to=, line= }
  for _, f in ipairs(files) do
    local from = M.module_name(f.path)
    local ff = floor_of(floors, from)
    edges[from] = edges[from] or {}
    for _, r in ipairs(M.requires(f.source)) do
      if r.computed then
        if not excepted(f.path, "?") then
          breach(f.path, r.line, "require of a computed name: write the module name as a string so the " ..
            "floors can be checked")
        end
      elseif tide_module(r.module) then
        local to = r.module
        local tf = floor_of(floors, to)
        if not path_of[to] and not generated[to] then
          breach(f.path, r.line, string.format("requires %s, which no file under stdlib/ or bindings/ provides", to))
        elseif not excepted(f.path, to) then
          if ff and tf and tf > ff then
            breach(f.path, r.line, string.format("requires %s up a floor: %s is on floor %s, %s on floor %s",
              to, from, floors[ff].name, to, floors[tf].name))
          end
          if path_of[to] then table.insert(edges[from], { to = to, line = r.line }) end
        end
      end
    end
  end
  -- Cycles: strongly connected components (Tarjan); each one with more than
  -- one module, or a module requiring itself, is reported once with one
  -- cycle through it, edge by edge.
  local index, low, on_stack, stack, next_index = {}, {}, {}, {}, 0
  local components = {}
  local function connect(v)
    index[v], low[v] = next_index, next_index
    next_index = next_index + 1
    stack[#stack + 1] = v
    on_stack[v] = true
    for _, e in ipairs(edges[v] or {}) do
      local w = e.to
      if index[w] == nil then
        connect(w)
        low[v] = math.min(low[v], low[w])
      elseif on_stack[w] then
        low[v] = math.min(low[v], index[w])
      end
    end
    if low[v] == index[v] then
      local comp = {}
      repeat
        local w = table.remove(stack)
        on_stack[w] = nil
        comp[#comp + 1] = w
      until w == v
      components[#components + 1] = comp
    end
  end
  table.sort(names)
  for _, v in ipairs(names) do
    if index[v] == nil then connect(v) end
  end
  for _, comp in ipairs(components) do
    local inside = {}
    for _, v in ipairs(comp) do inside[v] = true end
    local self_loop = false
    for _, e in ipairs(edges[comp[1]] or {}) do
      if e.to == comp[1] then self_loop = true end
    end
    if #comp > 1 or self_loop then
      table.sort(comp)
      -- One cycle: from the first module, follow edges inside the component
      -- (breadth first) back to it.
      local start = comp[1]
      local prev, queue, found = {}, { start }, nil
      local seen = { [start] = true }
      while #queue > 0 and not found do
        local v = table.remove(queue, 1)
        for _, e in ipairs(edges[v]) do
          if e.to == start then found = { from = v, edge = e } break end
          if inside[e.to] and not seen[e.to] then
            seen[e.to] = true
            prev[e.to] = { from = v, edge = e }
            queue[#queue + 1] = e.to
          end
        end
      end
      local steps = { found }
      local v = found.from
      while v ~= start do
        table.insert(steps, 1, prev[v])
        v = prev[v].from
      end
      local parts = {}
      for _, s in ipairs(steps) do
        parts[#parts + 1] = string.format("%s -> %s (%s:%d)", s.from, s.edge.to, path_of[s.from], s.edge.line)
      end
      breach(path_of[steps[1].from], steps[1].edge.line, "cycle: " .. table.concat(parts, ", "))
    end
  end
  for k, e in ipairs(exceptions) do
    if not used_exception[k] then
      breach(e.file, 1, string.format("exception for requiring %s matches no require any more: remove it", e.requires))
    end
  end
  table.sort(breaches, function(a, b)
    if a.file ~= b.file then return a.file < b.file end
    return a.line < b.line
  end)
  return breaches
end

-- Every .lua file under the given folders (default stdlib and bindings), read
-- from disk relative to the current folder.
function M.read_tree(dirs)
  dirs = dirs or { "stdlib", "bindings" }
  local files = {}
  for _, dir in ipairs(dirs) do
    local p = assert(io.popen("find " .. dir .. " -name '*.lua' -type f | LC_ALL=C sort"))
    for path in p:lines() do
      local f = assert(io.open(path, "rb"))
      files[#files + 1] = { path = path, source = f:read("*a") }
      f:close()
    end
    p:close()
  end
  return files
end

-- "file:line: message" lines for the breaches.
function M.report(breaches)
  local lines = {}
  for i, b in ipairs(breaches) do lines[i] = string.format("%s:%d: %s", b.file, b.line, b.message) end
  return table.concat(lines, "\n")
end

-- Run as a script: check the tree from the repository root.
if arg and arg[0] and arg[0]:match("floors%.lua$") then
  local files = M.read_tree()
  local breaches = M.check(files)
  if #breaches > 0 then print(M.report(breaches)) end
  print(string.format("floors: %d modules on %d floors, %d breach%s", #files, #M.FLOORS, #breaches,
    #breaches == 1 and "" or "es"))
  os.exit(#breaches == 0 and 0 or 1)
end

return M
