-- stdlib/tide/ops/tf_top_misc.lua — TF's small top-level helpers over lists, sparse and ragged values and the clock:
-- edit_distance, ragged_fill_empty_rows(_grad), guarantee_const, group, tuple, timestamp.
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
