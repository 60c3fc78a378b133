-- stdlib/tide/tracing/function.lua — tide.trace: TF 2's tf.function for Lua.
-- A Function keeps concrete functions (one graph each) keyed by its
-- arguments' trace types; a call finds the most specific match or traces fn
-- with symbolic tensors, then runs the graph in one call into C. It also
-- watches for retracing and says why it happens (DESIGN §5).
-- Trace types live in trace_type.lua, the call cache in call_cache.lua,
-- graphs in concrete.lua, the warning in retracing.lua.
local binding = require "tide.binding"
local class = require "tide.class"
local dtype = require "tide.dtype"
local args = require "tide.args"
local context = require "tide.trace_context"
local scope = require "tide.scope"
local spec = require "tide.tracing.spec"
local recorder = require "tide.tape_recorder"
local T = require "tide.tracing.trace_type"
local cache = require "tide.tracing.call_cache"
local concrete = require "tide.tracing.concrete"
local retracing = require "tide.tracing.retracing"
local signature = require "tide.tracing.input_signature"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local band = bit.band
local pack, unpack = require("tide.varargs").pack, unpack or table.unpack
local None = spec.None
local list_template, key_of, rebuild, has_tensor = T.list_template, T.key_of, T.rebuild, T.has_tensor
local fits, common_supertype, sub_path, where, arg_count = T.fits, T.common_supertype, T.sub_path, T.where, T.arg_count
local lookup, remember = cache.lookup, cache.remember
local ConcreteFunction, output_template = concrete.ConcreteFunction, concrete.output_template
local signature_text = concrete.signature_text
local proto_of, detector_for = retracing.proto_of, retracing.detector_for
local called_with_tracing, called_without_tracing = retracing.called_with_tracing, retracing.called_without_tracing
local conform, signature_mismatch, apply_spec_dims = signature.conform, signature.signature_mismatch,
  signature.apply_spec_dims

-- One instance per Lua state (busted clears package.loaded between spec
-- files): Functions made before a reload must keep answering to the same
-- eager switch, settings and retracing counters.
local REGISTRY_KEY = "tide.tracing.function"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

local M = {
  eager = false,   -- tide.config.run_functions_eagerly
}
registry[REGISTRY_KEY] = M

local Function = class("Function")
M.Function = Function

local SYMBOLIC = C.TIDE_TENSOR_SYMBOLIC
local cstack = context.stack

---------------------------------------------------------------------------
-- Functions
---------------------------------------------------------------------------

local PASSES = C.TIDE_PASS_ALL

-- A name for fn: TF uses the Python function's name; Lua functions have
-- none, so it is read from the source line that defines fn
-- ("local function step(", "step = function(", "local step = tide.trace(function(").
local names_by_proto = setmetatable({}, { __mode = "k" })
local function infer_name(fn, info)
  local key = proto_of(fn)
  local cached = names_by_proto[key]
  if cached then return cached end
  local line
  local src = info.source or ""
  local ok = pcall(function()
    if src:sub(1, 1) == "@" then
      local f = io.open(src:sub(2), "r")
      if not f then return end
      for _ = 1, info.linedefined do
        line = f:read("*l")
        if not line then break end
      end
      f:close()
    else
      local i = 0
      for l in (src .. "\n"):gmatch("([^\n]*)\n") do
        i = i + 1
        if i == info.linedefined then line = l break end
      end
    end
  end)
  local name
  if ok and line then
    name = line:match("function%s+[%w_%.:]-([%a_][%w_]*)%s*%(")
      or line:match("([%a_][%w_]*)%s*=%s*[%w_%.]*trace%s*%(%s*function")
      or line:match("([%a_][%w_]*)%s*=%s*function%s*%(")
  end
  if not name then
    name = (info.short_src:match("([^/]*)$") or "fn"):gsub("%.lua$", ""):gsub("[^%w_]", "_") .. "_" ..
      (info.linedefined or 0)
  end
  names_by_proto[key] = name
  return name
end

-- tide.trace(fn, {input_signature=, reduce_retracing=false, name=, jit_compile=})
-- jit_compile is TF's XLA switch; tide's graphs are always fused and planned
-- (docs/api.md), so it is accepted (a boolean, kept) and changes nothing.
function Function:__init(fn, ...)
  if type(fn) ~= "function" then binding.error("trace: expected a function, got " .. type(fn)) end
  local o = args.parse("trace", { "input_signature", "reduce_retracing", "name", "jit_compile" }, ...)
  self.fn = fn
  self.python_function = fn -- TF's name for it
  local info = debug.getinfo(fn, "Su")
  if o.name ~= nil and type(o.name) ~= "string" then binding.error("trace: name must be a string, got " .. type(o.name)) end
  self.name = o.name or infer_name(fn, info)
  self._defined = info.short_src .. ":" .. (info.linedefined or 0)
  self._nparams = info.nparams or 0
  self._vararg = info.isvararg and true or false
  self._params = {}
  for i = 1, self._nparams do self._params[i] = debug.getlocal(fn, i) end
  self.reduce_retracing = args.bool("trace", "reduce_retracing", o.reduce_retracing, false)
  if o.jit_compile ~= nil then self.jit_compile = args.bool("trace", "jit_compile", o.jit_compile, false) end
  if o.input_signature ~= nil then
    local sig = o.input_signature
    signature.check(self, sig)
    self.input_signature = sig
    self._sig = sig
    self._nsig = #sig
  end
  self._concrete = {}   -- ConcreteFunctions, oldest first
  self._calls = cache.new() -- call cache: argument types -> the ConcreteFunction they select
  self._traces = 0
  self._active = {}     -- trace types of this function's traces and inlined calls in progress
  self._detector = detector_for(fn)
end

-- The template of a call's arguments, checked against the input_signature.
function Function:_signature_template(n, ...)
  return signature.template(self, n, ...)
end

-- Refuse to trace fn for argument template t (key: key_of(t)) while a trace
-- with the same argument types is in progress: recursion would never end.
function Function:_check_recursion(key, t)
  if self._active[key] then
    binding.error(string.format("trace: %s calls itself with the same argument types (%s) while it is being " ..
      "traced: recursion on tensor arguments cannot be traced (the trace would never end); use tide.while_loop, " ..
      "or recurse on Lua values (each value traces its own graph)", self.name, signature_text(t)))
  end
end

-- The ways out of a trace (tide.scope runs them on every one): the
-- Function no longer traces for these argument types, and the C side
-- builds the graph it built before.
local function clear_active(active, key) active[key] = nil end
local tide_graph_abandon = C.tide_graph_abandon -- looked up now: a way out must not allocate
local function abandon_graph(g) tide_graph_abandon(g) end
local TRACED = "a traced function (tide.trace)"

-- Build a ConcreteFunction for the arguments' template (tensors may carry None dims).
function Function:_trace(target, nslots)
  local key = key_of(target)
  self:_check_recursion(key, target)
  local t0 = C.tide_profiler_now_ns() -- the profiler's "trace" event: running fn symbolically
  local g = C.tide_graph_new(self.name)
  if g == nil then binding.raise() end
  g = ffi.gc(g, C.tide_graph_free)
  local ctx = { graph = g, fn = self, variables = {}, first = self._traces == 0 }
  local mark = scope.enter()
  scope.push(clear_active, self._active, key)
  scope.push(abandon_graph, g)
  scope.push(context.restore, #cstack)
  local results = pack(scope.call(TRACED, mark, function()
    self._active[key] = true
    if C.tide_graph_begin(g) ~= 0 then binding.raise() end
    local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)
    local placeholders = {}
    local function make_placeholders(t)
      if t.kind == "tensor" then
        local dims = t.dims -- nil: an unknown rank (TensorSpec(nil), or reduce_retracing over several ranks)
        local ndim = dims and #dims or C.TIDE_UNKNOWN_RANK
        for i, d in ipairs(dims or {}) do dims_buf[i - 1] = d == None and -1 or d end
        local sym = Tensor()
        if C.tide_graph_input(g, dtype.codes[t.dtype], ndim, dims_buf, sym) ~= 0 then binding.raise() end
        placeholders[t.slot] = sym
      elseif t.kind == "table" then
        for _, item in ipairs(t.items) do make_placeholders(item) end
      end
    end
    make_placeholders(target)
    local call_args = rebuild(target, placeholders)
    context.push(ctx)
    -- Tapes recording outside see the call as one node (gradient.lua), not
    -- the trace's symbolic ops; a tape made inside fn records as usual.
    -- run_traced marks where the trace starts on the stack (user_line).
    return recorder.paused_as(TRACED, context.run_traced, self.fn, unpack(call_args, 1, target.n))
  end))
  local out_template, outs = output_template(results)
  local n_out = #outs
  local arr = ffi.new("const tide_tensor *[?]", math.max(n_out, 1))
  for i, t in ipairs(outs) do arr[i - 1] = t end
  if C.tide_graph_set_outputs(g, n_out, arr) ~= 0 then binding.raise() end
  C.tide_profiler_add_compile("trace", self.name, t0, C.tide_profiler_now_ns())
  -- Traced under check numerics: unfused, so each op's result is checked.
  local passes = C.tide_check_numerics_enabled() ~= 0 and bit.band(PASSES, bit.bnot(C.TIDE_PASS_FUSE)) or PASSES
  if C.tide_graph_finalize(g, passes) ~= 0 then binding.raise() end
  self._traces = self._traces + 1
  local vars = context.variables_in_order(ctx)
  return ConcreteFunction(self, g, target, nslots, out_template, outs, vars)
end

-- The concrete function for these argument templates: the most specific
-- existing one they fit, or a new trace (kept). With reduce_retracing the
-- new trace takes TF's generalized type: the template relaxed, one existing
-- concrete function after another, to their most specific common supertype.
function Function:_concrete_for(actual, nslots)
  local best, best_nones
  for _, c in ipairs(self._concrete) do
    local n = fits(c._args, actual)
    if n and (not best_nones or n < best_nones) then best, best_nones = c, n end
  end
  if best then return best, false end
  local target = actual
  if self.reduce_retracing and not self._sig then
    for _, c in ipairs(self._concrete) do
      target = common_supertype(target, c._args) or target
    end
  end
  local cf = self:_trace(target, nslots)
  self._concrete[#self._concrete + 1] = cf
  cache.clear(self._calls) -- a new concrete function may be more specific for cached calls
  return cf, true
end

-- A call inside another trace: fn runs inline, its ops recorded into the
-- graph being built (TF records a call of the nested function).
function Function:_inline(...)
  local n = arg_count(self, select("#", ...))
  local a = pack(...)
  if self._sig then
    for i = 1, self._nsig do a[i] = conform(self._sig[i], a[i]) end
    self:_signature_template(n, unpack(a, 1, math.max(n, a.n)))
  end
  local t = list_template(n, nil, unpack(a, 1, n))
  local key = key_of(t)
  self:_check_recursion(key, t)
  -- Inside the trace's own boundary (which refuses yields), a plain pcall:
  -- three frames a level, so traced calls nest thousands deep. The undo
  -- entry clears the marker if this way out fails (the trace's unwinds it).
  local mark = scope.enter()
  scope.push(clear_active, self._active, key)
  self._active[key] = true
  local res = pack(pcall(self.fn, unpack(a, 1, n)))
  scope.unwind(mark)
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

-- The slow way: the arguments' templates, the most specific concrete
-- function (tracing one if none fits), then the trie learns the call.
function Function:_call_slow(n, ...)
  local slots = {}
  local actual
  if self._sig then
    actual, slots = self:_signature_template(n, ...)
  else
    actual = list_template(n, slots, ...)
  end
  for i, s in ipairs(slots) do
    if band(s.flags, SYMBOLIC) ~= 0 then
      local path
      for k = 1, n do
        local item = actual.items[k]
        if has_tensor(item) then
          local function find(t, p)
            if t.kind == "tensor" then return t.slot == i and p or nil end
            if t.kind ~= "table" then return nil end
            for j, sub in ipairs(t.items) do
              local r = find(sub, sub_path(p, t.keys[j]))
              if r then return r end
            end
          end
          path = find(item, "#" .. k)
          if path then break end
        end
      end
      binding.error(string.format("%s: %s is a symbolic tensor of a traced function, used outside its trace; " ..
        "return it from that function instead of keeping it", self.name, where(self, path or "#1")))
    end
  end
  local cf, traced = self:_concrete_for(actual, #slots)
  remember(self._calls, n, ...).cf = cf
  if traced then called_with_tracing(self, self._detector, actual)
  else called_without_tracing(self._detector) end
  return cf:_run_flat(slots)
end

-- Convert Lua values where the input_signature has tensor specs.
function Function:_conformed(...)
  local a = pack(...)
  for i = 1, self._nsig do a[i] = conform(self._sig[i], a[i]) end
  return a
end

-- A call of n arguments: the concrete function the call cache remembers for
-- their types, or the slow way.
local function call_cached(self, n, ...)
  local slots = {}
  local node = lookup(self._calls, slots, n, ...)
  local cf = node and node.cf
  if cf then
    called_without_tracing(self._detector)
    return cf:_run_flat(slots)
  end
  return self:_call_slow(n, ...)
end

function Function:__call(...)
  if M.eager then return self.fn(...) end
  if cstack[1] ~= nil then return self:_inline(...) end
  local nargs = select("#", ...)
  local n = arg_count(self, nargs)
  if self._sig then
    for i = 1, n do
      local v = select(i, ...)
      if not istype(Tensor, v) then
        local a = self:_conformed(...)
        return self:_call_conformed(n, unpack(a, 1, math.max(n, a.n)))
      end
    end
    if nargs > n then return self:_call_slow(n, ...) end
  end
  return call_cached(self, n, ...)
end

-- A call whose arguments were converted for the input_signature.
function Function:_call_conformed(n, ...)
  if select("#", ...) > n then return self:_call_slow(n, ...) end
  return call_cached(self, n, ...)
end


-- f:get_concrete_function(args... or TensorSpecs...): the concrete function
-- those arguments select (tracing if needed), without running it. With an
-- input_signature and no arguments: the signature's concrete function.
function Function:get_concrete_function(...)
  local nargs = select("#", ...)
  local slots, actual
  if self._sig and nargs == 0 then
    slots = {}
    actual = T.spec_template(self._nsig, slots, unpack(self._sig, 1, self._nsig))
  else
    local n = arg_count(self, nargs)
    local a = pack(...)
    if self._sig then
      for i = 1, self._nsig do
        if not spec.is_spec(a[i]) then a[i] = conform(self._sig[i], a[i]) end
      end
    end
    slots = {}
    actual = T.spec_template(n, slots, unpack(a, 1, n))
    if self._sig then
      local why
      for i = 1, self._nsig do
        why = signature_mismatch(self, self._sig[i], actual.items[i], "#" .. i)
        if why then
          binding.error(string.format("get_concrete_function: the arguments of %s do not match its input_signature: %s",
            self.name, why))
        end
        apply_spec_dims(self._sig[i], actual.items[i])
      end
    end
  end
  return (self:_concrete_for(actual, #slots))
end

-- How many times fn has been traced by this Function (TF's
-- experimental_get_tracing_count).
function Function:trace_count() return self._traces end
Function.experimental_get_tracing_count = Function.trace_count

-- The concrete functions traced so far, oldest first.
function Function:concrete_functions()
  local out = {}
  for i, c in ipairs(self._concrete) do out[i] = c end
  return out
end

-- TF's pretty_printed_concrete_signatures: each concrete function's
-- signature, separated by blank lines.
function Function:pretty_printed_concrete_signatures(verbose)
  local parts = {}
  for i, c in ipairs(self._concrete) do parts[i] = c:pretty_printed_signature(verbose) end
  return table.concat(parts, "\n\n")
end

Function.__tostring = function(f) return string.format("<tide.Function %s>", f.name) end

-- tide.trace(fn, opts), or tide.trace(opts) giving a function that wraps fn
-- (TF's @tf.function(input_signature=...) form).
function M.trace(fn, ...)
  if type(fn) == "table" and getmetatable(fn) == nil and select("#", ...) == 0 then
    local opts = fn
    return function(f) return Function(f, opts) end
  end
  return Function(fn, ...)
end

return M
