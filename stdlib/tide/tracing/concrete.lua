-- stdlib/tide/tracing/concrete.lua — ConcreteFunction (one traced graph with
-- its argument and result templates: calling, checking, signatures) and Graph.
local binding = require "tide.binding"
local class = require "tide.class"
local context = require "tide.trace_context"
local spec = require "tide.tracing.spec"
local recorder = require "tide.tape_recorder"
local T = require "tide.tracing.trace_type"
local cache = require "tide.tracing.call_cache"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local band = bit.band
local pack, unpack = require("tide.varargs").pack, unpack or table.unpack
local None, TensorSpec = spec.None, spec.TensorSpec
local dims_text = spec.dims_text
local list_template, rebuild, has_tensor, lua_repr = T.list_template, T.rebuild, T.has_tensor, T.lua_repr
local fits, first_difference, describe = T.fits, T.first_difference, T.describe
local arg_count, arg_name, where = T.arg_count, T.arg_name, T.where
local lookup, remember = cache.lookup, cache.remember

-- One instance per Lua state (busted clears package.loaded between spec
-- files): Functions made before a reload keep making
-- concrete functions of the one class.
local REGISTRY_KEY = "tide.tracing.concrete"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

local M = {}
registry[REGISTRY_KEY] = M

local ConcreteFunction = class("ConcreteFunction")
local Graph = class("Graph")
M.ConcreteFunction, M.Graph = ConcreteFunction, Graph

local SYMBOLIC = C.TIDE_TENSOR_SYMBOLIC
local cstack = context.stack

-- A tape recording outside a traced call sees the call as one node, whose
-- backward is itself a traced Function: tracing/gradient.lua makes it, sits
-- above this module and function.lua, and sets these when loaded.
local tape_call = {
  records = function()
    error("tide.tracing.concrete: tide.tracing.gradient was not loaded (a tape records a traced call)", 2)
  end,
}

-- records(cf, slots): true when this call must become a node; call(cf, slots): run it as one.
function M.set_tape_call(records, call) tape_call.records, tape_call.call = records, call end

---------------------------------------------------------------------------
-- Pretty signatures (TF's ConcreteFunction.pretty_printed_signature)
---------------------------------------------------------------------------

-- "float32 Tensor, shape=(None, 2)", or a structure with <k> markers and
-- one line per tensor below it.
local function pretty_spec(t, tuple)
  if t.kind == "tensor" then return string.format("%s Tensor, shape=%s", t.dtype, dims_text(t.dims)) end
  if t.kind ~= "table" then return lua_repr(rebuild(t, {})) end
  local leaves = {}
  local function structure(x, top)
    if x.kind == "tensor" then
      leaves[#leaves + 1] = x
      return "<" .. #leaves .. ">"
    elseif x.kind ~= "table" then
      return lua_repr(rebuild(x, {}))
    end
    local parts = {}
    for i, item in ipairs(x.items) do
      local s = structure(item)
      if not x.array then
        local key = x.keys[i]
        local ks = (type(key) == "string" and key:match("^[%a_][%w_]*$")) and key or ("[" .. lua_repr(key) .. "]")
        s = ks .. " = " .. s
      end
      parts[i] = s
    end
    if top then return "(" .. table.concat(parts, ", ") .. ")" end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  local result = structure(t, tuple)
  for i, leaf in ipairs(leaves) do
    result = result .. string.format("\n      <%d>: %s", i, pretty_spec(leaf))
  end
  return result
end

---------------------------------------------------------------------------
-- Graphs
---------------------------------------------------------------------------

-- cf.graph: the traced graph. tostring gives one node a line (op, inputs,
-- dtype, shape, the Lua line that recorded it); handle is the tide_graph.
function Graph:__init(handle, name)
  self.handle = handle
  self.name = name
end

Graph.__tostring = function(g) return ffi.string(C.tide_graph_text(g.handle)) end

-- The graph as text (what tostring gives).
function Graph:text() return ffi.string(C.tide_graph_text(self.handle)) end
-- The graph as Graphviz dot text.
function Graph:to_dot() return ffi.string(C.tide_graph_dot(self.handle)) end
-- Nodes left after the optimization passes.
function Graph:num_nodes() return tonumber(C.tide_graph_num_nodes(self.handle)) end
function Graph:num_inputs() return tonumber(C.tide_graph_num_inputs(self.handle)) end
function Graph:num_outputs() return tonumber(C.tide_graph_num_outputs(self.handle)) end
-- Bytes the memory plan reserves for intermediates (at the shapes of the last run).
function Graph:planned_bytes() return tonumber(C.tide_graph_planned_bytes(self.handle)) end

---------------------------------------------------------------------------
-- Concrete functions
---------------------------------------------------------------------------

-- The graph's outputs: tensors among fn's results become output slots.
local function output_template(res)
  local slots = {}
  return list_template(res.n, slots, unpack(res, 1, res.n)), slots
end

-- The argument template as TF's structured_input_signature: tensors as
-- TensorSpecs (named as the input_signature or get_concrete_function named
-- them), Lua values as themselves.
local function spec_value(t)
  local k = t.kind
  if k == "tensor" then return TensorSpec(t.dims, t.dtype, t.name) end
  if k ~= "table" then return rebuild(t, {}) end
  local out = {}
  for i, item in ipairs(t.items) do out[t.keys[i]] = spec_value(item) end
  return out
end

function ConcreteFunction:__init(fn, graph, arg_template, nslots, out_template, outs, variables)
  self.function_ = fn            -- the Function that traced it
  self.name = fn.name
  self._g = graph                -- the tide_graph cdata (freed with this object)
  self.graph = Graph(graph, fn.name)
  self._args = arg_template      -- the trace types of the arguments (tensors may have None dims)
  self._nin = nslots
  self._out = out_template
  self._nout = #outs
  self._out_syms = outs          -- the graph's outputs (symbolic): their dtypes and dims
  self._variables = variables    -- variables the graph reads or assigns (kept alive)
  self.variables = variables     -- TF's cf.variables and cf.trainable_variables
  local trainable = {}
  for _, v in ipairs(variables) do
    if v.trainable then trainable[#trainable + 1] = v end
  end
  self.trainable_variables = trainable
  self._in = ffi.new("const tide_tensor *[?]", math.max(nslots, 1))
  self._outs = ffi.new("tide_tensor *[?]", math.max(#outs, 1))
  self._accept = cache.new()     -- call cache: argument types known to fit
  -- The results are the graph's outputs in order (no tables, no Lua values):
  -- _run_flat can return them without rebuilding.
  local flat = out_template.n == #outs
  for i, item in ipairs(out_template.items) do
    if item.kind ~= "tensor" or item.slot ~= i then flat = false end
  end
  self._flat_out = flat
  -- TF's structured_input_signature (without kwargs: Lua has none) and
  -- structured_outputs (the symbolic tensors the trace returned).
  local sig = spec_value(arg_template)
  sig.n = arg_template.n
  self.structured_input_signature = sig
  local so = rebuild(out_template, outs)
  so.n = out_template.n
  self.structured_outputs = so
end

-- Run the graph on the flat list of eager tensors; returns fn's results.
-- While a tape records, the call may become one node of it (gradient.lua).
function ConcreteFunction:_run_flat(slots)
  local observer = context.run_observer -- set while tide.summary.trace_on collects graphs
  if observer then observer(self) end
  if recorder.active and tape_call.records(self, slots) then return tape_call.call(self, slots) end
  local n, nout = self._nin, self._nout
  local ins, outs = self._in, self._outs
  if self._flat_out and nout == 1 then
    local t = Tensor() -- made before filling `ins`: no allocation between that and the call
    outs[0] = t
    for i = 1, n do ins[i - 1] = slots[i] end
    local rc = C.tide_graph_run(self._g, n, ins, 1, outs)
    if rc ~= 0 then binding.raise() end
    return binding.finish(t)
  end
  return self:_results(self:_run_outputs(slots))
end

-- Run the graph; returns the list of its outputs (eager tensors).
function ConcreteFunction:_run_outputs(slots)
  local n, nout = self._nin, self._nout
  local ins, outs = self._in, self._outs
  local results = {}
  for i = 1, nout do
    local t = Tensor()
    results[i] = t
    outs[i - 1] = t
  end
  for i = 1, n do ins[i - 1] = slots[i] end
  local rc = C.tide_graph_run(self._g, n, ins, nout, outs)
  if rc ~= 0 then binding.raise() end
  for i = 1, nout do binding.finish(results[i]) end
  return results
end

-- fn's results from the graph's outputs (rebuilt into fn's tables and Lua values).
function ConcreteFunction:_results(results)
  if self._flat_out then return unpack(results, 1, self._nout) end
  local out = rebuild(self._out, results)
  return unpack(out, 1, self._out.n)
end

-- Why `actual` does not fit `sig`, in words, or nil when it does.
local function mismatch(fn, sig, actual, baked)
  for i = 1, math.max(#sig.items, #actual.items) do
    local s, a = sig.items[i], actual.items[i] or { kind = "value" }
    if s == nil then
      if a.kind ~= "value" or a.value ~= nil then
        return string.format("argument %d is %s, but it was traced with %d argument%s", i, describe(a),
          #sig.items, #sig.items == 1 and "" or "s")
      end
    elseif not fits(s, a, baked) then
      local path, x, y, why = first_difference(s, a, "#" .. i)
      local at = where(fn, path)
      if why == "value" then
        return string.format("%s was traced with %s but is called with %s (a Lua value is baked into the " ..
          "graph: trace again for another value, or pass a tensor)", at, describe(x), describe(y))
      elseif x.kind == "tensor" and y.kind == "tensor" then
        return string.format("%s is %s but the graph takes %s", at, describe(y), describe(x))
      end
      return string.format("%s is %s but it was traced with %s", at, describe(y), describe(x))
    end
  end
  return nil
end

-- Calling a concrete function: arguments must fit its signature (tensors of
-- its dtypes and compatible shapes; Lua values equal to the traced ones, or
-- omitted: they take the traced value, as in TF).
function ConcreteFunction:__call(...)
  local fn = self.function_
  local n = arg_count(fn, select("#", ...))
  if cstack[1] ~= nil then return self:_inline(n, ...) end
  local slots = {}
  local node = lookup(self._accept, slots, n, ...)
  if node ~= nil and node.ok then return self:_run_flat(slots) end
  slots = {}
  local actual = list_template(n, slots, ...)
  local why = mismatch(fn, self._args, actual, true)
  if why then
    binding.error(string.format("ConcreteFunction %s: %s", self:_summary(), why))
  end
  for _, s in ipairs(slots) do
    if band(s.flags, SYMBOLIC) ~= 0 then
      binding.error(string.format("ConcreteFunction %s: an argument is a symbolic tensor; call the Function " ..
        "(not one of its concrete functions) inside another trace", self:_summary()))
    end
  end
  remember(self._accept, n, ...).ok = true
  return self:_run_flat(slots)
end

-- A call inside another trace: checked against this signature (symbolic
-- tensors' unknown dims pass), then fn runs inline into the graph being built.
function ConcreteFunction:_inline(n, ...)
  local actual = list_template(n, nil, ...)
  for i, item in ipairs(self._args.items) do
    local a = actual.items[i]
    if a and a.kind == "tensor" and item.kind == "tensor" and a.dims and item.dims and #a.dims == #item.dims then
      local dims = {}
      for k, d in ipairs(a.dims) do dims[k] = (d == None) and item.dims[k] or d end
      a.dims = dims
    end
  end
  local why = mismatch(self.function_, self._args, actual, true)
  if why then binding.error(string.format("ConcreteFunction %s: %s", self:_summary(), why)) end
  local a = pack(...)
  for i, item in ipairs(self._args.items) do
    if a[i] == nil and item.kind == "value" then a[i] = item.value end
  end
  return self.function_:_inline(unpack(a, 1, n))
end

-- TF's summary line: "f(x, n=2)": Lua values shown with their traced value.
function ConcreteFunction:_summary()
  local fn = self.function_
  local parts = {}
  for i, item in ipairs(self._args.items) do
    local name = arg_name(fn, i)
    if not has_tensor(item) then name = name .. "=" .. lua_repr(rebuild(item, {})) end
    parts[i] = name
  end
  return string.format("%s(%s)", fn.name, table.concat(parts, ", "))
end

-- TF's ConcreteFunction.pretty_printed_signature: the summary, then the
-- tensor arguments and the results as specs.
function ConcreteFunction:pretty_printed_signature(verbose)
  if verbose == false then return self:_summary() end
  local lines = { self:_summary() }
  local fn = self.function_
  local details = {}
  for i, item in ipairs(self._args.items) do
    if has_tensor(item) then details[#details + 1] = "    " .. arg_name(fn, i) .. ": " .. pretty_spec(item) end
  end
  if #details > 0 then
    lines[#lines + 1] = "  Args:"
    for _, l in ipairs(details) do lines[#lines + 1] = l end
  end
  lines[#lines + 1] = "  Returns:"
  local out = self._out
  local ret
  if out.n == 0 then ret = "nil"
  elseif out.n == 1 then ret = pretty_spec(out.items[1])
  else ret = pretty_spec(out, true) end
  lines[#lines + 1] = "    " .. ret
  return table.concat(lines, "\n")
end

-- The graph as text (one node a line) and as Graphviz dot.
function ConcreteFunction:graph_text() return self.graph:text() end
function ConcreteFunction:graph_dot() return self.graph:to_dot() end

ConcreteFunction.__tostring = function(cf) return "ConcreteFunction " .. cf:pretty_printed_signature() end

-- "x: float32(None, 3), n: 2" (kept for messages and older callers).
function M.signature_text(t)
  local parts = {}
  for i, item in ipairs(t.items) do
    if item.kind == "tensor" then parts[i] = item.dtype .. dims_text(item.dims)
    else parts[i] = has_tensor(item) and pretty_spec(item) or lua_repr(rebuild(item, {})) end
  end
  return table.concat(parts, ", ")
end
M.output_template = output_template

return M
