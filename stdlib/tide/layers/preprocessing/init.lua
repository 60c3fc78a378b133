-- stdlib/tide/layers/preprocessing/init.lua — the preprocessing family of tide.layers: CategoryEncoding,
-- Discretization, the lookups and hashing layers, the image layers (Rescaling, Resizing, CenterCrop) and augmentations (RandomFlip ...).
local M = {}
for _, file in ipairs {
  require "tide.layers.preprocessing.categorical",  -- CategoryEncoding, Discretization
  require "tide.layers.preprocessing.lookup",       -- IntegerLookup, StringLookup
  require "tide.layers.preprocessing.hashing",      -- Hashing, HashedCrossing
  require "tide.layers.preprocessing.text_vectorization", -- TextVectorization
  require "tide.layers.preprocessing.image",        -- Rescaling, Resizing, CenterCrop
  require "tide.layers.preprocessing.image_random", -- RandomFlip, RandomRotation, RandomZoom, RandomTranslation,
                                                    -- RandomCrop, RandomContrast, RandomBrightness
  require "tide.layers.preprocessing.image_color",  -- AutoContrast, Equalization, Solarization, RandomInvert,
                                                    -- RandomPosterization, RandomGrayscale, RandomColorDegeneration
  require "tide.layers.preprocessing.image_filter", -- RandomHue, RandomSaturation, RandomColorJitter,
                                                    -- RandomSharpness, RandomGaussianBlur, RandomErasing
  require "tide.layers.preprocessing.image_warp",   -- RandomShear, RandomPerspective, RandomElasticTransform
  require "tide.layers.preprocessing.image_mix",    -- CutMix, MixUp, MaxNumBoundingBoxes
  require "tide.layers.preprocessing.image_policy", -- RandAugment, AugMix
  require "tide.layers.preprocessing.image_clahe",  -- ContrastLimitedAdaptiveHistogramEqualization
  require "tide.layers.preprocessing.normalization", -- Normalization (with adapt)
  require "tide.layers.preprocessing.pipeline",      -- Pipeline
} do
  for name, value in pairs(file) do
    if type(value) == "table" then M[name] = value end
  end
end
return M
