-- stdlib/tide/data/dataset.lua — tide.data.Dataset: sources and
-- transformations as TF's tf.data (descriptions only), cardinality,
-- element_spec, and iteration (run by data/c_engine.lua or data/lua_engine.lua).
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local structure = require "tide.data.structure"
local map_fn = require "tide.data.map_fn"
local sparse_elements = require "tide.data.sparse_elements"
local sparse_tensor = require "tide.sparse_tensor"
local interleave_fn = require "tide.data.interleave_fn"
local spec = require "tide.tracing.spec"

local ffi, C = binding.ffi, binding.C
local istensor = binding.istensor
local TensorSpec, None = spec.TensorSpec, spec.None

local M = {}
local INFINITE, UNKNOWN = -1, -2
M.INFINITE_CARDINALITY, M.UNKNOWN_CARDINALITY = INFINITE, UNKNOWN
M.AUTOTUNE = -1

local Dataset = class("Dataset")
M.Dataset = Dataset

-- The engines register themselves (they require this module's nodes).
local engines = {}
function M.set_engines(c_engine, lua_engine) engines.c, engines.lua = c_engine, lua_engine end

---------------------------------------------------------------------------
-- Helpers
---------------------------------------------------------------------------

-- Check an options table against the names allowed.
local function options(what, allowed, t)
  if t == nil then return {} end
  if type(t) ~= "table" or istensor(t) then
    binding.error(string.format("%s: options must be a table {%s=...}, got %s", what, allowed[1], type(t)))
  end
  local set = {}
  for _, k in ipairs(allowed) do set[k] = true end
  for k in pairs(t) do
    if not set[k] then
      binding.error(string.format("%s: unknown option '%s' (expected: %s)", what, tostring(k),
        table.concat(allowed, ", ")))
    end
  end
  return t
end

-- A whole number (optionally >= min), or an error naming the argument.
local function count_arg(what, name, v, min)
  if istensor(v) then v = v:item() end
  if type(v) ~= "number" or v ~= math.floor(v) or (min and v < min) then
    binding.error(string.format("%s: %s must be a whole number%s, got %s", what, name,
      min and (" >= " .. min) or "", tostring(v)))
  end
  return v
end

-- A new dataset node over `input` with the same structure, plus fields.
local function derive(input, kind, fields)
  local ds = setmetatable(fields or {}, Dataset)
  ds.kind = kind
  ds.input = input
  ds.template = input.template
  ds.specs = input.specs
  return ds
end

local function is_dataset(x) return class.is_instance(x, Dataset) end

-- Stages that stack, pad or store tensors refuse window's datasets, naming the way.
local function no_datasets(what, ds)
  if structure.holds_datasets(ds.specs) then
    binding.error(string.format("%s: the elements are datasets (from window); turn each into tensors first, e.g. " ..
      "flat_map(function(w) return w:batch(n) end)", what))
  end
end
M.is_dataset = is_dataset

local function check_dataset(what, x)
  if not is_dataset(x) then
    binding.error(string.format("%s: expected a tide.data.Dataset, got %s", what, istensor(x) and "a tensor" or type(x)))
  end
  return x
end

-- The Lua seed of a shuffle: the given one, or one drawn from tide's global
-- stream (tide.random.set_seed makes it repeat).
local function draw_seed(seed, what)
  if seed ~= nil then return count_arg(what, "seed", seed) end
  local key, counter = ffi.new("uint64_t[1]"), ffi.new("uint64_t[1]")
  C.tide_random_reserve(1, key, counter)
  local out = ffi.new("uint32_t[4]")
  C.tide_philox4x32(key[0], counter[0], 0x5eed, out)
  return tonumber(out[0]) * 2097152 + tonumber(out[1]) % 2097152 -- 53 bits: exact as a Lua number
end

---------------------------------------------------------------------------
-- Sources
---------------------------------------------------------------------------

-- A static shape without its first dim (nil: unknown rank stays unknown).
local function drop_first(shape)
  if shape == nil then return nil end
  local out = {}
  for d = 2, #shape do out[d - 1] = shape[d] end
  return out
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

-- from_tensor_slices of an element with SparseTensors: one C source
-- (kernels/data/sparse_slices.c) that checks the value now and cuts each
-- row as a view; the rows' template and specs come from data/sparse_elements.lua.
local function sparse_slices(template, leaves)
  local row_template, specs, roles = sparse_elements.slice_specs(template, leaves, drop_first)
  local ds = setmetatable({ kind = "sparse_slices", tensors = leaves, roles = roles, template = row_template,
    specs = specs }, Dataset)
  ds.card = tonumber(C.tide_dataset_cardinality(engines.c.handle(ds))) -- made now: its errors come here
  return ds
end

-- Dataset.from_tensor_slices(x): the rows of a tensor, of each tensor of a
-- list {x, y} or map {image=, label=} (same first dimension).
function Dataset.from_tensor_slices(value)
  local template, leaves = structure.flatten(value, "from_tensor_slices")
  if structure.has_sparse(template) then return sparse_slices(template, leaves) end
  local specs = {}
  local traced = interleave_fn.any_symbolic(leaves)
  for i, t in ipairs(leaves) do
    if t.ndim < 1 then
      binding.error("from_tensor_slices: component " .. i .. " is a scalar; each component needs a first " ..
        "dimension to slice (use from_tensors for one element)")
    end
    if t.shape[1] ~= leaves[1].shape[1] and not (traced and (t.shape[1] == None or leaves[1].shape[1] == None)) then
      binding.error(string.format("from_tensor_slices: the components have different first dimensions: %s and %s",
        tostring(leaves[1].shape), tostring(t.shape)))
    end
    local dims = {}
    for d = 2, t.ndim do dims[d - 1] = t.shape[d] end
    specs[i] = TensorSpec(dims, structure.dtype_name(t))
  end
  if traced then -- inside interleave's function: a template leaf fed by the element
    return interleave_fn.leaf("from_tensor_slices", setmetatable({ kind = "param", source = "slices", args = leaves,
      template = template, specs = specs, card = UNKNOWN }, Dataset))
  end
  local ds = setmetatable({ kind = "slices", tensors = leaves, template = template, specs = specs }, Dataset)
  ds.card = leaves[1].shape[1]
  return ds
end

-- Dataset.from_tensors(x): one element, x itself.
function Dataset.from_tensors(value)
  local template, leaves = structure.flatten(value, "from_tensors")
  local rows, specs = {}, {}
  for i, t in ipairs(leaves) do
    rows[i] = t:expand_dims(0)
    specs[i] = structure.spec_of(t)
  end
  structure.fix_sparse_specs(template, specs)
  if interleave_fn.any_symbolic(leaves) then -- inside interleave's function: a leaf fed by the element
    return interleave_fn.leaf("from_tensors", setmetatable({ kind = "param", source = "slices", args = rows,
      template = template, specs = specs, card = 1 }, Dataset))
  end
  local ds = setmetatable({ kind = "slices", tensors = rows, template = template, specs = specs, card = 1 }, Dataset)
  return ds
end

-- Dataset.range(stop) / range(start, stop[, step]): int64 scalars, as TF.
function Dataset.range(a, b, c)
  local start, stop, step
  if b == nil then start, stop, step = 0, a, 1 else start, stop, step = a, b, c or 1 end
  if interleave_fn.any_symbolic { start, stop, step } then -- inside interleave's function: a leaf fed by the element
    local args = {}
    for i, v in ipairs { start, stop, step } do
      if interleave_fn.is_symbolic(v) then
        if v.ndim ~= 0 or not (v.dtype == "int32" or v.dtype == "int64") then
          binding.error(string.format("range: %s must be an integer scalar, got %s %s", ({ "start", "stop", "step" })[i],
            v.dtype, tostring(v.shape)))
        end
        args[i] = v.dtype == "int64" and v or v:cast("int64")
      else
        args[i] = convert.tensor(count_arg("range", ({ "start", "stop", "step" })[i], v), "int64", "range")
      end
    end
    return interleave_fn.leaf("range", setmetatable({ kind = "param", source = "range", args = args,
      template = { kind = "tensor", index = 1 }, specs = { TensorSpec({}, "int64") }, card = UNKNOWN }, Dataset))
  end
  start = count_arg("range", "start", start)
  stop = count_arg("range", "stop", stop)
  step = count_arg("range", "step", step)
  if step == 0 then binding.error("range: step must not be 0") end
  local card = 0
  if (step > 0 and stop > start) or (step < 0 and stop < start) then
    card = math.floor((stop - start + step + (step > 0 and -1 or 1)) / step)
  end
  return setmetatable({ kind = "range", start = start, stop = stop, step = step, card = card,
    template = { kind = "tensor", index = 1 }, specs = { TensorSpec({}, "int64") } }, Dataset)
end

-- Dataset.from_generator(gen, {output_signature=}): gen() returns a Lua
-- iterator (a function giving the next element, or nil at the end), called
-- anew for each pass. Elements must fit the signature (a TensorSpec or a
-- list/map of them); Lua numbers take its dtypes.
function Dataset.from_generator(gen, opts)
  if type(gen) ~= "function" then
    binding.error("from_generator: expected a function that returns an iterator, got " .. type(gen))
  end
  opts = options("from_generator", { "output_signature" }, opts)
  local sig = opts.output_signature
  if sig == nil then
    binding.error("from_generator: output_signature is required (a tide.TensorSpec, or a list/map of them)")
  end
  local specs = {}
  local function walk(s)
    if sparse_tensor.is_sparse_spec(s) then
      local node = structure.sparse_node(#specs + 1, s.shape, s.dtype)
      specs[#specs + 1], specs[#specs + 2], specs[#specs + 3] = structure.sparse_component_specs(s.shape, s.dtype)
      return node
    end
    if spec.is_spec(s) then
      specs[#specs + 1] = s
      return { kind = "tensor", index = #specs }
    end
    if type(s) ~= "table" then
      binding.error("from_generator: output_signature must hold tide.TensorSpecs, got " .. type(s))
    end
    if #s > 0 then
      local items = {}
      for i = 1, #s do items[i] = walk(s[i]) end
      return { kind = "list", n = #s, items = items }
    end
    local keys = {}
    for k in pairs(s) do keys[#keys + 1] = k end
    table.sort(keys)
    local items = {}
    for i, k in ipairs(keys) do items[i] = walk(s[k]) end
    return { kind = "map", keys = keys, items = items }
  end
  local template = walk(sig)
  return setmetatable({ kind = "generator", gen = gen, template = template, specs = specs, card = UNKNOWN }, Dataset)
end

-- Dataset.zip{a, b, ...} (or a map {name = ds}): elements side by side,
-- until the shortest ends.
function Dataset.zip(datasets, ...)
  if is_dataset(datasets) then datasets = { datasets, ... } end
  if type(datasets) ~= "table" then binding.error("zip: expected a list or map of datasets, got " .. type(datasets)) end
  local list, keys = {}, nil
  if #datasets > 0 then
    for i = 1, #datasets do list[i] = check_dataset("zip", datasets[i]) end
  else
    keys = {}
    for k in pairs(datasets) do keys[#keys + 1] = k end
    table.sort(keys)
    if #keys == 0 then binding.error("zip: expected at least one dataset") end
    for i, k in ipairs(keys) do list[i] = check_dataset("zip", datasets[k]) end
  end
  local templates, specs, card = {}, {}, nil
  for i, d in ipairs(list) do
    templates[i] = d.template
    for _, s in ipairs(d.specs) do specs[#specs + 1] = s end
    local c = d:cardinality()
    if card == nil then card = c
    elseif c == UNKNOWN or card == UNKNOWN then card = (c == INFINITE and card) or (card == INFINITE and c) or UNKNOWN
    elseif c ~= INFINITE then card = (card == INFINITE) and c or math.min(card, c) end
  end
  local template = structure.list_of(templates)
  if keys then template = { kind = "map", keys = keys, items = template.items } end
  return setmetatable({ kind = "zip", inputs = list, template = template, specs = specs, card = card }, Dataset)
end

---------------------------------------------------------------------------
-- Transformations
---------------------------------------------------------------------------

-- ds:map(fn, {parallel=, deterministic=true}): fn gets an element (a list's
-- items as separate arguments) and returns the new one. It is traced; if it
-- cannot be, it runs in Lua (a note says why).
function Dataset:map(fn, opts)
  if type(fn) ~= "function" and not (type(fn) == "table" and getmetatable(fn) and getmetatable(fn).__call) then
    binding.error("map: expected a function, got " .. type(fn))
  end
  opts = options("map", { "parallel", "deterministic", "num_parallel_calls" }, opts)
  local parallel = opts.parallel or opts.num_parallel_calls
  if parallel ~= nil and parallel ~= M.AUTOTUNE then parallel = count_arg("map", "parallel", parallel, 1) end
  local deterministic = opts.deterministic
  if deterministic == nil then deterministic = true end
  if type(deterministic) ~= "boolean" then binding.error("map: deterministic must be a boolean") end
  local ds = derive(self, "map", { fn = fn, parallel = parallel, deterministic = deterministic })
  ds.card = self:cardinality()
  local compiled, why = map_fn.trace(fn, "map", self.template, self.specs)
  if compiled then
    ds.compiled = compiled
    ds.template, ds.specs = compiled.out_template, compiled.out_specs
  else
    if not structure.holds_datasets(self.specs) then map_fn.note_fallback("map", fn, why) end -- windows: Lua by design
    ds.template, ds.specs = engines.lua.probe_map(ds)
    -- as its dense dims: the first element's sparse shapes say nothing of the next ones'
    ds.template = structure.map_sparse_shapes(ds.template, function(shape)
      if shape == nil then return nil end
      local dims = {}
      for d = 1, #shape do dims[d] = None end
      return dims
    end)
  end
  structure.fix_sparse_specs(ds.template, ds.specs)
  return ds
end

-- ds:filter(pred): the elements for which pred gives true (a bool scalar).
function Dataset:filter(pred)
  if type(pred) ~= "function" then binding.error("filter: expected a function, got " .. type(pred)) end
  local ds = derive(self, "filter", { fn = pred })
  local c = self:cardinality()
  ds.card = c == INFINITE and INFINITE or UNKNOWN
  local compiled, why = map_fn.trace(pred, "filter", self.template, self.specs)
  if compiled then
    local s = compiled.out_specs
    if #s ~= 1 or s[1].dtype ~= "bool" or (s[1].shape and #s[1].shape ~= 0) then
      binding.error(string.format("filter: the predicate must return one bool scalar, it returns %s",
        tostring(s[1])))
    end
    ds.compiled = compiled
  else
    if not structure.holds_datasets(self.specs) then map_fn.note_fallback("filter", pred, why) end
  end
  return ds
end

-- ds:batch(n, {drop_remainder=false}).
function Dataset:batch(n, opts)
  no_datasets("batch", self)
  n = count_arg("batch", "batch_size", n, 1)
  opts = options("batch", { "drop_remainder" }, opts)
  local drop = opts.drop_remainder == true
  local ds = derive(self, "batch", { n = n, drop = drop })
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
  local c = self:cardinality()
  ds.card = c < 0 and c or (drop and math.floor(c / n) or math.ceil(c / n))
  return ds
end

-- ds:padded_batch(n, {padded_shapes=, padding_values=, drop_remainder=}):
-- batch elements of different shapes, each padded (at the end of each dim)
-- to padded_shapes (None or -1: the batch's longest) with padding_values (0).
function Dataset:padded_batch(n, opts)
  no_datasets("padded_batch", self)
  n = count_arg("padded_batch", "batch_size", n, 1)
  opts = options("padded_batch", { "padded_shapes", "padding_values", "drop_remainder" }, opts)
  local drop = opts.drop_remainder == true
  local nc = #self.specs
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
  local ds = derive(self, "padded_batch", { n = n, drop = drop, shapes = shapes, values = values })
  ds.specs = specs
  local c = self:cardinality()
  ds.card = c < 0 and c or (drop and math.floor(c / n) or math.ceil(c / n))
  return ds
end

-- ds:unbatch(): each element's rows as elements.
function Dataset:unbatch()
  no_datasets("unbatch", self)
  local specs = {}
  for _, node in ipairs(structure.sparse_nodes(self.template)) do
    if node.shape and #node.shape == 0 then
      binding.error("unbatch: the element holds a SparseTensor of rank 0; every component needs a first dimension")
    end
    if node.shape and #node.shape == 1 then -- as TF 2.21 (its sparse rows go through SerializeManySparse)
      binding.error("unbatch: the element holds a SparseTensor of rank 1, whose rows would be SparseTensors of " ..
        "rank 0 (TF: \"Rank of input SparseTensor should be > 1\")")
    end
  end
  local sparse_set = sparse_elements.sparse_components(self.template) or {}
  for i, s in ipairs(self.specs) do
    if sparse_set[i] then s = TensorSpec({ None, None }, "int64") end -- (its specs are fixed below)
    if s.shape and #s.shape == 0 then
      binding.error(string.format("unbatch: component %d is a scalar; every component needs a first dimension", i))
    end
    local dims = {}
    for d = 2, #(s.shape or {}) do dims[d - 1] = s.shape[d] end
    specs[i] = TensorSpec(s.shape and dims or nil, s.dtype)
  end
  local ds = derive(self, "unbatch")
  ds.specs = specs
  if next(sparse_set) then
    ds.template = structure.map_sparse_shapes(self.template, drop_first)
    structure.fix_sparse_specs(ds.template, specs)
  end
  local c = self:cardinality()
  local lead = self.specs[1].shape and self.specs[1].shape[1]
  ds.card = (c == INFINITE and INFINITE) or ((c >= 0 and type(lead) == "number") and c * lead) or UNKNOWN
  return ds
end

-- ds:shuffle(buffer_size, {seed=, reshuffle_each_iteration=true}).
function Dataset:shuffle(buffer, opts)
  buffer = count_arg("shuffle", "buffer_size", buffer, 1)
  opts = options("shuffle", { "seed", "reshuffle_each_iteration" }, opts)
  local reshuffle = opts.reshuffle_each_iteration
  if reshuffle == nil then reshuffle = true end
  local ds = derive(self, "shuffle", { buffer = buffer, seed = draw_seed(opts.seed, "shuffle"), reshuffle = reshuffle,
    passes = 0 })
  ds.seedless = opts.seed == nil -- inside interleave's function: each inner dataset would need a seed of its own
  ds.card = self:cardinality()
  return ds
end

-- ds:repeat_(count): count passes (nil or -1: forever). `repeat` is a Lua keyword.
function Dataset:repeat_(count)
  if count == nil then count = -1 end
  count = count_arg("repeat_", "count", count, -1)
  local ds = derive(self, "repeat", { count = count })
  local c = self:cardinality()
  if count < 0 then ds.card = (c == 0) and 0 or INFINITE
  elseif c < 0 then ds.card = (count == 0) and 0 or c
  else ds.card = c * count end
  return ds
end

-- ds:take(n): the first n elements (n = -1: all).
function Dataset:take(n)
  n = count_arg("take", "count", n, -1)
  local ds = derive(self, "take", { count = n })
  local c = self:cardinality()
  if n < 0 then ds.card = c
  elseif c == INFINITE then ds.card = n
  elseif c == UNKNOWN then ds.card = UNKNOWN
  else ds.card = math.min(c, n) end
  return ds
end

-- ds:skip(n): all but the first n elements (n = -1: skip everything).
function Dataset:skip(n)
  n = count_arg("skip", "count", n, -1)
  local ds = derive(self, "skip", { count = n })
  local c = self:cardinality()
  if c < 0 then ds.card = c
  elseif n < 0 then ds.card = 0
  else ds.card = math.max(0, c - n) end
  return ds
end

-- ds:cache(filename): the first complete pass is kept (in memory, or with a
-- filename in that file, written atomically) and later passes replay it; an
-- existing cache file is read without running the input. A pass that stops
-- early keeps nothing and warns once, naming the fix.
function Dataset:cache(filename)
  no_datasets("cache", self)
  if filename ~= nil and type(filename) ~= "string" then
    binding.error("cache: the filename must be a string (or nothing, for a memory cache), got " .. type(filename))
  end
  if filename == "" then filename = nil end
  local ds = derive(self, "cache", { store = {}, filename = filename })
  ds.card = self:cardinality()
  return ds
end

-- ds:prefetch(n or tide.data.AUTOTUNE): elements made ahead by a C thread.
function Dataset:prefetch(n)
  if n ~= M.AUTOTUNE then n = count_arg("prefetch", "buffer_size", n, 1) end
  local ds = derive(self, "prefetch", { n = n })
  ds.card = self:cardinality()
  return ds
end

-- ds:concatenate(other): ds's elements, then other's (same structure and dtypes).
function Dataset:concatenate(other)
  no_datasets("concatenate", self)
  no_datasets("concatenate", check_dataset("concatenate", other))
  if not structure.same(self.template, other.template) then
    binding.error("concatenate: the datasets' elements have different structures")
  end
  local specs = {}
  for i, s in ipairs(self.specs) do specs[i] = structure.common_spec(s, other.specs[i], "concatenate") end
  local a, b = self:cardinality(), other:cardinality()
  local card
  if a == INFINITE or b == INFINITE then card = INFINITE
  elseif a == UNKNOWN or b == UNKNOWN then card = UNKNOWN
  else card = a + b end
  return setmetatable({ kind = "concatenate", inputs = { self, other },
    template = structure.common_template(self.template, other.template), specs = specs, card = card }, Dataset)
end

-- An interleave node (interleave, flat_map) over self; `what` names it in errors.
local function interleave_node(self, what, fn, cycle, block, parallel, deterministic)
  local ds = derive(self, "interleave", { fn = fn, cycle = cycle, block = block, parallel = parallel,
    deterministic = deterministic, what = what })
  if structure.holds_datasets(self.specs) then -- window's datasets: fn runs in Lua, called here on empty ones of
    -- the same specs for the structure of what it makes (as TF traces it on their DatasetSpecs)
    local args = {}
    for i, s in ipairs(self.specs) do
      args[i] = setmetatable({ kind = "elements", elems = {}, template = { kind = "tensor", index = 1 },
        specs = { s.element_spec }, card = 0 }, Dataset)
    end
    local ok, inner = pcall(fn, structure.values(self.template, args))
    if ok and is_dataset(inner) then ds.template, ds.specs = inner.template, inner.specs
    else ds.template, ds.specs = engines.lua.probe_interleave(ds) end
    return ds
  end
  local captured, why = interleave_fn.capture(fn, self.template, self.specs, is_dataset, engines.c.supports_stage)
  if captured then
    ds.captured = captured
    ds.template, ds.specs = captured.inner.template, captured.inner.specs
  else
    interleave_fn.note_fallback(fn, why, what)
    ds.template, ds.specs = engines.lua.probe_interleave(ds)
  end
  return ds
end

-- ds:interleave(fn, {cycle_length=, block_length=1, parallel=, deterministic=true}):
-- fn makes a dataset of each element; cycle_length of them are read in
-- turn, block_length elements at a time (TF's order). fn is called once on a
-- traced element and the dataset it returns kept as a template that C threads
-- make anew for each element (data/interleave_fn.lua); with parallel = p > 1
-- (AUTOTUNE: cycle_length), p threads open and read them ahead, in the same
-- order unless deterministic = false. An fn that cannot be captured runs in
-- Lua for each element (a note says why).
function Dataset:interleave(fn, opts)
  if type(fn) ~= "function" then binding.error("interleave: expected a function, got " .. type(fn)) end
  opts = options("interleave", { "cycle_length", "block_length", "parallel", "num_parallel_calls", "deterministic" },
    opts)
  local cycle = opts.cycle_length
  if cycle == nil or cycle == M.AUTOTUNE then cycle = tonumber(C.tide_data_autotune_parallelism())
  else cycle = count_arg("interleave", "cycle_length", cycle, 1) end
  local block = count_arg("interleave", "block_length", opts.block_length or 1, 1)
  local parallel = opts.parallel or opts.num_parallel_calls or 1
  if parallel == M.AUTOTUNE then parallel = cycle
  else parallel = count_arg("interleave", "parallel", parallel, 1) end
  local deterministic = opts.deterministic
  if deterministic == nil then deterministic = true end
  if type(deterministic) ~= "boolean" then binding.error("interleave: deterministic must be a boolean") end
  local ds = interleave_node(self, "interleave", fn, cycle, block, parallel, deterministic)
  ds.card = UNKNOWN -- as TF 2.21's, even over an infinite input (its inner datasets may all be empty)
  return ds
end

-- ds:flat_map(fn): the elements of fn(x)'s dataset for each x in turn; TF's
-- definition, an interleave with cycle_length = 1 (so fn is captured into C
-- when it can be). Its cardinality is unknown, as TF 2.21's.
function Dataset:flat_map(fn)
  if type(fn) ~= "function" then binding.error("flat_map: expected a function, got " .. type(fn)) end
  local ds = interleave_node(self, "flat_map", fn, 1, 1, 1, true)
  ds.card = UNKNOWN
  return ds
end

-- ds:enumerate(start=0): elements {i, element} with i an int64 scalar.
function Dataset:enumerate(start)
  start = count_arg("enumerate", "start", start or 0)
  local ds = derive(self, "enumerate", { start = start })
  ds.template = structure.list_of({ { kind = "tensor", index = 1 }, self.template })
  ds.specs = { TensorSpec({}, "int64") }
  for _, s in ipairs(self.specs) do ds.specs[#ds.specs + 1] = s end
  ds.card = self:cardinality()
  return ds
end

-- ds:shard(num_shards, index): every num_shards-th element from index on.
function Dataset:shard(num, index)
  num = count_arg("shard", "num_shards", num, 1)
  index = count_arg("shard", "index", index, 0)
  if index >= num then
    binding.error(string.format("shard: index must be less than num_shards (%d), got %d", num, index))
  end
  local ds = derive(self, "shard", { num = num, index = index })
  local c = self:cardinality()
  if c < 0 then ds.card = c
  else ds.card = math.floor(c / num) + ((index < c % num) and 1 or 0) end
  return ds
end

---------------------------------------------------------------------------
-- Reading
---------------------------------------------------------------------------

-- Elements in one pass: a count, INFINITE_CARDINALITY (-1) or UNKNOWN_CARDINALITY (-2).
function Dataset:cardinality() return self.card end

-- For tests and benches: AUTOTUNE's settings in this dataset's stages as the
-- last pass over it left them (data/c_engine.lua's autotune_state), top down.
function Dataset:_autotune_state() return engines.c.autotune_state(self) end

-- element_spec: a TensorSpec, or a list/map of them as the elements are.
function Dataset:element_spec_value() return structure.spec_value(self.template, self.specs) end

-- ds:iter({prefetch=true}): an iterator for a generic for; a list element
-- gives its items as separate values, a map one table. Each call starts a
-- new pass. A pass whose stages all run in C prefetches by default.
function Dataset:iter(opts)
  opts = options("iter", { "prefetch" }, opts)
  local top = self
  if opts.prefetch ~= false and self.kind ~= "prefetch" and engines.c.supports(self) then
    -- one prefetch stage for every pass: the depth AUTOTUNE grew to carries over to the next epoch
    top = rawget(self, "_auto_prefetch") or self:prefetch(M.AUTOTUNE)
    self._auto_prefetch = top
  end
  local nextf = M.open(top)
  local template = self.template
  return function()
    local flat = nextf()
    if flat == nil then return nil end
    return structure.values(template, flat)
  end
end

-- The flat-element reader of a pass over ds: a function giving the next
-- element's components (a list) or nil at the end, and a close function.
function M.open(ds)
  if engines.c.supports(ds) then return engines.c.open(ds) end
  return engines.lua.open(ds)
end

-- Every element, in a Lua list (list elements as tables).
function Dataset:totable()
  local out = {}
  local nextf = M.open(self)
  while true do
    local flat = nextf()
    if flat == nil then break end
    out[#out + 1] = structure.rebuild(self.template, flat)
  end
  return out
end

-- The one element of a dataset that has exactly one (TF's get_single_element).
function Dataset:get_single_element()
  local nextf, close = M.open(self)
  local first = nextf()
  if first == nil then binding.error("get_single_element: the dataset was empty (it must have exactly one element)") end
  local second = nextf()
  if close then close() end
  if second ~= nil then
    binding.error("get_single_element: the dataset had more than one element (it must have exactly one)")
  end
  return structure.values(self.template, first)
end

-- Lua reads ds.element_spec as TF's property.
local methods_index = Dataset.__index
Dataset.__index = function(self, k)
  if k == "element_spec" then return self:element_spec_value() end
  return methods_index[k]
end

Dataset.__tostring = function(self)
  local parts = {}
  for i, s in ipairs(self.specs) do parts[i] = tostring(s) end
  return string.format("<tide.data.Dataset %s: %s>", self.kind, table.concat(parts, ", "))
end

-- For the modules that add methods (data/functional.lua, sampling.lua, windows.lua, grouping.lua).
M.helpers = { options = options, count_arg = count_arg, derive = derive, check_dataset = check_dataset,
  draw_seed = draw_seed, no_datasets = no_datasets }

return M
