-- stdlib/tide/data/stages/generator.lua — Dataset.from_generator: elements
-- a Lua iterator gives, checked against output_signature (Lua engine only).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local sparse_tensor = require "tide.sparse_tensor"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"
local nest = require "tide.nest"

-- Dataset.from_generator(gen, {output_signature=}): gen() returns a Lua
-- iterator (a function giving the next element, or nil at the end), called
-- anew for each pass. Elements must fit the signature (a TensorSpec or a
-- list/map of them); Lua numbers take its dtypes.
local function from_generator(gen, opts)
  if type(gen) ~= "function" then
    binding.error("from_generator: expected a function that returns an iterator, got " .. type(gen))
  end
  opts = stage.options("from_generator", { "output_signature" }, opts)
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
    local keys = nest.sorted_keys(s) -- tide.nest's order, as elements are flattened in
    local items = {}
    for i, k in ipairs(keys) do items[i] = walk(s[k]) end
    return { kind = "map", keys = keys, items = items }
  end
  local template = walk(sig)
  return stage.new { kind = "generator", gen = gen, template = template, specs = specs, card = stage.UNKNOWN }
end

local s = {}

function s.lua(ds)
  local it = ds.gen()
  if type(it) ~= "function" then
    binding.error("from_generator: the generator must return an iterator function, got " .. type(it))
  end
  local index = 0
  local dtypes = {}
  for i, sp in ipairs(ds.specs) do dtypes[i] = sp.dtype end
  return function()
    local v = it()
    if v == nil then return nil end
    local leaves, why = structure.flatten_as(v, ds.template, dtypes, "from_generator")
    if not leaves then
      binding.error(string.format("from_generator: element %d does not fit output_signature: %s", index, why))
    end
    for i, x in ipairs(leaves) do
      local sp = ds.specs[i]
      if not sp:accepts(structure.dtype_name(x), x.shape) then
        binding.error(string.format("from_generator: element %d: component %d is %s %s, but output_signature says %s",
          index, i, structure.dtype_name(x), tostring(x.shape), tostring(sp)))
      end
    end
    index = index + 1
    return leaves
  end
end

return { methods = { from_generator = from_generator }, stages = { generator = s } }
