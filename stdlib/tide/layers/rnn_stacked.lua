-- stdlib/tide/layers/rnn_stacked.lua — Keras 3's StackedRNNCells: several cells as one, each step's output
-- the next cell's input; its states are the cells' states in order, flat (B = batch, F = features).
local binding = require "tide.binding"
local layer = require "tide.layers.layer"

local Layer, who = layer.Layer, layer.who
local fmt = string.format

local M = {}

local StackedRNNCells = Layer:extend("StackedRNNCells")
M.StackedRNNCells = StackedRNNCells

local function sizes_of(cell)
  local ss = cell.state_size
  if type(ss) == "number" then return { ss } end
  if type(ss) == "table" then return ss end
  binding.error(fmt("StackedRNNCells: the cell %s has no state_size (a number, or a list of numbers)", who(cell)))
end

-- StackedRNNCells{{cell, cell, ...}} or StackedRNNCells({cell, ...}).
function StackedRNNCells:init(opts)
  local list = opts
  if type(opts) == "table" and not layer.is_layer(opts[1]) and type(opts[1]) == "table" then list = opts[1] end
  if type(list) ~= "table" or #list == 0 then
    binding.error(fmt("%s: expects a non-empty list of cells, e.g. StackedRNNCells{{LSTMCell{8}, LSTMCell{4}}}",
      who(self)))
  end
  local cells, sizes, counts = {}, {}, {}
  for i, c in ipairs(list) do
    if not layer.is_layer(c) then
      binding.error(fmt("%s: entry %d of the list is not a cell layer (got %s)", who(self), i, type(c)))
    end
    cells[i] = c
    local s = sizes_of(c)
    counts[i] = #s
    for _, n in ipairs(s) do sizes[#sizes + 1] = n end
  end
  self.cells = cells
  self.state_size = sizes
  rawset(self, "_state_counts", counts)
  local last = cells[#cells]
  self.output_size = last.output_size or sizes_of(last)[1]
end

-- Builds each cell on the previous one's output size.
function StackedRNNCells:build(input_shape)
  local shape = { input_shape[1], input_shape[#input_shape] }
  for _, c in ipairs(self.cells) do
    if not rawget(c, "built") then
      c:build(shape)
      rawset(c, "built", true)
    end
    shape = { shape[1], c.output_size or sizes_of(c)[1] }
  end
end

-- One step: x [B, F] through every cell; states the cells' states in order. Returns the last output and
-- the new states, flat.
function StackedRNNCells:call(x, opts)
  opts = opts or {}
  local states = opts.states
  if type(states) ~= "table" or getmetatable(states) ~= nil then
    binding.error(fmt("%s: call as cell(x, {states = {...}}) with the cells' states in order", who(self)))
  end
  if #states ~= #self.state_size then
    binding.error(fmt("%s: expected %d state tensor(s) (the cells' states in order), got %d", who(self),
      #self.state_size, #states))
  end
  if not rawget(self, "built") then
    self:build({ x.shape[1], x.shape[#x.shape] })
    rawset(self, "built", true)
  end
  local out, at = {}, 1
  for i, c in ipairs(self.cells) do
    local mine = {}
    for k = 1, self._state_counts[i] do mine[k] = states[at + k - 1] end
    at = at + self._state_counts[i]
    local new
    if c.step and c.input_projection then -- a built-in cell: its own call builds and checks
      x, new = c(x, { states = mine, training = opts.training })
    else
      x, new = c:call(x, { states = mine, training = opts.training })
    end
    if type(new) ~= "table" or getmetatable(new) ~= nil then new = { new } end
    for _, s in ipairs(new) do out[#out + 1] = s end
  end
  return x, out
end

function StackedRNNCells:get_initial_state(batch_size)
  local out = {}
  for _, c in ipairs(self.cells) do
    if not c.get_initial_state then
      binding.error(fmt("%s: the cell %s has no get_initial_state", who(self), who(c)))
    end
    for _, s in ipairs(c:get_initial_state(batch_size)) do out[#out + 1] = s end
  end
  return out
end

function StackedRNNCells:get_config()
  local c = Layer.get_config(self)
  local specs = {}
  for i, cell in ipairs(self.cells) do specs[i] = layer.serialize(cell) end
  c.cells = specs
  return c
end

function StackedRNNCells.from_config(cls, config, custom_objects)
  if type(config) ~= "table" or type(config.cells) ~= "table" then
    binding.error("StackedRNNCells.from_config: the config must hold cells, a list of serialized cells")
  end
  local cells = {}
  for i, spec in ipairs(config.cells) do cells[i] = layer.deserialize(spec, custom_objects) end
  return cls { cells, name = config.name }
end

return M
