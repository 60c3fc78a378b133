-- stdlib/tide/nest.lua — nested structures (TF's tf.nest, Keras 3's keras.tree):
-- the one key order and the one leaf rule of every walker over Lua tables of values.
--
-- The leaf rule: a plain Lua table (no metatable) is a node, everything else
-- is a leaf (tensors, Variables, TensorSpecs, tide.Shape, class instances,
-- numbers, strings, booleans, functions, nil). With expand_composites a
-- composite is a node too: a table whose metatable sets
-- __tracing_composite = true (tide.RaggedTensor), walked by its fields and
-- rebuilt with its metatable. A caller's is_leaf(x) may stop at a node
-- (tf.data's tables of numbers, which are one tensor).
--
-- The key order: a list (keys exactly 1..n; {} is the empty list) in order;
-- any other table by its keys sorted: by Lua type name first (so numbers
-- come before strings, as Keras 3's tree sorts mixed keys), then numbers
-- ascending, strings in byte order (as TF sorts a dict's keys), keys of
-- other types by tostring. Depth first. docs/nest.md says why.
local binding = require "tide.binding"

local M = {}

local type, getmetatable, setmetatable, tostring, select = type, getmetatable, setmetatable, tostring, select

---------------------------------------------------------------------------
-- The key order
---------------------------------------------------------------------------

-- True when key a comes before key b.
local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta < tb end
  if ta == "number" or ta == "string" then return a < b end
  return tostring(a) < tostring(b)
end
M.key_less = key_less

-- The keys of table x in the key order, and their count.
local function sorted_keys(x)
  local keys, n = {}, 0
  for k in pairs(x) do
    n = n + 1
    keys[n] = k
  end
  if n <= 8 then -- insertion sort: small tables are the common case
    for i = 2, n do
      local k = keys[i]
      local j = i - 1
      while j >= 1 and key_less(k, keys[j]) do
        keys[j + 1] = keys[j]
        j = j - 1
      end
      keys[j + 1] = k
    end
  else
    table.sort(keys, key_less)
  end
  return keys, n
end
M.sorted_keys = sorted_keys

-- True when table x is a list (its keys are exactly 1..#x), and #x.
local function is_list(x)
  local n = #x
  local count = 0
  for k in pairs(x) do
    if type(k) ~= "number" or k < 1 or k > n or k % 1 ~= 0 then return false, n end
    count = count + 1
  end
  return count == n, n
end
M.is_list = is_list

-- A node's keys in the key order, their count, and whether it is a list.
local function keys_of(x)
  local list, n = is_list(x)
  if list then
    local keys = {}
    for i = 1, n do keys[i] = i end
    return keys, n, true
  end
  local keys
  keys, n = sorted_keys(x)
  return keys, n, false
end
M.keys = keys_of

---------------------------------------------------------------------------
-- The leaf rule
---------------------------------------------------------------------------

-- True when x is a composite value (its metatable sets __tracing_composite).
local function is_composite(x)
  if type(x) ~= "table" then return false end
  local mt = getmetatable(x)
  return type(mt) == "table" and mt.__tracing_composite == true
end
M.is_composite = is_composite

-- What x is to a walk: nil for a leaf, false for a plain table, its
-- metatable for a composite that is expanded.
local function node_kind(x, expand, is_leaf)
  if type(x) ~= "table" then return nil end
  local mt = getmetatable(x)
  if mt ~= nil and not (expand and type(mt) == "table" and mt.__tracing_composite == true) then return nil end
  if is_leaf and is_leaf(x) then return nil end
  return mt or false
end

-- nest.is_nested(x, expand_composites): true when x is a node (a plain
-- Lua table; with expand_composites also a composite such as a
-- tide.RaggedTensor), false for a leaf.
function M.is_nested(x, expand_composites)
  return node_kind(x, expand_composites, nil) ~= nil
end

---------------------------------------------------------------------------
-- Options, paths and descriptions (for messages)
---------------------------------------------------------------------------

-- opts: nil, or { expand_composites = bool, is_leaf = function(x) }, and
-- check_types where two structures are compared (compare).
local function read_opts(who, opts, compare)
  if opts == nil then return false, nil end
  local names = compare and "check_types=, expand_composites=, is_leaf=" or "expand_composites=, is_leaf="
  if type(opts) ~= "table" or getmetatable(opts) ~= nil then
    binding.error(string.format("nest.%s: options must be a table {%s}, got %s", who, names, type(opts)))
  end
  for k in pairs(opts) do
    if k ~= "expand_composites" and k ~= "is_leaf" and not (compare and k == "check_types") then
      binding.error(string.format("nest.%s: unknown option '%s' (%s)", who, tostring(k), names))
    end
  end
  if opts.is_leaf ~= nil and type(opts.is_leaf) ~= "function" then
    binding.error(string.format("nest.%s: is_leaf must be a function, got %s", who, type(opts.is_leaf)))
  end
  return opts.expand_composites and true or false, opts.is_leaf
end

local function key_text(k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return "." .. k end
  if type(k) == "string" then return "[" .. string.format("%q", k) .. "]" end
  return "[" .. tostring(k) .. "]"
end

-- A path (a list of keys) as Lua code: [2].h["a b"], a[1]; "the top level" when empty.
local function path_text(path, n)
  n = n or #path
  if n == 0 then return "the top level" end
  local parts = {}
  for i = 1, n do parts[i] = key_text(path[i]) end
  return (table.concat(parts):gsub("^%.", ""))
end
M.path_text = path_text

local function safe_tostring(x)
  local ok, s = pcall(tostring, x)
  return ok and s or type(x)
end

-- A key list as text: "a, b, 3".
local function keys_text(keys)
  local parts = {}
  for i, k in ipairs(keys) do parts[i] = safe_tostring(k) end
  return table.concat(parts, ", ")
end

-- What x is, in words: "a list of 2 values", "a table with keys a, b", "a leaf (the number 3)".
local function describe(x, kind)
  if kind == nil then
    local tx = type(x)
    if binding.istensor(x) then return "a leaf (a tensor)" end
    if tx == "nil" then return "a leaf (nil)" end
    if tx == "string" then return string.format("a leaf (the string %q)", x) end
    if tx == "number" or tx == "boolean" then return "a leaf (the " .. tx .. " " .. tostring(x) .. ")" end
    return "a leaf (" .. safe_tostring(x) .. ")"
  end
  local keys, n, list = keys_of(x)
  local what
  if list then what = string.format("a list of %d value%s", n, n == 1 and "" or "s")
  else what = "a table with keys " .. keys_text(keys) end
  if kind then
    local name = rawget(kind, "__name")
    what = string.format("a composite%s with fields %s", name and (" " .. tostring(name)) or "", keys_text(keys))
  end
  return what
end

---------------------------------------------------------------------------
-- flatten, flatten_with_path, pack_sequence_as
---------------------------------------------------------------------------
-- The walks are plain recursive functions that make no closures (LuaJIT
-- does not compile making one). Each call has one state table `st`: the
-- keys on the path (st[1..depth]), for messages and paths, and, from TRACK
-- levels down, the tables on the path (st[t] = its depth), so that a structure
-- that holds itself stops with an error instead of recursing until the
-- stack runs out; a cycle has to pass that depth, and shallower walks pay nothing.
local TRACK = 32

local function enter(who, x, st, depth)
  if depth < TRACK then return end
  local seen = st[x]
  if seen then
    local keys = {}
    for i = seen + 1, depth do keys[#keys + 1] = st[i] end
    binding.error(string.format("nest.%s: the structure holds itself (a cycle: %s leads back to the same table); a " ..
      "nested structure must be a tree", who, path_text(keys)))
  end
  st[x] = depth
end

local function leave(x, st, depth)
  if depth >= TRACK then st[x] = nil end
end

-- The keys on the path, as a new list.
local function path_copy(st, depth)
  local p = {}
  for i = 1, depth do p[i] = st[i] end
  return p
end

-- Append the leaves of x to out (with_path: { path, leaf } pairs).
local function flatten_into(who, x, out, with_path, expand, is_leaf, st, depth)
  local kind = node_kind(x, expand, is_leaf)
  if kind == nil then
    if with_path then out[#out + 1] = { path_copy(st, depth), x }
    elseif x ~= nil then out[#out + 1] = x end
    return
  end
  enter(who, x, st, depth)
  local list, n = is_list(x)
  local keys
  if not list then keys, n = sorted_keys(x) end
  for i = 1, n do
    local k = list and i or keys[i]
    st[depth + 1] = k
    flatten_into(who, x[k], out, with_path, expand, is_leaf, st, depth + 1)
  end
  st[depth + 1] = nil
  leave(x, st, depth)
end

-- nest.flatten(structure, opts): its leaves in the key order, depth first,
-- as a list. A nil structure is one leaf, but {nil} is {} in Lua: flatten(nil)
-- is {} (pack it back with {n = 1}).
-- opts: { expand_composites = true (walk composites' fields), is_leaf = function(x) }.
function M.flatten(structure, opts)
  local expand, is_leaf = false, nil
  if opts ~= nil then expand, is_leaf = read_opts("flatten", opts) end
  local out = {}
  flatten_into("flatten", structure, out, false, expand, is_leaf, {}, 0)
  return out
end

-- nest.flatten_with_path(structure, opts): a list of { path, leaf } in
-- flatten's order, path a list of the keys from the top (Keras 3's
-- keras.tree.flatten_with_path); a leaf at the top has the path {}.
function M.flatten_with_path(structure, opts)
  local expand, is_leaf = read_opts("flatten_with_path", opts)
  local out = {}
  flatten_into("flatten_with_path", structure, out, true, expand, is_leaf, {}, 0)
  return out
end

-- x rebuilt with its leaves from flat[used + 1 ...]; returns it and the new used.
local function pack_from(x, flat, used, expand, is_leaf, st, depth)
  local kind = node_kind(x, expand, is_leaf)
  if kind == nil then return flat[used + 1], used + 1 end
  enter("pack_sequence_as", x, st, depth)
  local list, n = is_list(x)
  local keys
  if not list then keys, n = sorted_keys(x) end
  local out = {}
  for i = 1, n do
    local k = list and i or keys[i]
    st[depth + 1] = k
    out[k], used = pack_from(x[k], flat, used, expand, is_leaf, st, depth + 1)
  end
  st[depth + 1] = nil
  leave(x, st, depth)
  if kind then setmetatable(out, kind) end
  return out, used
end

-- nest.pack_sequence_as(structure, flat, opts): structure rebuilt with its
-- leaves replaced, in flatten's order, by flat's values (flat.n, as
-- table.pack gives, counts values that are nil). Composites expanded come
-- back with their metatable. A nil value leaves its key out (Lua tables hold no nil).
function M.pack_sequence_as(structure, flat, opts)
  local expand, is_leaf = false, nil
  if opts ~= nil then expand, is_leaf = read_opts("pack_sequence_as", opts) end
  if type(flat) ~= "table" or getmetatable(flat) ~= nil then
    binding.error(string.format("nest.pack_sequence_as: flat must be a list of values (a Lua table), got %s",
      type(flat)))
  end
  local count = flat.n or #flat
  local result, used = pack_from(structure, flat, 0, expand, is_leaf, {}, 0)
  if used ~= count then
    binding.error(string.format("nest.pack_sequence_as: the structure has %d lea%s, but flat has %d value%s",
      used, used == 1 and "f" or "ves", count, count == 1 and "" or "s"))
  end
  return result
end

---------------------------------------------------------------------------
-- Comparing structures: same_structure, assert_same_structure
---------------------------------------------------------------------------

-- Where and how nodes a and b differ: the depth (st[1..depth] the path)
-- and why, or nil. check_types compares kinds (a list, a table, a
-- composite's class) and a table's keys; without it two nodes match when
-- they have as many children (TF's check_types=False).
local function difference(who, a, b, check_types, expand, is_leaf, st, depth)
  local ka, kb = node_kind(a, expand, is_leaf), node_kind(b, expand, is_leaf)
  if ka == nil and kb == nil then return nil end
  if ka == nil or kb == nil then
    return depth, string.format("a %s against a %s (the first is %s, the second %s)", ka == nil and "leaf" or "node",
      kb == nil and "leaf" or "node", describe(a, ka), describe(b, kb))
  end
  enter(who, a, st, depth)
  local keys_a, na, la = keys_of(a)
  local keys_b, nb, lb = keys_of(b)
  if check_types and (ka ~= kb or la ~= lb) then
    return depth, string.format("different kinds of node (the first is %s, the second %s)", describe(a, ka),
      describe(b, kb))
  end
  if check_types and not la then
    local same = na == nb
    for i = 1, same and na or 0 do same = keys_a[i] == keys_b[i] and same end
    if not same then return depth, string.format("different keys (%s and %s)", keys_text(keys_a), keys_text(keys_b)) end
  elseif na ~= nb then
    return depth, string.format("different numbers of values (the first is %s, the second %s)", describe(a, ka),
      describe(b, kb))
  end
  for i = 1, na do
    st[depth + 1] = keys_a[i]
    local at, why = difference(who, a[keys_a[i]], b[keys_b[i]], check_types, expand, is_leaf, st, depth + 1)
    if at then return at, why end
  end
  st[depth + 1] = nil
  leave(a, st, depth)
  return nil
end

-- check_types: a boolean (TF's argument) or an options table
-- { check_types = bool (default true), expand_composites =, is_leaf = }.
local function compare_opts(who, opts)
  if opts == nil or type(opts) == "boolean" then return opts ~= false, false, nil end
  local expand, is_leaf = read_opts(who, opts, true)
  return opts.check_types ~= false, expand, is_leaf
end

-- nest.same_structure(a, b, check_types): true when a and b have the same
-- structure (what assert_same_structure checks), else false and why.
function M.same_structure(a, b, check_types)
  local check, expand, is_leaf = compare_opts("same_structure", check_types)
  local st = {}
  local at, why = difference("same_structure", a, b, check, expand, is_leaf, st, 0)
  if at == nil then return true end
  return false, string.format("at %s: %s", path_text(st, at), why)
end

-- nest.assert_same_structure(a, b, check_types): an error saying where
-- and how a and b differ, unless they have the same structure: the same
-- nodes (a list against a list of as many values, a table against a table
-- of the same keys, a composite against one of its class) with a leaf
-- against every leaf. check_types = false (or {check_types = false}) only
-- asks nodes for as many children, as TF's check_types=False does.
function M.assert_same_structure(a, b, check_types)
  local check, expand, is_leaf = compare_opts("assert_same_structure", check_types)
  local st = {}
  local at, why = difference("assert_same_structure", a, b, check, expand, is_leaf, st, 0)
  if at then
    binding.error(string.format("nest.assert_same_structure: the two structures differ at %s: %s",
      path_text(st, at), why))
  end
end

---------------------------------------------------------------------------
-- map_structure, map_structure_with_path
---------------------------------------------------------------------------

-- One structure: x with each leaf replaced by fn(leaf) (with_path: fn(path, leaf)).
local function map_one(who, fn, x, with_path, st, depth)
  if node_kind(x, false, nil) == nil then
    if with_path then return fn(path_copy(st, depth), x) end
    return fn(x)
  end
  enter(who, x, st, depth)
  local list, n = is_list(x)
  local keys
  if not list then keys, n = sorted_keys(x) end
  local out = {}
  for i = 1, n do
    local k = list and i or keys[i]
    st[depth + 1] = k
    out[k] = map_one(who, fn, x[k], with_path, st, depth + 1)
  end
  st[depth + 1] = nil
  leave(x, st, depth)
  return out
end

-- Several structures of one structure (checked before): xs[1]'s structure
-- with each leaf replaced by fn(the leaves of xs[1..ns] there).
local function map_many(who, fn, xs, ns, with_path, st, depth)
  local x = xs[1]
  if node_kind(x, false, nil) == nil then
    if with_path then return fn(path_copy(st, depth), unpack(xs, 1, ns)) end
    return fn(unpack(xs, 1, ns))
  end
  enter(who, x, st, depth)
  local keys, n = keys_of(x)
  local out = {}
  for i = 1, n do
    local k = keys[i]
    st[depth + 1] = k
    local sub = {}
    for j = 1, ns do sub[j] = xs[j][k] end
    out[k] = map_many(who, fn, sub, ns, with_path, st, depth + 1)
  end
  st[depth + 1] = nil
  leave(x, st, depth)
  return out
end

local function map(who, fn, with_path, ns, s1, ...)
  if type(fn) ~= "function" and not (getmetatable(fn) and getmetatable(fn).__call) then
    binding.error(string.format("nest.%s: the first argument must be a function, got %s", who, type(fn)))
  end
  if ns == 0 then binding.error(string.format("nest.%s: give at least one structure after the function", who)) end
  local nrest = ns - 1
  if nrest == 0 then
    if not with_path and node_kind(s1, false, nil) == nil then return fn(s1) end -- a leaf: no walk
    return map_one(who, fn, s1, with_path, {}, 0)
  end
  local xs = { s1, ... }
  for j = 2, nrest + 1 do
    local st = {}
    local at, why = difference(who, s1, xs[j], true, false, nil, st, 0)
    if at then
      binding.error(string.format("nest.%s: structure %d differs from structure 1 at %s: %s", who, j,
        path_text(st, at), why))
    end
  end
  return map_many(who, fn, xs, nrest + 1, with_path, {}, 0)
end

-- nest.map_structure(fn, s1, s2, ...): s1's structure with each leaf
-- replaced by fn(the leaves at that place in s1, s2, ...); the structures
-- must have the same structure (assert_same_structure). A nil result
-- leaves its key out.
function M.map_structure(fn, ...)
  return map("map_structure", fn, false, select("#", ...), ...)
end

-- nest.map_structure_with_path(fn, s1, s2, ...): as map_structure, with
-- fn(path, leaves...), path the list of keys from the top.
function M.map_structure_with_path(fn, ...)
  return map("map_structure_with_path", fn, true, select("#", ...), ...)
end

return M
