-- stdlib/tide/layers/preprocessing/init.lua — the preprocessing family of tide.layers: CategoryEncoding,
-- Discretization, the lookups and hashing layers, the image layers (Rescaling, Resizing, CenterCrop) and augmentations (RandomFlip ...).
local M = {}
for _, file in ipairs {
  require "tide.layers.preprocessing.categorical",  -- CategoryEncoding, Discretization
  require "tide.layers.preprocessing.lookup",       -- IntegerLookup, StringLookup
  require "tide.layers.preprocessing.hashing",      -- Hashing, HashedCrossing
  require "tide.layers.preprocessing.image",        -- Rescaling, Resizing, CenterCrop
  require "tide.layers.preprocessing.image_random", -- RandomFlip, RandomRotation, RandomZoom, RandomTranslation,
                                                    -- RandomCrop, RandomContrast, RandomBrightness
} do
  for name, value in pairs(file) do M[name] = value end
end
return M
