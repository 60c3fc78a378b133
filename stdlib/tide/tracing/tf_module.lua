-- stdlib/tide/tracing/tf_module.lua — TF's name scopes (name_scope, get_current_name_scope, init_scope), tf.Module,
-- variable_creator_scope, and graph-mode gradients (gradients, hessians, grad_pass_through, no_gradient,
-- RegisterGradient) on tide's tapes.
local binding = require "tide.binding"
local class = require "tide.class"
local scope = require "tide.scope"
local variable = require "tide.variable"
local tape_mod = require "tide.tape"
local recorder = require "tide.tape_recorder"
local registry = require "tide.grad.registry"
local fmt = string.format

local C = binding.C
local M = {}

local function fail(op, f, ...) binding.error(op .. ": " .. fmt(f, ...)) end

-- ---- name scopes ------------------------------------------------------------------------------

local function set_scope(name) variable.name_scope = name end

-- The scope a name_scope(name) enters from `current`: "" or nil resets to the top; a name ending in "/" is
-- absolute (TF's re-entry of a scope by its full name); otherwise it nests.
local function scope_after(current, name)
  if name == nil or name == "" then return "" end
  if name:sub(-1) == "/" then return name:sub(1, -2) end
  return current == "" and name or current .. "/" .. name
end

local NameScope = class("NameScope")
M.NameScope = NameScope

-- name_scope(name): TF's tf.name_scope as an object: :run(fn, ...) calls fn inside the scope (Lua's `with`), so
-- Variables made there are named "scope/name" and get_current_name_scope() reads it. name_scope(name, fn, ...)
-- runs fn at once. The scope is left however fn ends.
function NameScope:__init(name)
  if name ~= nil and type(name) ~= "string" then fail("name_scope", "name must be a string, got %s", type(name)) end
  if name and name ~= "" and not name:match("^[%w%.][%w_%.%-/]*$") then
    fail("name_scope", "'%s' is not a valid scope name", name)
  end
  self.name = name or ""
end
function NameScope:run(fn, ...)
  if type(fn) ~= "function" then fail("name_scope", "run expects a function, got %s", type(fn)) end
  local mark = scope.enter()
  scope.push(set_scope, variable.name_scope)
  set_scope(scope_after(variable.name_scope, self.name))
  return scope.call("name_scope", mark, fn, ...)
end

function M.name_scope(name, fn, ...)
  local s = NameScope(name)
  if fn == nil then return s end
  return s:run(fn, ...)
end

-- get_current_name_scope() as TF's: the stack of scopes joined by "/", "" at the top.
function M.get_current_name_scope() return variable.name_scope end

-- init_scope(fn, ...) as tf.init_scope: runs fn with the tapes paused (TF's init_scope pauses them) and the name
-- scope kept, as TF's does when it lifts code out of a function being built. tide's traced functions already make
-- their Variables once, on the first trace (docs/tf_differences.md), so no graph has to be left: fn's ops are
-- those of the context that calls it.
function M.init_scope(fn, ...)
  if type(fn) ~= "function" then fail("init_scope", "expects a function to run, got %s", type(fn)) end
  return recorder.paused_as("init_scope", fn, ...)
end

-- ---- variable_creator_scope ----------------------------------------------------------------------

local creators = {}

-- The Variable constructor through the creators, innermost first; make(initial, options) is tide.Variable's own.
local function create_at(level, make, initial, opts)
  if level == 0 then return make(initial, opts) end
  local v = creators[level](function(i, o) return create_at(level - 1, make, i, o) end, initial, opts or {})
  if not variable.is_variable(v) then
    fail("variable_creator_scope", "the creator returned a %s, not a tide.Variable", type(v))
  end
  return v
end
local function hook(make, initial, opts) return create_at(#creators, make, initial, opts) end

local function restore_creators(height, prev)
  for i = #creators, height + 1, -1 do creators[i] = nil end
  variable.creator_hook = prev
end

-- variable_creator_scope(creator, fn, ...) as tf.variable_creator_scope: while fn runs, tide.Variable(initial,
-- options) calls creator(next_creator, initial, options) instead, and next_creator(initial, options) makes the
-- Variable (or calls the next creator out); creators nest, innermost first. The scope is left however fn ends.
function M.variable_creator_scope(creator, fn, ...)
  if type(creator) ~= "function" then fail("variable_creator_scope", "creator must be a function, got %s", type(creator)) end
  if type(fn) ~= "function" then fail("variable_creator_scope", "expects a function to run, got %s", type(fn)) end
  local mark = scope.enter()
  scope.push(restore_creators, #creators, variable.creator_hook)
  creators[#creators + 1] = creator
  variable.creator_hook = hook
  return scope.call("variable_creator_scope", mark, fn, ...)
end

-- ---- Module ------------------------------------------------------------------------------------

-- Module{name=} as tf.Module: a container of Variables and other Modules in its fields (also in lists and tables
-- of them), found by walking the fields in a stable order (sorted keys): variables, trainable_variables,
-- non_trainable_variables and submodules (each once, depth first). with_name_scope(fn) runs fn in the module's
-- name scope; module.name_scope is that scope's name.
local Module = class("Module")
M.Module = Module

local function snake(s) return (s:gsub("(%l)(%u)", "%1_%2"):lower()) end

function Module:__init(o)
  local name = type(o) == "table" and o.name or o
  if name ~= nil and (type(name) ~= "string" or not name:match("^[%a_][%w_%.%-]*$")) then
    fail("Module", "name must be a valid Python-style identifier string, got %s", tostring(name))
  end
  rawset(self, "name", name or snake(getmetatable(self).__name or "module"))
  rawset(self, "name_scope", scope_after(variable.name_scope, rawget(self, "name")))
end

-- Walk v's fields: visit(x) for each Variable and Module met (each once), not entering tensors or functions.
local function walk(v, seen, on_var, on_mod, top)
  if seen[v] then return end
  if variable.is_variable(v) then seen[v] = true; on_var(v); return end
  if type(v) ~= "table" or binding.istensor(v) then return end
  seen[v] = true
  if not top and class.is_instance(v, Module) then on_mod(v) end
  local keys = {}
  for k in pairs(v) do
    if k ~= "name" and k ~= "name_scope" then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  for _, k in ipairs(keys) do walk(v[k], seen, on_var, on_mod, false) end
end

local function collect(self, want)
  local out = {}
  walk(self, {}, function(v) if want == nil or want(v) then out[#out + 1] = v end end, function() end, true)
  return out
end

function Module:variables() return collect(self) end
function Module:trainable_variables() return collect(self, function(v) return v.trainable end) end
function Module:non_trainable_variables() return collect(self, function(v) return not v.trainable end) end
function Module:submodules()
  local out = {}
  walk(self, {}, function() end, function(m) out[#out + 1] = m end, true)
  return out
end
function Module:with_name_scope(fn, ...)
  return M.name_scope(rawget(self, "name_scope") .. "/", fn, ...)
end
function Module:__tostring() return fmt("<tide.Module '%s'>", rawget(self, "name")) end

-- ---- graph-mode gradients --------------------------------------------------------------------

local function as_list(v)
  if type(v) == "table" and not binding.istensor(v) and not variable.is_variable(v) then return v, true end
  return { v }, false
end

-- gradients(f, xs, {grad_ys=, unconnected_gradients="none", stop_gradients=}) as tf.gradients (graph mode): TF
-- differentiates tensors of a graph being built; tide's traced tensors are differentiated by tapes, so ys is a
-- function computing them from xs: the sum of ys' gradients with respect to each of xs (a list, as TF's), grad_ys
-- weighting each y. Works eagerly and inside tide.trace. stop_gradients: tensors of xs treated as constants.
function M.gradients(f, xs, ...)
  local op = "gradients"
  local o = require("tide.args").parse(op, { "grad_ys", "name", "gate_gradients", "aggregation_method",
    "stop_gradients", "unconnected_gradients" }, ...)
  if type(f) ~= "function" then
    fail(op, "ys must be a function computing them from xs (tide differentiates by tapes, not graph edges), got %s",
      binding.istensor(f) and "a tensor" or type(f))
  end
  local list = as_list(xs)
  local unconnected = o.unconnected_gradients
  if type(unconnected) == "table" and unconnected.value then unconnected = unconnected.value end
  local tape = tape_mod.GradientTape { persistent = false }
  local ys = { tape:run(function()
    for _, x in ipairs(list) do tape:watch(x) end
    return f(unpack(list))
  end) }
  if #ys == 1 and type(ys[1]) == "table" and not binding.istensor(ys[1]) then ys = ys[1] end
  local grad_ys = o.grad_ys
  if grad_ys ~= nil then grad_ys = as_list(grad_ys) end
  local g = tape:gradient(#ys == 1 and ys[1] or ys, list, {
    output_gradients = grad_ys and (#ys == 1 and grad_ys[1] or grad_ys) or nil,
    unconnected_gradients = unconnected or "none" })
  return g
end

-- hessians(f, xs) as tf.hessians: for each x of xs, the Hessian of the sum of f(xs...) with respect to x, shaped
-- x.shape .. x.shape (two nested tapes; the inner gradient's rows by a loop over x's elements).
function M.hessians(f, xs, ...)
  local op = "hessians"
  if type(f) ~= "function" then fail(op, "ys must be a function computing them from xs, got %s", type(f)) end
  local list = as_list(xs)
  local shape_ops = require "tide.ops.shape"
  local reduce = require "tide.ops.reduce"
  local out = {}
  for k, x in ipairs(list) do
    if variable.is_variable(x) then x = variable.read(x) end
    if not binding.istensor(x) then fail(op, "xs[%d] must be a tensor or Variable, got %s", k, type(x)) end
    local dims = x.shape:as_list()
    local n = 1
    for _, d in ipairs(dims) do
      if d == nil or d < 0 then fail(op, "xs[%d]'s shape must be known", k) end
      n = n * d
    end
    local rows = {}
    for i = 0, n - 1 do
      local outer = tape_mod.GradientTape()
      local gi = outer:run(function()
        outer:watch(x)
        local inner = tape_mod.GradientTape()
        local y = inner:run(function()
          inner:watch(x)
          local args_ = {}
          for j, v in ipairs(list) do args_[j] = j == k and x or v end
          local ys = f(unpack(args_))
          if type(ys) == "table" and not binding.istensor(ys) then
            local total
            for _, y in ipairs(ys) do
              local s = reduce.reduce_sum(y)
              total = total and total + s or s
            end
            return total
          end
          return reduce.reduce_sum(ys)
        end)
        local g = inner:gradient(y, x, { unconnected_gradients = "zero" })
        return shape_ops.reshape(g, { -1 })[i]
      end)
      rows[#rows + 1] = shape_ops.reshape(outer:gradient(gi, x, { unconnected_gradients = "zero" }), { -1 })
    end
    local full = {}
    for _, d in ipairs(dims) do full[#full + 1] = d end
    for _, d in ipairs(dims) do full[#full + 1] = d end
    out[k] = n == 0 and require("tide.ops.create").zeros(full, x.dtype) or shape_ops.reshape(shape_ops.stack(rows), full)
  end
  return out
end

-- grad_pass_through(f) as tf.grad_pass_through: a function computing f(...) whose gradient with respect to each
-- tensor argument is the output gradient itself (the identity), as if f were not there (straight-through
-- estimators: quantization, rounding). f must return one tensor shaped like each tensor argument.
function M.grad_pass_through(f)
  if type(f) ~= "function" then fail("grad_pass_through", "f must be a function, got %s", type(f)) end
  return tape_mod.custom_gradient(function(...)
    local y = f(...)
    if not binding.istensor(y) then
      fail("grad_pass_through", "f must return one tensor, got %s", type(y))
    end
    local n = select("#", ...)
    return y, function(dy)
      local out = {}
      for i = 1, n do out[i] = dy end
      return unpack(out, 1, n)
    end
  end)
end

-- no_gradient(op_type) as tf.no_gradient: the registry op named op_type ("string_hash", see tide.raw_ops) has no
-- gradient: tapes give nil (or zeros) for what flows only through it, instead of the error an op without one
-- raises. An op that has a gradient already is refused, as TF refuses a second registration.
function M.no_gradient(op_type)
  M.RegisterGradient(op_type)(function() return nil end)
end

-- RegisterGradient(op_type)(fn) as tf.RegisterGradient: registers fn(op, dy1, dy2, ...) as the gradient of the
-- registry op named op_type, for ops tide defines no gradient for (op: { inputs =, outputs =, attrs = }; fn
-- returns one gradient per input, nil where none). Returns fn, so it reads as TF's decorator.
function M.RegisterGradient(op_type)
  local op = "RegisterGradient"
  if type(op_type) ~= "string" then fail(op, "op_type must be a string, got %s", type(op_type)) end
  local code = C.tide_op_lookup(op_type)
  if code < 0 then fail(op, "no op named '%s' (tide's registry names, as tide.raw_ops lists them)", op_type) end
  if registry.fns[code] then
    fail(op, "Registering two gradient with name '%s'! (tide defines this op's gradient)", op_type)
  end
  return function(fn)
    if type(fn) ~= "function" then fail(op, "expects the gradient function, got %s", type(fn)) end
    registry.fns[code] = function(node, dys)
      local n = 0
      for k in pairs(dys) do if k > n then n = k end end
      return fn(node, unpack(dys, 1, n))
    end
    registry.files[code] = "RegisterGradient"
    return fn
  end
end

return M
