-- stdlib/tide/data/stages/batch.lua — ds:batch and ds:padded_batch: n
-- elements stacked on a new first dim (C: tide_dataset_batch, _sparse_batch, _padded_batch).
local binding = require "tide.binding"
local convert = require "tide.convert"
local structure = require "tide.data.structure"
local sparse_elements = require "tide.data.sparse_elements"
local sparse_tensor = require "tide.sparse_tensor"
local shape_ops = require "tide.ops.shape"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"

local ffi, C = binding.ffi, binding.C
local istensor = binding.istensor
local TensorSpec, None = spec.TensorSpec, spec.None

-- A batch's cardinality from its input's.
local function batch_card(c, n, drop)
  return c < 0 and c or (drop and math.floor(c / n) or math.ceil(c / n))
end

-- A static shape with a new first dim.
local function prepend(first)
  return function(shape)
    if shape == nil then return nil end
    local out = { first }
    for d = 1, #shape do out[d + 1] = shape[d] end
    return out
  end
end

-- ds:batch(n, {drop_remainder=false}).
local function batch(self, n, opts)
  stage.no_datasets("batch", self)
  stage.no_ragged("batch", self)
  n = stage.count_arg("batch", "batch_size", n, 1)
  opts = stage.options("batch", { "drop_remainder" }, opts)
  local drop = opts.drop_remainder == true
  local ds = stage.derive(self, "batch", { n = n, drop = drop })
  local specs = {}
  for i, s in ipairs(self.specs) do
    local dims = { drop and n or None }
    for _, d in ipairs(s.shape or {}) do dims[#dims + 1] = d end
    specs[i] = TensorSpec(s.shape and dims or nil, s.dtype)
  end
  ds.specs = specs
  if structure.has_sparse(self.template) then -- TF's rule: a new first dim, each other dim the batch's largest
    ds.template = structure.map_sparse_shapes(self.template, prepend(drop and n or None))
    structure.fix_sparse_specs(ds.template, specs)
  end
  ds.card = batch_card(self:cardinality(), n, drop)
  return ds
end

-- ds:padded_batch(n, {padded_shapes=, padding_values=, drop_remainder=}):
-- batch elements of different shapes, each padded (at the end of each dim)
-- to padded_shapes (None or -1: the batch's longest) with padding_values (0).
local function padded_batch(self, n, opts)
  stage.no_datasets("padded_batch", self)
  stage.no_ragged("padded_batch", self)
  n = stage.count_arg("padded_batch", "batch_size", n, 1)
  opts = stage.options("padded_batch", { "padded_shapes", "padding_values", "drop_remainder" }, opts)
  local drop = opts.drop_remainder == true
  local sparse_node = structure.sparse_nodes(self.template)[1]
  if sparse_node then -- as TF: padded_batch takes dense tensors only
    binding.error(string.format("padded_batch: the element holds a SparseTensor (%s, components %d-%d); " ..
      "padded_batch takes dense tensors only, as TF's. Use batch() for SparseTensors, or make it dense first " ..
      "(tide.sparse.to_dense in a map)", tostring(sparse_tensor.SparseTensorSpec(sparse_node.shape, sparse_node.dtype)),
      sparse_node.items[1].index - 1, sparse_node.items[3].index - 1))
  end
  local function per_component(v, name)
    if v == nil then return {} end
    if istensor(v) or type(v) == "number" or type(v) == "boolean" or type(v) == "string" then return { v } end
    if type(v) ~= "table" then binding.error("padded_batch: " .. name .. " must match the element's structure") end
    -- the element's structure: flatten by the template
    local out = {}
    local function walk(t, x)
      if t.kind == "tensor" then out[t.index] = x; return end
      for i, item in ipairs(t.items) do
        local sub = (t.kind == "list") and x[i] or x[t.keys[i]]
        walk(item, sub)
      end
    end
    if self.template.kind == "tensor" then
      -- a single component: a shape list is the shape itself
      out[1] = v
    else
      walk(self.template, v)
    end
    return out
  end
  local shapes = per_component(opts.padded_shapes, "padded_shapes")
  local values = per_component(opts.padding_values, "padding_values")
  local specs = {}
  for i, s in ipairs(self.specs) do
    local want = shapes[i]
    local dims = { drop and n or None }
    if want ~= nil then
      if type(want) ~= "table" or (s.shape and #want ~= #s.shape) then
        binding.error(string.format("padded_batch: padded_shapes for component %d must be a list of %d sizes " ..
          "(None or -1 for the batch's longest)", i, s.shape and #s.shape or 0))
      end
      for d = 1, #want do
        local w = want[d]
        if w == -1 then w = None end
        if w ~= None and s.shape and s.shape[d] ~= None and w < s.shape[d] then
          binding.error(string.format("padded_batch: padded_shapes[%d] is %s but component %d has %d there", d,
            tostring(w), i, s.shape[d]))
        end
        dims[d + 1] = w
      end
    else
      for d, x in ipairs(s.shape or {}) do dims[d + 1] = x end
    end
    specs[i] = TensorSpec(dims, s.dtype)
  end
  -- as TF: a string component pads with "" (or a string given), other dtypes with 0 (or a number or bool)
  for i, s in ipairs(self.specs) do
    local v = values[i]
    if istensor(v) and v.dt == C.TIDE_STRING then
      if v.ndim ~= 0 then
        binding.error(string.format("padded_batch: padding_values for component %d must be a scalar, got shape %s",
          i - 1, tostring(v.shape)))
      end
      v = v:item()
      values[i] = v
    end
    if s.dtype == "string" and v ~= nil and type(v) ~= "string" then
      binding.error(string.format("padded_batch: padding_values for component %d (string) must be a string, got %s",
        i - 1, istensor(v) and ("a " .. structure.dtype_name(v) .. " tensor") or type(v)))
    elseif s.dtype ~= "string" and type(v) == "string" then
      binding.error(string.format("padded_batch: padding_values for component %d (%s) must be a number or bool, " ..
        "got the string %q", i - 1, s.dtype, v))
    end
  end
  local ds = stage.derive(self, "padded_batch", { n = n, drop = drop, shapes = shapes, values = values })
  ds.specs = specs
  ds.card = batch_card(self:cardinality(), n, drop)
  return ds
end

---------------------------------------------------------------------------
-- The Lua engine's batches
---------------------------------------------------------------------------

-- True when two tensors have the same dims.
local function same_dims(a, b)
  if a.ndim ~= b.ndim then return false end
  for d = 0, a.ndim - 1 do if a.dims[d] ~= b.dims[d] then return false end end
  return true
end

-- Stack components of elements (a list of flat lists) along a new dim.
local function stack(elems, what)
  local out = {}
  for k = 1, #elems[1] do
    local parts = {}
    local first = elems[1][k]
    for i, e in ipairs(elems) do
      local x = e[k]
      if x.dt ~= first.dt or not same_dims(x, first) then
        binding.error(string.format("%s: cannot batch tensors with different shapes in component %d: the first " ..
          "element is %s %s and element %d is %s %s; use padded_batch for elements of different shapes", what,
          k - 1, structure.dtype_name(first), tostring(first.shape), i - 1, structure.dtype_name(x),
          tostring(x.shape)))
      end
      parts[i] = x
    end
    out[k] = shape_ops.stack(parts, 0)
  end
  return out
end

-- The next batch's elements (up to ds.n) from nextf, or nil when none are
-- left (or, with drop_remainder, too few); st.done notes the input's end.
local function next_elements(ds, nextf, st)
  if st.done then return nil end
  local elems = {}
  while #elems < ds.n do
    local flat = nextf()
    if flat == nil then st.done = true; break end
    elems[#elems + 1] = flat
  end
  if #elems == 0 or (ds.drop and #elems < ds.n) then return nil end
  return elems
end

local batch_stage = { copyable = true }

function batch_stage.c(ds, input)
  local sparse = structure.sparse_nodes(ds.input.template)
  if #sparse == 0 then return C.tide_dataset_batch(input, ds.n, ds.drop and 1 or 0) end
  -- where each SparseTensor's indices are (kernels/data/sparse_batch.c)
  local roles = ffi.new("unsigned char[?]", #ds.input.specs)
  for _, node in ipairs(sparse) do roles[node.items[1].index - 1] = 1 end
  return C.tide_dataset_sparse_batch(input, ds.n, ds.drop and 1 or 0, roles)
end

function batch_stage.lua(ds, open)
  local nextf, close = open(ds.input)
  local sparse = structure.has_sparse(ds.input.template)
  local st = {}
  return function()
    local elems = next_elements(ds, nextf, st)
    if elems and sparse then return sparse_elements.batch(elems, ds.input.template, "batch", stack) end
    return elems and stack(elems, "batch")
  end, close
end

-- String tensor x padded at the end of each dim to the Lua-list shape
-- target with the string pv (the pad kernel pads numbers only).
local len_out = ffi.new("int64_t[1]")
local function pad_strings(x, target, pv)
  x = shape_ops.contiguous(x)
  local out = convert.empty(C.TIDE_STRING, target, "padded_batch")
  local rank, total = #target, 1
  for d = 1, rank do total = total * target[d] end
  if pv ~= "" then
    for i = 0, total - 1 do if C.tide_string_set(out, i, pv, #pv) ~= 0 then binding.raise() end end
  end
  local strides = {}
  local st = 1
  for d = rank, 1, -1 do strides[d] = st; st = st * target[d] end
  local idx = {}
  for d = 1, rank do idx[d] = 0 end
  local shape = x.shape
  for i = 0, tonumber(x.nelem) - 1 do
    local off = 0
    for d = 1, rank do off = off + idx[d] * strides[d] end
    local p = C.tide_string_at(x.data, i, len_out)
    if len_out[0] == 0 then p = "" end -- "" is stored as NULL
    if C.tide_string_set(out, off, p, len_out[0]) ~= 0 then binding.raise() end
    for d = rank, 1, -1 do -- the next index of x, row-major
      idx[d] = idx[d] + 1
      if idx[d] < shape[d] then break end
      idx[d] = 0
    end
  end
  binding.keep_alive(x) -- x.data was read above
  return out
end

local padded = { copyable = true }

function padded.in_c(ds) -- numbers and bools (a padding string stays in Lua)
  for _, sp in ipairs(ds.specs) do if sp.dtype == "string" then return false end end
  return true
end

function padded.c(ds, input)
  local nc, MAX = #ds.specs, C.TIDE_MAX_DIMS
  local shapes, values = ffi.new("int64_t[?]", nc * MAX, -1), ffi.new("uint64_t[?]", nc)
  for c = 1, nc do
    for d, w in ipairs(ds.shapes[c] or {}) do
      if type(w) == "number" and w >= 0 then shapes[(c - 1) * MAX + d - 1] = w end
    end
    local v = ds.values[c]
    if v ~= nil then
      local t = convert.tensor(v, ds.input.specs[c].dtype, "padded_batch")
      if tonumber(t.nelem) ~= 1 then
        binding.error(string.format("padded_batch: padding_values for component %d must be a scalar, got %d values",
          c, tonumber(t.nelem)))
      end
      t = t:contiguous()
      ffi.copy(values + (c - 1), t.data, tonumber(C.tide_dtype_size(t.dt)))
    end
  end
  return C.tide_dataset_padded_batch(input, ds.n, ds.drop and 1 or 0, shapes, values)
end

function padded.lua(ds, open)
  local nextf, close = open(ds.input)
  local st = {}
  return function()
    local elems = next_elements(ds, nextf, st)
    if not elems then return nil end
    local out = {}
    for k = 1, #elems[1] do
      local first = elems[1][k]
      local rank = first.ndim
      local target = {}
      for d = 1, rank do
        local want = ds.shapes[k] and ds.shapes[k][d]
        if want == -1 then want = None end
        if want ~= nil and want ~= None then target[d] = want
        else
          local m = 0
          for _, e in ipairs(elems) do m = math.max(m, e[k].shape[d] or 0) end
          target[d] = m
        end
      end
      local is_string = first.dt == C.TIDE_STRING
      local pv = ds.values[k] or (is_string and "" or 0)
      local parts = {}
      for i, e in ipairs(elems) do
        local x = e[k]
        if x.ndim ~= rank or x.dt ~= first.dt then
          binding.error(string.format("padded_batch: element %d component %d is %s %s but the first is %s %s", i - 1,
            k - 1, structure.dtype_name(x), tostring(x.shape), structure.dtype_name(first), tostring(first.shape)))
        end
        local pads, need = {}, false
        for d = 1, rank do
          local extra = target[d] - x.shape[d]
          if extra < 0 then
            binding.error(string.format("padded_batch: element %d component %d has %d in dim %d, more than the " ..
              "padded shape's %d", i - 1, k - 1, x.shape[d], d - 1, target[d]))
          end
          pads[d] = { 0, extra }
          need = need or extra > 0
        end
        if need then
          x = is_string and pad_strings(x, target, pv) or shape_ops.pad(x, pads, "CONSTANT", pv)
        end
        parts[i] = x
      end
      out[k] = shape_ops.stack(parts, 0)
    end
    return out
  end, close
end

return {
  methods = { batch = batch, padded_batch = padded_batch },
  stages = { batch = batch_stage, padded_batch = padded },
}
