-- stdlib/tide/tracing/tf_control.lua — TF's functional control flow at the top level: map_fn, foldl, foldr,
-- scan, switch_case, case (tide.<name>). Loops are unrolled over a known leading dim, as tide.ops.scan's.
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local tensor = require "tide.tensor"
local nest = require "tide.nest"
local control = require "tide.tracing.control"

local M = {}
local fmt = string.format
local unpack = unpack or table.unpack

local function need_fn(op, what, f)
  if type(f) ~= "function" then binding.error(fmt("%s: %s must be a function, got %s", op, what, type(f))) end
end

-- elems (a tensor or a nest of them) as a list of per-step nests, and its leading length (known, shared).
local function slices(op, elems)
  local flat = nest.flatten(elems)
  if #flat == 0 then binding.error(op .. ": elems must hold at least one tensor") end
  local n
  for i, t in ipairs(flat) do
    t = convert.tensor(t, nil, op .. " (elems)")
    flat[i] = t
    if t.ndim == 0 then binding.error(op .. ": elems must have a leading dim, got a 0-d tensor") end
    local d = t.shape[1]
    if type(d) ~= "number" then
      binding.error(fmt("%s: elems needs a known leading dim (tide unrolls the loop), got shape %s", op,
        tostring(t.shape)))
    end
    if n and d ~= n then binding.error(fmt("%s: elems' leading dims differ: %d and %d", op, n, d)) end
    n = d
  end
  local steps = {}
  for k = 0, n - 1 do
    local part = {}
    for i, t in ipairs(flat) do part[i] = t[k] end
    steps[k + 1] = nest.pack_sequence_as(elems, part)
  end
  return steps, n
end

-- The per-step results (nests of one structure) stacked leaf by leaf.
local function stack_steps(results)
  local first = nest.flatten(results[1])
  local cols = {}
  for i = 1, #first do cols[i] = {} end
  for k, r in ipairs(results) do
    local f = nest.flatten(r)
    for i = 1, #first do cols[i][k] = f[i] end
  end
  local out = {}
  for i = 1, #first do out[i] = shape_ops.stack(cols[i], 0) end
  return nest.pack_sequence_as(results[1], out)
end

-- map_fn(fn, elems, {fn_output_signature=}) as tf.map_fn: fn on each slice of elems' leading dim, the results
-- stacked (nests as nests). An empty elems is an error (tide cannot run fn to learn the result's shape).
function M.map_fn(fn, elems, ...)
  args.parse("map_fn", { "dtype", "parallel_iterations", "back_prop", "swap_memory", "infer_shape", "name",
    "fn_output_signature" }, ...)
  need_fn("map_fn", "fn", fn)
  local steps, n = slices("map_fn", elems)
  if n == 0 then binding.error("map_fn: elems is empty (its leading dim is 0)") end
  local out = {}
  for k = 1, n do out[k] = fn(steps[k]) end
  return stack_steps(out)
end

-- The fold shared by foldl/foldr/scan: acc = fn(acc, x) in order, starting from initializer or the first slice.
local function fold(op, fn, elems, initializer, reverse, keep)
  need_fn(op, "fn", fn)
  local steps, n = slices(op, elems)
  local order = {}
  for k = 1, n do order[k] = reverse and n + 1 - k or k end
  local acc, start, outs = initializer, 1, {}
  if acc == nil then
    if n == 0 then binding.error(op .. ": elems is empty and no initializer was given") end
    acc, start = steps[order[1]], 2
    outs[order[1]] = acc
  end
  for j = start, n do
    acc = fn(acc, steps[order[j]])
    outs[order[j]] = acc
  end
  if keep then
    if n == 0 then binding.error(op .. ": elems is empty (its leading dim is 0)") end
    return stack_steps(outs)
  end
  return acc
end

-- foldl(fn, elems, initializer=nil) as tf.foldl: fn(acc, x) from the first slice to the last.
function M.foldl(fn, elems, initializer, ...)
  args.parse("foldl", { "parallel_iterations", "back_prop", "swap_memory", "name" }, ...)
  return fold("foldl", fn, elems, initializer, false, false)
end

-- foldr(fn, elems, initializer=nil) as tf.foldr: fn(acc, x) from the last slice to the first.
function M.foldr(fn, elems, initializer, ...)
  args.parse("foldr", { "parallel_iterations", "back_prop", "swap_memory", "name" }, ...)
  return fold("foldr", fn, elems, initializer, true, false)
end

-- scan(fn, elems, initializer=nil, {reverse=false}) as tf.scan: every accumulator of the fold, stacked (the
-- first slice itself first when there is no initializer). tide.ops.scan is keras.ops' (carry, ys) form.
function M.scan(fn, elems, initializer, ...)
  local o = args.parse("scan", { "parallel_iterations", "back_prop", "swap_memory", "infer_shape", "reverse",
    "name" }, ...)
  return fold("scan", fn, elems, initializer, o.reverse, true)
end

-- A branch index or predicate: a Lua value, an eager tensor's value, or nil for a traced tensor.
local function known(op, v)
  if type(v) == "number" or type(v) == "boolean" then return v end
  v = convert.tensor(v, nil, op)
  if v.ndim ~= 0 then binding.error(fmt("%s: expected a 0-d tensor, got shape %s", op, tostring(v.shape))) end
  if tensor.is_symbolic(v) then return nil, v end
  return v:item(), v
end

-- switch_case(branch_index, branch_fns, default=nil) as tf.switch_case: branch_fns[index + 1]() (a list) or
-- branch_fns[index]() (a table keyed by ints); an index with no branch runs default, or the last branch.
function M.switch_case(index, branch_fns, default)
  local op = "switch_case"
  if type(branch_fns) ~= "table" then binding.error(op .. ": branch_fns must be a list or table of functions") end
  local keys, by = {}, {}
  if #branch_fns > 0 then
    for i, f in ipairs(branch_fns) do keys[i] = i - 1; by[i - 1] = f end
  else
    for k, f in pairs(branch_fns) do
      if type(k) ~= "number" or k % 1 ~= 0 then binding.error(op .. ": branch_fns' keys must be whole numbers") end
      keys[#keys + 1] = k
      by[k] = f
    end
    table.sort(keys)
  end
  if #keys == 0 then binding.error(op .. ": branch_fns is empty") end
  for _, k in ipairs(keys) do need_fn(op, "branch " .. k, by[k]) end
  if default ~= nil then need_fn(op, "default", default) end
  local fallback = default or by[keys[#keys]]
  local v, t = known(op, index)
  if v ~= nil then
    if type(v) ~= "number" then binding.error(op .. ": branch_index must be an integer") end
    return (by[v] or fallback)()
  end
  if not t.dtype:find("int") then binding.error(op .. ": branch_index must be an integer tensor, got " .. t.dtype) end
  local function pick(j)
    if j > #keys then return fallback() end
    return control.cond(math_ops.equal(t, keys[j]), by[keys[j]], function() return pick(j + 1) end)
  end
  return pick(1)
end

-- case(pred_fn_pairs, default=nil, exclusive=false) as tf.case: the fn of the first true predicate (pairs are
-- {pred, fn} lists), else default; exclusive=true makes more than one true predicate an error (eagerly).
function M.case(pairs_, default, exclusive)
  local op = "case"
  if type(pairs_) ~= "table" or #pairs_ == 0 then binding.error(op .. ": pred_fn_pairs must be a non-empty list") end
  for i, p in ipairs(pairs_) do
    if type(p) ~= "table" or p[1] == nil then binding.error(fmt("%s: pred_fn_pairs[%d] must be {pred, fn}", op, i)) end
    need_fn(op, fmt("pred_fn_pairs[%d]'s fn", i), p[2])
  end
  if default ~= nil then need_fn(op, "default", default) end
  local fallback = default or pairs_[#pairs_][2] -- TF: the last fn when no default is given
  local vals, all_known = {}, true
  for i, p in ipairs(pairs_) do
    local v, t = known(op, p[1])
    if v == nil then all_known = false else
      if type(v) ~= "boolean" then binding.error(fmt("%s: pred_fn_pairs[%d]'s pred must be a bool", op, i)) end
    end
    vals[i] = { v = v, t = t }
  end
  if all_known then
    local hit
    for i = 1, #pairs_ do
      if vals[i].v then
        if hit and exclusive then
          binding.error(fmt("%s: more than one predicate is true (%d and %d) with exclusive=true", op, hit, i))
        end
        hit = hit or i
      end
    end
    return (hit and pairs_[hit][2] or fallback)()
  end
  local function pick(i)
    if i > #pairs_ then return fallback() end
    local pred = vals[i].t or convert.tensor(vals[i].v, "bool")
    return control.cond(pred, pairs_[i][2], function() return pick(i + 1) end)
  end
  return pick(1)
end

return M
