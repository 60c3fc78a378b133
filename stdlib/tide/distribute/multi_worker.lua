-- stdlib/tide/distribute/multi_worker.lua — MultiWorkerMirroredStrategy over MPI (one
-- process per worker): its collectives, and the hooks that mirror variables and sum gradients.
local binding = require "tide.binding"
local variable = require "tide.variable"
local math_ops = require "tide.ops.math"
local optimizer = require "tide.optimizers.optimizer"
local collective = require "tide.distribute.collective"
local strategy = require "tide.distribute.strategy"

local C = binding.C
local is_variable = variable.is_variable
local Strategy, current = strategy.Strategy, strategy.current
local join = collective.join
local fmt = string.format

local M = {}

local MWMS = setmetatable({}, { __index = Strategy })
MWMS.__index = MWMS
MWMS.__tostring = Strategy.__tostring

function MWMS:_sum(x) return collective.all_reduce_sum(x) end
function MWMS:_sum_list(list)
  if #list == 0 then return {} end
  return collective.sum_list(list, self.bytes_per_pack, self.name .. ":all_reduce")
end

-- Give existing variables the chief's values (scope does this for the
-- variables created inside it).
function MWMS:broadcast_variables(vars)
  if type(vars) ~= "table" then
    binding.error(fmt("%s:broadcast_variables: expected a list of Variables, got %s", self.name, type(vars)))
  end
  for i, v in ipairs(vars) do
    if not is_variable(v) then
      binding.error(fmt("%s:broadcast_variables: entry %d is a %s, not a Variable", self.name, i, type(v)))
    end
    v:assign(collective.broadcast(v))
  end
end

-- MultiWorkerMirroredStrategy{timeout=, communication_options=}: one
-- replica per process of the world that mpirun started (a process started
-- alone is a world of one). Variables created under scope or run start from
-- the chief's values; gradients that an optimizer applies under scope or run
-- are summed over the workers (as TF's: scale each worker's loss by 1/global
-- batch, compute_average_loss). timeout: seconds a collective waits for the
-- other workers before it fails and the job ends (default
-- TIDE_DIST_TIMEOUT, else 300; math.huge for no limit).
-- communication_options = {bytes_per_pack=, timeout_seconds=} (TF's
-- CommunicationOptions): the bucket size gradients are packed into, one MPI
-- call per bucket (0 or nil: 25 MiB, PyTorch DDP's), and the timeout again.
function M.MultiWorkerMirroredStrategy(opts)
  local what = "tide.distribute.MultiWorkerMirroredStrategy"
  if opts ~= nil and type(opts) ~= "table" then
    binding.error(what .. ": expected an options table or nothing, got " .. type(opts))
  end
  local bytes_per_pack, timeout
  local function set_timeout(name, v)
    if type(v) ~= "number" or not (v > 0) then
      binding.error(fmt("%s: %s must be a positive number of seconds (math.huge for no limit), got %s", what, name,
        tostring(v)))
    end
    timeout = v
  end
  for k, v in pairs(opts or {}) do
    if k == "timeout" then set_timeout("timeout", v)
    elseif k == "communication_options" then
      if type(v) ~= "table" then
        binding.error(what .. ": communication_options must be a table {bytes_per_pack=, timeout_seconds=}")
      end
      for ck, cv in pairs(v) do
        if ck == "timeout_seconds" then set_timeout("timeout_seconds", cv)
        elseif ck ~= "bytes_per_pack" then
          binding.error(fmt("%s: unknown communication option '%s'", what, tostring(ck)))
        elseif type(cv) ~= "number" or cv < 0 or cv % 1 ~= 0 then
          binding.error(fmt("%s: bytes_per_pack must be a whole number of bytes >= 0, got %s", what, tostring(cv)))
        else
          bytes_per_pack = cv
        end
      end
    else
      binding.error(fmt("%s: unknown option '%s'", what, tostring(k)))
    end
  end
  join()
  if timeout and C.tide_dist_set_timeout(timeout) ~= 0 then binding.raise() end
  local rank, size = C.tide_dist_rank(), C.tide_dist_size()
  local s = setmetatable({ num_replicas_in_sync = size, worker_index = rank, is_chief = rank == 0,
                           uses_mpi = C.tide_dist_uses_mpi() ~= 0, bytes_per_pack = bytes_per_pack }, MWMS)
  s.name = "MultiWorkerMirroredStrategy"
  s.extended = s
  return s
end

-- The hooks: under a multi-worker strategy, new variables take the chief's
-- values and applied gradients are summed over the workers.
variable.on_create = function(v, h)
  local s = current()
  if s and getmetatable(s) == MWMS and s.uses_mpi and h.dt ~= C.TIDE_STRING then
    if C.tide_dist_broadcast(h, 0) ~= 0 then binding.raise() end
  end
end

-- This worker's rows in fit's current step: one Variable for the process
-- (every strategy shares the world), so a step traced once reads it anew.
local fit_rows = nil

-- That Variable, made at fit's first step under a multi-worker strategy.
function M.fit_rows()
  if fit_rows == nil then
    local saved = current()
    strategy.set_current(nil) -- not a mirrored variable: no broadcast
    local ok, v = pcall(variable.Variable, 0, { dtype = "float32", trainable = false, name = "distribute_rows" })
    strategy.set_current(saved)
    if not ok then error(v, 0) end
    fit_rows = v
  end
  return fit_rows
end

-- In fit's step each worker's gradients are means over its own rows, so
-- they are weighted by its rows (a Variable fit sets before each step, read
-- by the traced step when it runs) and the sum divided by the rows of every
-- worker, summed in the same call: the mean over the global batch, however
-- it split. A custom loop's are summed (scale the loss by 1/global batch:
-- compute_average_loss).
optimizer.aggregate_gradients = function(gs, vs, opt)
  local s = current()
  if s and s._aggregate then return s:_aggregate(gs, vs, opt) end -- MirroredStrategy (mirrored.lua)
  if not (s and getmetatable(s) == MWMS) then return gs end
  if s.num_replicas_in_sync == 1 and not s._fit_step then return gs end -- the sum of one
  local rows = s._fit_step and fit_rows
  if not rows then return s:_sum_list(gs) end
  local list, n = {}, #gs
  local r = variable.read(rows)
  for i = 1, n do
    local g = gs[i]
    list[i] = g * (g.dtype == r.dtype and r or math_ops.cast(r, g.dtype))
  end
  list[n + 1] = r
  local sums = s:_sum_list(list)
  local total, out = sums[n + 1], {}
  for i = 1, n do out[i] = sums[i] / (sums[i].dtype == total.dtype and total or math_ops.cast(total, sums[i].dtype)) end
  return out
end

-- Whether s is a MultiWorkerMirroredStrategy.
function M.is_multi_worker(s) return getmetatable(s) == MWMS end

return M
