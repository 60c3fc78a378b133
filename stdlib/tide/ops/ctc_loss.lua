-- stdlib/tide/ops/ctc_loss.lua — tf.nn.ctc_loss (TF 2's ctc_loss_v3): dense or sparse labels, time- or batch-major
-- logits, any blank class; the loss and its gradient come from one C op (cpu/ctc.c), whose gradient is grad/ctc_loss.lua's.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dispatch = require "tide.dispatch"
local dtype = require "tide.dtype"
local args = require "tide.args"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local create = require "tide.ops.create"
local index_ops = require "tide.ops.index"
local segment = require "tide.ops.segment"
local dynamic_shape = require "tide.ops.dynamic_shape"
local C = binding.C

local M = {}
local fmt = string.format
local CTC_LOSS = C.TIDE_OP_CTC_LOSS
local HALF = { float16 = true, bfloat16 = true }

-- A SparseTensor (its class sits floors up: anything with indices, values and dense_shape is taken as one).
local function is_sparse(v)
  return type(v) == "table" and not binding.istensor(v) and v.indices ~= nil and v.values ~= nil and v.dense_shape ~= nil
end

local function int_input(op, v, what)
  if v == nil then binding.error(fmt("%s: %s is required", op, what)) end
  local t = convert.arg(v, fmt("%s (%s)", op, what))
  if t.dt ~= C.TIDE_INT32 and t.dt ~= C.TIDE_INT64 then
    binding.error(fmt("%s: %s must be an int32 or int64 tensor, got %s", op, what, dtype.names[t.dt]))
  end
  return t
end

-- Sparse labels [B, L] as TF's CTCLoss reads them: row b's values in order, label_length[b] of them. The dense
-- matrix puts each value at its column (TF requires the indices in row-major order, columns from 0).
local function sparse_to_dense(op, sp, batch)
  local indices, values = sp.indices, int_input(op, sp.values, "labels.values")
  local dense_shape = sp.dense_shape
  local rows = indices:slice { {}, 0 } -- each value's row
  local dense = index_ops.tensor_scatter_nd_update(create.zeros(dense_shape, dtype.names[values.dt]), indices, values)
  local ones = create.ones_like(rows, "int32")
  local length = segment.unsorted_segment_sum(ones, rows, batch)
  return dense, length
end

-- ctc_loss(labels, logits, label_length, logit_length, logits_time_major=true, unique=nil, blank_index=nil): the
-- negative log probability of each label sequence, [batch], as tf.nn.ctc_loss. labels: int [batch, max_label_length]
-- with label_length [batch], or a SparseTensor (then blank_index is required and label_length is ignored);
-- logits [max_time, batch, classes] (or [batch, max_time, classes] with logits_time_major=false); logit_length
-- [batch]. blank_index defaults to 0 for dense labels; negative counts from the end. `unique` (TF's TPU speed-up)
-- is accepted and changes nothing.
function M.ctc_loss(labels, logits, label_length, logit_length, ...)
  local op = "ctc_loss"
  local o = args.parse(op, { "logits_time_major", "unique", "blank_index", "name" }, ...)
  local x = convert.arg(logits, op .. " (logits)")
  if not dtype.is_float[x.dt] then
    binding.error(fmt("%s: logits must be a float tensor, got %s", op, dtype.names[x.dt]))
  end
  if x.ndim ~= 3 and x.ndim >= 0 then -- (an unknown rank is checked when the graph runs)
    binding.error(fmt("%s: logits must be 3-D [max_time, batch, classes], got shape %s", op, tostring(x.shape)))
  end
  local time_major = args.bool(op, "logits_time_major", o.logits_time_major, true)
  if not time_major then x = shape_ops.transpose(x, { 1, 0, 2 }) end
  local k = x.ndim == 3 and tonumber(x.dims[2]) or -1
  local sparse = is_sparse(labels)
  if sparse and o.blank_index == nil then
    binding.error(op .. ": blank_index must be given when labels is a SparseTensor (TF's rule)")
  end
  local blank = o.blank_index == nil and 0 or args.int(op, "blank_index", o.blank_index)
  if k >= 0 then
    if blank < 0 then blank = blank + k end
    if blank < 0 or blank >= k then
      binding.error(fmt("%s: blank_index must be in [%d, %d) for %d classes, got %s", op, -k, k, k, tostring(o.blank_index)))
    end
  elseif blank < 0 then
    binding.error(op .. ": a negative blank_index needs the classes dim of logits known")
  end
  local lab, lab_len
  if sparse then
    local batch = x.ndim == 3 and tonumber(x.dims[1]) or -1
    if batch < 0 then batch = dynamic_shape.shape(x)[1] end
    lab, lab_len = sparse_to_dense(op, labels, batch)
  else
    if labels == nil then binding.error(op .. ": labels is required") end
    lab = int_input(op, labels, "labels")
    lab_len = int_input(op, label_length, "label_length")
  end
  local seq_len = int_input(op, logit_length, "logit_length")
  local half = HALF[dtype.names[x.dt]]
  if half then x = math_ops.cast(x, "float32") end
  local a = dispatch.attrs()
  a.n = blank
  local loss = dispatch.run(CTC_LOSS, a, { x, lab, lab_len, seq_len }, 2)
  if half then loss = math_ops.cast(loss, dtype.names[convert.arg(logits, op).dt]) end
  return loss
end

return M
