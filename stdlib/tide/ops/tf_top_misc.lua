-- stdlib/tide/ops/tf_top_misc.lua — TF's small top-level helpers over lists, sparse and ragged values and the clock:
-- edit_distance, ragged_fill_empty_rows(_grad), random_index_shuffle, guarantee_const, group, tuple, timestamp.
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local dtype = require "tide.dtype"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local fmt = string.format

local C = binding.C
local M = {}

local function fail(op, f, ...) binding.error(op .. ": " .. fmt(f, ...)) end

local function is_symbolic(t) return bit.band(t.flags, C.TIDE_TENSOR_SYMBOLIC) ~= 0 end

-- A concrete tensor argument (these ops read values to size their results).
local function concrete(op, what, v, dt)
  local t = convert.arg(v, op .. " (" .. what .. ")")
  if is_symbolic(t) then
    fail(op, "%s must be known while tracing: the result's size depends on its values (run it eagerly)", what)
  end
  if dt and dtype.names[t.dt] ~= dt then fail(op, "%s must be %s, got %s", what, dt, dtype.names[t.dt]) end
  return t
end

-- ---- edit_distance --------------------------------------------------------------------------

-- The Levenshtein distance between Lua lists a and b.
local function levenshtein(a, b)
  local prev, cur = {}, {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    cur[0] = i
    for j = 1, #b do
      local cost = a[i] == b[j] and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev, cur = cur, prev
  end
  return prev[#b]
end

-- A SparseTensor's sequences grouped by their leading indices: key -> list of values, and its dense shape.
local function sequences(op, what, sp)
  -- (a SparseTensor's three tensors; tide.sparse_tensor sits on a floor above the ops)
  if type(sp) ~= "table" or not (binding.istensor(sp.indices) and binding.istensor(sp.values) and
      binding.istensor(sp.dense_shape)) then
    fail(op, "%s must be a tide.SparseTensor, got %s", what, binding.istensor(sp) and "a tensor" or type(sp))
  end
  for _, part in ipairs { sp.indices, sp.values, sp.dense_shape } do
    if is_symbolic(part) then fail(op, "%s must be known while tracing (run it eagerly)", what) end
  end
  local idx, vals, dims = sp.indices:totable(), sp.values:totable(), sp.dense_shape:totable()
  if #dims < 1 then fail(op, "%s must have rank at least 1", what) end
  local groups = {}
  for n = 1, #idx do
    local key = table.concat(idx[n], ",", 1, #dims - 1)
    local g = groups[key]
    if not g then g = {}; groups[key] = g end
    g[#g + 1] = vals[n]
  end
  return groups, dims, sp.values
end

-- edit_distance(hypothesis, truth, normalize=true) as tf.edit_distance: the Levenshtein distance between the
-- sequences of two SparseTensors (each sequence the values sharing all but the last index, in order), float32 of
-- the broadcast of both dense shapes less their last dim; normalize divides by the truth's length (a missing truth
-- gives inf, or 0 when the hypothesis is missing too). Eager: it reads the values.
function M.edit_distance(hypothesis, truth, ...)
  local op = "edit_distance"
  local o = args.parse(op, { "normalize", "name" }, ...)
  local normalize = args.bool(op, "normalize", o.normalize, true)
  local hg, hd, hv = sequences(op, "hypothesis", hypothesis)
  local tg, td, tv = sequences(op, "truth", truth)
  if #hd ~= #td then fail(op, "hypothesis and truth must have the same rank, got %d and %d", #hd, #td) end
  if hv.dt ~= tv.dt then
    fail(op, "hypothesis and truth values must have the same dtype, got %s and %s", dtype.names[hv.dt],
      dtype.names[tv.dt])
  end
  local out_shape, total = {}, 1
  for i = 1, #hd - 1 do
    out_shape[i] = math.max(hd[i], td[i])
    total = total * out_shape[i]
  end
  local flat = {}
  local pos = {}
  for i = 1, #out_shape do pos[i] = 0 end
  for k = 1, total do
    local key = table.concat(pos, ",")
    local h, t = hg[key], tg[key]
    local v
    if not h and not t then v = 0
    else
      h, t = h or {}, t or {}
      v = levenshtein(h, t)
      if normalize then v = #t == 0 and (v == 0 and 0 / 0 or math.huge) or v / #t end
    end
    flat[k] = v
    for i = #pos, 1, -1 do -- the next position, row-major
      pos[i] = pos[i] + 1
      if pos[i] < out_shape[i] then break end
      pos[i] = 0
    end
  end
  local y = convert.tensor(flat, "float32", op)
  return shape_ops.reshape(y, out_shape)
end

-- ---- ragged_fill_empty_rows --------------------------------------------------------------------

-- ragged_fill_empty_rows(value_rowids, values, nrows, default_value) as TF's RaggedFillEmptyRows: a ragged
-- tensor's rows (value_rowids sorted, int64) with each empty one of the nrows given default_value. Returns
-- output_value_rowids, output_values, empty_row_indicator (bool [nrows]) and reverse_index_map (each value's
-- place in the output). Gradients flow to values and default_value (a gather). Eager: it reads the row ids.
function M.ragged_fill_empty_rows(value_rowids, values, nrows, default_value)
  local op = "ragged_fill_empty_rows"
  local ids = concrete(op, "value_rowids", value_rowids, "int64")
  local v = convert.arg(values, op .. " (values)")
  local n = args.int(op, "nrows", binding.istensor(nrows) and concrete(op, "nrows", nrows):item() or nrows)
  local dv = binding.istensor(default_value) and default_value or convert.coerce(default_value, v, op, 4)
  if ids.ndim ~= 1 then fail(op, "value_rowids must be 1-D, got shape %s", tostring(ids.shape)) end
  if dv.ndim ~= 0 then fail(op, "default_value must be a scalar, got shape %s", tostring(dv.shape)) end
  if v.ndim ~= 1 or tonumber(v.dims[0]) ~= tonumber(ids.dims[0]) then
    fail(op, "values must be 1-D with one value per row id (%d), got shape %s", tonumber(ids.dims[0]),
      tostring(v.shape))
  end
  local r = ids:totable()
  local count = {}
  for i = 1, #r do
    local row = tonumber(r[i])
    if row < 0 or row >= n then fail(op, "value_rowids[%d] = %d is outside [0, %d)", i - 1, row, n) end
    if i > 1 and row < tonumber(r[i - 1]) then fail(op, "value_rowids must be sorted, got %d after %d", row, r[i - 1]) end
    count[row] = (count[row] or 0) + 1
  end
  local out_ids, src, empty, rev = {}, {}, {}, {}
  local k = 1
  for row = 0, n - 1 do
    if count[row] then
      for _ = 1, count[row] do
        out_ids[#out_ids + 1] = row
        src[#src + 1] = k - 1
        rev[k] = #out_ids - 1
        k = k + 1
      end
      empty[row + 1] = false
    else
      out_ids[#out_ids + 1] = row
      src[#src + 1] = #r -- the default value, after the values
      empty[row + 1] = true
    end
  end
  local pool = shape_ops.concat({ v, shape_ops.reshape(dv, { 1 }) }, 0)
  local function int64(list)
    if #list == 0 then return convert.empty(C.TIDE_INT64, { 0 }, op) end
    return convert.tensor(list, "int64", op)
  end
  local out_values = #src == 0 and shape_ops.reshape(pool, { 0 }) or shape_ops.gather(pool, int64(src))
  local empty_t = n == 0 and convert.empty(C.TIDE_BOOL, { 0 }, op) or convert.tensor(empty, "bool", op)
  return int64(out_ids), out_values, empty_t, int64(rev)
end

-- ragged_fill_empty_rows_grad(reverse_index_map, grad_values) as TF's: the gradients of ragged_fill_empty_rows'
-- values (grad_values gathered at reverse_index_map) and default_value (the sum of the rest).
function M.ragged_fill_empty_rows_grad(reverse_index_map, grad_values)
  local op = "ragged_fill_empty_rows_grad"
  local map = convert.arg(reverse_index_map, op .. " (reverse_index_map)")
  if dtype.names[map.dt] ~= "int64" then fail(op, "reverse_index_map must be int64, got %s", dtype.names[map.dt]) end
  local g = convert.arg(grad_values, op .. " (grad_values)")
  if map.ndim ~= 1 or g.ndim ~= 1 then
    fail(op, "reverse_index_map and grad_values must be 1-D, got shapes %s and %s", tostring(map.shape),
      tostring(g.shape))
  end
  local d_values = shape_ops.gather(g, map)
  local d_default = math_ops.sub(reduce.reduce_sum(g), reduce.reduce_sum(d_values))
  return d_values, d_default
end

-- ---- random_index_shuffle ---------------------------------------------------------------------

-- TF's index shuffle is a cycle-walking Simon block cipher: a block of 2W bits (W >= 8, W <= 32 here), round keys
-- from the 3-word seed, encrypt until the value falls in [0, max_index]. Words are Lua numbers in [0, 2^W); the
-- bit library's 32-bit results are brought back with % 2^32.
local band, bor, bxor, lshift, rshift = bit.band, bit.bor, bit.bxor, bit.lshift, bit.rshift
local U32 = 2 ^ 32

local function rotl(x, r, w, mask) return band(bor(lshift(x, r), rshift(x, w - r)), mask) % U32 end
local function rotr(x, r, w, mask) return band(bor(rshift(x, r), lshift(x, w - r)), mask) % U32 end
local function simon_f(x, w, mask) return bxor(band(rotl(x, 1, w, mask), rotl(x, 8, w, mask)), rotl(x, 2, w, mask)) % U32 end

local function round_keys(key, rounds, w, mask)
  local c = band(0xfffffffc, mask) % U32
  local z = band(0x192c0ef5, mask) % U32 -- the low word of 0x7369f885192c0ef5 (W <= 32 keeps only that)
  local rk = { band(key[1], mask) % U32, band(key[2], mask) % U32, band(key[3], mask) % U32 }
  for i = 4, rounds do
    local prev = rk[i - 1]
    rk[i] = bxor(bxor(bxor(c, band(z, 1)), rk[i - 3]), bxor(rotr(prev, 3, w, mask), rotr(prev, 4, w, mask))) % U32
    z = rshift(z, 1)
  end
  return rk
end

local function index_shuffle(index, key, max_index, rounds)
  if max_index == 0 then return 0 end
  local bits = math.ceil(math.log(max_index) / math.log(2))
  -- log2 of an exact power of two must be exact: math.log's ratio may round just above the integer
  if 2 ^ (bits - 1) >= max_index then bits = bits - 1 end
  local block = math.max(bits + bits % 2, 16)
  local w = block / 2
  local mask = w == 32 and -1 or 2 ^ w - 1
  local rk = round_keys(key, rounds, w, mask)
  local span = 2 ^ w
  local left, right = math.floor(index / span) % span, index % span
  while true do
    for i = 1, #rk - 1, 2 do
      left = bxor(bxor(left, simon_f(right, w, mask)), rk[i]) % U32
      right = bxor(bxor(right, simon_f(left, w, mask)), rk[i + 1]) % U32
    end
    if left * span + right <= max_index then return left * span + right end
  end
end

-- random_index_shuffle(index, seed, max_index, rounds=4) as tf.random_index_shuffle: the position of index in a
-- pseudorandom permutation of [0, max_index] fixed by seed ([3], or [n, 3] for a vector of them), TF's exact
-- values. index and max_index int32 or int64, scalars or vectors of one length; max_index below 2^53 (Lua's exact
-- integers). Eager: it reads the values.
function M.random_index_shuffle(index, seed, max_index, ...)
  local op = "random_index_shuffle"
  local o = args.parse(op, { "rounds", "name" }, ...)
  local rounds = o.rounds == nil and 4 or args.int(op, "rounds", o.rounds)
  if rounds < 4 or rounds % 2 ~= 0 then fail(op, "rounds must be an even number >= 4, got %d", rounds) end
  local idx = concrete(op, "index", index)
  local dt = dtype.names[idx.dt]
  if dt ~= "int32" and dt ~= "int64" then fail(op, "index must be int32 or int64, got %s", dt) end
  local mx = binding.istensor(max_index) and concrete(op, "max_index", max_index) or convert.tensor(max_index, dt, op)
  if mx.dt ~= idx.dt then fail(op, "max_index must be %s as index, got %s", dt, dtype.names[mx.dt]) end
  local sd = concrete(op, "seed", seed)
  local sdt = dtype.names[sd.dt]
  if sdt ~= "int32" and sdt ~= "int64" then fail(op, "seed must be int32 or int64, got %s", sdt) end
  local n = math.max(tonumber(idx.nelem), tonumber(mx.nelem), math.floor(tonumber(sd.nelem) / 3))
  if idx.ndim > 1 or (idx.ndim == 1 and tonumber(idx.dims[0]) ~= n) then
    fail(op, "index must be a scalar or vector, got shape %s", tostring(idx.shape))
  end
  if not ((sd.ndim == 1 and tonumber(sd.dims[0]) == 3) or
          (sd.ndim == 2 and tonumber(sd.dims[0]) == n and tonumber(sd.dims[1]) == 3)) then
    fail(op, "seed must be a vector of size [3] or a matrix of size [%d, 3], got shape %s", n, tostring(sd.shape))
  end
  if mx.ndim > 1 or (mx.ndim == 1 and tonumber(mx.dims[0]) ~= n) then
    fail(op, "max_index must be a scalar or a vector of the same size as index, got shape %s", tostring(mx.shape))
  end
  local function flat(t)
    local v = t.ndim == 0 and { t:item() } or t:totable()
    if t.ndim == 2 then
      local f = {}
      for _, row in ipairs(v) do for _, x in ipairs(row) do f[#f + 1] = x end end
      v = f
    end
    for i = 1, #v do v[i] = tonumber(v[i]) end
    return v
  end
  local iv, mv, sv = flat(idx), flat(mx), flat(sd)
  local out = {}
  for i = 1, n do
    local m = mv[#mv == 1 and 1 or i]
    if m < 0 or m >= 2 ^ 53 then fail(op, "max_index must be in [0, 2^53), got %s", tostring(m)) end
    local at = #sv == 3 and 0 or 3 * (i - 1)
    local key = { sv[at + 1] % U32, sv[at + 2] % U32, sv[at + 3] % U32 }
    local x = iv[#iv == 1 and 1 or i]
    if x < 0 then x = x + 2 ^ 64 end
    out[i] = index_shuffle(x % 2 ^ 53, key, m, rounds)
  end
  if idx.ndim == 0 and sd.ndim == 1 and mx.ndim == 0 then return convert.tensor(out[1], dt, op) end
  if n == 0 then return convert.empty(dtype.code(dt, op), { 0 }, op) end
  return convert.tensor(out, dt, op)
end

-- ---- graph-mode helpers, eager meanings ---------------------------------------------------

-- guarantee_const(input) as tf.guarantee_const: a promise to TF's graph optimizer that input is constant; tide has
-- no such optimizer, so it is the identity (gradients pass, as they do through TF's).
function M.guarantee_const(input)
  return shape_ops.identity(convert.arg(input, "guarantee_const"))
end

-- group(...) as tf.group: in TF an op that waits for its inputs. Eager TF (and tide, whose ops run when called or
-- in the traced graph's order) has nothing to wait for: it checks its arguments are tensors, Variables, lists of
-- them or nil, and returns nil (eager TF's None).
function M.group(...)
  local function check(v, where)
    if v == nil or binding.istensor(v) or convert.is_variable(v) then return end
    if type(v) == "table" then
      for i, e in pairs(v) do
        if type(i) == "number" then check(e, where .. "[" .. i .. "]") end
      end
      return
    end
    fail("group", "input %s is a %s, not a tensor, Variable or list of them", where, type(v))
  end
  for i = 1, select("#", ...) do check((select(i, ...)), tostring(i)) end
  return nil
end

-- tuple(tensors, control_inputs=nil) as tf.tuple: the tensors' identities, a list (nil holes kept), once
-- everything has run (eager and traced ops already have).
function M.tuple(tensors, control_inputs)
  local op = "tuple"
  if type(tensors) ~= "table" or binding.istensor(tensors) then
    fail(op, "tensors must be a Lua list of tensors, got %s", binding.istensor(tensors) and "a tensor" or type(tensors))
  end
  if control_inputs ~= nil then M.group(control_inputs) end
  local n = tensors.n or #tensors
  for k in pairs(tensors) do if type(k) == "number" and k > n then n = k end end
  local out = { n = n }
  for i = 1, n do
    local t = tensors[i]
    if t ~= nil then
      if convert.is_variable(t) then t = convert.unvariable(t) end
      if not binding.istensor(t) then fail(op, "tensors[%d] is a %s, not a tensor", i, type(t)) end
      out[i] = shape_ops.identity(t)
    end
  end
  return out
end

-- timestamp() as tf.timestamp: the wall clock's seconds since the Unix epoch, a float64 scalar (eagerly: when
-- called; TF's graph op reads the clock when the graph runs, tide's traced function when it is traced).
function M.timestamp()
  return convert.tensor(C.tide_wall_seconds(), "float64", "timestamp")
end

return M
