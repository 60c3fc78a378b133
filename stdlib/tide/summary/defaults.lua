-- stdlib/tide/summary/defaults.lua — what TF keeps per thread for tf.summary: the default
-- writer and step, the recording condition (record_if), and reading a summary's step.
local binding = require "tide.binding"
local context = require "tide.trace_context"
local variable = require "tide.variable"
local writer_mod = require "tide.summary.writer"
local istensor = binding.istensor

local M = {}
local SummaryWriter = writer_mod.SummaryWriter

-- What TF keeps per thread: the default writer, the default step (a number,
-- tensor or Variable, read at each summary) and the recording condition.
local state = { writer = nil, step = nil, record_if = true }
M.state = state

local fmt = string.format
local pack = require("tide.varargs").pack

local function step_option(opts, what)
  if opts == nil then return nil end
  if type(opts) ~= "table" then binding.error(what .. ": the options must be a table, e.g. {step = 0}") end
  return opts.step
end

-- writer:as_default(fn, {step=}): runs fn() with this writer (and the step,
-- when given) as the default, then restores the previous ones and flushes
-- this writer, also when fn raises (TF's `with writer.as_default(step):`).
-- Returns fn's results.
function SummaryWriter:as_default(fn, opts)
  if type(fn) ~= "function" then
    binding.error("as_default: pass the function to run with this writer as the default, e.g. " ..
      "writer:as_default(function() ... end), or call writer:set_as_default()")
  end
  local step = step_option(opts, "as_default")
  local prev_writer, prev_step = state.writer, state.step
  state.writer = self
  if step ~= nil then state.step = step end
  local r = pack(pcall(fn))
  state.writer = prev_writer
  if step ~= nil then state.step = prev_step end -- as TF: the step comes back only when one was given
  if not self.closed then self:flush() end
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n)
end

-- writer:set_as_default({step=}): this writer is the default from now on.
function SummaryWriter:set_as_default(opts)
  local step = step_option(opts, "set_as_default")
  state.writer = self
  if step ~= nil then state.step = step end
end

-- The default writer, or nil.
function M.get_default_writer() return state.writer end

-- flush({writer=}): flush the given writer, else the default one (if any).
function M.flush(opts)
  local w = opts and opts.writer or state.writer
  if w then w:flush() end
end

-- record_if(condition, fn): runs fn() with summaries recorded only while
-- condition holds: a boolean, or a function returning one (asked at each
-- summary, as Keras's update_freq uses it). Returns fn's results.
function M.record_if(condition, fn)
  local tc = type(condition)
  if tc ~= "boolean" and tc ~= "function" then
    binding.error("record_if: condition must be a boolean or a function returning one, got " .. tc)
  end
  if type(fn) ~= "function" then binding.error("record_if: pass the function to run, e.g. record_if(true, fn)") end
  local prev = state.record_if
  state.record_if = condition
  local r = pack(pcall(fn))
  state.record_if = prev
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n)
end

local function recording()
  local c = state.record_if
  if type(c) == "function" then c = c() end
  if istensor(c) then c = c:item() end
  return c == true
end

-- should_record_summaries(): a default writer is set and record_if holds.
function M.should_record_summaries()
  return state.writer ~= nil and recording()
end

-- For tide.callbacks.TensorBoard, which (as Keras) makes a writer, a step
-- and a record_if condition the defaults around each batch: set them and
-- return what to restore with _pop_default.
function M._push_default(writer, step, condition)
  local saved = { state.writer, state.step, state.record_if }
  state.writer, state.step, state.record_if = writer, step, condition
  return saved
end
function M._pop_default(saved)
  state.writer, state.step, state.record_if = saved[1], saved[2], saved[3]
end

M.experimental = {}

-- experimental.set_step(step): the step of summaries given none (a number,
-- an int tensor or a Variable such as optimizer.iterations, read each time).
function M.experimental.set_step(step) state.step = step end
function M.experimental.get_step() return state.step end

---------------------------------------------------------------------------
-- The checks every summary makes
---------------------------------------------------------------------------

local function plain_value(v, what, name)
  if variable.is_variable(v) then v = v:read_value() end
  if istensor(v) then
    if context.is_symbolic(v) then
      binding.error(fmt("summary.%s '%s': the %s is a symbolic tensor of a traced function; summaries are " ..
        "written eagerly only", what, name, "value"))
    end
  end
  return v
end

local function resolve_step(step, what, name)
  if step == nil then step = state.step end
  if step == nil then
    binding.error(fmt("summary.%s '%s': no step set; pass {step = ...} or call " ..
      "tide.summary.experimental.set_step(step) first", what, name))
  end
  step = plain_value(step, what, name)
  if istensor(step) then
    if step.nelem ~= 1 then binding.error(fmt("summary.%s '%s': the step must be one integer", what, name)) end
    step = step:item()
  end
  if type(step) ~= "number" or step ~= math.floor(step) or step < -2 ^ 63 or step >= 2 ^ 63 then
    binding.error(fmt("summary.%s '%s': the step must be an integer, got %s", what, name, tostring(step)))
  end
  return step
end

M.recording, M.plain_value, M.resolve_step = recording, plain_value, resolve_step

return M
