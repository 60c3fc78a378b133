-- stdlib/tide/datasets/init.lua — tide.datasets: Keras's bundled data sets
-- read from local files (Fashion-MNIST and MNIST as IDX, never downloaded).
local binding = require "tide.binding"
local idx = require "tide.io.idx"

local M = {}

local FILES = {
  x_train = "train-images-idx3-ubyte", y_train = "train-labels-idx1-ubyte",
  x_test = "t10k-images-idx3-ubyte", y_test = "t10k-labels-idx1-ubyte",
}

-- The file `name` (.gz or plain) under TIDE_DATA_DIR/<sub> or TIDE_DATA_DIR,
-- else the Debian package's folder; an error naming the package and the path.
local function find(sub, name, package, debian_dir)
  local dirs = {}
  local env = os.getenv("TIDE_DATA_DIR")
  if env and env ~= "" then
    dirs[#dirs + 1] = env .. "/" .. sub
    dirs[#dirs + 1] = env
  end
  if debian_dir then dirs[#dirs + 1] = debian_dir end
  for _, d in ipairs(dirs) do
    for _, suffix in ipairs { ".gz", "" } do
      local path = d .. "/" .. name .. suffix
      local f = binding.open_file(path, "rb")
      if f then f:close(); return path end
    end
  end
  local where = debian_dir and (debian_dir .. "/" .. name .. ".gz") or (sub .. "/" .. name .. ".gz under TIDE_DATA_DIR")
  binding.error(string.format("tide.datasets.%s.load_data: %s is missing (looked in %s); %s, or put the IDX files " ..
    "in a folder and set TIDE_DATA_DIR to it (or to its parent, with them under %s/)", sub:gsub("%-", "_"), where,
    table.concat(dirs, ", "), package, sub))
end

local function loader(sub, package, debian_dir)
  return {
    -- load_data(): {x_train, y_train}, {x_test, y_test}: uint8 images
    -- [N, 28, 28] and uint8 labels [N], as Keras's load_data.
    load_data = function()
      local t = {}
      for k, name in pairs(FILES) do t[k] = idx.read_idx(find(sub, name, package, debian_dir)) end
      return { t.x_train, t.y_train }, { t.x_test, t.y_test }
    end,
  }
end

M.fashion_mnist = loader("fashion-mnist", "install Debian's dataset-fashion-mnist package (apt-get install " ..
  "dataset-fashion-mnist)", "/usr/share/datasets/fashion-mnist")
M.mnist = loader("mnist", "Debian packages no MNIST: download the four IDX files (train-images-idx3-ubyte.gz, ...)",
  "/usr/share/datasets/mnist")

return M
