-- stdlib/tide/models/dataset_source.lua — a tide.data.Dataset as the batches
-- fit/evaluate/predict read: each element is a batch (x), (x, y) or
-- (x, y, sample_weight), read through a prefetching pass (as Keras).
local binding = require "tide.binding"
local data = require "tide.models.data"
local dataset = require "tide.data.dataset"
require "tide.data" -- the engines

local M = {}
M.is_dataset = dataset.is_dataset

local Source = {}
Source.__index = Source

-- source(ds, what, y, opts): refuses what Keras refuses with a dataset
-- (y, batch_size, validation_split: the dataset holds and batches them).
function M.source(ds, what, y, opts)
  if y ~= nil then
    binding.error(what .. ": y must be nil when x is a dataset (its elements hold the targets: {x, y})")
  end
  for _, k in ipairs { "batch_size", "validation_split", "sample_weight", "class_weight", "shuffle" } do
    if opts and opts[k] ~= nil and opts[k] ~= false and not (k == "validation_split" and opts[k] == 0) then
      binding.error(string.format("%s: %s cannot be given with a dataset (batch, weight and shuffle the dataset " ..
        "itself)", what, k))
    end
  end
  return setmetatable({ ds = ds, what = what, it = nil, card = ds:cardinality() }, Source)
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
