-- stdlib/tide/data/stages/options.lua — ds:with_options(options) and ds:options() (tf.data.Options, in
-- data/options.lua): the options of a pipeline, merged from its inputs, and the ones tide honours applied.
local binding = require "tide.binding"
local options = require "tide.data.options"
local stage = require "tide.data.stage"

-- Fields that hold a node's built C description or engine state: a copy starts without them.
local CACHES = { _c = true, _c_ok = true, _auto_prefetch = true }

-- A copy of the pipeline under ds (through input and inputs) with `deterministic` given to the map and
-- interleave stages that were left at their default.
local function copy(ds, det, memo)
  if memo[ds] then return memo[ds] end
  local c = setmetatable({}, getmetatable(ds))
  for k, v in pairs(ds) do
    if not CACHES[k] then c[k] = v end
  end
  memo[ds] = c
  if ds.input then c.input = copy(ds.input, det, memo) end
  if ds.inputs then
    local l = {}
    for i, d in ipairs(ds.inputs) do l[i] = copy(d, det, memo) end
    c.inputs = l
  end
  if det ~= nil and (c.kind == "map" or (c.kind == "interleave" and c.what == "interleave")) and not c.det_given then
    c.deterministic = det
  end
  return c
end

-- ds:options(): the options set on ds and its inputs, merged (the outer ones win, as TF's).
local function get_options(self)
  local function walk(ds, seen)
    if seen[ds] then return nil end
    seen[ds] = true
    local merged
    if ds.input then merged = walk(ds.input, seen) end
    for _, d in ipairs(ds.inputs or {}) do merged = options.merge(merged or options.Options(), walk(d, seen)) end
    local own = rawget(ds, "_options")
    if own then merged = options.merge(merged or options.Options(), own) end
    return merged
  end
  return walk(self, {}) or options.Options()
end

-- ds:with_options(options): a dataset with options (a tide.data.Options or a table of them) set over ds's.
local function with_options(self, opts)
  if opts == nil then binding.error("with_options: expected a tide.data.Options (or a table of options)") end
  if not options.is_options(opts) then
    if type(opts) ~= "table" then binding.error("with_options: expected a tide.data.Options, got " .. type(opts)) end
    opts = options.Options(opts)
  end
  local merged = options.merge(get_options(self), opts)
  local out = copy(self, merged.deterministic, {})
  out._options = merged
  return out
end

return { methods = { options = get_options, with_options = with_options } }
