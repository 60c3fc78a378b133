-- stdlib/tide/data/map_fn.lua — a user function given to map/filter, traced
-- (tide.trace) against the element spec into a graph that C threads run, or
-- kept as a Lua function (with a one-time note saying why) when it cannot be.
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local tracing = require "tide.tracing.function"
local spec = require "tide.tracing.spec"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local pack = require("tide.varargs").pack
local M = {}

-- Where fn was defined ("file.lua:12").
local function where(fn)
  local info = debug.getinfo(fn, "S")
  return info.short_src .. ":" .. (info.linedefined or 0)
end
M.where = where

-- The first line of an error message, without the location prefix noise.
local function reason(err)
  local msg = tostring(err):gsub("^[^\n]*tide/[^:]*:%d+: ", "")
  return (msg:match("^[^\n]*") or msg)
end

-- trace(fn, what, in_template, in_specs): a compiled function or nil plus the
-- reason it could not be traced. The result: { cf=, graph=, out_template=,
-- out_specs= }.
function M.trace(fn, what, in_template, in_specs)
  if structure.holds_datasets(in_specs) then return nil, "its element holds datasets (window's), which run in Lua" end
  local out_template
  local function flat_fn(...)
    local flat = pack(...)
    local res = pack(fn(structure.values(in_template, flat)))
    local template, leaves = structure.flatten_results(what, res.n, unpack(res, 1, res.n))
    out_template = template
    return unpack(leaves)
  end
  local f = tracing.trace(flat_fn, { name = what .. "_fn" })
  f.user_fn = fn -- an op tail-called by fn is located in fn, not in flat_fn
  local sig = {}
  for i, s in ipairs(in_specs) do sig[i] = spec.TensorSpec(s.shape, s.dtype) end
  local ok, cf = pcall(f.get_concrete_function, f, unpack(sig, 1, #in_specs))
  if not ok then return nil, reason(cf) end
  if cf._nin ~= #in_specs then
    return nil, "it does not use every component as a tensor"
  end
  local out_specs = {}
  for i, sym in ipairs(cf._out_syms) do out_specs[i] = spec.TensorSpec.from_tensor(sym) end
  if #out_specs ~= structure.count(out_template) then
    return nil, "it returns Lua values that are not tensors"
  end
  return { cf = cf, graph = cf._g, out_template = out_template, out_specs = out_specs }
end

-- Note once per function that it runs in Lua, and why. "Once" is per place
-- in the source, not per closure: a map built inside an interleave function
-- or a loop is a new closure each time, and would say the same thing again.
local noted = {}
function M.note_fallback(what, fn, why)
  local at = where(fn)
  local key = what .. " " .. at
  if noted[key] then return end
  noted[key] = true
  io.stderr:write(string.format("tide.data: the %s function at %s could not be traced (%s); it runs in the main " ..
    "Lua state, one element at a time, with no parallelism\n", what, at, why))
end

-- Run a traced function's graph on flat components; the flat results.
function M.run(compiled, flat)
  local cf = compiled.cf
  local n, nout = cf._nin, cf._nout
  local ins = ffi.new("const tide_tensor *[?]", math.max(n, 1))
  local outs = ffi.new("tide_tensor *[?]", math.max(nout, 1))
  local results = {}
  for i = 1, nout do
    results[i] = Tensor()
    outs[i - 1] = results[i]
  end
  for i = 1, n do ins[i - 1] = flat[i] end
  if C.tide_graph_run(compiled.graph, n, ins, nout, outs) ~= 0 then
    local msg = ffi.string(C.tide_last_error())
    return nil, msg
  end
  for i = 1, nout do binding.finish(results[i]) end
  return results
end

return M
