-- stdlib/tide/data/stages/ignore_errors.lua — ds:ignore_errors(log_warning): elements whose making raised an
-- error are dropped and the pass goes on (TF's); runs in Lua, over an input read in either engine.
local binding = require "tide.binding"
local stage = require "tide.data.stage"

-- ds:ignore_errors({log_warning=false}): log_warning writes each dropped error to stderr.
local function ignore_errors(self, opts)
  if type(opts) == "boolean" then opts = { log_warning = opts } end
  opts = stage.options("ignore_errors", { "log_warning", "name" }, opts)
  local ds = stage.derive(self, "ignore_errors", { log = stage.flag("ignore_errors", "log_warning",
    opts.log_warning, false) })
  ds.card = self:cardinality() == stage.INFINITE and stage.INFINITE or stage.UNKNOWN
  return ds
end

-- Each error is dropped and the input asked again; an input that keeps raising (a source broken for good)
-- ends the pass with its error after `limit` errors in a row, instead of spinning forever.
local s = {}

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local limit = 10000
  return function()
    local in_row = 0
    while true do
      local ok, flat = pcall(nextf)
      if ok then return flat end
      in_row = in_row + 1
      if ds.log then io.stderr:write("tide.data: ignore_errors dropped an element: ", tostring(flat), "\n") end
      if in_row >= limit then
        binding.error("ignore_errors: the input raised " .. limit .. " errors in a row; the last: " .. tostring(flat))
      end
    end
  end, close
end

return { methods = { ignore_errors = ignore_errors }, stages = { ignore_errors = s } }
