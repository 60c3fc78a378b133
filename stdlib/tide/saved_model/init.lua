-- stdlib/tide/saved_model/init.lua — tide.saved_model (TF's tf.saved_model): the face that
-- hands on save and load. Traced functions' graphs and their variables are written to a
-- directory by C (kernels/io/saved_model.c) and loaded with no Lua of the code that made
-- them; a loaded signature replays the checked graph (replay.lua), so it traces, runs in C,
-- and differentiates as any traced function.
--   save.lua    save: signatures, their input and output names, the variables
--   load.lua    load: signatures, traced functions, variables, c_function
--   keras.lua   whole Keras models (model:save, tide.models.load_model)
local save = require "tide.saved_model.save"
local load = require "tide.saved_model.load"

return { save = save.save, load = load.load }
