-- stdlib/tide/train/init.lua — tide.train (TF's tf.train, the saving part):
-- Checkpoint, CheckpointManager, latest_checkpoint, load_checkpoint, list_variables.
local checkpoint = require "tide.train.checkpoint"
local manager = require "tide.train.manager"
local reader = require "tide.train.reader"

return {
  Checkpoint = checkpoint.Checkpoint,
  CheckpointManager = manager.CheckpointManager,
  latest_checkpoint = manager.latest_checkpoint,
  load_checkpoint = reader.load_checkpoint,
  list_variables = reader.list_variables,
  CheckpointReader = reader.CheckpointReader,
}
