-- stdlib/tide/distribute/init.lua — tide.distribute (tf.distribute): the face that hands on
-- the collectives, the strategies (default, OneDevice, MultiWorkerMirrored over MPI, Mirrored) and input helpers.
--   collective.lua    all_reduce_sum (the registry op and its gradient), broadcast, barrier
--   strategy.lua      the strategy base, the current strategy, the default one
--   input.lua         InputContext; each worker its part of every global batch
--   one_device.lua    OneDeviceStrategy
--   multi_worker.lua  MultiWorkerMirroredStrategy (one process per worker, `mpirun -np N tide train.lua`)
--   fit.lua           fit and compile under a multi-worker strategy (hooks in tide.models)
--   mirrored.lua      MirroredStrategy (several devices of one process)
local collective = require "tide.distribute.collective"
local strategy = require "tide.distribute.strategy"
local input = require "tide.distribute.input"
local one_device = require "tide.distribute.one_device"
local multi_worker = require "tide.distribute.multi_worker"
require "tide.distribute.fit" -- sets the hooks fit and compile call

local M = {}

-- Collectives (every worker must make the same calls in the same order).
for _, name in ipairs { "worker_index", "num_workers", "all_reduce_sum", "all_reduce_op", "collective_calls",
                        "broadcast", "barrier" } do
  M[name] = collective[name]
end

-- Strategies.
M.get_strategy, M.has_strategy = strategy.get_strategy, strategy.has_strategy
M.compute_average_loss, M.ReduceOp = strategy.compute_average_loss, strategy.ReduceOp
M.OneDeviceStrategy = one_device.OneDeviceStrategy
M.MultiWorkerMirroredStrategy = multi_worker.MultiWorkerMirroredStrategy

-- Input.
M.InputContext, M.auto_shard, M.all_have = input.InputContext, input.auto_shard, input.all_have

-- The strategy base and running with a strategy current (as distribute/mirrored.lua uses them).
M._Strategy, M._within, M._check_fn = strategy.Strategy, strategy.within, strategy.check_fn

-- MirroredStrategy and its cross-device ops (distribute/mirrored.lua).
-- _on_cpu_replicas(n): n replicas all on the CPU, for tests on machines without GPUs.
local mirrored = require "tide.distribute.mirrored"
for _, name in ipairs { "MirroredStrategy", "NcclAllReduce", "ReductionToOneDevice", "PerReplica", "is_per_replica",
                        "_on_cpu_replicas" } do
  M[name] = mirrored[name]
end

return M
