-- stdlib/tide/layers/preprocessing/tokenizers.lua — keras_hub's tokenizers under tide.text: WordPieceTokenizer
-- (BERT's vocab.txt; the wordpiece_tokenize op in C), and BytePairTokenizer (GPT-2's, bpe_tokenizer.lua).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local tensor = require "tide.tensor"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local strings = require "tide.ops.strings"
local lookup = require "tide.ops.lookup"
local layer = require "tide.layers.layer"
local lookup_layers = require "tide.layers.preprocessing.lookup"
local string_inputs = require "tide.layers.preprocessing.string_inputs"

local Layer, who = layer.Layer, layer.who
local C = binding.C
local fmt = string.format

local M = {}

-- tf_text's FastWordpieceTokenizer (keras_hub's): a word past this many bytes is the unknown token.
local MAX_BYTES_PER_WORD = 100

-- A vocabulary: a list of tokens, or a file of one token a line (BERT's vocab.txt).
local function read_vocabulary(self, v)
  if type(v) == "string" then
    local f, err = io.open(v, "rb")
    if not f then binding.error(fmt("%s: cannot read the vocabulary file %s: %s", who(self), v, tostring(err))) end
    local out = {}
    for line in f:lines() do out[#out + 1] = (line:gsub("\r$", "")) end
    f:close()
    -- a trailing empty line is the file's last newline, not a token
    while out[#out] == "" do out[#out] = nil end
    return out
  end
  if type(v) == "cdata" then v = tensor.totable(v) end
  if type(v) ~= "table" then
    binding.error(fmt("%s: vocabulary must be a list of strings or a file path, got %s", who(self), type(v)))
  end
  for i, t in ipairs(v) do
    if type(t) ~= "string" then binding.error(fmt("%s: vocabulary[%d] must be a string, got %s", who(self), i,
      tostring(t))) end
  end
  return v
end

-- WordPieceTokenizer{vocabulary, sequence_length, lowercase=false, strip_accents=false, split=true,
-- split_on_cjk=true, suffix_indicator="##", oov_token="[UNK]", special_tokens, special_tokens_in_strings=false,
-- dtype="int32"} (keras_hub's order). BERT's
-- uncased models: lowercase = true, strip_accents = true.
local WordPieceTokenizer = Layer:extend("WordPieceTokenizer")
M.WordPieceTokenizer = WordPieceTokenizer
-- dtype is the output's ("int32", "int64", or "string" for the pieces), not a dtype policy: the class takes it
WordPieceTokenizer._own_options = { dtype = true }
function WordPieceTokenizer:init(...)
  local o = self:_kwargs({ "vocabulary", "sequence_length", "lowercase", "strip_accents", "split", "split_on_cjk",
    "suffix_indicator", "oov_token", keywords = { "special_tokens", "special_tokens_in_strings", "config_file",
    "dtype" } }, ...)
  self._out_dtype = o.dtype == nil and "int32" or tostring(o.dtype)
  -- special_tokens: with special_tokens_in_strings (and split), each is cut out of the text whole, as a word of
  -- its own that is never lowercased (keras_hub's); else they are only kept in the config
  local sp = o.special_tokens
  if sp ~= nil then
    if type(sp) ~= "table" then
      binding.error(fmt("%s: special_tokens must be a list of strings, got %s", who(self), type(sp)))
    end
    for i, t in ipairs(sp) do
      if type(t) ~= "string" or t == "" then
        binding.error(fmt("%s: special_tokens[%d] must be a non-empty string, got %s", who(self), i, tostring(t)))
      end
    end
  end
  if o.special_tokens_in_strings ~= nil and type(o.special_tokens_in_strings) ~= "boolean" then
    binding.error(fmt("%s: special_tokens_in_strings must be a boolean, got %s", who(self),
      tostring(o.special_tokens_in_strings)))
  end
  self.special_tokens, self.special_tokens_in_strings = sp, o.special_tokens_in_strings == true
  local sl = o.sequence_length
  if sl ~= nil and (type(sl) ~= "number" or sl % 1 ~= 0 or sl < 1) then
    binding.error(fmt("%s: sequence_length must be nil or an integer >= 1, got %s", who(self), tostring(sl)))
  end
  self.sequence_length = sl
  self.lowercase, self.strip_accents = o.lowercase == true, o.strip_accents == true
  self.split = o.split ~= false
  self.split_on_cjk = o.split_on_cjk ~= false
  self.suffix_indicator = o.suffix_indicator or "##"
  self.oov_token = o.oov_token or "[UNK]"
  for _, k in ipairs { "suffix_indicator", "oov_token" } do
    if type(self[k]) ~= "string" then binding.error(fmt("%s: %s must be a string", who(self), k)) end
  end
  local dt = self._out_dtype
  if dt ~= "int32" and dt ~= "int64" and dt ~= "string" then
    binding.error(fmt('%s: dtype must be "int32", "int64" or "string", got %s', who(self), dt))
  end
  local split_on = (self.split and self.special_tokens_in_strings and sp) or {}
  self._special_t = convert.tensor(split_on, "string")
  if #split_on == 0 then self._special_t = shape_ops.reshape(self._special_t, { 0 }) end
  if o.vocabulary ~= nil then self:set_vocabulary(o.vocabulary) end
end

-- set_vocabulary(vocabulary): a list, or a vocab.txt path. The oov_token must be in it (keras_hub).
function WordPieceTokenizer:set_vocabulary(vocabulary)
  local v = read_vocabulary(self, vocabulary)
  local unk
  for i, t in ipairs(v) do if t == self.oov_token then unk = i - 1 break end end
  if unk == nil then
    binding.error(fmt("%s: the oov_token %q is not in the vocabulary", who(self), self.oov_token))
  end
  self._vocab = lookup_layers.tokens_list(v)
  self._unk = unk
  self._vocab_t = convert.tensor(v, "string")
  self._table = lookup.table(self._vocab_t)
end

function WordPieceTokenizer:_check()
  if self._vocab == nil then binding.error(fmt("%s: no vocabulary: pass vocabulary first", who(self))) end
end

function WordPieceTokenizer:get_vocabulary()
  self:_check()
  return lookup_layers.plain_list(self._vocab)
end
function WordPieceTokenizer:vocabulary_size() self:_check() return #self._vocab end
function WordPieceTokenizer:id_to_token(id)
  self:_check()
  if type(id) ~= "number" or id % 1 ~= 0 or id < 0 or id >= #self._vocab then
    binding.error(fmt("%s: id %s is outside the vocabulary of %d", who(self), tostring(id), #self._vocab))
  end
  return self._vocab[id + 1]
end
function WordPieceTokenizer:token_to_id(token)
  self:_check()
  for i, t in ipairs(self._vocab) do if t == token then return i - 1 end end
  binding.error(fmt("%s: token %q is not in the vocabulary", who(self), tostring(token)))
end

-- tokenize(x): a string gives a 1-D tensor of ids; a vector gives a tide.RaggedTensor, or with sequence_length a
-- dense [N, sequence_length] tensor (padded with 0, cut). dtype "string" gives the pieces instead of ids.
function WordPieceTokenizer:tokenize(x)
  self:_check()
  local scalar
  x, scalar = string_inputs(self, x)
  local a = dispatch.attrs()
  a.flags = (self.lowercase and 1 or 0) + (self.strip_accents and 2 or 0) + (self.split and 4 or 0)
    + (self.split_on_cjk and 8 or 0)
  a.n, a.m = MAX_BYTES_PER_WORD, self._unk
  local ids, splits = dispatch.run(C.TIDE_OP_WORDPIECE_TOKENIZE, a,
    { x, self._vocab_t, self._table, convert.tensor(self.suffix_indicator, "string"), self._special_t }, 2)
  local dt = self._out_dtype
  if dt == "string" then ids = shape_ops.gather(self._vocab_t, ids) elseif dt ~= "int64" then
    ids = math_ops.cast(ids, dt)
  end
  local pad = dt == "string" and "" or 0
  if scalar then
    if self.sequence_length then
      return shape_ops.reshape(lookup.ragged_to_tensor(ids, splits, pad, self.sequence_length), { -1 })
    end
    return ids
  end
  if self.sequence_length then return lookup.ragged_to_tensor(ids, splits, pad, self.sequence_length) end
  return strings.RaggedTensor.from_row_splits(ids, splits)
end

function WordPieceTokenizer:call(x) return self:tokenize(x) end

-- detokenize(ids): the pieces joined with spaces, a suffix piece glued to the one before (tf_text's), one string
-- per row (a 1-D input gives a scalar); takes a dense tensor, a RaggedTensor or a Lua list.
function WordPieceTokenizer:detokenize(ids)
  self:_check()
  local tokens
  if getmetatable(ids) == strings.RaggedTensor then
    local vals = shape_ops.gather(self._vocab_t, math_ops.cast(ids.values, "int64"))
    tokens = lookup.ragged_to_tensor(vals, ids.row_splits, "")
  else
    local t = convert.tensor(ids)
    if not tostring(t.dtype):match("int") then
      binding.error(fmt("%s: detokenize expects integer ids, got dtype %s", who(self), tostring(t.dtype)))
    end
    tokens = shape_ops.gather(self._vocab_t, math_ops.cast(t, "int64"))
  end
  if tokens.ndim == 0 then return tokens end
  local joined = strings.reduce_join(tokens, { axis = -1, separator = " " })
  -- a suffix piece joins the piece before it; padding "" left spaces at the end
  local sfx = self.suffix_indicator:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?%{%}|\\]", "\\%0")
  joined = strings.regex_replace(joined, " " .. sfx, "")
  return strings.regex_replace(joined, " +$", "")
end

function WordPieceTokenizer:get_config()
  local c = Layer.get_config(self)
  c.dtype = self._out_dtype
  c.vocabulary = nil   -- keras_hub saves it as an asset (vocabulary.txt)
  c.sequence_length, c.lowercase, c.strip_accents = self.sequence_length, self.lowercase, self.strip_accents
  c.split, c.split_on_cjk = self.split, self.split_on_cjk
  c.suffix_indicator, c.oov_token = self.suffix_indicator, self.oov_token
  c.special_tokens, c.special_tokens_in_strings = self.special_tokens, self.special_tokens_in_strings
  c.config_file = "tokenizer.json"
  return c
end

-- GPT-2's byte-level BPE (vocab.json + merges.txt), eager (bpe_tokenizer.lua)
M.BytePairTokenizer = require("tide.layers.preprocessing.bpe_tokenizer").BytePairTokenizer

return M
