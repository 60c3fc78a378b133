-- stdlib/tide/utils/py_dataset.lua — keras.utils.PyDataset (and Sequence, its Keras 2 name): a user's class that
-- gives batches by index (__len__, __getitem__, on_epoch_begin/on_epoch_end), which fit/evaluate/predict read.
local binding = require "tide.binding"
local class = require "tide.class"

local fmt = string.format
local M = {}

local PyDataset = class("PyDataset")
M.PyDataset = PyDataset

-- PyDataset:extend(name): a subclass; define init(...) (the constructor's body), __len__() (the number of
-- batches), __getitem__(i) (batch i, 0-based, returned as x or x, y or x, y, sample_weight), and optionally
-- on_epoch_begin() and on_epoch_end(). Sub:extend(name) subclasses it again.
function PyDataset.extend(parent, name)
  if type(name) ~= "string" or name == "" then
    binding.error("PyDataset:extend: the class needs a name, e.g. tide.utils.PyDataset:extend(\"MySequence\")")
  end
  local cls = class(name, parent)
  cls.__init = parent.__init
  return cls
end

-- The constructor: Keras's defaults (workers=1, use_multiprocessing=false, max_queue_size=10), then the
-- subclass's init with the constructor's arguments.
function PyDataset:__init(...)
  rawset(self, "workers", 1)
  rawset(self, "use_multiprocessing", false)
  rawset(self, "max_queue_size", 10)
  local init = getmetatable(self).init
  if init and init ~= PyDataset.init then init(self, ...) end
end

-- PyDataset.init(self, {workers=1, use_multiprocessing=false, max_queue_size=10}): Keras's super().__init__.
-- tide reads the batches on the caller's thread: workers and use_multiprocessing are kept but not used.
function PyDataset:init(opts)
  opts = opts or {}
  if type(opts) ~= "table" then binding.error(fmt("PyDataset: options must be a table, got %s", type(opts))) end
  for k, v in pairs(opts) do
    if k == "workers" or k == "max_queue_size" then
      if type(v) ~= "number" or v < 1 or v ~= math.floor(v) then
        binding.error(fmt("PyDataset: %s must be a positive integer, got %s", k, tostring(v)))
      end
    elseif k == "use_multiprocessing" then
      if type(v) ~= "boolean" then binding.error(fmt("PyDataset: use_multiprocessing must be a boolean, got %s", type(v))) end
    else
      binding.error(fmt("PyDataset: unknown option '%s' (expected: workers, use_multiprocessing, max_queue_size)",
        tostring(k)))
    end
    rawset(self, k, v)
  end
end

-- num_batches(): the batches per epoch, __len__() by default; a subclass may return nil for an endless one.
function PyDataset:num_batches()
  if type(self.__len__) ~= "function" then
    binding.error(fmt("%s: a PyDataset needs __len__() (its number of batches) or num_batches()",
      getmetatable(self).__name))
  end
  return self:__len__()
end

function PyDataset:__getitem__(i)
  binding.error(fmt("%s: a PyDataset needs __getitem__(i), giving batch i (0-based)", getmetatable(self).__name))
end

function PyDataset:on_epoch_begin() end
function PyDataset:on_epoch_end() end

-- True for an instance of PyDataset or of a subclass.
function M.is_py_dataset(x) return class.is_instance(x, PyDataset) end

return M
