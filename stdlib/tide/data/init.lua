-- stdlib/tide/data/init.lua — tide.data: the input pipeline's public table
-- (Dataset, AUTOTUNE and the cardinality constants), as TF's tf.data.
local dataset = require "tide.data.dataset"
local csv = require "tide.data.csv"
local files = require "tide.data.files"
dataset.Dataset.list_files = files.list_files -- a constructor, as tf.data.Dataset.list_files

local M = {
  Dataset = dataset.Dataset,
  AUTOTUNE = dataset.AUTOTUNE,
  INFINITE_CARDINALITY = dataset.INFINITE_CARDINALITY,
  UNKNOWN_CARDINALITY = dataset.UNKNOWN_CARDINALITY,
  is_dataset = dataset.is_dataset,
  DatasetSpec = require("tide.data.structure").DatasetSpec,
  Options = require("tide.data.options").Options, -- tf.data.Options: what tide honours (docs/data.md)
  TFRecordDataset = files.TFRecordDataset,
  TextLineDataset = files.TextLineDataset,
  experimental = {
    AUTOTUNE = dataset.AUTOTUNE,
    INFINITE_CARDINALITY = dataset.INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY = dataset.UNKNOWN_CARDINALITY,
    CsvDataset = csv.CsvDataset,
    make_csv_dataset = csv.make_csv_dataset,
  },
}

-- A dataset of what a C source reads (kernels/include/tide/data.h's
-- tide_data_source), for the file readers: make() gives a fresh
-- tide_dataset * each call; template and specs describe its elements
-- (tide.data.structure), card its cardinality.
function M.from_c_source(make, template, specs, card)
  return setmetatable({ kind = "c_source", make_source = make, template = template, specs = specs,
    card = card or dataset.UNKNOWN_CARDINALITY }, dataset.Dataset) -- (data/stages/c_source.lua)
end

return M
