-- stdlib/tide/layers/preprocessing/bpe_tokenizer.lua — keras_hub's BytePairTokenizer under tide.text: GPT-2's
-- byte-level BPE (vocab.json + merges.txt): keras_hub's pre-split (PCRE2), byte->unicode map, merges by rank; eager.
local binding = require "tide.binding"
local convert = require "tide.convert"
local tensor = require "tide.tensor"
local json = require "tide.json"
local shape_ops = require "tide.ops.shape"
local strings = require "tide.ops.strings"
local lookup = require "tide.ops.lookup"
local layer = require "tide.layers.layer"
local trace_context = require "tide.trace_context"

local Layer, who = layer.Layer, layer.who
local fmt = string.format

local M = {}

-- keras_hub's pre-split (byte_pair_tokenizer.py, TF workflow): RE2 patterns, so \s is written [\t\n\f\r ] (RE2's
-- ASCII \s; PCRE2's would add \v). "६" (a digit, so \p{N}) marks a space that starts a word, as GPT-2's lookahead
-- `\s+(?!\S)` would; the marks are split out and dropped.
local WS = "\\t\\n\\f\\r "
local SPECIAL = "\\x{a0}\\x{2009}\\x{202f}\\x{3000}"
local MARK = "६"
local MARK_BEFORE_WORD = "( )([^" .. WS .. SPECIAL .. "])"
-- keras_hub writes this one without brackets (a space then the four special spaces in a row, at the end): kept as is
local MARK_AT_END = "([" .. WS .. "]" .. SPECIAL .. ")$"
local SPLIT = "'s|'t|'re|'ve|'m|'ll|'d|[" .. WS .. SPECIAL .. "]+[\\n\\r\\t\\f६" .. SPECIAL .. "]"
  .. "| ?\\p{L}+| ?[\\p{N}]+| ?[^" .. WS .. "\\p{L}\\p{N}" .. SPECIAL .. "]+"
-- a match is fenced with this byte (never in valid UTF-8) so Lua can cut the string at the fences
local FENCE = "\255"
-- the last character split off a piece (keras_hub's second pass: [ \t\r\f\v६ special spaces]$)
local TRAILING = { [" "] = true, ["\t"] = true, ["\r"] = true, ["\f"] = true, ["\v"] = true, [MARK] = true,
  ["\194\160"] = true, ["\226\128\137"] = true, ["\226\128\175"] = true, ["\227\128\128"] = true }

-- GPT-2's bytes_to_unicode: printable bytes map to themselves, the others to U+0100 on.
local function utf8_char(cp)
  if cp < 0x80 then return string.char(cp) end
  return string.char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64)
end
local BYTE2U, U2BYTE = {}, {}
do
  local n = 0
  for b = 0, 255 do
    local printable = (b >= 33 and b <= 126) or (b >= 161 and b <= 172) or (b >= 174 and b <= 255)
    local cp = b
    if not printable then cp, n = 256 + n, n + 1 end
    BYTE2U[b] = utf8_char(cp)
    U2BYTE[utf8_char(cp)] = string.char(b)
  end
end

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
  local ranks = {}
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
      if ranks[rule] == nil then ranks[rule] = i end
    end
  end
  return ranks, m
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

-- set_vocabulary_and_merges(vocabulary, merges): paths (vocab.json, merges.txt) or a table and a list.
function BytePairTokenizer:set_vocabulary_and_merges(vocabulary, merges)
  local vocab, by_id, n = read_vocabulary(self, vocabulary)
  self._ranks, self._merges = read_merges(self, merges, vocab)
  self._vocab, self._by_id, self._n = vocab, by_id, n
  -- keras_hub's cache: an unsplittable token is its own piece
  self._cache = {}
  for _, t in ipairs(self.unsplittable_tokens) do self._cache[t] = { t } end
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

-- The BPE pieces of one pre-split word (bytes mapped to unicode first), GPT-2's loop: merge the adjacent pair of
-- lowest rank everywhere until no pair has a rank.
function BytePairTokenizer:_bpe(word)
  local hit = self._cache[word]
  if hit then return hit end
  local parts = {}
  for i = 1, #word do parts[i] = BYTE2U[word:byte(i)] end
  local ranks = self._ranks
  while #parts > 1 do
    local best, best_rank
    for i = 1, #parts - 1 do
      local r = ranks[parts[i] .. " " .. parts[i + 1]]
      if r and (best_rank == nil or r < best_rank) then best, best_rank = i, r end
    end
    if not best then break end
    local a, b = parts[best], parts[best + 1]
    local out, i = {}, 1
    while i <= #parts do
      if i < #parts and parts[i] == a and parts[i + 1] == b then
        out[#out + 1], i = a .. b, i + 2
      else
        out[#out + 1], i = parts[i], i + 1
      end
    end
    parts = out
  end
  self._cache[word] = parts
  return parts
end

-- Cuts s at every fence, keeping the non-empty pieces.
local function cut(s, out)
  for piece in (s .. FENCE):gmatch("(.-)" .. FENCE) do
    if piece ~= "" then out[#out + 1] = piece end
  end
end

-- Splits piece s around each occurrence of the unsplittable token tok (kept as its own piece), in order.
local function split_on(s, tok, out, special)
  local at = 1
  while true do
    local i, j = s:find(tok, at, true)
    if not i then break end
    if i > at then out[#out + 1] = s:sub(at, i - 1) end
    out[#out + 1] = tok
    special[#out] = true
    at = j + 1
  end
  if at <= #s then out[#out + 1] = s:sub(at) end
end

-- keras_hub's split_strings_for_bpe over a list of strings: a list of word lists.
function BytePairTokenizer:_presplit(texts)
  local x = convert.tensor(texts, "string")
  x = strings.regex_replace(x, MARK_BEFORE_WORD, MARK .. "\\1\\2")
  x = strings.regex_replace(x, MARK_AT_END, "\\1" .. MARK)
  local rows = tensor.totable(x)
  -- cut out the unsplittable tokens first, so the split below leaves them whole
  local flat, owner, special = {}, {}, {}
  for r, s in ipairs(rows) do
    local pieces, sp = { s }, {}
    for _, tok in ipairs(self.unsplittable_tokens) do
      local nxt, nsp = {}, {}
      for k, p in ipairs(pieces) do
        if sp[k] then nxt[#nxt + 1] = p nsp[#nxt] = true else split_on(p, tok, nxt, nsp) end
      end
      pieces, sp = nxt, nsp
    end
    for k, p in ipairs(pieces) do
      flat[#flat + 1], owner[#flat + 1] = p, r
      special[#flat] = sp[k]
    end
  end
  local words = {}
  for r = 1, #rows do words[r] = {} end
  if #flat == 0 then return words end
  local fenced = tensor.totable(strings.regex_replace(convert.tensor(flat, "string"), SPLIT,
    FENCE .. "\\0" .. FENCE))
  for k, s in ipairs(fenced) do
    local row = words[owner[k]]
    if special[k] then
      row[#row + 1] = flat[k]
    else
      local pieces = {}
      cut(s, pieces)
      for _, p in ipairs(pieces) do
        -- the second pass: a trailing space or mark becomes its own piece; the marks are dropped
        local last = p:match("[%z\1-\127\194-\244][\128-\191]*$")
        if #last < #p and TRAILING[last] then
          row[#row + 1] = p:sub(1, #p - #last)
          if last ~= MARK then row[#row + 1] = last end
        elseif p ~= MARK then
          row[#row + 1] = p
        end
      end
    end
  end
  return words
end

-- The input as a list of strings; scalar says a single string came in.
local function inputs(self, x)
  x = convert.tensor(x)
  if trace_context.is_symbolic(x) then
    binding.error(fmt("%s: runs eagerly only (the BPE is Lua code over the strings' values), not inside tide.trace;"
      .. " in a tide.data map it runs in the main Lua state", who(self)))
  end
  if tostring(x.dtype) ~= "string" then
    binding.error(fmt("%s: expected string inputs, got dtype %s", who(self), tostring(x.dtype)))
  end
  if x.ndim > 1 and not (x.ndim == 2 and x.shape[2] == 1) then
    binding.error(fmt("%s: the input must be a string, a vector, or [N, 1]; got shape %s", who(self),
      tostring(x.shape)))
  end
  local scalar = x.ndim == 0
  if x.ndim ~= 1 then x = shape_ops.reshape(x, { -1 }) end
  return tensor.totable(x), scalar
end

-- tokenize(x): a string gives a 1-D tensor; a vector a tide.RaggedTensor, or with sequence_length a dense
-- [N, sequence_length] tensor (padded with 0, cut). A piece not in the vocabulary is id -1 (keras_hub's).
function BytePairTokenizer:tokenize(x)
  self:_check()
  local texts, scalar = inputs(self, x)
  if self.add_prefix_space then
    for i, s in ipairs(texts) do texts[i] = " " .. s end
  end
  local words = self:_presplit(texts)
  local strs = self._out_dtype == "string"
  local values, splits = {}, { 0 }
  for r, row in ipairs(words) do
    for _, w in ipairs(row) do
      for _, p in ipairs(self:_bpe(w)) do
        values[#values + 1] = strs and p or (self._vocab[p] or -1)
      end
    end
    splits[r + 1] = #values
  end
  local dt = self._out_dtype
  local v = convert.tensor(values, dt)
  if #values == 0 then v = shape_ops.reshape(v, { 0 }) end
  local sp = convert.tensor(splits, "int64")
  local pad = strs and "" or 0
  if self.sequence_length then
    local dense = lookup.ragged_to_tensor(v, sp, pad, self.sequence_length)
    return scalar and shape_ops.reshape(dense, { -1 }) or dense
  end
  if scalar then return v end
  return strings.RaggedTensor.from_row_splits(v, sp)
end

function BytePairTokenizer:call(x) return self:tokenize(x) end

-- Rows of ids as Lua lists; flat says one row came in (the result is then a scalar).
local function id_rows(self, ids)
  if getmetatable(ids) == strings.RaggedTensor then
    local vals, sp = tensor.totable(ids.values), tensor.totable(ids.row_splits)
    local rows = {}
    for r = 1, #sp - 1 do
      local row = {}
      for i = sp[r] + 1, sp[r + 1] do row[#row + 1] = vals[i] end
      rows[r] = row
    end
    return rows, false
  end
  if type(ids) == "table" and type(ids[1]) == "table" then return ids, false end
  local t = convert.tensor(ids)
  if not tostring(t.dtype):match("int") then
    binding.error(fmt("%s: detokenize expects integer ids, got dtype %s", who(self), tostring(t.dtype)))
  end
  if t.ndim > 2 then binding.error(fmt("%s: detokenize expects ids of rank 0, 1 or 2, got shape %s", who(self),
    tostring(t.shape))) end
  local v = tensor.totable(t)
  if t.ndim == 0 then return { { v } }, true end
  if t.ndim == 1 then return { v }, true end
  return v, false
end

-- detokenize(ids): the pieces joined and mapped back to bytes, one string per row (a 1-D input gives a scalar);
-- takes a dense tensor, a RaggedTensor or Lua lists. Id -1 (tokenize's unknown piece) gives nothing.
function BytePairTokenizer:detokenize(ids)
  self:_check()
  local rows, flat = id_rows(self, ids)
  local out = {}
  for r, row in ipairs(rows) do
    local buf = {}
    for _, id in ipairs(row) do
      local t = self._by_id[id]
      if t == nil and id ~= -1 then
        binding.error(fmt("%s: detokenize: id %s is not in the vocabulary", who(self), tostring(id)))
      end
      buf[#buf + 1] = t or ""
    end
    -- each character back to its byte (one outside the map, none: keras_hub's default "")
    out[r] = table.concat(buf):gsub("[%z\1-\127\194-\244][\128-\191]*", function(c) return U2BYTE[c] or "" end)
  end
  local res = convert.tensor(out, "string")
  if flat then return shape_ops.reshape(res, {}) end
  return res
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
