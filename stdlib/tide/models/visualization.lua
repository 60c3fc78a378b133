-- stdlib/tide/models/visualization.lua — keras.utils.model_to_dot and plot_model: a model's layers and calls as
-- Graphviz dot text (pydot's to_string, Keras 3's HTML labels); plot_model renders it with Graphviz's `dot`.
local binding = require "tide.binding"
local args = require "tide.args"
local tensor_shape = require "tide.tensor_shape"
local activations = require "tide.activations"
local layer_mod = require "tide.layers.layer"
local keras_tensor = require "tide.layers.keras_tensor"
local core = require "tide.layers.core"

local fmt = string.format
local None = tensor_shape.None
local M = {}

-- The program plot_model renders with (a field, so a spec can point it at a stand-in).
M.dot_program = "dot"

local function fail(op, ...) binding.error(op .. ": " .. fmt(...)) end

-- Python's repr of a shape tuple: (None, 3), (None,), ().
local function shape_text(s)
  local parts = {}
  for i, d in ipairs(s) do parts[i] = (d == None or d == nil) and "None" or tostring(d) end
  if #parts == 1 then return "(" .. parts[1] .. ",)" end
  return "(" .. table.concat(parts, ", ") .. ")"
end

-- Keras's format_shape over a list of KerasTensors (one: its shape; several: Python's list repr).
local function shapes_text(kts)
  if kts == nil or #kts == 0 then return "?" end
  local parts = {}
  for i, kt in ipairs(kts) do parts[i] = shape_text(kt.shape:as_list()) end
  if #kts == 1 then return parts[1] end
  return "[" .. table.concat(parts, ", ") .. "]"
end

local function dtypes_text(kts)
  if kts == nil or #kts == 0 then return "?" end
  if #kts == 1 then return tostring(kts[1].dtype) end
  local parts = {}
  for i, kt in ipairs(kts) do parts[i] = "'" .. tostring(kt.dtype) .. "'" end
  return "[" .. table.concat(parts, ", ") .. "]"
end

local function class_of(l) return getmetatable(l).__name end

-- Keras 3's make_layer_label: io = {inputs = KerasTensors, outputs = KerasTensors} of the layer's first call.
local function label(l, io, o)
  local cls = class_of(l)
  local colspan_max = (o.show_dtype and 1 or 0) + (o.show_trainable and 1 or 0) + (o.show_shapes and 2 or 0)
  local colspan = math.max(1, colspan_max)
  local t = { '<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">' }
  local title = o.show_layer_names and fmt("<b>%s</b> (%s)", l.name, cls) or fmt("<b>%s</b>", cls)
  t[#t + 1] = fmt('<tr><td colspan="%d" bgcolor="black"><font point-size="16" color="white">%s</font></td></tr>',
    colspan, title)
  local act = rawget(l, "activation")
  if o.show_layer_activations and act ~= nil then
    local name = activations.serialize(act)
    t[#t + 1] = fmt('<tr><td bgcolor="white" colspan="%d"><font point-size="14">Activation: <b>%s</b></font></td></tr>',
      colspan, type(name) == "string" and name or tostring(name))
  end
  local cols = {}
  if o.show_shapes then
    if cls ~= "InputLayer" then
      cols[#cols + 1] = fmt('<td bgcolor="white"><font point-size="14">Input shape: <b>%s</b></font></td>',
        shapes_text(io and io.inputs))
    end
    cols[#cols + 1] = fmt('<td bgcolor="white"><font point-size="14">Output shape: <b>%s</b></font></td>',
      shapes_text(io and io.outputs))
  end
  if o.show_dtype then
    cols[#cols + 1] = fmt('<td bgcolor="white"><font point-size="14">Output dtype: <b>%s</b></font></td>',
      dtypes_text(io and io.outputs))
  end
  if o.show_trainable and #l.weights > 0 then
    if l.trainable then
      cols[#cols + 1] = '<td bgcolor="forestgreen"><font point-size="14" color="white"><b>Trainable</b></font></td>'
    else
      cols[#cols + 1] = '<td bgcolor="firebrick"><font point-size="14" color="white"><b>Non-trainable</b></font></td>'
    end
  end
  if #cols > 0 then t[#t + 1] = "<tr>" .. table.concat(cols) .. "</tr>" end
  t[#t + 1] = "</table>>"
  return table.concat(t)
end

local Dot = {}
Dot.__index = Dot
Dot.__name = "Dot"

local function quote(id) return '"' .. id:gsub('\\', '\\\\'):gsub('"', '\\"') .. '"' end

-- dot:to_string(): the graph as pydot writes it (attributes, node defaults, nodes, edges, in insertion order).
function Dot:to_string()
  local out = { "digraph G {" }
  for _, kv in ipairs(self.attributes) do out[#out + 1] = kv[1] .. "=" .. kv[2] .. ";" end
  out[#out + 1] = "node [shape=record];"
  for _, n in ipairs(self.nodes) do
    out[#out + 1] = fmt("%s [label=%s, fontname=Helvetica, border=0, margin=0];", quote(n.id), n.label)
  end
  for _, e in ipairs(self.edges) do out[#out + 1] = fmt("%s -> %s [penwidth=2];", quote(e[1]), quote(e[2])) end
  out[#out + 1] = "}"
  return table.concat(out, "\n") .. "\n"
end
Dot.__tostring = Dot.to_string

local function write_file(op, path, text)
  local f, err = io.open(path, "wb")
  if not f then fail(op, "cannot write '%s': %s", path, tostring(err)) end
  f:write(text)
  f:close()
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function have_program(prog)
  local ok = os.execute("command -v " .. shell_quote(prog) .. " >/dev/null 2>&1")
  return ok == 0 or ok == true
end

-- dot:write(path, format="raw"): "raw" or "dot" writes the text; any other format (png, svg, pdf ...) writes
-- path's .dot text beside it and renders it with Graphviz's dot program, an error naming it when it is missing.
function Dot:write(path, format, op)
  op = op or "Dot.write"
  if type(path) ~= "string" or path == "" then fail(op, "path must be a file name, got %s", tostring(path)) end
  format = format or "raw"
  if format == "raw" or format == "dot" or format == "gv" then return write_file(op, path, self:to_string()) end
  if not format:match("^[%w_:]+$") then fail(op, "format must be a Graphviz output format (png, svg, pdf ...), got '%s'", format) end
  local dot_path = path:gsub("%.[^./]*$", "") .. ".dot"
  write_file(op, dot_path, self:to_string())
  if not have_program(M.dot_program) then
    fail(op, "wrote the graph to '%s', but rendering '%s' needs Graphviz's `%s` program, which is not installed " ..
      "(apt install graphviz), or write a .dot file (to_file=\"model.dot\")", dot_path, path, M.dot_program)
  end
  local cmd = fmt("%s -T%s %s -o %s 2>&1", shell_quote(M.dot_program), format, shell_quote(dot_path), shell_quote(path))
  local p = io.popen(cmd)
  local msg = p:read("*a")
  local ok = p:close()
  if not ok then fail(op, "`%s` failed on '%s': %s", M.dot_program, dot_path, msg) end
end

local function new_dot(o)
  local d = setmetatable({ nodes = {}, edges = {}, edge_seen = {}, attributes = {} }, Dot)
  d.attributes = { { "rankdir", o.rankdir }, { "concentrate", "true" }, { "dpi", tostring(o.dpi) },
    { "splines", o.splines } }
  return d
end

local function add_edge(d, a, b)
  local key = a .. "\0" .. b
  if d.edge_seen[key] then return end
  d.edge_seen[key] = true
  d.edges[#d.edges + 1] = { a, b }
end

-- The KerasTensors a Sequential's layers take and give, by one symbolic pass from its Input.
local function sequential_io(model)
  local bs = rawget(model, "_input_batch_shape")
  if type(bs) ~= "table" then return {} end
  local shape = {}
  for i = 2, #bs do shape[i - 1] = bs[i] end
  local x = core.Input { shape = shape, dtype = rawget(model, "_input_dtype") }
  local io = {}
  for _, l in ipairs(model.layers) do
    local ok, y = pcall(l, x)
    if not ok then break end
    io[l] = { inputs = keras_tensor.leaves(x), outputs = keras_tensor.leaves(y) }
    x = y
  end
  return io
end

local OPTS = { keywords = { "show_shapes", "show_dtype", "show_layer_names", "rankdir", "expand_nested", "dpi",
  "subgraph", "show_layer_activations", "show_trainable", "splines", "to_file" } }

local function options(op, model, o, plot)
  if not layer_mod.is_layer(model) then fail(op, "expects a model, got %s", type(model)) end
  if not rawget(model, "built") then
    fail(op, "this model has not yet been built. Build the model first by calling build() or by calling the model " ..
      "on a batch of data")
  end
  local c = {
    show_shapes = o.show_shapes or false, show_dtype = o.show_dtype or false,
    show_layer_names = o.show_layer_names, rankdir = o.rankdir or "TB", dpi = o.dpi or 200,
    show_layer_activations = o.show_layer_activations or false, show_trainable = o.show_trainable or false,
    splines = o.splines or "ortho",
  }
  if c.show_layer_names == nil then c.show_layer_names = not plot end -- Keras: true in model_to_dot, false in plot_model
  for _, k in ipairs { "show_shapes", "show_dtype", "show_layer_names", "show_layer_activations", "show_trainable" } do
    if type(c[k]) ~= "boolean" then fail(op, "%s must be a boolean, got %s", k, type(c[k])) end
  end
  if c.rankdir ~= "TB" and c.rankdir ~= "LR" and c.rankdir ~= "BT" and c.rankdir ~= "RL" then
    fail(op, "rankdir must be \"TB\", \"LR\", \"BT\" or \"RL\", got %s", tostring(c.rankdir))
  end
  if type(c.dpi) ~= "number" or c.dpi <= 0 then fail(op, "dpi must be a positive number, got %s", tostring(c.dpi)) end
  if type(c.splines) ~= "string" then fail(op, "splines must be a string, got %s", type(c.splines)) end
  if o.expand_nested then
    fail(op, "expand_nested is not supported yet: nested models are drawn as one node each")
  end
  if o.subgraph then fail(op, "subgraph is not supported yet (it serves expand_nested)") end
  return c
end

-- model_to_dot(model, {show_shapes=false, show_dtype=false, show_layer_names=true, rankdir="TB", dpi=200,
-- show_layer_activations=false, show_trainable=false, splines="ortho"}): a Dot (to_string(), write(path, fmt)).
-- Nodes are named by the layers' names (Keras uses Python's id()).
function M.model_to_dot(model, opts)
  local op = "model_to_dot"
  local o = args.parse(op, OPTS, opts or {})
  if o.to_file ~= nil then fail(op, "unknown option 'to_file' (plot_model takes it)") end
  local c = options(op, model, o, false)
  local d = new_dot(c)
  local g = rawget(model, "_graph")
  local is_seq = rawget(model, "_layers") ~= nil and g == nil and class_of(model) == "Sequential"
  if is_seq then
    local io = (c.show_shapes or c.show_dtype) and sequential_io(model) or {}
    local ls = model.layers
    for _, l in ipairs(ls) do d.nodes[#d.nodes + 1] = { id = l.name, label = label(l, io[l], c) } end
    for i = 1, #ls - 1 do add_edge(d, ls[i].name, ls[i + 1].name) end
    return d
  end
  if g == nil then -- a subclassed model: one node, as Keras
    d.nodes[#d.nodes + 1] = { id = model.name, label = label(model, nil, c) }
    return d
  end
  local first = {}
  for _, node in ipairs(g.nodes) do
    local l = node.layer
    if not first[l] then
      local outs = node.outputs and keras_tensor.leaves(node.outputs) or { l.output }
      first[l] = { inputs = node.inputs and keras_tensor.leaves(node.inputs) or nil, outputs = outs }
      d.nodes[#d.nodes + 1] = { id = l.name, label = label(l, first[l], c) }
    end
  end
  for _, node in ipairs(g.nodes) do
    if node.inputs then
      for _, kt in ipairs(keras_tensor.leaves { node.inputs, node.opts }) do
        if kt.node and kt.node.layer then add_edge(d, kt.node.layer.name, node.layer.name) end
      end
    end
  end
  return d
end

-- plot_model(model, {to_file="model.png", show_shapes=false, show_dtype=false, show_layer_names=false,
-- rankdir="TB", dpi=200, show_layer_activations=false, show_trainable=false, splines="ortho"}): the graph
-- written as <to_file without its suffix>.dot always, then rendered to to_file (its suffix is the format, png
-- when none) by Graphviz's dot program; without that program an error says so after the .dot file is written.
function M.plot_model(model, opts)
  local op = "plot_model"
  local o = args.parse(op, OPTS, opts or {})
  local to_file = o.to_file or "model.png"
  if type(to_file) ~= "string" or to_file == "" then fail(op, "to_file must be a file name, got %s", tostring(to_file)) end
  local c = options(op, model, o, true)
  o.to_file = nil
  local d = M.model_to_dot(model, { show_shapes = c.show_shapes, show_dtype = c.show_dtype,
    show_layer_names = c.show_layer_names, rankdir = c.rankdir, dpi = c.dpi,
    show_layer_activations = c.show_layer_activations, show_trainable = c.show_trainable, splines = c.splines })
  local ext = to_file:match("%.([^./]+)$")
  if ext == nil then ext = "png" end
  if ext == "dot" or ext == "gv" then return d:write(to_file, "raw", op) end
  d:write(to_file, ext:lower(), op)
end

return M
