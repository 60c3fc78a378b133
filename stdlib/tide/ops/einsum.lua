-- stdlib/tide/ops/einsum.lua — einsum (tf.einsum, tf.linalg.einsum, keras.ops.einsum) as a composition
-- of transpose, reshape, matmul, multiply, reduce_sum and gather: differentiable and traceable with no
-- gradient of its own, and a traced einsum is a few matmul nodes between views.
--
-- An equation is parsed once per call into labels per operand (letters, and one
-- label per broadcast position of `...`, counted from the right); repeated labels
-- of one operand become a diagonal, labels that no other operand or the output
-- needs are summed out, then operands are contracted two at a time in the order
-- of opt_einsum's greedy path, each pair as one (batched) matmul whose operands
-- are views laid out for it (or a broadcast multiply when nothing is summed).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local format = require "tide.format"
local tensor = require "tide.tensor"
local shape_ops = require "tide.ops.shape"
local reduce_ops = require "tide.ops.reduce"
local linalg = require "tide.ops.linalg"
local math_ops = require "tide.ops.math"
local create = require "tide.ops.create"
local dynamic_shape = require "tide.ops.dynamic_shape"
local Tensor, RESHAPE = binding.Tensor, binding.C.TIDE_OP_RESHAPE
local istype = binding.ffi.istype

local M = {}

local fmt = string.format
local function shape_text(t) return format.shape_text(tensor.shape_of(t)) end
local function fail(...) binding.error("einsum: " .. fmt(...)) end

-- TF's einsum dtypes (its kernels: no bool or 8-bit integers).
local DTYPES = { float16 = true, bfloat16 = true, float32 = true, float64 = true, int32 = true, int64 = true }

-- An unknown dim's stand-in when the greedy path weighs sizes.
local UNKNOWN_SIZE = 128

---------------------------------------------------------------------------
-- The equation
---------------------------------------------------------------------------

-- One term ("ab...c") as a list of tokens: letters, and "..." at most once.
local function parse_term(term, equation)
  local tokens, i, ell = {}, 1, false
  while i <= #term do
    local c = term:sub(i, i)
    if c:match("%a") then
      tokens[#tokens + 1] = c
      i = i + 1
    elseif term:sub(i, i + 2) == "..." and not ell then
      tokens[#tokens + 1] = "..."
      ell = true
      i = i + 3
    else
      fail("subscripts have incorrect format: %q (each term is letters with at most one '...')", equation)
    end
  end
  return tokens, ell
end

-- The equation as input terms and the output term (nil when implicit).
local function parse(equation, n)
  if type(equation) ~= "string" then fail("the equation must be a string, got %s", type(equation)) end
  local eq = equation:gsub("%s", "")
  local lhs, rhs = eq, nil
  local arrow = eq:find("->", 1, true)
  if arrow then lhs, rhs = eq:sub(1, arrow - 1), eq:sub(arrow + 2) end
  if lhs:find("[->]") or (rhs and rhs:find("[-,>]")) then
    fail("subscripts have incorrect format: %q (expected 'ab,bc->ac': terms split by ',' and at most one '->')",
      equation)
  end
  local terms = {}
  for term in (lhs .. ","):gmatch("([^,]*),") do terms[#terms + 1] = term end
  if #terms ~= n then fail("got %d inputs for equation %q, expecting %d", n, equation, #terms) end
  local ins = {}
  for i, term in ipairs(terms) do ins[i] = { parse_term(term, equation) } end
  local out = rhs and { parse_term(rhs, equation) } or nil
  return ins, out
end

-- The label of broadcast position k (1 = outermost) of the ellipsis.
local function ell_label(k) return "." .. k end

-- Each operand's labels (one per axis), the output's labels, and the number
-- of broadcast (ellipsis) dims, checked against the operands' ranks.
local function resolve(equation, xs)
  local ins, out = parse(equation, #xs)
  local nell = 0
  local counts = {}
  for i, x in ipairs(xs) do
    local tokens, has_ell = ins[i][1], ins[i][2]
    local letters = #tokens - (has_ell and 1 or 0)
    if x.ndim < 0 then
      fail("operand %d has an unknown rank; einsum needs each operand's rank (give it in the input_signature)",
        i - 1)
    end
    if has_ell then
      if x.ndim < letters then
        fail("expected input %d to have rank at least %d but got: %d (shape %s, term %q)", i - 1, letters, x.ndim,
          shape_text(x), table.concat(tokens))
      end
      nell = math.max(nell, x.ndim - letters)
    elseif x.ndim ~= letters then
      fail("expected input %d to have rank %d but got: %d (shape %s, term %q)", i - 1, letters, x.ndim,
        shape_text(x), table.concat(tokens))
    end
    for _, t in ipairs(tokens) do
      if t ~= "..." then counts[t] = (counts[t] or 0) + 1 end
    end
  end
  local labels = {}
  for i, x in ipairs(xs) do
    local l, tokens = {}, ins[i][1]
    local letters = #tokens - (ins[i][2] and 1 or 0)
    for _, t in ipairs(tokens) do
      if t == "..." then
        local e = x.ndim - letters
        for k = nell - e + 1, nell do l[#l + 1] = ell_label(k) end
      else
        l[#l + 1] = t
      end
    end
    labels[i] = l
  end
  local output = {}
  if out then
    local tokens, has_ell = out[1], out[2]
    local seen = {}
    for _, t in ipairs(tokens) do
      if t == "..." then
        for k = 1, nell do output[#output + 1] = ell_label(k) end
      else
        if seen[t] then fail("output subscripts contain a label appearing more than once: %q", equation) end
        if not counts[t] then
          fail("output subscripts contain the label %s not present in the input subscripts: %q", t, equation)
        end
        seen[t] = true
        output[#output + 1] = t
      end
    end
    if nell > 0 and not has_ell then
      fail("output contains %d broadcasting dimension(s) but no ellipsis (...) was found in the output " ..
        "subscripts: %q", nell, equation)
    end
  else -- implicit, as TF: the labels seen once in ASCII order (uppercase first), after the broadcast
    -- dims when one term alone has '...' (TF counts '...' as a label that sorts first)
    local terms_with_ell = 0
    for i = 1, #xs do if ins[i][2] then terms_with_ell = terms_with_ell + 1 end end
    if terms_with_ell == 1 then
      for k = 1, nell do output[#output + 1] = ell_label(k) end
    elseif nell > 0 then
      fail("output contains %d broadcasting dimension(s) but no ellipsis (...) was found in the output " ..
        "subscripts: %q (without '->', the output has '...' only when one operand's term has it: write the output)",
        nell, equation)
    end
    local once = {}
    for t, c in pairs(counts) do if c == 1 then once[#once + 1] = t end end
    table.sort(once)
    for _, t in ipairs(once) do output[#output + 1] = t end
  end
  return labels, output
end

-- Every label's size (-1 while unknown), checked across operands: a letter's
-- dims must agree; broadcast dims must agree or be 1.
local function check_sizes(xs, labels, equation)
  local size, where = {}, {}
  for i, x in ipairs(xs) do
    for ax, l in ipairs(labels[i]) do
      local d = tonumber(x.dims[ax - 1])
      local s = size[l]
      if d >= 0 then
        if s == nil or s < 0 or (l:sub(1, 1) == "." and s == 1) then
          size[l], where[l] = d, { i, ax }
        elseif s ~= d and not (l:sub(1, 1) == "." and d == 1) then
          local wi = where[l][1]
          if l:sub(1, 1) == "." then
            fail("invalid broadcasting dimensions: %s vs. %s (the dims '...' covers in operands %d and %d of %q)",
              shape_text(xs[wi]), shape_text(x), wi - 1, i - 1, equation)
          end
          fail("expected dimension %d at axis %d of the input shaped %s but got dimension %d: label '%s' is %d at " ..
            "axis %d of operand %d (shaped %s) but %d at axis %d of operand %d, in %q", s, ax - 1, shape_text(x), d,
            l, s, where[l][2] - 1, wi - 1, shape_text(xs[wi]), d, ax - 1, i - 1, equation)
        end
      elseif s == nil then
        size[l] = -1
      end
    end
  end
  return size
end

---------------------------------------------------------------------------
-- Shapes that may be unknown while tracing
---------------------------------------------------------------------------

-- x's dims: Lua numbers, or for an unknown (None) dim of a traced tensor a
-- 0-d int32 tensor read when the graph runs.
local function dims_of(x)
  local d = {}
  for i = 0, x.ndim - 1 do
    local n = tonumber(x.dims[i])
    d[i + 1] = n >= 0 and n or dynamic_shape.size_along(x, i)
  end
  return d
end

-- The product of dims (numbers or 0-d tensors).
local function prod(ds)
  local n, t = 1, nil
  for _, d in ipairs(ds) do
    if type(d) == "number" then n = n * d else t = t and t * d or d end
  end
  if t == nil then return n end
  return n == 1 and t or t * n
end

-- A shape argument for reshape from dims: a Lua list (one unknown dim as -1),
-- or with several unknown, a 1-D int32 tensor computed when the graph runs.
-- (exact = true: never -1, for ops other than reshape).
local function shape_arg(ds, exact)
  local unknown = 0
  for _, d in ipairs(ds) do if type(d) ~= "number" then unknown = unknown + 1 end end
  if unknown == 0 then return ds end
  if unknown == 1 and not exact then
    local out = {}
    for i, d in ipairs(ds) do out[i] = type(d) == "number" and d or -1 end
    return out
  end
  local parts = {}
  for i, d in ipairs(ds) do
    parts[i] = type(d) == "number" and convert.tensor(d, "int32") or d
  end
  return shape_ops.stack(parts)
end

-- x reshaped to dims ds. With several unknown dims the shape is a tensor
-- computed when the graph runs, and the known dims go with it as the attrs'
-- hints (core/shape_input.c), so the traced result keeps them (a Dense after
-- an EinsumDense needs its last dim).
local function reshape(x, ds)
  if #ds == x.ndim then -- the same dims: nothing to do
    local same = true
    for i, d in ipairs(ds) do
      if type(d) ~= "number" or tonumber(x.dims[i - 1]) ~= d then same = false end
    end
    if same then return x end
  end
  local s = shape_arg(ds)
  if not istype(Tensor, s) then return shape_ops.reshape(x, s) end
  local hints = {}
  for i, d in ipairs(ds) do hints[i] = type(d) == "number" and d or -1 end
  local a = dispatch.attrs()
  dispatch.set_ints(a, hints, "einsum")
  return dispatch.run(RESHAPE, a, { dispatch.promote(x), s }, 1)
end

-- x with its axes in the order of `want` (labels), given its labels `have`.
local function permute(x, have, want)
  local pos = {}
  for i, l in ipairs(have) do pos[l] = i - 1 end
  local perm, identity = {}, true
  for i, l in ipairs(want) do
    perm[i] = pos[l]
    if perm[i] ~= i - 1 then identity = false end
  end
  if identity then return x end
  return shape_ops.transpose(x, perm)
end

local function concat_lists(...)
  local out = {}
  for _, list in ipairs { ... } do
    for _, v in ipairs(list) do out[#out + 1] = v end
  end
  return out
end

local function slice_list(list, i, j)
  local out = {}
  for k = i, j do out[#out + 1] = list[k] end
  return out
end

---------------------------------------------------------------------------
-- One operand: diagonals and sums
---------------------------------------------------------------------------

-- The diagonal of x's last two axes (equal sizes): [..., n, n] -> [..., n].
local function diagonal_last2(x)
  local d = dims_of(x)
  local lead = slice_list(d, 1, #d - 2)
  local n = d[#d]
  if type(n) ~= "number" then n = d[#d - 1] end
  if type(n) == "number" then -- every (n+1)-th element of the flattened square
    local flat = reshape(x, concat_lists(lead, { n * n }))
    local idx = {}
    for i = 1, n do idx[i] = (i - 1) * (n + 1) end
    return shape_ops.gather(flat, convert.tensor(idx, "int32"), { axis = #lead })
  end
  -- n unknown until the graph runs: append n zeros to the flattened square,
  -- read it as [n, n + 1] and keep column 0 (the diagonal's elements)
  local flat = reshape(x, concat_lists(lead, { n * n }))
  local zeros = create.zeros(shape_arg(concat_lists(lead, { n }), true), { dtype = x.dtype })
  local padded = shape_ops.concat({ flat, zeros }, #lead)
  local rows = reshape(padded, concat_lists(lead, { n, n + 1 }))
  return shape_ops.gather(rows, convert.tensor(0, "int32"), { axis = #lead + 1 })
end

-- Operand x (labels l) with each repeated label reduced to its diagonal.
local function diagonals(x, l)
  while true do
    local first, p, q = {}, nil, nil
    for i, label in ipairs(l) do
      if first[label] then p, q = first[label], i; break end
      first[label] = i
    end
    if not p then return x, l end
    local rest = {}
    for i, label in ipairs(l) do if i ~= p and i ~= q then rest[#rest + 1] = label end end
    local label = l[p]
    local order = {}
    for i = 1, #l do if i ~= p and i ~= q then order[#order + 1] = i - 1 end end
    order[#order + 1], order[#order + 2] = p - 1, q - 1
    x = diagonal_last2(shape_ops.transpose(x, order))
    rest[#rest + 1] = label
    l = rest
  end
end

-- Sum x (labels l) over the labels `keep` does not hold.
local function sum_unneeded(x, l, keep)
  local axes, rest = {}, {}
  for i, label in ipairs(l) do
    if keep[label] then rest[#rest + 1] = label else axes[#axes + 1] = i - 1 end
  end
  if #axes == 0 then return x, l end
  return reduce_ops.reduce_sum(x, axes), rest
end

---------------------------------------------------------------------------
-- Two operands
---------------------------------------------------------------------------

local function set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

-- The labels of `list` that `pred` accepts, in list's order.
local function pick(list, pred)
  local out = {}
  for _, v in ipairs(list) do if pred(v) then out[#out + 1] = v end end
  return out
end

-- Whether the labels `first` then `second` appear in that order in `have`
-- (so that laying out an operand's matrix as [first, second] needs no copy;
-- matmul reads batch dims at any strides).
local function in_order(have, first, second)
  local want = concat_lists(first, second)
  local pos = {}
  for i, l in ipairs(have) do pos[l] = i end
  for i = 2, #want do if pos[want[i]] < pos[want[i - 1]] then return false end end
  return true
end

-- An operand laid out for matmul: [batch..., rows, cols] with rows the labels
-- `outer` (M or N) and cols `inner` (K), or transposed when its own order has
-- the summed labels first (matmul's transpose flag then reads it as it is).
local function layout(x, l, batch, outer, inner, outer_first_default)
  local outer_first = in_order(l, outer, inner)
  if not outer_first and not in_order(l, inner, outer) then outer_first = outer_first_default end
  local order = outer_first and concat_lists(batch, outer, inner) or concat_lists(batch, inner, outer)
  x = permute(x, l, order)
  local d = dims_of(x)
  local b = slice_list(d, 1, #batch)
  local o, k
  if outer_first then
    o, k = prod(slice_list(d, #batch + 1, #batch + #outer)), prod(slice_list(d, #batch + #outer + 1, #d))
    return reshape(x, concat_lists(b, { o, k })), not outer_first
  end
  k, o = prod(slice_list(d, #batch + 1, #batch + #inner)), prod(slice_list(d, #batch + #inner + 1, #d))
  return reshape(x, concat_lists(b, { k, o })), not outer_first
end

-- The dims of labels `want` read from x (labels l).
local function label_dims(x, l, want)
  local d = dims_of(x)
  local pos = {}
  for i, label in ipairs(l) do pos[label] = i end
  local out = {}
  for i, label in ipairs(want) do out[i] = d[pos[label]] end
  return out
end

-- Contract A (labels la) with B (labels lb), keeping the labels in `keep`:
-- shared kept labels are batch dims, shared others are summed, the rest
-- stay. `order` (the output's labels, for the last pair) orders the batch
-- dims and says which operand goes first. Returns the result and its labels.
local function contract(a, la, b, lb, keep, order)
  a, la = sum_unneeded(a, la, set_of(concat_lists(lb, pick(la, function(l) return keep[l] end))))
  b, lb = sum_unneeded(b, lb, set_of(concat_lists(la, pick(lb, function(l) return keep[l] end))))
  local sa, sb = set_of(la), set_of(lb)
  local free_a = pick(la, function(l) return not sb[l] end)
  local free_b = pick(lb, function(l) return not sa[l] end)
  if order then -- the operand whose free labels come first in the output goes first
    local pos = {}
    for i, l in ipairs(order) do pos[l] = i end
    if #free_a > 0 and #free_b > 0 and pos[free_b[1]] < pos[free_a[1]] then
      a, la, b, lb, free_a, free_b, sa, sb = b, lb, a, la, free_b, free_a, sb, sa
    end
  end
  local batch = pick(order or la, function(l) return sa[l] and sb[l] and keep[l] end)
  local summed = pick(la, function(l) return sb[l] and not keep[l] end)
  local labels = concat_lists(batch, free_a, free_b)
  if #summed == 0 then -- nothing summed: a broadcast product
    local ones_a, ones_b = {}, {}
    for i = 1, #free_b do ones_a[i] = 1 end
    for i = 1, #free_a do ones_b[i] = 1 end
    local xa = permute(a, la, concat_lists(batch, free_a))
    xa = reshape(xa, concat_lists(dims_of(xa), ones_a))
    local xb = permute(b, lb, concat_lists(batch, free_b))
    local db = dims_of(xb)
    xb = reshape(xb, concat_lists(slice_list(db, 1, #batch), ones_b, slice_list(db, #batch + 1, #db)))
    return math_ops.mul(xa, xb), labels
  end
  local da, db = label_dims(a, la, free_a), label_dims(b, lb, free_b)
  local ma, ta = layout(a, la, batch, free_a, summed, true)
  local mb, tb_ = layout(b, lb, batch, free_b, summed, false)
  local y = linalg.matmul(ma, mb, ta, not tb_)
  local dy = dims_of(y)
  return reshape(y, concat_lists(slice_list(dy, 1, #batch), da, db)), labels
end

---------------------------------------------------------------------------
-- The contraction order: opt_einsum's greedy path
---------------------------------------------------------------------------

local function label_size(size, l)
  local s = size[l]
  return (s == nil or s < 0) and UNKNOWN_SIZE or s
end

local function size_of(size, set)
  local n = 1
  for l in pairs(set) do n = n * label_size(size, l) end
  return n
end

-- The labels a contraction of operands i and j keeps: those the output or
-- another remaining operand holds.
local function kept(ops, i, j, output)
  local keep = set_of(output)
  for k, op in ipairs(ops) do
    if k ~= i and k ~= j then for _, l in ipairs(op.l) do keep[l] = true end end
  end
  return keep
end

-- The next pair: among pairs sharing a label, the one whose result removes
-- the most elements (size(result) - size(i) - size(j) least, as opt_einsum's
-- greedy default); with none sharing, the two smallest operands.
local function next_pair(ops, size, output)
  local best, bi, bj = nil, nil, nil
  for i = 1, #ops do
    local si = set_of(ops[i].l)
    for j = i + 1, #ops do
      local sj = set_of(ops[j].l)
      local shares = false
      for l in pairs(sj) do if si[l] then shares = true end end
      if shares then
        local keep = kept(ops, i, j, output)
        local result = {}
        for l in pairs(si) do if keep[l] then result[l] = true end end
        for l in pairs(sj) do if keep[l] then result[l] = true end end
        local cost = size_of(size, result) - size_of(size, si) - size_of(size, sj)
        if best == nil or cost < best then best, bi, bj = cost, i, j end
      end
    end
  end
  if bi then return bi, bj end
  local order = {}
  for i = 1, #ops do order[i] = i end
  table.sort(order, function(p, q)
    local sp, sq = size_of(size, set_of(ops[p].l)), size_of(size, set_of(ops[q].l))
    if sp ~= sq then return sp < sq end
    return p < q
  end)
  return math.min(order[1], order[2]), math.max(order[1], order[2])
end

---------------------------------------------------------------------------
-- einsum
---------------------------------------------------------------------------

-- einsum(equation, x1, x2, ...) as tf.einsum: `equation` names each operand's
-- axes with letters ("bqd,bkd->bqk"); `...` stands for broadcast dims; a
-- label repeated in one operand takes the diagonal; labels missing from the
-- output are summed; without "->" the output is the broadcast dims then the
-- labels seen once, sorted. The operands may also come as one list.
function M.einsum(equation, ...)
  local xs = { ... }
  local n = select("#", ...)
  if n == 1 and type(xs[1]) == "table" and not istype(Tensor, xs[1]) and not convert.is_variable(xs[1])
      and (istype(Tensor, xs[1][1]) or convert.is_variable(xs[1][1])) then
    xs = xs[1]
    n = #xs
  end
  if n == 0 then fail("expects at least one operand after the equation") end
  for i = 1, n do
    if xs[i] == nil then fail("operand %d is nil", i - 1) end
    xs[i] = convert.arg(convert.unvariable(xs[i]), "einsum", i + 1)
  end
  local dt = xs[1].dtype
  for i = 1, n do
    if not DTYPES[xs[i].dtype] then
      fail("operand %d is %s; einsum takes float16, bfloat16, float32, float64, int32 or int64 (use :cast)", i - 1,
        xs[i].dtype)
    end
    if xs[i].dtype ~= dt then
      fail("operand %d is %s but operand 0 is %s; einsum needs one dtype (use :cast(\"%s\"))", i - 1, xs[i].dtype,
        dt, dt)
    end
  end
  local labels, output = resolve(equation, xs)
  local size = check_sizes(xs, labels, equation)
  local ops = {}
  for i = 1, n do
    local x, l = diagonals(xs[i], labels[i])
    ops[i] = { x = x, l = l }
  end
  for i = 1, n do -- labels no other operand and not the output hold are summed now
    ops[i].x, ops[i].l = sum_unneeded(ops[i].x, ops[i].l, kept(ops, i, i, output))
  end
  while #ops > 1 do
    local i, j = next_pair(ops, size, output)
    local keep = kept(ops, i, j, output)
    local x, l = contract(ops[i].x, ops[i].l, ops[j].x, ops[j].l, keep, #ops == 2 and output or nil)
    table.remove(ops, j)
    table.remove(ops, i)
    ops[#ops + 1] = { x = x, l = l }
  end
  local x = permute(ops[1].x, ops[1].l, output)
  if rawequal(x, xs[1]) then x = shape_ops.identity(x) end -- a new tensor, as TF's op gives
  return x
end

return M
