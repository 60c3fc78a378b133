-- stdlib/tide/ops/linop/circulant.lua — LinearOperatorCirculant (1-D), Circulant2D and Circulant3D: the
-- operators diagonalised by the d-dimensional DFT, H = F^-1 diag(spectrum) F, applied through tide.signal's
-- FFTs in O(N log N). tide has no complex dtype: a spectrum is a real tensor or {real = t, imag = t}, and
-- the operator acts on real tensors, keeping the real part (TF's input_output_dtype = a float dtype).
local class = require "tide.class"
local base = require "tide.ops.linop.base"
local signal = require "tide.ops.signal"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"

local M = {}
local LO = base.LinearOperator
local copy = base.copy

local FFT = { signal.fft, signal.fft2d, signal.fft3d }
local IFFT = { signal.ifft, signal.ifft2d, signal.ifft3d }

local function cmul(a, b) return { real = a.real * b.real - a.imag * b.imag, imag = a.real * b.imag + a.imag * b.real } end
local function cdiv(a, b)
  local den = b.real * b.real + b.imag * b.imag
  return { real = (a.real * b.real + a.imag * b.imag) / den, imag = (a.imag * b.real - a.real * b.imag) / den }
end
local function conj(z) return { real = z.real, imag = -z.imag } end

-- The last d axes, as negative axes for the reductions.
local function block_axes(d)
  local ax = {}
  for i = 1, d do ax[i] = -i end
  return ax
end

local function make(depth, tf_name)
  local cls = class(tf_name, LO)
  function cls:__init(spectrum, o)
    o = base.hints(tf_name, o, { "input_output_dtype" })
    self.name = o.name or tf_name
    base.fixed_hint(self, o, "is_square", true, "a circulant operator is always square")
    if spectrum == nil then base.error(self, "spectrum is nil; expected a tensor or {real =, imag =}") end
    local re, im
    if signal.is_complex(spectrum) then
      re = base.float_arg(self, spectrum.real, "spectrum.real")
      self.dtype = re.dtype
      im = base.float_arg(self, spectrum.imag, "spectrum.imag")
    else
      re = base.float_arg(self, spectrum, "spectrum")
      im = create.zeros_like(re)
      -- a real spectrum makes a self-adjoint operator (TF's check)
      base.fixed_hint(self, o, "is_self_adjoint", true, "a real spectrum always makes a self-adjoint operator")
    end
    if re.dtype ~= "float32" and re.dtype ~= "float64" then
      base.error(self, "spectrum must be float32 or float64 (its real and imaginary parts), got %s", re.dtype)
    end
    if o.input_output_dtype ~= nil and o.input_output_dtype ~= re.dtype then
      base.error(self, "input_output_dtype must be the spectrum's real dtype %s (tide has no complex dtype), got %s",
        re.dtype, tostring(o.input_output_dtype))
    end
    local d = base.dims(re)
    if #d < depth then base.error(self, "spectrum must have rank %d or more, got shape (%s)", depth, table.concat(d, ",")) end
    local di = base.dims(im)
    if table.concat(d, ",") ~= table.concat(di, ",") then
      base.error(self, "spectrum's real part has shape (%s), its imaginary part (%s)", table.concat(d, ","),
        table.concat(di, ","))
    end
    self.spectrum = { real = re, imag = im }
    self.block_depth = depth
    self.block_shape = copy(d, #d - depth + 1, #d)
    local n = 1
    for _, b in ipairs(self.block_shape) do n = n * b end
    local dims = copy(d, 1, #d - depth)
    self.batch = copy(dims)
    dims[#dims + 1], dims[#dims + 2] = n, n
    o.dtype, o.shape = re.dtype, dims
    LO.__init(self, o)
  end

  -- x [..., N, R] -> columns [..., R, n0, (n1, n2)] -> F, times s, F^-1 -> back; `f(Fx, s)` is the middle step.
  function cls:_apply(x, f)
    local xd = base.dims(x)
    local nb = #xd - 2
    local cols = base.adj(x)
    local shp = copy(xd, 1, nb)
    shp[#shp + 1] = xd[#xd]
    for _, b in ipairs(self.block_shape) do shp[#shp + 1] = b end
    local z = FFT[depth](shape.reshape(cols, shp))
    local s = { real = shape.expand_dims(self.spectrum.real, -depth - 1),
                imag = shape.expand_dims(self.spectrum.imag, -depth - 1) }
    local y = IFFT[depth](f(z, s)).real
    local yd = base.dims(y)
    local out = copy(yd, 1, #yd - depth)
    out[#out + 1] = self.domain_dimension
    return base.adj(shape.reshape(y, out))
  end
  function cls:_matmul(x, adjoint, adjoint_arg)
    if adjoint_arg then x = base.adj(x) end
    return self:_apply(x, function(z, s) return cmul(z, adjoint and conj(s) or s) end)
  end
  function cls:_solve(rhs, adjoint, adjoint_arg)
    if adjoint_arg then rhs = base.adj(rhs) end
    return self:_apply(rhs, function(z, s) return cdiv(z, adjoint and conj(s) or s) end)
  end
  function cls:_to_dense()
    local eye = base.classes.Identity(self.domain_dimension, { dtype = self.dtype })
    local d = self:_matmul(eye:to_dense(), false, false)
    if #self.batch == 0 then return d end
    return base.to_batch(d, self.batch)
  end
  -- det = prod(s): |prod s| cos(sum arg s), the real part TF keeps.
  function cls:_abs() return math_ops.sqrt(self.spectrum.real ^ 2 + self.spectrum.imag ^ 2) end
  function cls:_determinant()
    local ax = block_axes(depth)
    local mag = reduce.reduce_prod(self:_abs(), ax)
    return mag * math_ops.cos(reduce.reduce_sum(math_ops.atan2(self.spectrum.imag, self.spectrum.real), ax))
  end
  function cls:_log_abs_determinant() return reduce.reduce_sum(math_ops.log(self:_abs()), block_axes(depth)) end
  -- Every diagonal entry is the kernel's first value, mean(s).
  function cls:_diag_part()
    local m = reduce.reduce_mean(self.spectrum.real, block_axes(depth))
    return shape.expand_dims(m, -1) * create.ones({ self.domain_dimension }, self.dtype)
  end
  function cls:_trace() return reduce.reduce_sum(self.spectrum.real, block_axes(depth)) end
  function cls:_eigvals()
    local out = copy(self.batch)
    out[#out + 1] = self.domain_dimension
    return shape.reshape(self.spectrum.real, out)
  end
  function cls:_inverse()
    local one = { real = create.ones_like(self.spectrum.real), imag = create.zeros_like(self.spectrum.imag) }
    return cls(cdiv(one, self.spectrum), { is_non_singular = self.is_non_singular,
      is_self_adjoint = self.is_self_adjoint, is_positive_definite = self.is_positive_definite })
  end
  function cls:_adjoint()
    return cls(conj(self.spectrum), { is_non_singular = self.is_non_singular,
      is_self_adjoint = self.is_self_adjoint, is_positive_definite = self.is_positive_definite })
  end
  -- The convolution kernel F^-1 s (its real part; TF gives the complex one).
  function cls:convolution_kernel() return IFFT[depth](self.spectrum).real end
  return cls
end

M.Circulant = make(1, "LinearOperatorCirculant")
M.Circulant2D = make(2, "LinearOperatorCirculant2D")
M.Circulant3D = make(3, "LinearOperatorCirculant3D")
base.classes.Circulant, base.classes.Circulant2D, base.classes.Circulant3D = M.Circulant, M.Circulant2D, M.Circulant3D
return M
