-- stdlib/tide/data/stages/window.lua — ds:window (a dataset of datasets, as
-- TF 2.21's) and the in-memory "elements" datasets each window is (Lua engine only).
--
-- A window dataset's element has the input's structure with a Dataset for
-- each component (its element_spec a tide.data DatasetSpec per component);
-- flat_map, interleave, take/skip/repeat/shuffle/zip/enumerate and iteration
-- carry them, and stages that stack or store tensors refuse them by name.
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local stage = require "tide.data.stage"

-- ds:window(size, {shift=size, stride=1, drop_remainder=false}): windows of
-- `size` elements `stride` apart, one starting every `shift` elements; the
-- last ones may be shorter unless drop_remainder.
local function window(self, size, opts)
  size = stage.count_arg("window", "size", size, 1)
  opts = stage.options("window", { "shift", "stride", "drop_remainder" }, opts)
  local shift = stage.count_arg("window", "shift", opts.shift or size, 1)
  local stride = stage.count_arg("window", "stride", opts.stride or 1, 1)
  local drop = stage.flag("window", "drop_remainder", opts.drop_remainder, false)
  if structure.has_sparse(self.template) then
    binding.error("window: the element holds a SparseTensor; window takes dense tensors only, for now")
  end
  if structure.holds_datasets(self.specs) then
    binding.error("window: the elements are already datasets (from window); flat_map them first")
  end
  local ds = stage.derive(self, "window", { size = size, shift = shift, stride = stride, drop = drop })
  local specs = {}
  for i, s in ipairs(self.specs) do specs[i] = structure.DatasetSpec(s) end
  ds.specs = specs
  local n = self:cardinality() -- TF's WindowDataset cardinality
  if n < 0 then ds.card = n
  elseif drop then
    local rest = n - ((size - 1) * stride + 1)
    ds.card = rest < 0 and 0 or math.floor(rest / shift) + 1
  else
    ds.card = math.floor(n / shift) + (n % shift == 0 and 0 or 1)
  end
  return ds
end

-- A dataset of the given elements (flat lists of components) of that
-- template and specs (default: one component of spec `specs`).
local function elements(list, specs, template)
  if template == nil then template, specs = { kind = "tensor", index = 1 }, { specs } end
  return stage.new { kind = "elements", elems = list, template = template, specs = specs, card = #list }
end

local elements_stage = {}

function elements_stage.lua(ds)
  local i, elems = 0, ds.elems
  return function()
    i = i + 1
    return elems[i]
  end
end

-- TF's WindowDataset iterator: a buffer of the (size - 1) * stride + 1
-- elements a window spans, the window every stride-th of them, then shift
-- elements dropped (reading past the buffer when shift is larger).
local window_stage = {}

function window_stage.lua(ds, open)
  local nextf, close = open(ds.input)
  local span = (ds.size - 1) * ds.stride + 1
  local buffer, input_done, skip = {}, false, 0
  local nc = #ds.input.specs
  return function()
    while skip > 0 and not input_done do -- a shift past the last window's span
      if nextf() == nil then input_done = true end
      skip = skip - 1
    end
    while #buffer < span and not input_done do
      local flat = nextf()
      if flat == nil then input_done = true else buffer[#buffer + 1] = flat end
    end
    if #buffer == 0 or (ds.drop and #buffer < span) then return nil end
    local per = {}
    for k = 1, nc do per[k] = {} end
    for j = 1, #buffer, ds.stride do
      for k = 1, nc do per[k][#per[k] + 1] = { buffer[j][k] } end
    end
    local out = {}
    for k = 1, nc do out[k] = elements(per[k], ds.input.specs[k]) end
    if ds.shift >= #buffer then
      skip = ds.shift - #buffer
      buffer = {}
    else
      local rest = {}
      for j = ds.shift + 1, #buffer do rest[#rest + 1] = buffer[j] end
      buffer = rest
    end
    return out
  end, close
end

return {
  methods = { window = window },
  stages = { window = window_stage, elements = elements_stage },
  elements = elements,
}
