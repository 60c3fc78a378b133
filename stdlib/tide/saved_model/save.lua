-- stdlib/tide/saved_model/save.lua — tide.saved_model.save: traced functions' graphs (their
-- signatures' input and output names) and their variables, written to a directory by C (kernels/io/saved_model.c).
local binding = require "tide.binding"
local args = require "tide.args"
local variable = require "tide.variable"
local concrete = require "tide.tracing.concrete"
local Function = require("tide.tracing.function").Function
local ffi, C = binding.ffi, binding.C
local ConcreteFunction = concrete.ConcreteFunction

local M = {}

local is_instance = require("tide.class").is_instance
local function is_a(x, cls) return is_instance(x, cls) end

-- The concrete function to save for f: a ConcreteFunction as it is, a
-- Function traced from its input_signature.
local function concrete_of(f, what)
  if is_a(f, ConcreteFunction) then return f end
  if is_a(f, Function) then
    if not f.input_signature then
      binding.error(string.format("saved_model.save: %s was traced without an input_signature; give one " ..
        "(tide.trace(f, {input_signature = {...}})) or pass f:get_concrete_function(...)", what))
    end
    return f:get_concrete_function()
  end
  binding.error(string.format("saved_model.save: %s is a %s, not a traced function (tide.trace) or a concrete " ..
    "function", what, type(f)))
end

-- The names of cf's graph inputs: its TensorSpecs' names, else its
-- parameters' names (x, y), else input_<k>.
local function input_names(cf)
  local names, used = {}, {}
  local fn = cf.function_
  local k = 0
  local function add(name)
    k = k + 1
    if not name or used[name] then name = "input_" .. k end
    while used[name] do name = name .. "_" end
    used[name] = true
    names[k] = name
  end
  local function walk(item, name)
    if item.kind == "tensor" then add(item.name or name)
    elseif item.kind == "table" then
      for i, sub in ipairs(item.items) do walk(sub, type(item.keys[i]) == "string" and item.keys[i] or nil) end
    end
  end
  for i, item in ipairs(cf._args.items) do walk(item, fn._params and fn._params[i]) end
  return names
end

-- The names of cf's outputs as TF names them: a table of named tensors
-- keeps its keys; anything else is output_0, output_1, ...
local function output_names(cf)
  local out, names = cf._out, {}
  local t = out.items[1]
  if out.n == 1 and t and t.kind == "table" and not t.array then
    local ok = true
    for i, item in ipairs(t.items) do
      if item.kind ~= "tensor" or type(t.keys[i]) ~= "string" then ok = false else names[item.slot] = t.keys[i] end
    end
    if ok and #names == cf._nout then return names end
    names = {}
  end
  for i = 1, cf._nout do names[i] = "output_" .. (i - 1) end
  return names
end

local function cstrings(list)
  local arr = ffi.new("const char *[?]", math.max(#list, 1))
  for i, s in ipairs(list) do arr[i - 1] = s end
  return arr
end

-- The functions to save: {name = cf} from opts.signatures or obj.
local function signatures_of(obj, sigs)
  local out = {}
  if sigs == nil then
    if is_a(obj, Function) or is_a(obj, ConcreteFunction) then
      out.serving_default = concrete_of(obj, "the object")
    elseif type(obj) == "table" and obj.signatures then
      return signatures_of(nil, obj.signatures)
    else
      binding.error("saved_model.save: give signatures = {serving_default = traced_fn, ...} (the object is not a " ..
        "traced function)")
    end
  elseif is_a(sigs, Function) or is_a(sigs, ConcreteFunction) then
    out.serving_default = concrete_of(sigs, "signatures")
  elseif type(sigs) == "table" then
    for name, f in pairs(sigs) do
      if type(name) ~= "string" then binding.error("saved_model.save: signatures must be named (a table by name)") end
      out[name] = concrete_of(f, "signature '" .. name .. "'")
    end
  else
    binding.error("saved_model.save: signatures must be a traced function or a table of them by name, got " ..
      type(sigs))
  end
  if next(out) == nil then binding.error("saved_model.save: no signatures to save") end
  return out
end

-- Variables to save: the ones given by name ({name, Variable} pairs), then
-- obj's own (obj.variables) and every one a signature uses, each under a
-- unique name.
local function variables_of(obj, cfs, named)
  local list, seen, given = {}, {}, {}
  local function add(v)
    if variable.is_variable(v) and not seen[v] then
      seen[v] = true
      list[#list + 1] = v
    end
  end
  for i, p in ipairs(named or {}) do
    if type(p) ~= "table" or type(p[1]) ~= "string" or not variable.is_variable(p[2]) then
      binding.error(string.format("saved_model.save: variables[%d] must be a {name, Variable} pair", i))
    end
    if given[p[1]] then binding.error("saved_model.save: two variables are named '" .. p[1] .. "'") end
    if seen[p[2]] then binding.error("saved_model.save: variables[" .. i .. "] names a Variable given before") end
    add(p[2])
    given[p[1]] = true
  end
  if type(obj) == "table" then
    local ok, vars = pcall(function() return obj.variables end)
    if ok and type(vars) == "table" then for _, v in ipairs(vars) do add(v) end end
  end
  local names = {}
  for _, name in ipairs(cfs.order) do for _, v in ipairs(cfs[name].variables) do add(v) end end
  local used = {}
  for i, p in ipairs(named or {}) do used[p[1]] = true; names[i] = p[1] end
  for i = #(named or {}) + 1, #list do
    local v = list[i]
    local base = v.name or "Variable"
    local name, k = base, 0
    while used[name] do k = k + 1; name = base .. "_" .. k end
    used[name] = true
    names[i] = name
  end
  return list, names
end

M.input_names, M.output_names = input_names, output_names -- also onnx_export's

-- tide.saved_model.save(obj, dir, {signatures=}): obj a traced function
-- (with an input_signature), a concrete function, or an object whose
-- signatures (and variables) opts.signatures names.
function M.save(obj, dir, ...)
  local o = args.parse("saved_model.save", { "signatures", "extra", "variables" }, ...)
  if type(dir) ~= "string" or dir == "" then binding.error("saved_model.save: dir must be a path string") end
  local sigs = signatures_of(obj, o.signatures)
  local order = {}
  for name in pairs(sigs) do order[#order + 1] = name end
  table.sort(order)
  sigs.order = order
  local vars, names = variables_of(obj, sigs, o.variables)
  local w = C.tide_saved_model_writer_new()
  if w == nil then binding.raise() end
  w = ffi.gc(w, C.tide_saved_model_writer_free)
  for i, v in ipairs(vars) do
    if C.tide_saved_model_add_variable(w, names[i], variable.handle(v), variable.is_trainable(v) and 1 or 0) ~= 0 then
      binding.raise()
    end
  end
  for _, name in ipairs(order) do
    local cf = sigs[name]
    local ins, outs = input_names(cf), output_names(cf)
    if C.tide_saved_model_add_function(w, name, cf._g, #ins, cstrings(ins), #outs, cstrings(outs)) ~= 0 then
      binding.raise()
    end
  end
  if o.extra ~= nil then
    if type(o.extra) ~= "string" then binding.error("saved_model.save: extra must be a JSON string") end
    if C.tide_saved_model_set_extra(w, o.extra) ~= 0 then binding.raise() end
  end
  if C.tide_saved_model_save(w, dir) ~= 0 then binding.raise() end
end

return M
