-- bench/layers_rnn.lua — recurrent layers' speed: an LSTM(128) over 28 steps
-- of 28 features, batch 128 (MNIST rows as a sequence), forward and
-- forward+backward (gradients of every weight): eager, traced with the time
-- dim known (the Lua loop unrolled into the graph), traced over a None time
-- dim (tide.while_loop), and traced with a known time dim forced through the
-- while loop — the measurement behind rnn.lua's choice. Also a GRU(128).
--   build/tide bench/layers_rnn.lua
local tide = require "tide"

local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local measure, emit = timing.measure, timing.emit

tide.random.set_seed(0)
tide.config.set_retracing_warning(false)

local B, T, F, H = 128, 28, 28, 128
local x = tide.random.normal { B, T, F }

local function bench(name, make)
  local layer = make()
  layer(x)
  local vars = layer.trainable_weights
  local function loss(v) return tide.reduce_mean(layer(v) ^ 2) end
  local function step(v)
    local tape = tide.GradientTape()
    local l = tape:run(function() return loss(v) end)
    return tape:gradient(l, vars)
  end
  local runs = {
    { "eager", function() return layer(x) end, function() return step(x) end },
  }
  local sigs = {
    { "traced_known_T", {} },
    { "traced_none_T", { input_signature = { tide.TensorSpec { tide.None, tide.None, F } } } },
  }
  for _, s in ipairs(sigs) do
    local fwd = tide.trace(function(v) return layer(v) end, s[2])
    local fb = tide.trace(step, s[2])
    runs[#runs + 1] = { s[1], function() return fwd(x) end, function() return fb(x) end }
  end
  -- a known T through the while loop (what rnn.lua would do if it chose it)
  local fwd_w = tide.trace(function(v) rawset(layer, "_loop", "while"); local y = layer(v); rawset(layer, "_loop", nil); return y end)
  local fb_w = tide.trace(function(v) rawset(layer, "_loop", "while"); local g = step(v); rawset(layer, "_loop", nil); return g end)
  runs[#runs + 1] = { "traced_known_T_while", function() return fwd_w(x) end, function() return fb_w(x) end }
  for _, r in ipairs(runs) do
    local iters = r[1] == "eager" and 3 or 5
    emit(string.format("%s_%s_forward", name, r[1]), measure(r[2], iters, 5) * 1e3, "ms")
    emit(string.format("%s_%s_forward_backward", name, r[1]), measure(r[3], iters, 5) * 1e3, "ms")
  end
end

bench("lstm128_b128_t28", function() return tide.layers.LSTM { H } end)
bench("gru128_b128_t28", function() return tide.layers.GRU { H } end)
