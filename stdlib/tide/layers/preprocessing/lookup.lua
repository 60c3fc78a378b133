-- stdlib/tide/layers/preprocessing/lookup.lua — Keras 3's IntegerLookup and StringLookup: a vocabulary (given,
-- read from a file, or learnt by adapt) to indices and back (invert), Keras's index layout and output modes.
local binding = require "tide.binding"
local convert = require "tide.convert"
local tensor = require "tide.tensor"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local lookup = require "tide.ops.lookup"
local strings = require "tide.ops.strings"
local layer = require "tide.layers.layer"
local categorical = require "tide.layers.preprocessing.categorical"

local Layer, who = layer.Layer, layer.who
local fmt = string.format

local M = {}

local MODES = { int = true, one_hot = true, multi_hot = true, count = true, tf_idf = true }

-- Token lists held by a layer carry this metatable: layer tracking walks plain tables at every call, which for a
-- vocabulary of 30k tokens cost more than the lookup itself.
local TOKENS = { __metatable = "tide token list" }
local function tokens_list(v)
  if type(v) ~= "table" or getmetatable(v) ~= nil then return v end
  local out = {}
  for i = 1, #v do out[i] = v[i] end
  return setmetatable(out, TOKENS)
end
M.tokens_list = tokens_list
-- A plain copy (for configs: JSON holds no metatables).
local function plain_list(v)
  if type(v) ~= "table" then return v end
  local out = {}
  for i = 1, #v do out[i] = v[i] end
  return out
end
M.plain_list = plain_list

local function is_string_lookup(self) return self._kind == "string" end

-- A vocabulary argument: a list of tokens, a 1-D tensor, or a file path (one token a line).
local function read_vocabulary(self, v)
  local strings = is_string_lookup(self)
  if type(v) == "string" then
    local f, err = io.open(v, "rb")
    if not f then binding.error(fmt("%s: cannot read the vocabulary file %s: %s", who(self), v, tostring(err))) end
    local out = {}
    for line in f:lines() do
      line = line:gsub("\r$", "")
      if strings then
        out[#out + 1] = line
      elseif line ~= "" then
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
    binding.error(fmt("%s: vocabulary must be a list of %s, a 1-D tensor or a file path, got %s", who(self),
      strings and "strings" or "integers", type(v)))
  end
  local seen = {}
  for i, t in ipairs(v) do
    if strings and type(t) ~= "string" then
      binding.error(fmt("%s: vocabulary[%d] must be a string, got %s", who(self), i, tostring(t)))
    elseif not strings and (type(t) ~= "number" or t % 1 ~= 0) then
      binding.error(fmt("%s: vocabulary[%d] must be an integer, got %s", who(self), i, tostring(t)))
    end
    if seen[t] then binding.error(fmt("%s: the vocabulary repeats %s", who(self), tostring(t))) end
    if t == self.oov_token or t == self.mask_token then
      binding.error(fmt("%s: the vocabulary holds the %s %s", who(self),
        t == self.mask_token and "mask_token" or "oov_token", tostring(t)))
    end
    seen[t] = true
  end
  return v
end

-- IntegerLookup{max_tokens, num_oov_indices=1, mask_token, oov_token=-1, vocabulary, vocabulary_dtype="int64",
-- idf_weights, invert=false, output_mode="int", sparse=false, pad_to_max_tokens=false}.
-- Indices: the mask token (if any) 0, then num_oov_indices OOV slots (an unknown x goes to floormod(x, n), or
-- with oov_method = "farmhash" to the hash of its decimal string as StringLookup's), then the vocabulary in order.
local IndexLookup = Layer:extend("IndexLookup")
local IntegerLookup = IndexLookup:extend("IntegerLookup")
M.IntegerLookup = IntegerLookup
IntegerLookup._kind = "int"
function IntegerLookup:init(...)
  local o = self:_kwargs({ "max_tokens", "num_oov_indices", "mask_token", "oov_token", "vocabulary",
    "vocabulary_dtype", "idf_weights", "invert", "output_mode", "sparse", "pad_to_max_tokens",
    keywords = { "vocabulary_size", "oov_method", "salt" } }, ...)
  self:_setup(o, -1)
  self.vocabulary_dtype = o.vocabulary_dtype or "int64"
  if self.vocabulary_dtype ~= "int64" then   -- Keras 3 takes only int64
    binding.error(fmt('%s: vocabulary_dtype must be "int64" (as Keras 3), got %s', who(self),
      tostring(o.vocabulary_dtype)))
  end
  self._init_vocabulary = tokens_list(o.vocabulary)   -- the config's vocabulary is the constructor's, as Keras's
  if o.vocabulary ~= nil then self:set_vocabulary(o.vocabulary, o.idf_weights) end
end

-- StringLookup{max_tokens, num_oov_indices=1, mask_token, oov_token="[UNK]", vocabulary, idf_weights,
-- invert=false, output_mode="int", pad_to_max_tokens=false, sparse=false, encoding="utf-8"} (Keras 3's
-- positional order): as
-- IntegerLookup over string tokens (bytes compared as they are).
local StringLookup = IndexLookup:extend("StringLookup")
M.StringLookup = StringLookup
StringLookup._kind = "string"
function StringLookup:init(...)
  local o = self:_kwargs({ "max_tokens", "num_oov_indices", "mask_token", "oov_token", "vocabulary",
    "idf_weights", "invert", "output_mode", "pad_to_max_tokens", "sparse", "encoding",
    keywords = { "vocabulary_size", "oov_method", "salt", "vocabulary_dtype" } }, ...)
  self:_setup(o, "[UNK]")
  if o.vocabulary_dtype ~= nil and o.vocabulary_dtype ~= "string" then
    binding.error(fmt('%s: vocabulary_dtype must be "string", got %s', who(self), tostring(o.vocabulary_dtype)))
  end
  self.encoding = o.encoding or "utf-8"
  if self.encoding ~= "utf-8" then
    binding.error(fmt('%s: encoding must be "utf-8", got %s', who(self), tostring(o.encoding)))
  end
  self._init_vocabulary = tokens_list(o.vocabulary)
  if o.vocabulary ~= nil then self:set_vocabulary(o.vocabulary, o.idf_weights) end
end

function IndexLookup:_setup(o, default_oov)
  -- vocabulary_size comes back in Keras's configs; it follows from the vocabulary. With num_oov_indices > 1 an
  -- unknown string goes to OOV slot to_hash_bucket_fast(x, n) (TF's Fingerprint64 mod n), or with a salt
  -- to_hash_bucket_strong (SipHash keyed by it); an unknown integer to floormod(x, n), or with oov_method =
  -- "farmhash" to the hash of as_string(x) (Keras's IndexLookup._lookup_dense)
  local om = o.oov_method == nil and "floormod" or o.oov_method
  if om ~= "floormod" and om ~= "farmhash" then
    binding.error(fmt('%s: oov_method must be "floormod" or "farmhash", got %s', who(self), tostring(om)))
  end
  self.oov_method = om
  local salt = o.salt
  if salt ~= nil then
    if not is_string_lookup(self) and om ~= "farmhash" then
      binding.error(fmt('%s: salt can only be used with oov_method = "farmhash", got oov_method = "%s"', who(self),
        om))
    end
    if type(salt) == "number" then salt = { salt, salt } end
    local function int(v) return type(v) == "number" and v % 1 == 0 end
    if type(salt) ~= "table" or #salt ~= 2 or not int(salt[1]) or not int(salt[2]) then
      binding.error(fmt("%s: salt must be an integer or a list of 2 integers, got %s", who(self), tostring(o.salt)))
    end
    salt = { salt[1], salt[2] }
  end
  self.salt = salt
  self.max_tokens = o.max_tokens
  self.num_oov_indices = o.num_oov_indices == nil and 1 or o.num_oov_indices
  if type(self.num_oov_indices) ~= "number" or self.num_oov_indices < 0 or self.num_oov_indices % 1 ~= 0 then
    binding.error(fmt("%s: num_oov_indices must be an integer >= 0, got %s", who(self), tostring(o.num_oov_indices)))
  end
  self.mask_token = o.mask_token
  if o.oov_token == nil then self.oov_token = default_oov else self.oov_token = o.oov_token end
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
  -- pad_to_max_tokens: the encoded modes give max_tokens columns however small the vocabulary (Keras)
  self.sparse, self.pad_to_max_tokens = false, o.pad_to_max_tokens == true
  self.idf_weights = o.idf_weights
end

-- The mask token holds index 0 in "int" mode only; in the encoded modes it counts for nothing (Keras).
function IndexLookup:_mask_slot() return self.mask_token ~= nil and self.output_mode == "int" end
function IndexLookup:_token_start()
  return (self:_mask_slot() and 1 or 0) + self.num_oov_indices
end

-- set_vocabulary(vocabulary, idf_weights): the learnt tokens (without the mask and OOV entries).
function IndexLookup:set_vocabulary(vocabulary, idf_weights)
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
  self._vocab, self.idf_weights = tokens_list(v), tokens_list(idf_weights)
  self:_index_vocabulary()
end

-- The vocabulary as a tensor and its hash table (tide.lookup): lookups probe it in C instead of comparing every
-- token, eagerly, traced and on the pipeline's threads alike.
function IndexLookup:_index_vocabulary()
  if #self._vocab == 0 then
    self._vocab_t, self._table = nil, nil
    return
  end
  self._vocab_t = convert.tensor(self._vocab, is_string_lookup(self) and "string" or "int64")
  self._table = lookup.table(self._vocab_t)
end

-- get_vocabulary(): the index order: mask token, OOV tokens, then the learnt tokens.
function IndexLookup:get_vocabulary()
  local out = {}
  if self:_mask_slot() then out[1] = self.mask_token end
  for _ = 1, self.num_oov_indices do out[#out + 1] = self.oov_token end
  for _, t in ipairs(self._vocab or {}) do out[#out + 1] = t end
  return out
end
function IndexLookup:vocabulary_size() return #self:get_vocabulary() end

-- adapt(data, {steps=}): the tokens by count, most frequent first (ties: the larger token first, as
-- Keras's lexsort), at most max_tokens less the reserved slots.
function IndexLookup:adapt(data, opts)
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
  self._vocab = tokens_list(tokens)
  self:_index_vocabulary()
end

-- The token input: string tensors for StringLookup, integers (as int64) for IntegerLookup.
local function token_input(self, x)
  x = convert.tensor(x)
  local dt = tostring(x.dtype)
  if is_string_lookup(self) then
    if dt ~= "string" then binding.error(fmt("%s: expected string inputs, got dtype %s", who(self), dt)) end
    return x
  end
  if not dt:match("int") then binding.error(fmt("%s: expected integer inputs, got dtype %s", who(self), dt)) end
  return math_ops.cast(x, "int64")
end

function IndexLookup:call(x)
  -- a symbolic call before the vocabulary arrives (a model rebuilt from a file, whose assets come after): the
  -- shapes of an empty vocabulary's result are the real one's
  if self._vocab == nil and tensor.is_symbolic(convert.tensor(x)) then
    self._vocab = tokens_list({})
    local ok, y = pcall(IndexLookup.call, self, x)
    self._vocab = nil
    if not ok then error(y, 0) end
    return y
  end
  if self._vocab == nil then
    binding.error(fmt("%s: pass vocabulary, or call adapt, before calling the layer", who(self)))
  end
  local vdt = is_string_lookup(self) and "string" or "int64"
  if self.invert then
    -- index -> token; an index outside the table gives the OOV token (kept one past the table), as Keras
    x = convert.tensor(x)
    if not tostring(x.dtype):match("int") then
      binding.error(fmt("%s: invert = true expects integer indices, got dtype %s", who(self), tostring(x.dtype)))
    end
    x = math_ops.cast(x, "int64")
    local vocab = self:get_vocabulary()
    local n = #vocab
    vocab[n + 1] = self.oov_token
    local inside = math_ops.logical_and(math_ops.greater_equal(x, 0), math_ops.less(x, n))
    local idx = math_ops.where(inside, x, math_ops.add(math_ops.mul(x, 0), n))
    return shape_ops.gather(convert.tensor(vocab, vdt), idx)
  end
  x = token_input(self, x)
  local start, n = self:_token_start(), self.num_oov_indices
  -- hashed OOV slots: the lookup marks an unknown token with slot start - 1, then its hash picks the slot
  local hashed = n > 1 and (is_string_lookup(self) or self.oov_method == "farmhash")
  local ids
  if self._table == nil then   -- an empty vocabulary: every token is out of it
    local zero = math_ops.mul(math_ops.cast(math_ops.equal(x, x), "int64"), 0)
    if n == 0 then ids = math_ops.add(zero, -1)   -- no OOV slot: see docs/tf_differences.md
    elseif n == 1 or hashed then ids = math_ops.add(zero, start - 1)
    else ids = math_ops.add(math_ops.floormod(x, n), start - n) end
  else
    ids = lookup.find(x, self._vocab_t, self._table, { first = start, num_oov = hashed and 1 or n })
  end
  if hashed then
    local keys = is_string_lookup(self) and x or strings.as_string(x)
    local bucket = self.salt and strings.to_hash_bucket_strong(keys, n, self.salt)
      or strings.to_hash_bucket_fast(keys, n)
    ids = math_ops.where(math_ops.equal(ids, start - 1), math_ops.add(bucket, start - n), ids)
  end
  local zero
  if self.mask_token ~= nil then zero = math_ops.mul(ids, 0) end
  if self.mask_token ~= nil then
    -- index 0 in "int" mode; -1 (no column) in the encoded ones
    ids = math_ops.where(math_ops.equal(x, self.mask_token), self:_mask_slot() and zero or math_ops.add(zero, -1), ids)
  end
  if self.output_mode == "int" then return ids end
  local depth = self:vocabulary_size()
  if self.pad_to_max_tokens and self.max_tokens then depth = math.max(depth, self.max_tokens) end
  if self.output_mode == "tf_idf" then
    local y = categorical.encode(ids, "count", depth, self.compute_dtype)
    -- the OOV slots weigh the idf_weights' mean, as Keras (no document frequency for them)
    local w, sum = {}, 0
    for _, v in ipairs(self.idf_weights) do sum = sum + v end
    for _ = 1, start do w[#w + 1] = #self.idf_weights > 0 and sum / #self.idf_weights or 0 end
    for _, v in ipairs(self.idf_weights) do w[#w + 1] = v end
    for _ = #w + 1, depth do w[#w + 1] = 0 end   -- pad_to_max_tokens' columns weigh nothing
    return math_ops.mul(y, convert.tensor(w, self.compute_dtype))
  end
  -- Keras: the lookups' one_hot / multi_hot / count are int64 (tf_idf the float compute dtype)
  return categorical.encode(ids, self.output_mode, depth, "int64")
end

-- Keras's assets: an adapted vocabulary (none given to the constructor) travels in a .keras file as
-- assets/<the layer's path>/vocabulary.txt, every index's token one a line (the mask and OOV tokens first).
function IndexLookup:save_assets()
  if self._init_vocabulary ~= nil or self._vocab == nil then return nil end
  local lines = {}
  for i, t in ipairs(self:get_vocabulary()) do lines[i] = tostring(t) end
  return { ["vocabulary.txt"] = table.concat(lines, "\n") }
end

function IndexLookup:load_assets(files)
  local text = files and files["vocabulary.txt"]
  if self._init_vocabulary ~= nil or text == nil then return end
  local lines = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = (line:gsub("\r$", "")) end
  while #lines > 0 and lines[#lines] == "" do lines[#lines] = nil end
  -- the reserved entries (mask, OOV tokens) come first, as get_vocabulary gives them
  local skip = self:_token_start()
  local v = {}
  for i = skip + 1, #lines do
    v[#v + 1] = is_string_lookup(self) and lines[i] or tonumber(lines[i])
  end
  self:set_vocabulary(v, self.idf_weights)
end

function IndexLookup:get_config()
  local c = Layer.get_config(self)
  c.invert, c.max_tokens, c.num_oov_indices = self.invert, self.max_tokens, self.num_oov_indices
  c.oov_token, c.mask_token, c.output_mode = self.oov_token, self.mask_token, self.output_mode
  c.sparse, c.pad_to_max_tokens = false, self.pad_to_max_tokens
  if is_string_lookup(self) then c.encoding = self.encoding else c.vocabulary_dtype = self.vocabulary_dtype end
  c.idf_weights, c.vocabulary = plain_list(self.idf_weights), plain_list(self._init_vocabulary)
  c.vocabulary_size = self._vocab and self:vocabulary_size() or nil
  c.oov_method, c.salt = self.oov_method, self.salt
  return c
end

return M
