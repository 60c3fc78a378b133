-- stdlib/tide/models/summary.lua — model:summary(): the table Keras 3 prints
-- (rich's box drawing, column widths from Keras's positions and rich's
-- reduction, words wrapped, totals with memory sizes), without colours.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local tensor_shape = require "tide.tensor_shape"
local keras_tensor = require "tide.layers.keras_tensor"

local None = tensor_shape.None

local M = {}

-- Python's round (half to even), as rich's ratio_reduce uses it.
local function round_half_even(x)
  local f = math.floor(x)
  local d = x - f
  if d > 0.5 then return f + 1 end
  if d < 0.5 then return f end
  return (f % 2 == 0) and f or f + 1
end

-- rich's ratio_reduce(total, ratios, maximums, values).
local function ratio_reduce(total, ratios, maximums, values)
  local total_ratio = 0
  for _, r in ipairs(ratios) do total_ratio = total_ratio + r end
  local remaining, out = total, {}
  for i, r in ipairs(ratios) do
    if r > 0 and total_ratio > 0 then
      local distributed = math.min(maximums[i], round_half_even(r * remaining / total_ratio))
      out[i] = values[i] - distributed
      remaining = remaining - distributed
      total_ratio = total_ratio - r
    else
      out[i] = values[i]
    end
  end
  return out
end

-- "1,234,567"
local function with_commas(n)
  local s = tostring(math.floor(n))
  local out = s:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (out:gsub("^,", ""))
end
M.with_commas = with_commas

-- Keras's readable_memory_size(bytes).
local function readable_memory_size(size)
  for _, unit in ipairs { "B", "KB", "MB", "GB", "TB" } do
    if size / 1024 < 1 then return string.format("%.2f %s", size, unit) end
    size = size / 1024
  end
  return string.format("%.2f PB", size)
end
M.readable_memory_size = readable_memory_size

local function count_and_bytes(weights)
  local n, bytes, seen = 0, 0, {}
  for _, v in ipairs(weights) do
    if not seen[v] then
      seen[v] = true
      local k = v.shape:num_elements()
      n = n + k
      bytes = bytes + k * dtype.size[dtype.code(v.dtype)]
    end
  end
  return n, bytes
end

local function shape_text(dims)
  local parts = {}
  for i, d in ipairs(dims) do parts[i] = d == None and "None" or tostring(d) end
  return "(" .. table.concat(parts, ", ") .. ")"
end

local function output_text(outputs)
  if outputs == nil then return "?" end
  local list = keras_tensor.leaves(outputs)
  if #list == 1 then return shape_text(list[1].shape:as_list()) end
  local parts = {}
  for i, kt in ipairs(list) do parts[i] = shape_text(kt.shape:as_list()) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

-- UTF-8 aware length and truncation (cells hold ASCII except the ellipsis).
local function ulen(s)
  local _, n = s:gsub("[^\128-\191]", "")
  return n
end

-- The lines of `text` wrapped at spaces into `width` columns; a word longer
-- than the width is cut with an ellipsis (rich's overflow="ellipsis").
local function wrap(text, width)
  local lines, cur = {}, nil
  for word in text:gmatch("%S+") do
    if ulen(word) > width then word = word:sub(1, width - 1) .. "…" end
    if cur == nil then cur = word
    elseif ulen(cur) + 1 + ulen(word) <= width then cur = cur .. " " .. word
    else lines[#lines + 1] = cur; cur = word end
  end
  lines[#lines + 1] = cur or ""
  return lines
end

local function pad(s, width, right)
  local gap = width - ulen(s)
  if gap <= 0 then return s end
  return right and (string.rep(" ", gap) .. s) or (s .. string.rep(" ", gap))
end

-- The terminal's width (COLUMNS, else 80 as Python's shutil fallback).
local function terminal_columns()
  local c = tonumber(os.getenv("COLUMNS") or "")
  return c or 80
end

-- Keras's sequential_like test: one node per depth, each with one input,
-- and each layer used once.
local function sequential_like(model)
  local g = rawget(model, "_graph")
  if not g then return true end
  local used = {}
  for _, node in ipairs(g.nodes) do
    if node.inputs ~= nil and #keras_tensor.leaves(node.inputs) > 1 then return false end
    if used[node.layer] then return false end
    used[node.layer] = true
  end
  local by_depth = {}
  local depth = {}
  for i = #g.nodes, 1, -1 do -- nodes with a common depth are branches
    local node = g.nodes[i]
    local d = depth[node] or 0
    if by_depth[d] then return false end
    by_depth[d] = true
    if node.inputs ~= nil then
      for _, p in ipairs(keras_tensor.leaves(node.inputs)) do depth[p.node] = math.max(depth[p.node] or 0, d + 1) end
    end
  end
  return true
end

-- The rows (as field lists) for each layer of the model.
local function rows_for(model, seq_like)
  local g = rawget(model, "_graph")
  local rows = {}
  local nodes_of = {}
  if g then
    for _, node in ipairs(g.nodes) do
      local list = nodes_of[node.layer] or {}
      list[#list + 1] = node
      nodes_of[node.layer] = list
    end
  end
  for _, l in ipairs(model.layers) do
    local out
    if g then
      local nodes = nodes_of[l] or {}
      local last = nodes[#nodes]
      out = last and (last.outputs or (last.inputs == nil and l.output)) or nil
    elseif model._layer_output then
      out = model:_layer_output(l)
    end
    local params
    if not rawget(l, "built") then params = "0 (unbuilt)" else params = with_commas(l:count_params()) end
    -- Keras 3 names a functional model's class Functional
    local cls = rawget(l, "_graph") and getmetatable(l).__name == "Model" and "Functional" or getmetatable(l).__name
    local fields = { string.format("%s (%s)", l.name, cls), output_text(out), params }
    if not seq_like then
      local conns = {}
      for _, node in ipairs(nodes_of[l] or {}) do
        if node.inputs ~= nil then
          for _, kt in ipairs(keras_tensor.leaves(node.inputs)) do
            local pn = kt.node
            local src = pn.layer
            conns[#conns + 1] = string.format("%s[%d][%d]", src.name, g.node_index[pn] or 0,
              kt.index and (kt.index - 1) or 0)
          end
        end
      end
      fields[4] = #conns > 0 and table.concat(conns, ", ") or "-"
    end
    rows[#rows + 1] = fields
  end
  return rows
end

-- print_summary(model, {line_length=, print_fn=}): print_fn(text) receives
-- the whole summary (default: io.write).
function M.print_summary(model, opts)
  opts = opts or {}
  if type(opts) ~= "table" then binding.error("summary: expects an options table {line_length=, print_fn=}") end
  local seq_like = sequential_like(model)
  local positions, header, right
  local default_len
  if seq_like then
    default_len, positions = 88, { 0.45, 0.80, 1.0 }
    header, right = { "Layer (type)", "Output Shape", "Param #" }, { false, false, true }
  else
    default_len, positions = 108, { 0.3, 0.56, 0.74, 1.0 }
    header, right = { "Layer (type)", "Output Shape", "Param #", "Connected to" }, { false, false, true, false }
  end
  default_len = math.min(default_len, terminal_columns() - 4)
  local line_length = opts.line_length or default_len
  local widths, current = {}, 0
  for i, p in ipairs(positions) do
    local w = math.floor(p * line_length) - current
    if w < 4 then binding.error("summary: insufficient console width to print the summary; pass a larger line_length") end
    widths[i] = w + 2 -- rich counts the cell padding in the column's width
    current = current + w
  end
  local total = 0
  for _, w in ipairs(widths) do total = total + w end
  local avail = line_length - (#widths + 1)
  if total > avail then
    local ones = {}
    for i = 1, #widths do ones[i] = 1 end
    widths = ratio_reduce(total - avail, ones, widths, widths)
  end
  local content = {}
  for i, w in ipairs(widths) do content[i] = w - 2 end

  local out = {}
  local function rule(l, mid, r, fill)
    local parts = {}
    for i, w in ipairs(widths) do parts[i] = string.rep(fill, w) end
    out[#out + 1] = l .. table.concat(parts, mid) .. r
  end
  local function row(fields, sep)
    local wrapped, height = {}, 1
    for i, f in ipairs(fields) do
      wrapped[i] = wrap(f, content[i])
      height = math.max(height, #wrapped[i])
    end
    for k = 1, height do
      local cells = {}
      for i = 1, #fields do cells[i] = " " .. pad(wrapped[i][k] or "", content[i], right[i]) .. " " end
      out[#out + 1] = sep .. table.concat(cells, sep) .. sep
    end
  end
  out[#out + 1] = string.format('Model: "%s"', model.name)
  rule("┏", "┳", "┓", "━")
  local hdr = {}
  for i, h in ipairs(header) do hdr[i] = h end
  row(hdr, "┃")
  rule("┡", "╇", "┩", "━")
  local rows = rows_for(model, seq_like)
  for i, fields in ipairs(rows) do
    row(fields, "│")
    if i < #rows then rule("├", "┼", "┤", "─") end
  end
  rule("└", "┴", "┘", "─")
  local tn, tb = count_and_bytes(model.trainable_weights)
  local nn, nb = count_and_bytes(model.non_trainable_weights)
  local opt = rawget(model, "optimizer")
  local on, ob = 0, 0
  if opt and rawget(opt, "built") then on, ob = count_and_bytes(opt.variables) end
  out[#out + 1] = string.format(" Total params: %s (%s)", with_commas(tn + nn + on), readable_memory_size(tb + nb + ob))
  out[#out + 1] = string.format(" Trainable params: %s (%s)", with_commas(tn), readable_memory_size(tb))
  out[#out + 1] = string.format(" Non-trainable params: %s (%s)", with_commas(nn), readable_memory_size(nb))
  if opt and rawget(opt, "built") then
    out[#out + 1] = string.format(" Optimizer params: %s (%s)", with_commas(on), readable_memory_size(ob))
  end
  local text = table.concat(out, "\n") .. "\n"
  if opts.print_fn then opts.print_fn(text) else io.write(text) end
  return text
end

return M
