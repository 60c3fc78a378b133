-- stdlib/tide/summary/writer.lua — SummaryWriter (TF's tf.summary.SummaryWriter):
-- the Lua face of a C event-file writer (kernels/io/summary_writer.c).
local binding = require "tide.binding"
local class = require "tide.class"
local ffi, C = binding.ffi, binding.C

local M = {}

local SummaryWriter = class("SummaryWriter")
M.SummaryWriter = SummaryWriter

-- TF2's defaults (tf.summary.create_file_writer).
M.DEFAULTS = { max_queue = 10, flush_millis = 120000, filename_suffix = ".v2" }

local OPTIONS = { max_queue = true, flush_millis = true, filename_suffix = true, name = true, experimental_trackable = true,
  experimental_mesh = true }

local function int_option(name, v, min)
  if type(v) ~= "number" or v ~= math.floor(v) or v < min or v > 2147483647 then
    binding.error(string.format("create_file_writer: %s must be an integer >= %d, got %s", name, min, tostring(v)))
  end
  return v
end

-- SummaryWriter(logdir, {max_queue=10, flush_millis=120000, filename_suffix=".v2"}):
-- creates logdir and a new event file in it (use tide.summary.create_file_writer).
function SummaryWriter:__init(logdir, opts)
  if type(logdir) ~= "string" or logdir == "" then
    binding.error("create_file_writer: logdir must be a folder name (a non-empty string), got " ..
      (type(logdir) == "string" and "\"\"" or type(logdir)))
  end
  opts = opts or {}
  if type(opts) ~= "table" then binding.error("create_file_writer: the options must be a table") end
  for k in pairs(opts) do
    if not OPTIONS[k] then
      binding.error(string.format("create_file_writer: unknown option '%s' (max_queue, flush_millis, " ..
        "filename_suffix)", tostring(k)))
    end
  end
  local max_queue = int_option("max_queue", opts.max_queue == nil and M.DEFAULTS.max_queue or opts.max_queue, 0)
  local flush_millis = int_option("flush_millis",
    opts.flush_millis == nil and M.DEFAULTS.flush_millis or opts.flush_millis, 1)
  local suffix = opts.filename_suffix == nil and M.DEFAULTS.filename_suffix or opts.filename_suffix
  if type(suffix) ~= "string" then binding.error("create_file_writer: filename_suffix must be a string") end
  local w = C.tide_summary_writer_open(logdir, suffix, max_queue, flush_millis)
  if w == nil then binding.raise() end
  self._w = ffi.gc(w, C.tide_summary_writer_free)
  self.logdir = logdir
  self.path = ffi.string(C.tide_summary_writer_path(w))
  self.closed = false
end

-- The C writer, or an error naming the call when the writer is closed.
function SummaryWriter:handle(what)
  if self.closed then
    binding.error(string.format("%s: the summary writer of '%s' is closed", what, self.path))
  end
  return self._w
end

-- writer:flush(): write every queued event to the file now.
function SummaryWriter:flush()
  if self.closed then return end
  if C.tide_summary_writer_flush(self._w) ~= 0 then binding.raise() end
end

-- writer:close(): flush and close the file; later summaries through it are
-- errors, closing again is not.
function SummaryWriter:close()
  if self.closed then return end
  self.closed = true
  if C.tide_summary_writer_close(self._w) ~= 0 then binding.raise() end
end

function SummaryWriter:__tostring()
  return string.format("SummaryWriter(%s)", self.path)
end

-- create_file_writer(logdir, {max_queue=10, flush_millis=120000,
-- filename_suffix=".v2"}): a writer of a new event file in logdir.
function M.create_file_writer(logdir, opts)
  return SummaryWriter(logdir, opts)
end

return M
