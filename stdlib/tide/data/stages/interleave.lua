-- stdlib/tide/data/stages/interleave.lua — ds:interleave and ds:flat_map: the
-- datasets fn makes of each element, read in turn (C: tide_dataset_interleave), and their template leaves.
--
-- fn is captured once (data/interleave_fn.lua) when it can be: the dataset
-- it returns on a traced element is a template whose "param" leaves take
-- their arguments from each element. Otherwise fn runs in Lua per element.
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local interleave_fn = require "tide.data.interleave_fn"
local stage = require "tide.data.stage"
local c_engine = require "tide.data.c_engine"
local lua_engine = require "tide.data.lua_engine"
local window = require "tide.data.stages.window"

local C = binding.C
local UNKNOWN = stage.UNKNOWN

-- The dataset fn makes of an element (checked).
local function inner_dataset(ds, flat, index)
  local what = ds.what or "interleave"
  local res = lua_engine.call_eager(what, ds.fn, ds.input.template, flat, index)
  local inner = res[1]
  if not stage.is_dataset(inner) then
    binding.error(string.format("%s: the function must return a tide.data.Dataset, got %s (element %d)", what,
      type(inner), index))
  end
  return inner
end

-- interleave's element structure: that of the dataset made from the first element.
local function probe(ds)
  local flat = lua_engine.first_element(ds.input)
  if flat == nil then return ds.input.template, ds.input.specs end
  local inner = inner_dataset(ds, flat, 0)
  return inner.template, inner.specs
end

-- An interleave node (interleave, flat_map) over self; `what` names it in errors.
local function interleave_node(self, what, fn, cycle, block, parallel, deterministic)
  local ds = stage.derive(self, "interleave", { fn = fn, cycle = cycle, block = block, parallel = parallel,
    deterministic = deterministic, what = what })
  if structure.holds_datasets(self.specs) then -- window's datasets: fn runs in Lua, called here on empty ones of
    -- the same specs for the structure of what it makes (as TF traces it on their DatasetSpecs)
    local args = {}
    for i, s in ipairs(self.specs) do args[i] = window.elements({}, s.element_spec) end
    local ok, inner = pcall(fn, structure.values(self.template, args))
    if ok and stage.is_dataset(inner) then ds.template, ds.specs = inner.template, inner.specs
    else ds.template, ds.specs = probe(ds) end
    return ds
  end
  local captured, why = interleave_fn.capture(fn, self.template, self.specs, stage.is_dataset, c_engine.supports_stage)
  if captured then
    ds.captured = captured
    ds.template, ds.specs = captured.inner.template, captured.inner.specs
  else
    interleave_fn.note_fallback(fn, why, what)
    ds.template, ds.specs = probe(ds)
  end
  return ds
end

-- ds:interleave(fn, {cycle_length=, block_length=1, parallel=, deterministic=true}):
-- fn makes a dataset of each element; cycle_length of them are read in
-- turn, block_length elements at a time (TF's order). fn is called once on a
-- traced element and the dataset it returns kept as a template that C threads
-- make anew for each element (data/interleave_fn.lua); with parallel = p > 1
-- (AUTOTUNE: cycle_length), p threads open and read them ahead, in the same
-- order unless deterministic = false. An fn that cannot be captured runs in
-- Lua for each element (a note says why).
local function interleave(self, fn, opts)
  if type(fn) ~= "function" then binding.error("interleave: expected a function, got " .. type(fn)) end
  opts = stage.options("interleave", { "cycle_length", "block_length", "parallel", "num_parallel_calls",
    "deterministic" }, opts)
  local cycle = opts.cycle_length
  if cycle == nil or cycle == stage.AUTOTUNE then cycle = tonumber(C.tide_data_autotune_parallelism())
  else cycle = stage.count_arg("interleave", "cycle_length", cycle, 1) end
  local block = stage.count_arg("interleave", "block_length", opts.block_length or 1, 1)
  local parallel = opts.parallel or opts.num_parallel_calls or 1
  if parallel == stage.AUTOTUNE then parallel = cycle
  else parallel = stage.count_arg("interleave", "parallel", parallel, 1) end
  local deterministic = opts.deterministic
  if deterministic == nil then deterministic = true end
  if type(deterministic) ~= "boolean" then binding.error("interleave: deterministic must be a boolean") end
  local ds = interleave_node(self, "interleave", fn, cycle, block, parallel, deterministic)
  ds.det_given = opts.deterministic ~= nil -- (with_options' deterministic changes only a default one)
  ds.card = UNKNOWN -- as TF 2.21's, even over an infinite input (its inner datasets may all be empty)
  return ds
end

-- ds:flat_map(fn): the elements of fn(x)'s dataset for each x in turn; TF's
-- definition, an interleave with cycle_length = 1 (so fn is captured into C
-- when it can be). Its cardinality is unknown, as TF 2.21's.
local function flat_map(self, fn)
  if type(fn) ~= "function" then binding.error("flat_map: expected a function, got " .. type(fn)) end
  local ds = interleave_node(self, "flat_map", fn, 1, 1, 1, true)
  ds.card = UNKNOWN
  return ds
end

local s = { copyable = true }

function s.in_c(ds) return ds.captured ~= nil end -- an fn that could not be captured runs in Lua

function s.c(ds, input, handle)
  local cap = ds.captured
  return C.tide_dataset_interleave(input, cap.graph, handle(cap.inner), ds.cycle, ds.block,
    ds.parallel > 1 and ds.parallel or 0, ds.deterministic and 1 or 0)
end

-- TF's InterleaveDataset (sequential; the parallel one keeps this order).
function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local cycle, block = ds.cycle, ds.block
  local current = {}   -- position -> { nextf, close } of an open inner pass
  local cycle_index, block_index, num_open, end_of_input, index = 1, 0, 0, false, 0
  local num_ahead = 0 -- open inner passes with a prefetch thread (at most ds.parallel)
  local function advance_cycle()
    block_index = 0
    cycle_index = cycle_index % cycle + 1
  end
  return function()
    while not end_of_input or num_open > 0 do
      local cur = current[cycle_index]
      if cur then
        local flat = cur.nextf()
        if flat ~= nil then
          block_index = block_index + 1
          if block_index == block then advance_cycle() end
          return flat
        end
        current[cycle_index] = nil
        num_open = num_open - 1
        if cur.ahead then num_ahead = num_ahead - 1 end
        if cur.close then cur.close() end -- its thread goes now, not at the collector's pace
        advance_cycle()
      elseif not end_of_input then
        local flat = nextf()
        if flat == nil then
          end_of_input = true
        else
          local inner = inner_dataset(ds, flat, index)
          index = index + 1
          if not structure.same(inner.template, ds.template) then
            binding.error(string.format("%s: the dataset made from element %d has a different structure " ..
              "than the first one's", ds.what or "interleave", index - 1))
          end
          -- parallel: this inner pass runs ahead on a C prefetch thread of its own (when it runs in C)
          local ahead = ds.parallel > 1 and num_ahead < ds.parallel and lua_engine.in_c(inner)
          local f, c = open(ahead and inner:prefetch(math.max(16, 2 * ds.block)) or inner)
          current[cycle_index] = { nextf = f, close = c, ahead = ahead }
          num_open = num_open + 1
          if ahead then num_ahead = num_ahead + 1 end
        end
      else
        advance_cycle()
      end
    end
    return nil
  end, function()
    if close then close() end
    for _, c in pairs(current) do if c.close then c.close() end end
  end
end

-- A template leaf (kind "param", made by a source given a traced tensor
-- inside interleave's function): interleave's node makes its source of each element.
local param = { copyable = true }

local PARAM_KINDS = { slices = C.TIDE_DATA_PARAM_SLICES, range = C.TIDE_DATA_PARAM_RANGE,
  files = C.TIDE_DATA_PARAM_FILES }

function param.c(ds)
  local proto = ds.make_proto and ds.make_proto()
  if ds.make_proto and proto == nil then binding.raise() end
  local h = C.tide_dataset_param(PARAM_KINDS[ds.source], ds.first, #ds.args, proto)
  if proto ~= nil then C.tide_dataset_free(proto) end -- the leaf holds it
  return h
end

function param.lua()
  binding.error("tide.data: this dataset was made from an interleave function's traced element; only that " ..
    "interleave can read it")
end

return {
  methods = { interleave = interleave, flat_map = flat_map },
  stages = { interleave = s, param = param },
}
