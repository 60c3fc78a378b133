-- tests/support/trace_ops_cases_signal.lua — tf.signal's transforms for
-- tests/support/trace_ops_cases.lua (which merges them; same add() contract):
-- each eager, traced, with None dims and with unknown ranks.
local tide = require "tide"

local S = tide.signal

return function(T)
  local data, cases = T.data, {}
  local FLOATS = { "float32", "float64" }
  -- the lengths come from the input (TF's default) or are given: both trace with None dims
  local function two(z) return z.real, z.imag end
  -- rfft's and irfft's gradients need the lengths, and with fft_length given the input's dims
  local lengths = { grad_rank_error = "gradient needs the transform's lengths" }
  local dims_given = { grad_rank_error = "gradient needs the input's rank known while tracing" }
  local function with(o, more) for k, v in pairs(more) do o[k] = v end return o end
  cases.fft = function(add)
    for _, dt in ipairs(FLOATS) do
      add(dt, function(re, im) return two(S.fft { real = re, imag = im }) end, { data({ 2, 6 }, dt), data({ 2, 6 }, dt) },
        { approx = true })
      add(dt .. " 2-D", function(re, im) return two(S.fft2d { real = re, imag = im }) end,
        { data({ 3, 4 }, dt), data({ 3, 4 }, dt) }, { approx = true })
    end
  end
  cases.ifft = function(add)
    for _, dt in ipairs(FLOATS) do
      add(dt, function(re, im) return two(S.ifft { real = re, imag = im }) end, { data({ 5 }, dt), data({ 5 }, dt) },
        { approx = true })
    end
  end
  cases.rfft = function(add)
    for _, dt in ipairs(FLOATS) do
      add(dt, function(x) return two(S.rfft(x)) end, { data({ 2, 8 }, dt) }, with({ approx = true }, lengths))
      add(dt .. " fft_length", function(x) return two(S.rfft(x, { 6 })) end, { data({ 3, 4 }, dt) },
        with({ approx = true }, dims_given))
      add(dt .. " 2-D", function(x) return two(S.rfft2d(x)) end, { data({ 3, 5 }, dt) }, with({ approx = true }, lengths))
    end
  end
  cases.irfft = function(add)
    for _, dt in ipairs(FLOATS) do
      add(dt, function(re, im) return S.irfft({ real = re, imag = im }, { 8 }) end, { data({ 2, 5 }, dt), data({ 2, 5 }, dt) },
        with({ approx = true }, dims_given))
      add(dt .. " default length", function(re, im) return S.irfft { real = re, imag = im } end,
        { data({ 4 }, dt), data({ 4 }, dt) }, with({ approx = true }, lengths))
    end
  end
  return cases
end
