-- stdlib/tide/utils/numpy_shuffle.lua — NumPy's legacy np.random.RandomState(seed).shuffle: MT19937 seeded by
-- init_genrand and Fisher-Yates with masked rejection, so Keras's file orders and splits come out the same.
local bit = require "bit"

local band, bor, bxor, rshift, lshift = bit.band, bit.bor, bit.bxor, bit.rshift, bit.lshift

local M = {}

local N, MID = 624, 397
local TWO32 = 4294967296

-- a * x mod 2^32 for a, x below 2^32, in doubles (the product itself needs 64 bits).
local function mulmod32(a, x)
  local xh, xl = math.floor(x / 65536), x % 65536
  return ((a * xh) % 65536 * 65536 + a * xl) % TWO32
end

-- A generator: numpy's mt19937_seed (init_genrand) of a seed in [0, 2^32).
local function new(seed)
  local mt = {}
  mt[0] = seed
  for i = 1, N - 1 do
    local prev = mt[i - 1]
    mt[i] = (mulmod32(1812433253, bxor(prev, rshift(prev, 30)) % TWO32) + i) % TWO32
  end
  return { mt = mt, i = N }
end

-- The next 32-bit output (mt19937_genrand), a number in [0, 2^32).
local function next32(g)
  local mt = g.mt
  if g.i >= N then
    for k = 0, N - 1 do
      local y = bor(band(mt[k], 0x80000000), band(mt[(k + 1) % N], 0x7fffffff))
      local v = bxor(mt[(k + MID) % N], rshift(y, 1))
      if band(y, 1) ~= 0 then v = bxor(v, 0x9908b0df) end
      mt[k] = v % TWO32
    end
    g.i = 0
  end
  local y = mt[g.i]
  g.i = g.i + 1
  y = bxor(y, rshift(y, 11))
  y = bxor(y, band(lshift(y, 7), 0x9d2c5680))
  y = bxor(y, band(lshift(y, 15), 0xefc60000))
  y = bxor(y, rshift(y, 18))
  return y % TWO32
end

-- random_interval(max): uniform in [0, max] (max < 2^32) by masked rejection, as NumPy's legacy bit generator.
local function interval(g, max)
  if max == 0 then return 0 end
  local mask = max
  for _, s in ipairs { 1, 2, 4, 8, 16 } do mask = bor(mask, rshift(mask, s)) end
  mask = mask % TWO32
  while true do
    local v = band(next32(g), mask) % TWO32
    if v <= max then return v end
  end
end

-- The permutation RandomState(seed).shuffle applies to a list of n: a 1-based list p where the shuffled
-- list's i-th item is the original's p[i]. seed: an integer in [0, 2^32).
function M.permutation(n, seed)
  if type(seed) ~= "number" or seed ~= math.floor(seed) or seed < 0 or seed >= TWO32 then
    error(string.format("seed must be an integer between 0 and 2^32 - 1, got %s", tostring(seed)), 2)
  end
  local g = new(seed)
  local p = {}
  for i = 1, n do p[i] = i end
  for i = n - 1, 1, -1 do -- numpy: for i in reversed(range(1, n)): j = random_interval(i); swap x[i], x[j]
    local j = interval(g, i)
    p[i + 1], p[j + 1] = p[j + 1], p[i + 1]
  end
  return p
end

-- The first k raw 32-bit outputs for seed (for the specs: numpy's RandomState(seed).randint(2**32) gives them).
function M.raw(seed, k)
  local g, out = new(seed), {}
  for i = 1, k do out[i] = next32(g) end
  return out
end

return M
