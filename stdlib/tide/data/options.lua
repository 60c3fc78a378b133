-- stdlib/tide/data/options.lua — tide.data.Options (tf.data.Options): the options tide honours
-- (deterministic), the ones it accepts as named no-ops, and errors for the rest; merging as TF's.
local binding = require "tide.binding"

local M = {}

-- What each option does in tide. "honoured": it changes the pipeline; "no-op": accepted, nothing to do
-- (tide has no such machinery: its passes are never rewritten); names not here are errors.
M.TOP = {
  deterministic = "honoured: map and interleave stages left at their default order (deterministic = true) " ..
    "follow it",
  experimental_deterministic = "honoured: TF's old name of deterministic",
  experimental_optimization = "no-op: tide does not rewrite pipelines (map fusion and the rest)",
  experimental_slack = "no-op: prefetch slack",
  experimental_external_state_policy = "no-op: tide's pipelines are not serialized with their state",
  experimental_warm_start = "no-op: tide's C stages start on the first next()",
  experimental_symbolic_checkpoint = "no-op: tide does not checkpoint iterators",
  dataset_name = "kept: a name for the dataset",
  framework_type = "kept: the framework names that made the dataset",
}
-- experimental_optimization's flags (TF's OptimizationOptions), all no-ops in tide.
M.OPTIMIZATION = { "apply_default_optimizations", "filter_fusion", "filter_parallelization", "inject_prefetch",
  "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion", "map_parallelization", "noop_elimination",
  "parallel_batch", "seq_interleave_prefetch", "shuffle_and_repeat_fusion", "warm_start" }
-- TF options tide refuses, with why.
M.REFUSED = {
  autotune = "tide's AUTOTUNE has no budgets to set (pass parallel = tide.data.AUTOTUNE to a stage)",
  threading = "tide's data threads share one pool sized to the machine",
  experimental_distribute = "tide does not auto-shard datasets (use ds:shard)",
  experimental_service = "tide has no tf.data service",
}

local Options = {}
Options.__index = function(self, k)
  if M.TOP[k] then return rawget(self, "_v")[k] end
  if k == "merge" then return Options.merge end
  if M.REFUSED[k] then binding.error("Options." .. k .. " is not supported: " .. M.REFUSED[k]) end
  binding.error("Options: no option '" .. tostring(k) .. "'")
end

local function names()
  local t = {}
  for k in pairs(M.TOP) do t[#t + 1] = k end
  table.sort(t)
  return table.concat(t, ", ")
end

local OPT_SET = {}
for _, k in ipairs(M.OPTIMIZATION) do OPT_SET[k] = true end

local function check(k, v)
  if M.REFUSED[k] then binding.error("Options." .. k .. " is not supported: " .. M.REFUSED[k]) end
  if not M.TOP[k] then binding.error("Options: no option '" .. tostring(k) .. "' (tide knows: " .. names() .. ")") end
  if v == nil then return nil end
  if (k == "deterministic" or k == "experimental_deterministic" or k == "experimental_slack" or
      k == "experimental_warm_start" or k == "experimental_symbolic_checkpoint") and type(v) ~= "boolean" then
    binding.error("Options." .. k .. " must be a boolean, got " .. type(v))
  end
  if k == "experimental_optimization" then
    if type(v) ~= "table" then binding.error("Options.experimental_optimization must be a table of flags") end
    local copy = {}
    for f, b in pairs(v) do
      if not OPT_SET[f] then binding.error("Options.experimental_optimization: no flag '" .. tostring(f) .. "'") end
      if type(b) ~= "boolean" then binding.error("Options.experimental_optimization." .. f .. " must be a boolean") end
      copy[f] = b
    end
    return copy
  end
  if k == "experimental_deterministic" then return v end
  return v
end

Options.__newindex = function(self, k, v)
  v = check(k, v)
  if k == "experimental_deterministic" then k = "deterministic" end
  rawget(self, "_v")[k] = v
end

Options.__tostring = function(self)
  local parts = {}
  for k, v in pairs(rawget(self, "_v")) do parts[#parts + 1] = k .. "=" .. tostring(v) end
  table.sort(parts)
  return "tide.data.Options{" .. table.concat(parts, ", ") .. "}"
end

-- tide.data.Options{deterministic = false, ...}: unset options stay nil (the stages' defaults).
function M.Options(t)
  local o = setmetatable({ _v = {} }, Options)
  if t ~= nil then
    if type(t) ~= "table" then binding.error("Options: expected a table of options, got " .. type(t)) end
    for k, v in pairs(t) do o[k] = v end
  end
  return o
end

function M.is_options(x) return getmetatable(x) == Options end


-- a:merge(b): a's options with b's set ones over them (TF's merge: the later wins).
function Options.merge(a, b)
  local out = M.Options()
  for _, src in ipairs { a, b } do
    if src ~= nil then
      for k, v in pairs(rawget(src, "_v")) do
        if k == "experimental_optimization" then
          local cur = rawget(out, "_v")[k] or {}
          for f, x in pairs(v) do cur[f] = x end
          rawget(out, "_v")[k] = cur
        else rawget(out, "_v")[k] = v end
      end
    end
  end
  return out
end

M.merge = Options.merge

-- The set options as a plain table (for specs and printing).
function M.values(o)
  local t = {}
  for k, v in pairs(rawget(o, "_v")) do t[k] = v end
  return t
end

return M
