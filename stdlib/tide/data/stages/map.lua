-- stdlib/tide/data/stages/map.lua — ds:map(fn): fn's result for each
-- element; traced, a graph C threads run (C: tide_dataset_map), else called in Lua.
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local map_fn = require "tide.data.map_fn"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"
local lua_engine = require "tide.data.lua_engine"

local C = binding.C
local TensorSpec, None = spec.TensorSpec, spec.None

-- The template and specs of an untraceable map's results: its result on
-- the first element (dims unknown: later elements may differ).
local function probe(ds)
  local flat = lua_engine.first_element(ds.input)
  if flat == nil then return ds.input.template, ds.input.specs end
  local leaves, t = lua_engine.results_flat("map", 0, nil,
    lua_engine.call_eager("map", ds.fn, ds.input.template, flat, 0))
  local specs = {}
  for i, x in ipairs(leaves) do
    local dims = {}
    for d = 1, x.ndim do dims[d] = None end
    specs[i] = TensorSpec(dims, structure.dtype_name(x))
  end
  return t, specs
end

-- ds:map(fn, {parallel=, deterministic=true}): fn gets an element (a list's
-- items as separate arguments) and returns the new one. It is traced; if it
-- cannot be, it runs in Lua (a note says why).
local function map(self, fn, opts)
  stage.check_fn("map", fn)
  opts = stage.options("map", { "parallel", "deterministic", "num_parallel_calls" }, opts)
  local parallel = opts.parallel or opts.num_parallel_calls
  if parallel ~= nil and parallel ~= stage.AUTOTUNE then parallel = stage.count_arg("map", "parallel", parallel, 1) end
  local deterministic = opts.deterministic
  if deterministic == nil then deterministic = true end
  if type(deterministic) ~= "boolean" then binding.error("map: deterministic must be a boolean") end
  local ds = stage.derive(self, "map", { fn = fn, parallel = parallel, deterministic = deterministic,
    det_given = opts.deterministic ~= nil }) -- (with_options' deterministic changes only a default one)
  ds.card = self:cardinality()
  local compiled, why = map_fn.trace(fn, "map", self.template, self.specs)
  if compiled then
    ds.compiled = compiled
    ds.template, ds.specs = compiled.out_template, compiled.out_specs
  else
    if not structure.holds_datasets(self.specs) then map_fn.note_fallback("map", fn, why) end -- windows: Lua by design
    ds.template, ds.specs = probe(ds)
    -- as its dense dims: the first element's sparse shapes say nothing of the next ones'
    ds.template = structure.map_sparse_shapes(ds.template, function(shape)
      if shape == nil then return nil end
      local dims = {}
      for d = 1, #shape do dims[d] = None end
      return dims
    end)
  end
  structure.fix_sparse_specs(ds.template, ds.specs)
  return ds
end

local s = { copyable = true }

function s.in_c(ds) return ds.compiled ~= nil end -- an untraced function runs in Lua

function s.c(ds, input)
  local p = ds.parallel
  return C.tide_dataset_map(input, ds.compiled.graph, p == nil and 0 or p, ds.deterministic and 1 or 0)
end

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local index = 0
  return function()
    local flat = nextf()
    if flat == nil then return nil end
    local i = index
    index = index + 1
    if ds.compiled then
      local out, err = map_fn.run(ds.compiled, flat)
      if not out then binding.error(string.format("map: the function failed on element %d: %s", i, err)) end
      return out
    end
    return (lua_engine.results_flat("map", i, ds.template,
      lua_engine.call_eager("map", ds.fn, ds.input.template, flat, i)))
  end, close
end

return { methods = { map = map }, stages = { map = s } }
