-- stdlib/tide/layers/preprocessing/init.lua — the preprocessing family of tide.layers: the image layers
-- (Rescaling, Resizing, CenterCrop) and the image augmentations (RandomFlip ... RandomBrightness).
local M = {}
for _, file in ipairs {
  require "tide.layers.preprocessing.image",        -- Rescaling, Resizing, CenterCrop
  require "tide.layers.preprocessing.image_random", -- RandomFlip, RandomRotation, RandomZoom, RandomTranslation,
                                                    -- RandomCrop, RandomContrast, RandomBrightness
} do
  for name, value in pairs(file) do M[name] = value end
end
return M
