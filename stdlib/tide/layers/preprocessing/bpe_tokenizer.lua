-- stdlib/tide/layers/preprocessing/bpe_tokenizer.lua — keras_hub's BytePairTokenizer under tide.text: GPT-2's
-- byte-level BPE (vocab.json + merges.txt) read here, run by the bpe_tokenize op (C; traces, runs on data threads).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local json = require "tide.json"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local strings = require "tide.ops.strings"
local lookup = require "tide.ops.lookup"
local layer = require "tide.layers.layer"
local trace_context = require "tide.trace_context"
local string_inputs = require "tide.layers.preprocessing.string_inputs"

local Layer, who = layer.Layer, layer.who
local C = binding.C
local fmt = string.format

local M = {}

-- A vocabulary's ids may leave holes (filled with "", which no piece is); more holes than this is refused, since
-- the op reads the tokens as a vector indexed by id.
local MAX_HOLES = 2 ^ 20

local function read_file(self, path, what)
  local f, err = io.open(path, "rb")
  if not f then binding.error(fmt("%s: cannot read the %s file %s: %s", who(self), what, path, tostring(err))) end
  local s = f:read("*a")
  f:close()
  return s
end

-- vocabulary: a vocab.json path or a table token -> id (keras_hub's dict).
local function read_vocabulary(self, v)
  if type(v) == "string" then
    v = json.decode(read_file(self, v, "vocabulary"), who(self) .. ": vocabulary file " .. v)
  end
  if type(v) ~= "table" then
    binding.error(fmt("%s: vocabulary must be a vocab.json path or a table token -> id, got %s", who(self), type(v)))
  end
  local vocab, by_id, n = {}, {}, 0
  for t, id in pairs(v) do
    if type(t) ~= "string" or type(id) ~= "number" or id % 1 ~= 0 or id < 0 then
      binding.error(fmt("%s: vocabulary entries must be token = integer id >= 0, got %s = %s", who(self),
        tostring(t), tostring(id)))
    end
    if by_id[id] then binding.error(fmt("%s: vocabulary id %d is given to %q and %q", who(self), id, by_id[id], t)) end
    vocab[t], by_id[id], n = id, t, n + 1
  end
  return vocab, by_id, n
end

-- merges: a merges.txt path or a list of "a b" rules; the rank of a rule is its line (keras_hub's, "#version" too).
local function read_merges(self, m, vocab)
  if type(m) == "string" then
    local text = read_file(self, m, "merges")
    local list = {}
    for line in (text:gsub("\n$", "") .. "\n"):gmatch("(.-)\n") do list[#list + 1] = (line:gsub("%s+$", "")) end
    if text == "" then list = {} end
    m = list
  end
  if type(m) ~= "table" then
    binding.error(fmt("%s: merges must be a merges.txt path or a list of strings, got %s", who(self), type(m)))
  end
  local ranks, rules = {}, {}
  for i, rule in ipairs(m) do
    if type(rule) ~= "string" then binding.error(fmt("%s: merges[%d] must be a string, got %s", who(self), i,
      type(rule))) end
    if not rule:find("#version:", 1, true) then
      local a, b = rule:match("^([^ ]+) ([^ ]+)$")
      if not a then
        binding.error(fmt("%s: merge rule %d %q must be two tokens separated by one space", who(self), i, rule))
      end
      if vocab[a] == nil or vocab[b] == nil then
        binding.error(fmt("%s: merge rule %q contains token %q or %q that is not in the vocabulary", who(self),
          rule, a, b))
      end
      if ranks[rule] == nil then ranks[rule], rules[#rules + 1] = i, rule end
    end
  end
  return rules, m
end

-- A string vector (an empty list gives shape {0}).
local function string_vector(list)
  local t = convert.tensor(list, "string")
  if #list == 0 then t = shape_ops.reshape(t, { 0 }) end
  return t
end

-- BytePairTokenizer{vocabulary, merges, sequence_length, add_prefix_space=false, unsplittable_tokens, dtype="int32"}
local BytePairTokenizer = Layer:extend("BytePairTokenizer")
M.BytePairTokenizer = BytePairTokenizer
-- dtype is the output's ("int32", "int64", or "string" for the pieces), not a dtype policy: the class takes it
BytePairTokenizer._own_options = { dtype = true }
function BytePairTokenizer:init(...)
  local o = self:_kwargs({ "vocabulary", "merges", "sequence_length", "add_prefix_space", "unsplittable_tokens",
    keywords = { "dtype" } }, ...)
  local dt = o.dtype == nil and "int32" or tostring(o.dtype)
  if dt ~= "int32" and dt ~= "int64" and dt ~= "string" then
    binding.error(fmt('%s: dtype must be "int32", "int64" or "string", got %s', who(self), dt))
  end
  self._out_dtype = dt
  local sl = o.sequence_length
  if sl ~= nil and (type(sl) ~= "number" or sl % 1 ~= 0 or sl < 1) then
    binding.error(fmt("%s: sequence_length must be nil or an integer >= 1, got %s", who(self), tostring(sl)))
  end
  self.sequence_length = sl
  self.add_prefix_space = o.add_prefix_space == true
  local u = o.unsplittable_tokens or {}
  if type(u) ~= "table" then binding.error(fmt("%s: unsplittable_tokens must be a list of strings", who(self))) end
  for i, t in ipairs(u) do
    if type(t) ~= "string" or t == "" then
      binding.error(fmt("%s: unsplittable_tokens[%d] must be a non-empty string", who(self), i))
    end
  end
  self.unsplittable_tokens = u
  if (o.vocabulary == nil) ~= (o.merges == nil) then
    binding.error(fmt("%s: pass both vocabulary and merges (or neither)", who(self)))
  end
  if o.vocabulary ~= nil then self:set_vocabulary_and_merges(o.vocabulary, o.merges) end
end

-- set_vocabulary_and_merges(vocabulary, merges): paths (vocab.json, merges.txt) or a table and a list. The op
-- takes the tokens by id (a hole is ""), the merge rules in rank order (repeats and "#version" left out), a
-- lookup_table over each, and the unsplittable tokens.
function BytePairTokenizer:set_vocabulary_and_merges(vocabulary, merges)
  local vocab, by_id, n = read_vocabulary(self, vocabulary)
  local rules
  rules, self._merges = read_merges(self, merges, vocab)
  local top = -1
  for id in pairs(by_id) do if id > top then top = id end end
  if top + 1 - n > MAX_HOLES then
    binding.error(fmt("%s: vocabulary ids must be nearly dense (0 .. %d for %d tokens)", who(self), top, n))
  end
  local tokens = {}
  for id = 0, top do tokens[id + 1] = by_id[id] or "" end
  self._vocab, self._by_id, self._n, self._holes = vocab, by_id, n, top + 1 > n
  self._vocab_t = string_vector(tokens)
  self._table = lookup.table(self._vocab_t)
  self._merges_t = string_vector(rules)
  self._merges_table = lookup.table(self._merges_t)
  self._unsplittable_t = string_vector(self.unsplittable_tokens)
  -- detokenize's gather: id + 1, so tokenize's -1 (a piece not in the vocabulary) gives ""
  table.insert(tokens, 1, "")
  self._detok_t = convert.tensor(tokens, "string")
end

function BytePairTokenizer:_check()
  if self._vocab == nil then
    binding.error(fmt("%s: no vocabulary: pass vocabulary and merges first", who(self)))
  end
end

function BytePairTokenizer:get_vocabulary()
  self:_check()
  local ids = {}
  for id in pairs(self._by_id) do ids[#ids + 1] = id end
  table.sort(ids)
  local out = {}
  for i, id in ipairs(ids) do out[i] = self._by_id[id] end
  return out
end
function BytePairTokenizer:vocabulary_size() self:_check() return self._n end
function BytePairTokenizer:id_to_token(id)
  self:_check()
  local t = type(id) == "number" and self._by_id[id] or nil
  if t == nil then binding.error(fmt("%s: id %s is not in the vocabulary", who(self), tostring(id))) end
  return t
end
function BytePairTokenizer:token_to_id(token)
  self:_check()
  local id = self._vocab[token]
  if id == nil then binding.error(fmt("%s: token %q is not in the vocabulary", who(self), tostring(token))) end
  return id
end

-- tokenize(x): a string gives a 1-D tensor; a vector a tide.RaggedTensor, or with sequence_length a dense
-- [N, sequence_length] tensor (padded with 0, cut). A piece not in the vocabulary is id -1 (keras_hub's).
function BytePairTokenizer:tokenize(x)
  self:_check()
  local v, scalar = string_inputs(self, x)
  local dt = self._out_dtype
  local a = dispatch.attrs()
  a.flags = (self.add_prefix_space and 1 or 0) + (dt == "string" and 2 or 0)
  local values, splits = dispatch.run(C.TIDE_OP_BPE_TOKENIZE, a,
    { v, self._vocab_t, self._table, self._merges_t, self._merges_table, self._unsplittable_t }, 2)
  if dt == "int32" then values = math_ops.cast(values, "int32") end
  local pad = dt == "string" and "" or 0
  if self.sequence_length then
    local dense = lookup.ragged_to_tensor(values, splits, pad, self.sequence_length)
    return scalar and shape_ops.reshape(dense, { -1 }) or dense
  end
  if scalar then return values end
  return strings.RaggedTensor.from_row_splits(values, splits)
end

function BytePairTokenizer:call(x) return self:tokenize(x) end

-- Eagerly, an id outside the vocabulary is an error naming it (traced, gather refuses one past the end).
local function check_ids(self, ids)
  if trace_context.is_symbolic(ids) or ids.nelem == 0 then return end
  local lo, hi = reduce.reduce_min(ids):item(), reduce.reduce_max(ids):item()
  local bad = (lo < -1 and lo) or (hi >= self._vocab_t.shape[1] and hi) or nil
  if bad == nil and self._holes then
    for _, id in ipairs(shape_ops.reshape(ids, { -1 }):totable()) do
      if id ~= -1 and self._by_id[id] == nil then bad = id break end
    end
  end
  if bad then binding.error(fmt("%s: detokenize: id %s is not in the vocabulary", who(self), tostring(bad))) end
end

-- The pieces of ids (id -1 gives "").
local function pieces_of(self, ids)
  ids = math_ops.cast(ids, "int64")
  check_ids(self, ids)
  return shape_ops.gather(self._detok_t, ids + 1)
end

-- detokenize(ids): the pieces joined and mapped back to bytes, one string per row (a 1-D input gives a scalar);
-- takes a dense tensor, a RaggedTensor or Lua lists. Id -1 (tokenize's unknown piece) gives nothing.
function BytePairTokenizer:detokenize(ids)
  self:_check()
  if type(ids) == "table" and getmetatable(ids) ~= strings.RaggedTensor and type(ids[1]) == "table" then
    local vals, sp = {}, { 0 }
    for r, row in ipairs(ids) do
      for _, id in ipairs(row) do vals[#vals + 1] = id end
      sp[r + 1] = #vals
    end
    local v = convert.tensor(vals, "int64")
    if #vals == 0 then v = shape_ops.reshape(v, { 0 }) end
    ids = strings.RaggedTensor.from_row_splits(v, convert.tensor(sp, "int64"))
  end
  local joined
  if getmetatable(ids) == strings.RaggedTensor then
    local dense = lookup.ragged_to_tensor(pieces_of(self, ids.values), ids.row_splits, "")
    joined = strings.reduce_join(dense, { axis = -1 })
  else
    local t = convert.tensor(ids)
    if not tostring(t.dtype):match("int") then
      binding.error(fmt("%s: detokenize expects integer ids, got dtype %s", who(self), tostring(t.dtype)))
    end
    if t.ndim > 2 then binding.error(fmt("%s: detokenize expects ids of rank 0, 1 or 2, got shape %s", who(self),
      tostring(t.shape))) end
    if t.ndim < 0 then
      binding.error(fmt("%s: detokenize: the ids have an unknown rank while tracing; give a known rank (0, 1 or 2)",
        who(self)))
    end
    joined = pieces_of(self, t)
    if t.ndim > 0 then joined = strings.reduce_join(joined, { axis = -1 }) end
  end
  -- each character back to its byte (one outside the map, none: keras_hub's default "")
  return dispatch.run(C.TIDE_OP_BPE_BYTES_DECODE, dispatch.attrs(), { joined })
end

function BytePairTokenizer:get_config()
  local c = Layer.get_config(self)
  c.dtype = self._out_dtype
  c.vocabulary, c.merges = nil, nil   -- keras_hub saves them as assets (vocabulary.json, merges.txt)
  c.sequence_length, c.add_prefix_space = self.sequence_length, self.add_prefix_space
  c.unsplittable_tokens = self.unsplittable_tokens
  return c
end

return M
