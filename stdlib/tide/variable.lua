-- stdlib/tide/variable.lua — tide.Variable: a named, mutable tensor of fixed
-- dtype and shape (model weights). Used anywhere a tensor is; reads under a
-- recording GradientTape are tracked (trainable variables automatically).
-- Updates are copy-on-write, so a value read earlier never changes; reads
-- share the variable's (marked) storage and cannot be written in place: the
-- variable is written through itself (v[i] = x, assign). A Variable is a
-- userdata (so that #v works: Lua 5.1 ignores __len on tables) whose state
-- lives in a weak-keyed table here; getmetatable(v) gives the class.
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local recorder = require "tide.tape_recorder"
local format = require "tide.format"
local context = require "tide.trace_context"
local tensor = require "tide.tensor"
local shape_ops = require "tide.ops.shape"
local slice_ops = require "tide.ops.update"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local Variable = class("Variable")
local M = { Variable = Variable }

-- Each Variable's state: v -> { handle = tensor, name = string, trainable =
-- boolean, extras = true once user fields exist }. Weak keys: the record
-- never refers to v, so v and then its handle are collected when unused.
-- User fields (v.foo = x) live in v's own environment table instead, which
-- may refer back to v without keeping it alive.
local state = setmetatable({}, { __mode = "k" })
local proto = newproxy(true)
local vmt = getmetatable(proto)          -- every Variable's metatable
vmt.__metatable = Variable               -- getmetatable(v) == tide.Variable; the metatable stays private
local getfenv, setfenv = debug.getfenv, debug.setfenv

-- True when v is a tide.Variable.
local function is_variable(v) return type(v) == "userdata" and state[v] ~= nil end
M.is_variable = is_variable

-- The tensor that holds v's values (never handed to ops directly: see read).
local function handle(v) return state[v].handle end
M.handle = handle

-- Whether tapes watch v automatically.
function M.is_trainable(v) return state[v].trainable end

local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)

-- A new tensor sharing t's storage: a distinct object for one read.
local function share(t)
  local r = Tensor()
  C.tide_tensor_share(r, t)
  if r.storage ~= nil then binding.track(r) end
  return r
end

-- The tensor an op uses for v: the variable's own tensor, or, while tapes
-- record, a read of its own (sharing storage) that each interested tape
-- tracks as a read of v. A node may save the read, and an assign replaces the
-- handle's storage, so a recorded op never sees the handle itself (as TF's
-- ReadVariableOp, the value read is the value the gradient uses).
local autocast_code = nil -- the dtype code reads are cast to (Keras's AutocastScope), or nil
local cast_to                -- math_ops.cast, required when first needed (ops sit below this floor)

-- M.replica_value(v, handle): set by tide.distribute's MirroredStrategy while
-- a replica runs on another device than the variables: the copy it reads.
M.replica_value = nil

function M.read(v)
  local st = state[v]
  local h = st.handle
  if M.replica_value then h = M.replica_value(v, h) end
  local traced = context.stack[1] ~= nil
  if traced then h = M.traced_read(v) end
  if recorder.active then
    local r = traced and h or share(h) -- a traced read is already a tensor of its own
    local tapes = recorder.tapes
    for i = 1, #tapes do
      local tape = tapes[i]
      if not tape._paused and tape:_watches_variable(v) then tape:_track_read(v, r) end
    end
    h = r
  end
  -- inside a mixed-precision layer's call, float variables are read in its
  -- compute dtype (the cast is an op, so gradients flow back in the variable's)
  if autocast_code and h.dt ~= autocast_code and st.autocast and dtype.is_float[h.dt] then
    cast_to = cast_to or require("tide.ops.math").cast
    return cast_to(h, dtype.names[autocast_code])
  end
  return h
end

-- Keras's AutocastScope: float Variables made with autocast = true (the
-- default) read as dtype `dt` (a float dtype name, or nil for no casting)
-- until the scope ends; returns the previous scope's dtype (to restore).
function M.set_autocast(dt)
  local prev = autocast_code and dtype.names[autocast_code] or nil
  autocast_code = dt and dtype.codes[dt] or nil
  return prev
end
function M.autocast_dtype() return autocast_code and dtype.names[autocast_code] or nil end

-- While a function is traced, a read is a graph node that reads the
-- variable at each run (not a constant); the trace keeps the variable alive.
function M.traced_read(v)
  local g = C.tide_graph_building()
  if g == nil then return handle(v) end
  local ctx = context.current()
  if ctx then context.note_variable(ctx, v) end
  local r = Tensor()
  if C.tide_graph_variable(g, handle(v), r) ~= 0 then binding.raise() end
  return r
end

-- The current value as a tensor of its own (later assigns leave it
-- unchanged). Recording tapes track it and a traced read is a graph node;
-- only a plain eager read needs a new tensor sharing the handle's storage.
function M.read_value(v)
  local h = handle(v)
  local r = M.read(v)
  if rawequal(r, h) then return share(h) end
  return r
end

-- Tell convert how to turn a Variable into the tensor an op should use.
convert.set_variable_reader(is_variable, M.read, M.read_value, handle)

-- A constraint: nil, or something callable (a function, or an object
-- whose metatable has __call, as tide.constraints.*).
local function check_constraint(x)
  if x == nil or type(x) == "function" then return x end
  local mt = (type(x) == "table" or type(x) == "userdata") and getmetatable(x)
  if mt and mt.__call then return x end
  binding.error("Variable: constraint must be a function of the variable's value (as tide.constraints.*) or nil, " ..
    "got " .. type(x))
end

-- The current name scope (tide.name_scope, TF's: "outer/inner", "" at the top), which prefixes each new
-- Variable's name as "scope/name". tracing/tf_module.lua sets it.
M.name_scope = ""

-- tide.Variable(initial, {name=, trainable=true, dtype=, constraint=, autocast=true}):
-- constraint (TF's: a projection optimizers apply after each update) is a
-- function of the value returning the constrained value; autocast = false
-- keeps the variable's dtype inside a mixed-precision layer's call (Keras's,
-- for BatchNormalization's statistics). initial is a
-- tensor, a Lua number or nested table (float32 unless dtype says otherwise:
-- Lua cannot tell 3.0 from 3, and variables are almost always trained),
-- or a function returning one of those.
-- (Called on a new userdata by tide.Variable(...), below.)
function Variable:__init(initial, ...)
  local o = args.parse("Variable", { "name", "trainable", "dtype", "constraint", "autocast" }, ...)
  local ctx = context.current()
  if ctx and not ctx.first then
    binding.error(string.format("Variable: a tide.Variable is created while %s is traced again (at %s); create " ..
      "variables outside the traced function, or only on its first call (e.g. in a table the function fills " ..
      "once)", ctx.fn.name, context.user_line()))
  end
  if type(initial) == "function" then initial = initial() end
  if initial == nil then binding.error("Variable: an initial value is required") end
  if is_variable(initial) then initial = M.read(initial) end
  local value
  if istype(Tensor, initial) then
    value = o.dtype and convert.tensor(initial, o.dtype, "Variable") or initial
  else
    local dt = o.dtype
    if not dt then
      local probe, depth = initial, 0 -- bounded: a table that contains itself is convert's error to name
      while type(probe) == "table" and not istype(Tensor, probe) and depth <= C.TIDE_MAX_DIMS do
        probe, depth = probe[1], depth + 1
      end
      dt = type(probe) == "boolean" and "bool" or "float32"
    end
    value = convert.tensor(initial, dt, "Variable")
  end
  for i = 0, value.ndim - 1 do dims_buf[i] = value.dims[i] end
  local h = Tensor()
  if C.tide_tensor_init_heap(h, value.dt, value.ndim, dims_buf) ~= 0 then binding.raise() end
  binding.track(h)
  if C.tide_tensor_copy_into(h, value) ~= 0 then binding.raise() end
  if C.tide_tensor_mark_variable(h) ~= 0 then binding.raise() end -- reads share it: writes go through v
  local name = o.name == nil and "Variable" or tostring(o.name)
  if M.name_scope ~= "" then name = M.name_scope .. "/" .. name end
  state[self] = { handle = h, name = name,
                  trainable = args.bool("Variable", "trainable", o.trainable, true),
                  constraint = check_constraint(o.constraint),
                  autocast = args.bool("Variable", "autocast", o.autocast, true) }
  -- tide.distribute (a higher floor) gives a new variable the chief's value
  -- while a strategy's scope runs; h is still only this variable's.
  if M.on_create then M.on_create(self, h) end
end

-- tide.Variable(...) makes the userdata and initializes it.
local function make(...)
  local v = newproxy(proto)
  Variable.__init(v, ...)
  return v
end
-- M.creator_hook(make, ...): set while a tide.variable_creator_scope runs (tracing/tf_module.lua).
getmetatable(Variable).__call = function(_, ...)
  if M.creator_hook then return M.creator_hook(make, ...) end
  return make(...)
end

-- Properties and tensor methods: a variable answers as its current value.
local properties = {
  name = function(v) return state[v].name end,
  trainable = function(v) return state[v].trainable end,
  constraint = function(v) return state[v].constraint end,
  autocast = function(v) return state[v].autocast end,
  dtype = function(v) return dtype.names[handle(v).dt] end,
  shape = function(v) return handle(v).shape end,
  ndim = function(v) return handle(v).ndim end,
  device = function(v) return handle(v).device end,
}

local method_cache = setmetatable({}, { __mode = "k" })

-- v.k: Variable's own methods, then properties, then v[i] (a read), then
-- fields the user set, then any tensor method applied to the current value
-- (wrappers cached per method).
vmt.__index = function(v, k)
  local own = rawget(Variable, k)
  if own ~= nil then return own end
  local p = properties[k]
  if p then return p(v) end
  if type(k) == "number" then return M.read(v)[k] end
  if state[v].extras then
    local x = getfenv(v)[k]
    if x ~= nil then return x end
  end
  local m = binding.methods[k]
  if m == nil then binding.error("Variable has no method or property '" .. tostring(k) .. "'") end
  local wrapped = method_cache[m]
  if not wrapped then
    wrapped = function(self, ...)
      if is_variable(self) then self = M.read(self) end
      return m(self, ...)
    end
    method_cache[m] = wrapped
  end
  return wrapped
end

-- #v: what # gives on its value (the size of dim 0; an error for a 0-d one).
vmt.__len = function(v) return binding.impl.len(handle(v)) end

-- The current value as a tensor of its own (later assigns leave it unchanged;
-- it cannot be written in place: tide.identity(v) is a copy that can).
function Variable:read_value()
  return M.read_value(self)
end
Variable.value = Variable.read_value

local MODES = { assign = C.TIDE_ASSIGN_SET, assign_add = C.TIDE_ASSIGN_ADD, assign_sub = C.TIDE_ASSIGN_SUB }

-- "[2, 3]", as the engine's messages write shapes.
local function dims_text(t)
  local parts = {}
  for i = 0, t.ndim - 1 do
    local d = t.dims[i]
    parts[i + 1] = d < 0 and "?" or tostring(d)
  end
  return "[" .. table.concat(parts, ", ") .. "]"
end

-- x as the value an update of v (handle h) uses: a Variable is read; a Lua
-- number (or boolean) stands for v's shape filled with it; anything else
-- converts with v's dtype and must then have exactly v's dtype and shape,
-- as TF's assign ops require: no broadcasting, eager or traced alike.
local function update_value(v, h, x, op)
  if is_variable(x) then x = M.read(x) end
  local tx = type(x)
  if tx == "number" or tx == "boolean" then
    local s = convert.scalar(x, h.dt, op)
    if h.ndim == 0 then return s end
    return shape_ops.broadcast_to(s, h.shape:as_list())
  end
  local t = istype(Tensor, x) and x or convert.coerce(x, h, op, 1)
  if t.dt ~= h.dt then
    binding.error(string.format("%s: the variable is %s but the value is %s (use :cast)", op, dtype.names[h.dt],
      dtype.names[t.dt]))
  end
  local same = t.ndim < 0 or t.ndim == h.ndim -- an unknown rank or dim (traced) is checked when the graph runs
  for i = 0, h.ndim - 1 do
    if same and t.ndim >= 0 and t.dims[i] >= 0 and t.dims[i] ~= h.dims[i] then same = false end
  end
  if not same then
    -- the engine's own words (tide_graph_assign, tide_tensor_assign), for every mode, eager or traced
    binding.error(string.format("%s: the variable has shape %s but the value has shape %s", op, dims_text(h),
      dims_text(t)))
  end
  return t
end

-- Update v with x by `op` (assign, assign_add, assign_sub), copy-on-write.
local function update(v, x, op)
  local h = handle(v)
  local t = update_value(v, h, x, op)
  local g = C.tide_graph_building()
  if g ~= nil then -- traced: an update node, run in program order
    local ctx = context.current()
    if ctx then context.note_variable(ctx, v) end
    -- a gradient running a branch or loop body again must not update twice (tracing/control_grad.lua)
    if ctx and ctx.replay then return v end
    if C.tide_graph_assign(g, h, MODES[op], t) ~= 0 then binding.raise() end
    return v
  end
  if op == "assign_add" then t = binding.impl.add(h, t)
  elseif op == "assign_sub" then t = binding.impl.sub(h, t) end
  if C.tide_tensor_assign(h, t) ~= 0 then binding.raise() end
  return v
end

-- v:assign(x): give v the value x (v's shape and dtype; a Lua number fills
-- v's shape). Returns v.
function Variable:assign(x) return update(self, x, "assign") end

-- v:assign_add(x), v:assign_sub(x): v = v + x, v = v - x, with x as for
-- assign (v's shape, no broadcasting; or a Lua number). Return v.
function Variable:assign_add(x) return update(self, x, "assign_add") end
function Variable:assign_sub(x) return update(self, x, "assign_sub") end

-- The current value as nested Lua tables (TF's numpy()).
function Variable:numpy() return handle(self):totable() end

-- "<tide.Variable 'name' shape=... dtype=..., value=...>", as TF prints one.
vmt.__tostring = function(v)
  local h = handle(v)
  local text = format.array_text(h)
  if text:find("\n", 1, true) then text = "\n" .. text end
  return string.format("<tide.Variable '%s' shape=%s dtype=%s, value=%s>", state[v].name,
    tostring(h.shape), dtype.names[h.dt], text)
end

-- Operators read the variable and forward to the tensor operators.
local function read_any(x) if is_variable(x) then return M.read(x) end return x end
for _, mm in ipairs { "__add", "__sub", "__mul", "__div", "__mod", "__pow" } do
  local name = mm:sub(3)
  vmt[mm] = function(a, b) return binding.impl[name](read_any(a), read_any(b)) end
end
vmt.__unm = function(a) return binding.impl.neg(M.read(a)) end
vmt.__lt = function(a, b) return binding.impl.lt(read_any(a), read_any(b)) end
vmt.__le = function(a, b) return binding.impl.le(read_any(a), read_any(b)) end
vmt.__concat = function(a, b) return tostring(a) .. tostring(b) end

-- v[i] = x writes x (broadcast) into row i of the variable, copy-on-write
-- like assign: values read earlier keep theirs. Traced, it is an update node
-- (v:assign(tide.slice_update(v, {i}, x))) that runs at each call.
vmt.__newindex = function(v, k, x)
  if type(k) ~= "number" then
    local rec = state[v]
    if k == "name" then
      rec.name = tostring(x)
    elseif k == "trainable" then
      rec.trainable = args.bool("Variable", "trainable", x, rec.trainable)
    elseif k == "constraint" then
      rec.constraint = check_constraint(x)
    elseif rawget(Variable, k) ~= nil or properties[k] then
      binding.error(string.format("Variable: cannot set '%s' (a method or a property of the value)", tostring(k)))
    else -- a field of the user's own, in v's environment (never the globals it starts with)
      if not rec.extras then
        setfenv(v, {})
        rec.extras = true
      end
      getfenv(v)[k] = x
    end
    return
  end
  args.int("setindex", "index", k)
  local h = handle(v)
  if is_variable(x) then x = M.read(x) end
  if C.tide_graph_building() ~= nil then
    local r = M.read(v)
    local row = binding.impl.index(r, k)
    local t = istype(Tensor, x) and x or convert.coerce(x, h, "setindex", 2)
    t = shape_ops.broadcast_to(t, row.shape:as_list())
    update(v, slice_ops.slice_update(r, { k }, t), "assign")
    return
  end
  if h.ndim == 0 then binding.error("setindex: cannot index a 0-d variable (use v:assign(x))") end
  local d0 = tonumber(h.dims[0])
  if k < -d0 or k >= d0 then
    binding.error(string.format("setindex: index %d is out of range for dimension 0 of size %d", k, d0))
  end
  if C.tide_tensor_assign(h, h) ~= 0 then binding.raise() end -- own the storage first
  tensor.write_into(binding.impl.index(h, k), x, "setindex")
end

return M
