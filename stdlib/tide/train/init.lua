-- stdlib/tide/train/init.lua — tide.train (TF's tf.train, the saving part):
-- Checkpoint, CheckpointManager and latest_checkpoint.
local checkpoint = require "tide.train.checkpoint"
local manager = require "tide.train.manager"

return {
  Checkpoint = checkpoint.Checkpoint,
  CheckpointManager = manager.CheckpointManager,
  latest_checkpoint = manager.latest_checkpoint,
}
