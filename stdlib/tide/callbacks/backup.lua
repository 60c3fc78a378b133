-- stdlib/tide/callbacks/backup.lua — BackupAndRestore (Keras 3's): fit backs
-- up its state every epoch (or n steps) and a restarted fit resumes from it.
--
-- The backup is one file, <backup_dir>/latest.safetensors, written atomically
-- (temporary file, fsync, rename): the model's weights, the optimizer's
-- variables (iterations, learning rate, slots), and in its metadata the
-- epoch and step to resume at and the global random stream's counters, so
-- that shuffling and dropout after a resume repeat the interrupted run's.
-- Under a multi-worker strategy the chief writes it and every worker restores
-- it (backup_dir must be on a file system they share, as in TF).
local binding = require "tide.binding"
local convert = require "tide.convert"
local safetensors = require "tide.safetensors"
local callback = require "tide.callbacks.callback"
local monitor = require "tide.callbacks.monitor"
local exists = require("tide.file").exists

local ffi, C = binding.ffi, binding.C
local fmt = string.format

local M = {}

local FORMAT = "tide.BackupAndRestore"
local VERSION = "1"
local FILE = "latest.safetensors"

local BackupAndRestore = callback.Callback:extend("BackupAndRestore")
M.BackupAndRestore = BackupAndRestore

local NAMES = { "backup_dir", "save_freq", "double_checkpoint", "delete_checkpoint" }

-- BackupAndRestore{backup_dir=, save_freq="epoch" or n steps, delete_checkpoint=true}
-- (also BackupAndRestore(backup_dir, {...})).
function BackupAndRestore:__init(...)
  local o = callback.options("BackupAndRestore", NAMES, ...)
  local backup_dir = o.backup_dir
  if type(backup_dir) ~= "string" or backup_dir == "" then
    binding.error("BackupAndRestore: backup_dir must be a folder name, e.g. " ..
      "tide.callbacks.BackupAndRestore{backup_dir = \"/tmp/backup\"}")
  end
  if o.double_checkpoint then
    binding.error("BackupAndRestore: double_checkpoint is not supported (the backup is written atomically, so " ..
      "a kill mid-write leaves the previous one whole)")
  end
  local freq = o.save_freq == nil and "epoch" or o.save_freq
  if freq ~= "epoch" and (type(freq) ~= "number" or freq < 1 or freq % 1 ~= 0) then
    binding.error("BackupAndRestore: save_freq must be \"epoch\" or a positive integer number of steps, got " ..
      tostring(freq))
  end
  if o.delete_checkpoint ~= nil and type(o.delete_checkpoint) ~= "boolean" then
    binding.error("BackupAndRestore: delete_checkpoint must be true or false, got " .. tostring(o.delete_checkpoint))
  end
  self.backup_dir = backup_dir:gsub("/+$", "")
  if self.backup_dir == "" then self.backup_dir = "/" end
  self.save_freq = freq
  self.delete_checkpoint = o.delete_checkpoint ~= false
  self.path = self.backup_dir .. "/" .. FILE
end

---------------------------------------------------------------------------
-- Helpers
---------------------------------------------------------------------------

-- The multi-worker strategy fit runs under, or nil (tide.distribute loaded
-- lazily: it sits on this floor and requires the models that require us).
local function strategy_of(model)
  local s = rawget(model, "_distribute_strategy")
  if s == nil then
    local d = package.loaded["tide.distribute"]
    s = d and d.has_strategy() and d.get_strategy() or nil
  end
  if s and s.num_replicas_in_sync > 1 and s._sum then return s end
  return nil
end

-- The global random stream's next counter (reserving none).
local key_out, counter_out = ffi.new("uint64_t[1]"), ffi.new("uint64_t[1]")
local function rng_counter()
  C.tide_random_reserve(0, key_out, counter_out)
  return counter_out[0]
end
local function u64_text(u) return (tostring(ffi.cast("uint64_t", u)):gsub("ULL$", "")) end
local function u64_parse(s)
  if type(s) ~= "string" or not s:match("^%d+$") then return nil end
  local u = ffi.new("uint64_t", 0)
  for d in s:gmatch("%d") do u = u * 10 + tonumber(d) end
  return u
end

-- Move the global stream forward to `target` (it cannot go back: false then).
local function advance_rng(target)
  local now = rng_counter()
  if target < now then return false end
  if target > now then C.tide_random_reserve(target - now, key_out, counter_out) end
  return true
end

local function optimizer_of(model)
  local opt = rawget(model, "optimizer")
  if opt == nil then binding.error("BackupAndRestore: the model is not compiled (compile it before fit)") end
  return opt
end

---------------------------------------------------------------------------
-- Writing (the chief)
---------------------------------------------------------------------------

function BackupAndRestore:_is_chief()
  local s = strategy_of(self.model)
  return s == nil or s.is_chief
end

-- Back up: resume at `epoch`, step `step` (0: the epoch's start).
function BackupAndRestore:_save(epoch, step)
  if not self:_is_chief() then return end
  local model = self.model
  local tensors = {}
  for i, v in ipairs(model.weights) do tensors[fmt("model/%d/%s", i - 1, v.name)] = v end
  local opt_vars = optimizer_of(model).variables
  for i, v in ipairs(opt_vars) do tensors[fmt("optimizer/%d/%s", i - 1, v.name)] = v end
  if C.tide_make_dirs(self.backup_dir) ~= 0 then binding.raise() end
  -- a backup a kill cut short leaves a temporary file: remove those of dead processes
  if C.tide_remove_stale_temporaries(self.backup_dir, FILE, nil, nil) ~= 0 then binding.raise() end
  safetensors.save_file(tensors, self.path, { metadata = {
    format = FORMAT, version = VERSION, epoch = tostring(epoch), step = tostring(step),
    model_weights = tostring(#model.weights), optimizer_variables = tostring(#opt_vars),
    rng_counter = u64_text(rng_counter()), epoch_rng_counter = u64_text(self._epoch_rng or rng_counter()),
  } })
end

---------------------------------------------------------------------------
-- Restoring (every worker)
---------------------------------------------------------------------------

-- Read the backup into the model and optimizer; returns epoch, step and the
-- metadata, or nil when there is none.
function BackupAndRestore:_load()
  if not exists(self.path) then return nil end
  local model, what = self.model, fmt("BackupAndRestore: the backup '%s'", self.path)
  if not rawget(model, "built") then
    binding.error(fmt("%s exists, but the model is not built: build it (give Input shapes, or call it once) " ..
      "before fit so the backup can be restored", what))
  end
  local f = safetensors.safe_open(self.path)
  local ok, res = pcall(function()
    local meta = f:metadata()
    if meta.format ~= FORMAT then
      binding.error(fmt("%s is not a BackupAndRestore backup (its metadata says format %s)", what,
        tostring(meta.format)))
    end
    if tonumber(meta.version) == nil or tonumber(meta.version) > tonumber(VERSION) then
      binding.error(fmt("%s has version %s; this tide reads version %s", what, tostring(meta.version), VERSION))
    end
    local by_prefix = { model = {}, optimizer = {} }
    for _, key in ipairs(f:keys()) do
      local group, pos = key:match("^(%a+)/(%d+)/")
      if not (group and by_prefix[group]) then binding.error(fmt("%s holds '%s', which is not a backup's key", what, key)) end
      by_prefix[group][tonumber(pos) + 1] = key
    end
    local opt = optimizer_of(model)
    -- slots are made at the first step; make them now so they can be filled
    if #model.trainable_weights > 0 then opt:build(model.trainable_weights) end
    local targets = { model = model.weights, optimizer = opt.variables }
    local values = {}
    for group, vars in pairs(targets) do
      local keys = by_prefix[group]
      if #keys ~= #vars or table.maxn(keys) ~= #vars then
        binding.error(fmt("%s holds %d %s variables, but this %s has %d: it was written for another model; " ..
          "delete '%s' to start over", what, table.maxn(keys), group, group, #vars, self.backup_dir))
      end
      for i, v in ipairs(vars) do
        local t = f:get_tensor(keys[i])
        local want = v.shape:as_list()
        local got = t.shape:as_list()
        local same = #want == #got and t.dtype == v.dtype
        for d = 1, #want do same = same and want[d] == got[d] end
        if not same then
          binding.error(fmt("%s: %s variable %d ('%s') is %s %s in the backup but %s %s here: it was written for " ..
            "another model; delete '%s' to start over", what, group, i - 1, v.name, t.dtype,
            table.concat(got, "x"), v.dtype, table.concat(want, "x"), self.backup_dir))
        end
        values[#values + 1] = { v, t }
      end
    end
    return { meta = meta, values = values }
  end)
  f:close()
  if not ok then error(res, 0) end
  for _, e in ipairs(res.values) do e[1]:assign(e[2]) end -- all checked first: nothing set on a mismatch
  local meta = res.meta
  return tonumber(meta.epoch), tonumber(meta.step), meta
end

function BackupAndRestore:on_train_begin()
  self.steps_since_save = 0
  self._epoch_rng = nil
  self._rng_at_step = nil
  local epoch, step, meta = self:_load()
  local s = strategy_of(self.model)
  if s then
    -- every worker must resume at the same point, or the collectives mismatch
    local d = package.loaded["tide.distribute"]
    local mine = { epoch and 1 or 0, epoch or 0, step or 0 }
    local sums = d.all_reduce_sum(convert.tensor(mine, "float64")):totable()
    local n = s.num_replicas_in_sync
    for i = 1, 3 do
      if sums[i] ~= n * mine[i] then
        binding.error(fmt("BackupAndRestore: the workers see different backups in '%s' (worker %d: %s); " ..
          "backup_dir must be on a file system every worker shares", self.backup_dir, s.worker_index,
          epoch and fmt("epoch %d, step %d", epoch, step) or "none"))
      end
    end
  end
  if epoch == nil then return end
  rawset(self.model, "_initial_epoch", epoch)
  rawset(self.model, "_initial_step", step)
  -- the random stream: to where the interrupted run's epoch began (its
  -- shuffle is drawn again), then, at the first step run, to the backup's point
  local target = u64_parse(step > 0 and meta.epoch_rng_counter or meta.rng_counter)
  if target and not advance_rng(target) then
    monitor.warn(fmt("BackupAndRestore: this run has drawn more random numbers before fit than the interrupted " ..
      "one had at the backup, so shuffling and dropout after the resume differ from it (set the same seed and " ..
      "build the model the same way to repeat it)"))
  elseif step > 0 then
    self._rng_at_step = u64_parse(meta.rng_counter)
  end
end

-- (after a mid-epoch resume the stream stands at the interrupted epoch's start here)
function BackupAndRestore:on_epoch_begin(epoch)
  self.current_epoch = epoch
  self._epoch_rng = rng_counter()
end

function BackupAndRestore:on_train_batch_begin(step)
  if self._rng_at_step then -- the first step after a mid-epoch resume: its shuffle is drawn
    advance_rng(self._rng_at_step)
    self._rng_at_step = nil
  end
end

function BackupAndRestore:on_train_batch_end(step)
  if self.save_freq == "epoch" then return end
  self.steps_since_save = self.steps_since_save + 1
  if self.steps_since_save >= self.save_freq then
    self.steps_since_save = 0
    local epoch, steps = self.current_epoch or 0, self.params and self.params.steps
    if steps and step + 1 >= steps then self:_save(epoch + 1, 0) else self:_save(epoch, step + 1) end
  end
end

function BackupAndRestore:on_epoch_end(epoch)
  if self.save_freq == "epoch" then self:_save(epoch + 1, 0) end
end

-- fit ended normally: the backup has served (Keras deletes backup_dir; tide
-- removes its own file and the folder when that leaves it empty).
function BackupAndRestore:on_train_end()
  if not self.delete_checkpoint or not self:_is_chief() then return end
  if C.tide_remove_stale_temporaries(self.backup_dir, FILE, nil, nil) ~= 0 then binding.raise() end
  if exists(self.path) then
    local ok, err = os.remove(self.path)
    if not ok then binding.error(fmt("BackupAndRestore: cannot delete the backup '%s': %s", self.path, err)) end
  end
  os.remove(self.backup_dir) -- only when empty (remove(3) fails on a folder with files in it)
end

return M
