-- stdlib/tide/layers/preprocessing/text_vectorization.lua — Keras 3's TextVectorization: standardize, split,
-- ngrams, then a StringLookup (mask "", OOV "[UNK]") in int/multi_hot/count/tf_idf mode; adapt learns the vocabulary.
local binding = require "tide.binding"
local convert = require "tide.convert"
local tensor = require "tide.tensor"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local index_ops = require "tide.ops.index"
local strings = require "tide.ops.strings"
local lookup = require "tide.ops.lookup"
local layer = require "tide.layers.layer"
local categorical = require "tide.layers.preprocessing.categorical"
local lookup_layers = require "tide.layers.preprocessing.lookup"
local ngram_ops = require "tide.layers.preprocessing.text_ngrams"
local None = require("tide.tensor_shape").None

local Layer, who = layer.Layer, layer.who
local fmt = string.format

local M = {}

-- Keras's punctuation class (string.punctuation), removed by "strip_punctuation".
local PUNCTUATION = [=[[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~']]=]
local STANDARDIZE = { lower_and_strip_punctuation = true, lower = true, strip_punctuation = true }
local SPLIT = { whitespace = true, character = true }
local MODES = { int = true, one_hot = true, multi_hot = true, count = true, tf_idf = true }

-- TextVectorization{max_tokens, standardize="lower_and_strip_punctuation", split="whitespace", ngrams,
-- output_mode="int", output_sequence_length, pad_to_max_tokens=false, vocabulary, idf_weights, sparse=false,
-- ragged=false, encoding="utf-8"} (Keras 3's positional order).
local TextVectorization = Layer:extend("TextVectorization")
M.TextVectorization = TextVectorization
function TextVectorization:init(...)
  local o = self:_kwargs({ "max_tokens", "standardize", "split", "ngrams", "output_mode", "output_sequence_length",
    "pad_to_max_tokens", "vocabulary", "idf_weights", "sparse", "ragged", "encoding",
    keywords = { "vocabulary_size" } }, ...)
  -- none is false or tide.None (Keras's None; nil takes the default)
  local std = o.standardize
  if std == nil then std = "lower_and_strip_punctuation" end
  if std == false or std == None then std = nil end
  if std ~= nil and type(std) ~= "function" and not STANDARDIZE[std] then
    binding.error(fmt('%s: standardize must be "lower_and_strip_punctuation", "lower", "strip_punctuation", ' ..
      "false (none) or a function, got %s", who(self), tostring(std)))
  end
  local split = o.split
  if split == nil then split = "whitespace" end
  if split == false or split == None then split = nil end
  if split ~= nil and type(split) ~= "function" and not SPLIT[split] then
    binding.error(fmt('%s: split must be "whitespace", "character", false (none) or a function, got %s', who(self),
      tostring(split)))
  end
  self.standardize, self.split = std, split
  if o.ngrams == None then o.ngrams = nil end   -- a config's null
  self.ngrams = ngram_ops.widths(o.ngrams, who(self))
  self._ngrams_arg = o.ngrams
  local mode = o.output_mode or "int"
  if mode == "binary" then mode = "multi_hot" end
  if mode == "tf-idf" then mode = "tf_idf" end
  if not MODES[mode] then
    binding.error(fmt('%s: output_mode must be one of "int", "one_hot", "multi_hot", "count", "tf_idf", got %s',
      who(self), tostring(o.output_mode)))
  end
  self.output_mode = mode
  local osl = o.output_sequence_length
  if osl ~= nil then
    if mode ~= "int" then
      binding.error(fmt('%s: output_sequence_length must not be set if output_mode is not "int" (got "%s")',
        who(self), mode))
    end
    if type(osl) ~= "number" or osl % 1 ~= 0 or osl < 1 then
      binding.error(fmt("%s: output_sequence_length must be nil or an integer >= 1, got %s", who(self), tostring(osl)))
    end
  end
  self.output_sequence_length = osl
  if o.sparse then binding.error(fmt("%s: sparse = true is not supported (dense outputs only)", who(self))) end
  if o.ragged and mode ~= "int" then
    binding.error(fmt('%s: ragged = true needs output_mode "int", got "%s"', who(self), mode))
  end
  self.ragged = o.ragged == true
  self.encoding = o.encoding or "utf-8"
  if self.encoding ~= "utf-8" then
    binding.error(fmt('%s: encoding must be "utf-8", got %s', who(self), tostring(o.encoding)))
  end
  if o.idf_weights ~= nil and mode ~= "tf_idf" then
    binding.error(fmt('%s: idf_weights needs output_mode "tf_idf", got "%s"', who(self), mode))
  end
  self.max_tokens, self.pad_to_max_tokens = o.max_tokens, o.pad_to_max_tokens == true
  -- Keras's inner StringLookup: "" masks (the padding of int mode), "[UNK]" the one OOV slot
  self._lookup_layer = lookup_layers.StringLookup { max_tokens = o.max_tokens, mask_token = "", output_mode = mode,
    pad_to_max_tokens = self.pad_to_max_tokens, name = (self.name or "text_vectorization") .. "_lookup" }
  self._init_vocabulary = lookup_layers.tokens_list(o.vocabulary)
  self._init_idf = lookup_layers.tokens_list(o.idf_weights)
  if o.vocabulary ~= nil then
    self:set_vocabulary(o.vocabulary, o.idf_weights)
    -- given, not learnt: the config carries it and no asset is written (Keras's inner lookup is built with it)
    self._lookup_layer._init_vocabulary = self._init_vocabulary
  end
end

-- The strings' tokens before the lookup: standardized, split into a RaggedTensor (or kept whole when split is
-- none), with ngrams. Returns (tokens, row_splits) where row_splits is nil for unsplit input.
function TextVectorization:_preprocess(x)
  x = convert.tensor(x)
  if tostring(x.dtype) ~= "string" then
    binding.error(fmt("%s: expected string inputs, got dtype %s", who(self), tostring(x.dtype)))
  end
  local std = self.standardize
  if std == "lower" or std == "lower_and_strip_punctuation" then x = strings.lower(x) end
  if std == "strip_punctuation" or std == "lower_and_strip_punctuation" then
    x = strings.regex_replace(x, PUNCTUATION, "")
  end
  if type(std) == "function" then x = convert.tensor(std(x)) end
  if self.split == nil then
    if self.ngrams then binding.error(fmt("%s: ngrams needs a split", who(self))) end
    return x, nil
  end
  if x.ndim > 1 then
    if x.ndim ~= 2 or x.shape[2] ~= 1 then
      binding.error(fmt("%s: to split strings the input rank must be 1, or the last dim 1; got shape %s", who(self),
        tostring(x.shape)))
    end
    x = shape_ops.squeeze(x, { 1 })
  end
  local values, splits
  if self.split == "whitespace" then
    local r = strings.split(x)
    if x.ndim == 0 then values, splits = r, nil else values, splits = r.values, r.row_splits end
  elseif self.split == "character" then
    values, splits = ngram_ops.characters(x)
  else
    local r = self.split(x)
    if type(r) == "table" and r.values ~= nil then values, splits = r.values, r.row_splits
    else values, splits = convert.tensor(r), nil end
  end
  if self.ngrams then
    if splits == nil then splits = convert.tensor({ 0, tonumber(values.shape[1]) or 0 }, "int64") end
    values, splits = ngram_ops.ngrams(values, splits, self.ngrams)
  end
  return values, splits
end

function TextVectorization:call(x)
  if self._lookup_layer._vocab == nil and not tensor.is_symbolic(convert.tensor(x)) then
    binding.error(fmt("%s: pass vocabulary, or call adapt, before calling the layer", who(self)))
  end
  local values, splits = self:_preprocess(x)
  if splits ~= nil and self.ragged then return self:_ragged_ids(values, splits) end
  if splits ~= nil then
    -- rows of tokens padded with "" (the mask: 0 in int mode, nothing in the encoded ones) and cut to the length
    local tokens = lookup.ragged_to_tensor(values, splits, "",
      self.output_mode == "int" and self.output_sequence_length or 0)
    return self._lookup_layer(tokens)
  end
  local ids = self._lookup_layer(values)
  local len = self.output_sequence_length
  if self.output_mode ~= "int" or len == nil or ids.ndim == 0 then return ids end
  -- dense tokens (no split, or a scalar split): the last axis cut or padded with 0 to the length, as Keras
  local n = ids.ndim
  local w = tonumber(ids.shape[n])
  if w == nil then
    binding.error(fmt("%s: output_sequence_length needs the last dim of unsplit input known while tracing", who(self)))
  end
  if w > len then
    local spec = {}
    for d = 1, n - 1 do spec[d] = {} end
    spec[n] = { 0, len }
    return ids:slice(spec)
  elseif w < len then
    local pads = {}
    for d = 1, n - 1 do pads[d] = { 0, 0 } end
    pads[n] = { 0, len - w }
    return shape_ops.pad(ids, pads)
  end
  return ids
end

-- ragged = true: each row's ids as a tide.RaggedTensor, cut (not padded) to output_sequence_length (Keras's
-- lookup_data[..., :length] on a ragged tensor). The cut goes through a dense copy padded with -1 (no id is < 0:
-- the inner lookup has an OOV slot) whose kept entries and row lengths make the rows again.
function TextVectorization:_ragged_ids(values, splits)
  local ids = self._lookup_layer(values)
  local len = self.output_sequence_length
  if len then
    local dense = lookup.ragged_to_tensor(ids, splits, -1, len)
    local keep = math_ops.greater_equal(dense, 0)
    ids = index_ops.boolean_mask(dense, keep)
    local lengths = reduce_ops.reduce_sum(math_ops.cast(keep, "int64"), 1)
    splits = shape_ops.concat({ convert.tensor({ 0 }, "int64"), reduce_ops.cumsum(lengths) }, 0)
  end
  return strings.RaggedTensor.from_row_splits(ids, splits)
end

-- adapt(data, {steps=}): the vocabulary of the standardized, split tokens, most frequent first (ties: the larger
-- token first), at most max_tokens less "" and "[UNK]"; in tf_idf mode the idf weights log(1 + docs / (1 + df)).
function TextVectorization:adapt(data, opts)
  local steps = type(opts) == "table" and opts.steps or nil
  local counts, docs, ndocs = {}, {}, 0
  local tfidf = self.output_mode == "tf_idf"
  categorical.each_batch(data, steps, function(b)
    local values, splits = self:_preprocess(b)
    local toks = tensor.totable(shape_ops.reshape(values, { -1 }))
    local sp = splits and tensor.totable(splits) or { 0, #toks }
    for r = 1, #sp - 1 do
      local seen = tfidf and {} or nil
      for i = sp[r] + 1, sp[r + 1] do
        local t = toks[i]
        if t ~= "" and t ~= "[UNK]" then
          counts[t] = (counts[t] or 0) + 1
          if seen and not seen[t] then seen[t] = true docs[t] = (docs[t] or 0) + 1 end
        end
      end
    end
    ndocs = ndocs + #sp - 1
  end)
  local toks = {}
  for t in pairs(counts) do toks[#toks + 1] = t end
  table.sort(toks, function(a, b) if counts[a] ~= counts[b] then return counts[a] > counts[b] end return a > b end)
  if self.max_tokens then
    -- the reserved slots: "[UNK]", and "" in int mode only (Keras)
    for i = #toks, self.max_tokens - self._lookup_layer:_token_start() + 1, -1 do toks[i] = nil end
  end
  local idf
  if tfidf then
    idf = {}
    for i, t in ipairs(toks) do idf[i] = math.log(1 + ndocs / (1 + docs[t])) end
  end
  self._lookup_layer:set_vocabulary(toks, idf)
end

-- set_vocabulary(vocabulary, idf_weights): a list or a file (one token a line); Keras's leading "" and "[UNK]"
-- are dropped when given, as Keras does.
function TextVectorization:set_vocabulary(vocabulary, idf_weights)
  if type(vocabulary) == "string" then   -- a file: one token a line
    local f, err = io.open(vocabulary, "rb")
    if not f then binding.error(fmt("%s: cannot read the vocabulary file %s: %s", who(self), vocabulary, tostring(err))) end
    local lines = {}
    for line in f:lines() do lines[#lines + 1] = (line:gsub("\r$", "")) end
    f:close()
    vocabulary = lines
  end
  if type(vocabulary) == "cdata" then vocabulary = tensor.totable(vocabulary) end
  if type(vocabulary) == "table" then
    local v, skip = {}, 0
    if vocabulary[1] == "" then skip = 1 end
    if vocabulary[skip + 1] == "[UNK]" then skip = skip + 1 end
    for i = skip + 1, #vocabulary do v[#v + 1] = vocabulary[i] end
    if idf_weights ~= nil and skip > 0 then
      if type(idf_weights) == "cdata" then idf_weights = tensor.totable(idf_weights) end
      if #idf_weights == #vocabulary then   -- weights given with the reserved slots too
        local w = {}
        for i = skip + 1, #idf_weights do w[#w + 1] = idf_weights[i] end
        idf_weights = w
      end
    end
    vocabulary = v
  end
  self._lookup_layer:set_vocabulary(vocabulary, idf_weights)
end

function TextVectorization:get_vocabulary() return self._lookup_layer:get_vocabulary() end
function TextVectorization:vocabulary_size() return self._lookup_layer:vocabulary_size() end

-- Keras's assets: the inner StringLookup's vocabulary.txt, at this layer's path (and the lookup's own, which
-- the .keras writer walks to as Keras does).
function TextVectorization:save_assets()
  if self._init_vocabulary ~= nil then return nil end
  return self._lookup_layer:save_assets()
end
function TextVectorization:load_assets(files) return self._lookup_layer:load_assets(files) end

function TextVectorization:get_config()
  local c = Layer.get_config(self)
  c.max_tokens = self.max_tokens
  -- none is null (Keras's None); a function cannot be saved (Keras saves its registered name)
  c.standardize = type(self.standardize) == "string" and self.standardize or None
  c.split = type(self.split) == "string" and self.split or None
  c.ngrams = self._ngrams_arg == nil and None or self._ngrams_arg   -- Keras's from_config reads the key
  c.output_mode, c.output_sequence_length = self.output_mode, self.output_sequence_length
  c.pad_to_max_tokens, c.sparse, c.ragged, c.encoding = self.pad_to_max_tokens, false, self.ragged, self.encoding
  c.vocabulary = lookup_layers.plain_list(self._init_vocabulary)
  c.idf_weights = lookup_layers.plain_list(self._init_idf)
  c.vocabulary_size = self._lookup_layer._vocab and self:vocabulary_size() or nil
  return c
end

return M
