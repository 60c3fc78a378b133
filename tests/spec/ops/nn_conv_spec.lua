-- Convolutions and pooling: values against naive references written here (every
-- padding, stride and dilation, batches and channels > 1), TF's output shapes
-- and SAME padding, strided views, halves, errors, and float64 gradient checks.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local nn = tide.nn

local floor, ceil, max = math.floor, math.ceil, math.max

-- ---- naive references on flat row-major Lua lists ----------------------------------

local function at(d, a, b, c, e) return ((a * d[2] + b) * d[3] + c) * d[4] + e + 1 end

local function zeros(n)
  local t = {}
  for i = 1, n do t[i] = 0 end
  return t
end

-- Output size and pad before along one dim, by TF's documented rules.
local function dim_rule(n, k, s, d, padding, before, after)
  local keff = (k - 1) * d + 1
  if padding == "SAME" then
    local out = ceil(n / s)
    local total = max((out - 1) * s + keff - n, 0)
    return out, floor(total / 2)
  elseif padding == "VALID" then
    return floor((n - keff) / s) + 1, 0
  end
  return floor((n + before + after - keff) / s) + 1, before
end

-- The geometry of a window op: {oh, ow, pt, pl} for input dims xd.
local function geometry(xd, kh, kw, s, d, padding)
  local ph = type(padding) == "table" and padding[2] or {}
  local pw = type(padding) == "table" and padding[3] or {}
  local oh, pt = dim_rule(xd[2], kh, s[1], d[1], padding, ph[1], ph[2])
  local ow, pl = dim_rule(xd[3], kw, s[2], d[2], padding, pw[1], pw[2])
  return oh, ow, pt, pl
end

-- Visit every (n, oy, ox, ki, kj, ih, iw) where the window touches the image.
local function each_tap(xd, kh, kw, s, d, padding, fn)
  local oh, ow, pt, pl = geometry(xd, kh, kw, s, d, padding)
  for n = 0, xd[1] - 1 do
    for oy = 0, oh - 1 do
      for ox = 0, ow - 1 do
        for ki = 0, kh - 1 do
          for kj = 0, kw - 1 do
            local ih, iw = oy * s[1] - pt + ki * d[1], ox * s[2] - pl + kj * d[2]
            if ih >= 0 and ih < xd[2] and iw >= 0 and iw < xd[3] then fn(n, oy, ox, ki, kj, ih, iw) end
          end
        end
      end
    end
  end
  return oh, ow
end

-- Filter element and output channel of (input channel c, filter column o):
-- conv2d pairs every c with every o; depthwise pairs c with its own multiplier block.
local function pairs_of(wd, depthwise, fn)
  local C = wd[3]
  for c = 0, C - 1 do
    for o = 0, wd[4] - 1 do
      fn(c, o, depthwise and c * wd[4] + o or o)
    end
  end
end

-- The three passes of conv2d (or depthwise) on flat lists; each returns flat values.
local ref = {}

function ref.conv(x, xd, w, wd, s, d, padding, depthwise)
  local oh, ow = geometry(xd, wd[1], wd[2], s, d, padding)
  local oc = depthwise and wd[3] * wd[4] or wd[4]
  local yd = { xd[1], oh, ow, oc }
  local y = zeros(yd[1] * oh * ow * oc)
  each_tap(xd, wd[1], wd[2], s, d, padding, function(n, oy, ox, ki, kj, ih, iw)
    pairs_of(wd, depthwise, function(c, o, yo)
      local i = at(yd, n, oy, ox, yo)
      y[i] = y[i] + x[at(xd, n, ih, iw, c)] * w[at(wd, ki, kj, c, o)]
    end)
  end)
  return y, yd
end

function ref.bp_input(dy, xd, w, wd, s, d, padding, depthwise)
  local oh, ow = geometry(xd, wd[1], wd[2], s, d, padding)
  local oc = depthwise and wd[3] * wd[4] or wd[4]
  local yd = { xd[1], oh, ow, oc }
  local dx = zeros(xd[1] * xd[2] * xd[3] * xd[4])
  each_tap(xd, wd[1], wd[2], s, d, padding, function(n, oy, ox, ki, kj, ih, iw)
    pairs_of(wd, depthwise, function(c, o, yo)
      local i = at(xd, n, ih, iw, c)
      dx[i] = dx[i] + dy[at(yd, n, oy, ox, yo)] * w[at(wd, ki, kj, c, o)]
    end)
  end)
  return dx
end

function ref.bp_filter(x, xd, dy, wd, s, d, padding, depthwise)
  local oh, ow = geometry(xd, wd[1], wd[2], s, d, padding)
  local oc = depthwise and wd[3] * wd[4] or wd[4]
  local yd = { xd[1], oh, ow, oc }
  local dw = zeros(wd[1] * wd[2] * wd[3] * wd[4])
  each_tap(xd, wd[1], wd[2], s, d, padding, function(n, oy, ox, ki, kj, ih, iw)
    pairs_of(wd, depthwise, function(c, o, yo)
      local i = at(wd, ki, kj, c, o)
      dw[i] = dw[i] + x[at(xd, n, ih, iw, c)] * dy[at(yd, n, oy, ox, yo)]
    end)
  end)
  return dw
end

-- Pooling: max or mean over the window's elements inside the image.
function ref.pool(x, xd, k, s, padding, kind)
  local oh, ow = geometry(xd, k[1], k[2], s, { 1, 1 }, padding)
  local yd = { xd[1], oh, ow, xd[4] }
  local y, count = {}, {}
  each_tap(xd, k[1], k[2], s, { 1, 1 }, padding, function(n, oy, ox, _, _, ih, iw)
    for c = 0, xd[4] - 1 do
      local i, v = at(yd, n, oy, ox, c), x[at(xd, n, ih, iw, c)]
      if kind == "max" then y[i] = y[i] and max(y[i], v) or v
      else y[i] = (y[i] or 0) + v; count[i] = (count[i] or 0) + 1 end
    end
  end)
  if kind == "avg" then for i, v in pairs(y) do y[i] = v / count[i] end end
  return y, yd
end

-- Pool gradients: max sends dy to the window's first maximum (row-major), avg spreads dy / count.
function ref.pool_grad(x, xd, dy, k, s, padding, kind)
  local oh, ow = geometry(xd, k[1], k[2], s, { 1, 1 }, padding)
  local yd = { xd[1], oh, ow, xd[4] }
  local best, where, count = {}, {}, {}
  each_tap(xd, k[1], k[2], s, { 1, 1 }, padding, function(n, oy, ox, _, _, ih, iw)
    for c = 0, xd[4] - 1 do
      local i, j = at(yd, n, oy, ox, c), at(xd, n, ih, iw, c)
      if best[i] == nil or x[j] > best[i] then best[i], where[i] = x[j], j end
      count[i] = (count[i] or 0) + 1
    end
  end)
  local dx = zeros(#x)
  if kind == "max" then
    for i, j in pairs(where) do dx[j] = dx[j] + dy[i] end
  else
    each_tap(xd, k[1], k[2], s, { 1, 1 }, padding, function(n, oy, ox, _, _, ih, iw)
      for c = 0, xd[4] - 1 do
        local i, j = at(yd, n, oy, ox, c), at(xd, n, ih, iw, c)
        dx[j] = dx[j] + dy[i] / count[i]
      end
    end)
  end
  return dx
end

-- ---- helpers ------------------------------------------------------------------------

local function random(shape, dt, seed, lo, hi)
  local t = gc.random(shape, lo or -1, hi or 1, seed)
  return dt == "float64" and t or t:cast(dt)
end

local function shape_of(t) return t.shape end
local function same_shape(t, want)
  local s = shape_of(t)
  assert(#s == #want, "rank " .. #s .. " vs " .. #want)
  for i = 1, #want do assert(s[i] == want[i], string.format("shape %s, expected {%s}", tostring(s), table.concat(want, ", "))) end
end

-- strides, dilations, padding (shared with tests/support/grad_cases_nn.lua)
local geo = require "conv_cases"
local CASES, case_name = geo.CONV, geo.conv_name

local function tol(dt) return (dt == "float64" and 1e-10) or 1e-4 end

-- ---- conv2d -------------------------------------------------------------------------

describe("conv2d", function()
  it("matches hand-computed sums, with SAME's extra pad at the bottom and right as in TF", function()
    local x = tide.tensor({ 1, 2, 3, 4, 5, 6, 7, 8, 9 }, "float32"):reshape { 1, 3, 3, 1 }
    local w = tide.tensor({ 1, 1, 1, 1 }, "float32"):reshape { 2, 2, 1, 1 }
    -- out = ceil(3 / 2) = 2, pad_total = 1: none on top/left, one row/column after.
    h.close(nn.conv2d(x, w, 2, "SAME"), { { { { 12 }, { 9 } }, { { 15 }, { 9 } } } })
    h.close(nn.conv2d(x, w, 1, "VALID"), { { { { 12 }, { 16 } }, { { 24 }, { 28 } } } })
    -- SAME, stride 1, 2x2: pad_total = 1, again after.
    h.close(nn.conv2d(x, w, 1, "SAME"), { { { { 12 }, { 16 }, { 9 } }, { { 24 }, { 28 }, { 15 } },
      { { 15 }, { 17 }, { 9 } } } })
    -- Two input channels, two filters: filter 1 sums channel 0, filter 2 doubles channel 1.
    local x2 = tide.tensor({ 1, 10, 2, 20 }, "float64"):reshape { 1, 1, 2, 2 }
    local w2 = tide.tensor({ 1, 0, 0, 2 }, "float64"):reshape { 1, 1, 2, 2 }
    h.close(nn.conv2d(x2, w2), { { { { 1, 20 }, { 2, 40 } } } })
  end)

  it("gives TF's output shapes", function()
    same_shape(nn.conv2d(tide.zeros { 1, 5, 5, 1 }, tide.zeros { 3, 3, 1, 2 }, 1, "SAME"), { 1, 5, 5, 2 })
    same_shape(nn.conv2d(tide.zeros { 1, 5, 5, 1 }, tide.zeros { 3, 3, 1, 2 }, 1, "VALID"), { 1, 3, 3, 2 })
    same_shape(nn.conv2d(tide.zeros { 1, 5, 5, 1 }, tide.zeros { 3, 3, 1, 2 }, 2, "SAME"), { 1, 3, 3, 2 })
    same_shape(nn.conv2d(tide.zeros { 1, 5, 5, 1 }, tide.zeros { 3, 3, 1, 2 }, 2, "VALID"), { 1, 2, 2, 2 })
    same_shape(nn.conv2d(tide.zeros { 1, 6, 6, 1 }, tide.zeros { 3, 3, 1, 1 }, 2, "SAME"), { 1, 3, 3, 1 })
    same_shape(nn.conv2d(tide.zeros { 1, 7, 7, 1 }, tide.zeros { 3, 3, 1, 1 }, { strides = 2, padding = "SAME",
      dilations = 2 }), { 1, 4, 4, 1 })
    same_shape(nn.conv2d(tide.zeros { 1, 7, 7, 1 }, tide.zeros { 3, 3, 1, 1 }, { padding = "VALID",
      dilations = 2 }), { 1, 3, 3, 1 })
    same_shape(nn.conv2d(tide.zeros { 2, 10, 8, 1 }, tide.zeros { 3, 2, 1, 4 }, { 3, 2 }, "SAME"), { 2, 4, 4, 4 })
    same_shape(nn.conv2d(tide.zeros { 2, 10, 8, 1 }, tide.zeros { 3, 2, 1, 4 }, { 1, 3, 2, 1 }, "VALID"),
      { 2, 3, 4, 4 })
    same_shape(nn.conv2d(tide.zeros { 1, 4, 4, 1 }, tide.zeros { 3, 3, 1, 1 }, 1,
      { { 0, 0 }, { 1, 0 }, { 2, 3 }, { 0, 0 } }), { 1, 3, 7, 1 })
  end)

  for _, dt in ipairs { "float32", "float64" } do
    it("matches the reference for every padding, stride and dilation (" .. dt .. ")", function()
      local xd, wd = { 3, 7, 6, 3 }, { 3, 2, 3, 4 }
      local x, w = random(xd, dt, 11), random(wd, dt, 12)
      local xv, wv = h.values(x), h.values(w)
      for _, c in ipairs(CASES) do
        local want, yd = ref.conv(xv, xd, wv, wd, c[1], c[2], c[3])
        local y = nn.conv2d(x, w, { strides = c[1], dilations = c[2], padding = c[3] })
        same_shape(y, yd)
        local ok, err = pcall(h.close, y, want, tol(dt))
        assert(ok, case_name(c) .. ": " .. tostring(err))
      end
    end)
  end

  it("runs 1x1 filters, batches that do not divide the thread count, and a batch of 1", function()
    for _, n in ipairs { 1, 5, 8 } do
      local xd, wd = { n, 4, 5, 6 }, { 1, 1, 6, 3 }
      local x, w = random(xd, "float32", n), random(wd, "float32", 2)
      h.close(nn.conv2d(x, w), (ref.conv(h.values(x), xd, h.values(w), wd, { 1, 1 }, { 1, 1 }, "SAME")), 1e-4)
      local x64, w64 = x:cast("float64"), w:cast("float64")
      h.close(nn.conv2d(x64, w64, 2), (ref.conv(h.values(x64), xd, h.values(w64), wd, { 2, 2 }, { 1, 1 }, "SAME")),
        1e-10)
    end
  end)

  it("splits big batches over the threads, uneven chunks included (float32 against float64)", function()
    local before = tide.config.get_num_threads()
    tide.config.set_num_threads(2) -- 11 images in 8 chunks: three of 2, five of 1
    local ok, err = pcall(function()
      local xd = { 11, 24, 20, 8 }
      local x64 = random(xd, "float64", 201)
      for _, dw in ipairs { false, true } do
        local wd = dw and { 3, 3, 8, 2 } or { 3, 3, 8, 8 }
        local w64 = random(wd, "float64", 202)
        local x, w = x64:cast("float32"), w64:cast("float32")
        local conv = dw and nn.depthwise_conv2d or nn.conv2d
        local bpi = dw and nn.depthwise_conv2d_backprop_input or nn.conv2d_backprop_input
        local bpf = dw and nn.depthwise_conv2d_backprop_filter or nn.conv2d_backprop_filter
        for _, o in ipairs { { strides = 1, padding = "SAME" }, { strides = 2, padding = "VALID", dilations = 1 } } do
          local y64 = conv(x64, w64, o)
          h.close(conv(x, w, o), y64, 1e-4)
          local dy64 = random(y64.shape, "float64", 203)
          local dy = dy64:cast("float32")
          h.close(bpi(xd, w, dy, o), bpi(xd, w64, dy64, o), 1e-4)
          h.close(bpf(x, wd, dy, o), bpf(x64, wd, dy64, o), 1e-3)
        end
      end
      -- One big image: a single primitive on OpenMP's threads.
      local x1, w1 = random({ 1, 48, 40, 8 }, "float64", 204), random({ 3, 3, 8, 8 }, "float64", 205)
      h.close(nn.conv2d(x1:cast("float32"), w1:cast("float32")), nn.conv2d(x1, w1), 1e-4)
    end)
    tide.config.set_num_threads(before)
    assert(ok, tostring(err))
  end)

  -- oneDNN's filter-gradient pass keeps one byte per worker slot; with more
  -- than 64 slots it wrote past its buffer (sizes chosen so the buffer is an
  -- exact allocator class and the sanitizer build sees the overrun).
  it("sums filter gradients over more than 64 worker threads", function()
    local before = tide.config.get_num_threads()
    tide.config.set_num_threads(128)
    local ok, err = pcall(function()
      local x64, dy64 = random({ 128, 48, 48, 1 }, "float64", 211), random({ 128, 48, 48, 1 }, "float64", 212)
      local want = tide.reduce_sum(tide.mul(x64, dy64)):item()
      local got = nn.depthwise_conv2d_backprop_filter(x64:cast("float32"), { 1, 1, 1, 1 }, dy64:cast("float32"))
      h.close(got, { { { { want } } } }, 1e-3)
      got = nn.conv2d_backprop_filter(x64:cast("float32"), { 1, 1, 1, 1 }, dy64:cast("float32"))
      h.close(got, { { { { want } } } }, 1e-3)
    end)
    tide.config.set_num_threads(before)
    assert(ok, tostring(err))
  end)

  it("reads strided views (transposed, sliced) as inputs", function()
    local base = random({ 2, 6, 5, 3 }, "float32", 5)
    local x = base:transpose { 0, 2, 1, 3 }                    -- [2, 5, 6, 3], not contiguous
    local wb = random({ 4, 3, 3, 2 }, "float32", 6)
    local w = wb:slice { { 1, 4 }, {}, {}, {} }                -- [3, 3, 3, 2], offset view
    local want = nn.conv2d(tide.contiguous(x), tide.contiguous(w), 2, "SAME")
    h.close(nn.conv2d(x, w, 2, "SAME"), want, 1e-6)
    h.close(nn.conv2d(x:cast("float64"):transpose { 0, 2, 1, 3 }:transpose { 0, 2, 1, 3 }, w:cast("float64"), 2,
      "SAME"), want, 1e-4)
  end)

  it("computes float16 and bfloat16 through float32", function()
    local xd, wd = { 2, 5, 5, 2 }, { 3, 3, 2, 3 }
    local x, w = random(xd, "float32", 3), random(wd, "float32", 4)
    local want = ref.conv(h.values(x), xd, h.values(w), wd, { 1, 1 }, { 1, 1 }, "SAME")
    for _, dt in ipairs { "float16", "bfloat16" } do
      local y = nn.conv2d(x:cast(dt), w:cast(dt))
      assert.are.equal(dt, y.dtype)
      h.close(y:cast("float32"), want, dt == "float16" and 2e-2 or 1e-1)
    end
  end)

  it("gives zeros for empty channels and an empty result for an empty batch", function()
    same_shape(nn.conv2d(tide.zeros { 0, 4, 4, 2 }, tide.zeros { 3, 3, 2, 5 }), { 0, 4, 4, 5 })
    h.close(nn.conv2d(tide.zeros { 1, 2, 2, 0 }, tide.zeros { 1, 1, 0, 2 }), { { { { 0, 0 }, { 0, 0 } },
      { { 0, 0 }, { 0, 0 } } } })
  end)

  it("takes Lua tables as filters, in the input's dtype", function()
    local x = tide.tensor({ 1, 2, 3, 4 }, "float64"):reshape { 1, 2, 2, 1 }
    local y = nn.conv2d(x, { { { { 2 } } } })
    assert.are.equal("float64", y.dtype)
    h.close(y, { { { { 2 }, { 4 } }, { { 6 }, { 8 } } } })
  end)

  it("rejects bad arguments with messages naming the op and the shapes", function()
    local x, w = tide.zeros { 1, 5, 5, 3 }, tide.zeros { 3, 3, 3, 4 }
    h.errors("the input has 3 channel(s) but the filters expect 2", nn.conv2d, x, tide.zeros { 3, 3, 2, 4 })
    h.errors("input shape [1, 5, 5, 3], filter shape [3, 3, 2, 4]", nn.conv2d, x, tide.zeros { 3, 3, 2, 4 })
    h.errors("is larger than the padded input (5x5) by two strides or more", nn.conv2d, x, tide.zeros { 7, 3, 3, 4 },
      1, "VALID")
    h.errors("conv2d: the window (3x3, dilations 3x3: 7x7 effective)", nn.conv2d, x, w, { padding = "VALID",
      dilations = 3 })
    h.errors("conv2d: strides must be positive, got [0, 0]", nn.conv2d, x, w, 0)
    h.errors("conv2d: dilations must be positive, got [1, -1]", nn.conv2d, x, w, { dilations = { 1, -1 } })
    h.errors("strides in the batch and channel dimensions must be 1", nn.conv2d, x, w, { 2, 1, 1, 1 })
    h.errors("strides must be a number, a pair or a list of 4", nn.conv2d, x, w, { 1, 1, 1 })
    h.errors("conv2d: input must be 4-D [batch, height, width, channels], got shape [5, 5, 3]", nn.conv2d,
      tide.zeros { 5, 5, 3 }, w)
    h.errors("conv2d: filters must be 4-D", nn.conv2d, x, tide.zeros { 3, 3, 3 })
    h.errors("conv2d: dtype mismatch: input is float32 but filters is float64", nn.conv2d, x, w:cast("float64"))
    h.errors("conv2d: input must be a float tensor", nn.conv2d, x:cast("int32"), w:cast("int32"))
    h.errors("padding must be \"SAME\" or \"VALID\" or a list of explicit paddings, got \"FULL\"", nn.conv2d, x, w,
      1, "FULL")
    h.errors("explicit padding of the batch and channel dimensions must be 0", nn.conv2d, x, w, 1,
      { { 1, 0 }, { 1, 1 }, { 1, 1 }, { 0, 0 } })
    h.errors("explicit paddings must be non-negative", nn.conv2d, x, w, 1, { { 1, -1 }, { 1, 1 } })
    h.errors("data_format must be \"NHWC\"", nn.conv2d, x, w, { data_format = "NCHW" })
    h.errors("conv2d: input is required", nn.conv2d, nil, w)
    h.errors("conv2d: filters is required", nn.conv2d, x, nil)
    h.errors("conv2d: unknown option 'stride'", nn.conv2d, x, w, { stride = 2 })
    -- sizes past int32 (TF's limit) used to overflow int64 in the window arithmetic
    h.errors("conv2d: dilations must be at most 2147483647, got [4611686018427387904, 1]", nn.conv2d, x, w,
      { dilations = { 2 ^ 62, 1 } })
    h.errors("conv2d: strides must be at most 2147483647", nn.conv2d, x, w, { strides = 2 ^ 40 })
    h.errors("conv2d: explicit paddings must be at most 2147483647", nn.conv2d, x, w,
      { padding = { { 2 ^ 62, 2 ^ 62 }, { 0, 0 } } })
    h.errors("conv2d_backprop_input: the height and width must be at most 2147483647 (input shape " ..
      "[1, 4611686018427387904, 5, 3], filter shape [3, 3, 3, 4])", nn.conv2d_backprop_input, { 1, 2 ^ 62, 5, 3 }, w,
      tide.zeros { 1, 5, 5, 4 })
  end)
end)

describe("conv1d", function()
  it("matches conv2d over a height of 1, with stride, padding and dilations", function()
    local x, w = random({ 2, 9, 3 }, "float64", 21), random({ 3, 3, 2 }, "float64", 22)
    local xv, wv = h.values(x), h.values(w)
    for _, c in ipairs { { 1, "SAME", 1 }, { 2, "VALID", 1 }, { 2, "SAME", 2 }, { 1, { { 0, 0 }, { 2, 1 }, { 0, 0 } }, 1 } } do
      local pad2 = type(c[2]) == "table" and { { 0, 0 }, { 0, 0 }, c[2][2], { 0, 0 } } or c[2]
      local want, yd = ref.conv(xv, { 2, 1, 9, 3 }, wv, { 1, 3, 3, 2 }, { 1, c[1] }, { 1, c[3] }, pad2)
      local y = nn.conv1d(x, w, c[1], c[2], { dilations = c[3] })
      same_shape(y, { 2, yd[3], 2 })
      h.close(y, want, 1e-10)
    end
  end)

  it("rejects bad shapes and options", function()
    h.errors("conv1d: input must be 3-D", nn.conv1d, tide.zeros { 1, 2, 3, 4 }, tide.zeros { 3, 4, 2 })
    h.errors("conv1d: filters must be 3-D", nn.conv1d, tide.zeros { 1, 5, 4 }, tide.zeros { 3, 4 })
    h.errors("data_format must be \"NWC\"", nn.conv1d, tide.zeros { 1, 5, 4 }, tide.zeros { 3, 4, 2 }, 1, "SAME",
      { data_format = "NCW" })
    h.errors("conv1d: stride must be positive", nn.conv1d, tide.zeros { 1, 5, 4 }, tide.zeros { 3, 4, 2 }, 0)
    h.errors("conv1d: explicit padding must be [[0,0],[left,right],[0,0]]", nn.conv1d, tide.zeros { 1, 5, 4 },
      tide.zeros { 3, 4, 2 }, 1, { { 1, 0 }, { 1, 1 }, { 0, 0 } })
    h.errors("the input has 4 channel(s) but the filters expect 3", nn.conv1d, tide.zeros { 1, 5, 4 },
      tide.zeros { 3, 3, 2 })
  end)
end)

describe("conv2d backprop ops and conv2d_transpose", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("match the references for every padding, stride and dilation (" .. dt .. ")", function()
      local xd, wd = { 3, 7, 6, 3 }, { 3, 2, 3, 4 }
      local x, w = random(xd, dt, 31), random(wd, dt, 32)
      local xv, wv = h.values(x), h.values(w)
      for _, c in ipairs(CASES) do
        local o = { strides = c[1], dilations = c[2], padding = c[3] }
        local _, yd = ref.conv(xv, xd, wv, wd, c[1], c[2], c[3])
        local dy = random(yd, dt, 33)
        local dyv = h.values(dy)
        local dx = nn.conv2d_backprop_input(xd, w, dy, o)
        same_shape(dx, xd)
        local ok, err = pcall(h.close, dx, ref.bp_input(dyv, xd, wv, wd, c[1], c[2], c[3]), tol(dt))
        assert(ok, "backprop_input " .. case_name(c) .. ": " .. tostring(err))
        local dw = nn.conv2d_backprop_filter(x, wd, dy, o)
        same_shape(dw, wd)
        ok, err = pcall(h.close, dw, ref.bp_filter(xv, xd, dyv, wd, c[1], c[2], c[3]), tol(dt) * 10)
        assert(ok, "backprop_filter " .. case_name(c) .. ": " .. tostring(err))
        -- conv2d_transpose is backprop_input with output_shape.
        h.close(nn.conv2d_transpose(dy, w, xd, o), dx, tol(dt))
      end
    end)
  end

  it("conv2d_transpose spreads one input value over the filter, unflipped", function()
    local w = tide.tensor({ 1, 2, 3, 4, 5, 6, 7, 8, 9 }, "float32"):reshape { 3, 3, 1, 1 }
    local dy = tide.tensor({ 0, 0, 0, 0, 1, 0, 0, 0, 0 }, "float32"):reshape { 1, 3, 3, 1 }
    h.close(nn.conv2d_transpose(dy, w, { 1, 3, 3, 1 }, 1, "SAME"), { { { { 1 }, { 2 }, { 3 } },
      { { 4 }, { 5 }, { 6 } }, { { 7 }, { 8 }, { 9 } } } })
    -- Stride 2 upsamples: [1, 2, 2, 1] -> [1, 4, 4, 1] (TF's shape for SAME).
    same_shape(nn.conv2d_transpose(tide.ones { 1, 2, 2, 1 }, tide.ones { 3, 3, 1, 1 }, { 1, 4, 4, 1 }, 2), { 1, 4, 4, 1 })
    same_shape(nn.conv2d_transpose(tide.ones { 1, 2, 2, 1 }, tide.ones { 3, 3, 1, 1 }, { 1, 3, 3, 1 }, 2), { 1, 3, 3, 1 })
    -- A tensor output_shape works too.
    same_shape(nn.conv2d_transpose(tide.ones { 1, 2, 2, 4 }, tide.ones { 2, 2, 3, 4 }, tide.tensor { 1, 4, 4, 3 }, 2,
      "VALID"), { 1, 4, 4, 3 })
  end)

  it("reject shapes that do not fit", function()
    local dy, w = tide.zeros { 1, 3, 3, 4 }, tide.zeros { 3, 3, 2, 4 }
    h.errors("conv2d_transpose: output_shape has 3 channel(s) but filters", nn.conv2d_transpose, dy, w, { 1, 5, 5, 3 })
    h.errors("conv2d_transpose: input has 4 channel(s) but filters", nn.conv2d_transpose, dy, tide.zeros { 3, 3, 2, 5 },
      { 1, 5, 5, 2 })
    h.errors("out_backprop has shape [1, 3, 3, 4] but the convolution of that input with these filters gives [1, 5, 5, 4]",
      nn.conv2d_transpose, dy, w, { 1, 5, 5, 2 }, 1, "SAME")
    h.errors("output_shape must have 4 entries", nn.conv2d_transpose, dy, w, { 5, 5, 2 })
    h.errors("conv2d_backprop_filter: out_backprop has shape", nn.conv2d_backprop_filter, tide.zeros { 1, 5, 5, 2 },
      { 3, 3, 2, 4 }, dy, 1, "SAME")
    h.errors("conv2d_backprop_input: input_sizes is required", nn.conv2d_backprop_input, nil, w, dy)
    -- the whole shape is named, not the entries read before the bad one
    h.errors("conv2d_backprop_input: the input shape [1, -5, 4, 2] has a negative dimension",
      nn.conv2d_backprop_input, { 1, -5, 4, 2 }, w, dy)
    h.errors("conv2d_backprop_filter: the filter shape [3, 3, 2, -4] has a negative dimension",
      nn.conv2d_backprop_filter, tide.zeros { 1, 5, 5, 2 }, { 3, 3, 2, -4 }, dy)
  end)
end)

describe("conv2d_transpose with output_shape as a tensor (TF's [tf.shape(x)[0], h, w, c])", function()
  local x = random({ 2, 3, 3, 4 }, "float64", 51)
  local w = random({ 3, 3, 5, 4 }, "float64", 52)
  local o = { strides = 2, padding = "SAME" }
  local want = nn.conv2d_transpose(x, w, { 2, 6, 6, 5 }, o)
  local batch_none = { input_signature = { tide.TensorSpec({ tide.None, 3, 3, 4 }, "float64") } }

  it("takes a list with a batch read when the graph runs, a stacked tensor, or a shape computed in the graph", function()
    h.close(nn.conv2d_transpose(x, w, { tide.shape(x)[0], 6, 6, 5 }, o), want)
    local forms = {
      { "list", function(x) return { tide.shape(x)[0], 6, 6, 5 } end, { tide.None, 6, 6, 5 } },
      { "stack", function(x) return tide.stack { tide.shape(x)[0], 6, 6, 5 } end, { tide.None, tide.None, tide.None, 5 } },
      { "int64 shape", function(x)
        return tide.shape(tide.zeros(tide.stack { tide.shape(x)[0], 6, 6, 5 }), { out_type = "int64" })
      end, { tide.None, tide.None, tide.None, 5 } },
    }
    for _, form in ipairs(forms) do
      local traced_shape
      local f = tide.trace(function(x)
        local y = nn.conv2d_transpose(x, w, form[2](x), o)
        traced_shape = y.shape:as_list()
        return y
      end, batch_none)
      h.close(f(x), want, 1e-12)
      -- what the trace knows: the list's numbers, the input's batch (None here) and the filters' channels
      assert.are.same(form[3], traced_shape, form[1])
      h.close(f(x:slice { { 0, 1 } }), want:slice { { 0, 1 } }, 1e-12)
      assert.are.equal(1, f:trace_count())
    end
  end)

  it("differentiates traced with a None batch as eagerly, and as finite differences", function()
    local function loss(x, w)
      return tide.reduce_sum(nn.conv2d_transpose(x, w, tide.stack { tide.shape(x)[0], 6, 6, 5 }, o) ^ 2)
    end
    local function grads(x, w)
      local tape = tide.GradientTape()
      tape:watch(x)
      tape:watch(w)
      local l = tape:run(function() return loss(x, w) end)
      local g = tape:gradient(l, { x, w })
      return l, g[1], g[2]
    end
    local e = { grads(x, w) }
    local t = { tide.trace(grads, { input_signature = { tide.TensorSpec({ tide.None, 3, 3, 4 }, "float64"),
      tide.TensorSpec({ 3, 3, 5, 4 }, "float64") } })(x, w) }
    for i = 1, 3 do h.close(t[i], e[i], 1e-10) end
    gc.check(function(a, b) return nn.conv2d_transpose(a, b, tide.stack { tide.shape(a)[0], 6, 6, 5 }, o) end,
      { x:slice { { 0, 1 } }, w })
  end)

  it("rejects a shape tensor that is not 4 integers, or disagrees when the graph runs", function()
    h.errors("conv2d_transpose: output_shape must be an integer tensor, got float32", nn.conv2d_transpose, x, w,
      tide.tensor({ 2, 6, 6, 5 }, "float32"), o)
    h.errors("conv2d_transpose: output_shape must have 4 entries, got 3", nn.conv2d_transpose, x, w,
      tide.tensor { 2, 6, 6 }, o)
    local function traced(shape_of)
      return tide.trace(function(x) return nn.conv2d_transpose(x, w, shape_of(x), o) end, batch_none)
    end
    h.errors("conv2d_transpose: output_shape must be an int32 or int64 tensor, got float32",
      traced(function(x) return tide.shape(x):cast("float32") end), x)
    h.errors("conv2d_transpose: output_shape must be a 1-D tensor of 4 entries, got shape (3,)",
      traced(function(x) return tide.stack { tide.shape(x)[0], 6, 6 } end), x)
    h.errors("conv2d_transpose: output_shape must have 4 entries, got 3",
      traced(function(x) return { tide.shape(x)[0], 6, 6 } end), x)
    h.errors("conv2d_transpose: output_shape entry 1 must be an int32 or int64 scalar, got float32",
      traced(function(x) return { tide.shape(x)[0]:cast("float32"), 6, 6, 5 } end), x)
    h.errors("conv2d_transpose: output_shape has 4 channel(s) but filters (3, 3, 5, 4) make 5",
      traced(function(x) return { tide.shape(x)[0], 6, 6, 4 } end), x)
    h.errors("out_backprop has shape [2, 3, 3, 4] but the convolution of that input with these filters gives [2, 4, 4, 4]",
      traced(function(x) return tide.stack { tide.shape(x)[0], 7, 7, 5 } end), x)
  end)
end)

describe("depthwise_conv2d", function()
  it("convolves each channel with its own filters (channel c * multiplier + m)", function()
    local x = tide.tensor({ 1, 10, 2, 20, 3, 30, 4, 40 }, "float32"):reshape { 1, 2, 2, 2 }
    local w = tide.tensor({ 1, 2, 3, 4 }, "float32"):reshape { 1, 1, 2, 2 }
    h.close(nn.depthwise_conv2d(x, w), { { { { 1, 2, 30, 40 }, { 2, 4, 60, 80 } },
      { { 3, 6, 90, 120 }, { 4, 8, 120, 160 } } } })
  end)

  for _, dt in ipairs { "float32", "float64" } do
    it("matches the references, forward and backprop (" .. dt .. ")", function()
      for _, mult in ipairs { 1, 2 } do
        local xd, wd = { 3, 7, 6, 3 }, { 3, 2, 3, mult }
        local x, w = random(xd, dt, 41), random(wd, dt, 42)
        local xv, wv = h.values(x), h.values(w)
        for _, c in ipairs(CASES) do
          local o = { strides = c[1], dilations = c[2], padding = c[3] }
          local want, yd = ref.conv(xv, xd, wv, wd, c[1], c[2], c[3], true)
          local y = nn.depthwise_conv2d(x, w, o)
          same_shape(y, yd)
          local ok, err = pcall(h.close, y, want, tol(dt))
          assert(ok, "forward " .. case_name(c) .. ": " .. tostring(err))
          local dy = random(yd, dt, 43)
          local dyv = h.values(dy)
          ok, err = pcall(h.close, nn.depthwise_conv2d_backprop_input(xd, w, dy, o),
            ref.bp_input(dyv, xd, wv, wd, c[1], c[2], c[3], true), tol(dt))
          assert(ok, "backprop_input " .. case_name(c) .. ": " .. tostring(err))
          ok, err = pcall(h.close, nn.depthwise_conv2d_backprop_filter(x, wd, dy, o),
            ref.bp_filter(xv, xd, dyv, wd, c[1], c[2], c[3], true), tol(dt) * 10)
          assert(ok, "backprop_filter " .. case_name(c) .. ": " .. tostring(err))
        end
      end
    end)
  end

  it("reads strided views", function()
    local x = random({ 2, 5, 6, 4 }, "float32", 51):transpose { 0, 2, 1, 3 }
    local w = random({ 3, 3, 4, 2 }, "float32", 52)
    h.close(nn.depthwise_conv2d(x, w, 2, "SAME"), nn.depthwise_conv2d(tide.contiguous(x), w, 2, "SAME"), 1e-6)
  end)

  it("rejects bad arguments", function()
    local x = tide.zeros { 1, 5, 5, 3 }
    h.errors("depthwise_conv2d: the input has 3 channel(s) but the filters expect 2", nn.depthwise_conv2d, x,
      tide.zeros { 3, 3, 2, 1 })
    h.errors("depthwise_conv2d: filters must be 4-D [height, width, in_channels, channel_multiplier]",
      nn.depthwise_conv2d, x, tide.zeros { 3, 3, 3 })
    h.errors("depthwise_conv2d: the window", nn.depthwise_conv2d, x, tide.zeros { 7, 1, 3, 1 }, 1, "VALID")
    h.errors("depthwise_conv2d: filter is required", nn.depthwise_conv2d, x)
  end)
end)

-- ---- pooling ------------------------------------------------------------------------

describe("max_pool2d and avg_pool2d", function()
  local x33 = tide.tensor({ 1, 2, 3, 4, 5, 6, 7, 8, 9 }, "float32"):reshape { 1, 3, 3, 1 }

  it("match hand-computed windows; SAME's mean counts only the elements inside the image", function()
    h.close(nn.max_pool2d(x33, 2, 2, "SAME"), { { { { 5 }, { 6 } }, { { 8 }, { 9 } } } })
    h.close(nn.avg_pool2d(x33, 2, 2, "SAME"), { { { { 3 }, { 4.5 } }, { { 7.5 }, { 9 } } } })
    h.close(nn.max_pool2d(x33, 2, 1, "VALID"), { { { { 5 }, { 6 } }, { { 8 }, { 9 } } } })
    h.close(nn.avg_pool2d(x33, 2), { { { { 3 } } } }) -- strides default to ksize, padding to VALID
    h.close(nn.max_pool2d(-x33, 3, 1, "SAME"), { { { { -1 }, { -1 }, { -2 } }, { { -1 }, { -1 }, { -2 } },
      { { -4 }, { -4 }, { -5 } } } })
  end)

  for _, dt in ipairs { "float32", "float64" } do
    it("match the references with batches and channels (" .. dt .. ")", function()
      local xd = { 3, 7, 6, 5 }
      local x = random(xd, dt, 61)
      local xv = h.values(x)
      for _, c in ipairs { { { 2, 2 }, { 2, 2 }, "VALID" }, { { 3, 3 }, { 2, 2 }, "SAME" }, { { 3, 2 }, { 1, 2 }, "SAME" },
        { { 2, 3 }, { 3, 1 }, "VALID" }, { { 1, 1 }, { 2, 3 }, "SAME" } } do
        for _, kind in ipairs { "max", "avg" } do
          local fn = kind == "max" and nn.max_pool2d or nn.avg_pool2d
          local want, yd = ref.pool(xv, xd, c[1], c[2], c[3], kind)
          local y = fn(x, c[1], c[2], c[3])
          same_shape(y, yd)
          h.close(y, want, tol(dt))
          local dy = random(yd, dt, 62)
          local tape = tide.GradientTape()
          local out = tape:run(function() tape:watch(x); return fn(x, c[1], c[2], c[3]) end)
          local dx = tape:gradient(out, x, { output_gradients = dy })
          h.close(dx, ref.pool_grad(xv, xd, h.values(dy), c[1], c[2], c[3], kind), tol(dt))
        end
      end
    end)
  end

  it("split gradients over channel blocks (more than 64 channels)", function()
    local xd = { 2, 4, 5, 70 }
    local x = random(xd, "float64", 63)
    local xv = h.values(x)
    for _, kind in ipairs { "max", "avg" } do
      local fn = kind == "max" and nn.max_pool2d or nn.avg_pool2d
      local _, yd = ref.pool(xv, xd, { 2, 2 }, { 1, 1 }, "SAME", kind)
      local dy = random(yd, "float64", 64)
      local tape = tide.GradientTape()
      local out = tape:run(function() tape:watch(x); return fn(x, 2, 1, "SAME") end)
      h.close(tape:gradient(out, x, { output_gradients = dy }),
        ref.pool_grad(xv, xd, h.values(dy), { 2, 2 }, { 1, 1 }, "SAME", kind), 1e-10)
    end
  end)

  it("give ties in max_pool2d's gradient to the first maximum, as TF's CPU kernel does", function()
    local x = tide.tensor({ 1, 3, 3, 2 }, "float64"):reshape { 1, 2, 2, 1 }
    local tape = tide.GradientTape()
    local y = tape:run(function() tape:watch(x); return nn.max_pool2d(x, 2) end)
    h.close(tape:gradient(y, x), { { { { 0 }, { 1 } }, { { 0 }, { 0 } } } })
  end)

  it("read strided views and halves", function()
    local x = random({ 2, 6, 5, 3 }, "float32", 71):transpose { 0, 2, 1, 3 }
    h.close(nn.max_pool2d(x, 2, 1, "SAME"), nn.max_pool2d(tide.contiguous(x), 2, 1, "SAME"))
    h.close(nn.avg_pool2d(x:cast("float16"), 3, 2, "SAME"):cast("float32"),
      nn.avg_pool2d(tide.contiguous(x), 3, 2, "SAME"), 1e-2)
  end)

  it("reject bad arguments", function()
    local x = tide.zeros { 1, 4, 4, 2 }
    h.errors("max_pool2d: ksize is required", nn.max_pool2d, x)
    h.errors("max_pool2d: ksize must be positive, got [0, 0]", nn.max_pool2d, x, 0)
    h.errors("max_pool2d: ksize must be at most 2147483647", nn.max_pool2d, x, 2 ^ 62, { padding = "SAME" })
    h.errors("avg_pool2d: strides must be at most 2147483647", nn.avg_pool2d, x, 2, { strides = 2 ^ 62 })
    h.errors("avg_pool2d: strides must be positive", nn.avg_pool2d, x, 2, { 0, 1 })
    h.errors("max_pool2d: the window (6x6", nn.max_pool2d, x, 6, 1, "VALID")
    h.errors("max_pool2d: padding must be \"SAME\" or \"VALID\", got table", nn.max_pool2d, x, 2, 2, { { 1, 1 }, { 1, 1 } })
    h.errors("avg_pool2d: input must be 4-D", nn.avg_pool2d, tide.zeros { 4, 4, 2 }, 2)
    h.errors("max_pool2d: input must be a float tensor", nn.max_pool2d, x:cast("int32"), 2)
    h.errors("ksize in the batch and channel dimensions must be 1", nn.max_pool2d, x, { 2, 2, 2, 2 })
    h.errors("avg_pool2d: input is required", nn.avg_pool2d, nil, 2)
  end)
end)

describe("global pooling", function()
  it("reduces over height and width, with keepdims", function()
    local x = tide.tensor({ 1, 10, 2, 20, 3, 30, 6, 60 }, "float32"):reshape { 1, 2, 2, 2 }
    h.close(nn.global_avg_pool2d(x), { { 3, 30 } })
    h.close(nn.global_max_pool2d(x), { { 6, 60 } })
    same_shape(nn.global_avg_pool2d(x, { keepdims = true }), { 1, 1, 1, 2 })
    same_shape(nn.global_max_pool2d(x, true), { 1, 1, 1, 2 })
    h.errors("global_avg_pool2d: input must be 4-D", nn.global_avg_pool2d, tide.zeros { 2, 2 })
    h.errors("global_max_pool2d: input is required", nn.global_max_pool2d)
  end)
end)

-- ---- gradients (float64 finite differences) ---------------------------------------

describe("convolution gradients", function()
  -- conv2d's, depthwise_conv2d's, their backprop ops' and the pools' float64
  -- finite-difference cases are tests/support/grad_cases_nn.lua's.
  it("conv1d and conv2d_transpose", function()
    local x, w = gc.random({ 2, 7, 2 }, -1, 1, 111), gc.random({ 3, 2, 3 }, -1, 1, 112)
    gc.check(function(a, b) return nn.conv1d(a, b, 2, "SAME") end, { x, w })
    local y = gc.random({ 1, 3, 3, 2 }, -1, 1, 113)
    local f = gc.random({ 3, 3, 3, 2 }, -1, 1, 114)
    gc.check(function(a, b) return nn.conv2d_transpose(a, b, { 1, 6, 5, 3 }, 2, "SAME") end, { y, f })
  end)

  it("global_avg_pool2d and global_max_pool2d", function()
    local x = gc.random({ 2, 6, 5, 3 }, -1, 1, 131):transpose { 0, 2, 1, 3 } -- [2, 5, 6, 3]
    gc.check(function(a) return nn.global_avg_pool2d(a) end, { x })
    gc.check(function(a) return nn.global_max_pool2d(a) end, { x })
  end)
end)

-- TF's output size for VALID is (in - window + stride) / stride, rounded
-- towards 0: a window larger than the input by less than two strides gives
-- an empty result (larger ones are an error, as in TF).
describe("VALID windows larger than the input", function()
  local x = tide.ones { 2, 2, 2, 3 }
  local forward = {
    conv2d = function(v, f) return nn.conv2d(v, f, 1, "VALID") end,
    depthwise_conv2d = function(v, f) return nn.depthwise_conv2d(v, f, 1, "VALID") end,
  }
  local filters = { conv2d = tide.ones { 3, 3, 3, 4 }, depthwise_conv2d = tide.ones { 3, 2, 3, 2 } }
  local shapes = { conv2d = { 2, 0, 0, 4 }, depthwise_conv2d = { 2, 0, 1, 6 } }

  it("give an empty result, eagerly and traced, and zero gradients", function()
    for name, fn in pairs(forward) do
      local f = filters[name]
      assert.are.same(shapes[name], fn(x, f).shape:as_list(), name)
      assert.are.same(shapes[name], tide.trace(fn)(x, f).shape:as_list(), name .. " traced")
      local xv, fv = x:cast("float64"), f:cast("float64")
      local tape = tide.GradientTape()
      local y = tape:run(function()
        tape:watch(xv)
        tape:watch(fv)
        return tide.reduce_sum(fn(xv, fv))
      end)
      local gx, gf = unpack(tape:gradient(y, { xv, fv }))
      assert.are.same(x.shape:as_list(), gx.shape:as_list())
      assert.are.same(f.shape:as_list(), gf.shape:as_list())
      h.close(gx, h.values(tide.zeros(x.shape:as_list())))
      h.close(gf, h.values(tide.zeros(f.shape:as_list())))
    end
  end)

  it("in pooling and conv1d too, with the stride's slack", function()
    for _, pool in ipairs { nn.max_pool2d, nn.avg_pool2d } do
      assert.are.same({ 2, 0, 0, 3 }, pool(x, 3, 1, "VALID").shape:as_list())
      assert.are.same({ 2, 0, 1, 3 }, pool(x, { 5, 2 }, { 2, 1 }, "VALID").shape:as_list()) -- (2 - 5 + 2) / 2 = 0
      h.errors("output size would be negative", pool, x, { 6, 2 }, { 2, 1 }, "VALID")
      local tape = tide.GradientTape()
      local xv = x:cast("float64")
      local y = tape:run(function() tape:watch(xv) return tide.reduce_sum(pool(xv, 3, 1, "VALID")) end)
      h.close(tape:gradient(y, xv), h.values(tide.zeros { 2, 2, 2, 3 }))
    end
    assert.are.same({ 1, 0, 3 }, nn.conv1d(tide.ones { 1, 2, 2 }, tide.ones { 3, 2, 3 }, 1, "VALID").shape:as_list())
    h.errors("output size would be negative", nn.conv1d, tide.ones { 1, 1, 2 }, tide.ones { 3, 2, 3 }, 1, "VALID")
  end)

  it("conv2d_transpose of an empty input is zeros of the output shape", function()
    local y = nn.conv2d_transpose(tide.ones { 1, 0, 0, 2 }, tide.ones { 3, 3, 1, 2 }, { 1, 2, 2, 1 }, 1, "VALID")
    assert.are.same({ 1, 2, 2, 1 }, y.shape:as_list())
    h.close(y, { 0, 0, 0, 0 })
  end)
end)
