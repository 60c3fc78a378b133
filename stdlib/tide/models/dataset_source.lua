-- stdlib/tide/models/dataset_source.lua — a tide.data.Dataset as the batches
-- fit/evaluate/predict read: each element is a batch (x), (x, y) or
-- (x, y, sample_weight), read through a prefetching pass (as Keras).
local binding = require "tide.binding"
local data = require "tide.models.data"
local dataset = require "tide.data.dataset"
require "tide.data" -- the engines

local py_dataset = require "tide.utils.py_dataset"
local random = require "tide.random"

local M = {}
-- A tide.data.Dataset or a keras.utils.PyDataset (Sequence).
function M.is_dataset(x) return dataset.is_dataset(x) or py_dataset.is_py_dataset(x) end

local Source = {}
Source.__index = Source

-- source(ds, what, y, opts): refuses what Keras refuses with a dataset
-- (y, batch_size, validation_split: the dataset holds and batches them).
local PySource = {}
PySource.__index = PySource

function M.source(ds, what, y, opts)
  if y ~= nil then
    binding.error(what .. ": y must be nil when x is a dataset (its elements hold the targets: {x, y})")
  end
  local py = py_dataset.is_py_dataset(ds)
  for _, k in ipairs { "batch_size", "validation_split", "sample_weight", "class_weight", "shuffle" } do
    if py and k == "shuffle" then -- a PyDataset's batch order is shuffled each epoch, as Keras's adapter
    elseif opts and opts[k] ~= nil and opts[k] ~= false and not (k == "validation_split" and opts[k] == 0) then
      binding.error(string.format("%s: %s cannot be given with a dataset (batch, weight and shuffle the dataset " ..
        "itself)", what, k))
    end
  end
  if py then
    -- read in order; fit sets shuffle (its shuffle option, true by default)
    return setmetatable({ ds = ds, what = what, shuffle = false, order = nil, at = 0, begun = false }, PySource)
  end
  return setmetatable({ ds = ds, what = what, it = nil, card = ds:cardinality() }, Source)
end

-- A PyDataset's batches: __getitem__(i) for i in 0 .. num_batches - 1 (shuffled each pass for fit);
-- on_epoch_begin before a pass, on_epoch_end after it, as Keras's adapter calls them.
function PySource:_count()
  local n = self.ds:num_batches()
  if n ~= nil and (type(n) ~= "number" or n < 0 or n ~= math.floor(n)) then
    binding.error(string.format("%s: the PyDataset's __len__()/num_batches() must be a non-negative integer, got %s",
      self.what, tostring(n)))
  end
  return n
end

function PySource:restart()
  if self.begun then self.ds:on_epoch_end() end
  self.begun = true
  self.ds:on_epoch_begin()
  self.n = self:_count()
  self.at = 0
  self.order = nil
  if self.shuffle and self.n and self.n > 1 then self.order = random.permutation(self.n):totable() end
end

function PySource:next()
  if not self.begun then self:restart() end
  if self.n ~= nil and self.at >= self.n then return nil end
  local i = self.order and self.order[self.at + 1] or self.at
  self.at = self.at + 1
  local x, y, w = self.ds:__getitem__(i)
  if x == nil then
    if self.n == nil then return nil end -- an endless one that ends
    binding.error(string.format("%s: the PyDataset's __getitem__(%d) returned nothing", self.what, i))
  end
  local xb = data.flatten(x, self.what .. ": x")
  local yb = y ~= nil and data.flatten(y, self.what .. ": y") or nil
  return xb, yb, w
end

-- The pass is over: on_epoch_end (fit's next epoch, evaluate's or predict's end).
function PySource:finish()
  if self.begun then
    self.ds:on_epoch_end()
    self.begun = false
  end
end

function PySource:steps(given, name)
  if given then return given end
  local n = self:_count()
  if n == nil then
    binding.error(string.format("%s: the PyDataset's num_batches() is nil (endless); give %s", self.what, name))
  end
  return n
end

-- Start a new pass (the next epoch).
function Source:restart() self.it = self.ds:iter() end

-- The next batch as flat groups (xb, yb, wb tensor), or nil when the pass ends.
function Source:next()
  if self.it == nil then self:restart() end
  local x, y, w = self.it()
  if x == nil then
    self.it = nil
    return nil
  end
  local xb = data.flatten(x, self.what .. ": x")
  local yb = y ~= nil and data.flatten(y, self.what .. ": y") or nil
  return xb, yb, w
end

-- Batches per pass (nil when unknown); an infinite dataset needs steps.
function Source:steps(given, name)
  if given then return given end
  if self.card == dataset.INFINITE_CARDINALITY then
    binding.error(string.format("%s: the dataset is infinite (repeat_() with no count); give %s", self.what, name))
  end
  if self.card >= 0 then return self.card end
  return nil
end

return M
