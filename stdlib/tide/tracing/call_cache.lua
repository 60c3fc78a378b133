-- stdlib/tide/tracing/call_cache.lua — the call cache of Functions and
-- concrete functions: a trie over the arguments' trace types, no strings built.
local binding = require "tide.binding"
local T = require "tide.tracing.trace_type"
local nest = require "tide.nest"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local band = bit.band
local ids, identity, table_kind = T.ids, T.identity, T.table_kind
local is_list, sorted_keys = nest.is_list, nest.sorted_keys -- tide.nest's key order, as template_of walks
local VARIABLE, SHAPE, TYPED, COMPOSITE = T.VARIABLE, T.SHAPE, T.TYPED, T.COMPOSITE

local M = {}
local SYMBOLIC = C.TIDE_TENSOR_SYMBOLIC

-- A call walks the trie one argument at a time: a tensor by dtype code, rank
-- and dims; a Lua value by kind ("N", "S", "B", "Z" for nil) and value; a
-- table by "A"/"M", its size and its elements (maps in key order); objects
-- by "O"/"V" and id; __tracing_type results by "Y" and their own walk; a
-- composite (tide.RaggedTensor) by "C", its metatable and its fields; a
-- tide.Shape by "P" and its dims. Tensors are collected into `slots` (the
-- graph's inputs) in the same order as template_of numbers them. No strings
-- are built on a hit, so a cached call costs a few table lookups per argument.

local function step(node, k, create)
  local c = node[k]
  if c == nil and create then
    c = {}
    node[k] = c
  end
  return c
end

local walk

local function walk_table(node, x, slots, create)
  local list, n = is_list(x)
  if list then
    node = step(node, "A", create); if node == nil then return nil end
    node = step(node, n, create)
    for i = 1, n do
      if node == nil then return nil end
      node = walk(node, x[i], slots, create)
    end
    return node
  end
  local keys, nk = sorted_keys(x)
  node = step(node, "M", create); if node == nil then return nil end
  node = step(node, nk, create)
  for i = 1, nk do
    if node == nil then return nil end
    local k = keys[i]
    node = walk(node, k, nil, create)
    if node == nil then return nil end
    node = walk(node, x[k], slots, create)
  end
  return node
end

-- The trie node after argument x, or nil when it is not there (create: add it).
-- Symbolic tensors never match (they go the slow way).
walk = function(node, x, slots, create)
  if istype(Tensor, x) then
    if band(x.flags, SYMBOLIC) ~= 0 then return nil end
    if slots then slots[#slots + 1] = x end
    node = step(node, x.dt, create); if node == nil then return nil end
    local nd = x.ndim
    node = step(node, nd, create)
    for i = 0, nd - 1 do
      if node == nil then return nil end
      node = step(node, tonumber(x.dims[i]), create)
    end
    return node
  end
  local tx = type(x)
  if tx == "number" then
    node = step(node, "N", create); if node == nil then return nil end
    if x ~= x then x = "nan" end -- NaN cannot be a table key
    return step(node, x, create)
  elseif tx == "string" then
    node = step(node, "S", create); if node == nil then return nil end
    return step(node, x, create)
  elseif tx == "boolean" then
    node = step(node, "B", create); if node == nil then return nil end
    return step(node, x, create)
  elseif tx == "nil" then
    return step(node, "Z", create)
  elseif tx == "userdata" and T.is_variable(x) then
    node = step(node, "V", create); if node == nil then return nil end
    return step(node, ids[x] or identity(x), create)
  elseif tx == "table" then
    local mt = getmetatable(x)
    if mt == nil then return walk_table(node, x, slots, create) end
    local k = table_kind(x, mt)
    if k == TYPED then
      node = step(node, "Y", create); if node == nil then return nil end
      return walk(node, mt.__tracing_type(x), nil, create)
    elseif k == SHAPE then
      node = step(node, "P", create); if node == nil then return nil end
      return walk_table(node, x, nil, create)
    elseif k == COMPOSITE then -- its fields as a map's, after its metatable
      node = step(node, "C", create); if node == nil then return nil end
      node = step(node, mt, create); if node == nil then return nil end
      return walk_table(node, x, slots, create)
    end
    node = step(node, k == VARIABLE and "V" or "O", create); if node == nil then return nil end
    return step(node, ids[x] or identity(x), create)
  elseif tx == "cdata" and (istype("int64_t", x) or istype("uint64_t", x)) then
    node = step(node, "I", create); if node == nil then return nil end
    return step(node, tostring(x), create)
  end
  node = step(node, "O", create); if node == nil then return nil end
  return step(node, ids[x] or identity(x), create)
end

local LIMIT = 4096 -- leaves a cache makes before it starts over (a function called with many shapes)

-- A call cache: the trie's root and the leaves made since it started over.
function M.new()
  return { root = {}, size = 0 }
end

-- Forget every call (a new concrete function may fit cached calls better).
function M.clear(cache)
  cache.root, cache.size = {}, 0
end

-- The leaf for n arguments, or nil; fills `slots` with their tensors.
function M.lookup(cache, slots, n, ...)
  local node = cache.root[n]
  for i = 1, n do
    if node == nil then return nil end
    node = walk(node, (select(i, ...)), slots, false)
  end
  return node
end

-- The leaf for n arguments, made if missing (the cache starts over first once
-- it has made more than LIMIT leaves); the caller stores what the call selects in it.
function M.remember(cache, n, ...)
  if cache.size > LIMIT then M.clear(cache) end
  cache.size = cache.size + 1
  local node = step(cache.root, n, true)
  for i = 1, n do node = walk(node, (select(i, ...)), nil, true) end
  return node
end

return M
