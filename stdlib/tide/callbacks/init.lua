-- stdlib/tide/callbacks/init.lua — tide.callbacks (Keras's keras.callbacks):
-- the Callback base and the built-in callbacks.
local callback = require "tide.callbacks.callback"
local monitor = require "tide.callbacks.monitor"
local checkpoint = require "tide.callbacks.checkpoint"
local logging = require "tide.callbacks.logging"
local tensorboard = require "tide.callbacks.tensorboard"
local gradient_health = require "tide.callbacks.gradient_health"
local backup = require "tide.callbacks.backup"
local ema = require "tide.callbacks.ema"

return {
  Callback = callback.Callback,
  CallbackList = callback.CallbackList,
  History = callback.History,
  ProgbarLogger = callback.ProgbarLogger,
  EarlyStopping = monitor.EarlyStopping,
  ReduceLROnPlateau = monitor.ReduceLROnPlateau,
  ModelCheckpoint = checkpoint.ModelCheckpoint,
  CSVLogger = logging.CSVLogger,
  TerminateOnNaN = logging.TerminateOnNaN,
  LearningRateScheduler = logging.LearningRateScheduler,
  LambdaCallback = logging.LambdaCallback,
  TensorBoard = tensorboard.TensorBoard,
  GradientHealth = gradient_health.GradientHealth,
  BackupAndRestore = backup.BackupAndRestore,
  SwapEMAWeights = ema.SwapEMAWeights,
}
