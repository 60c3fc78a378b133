-- stdlib/tide/data/stages/range.lua — Dataset.range: int64 scalars from
-- start to stop by step, as TF's (C: tide_dataset_range).
local binding = require "tide.binding"
local convert = require "tide.convert"
local interleave_fn = require "tide.data.interleave_fn"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"

local C = binding.C
local TensorSpec = spec.TensorSpec
local DTYPE_INT64 = require("tide.dtype").codes.int64
local NAMES = { "start", "stop", "step" }

-- Dataset.range(stop) / range(start, stop[, step]): int64 scalars, as TF.
local function range(a, b, c)
  local start, stop, step
  if b == nil then start, stop, step = 0, a, 1 else start, stop, step = a, b, c or 1 end
  if interleave_fn.any_symbolic { start, stop, step } then -- inside interleave's function: a leaf fed by the element
    local args = {}
    for i, v in ipairs { start, stop, step } do
      if interleave_fn.is_symbolic(v) then
        if v.ndim ~= 0 or not (v.dtype == "int32" or v.dtype == "int64") then
          binding.error(string.format("range: %s must be an integer scalar, got %s %s", NAMES[i], v.dtype,
            tostring(v.shape)))
        end
        args[i] = v.dtype == "int64" and v or v:cast("int64")
      else
        args[i] = convert.tensor(stage.count_arg("range", NAMES[i], v), "int64", "range")
      end
    end
    return interleave_fn.leaf("range", stage.new { kind = "param", source = "range", args = args,
      template = { kind = "tensor", index = 1 }, specs = { TensorSpec({}, "int64") }, card = stage.UNKNOWN })
  end
  start = stage.count_arg("range", "start", start)
  stop = stage.count_arg("range", "stop", stop)
  step = stage.count_arg("range", "step", step)
  if step == 0 then binding.error("range: step must not be 0") end
  local card = 0
  if (step > 0 and stop > start) or (step < 0 and stop < start) then
    card = math.floor((stop - start + step + (step > 0 and -1 or 1)) / step)
  end
  return stage.new { kind = "range", start = start, stop = stop, step = step, card = card,
    template = { kind = "tensor", index = 1 }, specs = { TensorSpec({}, "int64") } }
end

local s = { copyable = true }

function s.c(ds) return C.tide_dataset_range(ds.start, ds.stop, ds.step, DTYPE_INT64) end

function s.lua(ds)
  local v = ds.start
  return function()
    if (ds.step > 0 and v >= ds.stop) or (ds.step < 0 and v <= ds.stop) then return nil end
    local t = convert.tensor(v, "int64", "range")
    v = v + ds.step
    return { t }
  end
end

return { methods = { range = range }, stages = { range = s } }
