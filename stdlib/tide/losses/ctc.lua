-- stdlib/tide/losses/ctc.lua — Keras 3's CTC loss (keras.losses.CTC / ctc): y_true int [batch, max_length] with 0 as
-- padding and blank, y_pred logits [batch, max_time, classes]; every sequence uses all of max_time.
local binding = require "tide.binding"
local convert = require "tide.convert"
local common = require "tide.losses.common"
local ctc_keras = require "tide.ops.ctc_keras"

local ops = common.ops
local M = {}
M.impl = {}

function M.impl.ctc(op, y_true, y_pred)
  y_true, y_pred = convert.arg(y_true, op .. " (y_true)"), convert.arg(y_pred, op .. " (y_pred)")
  if y_true.ndim ~= 2 then
    binding.error(op .. ": y_true must be 2-D [batch, max_length] integer labels, got shape " .. tostring(y_true.shape))
  end
  if y_pred.ndim ~= 3 then
    binding.error(op .. ": y_pred must be 3-D [batch, max_time, classes], got shape " .. tostring(y_pred.shape))
  end
  local label_length = ops.reduce_sum(ops.cast(ops.not_equal(y_true, 0), "int32"), -1)
  local input_length = ops.mul(ops.ones_like(label_length), ops.cast(ops.shape(y_pred)[1], "int32"))
  return ctc_keras.ctc_loss(y_true, y_pred, label_length, input_length, { mask_index = 0 })
end

M.classes = {
  { class = "CTC", name = "ctc", params = {}, order = { "reduction", "name", "dtype" } },
}

M.no_align_in_function = { ctc = true }

return M
