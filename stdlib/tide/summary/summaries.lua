-- stdlib/tide/summary/summaries.lua — the summaries: scalar, histogram, text and image,
-- written eagerly to the default writer, or (scalar, histogram) recorded as nodes of a traced function.
local binding = require "tide.binding"
local context = require "tide.trace_context"
local variable = require "tide.variable"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local defaults = require "tide.summary.defaults"
local ffi, C = binding.ffi, binding.C
local istensor = binding.istensor
local state, recording, plain_value, resolve_step = defaults.state, defaults.recording, defaults.plain_value,
  defaults.resolve_step

local M = {}
local fmt = string.format

---------------------------------------------------------------------------
-- The checks every summary makes
---------------------------------------------------------------------------

local KNOWN = { step = true, description = true, buckets = true, max_outputs = true, name = true }

-- The checked options table of a summary call (a step alone may stand for it).
local function options(what, name, opts)
  if type(name) ~= "string" or name == "" then
    binding.error(fmt("summary.%s: the name must be a non-empty string, got %s", what, tostring(name)))
  end
  if type(opts) == "number" or istensor(opts) or variable.is_variable(opts) then opts = { step = opts } end
  opts = opts or {}
  if type(opts) ~= "table" then binding.error(fmt("summary.%s '%s': the options must be a table", what, name)) end
  for k in pairs(opts) do
    if not KNOWN[k] then binding.error(fmt("summary.%s '%s': unknown option '%s'", what, name, tostring(k))) end
  end
  local desc = opts.description
  if desc ~= nil and type(desc) ~= "string" then
    binding.error(fmt("summary.%s '%s': description must be a string", what, name))
  end
  return opts
end

-- The writer to use (nil: write nothing, as TF with no default writer or
-- record_if false), the step and the description, or an error.
local function begin(what, name, opts)
  opts = options(what, name, opts)
  local w = state.writer
  if w == nil or not recording() then return nil, nil, nil, opts end
  if context.current() ~= nil then
    binding.error(fmt("summary.%s '%s': %s summaries cannot be written from inside a traced function yet " ..
      "(scalar and histogram can); return the value from the traced function and write it after the call, " ..
      "or run it eagerly with tide.config.run_functions_eagerly(true)", what, name, what))
  end
  local step = resolve_step(opts.step, what, name)
  return w:handle("summary." .. what), step, opts.description, opts
end

-- Inside a traced function: record a node that writes at each run (TF's
-- summary ops in a tf.function). The writer and record_if are taken when the
-- function is traced, as TF does; the step and a record_if that gives a
-- tensor are read at each run (a Variable such as optimizer.iterations,
-- or a Lua number baked in).
local function record_traced(what, name, data, opts)
  opts = options(what, name, opts)
  local w = state.writer
  if w == nil then return false end
  local cond = state.record_if
  if type(cond) == "function" then cond = cond() end
  if variable.is_variable(cond) then cond = cond:read_value() end
  local cond_t = nil
  if istensor(cond) then
    if not context.is_symbolic(cond) then
      if not cond:item() then return false end
    else
      cond_t = cond.dtype == "bool" and cond or math_ops.cast(cond, "bool")
    end
  elseif cond ~= true then
    if cond == false then return false end
    binding.error(fmt("summary.%s '%s': the record_if condition must give a boolean or a bool tensor, got %s",
      what, name, type(cond)))
  end
  local step = opts.step
  if step == nil then step = state.step end
  if step == nil then
    binding.error(fmt("summary.%s '%s': no step set; pass {step = ...} or call " ..
      "tide.summary.experimental.set_step(step) first", what, name))
  end
  if variable.is_variable(step) then step = step:read_value() end
  if type(step) == "number" then
    if step ~= math.floor(step) or step < -2 ^ 63 or step >= 2 ^ 63 then
      binding.error(fmt("summary.%s '%s': the step must be an integer, got %s", what, name, tostring(step)))
    end
    step = convert.tensor(step, "int64", "summary." .. what)
  end
  if not istensor(step) or (step.dtype ~= "int64" and step.dtype ~= "int32") or step.ndim > 0 then
    binding.error(fmt("summary.%s '%s': the step must be one integer (a number, an int scalar tensor or a Variable)",
      what, name))
  end
  if variable.is_variable(data) then data = data:read_value() end
  if data == nil then binding.error(fmt("summary.%s '%s': data is nil", what, name)) end
  if type(data) == "boolean" then data = data and 1 or 0 end
  local t = convert.tensor(data, nil, "summary." .. what)
  local kind, buckets = C.TIDE_SUMMARY_SCALAR, 0
  if what == "scalar" then
    if t.ndim ~= 0 then
      binding.error(fmt("summary.scalar '%s': data must be a scalar (rank 0), got shape %s", name, tostring(t.shape)))
    end
    t = math_ops.cast(t, "float32")
  else
    kind = C.TIDE_SUMMARY_HISTOGRAM
    buckets = opts.buckets == nil and M.DEFAULT_BUCKET_COUNT or opts.buckets
    if type(buckets) ~= "number" or buckets ~= math.floor(buckets) or buckets > 1e7 then
      binding.error(fmt("summary.histogram '%s': buckets must be an integer, got %s", name, tostring(buckets)))
    end
    if buckets < 0 then buckets = 0 end
    t = math_ops.cast(t, "float64")
  end
  local rc = C.tide_summary_record(C.tide_graph_building(), w:handle("summary." .. what), kind, name,
    opts.description, buckets, step, t, cond_t)
  if rc ~= 0 then binding.raise() end
  return true
end

---------------------------------------------------------------------------
-- The summaries
---------------------------------------------------------------------------

-- scalar(name, data, {step=, description=}): a float32 scalar for the
-- scalars dashboard. True when written, false with no default writer.
function M.scalar(name, data, opts)
  if context.current() ~= nil then return record_traced("scalar", name, data, opts) end
  local w, step, desc = begin("scalar", name, opts)
  if not w then return false end
  data = plain_value(data, "scalar", name)
  local value
  if type(data) == "number" then
    value = data
  elseif type(data) == "boolean" then
    value = data and 1 or 0
  elseif istensor(data) then
    if data.ndim ~= 0 then
      binding.error(fmt("summary.scalar '%s': data must be a scalar (rank 0), got shape %s", name,
        tostring(data.shape)))
    end
    value = data:item()
    if type(value) == "boolean" then value = value and 1 or 0 end
  else
    binding.error(fmt("summary.scalar '%s': data must be a number or a scalar tensor, got %s", name, type(data)))
  end
  if C.tide_summary_write_scalar(w, name, step, value, desc) ~= 0 then binding.raise() end
  return true
end

M.DEFAULT_BUCKET_COUNT = 30

-- histogram(name, data, {step=, buckets=30, description=}): TF2's histogram
-- of every element of data (any shape), for the histograms and
-- distributions dashboards. NaNs are left out.
function M.histogram(name, data, opts)
  if context.current() ~= nil then return record_traced("histogram", name, data, opts) end
  local w, step, desc, o = begin("histogram", name, opts)
  if not w then return false end
  local buckets = o.buckets == nil and M.DEFAULT_BUCKET_COUNT or o.buckets
  if type(buckets) ~= "number" or buckets ~= math.floor(buckets) or buckets > 1e7 then
    binding.error(fmt("summary.histogram '%s': buckets must be an integer, got %s", name, tostring(buckets)))
  end
  if buckets < 0 then buckets = 0 end -- as TF: a negative count is zero
  data = plain_value(data, "histogram", name)
  if data == nil then binding.error(fmt("summary.histogram '%s': data is nil", name)) end
  local t = convert.tensor(data, nil, "summary.histogram")
  t = shape_ops.contiguous(math_ops.cast(t, "float64"))
  local rc = C.tide_summary_write_histogram(w, name, step, ffi.cast("const double *", t.data), t.nelem, buckets, desc)
  binding.keep_alive(t)
  if rc ~= 0 then binding.raise() end
  return true
end

-- The shape and row-major flat list of a Lua string or nested table of strings.
local function string_table(data, name)
  if type(data) == "string" then return {}, { data } end
  local shape, flat, leaf_depth = {}, {}, nil
  local function ragged() binding.error(fmt("summary.text '%s': the nested table of strings is ragged", name)) end
  local function walk(node, depth)
    if type(node) == "string" then
      if leaf_depth == nil then leaf_depth = depth elseif depth ~= leaf_depth then ragged() end
      flat[#flat + 1] = node
      return
    end
    if type(node) ~= "table" or getmetatable(node) ~= nil then
      binding.error(fmt("summary.text '%s': data must be a string or a nested table of strings, found %s", name,
        type(node)))
    end
    if leaf_depth ~= nil and depth >= leaf_depth then ragged() end
    if shape[depth] == nil then
      shape[depth] = #node
    elseif shape[depth] ~= #node then
      ragged()
    end
    for i = 1, #node do walk(node[i], depth + 1) end
  end
  walk(data, 1)
  if #shape > 8 then binding.error(fmt("summary.text '%s': at most 8 dimensions", name)) end
  return shape, flat
end

-- text(name, data, {step=, description=}): a string, or a nested table of
-- strings, for the text dashboard (Markdown).
function M.text(name, data, opts)
  local w, step, desc = begin("text", name, opts)
  if not w then return false end
  local shape, flat = string_table(data, name)
  local n = #flat
  local dims = ffi.new("int64_t[?]", math.max(#shape, 1))
  for i, d in ipairs(shape) do dims[i - 1] = d end
  local strs = ffi.new("const char *[?]", math.max(n, 1))
  local lens = ffi.new("size_t[?]", math.max(n, 1))
  for i, s in ipairs(flat) do
    strs[i - 1] = s
    lens[i - 1] = #s
  end
  local rc = C.tide_summary_write_text(w, name, step, #shape, dims, strs, lens, desc)
  local _ = flat -- the strings stay alive until C has copied them
  if rc ~= 0 then binding.raise() end
  return true
end

local FLOATS = { float16 = true, bfloat16 = true, float32 = true, float64 = true }

-- image(name, data, {step=, max_outputs=3, description=}): a [k, h, w, c]
-- batch (c = 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA), uint8 or float in [0, 1]
-- (scaled as TF's convert_image_dtype with saturation); the first
-- max_outputs images go PNG-encoded to the images dashboard.
function M.image(name, data, opts)
  local w, step, desc, o = begin("image", name, opts)
  if not w then return false end
  local max_outputs = o.max_outputs == nil and 3 or o.max_outputs
  if type(max_outputs) ~= "number" or max_outputs ~= math.floor(max_outputs) or max_outputs < 0 then
    binding.error(fmt("summary.image '%s': max_outputs must be an integer >= 0, got %s", name, tostring(max_outputs)))
  end
  data = plain_value(data, "image", name)
  if not istensor(data) then
    binding.error(fmt("summary.image '%s': data must be a [k, h, w, c] tensor, got %s", name, type(data)))
  end
  if data.ndim ~= 4 then
    binding.error(fmt("summary.image '%s': data must have rank 4 [k, h, w, c], got shape %s", name,
      tostring(data.shape)))
  end
  local sh = data.shape
  local k = math.min(sh[1], max_outputs)
  local c = sh[4]
  if c < 1 or c > 4 then
    binding.error(fmt("summary.image '%s': images need 1 to 4 channels (gray, gray+alpha, RGB, RGBA), got %d",
      name, c))
  end
  local dt = data.dtype
  local imgs = data:slice { { 0, k } }
  if FLOATS[dt] then
    -- TF's convert_image_dtype(saturate=True): x * 255.5 clamped, truncated
    imgs = math_ops.cast(math_ops.clip_by_value(math_ops.mul(imgs, 255.5), 0, 255), "uint8")
  elseif dt ~= "uint8" then
    binding.error(fmt("summary.image '%s': data must be uint8 or float in [0, 1], got %s (cast it first)", name, dt))
  end
  imgs = shape_ops.contiguous(imgs)
  local rc = C.tide_summary_write_image(w, name, step, ffi.cast("const uint8_t *", imgs.data), k, sh[2], sh[3], c,
    max_outputs, desc)
  binding.keep_alive(imgs)
  if rc ~= 0 then binding.raise() end
  return true
end

return M
