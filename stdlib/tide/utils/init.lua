-- stdlib/tide/utils/init.lua — tide.utils (keras.utils) on the data floor: folder datasets, small helpers, Config,
-- logging switches, sequences, image files; tide/init.lua adds the names living higher (Progbar, registry, plots).
local directory_datasets = require "tide.utils.directory_datasets"
local misc = require "tide.utils.misc"
local sequences = require "tide.utils.sequences"
local images = require "tide.utils.images"
local keras_nn = require "tide.ops.keras_nn"
local io_utils = require "tide.utils.io_utils"
local config_dict = require "tide.utils.config_dict"
local py_dataset = require "tide.utils.py_dataset"

local M = {
  image_dataset_from_directory = directory_datasets.image_dataset_from_directory,
  text_dataset_from_directory = directory_datasets.text_dataset_from_directory,
  audio_dataset_from_directory = directory_datasets.audio_dataset_from_directory,
  to_categorical = misc.to_categorical,
  pad_sequences = misc.pad_sequences,
  set_random_seed = misc.set_random_seed,
  get_file = misc.get_file,
  timeseries_dataset_from_array = sequences.timeseries_dataset_from_array,
  split_dataset = sequences.split_dataset,
  pack_x_y_sample_weight = misc.pack_x_y_sample_weight,
  unpack_x_y_sample_weight = misc.unpack_x_y_sample_weight,
  load_img = images.load_img,
  img_to_array = images.img_to_array,
  save_img = images.save_img,
  array_to_img = images.array_to_img,
  -- keras.utils.normalize is keras.ops.normalize for tensors (x over its order-norm along axis)
  normalize = keras_nn.normalize,
  standardize_dtype = misc.standardize_dtype,
  Config = config_dict.Config,
  enable_interactive_logging = io_utils.enable_interactive_logging,
  disable_interactive_logging = io_utils.disable_interactive_logging,
  is_interactive_logging_enabled = io_utils.is_interactive_logging_enabled,
  PyDataset = py_dataset.PyDataset,
  Sequence = py_dataset.PyDataset, -- Keras 3 keeps Keras 2's name for the same class
}

return M
