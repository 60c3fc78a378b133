-- stdlib/tide/data/stages/rejection_resample.lua — ds:rejection_resample(class_func, target_dist, ...): elements
-- kept with a probability that turns the class distribution into target_dist; elements {class, element}.
local binding = require "tide.binding"
local convert = require "tide.convert"
local structure = require "tide.data.structure"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"

local ffi, C = binding.ffi, binding.C
local TensorSpec = spec.TensorSpec
local fmt = string.format

-- A probability list (a Lua list or a 1-D tensor) of `what`, checked.
local function dist(what, v, n)
  if binding.istensor(v) then v = v:totable() end
  if type(v) ~= "table" or #v == 0 then binding.error("rejection_resample: " .. what .. " must be a non-empty list") end
  if n and #v ~= n then
    binding.error(fmt("rejection_resample: %s has %d classes but target_dist has %d", what, #v, n))
  end
  local sum = 0
  for i, p in ipairs(v) do
    if type(p) ~= "number" or p < 0 then
      binding.error(fmt("rejection_resample: %s[%d] must be a number >= 0, got %s", what, i, tostring(p)))
    end
    sum = sum + p
  end
  if math.abs(sum - 1) > 1e-5 then binding.error(fmt("rejection_resample: %s must sum to 1, got %g", what, sum)) end
  return v
end

-- ds:rejection_resample(class_func, target_dist, {initial_dist=, seed=}): class_func(element) gives an
-- element's class (0-based, a number or an integer scalar tensor); an element of class c is kept with
-- probability r_c / max r, r = target / initial (initial_dist, or the classes' running frequencies when not
-- given, as TF estimates it). Draws come from tide's Philox stream keyed by the seed (not TF's numbers).
local function rejection_resample(self, class_func, target_dist, opts)
  stage.check_fn("rejection_resample", class_func)
  opts = stage.options("rejection_resample", { "initial_dist", "seed", "name" }, opts)
  local target = dist("target_dist", target_dist)
  local initial = opts.initial_dist ~= nil and dist("initial_dist", opts.initial_dist, #target) or nil
  stage.no_datasets("rejection_resample", self)
  local ds = stage.derive(self, "rejection_resample", { class_func = class_func, target = target, initial = initial,
    seed = stage.draw_seed(opts.seed, "rejection_resample") })
  ds.template = structure.list_of({ { kind = "tensor", index = 1 }, self.template })
  ds.specs = { TensorSpec({}, "int32") }
  for _, s in ipairs(self.specs) do ds.specs[#ds.specs + 1] = s end
  ds.card = self:cardinality() == stage.INFINITE and stage.INFINITE or stage.UNKNOWN
  return ds
end

local s = {} -- Lua: class_func runs per element

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local n = #ds.target
  local counts, total = {}, 0
  for c = 1, n do counts[c] = 0 end
  -- uniform draws in [0, 1) from Philox (key: the seed, counter: the draw's number)
  local out = ffi.new("uint32_t[4]")
  local draw_no = 0
  local function uniform()
    C.tide_philox4x32(ds.seed, draw_no, 0x7e5a, out)
    draw_no = draw_no + 1
    return tonumber(out[0]) / 4294967296
  end
  return function()
    while true do
      local flat = nextf()
      if flat == nil then return nil end
      local cls = ds.class_func(structure.values(ds.input.template, flat))
      if binding.istensor(cls) then cls = cls:item() end
      if type(cls) ~= "number" or cls % 1 ~= 0 or cls < 0 or cls >= n then
        binding.error(fmt("rejection_resample: class_func gave %s; classes are 0 .. %d (target_dist's)",
          tostring(cls), n - 1))
      end
      local initial = ds.initial
      if not initial then
        counts[cls + 1] = counts[cls + 1] + 1
        total = total + 1
        initial = {}
        for c = 1, n do initial[c] = counts[c] / total end
      end
      local best = 0
      for c = 1, n do
        if initial[c] > 0 then best = math.max(best, ds.target[c] / initial[c]) end
      end
      local p = initial[cls + 1] > 0 and best > 0 and (ds.target[cls + 1] / initial[cls + 1]) / best or 0
      if uniform() < p then
        local res = { convert.tensor(cls, "int32", "rejection_resample") }
        for _, x in ipairs(flat) do res[#res + 1] = x end
        return res
      end
    end
  end, close
end

return { methods = { rejection_resample = rejection_resample }, stages = { rejection_resample = s } }
