-- stdlib/tide/data/interleave_fn.lua — interleave's function captured once, as
-- tf.data traces it: called on a traced element, the dataset it returns becomes a
-- template whose sources take their arguments from the element (kernels/data/template.c).
--
-- While fn runs, sources given a traced (symbolic) tensor make a "param" leaf
-- (M.leaf) instead of reading anything: from_tensor_slices, from_tensors,
-- range, TFRecordDataset, TextLineDataset, CsvDataset. The trace's outputs
-- are those leaves' arguments (a graph the C node runs on each element); the
-- stages above the leaves are ordinary datasets (a map in them is traced as
-- usual). A map, filter or interleave among them whose graph uses the element
-- (captures values of fn's trace) has those values added to the outputs too,
-- and each copy of the template runs it with its own element's values. What
-- cannot be captured gives a reason, and interleave then calls fn in Lua for
-- each element (a one-time note says why).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local stage = require "tide.data.stage"
local tracing = require "tide.tracing.function"
local spec = require "tide.tracing.spec"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local band = bit.band
local pack = require("tide.varargs").pack
local M = {}

local SYMBOLIC = C.TIDE_TENSOR_SYMBOLIC
local active = nil -- the capture under way: { leaves = set of leaves made }

-- Is x a traced (symbolic) tensor?
function M.is_symbolic(x) return binding.istensor(x) and band(x.flags, SYMBOLIC) ~= 0 end

-- Does any of the tensors (a Lua list) come from a trace?
function M.any_symbolic(list)
  for _, x in ipairs(list) do if M.is_symbolic(x) then return true end end
  return false
end

-- Register ds (kind "param", source "slices" | "range" | "files", args = the
-- tensors it is made of) as a template leaf of the capture under way; outside
-- one it is an error naming `what`.
function M.leaf(what, ds)
  if not active then
    binding.error(what .. ": got a traced (symbolic) tensor; a dataset made of one can only be returned from an " ..
      "interleave function")
  end
  active.leaves[ds] = true
  return ds
end

-- Whether kernels/data/template.c can copy ds's stage for each element
-- (its stage module says: copyable); sources are shared as they are.
local function copyable(ds) return stage.of(ds).copyable == true end

-- The first stage of ds (walking inputs) that the C engine cannot run, or nil.
local function lua_stage(ds, supports)
  if ds.kind == "param" then return nil end
  if ds.input then
    local s, why = lua_stage(ds.input, supports)
    if s then return s, why end
  end
  for _, d in ipairs(ds.inputs or {}) do
    local s, why = lua_stage(d, supports)
    if s then return s, why end
  end
  if ds.kind == "interleave" and ds.captured then
    local s, why = lua_stage(ds.captured.inner, supports)
    if s then return s, why end
  end
  if not supports(ds) or not copyable(ds) or (ds.kind == "shuffle" and ds.seedless) then return ds end
  local g = M.stage_graph(ds)
  if g and C.tide_graph_num_captures(g) > 0 and not ds.cap_first then return ds, "captures" end
  return nil
end

-- Where fn was defined.
local function where(fn)
  local info = debug.getinfo(fn, "S")
  return info.short_src .. ":" .. (info.linedefined or 0)
end

-- The graph ds's own stage runs (a traced map's or filter's, a captured
-- interleave's argument graph), or nil.
function M.stage_graph(ds)
  if ds.compiled then return ds.compiled.graph end
  if ds.kind == "interleave" and ds.captured then return ds.captured.graph end
  return nil
end

-- Symbolic tensors of the graph being built (fn's trace) naming the values
-- that ds's stage graph captures of it (the element, or what fn computed of
-- it), or nil when it captures none; an error (a reason) when they are not
-- the trace's own values.
local function capture_values(ds)
  local g = M.stage_graph(ds)
  local n = g and C.tide_graph_num_captures(g) or 0
  if n == 0 then return nil end
  local syms, arr = {}, ffi.new("tide_tensor *[?]", n)
  for k = 1, n do
    syms[k] = Tensor()
    arr[k - 1] = syms[k]
  end
  if C.tide_graph_capture_values(g, n, arr) ~= 0 then
    error(string.format("the %s function at %s captures a value that is not the interleave function's (%s)", ds.kind,
      where(ds.fn), ffi.string(C.tide_last_error())), 0)
  end
  return syms
end

-- capture(fn, in_template, in_specs, is_dataset, supports): { inner=, graph=,
-- cf= } or nil plus the reason fn cannot run without Lua. supports(ds):
-- whether the C engine runs ds's own stage (param leaves aside).
function M.capture(fn, in_template, in_specs, is_dataset, supports)
  local inner, why
  local function flat_fn(...)
    local flat = pack(...)
    local prev = active
    active = { leaves = {} }
    local ok, res = pcall(fn, structure.values(in_template, flat))
    local cap = active
    active = prev
    if not ok then error(res, 0) end
    if not is_dataset(res) then
      why = "it returns " .. (binding.istensor(res) and "a tensor" or type(res)) .. ", not a tide.data.Dataset"
      error(why, 0)
    end
    local outs, seen = {}, {}
    local function walk(d)
      if seen[d] then return end
      seen[d] = true
      if d.kind == "param" then
        if not cap.leaves[d] then
          why = "its dataset reads an element traced elsewhere"
          error(why, 0)
        end
        d.first = #outs
        for _, a in ipairs(d.args) do outs[#outs + 1] = a end
        return
      end
      -- a stage whose graph captures the element: each copy of the template
      -- binds those captures to its element's values, computed here
      local ok, caps = pcall(capture_values, d)
      if not ok then
        why = caps
        error(why, 0)
      end
      if caps then
        d.cap_first = #outs
        for _, a in ipairs(caps) do outs[#outs + 1] = a end
      end
      if d.kind == "interleave" and d.captured then walk(d.input); return end
      if d.input then walk(d.input) end
      for _, x in ipairs(d.inputs or {}) do walk(x) end
    end
    walk(res)
    inner = res
    if #outs == 0 then return end
    return unpack(outs)
  end
  local f = tracing.trace(flat_fn, { name = "interleave_fn" })
  f.user_fn = fn -- an op tail-called by fn is located in fn, not in flat_fn
  local sig = {}
  for i, s in ipairs(in_specs) do sig[i] = spec.TensorSpec(s.shape, s.dtype) end
  local ok, cf = pcall(f.get_concrete_function, f, unpack(sig, 1, #in_specs))
  if not ok then
    local msg = tostring(cf):gsub("^[^\n]*tide/[^:]*:%d+: ", ""):match("^[^\n]*")
    return nil, why or ("it could not be traced: " .. (msg:match("^(.-); ") or msg)) -- the first clause says it
  end
  if cf._nin ~= #in_specs then return nil, "it does not use every component of the element as a tensor" end
  local bad, captures = lua_stage(inner, supports)
  if captures then
    return nil, string.format("the %s function at %s uses a traced value that the template cannot bind " ..
      "(one of a dataset not returned by the interleave function)", bad.kind, where(bad.fn))
  end
  if bad then
    if bad.kind == "shuffle" then
      return nil, "its dataset shuffles without a seed: each inner dataset must draw its own order (give shuffle a seed)"
    end
    if supports(bad) and not copyable(bad) then
      return nil, string.format("the dataset it returns has a %s stage, which the C template cannot copy yet", bad.kind)
    end
    local at = bad.fn and (" at " .. where(bad.fn)) or ""
    return nil, string.format("the dataset it returns has a stage that runs in Lua (%s%s)", bad.kind, at)
  end
  return { inner = inner, cf = cf, graph = cf._nout > 0 and cf._g or nil }
end

-- Note once per function that interleave calls it in Lua, and why (once
-- per place in the source, as map_fn.note_fallback).
local noted = {}
function M.note_fallback(fn, why, what)
  local at = where(fn)
  local key = (what or "interleave") .. " " .. at
  if noted[key] then return end
  noted[key] = true
  io.stderr:write(string.format("tide.data: the %s function at %s could not be captured (%s); it runs in " ..
    "the main Lua state once per input element\n", what or "interleave", at, why))
end

return M
