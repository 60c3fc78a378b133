-- stdlib/tide/data/stages/sampling.lua — Dataset.sample_from_datasets and
-- choose_from_datasets (TF 2.21's directed interleave), Lua engine only.
--
-- sample_from_datasets draws with tide's Philox stream (its order is not TF's;
-- the proportions, the seed's determinism and stop_on_empty_dataset are).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local stage = require "tide.data.stage"

local ffi, C = binding.ffi, binding.C
local istensor = binding.istensor
local UNKNOWN, INFINITE = stage.UNKNOWN, stage.INFINITE

-- The datasets (a non-empty Lua list), checked to have one structure; the
-- element's template and specs (dims that differ: None) and the cardinality
-- (as TF's DirectedInterleave: infinite when one input is, else unknown).
local function inputs(what, datasets)
  if type(datasets) ~= "table" or stage.is_dataset(datasets) or istensor(datasets) or #datasets == 0 then
    binding.error(string.format("%s: datasets must be a non-empty Lua list of tide.data.Datasets, got %s", what,
      stage.is_dataset(datasets) and "one Dataset" or type(datasets)))
  end
  local first
  local template, specs, card = nil, nil, UNKNOWN
  for i = 1, #datasets do
    local d = datasets[i]
    if not stage.is_dataset(d) then
      binding.error(string.format("%s: datasets[%d] is %s, not a tide.data.Dataset", what, i,
        istensor(d) and "a tensor" or type(d)))
    end
    stage.no_datasets(what, d)
    if first == nil then
      first, template, specs = d, d.template, {}
      for k, s in ipairs(d.specs) do specs[k] = s end
    else
      if not structure.same(template, d.template) then
        binding.error(string.format("%s: datasets[%d]'s elements have a different structure than datasets[1]'s",
          what, i))
      end
      for k, s in ipairs(d.specs) do specs[k] = structure.common_spec(specs[k], s, what) end
      template = structure.common_template(template, d.template)
    end
    if d:cardinality() == INFINITE then card = INFINITE end
  end
  return template, specs, card
end

local flag = stage.flag

-- Dataset.sample_from_datasets(datasets, {weights=, seed=, stop_on_empty_dataset=false,
-- rerandomize_each_iteration=false}): each element from a dataset drawn at
-- random with the given weights (uniform by default). An exhausted dataset
-- is dropped from the draw, or with stop_on_empty_dataset ends the whole.
-- One dataset is returned as it is (as TF).
local function sample_from_datasets(datasets, opts)
  local what = "sample_from_datasets"
  opts = stage.options(what, { "weights", "seed", "stop_on_empty_dataset", "rerandomize_each_iteration" }, opts)
  local template, specs, card = inputs(what, datasets)
  local n = #datasets
  local weights = opts.weights
  local stop = flag(what, "stop_on_empty_dataset", opts.stop_on_empty_dataset, false)
  local rerandomize = flag(what, "rerandomize_each_iteration", opts.rerandomize_each_iteration, false)
  if stage.is_dataset(weights) then -- TF: each draw takes the next element's weights; their end ends the whole
    local ws = weights.specs[1]
    if #weights.specs ~= 1 or weights.template.kind ~= "tensor" or structure.is_dataset_spec(ws) or
      (ws.dtype ~= "float32" and ws.dtype ~= "float64") or ws.shape == nil or #ws.shape ~= 1 or
      (type(ws.shape[1]) == "number" and ws.shape[1] ~= n) then -- None: checked per element
      binding.error(string.format("%s: a weights dataset's elements must be float32 or float64 vectors of %d " ..
        "weights (one per dataset), got %s", what, n, #weights.specs == 1 and tostring(ws) or
        (#weights.specs .. " components")))
    end
    stage.no_datasets(what, weights)
    local list = {}
    for i = 1, n do list[i] = datasets[i] end
    -- finite weights end the whole; infinite ones leave the inputs' rule
    if weights:cardinality() ~= INFINITE then card = UNKNOWN end
    return stage.new { kind = "sample_from_datasets", inputs = list, weights_dataset = weights,
      seed = stage.draw_seed(opts.seed, what), stop = stop, rerandomize = rerandomize, passes = 0, template = template,
      specs = specs, card = card }
  end
  if istensor(weights) then
    if weights.ndim ~= 1 then
      binding.error(string.format("%s: weights must be a 1-D tensor, got shape %s", what, tostring(weights.shape)))
    end
    weights = weights:totable()
  end
  if weights == nil then
    weights = {}
    for i = 1, n do weights[i] = 1 end
  elseif type(weights) ~= "table" then
    binding.error(what .. ": weights must be a Lua list of numbers or a 1-D tensor, got " .. type(weights))
  end
  if #weights ~= n then
    binding.error(string.format("%s: weights has %d entries but there are %d datasets", what, #weights, n))
  end
  local total = 0
  for i = 1, n do
    local w = weights[i]
    if type(w) ~= "number" or w ~= w or w < 0 or w == math.huge then
      binding.error(string.format("%s: weights[%d] must be a finite number >= 0, got %s", what, i, tostring(w)))
    end
    total = total + w
  end
  if total <= 0 then binding.error(what .. ": the weights are all 0; at least one must be positive") end
  if n == 1 then return datasets[1] end
  local list = {}
  for i = 1, n do list[i] = datasets[i] end
  return stage.new { kind = "sample_from_datasets", inputs = list, weights = { unpack(weights, 1, n) },
    seed = stage.draw_seed(opts.seed, what), stop = stop, rerandomize = rerandomize, passes = 0, template = template,
    specs = specs, card = card }
end

-- Dataset.choose_from_datasets(datasets, choice_dataset, {stop_on_empty_dataset=true}):
-- element i from datasets[c + 1], c the choice dataset's i-th element (an
-- int64 scalar, 0-based as TF's). A choice of an exhausted dataset ends the
-- whole, or with stop_on_empty_dataset = false is skipped.
local function choose_from_datasets(datasets, choice, opts)
  local what = "choose_from_datasets"
  opts = stage.options(what, { "stop_on_empty_dataset" }, opts)
  local template, specs, card = inputs(what, datasets)
  if not stage.is_dataset(choice) then
    binding.error(string.format("%s: choice_dataset must be a tide.data.Dataset, got %s", what,
      istensor(choice) and "a tensor" or type(choice)))
  end
  local cs = choice.specs[1]
  if #choice.specs ~= 1 or choice.template.kind ~= "tensor" or structure.is_dataset_spec(cs) or cs.dtype ~= "int64"
    or cs.shape == nil or #cs.shape ~= 0 then
    binding.error(string.format("%s: choice_dataset's elements must be int64 scalars (as TF's), got %s", what,
      #choice.specs == 1 and tostring(cs) or (#choice.specs .. " components")))
  end
  local stop = flag(what, "stop_on_empty_dataset", opts.stop_on_empty_dataset, true)
  local list = {}
  for i = 1, #datasets do list[i] = datasets[i] end
  return stage.new { kind = "choose_from_datasets", inputs = list, choice = choice, stop = stop,
    template = template, specs = specs, card = card }
end

-- Open passes over every input, lazily: nextf_of(i) gives input i's pass.
local function input_passes(ds, open)
  local passes = {}
  local function nextf_of(i)
    local p = passes[i]
    if not p then
      local f, c = open(ds.inputs[i])
      p = { nextf = f, close = c }
      passes[i] = p
    end
    return p
  end
  local function close_all()
    for _, p in pairs(passes) do
      if p.close then p.close(); p.close = nil end
    end
  end
  return nextf_of, close_all
end

local sample = {}

function sample.lua(ds, open)
  local pass = ds.passes
  ds.passes = ds.passes + 1
  local key = C.tide_random_derive_key(ds.seed, ds.rerandomize and pass or 0)
  local counter = 0ULL
  local r = ffi.new("uint32_t[4]")
  local weights, live = {}, 0
  for i, w in ipairs(ds.weights or {}) do
    weights[i] = w
    if w > 0 then live = live + w end
  end
  local nextf_of, close_inputs = input_passes(ds, open)
  local done = false
  -- Weights from a dataset: each draw takes its next element (a dataset
  -- already exhausted weighs 0 in it; an element whose weights are then all
  -- 0 is passed over, as TF's redraw passes over an exhausted choice).
  local next_weights, close_weights
  if ds.weights_dataset then next_weights, close_weights = open(ds.weights_dataset) end
  local exhausted, n = {}, #ds.inputs
  local function close_all()
    if close_weights then close_weights(); close_weights = nil end
    close_inputs()
  end
  local function draw_weights()
    while true do
      local flat = next_weights()
      if flat == nil then return false end
      local v = flat[1]:totable()
      if #v ~= n then
        binding.error(string.format("sample_from_datasets: a weights element has %d weights but there are %d " ..
          "datasets", #v, n))
      end
      live = 0
      for i = 1, n do
        local w = v[i]
        if w ~= w or w < 0 or w == math.huge then
          binding.error(string.format("sample_from_datasets: a weights element has %s at position %d; weights " ..
            "must be finite numbers >= 0", tostring(w), i - 1))
        end
        weights[i] = exhausted[i] and 0 or w
        live = live + weights[i]
      end
      if live > 0 then return true end
      local any = false
      for i = 1, n do if not exhausted[i] then any = true end end
      if not any then return false end
    end
  end
  -- A uniform draw in [0, total) from 53 bits of the stream.
  local function uniform(total)
    C.tide_philox4x32(key, counter, 0, r)
    counter = counter + 1
    return (tonumber(r[0]) * 2097152 + tonumber(r[1]) % 2097152) / 9007199254740992 * total
  end
  return function()
    while not done do
      if next_weights and not draw_weights() then done = true; break end
      if live <= 0 then done = true; break end -- every dataset with weight is exhausted
      local u, pick = uniform(live), nil
      for i, w in ipairs(weights) do
        if w > 0 then
          pick = i
          if u < w then break end
          u = u - w
        end
      end
      local p = nextf_of(pick)
      local flat = p.nextf()
      if flat ~= nil then return flat end
      if p.close then p.close(); p.close = nil end
      if ds.stop then done = true; break end
      exhausted[pick] = true
      live = live - weights[pick] -- the rest are drawn in proportion to their weights, as TF's redraw gives
      weights[pick] = 0
    end
    close_all()
    return nil
  end, close_all
end

local choose = {}

function choose.lua(ds, open)
  local choices, close_choices = open(ds.choice)
  local nextf_of, close_inputs = input_passes(ds, open)
  local n = #ds.inputs
  local exhausted, left, done = {}, n, false
  local function close_all()
    if close_choices then close_choices(); close_choices = nil end
    close_inputs()
  end
  return function()
    while not done do
      local c = choices()
      if c == nil then done = true; break end
      local i = tonumber(c[1]:item())
      if i < 0 or i >= n then
        binding.error(string.format("choose_from_datasets: choice %d is out of range: there are %d datasets " ..
          "(choices are 0-based)", i, n))
      end
      if not exhausted[i] then
        local p = nextf_of(i + 1)
        local flat = p.nextf()
        if flat ~= nil then return flat end
        if p.close then p.close(); p.close = nil end
        exhausted[i], left = true, left - 1
      end
      if ds.stop or left == 0 then done = true; break end
    end
    close_all()
    return nil
  end, close_all
end

return {
  methods = { sample_from_datasets = sample_from_datasets, choose_from_datasets = choose_from_datasets },
  stages = { sample_from_datasets = sample, choose_from_datasets = choose },
}
