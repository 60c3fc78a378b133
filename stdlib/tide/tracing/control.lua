-- stdlib/tide/tracing/control.lua — TF 2's control flow: tide.cond,
-- tide.while_loop and tide.for_range (TensorArrays: tracing/tensor_array.lua).
-- Eagerly they run as plain Lua; while a function is traced they become COND
-- and WHILE nodes whose branches and bodies are subgraphs that run in C
-- (graph/control.c). Tracing the subgraphs: tracing/subgraph.lua; the
-- structures they carry: tracing/structure.lua.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local args = require "tide.args"
local convert = require "tide.convert"
local spec = require "tide.tracing.spec"
local values = require "tide.tracing.values"
local recorder = require "tide.tape_recorder"
local tensor = require "tide.tensor"
local format = require "tide.format"
local tensor_shape = require "tide.tensor_shape"
local math_ops = require "tide.ops.math"
local ffi, C = binding.ffi, binding.C
local unpack = unpack or table.unpack
local pack = require("tide.varargs").pack
local None = spec.None
local is_tensor, symbolic, tracing = values.is_tensor, values.symbolic, values.tracing
local is_variable, read_variable = values.is_variable, values.read_variable
local variable = require "tide.variable"
local dims_of, dims_text, type_text = values.dims_of, values.dims_text, values.type_text
local count_arg = values.count_arg
local tensor_array = require "tide.tracing.tensor_array"

local M = {}

local BOOL, I32 = C.TIDE_BOOL, C.TIDE_INT32
-- Traces of a loop's cond and body at most while its loop variables' shapes
-- settle (a trace that changes a shape traces again).
local MAX_BODY_TRACES = 64

local subgraph = require "tide.tracing.subgraph"
local trace_sub, disown, adopt = subgraph.trace_sub, subgraph.disown, subgraph.adopt
local pinned_reads, set_outputs, result_headers = subgraph.pinned_reads, subgraph.set_outputs, subgraph.result_headers
local structures = require "tide.tracing.structure"
local structure, list_structure, describe = structures.structure, structures.list_structure, structures.describe
local path_text, zip, rebuild = structures.path_text, structures.zip, structures.rebuild
local flat_like, number_tensor = structures.flat_like, structures.number_tensor

local TensorArray = tensor_array.TensorArray
M.TensorArray = TensorArray

-- The gradients of COND and WHILE nodes (tracing/control_grad.lua) are built
-- with cond and while_loop themselves: that module sits above this one and
-- sets itself here when loaded (tide's init loads it).
local control_grad = setmetatable({}, { __index = function(_, k)
  error("tide.tracing.control: tide.tracing.control_grad was not loaded (" .. tostring(k) .. " is needed)", 2)
end })

function M.set_gradients(module) control_grad = module end

---------------------------------------------------------------------------
-- tide.cond
---------------------------------------------------------------------------

-- The value of a one-element bool tensor (or Lua boolean) decided eagerly.
local function truth(v, op, what)
  if type(v) == "boolean" then return v end
  if is_variable(v) then v = read_variable(v) end
  if not is_tensor(v) then
    binding.error(string.format("%s: %s must be a bool tensor or a Lua boolean, got %s", op, what, type(v)))
  end
  if v.dt ~= BOOL then
    binding.error(string.format("%s: %s must be a bool tensor, got %s (compare first, e.g. x:gt(0), or :cast(\"bool\"))",
      op, what, type_text(v)))
  end
  if not symbolic(v) and v.nelem ~= 1 then
    binding.error(string.format("%s: %s must have one element, got shape %s", op, what, dims_text(dims_of(v))))
  end
  return tensor.item(v)
end

-- The flag a traced condition gives: a bool tensor (a Lua boolean becomes a
-- constant). `what` names it in errors: "pred must be", "cond must give".
local function flag_tensor(v, op, what)
  if type(v) == "boolean" then return convert.tensor(v) end
  if is_variable(v) then v = read_variable(v) end
  if not is_tensor(v) or v.dt ~= BOOL then
    binding.error(string.format("%s: %s a bool tensor or a Lua boolean, got %s", op, what,
      is_tensor(v) and type_text(v) or type(v)))
  end
  for _, d in ipairs(dims_of(v) or {}) do -- an unknown rank: one element is checked when it runs
    if d ~= 1 and d ~= -1 then
      binding.error(string.format("%s: %s a one-element bool tensor, got shape %s", op, what, dims_text(dims_of(v))))
    end
  end
  return v
end

local ta_leaves, ta_from = tensor_array.leaves, tensor_array.from_buffer -- TensorArray <-> buffer tensor

-- cond(pred, true_fn, false_fn): true_fn() when pred holds, else false_fn()
-- (TF's tf.cond). pred is a one-element bool tensor or a Lua boolean. A Lua
-- boolean picks the branch in Lua (as AutoGraph does with a Python bool).
-- Eagerly, only the chosen branch runs. While tracing, a tensor pred traces
-- both branches once (their Lua side effects happen once each) into a COND
-- node that runs one of them at each call; the branches must return the
-- same structure with matching dtypes (a Lua number matches a tensor and
-- takes its dtype); a dim the branches disagree on becomes unknown (None).
function M.cond(pred, true_fn, false_fn, ...)
  args.parse("cond", { "name" }, ...)
  if pred == nil then binding.error("cond: pred is nil; expected a bool tensor or a Lua boolean") end
  if type(true_fn) ~= "function" then binding.error("cond: true_fn must be a function, got " .. type(true_fn)) end
  if type(false_fn) ~= "function" then binding.error("cond: false_fn must be a function, got " .. type(false_fn)) end
  if is_variable(pred) then pred = read_variable(pred) end
  if type(pred) == "boolean" or not tracing() then
    if truth(pred, "cond", "pred") then return true_fn() end
    return false_fn()
  end
  if not is_tensor(pred) then binding.error("cond: pred must be a bool tensor or a Lua boolean, got " .. type(pred)) end
  pred = flag_tensor(pred, "cond", "pred must be")
  local g = C.tide_graph_building()
  local none = function() end
  local used = {}
  local saved = recorder.active and control_grad.snapshot { true_fn, false_fn } -- for a gradient that runs them again
  local tg, tres = trace_sub("cond_true", true_fn, {}, none, used)
  local fg, fres = trace_sub("cond_false", false_fn, {}, none, used)
  local ts, fs = list_structure(tres), list_structure(fres)
  local tflat, fflat = {}, {}
  local function fail(path, why)
    local where = #path == 0 and "their results" or path_text("result", path)
    binding.error(string.format("cond: true_fn and false_fn must return the same structure and dtypes; %s: %s " ..
      "(true_fn returned %s, false_fn returned %s)", where, why, describe(ts), describe(fs)))
  end
  zip(ts, fs, {}, function(a, b, path)
    if a.kind == "ta" then
      local la, lb = ta_leaves(a.ta, b.ta, function(why) fail(path, why) end)
      a.has_buffer = #la > 0
      for _, t in ipairs(la) do tflat[#tflat + 1] = t end
      for _, t in ipairs(lb) do fflat[#fflat + 1] = t end
      return
    end
    if a.kind ~= "tensor" and a.kind ~= "number" then return end
    local ta_, tb = a.t, b.t
    -- a Lua number takes the other branch's dtype; two numbers, tide.tensor's
    if not ta_ and not tb then
      local float = (type(a.v) == "number" and a.v ~= math.floor(a.v)) or (type(b.v) == "number" and b.v ~= math.floor(b.v))
      local dt = float and C.TIDE_FLOAT32 or nil
      if type(a.v) ~= type(b.v) then fail(path, "the dtypes differ") end
      ta_, tb = number_tensor(a.v, dt), number_tensor(b.v, dt)
    end
    ta_ = ta_ or number_tensor(a.v, tb.dt)
    tb = tb or number_tensor(b.v, ta_.dt)
    if ta_.dt ~= tb.dt then
      fail(path, string.format("the dtypes differ (%s and %s)", dtype.names[ta_.dt], dtype.names[tb.dt]))
    end
    -- ranks that differ give a result of unknown rank (TF's cond)
    tflat[#tflat + 1], fflat[#fflat + 1] = ta_, tb
  end, fail)
  local n = #tflat
  set_outputs(tg, tflat)
  set_outputs(fg, fflat)
  local pins = #used > 0 and recorder.active and pinned_reads(used)
  local outs, arr = result_headers(n)
  if not adopt(C.tide_graph_cond(g, pred, disown(tg), disown(fg), n, arr), tg, fg) then binding.raise() end
  for i = 1, n do binding.finish(outs[i]) end
  if #used > 0 and recorder.active then
    control_grad.cond(used, outs, { pred = pred, true_fn = true_fn, false_fn = false_fn, saved = saved, pins = pins,
      flatten = function(res) -- a branch's results (packed) lined up with outs
        return flat_like(ts, list_structure(res), function(leaf) return leaf.has_buffer end)
      end })
  end
  local k = 0
  local function next_tensor() k = k + 1 return outs[k] end
  -- TensorArrays take the true branch's description, with its buffer from the node
  local res = rebuild(ts, next_tensor, function(s) return ta_from(s.ta, s.has_buffer and next_tensor) end)
  return unpack(res, 1, tres.n)
end

---------------------------------------------------------------------------
-- tide.while_loop
---------------------------------------------------------------------------

-- The body's results as a list of n loop variables: several values, or one
-- list holding them (TF's bodies return a tuple).
local function body_results(res, n, first)
  if res.n == n and not (n == 1 and type(res[1]) == "table" and getmetatable(res[1]) == nil
      and first and first.kind ~= "table" and #res[1] == 1) then
    return res
  end
  if res.n == 1 and type(res[1]) == "table" and getmetatable(res[1]) == nil then
    local l = res[1]
    return pack(unpack(l, 1, #l))
  end
  return res
end


-- Convert and check the shape invariants option: one shape (list with
-- tide.None) or nil per top-level loop variable.
local function invariant_list(o)
  local si = o.shape_invariants
  if si == nil then return nil end
  if type(si) ~= "table" then
    binding.error("while_loop: shape_invariants must be a list with a shape (or nil) per loop variable")
  end
  return si
end

local eager_while, traced_while

-- Shape invariants for loop variables behind an added counter.
local function shifted(si)
  if si == nil then return nil end
  local out = {}
  for k, v in pairs(si) do if type(k) == "number" then out[k + 1] = v end end
  return out
end

-- while_loop(cond_fn, body_fn, loop_vars, {shape_invariants=, maximum_iterations=})
-- as TF's tf.while_loop: while cond_fn(vars...) holds, vars = body_fn(vars...);
-- returns the final loop variables (as several values). loop_vars is a Lua
-- list of tensors, numbers, TensorArrays or nested tables of them; the body
-- returns the same structure (as several values or as one list).
-- Eagerly this is a plain Lua loop. While tracing, cond_fn and body_fn are
-- traced once into a WHILE node that iterates in C; Lua numbers become
-- tensors (whole numbers int32, others float32, as tide.tensor infers;
-- pass a tensor to choose). Shapes: TF's shape invariants, relaxed for you:
-- a loop variable keeps its entry shape unless the body changes a dim, and
-- then that dim becomes unknown (None) and both functions are traced again
-- (TF asks for shape_invariants instead). shape_invariants = {shape or nil
-- per loop variable} (lists with tide.None) fixes a variable's shape up
-- front; then a body that breaks it is an error, as in TF. dtypes and ranks
-- must not change, unless a variable's invariant is tide.Shape.unknown()
-- (TF's TensorShape(None)) or it enters with an unknown rank: then any shape
-- goes. maximum_iterations (a number or a tensor) bounds the number of iterations.
function M.while_loop(cond_fn, body_fn, loop_vars, ...)
  local o = args.parse("while_loop", { "shape_invariants", "parallel_iterations", "back_prop", "swap_memory",
    "maximum_iterations", "name" }, ...)
  if type(cond_fn) ~= "function" then binding.error("while_loop: cond must be a function, got " .. type(cond_fn)) end
  if type(body_fn) ~= "function" then binding.error("while_loop: body must be a function, got " .. type(body_fn)) end
  if loop_vars == nil then binding.error("while_loop: loop_vars is nil; expected a list of tensors") end
  local single = type(loop_vars) ~= "table" or getmetatable(loop_vars) ~= nil
  local vars = single and pack(loop_vars) or pack(unpack(loop_vars, 1, #loop_vars))
  if vars.n == 0 then binding.error("while_loop: loop_vars is empty; a loop needs at least one loop variable") end
  local max = o.maximum_iterations
  if is_variable(max) then max = read_variable(max) end
  if max ~= nil and not (is_tensor(max) and symbolic(max)) then max = count_arg("while_loop", "maximum_iterations", max) end
  local res
  if not tracing() then
    res = eager_while(cond_fn, body_fn, vars, max)
  elseif is_tensor(max) then
    -- A bound known only at run time: a counter joins the loop variables (TF does the same).
    local n = vars.n
    local counter = number_tensor(0, max.dt)
    local first = structure(vars[1])
    local inner = pack(traced_while(function(i, ...)
      return math_ops.logical_and(math_ops.less(i, max), flag_tensor(cond_fn(...), "while_loop", "cond must give"))
    end, function(i, ...)
      local r = body_results(pack(body_fn(...)), n, first)
      return math_ops.add(i, 1), unpack(r, 1, r.n)
    end, pack(counter, unpack(vars, 1, n)), -1, shifted(invariant_list(o, n))))
    res = pack(unpack(inner, 2, inner.n))
  else
    res = pack(traced_while(cond_fn, body_fn, vars, max or -1, invariant_list(o)))
  end
  if single then return res[1] end
  return unpack(res, 1, res.n)
end

-- The eager loop: Lua runs cond and body until cond is false (or the bound).
function eager_while(cond_fn, body_fn, vars, max)
  local n = vars.n
  -- Lua numbers become tensors, as when traced, so the same cond and body work both ways.
  local function tensors(x)
    local tx = type(x)
    if tx == "number" or tx == "boolean" then return number_tensor(x) end
    if tx ~= "table" or getmetatable(x) ~= nil then return x end
    local out = {}
    for k, v in pairs(x) do out[k] = tensors(v) end
    return out
  end
  for i = 1, n do vars[i] = tensors(vars[i]) end
  local first = structure(vars[1])
  local i = 0
  while max == nil or i < max do
    if not truth(cond_fn(unpack(vars, 1, n)), "while_loop", "cond") then break end
    local res = body_results(pack(body_fn(unpack(vars, 1, n))), n, first)
    if res.n ~= n then
      binding.error(string.format("while_loop: body returned %d value(s) but there are %d loop variables", res.n, n))
    end
    vars = res
    i = i + 1
  end
  return vars
end

-- A loop variable's description while tracing: {dt=, dims=} (dims -1 unknown),
-- fixed = true when shape_invariants gave it.
local function invariant_desc(t, shape, path)
  local dims = dims_of(t)
  if shape == nil then return { dt = t.dt, dims = dims } end
  -- TF's TensorShape(None): any shape, of any rank (tide.Shape.unknown(), or x.shape of an unknown rank)
  if tensor_shape.is_unknown_rank(shape) then return { dt = t.dt, dims = nil, fixed = true } end
  if type(shape) ~= "table" then
    binding.error(string.format("while_loop: the shape invariant of %s must be a list of sizes and tide.None",
      path_text("loop variable", path)))
  end
  local inv = {}
  local n = shape.n or #shape
  for i = 1, n do inv[i] = (shape[i] == None or shape[i] == -1) and -1 or shape[i] end
  local ok = dims == nil or #inv == #dims -- a value of unknown rank may fit it: checked when the loop runs
  for i = 1, dims and #inv or 0 do
    if ok and inv[i] ~= -1 and dims[i] ~= -1 and inv[i] ~= dims[i] then ok = false end
  end
  if not ok then
    binding.error(string.format("while_loop: %s enters the loop with shape %s, which does not fit its shape " ..
      "invariant %s", path_text("loop variable", path), dims_text(dims), dims_text(inv)))
  end
  return { dt = t.dt, dims = inv, fixed = true }
end

-- The traced loop: see while_loop. vars is packed; max is -1 for no bound.
function traced_while(cond_fn, body_fn, vars, max, invariants)
  local n = vars.n
  local g = C.tide_graph_building()
  -- Loop variables: numbers become tensors; TensorArrays give their buffers.
  local ins = list_structure(vars)
  local function init_leaves()
    local flat, descs = {}, {}
    local function walk(s, path)
      if s.kind == "table" then
        for i, item in ipairs(s.items) do
          path[#path + 1] = s.keys[i]
          walk(item, path)
          path[#path] = nil
        end
      elseif s.kind == "number" then
        s.t = s.t or number_tensor(s.v)
        s.kind = "tensor"
        walk(s, path)
      elseif s.kind == "tensor" then
        flat[#flat + 1] = s.t
        s.desc = s.desc or invariant_desc(s.t, invariants and #path == 1 and invariants[path[1]] or nil, path)
        descs[#descs + 1] = s.desc
      elseif s.kind == "ta" then
        local b = rawget(s.ta, "_buffer")
        if b then
          flat[#flat + 1] = b
          s.desc = s.desc or { dt = b.dt, dims = dims_of(b) }
          descs[#descs + 1] = s.desc
        end
      end
    end
    walk(ins, {})
    return flat, descs
  end
  local first = ins.items[1]
  -- Rebuild fn's arguments from the subgraph's inputs.
  local function make_args(syms)
    local k = 0
    local function next_tensor() k = k + 1 return syms[k] end
    local r = rebuild(ins, next_tensor, function(s) return ta_from(s.ta, rawget(s.ta, "_buffer") and next_tensor) end)
    return unpack(r, 1, n)
  end
  local used = {}
  local saved = recorder.active and control_grad.snapshot { cond_fn, body_fn } -- for a gradient that runs them again
  for _ = 1, MAX_BODY_TRACES do
    local flat, descs = init_leaves()
    local cg, cres = trace_sub("while_cond", cond_fn, descs, make_args, used)
    if cres.n ~= 1 then binding.error(string.format("while_loop: cond must return one value, got %d", cres.n)) end
    local flag = flag_tensor(cres[1], "while_loop", "cond must give")
    local bg, bres = trace_sub("while_body", body_fn, descs, make_args, used)
    bres = body_results(bres, n, first)
    if bres.n ~= n then
      binding.error(string.format("while_loop: body returned %d value(s) but there are %d loop variables", bres.n, n))
    end
    local outs = list_structure(bres)
    local retrace = false
    local oflat = {}
    local function fail(path, why)
      binding.error(string.format("while_loop: the body must return its loop variables in the structure they came " ..
        "in; %s: %s (they came in as %s, the body returned %s)",
        #path == 0 and "the loop variables" or path_text("loop variable", path), why, describe(ins), describe(outs)))
    end
    zip(ins, outs, {}, function(a, b, path)
      local where = path_text("loop variable", path)
      if a.kind == "ta" then
        local before, after = rawget(a.ta, "_buffer"), rawget(b.ta, "_buffer")
        if before == nil and after ~= nil then
          -- first written inside the loop: start it with zeros of the element's shape, trace again
          a.ta = a.ta:_with_zeros(after)
          retrace = true
          return
        end
        local _, lb = ta_leaves(a.ta, b.ta, function(why) fail(path, why) end)
        if before == nil then return end
        b = { kind = "tensor", t = lb[1] }
        a = { kind = "tensor", t = before, desc = a.desc }
      end
      if a.kind ~= "tensor" then return end
      local t = b.t or number_tensor(b.v, a.t.dt)
      local d = a.desc
      if t.dt ~= d.dt then
        binding.error(string.format("while_loop: %s enters the loop as %s but the body returns %s (dtypes must not " ..
          "change; cast one of them)", where, dtype.names[d.dt], dtype.names[t.dt]))
      end
      local od = dims_of(t)
      if d.dims == nil then -- a loop variable of unknown rank takes any shape
        oflat[#oflat + 1] = t
        return
      end
      if od == nil or #od ~= #d.dims then
        binding.error(string.format("while_loop: %s enters the loop with shape %s but the body returns shape %s " ..
          "(its rank must not change: give it the shape invariant tide.Shape.unknown() to let it)", where,
          dims_text(d.dims), dims_text(od)))
      end
      for i, v in ipairs(od) do
        if d.dims[i] ~= -1 and v ~= d.dims[i] then
          if d.fixed then
            binding.error(string.format("while_loop: %s has shape %s after an iteration, which does not fit its shape " ..
              "invariant %s", where, dims_text(od), dims_text(d.dims)))
          end
          d.dims[i] = -1 -- TF's shape invariant with this dim unknown
          retrace = true
        end
      end
      oflat[#oflat + 1] = t
    end, fail)
    if not retrace then
      set_outputs(cg, { flag })
      set_outputs(bg, oflat)
      local arr_in = ffi.new("const tide_tensor *[?]", math.max(#flat, 1))
      for i, t in ipairs(flat) do arr_in[i - 1] = t end
      local pins = recorder.active and pinned_reads(used)
      local results, arr = result_headers(#flat)
      if not adopt(C.tide_graph_while(g, #flat, arr_in, disown(cg), disown(bg), max, arr), cg, bg) then
        binding.raise()
      end
      for i = 1, #flat do binding.finish(results[i]) end
      if recorder.active then
        local function ta_slot(leaf) return rawget(leaf.ta, "_buffer") and true or false end
        control_grad.while_loop(used, flat, results, { saved = saved, pins = pins,
          body_flat = function(syms) -- body on flat loop tensors, giving them back flat
            local r = body_results(pack(body_fn(make_args(syms))), n, first)
            if r.n ~= n then
              binding.error(string.format("while_loop: body returned %d value(s) but there are %d loop variables", r.n, n))
            end
            return flat_like(ins, list_structure(r), ta_slot)
          end })
      end
      local k = 0
      local function next_tensor() k = k + 1 return results[k] end
      local res = rebuild(ins, next_tensor, function(s) return ta_from(s.ta, rawget(s.ta, "_buffer") and next_tensor) end)
      return unpack(res, 1, n)
    end
  end
  binding.error(string.format("while_loop: the loop variables' shapes did not settle after %d traces",
    MAX_BODY_TRACES))
end

---------------------------------------------------------------------------
-- tide.for_range
---------------------------------------------------------------------------

-- The dtype of a range: the first tensor bound's, else int32 for whole
-- numbers and float32 otherwise (tf.range's rule).
local function range_dtype(bounds)
  for _, b in ipairs(bounds) do
    if is_tensor(b) then return b.dt end
  end
  for _, b in ipairs(bounds) do
    if b ~= math.floor(b) then return C.TIDE_FLOAT32 end
  end
  return I32
end

-- for_range([start,] limit, [delta,] body_fn, loop_vars): the loop AutoGraph
-- makes of `for i in tf.range(start, limit, delta)`. body_fn(i, vars...)
-- returns the new loop variables (as while_loop's body does); for_range
-- returns their final values. i is a scalar tensor of the range's dtype.
-- Eagerly a Lua loop; while tracing a while_loop (one trace of body_fn,
-- bounds may be symbolic), never unrolled. loop_vars may be omitted.
function M.for_range(...)
  local argv = pack(...)
  local fpos
  for i = 1, argv.n do
    if type(argv[i]) == "function" then fpos = i break end
  end
  if not fpos then binding.error("for_range: expected a body function after the range bounds") end
  if fpos < 2 or fpos > 4 then
    binding.error("for_range: expected 1 to 3 range bounds before the body function (limit | start, limit | " ..
      "start, limit, delta), got " .. (fpos - 1))
  end
  if argv.n > fpos + 1 then binding.error("for_range: expected only loop_vars after the body function") end
  local start, limit, delta
  if fpos == 2 then start, limit, delta = 0, argv[1], 1
  elseif fpos == 3 then start, limit, delta = argv[1], argv[2], 1
  else start, limit, delta = argv[1], argv[2], argv[3] end
  local body_fn, loop_vars = argv[fpos], argv[fpos + 1]
  if loop_vars == nil then loop_vars = {} end
  if type(loop_vars) ~= "table" or getmetatable(loop_vars) ~= nil then
    binding.error("for_range: loop_vars must be a Lua list (use {x} for one variable)")
  end
  local bounds = { start, limit, delta }
  local names = { "start", "limit", "delta" }
  for i = 1, 3 do
    local b = bounds[i]
    if is_variable(b) then b = read_variable(b) bounds[i] = b end
    if b == nil then binding.error("for_range: " .. names[i] .. " is nil") end
    if not is_tensor(b) and type(b) ~= "number" then
      binding.error(string.format("for_range: %s must be a number or a scalar tensor, got %s", names[i], type(b)))
    end
    if is_tensor(b) and not symbolic(b) and b.nelem ~= 1 then
      binding.error(string.format("for_range: %s must be a scalar, got shape %s", names[i], dims_text(dims_of(b))))
    end
  end
  local dt = range_dtype(bounds)
  local dname = dtype.names[dt]
  for i = 1, 3 do
    local b = bounds[i]
    if is_tensor(b) and b.dt ~= dt then
      binding.error(string.format("for_range: %s is %s but the range is %s (cast it)", names[i], dtype.names[b.dt], dname))
    end
  end
  local n = #loop_vars
  local first = structure(loop_vars[1])
  local function call_body(i, ...)
    local r = body_results(pack(body_fn(i, ...)), n, first)
    if r.n ~= n then
      binding.error(string.format("for_range: body returned %d value(s) but there are %d loop variables", r.n, n))
    end
    return unpack(r, 1, n)
  end
  local symbolic_bound = false
  for i = 1, 3 do
    if is_tensor(bounds[i]) and symbolic(bounds[i]) then symbolic_bound = true end
  end
  if not tracing() and not symbolic_bound then
    for i = 1, 3 do
      local b = bounds[i]
      bounds[i] = is_tensor(b) and tensor.item(b) or b
    end
    local s, l, d = bounds[1], bounds[2], bounds[3]
    if d == 0 then binding.error("for_range: delta must not be 0") end
    local vars = pack(unpack(loop_vars, 1, n))
    local k = 0
    while true do
      local v = s + k * d
      if (d > 0 and v >= l) or (d < 0 and v <= l) then break end
      vars = pack(call_body(convert.tensor(v, dname, "for_range"), unpack(vars, 1, n)))
      k = k + 1
    end
    return unpack(vars, 1, n)
  end
  local tb = {}
  for i = 1, 3 do tb[i] = is_tensor(bounds[i]) and bounds[i] or convert.tensor(bounds[i], dname, "for_range") end
  if type(delta) == "number" and delta == 0 then binding.error("for_range: delta must not be 0") end
  local s, l, d = tb[1], tb[2], tb[3]
  local function in_range(i)
    if type(delta) == "number" then
      return delta > 0 and math_ops.less(i, l) or math_ops.greater(i, l)
    end
    -- the sign of delta is known only at run time (delta 0 runs no iteration)
    local zero = convert.tensor(0, dname)
    return math_ops.logical_or(math_ops.logical_and(math_ops.greater(d, zero), math_ops.less(i, l)),
      math_ops.logical_and(math_ops.less(d, zero), math_ops.greater(i, l)))
  end
  local res = pack(M.while_loop(function(i) return in_range(i) end, function(i, ...)
    return math_ops.add(i, d), call_body(i, ...)
  end, { s, unpack(loop_vars, 1, n) }))
  return unpack(res, 2, res.n)
end

return M
