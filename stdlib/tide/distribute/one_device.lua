-- stdlib/tide/distribute/one_device.lua — OneDeviceStrategy (tf.distribute.OneDeviceStrategy):
-- one replica whose tensors sit on one device inside scope and run.
local binding = require "tide.binding"
local device = require "tide.device"
local strategy = require "tide.distribute.strategy"
local pack = require("tide.varargs").pack

local within, check_fn, new_strategy = strategy.within, strategy.check_fn, strategy.new_strategy
local fmt = string.format

local M = {}

-- OneDeviceStrategy(device): one replica whose tensors sit on `device`
-- ("cpu", "gpu:0", ...) inside scope and run.
function M.OneDeviceStrategy(dev)
  if type(dev) ~= "string" then
    binding.error("tide.distribute.OneDeviceStrategy: expected a device name (\"cpu\", \"gpu:0\"), got " .. type(dev))
  end
  device.parse(dev, "tide.distribute.OneDeviceStrategy")
  local s = new_strategy("OneDeviceStrategy", { num_replicas_in_sync = 1, worker_index = 0, is_chief = true,
                                                device = dev })
  local function on_device(what, fn, ...)
    local args = pack(...)
    return within(s, what, function() return device.scope(dev, function() return fn(unpack(args, 1, args.n)) end) end)
  end
  function s.scope(self, fn, ...)
    check_fn(self, "scope", fn)
    return on_device("scope", fn, ...)
  end
  function s.run(self, fn, args)
    check_fn(self, "run", fn)
    if args ~= nil and type(args) ~= "table" then
      binding.error(fmt("%s:run: args must be a list (table) of arguments, got %s", self.name, type(args)))
    end
    args = args or {}
    return on_device("run", fn, unpack(args, 1, args.n or #args))
  end
  return s
end

return M
