-- stdlib/tide/applications/imagenet.lua — decode_predictions (Keras 3's imagenet_utils):
-- ImageNet's 1000 class ids and names, read from Keras's imagenet_class_index.json.
--
-- tide ships no copy and downloads nothing: the file is taken from the path given,
-- or from where Keras caches it (~/.keras/models/), else the error says where to get it.
local binding = require "tide.binding"
local convert = require "tide.convert"
local file = require "tide.file"
local json = require "tide.json"

local fmt = string.format
local M = {}

M.URL = "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json"

local cache = {} -- path -> decoded index

local function default_path()
  local home = os.getenv("KERAS_HOME") or ((os.getenv("HOME") or "") .. "/.keras")
  return home .. "/models/imagenet_class_index.json"
end

-- The class index: {["0"] = {"n01440764", "tench"}, ...}.
local function class_index(fn, path)
  path = path or default_path()
  if cache[path] then return cache[path] end
  if not file.exists(path) then
    binding.error(fmt("%s: ImageNet's class index '%s' is not there; tide does not download it. Fetch %s and " ..
      "pass its path: decode_predictions(preds, {class_index = \"/path/to/imagenet_class_index.json\"})", fn, path,
      M.URL))
  end
  local fh = assert(io.open(path, "rb"))
  local text = fh:read("*a")
  fh:close()
  local idx = json.decode(text, fn .. ": " .. path)
  if type(idx) ~= "table" or type(idx["0"]) ~= "table" or type(idx["999"]) ~= "table" then
    binding.error(fmt("%s: '%s' is not ImageNet's class index (a JSON object \"0\" .. \"999\" -> [id, name])", fn, path))
  end
  cache[path] = idx
  return idx
end

-- decode_predictions(preds, {top = 5, class_index = path}): for each row of
-- preds (batch, 1000), the top classes as {id, name, score}, best first.
function M.decode_predictions(preds, opts)
  local fn = "decode_predictions"
  opts = opts or {}
  if type(opts) == "number" then opts = { top = opts } end
  local top = opts.top or opts[1] or 5
  if type(top) ~= "number" or top < 1 or top % 1 ~= 0 then
    binding.error(fmt("%s: top must be a positive integer, got %s", fn, tostring(top)))
  end
  local p = convert.tensor(preds, nil, fn)
  local shape = p.shape:as_list()
  if #shape ~= 2 or shape[2] ~= 1000 then
    binding.error(fmt("%s: expects a batch of predictions of shape (samples, 1000), got %s", fn, tostring(p.shape)))
  end
  local idx = class_index(fn, opts.class_index)
  local rows = p:cast("float64"):totable()
  local out = {}
  for r, row in ipairs(rows) do
    local order = {}
    for i = 1, #row do order[i] = i end
    -- by score, then by index (stable, as numpy's argsort of equal scores)
    table.sort(order, function(a, b) if row[a] ~= row[b] then return row[a] > row[b] end return a < b end)
    local res = {}
    for k = 1, math.min(top, #row) do
      local e = idx[tostring(order[k] - 1)]
      res[k] = { e[1], e[2], row[order[k]] }
    end
    out[r] = res
  end
  return out
end

return M
