-- stdlib/tide/io/init.lua — tide.io: file formats (TFRecord files,
-- tf.train.Example, CSV, IDX, .npy) and matching_files, each in its own
-- module; this table gathers them.
local M = {}

for _, mod in ipairs { require "tide.io.tfrecord", require "tide.io.example", require "tide.io.idx", require "tide.io.npy",
  require "tide.io.files" } do
  for name, v in pairs(mod) do M[name] = v end
end

return M
