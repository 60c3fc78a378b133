-- stdlib/tide/saved_model/replay.lua — a loaded graph definition run node by
-- node through the ops (tide.dispatch), tide.cond and tide.while_loop: eager,
-- traced, or under a tape (each op finds its gradient by registry name).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local variable = require "tide.variable"
local context = require "tide.trace_context"
local control = require "tide.tracing.control"
local None = require("tide.tracing.spec").None
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local unpack = unpack or table.unpack

local M = {}

local K = {
  INPUT = C.TIDE_NODE_INPUT, CONST = C.TIDE_NODE_CONST, CAPTURE = C.TIDE_NODE_CAPTURE,
  VARIABLE = C.TIDE_NODE_VARIABLE, OP = C.TIDE_NODE_OP, ASSIGN = C.TIDE_NODE_ASSIGN,
  PRINT = C.TIDE_NODE_PRINT, COND = C.TIDE_NODE_COND, WHILE = C.TIDE_NODE_WHILE,
}
local ASSIGN_METHOD = { [C.TIDE_ASSIGN_SET] = "assign", [C.TIDE_ASSIGN_ADD] = "assign_add",
  [C.TIDE_ASSIGN_SUB] = "assign_sub" }
local ATTRS_SIZE = ffi.sizeof("tide_attrs")
local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)
local ndim_buf = ffi.new("int[1]")
local pair = ffi.new("int32_t[2]")

local function share(t)
  local r = Tensor()
  if C.tide_tensor_share(r, t) ~= 0 then binding.raise() end
  return binding.finish(r)
end

-- tide.print's node: text with "%t" per tensor.
local function print_node(text, tensors)
  local arr = ffi.new("const tide_tensor *[?]", math.max(#tensors, 1))
  for i, t in ipairs(tensors) do arr[i - 1] = t end
  local g = C.tide_graph_building()
  local rc = g ~= nil and C.tide_graph_print(g, text, #tensors, arr) or C.tide_print(text, #tensors, arr)
  for _, t in ipairs(tensors) do if not context.is_symbolic(t) then binding.keep_alive(t) end end
  if rc ~= 0 then binding.raise() end
end

-- The shape invariants of a while_loop's variables: its body's input specs.
local function invariants(body)
  local list = {}
  for i = 0, C.tide_graph_def_num_inputs(body) - 1 do
    C.tide_graph_def_input(body, i, ndim_buf, dims_buf)
    if ndim_buf[0] >= 0 then
      local shape = {}
      for d = 0, ndim_buf[0] - 1 do
        local v = tonumber(dims_buf[d])
        shape[d + 1] = v < 0 and None or v
      end
      list[i + 1] = shape
    end
  end
  return list
end

local run_graph

-- Run def's nodes on args (a packed list); outer: the enclosing graph's values.
run_graph = function(def, vars, outer, args)
  local vals = {}
  local function value(p, k)
    local v = vals[p[2 * k]]
    return v[p[2 * k + 1] + 1]
  end
  for i = 0, C.tide_graph_def_num_nodes(def) - 1 do
    local nd = C.tide_graph_def_node(def, i)
    local kind, n_in = nd.kind, nd.n_in
    local ins = {}
    for k = 0, n_in - 1 do ins[k + 1] = value(nd["in"], k) end
    local origin = nd.origin ~= nil and ffi.string(nd.origin) or nil
    local ok, err = pcall(function()
      if kind == K.INPUT then
        vals[i] = { args[nd.input_index + 1] }
      elseif kind == K.CONST then
        vals[i] = { share(nd.value) }
      elseif kind == K.CAPTURE then
        vals[i] = { outer[nd.capture[0]][nd.capture[1] + 1] }
      elseif kind == K.VARIABLE then
        vals[i] = { variable.read(vars[nd.var + 1]) }
      elseif kind == K.OP then
        local a = dispatch.attrs()
        ffi.copy(a, nd.attrs, ATTRS_SIZE)
        vals[i] = { dispatch.run(nd.op, a, ins, nd.n_out) }
      elseif kind == K.ASSIGN then
        local v = vars[nd.var + 1]
        v[ASSIGN_METHOD[nd.assign_mode]](v, ins[1])
        vals[i] = {}
      elseif kind == K.PRINT then
        print_node(ffi.string(nd.text), ins)
        vals[i] = {}
      elseif kind == K.COND then
        local a, b = nd.sub[0], nd.sub[1]
        local res = { control.cond(ins[1],
          function() return run_graph(a, vars, vals, {}) end,
          function() return run_graph(b, vars, vals, {}) end) }
        vals[i] = res
      elseif kind == K.WHILE then
        local cdef, bdef = nd.sub[0], nd.sub[1]
        local max = tonumber(nd.max_iters)
        local res = { control.while_loop(
          function(...) return run_graph(cdef, vars, vals, { ... }) end,
          function(...) return run_graph(bdef, vars, vals, { ... }) end,
          ins, { maximum_iterations = max >= 0 and max or nil, shape_invariants = invariants(bdef) }) }
        -- A stacked loop's extra outputs (its count and per-iteration stacks,
        -- for a gradient saved in the graph) have no Lua form: reading one is refused below.
        vals[i] = setmetatable(res, { __index = function(_, k)
          if type(k) == "number" and k > n_in then
            binding.error("saved model: this graph reads a while_loop's per-iteration stacks (a saved gradient of " ..
              "a loop), which only the C runtime (c_function) runs")
          end
        end })
      else
        binding.error("saved model: node of unknown kind " .. tostring(kind))
      end
    end)
    if not ok then
      local msg = tostring(err)
      if origin and not msg:find("recorded at", 1, true) then msg = msg .. " (saved node " .. i .. ", recorded at " .. origin .. ")" end
      error(msg, 0)
    end
  end
  local outs = {}
  for k = 0, C.tide_graph_def_num_outputs(def) - 1 do
    C.tide_graph_def_output(def, k, pair)
    outs[k + 1] = vals[pair[0]][pair[1] + 1]
  end
  return unpack(outs, 1, C.tide_graph_def_num_outputs(def))
end

-- Run graph definition def with the model's variables (a list) on the arguments.
function M.run(def, vars, ...)
  return run_graph(def, vars, nil, { ... })
end

return M
