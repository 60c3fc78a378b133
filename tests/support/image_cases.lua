-- tests/support/image_cases.lua — what tests/spec/image/'s specs share: TF's
-- fixture tensors as tide tensors, comparing with TF's dtype, shape and values,
-- and running a function eagerly and traced (unknown dims, or a given signature).
local tide = require "tide"
local h = require "helpers"

local M = {}

-- The tensor a fixture entry {shape, dtype, values} describes.
function M.tensor_of(want)
  return tide.tensor(want.values, want.dtype):reshape(want.shape)
end

-- Assert t equals TF's `want` in dtype and shape, values within tol
-- (infinities equal where both are the same infinity).
function M.same(t, want, tol, what)
  what = what or "result"
  assert(tide.is_tensor(t), what .. ": not a tensor")
  assert(t.dtype == want.dtype, string.format("%s: dtype %s, TF's %s", what, t.dtype, want.dtype))
  assert(table.concat(t.shape:as_list(), ",") == table.concat(want.shape, ","),
    string.format("%s: shape %s, TF's {%s}", what, tostring(t.shape), table.concat(want.shape, ",")))
  if t.nelem == 0 then return end
  local ok, err = pcall(h.close, t, M.tensor_of(want), tol or 0)
  if not ok then error(what .. ": " .. tostring(err), 0) end
end

-- f(x) eagerly, checked against itself traced: with every dim None (or the
-- input_signature `sig` given), and with x's own shape. Returns the eager result.
function M.eager_and_traced(f, x, sig, tol)
  local want = f(x)
  h.close(tide.trace(f)(x), want, tol or 0)
  if sig ~= false then
    if sig == nil then
      local dims = {}
      for d = 1, x.ndim do dims[d] = tide.None end
      sig = { tide.TensorSpec(dims, x.dtype) }
    end
    h.close(tide.trace(f, { input_signature = sig })(x), want, tol or 0)
  end
  return want
end

-- A TensorSpec list of x's shape with the dims named in `unknown` (1-based) None.
function M.spec(x, unknown)
  local dims = x.shape:as_list()
  for _, d in ipairs(unknown) do dims[d] = tide.None end
  return { tide.TensorSpec(dims, x.dtype) }
end

-- The tape's gradients of sum(f(xs...) * w) at each of xs (a Lua list).
function M.gradients(f, xs, w)
  local tape = tide.GradientTape()
  local loss = tape:run(function()
    for _, x in ipairs(xs) do tape:watch(x) end
    return tide.reduce_sum(f(unpack(xs)) * w)
  end)
  return tape:gradient(loss, xs)
end

return M
