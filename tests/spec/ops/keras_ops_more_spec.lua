-- tests/spec/ops/keras_ops_more_spec.lua — tide.ops' numpy families (keras_math, keras_reduce, keras_array,
-- keras_index, keras_linalg): gradients of the compositions, traced runs, numpy-only behaviour, and errors.
-- Their values against Keras 3 are keras_ops_spec's (tests/fixtures/keras_ops/cases.json).
local tide = require "tide"
local gc = require "gradcheck"

local o = tide.ops

describe("tide.ops numpy families", function()
  it("has float64 finite-difference gradients for its differentiable compositions", function()
    local x, y = gc.random({ 3, 4 }, -2, 2, 81), gc.random({ 3, 4 }, -2, 2, 82)
    local p = gc.random({ 3, 4 }, 0.2, 0.9, 83)
    gc.check(function(a) return o.arccos(a) + o.arcsin(a) + o.arctanh(a) + o.cosh(a) + o.sinh(a) end, { p })
    gc.check(function(a) return o.cbrt(a) + o.sinc(a) + o.fabs(a) end, { x })
    gc.check(function(a, b) return o.logaddexp2(a, b) + o.fmax(a, b) + o.fmin(a, b) end, { x, y })
    gc.check(function(a) return o.nan_to_num(a) + o.round(a * 0, { decimals = 1 }) + o.copy(a) end, { x })
    gc.check(function(a) return o.quantile(a, { 0.2, 0.7 }, { axis = 1 }) end, { x }, { none = false })
    gc.check(function(a) return o.median(a) + o.ptp(a) + o.nanmean(a) + o.nanstd(a, { axis = 0 })[0] end, { x },
      { none = false })
    gc.check(function(a) return o.nansum(a, { axis = 1 }) + o.nanmax(a, { axis = 1 }) + o.nanprod(a, { axis = 1 })
    end, { x })
    gc.check(function(a) return o.nancumsum(a) end, { x })
    gc.check(function(a) return o.tril(a, { k = 1 }) + o.triu(a) end, { x }, { none = false })
    gc.check(function(a) return o.diagonal(a, { offset = 1 }) end, { x }, { none = false })
    gc.check(function(a) return o.trace(a) + o.vdot(a, a) end, { x }, { none = false })
    gc.check(function(a) return o.roll(a, 2, { axis = 1 }) + o.rot90(o.rot90(a)) + o.flipud(o.fliplr(a)) end,
      { x }, { none = false })
    gc.check(function(a) return o.diff(o["repeat"](a, 2, { axis = 0 }), { n = 2 }) end, { x }, { none = false })
    gc.check(function(a) return o.pad(a, 1, { mode = "reflect" }) end, { x }, { none = false })
    gc.check(function(a, b) return o.hstack { a, b } end, { x, y })
    gc.check(function(a) return o.split(a, 2, { axis = 1 })[2] + o.array_split(a, 2, { axis = 1 })[1] end, { x },
      { none = false })
    gc.check(function(a) return o.take(a, tide.tensor { 0, -1, 5 }) end, { x }, { none = false })
    gc.check(function(a, b) return o.dot(a, o.transpose(b)) + o.inner(a, b) end, { x, y }, { none = false })
    gc.check(function(a, b) return o.kron(a, b) end, { x, y }, { none = false })
    local v3, w3 = gc.random({ 4, 3 }, -2, 2, 84), gc.random({ 4, 3 }, -2, 2, 85)
    gc.check(function(a, b) return o.cross(a, b) end, { v3, w3 }, { none = false })
    local s6, k3 = gc.random({ 6 }, -2, 2, 86), gc.random({ 3 }, -2, 2, 87)
    gc.check(function(a, b) return o.correlate(a, b, { mode = "full" }) end, { s6, k3 }, { none = false })
    gc.check(function(a) return o.trapezoid(a) + o.vander(a)[0][0] end, { s6 }, { none = false })
    gc.check(function(a) return o.corrcoef(a) end, { x }, { none = false })
    gc.check(function(a, b) return o.cdist(a, b) end, { x, y }, { none = false })
    gc.check(function(a) return o.slice_update(a, { 1, 1 }, o.slice(a, { 0, 0 }, { 2, 3 }) * 2) end, { x },
      { none = false })
  end)

  it("gives the same values traced as eager", function()
    local x = tide.tensor({ { 1.5, -5, 2, 0.5 }, { 7, 0, -3.25, 1 } }, "float32")
    local fns = {
      function(a) return o.median(a, { axis = 1 }) end,
      function(a) return o.nanmean(a) end,
      function(a) return o.tril(a) end,
      function(a) return o.roll(a, 1) end,
      function(a) return o.searchsorted(tide.tensor({ 0, 1, 2 }, "float32"), a) end,
      function(a) return o.isclose(a, a) end,
      function(a) return o.take(a, tide.tensor { -1 }, { axis = 1 }) end,
      function(a) return o.argpartition(a, 1) end,
      function(a) return o.correlate(o.ravel(a), tide.tensor({ 1, 2 }, "float32")) end,
    }
    for i, f in ipairs(fns) do
      local want, got = f(x), tide.trace(f)(x)
      assert.are.same(want:totable(), got:totable(), "function " .. i)
    end
  end)

  it("follows numpy where Keras's TF backend does not (docs/tf_differences.md)", function()
    local inf = math.huge
    local a = tide.tensor({ inf, -inf, 1 }, "float32")
    assert.are.same({ true, true, true }, o.isclose(a, a):totable())
    assert.are.same({ 2, 4 }, o.eye(2, 4, { k = 1 }).shape:as_list())
    assert.are.same({ inf, inf, inf }, o.nancumsum(tide.tensor({ inf, 0 / 0, 1 }, "float32")):totable())
  end)

  it("gives gcd and lcm across int32's range", function()
    local big = 2147483647
    assert.are.same({ 1, 6, big, 0 }, o.gcd(tide.tensor { 1836311903, 12, big, 0 },
      tide.tensor { 1134903170, -18, 0, 0 }):totable())
    assert.are.same({ 36, 0 }, o.lcm(tide.tensor { 12, 0 }, tide.tensor { -18, 5 }):totable())
  end)

  it("returns several results as numpy does (lists for split, meshgrid, nonzero; values for unique, histogram)",
    function()
      local parts = o.split(tide.tensor { 1, 2, 3, 4 }, 2)
      assert.are.equal(2, #parts)
      local grids = o.meshgrid(tide.tensor { 1, 2 }, tide.tensor { 3, 4, 5 }, { indexing = "ij" })
      assert.are.same({ 2, 3 }, grids[1].shape:as_list())
      local vals, idx, inv, counts = o.unique(tide.tensor { 5, 5, 1 },
        { return_index = true, return_inverse = true, return_counts = true })
      assert.are.same({ 1, 5 }, vals:totable())
      assert.are.same({ 2, 0 }, idx:totable())
      assert.are.same({ 1, 1, 0 }, inv:totable())
      assert.are.same({ 1, 2 }, counts:totable())
      local padded = o.unique(tide.tensor { 5, 5, 1 }, { size = 4, fill_value = -1 })
      assert.are.same({ 1, 5, -1, -1 }, padded:totable())
      local c, e = o.histogram(tide.tensor({ 1, 2, 2, 3 }, "float32"), { bins = 2 })
      assert.are.same({ 1, 3 }, c:totable())
      assert.are.same({ 1, 2, 3 }, e:totable())
      assert.are.same({ { 0, 2, 1 }, { 3, 0, 0 } }, o.bincount(tide.tensor { { 1, 1, 2 }, { 0, 0, 0 } }):totable())
    end)

  it("names the op and the argument in its errors", function()
    local x = tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32")
    local xi = tide.tensor { 1, 2 }
    local cases = {
      { function() o.arccos(nil) end, "arccos: x is nil" },
      { function() o.cbrt(nil) end, "cbrt: x is nil" },
      { function() o.gcd(x, x) end, "gcd: x1 and x2 must be integer tensors, got float32 and float32" },
      { function() o.lcm(xi, x) end, "lcm: x1 and x2 must be integer tensors" },
      { function() o.ldexp(x, x) end, "ldexp: x2 must be an integer tensor, got float32" },
      { function() o.heaviside(nil, 1) end, "heaviside: x is nil" },
      { function() o.signbit(nil) end, "signbit: x is nil" },
      { function() o.sinc(nil) end, "sinc: x is nil" },
      { function() o.nan_to_num(x, { bad = 1 }) end, "nan_to_num" },
      { function() o.isclose(nil, x) end, "isclose: x1 is nil" },
      { function() o.round(x, { decimals = 0.5 }) end, "round" },
      { function() o.quantile(x, 1.5) end, "quantile: q must be in [0, 1] (percentiles in [0, 100]), got 1.5" },
      { function() o.percentile(x, 150) end, "percentile: q must be in [0, 1]" },
      { function() o.quantile(x, 0.5, { method = "cubic" }) end, "quantile: method must be linear" },
      { function() o.median(x, { axis = 2 }) end, "median: axis 2 out of range for rank 2" },
      { function() o.nanmedian(x, { axis = -3 }) end, "nanmedian: axis -3 out of range for rank 2" },
      { function() o.ptp(nil) end, "ptp: x is nil" },
      { function() o.nanargmax(nil) end, "nanargmax: x is nil" },
      { function() o.nancumsum(nil) end, "nancumsum: x is nil" },
      { function() o.tril(xi) end, "tril: x must have rank 2 or more, got shape (2,)" },
      { function() o.triu(xi) end, "triu: x must have rank 2 or more" },
      { function() o.diag(tide.zeros { 2, 2, 2 }) end, "diag: x must be 1-D or 2-D, got shape (2, 2, 2)" },
      { function() o.diagonal(x, { axis1 = 1, axis2 = 1 }) end, "diagonal: axis1 and axis2 cannot be the same axis" },
      { function() o.trace(xi) end, "diagonal: x must have rank 2 or more" },
      { function() o.meshgrid(xi, { indexing = "yx" }) end, "meshgrid: indexing must be \"xy\" or \"ij\"" },
      { function() o.geomspace(0, 1) end, "geomspace: start and stop must be nonzero numbers of one sign" },
      { function() o.split(xi, 3) end, "split: dimension 0 of size 2 cannot be split into 3 equal parts" },
      { function() o.array_split(xi, 0) end, "array_split: sections must be a positive whole number" },
      { function() o.hstack {} end, "hstack: expected a non-empty list of tensors" },
      { function() o.roll(x, 0.5) end, "roll: shift must be a whole number" },
      { function() o["repeat"](xi, { 1 }) end, "repeat: 1 repeats for 2 elements" },
      { function() o.rot90(xi) end, "rot90: array must have rank 2 or more" },
      { function() o.fliplr(xi) end, "fliplr: x must have rank 2 or more" },
      { function() o.pad(x, 1, { mode = "edge" }) end, "pad: mode must be constant, reflect or symmetric, got edge" },
      { function() o.diff(x, { n = -1 }) end, "diff: n must be >= 0, got -1" },
      { function() o.take(x, tide.tensor { 0 }, { axis = 2 }) end, "take: axis 2 out of range for rank 2" },
      { function() o.searchsorted(x, xi) end, "searchsorted: sorted_sequence must be 1-D, got shape (2, 2)" },
      { function() o.digitize(xi, tide.tensor { { 1 } }) end, "digitize: bins must be 1-D" },
      { function() o.isin(nil, xi) end, "isin: x1 is nil" },
      { function() o.select({ xi }, {}) end, "select: condlist and choicelist must be lists of one (nonzero) length" },
      { function() o.nonzero(nil) end, "nonzero: x is nil" },
      { function() o.unravel_index(xi, {}) end, "unravel_index: shape must be a non-empty list" },
      { function() o.argpartition(xi, 5) end, "argpartition: kth 5 out of range for size 2" },
      { function() o.scatter_update(x, tide.tensor { { 0, 0 } }, tide.tensor({ 1 }, "float32"), "max") end,
        "scatter_update: reduction must be nil or \"add\", got max" },
      { function() o.slice(x, { 0 }, { 1, 1 }) end, "slice: start_indices needs 2 entries for shape (2, 2)" },
      { function() o.slice_update(x, { 0 }, x) end, "slice_update: start_indices needs 2 entries" },
      { function() o.unique(xi, { axis = 0 }) end, "unique: axis is not supported" },
      { function() o.histogram(x, { bins = 0 }) end, "histogram: bins must be a positive whole number, got 0" },
      { function() o.bincount(xi, { sparse = true }) end, "bincount: sparse = true is not supported" },
      { function() o.saturate_cast(x, 5) end, "saturate_cast: dtype must be a dtype name" },
      { function() o.dot(nil, x) end, "dot: x1 is nil" },
      { function() o.kron(nil, x) end, "kron: x1 is nil" },
      { function() o.cross(nil, x) end, "cross: x1 is nil" },
      { function() o.cross(tide.zeros { 4 }, tide.zeros { 4 }) end,
        "cross: the vectors must have 2 or 3 components, got 4 and 4" },
      { function() o.correlate(x, x) end, "correlate: x1 and x2 must be 1-D" },
      { function() o.correlate(xi, xi, { mode = "wide" }) end, "correlate: mode must be \"valid\", \"same\" or \"full\"" },
      { function() o.vander(x) end, "vander: x must be 1-D" },
      { function() o.trapezoid(x, { axis = 3 }) end, "trapezoid: axis 3 out of range for rank 2" },
      { function() o.corrcoef(tide.zeros { 2, 2, 2 }) end, "corrcoef: x must be 1-D or 2-D" },
      { function() o.cdist(nil, x) end, "cdist: x1 is nil" },
      { function() o.inner(nil, x) end, "inner: x1 is nil" },
      { function() o.vdot(nil, x) end, "vdot: x1 is nil" },
      { function() o.append(nil, x) end, "append: x1 is nil" },
      { function() o.view(tide.zeros { 3 }, "int64") end, "view: the last dim holds 12 bytes, not a multiple of int64's 8" },
      { function() o.view(tide.tensor(1.5), "float64") end, "view: a scalar of float32 cannot be viewed as float64" },
      { function() o.view(x, "complex64") end, "view: dtype must be a dtype name" },
      { function() o.view(tide.tensor({ "a" }, "string"), "uint8") end, "view: string tensors have no fixed-size bytes" },
      { function() tide.trace(function(a) return o.view(a, "int32") end)(x) end, "view: works eagerly only" },
      { function() o.tri(2.5) end, "tri" },
      { function() o.eye("a") end, "eye" },
    }
    for i, c in ipairs(cases) do
      local ok, err = pcall(c[1])
      assert(not ok, "case " .. i .. " (" .. c[2] .. ") did not fail")
      assert(tostring(err):find(c[2], 1, true), "case " .. i .. ": " .. tostring(err) .. "\nwanted: " .. c[2])
    end
  end)
end)
