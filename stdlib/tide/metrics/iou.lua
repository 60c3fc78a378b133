-- stdlib/tide/metrics/iou.lua — Keras 3's intersection-over-union metrics (IoU, MeanIoU, BinaryIoU,
-- OneHotIoU, OneHotMeanIoU): a num_classes x num_classes confusion matrix in a Variable, IoU read off it.
local common = require "tide.losses.common"
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local base = require "tide.metrics.base"

local ops = common.ops
local M = {}

-- The state's dtype: Keras's default is "int" (int64: float sample weights are truncated, as Keras casts).
local function state_dtype(op, dt)
  if dt == nil then return "int64" end
  local ok, code = pcall(dtype.code, dt, op)
  local name = ok and dtype.names[code]
  if not name or name == "bool" or name == "string" then
    common.error(string.format("%s: dtype must be a numeric dtype (int64 by default), got %s", op, tostring(dt)))
  end
  return name
end

local function class_ids(op, ids, n)
  if type(ids) ~= "table" or #ids == 0 then
    common.error(string.format("%s: target_class_ids must be a non-empty list of class ids, got %s", op,
      tostring(ids)))
  end
  local out = {}
  for i, c in ipairs(ids) do
    common.want_int(op, "target_class_ids", c, 0)
    if c >= n then
      common.error(string.format("%s: target class id %d is out of range [0, %d)", op, c, n))
    end
    out[i] = c
  end
  return out
end

local IoU = common.class("IoU", base.Metric)
M.IoU = IoU

local IOU_ORDER = { "num_classes", "target_class_ids", "name", "dtype", "ignore_class", "sparse_y_true",
  "sparse_y_pred", "axis" }

-- IoU{num_classes, target_class_ids, name=, dtype="int64", ignore_class=, sparse_y_true=true,
-- sparse_y_pred=true, axis=-1}: the mean IoU of the target classes (classes never seen are left out).
function IoU:__init(...)
  self:_init_iou("IoU", common.options("IoU", IOU_ORDER, ...))
end

function IoU:_init_iou(op, o)
  if o.num_classes == nil then common.error(op .. ": num_classes is required (an integer >= 1)") end
  self.num_classes = common.want_int(op, "num_classes", o.num_classes, 1)
  self.name = common.want_name(op, "name", o.name) or common.auto_name(self.__name)
  self.dtype = state_dtype(op, o.dtype)
  self.variables = {}
  if o.ignore_class ~= nil then self.ignore_class = common.want_int(op, "ignore_class", o.ignore_class) end
  local function flag(k, default)
    if o[k] == nil then return default end
    return common.want_bool(op, k, o[k])
  end
  self.sparse_y_true, self.sparse_y_pred = flag("sparse_y_true", true), flag("sparse_y_pred", true)
  self.axis = o.axis == nil and -1 or common.want_int(op, "axis", o.axis)
  self.target_class_ids = class_ids(op, o.target_class_ids, self.num_classes)
  self.total_cm = self:add_variable({ self.num_classes, self.num_classes }, "total_confusion_matrix", self.dtype)
end

-- A tensor of class ids (or of scores, argmax'd along axis unless `sparse`), flattened, in the state's dtype.
local function ids(self, what, v, sparse)
  if not sparse then
    v = ops.argmax(common.float_input(self.name, what, v), self.axis)
  elseif convert.is_variable(v) then
    v = convert.unvariable(v)
  elseif type(v) == "number" or type(v) == "table" then
    v = convert.tensor(v, nil, self.name)
  end
  if not binding.istensor(v) then
    common.error(string.format("%s: %s must be a tensor, a Lua number or a table, got %s", self.name, what, type(v)))
  end
  if v.dtype == "bool" or v.dtype == "string" then
    common.error(string.format("%s: %s must hold class ids (a numeric tensor), got %s", self.name, what, v.dtype))
  end
  return ops.reshape(v:cast(self.dtype), { -1 })
end

function IoU:update_state(y_true, y_pred, sample_weight)
  local dt, n = self.dtype, self.num_classes
  y_true = ids(self, "y_true", y_true, self.sparse_y_true)
  y_pred = ids(self, "y_pred", y_pred, self.sparse_y_pred)
  -- Lua weights are read as floats, then cast (truncated, for an int state) as Keras casts them
  local sw = sample_weight == nil and ops.ones({}, dt)
    or common.like_input(self.name, "sample_weight", sample_weight, "float64"):cast(dt)
  if sw.shape.rank ~= nil and sw.shape.rank > 1 then sw = ops.reshape(sw, { -1 }) end
  common.check_broadcast(self.name, "y_true", y_true, "sample_weight", sw)
  sw = ops.broadcast_to(sw, ops.shape(y_true))
  local in_bounds = ops.logical_and(ops.logical_and(ops.greater_equal(y_true, 0), ops.less(y_true, n)),
    ops.logical_and(ops.greater_equal(y_pred, 0), ops.less(y_pred, n)))
  if self.ignore_class ~= nil then in_bounds = ops.logical_and(in_bounds, ops.not_equal(y_true, self.ignore_class)) end
  y_true, y_pred = ops.where(in_bounds, y_true, 0), ops.where(in_bounds, y_pred, 0)
  sw = ops.where(in_bounds, sw, 0)
  -- the confusion matrix (rows: true class, columns: predicted) as one segment sum over the n*n cells
  local cell = ops.cast(y_true * n + y_pred, "int32")
  local cm = ops.reshape(ops.unsorted_segment_sum(sw, cell, n * n), { n, n })
  self.total_cm:assign_add(cm)
end

function IoU:result()
  local n = self.num_classes
  local cm = ops.cast(self.total_cm:read_value(), "float32")
  local predicted, actual = ops.reduce_sum(cm, 0), ops.reduce_sum(cm, 1)
  local diag_idx = {}
  for i = 0, n - 1 do diag_idx[#diag_idx + 1] = i * (n + 1) end
  local tp = ops.gather(ops.reshape(cm, { -1 }), diag_idx)
  local denominator = predicted + actual - tp
  tp, denominator = ops.gather(tp, self.target_class_ids), ops.gather(denominator, self.target_class_ids)
  local valid = ops.greater(denominator, 1e-9)
  local iou = ops.where(valid, tp / (denominator + common.EPSILON), 0)
  return ops.reduce_sum(iou, self.axis) / (ops.reduce_sum(ops.cast(valid, "float32")) + common.EPSILON)
end

-- Keras's configs: each class names its own keys.
local function config_of(self, keys)
  local c = {}
  for _, k in ipairs(keys) do c[k] = self[k] end
  return c
end

function IoU:get_config()
  return config_of(self, { "num_classes", "target_class_ids", "name", "dtype", "ignore_class", "sparse_y_true",
    "sparse_y_pred", "axis" })
end

-- MeanIoU{num_classes, name=, dtype=, ignore_class=, sparse_y_true=true, sparse_y_pred=true, axis=-1}.
local MeanIoU = common.class("MeanIoU", IoU)
M.MeanIoU = MeanIoU

local function all_classes(o, op)
  if o.num_classes == nil then common.error(op .. ": num_classes is required (an integer >= 1)") end
  common.want_int(op, "num_classes", o.num_classes, 1)
  local t = {}
  for i = 0, o.num_classes - 1 do t[#t + 1] = i end
  return t
end

function MeanIoU:__init(...)
  local o = common.options("MeanIoU", { "num_classes", "name", "dtype", "ignore_class", "sparse_y_true",
    "sparse_y_pred", "axis" }, ...)
  o.target_class_ids = all_classes(o, "MeanIoU")
  self:_init_iou("MeanIoU", o)
end

function MeanIoU:get_config()
  return config_of(self, { "num_classes", "name", "dtype", "ignore_class", "sparse_y_true", "sparse_y_pred", "axis" })
end

-- BinaryIoU{target_class_ids={0, 1}, threshold=0.5, name=, dtype=}: predictions >= threshold are class 1.
local BinaryIoU = common.class("BinaryIoU", IoU)
M.BinaryIoU = BinaryIoU

function BinaryIoU:__init(...)
  local o = common.options("BinaryIoU", { "target_class_ids", "threshold", "name", "dtype" }, ...)
  self.threshold = common.want_number("BinaryIoU", "threshold", o.threshold == nil and 0.5 or o.threshold)
  self:_init_iou("BinaryIoU", { num_classes = 2, target_class_ids = o.target_class_ids or { 0, 1 }, name = o.name,
    dtype = o.dtype })
end

function BinaryIoU:update_state(y_true, y_pred, sample_weight)
  local p = common.float_input(self.name, "y_pred", y_pred, "float32")
  return IoU.update_state(self, y_true, ops.cast(ops.greater_equal(p, self.threshold), self.dtype), sample_weight)
end

function BinaryIoU:get_config() return config_of(self, { "target_class_ids", "threshold", "name", "dtype" }) end

-- OneHotIoU{num_classes, target_class_ids, name=, dtype=, ignore_class=, sparse_y_pred=false, axis=-1}:
-- one-hot labels (and scores unless sparse_y_pred).
local OneHotIoU = common.class("OneHotIoU", IoU)
M.OneHotIoU = OneHotIoU

function OneHotIoU:__init(...)
  local o = common.options("OneHotIoU", { "num_classes", "target_class_ids", "name", "dtype", "ignore_class",
    "sparse_y_pred", "axis" }, ...)
  o.sparse_y_true = false
  if o.sparse_y_pred == nil then o.sparse_y_pred = false end
  self:_init_iou("OneHotIoU", o)
end

function OneHotIoU:get_config()
  return config_of(self, { "num_classes", "target_class_ids", "name", "dtype", "ignore_class", "sparse_y_pred",
    "axis" })
end

-- OneHotMeanIoU{num_classes, name=, dtype=, ignore_class=, sparse_y_pred=false, axis=-1}.
local OneHotMeanIoU = common.class("OneHotMeanIoU", IoU)
M.OneHotMeanIoU = OneHotMeanIoU

function OneHotMeanIoU:__init(...)
  local o = common.options("OneHotMeanIoU", { "num_classes", "name", "dtype", "ignore_class", "sparse_y_pred",
    "axis" }, ...)
  o.target_class_ids = all_classes(o, "OneHotMeanIoU")
  o.sparse_y_true = false
  if o.sparse_y_pred == nil then o.sparse_y_pred = false end
  self:_init_iou("OneHotMeanIoU", o)
end

function OneHotMeanIoU:get_config()
  return config_of(self, { "num_classes", "name", "dtype", "ignore_class", "sparse_y_pred", "axis" })
end

return M
