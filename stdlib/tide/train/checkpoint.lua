-- stdlib/tide/train/checkpoint.lua — tide.train.Checkpoint (TF 2's tf.train.Checkpoint):
-- the Variables reachable from its children (models, layers, optimizers with their
-- slots and iterations, metrics, plain Variables, tables of those), keyed by object
-- path, in one safetensors file; restore matches by key, deferring what is not built yet.
--
--   local ckpt = tide.train.Checkpoint{model = model, optimizer = opt, step = step}
--   local path = ckpt:save("/tmp/run/ckpt")      -- "/tmp/run/ckpt-1" (file ckpt-1.safetensors)
--   ckpt:restore(path):assert_consumed()
--
-- Keys (docs/saving.md): a child's name, then for a layer or model
-- "layer-<i>" per sub-layer (its position among the layer's tracked
-- sub-layers, Input layers included) and the weight's own name ("kernel");
-- for an optimizer "iterations", "learning_rate" and its other Variables by
-- name, and each slot under the key of its variable:
--   model/layer-0/kernel, model/layer-0/kernel/.OPTIMIZER_SLOT/optimizer/momentum,
--   optimizer/iterations, step, save_counter.
local binding = require "tide.binding"
local class = require "tide.class"
local variable = require "tide.variable"
local safetensors = require "tide.safetensors"
local tf_checkpoint = require "tide.train.tf_checkpoint"
local exists = require("tide.file").exists
local layer_mod = require "tide.layers.layer"
local tracking = require "tide.layers.tracking"
local optimizer_mod = require "tide.optimizers.optimizer"
local init_scope = require "tide.initializers.init_scope"

local is_variable, Variable = variable.is_variable, variable.Variable
local is_layer = layer_mod.is_layer
local ffi, C = binding.ffi, binding.C
local fmt = string.format

local M = {}

local FORMAT = "tide.train.Checkpoint"
local VERSION = "1"

local function describe(v)
  if binding.istensor(v) then return "a tensor" end
  return type(v)
end

---------------------------------------------------------------------------
-- The object graph: key -> Variable
---------------------------------------------------------------------------

local Checkpoint = class("Checkpoint")
M.Checkpoint = Checkpoint

local function is_optimizer(x) return class.is_instance(x, optimizer_mod.Optimizer) end
local function is_checkpoint(x) return class.is_instance(x, Checkpoint) end

-- A weight's own name: its name less the owning layer's "<layer name>/".
local function short_name(owner_name, v)
  local name = v.name or "variable"
  if owner_name and name:sub(1, #owner_name + 1) == owner_name .. "/" then name = name:sub(#owner_name + 2) end
  return name
end

-- Names unique within one object: a repeated one gets "_1", "_2", ...
local function unique(used, name)
  if not used[name] then
    used[name] = true
    return name
  end
  local k = 1
  while used[name .. "_" .. k] do k = k + 1 end
  used[name .. "_" .. k] = true
  return name .. "_" .. k
end

-- Walk obj under `prefix`, calling add(key, variable) for each Variable
-- (once: the first path that reaches it) and noting optimizers for the
-- slots pass. Anything that holds no Variables and is not a table is an error.
local function walk(obj, prefix, g)
  if is_variable(obj) then return g.add(prefix, obj) end
  if type(obj) ~= "table" then
    binding.error(fmt("Checkpoint: '%s' is %s; a checkpoint tracks Variables, layers, models, optimizers, metrics, " ..
      "Checkpoints and tables of those (wrap a number in tide.Variable)", prefix, describe(obj)))
  end
  if g.seen[obj] then return end
  g.seen[obj] = true
  if is_checkpoint(obj) then
    for _, name in ipairs(obj:_child_names()) do walk(obj._children[name], prefix .. "/" .. name, g) end
    return
  end
  if is_layer(obj) then
    local vars, subs = tracking.owned(obj, rawget(obj, "_tracking"), is_layer)
    local used = {}
    for _, v in ipairs(vars) do g.add(prefix .. "/" .. unique(used, short_name(rawget(obj, "name"), v)), v) end
    for i, l in ipairs(subs) do walk(l, prefix .. "/layer-" .. (i - 1), g) end
    return
  end
  if is_optimizer(obj) then
    g.optimizers[#g.optimizers + 1] = { obj, prefix }
    local used = { iterations = true, learning_rate = true }
    local slots = {}
    for _, per in pairs(rawget(obj, "_slots")) do
      for _, s in pairs(per) do slots[s] = true end
    end
    -- the step Variable (obj.iterations counts updates under gradient accumulation; a LossScaleOptimizer's is its inner one's)
    local iterations = rawget(rawget(obj, "inner_optimizer") or obj, "_iterations")
    g.add(prefix .. "/iterations", iterations)
    local lr = rawget(obj, "_learning_rate")
    if is_variable(lr) then g.add(prefix .. "/learning_rate", lr) end
    for _, v in ipairs(rawget(obj, "_variables")) do
      if not slots[v] and v ~= iterations and v ~= lr then g.add(prefix .. "/" .. unique(used, v.name), v) end
    end
    return
  end
  local vars = rawget(obj, "variables")
  if getmetatable(obj) ~= nil and type(vars) == "table" then -- a metric, or any object listing its Variables
    local used = {}
    for _, v in ipairs(vars) do
      if is_variable(v) then g.add(prefix .. "/" .. unique(used, v.name or "variable"), v) end
    end
    return
  end
  if getmetatable(obj) ~= nil then
    binding.error(fmt("Checkpoint: '%s' is an object that holds no Variables tide can track", prefix))
  end
  local keys = {}
  for k in pairs(obj) do
    if type(k) ~= "string" and type(k) ~= "number" then
      binding.error(fmt("Checkpoint: '%s' has a %s key; tables in a checkpoint are keyed by strings or numbers",
        prefix, type(k)))
    end
    keys[#keys + 1] = k
  end
  table.sort(keys, function(a, b)
    if type(a) ~= type(b) then return type(a) == "number" end
    return a < b
  end)
  for _, k in ipairs(keys) do
    walk(obj[k], prefix .. "/" .. (type(k) == "number" and tostring(k - 1) or k), g)
  end
end

-- Every key -> Variable reachable from the checkpoint `root`, with the
-- optimizers' slots under their variables' keys.
local function object_graph(root)
  local g = { vars = {}, keys = {}, by_var = {}, seen = {}, optimizers = {} }
  function g.add(key, v)
    if g.by_var[v] then return end
    if g.vars[key] then binding.error(fmt("Checkpoint: two Variables have the key '%s'", key)) end
    g.vars[key] = v
    g.by_var[v] = key
    g.keys[#g.keys + 1] = key
  end
  for _, name in ipairs(root:_child_names()) do walk(root._children[name], name, g) end
  for _, entry in ipairs(g.optimizers) do
    local opt, prefix = entry[1], entry[2]
    for i, v in ipairs(rawget(opt, "_trainable")) do
      local base = g.by_var[v] and (g.by_var[v] .. "/.OPTIMIZER_SLOT/" .. prefix) or
        (prefix .. "/.UNTRACKED/" .. (i - 1)) -- a variable outside the checkpoint: by its order in the optimizer
      local per = rawget(opt, "_slots")[v] or {}
      local names = {}
      for slot in pairs(per) do names[#names + 1] = slot end
      table.sort(names)
      for _, slot in ipairs(names) do g.add(base .. "/" .. slot, per[slot]) end
    end
  end
  if rawget(root, "save_counter") then g.add("save_counter", root.save_counter) end
  return g
end
M.object_graph = function(ckpt)
  local g = object_graph(ckpt)
  return g.vars, g.keys
end

---------------------------------------------------------------------------
-- Checkpoint
---------------------------------------------------------------------------

local RESERVED = { save = true, write = true, restore = true, read = true, save_counter = true }

-- Checkpoint{name = trackable, ...}: children by name (a model, an
-- optimizer, a Variable, a layer, a metric, another Checkpoint, or a
-- table of those). Read back as fields: ckpt.model.
function Checkpoint:__init(children)
  if children ~= nil and (type(children) ~= "table" or getmetatable(children) ~= nil) then
    binding.error(fmt("Checkpoint: expects a table of named objects {model = ..., optimizer = ...}, got %s",
      describe(children)))
  end
  rawset(self, "_children", {})
  for k, v in pairs(children or {}) do
    if type(k) ~= "string" then
      binding.error(fmt("Checkpoint: objects are named (Checkpoint{model = m}), got a %s key", type(k)))
    end
    if RESERVED[k] or k:sub(1, 1) == "_" or k:find("/", 1, true) then
      binding.error(fmt("Checkpoint: '%s' cannot name an object (reserved, or it starts with '_' or holds '/')", k))
    end
    self._children[k] = v
  end
end

function Checkpoint:__index(k)
  local method = Checkpoint[k]
  if method ~= nil then return method end
  local children = rawget(self, "_children")
  return children and children[k]
end

function Checkpoint:__newindex(k, v)
  if type(k) == "string" and not RESERVED[k] and k:sub(1, 1) ~= "_" and not k:find("/", 1, true) then
    self._children[k] = v -- ckpt.extra = v tracks it, as TF's attribute assignment
  else
    binding.error(fmt("Checkpoint: cannot set '%s'", tostring(k)))
  end
end

function Checkpoint:_child_names()
  local names = {}
  for k in pairs(self._children) do names[#names + 1] = k end
  table.sort(names)
  return names
end

local function save_counter(self)
  local c = rawget(self, "save_counter")
  if c == nil then
    c = init_scope.run(function() return Variable(0, { dtype = "int64", name = "save_counter", trainable = false }) end)
    rawset(self, "save_counter", c)
  end
  return c
end

-- The save counter (a Variable made on first use, as TF's).
Checkpoint._save_counter = save_counter

-- The file a checkpoint path names: path.safetensors (a path already
-- ending in .safetensors is the file itself).
local function file_of(path)
  if path:sub(-12) == ".safetensors" then return path end
  return path .. ".safetensors"
end
M.file_of = file_of
M.FORMAT = FORMAT

-- Remove what saves of files in `dir` named prefix..*..suffix (suffix nil:
-- exactly prefix) left when their process was killed mid-write: temporary
-- files of processes no longer alive (tide_remove_stale_temporaries).
local function remove_stale(dir, prefix, suffix)
  if C.tide_remove_stale_temporaries(dir, prefix, suffix, nil) ~= 0 then binding.raise() end
end
M.remove_stale = remove_stale

-- The folder and name parts of a path.
local function split(path)
  local dir, name = path:match("^(.*)/([^/]*)$")
  if not dir then return ".", path end
  return dir == "" and "/" or dir, name
end
M.split = split

local function check_path(what, path)
  if type(path) ~= "string" or path == "" then
    binding.error(fmt("Checkpoint:%s expects a path (a string), got %s", what, describe(path)))
  end
end

-- write(path): every tracked Variable into path.safetensors (atomically);
-- returns path. Does not count saves (save does).
function Checkpoint:write(path)
  check_path("write", path)
  save_counter(self)
  local g = object_graph(self)
  local tensors = {}
  for key, v in pairs(g.vars) do tensors[key] = v end
  local file = file_of(path)
  local dir, name = split(file)
  if name ~= "" then remove_stale(dir, name, nil) end
  safetensors.save_file(tensors, file, { metadata = { format = FORMAT, version = VERSION } })
  return path
end

-- save(prefix): save_counter + 1, then write(prefix .. "-" .. save_counter);
-- returns that path (TF's numbering: prefix-1, prefix-2, ...).
function Checkpoint:save(prefix)
  check_path("save", prefix)
  local c = save_counter(self)
  init_scope.run(function() c:assign_add(1) end)
  local dir, name = split(prefix)
  if name ~= "" then remove_stale(dir, name .. "-", ".safetensors") end -- an earlier killed save of prefix-<n>
  return self:write(fmt("%s-%d", prefix, c:item()))
end

---------------------------------------------------------------------------
-- Restoring, and its status
---------------------------------------------------------------------------

local Status = {}
Status.__index = Status

local pending = setmetatable({}, { __mode = "k" }) -- statuses with values still waiting for their objects

local function same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

local function shape_text(s)
  local parts = {}
  for i, d in ipairs(s) do parts[i] = tostring(d) end
  return "(" .. table.concat(parts, ", ") .. (#s == 1 and ",)" or ")")
end

-- Assign every value of the file whose object exists now and has none yet.
-- All are checked (dtype, shape) before any is assigned.
function Status:_match()
  local g = object_graph(self._root)
  local todo = {}
  for key, v in pairs(g.vars) do
    if self._unused[key] then
      local dt, shape = self._file:info(key)
      if dt ~= v.dtype then
        binding.error(fmt("Checkpoint.restore: '%s' in '%s' is %s, but the Variable is %s", key, self.path, dt,
          v.dtype))
      end
      local want = v.shape:as_list()
      if not same_shape(shape, want) then
        binding.error(fmt("Checkpoint.restore: '%s' in '%s' has shape %s, but the Variable has shape %s", key,
          self.path, shape_text(shape), shape_text(want)))
      end
      todo[#todo + 1] = { key, v }
    end
  end
  if #todo > 0 then
    init_scope.run(function()
      for _, e in ipairs(todo) do
        e[2]:assign(self._file:get_tensor(e[1]))
        self._unused[e[1]] = nil
        self._restored[e[2]] = true
      end
    end)
  end
  if next(self._unused) == nil then
    pending[self] = nil
    self._file:close()
  end
end

-- Values still waiting: a new layer or optimizer build may be theirs.
local function on_built()
  local list = {}
  for s in pairs(pending) do list[#list + 1] = s end
  for _, s in ipairs(list) do s:_match() end
end
layer_mod.set_on_built(on_built)
optimizer_mod.set_on_built(on_built)

local function sorted_keys(set)
  local out = {}
  for k in pairs(set) do out[#out + 1] = k end
  table.sort(out)
  return out
end

local function listing(keys, limit)
  limit = limit or 10
  local shown = {}
  for i = 1, math.min(#keys, limit) do shown[i] = "'" .. keys[i] .. "'" end
  local more = #keys > limit and fmt(" and %d more", #keys - limit) or ""
  return table.concat(shown, ", ") .. more
end

-- Objects of the checkpoint that exist and got no value from the file.
local function unmatched_objects(self)
  local g = object_graph(self._root)
  local out = {}
  for key, v in pairs(g.vars) do
    if not self._restored[v] and key ~= "save_counter" then out[#out + 1] = key end
  end
  table.sort(out)
  return out
end

-- assert_consumed(): every value in the file went to an object (none waits
-- for a layer or optimizer to build) and every tracked Variable got one.
-- Returns the status.
function Status:assert_consumed()
  if self._nothing then
    binding.error("Checkpoint.restore: no checkpoint was given (path nil); nothing is being restored")
  end
  local unused = sorted_keys(self._unused)
  if #unused > 0 then
    binding.error(fmt("Checkpoint.restore: %d value(s) in '%s' were not matched to any object (not built yet, or " ..
      "missing from this checkpoint's objects): %s", #unused, self.path, listing(unused)))
  end
  return self:assert_existing_objects_matched()
end

-- assert_existing_objects_matched(): every tracked Variable that exists
-- got a value (values for objects not made yet may wait). Returns the status.
function Status:assert_existing_objects_matched()
  if self._nothing then
    binding.error("Checkpoint.restore: no checkpoint was given (path nil); nothing is being restored")
  end
  local missing = unmatched_objects(self)
  if #missing > 0 then
    binding.error(fmt("Checkpoint.restore: %d object(s) of the checkpoint have no value in '%s': %s", #missing,
      self.path, listing(missing)))
  end
  return self
end

-- expect_partial(): silence the warning about values left unused when the
-- status is collected. Returns the status.
function Status:expect_partial()
  self._warning.quiet = true
  return self
end

-- The keys of the file not yet matched to an object (sorted).
function Status:unused_keys() return sorted_keys(self._unused) end

-- TF warns when a partial restore's status goes away unchecked; so does
-- tide (a table's __gc does not run in LuaJIT: a cdata finalizer does it).
-- The finalizer sees only `warning`, never the status: LuaJIT's weak keys
-- are no ephemerons, so a finalizer that reached its own cdata through the
-- status would keep both (and the open file) alive for ever.
local function arm_warning(status)
  local warning = { unused = status._unused, path = status.path, quiet = false }
  status._warning = warning
  status._sentinel = ffi.gc(ffi.new("char[1]"), function()
    if warning.quiet then return end
    local unused = sorted_keys(warning.unused)
    if #unused > 0 then
      io.stderr:write(fmt("tide: warning: a checkpoint restore from '%s' left %d value(s) unused: %s (call " ..
        "expect_partial() on the status to silence this)\n", warning.path, #unused, listing(unused, 5)))
    end
  end)
end

-- restore(path): values from path (as save or write returned it) into the
-- tracked objects; values for objects not built yet wait for their build.
-- restore(nil) restores nothing (TF's pattern with latest_checkpoint).
function Checkpoint:restore(path)
  local status = setmetatable({ _root = self, _unused = {}, _restored = setmetatable({}, { __mode = "k" }) },
    Status)
  if path == nil then
    status._nothing = true
    status._warning = { quiet = true }
    return status
  end
  check_path("restore", path)
  local file = file_of(path)
  status.path = file
  if not exists(file) and tf_checkpoint.prefix_of(path) then
    binding.error(fmt("Checkpoint.restore: '%s' is TensorFlow's checkpoint ('%s.index'); tide.train.Checkpoint " ..
      "restores tide's own (.safetensors). Read TF's values with tide.train.load_checkpoint", path, path))
  end
  local f = safetensors.safe_open(file)
  local meta = f:metadata()
  if meta.format ~= FORMAT then
    f:close()
    binding.error(fmt("Checkpoint.restore: '%s' is not a tide checkpoint (its metadata says format %s); " ..
      "model:load_weights reads weights files", file, meta.format and ("'" .. meta.format .. "'") or "none"))
  end
  if tonumber(meta.version) == nil or tonumber(meta.version) > tonumber(VERSION) then
    f:close()
    binding.error(fmt("Checkpoint.restore: '%s' has checkpoint format version %s; this tide reads version %s " ..
      "and older", file, tostring(meta.version), VERSION))
  end
  status._file = f
  for _, key in ipairs(f:keys()) do status._unused[key] = true end
  if status._unused.save_counter then save_counter(self) end
  pending[status] = true
  local ok, err = pcall(Status._match, status)
  if not ok then
    pending[status] = nil
    f:close()
    error(err, 0)
  end
  arm_warning(status)
  return status
end

-- read(path): restore, as TF's read (the counterpart of write).
Checkpoint.read = Checkpoint.restore

function Checkpoint:__tostring()
  return fmt("<tide.train.Checkpoint %s>", table.concat(self:_child_names(), ", "))
end

return M
