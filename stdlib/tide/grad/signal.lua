-- stdlib/tide/grad/signal.lua — the gradients of ops/signal.lua's transforms, as TF's fft_ops.py
-- gives them for real losses of complex values: fft's is N ifft, ifft's fft / N, rfft's and irfft's
-- weigh the half spectrum (the entries Hermitian symmetry drops count twice).
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local binding = require "tide.binding"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local convert = require "tide.convert"
local signal = require "tide.ops.signal"
local C = binding.C
local fmt = string.format

local reg, dims = grad.register, util.dims
local FFT, IFFT, RFFT = C.TIDE_OP_FFT, C.TIDE_OP_IFFT, C.TIDE_OP_RFFT

-- The node's k transform lengths, each known (from its attrs or the static dims of `of`, whose
-- innermost k dims are the signal's; `irfft_last` reads irfft's default 2 (m - 1)).
local function ffi_name(node) return binding.ffi.string(C.tide_op_name(node.op)) end

local function lengths(node, of, irfft_last)
  local a, d = node.attrs, dims(of)
  local k, out = tonumber(a.nints), {}
  for i = 1, k do
    local l = tonumber(a.ints[i - 1])
    if l < 0 then
      local m = d and d[#d - k + i] or -1
      if irfft_last and i == k and m >= 0 then l = m > 1 and 2 * (m - 1) or 0 else l = m end
    end
    if l < 0 then
      binding.error(fmt("%s's gradient needs the transform's lengths: give fft_length, or an input_signature with " ..
        "the transformed dims known", ffi_name(node)))
    end
    out[i] = l
  end
  return out
end

-- t (whose innermost k dims are `have`) cropped or zero-padded to x's innermost k dims: the
-- adjoint of the crop-or-pad that the forward op did to x. Axes whose length the node took from
-- x (attr -1) need none.
local function fit(node, t, x, have)
  local a, k = node.attrs, #have
  local given = false
  for i = 1, k do given = given or tonumber(a.ints[i - 1]) >= 0 end
  if not given then return t end
  local d, td = dims(x), dims(t)
  if not d or not td then
    binding.error(fmt("%s's gradient needs the input's rank known while tracing when fft_length is given", ffi_name(node)))
  end
  local pads, crop, any_pad, any_crop = {}, {}, false, false
  for i = 1, #td do pads[i], crop[i] = { 0, 0 }, {} end
  for i = 1, k do
    local ax = #td - k + i
    local want = d[#d - k + i]
    if tonumber(a.ints[i - 1]) < 0 then
      want = have[i]
    elseif want < 0 then
      binding.error(fmt("%s's gradient needs the input's transformed dims known while tracing when fft_length is " ..
        "given", ffi_name(node)))
    end
    if want > have[i] then
      pads[ax][2], any_pad = want - have[i], true
    elseif want < have[i] then
      crop[ax], any_crop = { 0, want }, true
    end
  end
  if any_crop then t = t:slice(crop) end
  if any_pad then t = shape.pad(t, pads) end
  return t
end

local function both(node, dys)
  local o = node.outputs
  return dys[1] or create.zeros_like(o[1]), dys[2] or create.zeros_like(o[2])
end

local function minus1(k)
  local l = {}
  for i = 1, k do l[i] = -1 end
  return l
end

local function product(l)
  local n = 1
  for _, v in ipairs(l) do n = n * v end
  return n
end

-- fft: the adjoint of the DFT, N times the inverse DFT of the gradient, which is conj(DFT(conj g))
-- (so no N is needed, and it traces with the lengths unknown); ifft: DFT(g) / N = conj(IDFT(conj g)).
local function complex_grad(code)
  return function(node, dys)
    local gr, gi = both(node, dys)
    local k = tonumber(node.attrs.nints)
    local rr, ri = signal.run_op(code, { gr, -gi }, minus1(k), 2)
    local have = {}
    for i = 1, k do have[i] = tonumber(node.attrs.ints[i - 1]) end
    return fit(node, rr, node.inputs[1], have), fit(node, -ri, node.inputs[2], have)
  end
end
reg("fft", complex_grad(FFT))
reg("ifft", complex_grad(IFFT))

-- rfft: y = the half spectrum of x, so dx = Re(N ifft(g with the dropped half zero)): the
-- gradient padded to the full innermost length, through the inverse complex DFT.
reg("rfft", function(node, dys)
  local gr, gi = both(node, dys)
  local len = lengths(node, node.inputs[1])
  local k = #len
  local r = gr.ndim
  if r < 0 then binding.error("rfft's gradient needs the input's rank known while tracing") end
  local pads = {}
  for i = 1, r do pads[i] = { 0, 0 } end
  pads[r][2] = len[k] - (math.floor(len[k] / 2) + 1)
  if pads[r][2] > 0 then gr, gi = shape.pad(gr, pads), shape.pad(gi, pads) end
  local full = {}
  for i = 1, k do full[i] = -1 end
  local xr = signal.run_op(FFT, { gr, -gi }, full, 2) -- Re(N ifft(g)) = Re(fft(conj g))
  return fit(node, xr, node.inputs[1], len)
end)

-- irfft: x = the real signal of the half spectrum y, so dy = rfft(g) w / N, w = 2 on the entries
-- that stand for two (1 on the 0th and, for an even length, the last).
reg("irfft", function(node, dys)
  local g = dys[1]
  local len = lengths(node, node.inputs[1], true)
  local k, n = #len, product(len)
  local h = math.floor(len[k] / 2) + 1
  local w = {}
  for i = 1, h do w[i] = 2 / n end
  w[1] = 1 / n
  if len[k] % 2 == 0 then w[h] = 1 / n end
  local wt = convert.tensor(w, g.dtype)
  local sr, si = signal.run_op(RFFT, { g }, len, 2)
  local spec = {}
  for i = 1, k - 1 do spec[i] = len[i] end
  spec[k] = h
  return fit(node, sr * wt, node.inputs[1], spec), fit(node, si * wt, node.inputs[2], spec)
end)

return {}
