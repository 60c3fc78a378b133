-- stdlib/tide/tracing/input_signature.lua — a Function's input_signature:
-- checking it, converting Lua values for its specs, and matching calls to it.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local convert = require "tide.convert"
local spec = require "tide.tracing.spec"
local T = require "tide.tracing.trace_type"
local nest = require "tide.nest"
local ffi, Tensor = binding.ffi, binding.Tensor
local istype = ffi.istype
local None = spec.None
local dims_text = spec.dims_text
local describe, where, lua_repr, sub_path = T.describe, T.where, T.lua_repr, T.sub_path
local is_list, sorted_keys, safe_tostring = nest.is_list, nest.sorted_keys, T.safe_tostring
local list_template, template_of, tensor_dims, arg_name = T.list_template, T.template_of, T.tensor_dims, T.arg_name

local M = {}


-- A Lua value converted for a tensor spec, as TF's convert_to_tensor with a
-- dtype hint: whole numbers take any numeric dtype, fractions any float
-- dtype, booleans bool; anything else is returned unchanged (and rejected).
local function convert_for(v, sp)
  local tv = type(v)
  if istype(Tensor, v) then return v end
  if T.is_variable(v) then return convert.arg(v, "trace") end
  if tv ~= "number" and tv ~= "boolean" and not (tv == "table" and getmetatable(v) == nil) then return v end
  local ok, t = pcall(convert.tensor, v, nil, "trace")
  if not ok then return v end
  if t.dtype == sp.dtype then return t end
  local from, to = t.dt, dtype.codes[sp.dtype]
  if (dtype.is_int[from] and (dtype.is_int[to] or dtype.is_float[to])) or
     (dtype.is_float[from] and dtype.is_float[to]) then
    local ok2, t2 = pcall(convert.tensor, v, sp.dtype, "trace")
    if ok2 then return t2 end
  end
  return v
end

-- Convert Lua values where the signature has tensor specs (nested plain tables follow the signature).
local function conform(sig, v)
  if spec.is_spec(sig) then return convert_for(v, sig) end
  if type(sig) == "table" and type(v) == "table" and getmetatable(v) == nil then
    local out = {}
    for k, x in pairs(v) do out[k] = sig[k] ~= nil and conform(sig[k], x) or x end
    return out
  end
  return v
end

-- Why template `a` does not fit signature entry `s` (a TensorSpec or a table of them), or nil.
local function signature_mismatch(fn, s, a, path)
  if spec.is_spec(s) then
    local at = where(fn, path)
    if a.kind ~= "tensor" then
      return string.format("%s is %s where the signature has a tensor", at, describe(a))
    end
    if a.dtype ~= s.dtype then
      return string.format("%s is %s where the signature has dtype %s", at, describe(a), s.dtype)
    end
    if s.shape and a.dims then -- a symbolic tensor of unknown rank (a call inside a trace) is compatible
      if #a.dims ~= #s.shape then
        return string.format("%s is %s where the signature has rank %d", at, describe(a), #s.shape)
      end
      for k, d in ipairs(s.shape) do
        if d ~= None and a.dims[k] ~= None and d ~= a.dims[k] then
          return string.format("%s is %s where the signature has %s at dimension %d", at, describe(a),
            tostring(d), k - 1)
        end
      end
    end
    return nil
  end
  if a.kind ~= "table" or getmetatable(s) ~= nil then
    return string.format("%s is %s where the signature has %s", where(fn, path), describe(a), lua_repr(s))
  end
  local list = is_list(s)
  local keys = list and nil or sorted_keys(s)
  local want = list and #s or #keys
  if a.array ~= list or #a.items ~= want then
    return string.format("%s is %s where the signature has %s", where(fn, path), describe(a), lua_repr(s))
  end
  for i, item in ipairs(a.items) do
    local k = a.keys[i]
    if s[k] == nil then
      return string.format("%s has the key %s, which the signature lacks", where(fn, path), lua_repr(k))
    end
    local why = signature_mismatch(fn, s[k], item, sub_path(path, k))
    if why then return why end
  end
  return nil
end

-- Give the template the signature's dims (nil for a spec of unknown rank:
-- one trace takes tensors of every rank) and names.
local function apply_spec_dims(s, a)
  if spec.is_spec(s) then
    if s.shape then
      local dims = {}
      for i, d in ipairs(s.shape) do dims[i] = d end
      a.dims = dims
    else
      a.dims = nil
    end
    a.name = s.name
    return
  end
  for i, item in ipairs(a.items) do apply_spec_dims(s[a.keys[i]], item) end
end
M.conform, M.signature_mismatch, M.apply_spec_dims = conform, signature_mismatch, apply_spec_dims

-- Check tide.trace's input_signature option: a list of TensorSpecs (or
-- tables of them), no longer than fn's parameter list.
function M.check(fn, sig)
  if type(sig) ~= "table" or getmetatable(sig) ~= nil then
    binding.error("trace: input_signature must be a list of tide.TensorSpec, got " .. safe_tostring(sig))
  end
  local function check(s, path)
    if spec.is_spec(s) then return end
    if type(s) ~= "table" or getmetatable(s) ~= nil then
      binding.error(string.format("trace: input_signature entry %s is %s, not a tide.TensorSpec (or a table of them)",
        path, safe_tostring(s)))
    end
    for k, v in pairs(s) do check(v, path .. "[" .. lua_repr(k) .. "]") end
  end
  for i = 1, #sig do check(sig[i], tostring(i)) end
  for k in pairs(sig) do
    if type(k) ~= "number" then binding.error("trace: input_signature must be a list (got the key " .. lua_repr(k) .. ")") end
  end
  if not fn._vararg and #sig > fn._nparams then
    binding.error(string.format("trace: input_signature has %d specs but the function takes %d argument%s", #sig,
      fn._nparams, fn._nparams == 1 and "" or "s"))
  end
end

-- The template of a call's arguments, checked against fn's input_signature
-- (an error shows the inputs and the signature), with the signature's dims.
function M.template(fn, n, ...)
  local slots = {}
  local actual = list_template(n, slots, ...)
  local sig = fn._sig
  local why
  local extra = select("#", ...)
  if extra > n then
    for i = n + 1, extra do
      if select(i, ...) ~= nil then
        why = string.format("argument %d is %s, but the signature has %d entr%s", i,
          describe(template_of((select(i, ...)), nil)), #sig, #sig == 1 and "y" or "ies")
        break
      end
    end
  end
  for i = 1, #sig do
    if why then break end
    why = signature_mismatch(fn, sig[i], actual.items[i], "#" .. i)
  end
  if why then
    local inputs = {}
    for i = 1, math.max(n, extra) do
      local v = select(i, ...)
      if istype(Tensor, v) then
        inputs[i] = string.format("tide.Tensor(shape=%s, dtype=%s)", dims_text(tensor_dims(v)), dtype.names[v.dt])
      else
        inputs[i] = lua_repr(v)
      end
    end
    local want = {}
    for i, s in ipairs(sig) do
      want[i] = arg_name(fn, i) .. ": " .. (spec.is_spec(s) and tostring(s) or lua_repr(s))
    end
    binding.error(string.format("trace: the arguments of %s do not match its input_signature: %s\n  inputs: (%s)\n" ..
      "  input_signature: (%s)", fn.name, why, table.concat(inputs, ", "), table.concat(want, ", ")))
  end
  for i = 1, #sig do apply_spec_dims(sig[i], actual.items[i]) end
  return actual, slots
end

return M
