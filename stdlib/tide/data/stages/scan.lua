-- stdlib/tide/data/stages/scan.lua — ds:scan and ds:reduce, a state carried
-- across the elements as TF 2.21's (scan: Lua engine only; reduce: a method, no stage).
--
-- scan's function is traced (data/map_fn.lua) when it can be, and its graph
-- runs from the Lua reader; reduce calls its function eagerly, one element
-- at a time. As TF, both give the function (state, element) with the
-- element as one value (a list element as a Lua list).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local map_fn = require "tide.data.map_fn"
local stage = require "tide.data.stage"
local lua_engine = require "tide.data.lua_engine"
local spec = require "tide.tracing.spec"

local TensorSpec, None = spec.TensorSpec, spec.None
local pack = require("tide.varargs").pack
local check_fn = stage.check_fn

-- A state given to reduce or scan: its template, components and their dtypes.
local function initial_state(what, initial)
  if initial == nil then binding.error(what .. ": the initial state is nil; give a tensor, or a list or map of them") end
  local template, leaves = structure.flatten(initial, what .. " (initial state)")
  if structure.has_sparse(template) then
    binding.error(what .. ": the state holds a SparseTensor; a state of dense tensors only, for now")
  end
  local dtypes = {}
  for i, x in ipairs(leaves) do dtypes[i] = structure.dtype_name(x) end
  return template, leaves, dtypes
end

-- The new state fn returned (res, packed), checked against the initial one: the
-- same structure and dtypes (TF's rule; shapes may change). Lua numbers take the state's dtypes.
local function new_state(what, st, res, index)
  local ok, template, leaves = pcall(structure.flatten_results, what, res.n, unpack(res, 1, res.n))
  if ok and res.n == 1 then ok, template, leaves = pcall(structure.flatten, res[1], what, st.dtypes) end
  if not ok then binding.error(string.format("%s: element %d: %s", what, index, tostring(template))) end
  if not structure.same(template, st.template) then
    binding.error(string.format("%s: element %d: the function returned a state of a different structure than the " ..
      "initial state (%d components, expected %d)", what, index, #leaves, #st.leaves))
  end
  for i, x in ipairs(leaves) do
    local dt = structure.dtype_name(x)
    if dt ~= st.dtypes[i] then
      binding.error(string.format("%s: element %d: the new state's component %d is %s but the initial state's is %s " ..
        "(the dtypes must match, as TF's; give the initial state that dtype)", what, index, i - 1, dt, st.dtypes[i]))
    end
  end
  return leaves
end

-- ds:reduce(initial, fn): fn(state, element) returns the next state, over
-- one pass; the final state (the initial one for an empty dataset).
local function reduce(self, initial, fn)
  check_fn("reduce", fn)
  stage.no_datasets("reduce", self)
  local template, leaves, dtypes = initial_state("reduce", initial)
  local st = { template = template, leaves = leaves, dtypes = dtypes }
  local nextf, close = lua_engine.open_input(self)
  local index = 0
  local ok, err = pcall(function()
    while true do
      local flat = nextf()
      if flat == nil then break end
      local res = pack(pcall(fn, structure.rebuild(template, st.leaves), structure.rebuild(self.template, flat)))
      if not res[1] then
        binding.error(string.format("reduce: the function failed on element %d: %s", index, tostring(res[2])))
      end
      st.leaves = new_state("reduce", st, pack(unpack(res, 2, res.n)), index)
      index = index + 1
    end
  end)
  if close then close() end
  if not ok then error(err, 0) end
  return structure.rebuild(template, st.leaves)
end

-- Specs that fit both a and b (dims that differ become None; ranks that differ: unknown rank).
local function relaxed(a, b)
  local out, changed = {}, false
  for i, s in ipairs(a) do
    local c = structure.common_spec(s, b[i], "scan")
    changed = changed or not (c == s)
    out[i] = c
  end
  return out, changed
end

-- ds:scan(initial, fn): fn(state, element) returns new_state, output; the
-- outputs in order, the state carried across elements (restarting each pass).
local function scan(self, initial, fn)
  check_fn("scan", fn)
  stage.no_datasets("scan", self)
  local template, leaves, dtypes = initial_state("scan", initial)
  local ns = #leaves
  local state_specs = {}
  for i, x in ipairs(leaves) do state_specs[i] = structure.spec_of(x) end
  local ds = stage.derive(self, "scan", { fn = fn, state_template = template, state_leaves = leaves, dtypes = dtypes })
  ds.card = self:cardinality()
  local in_template = structure.list_of { template, self.template }
  local compiled, why
  for _ = 1, 4 do -- as TF: the state's shapes relax to fit what fn returns, then it is traced again
    local in_specs = {}
    for i, s in ipairs(state_specs) do in_specs[i] = s end
    for _, s in ipairs(self.specs) do in_specs[#in_specs + 1] = s end
    compiled, why = map_fn.trace(fn, "scan", in_template, in_specs)
    if not compiled then break end
    local out = compiled.out_template
    if out.kind ~= "list" or out.n ~= 2 then
      binding.error("scan: the function must return two values, the new state and the output element")
    end
    if not structure.same(out.items[1], template) then
      binding.error("scan: the function returned a state of a different structure than the initial state")
    end
    local got = {}
    for i = 1, ns do
      got[i] = compiled.out_specs[i]
      if got[i].dtype ~= dtypes[i] then
        binding.error(string.format("scan: the new state's component %d is %s but the initial state's is %s (the " ..
          "dtypes must match, as TF's; give the initial state that dtype)", i - 1, got[i].dtype, dtypes[i]))
      end
    end
    local changed
    state_specs, changed = relaxed(state_specs, got)
    if not changed then break end
  end
  if compiled then
    ds.compiled = compiled
    ds.template = structure.shift(compiled.out_template.items[2], -ns)
    ds.specs = {}
    for i = ns + 1, #compiled.out_specs do ds.specs[i - ns] = compiled.out_specs[i] end
  else
    map_fn.note_fallback("scan", fn, why)
    -- the output's structure: fn's result on the first element (dims unknown: later ones may differ)
    local flat = lua_engine.first_element(self)
    if flat == nil then
      binding.error("scan: the function could not be traced (" .. why .. ") and the dataset is empty, so the " ..
        "output's structure is unknown")
    end
    local res = pack(fn(structure.rebuild(template, leaves), structure.rebuild(self.template, flat)))
    local out_t, out_leaves = structure.flatten_results("scan", res.n - 1, unpack(res, 2, res.n))
    ds.template, ds.specs = out_t, {}
    for i, x in ipairs(out_leaves) do
      local dims = {}
      for d = 1, x.ndim do dims[d] = None end
      ds.specs[i] = TensorSpec(dims, structure.dtype_name(x))
    end
  end
  return ds
end

local s = {}

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local st = { template = ds.state_template, leaves = ds.state_leaves, dtypes = ds.dtypes }
  local state = ds.state_leaves
  local ns, index = #state, 0
  return function()
    local flat = nextf()
    if flat == nil then return nil end
    local i = index
    index = index + 1
    if ds.compiled then
      local ins = {}
      for k = 1, ns do ins[k] = state[k] end
      for _, x in ipairs(flat) do ins[#ins + 1] = x end
      local out, err = map_fn.run(ds.compiled, ins)
      if not out then binding.error(string.format("scan: the function failed on element %d: %s", i, err)) end
      local output = {}
      state = { unpack(out, 1, ns) }
      for k = ns + 1, #out do output[k - ns] = out[k] end
      return output
    end
    local res = pack(pcall(ds.fn, structure.rebuild(ds.state_template, state), structure.rebuild(ds.input.template, flat)))
    if not res[1] then binding.error(string.format("scan: the function failed on element %d: %s", i, tostring(res[2]))) end
    if res.n < 3 then binding.error(string.format("scan: element %d: the function must return two values, the new " ..
      "state and the output element", i)) end
    state = new_state("scan", st, pack(res[2]), i)
    local t, out = structure.flatten_results("scan", res.n - 2, unpack(res, 3, res.n))
    if not structure.same(t, ds.template) then
      binding.error(string.format("scan: element %d: the function returned an output of a different structure than " ..
        "for the first element", i))
    end
    return out
  end, close
end

return { methods = { scan = scan, reduce = reduce }, stages = { scan = s } }
