-- tools/api_coverage.lua — tide's share of TF 2.21's and Keras 3's public names, module by module
-- (the lists in tools/api_names/*.txt, written by tools/api_names/gen.py), and every name still missing.
-- Run from the repository root: build/tide tools/api_coverage.lua [module ...] [--missing] (docs/api.md).
local M = {}

-- Each TF/Keras module, the tide table that holds its names, and how to reach that table.
M.MODULES = {
  { name = "keras.layers", tide = "tide.layers" },
  { name = "keras.losses", tide = "tide.losses" },
  { name = "keras.metrics", tide = "tide.metrics" },
  { name = "keras.optimizers", tide = "tide.optimizers" },
  { name = "keras.callbacks", tide = "tide.callbacks" },
  { name = "keras.activations", tide = "tide.activations" },
  { name = "keras.initializers", tide = "tide.initializers" },
  { name = "keras.regularizers", tide = "tide.regularizers" },
  { name = "keras.ops", tide = "tide.ops" },
  { name = "keras.utils", tide = "tide.utils" },
  { name = "tf.math", tide = "tide.math" },
  { name = "tf.nn", tide = "tide.nn" },
  { name = "tf.linalg", tide = "tide.linalg" },
  { name = "tf.signal", tide = "tide.signal" },
  { name = "tf.image", tide = "tide.image" },
  { name = "tf.strings", tide = "tide.strings" },
  { name = "tf.bitwise", tide = "tide.bitwise" },
  { name = "tf.sparse", tide = "tide.sparse" },
  { name = "tf.data.Dataset", tide = "a tide.data.Dataset" },
  { name = "tf", tide = "tide" },
}

-- Where tide's name differs from TF's on purpose: module -> TF name -> tide's path, or ":name" for a name in
-- the module's own tide table (checked to exist by tests/spec/tools/api_coverage_spec.lua). Lua keywords and
-- existing tide names win over TF's; docs/tf_differences.md says so for each.
M.RENAMES = {
  tf = {
    ["function"] = "tide.trace", -- `function` is a Lua keyword; tide.trace is tf.function
  },
  ["tf.data.Dataset"] = {
    ["repeat"] = ":repeat_", -- `repeat` is a Lua keyword
  },
}

-- Names left out on purpose: module -> TF name -> why. They count as neither covered nor missing.
local BRIDGE = "a backend bridge (PyTorch/JAX/Flax): tide is its own backend"
local QUANT = "a dtype of TF's quantized ops (qint/quint), which tide has no kernels for"
local OPLIB = "loads a TF C++ op library (.so built against TF's headers)"
local GRAPH = "TF 1's graph objects: tide traces Lua functions (tide.trace) and has no public graph to edit"
local PYFN = "calls back into Python from a graph: tide's traced functions are Lua, and tide.print/Lua code run as is"
local NOKERNEL = "a dtype the engine has no kernels for (docs/tf_differences.md, the dtypes row)"
local COMPLEX = "complex dtypes: tide has none (its FFTs return real and imaginary parts, docs/tf_differences.md)"
local RNNCELL = "TF's bundled legacy Keras 2 cell wrapper (tensorflow.python.keras, deprecated for " ..
  "tf.keras.layers.RNN); tide's recurrent cells are Keras 3 layers in tide.layers.RNN, with Keras 3's dropout options"
M.LEFT_OUT = {
  ["keras.layers"] = {
    TorchModuleWrapper = BRIDGE, JaxLayer = BRIDGE, FlaxLayer = BRIDGE,
  },
  ["keras.callbacks"] = {
    OrbaxCheckpoint = "saves through JAX's Orbax library; tide.train's checkpoints play its part",
    RemoteMonitor = "POSTs each epoch's logs to an HTTP server: tide has no HTTP client and no network policy " ..
      "(a sandboxed run must not reach out); a LambdaCallback writing the logs where they are wanted plays its part",
  },
  ["tf.nn"] = {
    RNNCellDropoutWrapper = RNNCELL, RNNCellResidualWrapper = RNNCELL, RNNCellDeviceWrapper = RNNCELL,
  },
  tf = {
    qint8 = QUANT, qint16 = QUANT, qint32 = QUANT, quint8 = QUANT, quint16 = QUANT,
    load_library = OPLIB, load_op_library = OPLIB,
    Graph = GRAPH, Operation = GRAPH, import_graph_def = GRAPH, control_dependencies = GRAPH,
    py_function = PYFN, numpy_function = PYFN,
    variant = "TF's opaque variant dtype (tensor lists, datasets as tensors): tide keeps those as Lua values",
    resource = "TF's resource-handle dtype: tide's Variables are Lua objects, not handle tensors",
    int16 = NOKERNEL, uint16 = NOKERNEL, uint32 = NOKERNEL, uint64 = NOKERNEL,
    complex = COMPLEX, complex64 = COMPLEX, complex128 = COMPLEX,
    make_tensor_proto = "builds TF's TensorProto protobuf (tide reads and writes them inside its SavedModel " ..
      "and TFRecord code, not as a public object)",
    make_ndarray = "turns a TensorProto into a NumPy array: tide has neither in its public API",
  },
}

-- The tide table behind a path like "tide.layers" ("a tide.data.Dataset": an instance, for its methods).
local function resolve(tide, path)
  if path == "a tide.data.Dataset" then return tide.data.Dataset.range(1) end
  local v = tide
  for part in path:gmatch("[^.]+") do
    if part ~= "tide" then
      local ok, r = pcall(function() return v[part] end)
      if not ok or r == nil then return nil end
      v = r
    end
  end
  return v
end
M.resolve = resolve

-- Whether `tbl` has `name` (a lookup that errors, as a strict table's, counts as absent).
local function has(tbl, name)
  if tbl == nil then return false end
  local ok, v = pcall(function() return tbl[name] end)
  return ok and v ~= nil
end

-- The names of one module, as gen.py wrote them (comment lines start with '#').
function M.read_names(module, dir)
  local path = (dir or "tools/api_names") .. "/" .. module .. ".txt"
  local f = assert(io.open(path, "rb"), "api_coverage: no name list " .. path .. " (run tools/api_names/gen.py)")
  local names = {}
  for line in f:lines() do
    if line ~= "" and line:sub(1, 1) ~= "#" then names[#names + 1] = line end
  end
  f:close()
  return names
end

-- The tide value a rename names (nil when it does not exist).
function M.rename_target(tide, module, tf_name)
  local path = M.RENAMES[module][tf_name]
  for _, mod in ipairs(M.MODULES) do
    if mod.name == module and path:sub(1, 1) == ":" then
      local tbl = resolve(tide, mod.tide)
      return has(tbl, path:sub(2)) and tbl[path:sub(2)] or nil
    end
  end
  return resolve(tide, path)
end

-- One module's coverage: { module, covered, total, left_out = {name = why}, missing = {names} }.
function M.measure(tide, mod, dir)
  local tbl = resolve(tide, mod.tide)
  local renames = M.RENAMES[mod.name] or {}
  local left = M.LEFT_OUT[mod.name] or {}
  local r = { module = mod.name, tide = mod.tide, covered = 0, total = 0, missing = {}, left_out = {} }
  for _, name in ipairs(M.read_names(mod.name, dir)) do
    if renames[name] then
      if M.rename_target(tide, mod.name, name) ~= nil then r.covered = r.covered + 1 else r.missing[#r.missing + 1] = name end
      r.total = r.total + 1
    elseif left[name] then
      r.left_out[#r.left_out + 1] = name
    else
      r.total = r.total + 1
      if has(tbl, name) then r.covered = r.covered + 1 else r.missing[#r.missing + 1] = name end
    end
  end
  return r
end

function M.run(tide, which, dir)
  local out = {}
  for _, mod in ipairs(M.MODULES) do
    if not which or which[mod.name] then out[#out + 1] = M.measure(tide, mod, dir) end
  end
  return out
end

function M.report(results, show_missing)
  local lines = {}
  local function add(s) lines[#lines + 1] = s end
  for _, r in ipairs(results) do
    add(string.format("%-20s %-20s %4d / %-4d %5.1f%%", r.module, r.tide, r.covered, r.total,
      r.total > 0 and 100 * r.covered / r.total or 100))
  end
  if show_missing then
    for _, r in ipairs(results) do
      if #r.missing > 0 then
        add("")
        add(r.module .. " missing (" .. #r.missing .. "): " .. table.concat(r.missing, " "))
      end
      for _, name in ipairs(r.left_out) do
        add(string.format("%s left out: %s (%s)", r.module, name, M.LEFT_OUT[r.module][name]))
      end
    end
  end
  return table.concat(lines, "\n")
end

-- Run as a script: every module (or those named), and with --missing every missing name.
if arg and arg[0] and arg[0]:match("api_coverage%.lua$") then
  local tide = require "tide"
  local which, show = nil, false
  for _, a in ipairs(arg) do
    if a == "--missing" then show = true else which = which or {}; which[a] = true end
  end
  print(M.report(M.run(tide, which), show))
end

return M
