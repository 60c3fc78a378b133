-- stdlib/tide/data/stage.lua — what every dataset stage module (data/stages/)
-- builds on: the Dataset class, the stages by kind, and the argument checks.
--
-- A stage module returns { methods = { name = fn }, stages = { kind = stage } };
-- data/dataset.lua installs the methods on Dataset and registers the stages
-- here, where the engines look a node's stage up by its kind. A stage:
--   lua(ds, open)          its Lua-engine reader: nextf, close of a pass over ds
--                          (open(d) opens an input in whichever engine runs it)
--   c(ds, input, handle)   its C description, a tide_dataset * (nil: an error is
--                          set), input = handle(ds.input); nil: no C stage
--   in_c(ds)               whether this node runs in C (default: it has a c)
--   copyable               kernels/data/template.c copies it per element (its C stage has a copy)
local binding = require "tide.binding"
local class = require "tide.class"
local structure = require "tide.data.structure"

local ffi, C = binding.ffi, binding.C
local istensor = binding.istensor

local M = {}
M.INFINITE, M.UNKNOWN = -1, -2
M.AUTOTUNE = -1

local Dataset = class("Dataset")
M.Dataset = Dataset

---------------------------------------------------------------------------
-- Stages by kind
---------------------------------------------------------------------------

local stages = {}

-- Register the stage of datasets of `kind` (once).
function M.register(kind, s)
  if stages[kind] then error("tide.data: a second stage for datasets of kind '" .. kind .. "'", 2) end
  if type(s.lua) ~= "function" then error("tide.data: the '" .. kind .. "' stage has no Lua reader", 2) end
  if s.in_c == nil then
    local has_c = s.c ~= nil
    s.in_c = function() return has_c end
  end
  s.kind = kind
  stages[kind] = s
end

-- The stage of ds's kind.
function M.of(ds)
  local s = stages[ds.kind]
  if not s then binding.error("tide.data: no stage for a '" .. tostring(ds.kind) .. "' dataset") end
  return s
end

---------------------------------------------------------------------------
-- Nodes and argument checks
---------------------------------------------------------------------------

function M.is_dataset(x) return class.is_instance(x, Dataset) end

function M.check_dataset(what, x)
  if not M.is_dataset(x) then
    binding.error(string.format("%s: expected a tide.data.Dataset, got %s", what, istensor(x) and "a tensor" or type(x)))
  end
  return x
end

-- A new dataset of the given fields (kind, template, specs, card, ...).
function M.new(fields) return setmetatable(fields, Dataset) end

-- A new dataset node over `input` with the same structure, plus fields.
function M.derive(input, kind, fields)
  local ds = setmetatable(fields or {}, Dataset)
  ds.kind = kind
  ds.input = input
  ds.template = input.template
  ds.specs = input.specs
  return ds
end

-- Check an options table against the names allowed.
function M.options(what, allowed, t)
  if t == nil then return {} end
  if type(t) ~= "table" or istensor(t) then
    binding.error(string.format("%s: options must be a table {%s=...}, got %s", what, allowed[1], type(t)))
  end
  local set = {}
  for _, k in ipairs(allowed) do set[k] = true end
  for k in pairs(t) do
    if not set[k] then
      binding.error(string.format("%s: unknown option '%s' (expected: %s)", what, tostring(k),
        table.concat(allowed, ", ")))
    end
  end
  return t
end

-- A whole number (optionally >= min), or an error naming the argument.
function M.count_arg(what, name, v, min)
  if istensor(v) then v = v:item() end
  if type(v) ~= "number" or v ~= math.floor(v) or (min and v < min) then
    binding.error(string.format("%s: %s must be a whole number%s, got %s", what, name,
      min and (" >= " .. min) or "", tostring(v)))
  end
  return v
end

-- Stages that stack, pad or store tensors refuse window's datasets, naming the way.
function M.no_datasets(what, ds)
  if structure.holds_datasets(ds.specs) then
    binding.error(string.format("%s: the elements are datasets (from window); turn each into tensors first, e.g. " ..
      "flat_map(function(w) return w:batch(n) end)", what))
  end
end

-- Stages that stack or split rows refuse ragged_batch's RaggedTensors, naming the way.
function M.no_ragged(what, ds)
  if structure.has_ragged(ds.template) then
    binding.error(string.format("%s: the elements hold RaggedTensors (from ragged_batch), which tide.data does " ..
      "not batch or split; map them to dense tensors first (rt:to_tensor())", what))
  end
end

-- The Lua seed of a shuffle or a draw: the given one, or one drawn from
-- tide's global stream (tide.random.set_seed makes it repeat).
function M.draw_seed(seed, what)
  if seed ~= nil then return M.count_arg(what, "seed", seed) end
  local key, counter = ffi.new("uint64_t[1]"), ffi.new("uint64_t[1]")
  C.tide_random_reserve(1, key, counter)
  local out = ffi.new("uint32_t[4]")
  C.tide_philox4x32(key[0], counter[0], 0x5eed, out)
  return tonumber(out[0]) * 2097152 + tonumber(out[1]) % 2097152 -- 53 bits: exact as a Lua number
end

-- A function argument: a Lua function or a callable table.
function M.check_fn(what, fn)
  if type(fn) ~= "function" and not (type(fn) == "table" and getmetatable(fn) and getmetatable(fn).__call) then
    binding.error(string.format("%s: expected a function, got %s", what, type(fn)))
  end
end

-- A boolean option (default when nil), or an error naming it.
function M.flag(what, name, v, default)
  if v == nil then return default end
  if type(v) ~= "boolean" then binding.error(string.format("%s: %s must be a boolean, got %s", what, name, type(v))) end
  return v
end

-- A static shape without its first dim (nil: unknown rank stays unknown).
function M.drop_first(shape)
  if shape == nil then return nil end
  local out = {}
  for d = 2, #shape do out[d - 1] = shape[d] end
  return out
end

return M
