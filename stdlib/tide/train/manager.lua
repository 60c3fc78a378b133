-- stdlib/tide/train/manager.lua — tide.train.CheckpointManager and latest_checkpoint
-- (TF 2's): numbered checkpoints in a folder, the newest max_to_keep kept (plus one
-- every n hours), listed in an index file `checkpoint` in TF's text format, replaced atomically.
--
--   local manager = tide.train.CheckpointManager(ckpt, "/tmp/run", {max_to_keep = 3})
--   ckpt:restore(manager.latest_checkpoint)     -- nil the first time: restores nothing
--   manager:save()                              -- "/tmp/run/ckpt-1"
local binding = require "tide.binding"
local class = require "tide.class"
local checkpoint = require "tide.train.checkpoint"
local init_scope = require "tide.initializers.init_scope"
local variable = require "tide.variable"
local exists = require("tide.file").exists

local ffi, C = binding.ffi, binding.C
local fmt = string.format

local M = {}

local INDEX = "checkpoint"

local function join(dir, name)
  if name:sub(1, 1) == "/" then return name end
  if dir:sub(-1) == "/" then return dir .. name end
  return dir .. "/" .. name
end

-- A path relative to dir when it lies inside it (TF writes them so).
local function relative(dir, path)
  local prefix = dir:sub(-1) == "/" and dir or dir .. "/"
  if path:sub(1, #prefix) == prefix then return path:sub(#prefix + 1) end
  return path
end

local function quote(s)
  return '"' .. s:gsub('[\\"]', "\\%0"):gsub("\n", "\\n") .. '"'
end

local function unquote(s)
  return (s:gsub("\\(.)", function(c) return c == "n" and "\n" or c end))
end

-- The index file of dir, parsed: { model_checkpoint_path, all = {paths},
-- timestamps = {numbers}, last_preserved_timestamp }, paths joined to dir; nil
-- when there is none.
local function read_index(dir)
  binding.check_file(join(dir, INDEX)) -- refused is an error, not "no index"
  local f = binding.open_file(join(dir, INDEX), "rb")
  if not f then return nil end
  local text = f:read("*a")
  f:close()
  local state = { all = {}, timestamps = {} }
  for line in text:gmatch("[^\n]+") do
    local key, value = line:match("^%s*([%w_]+):%s*(.-)%s*$")
    if key then
      local str = value:match('^"(.*)"$')
      if key == "model_checkpoint_path" and str then
        state.model_checkpoint_path = join(dir, unquote(str))
      elseif key == "all_model_checkpoint_paths" and str then
        state.all[#state.all + 1] = join(dir, unquote(str))
      elseif key == "all_model_checkpoint_timestamps" and tonumber(value) then
        state.timestamps[#state.timestamps + 1] = tonumber(value)
      elseif key == "last_preserved_timestamp" and tonumber(value) then
        state.last_preserved_timestamp = tonumber(value)
      end
    end
  end
  return state
end
M.read_index = read_index

local function write_index(dir, latest, paths, timestamps, last_preserved)
  local lines = { "model_checkpoint_path: " .. quote(relative(dir, latest)) }
  for _, p in ipairs(paths) do lines[#lines + 1] = "all_model_checkpoint_paths: " .. quote(relative(dir, p)) end
  for _, t in ipairs(timestamps) do lines[#lines + 1] = fmt("all_model_checkpoint_timestamps: %.17g", t) end
  lines[#lines + 1] = fmt("last_preserved_timestamp: %.17g", last_preserved)
  local text = table.concat(lines, "\n") .. "\n"
  if C.tide_write_file_atomic(join(dir, INDEX), text, #text) ~= 0 then binding.raise() end
end

-- latest_checkpoint(dir): the newest checkpoint's path in dir (per its
-- index file), or nil when there is none or its file is gone.
function M.latest_checkpoint(dir)
  if type(dir) ~= "string" or dir == "" then
    binding.error(fmt("latest_checkpoint: expects a folder path, got %s", type(dir)))
  end
  local state = read_index(dir)
  local path = state and state.model_checkpoint_path
  -- tide's checkpoint file, or TF's index (tf.train.latest_checkpoint of a TF folder)
  if path and (exists(checkpoint.file_of(path)) or exists(path .. ".index")) then return path end
  return nil
end

---------------------------------------------------------------------------
-- CheckpointManager
---------------------------------------------------------------------------

local CheckpointManager = class("CheckpointManager")
M.CheckpointManager = CheckpointManager

local OPTIONS = { max_to_keep = true, keep_checkpoint_every_n_hours = true, checkpoint_name = true,
  step_counter = true, checkpoint_interval = true }

-- The value of a step counter (a Variable, an integer tensor or a number).
local function step_value(counter)
  if variable.is_variable(counter) then counter = counter:read_value() end
  if binding.istensor(counter) then counter = counter:item() end
  return counter
end

-- CheckpointManager(ckpt, directory, {max_to_keep=5, keep_checkpoint_every_n_hours=nil,
-- checkpoint_name="ckpt", step_counter=nil, checkpoint_interval=nil}):
-- max_to_keep=false keeps every checkpoint; with checkpoint_interval (which
-- needs step_counter, a Variable), save writes only when the counter moved
-- at least that many steps since the last checkpoint (TF's rule).
-- Checkpoints listed in the folder's index (an earlier run's) are taken over.
function CheckpointManager:__init(ckpt, directory, opts)
  if not class.is_instance(ckpt, checkpoint.Checkpoint) then
    binding.error(fmt("CheckpointManager: the first argument must be a tide.train.Checkpoint, got %s", type(ckpt)))
  end
  if type(directory) ~= "string" or directory == "" then
    binding.error(fmt("CheckpointManager: directory must be a folder path, got %s", type(directory)))
  end
  if opts ~= nil and type(opts) ~= "table" then
    binding.error(fmt("CheckpointManager: the third argument is an options table, got %s", type(opts)))
  end
  opts = opts or {}
  for k in pairs(opts) do
    if not OPTIONS[k] then
      binding.error(fmt("CheckpointManager: unknown option '%s' (expected: max_to_keep, " ..
        "keep_checkpoint_every_n_hours, checkpoint_name, step_counter, checkpoint_interval)", tostring(k)))
    end
  end
  local keep = opts.max_to_keep
  if keep == nil then keep = 5 end
  if keep ~= false and (type(keep) ~= "number" or keep < 1 or keep ~= math.floor(keep)) then
    binding.error(fmt("CheckpointManager: max_to_keep must be a positive integer (or false to keep all), got %s",
      tostring(keep)))
  end
  local hours = opts.keep_checkpoint_every_n_hours
  if hours ~= nil and (type(hours) ~= "number" or not (hours > 0)) then
    binding.error(fmt("CheckpointManager: keep_checkpoint_every_n_hours must be a positive number, got %s",
      tostring(hours)))
  end
  local name = opts.checkpoint_name or "ckpt"
  if type(name) ~= "string" or name == "" or name:find("/", 1, true) then
    binding.error(fmt("CheckpointManager: checkpoint_name must be a file name, got %s", tostring(name)))
  end
  local interval = opts.checkpoint_interval
  if interval ~= nil then
    if type(interval) ~= "number" or interval ~= math.floor(interval) or interval < 0 then
      binding.error(fmt("CheckpointManager: checkpoint_interval must be a non-negative integer, got %s",
        tostring(interval)))
    end
    if opts.step_counter == nil then
      binding.error("CheckpointManager: checkpoint_interval needs step_counter (a Variable counting steps)")
    end
  end
  local counter = opts.step_counter
  if counter ~= nil and not variable.is_variable(counter) and not binding.istensor(counter) then
    binding.error(fmt("CheckpointManager: step_counter must be a Variable (or an integer tensor), got %s",
      type(counter)))
  end
  self._checkpoint = ckpt
  self.checkpoint_interval = interval
  self._step_counter = counter
  self._last_checkpoint_step = nil
  self.directory = directory
  self.max_to_keep = keep
  self.keep_checkpoint_every_n_hours = hours
  self.checkpoint_name = name
  self._prefix = join(directory, name)
  self._timestamps = {}
  self.checkpoints = {}
  local state = read_index(directory)
  local now = C.tide_wall_clock_seconds()
  self._last_preserved = state and state.last_preserved_timestamp or now
  if state then
    for i, p in ipairs(state.all) do
      if exists(checkpoint.file_of(p)) then
        self.checkpoints[#self.checkpoints + 1] = p
        self._timestamps[#self._timestamps + 1] = state.timestamps[i] or now
      end
    end
  end
  self.latest_checkpoint = self.checkpoints[#self.checkpoints]
end

-- Drop the oldest checkpoints beyond max_to_keep from the list; delete
-- their files unless one is kept for keep_checkpoint_every_n_hours.
-- Returns the files to delete (after the index no longer names them).
local function sweep(self)
  local doomed = {}
  if not self.max_to_keep then return doomed end
  while #self.checkpoints > self.max_to_keep do
    local path = table.remove(self.checkpoints, 1)
    local stamp = table.remove(self._timestamps, 1)
    local hours = self.keep_checkpoint_every_n_hours
    if hours and stamp - self._last_preserved >= hours * 3600 then
      self._last_preserved = stamp -- kept on disk, no longer managed (TF's rule)
    else
      doomed[#doomed + 1] = path
    end
  end
  return doomed
end

-- save({checkpoint_number=, check_interval=true}): write the checkpoint as
-- <directory>/<name>-<n> (n: checkpoint_number, else the checkpoint's save
-- counter after adding one), update the index atomically, then delete what
-- max_to_keep drops. Returns the path, or nil when checkpoint_interval says
-- it is too early (check_interval=false saves anyway, unless the step is
-- the one last saved).
function CheckpointManager:save(opts)
  if opts ~= nil and type(opts) ~= "table" then
    binding.error(fmt("CheckpointManager:save: expects an options table {checkpoint_number=}, got %s", type(opts)))
  end
  opts = opts or {}
  for k in pairs(opts) do
    if k ~= "checkpoint_number" and k ~= "check_interval" then
      binding.error(fmt("CheckpointManager:save: unknown option '%s' (expected: checkpoint_number, check_interval)",
        tostring(k)))
    end
  end
  local check_interval = opts.check_interval
  if check_interval ~= nil and type(check_interval) ~= "boolean" then
    binding.error(fmt("CheckpointManager:save: check_interval must be a boolean, got %s", type(check_interval)))
  end
  if self.checkpoint_interval ~= nil then
    local current = step_value(self._step_counter)
    local last = self._last_checkpoint_step
    if last ~= nil then
      if current == last then return nil end
      if check_interval ~= false and current < last + self.checkpoint_interval then return nil end
    end
    self._last_checkpoint_step = current
  end
  local n = opts.checkpoint_number
  if n ~= nil then
    if type(n) == "userdata" or type(n) == "cdata" then n = n:item() end
    if type(n) ~= "number" or n ~= math.floor(n) or n < 0 then
      binding.error(fmt("CheckpointManager:save: checkpoint_number must be a non-negative integer, got %s",
        tostring(n)))
    end
  end
  if C.tide_make_dirs(self.directory) ~= 0 then binding.raise() end
  -- what saves killed mid-write left: this manager's checkpoint files and its index
  checkpoint.remove_stale(self.directory, self.checkpoint_name .. "-", ".safetensors")
  checkpoint.remove_stale(self.directory, INDEX, nil)
  local ckpt = self._checkpoint
  local counter = ckpt:_save_counter()
  init_scope.run(function() counter:assign_add(1) end)
  if n == nil then n = counter:item() end
  local path = fmt("%s-%d", self._prefix, n)
  ckpt:write(path)
  local now = C.tide_wall_clock_seconds()
  for i = #self.checkpoints, 1, -1 do -- a number saved again replaces its entry
    if self.checkpoints[i] == path then
      table.remove(self.checkpoints, i)
      table.remove(self._timestamps, i)
    end
  end
  self.checkpoints[#self.checkpoints + 1] = path
  self._timestamps[#self._timestamps + 1] = now
  local doomed = sweep(self)
  write_index(self.directory, path, self.checkpoints, self._timestamps, self._last_preserved)
  for _, p in ipairs(doomed) do os.remove(checkpoint.file_of(p)) end
  self.latest_checkpoint = path
  return path
end

-- restore_or_initialize(): restore the latest checkpoint when there is one
-- (returns its path), else leave the objects as they are (returns nil).
function CheckpointManager:restore_or_initialize()
  local latest = self.latest_checkpoint
  if latest == nil then return nil end
  self._checkpoint:restore(latest)
  return latest
end

function CheckpointManager:__tostring()
  return fmt("<tide.train.CheckpointManager '%s', %d checkpoint(s)>", self.directory, #self.checkpoints)
end

return M
