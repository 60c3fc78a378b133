-- stdlib/tide/callbacks/init.lua — tide.callbacks (Keras's keras.callbacks):
-- the Callback base and the built-in callbacks.
local callback = require "tide.callbacks.callback"

local M = {
  Callback = callback.Callback,
  CallbackList = callback.CallbackList,
  History = callback.History,
  ProgbarLogger = callback.ProgbarLogger,
}

return M
