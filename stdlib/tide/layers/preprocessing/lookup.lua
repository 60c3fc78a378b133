-- stdlib/tide/layers/preprocessing/lookup.lua — Keras 3's IntegerLookup: a vocabulary of integers (given, read
-- from a file, or learnt by adapt) to indices and back (invert), Keras's index layout and output modes.
local binding = require "tide.binding"
local convert = require "tide.convert"
local tensor = require "tide.tensor"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local layer = require "tide.layers.layer"
local categorical = require "tide.layers.preprocessing.categorical"

local Layer, who = layer.Layer, layer.who
local fmt = string.format

local M = {}

local MODES = { int = true, one_hot = true, multi_hot = true, count = true, tf_idf = true }

-- A vocabulary argument: a list of integers, a 1-D tensor, or a file path (one integer a line).
local function read_vocabulary(self, v)
  if type(v) == "string" then
    local f, err = io.open(v, "rb")
    if not f then binding.error(fmt("%s: cannot read the vocabulary file %s: %s", who(self), v, tostring(err))) end
    local out = {}
    for line in f:lines() do
      line = line:gsub("\r$", "")
      if line ~= "" then
        local n = tonumber(line)
        if n == nil or n % 1 ~= 0 then
          f:close()
          binding.error(fmt("%s: vocabulary file %s: line %d is not an integer: %q", who(self), v, #out + 1, line))
        end
        out[#out + 1] = n
      end
    end
    f:close()
    return out
  end
  if type(v) == "cdata" then v = tensor.totable(v) end
  if type(v) ~= "table" then
    binding.error(fmt("%s: vocabulary must be a list of integers, a 1-D tensor or a file path, got %s", who(self),
      type(v)))
  end
  local seen = {}
  for i, t in ipairs(v) do
    if type(t) ~= "number" or t % 1 ~= 0 then
      binding.error(fmt("%s: vocabulary[%d] must be an integer, got %s", who(self), i, tostring(t)))
    end
    if seen[t] then binding.error(fmt("%s: the vocabulary repeats %d", who(self), t)) end
    if t == self.oov_token or t == self.mask_token then
      binding.error(fmt("%s: the vocabulary holds the %s %d", who(self),
        t == self.mask_token and "mask_token" or "oov_token", t))
    end
    seen[t] = true
  end
  return v
end

-- IntegerLookup{max_tokens, num_oov_indices=1, mask_token, oov_token=-1, vocabulary, vocabulary_dtype="int64",
-- idf_weights, invert=false, output_mode="int", sparse=false, pad_to_max_tokens=false}.
-- Indices: the mask token (if any) 0, then num_oov_indices OOV slots (an unknown x goes to floormod(x, n)),
-- then the vocabulary in order.
local IntegerLookup = Layer:extend("IntegerLookup")
M.IntegerLookup = IntegerLookup
function IntegerLookup:init(...)
  local o = self:_kwargs({ "max_tokens", "num_oov_indices", "mask_token", "oov_token", "vocabulary",
    "vocabulary_dtype", "idf_weights", "invert", "output_mode", "sparse", "pad_to_max_tokens",
    keywords = { "vocabulary_size", "oov_method", "salt" } }, ...)
  -- vocabulary_size, oov_method and salt come back in Keras's configs: the size follows from the vocabulary,
  -- and an integer OOV slot is always floormod(x, num_oov_indices) (salt is for string hashing)
  if o.oov_method ~= nil and o.oov_method ~= "floormod" then
    binding.error(fmt('%s: oov_method must be "floormod", got %s', who(self), tostring(o.oov_method)))
  end
  self.max_tokens = o.max_tokens
  self.num_oov_indices = o.num_oov_indices == nil and 1 or o.num_oov_indices
  if type(self.num_oov_indices) ~= "number" or self.num_oov_indices < 0 or self.num_oov_indices % 1 ~= 0 then
    binding.error(fmt("%s: num_oov_indices must be an integer >= 0, got %s", who(self), tostring(o.num_oov_indices)))
  end
  self.mask_token = o.mask_token
  self.oov_token = o.oov_token == nil and -1 or o.oov_token
  self.vocabulary_dtype = o.vocabulary_dtype or "int64"
  if self.vocabulary_dtype ~= "int64" then   -- Keras 3 takes only int64
    binding.error(fmt('%s: vocabulary_dtype must be "int64" (as Keras 3), got %s', who(self),
      tostring(o.vocabulary_dtype)))
  end
  self.invert = o.invert == true
  self.output_mode = o.output_mode or "int"
  if not MODES[self.output_mode] then
    binding.error(fmt('%s: output_mode must be one of "int", "one_hot", "multi_hot", "count", "tf_idf", got %s',
      who(self), tostring(self.output_mode)))
  end
  if self.invert and self.output_mode ~= "int" then
    binding.error(fmt('%s: invert = true needs output_mode "int", got "%s"', who(self), self.output_mode))
  end
  if o.sparse then binding.error(fmt("%s: sparse = true is not supported (dense outputs only)", who(self))) end
  if o.pad_to_max_tokens then
    binding.error(fmt("%s: pad_to_max_tokens = true is not supported yet", who(self)))
  end
  self.sparse, self.pad_to_max_tokens = false, false
  self.idf_weights = o.idf_weights
  self._init_vocabulary = o.vocabulary   -- the config's vocabulary is the constructor's, as Keras's
  if o.vocabulary ~= nil then self:set_vocabulary(o.vocabulary, o.idf_weights) end
end

-- The mask token holds index 0 in "int" mode only; in the encoded modes it counts for nothing (Keras).
function IntegerLookup:_mask_slot() return self.mask_token ~= nil and self.output_mode == "int" end
function IntegerLookup:_token_start()
  return (self:_mask_slot() and 1 or 0) + self.num_oov_indices
end

-- set_vocabulary(vocabulary, idf_weights): the learnt tokens (without the mask and OOV entries).
function IntegerLookup:set_vocabulary(vocabulary, idf_weights)
  local v = read_vocabulary(self, vocabulary)
  if self.max_tokens and #v + self:_token_start() > self.max_tokens then
    binding.error(fmt("%s: the vocabulary (%d tokens and %d reserved) is larger than max_tokens = %d", who(self), #v,
      self:_token_start(), self.max_tokens))
  end
  if self.output_mode == "tf_idf" then
    if idf_weights == nil then binding.error(fmt('%s: output_mode "tf_idf" needs idf_weights', who(self))) end
    if type(idf_weights) == "cdata" then idf_weights = tensor.totable(idf_weights) end
    if #idf_weights ~= #v then
      binding.error(fmt("%s: idf_weights has %d values for %d vocabulary tokens", who(self), #idf_weights, #v))
    end
  end
  self._vocab, self.idf_weights = v, idf_weights
end

-- get_vocabulary(): the index order: mask token, OOV tokens, then the learnt tokens.
function IntegerLookup:get_vocabulary()
  local out = {}
  if self:_mask_slot() then out[1] = self.mask_token end
  for _ = 1, self.num_oov_indices do out[#out + 1] = self.oov_token end
  for _, t in ipairs(self._vocab or {}) do out[#out + 1] = t end
  return out
end
function IntegerLookup:vocabulary_size() return #self:get_vocabulary() end

-- adapt(data, {steps=}): the tokens by count, most frequent first (ties: the larger token first, as
-- Keras's lexsort), at most max_tokens less the reserved slots.
function IntegerLookup:adapt(data, opts)
  local steps = type(opts) == "table" and opts.steps or nil
  local counts = {}
  categorical.each_batch(data, steps, function(b)
    local flat = tensor.totable(shape_ops.reshape(convert.tensor(b), { -1 }))
    for _, t in ipairs(flat) do
      if t ~= self.mask_token and t ~= self.oov_token then counts[t] = (counts[t] or 0) + 1 end
    end
  end)
  local tokens = {}
  for t in pairs(counts) do tokens[#tokens + 1] = t end
  table.sort(tokens, function(a, b) if counts[a] ~= counts[b] then return counts[a] > counts[b] end return a > b end)
  if self.max_tokens then
    for i = #tokens, self.max_tokens - self:_token_start() + 1, -1 do tokens[i] = nil end
  end
  if self.output_mode == "tf_idf" then
    binding.error(fmt('%s: adapt with output_mode "tf_idf" is not supported yet: pass vocabulary and idf_weights',
      who(self)))
  end
  self._vocab = tokens
end

local function int_input(self, x)
  x = convert.tensor(x)
  if not tostring(x.dtype):match("int") then
    binding.error(fmt("%s: expected integer inputs, got dtype %s", who(self), tostring(x.dtype)))
  end
  return math_ops.cast(x, self.vocabulary_dtype)
end

function IntegerLookup:call(x)
  if self._vocab == nil then
    binding.error(fmt("%s: pass vocabulary, or call adapt, before calling the layer", who(self)))
  end
  x = int_input(self, x)
  local vdt = self.vocabulary_dtype
  if self.invert then
    -- index -> token; an index past the table gives the OOV token, as Keras's default value
    local table_ = convert.tensor(self:get_vocabulary(), vdt)
    local n = self:vocabulary_size()
    local inside = math_ops.logical_and(math_ops.greater_equal(x, 0), math_ops.less(x, n))
    local safe = math_ops.where(inside, x, math_ops.mul(x, 0))
    local got = shape_ops.gather(table_, safe)
    return math_ops.where(inside, got, math_ops.add(math_ops.mul(x, 0), self.oov_token))
  end
  local ids
  local start = self:_token_start()
  local zero = math_ops.mul(x, 0)
  local oov
  if self.num_oov_indices > 0 then
    oov = math_ops.add(math_ops.floormod(x, self.num_oov_indices), self:_mask_slot() and 1 or 0)
  else
    oov = math_ops.add(zero, -1)   -- no OOV slot: see docs/tf_differences.md
  end
  if #self._vocab == 0 then
    ids = oov
  else
    local eq = math_ops.equal(shape_ops.expand_dims(x, -1), convert.tensor(self._vocab, vdt))
    local found = reduce_ops.reduce_any(eq, -1)
    local pos = math_ops.cast(reduce_ops.argmax(math_ops.cast(eq, "int32"), -1), vdt)
    ids = math_ops.where(found, math_ops.add(pos, start), oov)
  end
  if self.mask_token ~= nil then
    -- index 0 in "int" mode; -1 (no column) in the encoded ones
    ids = math_ops.where(math_ops.equal(x, self.mask_token), self:_mask_slot() and zero or math_ops.add(zero, -1), ids)
  end
  if self.output_mode == "int" then return ids end
  local depth = self:vocabulary_size()
  if self.output_mode == "tf_idf" then
    local y = categorical.encode(ids, "count", depth, self.compute_dtype)
    -- the OOV slots weigh the idf_weights' mean, as Keras (no document frequency for them)
    local w, sum = {}, 0
    for _, v in ipairs(self.idf_weights) do sum = sum + v end
    for _ = 1, start do w[#w + 1] = #self.idf_weights > 0 and sum / #self.idf_weights or 0 end
    for _, v in ipairs(self.idf_weights) do w[#w + 1] = v end
    return math_ops.mul(y, convert.tensor(w, self.compute_dtype))
  end
  -- Keras: IntegerLookup's one_hot / multi_hot / count are int64 (tf_idf the float compute dtype)
  return categorical.encode(ids, self.output_mode, depth, "int64")
end

function IntegerLookup:get_config()
  local c = Layer.get_config(self)
  c.invert, c.max_tokens, c.num_oov_indices = self.invert, self.max_tokens, self.num_oov_indices
  c.oov_token, c.mask_token, c.output_mode = self.oov_token, self.mask_token, self.output_mode
  c.sparse, c.pad_to_max_tokens, c.vocabulary_dtype = false, false, self.vocabulary_dtype
  c.idf_weights, c.vocabulary = self.idf_weights, self._init_vocabulary
  c.vocabulary_size = self._vocab and self:vocabulary_size() or nil
  c.oov_method, c.salt = "floormod", nil
  return c
end

return M
