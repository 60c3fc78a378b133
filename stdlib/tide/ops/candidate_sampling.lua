-- stdlib/tide/ops/candidate_sampling.lua — TF's candidate samplers (uniform, log-uniform, fixed and learned unigram,
-- all) and compute_accidental_hits: the sampled ids with their expected counts, drawn from tide's seeded stream.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local tensor = require "tide.tensor"
local random = require "tide.random"

local M = {}
local fmt = string.format
local FLT_MAX = 3.4028234663852886e38

local function true_classes_arg(op, v, num_true)
  if v == nil then binding.error(op .. ": true_classes is required") end
  local t = convert.arg(v, op .. " (true_classes)")
  if not dtype.is_int[t.dt] then binding.error(fmt("%s: true_classes must be an integer tensor, got %s", op, dtype.names[t.dt])) end
  if tensor.is_symbolic(t) then
    binding.error(op .. ": needs eager true_classes (draw outside tide.trace and pass sampled_values in)")
  end
  if t.ndim ~= 2 or tonumber(t.dims[1]) ~= num_true then
    binding.error(fmt("%s: true_classes must be [batch, num_true = %d], got shape %s", op, num_true, tostring(t.shape)))
  end
  return t
end

-- log1p and expm1 to full precision (LuaJIT's math has neither): Goldberg's and Kahan's corrections.
local function log1p(x)
  local u = 1 + x
  if u == 1 then return x end
  return math.log(u) * x / (u - 1)
end
local function expm1(x)
  local u = math.exp(x)
  if u == 1 then return x end
  if u - 1 == -1 then return -1 end
  return (u - 1) * x / math.log(u)
end

-- TF's check: every true class is an id of the range.
local function check_range(op, rows, range)
  for b, row in ipairs(rows) do
    for j, id in ipairs(row) do
      if id < 0 or id >= range then
        binding.error(fmt("%s: true_classes[%d, %d] = %d is out of range [0, %d)", op, b - 1, j - 1, id, range))
      end
    end
  end
end

local function pos_int(op, what, v, min)
  if v == nil then binding.error(fmt("%s: %s is required", op, what)) end
  local n = args.int(op, what, v)
  if n < min then binding.error(fmt("%s: %s must be at least %d, got %d", op, what, min, n)) end
  return n
end

-- TF's RangeSampler: num_sampled draws of draw() (unique: until that many distinct ids), and the expected counts
-- of p(id) over the tries made: p * tries, or 1 - (1 - p)^tries when unique (the tries then exceed the draws).
local function sample(op, o, p_of, draw_many)
  local num_true = pos_int(op, "num_true", o.num_true, 1)
  local num_sampled = pos_int(op, "num_sampled", o.num_sampled, 1)
  local range_max = pos_int(op, "range_max", o.range_max, 1)
  if o.unique == nil then binding.error(op .. ": unique is required") end
  local unique = args.bool(op, "unique", o.unique)
  local tc = true_classes_arg(op, o.true_classes, num_true)
  if unique and num_sampled > range_max then
    binding.error(fmt("%s: num_sampled = %d is more than range_max = %d with unique = true", op, num_sampled, range_max))
  end
  local out, seen, tries = {}, {}, 0
  while #out < num_sampled do
    local want = unique and (num_sampled - #out) * 2 or num_sampled
    for _, id in ipairs(draw_many(want, range_max)) do
      tries = tries + 1
      if not unique or not seen[id] then
        seen[id] = true
        out[#out + 1] = id
        if #out == num_sampled then break end
      end
    end
  end
  local function expected(p)
    if tries == num_sampled then return p * num_sampled end
    return -expm1(tries * log1p(-p))
  end
  local sampled_exp = {}
  for i, id in ipairs(out) do sampled_exp[i] = expected(p_of(id)) end
  local rows, true_exp = tc:totable(), {}
  check_range(op, rows, range_max)
  for b, row in ipairs(rows) do
    true_exp[b] = {}
    for j, id in ipairs(row) do true_exp[b][j] = expected(p_of(id)) end
  end
  return convert.tensor(out, "int64", op), convert.tensor(true_exp, "float32", op),
    convert.tensor(sampled_exp, "float32", op)
end

local NAMES = { "true_classes", "num_true", "num_sampled", "unique", "range_max", "seed", "name" }

-- Uniform draws in [0, 1) from tide's stream (float64), n of them.
local function uniforms(n, seed) return random.uniform({ n }, { dtype = "float64", seed = seed }):totable() end

-- uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=nil) as tf.random's:
-- (sampled_candidates int64 [num_sampled], true_expected_count float32 [batch, num_true],
-- sampled_expected_count float32 [num_sampled]); every id in [0, range_max) equally likely.
function M.uniform_candidate_sampler(...)
  local op = "uniform_candidate_sampler"
  local o = args.parse(op, NAMES, ...)
  local r = o.range_max
  return sample(op, o, function() return 1 / r end, function(n, range)
    local out = {}
    for i, u in ipairs(uniforms(n, o.seed)) do out[i] = math.min(math.floor(u * range), range - 1) end
    return out
  end)
end

-- log_uniform_candidate_sampler(...) as tf.random's: P(id) = log((id + 2) / (id + 1)) / log(range_max + 1) (Zipf-like).
function M.log_uniform_candidate_sampler(...)
  local op = "log_uniform_candidate_sampler"
  local o = args.parse(op, NAMES, ...)
  local log_range = math.log((o.range_max or 0) + 1)
  return sample(op, o, function(id) return (math.log(id + 2) - math.log(id + 1)) / log_range end, function(n, range)
    local out = {}
    for i, u in ipairs(uniforms(n, o.seed)) do out[i] = math.min(math.floor(math.exp(u * log_range)) - 1, range - 1) end
    return out
  end)
end

-- Draws from the weights w[0..range-1] (their sum `total`) by inverting the cumulative sums.
local function weighted_draws(w, total, n, seed)
  local cum, acc = {}, 0
  for i = 0, #w do acc = acc + w[i]; cum[i] = acc end
  local out = {}
  for i, u in ipairs(uniforms(n, seed)) do
    local target, lo, hi = u * total, 0, #w
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if cum[mid] > target then hi = mid else lo = mid + 1 end
    end
    out[i] = lo
  end
  return out
end

-- fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, {vocab_file="",
-- distortion=1, num_reserved_ids=0, num_shards=1, shard=0, unigrams={}, seed=nil}) as TF's: P(id) proportional to
-- unigrams[id - num_reserved_ids] ^ distortion (reserved ids never drawn), from a list or a file of one count a line
-- (the last comma-separated field); num_shards/shard keep the ids of that shard (id % num_shards == shard).
function M.fixed_unigram_candidate_sampler(...)
  local op = "fixed_unigram_candidate_sampler"
  local o = args.parse(op, { "true_classes", "num_true", "num_sampled", "unique", "range_max", "vocab_file", "distortion",
    "num_reserved_ids", "num_shards", "shard", "unigrams", "seed", "name" }, ...)
  local counts = {}
  if o.vocab_file ~= nil and o.vocab_file ~= "" then
    local f, err = io.open(o.vocab_file, "r")
    if not f then binding.error(fmt("%s: cannot read vocab_file: %s", op, tostring(err))) end
    for line in f:lines() do
      local last = line:match("([^,]*)$")
      local c = tonumber(last)
      if not c then f:close(); binding.error(fmt("%s: vocab_file line %d has no count: %q", op, #counts + 1, line)) end
      counts[#counts + 1] = c
    end
    f:close()
  else
    local u = o.unigrams
    if binding.istensor(u) then u = u:totable() end
    counts = u or {}
  end
  local range = pos_int(op, "range_max", o.range_max, 1)
  local reserved = o.num_reserved_ids == nil and 0 or pos_int(op, "num_reserved_ids", o.num_reserved_ids, 0)
  local shards = o.num_shards == nil and 1 or pos_int(op, "num_shards", o.num_shards, 1)
  local shard = o.shard == nil and 0 or pos_int(op, "shard", o.shard, 0)
  if shard >= shards then binding.error(fmt("%s: shard = %d must be below num_shards = %d", op, shard, shards)) end
  if #counts + reserved ~= range then
    binding.error(fmt("%s: range_max = %d must be the unigrams' count (%d) plus num_reserved_ids (%d)", op, range,
      #counts, reserved))
  end
  local distortion = o.distortion == nil and 1 or args.number(op, "distortion", o.distortion)
  local w, total = {}, 0
  for id = 0, range - 1 do
    local c = id >= reserved and counts[id - reserved + 1] or 0
    if c < 0 then binding.error(fmt("%s: unigram %d is negative (%s)", op, id - reserved, tostring(c))) end
    w[id] = (id % shards == shard and c > 0) and c ^ distortion or 0
    total = total + w[id]
  end
  if total <= 0 then binding.error(op .. ": the unigrams give no id a positive weight") end
  return sample(op, o, function(id) return w[id] / total end, function(n) return weighted_draws(w, total, n, o.seed) end)
end

-- learned_unigram_candidate_sampler(...) as TF's: a unigram distribution learned from the true classes, every id
-- starting at weight 1; a call draws from what the calls before it with the same range_max and seed taught (TF's
-- kernel keeps its counts the same way), then learns its own true classes. Without a seed each call starts afresh.
local learned = {}
function M.learned_unigram_candidate_sampler(...)
  local op = "learned_unigram_candidate_sampler"
  local o = args.parse(op, NAMES, ...)
  local range = pos_int(op, "range_max", o.range_max, 1)
  local key = o.seed ~= nil and (range .. ":" .. tostring(o.seed)) or nil
  local state = key and learned[key]
  if not state then
    state = { w = {}, total = range }
    for id = 0, range - 1 do state.w[id] = 1 end
    if key then learned[key] = state end
  end
  local w = state.w
  local a, b, c = sample(op, o, function(id) return w[id] / state.total end,
    function(n) return weighted_draws(w, state.total, n, o.seed) end)
  for _, row in ipairs(convert.arg(o.true_classes, op):totable()) do
    for _, id in ipairs(row) do
      if id >= 0 and id < range then w[id] = w[id] + 1; state.total = state.total + 1 end
    end
  end
  return a, b, c
end

-- all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=nil) as TF's: the ids 0..num_sampled - 1,
-- every expected count 1 (for tests against the full softmax).
function M.all_candidate_sampler(...)
  local op = "all_candidate_sampler"
  local o = args.parse(op, { "true_classes", "num_true", "num_sampled", "unique", "seed", "name" }, ...)
  local num_true = pos_int(op, "num_true", o.num_true, 1)
  local n = pos_int(op, "num_sampled", o.num_sampled, 1)
  local tc = true_classes_arg(op, o.true_classes, num_true)
  check_range(op, tc:totable(), n)
  local ids, ones = {}, {}
  for i = 1, n do ids[i], ones[i] = i - 1, 1 end
  local t = {}
  for b = 1, tonumber(tc.dims[0]) do
    t[b] = {}
    for j = 1, num_true do t[b][j] = 1 end
  end
  local true_exp = #t > 0 and convert.tensor(t, "float32", op) or convert.tensor({}, "float32", op):reshape { 0, num_true }
  return convert.tensor(ids, "int64", op), true_exp, convert.tensor(ones, "float32", op)
end

-- compute_accidental_hits(true_classes, sampled_candidates, num_true) as tf.nn's: each (row, position) where a true
-- class of the row is a sampled candidate (its last position when repeated), row-major -> indices int32,
-- ids int64 (positions), weights float32 (-FLT_MAX each). Eager (the hits' count is the data's).
function M.compute_accidental_hits(true_classes, sampled_candidates, ...)
  local op = "compute_accidental_hits"
  local o = args.parse(op, { "num_true", "seed", "name" }, ...)
  local num_true = pos_int(op, "num_true", o.num_true, 1)
  local tc = true_classes_arg(op, true_classes, num_true)
  local s = convert.arg(sampled_candidates, op .. " (sampled_candidates)")
  if not dtype.is_int[s.dt] or s.ndim ~= 1 then
    binding.error(fmt("%s: sampled_candidates must be a 1-D integer tensor, got %s %s", op, dtype.names[s.dt], tostring(s.shape)))
  end
  local pos = {}
  for i, id in ipairs(s:totable()) do pos[id] = i - 1 end
  local idx, ids, wts = {}, {}, {}
  for b, row in ipairs(tc:totable()) do
    for _, id in ipairs(row) do
      if pos[id] then idx[#idx + 1], ids[#ids + 1], wts[#wts + 1] = b - 1, pos[id], -FLT_MAX end
    end
  end
  return convert.tensor(idx, "int32", op), convert.tensor(ids, "int64", op), convert.tensor(wts, "float32", op)
end

return M
